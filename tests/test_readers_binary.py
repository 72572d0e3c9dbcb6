"""The binary-file readers: Parquet shards and results rows checked against their schema, media
headers checked against their payload (issue 35), and the property every reader keeps, fuzzed.

The property (hypothesis, derandomized): a damaged file -- truncated at any byte, a column extra,
missing, renamed or of another type, a WAV whose data-chunk or RIFF size lies, a video cut at any
offset -- gives either a one-line :class:`~hug_vis_dataset.errors.HugvisError` naming the file, or
exactly the clean file's result; never another exception, never fewer samples or frames as ok.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hug_vis_dataset.errors import HugvisError
from hug_vis_dataset.hub import build_repo, features, load_config
from hug_vis_dataset.hub.loading import SHARD_FIX, shard_schema
from hug_vis_dataset.readers import InputFileError
from hug_vis_dataset.readers.parquet_files import ParquetSchema, open_parquet, read_parquet_frame

from test_builder import CLIPS, make_release

FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
#: For readers whose example costs a millisecond or so (a WAV header, a small rows file).
FUZZ_MORE = settings(FUZZ, max_examples=150)


class Blob(bytes):
    """Bytes that a failing hypothesis example prints by length, not byte by byte."""

    def __repr__(self) -> str:
        return f"<{len(self)} bytes>"


def one_line(err: BaseException, path: "str | Path") -> str:
    """The error's text, checked to be one line naming the file."""
    text = str(err)
    assert "\n" not in text, text
    assert Path(path).name in text, text
    return text


# ----------------------------------------------------------------------------- built-repo shards
@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("binary")
    release = make_release(root / "release")
    build_repo(release, root / "repo", configs=("matting", "clips"), measure_storage=False)
    return root / "repo"


@pytest.fixture()
def repo(built, tmp_path) -> Path:
    """A private copy of the built repo, free to damage."""
    import shutil

    copy = tmp_path / "repo"
    shutil.copytree(built, copy)
    return copy


@pytest.fixture()
def offline(monkeypatch, tmp_path):
    import datasets

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    return str(tmp_path / "hf-cache")


def matting_shard(repo: Path) -> Path:
    return repo / "data" / "matting" / "test-00000.parquet"


def test_shard_schema_is_the_features_arrow_schema():
    for config in ("clips", "emotion", "audio_driven", "vision_driven", "voice_cloning", "matting"):
        arrow = features(config).arrow_schema
        declared = shard_schema(config)
        assert list(declared.required) == arrow.names
        assert all(declared.required[f.name].equals(f.type) for f in arrow)


def test_loading_a_shard_without_alpha_matte_names_shard_column_and_fix(repo, offline):
    # On main this loaded, every row's alpha_matte None (the card's features still list it).
    shard = matting_shard(repo)
    pq.write_table(pq.read_table(shard).drop_columns(["alpha_matte"]), shard)
    with pytest.raises(InputFileError) as caught:
        load_config(repo, "matting", cache_dir=offline)
    text = one_line(caught.value, shard)
    assert caught.value.where == "column 'alpha_matte'" and "is missing" in text
    assert "rebuild the repo with hugvis build" in text and "another version" in text


def test_loading_a_shard_with_an_extra_column_names_shard_column_and_fix(repo, offline):
    # On main: datasets' DatasetGenerationError "An error occurred while generating the dataset".
    shard = matting_shard(repo)
    table = pq.read_table(shard)
    pq.write_table(table.append_column("note", pa.array(["x"] * len(table))), shard)
    with pytest.raises(InputFileError) as caught:
        load_config(repo, "matting", cache_dir=offline)
    text = one_line(caught.value, shard)
    assert caught.value.where == "column 'note'" and "is not a column of a shard of the 'matting' config" in text
    assert SHARD_FIX in text


def test_a_clean_repo_still_loads(repo, offline):
    ds = load_config(repo, "matting", cache_dir=offline)
    assert ds["clip_id"] == [str(c) for c in CLIPS]
    mattes = ds.data.column("alpha_matte").to_pylist()  # the stored cells, not decoded
    assert len(mattes) == len(CLIPS) and all(cell["bytes"] for cell in mattes)


def test_scoring_against_a_shard_without_alpha_matte_is_refused_when_the_source_opens(repo):
    # On main the source opened and every clip's reference read failed on its own ("has no column").
    from hug_vis_dataset.references import open_reference_source

    shard = matting_shard(repo)
    pq.write_table(pq.read_table(shard).drop_columns(["alpha_matte"]), shard)
    (repo / "manifest.json").unlink()  # with it, the shard's size and sha256 differ first
    with pytest.raises(InputFileError) as caught:
        open_reference_source(repo, "matting")
    assert caught.value.where == "column 'alpha_matte'" and SHARD_FIX in one_line(caught.value, shard)


@pytest.mark.parametrize("reader", ["iter_rows", "cell_digests"])
def test_hub_readers_of_shards_check_the_schema(repo, reader):
    from hug_vis_dataset.hub.builder import iter_rows
    from hug_vis_dataset.hub.dedup import cell_digests

    shard = matting_shard(repo)
    table = pq.read_table(shard)
    pq.write_table(table.set_column(table.schema.get_field_index("num_frames"), "num_frames",
                                    pa.array([str(v) for v in table["num_frames"].to_pylist()])), shard)
    with pytest.raises(InputFileError) as caught:
        list(iter_rows(repo, "matting")) if reader == "iter_rows" else cell_digests(repo)
    assert caught.value.problem == "holds string, expected int32"
    one_line(caught.value, shard)


# ----------------------------------------------------------------------------- results rows
def result_frame(values=(0.5, 0.25)):
    from hug_vis_dataset.datamodel.results import result_rows
    from hug_vis_dataset.scoring.store import _rows_frame

    rows = []
    for clip, value in zip(CLIPS, values):
        rows += result_rows("m", "matting", str(clip), {"mad": value})
    return _rows_frame(rows)


def test_a_stored_run_whose_values_are_text_is_damaged_naming_the_column(tmp_path):
    # On main the strings reached the value checks (a TypeError, or compared as text).
    from hug_vis_dataset.scoring.runs import DamagedRun, read_run

    from run_files import write_run

    folder = write_run(tmp_path, "matting", "m", result_frame())
    assert not isinstance(read_run(folder), DamagedRun)
    result_frame().astype({"value": str}).to_parquet(folder / "rows.parquet", index=False)
    damaged = read_run(folder)
    assert isinstance(damaged, DamagedRun)
    assert damaged.problem == "rows.parquet: column 'value' holds string, expected a number"


def test_a_part_file_without_its_metric_column_names_file_and_column(tmp_path):
    # On main: a KeyError traceback ('metric') from drop_duplicates.
    from hug_vis_dataset.outputs import scratch_folder
    from hug_vis_dataset.scoring.store import ResultStore, StoredResultsError

    store = ResultStore(scratch_folder(parent=tmp_path), "matting", "m")  # parts are written in a work folder
    store.write_part(result_frame().to_dict("records"))
    [part] = list(store.rows_dir.iterdir())
    pq.write_table(pq.read_table(part).drop_columns(["metric"]), part)
    with pytest.raises(StoredResultsError) as caught:
        store.read_rows()
    assert caught.value.where == "column 'metric'" and "delete it to recompute" in one_line(caught.value, part)


# ----------------------------------------------------------------------------- media headers
def write_noise_wav(path: Path, frames: int = 4000, rate: int = 16000, channels: int = 1) -> Path:
    import soundfile as sf

    rng = np.random.default_rng(frames + channels)
    sf.write(str(path), rng.uniform(-0.5, 0.5, (frames, channels)), rate, subtype="PCM_16")
    return path


def write_faststart_mp4(path: Path, frames: int = 12) -> Path:
    """A small H.264 MP4 with its moov at the front: a cut copy still opens."""
    import av

    from hug_vis_dataset.readers.media import write_video

    plain = path.with_name(path.stem + "-plain.mp4")
    rng = np.random.default_rng(frames)
    write_video(plain, iter([rng.integers(0, 256, (frames, 32, 48, 3), dtype=np.uint8)]), fps=25.0, preset="ultrafast")
    with av.open(str(plain)) as source, av.open(str(path), "w", options={"movflags": "faststart"}) as out:
        stream = out.add_stream_from_template(source.streams.video[0])
        for packet in source.demux(source.streams.video[0]):
            if packet.dts is not None:
                packet.stream = stream
                out.mux(packet)
    plain.unlink()
    return path


def packet_ends(path: Path) -> list[int]:
    import av

    with av.open(str(path)) as container:
        return [p.pos + p.size for p in container.demux(container.streams.video[0]) if p.size]


def test_a_wav_cut_short_is_refused_naming_the_file(tmp_path):
    # On main: libsndfile's count shrinks to fit the file, so 1000 of 4000 samples read as a clip.
    from hug_vis_dataset.readers.media import MediaError, audio_info, read_audio

    clean = write_noise_wav(tmp_path / "clean.wav")
    cut = tmp_path / "cut.wav"
    cut.write_bytes(clean.read_bytes()[:44 + 2000])
    for reader in (read_audio, audio_info):
        with pytest.raises(MediaError) as caught:
            reader(cut)
        assert isinstance(caught.value, InputFileError)
        text = one_line(caught.value, cut)
        assert "says 8000 bytes (4000 frames) but the file holds 2000 bytes (truncated)" in text


def test_a_data_chunk_size_that_lies_is_refused(tmp_path):
    # On main: a data size of 1000 bytes over 8000 read as 500 samples, the rest ignored.
    import struct

    from hug_vis_dataset.readers.media import MediaError, read_audio

    data = bytearray(write_noise_wav(tmp_path / "clean.wav").read_bytes())
    data[40:44] = struct.pack("<I", 1000)
    lie = tmp_path / "lie.wav"
    lie.write_bytes(bytes(data))
    with pytest.raises(MediaError) as caught:
        read_audio(lie)
    text = one_line(caught.value, lie)
    assert "after the data chunk of 1000 bytes are not a chunk (the data chunk's size lies" in text


def test_a_data_chunk_size_that_swallows_the_list_chunk_is_refused(tmp_path):
    # Found by the fuzz: a data size running over the LIST chunk after it read its bytes as 10 samples.
    import struct

    from hug_vis_dataset.readers.media import MediaError, read_audio

    data = wav_with_list_chunk(tmp_path / "clean.wav")
    assert len(read_audio(tmp_path / "clean.wav")[0]) == 600
    offset = data.index(b"data") + 4
    for size in (1212, 1220):  # into the LIST chunk, and all of it (the data then ends with the file)
        path = tmp_path / f"lie{size}.wav"
        path.write_bytes(data[:offset] + struct.pack("<I", size) + data[offset + 4:])
        with pytest.raises(MediaError) as caught:
            read_audio(path)
        assert "runs over a 'LIST' chunk at byte 1244 (the size lies)" in one_line(caught.value, path)


def test_a_video_cut_at_a_packet_boundary_is_refused_naming_the_file(tmp_path):
    # On main: the faststart MP4 opened and decoded 5 of its 12 frames as a whole clip.
    from hug_vis_dataset.readers.media import MediaError, iter_video_frames, video_info

    clean = write_faststart_mp4(tmp_path / "clean.mp4")
    assert video_info(clean).frames == sum(len(c) for c in iter_video_frames(clean)) == 12
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(clean.read_bytes()[:packet_ends(clean)[4]])
    for read in (lambda p: sum(len(c) for c in iter_video_frames(p, chunk_frames=4)), video_info):
        with pytest.raises(MediaError) as caught:
            read(cut)
        assert "its header says 12 frames but the file holds 5 (truncated)" in one_line(caught.value, cut)


# ----------------------------------------------------------------------------- the scoring doors
@pytest.fixture(scope="module")
def grid(tmp_path_factory) -> Path:
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("grid")
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.6, size=(64, 36), seed=5)
    return root


def cut_submission(grid: Path, task: str, tmp_path: Path, cut) -> "tuple[Path, Path, list[Path]]":
    """A copy of the task's first simulated system with its first prediction damaged by ``cut``."""
    import shutil

    system = sorted(p for p in (grid / "simulated_systems" / task).iterdir() if p.is_dir())[0]
    sub = tmp_path / "sub"
    shutil.copytree(system, sub)
    files = sorted(p for p in sub.iterdir() if p.is_file())
    cut(files[0])
    return sub, files[0], files[1:]


def test_evaluate_and_check_only_fail_a_cut_wav_naming_it_and_score_the_rest(grid, tmp_path):
    # On main the cut WAV's rows were status ok (scored on the samples left).
    from hug_vis_dataset.scoring.check import check_submission
    from hug_vis_dataset.scoring.runner import evaluate_submission

    def cut(path: Path) -> None:
        data = path.read_bytes()
        path.write_bytes(data[:44 + (len(data) - 44) // 3 // 2 * 2])

    sub, bad, good = cut_submission(grid, "voice_cloning", tmp_path, cut)
    res = evaluate_submission("voice_cloning", sub, "m", grid, tmp_path / "out", progress=False, metrics=["dnsmos"])
    rows = pd_rows(res.rows_path)
    failed = rows[rows["clip_id"] == bad.stem]
    assert (failed["status"] == "failed").all() and len(failed)
    assert all(bad.name in e and "(truncated)" in e and "\n" not in e for e in failed["error"])
    others = rows[rows["clip_id"] != bad.stem]
    assert set(others["clip_id"]) == {p.stem for p in good} and (others["status"] == "ok").all()
    coverage = check_submission("voice_cloning", sub, grid)
    assert "(truncated)" in coverage.failed[bad.stem] and bad.name in coverage.failed[bad.stem]
    assert set(coverage.failed) == {bad.stem}


def pd_rows(path: Path):
    import pandas as pd

    return pd.read_parquet(path)


def test_evaluate_fails_a_clip_whose_reference_video_is_cut_naming_it(grid, tmp_path):
    # On main a reference MP4 cut at a packet boundary (moov at the front) read as a shorter clip:
    # a prediction of that many frames was scored ok against it.
    import shutil

    from hug_vis_dataset.readers.media import iter_video_frames, write_video
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.scoring.runner import evaluate_submission

    release = tmp_path / "release"
    shutil.copytree(grid, release, ignore=shutil.ignore_patterns("simulated_systems"))
    record = next(iter(Release(release)))
    reference = Path(record.video_path)
    write_faststart_mp4(reference.with_name("fast.mp4"), frames=int(round(record.duration * record.fps)))
    os.replace(reference.with_name("fast.mp4"), reference)
    keep = 6
    reference.write_bytes(reference.read_bytes()[:packet_ends(reference)[keep - 1]])
    system = sorted(p for p in (grid / "simulated_systems" / "vision_driven").iterdir() if p.is_dir())[0]
    sub = tmp_path / "sub"
    shutil.copytree(system, sub)
    prediction = sub / f"{record.clip_id}.mp4"
    frames = np.concatenate(list(iter_video_frames(prediction)))[:keep]
    write_video(prediction, iter([frames[:, :32, :48]]), fps=record.fps)
    res = evaluate_submission("vision_driven", sub, "m", release, tmp_path / "out", progress=False, metrics=["psnr"])
    rows = pd_rows(res.rows_path)
    failed = rows[rows["clip_id"] == record.clip_id]
    assert list(failed["status"]) == ["failed"]
    [error] = failed["error"]
    assert reference.name in error and "(truncated)" in error and "\n" not in error
    others = rows[rows["clip_id"] != record.clip_id]
    assert len(others) and (others["status"] == "ok").all()


# ----------------------------------------------------------------------------- the property, fuzzed
def holds_or_names(path: Path, read, clean, same=None):
    """The property: ``read(path)`` is ``clean`` (by ``same``), or a one-line HugvisError naming ``path``.

    Any other exception propagates and fails the example; so does a different result."""
    try:
        got = read(path)
    except HugvisError as err:
        one_line(err, path)
        return "error"
    assert (same or (lambda a, b: a == b))(got, clean), "a damaged file read as a different result"
    return "same"


@pytest.fixture(scope="module")
def shard_bytes(built) -> bytes:
    return Blob(matting_shard(built).read_bytes())


def _iter_shard(path: Path):
    from hug_vis_dataset.hub.loading import open_shard

    handle = open_shard(path, "matting")
    return handle.read().to_pylist()


@FUZZ
@given(cut=st.integers(min_value=0, max_value=10**9))
def test_fuzz_a_shard_truncated_at_any_byte(shard_bytes, tmp_path, cut):
    path = tmp_path / "data" / "matting" / "test-00000.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(shard_bytes[:cut % len(shard_bytes)])
    assert holds_or_names(path, _iter_shard, None) == "error"


SHARD_MUTATIONS = ("extra", "missing", "renamed", "retyped")


def mutate_table(table: "pa.Table", op: str, index: int) -> "tuple[pa.Table, str]":
    """``table`` with column ``index`` (mod its width) changed by ``op``; returns the column named."""
    name = table.column_names[index % table.num_columns]
    if op == "extra":
        return table.append_column(f"{name}_copy", table.column(name)), f"{name}_copy"
    if op == "missing":
        return table.drop_columns([name]), name
    if op == "renamed":
        return table.rename_columns([f"{c}_old" if c == name else c for c in table.column_names]), name
    column = table.column(name)
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        other = pa.array(range(len(table)), pa.int64())
    elif pa.types.is_struct(kind):
        other = pa.array(["x"] * len(table))
    else:
        other = pa.array([str(v) for v in column.to_pylist()])
    return table.set_column(table.column_names.index(name), name, other), name


@FUZZ
@given(op=st.sampled_from(SHARD_MUTATIONS), index=st.integers(min_value=0, max_value=50),
       keep_metadata=st.booleans())
def test_fuzz_a_shard_with_a_column_extra_missing_renamed_or_retyped(built, tmp_path, op, index, keep_metadata):
    from hug_vis_dataset.hub.builder import iter_rows

    table = pq.read_table(matting_shard(built))
    damaged, column = mutate_table(table, op, index)
    if not keep_metadata:
        damaged = damaged.replace_schema_metadata(None)
    repo = tmp_path / "repo"
    path = repo / "data" / "matting" / "test-00000.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(damaged, path)
    with pytest.raises(InputFileError) as caught:
        list(iter_rows(repo, "matting"))
    one_line(caught.value, path)
    assert caught.value.where in (f"column {column!r}", f"column '{column}_old'")


@pytest.fixture(scope="module")
def rows_bytes(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("rows") / "rows.parquet"
    result_frame((0.5, 0.125)).to_parquet(path, index=False)
    return Blob(path.read_bytes())


def _read_rows(path: Path):
    from hug_vis_dataset.scoring.store import read_stored

    return read_stored(path)


def _same_rows(got, clean) -> bool:
    import pandas as pd

    shared = [c for c in clean.columns if c in got.columns]  # an optional column may be absent
    pd.testing.assert_frame_equal(got[shared], clean[shared])
    return True


@FUZZ_MORE
@given(cut=st.integers(min_value=0, max_value=10**9))
def test_fuzz_results_rows_truncated_at_any_byte(rows_bytes, tmp_path, cut):
    path = tmp_path / "rows.parquet"
    path.write_bytes(rows_bytes[:cut % len(rows_bytes)])
    assert holds_or_names(path, _read_rows, None) == "error"


@FUZZ
@given(op=st.sampled_from(SHARD_MUTATIONS), index=st.integers(min_value=0, max_value=50))
def test_fuzz_results_rows_with_a_column_extra_missing_renamed_or_retyped(rows_bytes, tmp_path, op, index):
    import io

    from hug_vis_dataset.datamodel.results import RESULT_COLUMNS
    from hug_vis_dataset.scoring.store import STORED_COLUMNS

    clean_path = tmp_path / "clean.parquet"
    clean_path.write_bytes(rows_bytes)
    clean = _read_rows(clean_path)
    table = pq.read_table(io.BytesIO(rows_bytes))
    damaged, column = mutate_table(table, op, index)
    path = tmp_path / "rows.parquet"
    pq.write_table(damaged, path)
    outcome = holds_or_names(path, _read_rows, clean, _same_rows)
    # An extra column is ignored and the optional input_sha256 may be absent (the same rows);
    # a result column missing or renamed, or any stored column of another type, is named.
    named = column in (STORED_COLUMNS if op == "retyped" else RESULT_COLUMNS) and op != "extra"
    assert outcome == ("error" if named else "same"), (op, column)


def wav_with_list_chunk(path: Path, frames: int = 600) -> bytes:
    """A clean mono 16-bit WAV whose data chunk is followed by a LIST chunk (as many editors write)."""
    import struct

    body = write_noise_wav(path, frames).read_bytes()
    listing = b"LIST" + struct.pack("<I", 12) + b"INFOIART" + struct.pack("<I", 0)
    data = body + listing
    data = data[:4] + struct.pack("<I", len(data) - 8) + data[8:]
    path.write_bytes(data)
    return data


def _read_audio(path: Path):
    from hug_vis_dataset.readers.media import read_audio

    return read_audio(path)


def _same_audio(got, clean) -> bool:
    return got[1] == clean[1] and np.array_equal(got[0], clean[0])


@pytest.fixture()
def wav(tmp_path) -> "tuple[bytes, tuple]":
    data = wav_with_list_chunk(tmp_path / "clean.wav")
    return Blob(data), _read_audio(tmp_path / "clean.wav")


@FUZZ_MORE
@given(cut=st.integers(min_value=0, max_value=10**6))
def test_fuzz_a_wav_truncated_at_any_byte(wav, tmp_path, cut):
    data, clean = wav
    path = tmp_path / "cut.wav"
    path.write_bytes(data[:cut % (len(data) + 1)])
    outcome = holds_or_names(path, _read_audio, clean, _same_audio)
    assert outcome == ("same" if cut % (len(data) + 1) == len(data) else "error")


@FUZZ_MORE
@given(field=st.sampled_from(["data", "riff"]),
       size=st.one_of(st.integers(min_value=0, max_value=2**32 - 1), st.integers(min_value=1100, max_value=1300),
                      st.integers(min_value=1190, max_value=1230), st.sampled_from([0, 0xFFFFFFFF, 1212, 1220])))
def test_fuzz_a_wav_whose_data_or_riff_size_lies(wav, tmp_path, field, size):
    import struct

    data, clean = wav
    offset = data.index(b"data") + 4 if field == "data" else 4
    damaged = data[:offset] + struct.pack("<I", size) + data[offset + 4:]
    path = tmp_path / "lie.wav"
    path.write_bytes(damaged)
    outcome = holds_or_names(path, _read_audio, clean, _same_audio)
    if field == "data" and damaged != data:
        assert outcome == "error"  # a data size that is not the payload's is always named


@pytest.fixture(scope="module")
def small_videos(tmp_path_factory) -> "dict[str, tuple[bytes, int]]":
    from hug_vis_dataset.readers.media import write_video

    root = tmp_path_factory.mktemp("videos")
    fast = write_faststart_mp4(root / "fast.mp4", frames=10)
    plain = root / "plain.mp4"
    write_video(plain, iter([np.random.default_rng(1).integers(0, 256, (10, 32, 48, 3), dtype=np.uint8)]),
                fps=25.0, preset="ultrafast")
    return {"faststart": (Blob(fast.read_bytes()), 10), "moov at the end": (Blob(plain.read_bytes()), 10)}


def _decode_video(path: Path):
    from hug_vis_dataset.readers.media import iter_video_frames

    return np.concatenate(list(iter_video_frames(path, chunk_frames=4)))


def _same_frames(got, clean) -> bool:
    return got.shape == clean.shape and np.array_equal(got, clean)


@FUZZ
@given(kind=st.sampled_from(["faststart", "moov at the end"]), cut=st.integers(min_value=0, max_value=10**6),
       at_packet=st.booleans())
def test_fuzz_a_video_truncated_at_random_offsets(small_videos, tmp_path, kind, cut, at_packet):
    from hug_vis_dataset.readers.media import video_info

    data, frames = small_videos[kind]
    clean_path = tmp_path / "clean.mp4"
    clean_path.write_bytes(data)
    clean = _decode_video(clean_path)
    ends = packet_ends(clean_path)
    offset = ends[cut % len(ends)] if at_packet else cut % (len(data) + 1)
    path = tmp_path / "cut.mp4"
    path.write_bytes(data[:offset])
    outcome = holds_or_names(path, _decode_video, clean, _same_frames)
    holds_or_names(path, lambda p: video_info(p).frames, frames)
    if offset < len(data) and (kind == "moov at the end" or offset < ends[-1]):
        assert outcome == "error"


def test_a_metric_space_upload_of_cut_rows_is_one_line_naming_it(rows_bytes, tmp_path):
    # On main: pyarrow's ArrowInvalid ("Parquet magic bytes not found"), not a HugvisError.
    from hug_vis_dataset.space.metric_examples import read_rows

    path = tmp_path / "rows.parquet"
    path.write_bytes(rows_bytes[: len(rows_bytes) // 2])
    with pytest.raises(InputFileError) as caught:
        read_rows(path)
    assert "is not a readable Parquet file" in one_line(caught.value, path)
    path.write_bytes(rows_bytes)
    assert read_rows(path)["value"] == [0.5, 0.125]


def test_resuming_over_a_shard_of_another_schema_names_it(built, tmp_path):
    # On main the resume trusted the shard by its sha256 and kept it: the repo's matting config then
    # lacked alpha_matte while its card declared it.
    import hashlib
    import json
    import shutil

    from hug_vis_dataset.hub.build_info import MANIFEST, STATE_DIR

    repo = tmp_path / "repo"
    shutil.copytree(built, repo)
    shard = matting_shard(repo)
    pq.write_table(pq.read_table(shard).drop_columns(["alpha_matte"]), shard)
    manifest = json.loads((repo / MANIFEST).read_text())
    [entry] = manifest["configs"]["matting"]["shards"]  # as another version's build would record it
    entry.update(sha256=hashlib.sha256(shard.read_bytes()).hexdigest(), bytes=shard.stat().st_size)
    (repo / MANIFEST).write_text(json.dumps(manifest))
    from hug_vis_dataset.outputs.ledger import append_ledger, stat_entry

    # ... and its ledger (the shard and manifest are that build's own files, unchanged since it wrote them)
    append_ledger(repo, [stat_entry(repo / rel, rel, "hugvis build") for rel in
                         (shard.relative_to(repo).as_posix(), MANIFEST)])
    with pytest.raises(InputFileError) as caught:
        build_repo(built.parent / "release", repo, resume=True, configs=("matting", "clips"), measure_storage=False)
    assert caught.value.where == "column 'alpha_matte'" and SHARD_FIX in one_line(caught.value, shard)
    assert not (repo / STATE_DIR).exists()  # refused when the shards were trusted, before anything was written

"""Hub dataset builder: round trips through `datasets`, resumability, determinism, validation.

The release tree is built here with media.py (not with the synthetic generator) so the
references are independent: alpha frames are random noise (worst case for a lossless codec),
audio is random 16-bit PCM, and every expected value is read back from the release files with
cv2 / soundfile / PyAV, never through the code under test.
"""

from __future__ import annotations

import csv
import filecmp
import json
import os
from pathlib import Path

import numpy as np
import pytest

from hug_vis_dataset.datamodel.grid import EMOTION_NAMES, ClipId, Emotion
from hug_vis_dataset.hub import BuildError, BuildOptions, CONFIG_COLUMNS, CONFIG_NAMES, build_repo, features
from hug_vis_dataset.hub import load_config, verify_repo
from hug_vis_dataset.hub.alpha import ALPHA_CODECS, decode_alpha, encode_alpha
from hug_vis_dataset.hub.builder import MANIFEST, STATE_DIR, iter_rows
from hug_vis_dataset.datamodel.layout import CSV_COLUMNS, DEFAULT_LAYOUT
from hug_vis_dataset.readers.media import write_alpha_pngs, write_video, write_wav
from hug_vis_dataset.validate import GridSpec, write_grid_declaration


class BuildInterrupted(RuntimeError):
    """Raised by a test's on_shard hook to simulate a crash mid-build."""


W, H, FPS, SR = 64, 36, 30.0, 16000
CLIPS = [ClipId(1, Emotion.HAPPY, 1, 1), ClipId(1, Emotion.AFRAID, 1, 1)]
FRAMES = {CLIPS[0]: 9, CLIPS[1]: 7}


def make_release(root: Path, clips=CLIPS, frames=FRAMES, seed: int = 0) -> Path:
    """A tiny valid release tree: random RGB video, random alpha PNGs, random PCM audio."""
    rng = np.random.default_rng(seed)
    rows = []
    for cid in clips:
        n = frames[cid]
        video = rng.integers(0, 256, (n, H, W, 3), dtype=np.uint8)
        alpha = rng.integers(0, 256, (n, H, W), dtype=np.uint8)
        alpha[:, :4] = 0  # exact 0 and 255 must survive too
        alpha[:, -4:] = 255
        audio = rng.integers(-32768, 32768, int(round(n / FPS * SR))) / 32768.0
        rel = {
            "audio_path": DEFAULT_LAYOUT.audio_path(cid),
            "video_path": DEFAULT_LAYOUT.video_path(cid),
            "alpha_matte_path": DEFAULT_LAYOUT.alpha_dir_path(cid),
        }
        write_video(root / rel["video_path"], iter([video]), fps=FPS)
        write_alpha_pngs(root / rel["alpha_matte_path"], iter([alpha]))
        write_wav(root / rel["audio_path"], audio, SR)
        text = f"第{cid.script_id}句 {cid.emotion.value}"
        transcript = root / DEFAULT_LAYOUT.transcript_path(cid)
        transcript.parent.mkdir(parents=True, exist_ok=True)
        transcript.write_text(text + "\n", encoding="utf-8")
        rows.append({
            "clip_id": str(cid), "actor_id": cid.actor, "emotion": cid.emotion.value,
            "action_id": cid.action_id, "script_id": cid.script_id, "transcript": text,
            "asr_transcript": text + "。", "rgba_foreground_path": "", "duration": f"{n / FPS:.6f}",
            "fps": FPS, "sample_rate": SR, "resolution": f"{W}x{H}", **rel,
        })
    (root / "metadata").mkdir(parents=True, exist_ok=True)
    with open(root / DEFAULT_LAYOUT.metadata_csv, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    spec = GridSpec(actors=tuple(sorted({c.actor_id for c in clips})),
                    emotions=tuple(e.value for e in Emotion if any(c.emotion is e for c in clips)),
                    actions=(1,), scripts=(1,))
    write_grid_declaration(root, spec)
    return root


def release_alpha(root: Path, cid: ClipId) -> np.ndarray:
    import cv2

    folder = root / DEFAULT_LAYOUT.alpha_dir_path(cid)
    return np.stack([cv2.imread(str(folder / f"{i:06d}.png"), cv2.IMREAD_UNCHANGED) for i in range(FRAMES[cid])])


def pyav_frames(path: Path) -> list[np.ndarray]:
    import av

    with av.open(str(path)) as container:
        return [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]


def tree_files(root: Path) -> list[str]:
    """The repo's files, but the output guard's marker and ledger (their times differ between builds)."""
    from hug_vis_dataset.outputs import GUARD_FILES

    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name not in GUARD_FILES)


def assert_same_tree(a: Path, b: Path) -> None:
    files = tree_files(a)
    assert files == tree_files(b)
    match, mismatch, errors = filecmp.cmpfiles(a, b, files, shallow=False)
    assert mismatch == [] and errors == [], (mismatch, errors)


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return make_release(tmp_path_factory.mktemp("release"))


@pytest.fixture(scope="module")
def repo(release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("built") / "repo"
    build_repo(release, out)
    return out


@pytest.fixture()
def offline(monkeypatch, tmp_path):
    import datasets

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    return str(tmp_path / "hf-cache")  # fresh cache: rewritten files at the same path are not noticed


# ----------------------------------------------------------------------------- alpha codecs
@pytest.mark.parametrize("codec", sorted(ALPHA_CODECS))
@pytest.mark.parametrize("shape", [(5, 36, 64), (3, 17, 35), (1, 2, 2)])
def test_alpha_codecs_round_trip_bit_exact(codec, shape):
    rng = np.random.default_rng(len(codec) + shape[1])
    frames = rng.integers(0, 256, shape, dtype=np.uint8)
    frames[0, 0, 0], frames[-1, -1, -1] = 0, 255
    chunks = [frames[i : i + 2] for i in range(0, len(frames), 2)]
    blob, count = encode_alpha(iter(chunks), 30.0, codec)
    assert count == shape[0]
    np.testing.assert_array_equal(decode_alpha(blob), frames)
    assert encode_alpha(iter([frames]), 30.0, codec)[0] == blob  # chunking and reruns give the same bytes


def test_alpha_codec_errors():
    with pytest.raises(ValueError, match="no alpha frames"):
        encode_alpha(iter([]), 30.0)
    with pytest.raises(ValueError, match="uint8"):
        encode_alpha(iter([np.zeros((2, 4, 4), np.float32)]), 30.0)
    with pytest.raises(ValueError, match="earlier frames"):
        encode_alpha(iter([np.zeros((1, 4, 4), np.uint8), np.zeros((1, 4, 6), np.uint8)]), 30.0)
    with pytest.raises(ValueError, match="unknown alpha codec"):
        encode_alpha(iter([np.zeros((1, 4, 4), np.uint8)]), 30.0, "jpeg")


# ----------------------------------------------------------------------------- card and files
def test_card_front_matter_declares_every_config(repo):
    import datasets
    import yaml

    text = (repo / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    front = yaml.safe_load(text.split("---\n")[1])
    assert [c["config_name"] for c in front["configs"]] == list(CONFIG_NAMES)
    assert [c.get("default", False) for c in front["configs"]] == [True] + [False] * 5
    for entry in front["configs"]:
        assert entry["data_files"] == [{"split": "test", "path": f"data/{entry['config_name']}/test-*.parquet"}]
    for info in front["dataset_info"]:
        assert datasets.Features._from_yaml_list(info["features"]) == features(info["config_name"])
        assert info["splits"][0]["num_examples"] == len(CLIPS)
    assert front["extra_gated_prompt"] and front["extra_gated_fields"]
    assert front["license"] == "other" and "task_categories" in front and front["pretty_name"]
    for phrase in ('evaluate.load("hugvis/dtssd")', "hugvis evaluate matting", "Alpha storage", "ffv1 (chosen)",
                   "Two-handed open-palmed welcome", "@misc{hugvis2026"):
        assert phrase in text


def test_manifest_and_checksums(repo):
    import hashlib

    manifest = json.loads((repo / MANIFEST).read_text())
    assert set(manifest["configs"]) == set(CONFIG_NAMES) and manifest["excluded"] == {}
    for config, entry in manifest["configs"].items():
        assert entry["rows"] == len(CLIPS)
        for shard in entry["shards"]:
            assert hashlib.sha256((repo / shard["file"]).read_bytes()).hexdigest() == shard["sha256"]
    listed = [line.split("  ")[1] for line in (repo / "checksums.sha256").read_text().splitlines()]
    assert sorted(listed) == sorted(f for f in tree_files(repo) if f != "checksums.sha256")
    assert verify_repo(repo) == []
    assert not (repo / STATE_DIR).exists()


# ----------------------------------------------------------------------------- load_dataset
@pytest.mark.parametrize("config", CONFIG_NAMES)
def test_every_config_loads_offline_with_grid_keys(repo, offline, config):
    ds = load_config(repo, config, cache_dir=offline)
    assert len(ds) == len(CLIPS)
    assert list(ds.features) == list(CONFIG_COLUMNS[config])
    assert ds["clip_id"] == [str(c) for c in CLIPS]  # grid order, release spelling ("fearful")
    assert ds["actor_id"] == [c.actor_id for c in CLIPS]
    assert ds["emotion"] == [c.emotion.value for c in CLIPS]
    assert ds["action_id"] == [1, 1] and ds["script_id"] == [1, 1]
    if "label" in ds.features:
        assert ds.features["label"].names == list(EMOTION_NAMES)
        assert ds["label"] == [c.emotion.index for c in CLIPS]  # Happy 0, Afraid 3


def test_matting_alpha_is_bit_exact_and_frame_counts_match(release, repo, offline):
    ds = load_config(repo, "matting", cache_dir=offline)
    for row, cid in zip(ds, CLIPS):
        video, alpha = row["video"], row["alpha_matte"]
        assert len(video) == len(pyav_frames(release / DEFAULT_LAYOUT.video_path(cid))) == FRAMES[cid]
        assert len(alpha) == row["num_frames"] == FRAMES[cid]
        decoded = alpha[:].numpy()  # (T, 3, H, W): three equal channels
        np.testing.assert_array_equal(decoded[:, 0], release_alpha(release, cid))
        np.testing.assert_array_equal(decoded[:, 1], decoded[:, 2])


def test_clips_config_media_equal_release(release, repo, offline):
    import soundfile as sf
    from datasets import Audio, Video

    ds = load_config(repo, "clips", cache_dir=offline)
    for row, cid in zip(ds, CLIPS):
        pcm, rate = sf.read(str(release / DEFAULT_LAYOUT.audio_path(cid)), dtype="int16")
        samples = row["audio"].get_all_samples()
        assert samples.sample_rate == rate == row["sample_rate"]
        np.testing.assert_array_equal(samples.data.numpy()[0], pcm.astype(np.float32) / 32768.0)
        np.testing.assert_array_equal(row["alpha_matte"][:].numpy()[:, 0], release_alpha(release, cid))
        assert (row["width"], row["height"], row["fps"]) == (W, H, FPS)
        assert row["transcript"] == f"第1句 {cid.emotion.value}" and row["asr_transcript"].endswith("。")
    raw = ds.cast_column("video", Video(decode=False)).cast_column("audio", Audio(decode=False))
    for row, cid in zip(raw, CLIPS):  # embedded bytes are the release files, not re-encodes
        assert row["video"]["bytes"] == (release / DEFAULT_LAYOUT.video_path(cid)).read_bytes()
        assert row["audio"]["bytes"] == (release / DEFAULT_LAYOUT.audio_path(cid)).read_bytes()


def test_generation_and_voice_configs(release, repo, offline):
    ad = load_config(repo, "audio_driven", cache_dir=offline)
    vd = load_config(repo, "vision_driven", cache_dir=offline)
    vc = load_config(repo, "voice_cloning", cache_dir=offline)
    for a, v, c, cid in zip(ad, vd, vc, CLIPS):
        first = pyav_frames(release / DEFAULT_LAYOUT.video_path(cid))[0]
        np.testing.assert_array_equal(np.asarray(a["source_frame"].convert("RGB")), first)  # lossless PNG
        np.testing.assert_array_equal(np.asarray(v["source_frame"]), first)
        assert len(a["reference_video"]) == len(v["driving_video"]) == len(v["reference_video"]) == FRAMES[cid]
        assert a["driving_audio"].get_all_samples().data.shape[1] == round(FRAMES[cid] / FPS * SR)
        assert c["speaker_id"] == cid.actor and c["target_text"] == f"第1句 {cid.emotion.value}"
        assert c["reference_audio"].get_all_samples().sample_rate == SR


def test_streaming_matches_map_style(release, repo, offline):
    for config in CONFIG_NAMES:
        stream = load_config(repo, config, streaming=True, cache_dir=offline)
        assert [r["clip_id"] for r in stream] == [str(c) for c in CLIPS]
    stream = load_config(repo, "matting", streaming=True, cache_dir=offline)
    for row, cid in zip(stream, CLIPS):
        np.testing.assert_array_equal(row["alpha_matte"][:].numpy()[:, 0], release_alpha(release, cid))


# ----------------------------------------------------------------------------- sharding, resume
SMALL = BuildOptions(shard_bytes=1, row_group_bytes=1, max_rows_per_group=1)  # one clip per shard


def test_small_shards_roll_over_and_load_in_order(release, tmp_path, offline):
    import pyarrow.parquet as pq

    out = tmp_path / "repo"
    report = build_repo(release, out, options=SMALL, configs=["matting", "emotion"])
    assert [s.file for s in report.shards["matting"]] == ["data/matting/test-00000.parquet",
                                                         "data/matting/test-00001.parquet"]
    assert all(pq.ParquetFile(out / s.file).metadata.num_row_groups == 1 for s in report.shards["matting"])
    assert [r["clip_id"] for r in iter_rows(out, "matting")] == [str(c) for c in CLIPS]
    ds = load_config(out, "matting", cache_dir=offline)
    assert ds["clip_id"] == [str(c) for c in CLIPS]
    np.testing.assert_array_equal(ds[1]["alpha_matte"][:].numpy()[:, 0], release_alpha(release, CLIPS[1]))


def test_interrupted_build_resumes_to_identical_bytes(release, tmp_path):
    clean = tmp_path / "clean"
    build_repo(release, clean, options=SMALL)
    broken = tmp_path / "broken"
    seen = []

    def crash(config, entry):
        seen.append(entry.file)
        if config == "audio_driven":
            raise BuildInterrupted("simulated crash after the first audio_driven shard")

    with pytest.raises(BuildInterrupted):
        build_repo(release, broken, options=SMALL, on_shard=crash)
    assert seen[-1] == "data/audio_driven/test-00000.parquet"
    assert not (broken / "README.md").exists() and not (broken / MANIFEST).exists()
    # Debris a crash can leave: the staging folder of a killed build (a half-written shard in it) and a
    # shard put in place by the guard (so in the repo's ledger) but not yet recorded in the resume state.
    from hug_vis_dataset.outputs import MARKER, Output
    from hug_vis_dataset.outputs.transient import MARKER as TRANSIENT

    dead = broken / ".staging-dead"
    dead.mkdir()
    (dead / TRANSIENT).write_text('{"kind": "staging", "pid": 1}')
    (dead / "audio_driven-00001.parquet.tmp").write_bytes(b"PAR1 half")
    placed = tmp_path / "placed.parquet"
    placed.write_bytes(b"not recorded")
    assert (broken / MARKER).is_file()
    Output("hugvis build", str(broken), "dataset-repo").place(placed, "data/vision_driven/test-00000.parquet")
    with pytest.raises(BuildError, match="not empty"):
        build_repo(release, broken, options=SMALL)
    report = build_repo(release, broken, options=SMALL, resume=True)
    assert report.reused_shards == 2 + 2 + 1  # clips, emotion, first audio_driven shard
    assert_same_tree(clean, broken)
    assert not dead.exists()


def test_resume_never_deletes_a_file_the_build_did_not_write(release, tmp_path):
    """A file someone else put in a config folder (or a shard someone changed) stops a resume, untouched."""
    from hug_vis_dataset.outputs import NotOursError

    repo = tmp_path / "repo"
    build_repo(release, repo, options=SMALL, configs=["matting"])
    theirs = repo / "data/matting/test-00099.parquet"
    theirs.write_bytes(b"someone's shard")
    with pytest.raises(NotOursError, match="test-00099.parquet was not made by hugvis"):
        build_repo(release, repo, options=SMALL, configs=["matting"], resume=True)
    assert theirs.read_bytes() == b"someone's shard"


def test_resume_rewrites_a_deleted_shard_refuses_a_changed_one_and_other_options(release, tmp_path):
    from hug_vis_dataset.outputs import NotOursError

    out = tmp_path / "repo"
    build_repo(release, out, options=SMALL, configs=["matting"])
    reference = (out / "data/matting/test-00000.parquet").read_bytes()
    (out / "data/matting/test-00000.parquet").write_bytes(reference[:-10] + b"0123456789")
    assert verify_repo(out) == ["data/matting/test-00000.parquet"]
    # A shard changed since the build wrote it is never overwritten: the resume names it, changes nothing.
    changed = (out / "data/matting/test-00000.parquet").read_bytes()
    with pytest.raises(NotOursError, match="test-00000.parquet was written by hugvis build and changed since"):
        build_repo(release, out, options=SMALL, configs=["matting"], resume=True)
    assert (out / "data/matting/test-00000.parquet").read_bytes() == changed
    (out / "data/matting/test-00000.parquet").unlink()  # what the message asks for
    report = build_repo(release, out, options=SMALL, configs=["matting"], resume=True)
    # The corrupted first shard invalidates it and every later shard of the config.
    assert (report.reused_shards, report.written_shards) == (0, 2)
    assert (out / "data/matting/test-00000.parquet").read_bytes() == reference
    assert verify_repo(out) == []
    report = build_repo(release, out, options=SMALL, configs=["matting"], resume=True)
    assert (report.reused_shards, report.written_shards) == (2, 0)
    with pytest.raises(BuildError, match="different input or options"):
        build_repo(release, out, options=BuildOptions(), configs=["matting"], resume=True)


@pytest.mark.slow
def test_num_proc_gives_identical_repo(release, repo, tmp_path):
    out = tmp_path / "repo"
    build_repo(release, out, num_proc=2)
    assert_same_tree(repo, out)


# ----------------------------------------------------------------------------- validation
def test_invalid_release_is_refused_or_built_as_valid_subset(tmp_path, offline):
    root = make_release(tmp_path / "release")
    bad = CLIPS[1]
    (root / DEFAULT_LAYOUT.alpha_frame_path(bad, 3)).unlink()
    with pytest.raises(BuildError, match="fails validation"):
        build_repo(root, tmp_path / "refused")
    assert not (tmp_path / "refused").exists()
    out = tmp_path / "subset"
    report = build_repo(root, out, allow_invalid=True, configs=["matting", "clips"])
    assert list(report.excluded) == [str(bad)]
    assert any("alpha" in message for message in report.excluded[str(bad)])
    assert report.rows == {"matting": 1, "clips": 1}
    assert load_config(out, "matting", cache_dir=offline)["clip_id"] == [str(CLIPS[0])]
    assert str(bad) in (out / "README.md").read_text(encoding="utf-8")
    assert json.loads((out / MANIFEST).read_text())["excluded"].keys() == {str(bad)}


def test_cli_build(release, tmp_path, capsys):
    from hug_vis_dataset.hub.commands import register
    import argparse

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["build", str(release), str(tmp_path / "repo"), "--configs", "voice_cloning"])
    assert args.func(args) == 0
    assert "voice_cloning: 2 rows in 1 shard(s)" in capsys.readouterr().out
    args = parser.parse_args(["build", str(release), str(tmp_path / "repo")])
    assert args.func(args) == 1  # not empty without --resume
    assert "--resume" in capsys.readouterr().err

"""Storage of the built repo: the content-defined chunker, media duplication, row-group limits.

References are independent of the code under test: a plain-Python re-derivation of the gear-hash
cut rule, the closed form of the hash of a run of zeros, hand-made Parquet files with known media,
cells re-read with pyarrow and hashed with hashlib, and row-group sizes from the Parquet footer.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from hug_vis_dataset.hub import BuildError, BuildOptions, build_repo, features
from hug_vis_dataset.hub.build_info import MANIFEST, VIEWER_ROW_GROUP_BYTES, BuildOptionsError
from hug_vis_dataset.hub.builder import iter_rows
from hug_vis_dataset.hub.cdc import (GEAR_SEED, WINDOW, ContentDefinedChunker, FixedSizeChunker, dedup_size,
                                     gear_table, iter_file_chunks)
from hug_vis_dataset.hub.dedup import cell_digests, media_duplication, storage_report, unique_media_bytes
from hug_vis_dataset.hub.rows import row_bytes
from hug_vis_dataset.hub.schema import media_columns

from test_builder import make_release

KiB = 1024
SMALL_CDC = ContentDefinedChunker(min_size=256, avg_size=1024, max_size=4096)


def random_bytes(n: int, seed: int) -> bytes:
    return np.random.default_rng(seed).integers(0, 256, n, dtype=np.uint8).tobytes()


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def reference_cuts(data: bytes, min_size: int, avg_size: int, max_size: int) -> list[int]:
    """The gear-hash cut rule written out in plain Python integers (mod 2**64), one byte at a time."""
    gear = [int(v) for v in np.random.PCG64(GEAR_SEED).random_raw(256)]
    bits = avg_size.bit_length() - 1
    mask = ((1 << bits) - 1) << (64 - bits)
    cuts, start, n = [], 0, len(data)
    while start < n:
        end = min(start + max_size, n)
        cut = end
        h = 0
        for i in range(max(start, start + min_size - WINDOW), end):
            h = ((h << 1) + gear[data[i]]) % (1 << 64)
            if i + 1 >= start + min_size and h & mask == 0:
                cut = i + 1
                break
        cuts.append(cut)
        start = cut
    return cuts


# ----------------------------------------------------------------------------- chunker
@pytest.mark.parametrize("seed,n", [(0, 50_000), (1, 4096), (2, 257), (3, 100)])
def test_cut_points_match_a_plain_python_rederivation(seed, n):
    data = random_bytes(n, seed)
    assert SMALL_CDC.cut_points(np.frombuffer(data, np.uint8)).tolist() == reference_cuts(data, 256, 1024, 4096)


def test_gear_table_is_the_raw_pcg64_stream():
    expected = [int(v) for v in np.random.PCG64(GEAR_SEED).random_raw(256)]
    assert gear_table().tolist() == expected
    assert len(set(expected)) == 256


@pytest.mark.parametrize("n", [0, 1, 4096, 3 * 4096 + 5])
def test_zeros_cut_by_closed_form(n):
    # After WINDOW shifts the hash of a zero run is g * (2**64 - 1) = -g (mod 2**64), a constant:
    # either every test position cuts (chunks of min_size) or none does (chunks of max_size).
    g = int(gear_table()[0])
    hits = (-g) % (1 << 64) & ContentDefinedChunker(256, 1024, 4096).mask == 0
    step = 256 if hits else 4096
    expected = list(range(step, n, step)) + ([n] if n else [])
    assert SMALL_CDC.cut_points(np.zeros(n, np.uint8)).tolist() == expected


@pytest.mark.parametrize("pattern", ["random", "zeros", "period-3", "ramp"])
def test_chunks_respect_min_and_max(pattern):
    n = 200_000
    data = {"random": np.frombuffer(random_bytes(n, 5), np.uint8), "zeros": np.zeros(n, np.uint8),
            "period-3": np.tile(np.array([1, 2, 3], np.uint8), n // 3), "ramp": (np.arange(n) % 256).astype(np.uint8)}[pattern]
    cuts = SMALL_CDC.cut_points(data)
    sizes = np.diff(np.r_[0, cuts])
    assert cuts[-1] == len(data) and np.all(sizes > 0)
    assert sizes[:-1].min() >= 256 and sizes.max() <= 4096


def test_xet_chunk_sizes_on_random_data():
    cuts = ContentDefinedChunker().cut_points(np.frombuffer(random_bytes(8 << 20, 6), np.uint8))
    sizes = np.diff(np.r_[0, cuts])
    assert sizes[:-1].min() >= 8 * KiB and sizes.max() <= 128 * KiB
    # Past the 8 KiB minimum a cut hits with probability 2**-16 per byte, capped at 128 KiB:
    # E[size] = 8 KiB + 64 KiB * (1 - exp(-120 KiB / 64 KiB)).
    expected = 8 * KiB + 64 * KiB * (1 - np.exp(-120 / 64))
    assert abs(sizes.mean() / expected - 1) < 0.08


def test_chunker_parameters_are_checked():
    for bad in [dict(min_size=32), dict(avg_size=3000), dict(min_size=4096, max_size=1024)]:
        with pytest.raises(ValueError, match="power of two"):
            ContentDefinedChunker(**bad)


def test_identical_files_dedupe_to_one_copy(tmp_path):
    data = random_bytes(1 << 20, 7)
    files = [write(tmp_path / name, data) for name in "abc"]
    size = dedup_size(files)
    assert size.total_bytes == 3 << 20
    assert size.unique_bytes == 1 << 20
    assert size.unique_chunks * 3 == size.chunks


def test_insertion_at_front_keeps_chunks_unlike_fixed_blocks(tmp_path):
    data = random_bytes(2 << 20, 8)
    extra = random_bytes(1000, 9)
    files = [write(tmp_path / "a", data), write(tmp_path / "b", extra + data)]
    cdc = dedup_size(files)
    # Content-defined: b re-finds a's cuts within a chunk or two of the insertion, so at most the
    # inserted bytes and two maximum chunks are new.
    assert cdc.unique_bytes <= len(data) + len(extra) + 2 * 128 * KiB
    # Fixed 64 KiB blocks: every block of b is shifted by 1000 bytes, so no block is shared.
    fixed = dedup_size(files, FixedSizeChunker(64 * KiB))
    assert fixed.unique_bytes == fixed.total_bytes == 2 * len(data) + len(extra)


def test_streamed_chunks_do_not_depend_on_read_size(tmp_path):
    path = write(tmp_path / "a", random_bytes(300_000, 10) + bytes(20_000) + random_bytes(50_000, 11))
    whole = list(iter_file_chunks(path, SMALL_CDC, read_bytes=1 << 30))
    for read_bytes in (1, 999, 4096, 65_536):
        assert list(iter_file_chunks(path, SMALL_CDC, read_bytes=read_bytes)) == whole
    assert b"".join(whole) == path.read_bytes()
    # and deterministic from one call to the next
    assert [len(c) for c in iter_file_chunks(path, SMALL_CDC)] == [len(c) for c in whole]


def test_dedup_size_of_empty_and_tiny_files(tmp_path):
    files = [write(tmp_path / "empty", b""), write(tmp_path / "x", b"abc"), write(tmp_path / "y", b"abc")]
    size = dedup_size(files)
    assert (size.total_bytes, size.unique_bytes, size.chunks, size.unique_chunks) == (6, 3, 2, 1)


# ----------------------------------------------------------------------------- media duplication
def write_config(repo: Path, config: str, rows: list[dict]) -> None:
    """A hand-made shard of ``config``: the given columns, every other column null."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = features(config).arrow_schema
    full = [{name: row.get(name) for name in schema.names} for row in rows]
    folder = repo / "data" / config
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(full, schema=schema), folder / "test-00000.parquet", row_group_size=1)


def blob(data: bytes) -> dict:
    return {"bytes": data, "path": "x"}


def test_media_duplication_hand_made(tmp_path):
    a, b, c, d = b"A" * 100, b"B" * 50, b"C" * 30, b"D" * 70
    write_config(tmp_path, "matting", [{"clip_id": "1", "video": blob(a), "alpha_matte": blob(b)}])
    write_config(tmp_path, "clips", [{"clip_id": "1", "video": blob(a), "audio": blob(c), "alpha_matte": blob(d)}])
    write_config(tmp_path, "vision_driven", [
        {"clip_id": "1", "driving_video": blob(d), "reference_video": blob(d), "source_frame": None},
        {"clip_id": "2", "driving_video": blob(b"E" * 9), "reference_video": blob(b"F" * 4), "source_frame": None}])
    usage = media_duplication(tmp_path)
    assert list(usage) == ["clips", "vision_driven", "matting"]  # repo order, only configs present
    assert (usage["matting"].media_bytes, usage["matting"].shared_media_bytes, usage["matting"].media_cells) == (150, 100, 2)
    assert (usage["clips"].media_bytes, usage["clips"].shared_media_bytes) == (200, 170)  # a with matting, d with vision
    vision = usage["vision_driven"]
    assert (vision.media_bytes, vision.shared_media_bytes, vision.repeated_media_bytes) == (153, 140, 70)
    assert usage["matting"].file_bytes == (tmp_path / "data/matting/test-00000.parquet").stat().st_size
    assert unique_media_bytes(cell_digests(tmp_path)) == 100 + 50 + 30 + 70 + 9 + 4


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return make_release(tmp_path_factory.mktemp("release"))


@pytest.fixture(scope="module")
def built(release, tmp_path_factory):
    out = tmp_path_factory.mktemp("built") / "repo"
    return out, build_repo(release, out)


def rehashed(repo: Path, config: str) -> list[tuple[str, int]]:
    """(sha256, size) of every media cell of a config, re-read through iter_rows."""
    return [(hashlib.sha256(row[c]["bytes"]).hexdigest(), len(row[c]["bytes"]))
            for row in iter_rows(repo, config) for c in media_columns(config) if row[c] is not None]


def test_media_duplication_of_a_built_repo_matches_rehashing(built):
    repo, report = built
    cells = {c: rehashed(repo, c) for c in report.rows}
    owners: dict[str, set[str]] = {}
    for config, items in cells.items():
        for digest, _ in items:
            owners.setdefault(digest, set()).add(config)
    usage = media_duplication(repo)
    for config, items in cells.items():
        assert usage[config].media_bytes == sum(size for _, size in items)
        assert usage[config].shared_media_bytes == sum(size for d, size in items if len(owners[d]) > 1)
        assert usage[config].file_bytes == sum(s.bytes for s in report.shards[config])
    # every medium of a full build is in at least two configs; vision_driven repeats its video
    assert all(usage[c].shared_media_bytes == usage[c].media_bytes for c in usage)
    videos = [len(r["reference_video"]["bytes"]) for r in iter_rows(repo, "vision_driven")]
    assert usage["vision_driven"].repeated_media_bytes == sum(videos)
    assert report.storage.configs == usage


def test_configs_without_common_media_share_nothing(release, tmp_path):
    out = tmp_path / "repo"
    build_repo(release, out, configs=["matting", "voice_cloning"], measure_storage=False)
    usage = media_duplication(out)
    assert usage["matting"].shared_media_bytes == usage["voice_cloning"].shared_media_bytes == 0
    assert usage["matting"].media_cells == 4 and usage["voice_cloning"].media_cells == 2


def test_storage_report_records_chunk_dedup_and_release(built):
    repo, report = built
    storage = report.storage
    shards = sorted(repo.glob("data/*/*.parquet"))
    expected = dedup_size([repo / s.file for c in report.shards for s in report.shards[c]])
    assert storage.shards_dedup == expected
    assert storage.shards_dedup.total_bytes == sum(p.stat().st_size for p in shards)
    assert storage.release_bytes == report.release_bytes
    # dedup can keep no less than the distinct media and no more than the shards
    assert storage.unique_media_bytes <= storage.shards_dedup.unique_bytes < storage.shard_bytes
    manifest = json.loads((repo / MANIFEST).read_text())
    assert manifest["storage"] == storage.to_dict()
    card = (repo / "README.md").read_text(encoding="utf-8")
    assert "## Storage" in card
    for line in storage.summary_lines():
        assert f"- {line}" in card
    assert storage_report(repo, report.release_bytes) == storage  # pure: same numbers again


def test_cli_storage_report(built, release, tmp_path, capsys):
    from hug_vis_dataset.hub.commands import register

    repo, report = built
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["storage-report", str(repo), "--release", str(release), "--json", str(tmp_path / "s.json")])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert out.strip() == report.storage.to_text()
    assert json.loads((tmp_path / "s.json").read_text()) == report.storage.to_dict()
    args = parser.parse_args(["storage-report", str(tmp_path)])
    assert args.func(args) == 1
    assert capsys.readouterr().err.startswith(f"error: {tmp_path} has no manifest.json")


# ----------------------------------------------------------------------------- row groups
def footer_groups(path: Path) -> list[tuple[int, int]]:
    import pyarrow.parquet as pq

    meta = pq.read_metadata(path)
    return [(meta.row_group(i).num_rows, meta.row_group(i).total_byte_size) for i in range(meta.num_row_groups)]


def test_row_bytes_bounds_each_row_in_the_footer(release, tmp_path):
    out = tmp_path / "repo"
    build_repo(release, out, options=BuildOptions(row_group_bytes=1, max_rows_per_group=1), measure_storage=False)
    for config in ("clips", "audio_driven", "vision_driven"):
        rows = list(iter_rows(out, config))
        groups = footer_groups(out / f"data/{config}/test-00000.parquet")
        assert [n for n, _ in groups] == [1] * len(rows)
        for row, (_, size) in zip(rows, groups):
            assert size <= row_bytes(row)


def test_tiny_row_group_limit_splits_groups(release, tmp_path):
    # Four clips of 8 frames: a limit that holds two rows but not three gives groups of two.
    from test_builder import CLIPS

    from hug_vis_dataset.datamodel.grid import ClipId, Emotion

    clips = CLIPS + [ClipId(1, Emotion.SAD, 1, 1), ClipId(1, Emotion.ANGRY, 1, 1)]
    root = make_release(tmp_path / "release", clips=clips, frames={c: 8 for c in clips})
    probe = tmp_path / "probe"
    build_repo(root, probe, configs=["matting"], measure_storage=False)
    sizes = [row_bytes(r) for r in iter_rows(probe, "matting")]
    limit = max(sizes[0] + sizes[1], sizes[2] + sizes[3]) + 1
    assert limit < sizes[0] + sizes[1] + sizes[2]
    out = tmp_path / "repo"
    build_repo(root, out, configs=["matting"], options=BuildOptions(row_group_bytes=limit), measure_storage=False)
    groups = footer_groups(out / "data/matting/test-00000.parquet")
    assert [n for n, _ in groups] == [2, 2]
    assert all(size <= limit for _, size in groups)
    assert [r["clip_id"] for r in iter_rows(out, "matting")] == [r["clip_id"] for r in iter_rows(probe, "matting")]


def test_every_row_group_of_a_default_build_is_under_the_limits(built):
    repo, report = built
    for config in report.shards:
        for shard in report.shards[config]:
            for _, size in footer_groups(repo / shard.file):
                assert size <= BuildOptions().row_group_bytes <= VIEWER_ROW_GROUP_BYTES


def test_row_group_limit_is_checked(release, tmp_path, monkeypatch):
    with pytest.raises(BuildOptionsError, match="row-group limit"):
        BuildOptions(row_group_bytes=VIEWER_ROW_GROUP_BYTES + 1)
    BuildOptions(row_group_bytes=VIEWER_ROW_GROUP_BYTES)  # the limit itself is allowed
    import hug_vis_dataset.hub.shards as shards

    monkeypatch.setattr(shards, "VIEWER_ROW_GROUP_BYTES", 1000)  # a row cannot be split: refused by name
    with pytest.raises(BuildError, match="clip actor_0001_happy_action_01_script_001: its matting row"):
        build_repo(release, tmp_path / "repo", configs=["matting"], measure_storage=False)


def test_content_defined_pages_keep_the_rows(release, tmp_path):
    plain, cdc = tmp_path / "plain", tmp_path / "cdc"
    build_repo(release, plain, configs=["clips"], measure_storage=False)
    build_repo(release, cdc, configs=["clips"], options=BuildOptions(content_defined_chunking=True),
               measure_storage=False)
    assert list(iter_rows(cdc, "clips")) == list(iter_rows(plain, "clips"))
    manifests = [json.loads((folder / MANIFEST).read_text()) for folder in (plain, cdc)]
    assert [m["options"]["content_defined_chunking"] for m in manifests] == [False, True]
    assert manifests[0]["plan"] != manifests[1]["plan"]  # a resume never mixes the two layouts

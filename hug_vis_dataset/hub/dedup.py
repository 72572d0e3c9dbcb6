"""How much of a built repo is media repeated across configs, and what chunk-level dedup leaves.

Each config of the repo embeds the media it needs (schema.py), so one clip's video sits in
``clips``, ``emotion``, ``matting`` and twice in ``vision_driven``. :func:`media_duplication`
reads every media cell of every shard (one row group of one column at a time), hashes it, and
reports per config: file bytes, media bytes, and media bytes whose content also appears in another
config. :func:`storage_report` adds the shards' size after chunk-level dedup
(:func:`hug_vis_dataset.hub.cdc.dedup_size`, what the Hub's Xet storage keeps) and the release
media's size, the figure the repo is compared with.

Example:
    >>> import tempfile, os
    >>> from hug_vis_dataset.synth import synthesize
    >>> from hug_vis_dataset.hub import build_repo
    >>> from hug_vis_dataset.validate import GridSpec
    >>> root, repo = tempfile.mkdtemp(), os.path.join(tempfile.mkdtemp(), "repo")
    >>> _ = synthesize(root, actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.2,
    ...                size=(64, 36), systems=False)
    >>> _ = build_repo(root, repo, grid=GridSpec.parse("actors=1,emotions=Happy,actions=1,scripts=1"),
    ...                configs=["clips", "matting"])
    >>> usage = media_duplication(repo)
    >>> usage["matting"].shared_media_bytes == usage["matting"].media_bytes  # video + alpha also in clips
    True
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict
from pathlib import Path
from typing import Iterator

from .cdc import XET_CHUNKER, Chunker, dedup_size
from .schema import CONFIG_NAMES, media_columns
from .storage_info import ConfigStorage, RepoStorage

#: (sha256 digest, size) of each media cell of a config, in shard, row-group, column, row order.
CellDigests = list[tuple[bytes, int]]


def _config_shards(repo: Path, config: str) -> list[Path]:
    return sorted((repo / "data" / config).glob("test-*.parquet"))


def iter_media_cells(shard: "str | Path", columns: "tuple[str, ...]") -> Iterator[memoryview]:
    """The bytes of every non-empty media cell of a shard (no copy); memory: one column of one row group."""
    from .loading import open_shard

    handle = open_shard(shard)  # footer checked against its config's schema: a foreign shard is named
    for group in range(handle.num_row_groups):
        for column in columns:
            values = handle.read_row_group(group, columns=[f"{column}.bytes"]).column(0)
            for chunk in values.chunks:  # struct<bytes> arrays: the blob is the "bytes" child
                for cell in chunk.field("bytes"):
                    blob = cell.as_buffer()
                    if blob is not None:
                        yield memoryview(blob)


def cell_digests(repo_dir: "str | Path") -> "dict[str, CellDigests]":
    """Per config present under ``data/`` (repo order): (sha256, size) of each media cell."""
    repo = Path(repo_dir)
    digests = {}
    for config in CONFIG_NAMES:
        shards = _config_shards(repo, config)
        if shards:
            digests[config] = [(hashlib.sha256(blob).digest(), blob.nbytes)
                               for shard in shards for blob in iter_media_cells(shard, media_columns(config))]
    return digests


def media_duplication(repo_dir: "str | Path", digests: "dict[str, CellDigests] | None" = None) -> dict[str, ConfigStorage]:
    """Per config: shard bytes, media bytes and media bytes also present in another config.

    Only the configs present under ``data/`` are counted. Content is compared by sha256, so a
    medium shared between configs is found whatever column or row it sits in.

    Args:
        repo_dir: a built repo.
        digests: :func:`cell_digests` of it, if already computed.
    """
    repo = Path(repo_dir)
    digests = cell_digests(repo) if digests is None else digests
    owners: dict[bytes, set[str]] = {}
    for config, cells in digests.items():
        for digest, _ in cells:
            owners.setdefault(digest, set()).add(config)
    usage = {}
    for config, cells in digests.items():
        seen: set[bytes] = set()
        repeated = 0
        for digest, size in cells:
            if digest in seen:
                repeated += size
            seen.add(digest)
        usage[config] = ConfigStorage(
            file_bytes=sum(p.stat().st_size for p in _config_shards(repo, config)),
            media_bytes=sum(size for _, size in cells),
            media_cells=len(cells),
            shared_media_bytes=sum(size for digest, size in cells if len(owners[digest]) > 1),
            repeated_media_bytes=repeated,
        )
    return usage


def unique_media_bytes(digests: "dict[str, CellDigests]") -> int:
    """Bytes of the distinct media contents among :func:`cell_digests` (each counted once, over all configs).

    Example:
        >>> unique_media_bytes({"clips": [(b"a", 10), (b"b", 5)], "matting": [(b"a", 10)]})
        15
    """
    return sum(dict(cell for cells in digests.values() for cell in cells).values())


def storage_report(repo_dir: "str | Path", release_bytes: "int | None" = None,
                   chunker: "Chunker | None" = XET_CHUNKER) -> RepoStorage:
    """Media duplication of a built repo and its shards' size after chunk-level dedup.

    Args:
        repo_dir: a repo folder written by ``hugvis build``.
        release_bytes: bytes of the release media it was built from
            (:func:`hug_vis_dataset.hub.builder.release_media_bytes`), if known.
        chunker: how files are cut for the dedup measure (default: Xet's 8/64/128 KiB);
            ``None`` skips the chunk-level measure.
    """
    repo = Path(repo_dir)
    digests = cell_digests(repo)
    usage = media_duplication(repo, digests)
    shards = [p for c in usage for p in _config_shards(repo, c)]
    return RepoStorage(
        configs=usage,
        unique_media_bytes=unique_media_bytes(digests),
        shards_dedup=dedup_size(shards, chunker) if chunker is not None else None,
        release_bytes=release_bytes,
        chunker=asdict(chunker) if chunker is not None else {},
    )

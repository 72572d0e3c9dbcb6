"""What a Hub build is configured with and what it reports: the data the builder and the card share.

:class:`BuildOptions` (the knobs that change the output's bytes), :class:`ShardEntry` (one
committed shard, as the manifest records it) and :class:`BuildReport` (rows, shards and left-out
clips of a build), with the fixed file names of a built repo. The builder fills them in
(:mod:`hug_vis_dataset.hub.builder`); the dataset card renders them (:mod:`hug_vis_dataset.hub.card`).

Example:
    >>> BuildOptions().alpha_codec, MANIFEST
    ('ffv1', 'manifest.json')
    >>> try:
    ...     BuildOptions(shard_bytes=0)
    ... except BuildOptionsError as err:
    ...     print(str(err).split(":")[0])
    shard_bytes, row_group_bytes and max_rows_per_group must be positive
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import HugvisError
from .alpha import ALPHA_CODECS, DEFAULT_ALPHA_CODEC
from .storage_info import MiB, RepoStorage

MANIFEST = "manifest.json"
CHECKSUMS = "checksums.sha256"
STATE_DIR = ".hugvis-build"
FORMAT_VERSION = 1
#: The Hub's dataset viewer refuses Parquet files with a row group over this many bytes (Parquet
#: ``total_byte_size``, i.e. uncompressed; about 286 MiB), so ``row_group_bytes`` may not exceed it.
VIEWER_ROW_GROUP_BYTES = 300_000_000


class BuildError(HugvisError, RuntimeError):
    """The repo cannot be built (invalid release, foreign repo folder, nothing to build)."""


@dataclass(frozen=True)
class BuildOptions:
    """Knobs that change the bytes of the output (all are recorded in the manifest).

    Attributes:
        shard_bytes: a shard is closed once it reaches this size (the Hub recommends < 1 GB
            per Parquet file; large media rows make shards overshoot by at most one row group).
        row_group_bytes: bytes limit of a row group (Parquet ``total_byte_size``): a row is put
            in a new group when it would take the group over this; a single row larger than it
            makes a group of its own. At most :data:`VIEWER_ROW_GROUP_BYTES`, so the Hub's
            viewer reads every group. Streaming readers fetch one row group at a time, so this
            bounds their memory too.
        max_rows_per_group: flush after this many rows even when they are small.
        alpha_codec: key of :data:`hug_vis_dataset.hub.alpha.ALPHA_CODECS`.
        content_defined_chunking: cut Parquet data pages at content-defined boundaries
            (pyarrow ``use_content_defined_chunking``). Off by default: media cells are single
            uncompressed values far larger than a Xet chunk, so the Hub's chunk-level dedup
            already finds media shared between configs, and this measured no gain
            (``scripts/measure_repo_dedup.py``, docs/PERFORMANCE.md).
    """

    shard_bytes: int = 500 * MiB
    row_group_bytes: int = 64 * MiB
    max_rows_per_group: int = 100
    alpha_codec: str = DEFAULT_ALPHA_CODEC
    content_defined_chunking: bool = False

    def __post_init__(self) -> None:
        if self.shard_bytes <= 0 or self.row_group_bytes <= 0 or self.max_rows_per_group <= 0:
            raise BuildOptionsError(f"shard_bytes, row_group_bytes and max_rows_per_group must be positive: {self}")
        if self.row_group_bytes > VIEWER_ROW_GROUP_BYTES:
            raise BuildOptionsError(f"row_group_bytes {self.row_group_bytes} is over the dataset viewer's row-group "
                                    f"limit ({VIEWER_ROW_GROUP_BYTES} bytes, {VIEWER_ROW_GROUP_BYTES / MiB:.0f} MiB); "
                                    f"pass a smaller --row-group-mb")
        if self.alpha_codec not in ALPHA_CODECS:
            raise BuildOptionsError(f"unknown alpha codec {self.alpha_codec!r}; expected one of "
                                    f"{', '.join(ALPHA_CODECS)}")


class BuildOptionsError(HugvisError, ValueError):
    """A build option is out of range (a size that is not positive, an unknown codec)."""

    exit_code = 2


@dataclass(frozen=True)
class ShardEntry:
    """One committed shard, as recorded in the manifest."""

    file: str  # relative to the repo root, POSIX separators
    sha256: str
    bytes: int
    rows: int
    row_groups: int
    first_clip: str
    last_clip: str
    alpha_bytes: int = 0  # total size of the embedded alpha blobs (configs with alpha)


@dataclass
class BuildReport:
    """What a build produced (rows and shards per config) and what it left out."""

    repo_dir: str
    clips: int
    rows: dict[str, int] = field(default_factory=dict)
    shards: dict[str, list[ShardEntry]] = field(default_factory=dict)
    excluded: dict[str, list[str]] = field(default_factory=dict)
    reused_shards: int = 0
    written_shards: int = 0
    release_bytes: int = 0
    repo_bytes: int = 0
    storage: "RepoStorage | None" = None  # media duplication and chunk-level dedup (hub/dedup.py)
    synthetic: bool = False  # built from a `hugvis synth` tree (metadata/synthetic.json)

    def to_text(self) -> str:
        lines = [f"repo: {self.repo_dir}", f"clips: {self.clips}"]
        for config, count in self.rows.items():
            shards = self.shards.get(config, [])
            size = sum(s.bytes for s in shards)
            lines.append(f"  {config}: {count} rows in {len(shards)} shard(s), {size / MiB:.1f} MiB")
        lines.append(f"shards written: {self.written_shards}, reused from an earlier run: {self.reused_shards}")
        lines.append(f"release media: {self.release_bytes / MiB:.1f} MiB, repo: {self.repo_bytes / MiB:.1f} MiB")
        if self.storage is not None:
            lines.append("storage (media repeated across configs, size after the Hub's chunk-level dedup):")
            lines.extend("  " + line for line in self.storage.to_text().splitlines())
        if self.excluded:
            lines.append(f"left out {len(self.excluded)} clip(s) that failed validation:")
            for clip, messages in self.excluded.items():
                lines.append(f"  {clip or '(release)'}: " + "; ".join(messages))
        return "\n".join(lines)

"""Writing a config's Parquet shards: size-bounded, atomic, each recorded with its sha256.

A shard is written to a ``.tmp`` name in the build's staging folder (a transient folder of the repo),
closed, fsynced and put in place through the repo's output guard (:meth:`hug_vis_dataset.outputs.Output.place`,
which replaces only a shard the toolkit wrote); only then is it handed to the caller's ``commit`` (which records it in the resume state). A row group never grows past
``row_group_bytes`` (a row that would take it over starts the next group; the bound is checked
against the written footer, and no group may pass the dataset viewer's limit) and shards roll over
at ``shard_bytes`` (:class:`BuildOptions`), so memory holds at most one row group. Media leaves
are written uncompressed, without dictionary or statistics, so a medium's bytes appear unchanged
in every config that embeds it and the Hub's chunk-level dedup stores them once.

Example:
    >>> shard_name("matting", 3)
    'data/matting/test-00003.parquet'
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..hashing import sha256_file
from ..outputs import discard
from .build_info import MiB, VIEWER_ROW_GROUP_BYTES, BuildError, BuildOptions, ShardEntry
from .rows import row_bytes
from .schema import features, media_columns

if TYPE_CHECKING:
    from ..outputs import Output

# What the builder writes inside data/<config>/: shards.
_OWN_SHARD = re.compile(r"^test-\d{5}\.parquet$", re.ASCII)


def shard_name(config: str, index: int) -> str:
    """Repo-relative path of shard ``index`` of a config (matches ``data/<config>/test-*.parquet``)."""
    return f"data/{config}/test-{index:05d}.parquet"


class ShardWriter:
    """Streams rows into size-bounded Parquet shards; calls ``commit`` for each finished shard."""

    def __init__(self, output: "Output", staging: Path, config: str, options: BuildOptions, start_index: int,
                 commit: Callable[[ShardEntry], None]):
        self.output, self.staging, self.config, self.options = output, Path(staging), config, options
        self.repo = output.root
        self.index = start_index
        self.commit = commit
        self.features = features(config)
        self.schema = self.features.arrow_schema
        self.media = media_columns(config)
        self.rows: list[dict] = []
        self.buffered = 0
        self.writer = None
        self.tmp: "Path | None" = None
        self.shard_rows = 0
        self.shard_groups = 0
        self.first = self.last = ""
        self.alpha_bytes = 0

    def _open(self) -> None:
        import pyarrow.parquet as pq

        self.tmp = self.staging / f"{self.config}-{self.index:05d}.parquet.tmp"
        media_leaves = [f"{c}.bytes" for c in self.media]
        plain = [name for name in self.schema.names if name not in self.media]
        self.writer = pq.ParquetWriter(
            str(self.tmp),
            self.schema,
            # Media bytes are already compressed: compressing them again costs CPU for nothing.
            compression={**{c: "zstd" for c in plain}, **{leaf: "none" for leaf in media_leaves},
                         **{f"{c}.path": "zstd" for c in self.media}},
            use_dictionary=plain,
            write_statistics=plain,
            use_content_defined_chunking=self.options.content_defined_chunking,
        )
        self.shard_rows = self.shard_groups = self.alpha_bytes = 0

    def add(self, row: dict) -> None:
        size = row_bytes(row)
        if size > VIEWER_ROW_GROUP_BYTES:
            raise BuildError(f"clip {row['clip_id']}: its {self.config} row holds about {size / MiB:.0f} MiB, over the "
                             f"dataset viewer's row-group limit ({VIEWER_ROW_GROUP_BYTES / MiB:.0f} MiB); a row cannot "
                             f"be split, so re-encode the clip's media smaller or leave the clip out")
        if self.rows and self.buffered + size > self.options.row_group_bytes:
            self._flush()
        self.rows.append(row)
        self.buffered += size
        if self.buffered >= self.options.row_group_bytes or len(self.rows) >= self.options.max_rows_per_group:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if not self.rows:
            return
        if self.writer is None:
            self._open()
            self.first = self.rows[0]["clip_id"]
        table = pa.Table.from_pylist(self.rows, schema=self.schema)
        self.writer.write_table(table, row_group_size=len(self.rows))
        self.shard_rows += len(self.rows)
        self.shard_groups += 1
        self.last = self.rows[-1]["clip_id"]
        if "alpha_matte" in self.schema.names:
            self.alpha_bytes += sum(len(r["alpha_matte"]["bytes"]) for r in self.rows)
        self.rows, self.buffered = [], 0
        if self.tmp.stat().st_size >= self.options.shard_bytes:
            self._finish()

    def _finish(self) -> None:
        self.writer.close()
        self.writer = None
        check_row_groups(self.tmp, self.options.row_group_bytes)
        with open(self.tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        entry = ShardEntry(
            file=shard_name(self.config, self.index),
            sha256=sha256_file(self.tmp),
            bytes=self.tmp.stat().st_size,
            rows=self.shard_rows,
            row_groups=self.shard_groups,
            first_clip=self.first,
            last_clip=self.last,
            alpha_bytes=self.alpha_bytes,
        )
        self.output.place(self.tmp, entry.file)
        self.tmp = None
        self.index += 1
        self.commit(entry)

    def close(self) -> None:
        self._flush()
        if self.writer is not None:
            self._finish()

    def abort(self) -> None:
        """Drop the shard being written (a stop or an error): close it and delete its ``.tmp``."""
        writer, tmp = self.writer, self.tmp
        self.writer, self.tmp, self.rows, self.buffered = None, None, [], 0
        if writer is not None:
            try:
                writer.close()
            except Exception:  # noqa: BLE001 - the file is deleted next; its footer does not matter
                pass
        if tmp is not None:
            discard(tmp)


def check_row_groups(shard: Path, limit: int) -> None:
    """Check every row group of a written shard against ``limit`` (a group of one row may pass it)
    and against :data:`VIEWER_ROW_GROUP_BYTES`, from the footer's ``total_byte_size``."""
    import pyarrow.parquet as pq

    meta = pq.read_metadata(shard)
    for index in range(meta.num_row_groups):
        group = meta.row_group(index)
        bound = min(limit, VIEWER_ROW_GROUP_BYTES) if group.num_rows > 1 else VIEWER_ROW_GROUP_BYTES
        if group.total_byte_size > bound:  # pragma: no cover - guards the row_bytes bound
            raise BuildError(f"{shard}: row group {index} holds {group.total_byte_size} bytes, over the limit {bound}")


def check_no_foreign_files(folder: Path) -> None:
    """Refuse a config folder holding anything but our shards (and their temporaries)."""
    foreign = sorted(p.name for p in folder.iterdir() if not (p.is_file() and _OWN_SHARD.fullmatch(p.name)))
    if foreign:
        raise BuildError(f"{folder} holds {', '.join(foreign[:5])}{' ...' if len(foreign) > 5 else ''}, not "
                         f"written by hugvis build; move it out of the repo folder and rerun")

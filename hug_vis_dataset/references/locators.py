"""Row locators: a reference that points at one media cell of a built repo's Parquet shard.

A reference string carried by a clip job is either a file path (a release tree) or a *row
locator*: ``parquet-row:`` followed by JSON naming the shard, the row in it, the column and the
clip id. :func:`read_cell_bytes` reads one such cell, one row at a time from its row group only,
and checks that the row still holds the clip, so a rebuilt shard fails loudly instead of scoring
the wrong clip.

Example:
    >>> loc = RowLocator("/r/data/matting/test-00000.parquet", 3, "alpha_matte", "actor_0001_sad_action_01_script_001")
    >>> ref = loc.to_ref()
    >>> ref.startswith(LOCATOR_PREFIX), is_row_locator(ref), is_row_locator("/r/clip/alpha")
    (True, True, False)
    >>> RowLocator.parse(ref) == loc
    True
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import HugvisError

LOCATOR_PREFIX = "parquet-row:"
#: Read buffer of the Parquet reader: pages stream through it instead of a whole column chunk.
READ_BUFFER_BYTES = 1 << 20


class DatasetSourceError(HugvisError, ValueError):
    """``--dataset`` names no usable reference source (not a release, not a repo, Hub unreachable)."""


@dataclass(frozen=True)
class RowLocator:
    """One cell of a Parquet shard: the media of one clip in a built repo.

    Attributes:
        shard: absolute path of the Parquet file.
        row: row index within the file (0-based, across row groups).
        column: the media column (a struct of ``bytes`` and ``path``).
        clip_id: the clip the row must hold; checked on reading, so a rebuilt shard with other
            row positions fails loudly instead of scoring the wrong clip.
    """

    shard: str
    row: int
    column: str
    clip_id: str

    def to_ref(self) -> str:
        """The reference string carried by a clip job."""
        return LOCATOR_PREFIX + json.dumps([self.shard, self.row, self.column, self.clip_id])

    @classmethod
    def parse(cls, ref: str) -> "RowLocator":
        """Inverse of :meth:`to_ref`; ValueError for anything else."""
        if not is_row_locator(ref):
            raise ValueError(f"not a row locator: {ref!r}")
        shard, row, column, clip_id = json.loads(ref[len(LOCATOR_PREFIX):])
        return cls(str(shard), int(row), str(column), str(clip_id))


def is_row_locator(ref: "str | Path") -> bool:
    """True when ``ref`` points into a Parquet shard rather than at a file."""
    return isinstance(ref, str) and ref.startswith(LOCATOR_PREFIX)


def open_parquet(path: "str | Path", config: "str | None" = None):
    """A ``pyarrow.parquet.ParquetFile`` that streams pages instead of loading whole column chunks.

    Its footer is checked first (:func:`hug_vis_dataset.hub.loading.open_shard`) against the schema
    of ``config`` (default: the config of its folder), so a shard with a column
    missing, extra or of another type is one error naming shard, column and fix, before any row is read.

    Raises:
        InputFileError: truncated or not Parquet, or not a shard of its config.
    """
    from ..hub.loading import open_shard

    # pre_buffer=False + a read buffer: pages stream instead of whole column chunks being loaded.
    return open_shard(path, config, buffer_size=READ_BUFFER_BYTES, pre_buffer=False)


def read_cell_bytes(locator: RowLocator) -> bytes:
    """The ``bytes`` of one media cell, reading one row at a time from its row group only.

    Raises:
        DatasetSourceError: the shard is missing, the row is out of range, the column is absent,
            the row holds another clip, or the cell is empty.
        InputFileError: the shard is damaged or not of its config's schema (:func:`open_parquet`).
    """
    if not Path(locator.shard).is_file():
        raise DatasetSourceError(f"shard {locator.shard} does not exist (the repo moved or changed)")
    handle = open_parquet(locator.shard)
    if locator.column not in handle.schema_arrow.names:
        raise DatasetSourceError(f"{Path(locator.shard).name} has no column {locator.column!r}")
    start = 0
    for group in range(handle.num_row_groups):
        rows = handle.metadata.row_group(group).num_rows
        if locator.row < start + rows:
            offset = locator.row - start
            batches = handle.iter_batches(batch_size=1, row_groups=[group], columns=["clip_id", locator.column])
            for index, batch in enumerate(batches):
                if index < offset:
                    continue
                clip = batch.column("clip_id")[0].as_py()
                if clip != locator.clip_id:
                    raise DatasetSourceError(f"row {locator.row} of {locator.shard} holds {clip}, expected "
                                             f"{locator.clip_id} (the repo changed since the run started)")
                cell = batch.column(locator.column)[0].as_py()
                if not cell or cell.get("bytes") is None:
                    raise DatasetSourceError(f"{locator.column} of {locator.clip_id} is empty in {locator.shard}")
                return cell["bytes"]
        start += rows
    raise DatasetSourceError(f"row {locator.row} is beyond the {start} rows of {locator.shard}")

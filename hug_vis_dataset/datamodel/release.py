"""Read a HUG-VIS release tree: ``metadata/clips.csv`` plus the media it points to.

Example:
    >>> import tempfile
    >>> from hug_vis_dataset.synth import example_release
    >>> root = example_release(tempfile.mkdtemp(), emotions=["Happy"])
    >>> release = Release(root)
    >>> [r.clip_id for r in release]
    ['actor_0001_happy_action_01_script_001']
    >>> release.record("actor_0001_happy_action_01_script_001").fps
    30.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import HugvisError
from .grid import ClipId, ClipIdError
from .layout import CSV_COLUMNS, ReleaseLayout, layout_for
from ..readers import InputFileError
from ..readers.csv_files import CsvTable, read_csv_table


@dataclass(frozen=True)
class ClipRecord:
    """One row of ``metadata/clips.csv`` with absolute media paths."""

    cid: ClipId
    clip_id: str
    transcript: str
    asr_transcript: str
    audio_path: Path
    video_path: Path
    alpha_matte_path: Path
    rgba_foreground_path: "Path | None"
    duration: float
    fps: float
    sample_rate: int
    width: int
    height: int
    row_number: int

    @property
    def resolution(self) -> str:
        return f"{self.width}x{self.height}"


class ReleaseError(HugvisError, ValueError):
    """The metadata CSV cannot be read at all (missing file or columns, not UTF-8)."""


def parse_resolution(text: str) -> tuple[int, int]:
    """``"1920x1080"`` -> (1920, 1080)."""
    try:
        w, h = str(text).lower().split("x")
        return int(w), int(h)
    except ValueError:
        raise ValueError(f"bad resolution {text!r}, expected WIDTHxHEIGHT") from None


class MetadataFileError(InputFileError, ReleaseError):
    """``metadata/clips.csv`` does not hold a CSV table of :data:`CSV_COLUMNS` (names file, line, fix).

    A problem of the whole file reads as a sentence: ``clips.csv is empty; ...``.
    """

    def __init__(self, path: "str | Path", where: str, problem: str, fix: str):
        super().__init__(path, where, problem, fix)
        if not where and problem.split(" ", 1)[0] in ("is", "does", "has", "lacks", "holds"):
            self.args = (f"{self.path} {problem}; {fix}" if fix else f"{self.path} {problem}",)


def read_metadata_table(path: "str | Path") -> CsvTable:
    """The CSV rows with the line each starts on (header checked); row order as in the file.

    The file must be UTF-8 (a byte-order mark, as Excel writes, is accepted; CRLF too) and
    comma-separated; it is read by :func:`hug_vis_dataset.readers.csv_files.read_csv_table`, so a
    duplicated column, a row with a wrong number of fields, an open quote or a last line cut short
    is one error naming the line. Columns after :data:`CSV_COLUMNS` are kept.

    Raises:
        MetadataFileError: (a :class:`ReleaseError`) missing, not UTF-8 or empty file, other
            separator, missing or duplicated columns, a malformed row.
    """
    path = Path(path)
    if not path.is_file():
        raise MetadataFileError(path, "", "metadata CSV does not exist", "pass the release folder that holds it")
    try:
        return read_csv_table(path, CSV_COLUMNS, extra="keep")
    except InputFileError as err:
        raise MetadataFileError(err.path, err.where, err.problem, err.fix) from None


def read_metadata_rows(path: "str | Path") -> list[dict[str, str]]:
    """The raw CSV rows of :func:`read_metadata_table` (header checked); row order as in the file."""
    return read_metadata_table(path).rows


def _finite(text: str, name: str, low: float, strict: bool = False) -> float:
    """``float(text)``, refusing inf/nan ("1e999" parses as inf) and values below ``low`` (or at it)."""
    value = float(text)
    if not math.isfinite(value) or value < low or (strict and value == low):
        raise ValueError(f"{name} {text!r} is not a finite number {'>' if strict else '>='} {low:g}")
    return value


def record_from_row(root: Path, row: dict[str, str], row_number: int) -> ClipRecord:
    """Turn a CSV row into a :class:`ClipRecord`; raises ValueError/ClipIdError on bad fields."""
    cid = ClipId.parse(row["clip_id"])
    width, height = parse_resolution(row["resolution"])
    rgba = row.get("rgba_foreground_path") or ""
    return ClipRecord(
        cid=cid,
        clip_id=row["clip_id"],
        transcript=row["transcript"],
        asr_transcript=row["asr_transcript"],
        audio_path=root / row["audio_path"],
        video_path=root / row["video_path"],
        alpha_matte_path=root / row["alpha_matte_path"],
        rgba_foreground_path=(root / rgba) if rgba else None,
        duration=_finite(row["duration"], "duration", 0.0),
        fps=_finite(row["fps"], "fps", 0.0, strict=True),
        sample_rate=int(row["sample_rate"]),
        width=width,
        height=height,
        row_number=row_number,
    )


class Release:
    """A release tree on disk, indexed by clip id.

    Rows that cannot be parsed are kept in :attr:`row_errors` (the validator reports them)
    rather than dropped silently; duplicated ids keep the first row and are listed in
    :attr:`duplicates`.
    """

    def __init__(self, root: "str | Path", layout: "ReleaseLayout | None" = None):
        self.root = Path(root)
        self.layout = layout_for(self.root, layout)
        table = read_metadata_table(self.root / self.layout.metadata_csv)
        self.rows = table.rows
        self.row_lines = table.lines  # the CSV line each row starts on (a quoted value may span lines)
        self.records: dict[ClipId, ClipRecord] = {}
        self.row_errors: list[tuple[int, str, str]] = []
        self.duplicates: list[tuple[int, str]] = []
        for number, row in table.records():
            try:
                record = record_from_row(self.root, row, number)
            except (ValueError, ClipIdError, KeyError) as err:
                self.row_errors.append((number, row.get("clip_id", ""), str(err)))
                continue
            if record.cid in self.records:
                self.duplicates.append((number, record.clip_id))
                continue
            self.records[record.cid] = record

    def __iter__(self) -> Iterator[ClipRecord]:
        """Records in grid order (actor, emotion, action, script)."""
        return iter(sorted(self.records.values(), key=lambda r: r.cid))

    def __len__(self) -> int:
        return len(self.records)

    @property
    def synthetic(self) -> bool:
        """Written by ``hugvis synth`` (its scores are never ranked with the paper's)."""
        from .layout import SYNTHETIC_MARKER

        return (self.root / SYNTHETIC_MARKER).is_file()

    def record(self, clip: "ClipId | str") -> ClipRecord:
        cid = clip if isinstance(clip, ClipId) else ClipId.parse(clip)
        try:
            return self.records[cid]
        except KeyError:
            raise KeyError(f"clip {cid} is not in the release at {self.root}") from None

    def clip_ids(self) -> list[ClipId]:
        return sorted(self.records)

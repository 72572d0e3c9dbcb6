"""Read a HUG-VIS release tree: ``metadata/clips.csv`` plus the media it points to.

Example:
    >>> import tempfile
    >>> from hug_vis_dataset.synth import synthesize
    >>> root = tempfile.mkdtemp()
    >>> _ = synthesize(root, actors=1, scripts=1, seconds=0.2, size=(64, 36), emotions=["Happy"], actions=1,
    ...                systems=False)
    >>> release = Release(root)
    >>> [r.clip_id for r in release]
    ['actor_0001_happy_action_01_script_001']
    >>> release.record("actor_0001_happy_action_01_script_001").fps
    30.0
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .errors import HugvisError
from .grid import ClipId, ClipIdError
from .layout import CSV_COLUMNS, ReleaseLayout, layout_for


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


def read_metadata_rows(path: "str | Path") -> list[dict[str, str]]:
    """The raw CSV rows (header checked); row order as in the file.

    The file must be UTF-8 (a byte-order mark, as Excel writes, is accepted) and comma-separated.

    Raises:
        ReleaseError: missing file, empty file, other separator, missing columns.
        hug_vis_dataset.textio.TextEncodingError: not UTF-8 (names the line).
    """
    from .textio import csv_header_problem, read_text

    path = Path(path)
    if not path.is_file():
        raise ReleaseError(f"metadata CSV {path} does not exist; pass the release folder that holds it")
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    header = reader.fieldnames or []
    if not header:
        raise ReleaseError(f"{path} is empty; it needs a header line with {', '.join(CSV_COLUMNS)}")
    problem = csv_header_problem(header, CSV_COLUMNS)
    if problem:
        raise ReleaseError(f"{path} {problem}; its header must name {', '.join(CSV_COLUMNS)}")
    return list(reader)


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
        duration=float(row["duration"]),
        fps=float(row["fps"]),
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
        self.rows = read_metadata_rows(self.root / self.layout.metadata_csv)
        self.records: dict[ClipId, ClipRecord] = {}
        self.row_errors: list[tuple[int, str, str]] = []
        self.duplicates: list[tuple[int, str]] = []
        for number, row in enumerate(self.rows, start=2):  # line 1 is the header
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

"""Strict CSV tables: the one way the toolkit reads a CSV a user hands it.

:func:`read_csv_table` reads a comma-separated, UTF-8 file (a byte-order mark and CRLF line ends
are accepted and give the same table) against a declared header: required ``columns``,
``optional`` ones, and what to do with any other (``extra``). Every way a file can lie about its
shape is one :class:`~hug_vis_dataset.readers.InputFileError` naming the file, the line (and the
column) and the fix: an empty file, a duplicated or missing column, a ``;``/tab separated file, a
row with too many or too few fields, a quote left open, a last line cut short. Rows keep the line
they start on, so a caller names ``file:line`` for a bad value.

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "ratings.csv")
    >>> _ = open(path, "w").write("rater,score\\nr1,4\\n\\nr2,5\\n")
    >>> table = read_csv_table(path, columns=("rater", "score"))
    >>> table.rows, table.lines
    ([{'rater': 'r1', 'score': '4'}, {'rater': 'r2', 'score': '5'}], [2, 4])
    >>> _ = open(path, "w").write("rater,score\\nr1,4,extra\\n")
    >>> try:
    ...     read_csv_table(path, columns=("rater", "score"))
    ... except InputFileError as err:
    ...     print(err.where, "|", err.problem)
    line 2 | has 3 fields but the header names 2
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from .textio import TextEncodingError, csv_header_problem, iter_text_lines
from .base import InputFileError
from .json_files import encoding_error

EXTRA_POLICIES = ("error", "ignore", "keep")


@dataclass
class CsvTable:
    """A CSV file's header and rows, every value a string, each row with the line it starts on.

    Attributes:
        path: the file read.
        header: the column names kept in :attr:`rows` (required, then optional present, then kept
            extras, in file order).
        rows: one ``{column: text}`` per data row (blank lines skipped).
        lines: the line each row starts on (the header is line 1).
    """

    path: Path
    header: list[str]
    rows: list[dict[str, str]] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.rows)

    def records(self) -> Iterator[tuple[int, dict[str, str]]]:
        """``(line, row)`` pairs in file order."""
        return zip(self.lines, self.rows)

    def frame(self, line_column: "str | None" = None):
        """The rows as a pandas DataFrame of strings (columns :attr:`header`), optionally with the lines."""
        import pandas as pd

        frame = pd.DataFrame(self.rows, columns=self.header, dtype=str)
        if not self.rows:
            frame = pd.DataFrame({c: pd.Series([], dtype=str) for c in self.header})
        if line_column:
            frame[line_column] = self.lines
        return frame


def _lines(path: Path, last: list) -> Iterator[str]:
    """Decoded lines for :mod:`csv`, remembering the last one (to tell a file cut short)."""
    for _, line in iter_text_lines(path):
        last[0] = line
        yield line


def _read_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    last = [""]
    reader = csv.reader(_lines(path, last), strict=True)
    start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as err:
            if "unexpected end of data" in str(err):
                raise InputFileError(path, f"line {start}", "has a quoted value that is never closed",
                                     "close the quote (or was the file cut short?)") from None
            raise InputFileError(path, f"line {reader.line_num}", f"is not CSV ({err})",
                                 'quote a value holding commas, quotes or line breaks as "..."') from None
        yield start, row
        start = reader.line_num + 1
    if last[0] and not last[0].endswith("\n") and last[0].strip():
        raise InputFileError(path, f"line {reader.line_num}", "has no line end: the file may be cut short",
                             "if the file is complete, end its last line with a line break")


def read_csv_table(path: "str | Path", columns: Sequence[str] = (), *, optional: Sequence[str] = (),
                   extra: str = "keep", what: str = "") -> CsvTable:
    """Read ``path`` as a CSV whose header names every one of ``columns``.

    Args:
        path: the file.
        columns: required column names (header names are compared with surrounding spaces dropped).
        optional: columns that may be absent (then absent from the rows too).
        extra: other columns: ``"error"`` refuses them, ``"ignore"`` drops them from the rows,
            ``"keep"`` keeps them.
        what: what the file is, for the messages of a missing file (``"ratings CSV"``).

    Returns:
        The :class:`CsvTable` (a header-only file gives no rows: the caller says whether that is fine).

    Raises:
        InputFileError: missing, not UTF-8, empty, duplicated/missing/unexpected column, other
            separator, wrong number of fields, an open quote, a last line without its line end.
    """
    if extra not in EXTRA_POLICIES:
        raise ValueError(f"extra={extra!r}: choose one of {EXTRA_POLICIES}")
    path = Path(path)
    wanted = list(columns)
    header_text = ",".join(wanted)
    if not path.exists():
        raise InputFileError(path, "", f"{what + ' ' if what else ''}does not exist", "pass the file's right path")
    if path.is_dir():
        raise InputFileError(path, "", "is a folder, not a CSV file", "pass the CSV file inside it")
    try:
        rows = _read_rows(path)
        first = next(rows, None)
        while first is not None and _blank(first[1]):
            first = next(rows, None)
        if first is None:
            raise InputFileError(path, "", "is empty", f"it needs a header line naming {header_text}"
                                 if wanted else "it needs a header line")
        header_line, raw_header = first
        header = [name.strip() for name in raw_header]
        _check_header(path, header_line, header, wanted, list(optional), extra)
        keep = [i for i, name in enumerate(header)
                if name and (name in wanted or name in optional or extra == "keep")]
        table = CsvTable(path, [header[i] for i in keep])
        for line, row in rows:
            if _blank(row):
                continue
            if len(row) != len(header):
                raise InputFileError(path, f"line {line}",
                                     f"has {len(row)} field{'s' if len(row) != 1 else ''} but the header names "
                                     f"{len(header)}",
                                     'quote a value holding a comma as "...", or check that the line was '
                                     "not cut or joined")
            table.rows.append({header[i]: row[i] for i in keep})
            table.lines.append(line)
    except TextEncodingError as err:
        raise encoding_error(path, err) from None
    return table


def _blank(row: "list[str]") -> bool:
    return not row or (len(row) == 1 and not row[0].strip())


def _check_header(path: Path, line: int, header: "list[str]", wanted: "list[str]", optional: "list[str]",
                  extra: str) -> None:
    where = f"line {line}"
    need = ", ".join(wanted)
    seen: set[str] = set()
    for name in header:
        if name and name in seen:
            raise InputFileError(path, f"{where}, column {name!r}", "names a column twice",
                                 f"keep one {name!r} column")
        seen.add(name)
    problem = csv_header_problem(header, wanted)
    if problem:  # another separator is the whole file's, missing columns are the header line's
        raise InputFileError(path, "" if problem.startswith("is separated") else where, problem,
                             f"its header must name {need}")
    if extra == "error":
        unknown = [name for name in header if name not in wanted and name not in optional]
        if unknown:
            allowed = ", ".join(wanted + optional)
            raise InputFileError(path, f"{where}, column {unknown[0]!r}", "is not a column of this file",
                                 f"use only {allowed} (a misspelt name?)")

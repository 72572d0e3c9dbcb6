"""Strict text reading: UTF-8 (a byte-order mark is accepted and dropped), anything else is an
error naming the file, the line and the encoding to use.

Every text file a user hands the toolkit (``metadata/clips.csv``, ``metadata/grid.json``,
``predictions.jsonl``, a ratings CSV) goes through these functions, so a GBK or Latin-1 file
never turns into a traceback nor into silently mangled clip ids.

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "clips.csv")
    >>> _ = open(path, "wb").write("\\ufeffclip_id\\nactor_0001\\n".encode("utf-8"))
    >>> read_text(path).splitlines()
    ['clip_id', 'actor_0001']
    >>> _ = open(path, "wb").write("clip_id\\n快乐\\n".encode("gbk"))
    >>> try:
    ...     read_text(path)
    ... except TextEncodingError as err:
    ...     print(str(err).split(": ", 1)[1])
    line 2 is not UTF-8 (byte 0xbf at column 1); re-save the file as UTF-8 (with or without BOM)
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from pathlib import Path
from typing import Iterator

from ..errors import HugvisError, InputFileError
from .regular_files import MAX_LINE_BYTES, open_regular

BOM = codecs.BOM_UTF8


class TextEncodingError(HugvisError, ValueError):
    """A text file is not UTF-8; the message names the file, the line and the fix."""


def _decode_line(raw: bytes, path: Path, lineno: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise TextEncodingError(
            f"{path}: line {lineno} is not UTF-8 (byte 0x{raw[err.start]:02x} at column {err.start + 1}); "
            f"re-save the file as UTF-8 (with or without BOM)") from None


def iter_text_lines(path: "str | Path") -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line, decoded strictly as UTF-8, streamed.

    Line numbers start at 1; the newline is kept (as :meth:`io.TextIOBase.readline` does); a
    leading byte-order mark is dropped.

    Raises:
        TextEncodingError: a line is not valid UTF-8.
        InputFileError: not a regular file (a FIFO, a device), larger than a text file can be, or a line
            longer than :data:`~hug_vis_dataset.readers.regular_files.MAX_LINE_BYTES`.
        FileNotFoundError: the file does not exist.
    """
    path = Path(path)
    # A regular file within the text limit (regular_files.py): a FIFO or /dev/zero would never end.
    with open_regular(path, "text file") as handle:
        lineno = 0
        while raw := handle.readline(MAX_LINE_BYTES + 1):
            lineno += 1
            if len(raw) > MAX_LINE_BYTES:  # no line of a toolkit file is that long: do not hold more of it
                raise InputFileError(path, f"line {lineno}", f"is longer than {MAX_LINE_BYTES // 1024**2} MiB",
                                     "check that this is the file you meant (a text file, with line ends)")
            if lineno == 1 and raw.startswith(BOM):
                raw = raw[len(BOM):]
            yield lineno, _decode_line(raw, path, lineno)


def read_text_lines(path: "str | Path") -> Iterator[tuple[int, str]]:
    """Alias of :func:`iter_text_lines` (the name the scorers call)."""
    return iter_text_lines(path)


def read_text(path: "str | Path") -> str:
    """The whole file as text (small metadata files), decoded strictly as UTF-8, BOM dropped.

    Universal newlines are *not* applied, so ``csv`` sees the file's own line endings.
    """
    return "".join(line for _, line in iter_text_lines(path))


# Characters a typesetter, a phone keyboard or a language model writes for an apostrophe or a hyphen.
_APOSTROPHES = re.compile("[\u2018\u2019\u201a\u201b\u02bc\u02b9\u02bb\u02bd\u2032\u2035\u00b4\u0060\ua78c]")
_DASHES = re.compile("[\u2010-\u2015\u2212\ufe58\ufe63]")
# Characters with no form of their own: zero-width spaces and joiners, soft hyphen, word joiner, BOM, bidi controls.
_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def parse_form(text: str) -> str:
    """The one form of free text a parser reads (an emotion answer): compatibility characters unified (NFKC:
    full-width letters, ligatures), every apostrophe-like character made ``'`` and every dash ``-``,
    invisible characters removed. Identifiers (clip ids, names) are not folded: they are refused.

    Example:
        >>> parse_form("She isn\u2019t \uff28appy \u2014 not at\u200b all")
        "She isn't Happy - not at all"
    """
    def fold(part: str) -> str:
        return _INVISIBLE.sub("", _DASHES.sub("-", _APOSTROPHES.sub("'", part)))

    # Before NFKC too: it spells an acute accent as a space and a combining mark, which no longer reads as one.
    return fold(unicodedata.normalize("NFKC", fold(str(text))))


def csv_header_problem(header: "list[str]", required: "tuple[str, ...] | list[str]") -> "str | None":
    """Why a CSV header cannot be read as ``required`` columns (``None`` when it can).

    Names the usual cause of a one-column header: a file separated by ``;`` or tabs.

    Example:
        >>> csv_header_problem(["a;b"], ("a", "b"))
        "is separated by ';'; save it comma-separated"
        >>> csv_header_problem(["a"], ("a", "b"))
        "lacks columns ['b']"
    """
    missing = [c for c in required if c not in header]
    if not missing:
        return None
    if len(header) == 1 and (";" in header[0] or "\t" in header[0]):
        return f"is separated by {repr(';') if ';' in header[0] else 'tabs'}; save it comma-separated"
    return f"lacks columns {missing}"

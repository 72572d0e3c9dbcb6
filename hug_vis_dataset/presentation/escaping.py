"""The one escaping rule for text that comes from stored or uploaded data.

Model and rater names, notes carrying a stored reason, error texts, member names of an uploaded
zip: none of it is ours, so none of it may become markup where it is shown. Every door that shows
such text passes it through one of these functions:

* :func:`html_text` for HTML (the Space's tables, notes rendered as HTML): ``& < > " '`` become
  entities, so no tag, attribute or ``javascript:`` link can be formed.
* :func:`markdown_text` for Markdown (the CLI's tables, the report, Markdown shown in the Space,
  cards): a line break becomes a space (a newline would split a table row or start a block), and
  every character that can open Markdown or HTML syntax (backslash, backtick, ``* _ [ ] < > | # !
  & ~``) is backslash-escaped, so the text renders as itself. An underscore between two letters
  or digits is left alone: CommonMark never reads it as emphasis, and ``matte_good`` stays
  readable in a terminal.
* :func:`markdown_code_text`: as :func:`markdown_text`, keeping a stored reason's command in backticks as code.
* :func:`terminal_markdown`: Markdown a command prints, its escapes dropped for a terminal (a table keeps its bars).
* :func:`one_line` for plain text shown on one line (log lines, one-line errors).
* :func:`terminal_text` for everything a command writes to a terminal (``hugvis``'s ``main`` puts every
  write to stdout and stderr through it, :func:`safe_output`): control characters (ESC, C1, a stray CR)
  and bidirectional controls (a right-to-left override reverses the rest of the line) become visible
  escapes (``\\u202e``), and a stream that cannot encode a character (``PYTHONIOENCODING=ascii``, some
  CI and cron set-ups) gets its ``\\uXXXX`` escape instead of a UnicodeEncodeError.

Bidirectional controls are shown as escapes by every function here: they are never part of a name, only
of a trick played with one.

Example:
    >>> html_text('<script>alert("x")</script>')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'
    >>> markdown_text("a|b\\n| fake | row |")
    'a\\\\|b \\\\| fake \\\\| row \\\\|'
    >>> markdown_text("matte_good [x](javascript:alert(1)) `code`")
    'matte_good \\\\[x\\\\](javascript:alert(1)) \\\\`code\\\\`'
"""

from __future__ import annotations

import contextlib
import html
import re
import sys
from typing import Iterator, TextIO

# Every line break a renderer may honour: CR, LF, VT, FF, NEL, LS, PS.
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\x0b\x0c\x85\u2028\u2029]")
# Other control characters are dropped: they have no printed form and can move a terminal's cursor.
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
# Bidirectional formatting controls (ALM, LRM, RLM, LRE..RLO, LRI..PDI): they reorder what follows them.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# What a terminal must not be sent raw: C0 controls but tab and line feed, DEL, C1 controls, bidi controls,
# and a carriage return that is not a progress bar's redraw (first in a write) nor a CRLF line end.
_TERMINAL_UNSAFE = re.compile("(?!^)\r(?!\n)|[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f"
                              "\u202a-\u202e\u2066-\u2069]")
_MARKDOWN_SPECIAL = re.compile(r"[\\`*\[\]<>|#!&~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def _escape(match: "re.Match") -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def one_line(text: object) -> str:
    """``text`` as one line of plain text: line breaks become spaces, control characters go, bidirectional
    controls are shown as escapes.

    Example:
        >>> one_line("first\\r\\nsecond\\x1b[2J")
        'first second[2J'
        >>> one_line("run_\\u202egnp.exe")
        'run_\\\\u202egnp.exe'
    """
    return _BIDI.sub(_escape, _CONTROLS.sub("", _LINE_BREAKS.sub(" ", "" if text is None else str(text))))


def terminal_text(text: object) -> str:
    """``text`` safe to write to a terminal: line feeds and tabs kept, every other control character and
    every bidirectional control shown as its escape (``\\x1b``, ``\\u202e``).

    Example:
        >>> terminal_text("results/\\u202eevil\\x1b[2J\\nnext line")
        'results/\\\\u202eevil\\\\x1b[2J\\nnext line'
        >>> terminal_text("\\rsynth: 50%"), terminal_text("a\\rb")   # a progress bar's redraw; a stray CR
        ('\\rsynth: 50%', 'a\\\\x0db')
    """
    return _TERMINAL_UNSAFE.sub(_escape, "" if text is None else str(text))


class SafeStream:
    """A text stream whose writes go through :func:`terminal_text` and never fail to encode: a character
    the stream's encoding lacks is written as its ``\\uXXXX`` escape. Everything else is the stream's own."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        safe = terminal_text(text)
        encoding = getattr(self._stream, "encoding", None) or "utf-8"
        try:
            safe.encode(encoding)
        except UnicodeEncodeError:
            safe = safe.encode(encoding, "backslashreplace").decode(encoding)
        except LookupError:  # an encoding Python does not know: ASCII is safe on every terminal
            safe = safe.encode("ascii", "backslashreplace").decode("ascii")
        self._stream.write(safe)
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextlib.contextmanager
def safe_output() -> Iterator[None]:
    """Inside the block every write to ``sys.stdout`` and ``sys.stderr`` goes through :class:`SafeStream`
    (``hugvis``'s ``main`` runs every command in it); the streams are put back after.

    Example:
        >>> import io
        >>> real = sys.stdout
        >>> sys.stdout = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
        >>> with safe_output():
        ...     print("caf\\u00e9 \\u202e")
        >>> _ = sys.stdout.seek(0); written = sys.stdout.buffer.read(); sys.stdout = real
        >>> written
        b'caf\\\\xe9 \\\\u202e\\n'
    """
    saved = sys.stdout, sys.stderr
    sys.stdout = SafeStream(sys.stdout) if not isinstance(sys.stdout, SafeStream) else sys.stdout
    sys.stderr = SafeStream(sys.stderr) if not isinstance(sys.stderr, SafeStream) else sys.stderr
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def html_text(text: object) -> str:
    """``text`` safe inside an HTML element or a quoted attribute (bidirectional controls shown as escapes).

    Example:
        >>> html_text("a & b")
        'a &amp; b'
    """
    return html.escape(_BIDI.sub(_escape, "" if text is None else str(text)), quote=True)


def markdown_text(text: object) -> str:
    """``text`` safe inside Markdown (a paragraph, a list item or a table cell), on one line.

    Example:
        >>> markdown_text("**bold** <b>")
        '\\\\*\\\\*bold\\\\*\\\\* \\\\<b\\\\>'
    """
    return _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(0), one_line(text))


#: A code span a stored reason may keep: one of the toolkit's own commands in plain characters (``hugvis weights
#: download x``), nothing a renderer could read as markup even outside the span. Any other backticked text of a
#: stored reason (hostile or not) is escaped: stored text never makes a code span of its own.
_PLAIN_CODE = re.compile(r"`hugvis [A-Za-z0-9_ .,:=@+/-]+`", re.ASCII)


def markdown_code_text(text: object) -> str:
    """As :func:`markdown_text`, but a backticked ``hugvis`` command of plain characters stays a code span: a stored
    reason (``needs weights: run `hugvis weights download alexnet```) reads as the toolkit wrote it, not with escaped
    backticks; any other backtick is escaped.

    Example:
        >>> markdown_code_text("needs weights: run `hugvis weights download alexnet` <b>")
        'needs weights: run `hugvis weights download alexnet` \\\\<b\\\\>'
        >>> markdown_code_text("`code`")
        '\\\\`code\\\\`'
        >>> markdown_code_text("`<img src=x>`")
        '\\\\`\\\\<img src=x\\\\>\\\\`'
    """
    parts = re.split(r"(`[^`]*`)", one_line(text))
    return "".join(part if _PLAIN_CODE.fullmatch(part) else markdown_text(part) for part in parts)


#: The backslash escapes :func:`terminal_markdown` drops: those of characters that make no tag, link or code span
#: when the printed text is rendered as Markdown after all (piped into a .md file): ``*``, ``_``, ``#``, ``!``, ``~``,
#: ``>`` and ``&`` (an entity is a character), ``<`` where no tag can begin (no letter, ``/``, ``!`` or ``?`` after
#: it), a bracket where no ``(`` follows it (``[x](url)`` from stored text never becomes a link). The backtick and the
#: backslash itself keep theirs (a dropped ``\\`` would unescape what follows it), and so does the table's bar.
_ESCAPE = re.compile(r"\\([*#!~_>&])|\\([\[\]])(?!\()|\\(<)(?![A-Za-z/!?])")


def terminal_markdown(text: object) -> str:
    """Markdown printed on a terminal, where a person reads it as text: the backslash escapes of
    :func:`markdown_text` dropped where the character is harmless (an interval's brackets, ``*``, ``_``), kept where
    the text rendered as Markdown would make a tag, a link or a code span of stored text (``<`` before a letter, a
    backtick, a bracket before ``(``) and for a table cell's ``|``; control characters are already gone (:func:`one_line`).

    Example:
        >>> print(terminal_markdown("| 4.49 \\\\[4.36, 4.62\\\\] | a\\\\_b | a\\\\|b | \\\\> 0.25 s \\\\<= 2 |"))
        | 4.49 [4.36, 4.62] | a_b | a\\|b | > 0.25 s <= 2 |
        >>> print(terminal_markdown("\\\\<script\\\\> \\\\[x\\\\](javascript:1) \\\\`code\\\\`"))
        \\<script> [x\\](javascript:1) \\`code\\`
    """
    return _ESCAPE.sub(lambda m: m.group(1) or m.group(2) or m.group(3), "" if text is None else str(text))


__all__ = ["SafeStream", "html_text", "markdown_code_text", "markdown_text", "one_line", "safe_output", "terminal_markdown",
           "terminal_text"]

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

Example:
    >>> html_text('<script>alert("x")</script>')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'
    >>> markdown_text("a|b\\n| fake | row |")
    'a\\\\|b \\\\| fake \\\\| row \\\\|'
    >>> markdown_text("matte_good [x](javascript:alert(1)) `code`")
    'matte_good \\\\[x\\\\](javascript:alert(1)) \\\\`code\\\\`'
"""

from __future__ import annotations

import html
import re

# Every line break a renderer may honour: CR, LF, VT, FF, NEL, LS, PS.
_LINE_BREAKS = re.compile(r"\r\n|[\r\n\x0b\x0c\x85\u2028\u2029]")
# Other control characters are dropped: they have no printed form and can move a terminal's cursor.
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_MARKDOWN_SPECIAL = re.compile(r"[\\`*\[\]<>|#!&~]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")


def one_line(text: object) -> str:
    """``text`` as one line of plain text: line breaks become spaces, control characters go.

    Example:
        >>> one_line("first\\r\\nsecond\\x1b[2J")
        'first second[2J'
    """
    return _CONTROLS.sub("", _LINE_BREAKS.sub(" ", "" if text is None else str(text)))


def html_text(text: object) -> str:
    """``text`` safe inside an HTML element or a quoted attribute.

    Example:
        >>> html_text("a & b")
        'a &amp; b'
    """
    return html.escape("" if text is None else str(text), quote=True)


def markdown_text(text: object) -> str:
    """``text`` safe inside Markdown (a paragraph, a list item or a table cell), on one line.

    Example:
        >>> markdown_text("**bold** <b>")
        '\\\\*\\\\*bold\\\\*\\\\* \\\\<b\\\\>'
    """
    return _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(0), one_line(text))


#: A code span a stored reason may keep: a command of plain characters (``hugvis weights download x``), nothing a
#: renderer could read as markup even outside the span.
_PLAIN_CODE = re.compile(r"`[A-Za-z0-9_ .,:=@+/-]+`")


def markdown_code_text(text: object) -> str:
    """As :func:`markdown_text`, but a backticked command of plain characters stays a code span: a stored reason
    (``needs weights: run `hugvis weights download alexnet```) reads as the toolkit wrote it, not with escaped
    backticks; any other backtick is escaped.

    Example:
        >>> markdown_code_text("needs weights: run `hugvis weights download alexnet` <b>")
        'needs weights: run `hugvis weights download alexnet` \\\\<b\\\\>'
        >>> markdown_code_text("`<img src=x>`")
        '\\\\`\\\\<img src=x\\\\>\\\\`'
    """
    parts = re.split(r"(`[^`]*`)", one_line(text))
    return "".join(part if _PLAIN_CODE.fullmatch(part) else markdown_text(part) for part in parts)


#: A backslash escape of :func:`markdown_text` but the table's column bar.
_ESCAPE = re.compile(r"\\([\\`*\[\]<>#!&~_])")


def terminal_markdown(text: object) -> str:
    """Markdown printed on a terminal, where a person reads it as text: the backslash escapes of
    :func:`markdown_text` dropped (``*``, ``[``, a backtick are characters there), but the one that keeps a table
    cell's ``|`` in its cell; control characters are already gone (:func:`one_line`).

    Example:
        >>> print(terminal_markdown("| 4.49 \\\\[4.36, 4.62\\\\] | run \\\\`hugvis weights\\\\` | a\\\\|b |"))
        | 4.49 [4.36, 4.62] | run `hugvis weights` | a\\|b |
    """
    return _ESCAPE.sub(r"\1", "" if text is None else str(text))


__all__ = ["html_text", "markdown_code_text", "markdown_text", "one_line", "terminal_markdown"]

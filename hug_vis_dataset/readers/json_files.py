"""Strict JSON and JSON Lines: the one way the toolkit parses JSON it did not just write itself.

``json.loads`` accepts things a researcher's file should never mean silently: a duplicated key
(the last value wins), ``NaN``/``Infinity`` (not JSON), and it reports position as a character
offset. These readers refuse all three and name the file and line:

Example:
    >>> loads_strict('{"clip_id": "a", "answer": "Happy"}', "p.jsonl")
    {'clip_id': 'a', 'answer': 'Happy'}
    >>> try:
    ...     loads_strict('{"answer": "Happy",\\n "answer": "Sad"}', "p.json")
    ... except InputFileError as err:
    ...     print(err)
    p.json: line 2: duplicate key 'answer'; keep one 'answer' in this object
    >>> try:
    ...     loads_strict('{"x": NaN}', "s.json")
    ... except InputFileError as err:
    ...     print(err)
    s.json: line 1: NaN is not JSON; write null or a number
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from .textio import TextEncodingError, iter_text_lines, read_text
from .base import InputFileError
from .values import depth_problem, json_number


class _DuplicateKey(Exception):
    def __init__(self, key: str):
        self.key = key


class _NotJson(Exception):
    def __init__(self, token: str):
        self.token = token


def _no_duplicates(pairs: "list[tuple[str, Any]]") -> dict:
    seen: dict = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


def _refuse_constant(token: str) -> Any:
    raise _NotJson(token)


class _BadNumber(Exception):
    def __init__(self, token: str, err: InputFileError):
        self.token, self.problem, self.fix = token, err.problem, err.fix


def _number(token: str) -> "int | float":
    # Every number through the one bounded value reader (readers/values.py): no 4,300-digit integer reaches
    # int() (Python's own ValueError, naming no file), no 1e999 becomes infinity without a word.
    try:
        return json_number(token, "", "")
    except InputFileError as err:
        raise _BadNumber(token, err) from None


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant,
                            parse_int=_number, parse_float=_number)


def encoding_error(path: "str | Path", err: Exception) -> InputFileError:
    """A :class:`~hug_vis_dataset.readers.textio.TextEncodingError` as the readers' error, with textio's very text.

    Example:
        >>> from hug_vis_dataset.readers.textio import TextEncodingError
        >>> err = encoding_error("a.csv", TextEncodingError("a.csv: line 2 is not UTF-8 (byte 0xbf at "
        ...                      "column 1); re-save the file as UTF-8 (with or without BOM)"))
        >>> str(err)
        'a.csv: line 2 is not UTF-8 (byte 0xbf at column 1); re-save the file as UTF-8 (with or without BOM)'
    """
    text = str(err)
    rest = text[len(str(path)) + 2:] if text.startswith(f"{path}: ") else text
    problem, _, fix = rest.partition("; ")
    return InputFileError(path, "", problem, fix)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _duplicate_line(text: str, key: str) -> int:
    """The line of the second occurrence of ``"key"`` as an object key (best effort: 1 if not found)."""
    needle = json.dumps(key, ensure_ascii=False)
    first = text.find(needle)
    second = text.find(needle, first + 1) if first >= 0 else -1
    return _line_of(text, second) if second >= 0 else 1


def loads_strict(text: str, source: "str | Path", first_line: int = 1) -> Any:
    """Parse ``text`` as one JSON value, refusing duplicate keys, NaN/Infinity and trailing data.

    Args:
        text: the JSON text (a leading byte-order mark is dropped).
        source: the file (or display name) named in errors.
        first_line: the line number of ``text``'s first line in that file (for JSON Lines).

    Raises:
        InputFileError: naming ``source``, the line and the fix.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        value, end = _DECODER.raw_decode(text, _skip_space(text, 0))
    except _DuplicateKey as dup:
        line = first_line - 1 + _duplicate_line(text, dup.key)
        raise InputFileError(source, f"line {line}", f"duplicate key {dup.key!r}",
                             f"keep one {dup.key!r} in this object") from None
    except _NotJson as bad:
        line = first_line - 1 + _line_of(text, max(text.find(bad.token), 0))
        raise InputFileError(source, f"line {line}", f"{bad.token} is not JSON",
                             "write null or a number") from None
    except _BadNumber as bad:
        line = first_line - 1 + _line_of(text, max(text.find(bad.token), 0))
        raise InputFileError(source, f"line {line}", bad.problem, bad.fix) from None
    except json.JSONDecodeError as err:
        line = first_line - 1 + err.lineno
        # json's own message may end with "at" ("Unterminated string starting at"): one "at" before the column
        what = err.msg.removesuffix(" at")
        problem = "is empty" if not text.strip() else f"is not JSON ({what} at column {err.colno})"
        raise InputFileError(source, f"line {line}", problem,
                             "fix the JSON (a truncated or hand-edited file?)") from None
    except RecursionError:
        raise InputFileError(source, f"line {first_line}" if first_line > 1 else "", "nests too deeply to be a "
                             "toolkit file", "check that this is the file you meant") from None
    end = _skip_space(text, end)
    if end != len(text):
        raise InputFileError(source, f"line {first_line - 1 + _line_of(text, end)}",
                             "has data after the JSON value", "keep one JSON value per file (or per line)")
    deep = depth_problem(value)
    if deep:  # parsed within Python's recursion limit, but every consumer that walks it would recurse too
        raise InputFileError(source, f"line {first_line}" if first_line > 1 else "", f"{deep} (no toolkit "
                             "file does)", "check that this is the file you meant")
    return value


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def read_json(path: "str | Path", *, expect: "type | tuple[type, ...] | None" = dict) -> Any:
    """The JSON value in ``path`` (strict UTF-8, BOM accepted), checked to be of type ``expect``.

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "run.json")
        >>> _ = open(path, "w").write('[1, 2]')
        >>> try:
        ...     read_json(path)
        ... except InputFileError as err:
        ...     print(err.problem)
        holds a JSON array, not an object

    Raises:
        InputFileError: missing file, not UTF-8, not strict JSON, or not of type ``expect``.
    """
    path = Path(path)
    try:
        text = read_text(path)
    except FileNotFoundError:
        raise _missing(path) from None
    except IsADirectoryError:
        raise InputFileError(path, "", "is a folder, not a file", "pass the JSON file inside it") from None
    except TextEncodingError as err:
        raise encoding_error(path, err) from None
    value = loads_strict(text, path)
    _check_type(value, expect, path, "")
    return value


_TYPE_NAMES = {dict: "an object", list: "an array", str: "a string", int: "an integer",
               float: "a number", bool: "true/false", type(None): "null"}


def json_type_name(value: Any) -> str:
    """``"an object"``, ``"an array"`` ... as a JSON user says it."""
    for kind, name in _TYPE_NAMES.items():
        if type(value) is kind:
            return name
    return type(value).__name__


def _check_type(value: Any, expect: "type | tuple[type, ...] | None", path: "str | Path", where: str) -> None:
    if expect is None or _is_of(value, expect):
        return
    names = _type_words(expect)
    article, _, noun = json_type_name(value).partition(" ")
    got = f"a JSON {noun}" if noun else article
    raise InputFileError(path, where, f"holds {got}, not {names}", f"write {names} here")


def iter_json_lines(path: "str | Path", *, expect: "type | tuple[type, ...] | None" = dict
                    ) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of every non-blank line of a JSON Lines file, streamed.

    A line that is not strict JSON, or not of type ``expect``, raises at that line; callers that
    record bad lines instead of stopping catch :class:`InputFileError` per line (its ``where``
    names the line). CRLF line ends and a BOM are accepted.

    Raises:
        InputFileError: missing file, not UTF-8, or a bad line (naming it).
    """
    path = Path(path)
    try:
        lines = iter_text_lines(path)
        for lineno, line in lines:
            if not line.strip():
                continue
            value = loads_strict(line, path, first_line=lineno)
            _check_type(value, expect, path, f"line {lineno}")
            yield lineno, value
    except FileNotFoundError:
        raise _missing(path) from None
    except TextEncodingError as err:
        raise encoding_error(path, err) from None


def _missing(path: Path) -> InputFileError:
    return InputFileError(path, "", "does not exist", "pass the file's right path")


def _type_words(kind: "type | tuple[type, ...]") -> str:
    """``"a string or null"``: the JSON words for a declared type."""
    return " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in (kind if isinstance(kind, tuple) else (kind,)))


def _is_of(value: Any, kind: "type | tuple[type, ...]") -> bool:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool):  # JSON true/false is not a number, though Python's bool is an int
        return bool in kinds
    if float in kinds and isinstance(value, int):  # 3 is a JSON number too
        return True
    return isinstance(value, kinds)


def require_fields(value: Any, fields: "dict[str, type | tuple[type, ...]]", path: "str | Path",
                   where: str = "", *, optional: "dict[str, type | tuple[type, ...]] | None" = None) -> dict:
    """Check that the JSON object ``value`` has every one of ``fields``, each of its declared type.

    ``optional`` fields may be absent (or ``null``) but, when present, have their type. ``float``
    accepts integers; ``int`` and ``float`` refuse ``true``/``false``.

    Example:
        >>> require_fields({"clip_id": "a", "score": 3}, {"clip_id": str, "score": float}, "s.json")
        {'clip_id': 'a', 'score': 3}
        >>> try:
        ...     require_fields({"clip_id": 7}, {"clip_id": str}, "p.jsonl", "line 4")
        ... except InputFileError as err:
        ...     print(err)
        p.jsonl: line 4: field 'clip_id' holds an integer, not a string; write a string there

    Raises:
        InputFileError: ``value`` is not an object, lacks a field or holds one of the wrong type.
    """
    _check_type(value, dict, path, where)
    for name, kind in fields.items():
        if name not in value:
            raise InputFileError(path, where, f"lacks the field {name!r}", f"add {name!r} ({_type_words(kind)})")
    for name, kind in list(fields.items()) + list((optional or {}).items()):
        if name in value and not (name not in fields and value[name] is None) and not _is_of(value[name], kind):
            wanted = _type_words(kind)
            raise InputFileError(path, where, f"field {name!r} holds {json_type_name(value[name])}, not {wanted}",
                                 f"write {wanted} there")
    return value

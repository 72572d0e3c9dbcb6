"""Typed, bounded readers of single values: the one way a value a user wrote becomes a Python value.

A file can be valid JSON (or CSV) and still hold a value of a form nobody expected: a timestamp without a
time zone, a number with thousands of digits, ``1e999`` (which Python reads as infinity), containers nested
a thousand deep, digits that are not ASCII (``int("١٢")`` is 12). Each reader here takes the value, the file
and the field it came from, and returns the value in the one form the toolkit computes with, or raises
:class:`~hug_vis_dataset.readers.InputFileError` naming file, field, problem and fix. The JSON reader
(:mod:`.json_files`) applies the number and depth bounds to every file it parses.

Example:
    >>> utc_timestamp("2026-12-01T01:00:00+01:00", "r.json", "submitted_at")
    '2026-12-01T00:00:00+00:00'
    >>> utc_timestamp("2026-12-01T00:00:00", "r.json", "submitted_at")   # no zone: the format's UTC
    '2026-12-01T00:00:00+00:00'
    >>> try:
    ...     utc_timestamp("yesterday", "r.json", "heartbeat_at")
    ... except InputFileError as err:
    ...     print(err)
    r.json: field 'heartbeat_at': 'yesterday' is not an ISO 8601 time; write e.g. 2026-12-01T00:00:00+00:00
    >>> ascii_int("0012", "clips.csv", "actor")
    12
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from pathlib import Path
from typing import Any

from .base import InputFileError

#: Digits of the longest number a toolkit file holds (a 64-bit count has 20; 40 leaves room for any float).
MAX_NUMBER_DIGITS = 40
#: Containers nested deeper than this are no toolkit file (the deepest, a study's "qc" block, is 3 deep).
MAX_DEPTH = 32
_ASCII_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)
_TIMESTAMP_FIX = "write e.g. 2026-12-01T00:00:00+00:00"


def _where(field: str) -> str:
    return f"field {field!r}" if field else ""


def parse_utc(value: Any) -> "_dt.datetime | None":
    """``value`` (an ISO 8601 string) as an aware UTC datetime; a time without a zone is taken as UTC (every
    timestamp the toolkit writes is UTC); None when it is not such a string.

    Example:
        >>> parse_utc("2026-12-01T00:00:00Z").isoformat(), parse_utc("2026-12-01 02:00:00+02:00").isoformat()
        ('2026-12-01T00:00:00+00:00', '2026-12-01T00:00:00+00:00')
        >>> parse_utc("noon") is None, parse_utc(5) is None, parse_utc("２０２６-12-01") is None
        (True, True, True)
    """
    if not isinstance(value, str) or not value.isascii():
        return None
    try:
        stamp = _dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=_dt.timezone.utc)
    return stamp.astimezone(_dt.timezone.utc)


def format_utc(stamp: _dt.datetime) -> str:
    """The one written form of a time: UTC ISO 8601, seconds (microseconds only when there are some).

    >>> format_utc(_dt.datetime(2026, 12, 1, tzinfo=_dt.timezone.utc))
    '2026-12-01T00:00:00+00:00'
    """
    stamp = stamp.astimezone(_dt.timezone.utc)
    return stamp.isoformat(timespec="microseconds" if stamp.microsecond else "seconds")


def utc_timestamp(value: Any, source: "str | Path", field: str) -> str:
    """An ISO 8601 time in its one form (:func:`format_utc`): any offset converted, no zone taken as UTC.

    Raises:
        InputFileError: not a string holding an ISO 8601 time (naming ``source`` and ``field``).
    """
    stamp = parse_utc(value)
    if stamp is None:
        raise InputFileError(source, _where(field), f"{_short(value)} is not an ISO 8601 time", _TIMESTAMP_FIX)
    return format_utc(stamp)


def ascii_int(value: Any, source: "str | Path", field: str, low: "int | None" = None,
              high: "int | None" = None) -> int:
    """An integer written with ASCII digits (``int()`` also takes ``"١٢"``, ``"1_000"`` and ``" 7 "``), within
    ``[low, high]`` when given.

    Example:
        >>> try:
        ...     ascii_int("١٢", "a.csv", "score")
        ... except InputFileError as err:
        ...     print(err.problem)
        '١٢' is not an integer written with the digits 0-9

    Raises:
        InputFileError: not such an integer, or outside the bounds.
    """
    if isinstance(value, bool):
        raise InputFileError(source, _where(field), f"{value!r} is not an integer", "write an integer")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _ASCII_INT.fullmatch(value.strip()) and len(value) <= MAX_NUMBER_DIGITS:
        number = int(value)
    else:
        raise InputFileError(source, _where(field), f"{_short(value)} is not an integer written with the digits 0-9",
                             "write an integer")
    if (low is not None and number < low) or (high is not None and number > high):
        bounds = f"{low}..{high}" if low is not None and high is not None else \
            f">= {low}" if low is not None else f"<= {high}"
        raise InputFileError(source, _where(field), f"{number} is outside {bounds}", f"write an integer {bounds}")
    return number


_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def decimal_number(text: Any) -> "float | None":
    """The number a cell's text writes with ASCII digits (spaces around it allowed), or None: ``float()``
    also reads ``"\u0664"`` and ``"\uff14"`` (4 in other scripts), ``"0_4"`` (4) and ``"nan"``, none of
    which a person writing a score means.

    >>> decimal_number(" 4 "), decimal_number("4.0"), decimal_number("4e0")
    (4.0, 4.0, 4.0)
    >>> decimal_number("\u0664"), decimal_number("0_4"), decimal_number("nan"), decimal_number(4)
    (None, None, None, None)
    """
    if not isinstance(text, str) or not _DECIMAL.fullmatch(text.strip()) or len(text) > MAX_NUMBER_DIGITS + 8:
        return None
    return float(text.strip())


def json_number(token: str, source: "str | Path", where: str) -> "int | float":
    """A JSON number token as the value it means, bounded: at most :data:`MAX_NUMBER_DIGITS` digits (Python
    stops at 4,300 with its own message) and finite (``1e999`` would silently become infinity).

    Example:
        >>> json_number("12", "s.json", "line 1"), json_number("-0.5e1", "s.json", "line 1")
        (12, -5.0)
        >>> try:
        ...     json_number("1e999", "s.json", "line 3")
        ... except InputFileError as err:
        ...     print(err)
        s.json: line 3: the number 1e999 is too large to be a number (it overflows to infinity); write a finite number
    """
    digits = sum(ch.isdigit() for ch in token)
    if digits > MAX_NUMBER_DIGITS:
        raise InputFileError(source, where, f"a number with {digits} digits",
                             f"write at most {MAX_NUMBER_DIGITS} digits (a toolkit file holds no longer number)")
    if any(ch in token for ch in ".eE"):
        value = float(token)
        if not math.isfinite(value):
            raise InputFileError(source, where, f"the number {token} is too large to be a number (it overflows to "
                                 "infinity)", "write a finite number")
        return value
    return int(token)


def depth_problem(value: Any) -> "str | None":
    """Why a parsed JSON value nests too deeply (None when it does not), walked without recursion.

    >>> depth_problem({"a": [1, {"b": []}]}) is None, depth_problem([[[]]] * 2) is None
    (True, True)
    >>> nested = []
    >>> for _ in range(40):
    ...     nested = [nested]
    >>> depth_problem(nested)
    'nests more than 32 levels deep'
    """
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, (dict, list)):
            if depth > MAX_DEPTH:
                return f"nests more than {MAX_DEPTH} levels deep"
            todo.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


__all__ = ["MAX_DEPTH", "MAX_NUMBER_DIGITS", "ascii_int", "decimal_number", "depth_problem", "format_utc", "json_number", "parse_utc",
           "utc_timestamp"]

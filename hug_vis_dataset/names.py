"""Every name a command accepts is checked against what exists, in one place.

A name typed by a user or written in a file (an audit transform, a system a study rates, a rated model, a
task, a metric) either names something that exists -- then it is returned in its own spelling -- or is
refused in one line that names what was given, where it came from, what exists and the closest match. A
name is never looked up with ``dict[name]`` (a ``KeyError`` traceback), filtered out of a list without a
word, nor taken as it is to fail later where nobody can tell why.

Example:
    >>> require_known("transform", "h246_crf23", ["h264_crf23", "fps_25"], where="--transforms")
    Traceback (most recent call last):
    ...
    hug_vis_dataset.names.UnknownNameError: --transforms: unknown transform 'h246_crf23' (did you mean h264_crf23?); choose from h264_crf23, fps_25
    >>> require_known("transform", "fps_25", ["h264_crf23", "fps_25"])
    'fps_25'
"""

from __future__ import annotations

import difflib
from typing import Iterable, Sequence

from .errors import HugvisError

#: How many known names a message lists before "and N more".
LISTED = 12


class UnknownNameError(HugvisError, ValueError):
    """A name that names nothing that exists; the message names it, what exists and the closest one."""


class UnknownChoiceError(UnknownNameError):
    """An option's value that names nothing that exists (exit status 2: bad invocation, as argparse's)."""

    exit_code = 2


def did_you_mean(word: str, choices: "Sequence[str]") -> str:
    """`` (did you mean X?)`` for the closest of ``choices`` (difflib), or ``""`` when none is close.

    Example:
        >>> did_you_mean("evalute", ["evaluate", "report"]), did_you_mean("--predicitons", ["--predictions", "--out"])
        (' (did you mean evaluate?)', ' (did you mean --predictions?)')
        >>> did_you_mean("zzz", ["evaluate"])
        ''
    """
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.6)
    if not close:  # another spelling of the same name: case, '-' for '_', spaces around it
        folded = {_fold(c): str(c) for c in choices}
        close = [folded[_fold(word)]] if _fold(word) in folded else []
    return f" (did you mean {close[0]}?)" if close else ""


def another_spelling(name: str, known: "Sequence[str]") -> "str | None":
    """The one of ``known`` that ``name`` is another spelling of (case, ``-``/``_``, spaces, a close typo), or
    None when it is none of them (or is one of them exactly).

    >>> another_spelling("Clone-Good", ["clone_good", "clone_poor"]), another_spelling("clone_good", ["clone_good"])
    ('clone_good', None)
    >>> another_spelling("sonic", ["clone_good"]) is None
    True
    """
    if name in known:
        return None
    folded = {_fold(k): k for k in known}
    if _fold(name) in folded:
        return folded[_fold(name)]
    close = difflib.get_close_matches(str(name), list(known), n=1, cutoff=0.85)
    return close[0] if close else None


def _fold(name: object) -> str:
    return str(name).strip().lower().replace("-", "_").replace(" ", "_")


def listing(known: Iterable[str]) -> str:
    """The known names as a message lists them (the first :data:`LISTED`, then how many more).

    >>> listing(["a", "b"]), listing(str(i) for i in range(14))
    ('a, b', '0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 2 more')
    """
    names = [str(k) for k in known]
    shown = ", ".join(names[:LISTED])
    return shown + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "") if names else "(none)"


def unknown_message(kind: str, name: object, known: Sequence[str], where: str = "", fix: str = "") -> str:
    """The one line for ``name`` (a ``kind``) that is not among ``known``.

    >>> unknown_message("system", "Clone_Good", ["clone_good", "clone_poor"], "study.json: tasks.voice_cloning")
    "study.json: tasks.voice_cloning: unknown system 'Clone_Good' (did you mean clone_good?); choose from clone_good, clone_poor"
    """
    place = f"{where}: " if where else ""
    hint = did_you_mean(str(name), known) if isinstance(name, str) else ""
    return f"{place}unknown {kind} {name!r}{hint}; {fix or 'choose from ' + listing(known)}"


def require_known(kind: str, name: object, known: "Iterable[str]", where: str = "", fix: str = "",
                  option: bool = False) -> str:
    """``name`` when it is one of ``known`` (compared exactly), else :class:`UnknownNameError`.

    Args:
        kind: what the name names, as a message says it (``"transform"``, ``"system"``).
        name: what was given.
        known: what exists.
        where: the file and field or the option it came from.
        fix: the fix when it is not "choose from <known>".
        option: the name is a command-line option's value (:class:`UnknownChoiceError`, exit status 2).
    """
    known = list(known)
    if isinstance(name, str) and name in known:
        return name
    raise (UnknownChoiceError if option else UnknownNameError)(unknown_message(kind, name, known, where, fix))


def require_all_known(kind: str, names: "Iterable[object]", known: "Iterable[str]", where: str = "",
                      fix: str = "", option: bool = False) -> list[str]:
    """Each of ``names`` (in order, checked by :func:`require_known`); the first unknown one is refused.

    >>> require_all_known("transform", ["a"], ["a", "b"])
    ['a']
    """
    known = list(known)
    return [require_known(kind, name, known, where, fix, option) for name in names]


__all__ = ["LISTED", "UnknownChoiceError", "UnknownNameError", "another_spelling", "did_you_mean", "listing", "require_all_known", "require_known",
           "unknown_message"]

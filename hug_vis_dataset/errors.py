"""The one base class of every error a user can cause, and its one-line rendering.

Every module raises its own clear class (``ReleaseError``, ``BuildError``,
``DatasetSourceError``, ``WeightsMissingError`` ...); each of them also derives from
:class:`HugvisError`, so the ``hugvis`` entry point catches them all in one place and prints
``error: <what> (<file or clip>): <how to fix>`` on one line, never a traceback (``--debug``
shows it).

Example:
    >>> class ToyError(HugvisError, ValueError):
    ...     pass
    >>> one_line(ToyError("clips.csv line 3 is bad\\n  fix: save it as UTF-8"))
    'clips.csv line 3 is bad; fix: save it as UTF-8'
    >>> exit_code(ToyError("x")), exit_code(ToolUsageError("y"))
    (1, 2)
"""

from __future__ import annotations


class HugvisError(Exception):
    """Base of the errors a user can cause (bad input, bad option, broken file).

    Attributes:
        exit_code: the ``hugvis`` exit status for this error (1: bad data, 2: bad invocation).
    """

    exit_code: int = 1


class ToolUsageError(HugvisError, ValueError):
    """A command-line option or argument is invalid (exit status 2, as argparse uses)."""

    exit_code = 2


def one_line(err: BaseException) -> str:
    """The error's text on one line: inner lines joined with ``"; "``, indentation dropped.

    ``KeyError`` quotes its argument when printed; the raw message is used instead.
    """
    text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
    parts = [line.strip() for line in text.splitlines() if line.strip()]
    return "; ".join(parts) if parts else type(err).__name__


def exit_code(err: BaseException) -> int:
    """1 for bad data or files, 2 for bad invocation (see :attr:`HugvisError.exit_code`)."""
    return int(getattr(err, "exit_code", 1)) if isinstance(err, HugvisError) else 1

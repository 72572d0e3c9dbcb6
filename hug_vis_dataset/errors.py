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


class InputFileError(HugvisError, ValueError):
    """A file does not match its declared kind: one line naming file, place, problem and fix.

    Defined here, below everything, so that the rule for what may be read at all (``regular_files.py``) and
    every reader (``readers/``, which re-exports it as ``readers.InputFileError``) raise the one class.

    Attributes:
        path: the file (as given, or its display name).
        where: ``"line N"``, ``"row N"``, ``"column 'x'"``, ``"byte N"`` ... or ``""`` for the whole file.
        problem: what is wrong.
        fix: what the user should do.
    """

    def __init__(self, path: object, where: str, problem: str, fix: str):
        self.path = str(path)
        self.where = where
        self.problem = problem
        self.fix = fix
        place = f"{self.path}: {where}" if where else self.path
        super().__init__(f"{place}: {problem}; {fix}" if fix else f"{place}: {problem}")

    def __reduce__(self):  # picklable across worker processes
        return (type(self), (self.path, self.where, self.problem, self.fix))


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

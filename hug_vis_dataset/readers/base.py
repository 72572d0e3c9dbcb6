"""The error every reader raises, and how it names where the problem is.

Example:
    >>> err = InputFileError("predictions.jsonl", "line 3", "duplicate key 'answer'",
    ...                      "keep one 'answer' per line")
    >>> str(err)
    "predictions.jsonl: line 3: duplicate key 'answer'; keep one 'answer' per line"
    >>> (err.path, err.where, err.problem, err.fix)
    ('predictions.jsonl', 'line 3', "duplicate key 'answer'", "keep one 'answer' per line")
"""

from __future__ import annotations

from pathlib import Path

from ..errors import HugvisError


class InputFileError(HugvisError, ValueError):
    """A file does not match its declared kind: one line naming file, place, problem and fix.

    Attributes:
        path: the file (as given, or its display name).
        where: ``"line N"``, ``"row N"``, ``"column 'x'"``, ``"byte N"`` ... or ``""`` for the whole file.
        problem: what is wrong.
        fix: what the user should do.
    """

    def __init__(self, path: "str | Path", where: str, problem: str, fix: str):
        self.path = str(path)
        self.where = where
        self.problem = problem
        self.fix = fix
        place = f"{self.path}: {where}" if where else self.path
        super().__init__(f"{place}: {problem}; {fix}" if fix else f"{place}: {problem}")

    def __reduce__(self):  # picklable across worker processes
        return (type(self), (self.path, self.where, self.problem, self.fix))

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

from ..errors import InputFileError  # one class for every reader and the file-kind rule (regular_files.py)

__all__ = ["InputFileError"]

"""Skipped input lines, named where the user reads about them: ``file:line: reason``, bounded.

A message that counts skipped lines ("3 lines were skipped") makes the reader look for them; every
place that reports skipped lines of a ratings log or a ratings CSV (the Space's rating message,
``hugvis mos``, ``hugvis mos status``) lists them here instead: the first :data:`SHOWN_LINES`, each
``file:line: reason``, then how many more. Escaping is the caller's (``escaping.markdown_text`` in
the Space, ``escaping.one_line`` on a terminal), since only the caller knows where the text goes.

Example:
    >>> listed([f"r.jsonl:{n}: not JSON" for n in (2, 5, 9)], limit=2)
    ['r.jsonl:2: not JSON', 'r.jsonl:5: not JSON', 'and 1 more']
    >>> listed(["r.jsonl:2: not JSON"], total=40, limit=5)
    ['r.jsonl:2: not JSON', 'and 39 more']
"""

from __future__ import annotations

from typing import Sequence

#: At most this many skipped lines are named in one message; the rest are counted.
SHOWN_LINES = 10


def listed(lines: Sequence[str], total: "int | None" = None, limit: int = SHOWN_LINES) -> list[str]:
    """The first ``limit`` of ``lines``, then ``"and N more"`` when ``total`` (default: how many
    ``lines`` there are) is larger than what is shown."""
    shown = list(lines[:limit])
    total = len(lines) if total is None else total
    if total > len(shown):
        shown.append(f"and {total - len(shown)} more")
    return shown


__all__ = ["SHOWN_LINES", "listed"]

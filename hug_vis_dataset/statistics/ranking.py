"""One ranking of a table column, for every table that ranks (the board, ``leaderboard show``, the report's tables).

Within each comparison set (:func:`hug_vis_dataset.statistics.rules.comparison_set`) the rows are ranked on their
printed values (:func:`hug_vis_dataset.presentation.tables.mark_ranks`: what the reader sees), each stored row is compared with
the next-ranked stored row (:func:`hug_vis_dataset.statistics.verdicts.compare`, the one verdict), and a row keeps
its best / second mark only when the statistics back it: walking down the ranking, a mark is drawn while every
comparison on the way is *separable* (a row without per-clip rows, such as the paper's, has no verdict and does not
break the walk). So with two actors, where every verdict is *cannot tell*, no stored row is bold.

Example:
    >>> entries = [Entry("x", "s", 3.0, None), Entry("y", "s", 2.0, None), Entry("z", "s", 1.0, None)]
    >>> {k: r.mark for k, r in rank_column(entries, "vision_driven", "psnr", True).items()}
    {'x': 'best', 'y': 'second', 'z': None}
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Hashable, Sequence

from .rules import rank_marks_allowed


@dataclass(frozen=True)
class Entry:
    """One row of a column to rank.

    Attributes:
        key: the surface's key of the row.
        group: its comparison set (and input setting): rows rank only within their group.
        value: the value as printed (NaN: no value).
        label: its row label in the per-clip rows (None: it has none, e.g. a paper row).
        ranked: False for reference rows and built-in baselines (shown, never ranked nor compared).
    """

    key: Hashable
    group: str
    value: float
    label: "str | None"
    ranked: bool = True


@dataclass(frozen=True)
class Ranked:
    """A row's outcome: its mark (``best``, ``second`` or None) and its verdict against the next-ranked stored row
    (None: not compared)."""

    mark: "str | None" = None
    verdict: Any = None


def order(entries: Sequence[Entry], higher_is_better: bool) -> list[Entry]:
    """Ranked entries with a value, best first (ties by label, then key: a fixed order)."""
    sign = -1.0 if higher_is_better else 1.0
    return sorted((e for e in entries if e.ranked and math.isfinite(e.value)),
                  key=lambda e: (sign * e.value, str(e.label or ""), str(e.key)))


def rank_column(entries: Sequence[Entry], task: str, metric: str, higher_is_better: bool, evidence: Any = None
                ) -> dict[Hashable, Ranked]:
    """Marks and verdicts of one column (module docstring); ``evidence``: the column's per-clip rows or their
    :class:`~hug_vis_dataset.statistics.sums.ClipValues` (None: no verdicts, marks by value only)."""
    from ..presentation.tables import mark_ranks
    from .sums import EvidenceError, matrix_of
    from .verdicts import compare

    out: dict[Hashable, Ranked] = {e.key: Ranked() for e in entries}
    values = None
    if evidence is not None:
        try:
            values = matrix_of(evidence, task, metric)
        except EvidenceError:
            values = None
    for group in dict.fromkeys(e.group for e in entries):
        ranked = order([e for e in entries if e.group == group], higher_is_better)
        if len(ranked) < 2:  # a row alone in its set is ranked against nothing: no "best"
            continue
        marks = dict(zip((e.key for e in ranked), mark_ranks([e.value for e in ranked], higher_is_better, None)))
        stored = [e for e in ranked if e.label is not None and values is not None and e.label in values.systems]
        verdicts = {}
        if values is not None:
            for a, b in zip(stored, stored[1:]):
                verdicts[a.key] = compare(values, task, metric, a.label, b.label, higher_is_better)
        walk_ok = True
        for e in ranked:
            verdict = verdicts.get(e.key)
            walk_ok = walk_ok and rank_marks_allowed(verdict.word if verdict is not None else None)
            out[e.key] = Ranked(marks.get(e.key) if walk_ok else None, verdict)
    return out


__all__ = ["Entry", "Ranked", "order", "rank_column"]

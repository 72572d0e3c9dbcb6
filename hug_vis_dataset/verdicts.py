"""One verdict per comparison of two systems: computed once, here, from the stored per-clip rows; every surface
(the board's marks, the Space's Findings, the report, ``hugvis leaderboard show``) shows this verdict in these words.

A comparison is two systems on one metric of one task, on the clips both have: the paired sign-flip test of
:mod:`hug_vis_dataset.metrics.significance` (actors as clusters, exact below 2^13 sign patterns, seed 0). Its
verdict is one of three words, never two shades of one:

* **separable**: the permutation p-value is below 0.05;
* **not separable**: the test could have found a difference (enough actors: the smallest attainable p-value is
  below 0.05) and did not;
* **cannot tell**: the design cannot decide: fewer than 6 actors (with A actors the smallest two-sided p-value is
  2 / 2^A), one actor, or no common clip. This is absence of evidence, and it is drawn as such (``?``), never like
  a separation and never like a tie.

A verdict depends on the two systems only (not on the rest of a ranking), so wherever two systems meet, every
surface states the same verdict; the neighbours a surface compares come from its own ranking.

Example:
    >>> rows = [{"model": m, "clip_id": f"actor_{a:04d}_happy_action_01_script_001", "value": v + a}
    ...         for m, v in (("x", 1.0), ("y", 0.0)) for a in (1, 2)]
    >>> v = compare(rows, "vision_driven", "psnr", "x", "y")
    >>> v.word, v.why, v.mark
    ('cannot tell', '2 actors cannot reach p < 0.05 (smallest p = 0.5)', '?')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from . import catalog

SEPARABLE, NOT_SEPARABLE, CANNOT_TELL = "separable", "not separable", "cannot tell"
VERDICTS: tuple[str, ...] = (SEPARABLE, NOT_SEPARABLE, CANNOT_TELL)
#: What a board prints after a value whose comparison with the next-ranked row is not "separable".
MARKS: dict[str, str] = {NOT_SEPARABLE: "≈", CANNOT_TELL: "?"}
#: The legend of each mark, as every surface words it.
LEGEND: dict[str, str] = {
    NOT_SEPARABLE: "≈ not separable from the next-ranked row: the paired test on their common clips (actors as "
                   "clusters) finds no difference at p < 0.05",
    CANNOT_TELL: "? cannot tell against the next-ranked row: {why}; absence of evidence, not a tie and not a "
                 "separation",
}
#: A collapsed interval (low = high with two or more actors) is the same absence of evidence on a MOS cell.
COLLAPSED = "interval collapsed to a point: so few actors resample to the same mean; cannot tell"
SEED, RESAMPLES, BOOTSTRAP = 0, 9999, 2000


@dataclass(frozen=True)
class Verdict:
    """The verdict of one comparison (``model`` ranked above ``next_model``).

    Attributes:
        task, metric, model, next_model: what was compared.
        word: :data:`SEPARABLE`, :data:`NOT_SEPARABLE` or :data:`CANNOT_TELL`.
        why: the reason in words (the p-value and actors, or why the design cannot decide).
        difference, ci_low, ci_high: mean paired difference (paper units, positive when ``model`` is better) and
            its actor-bootstrap 95% interval.
        p_value, n_actors, n_clips: the test.
    """

    task: str
    metric: str
    model: str
    next_model: str
    word: str
    why: str
    difference: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    p_value: float = math.nan
    n_actors: int = 0
    n_clips: int = 0

    @property
    def mark(self) -> str:
        """``≈``, ``?`` or ``""`` (separable: nothing to warn about)."""
        return MARKS.get(self.word, "")

    @property
    def legend(self) -> str:
        return LEGEND[self.word].format(why=self.why) if self.word in LEGEND else ""


def _frame(rows: Any):
    import pandas as pd

    return rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))


def compare(rows: Any, task: str, metric: str, model: str, next_model: str) -> Verdict:
    """The verdict of ``model`` against ``next_model`` on ``metric`` (the one place a verdict is computed).

    ``rows``: per-clip rows holding both systems' rows of the metric (``model``, ``clip_id``, ``value``, and
    ``status``/``metric``/``task`` when present; rows not ``ok`` are left out, as every mean leaves them out).
    """
    from .metrics.significance import SignificanceInputError, _rows_frame, paired_test

    frame = _frame(rows)
    for column, wanted in (("task", task), ("metric", metric)):
        if column in frame.columns:
            frame = frame[frame[column] == wanted]
    frame = frame[frame["model"].isin([model, next_model])]
    spec = catalog.spec(metric)
    sign = 1.0 if spec.higher_is_better else -1.0
    try:
        frame = _rows_frame(frame)
    except SignificanceInputError as err:
        return Verdict(task, metric, model, next_model, CANNOT_TELL, str(err))
    a = frame[frame["model"] == model].set_index("clip_id")
    b = frame[frame["model"] == next_model].set_index("clip_id")
    common = sorted(set(a.index) & set(b.index))
    if not common:
        return Verdict(task, metric, model, next_model, CANNOT_TELL, "no clip scored for both")
    d = sign * (a.loc[common, "value"].to_numpy() - b.loc[common, "value"].to_numpy()) * spec.paper_scale
    test = paired_test(d, a.loc[common, "actor_id"].tolist(), RESAMPLES, BOOTSTRAP, seed=SEED)
    word, why = word_of(test.distinguishable, test.p_value, test.n_actors, test.note)
    return Verdict(task, metric, model, next_model, word, why, test.mean_difference, test.ci_low, test.ci_high,
                   test.p_value, test.n_actors, test.n_clips)


def word_of(distinguishable: "bool | None", p_value: float, n_actors: int, note: str = "") -> tuple[str, str]:
    """(verdict, why) of a paired test's outcome (:class:`~hug_vis_dataset.metrics.significance.PairedTest`).

    >>> word_of(None, 0.5, 2, "n/a: 2 actors cannot reach p < 0.05 (smallest p = 0.5)")
    ('cannot tell', '2 actors cannot reach p < 0.05 (smallest p = 0.5)')
    >>> word_of(False, 0.31, 12)
    ('not separable', 'p = 0.31 (not below 0.05) with 12 actors')
    """
    if note or distinguishable is None:
        return CANNOT_TELL, note.removeprefix("n/a: ") or "the test cannot decide"
    if distinguishable:
        return SEPARABLE, f"p = {p_value:.3g} with {n_actors} actors"
    return NOT_SEPARABLE, f"p = {p_value:.3g} (not below 0.05) with {n_actors} actors"


def neighbour_verdicts(rows: Any, task: str, metric: str, ranking: Sequence[str]) -> list[Verdict]:
    """The verdict of each system of ``ranking`` (best first) against the next one down."""
    return [compare(rows, task, metric, a, b) for a, b in zip(ranking, ranking[1:])]


def ranking(table: Any, metric: str) -> list[str]:
    """The systems of a task table (index: models, the metric's column in paper units) best first, by the
    printed value's direction; ties and missing values last, ties broken by name (the board's order)."""
    spec = catalog.spec(metric)
    values = {str(m): float(v) for m, v in table[metric].items() if v == v}
    return sorted(values, key=lambda m: ((-values[m] if spec.higher_is_better else values[m]), m))


def collapsed(low: float, high: float) -> bool:
    """Whether an interval collapsed to a point (both ends finite and equal): the MOS cell says "cannot tell".

    >>> collapsed(4.62, 4.62), collapsed(3.9, 4.3), collapsed(float("nan"), float("nan"))
    (True, False, False)
    """
    return math.isfinite(low) and math.isfinite(high) and low == high


def verdict_counts(verdicts: Iterable[Verdict]) -> str:
    """``"1 separable, 0 not separable, 2 cannot tell"``: a column's summary in the verdicts' own words.

    >>> verdict_counts([Verdict("t", "psnr", "a", "b", CANNOT_TELL, "")])
    '0 separable, 0 not separable, 1 cannot tell'
    """
    words = [v.word for v in verdicts]
    return ", ".join(f"{words.count(w)} {w}" for w in VERDICTS)


__all__ = ["CANNOT_TELL", "COLLAPSED", "LEGEND", "MARKS", "NOT_SEPARABLE", "SEPARABLE", "VERDICTS", "Verdict",
           "collapsed", "compare", "neighbour_verdicts", "ranking", "verdict_counts", "word_of"]

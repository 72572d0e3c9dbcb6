"""One verdict per comparison of two systems: computed once, here, from the stored per-clip rows; every surface
(the board's marks, the Space's Findings, the report, ``hugvis leaderboard show``) shows this verdict in these words.

A comparison is two systems on one metric of one task, on the clips both have: the paired sign-flip test of
:mod:`hug_vis_dataset.statistics.paired` (actors as clusters, exact below 2^13 sign patterns, seed 0), on the
per-actor sums of :class:`~hug_vis_dataset.statistics.sums.ClipValues`. Its
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

from .. import catalog
from .rules import COLLAPSED, collapsed  # noqa: F401 (a collapsed interval reads as cannot tell)

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


def _direction(metric: str, higher_is_better: "bool | None", scale: "float | None") -> tuple[float, float]:
    """(sign, scale) of a measure: the catalog's for a metric; a MOS criterion (not a catalog metric) is higher
    is better on its own 1-5 scale."""
    if metric in catalog.METRIC_NAMES:
        spec = catalog.spec(metric)
        up = spec.higher_is_better if higher_is_better is None else higher_is_better
        return (1.0 if up else -1.0), (spec.paper_scale if scale is None else scale)
    return (1.0 if higher_is_better in (None, True) else -1.0), (1.0 if scale is None else scale)


def compare(rows: Any, task: str, metric: str, model: str, next_model: str,
            higher_is_better: "bool | None" = None, scale: "float | None" = None) -> Verdict:
    """The verdict of ``model`` against ``next_model`` on ``metric`` (the one place a verdict is computed).

    ``rows``: per-clip rows holding both systems' rows of the measure (``model``, ``clip_id``, ``value``, and
    ``status``/``metric``/``task`` when present; rows not ``ok`` are left out, as every mean leaves them out), or
    their :class:`~hug_vis_dataset.statistics.sums.ClipValues` (what a surface arranges once for many comparisons).
    ``higher_is_better``/``scale``: a measure outside the catalog (a MOS criterion: higher is better, scale 1).
    """
    from .paired import paired_test_of_sums
    from .sums import EvidenceError, matrix_of

    try:
        values = matrix_of(rows, task, metric)
    except EvidenceError as err:
        return Verdict(task, metric, model, next_model, CANNOT_TELL, str(err))
    if model not in values.systems or next_model not in values.systems:
        return Verdict(task, metric, model, next_model, CANNOT_TELL, "no clip scored for both")
    sign, unit = _direction(metric, higher_is_better, scale)
    _, sums, counts = values.paired(model, next_model, sign * unit)
    if not counts.sum():
        return Verdict(task, metric, model, next_model, CANNOT_TELL, "no clip scored for both")
    test = paired_test_of_sums(sums, counts, RESAMPLES, BOOTSTRAP, seed=SEED)
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


def neighbour_verdicts(rows: Any, task: str, metric: str, ranking: Sequence[str],
                       higher_is_better: "bool | None" = None) -> list[Verdict]:
    """The verdict of each system of ``ranking`` (best first) against the next one down (the rows arranged once)."""
    from .sums import EvidenceError, matrix_of

    try:
        values = matrix_of(rows, task, metric)
    except EvidenceError as err:
        return [Verdict(task, metric, a, b, CANNOT_TELL, str(err)) for a, b in zip(ranking, ranking[1:])]
    return [compare(values, task, metric, a, b, higher_is_better) for a, b in zip(ranking, ranking[1:])]


def ranking(table: Any, metric: str) -> list[str]:
    """The systems of a task table (index: models, the metric's column in paper units) best first, by the
    printed value's direction; ties and missing values last, ties broken by name (the board's order)."""
    spec = catalog.spec(metric)
    values = {str(m): float(v) for m, v in table[metric].items() if v == v}
    return sorted(values, key=lambda m: ((-values[m] if spec.higher_is_better else values[m]), m))


def verdict_counts(verdicts: Iterable[Verdict]) -> str:
    """``"1 separable, 0 not separable, 2 cannot tell"``: a column's summary in the verdicts' own words.

    >>> verdict_counts([Verdict("t", "psnr", "a", "b", CANNOT_TELL, "")])
    '0 separable, 0 not separable, 1 cannot tell'
    """
    words = [v.word for v in verdicts]
    return ", ".join(f"{words.count(w)} {w}" for w in VERDICTS)


__all__ = ["CANNOT_TELL", "COLLAPSED", "LEGEND", "MARKS", "NOT_SEPARABLE", "SEPARABLE", "VERDICTS", "Verdict",
           "collapsed", "compare", "neighbour_verdicts", "ranking", "verdict_counts", "word_of"]

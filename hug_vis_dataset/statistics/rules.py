"""The one set of rules every surface applies to stored rows before it shows a number, an interval or a verdict.

Each rule is stated once here, in the words every surface prints, and applied by the engine's functions
(:mod:`hug_vis_dataset.statistics`), never re-decided by a board, a report or a Space tab:

* **Small samples.** Clips of one actor are not independent, so every interval resamples actors and every test
  flips whole actors. With ``A`` actors the smallest two-sided sign-flip p-value is ``2 / 2^A`` (0.0625 at 5
  actors: nothing can be significant at 95%) and an actor bootstrap has only ``C(2A - 1, A)`` distinct resamples
  (3 at 2 actors). Below :data:`MIN_ACTORS` actors no interval, rank interval or SPA interval is a 95% interval:
  each is printed with the mark :data:`SMALL_SAMPLE_MARK` and the words of :func:`small_sample_words`, and no
  table draws a winner (:func:`rank_marks_allowed`). One actor has nothing to resample at all: no interval.
* **Collapsed intervals.** An interval whose ends coincide although two or more actors were resampled says
  nothing about uncertainty: the same mark, the words :data:`COLLAPSED`.
* **Comparison sets.** Rows are compared (ranked, tested, pooled into an analysis) only within one comparison set
  (:func:`comparison_set`): the paper's rows with full-grid runs, synthetic-grid runs among themselves, grid-subset
  runs among themselves, and a run that leaves clips of its grid out (a partial run) only with other partial runs
  (:data:`PARTIAL_RULE`); Table 4 per input setting; reference rows and built-in baselines never.
* **Missing is not failed.** A clip a run never predicted is *missing* (its coverage); a clip it predicted whose
  scoring failed is *failed* (its ``n_failed``). Neither enters a mean; the two are counted and named apart.

Example:
    >>> small_sample(2), small_sample(6)
    (True, False)
    >>> interval_mark(2, 0.1, 0.4), interval_mark(30, 0.2, 0.2), interval_mark(30, 0.1, 0.4)
    ('?', '?', '')
    >>> comparison_set("synthetic", partial=True)
    'synthetic (partial)'
"""

from __future__ import annotations

import math

#: Fewer actors than this cannot give a 95% interval or a test that can reject at 0.05 (see the module docstring).
MIN_ACTORS = 6
#: The test's size: a difference is called separable when its two-sided p-value is below this.
ALPHA = 0.05
#: Actor-bootstrap replicates of every interval a surface shows (the board, the report, the Findings): one number,
#: so a MOS or a task-table interval reads the same wherever it is printed.
N_BOOT = 1000
#: The mark every surface prints after an interval, a rank interval or a value that the statistics cannot back.
SMALL_SAMPLE_MARK = "?"
#: A collapsed interval's words (low = high although two or more actors were resampled).
COLLAPSED = "interval collapsed to a point: so few actors resample to the same mean; cannot tell"
#: The one rule for a run that leaves clips of its grid out (a partial upload, ``hugvis evaluate`` on a subset).
PARTIAL_RULE = ("A run that leaves clips of its grid out is scored and shown, and ranked only among runs that miss "
                "clips too (its means are over other clips), never among complete runs; analyses that pool the "
                "systems of a task leave it out.")
#: Which origins are ranked (and compared, and pooled) together.
RANK_POOLS: dict[str, str] = {"paper": "benchmark", "submitted": "benchmark", "synthetic": "synthetic",
                              "subset": "subset"}
PARTIAL_SUFFIX = " (partial)"


def small_sample(n_actors: int) -> bool:
    """Whether ``n_actors`` are too few for a 95% actor-clustered interval or a sign-flip test (below
    :data:`MIN_ACTORS`)."""
    return int(n_actors) < MIN_ACTORS


def distinct_resamples(n_actors: int) -> int:
    """How many different samples an actor bootstrap of ``n_actors`` can draw (multisets: ``C(2A - 1, A)``).

    >>> [distinct_resamples(a) for a in (1, 2, 3, 6, 30)][:4]
    [1, 3, 10, 462]
    """
    a = int(n_actors)
    return math.comb(2 * a - 1, a) if a > 0 else 0


def small_sample_words(n_actors: int) -> str:
    """Why an interval or test of ``n_actors`` actors means nothing at 95%, in the words every surface prints.

    >>> small_sample_words(2)
    '2 actors: fewer than 6, so no 95% interval or test (an actor bootstrap has 3 distinct resamples, the smallest sign-flip p is 0.5); cannot tell'
    """
    a = int(n_actors)
    if a < 2:
        return f"{a} actor: nothing to resample, no interval; cannot tell"
    return (f"{a} actors: fewer than {MIN_ACTORS}, so no 95% interval or test (an actor bootstrap has "
            f"{distinct_resamples(a):,} distinct resamples, the smallest sign-flip p is {min(1.0, 2.0 / 2 ** a):.3g}); "
            "cannot tell")


def collapsed(low: float, high: float) -> bool:
    """Whether an interval collapsed to a point (both ends finite and equal).

    >>> collapsed(4.62, 4.62), collapsed(3.9, 4.3), collapsed(float("nan"), float("nan"))
    (True, False, False)
    """
    return math.isfinite(low) and math.isfinite(high) and low == high


def interval_mark(n_actors: int, low: float = math.nan, high: float = math.nan) -> str:
    """:data:`SMALL_SAMPLE_MARK` when an interval of ``n_actors`` actors cannot be read as a 95% interval (too few
    actors, or collapsed), else ``""``."""
    return SMALL_SAMPLE_MARK if small_sample(n_actors) or collapsed(float(low), float(high)) else ""


def interval_caveat(n_actors: int, low: float = math.nan, high: float = math.nan) -> str:
    """The words behind :func:`interval_mark` (``""`` when there is no caveat).

    >>> interval_caveat(30, 1.0, 1.0)
    'interval collapsed to a point: so few actors resample to the same mean; cannot tell'
    """
    if small_sample(n_actors):
        return small_sample_words(n_actors)
    return COLLAPSED if collapsed(float(low), float(high)) else ""


def small_sample_legend(actor_counts) -> str:
    """The legend line of the :data:`SMALL_SAMPLE_MARK` for the actor counts a surface shows ("" when none is
    small).

    >>> small_sample_legend([2, 30])
    '? after an interval: 2 actors: fewer than 6, so no 95% interval or test (an actor bootstrap has 3 distinct resamples, the smallest sign-flip p is 0.5); cannot tell'
    """
    small = sorted({int(a) for a in actor_counts if small_sample(a) and int(a) >= 1})
    if not small:
        return ""
    return f"{SMALL_SAMPLE_MARK} after an interval: " + "; ".join(small_sample_words(a) for a in small)


def comparison_set(origin: str, partial: bool = False, input_setting: str = "") -> str:
    """The comparison set of a row: rows are ranked, tested and pooled only within one (module docstring).

    >>> comparison_set("paper"), comparison_set("submitted"), comparison_set("submitted", True, "Text")
    ('benchmark', 'benchmark', 'benchmark (partial) | Text')
    """
    name = RANK_POOLS.get(origin, RANK_POOLS["subset"]) + (PARTIAL_SUFFIX if partial else "")
    return f"{name} | {input_setting}" if input_setting else name


def rank_marks_allowed(word: "str | None") -> bool:
    """Whether a row may carry a best / second mark given its verdict against the next-ranked row: only a separable
    one, or one with no verdict at all (a paper row: no per-clip rows to test)."""
    return word is None or word == "separable"


__all__ = ["ALPHA", "COLLAPSED", "MIN_ACTORS", "N_BOOT", "PARTIAL_RULE", "PARTIAL_SUFFIX", "RANK_POOLS", "SMALL_SAMPLE_MARK",
           "collapsed", "comparison_set", "distinct_resamples", "interval_caveat", "interval_mark",
           "rank_marks_allowed", "small_sample", "small_sample_legend", "small_sample_words"]

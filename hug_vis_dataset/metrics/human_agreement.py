"""Automatic metrics and human judgment jointly, with their uncertainty (the WMT meta-evaluation, on actors).

A **judge** is people on one criterion (MOS ratings or pairwise answers) or one automatic metric. It gives
every system a per-clip value oriented so that higher is better (a lower-is-better metric is negated). For
a pair of systems ``(i, j)`` the per-clip differences ``d_c = v_i(c) - v_j(c)`` over the clips both have are
summed per actor, ``D_ij[a]`` (pairwise answers: ``d_c`` = the mean over the clip's answers of ``+1`` for
``i`` better, ``0`` tie, ``-1`` worse). Clips of one actor share a face, a voice and a performance, so, as
in every statistic of the toolkit, actors are the resampling unit.

* **Pairwise p-values** (Thompson et al. 2024, mt-metrics-eval ``pce.py``, with actors as clusters):
  under "no difference" a whole actor's differences flip sign at once, ``T* = sum_a s_a D_ij[a]``; the
  sign patterns are every one of the ``2^A`` when that is at most ``n_resamples``, else ``n_resamples``
  drawn with a fixed seed (:func:`hug_vis_dataset.metrics.significance.sign_patterns`), the same
  patterns for every pair (as ``pce.py`` reuses its mask). ``p_ij = P(T* > T) + P(T* = T) / 2``, the
  one-sided p-value that ``i`` is better than ``j``. ``pce.py`` counts ``T* >= T``; the mid-p makes
  ``p_ji = 1 - p_ij`` exactly, so SPA does not depend on which system of a pair is named first. The two
  agree whenever human and metric put the same mass on ``T* = T`` (with exact enumeration and no
  coinciding patterns both put ``2^-A``), and they differ where ratings are discrete enough to tie.
* **Soft pairwise accuracy** ``SPA = 1 - mean_{i<j} |p^h_ij - p^m_ij|`` over the pairs both judges have;
  **top-k SPA** over the pairs with at least one system in the people's top k (ties at the k-th all in).
* **Significance and discordance**: the two-sided sign-flip p-value of the same null,
  ``min(1, 2 min(P(T* <= T), P(T* >= T)))`` (``+1`` on both counts for drawn patterns), exactly
  :func:`~hug_vis_dataset.metrics.significance.sign_flip_p_value`; a pair is **discordant** when people and
  the metric both have ``p < 1 - level`` and their differences have opposite signs. With ``A`` actors the
  smallest two-sided p is ``2 / 2^A``: below 6 actors nothing is significant at 95%, and the results say so.
* **Intervals**: the actor bootstrap of :func:`hug_vis_dataset.stats.cluster_draws` (the draws of every
  interval of the toolkit), one draw for all judges at once: a drawn actor brings its clips of every system
  and every judge. Per replicate the p-values are recomputed on the drawn actors with the same sign patterns
  (the k-th drawn actor takes column k). Rank intervals: the ``(1 - level) / 2`` and ``(1 + level) / 2``
  quantiles of the replicates' ranks (lower and higher order statistic, so they are ranks).
* **Tie-calibrated pairwise accuracy** (Deutsch et al. 2023, "Ties matter"): over all system pairs,
  ``acc_eq = (concordant + tied by both) / pairs``, where people tie a pair when their scores are equal and
  the metric when ``|m_i - m_j| <= epsilon``, ``epsilon`` chosen to maximise ``acc_eq`` (the smallest such);
  Kendall's tau-b beside it.
* **Is metric B better aligned than metric A?** PERM-BOTH (Deutsch et al. 2021, mt-metrics-eval
  ``stats.PermutationSigDiff``) with actors as the unit: both metrics z-scored over their per-clip values
  (SPA does not change), then per resample each actor's values come from A or from B (all ``2^A`` choices
  when at most ``n_perm``, else ``n_perm`` drawn with ``default_rng([seed, 1])``), giving two hybrid
  metrics; ``p = P(SPA(h2) - SPA(h1) >= SPA(B) - SPA(A))`` (``+1`` on both counts for drawn patterns).

Example:
    >>> import numpy as np
    >>> sums = np.array([[1.0, 2.0, 0.5]])            # one pair, three actors: T = 3.5
    >>> one, two = pair_p_values(sums, *sign_patterns(3))
    >>> float(one[0]), float(two[0])                 # of 8 patterns none is above T, 1 equals it: 0.5 / 8
    (0.0625, 0.25)
    >>> soft_pairwise_accuracy(np.array([0.1, 0.9]), np.array([0.3, 0.6]))   # 1 - (0.2 + 0.3) / 2
    0.75
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..statistics.rules import N_BOOT
from ..statistics.paired import (pair_p_values, pair_p_values_batch, pair_p_values_complement,  # noqa: F401
                                 sign_patterns)

__all__ = ["Judge", "JointResult", "pair_index", "pair_p_values", "soft_pairwise_accuracy", "tie_calibrated_accuracy",
           "kendall_tau_b", "ranks", "joint_agreement", "sign_patterns", "judge_from_values", "judge_from_answers"]

DEFAULT_LEVEL = 0.95
DEFAULT_RESAMPLES = 1000  # pce.py's num_permutations
DEFAULT_BOOT = N_BOOT  # every surface's replicates (statistics.rules)
DEFAULT_PERM = 1000  # mt-metrics-eval PermutationSigDiff k


def pair_index(n_systems: int) -> list[tuple[int, int]]:
    """The system pairs ``(i, j)``, ``i < j``, in the order every pair array uses.

    Example:
        >>> pair_index(3)
        [(0, 1), (0, 2), (1, 2)]
    """
    return [(i, j) for i in range(n_systems) for j in range(i + 1, n_systems)]


def soft_pairwise_accuracy_rows(p_human: np.ndarray, p_metric: np.ndarray, mask: "np.ndarray | None" = None
                                ) -> np.ndarray:
    """:func:`soft_pairwise_accuracy` of every row of ``(B, P)`` arrays (``mask`` ``(P,)`` or ``(B, P)``)."""
    h, m = np.asarray(p_human, dtype=float), np.asarray(p_metric, dtype=float)
    keep = np.isfinite(h) & np.isfinite(m)
    if mask is not None:
        keep &= np.asarray(mask, dtype=bool)
    n = keep.sum(axis=1)
    total = np.where(keep, np.abs(h - m), 0.0).sum(axis=1)
    return np.where(n > 0, 1.0 - total / np.maximum(n, 1), np.nan)


def soft_pairwise_accuracy(p_human: np.ndarray, p_metric: np.ndarray, mask: "np.ndarray | None" = None) -> float:
    """``1 - mean |p^h - p^m|`` over the pairs (in ``mask``) where both p-values exist; NaN when none.

    Example:
        >>> soft_pairwise_accuracy(np.array([0.0, 1.0, np.nan]), np.array([0.0, 0.5, 0.2]))
        0.75
    """
    h, m = np.asarray(p_human, dtype=float), np.asarray(p_metric, dtype=float)
    keep = np.isfinite(h) & np.isfinite(m)
    if mask is not None:
        keep &= np.asarray(mask, dtype=bool)
    return float(1.0 - np.abs(h[keep] - m[keep]).mean()) if keep.any() else math.nan


def tie_calibrated_accuracy(human: Sequence[float], metric: Sequence[float]) -> tuple[float, float]:
    """Deutsch et al. (2023) ``acc_eq`` of system scores with the metric's tie threshold that maximises it.

    A pair is right when both order it the same way, or people tie it (equal scores) and the metric ties it
    (``|m_i - m_j| <= epsilon``). ``epsilon`` runs over 0 and every ``|m_i - m_j|`` (acc_eq only changes
    there); the smallest maximiser is returned. Systems with a NaN score are left out.

    Returns:
        ``(acc_eq, epsilon)``; NaN, NaN with fewer than two systems.

    Example:
        >>> tie_calibrated_accuracy([3.0, 2.0, 2.0], [1.0, 0.55, 0.5])   # tying 0.55 ~ 0.5 wins the tied pair
        (1.0, 0.050000000000000044)
        >>> tie_calibrated_accuracy([3.0, 2.0, 1.0], [1.0, 2.0, 3.0])
        (0.0, 0.0)
    """
    h, m = np.asarray(human, dtype=float), np.asarray(metric, dtype=float)
    keep = np.isfinite(h) & np.isfinite(m)
    h, m = h[keep], m[keep]
    if h.size < 2:
        return math.nan, math.nan
    i, j = np.triu_indices(h.size, 1)
    dh, dm = h[i] - h[j], m[i] - m[j]
    right_untied = (dh != 0) & (np.sign(dm) == np.sign(dh)) & (dm != 0)
    right_tied = dh == 0
    order = np.argsort(np.abs(dm), kind="stable")
    gaps = np.abs(dm)[order]
    # Tying the pairs up to position k changes their contribution from right_untied to right_tied.
    gained = np.cumsum((right_tied.astype(int) - right_untied.astype(int))[order])
    base = int(right_untied.sum())
    last = np.r_[gaps[1:] != gaps[:-1], True]  # a threshold ties every pair with an equal gap at once
    correct = base + gained[last]
    thresholds = gaps[last]
    # epsilon below the smallest gap ties nothing (epsilon = 0 when no gap is 0).
    best_tied = int(np.argmax(correct))
    if gaps[0] > 0 and base >= correct[best_tied]:
        return base / dh.size, 0.0
    return float(correct[best_tied] / dh.size), float(thresholds[best_tied])


def kendall_tau_b(human: Sequence[float], metric: Sequence[float]) -> float:
    """Kendall's tau-b of system scores (``scipy.stats.kendalltau``), NaN when undefined.

    Example:
        >>> round(kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]), 4)
        0.6667
    """
    from scipy.stats import kendalltau

    h, m = np.asarray(human, dtype=float), np.asarray(metric, dtype=float)
    keep = np.isfinite(h) & np.isfinite(m)
    if keep.sum() < 2 or np.ptp(h[keep]) == 0 or np.ptp(m[keep]) == 0:
        return math.nan
    return float(kendalltau(h[keep], m[keep]).statistic)


def ranks(scores: Sequence[float]) -> np.ndarray:
    """Rank 1 = best (highest); tied systems share the best of their ranks; NaN stays NaN.

    Example:
        >>> ranks([0.2, 0.9, 0.9, float("nan")]).tolist()
        [3.0, 1.0, 1.0, nan]
    """
    from scipy.stats import rankdata

    x = np.asarray(scores, dtype=float)
    out = np.full(x.shape, np.nan)
    keep = np.isfinite(x)
    out[keep] = rankdata(-x[keep], method="min")
    return out


def ranks_rows(scores: np.ndarray) -> np.ndarray:
    """:func:`ranks` of every row of a ``(B, S)`` array (rows without NaN at once)."""
    from scipy.stats import rankdata

    x = np.asarray(scores, dtype=float)
    out = np.full(x.shape, np.nan)
    whole = np.isfinite(x).all(axis=1)
    if whole.any():
        out[whole] = rankdata(-x[whole], method="min", axis=1)
    for b in np.flatnonzero(~whole):
        out[b] = ranks(x[b])
    return out


def _tied_top(scores: np.ndarray, k: int) -> np.ndarray:
    """Systems ranked <= k (ties at the k-th all in), as a mask."""
    r = ranks(scores)
    return np.isfinite(r) & (r <= k)


# ----------------------------------------------------------------------------- judges
@dataclass
class Judge:
    """One judge's evidence over ``S`` systems and ``A`` actors, as per-actor sums.

    Attributes:
        name: the metric or ``"people"``.
        pair_sums: ``(P, A)`` per-actor sums of per-clip differences of each pair (:func:`pair_index`
            order); NaN rows for pairs without a common clip.
        system_sums, system_counts: ``(S, A)``: sums and counts of the per-clip values (means as scores).
        difference: ``(P,)`` mean per-clip difference of each pair (positive: the first system better;
            answers: the mean of +1 / 0 / -1), NaN without common clips.
        wins: ``(A, S, S)`` wins per actor (pairwise answers), or None.
        fit: with ``wins``: the function of a win matrix giving the system scores (the Bradley-Terry fit
            of :mod:`hug_vis_dataset.studies.bradley_terry`, given by the caller).
        scale: the standard deviation of the per-clip values (PERM-BOTH z-scores by it).
        n_clips: clips with a value.
    """

    name: str
    pair_sums: np.ndarray
    system_sums: np.ndarray
    system_counts: np.ndarray
    difference: np.ndarray
    wins: "np.ndarray | None" = None
    fit: "Callable[[np.ndarray], np.ndarray] | None" = None
    scale: float = 1.0
    n_clips: int = 0
    fit_batch: "Callable[[np.ndarray], np.ndarray] | None" = None

    @property
    def n_systems(self) -> int:
        return int(self.system_sums.shape[0])

    def scores(self, picks: "np.ndarray | None" = None) -> np.ndarray:
        """System scores on the actors ``picks`` (all when None): means, or ``fit`` of the summed wins."""
        if self.wins is not None:
            return np.asarray(self.fit(self.wins.sum(axis=0) if picks is None else self.wins[picks].sum(axis=0)))
        sums = self.system_sums if picks is None else self.system_sums[:, picks]
        counts = self.system_counts if picks is None else self.system_counts[:, picks]
        total = counts.sum(axis=1)
        return np.where(total > 0, sums.sum(axis=1) / np.where(total > 0, total, 1), np.nan)

    def sums(self, picks: "np.ndarray | None" = None) -> np.ndarray:
        """The pair sums on the actors ``picks`` (column k = the k-th drawn actor)."""
        return self.pair_sums if picks is None else self.pair_sums[:, picks]

    def scores_of_weights(self, weights: np.ndarray) -> np.ndarray:
        """``(B, S)``: the scores of every replicate, from how often each actor was drawn (``(B, A)``): weighted
        sums of the per-actor sums, or the fit of the weighted wins (``fit_batch`` when given, else one at a time)."""
        w = np.asarray(weights, dtype=np.float64)
        if self.wins is not None:
            stacked = np.einsum("ba,aij->bij", w, self.wins)
            if self.fit_batch is not None:
                return np.asarray(self.fit_batch(stacked))
            return np.stack([np.asarray(self.fit(m)) for m in stacked]) if len(stacked) else np.zeros((0, self.n_systems))
        sums, counts = w @ self.system_sums.T, w @ self.system_counts.T
        return np.where(counts > 0, sums / np.where(counts > 0, counts, 1), np.nan)


def _sum_by_actor(values: np.ndarray, actors: np.ndarray, n_actors: int) -> np.ndarray:
    # bincount adds in index order: the sum does not depend on how the rows came in once clips are sorted.
    return np.bincount(actors, weights=values, minlength=n_actors)


def judge_from_values(name: str, values: np.ndarray, actors: np.ndarray, n_actors: int) -> Judge:
    """A judge from per-clip values ``(S, C)`` (NaN where a system has no value) and each clip's actor.

    Example:
        >>> j = judge_from_values("m", np.array([[3.0, 1.0], [1.0, np.nan]]), np.array([0, 1]), 2)
        >>> j.pair_sums.tolist(), j.scores().tolist(), j.difference.tolist()
        ([[2.0, 0.0]], [2.0, 1.0], [2.0])
    """
    v = np.asarray(values, dtype=np.float64)
    a = np.asarray(actors, dtype=np.int64)
    finite = np.isfinite(v)
    n_sys = v.shape[0]
    system_sums = np.stack([_sum_by_actor(v[s][finite[s]], a[finite[s]], n_actors) for s in range(n_sys)]) \
        if n_sys else np.zeros((0, n_actors))
    system_counts = np.stack([np.bincount(a[finite[s]], minlength=n_actors).astype(float) for s in range(n_sys)]) \
        if n_sys else np.zeros((0, n_actors))
    pairs = pair_index(n_sys)
    pair_sums = np.full((len(pairs), n_actors), np.nan)
    mean_diff = np.full(len(pairs), np.nan)
    for k, (i, j) in enumerate(pairs):
        common = finite[i] & finite[j]
        if common.any():
            d = v[i][common] - v[j][common]
            pair_sums[k] = _sum_by_actor(d, a[common], n_actors)
            mean_diff[k] = pair_sums[k].sum() / common.sum()
    pooled = v[finite]
    scale = float(pooled.std()) if pooled.size > 1 and pooled.std() > 0 else 1.0
    return Judge(name, pair_sums, system_sums, system_counts, mean_diff, scale=scale, n_clips=int(finite.sum()))


def judge_from_answers(name: str, first: np.ndarray, second: np.ndarray, outcome: np.ndarray, clips: np.ndarray,
                       actors: np.ndarray, n_systems: int, n_actors: int,
                       fit: "Callable[[np.ndarray], np.ndarray] | None" = None,
                       fit_batch: "Callable[[np.ndarray], np.ndarray] | None" = None) -> Judge:
    """A judge from pairwise answers: ``first``/``second`` system indices, ``outcome`` 1 / 0.5 / 0 for the
    first better / tie / worse, the clip index and actor of each answer. A pair's per-clip difference is the
    mean over that clip's answers of ``2 outcome - 1`` (oriented to the lower system index). ``fit`` gives the
    system scores from a win matrix (default: each system's share of wins); ``fit_batch`` the same of a stack of
    win matrices (the bootstrap's replicates at once).

    Example:
        >>> j = judge_from_answers("people", np.array([0, 1]), np.array([1, 0]), np.array([1.0, 0.5]),
        ...                        np.array([0, 0]), np.array([0, 0]), 2, 1)
        >>> j.pair_sums.tolist(), j.wins.sum(axis=0).tolist()   # clip 0: mean of +1 and 0
        ([[0.5]], [[0.0, 1.5], [0.5, 0.0]])
    """
    a_idx, b_idx = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    out = np.asarray(outcome, dtype=np.float64)
    clip, actor = np.asarray(clips, dtype=np.int64), np.asarray(actors, dtype=np.int64)
    lo, hi = np.minimum(a_idx, b_idx), np.maximum(a_idx, b_idx)
    oriented = np.where(a_idx == lo, 2.0 * out - 1.0, 1.0 - 2.0 * out)
    pairs = pair_index(n_systems)
    pair_sums = np.full((len(pairs), n_actors), np.nan)
    mean_diff = np.full(len(pairs), np.nan)
    for k, (i, j) in enumerate(pairs):
        mine = (lo == i) & (hi == j)
        if not mine.any():
            continue
        keys = clip[mine]
        # Per clip: the mean of its answers; clips in index order.
        uniq, inverse = np.unique(keys, return_inverse=True)
        per_clip = np.bincount(inverse, weights=oriented[mine]) / np.bincount(inverse)
        clip_actor = np.zeros(uniq.size, dtype=np.int64)
        clip_actor[inverse] = actor[mine]
        pair_sums[k] = _sum_by_actor(per_clip, clip_actor, n_actors)
        mean_diff[k] = per_clip.mean()
    wins = np.zeros((n_actors, n_systems, n_systems))
    np.add.at(wins, (actor, a_idx, b_idx), out)
    np.add.at(wins, (actor, b_idx, a_idx), 1.0 - out)
    empty = np.zeros((n_systems, n_actors))
    return Judge(name, pair_sums, empty, empty, mean_diff, wins=wins, fit=fit or _win_share,
                 n_clips=int(np.unique(clip).size), fit_batch=fit_batch if fit is not None else _win_share_batch)


def _win_share(wins: np.ndarray) -> np.ndarray:
    total = wins.sum(axis=1) + wins.sum(axis=0)
    return np.where(total > 0, wins.sum(axis=1) / np.where(total > 0, total, 1), np.nan)


def _win_share_batch(wins: np.ndarray) -> np.ndarray:
    total = wins.sum(axis=2) + wins.sum(axis=1)
    return np.where(total > 0, wins.sum(axis=2) / np.where(total > 0, total, 1), np.nan)


# ----------------------------------------------------------------------------- everything at once
@dataclass
class JudgeResult:
    """One judge's system scores with intervals and ranks, and its pairs' differences and p-values."""

    name: str
    scores: np.ndarray
    low: np.ndarray
    high: np.ndarray
    rank: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    difference: np.ndarray
    p_one_sided: np.ndarray
    p_two_sided: np.ndarray


@dataclass
class MetricAgreement:
    """One metric against the people: SPA (all pairs and top-k) with intervals, tau-b, acc_eq, discordance."""

    name: str
    spa: float
    spa_low: float
    spa_high: float
    spa_top_k: float
    spa_top_k_low: float
    spa_top_k_high: float
    kendall_tau_b: float
    acc_eq: float
    acc_eq_epsilon: float
    n_pairs: int
    discordant: np.ndarray  # (P,) bool


@dataclass
class JointResult:
    """What :func:`joint_agreement` measures (pairs in :func:`pair_index` order of ``n_systems``)."""

    n_systems: int
    n_actors: int
    exact: bool
    n_resamples: int
    top_k: int
    in_top_k: np.ndarray  # (P,) bool: a pair with a system in the people's top k
    level: float
    human: JudgeResult
    metrics: list[JudgeResult]
    agreement: list[MetricAgreement]
    comparisons: list[dict]
    note: str = ""

    @property
    def smallest_p(self) -> float:
        """The smallest two-sided sign-flip p-value this many actors allow."""
        return min(1.0, 2.0 / 2.0 ** self.n_actors) if self.n_actors else math.nan


def _interval(replicates: np.ndarray, level: float, n_actors: int) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval per column (NaN where no replicate is finite, or with fewer than two actors)."""
    reps = np.asarray(replicates, dtype=float)
    if n_actors < 2 or reps.size == 0:
        shape = reps.shape[1:] if reps.ndim > 1 else ()
        return np.full(shape, np.nan), np.full(shape, np.nan)
    lo_q, hi_q = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column is NaN, said by the value
        return np.nanpercentile(reps, lo_q, axis=0), np.nanpercentile(reps, hi_q, axis=0)


def _rank_interval(replicate_ranks: np.ndarray, level: float, n_actors: int) -> tuple[np.ndarray, np.ndarray]:
    reps = np.asarray(replicate_ranks, dtype=float)
    if n_actors < 2 or reps.size == 0:
        return np.full(reps.shape[1:], np.nan), np.full(reps.shape[1:], np.nan)
    lo_q, hi_q = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return (np.nanpercentile(reps, lo_q, axis=0, method="lower"),
                np.nanpercentile(reps, hi_q, axis=0, method="higher"))


def joint_agreement(human: Judge, metrics: Sequence[Judge], n_actors: int, top_k: int = 3,
                    level: float = DEFAULT_LEVEL, n_resamples: int = DEFAULT_RESAMPLES, n_boot: int = DEFAULT_BOOT,
                    n_perm: int = DEFAULT_PERM, seed: int = 0, compare: bool = True) -> JointResult:
    """Every measure of the module docstring for one human judge and the metrics of the same systems.

    Args:
        human: people's judge (:func:`judge_from_values` of per-clip MOS, or :func:`judge_from_answers`).
        metrics: the automatic metrics' judges, values oriented (higher better), same systems and actors.
        n_actors: ``A``, the actors every judge's columns index (sorted actor ids).
        top_k: the people's top k of top-k SPA.
        level: interval coverage; significance at ``1 - level`` (two-sided).
        n_resamples: sign patterns drawn when ``2^A`` is more than this (else all, exact).
        n_boot: actor-bootstrap replicates of the intervals (0: none).
        n_perm: PERM-BOTH resamples (exact when ``2^A`` is at most this).
        seed: the seed of the sign patterns, the bootstrap and PERM-BOTH (same seed, same result).
        compare: run PERM-BOTH for every pair of metrics (not with ``n_perm < 1``).
    """
    from ..statistics.basics import cluster_draws
    from ..statistics.draws import draw_weights

    n_sys = human.n_systems
    signs, exact = sign_patterns(n_actors, n_resamples, seed)
    judges = [human, *metrics]
    point_scores = [j.scores() for j in judges]
    point_p = [pair_p_values(j.sums(), signs, exact) for j in judges]
    pairs = pair_index(n_sys)
    top = _tied_top(point_scores[0], top_k)
    in_top = np.array([bool(top[i] or top[j]) for i, j in pairs], dtype=bool)
    boot_scores = [np.zeros((0, n_sys)) for _ in judges]
    boot_spa = [np.zeros(0) for _ in metrics]
    boot_spa_top = [np.zeros(0) for _ in metrics]
    if n_boot and n_actors >= 2:
        # Every replicate at once: scores from the draws' weights, p-values from the drawn actors' sums in draw
        # order (the k-th drawn actor takes column k of the sign patterns), one matrix product per block.
        picks = np.stack(list(cluster_draws(n_actors, n_boot, seed)))
        weights = draw_weights(n_actors, n_boot, seed)
        boot_scores = [j.scores_of_weights(weights) for j in judges]
        boot_ranks = ranks_rows(boot_scores[0])
        top_b = np.isfinite(boot_ranks) & (boot_ranks <= top_k)
        first, second = np.array([i for i, _ in pairs], dtype=np.int64), np.array([j for _, j in pairs], dtype=np.int64)
        in_top_b = top_b[:, first] | top_b[:, second] if pairs else np.zeros((n_boot, 0), dtype=bool)
        p_h = pair_p_values_batch(np.moveaxis(human.pair_sums[:, picks], 1, 0), signs, exact)[0]
        for k, metric in enumerate(metrics):
            p_m = pair_p_values_batch(np.moveaxis(metric.pair_sums[:, picks], 1, 0), signs, exact)[0]
            boot_spa[k] = soft_pairwise_accuracy_rows(p_h, p_m)
            boot_spa_top[k] = soft_pairwise_accuracy_rows(p_h, p_m, in_top_b)
    results = []
    for k, judge in enumerate(judges):
        reps = boot_scores[k]
        low, high = _interval(reps, level, n_actors) if len(reps) else (np.full(n_sys, np.nan),) * 2
        rank_reps = ranks_rows(reps) if len(reps) else np.zeros((0, n_sys))
        r_low, r_high = _rank_interval(rank_reps, level, n_actors) if len(rank_reps) else (np.full(n_sys, np.nan),) * 2
        results.append(JudgeResult(judge.name, point_scores[k], low, high, ranks(point_scores[k]), r_low, r_high,
                                   judge.difference, *point_p[k]))
    alpha = 1.0 - level
    h = results[0]
    agreements = []
    for k, metric in enumerate(metrics):
        m = results[k + 1]
        spa = soft_pairwise_accuracy(h.p_one_sided, m.p_one_sided)
        spa_top = soft_pairwise_accuracy(h.p_one_sided, m.p_one_sided, in_top)
        lo, hi = _interval(boot_spa[k][:, None], level, n_actors) if len(boot_spa[k]) else ([math.nan],) * 2
        tlo, thi = (_interval(boot_spa_top[k][:, None], level, n_actors) if len(boot_spa_top[k])
                    else ([math.nan],) * 2)
        discordant = ((h.p_two_sided < alpha) & (m.p_two_sided < alpha)
                      & (np.sign(h.difference) * np.sign(m.difference) < 0))
        acc, eps = tie_calibrated_accuracy(h.scores, m.scores)
        agreements.append(MetricAgreement(
            metric.name, spa, float(lo[0]), float(hi[0]), spa_top, float(tlo[0]), float(thi[0]),
            kendall_tau_b(h.scores, m.scores), acc, eps,
            int((np.isfinite(h.p_one_sided) & np.isfinite(m.p_one_sided)).sum()), discordant))
    comparisons = []
    if compare and n_perm >= 1:
        for a in range(len(metrics)):
            for b in range(a + 1, len(metrics)):
                comparisons.append(perm_both(human, metrics[a], metrics[b], signs, exact, n_actors, n_perm, seed,
                                             point_p[0][0]))
    note = ""
    if n_actors < 2:
        note = f"{n_actors} actor(s): no interval and no significance"
    elif 2.0 / 2.0 ** n_actors >= alpha:
        note = (f"{n_actors} actors cannot reach p < {alpha:.2g} (smallest two-sided p = {2.0 / 2.0 ** n_actors:.3g}): "
                "no pair can be discordant")
    return JointResult(n_sys, n_actors, exact, signs.shape[0], top_k, in_top, level, results[0], results[1:],
                       agreements, comparisons, note)


def perm_both(human: Judge, metric_a: Judge, metric_b: Judge, signs: np.ndarray, exact: bool, n_actors: int,
              n_perm: int = DEFAULT_PERM, seed: int = 0, p_human: "np.ndarray | None" = None) -> dict:
    """PERM-BOTH: the p-value that ``metric_b`` agrees with people better than ``metric_a`` (SPA), actors
    swapped between the two z-scored metrics (module docstring).

    Returns:
        ``{"metric_a", "metric_b", "spa_a", "spa_b", "delta" (= spa_b - spa_a), "p_value", "exact",
        "n_permutations"}``.
    """
    if p_human is None:
        p_human = pair_p_values(human.sums(), signs, exact)[0]
    za = np.nan_to_num(metric_a.pair_sums / metric_a.scale)
    zb = np.nan_to_num(metric_b.pair_sums / metric_b.scale)
    missing_a, missing_b = np.isnan(metric_a.pair_sums).all(axis=1), np.isnan(metric_b.pair_sums).all(axis=1)
    both = ~(missing_a | missing_b)  # pairs both metrics have: the hybrids are defined there

    def spa(sums: np.ndarray) -> float:
        p = pair_p_values(sums, signs, exact)[0]
        return soft_pairwise_accuracy(p_human, p, both)

    spa_a, spa_b = spa(za), spa(zb)
    delta = spa_b - spa_a
    if 2 ** n_actors <= n_perm:
        swaps = ((np.arange(2 ** n_actors)[:, None] >> np.arange(n_actors)[None, :]) & 1).astype(float)
        perm_exact = True
    else:
        swaps = np.random.default_rng([seed, 1]).integers(0, 2, size=(n_perm, n_actors)).astype(float)
        perm_exact = False
    # Every hybrid at once: (n, P, A) stacks, their p-values in blocks of one matrix product each. The second
    # hybrid is the first's complement (h1 + h2 = za + zb, actor by actor), so its null distribution is the
    # fixed S (za + zb) minus the first's: one product serves both.
    h1 = za[None] * (1.0 - swaps[:, None, :]) + zb[None] * swaps[:, None, :]
    p1, p2 = pair_p_values_complement(h1, za + zb, signs, exact)
    spa1 = soft_pairwise_accuracy_rows(p_human[None], p1, both)
    spa2 = soft_pairwise_accuracy_rows(p_human[None], p2, both)
    count = int(np.count_nonzero(spa2 - spa1 >= delta - 1e-12))
    adjust = 0 if perm_exact else 1
    p_value = (count + adjust) / (len(swaps) + adjust) if np.isfinite(delta) else math.nan
    return {"metric_a": metric_a.name, "metric_b": metric_b.name, "spa_a": spa_a, "spa_b": spa_b, "delta": delta,
            "p_value": p_value, "exact": perm_exact, "n_permutations": int(len(swaps))}

"""Paired comparisons of two systems over clips, actors as clusters: the sign-flip test and the paired bootstrap.

Two systems scored on the same clips are compared clip by clip: ``d_c = s * (a_c - b_c)`` with
``s = +1`` when higher is better and ``-1`` otherwise, so ``d > 0`` means the first system is better.
The statistic is the mean difference over the clips both systems have (``D = sum_c d_c / n``).
Clips of one actor share a face, a voice and a style, so they are not independent: both procedures
work on actors, never on single clips.

* **Permutation (sign-flip) test**: under "no difference" the two systems' labels are exchangeable
  within every clip, and because clips of an actor are dependent, the swap is made for a whole actor
  at once: each actor's sum of differences ``S_a`` keeps or flips its sign. With ``2^A`` sign
  patterns at most ``n_resamples`` (A actors) the null distribution is enumerated exactly;
  otherwise ``n_resamples`` random patterns are drawn. The two-sided p-value follows
  ``scipy.stats.permutation_test``: ``min(1, 2 min(P(D* >= D), P(D* <= D)))`` with comparisons
  widened by ``100 eps |D|``, and ``(count + 1) / (n_resamples + 1)`` for random patterns.
* **Paired bootstrap**: the percentile interval of ``D`` when actors are drawn with replacement,
  exactly the draws of every interval of the toolkit (:func:`~hug_vis_dataset.statistics.draws.draw_weights`:
  sorted actor ids, ``default_rng(seed).integers(0, A, A)`` per replicate), computed from per-actor sums.

Two neighbours are **not distinguishable at 95%** when the permutation p-value is at least 0.05.
With one actor there is no between-actor variation to resample: the test says n/a (NaN interval
and p-value), never a zero-width interval. With A actors the smallest attainable two-sided p-value
is ``2 / 2^A``; below 6 actors that is at least 0.0625, so no gap could ever be called real at 95%:
the verdict is n/a then too (the interval and p-value are still reported).

Example:
    >>> d = [0.5, 0.7, 0.4, 0.6, -0.1, 0.2]; actors = [1, 1, 2, 2, 3, 3]
    >>> r = paired_test(d, actors, n_resamples=1000, seed=0)
    >>> round(r.mean_difference, 4), r.p_value, r.n_actors   # 3 actors: all 8 sign patterns
    (0.3833, 0.25, 3)
    >>> r.distinguishable, r.note   # 3 actors can never give p < 0.05
    (None, 'n/a: 3 actors cannot reach p < 0.05 (smallest p = 0.25)')
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from .draws import check_level, draw_weights

DEFAULT_LEVEL = 0.95


class SignificanceInputError(ValueError):
    """Rows that cannot be compared (no value column, unequal lengths, no common clips)."""


@dataclass(frozen=True)
class PairedTest:
    """A paired comparison over clips, actors as clusters.

    Attributes:
        mean_difference: ``D``, positive when the first system is better.
        ci_low, ci_high: percentile bootstrap interval of ``D`` (NaN when n/a).
        p_value: two-sided sign-flip permutation p-value (NaN when n/a).
        n_clips, n_actors: what was compared.
        level: interval coverage (and ``1 - level`` is the test's size).
        exact: the permutation null was enumerated in full.
        note: why the test is n/a, else empty.
    """

    mean_difference: float
    ci_low: float
    ci_high: float
    p_value: float
    n_clips: int
    n_actors: int
    level: float
    exact: bool
    note: str = ""

    @property
    def smallest_p_value(self) -> float:
        """The smallest two-sided p-value the sign-flip test can give with this many actors."""
        return min(1.0, 2.0 / 2.0 ** self.n_actors) if self.n_actors else math.nan

    @property
    def distinguishable(self) -> "bool | None":
        """True / False at ``1 - level``; None when the test is n/a (see :attr:`note`)."""
        if self.note or not math.isfinite(self.p_value):
            return None
        return bool(self.p_value < 1.0 - self.level)


def actor_sums(differences: Sequence[float], clusters: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums and counts of the differences, clusters in sorted order (what every paired statistic
    needs), summed in a fixed order so the result does not depend on row order.

    Example:
        >>> [a.tolist() for a in actor_sums([1.0, 2.0, 4.0], [2, 1, 2])]
        [[2.0, 5.0], [1.0, 2.0]]
    """
    d = np.asarray(differences, dtype=np.float64).ravel()
    labels = np.asarray(list(clusters), dtype=object)
    if d.shape != labels.shape:
        raise SignificanceInputError(f"{d.size} differences but {labels.size} cluster labels")
    if not np.isfinite(d).all():
        raise SignificanceInputError("differences must be finite (drop failed clips first)")
    keys = sorted(set(labels.tolist()))
    position = {key: i for i, key in enumerate(keys)}
    index = np.array([position[x] for x in labels.tolist()], dtype=np.int64)
    return positional_sums(d, index, len(keys))


def positional_sums(differences: np.ndarray, positions: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`actor_sums` of differences whose clusters are already positions ``0..n_clusters-1``."""
    d = np.asarray(differences, dtype=np.float64)
    index = np.asarray(positions, dtype=np.int64)
    order = np.lexsort((d, index))  # by cluster, then value: the sum's order is fixed whatever the row order
    sums = np.zeros(n_clusters)
    np.add.at(sums, index[order], d[order])
    return sums, np.bincount(index, minlength=n_clusters).astype(np.float64)


@lru_cache(maxsize=32)
def _patterns(n_clusters: int, n_resamples: int, seed: int) -> tuple[np.ndarray, bool]:
    if 2 ** n_clusters <= n_resamples:
        bits = (np.arange(2 ** n_clusters)[:, None] >> np.arange(n_clusters)[None, :]) & 1
        signs, exact = 1.0 - 2.0 * bits, True
    else:
        rng = np.random.default_rng(seed)
        signs, exact = rng.choice(np.array([-1.0, 1.0]), size=(n_resamples, n_clusters)), False
    signs.setflags(write=False)
    return signs, exact


def sign_patterns(n_clusters: int, n_resamples: int = 9999, seed: int = 0) -> tuple[np.ndarray, bool]:
    """The cluster sign patterns of the sign-flip test, as the rows of a +-1 matrix, and whether they are all.

    Every one of the ``2^A`` patterns (bit ``j`` of pattern ``i`` flips cluster ``j``) when that is at most
    ``n_resamples``, else ``n_resamples`` patterns drawn by ``default_rng(seed).choice([-1, 1], (n_resamples,
    A))``. One procedure for every sign-flip statistic of the toolkit (:func:`sign_flip_p_value`, the
    pairwise p-values of :mod:`hug_vis_dataset.metrics.human_agreement`), so a test over the same clusters and
    seed sees the same patterns.

    Example:
        >>> signs, exact = sign_patterns(2)
        >>> signs.tolist(), exact
        ([[1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]], True)
        >>> sign_patterns(20, 100)[0].shape
        (100, 20)
    """
    if n_clusters < 0 or n_resamples < 1:
        raise ValueError(f"need n_clusters >= 0 and n_resamples >= 1, got {n_clusters} and {n_resamples}")
    return _patterns(int(n_clusters), int(n_resamples), int(seed))  # computed once, shared read-only


def sign_flip_p_value(differences: Sequence[float], clusters: Sequence[Any], n_resamples: int = 9999,
                      seed: int = 0) -> tuple[float, bool]:
    """Two-sided p-value of the mean difference, flipping the signs of whole clusters.

    Returns:
        ``(p_value, exact)``; NaN with a single cluster.

    Example:
        >>> sign_flip_p_value([1.0, 2.0, -0.5], ["a", "b", "c"])   # 2 of 8 patterns >= 2.5 -> 2 x 0.25
        (0.5, True)
    """
    return sign_flip_p_value_of_sums(*actor_sums(differences, clusters), n_resamples, seed)


def sign_flip_p_value_of_sums(sums: np.ndarray, counts: np.ndarray, n_resamples: int = 9999,
                              seed: int = 0) -> tuple[float, bool]:
    """:func:`sign_flip_p_value` from the per-cluster sums and counts of the differences (clusters sorted)."""
    sums, counts = np.asarray(sums, dtype=np.float64), np.asarray(counts, dtype=np.float64)
    n_clusters = sums.size
    if n_clusters < 2:
        return math.nan, False
    total = counts.sum()
    observed = sums.sum() / total
    signs, exact = sign_patterns(n_clusters, n_resamples, seed)
    null = signs @ sums / total
    gamma = abs(observed) * np.finfo(np.float64).eps * 100
    adjustment = 0 if exact else 1
    p_less = ((null <= observed + gamma).sum() + adjustment) / (null.size + adjustment)
    p_greater = ((null >= observed - gamma).sum() + adjustment) / (null.size + adjustment)
    return float(min(1.0, 2.0 * min(p_less, p_greater))), exact


def cluster_bootstrap_interval(differences: Sequence[float], clusters: Sequence[Any], n_boot: int = 2000,
                               level: float = DEFAULT_LEVEL, seed: int = 0) -> tuple[float, float]:
    """Percentile interval of the mean difference over clips, resampling clusters with replacement.

    The draws are those of every interval of the toolkit (:func:`~hug_vis_dataset.statistics.draws.draw_weights`
    with the same seed), so the interval equals the generic path's ``bootstrap_ci(rows, mean of d, cluster=...,
    n_boot, level, seed)``; it is computed from per-cluster sums, all replicates in one matrix product. NaN with a
    single cluster (every replicate would be the same data: no interval).

    Example:
        >>> lo, hi = cluster_bootstrap_interval([1.0, 2.0, 3.0, 4.0], [1, 1, 2, 2], n_boot=200)
        >>> lo, hi   # replicates are actor 1 twice (1.5), mixed (2.5) or actor 2 twice (3.5)
        (1.5, 3.5)
    """
    return cluster_bootstrap_interval_of_sums(*actor_sums(differences, clusters), n_boot, level, seed)


def cluster_bootstrap_interval_of_sums(sums: np.ndarray, counts: np.ndarray, n_boot: int = 2000,
                                       level: float = DEFAULT_LEVEL, seed: int = 0) -> tuple[float, float]:
    """:func:`cluster_bootstrap_interval` from the per-cluster sums and counts (clusters sorted)."""
    check_level(level)
    weights = draw_weights(len(sums), n_boot, seed)  # validates n_boot
    if len(sums) < 2:
        return math.nan, math.nan
    replicates = (weights @ np.asarray(sums, dtype=np.float64)) / (weights @ np.asarray(counts, dtype=np.float64))
    low, high = np.percentile(replicates, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
    return float(low), float(high)


def paired_test(differences: Sequence[float], clusters: Sequence[Any], n_resamples: int = 9999,
                n_boot: int = 2000, level: float = DEFAULT_LEVEL, seed: int = 0) -> PairedTest:
    """Sign-flip p-value and bootstrap interval of the mean of paired differences (clusters = actors).

    Args:
        differences: ``d_c`` per clip, positive when the first system is better.
        clusters: the actor of each clip.
        n_resamples: sign patterns drawn when the ``2^A`` patterns are more than this.
        n_boot: bootstrap replicates.
        level: interval coverage; the test decides at ``1 - level``.
        seed: both procedures' seed (same seed, same result).

    Example:
        >>> r = paired_test([0.1, 0.2], ["a", "a"])
        >>> r.distinguishable, r.note
        (None, 'n/a: one actor, no between-actor variation to resample')
    """
    d = np.asarray(differences, dtype=np.float64).ravel()
    if d.size == 0:
        return PairedTest(math.nan, math.nan, math.nan, math.nan, 0, 0, level, False, "n/a: no common clips")
    return paired_test_of_sums(*actor_sums(d, clusters), n_resamples, n_boot, level, seed)


def paired_test_of_sums(sums: np.ndarray, counts: np.ndarray, n_resamples: int = 9999, n_boot: int = 2000,
                        level: float = DEFAULT_LEVEL, seed: int = 0) -> PairedTest:
    """:func:`paired_test` from the per-actor sums and counts of the differences (actors sorted, every count > 0):
    what the engine keeps, so a comparison on the full grid costs two small matrix products.

    Example:
        >>> r = paired_test_of_sums(np.array([1.0, 2.0, -0.5]), np.array([1.0, 1.0, 1.0]))
        >>> round(r.mean_difference, 4), r.p_value, r.n_clips
        (0.8333, 0.5, 3)
    """
    sums, counts = np.asarray(sums, dtype=np.float64), np.asarray(counts, dtype=np.float64)
    n_clips = int(round(counts.sum()))
    if sums.size == 0 or n_clips == 0:
        return PairedTest(math.nan, math.nan, math.nan, math.nan, 0, 0, level, False, "n/a: no common clips")
    mean = float(sums.sum() / counts.sum())
    if sums.size < 2:
        return PairedTest(mean, math.nan, math.nan, math.nan, n_clips, int(sums.size), level, False,
                          "n/a: one actor, no between-actor variation to resample")
    p_value, exact = sign_flip_p_value_of_sums(sums, counts, n_resamples, seed)
    low, high = cluster_bootstrap_interval_of_sums(sums, counts, n_boot, level, seed)
    smallest = 2.0 / 2.0 ** sums.size
    note = (f"n/a: {sums.size} actors cannot reach p < {1 - level:.2g} (smallest p = {smallest:.3g})"
            if smallest >= 1.0 - level else "")
    return PairedTest(mean, low, high, p_value, n_clips, int(sums.size), level, exact, note)


# ----------------------------------------------------------------------------- many pairs at once
#: Below this many rows the null counts run on one thread (starting the threads costs more).
SERIAL_ROWS = 512


def pair_p_values(pair_sums: np.ndarray, signs: np.ndarray, exact: bool) -> tuple[np.ndarray, np.ndarray]:
    """One-sided (mid-p) and two-sided sign-flip p-values of each pair from its per-actor sums.

    Args:
        pair_sums: ``(P, A)``, ``D_ij[a]``: actor a's sum of the pair's per-clip differences (0 where the
            actor has no common clip); a row of NaN marks a pair without common clips.
        signs: ``(R, A)`` sign patterns (:func:`sign_patterns`), shared by every pair.
        exact: the patterns are all ``2^A`` (no ``+1`` correction of the two-sided p-value).

    Returns:
        ``(one_sided, two_sided)``, each ``(P,)``: ``P(T* > T) + P(T* = T) / 2`` (``i`` better than ``j``)
        and ``min(1, 2 min(P(T* <= T), P(T* >= T)))``; NaN for a pair without common clips.

    Example:
        >>> one, two = pair_p_values(np.array([[1.0, -1.0]]), *sign_patterns(2))
        >>> one.tolist(), two.tolist()    # T = 0: the patterns give 0, -2, 2, 0
        ([0.5], [1.0])
    """
    one, two = pair_p_values_batch(np.asarray(pair_sums, dtype=np.float64)[None], signs, exact)
    return one[0], two[0]


def pair_p_values_batch(pair_sums: np.ndarray, signs: np.ndarray, exact: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`pair_p_values` of a stack ``(B, P, A)`` of per-actor pair sums (one per bootstrap replicate or
    PERM-BOTH hybrid) at once (subset-sum tables, :mod:`hug_vis_dataset.statistics._signflip_kernel`: no pattern x pair
    matrix is formed): row ``b`` equals ``pair_p_values(pair_sums[b], ...)``.

    Example:
        >>> signs, exact = sign_patterns(2)
        >>> one, two = pair_p_values_batch(np.array([[[1.0, -1.0]], [[1.0, 1.0]]]), signs, exact)
        >>> one.tolist(), two.tolist()
        ([[0.5], [0.125]], [[1.0], [0.5]])
    """
    from ._signflip_kernel import GROUP_BITS, _count_rows, null_counts

    sums = np.asarray(pair_sums, dtype=np.float64)
    n_b, n_p, n_a = sums.shape
    one, two = np.full((n_b, n_p), np.nan), np.full((n_b, n_p), np.nan)
    if n_b == 0 or n_p == 0:
        return one, two
    missing = np.isnan(sums).all(axis=2)
    clean = np.ascontiguousarray(np.where(np.isnan(sums), 0.0, sums).reshape(-1, n_a))
    n = signs.shape[0]
    codes, masks = _codes(signs)
    if len(clean) < SERIAL_ROWS:  # a few pairs: no threads to start
        above, below = np.zeros(len(clean), dtype=np.int64), np.zeros(len(clean), dtype=np.int64)
        _count_rows(clean, codes, masks, n_a, 0, len(clean), np.zeros((codes.shape[1], 1 << GROUP_BITS)), above, below)
    else:
        above, below = null_counts(clean, codes, masks, n_a)
    above, below = above.reshape(n_b, n_p).astype(np.float64), below.reshape(n_b, n_p).astype(np.float64)
    equal = n - above - below
    adjust = 0 if exact else 1
    one = (above + 0.5 * equal) / n
    p_less = (below + equal + adjust) / (n + adjust)
    p_greater = (above + equal + adjust) / (n + adjust)
    two = np.minimum(1.0, 2.0 * np.minimum(p_less, p_greater))
    one[missing], two[missing] = np.nan, np.nan
    return one, two


def pair_p_values_complement(first: np.ndarray, total: np.ndarray, signs: np.ndarray, exact: bool
                             ) -> tuple[np.ndarray, np.ndarray]:
    """One-sided p-values of a stack of hybrids ``first`` (``(n, P, A)``) and of their complements
    ``total - first`` (PERM-BOTH's two hybrids, actor by actor): ``(p1, p2)``, each ``(n, P)``."""
    return pair_p_values_batch(first, signs, exact)[0], pair_p_values_batch(total[None] - first, signs, exact)[0]


def _codes(signs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The patterns' group masks and whole masks, computed once per pattern matrix (the shared, read-only ones are
    cached)."""
    from ._signflip_kernel import pattern_codes, pattern_masks

    key = id(signs)
    cached = _CODES.get(key)
    if cached is None or cached[0] is not signs:
        cached = (signs, (pattern_codes(signs), pattern_masks(signs)))
        if not signs.flags.writeable:  # sign_patterns' own arrays: kept, so a pattern set is converted once
            _CODES[key] = cached
    return cached[1]


_CODES: dict = {}


__all__ = ["pair_p_values", "pair_p_values_batch", "pair_p_values_complement", "DEFAULT_LEVEL", "PairedTest", "actor_sums", "positional_sums", "SignificanceInputError", "cluster_bootstrap_interval",
           "cluster_bootstrap_interval_of_sums", "paired_test", "paired_test_of_sums", "sign_flip_p_value",
           "sign_flip_p_value_of_sums", "sign_patterns"]

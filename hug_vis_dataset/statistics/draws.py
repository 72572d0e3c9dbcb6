"""Bootstrap replicates as weight vectors over actors, and their percentile intervals, vectorised.

A replicate of the actor bootstrap draws ``A`` actor positions with replacement
(:func:`~hug_vis_dataset.statistics.basics.cluster_draws`: ``default_rng(seed).integers(0, A, A)`` per replicate).
Any statistic that is a function of per-actor sums (a mean over clips is ``sum of sums / sum of counts``) only needs
how many times each actor was drawn: the replicate's **weight vector**. :func:`draw_weights` stacks them into one
``(n_boot, A)`` matrix, so a replicate of every mean at once is one matrix product, ``W @ sums / W @ counts``,
exactly the statistic the generic path (:func:`hug_vis_dataset.statistics.generic.bootstrap_ci`) evaluates on the
rebuilt replicate frame, up to float rounding.

Example:
    >>> draw_weights(3, 2, seed=0).tolist()   # draws [2, 1, 1] and [0, 0, 0]
    [[0, 2, 1], [3, 0, 0]]
    >>> sums, counts = np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 1.0])
    >>> (draw_weights(3, 2) @ sums / (draw_weights(3, 2) @ counts)).tolist()
    [2.3333333333333335, 1.0]
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np

from .basics import BootstrapCI, cluster_draws


@lru_cache(maxsize=64)
def _weights(n_clusters: int, n_boot: int, seed: int) -> np.ndarray:
    # One call per replicate, as cluster_draws makes them: numpy's bounded integers buffer half-words within a
    # call, so one call of size (n_boot, A) would not give the same stream when A is odd.
    out = np.zeros((n_boot, n_clusters), dtype=np.int64)
    if n_clusters:
        for i, picks in enumerate(cluster_draws(n_clusters, n_boot, seed)):
            out[i] = np.bincount(picks, minlength=n_clusters)
    out.setflags(write=False)
    return out


def draw_weights(n_clusters: int, n_boot: int, seed: int = 0) -> np.ndarray:
    """``(n_boot, n_clusters)``: how often each cluster (actor, in sorted order) is drawn in each replicate.

    The draws are :func:`~hug_vis_dataset.statistics.basics.cluster_draws`', so a statistic computed from weights is
    the statistic of the generic path's replicates. The matrix is computed once per ``(A, n_boot, seed)`` and shared
    (read-only).

    Raises:
        ValueError: ``n_boot`` is not a positive integer or ``n_clusters`` is negative.
    """
    if not isinstance(n_boot, (int, np.integer)) or isinstance(n_boot, bool) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")
    if n_clusters < 0:
        raise ValueError(f"n_clusters must be >= 0, got {n_clusters}")
    return _weights(int(n_clusters), int(n_boot), int(seed))


def check_level(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")


def percentile_intervals(points: Sequence[float], replicates: np.ndarray, level: float,
                         n_clusters: "int | Sequence[int]") -> list[BootstrapCI]:
    """One :class:`~hug_vis_dataset.statistics.basics.BootstrapCI` per column of ``replicates`` (``(n_boot, K)``):
    the percentile interval of the column's finite values (``numpy.percentile``, linear), as
    :func:`~hug_vis_dataset.statistics.basics.percentile_ci` computes it for one column.

    Example:
        >>> reps = np.array([[1.0, np.nan], [2.0, 4.0], [3.0, 6.0]])
        >>> [(c.low, c.high, c.n_valid) for c in percentile_intervals([2.0, 5.0], reps, 0.5, 3)]
        [(1.5, 2.5, 3), (4.5, 5.5, 2)]
    """
    check_level(level)
    reps = np.asarray(replicates, dtype=np.float64)
    if reps.ndim != 2 or reps.shape[1] != len(points):
        raise ValueError(f"replicates must be (n_boot, {len(points)}), got {reps.shape}")
    counts = ([int(n_clusters)] * len(points) if np.ndim(n_clusters) == 0 else [int(c) for c in n_clusters])
    q = [100 * (1 - level) / 2, 100 * (1 + level) / 2]
    finite = np.isfinite(reps)
    n_valid = finite.sum(axis=0)
    bounds = np.full((2, reps.shape[1]), np.nan)
    whole = n_valid == reps.shape[0]
    if whole.any():  # every replicate finite: one vectorised call (the common case)
        bounds[:, whole] = np.percentile(reps[:, whole], q, axis=0)
    for k in np.flatnonzero(~whole & (n_valid > 0)):
        bounds[:, k] = np.percentile(reps[finite[:, k], k], q)
    return [BootstrapCI(float(p), float(bounds[0, k]), float(bounds[1, k]), level, int(reps.shape[0]),
                        int(n_valid[k]), counts[k]) for k, p in enumerate(points)]


def replicate_means(weights: np.ndarray, sums: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``(n_boot, K)`` means of each replicate: ``(W @ sums) / (W @ counts)`` with ``sums``/``counts`` ``(A, K)``;
    NaN where a replicate drew no actor with a value of that column (the generic path's empty group)."""
    num = weights @ sums
    den = weights @ counts
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


__all__ = ["check_level", "draw_weights", "percentile_intervals", "replicate_means"]

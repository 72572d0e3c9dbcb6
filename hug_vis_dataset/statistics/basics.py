"""The engine's basic pieces: Spearman rank correlation, OLS, min-max, the actor draws and the percentile rule.

Clips of one actor share a face, a voice and a performance style, so they are not independent
samples: every interval of the toolkit resamples *actors* (clusters) with replacement, with the draws
of :func:`cluster_draws`, and reads its interval off the replicates with :func:`percentile_ci`.

Example:
    >>> round(spearman([1, 2, 3, 4], [10, 20, 30, 25]), 6)
    0.8
    >>> fit = ols_fit([0, 1, 2], [1, 3, 5])
    >>> round(fit.slope, 9), round(fit.intercept, 9), round(fit.r2, 9)
    (2.0, 1.0, 1.0)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np


def _finite_pairs(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    xa = np.asarray(x, dtype=float).ravel()
    ya = np.asarray(y, dtype=float).ravel()
    if xa.shape != ya.shape:
        raise ValueError(f"x and y differ in length: {xa.size} vs {ya.size}")
    keep = np.isfinite(xa) & np.isfinite(ya)
    return xa[keep], ya[keep]


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman rank correlation with ties given average ranks (``scipy.stats.spearmanr`` semantics).

    Pairs where either value is NaN are dropped. Returns NaN when fewer than two pairs remain or
    either variable is constant (its ranks have no variance, so the correlation is undefined;
    scipy also returns NaN there).

    Example:
        >>> round(spearman([1, 1, 2], [3, 4, 5]), 3)  # tie -> average ranks (1.5, 1.5, 3)
        0.866
        >>> import math; math.isnan(spearman([1, 1, 1], [1, 2, 3]))
        True
    """
    from scipy.stats import rankdata

    xa, ya = _finite_pairs(x, y)
    if xa.size < 2:
        return float("nan")
    rx, ry = rankdata(xa), rankdata(ya)
    return _pearson(rx, ry)


def _pearson(x: np.ndarray, y: np.ndarray) -> float:
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy = float(dx @ dx), float(dy @ dy)
    if sxx == 0.0 or syy == 0.0:
        return float("nan")
    r = float(dx @ dy) / math.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r))


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`spearman` of every row pair of two ``(R, S)`` arrays of finite values at once (one per bootstrap
    replicate): average ranks along each row, then Pearson; NaN where a row is constant or ``S < 2``.

    Example:
        >>> spearman_rows(np.array([[1.0, 2, 3, 4], [1, 1, 2, 3]]), np.array([[10.0, 20, 30, 25], [3, 4, 5, 6]])).round(3).tolist()
        [0.8, 0.949]
    """
    from scipy.stats import rankdata

    x, y = np.atleast_2d(np.asarray(x, dtype=float)), np.atleast_2d(np.asarray(y, dtype=float))
    if x.shape[1] < 2:
        return np.full(x.shape[0], np.nan)
    rx, ry = rankdata(x, axis=1), rankdata(y, axis=1)
    dx, dy = rx - rx.mean(axis=1, keepdims=True), ry - ry.mean(axis=1, keepdims=True)
    sxx, syy = (dx * dx).sum(axis=1), (dy * dy).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (dx * dy).sum(axis=1) / np.sqrt(sxx * syy)
    return np.where((sxx > 0) & (syy > 0), np.clip(r, -1.0, 1.0), np.nan)


def kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b (``scipy.stats.kendalltau``'s default) of every row pair of two ``(R, S)`` arrays of finite
    values: ``(concordant - discordant) / sqrt((n0 - ties in x) (n0 - ties in y))`` over the ``n0`` pairs of
    columns; NaN where a row is constant or ``S < 2``.

    Example:
        >>> kendall_rows(np.array([[1.0, 2, 3, 4]]), np.array([[10.0, 20, 30, 25]])).round(4).tolist()
        [0.6667]
    """
    x, y = np.atleast_2d(np.asarray(x, dtype=float)), np.atleast_2d(np.asarray(y, dtype=float))
    n = x.shape[1]
    if n < 2:
        return np.full(x.shape[0], np.nan)
    i, j = np.triu_indices(n, k=1)
    sx, sy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
    n0 = len(i)
    tx, ty = (sx == 0).sum(axis=1), (sy == 0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = (sx * sy).sum(axis=1) / np.sqrt((n0 - tx) * (n0 - ty))
    return np.where((tx < n0) & (ty < n0), np.clip(tau, -1.0, 1.0), np.nan)


@dataclass(frozen=True)
class OLSFit:
    """Ordinary least squares line ``y = slope * x + intercept`` and its coefficient of determination."""

    slope: float
    intercept: float
    r2: float
    n: int


def ols_fit(x: Sequence[float], y: Sequence[float]) -> OLSFit:
    """Least-squares fit of y on x (NaN pairs dropped).

    ``r2`` is 1 - SS_res / SS_tot (NaN when y is constant). With fewer than two distinct x values
    the slope is undefined: all fields except ``n`` are NaN.

    Example:
        >>> round(ols_fit([1, 2, 3, 4], [2, 4, 5, 8]).slope, 9)
        1.9
    """
    xa, ya = _finite_pairs(x, y)
    n = int(xa.size)
    if n < 2 or np.ptp(xa) == 0:
        return OLSFit(float("nan"), float("nan"), float("nan"), n)
    dx = xa - xa.mean()
    slope = float(dx @ (ya - ya.mean()) / (dx @ dx))
    intercept = float(ya.mean() - slope * xa.mean())
    ss_tot = float(((ya - ya.mean()) ** 2).sum())
    ss_res = float(((ya - (slope * xa + intercept)) ** 2).sum())
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else float("nan")
    return OLSFit(slope, intercept, r2, n)


def minmax(values: Sequence[float], constant: float = 0.0) -> np.ndarray:
    """Min-max normalise to [0, 1] ignoring NaN (which stays NaN).

    When every finite value is equal the range is zero and every finite value becomes
    ``constant`` (0 by default: nothing is harder than anything else).

    Example:
        >>> minmax([2.0, 4.0, float("nan"), 3.0]).tolist()
        [0.0, 1.0, nan, 0.5]
        >>> minmax([5.0, 5.0]).tolist()
        [0.0, 0.0]
    """
    arr = np.asarray(values, dtype=float)
    finite = np.isfinite(arr)
    out = np.full(arr.shape, np.nan)
    if not finite.any():
        return out
    lo, hi = arr[finite].min(), arr[finite].max()
    out[finite] = constant if hi == lo else (arr[finite] - lo) / (hi - lo)
    return out


@dataclass(frozen=True)
class BootstrapCI:
    """A point estimate and its percentile bootstrap interval.

    Attributes:
        estimate: the statistic on the original data.
        low, high: the ``(1 - level) / 2`` and ``(1 + level) / 2`` percentiles of the replicates.
        level: the nominal coverage, e.g. 0.95.
        n_boot: replicates drawn.
        n_valid: replicates whose statistic was finite (the interval uses only these).
        n_clusters: clusters (actors) in the data.
    """

    estimate: float
    low: float
    high: float
    level: float
    n_boot: int
    n_valid: int
    n_clusters: int


def format_interval(estimate: float, low: float, high: float, n_clusters: int, digits: int = 2) -> str:
    """``"4.11 [3.90, 4.30]"``; an interval from fewer than two clusters says so instead of
    printing a zero-width interval that looks exact, and one that cannot be read as a 95% interval (fewer than
    :data:`~hug_vis_dataset.statistics.rules.MIN_ACTORS` actors, or collapsed) carries the small-sample mark.

    Example:
        >>> format_interval(4.114, 3.9, 4.3, 6)
        '4.11 [3.90, 4.30]'
        >>> format_interval(4.114, 3.9, 4.3, 5)
        '4.11 [3.90, 4.30] ?'
        >>> format_interval(4.114, 4.114, 4.114, 1)
        '4.11 n/a (1 actor)'
        >>> format_interval(4.0, float("nan"), float("nan"), 3)
        '4.00 [n/a]'
    """
    from .rules import interval_mark

    point = f"{estimate:.{digits}f}"
    if n_clusters < 2:
        return f"{point} n/a ({n_clusters} actor{'' if n_clusters == 1 else 's'})"
    if not (np.isfinite(low) and np.isfinite(high)):
        return f"{point} [n/a]"
    mark = interval_mark(n_clusters, low, high)
    return f"{point} [{low:.{digits}f}, {high:.{digits}f}]" + (f" {mark}" if mark else "")


_ACTOR_IN_ID = re.compile(r"^actor_([0-9]{4})_")


def cluster_draws(n_clusters: int, n_boot: int, seed: int = 0) -> Iterable[np.ndarray]:
    """The cluster positions drawn for each replicate of :func:`bootstrap_ci` (the one procedure:
    ``default_rng(seed)``, then ``integers(0, n_clusters, size=n_clusters)`` per replicate), so a
    statistic computed from per-cluster sums draws exactly the replicates :func:`bootstrap_ci` would.

    Example:
        >>> [p.tolist() for p in cluster_draws(3, 2, seed=0)]
        [[2, 1, 1], [0, 0, 0]]
    """
    rng = np.random.default_rng(seed)
    for _ in range(n_boot):
        yield rng.integers(0, n_clusters, size=n_clusters)


def percentile_ci(point: float, replicates: Sequence[float], level: float, n_clusters: int) -> BootstrapCI:
    """The percentile interval of the finite ``replicates`` around ``point`` (NaN when none is finite).

    Example:
        >>> percentile_ci(2.0, [1.0, 2.0, 3.0, float("nan")], 0.5, 3)
        BootstrapCI(estimate=2.0, low=1.5, high=2.5, level=0.5, n_boot=4, n_valid=3, n_clusters=3)
    """
    arr = np.asarray(replicates, dtype=float)
    finite = arr[np.isfinite(arr)]
    lo_q, hi_q = 100 * (1 - level) / 2, 100 * (1 + level) / 2
    low, high = (np.percentile(finite, [lo_q, hi_q]) if finite.size else (np.nan, np.nan))
    return BootstrapCI(float(point), float(low), float(high), level, int(arr.size), int(finite.size), n_clusters)


def actor_of_clip(clip_id: str) -> int:
    """The actor number in a clip id (the resampling unit of every interval).

    Example:
        >>> actor_of_clip("actor_0012_sad_action_01_script_003")
        12
    """
    return int(_ACTOR_IN_ID.match(str(clip_id)).group(1))

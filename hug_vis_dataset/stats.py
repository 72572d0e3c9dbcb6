"""Statistics helpers: actor-clustered bootstrap, Spearman rank correlation, OLS, min-max.

Clips of one actor share a face, a voice and a performance style, so they are not independent
samples. :func:`bootstrap_ci` therefore resamples *actors* (clusters) with replacement and keeps
all clips of each drawn actor.

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
    printing a zero-width interval that looks exact.

    Example:
        >>> format_interval(4.114, 3.9, 4.3, 5)
        '4.11 [3.90, 4.30]'
        >>> format_interval(4.114, 4.114, 4.114, 1)
        '4.11 n/a (1 actor)'
        >>> format_interval(4.0, float("nan"), float("nan"), 3)
        '4.00 [n/a]'
    """
    point = f"{estimate:.{digits}f}"
    if n_clusters < 2:
        return f"{point} n/a ({n_clusters} actor{'' if n_clusters == 1 else 's'})"
    if not (np.isfinite(low) and np.isfinite(high)):
        return f"{point} [n/a]"
    return f"{point} [{low:.{digits}f}, {high:.{digits}f}]"


_ACTOR_IN_ID = re.compile(r"^actor_(\d{4})_")


def _as_frame(data: Any):
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data.copy()
    return pd.DataFrame(list(data))


def _flatten(value: Any) -> "float | dict":
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        value = value.stack(future_stack=True)
    if isinstance(value, pd.Series):
        return {k: float(v) for k, v in value.items()}
    if isinstance(value, Mapping):
        return {k: float(v) for k, v in value.items()}
    return float(value)


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


def bootstrap_ci(
    rows_or_frame: "Iterable[Mapping] | Any",
    statistic: Callable[[Any], Any],
    cluster: str = "actor_id",
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> "BootstrapCI | dict[Any, BootstrapCI]":
    """Cluster (actor) bootstrap percentile interval of any statistic of per-clip rows.

    Procedure: the distinct cluster ids are sorted (so the result does not depend on row
    order); ``rng = numpy.random.default_rng(seed)``; for each of ``n_boot`` replicates,
    ``rng.integers(0, n_clusters, size=n_clusters)`` draws cluster positions with replacement and
    the replicate frame holds all rows of each drawn cluster, in draw order. The statistic is
    evaluated on every replicate; the interval is the percentile interval
    (``numpy.percentile``, linear interpolation) of the finite replicate values.

    When ``cluster == "actor_id"`` and rows carry ``clip_id``, the k-th drawn actor is renamed
    to pseudo-actor k (both ``actor_id`` and the ``actor_NNNN`` prefix of ``clip_id``), so an
    actor drawn twice contributes two distinct sets of clips: statistics that join or group by
    clip id (pairing models, min-max over clips) see twice the clips, not one clip with doubled
    rows. If ``actor_id`` is missing it is read from the clip id.

    Args:
        rows_or_frame: per-clip result rows (mappings) or a pandas DataFrame.
        statistic: function of a DataFrame returning a number, or a Mapping/Series/DataFrame of
            numbers (then one interval per entry; a DataFrame is stacked to (row, column) keys).
        cluster: the resampling unit's column.
        n_boot: number of replicates (>= 1).
        level: interval coverage in (0, 1).
        seed: seed of the generator; the same seed gives the same interval.

    Returns:
        A :class:`BootstrapCI`, or a dict of them keyed like the statistic's output.

    Raises:
        ValueError: no rows, no cluster column, bad ``n_boot`` or ``level``.

    Example:
        >>> rows = [{"actor_id": a, "value": float(a)} for a in range(1, 11)]
        >>> ci = bootstrap_ci(rows, lambda f: f["value"].mean(), n_boot=200, seed=1)
        >>> ci.estimate, ci.low < 5.5 < ci.high
        (5.5, True)
    """
    import pandas as pd

    if not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    frame = _as_frame(rows_or_frame)
    if frame.empty:
        raise ValueError("no rows to bootstrap")
    if cluster not in frame.columns:
        if cluster == "actor_id" and "clip_id" in frame.columns:
            frame[cluster] = frame["clip_id"].map(actor_of_clip)
        else:
            raise ValueError(f"no cluster column {cluster!r} in rows (columns: {list(frame.columns)})")
    rename_clips = cluster == "actor_id" and "clip_id" in frame.columns
    estimate = _flatten(statistic(frame))
    clusters = sorted(frame[cluster].unique().tolist())
    groups = {c: g for c, g in frame.groupby(cluster, sort=True)}
    replicates = []
    for picks in cluster_draws(len(clusters), n_boot, seed):
        parts = []
        for k, pos in enumerate(picks, start=1):
            part = groups[clusters[pos]].copy()
            if rename_clips:
                part["clip_id"] = part["clip_id"].map(lambda c, k=k: _ACTOR_IN_ID.sub(f"actor_{k:04d}_", str(c)))
                part[cluster] = k
            parts.append(part)
        replicates.append(_flatten(statistic(pd.concat(parts, ignore_index=True))))
    def interval(point: float, values: list[float]) -> BootstrapCI:
        return percentile_ci(point, values, level, len(clusters))

    if isinstance(estimate, dict):
        return {key: interval(point, [r.get(key, np.nan) for r in replicates]) for key, point in estimate.items()}
    return interval(estimate, replicates)

"""Is a leaderboard gap real? Paired tests between neighbouring systems, actors as clusters.

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
  exactly the draws of :func:`hug_vis_dataset.stats.bootstrap_ci` (sorted actor ids,
  ``default_rng(seed).integers(0, A, A)`` per replicate), computed from per-actor sums.

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
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

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


def _actor_sums(differences: Sequence[float], clusters: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    d = np.asarray(differences, dtype=np.float64).ravel()
    labels = np.asarray(list(clusters), dtype=object)
    if d.shape != labels.shape:
        raise SignificanceInputError(f"{d.size} differences but {labels.size} cluster labels")
    if not np.isfinite(d).all():
        raise SignificanceInputError("differences must be finite (drop failed clips first)")
    keys = sorted(set(labels.tolist()))
    position = {key: i for i, key in enumerate(keys)}
    index = np.array([position[x] for x in labels.tolist()], dtype=np.int64)
    # Sum in a fixed (sorted) order so the result does not depend on row order.
    order = np.lexsort((d, index))
    sums = np.zeros(len(keys))
    np.add.at(sums, index[order], d[order])
    counts = np.bincount(index, minlength=len(keys)).astype(np.float64)
    return sums, counts


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
    if 2 ** n_clusters <= n_resamples:
        bits = (np.arange(2 ** n_clusters)[:, None] >> np.arange(n_clusters)[None, :]) & 1
        return 1.0 - 2.0 * bits, True
    rng = np.random.default_rng(seed)
    return rng.choice(np.array([-1.0, 1.0]), size=(n_resamples, n_clusters)), False


def sign_flip_p_value(differences: Sequence[float], clusters: Sequence[Any], n_resamples: int = 9999,
                      seed: int = 0) -> tuple[float, bool]:
    """Two-sided p-value of the mean difference, flipping the signs of whole clusters.

    Returns:
        ``(p_value, exact)``; NaN with a single cluster.

    Example:
        >>> sign_flip_p_value([1.0, 2.0, -0.5], ["a", "b", "c"])   # 2 of 8 patterns >= 2.5 -> 2 x 0.25
        (0.5, True)
    """
    sums, counts = _actor_sums(differences, clusters)
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

    The draws are those of :func:`hug_vis_dataset.stats.bootstrap_ci` with the same seed, so the
    interval equals ``bootstrap_ci(rows, mean of d, cluster=..., n_boot, level, seed)``; it is
    computed from per-cluster sums instead of re-building a frame per replicate. NaN with a single
    cluster (every replicate would be the same data: no interval).

    Example:
        >>> lo, hi = cluster_bootstrap_interval([1.0, 2.0, 3.0, 4.0], [1, 1, 2, 2], n_boot=200)
        >>> lo, hi   # replicates are actor 1 twice (1.5), mixed (2.5) or actor 2 twice (3.5)
        (1.5, 3.5)
    """
    if not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    sums, counts = _actor_sums(differences, clusters)
    if sums.size < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    replicates = np.empty(n_boot)
    for i in range(n_boot):
        picks = rng.integers(0, sums.size, size=sums.size)
        replicates[i] = sums[picks].sum() / counts[picks].sum()
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
    sums, counts = _actor_sums(d, clusters)
    mean = float(sums.sum() / counts.sum())
    if sums.size < 2:
        return PairedTest(mean, math.nan, math.nan, math.nan, int(d.size), int(sums.size), level, False,
                          "n/a: one actor, no between-actor variation to resample")
    p_value, exact = sign_flip_p_value(d, clusters, n_resamples, seed)
    low, high = cluster_bootstrap_interval(d, clusters, n_boot, level, seed)
    smallest = 2.0 / 2.0 ** sums.size
    note = (f"n/a: {sums.size} actors cannot reach p < {1 - level:.2g} (smallest p = {smallest:.3g})"
            if smallest >= 1.0 - level else "")
    return PairedTest(mean, low, high, p_value, int(d.size), int(sums.size), level, exact, note)


# ----------------------------------------------------------------------------- leaderboards
def _rows_frame(rows: "Iterable[Mapping] | Any"):
    import pandas as pd

    from ..grid import ClipId

    frame = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    missing = [c for c in ("model", "clip_id", "value") if c not in frame.columns]
    if missing:
        raise SignificanceInputError(f"rows lack columns {missing}; expected model, clip_id, value[, actor_id, status]")
    if "status" in frame.columns:
        frame = frame[frame["status"].fillna("ok") == "ok"]
    frame = frame[np.isfinite(frame["value"].astype(float))].copy()
    frame["value"] = frame["value"].astype(float)
    if "actor_id" not in frame.columns or frame["actor_id"].isna().any():
        frame["actor_id"] = frame["clip_id"].map(lambda c: ClipId.parse(str(c)).actor_id)
    # A fixed row order: means (float sums) must not depend on how the rows came in.
    frame = frame.sort_values(["model", "clip_id"], kind="stable").reset_index(drop=True)
    duplicated = frame.duplicated(["model", "clip_id"])
    if duplicated.any():
        first = frame[duplicated].iloc[0]
        raise SignificanceInputError(f"model {first['model']!r} has clip {first['clip_id']!r} twice; "
                                     "pass one metric's rows")
    return frame


def neighbour_tests(rows: "Iterable[Mapping] | Any", higher_is_better: bool,
                    order: "Sequence[str] | None" = None, n_resamples: int = 9999, n_boot: int = 2000,
                    level: float = DEFAULT_LEVEL, seed: int = 0) -> list[dict[str, Any]]:
    """Rank the systems of one leaderboard and test each against the next one down.

    Args:
        rows: per-clip rows of several systems on **one** metric (``model``, ``clip_id``,
            ``value``; ``actor_id`` read from the clip id when absent; rows whose ``status`` is not
            ``ok`` or whose value is not finite are left out).
        higher_is_better: the metric's direction (from the metric table).
        order: the leaderboard's ranking, best first (e.g. by the paper's protocol); default: by the
            mean over each system's clips, ties broken by name.
        n_resamples, n_boot, level, seed: see :func:`paired_test` (the same seed for every pair).

    Returns:
        One dict per neighbouring pair, best first: ``rank`` (of ``model``), ``model``,
        ``next_model``, ``mean``, ``next_mean`` (over each system's own clips), ``difference``
        (over common clips, positive when ``model`` is better), ``ci_low``, ``ci_high``,
        ``p_value``, ``n_clips``, ``n_actors``, ``exact``, ``distinguishable`` (True/False/None) and
        ``verdict`` (``"distinguishable"``, ``"not distinguishable at 95%"`` or the n/a reason).

    Example:
        >>> rows = [{"model": m, "clip_id": f"actor_{a:04d}_happy_action_01_script_00{s}", "value": v + a * s}
        ...         for m, v in (("x", 3.0), ("y", 3.0), ("z", 0.0)) for a in range(1, 7) for s in (1, 2)]
        >>> [(r["model"], r["next_model"], r["verdict"]) for r in neighbour_tests(rows, True)]
        [('x', 'y', 'not distinguishable at 95%'), ('y', 'z', 'distinguishable')]
    """
    frame = _rows_frame(rows)
    sign = 1.0 if higher_is_better else -1.0
    means = frame.groupby("model", sort=True)["value"].mean()
    if order is None:
        ranked = sorted(means.index, key=lambda m: (-sign * means[m], str(m)))
    else:
        unknown = sorted(set(order) - set(means.index))
        if unknown:
            raise SignificanceInputError(f"order names systems without rows: {unknown}")
        ranked = list(order)
    by_model = {m: g.set_index("clip_id") for m, g in frame.groupby("model", sort=True)}
    label = f"not distinguishable at {round(level * 100):d}%"
    results = []
    for rank, (model, nxt) in enumerate(zip(ranked, ranked[1:]), start=1):
        a, b = by_model[model], by_model[nxt]
        common = sorted(set(a.index) & set(b.index))
        d = sign * (a.loc[common, "value"].to_numpy() - b.loc[common, "value"].to_numpy())
        test = paired_test(d, a.loc[common, "actor_id"].tolist(), n_resamples, n_boot, level, seed)
        verdict = test.note or ("distinguishable" if test.distinguishable else label)
        results.append({"rank": rank, "model": model, "next_model": nxt, "mean": float(means[model]),
                        "next_mean": float(means[nxt]), "difference": test.mean_difference,
                        **{k: v for k, v in asdict(test).items() if k not in ("mean_difference", "note", "level")},
                        "distinguishable": test.distinguishable, "verdict": verdict})
    return results

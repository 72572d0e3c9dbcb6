"""How big must a difference be? Power and the minimum detectable difference (MDD), actors as clusters.

Design. Two systems are scored on the same clips; ``d_c = s (a_c - b_c)`` per clip (``s = +1`` when
higher is better), and the statistic is the mean over clips, ``D = sum_c d_c / n`` (as
:mod:`hug_vis_dataset.metrics.significance` tests it). Clips of one actor share a face, a voice and
a style, so the model is a one-way random effect of the actor on the difference::

    d_ac = delta + u_a + e_ac,   u_a ~ (0, sigma_b^2),   e_ac ~ (0, sigma_w^2)

with ``n_a`` clips of actor ``a`` and ``n = sum_a n_a``. Then

    Var(D) = (sigma_b^2 sum_a n_a^2 + sigma_w^2 n) / n^2

which, with ``m`` clips for every one of ``A`` actors, is ``(sigma_b^2 + sigma_w^2 / m) / A``: more
clips per actor only shrink the within part, only more actors shrink the between part.

Test and MDD. The test the MDD is for is the cluster-robust Wald test: ``T = D / SE_CR1`` with
``SE_CR1^2 = A / (A - 1) * sum_a (S_a - n_a D)^2 / n^2`` (``S_a`` the actor's sum of differences),
compared with Student's t on ``A - 1`` degrees of freedom (one per cluster, less the mean). With
equal clips per actor and normal effects, ``T`` is exactly the one-sample t statistic of the
actor means, so ``T`` follows a noncentral t with ``A - 1`` degrees of freedom and noncentrality
``delta / SE``. The MDD at size ``alpha`` (two-sided) and power ``1 - beta`` is therefore

    MDD = lambda * SE,   lambda solving  P(|t_{A-1, lambda}| > t_{1-alpha/2, A-1}) = 1 - beta

(:func:`detectable_multiplier`, ``method="nct"``, the default). The textbook closed forms are
``lambda = z_{1-alpha/2} + z_{1-beta}`` (2.80 at 0.05 / 80%: right for many clusters, too small for
few) and ``lambda = t_{1-alpha/2, A-1} + t_{1-beta, A-1}`` (``method="t"``, within 1% of ``nct``
from 6 actors on). With 30 actors ``lambda`` is 2.90; with 6 it is 3.51 (``z`` would say 2.80,
promising a difference 20% smaller than 6 actors can detect).

Unequal clips per actor (the small-cluster correction). Then ``SE_CR1^2`` is biased and ``T`` is not
t on ``A - 1`` df: the test is too liberal (size above ``alpha``) and the plain formula is wrong.
:func:`cr1_distribution` gives Satterthwaite's approximation (``SE_CR1^2`` as a scaled chi-square
with effective ``df`` and its bias), and :func:`minimum_detectable_difference` solves the power
equation of that distribution; it reduces to the exact noncentral t on equal designs.
``tests/test_power.py`` checks the MDD against Monte-Carlo simulations of the same designs (30 and
6 actors, unequal clips per actor) with the CR1 t test, and the project's own sign-flip test.

Variance components from stored rows. :func:`variance_components` estimates ``sigma_b^2`` and
``sigma_w^2`` of a pair's per-clip differences by the one-way ANOVA (method-of-moments) estimators,
valid for unequal ``n_a``: ``sigma_w^2 = MSW``, ``sigma_b^2 = max(0, (MSB - MSW) / n0)`` with
``n0 = (n - sum n_a^2 / n) / (A - 1)``. :func:`detectable_differences` pools them over the
leaderboard's neighbour pairs (plain means of the components) and gives the MDD at the rows' own
design and at smaller actor counts (same clips per actor).

Example:
    >>> round(detectable_multiplier(30), 3), round(detectable_multiplier(6), 3)
    (2.899, 3.514)
    >>> round(minimum_detectable_difference(0.1, 0.5, [10] * 30), 4)   # 2.899 x sqrt((0.1 + 0.5 / 10) / 30)
    0.205
    >>> separable_neighbours([0.50, 0.48, 0.30], mdd=0.05, higher_is_better=True)
    [False, True, None]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.80
#: Multiplier methods of :func:`detectable_multiplier`.
METHODS = ("nct", "t", "z")


class PowerInputError(ValueError):
    """A design or rows from which no detectable difference can be computed."""


# ----------------------------------------------------------------------------- the multiplier
@lru_cache(maxsize=256)
def detectable_multiplier(n_actors: int, alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER,
                          method: str = "nct") -> float:
    """``lambda`` with ``MDD = lambda * SE`` for a two-sided test on ``n_actors`` clusters.

    Args:
        n_actors: clusters (actors); the test has ``n_actors - 1`` degrees of freedom.
        alpha: two-sided size of the test.
        power: the probability of detecting a true difference equal to the MDD.
        method: ``nct`` (exact for equal clips per actor and normal effects: solves the noncentral
            t power equation), ``t`` (``t_{1-alpha/2} + t_{power}``) or ``z`` (normal, any
            ``n_actors``; ignores that few clusters estimate the variance poorly).

    Raises:
        PowerInputError: fewer than 2 actors (no between-actor variance to estimate) for ``nct``/``t``,
            ``alpha`` or ``power`` outside (0, 1), unknown method.

    Example:
        >>> round(detectable_multiplier(30, method="z"), 4)   # 1.96 + 0.8416
        2.8016
        >>> round(detectable_multiplier(6, method="t"), 4)    # 2.5706 + 0.9195
        3.4901
    """
    from scipy import optimize, stats

    if not (0.0 < alpha < 1.0 and 0.0 < power < 1.0):
        raise PowerInputError(f"alpha and power must lie in (0, 1), got {alpha!r}, {power!r}")
    if method not in METHODS:
        raise PowerInputError(f"unknown method {method!r}; choose one of {METHODS}")
    if method == "z":
        return float(stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power))
    if n_actors < 2:
        raise PowerInputError(f"{n_actors} actor(s): a cluster test needs at least 2 actors")
    df = n_actors - 1
    crit = float(stats.t.ppf(1 - alpha / 2, df))
    guess = crit + float(stats.t.ppf(power, df))
    if method == "t":
        return guess

    def shortfall(lam: float) -> float:
        return _two_sided_power(crit, df, lam) - power

    # power rises monotonically in lambda; the closed form brackets the root from below/above
    return float(optimize.brentq(shortfall, 0.5 * guess, 2.0 * guess, xtol=1e-10))


def _two_sided_power(crit: float, df: float, lam: float) -> float:
    """``P(|T| > crit)`` for a noncentral t (``lam >= 0``).

    scipy's noncentral t returns NaN deep in a tail (few degrees of freedom, large noncentrality);
    there the far tail ``P(T < -crit)`` is below double precision (it is at most its central value
    and falls with ``lam``) and the near tail is 1 when ``lam`` is far above ``crit``.
    """
    from scipy import stats

    upper = float(stats.nct.sf(crit, df, lam))
    lower = float(stats.nct.cdf(-crit, df, lam))
    if not math.isfinite(lower):
        lower = 0.0
    if not math.isfinite(upper):
        upper = 1.0 if lam > crit else float(1.0 - stats.nct.cdf(crit, df, lam))
    return upper + lower


# ----------------------------------------------------------------------------- designs
def standard_error(between: float, within: float, clips_per_actor: Sequence[int]) -> float:
    """``SE(D)`` under the random-actor model: ``sqrt(sigma_b^2 sum n_a^2 + sigma_w^2 n) / n``.

    Args:
        between: ``sigma_b^2``, the variance of the actors' effects on the difference.
        within: ``sigma_w^2``, the variance of a clip's difference around its actor's effect.
        clips_per_actor: ``n_a`` per actor.

    Example:
        >>> round(standard_error(0.0, 1.0, [4, 4, 4, 4]), 6)   # independent clips: 1 / sqrt(16)
        0.25
        >>> round(standard_error(1.0, 0.0, [4, 4, 4, 4]), 6)   # all actor effect: 1 / sqrt(4 actors)
        0.5
    """
    n_a = np.asarray(list(clips_per_actor), dtype=np.float64)
    if n_a.size == 0 or (n_a <= 0).any():
        raise PowerInputError(f"clips per actor must be positive, got {list(clips_per_actor)}")
    if between < 0 or within < 0 or not (math.isfinite(between) and math.isfinite(within)):
        raise PowerInputError(f"variances must be finite and >= 0, got {between!r}, {within!r}")
    n = n_a.sum()
    return float(math.sqrt(between * float((n_a ** 2).sum()) + within * n) / n)


@dataclass(frozen=True)
class CR1Distribution:
    """How the CR1 t statistic is distributed on a design (Satterthwaite), see :func:`cr1_distribution`.

    Attributes:
        df: effective degrees of freedom of ``SE_CR1^2`` (``A - 1`` with equal clips per actor).
        bias: ``sqrt(E[SE_CR1^2] / Var(D))`` (1 with equal clips per actor).
        se: the true ``SE(D)``.
        n_actors: clusters.
    """

    df: float
    bias: float
    se: float
    n_actors: int

    def power(self, difference: float, alpha: float = DEFAULT_ALPHA) -> float:
        """Probability that ``|T| > t_{1-alpha/2, A-1}`` when the true mean difference is ``difference``."""
        from scipy import stats

        crit = float(stats.t.ppf(1 - alpha / 2, self.n_actors - 1)) * self.bias
        lam = abs(difference) / self.se
        return _two_sided_power(crit, self.df, lam)

    def size(self, alpha: float = DEFAULT_ALPHA) -> float:
        """The test's actual rejection rate under "no difference" (above ``alpha`` on unequal designs)."""
        from scipy import stats

        crit = float(stats.t.ppf(1 - alpha / 2, self.n_actors - 1)) * self.bias
        return float(2 * stats.t.sf(crit, self.df))


def cr1_distribution(between: float, within: float, clips_per_actor: Sequence[int]) -> CR1Distribution:
    """Satterthwaite's approximation of ``SE_CR1^2`` on a design with any clips per actor.

    ``SE_CR1^2 = c r'r`` with ``r = P S`` (``P = I - N 1' / n``, ``S`` the actor sums, ``N`` the clip
    counts, ``c = A / ((A - 1) n^2)``); ``S`` is normal with ``Cov = diag(v_a)``,
    ``v_a = n_a^2 sigma_b^2 + n_a sigma_w^2``, and ``P`` removes the mean, so with ``B = P Cov P'``:
    ``E[SE^2] = c tr B`` and ``df = (tr B)^2 / tr(B^2)``. Then ``T = D / SE_CR1`` is ``1 / bias`` times
    a noncentral t with ``df`` degrees of freedom and noncentrality ``delta / SE(D)``. With equal
    clips per actor ``B = v P``, so ``df = A - 1`` and ``bias = 1``: the exact noncentral t.

    Example:
        >>> t = cr1_distribution(0.05, 0.4, [5] * 8)
        >>> t.df, round(t.bias, 12), round(t.size(), 6)
        (7.0, 1.0, 0.05)
        >>> u = cr1_distribution(0.05, 0.4, [1, 2, 30, 40, 3, 50])   # very unequal: the t test is too liberal
        >>> round(u.df, 2), round(u.size(), 3)
        (1.95, 0.156)
    """
    counts = np.asarray(list(clips_per_actor), dtype=np.float64)
    se = standard_error(between, within, counts)
    A, n = counts.size, counts.sum()
    if A < 2:
        raise PowerInputError(f"{A} actor(s): a cluster test needs at least 2 actors")
    v = counts ** 2 * between + counts * within
    P = np.eye(A) - np.outer(counts, np.ones(A)) / n
    B = P @ (v[:, None] * P.T)
    trace, trace_sq = float(np.trace(B)), float((B * B.T).sum())
    expected = A / (A - 1) / n ** 2 * trace
    df = trace ** 2 / trace_sq if trace_sq > 0 else float(A - 1)
    if np.ptp(counts) == 0:
        df = float(A - 1)  # exact, without the rounding of the traces
    return CR1Distribution(df, math.sqrt(expected) / se if se > 0 else 1.0, se, int(A))


def minimum_detectable_difference(between: float, within: float, clips_per_actor: Sequence[int],
                                  alpha: float = DEFAULT_ALPHA, power: float = DEFAULT_POWER,
                                  method: str = "nct") -> float:
    """The smallest true mean difference detected at ``alpha`` with ``power`` (see the module doc).

    Args:
        between, within: variance components of the per-clip difference (:func:`standard_error`);
            a variance given by hand goes here (``between=0`` treats clips as independent).
        clips_per_actor: the design: ``n_a`` per actor (``[280] * 30`` for a task of the full grid).
        alpha, power: the test's size and power.
        method: ``nct`` (default): solve the power equation of :func:`cr1_distribution` (exact
            noncentral t on equal clips per actor, Satterthwaite otherwise); ``t`` or ``z``: the
            closed-form multipliers of :func:`detectable_multiplier` times ``SE``.

    Example:
        >>> round(minimum_detectable_difference(0.0, 1.0, [280] * 30), 4)   # sd 1, 8,400 clips
        0.0316
        >>> round(minimum_detectable_difference(0.0, 1.0, [280] * 30, method="z"), 4)
        0.0306
    """
    from scipy import optimize

    counts = list(clips_per_actor)
    if method != "nct":
        return detectable_multiplier(len(counts), alpha, power, method) * standard_error(between, within, counts)
    if not (0.0 < alpha < 1.0 and 0.0 < power < 1.0):
        raise PowerInputError(f"alpha and power must lie in (0, 1), got {alpha!r}, {power!r}")
    dist = cr1_distribution(between, within, counts)
    if dist.se == 0:
        return 0.0
    if dist.size(alpha) >= power:
        raise PowerInputError(f"on this design the test rejects {dist.size(alpha):.2f} of the time with no "
                              f"difference at all: no MDD at {power:.0%} power")
    guess = detectable_multiplier(len(counts), alpha, power, "t") * dist.bias
    # the power is monotone in lambda and the closed form brackets the root (scipy's nct gives NaN far out)
    def shortfall(x: float) -> float:
        return dist.power(x * dist.se, alpha) - power

    # Few effective degrees of freedom put the root above 2x the t guess: widen until it is bracketed.
    low, high = 0.5 * guess, 2.0 * guess
    while shortfall(high) < 0 and high < 1e6:
        low, high = high, 2.0 * high
    lam = optimize.brentq(shortfall, low, high, xtol=1e-10)
    return float(lam * dist.se)


def power_at(difference: float, between: float, within: float, clips_per_actor: Sequence[int],
             alpha: float = DEFAULT_ALPHA) -> float:
    """Power of the cluster t test to detect a true ``difference`` (:func:`cr1_distribution`).

    Example:
        >>> mdd = minimum_detectable_difference(0.02, 0.3, [8] * 12)
        >>> round(power_at(mdd, 0.02, 0.3, [8] * 12), 6)
        0.8
    """
    return cr1_distribution(between, within, clips_per_actor).power(difference, alpha)


# ----------------------------------------------------------------------------- from per-clip differences
@dataclass(frozen=True)
class VarianceComponents:
    """One-way (actor) variance components of per-clip differences.

    Attributes:
        between: ``sigma_b^2`` (truncated at 0).
        within: ``sigma_w^2``.
        clips_per_actor: ``n_a`` per actor, in sorted actor order.
        mean: the mean difference over clips.
    """

    between: float
    within: float
    clips_per_actor: tuple[int, ...]
    mean: float

    @property
    def n_actors(self) -> int:
        return len(self.clips_per_actor)

    @property
    def icc(self) -> float:
        """Share of the difference's variance that is between actors."""
        total = self.between + self.within
        return self.between / total if total > 0 else math.nan


def _cluster_index(labels: Sequence[Any]) -> tuple[list, np.ndarray]:
    """Sorted distinct cluster labels and each row's position among them (row order never matters)."""
    keys = sorted(set(labels))
    position = {key: i for i, key in enumerate(keys)}
    return keys, np.array([position[x] for x in labels], dtype=np.int64)


def variance_components(differences: Sequence[float], clusters: Sequence[Any]) -> VarianceComponents:
    """ANOVA estimators of ``sigma_b^2`` and ``sigma_w^2`` (valid for unequal clips per actor).

    Raises:
        PowerInputError: fewer than 2 actors, no within-actor replication, non-finite values.

    Example:
        >>> vc = variance_components([1.0, 3.0, 5.0, 7.0], ["a", "a", "b", "b"])
        >>> vc.within, vc.between, vc.clips_per_actor   # MSW = 2, MSB = 16, n0 = 2 -> (16 - 2) / 2
        (2.0, 7.0, (2, 2))
    """
    d = np.asarray(differences, dtype=np.float64).ravel()
    labels = list(clusters)
    if d.size != len(labels):
        raise PowerInputError(f"{d.size} differences but {len(labels)} cluster labels")
    if not np.isfinite(d).all():
        raise PowerInputError("differences must be finite (drop failed clips first)")
    keys, index = _cluster_index(labels)
    A, n = len(keys), d.size
    if A < 2:
        raise PowerInputError(f"{A} actor(s): between-actor variance needs at least 2")
    counts = np.bincount(index, minlength=A).astype(np.float64)
    if n - A < 1:
        raise PowerInputError("one clip per actor: within-actor variance needs replication")
    sums = np.bincount(index, weights=d, minlength=A)
    means = sums / counts
    grand = float(d.mean())
    ss_within = float(((d - means[index]) ** 2).sum())
    ss_between = float((counts * (means - grand) ** 2).sum())
    msw = ss_within / (n - A)
    msb = ss_between / (A - 1)
    n0 = (n - float((counts ** 2).sum()) / n) / (A - 1)
    return VarianceComponents(max(0.0, (msb - msw) / n0), msw, tuple(int(c) for c in counts), grand)


def cluster_robust_se(differences: Sequence[float], clusters: Sequence[Any]) -> float:
    """``SE_CR1`` of the mean difference: ``sqrt(A / (A - 1) sum_a (S_a - n_a D)^2) / n``.

    The estimate the test divides by (the module doc); equal to ``sd(actor means) / sqrt(A)`` when
    every actor has the same number of clips.

    Example:
        >>> round(cluster_robust_se([1.0, 3.0, 5.0, 7.0], ["a", "a", "b", "b"]), 6)   # actor means 2, 6
        2.0
    """
    d = np.asarray(differences, dtype=np.float64).ravel()
    labels = list(clusters)
    keys, index = _cluster_index(labels)
    if len(keys) < 2:
        raise PowerInputError("a cluster-robust SE needs at least 2 actors")
    sums = np.bincount(index, weights=d, minlength=len(keys))
    counts = np.bincount(index, minlength=len(keys)).astype(np.float64)
    mean = sums.sum() / counts.sum()
    A = len(keys)
    return float(math.sqrt(A / (A - 1) * float(((sums - counts * mean) ** 2).sum())) / counts.sum())


# ----------------------------------------------------------------------------- leaderboards
def separable_neighbours(values: Sequence[float], mdd: float, higher_is_better: bool) -> list["bool | None"]:
    """For each system, in the order given: is its gap to the next system down the ranking at least ``mdd``?

    A leaderboard marks a row ``False`` as "not separable from the next row": the data could not
    have detected a gap that small with 80% power. ``None``: the last-ranked row, a NaN value, or a
    NaN ``mdd`` (nothing to compare). Rows are ranked by value (best first, ties in input order).

    Example:
        >>> separable_neighbours([3.1, 2.9, 3.0], mdd=0.15, higher_is_better=False)   # ranked 2.9, 3.0, 3.1
        [None, False, False]
    """
    vals = [float(v) for v in values]
    out: list["bool | None"] = [None] * len(vals)
    if not math.isfinite(float(mdd)):
        return out
    sign = 1.0 if higher_is_better else -1.0
    ranked = sorted((i for i, v in enumerate(vals) if math.isfinite(v)), key=lambda i: -sign * vals[i])
    for upper, lower in zip(ranked, ranked[1:]):
        out[upper] = bool(abs(vals[upper] - vals[lower]) >= mdd)
    return out


def _pairs(frame, higher_is_better: bool):
    """Per neighbour pair of the ranking by mean: (model, next_model, differences, actors)."""
    sign = 1.0 if higher_is_better else -1.0
    means = frame.groupby("model", sort=True)["value"].mean()
    ranked = sorted(means.index, key=lambda m: (-sign * means[m], str(m)))
    by_model = {m: g.set_index("clip_id") for m, g in frame.groupby("model", sort=True)}
    for model, nxt in zip(ranked, ranked[1:]):
        a, b = by_model[model], by_model[nxt]
        common = sorted(set(a.index) & set(b.index))
        d = sign * (a.loc[common, "value"].to_numpy() - b.loc[common, "value"].to_numpy())
        yield model, nxt, float(means[model] - means[nxt]), d, a.loc[common, "actor_id"].tolist()


def detectable_differences(rows: "Iterable[Mapping] | Any", higher_is_better: bool,
                           actor_counts: Sequence[int] = (30, 20, 10, 6), alpha: float = DEFAULT_ALPHA,
                           power: float = DEFAULT_POWER, scale: float = 1.0) -> dict[str, Any]:
    """MDD of one metric from its stored per-clip rows: per neighbour pair and pooled over pairs.

    Args:
        rows: per-clip rows of several systems on one metric (``model``, ``clip_id``, ``value``,
            optional ``actor_id``/``status``; failed and non-finite rows are left out).
        higher_is_better: the metric's direction.
        actor_counts: designs to report besides the rows' own: that many actors, each with the
            rows' mean clips per actor (an actor count above the rows' is extrapolated).
        alpha, power: the test's size and power.
        scale: multiplies every difference (the catalog's ``paper_scale``: report in paper units).

    Returns:
        ``{"pairs": [...], "pooled": {...} | None, "by_actors": {A: MDD}, "n_actors", "clips_per_actor"}``:
        each pair has ``model``, ``next_model``, ``gap`` (of the system means), ``between``,
        ``within``, ``se``, ``mdd`` and ``separable`` (``|gap| >= mdd``); ``pooled`` holds the mean
        components over pairs and their MDD at the rows' design.

    Raises:
        PowerInputError: fewer than two systems.
    """
    from .significance import _rows_frame

    frame = _rows_frame(rows)
    if frame["model"].nunique() < 2:
        raise PowerInputError("detectable differences need the rows of at least two systems")
    pairs, components = [], []
    for model, nxt, gap, d, actors in _pairs(frame, higher_is_better):
        record = {"model": model, "next_model": nxt, "gap": gap * scale}
        try:
            vc = variance_components(d * scale, actors)
        except PowerInputError as err:
            pairs.append({**record, "between": math.nan, "within": math.nan, "se": math.nan, "mdd": math.nan,
                          "separable": None, "note": str(err)})
            continue
        components.append(vc)
        se = standard_error(vc.between, vc.within, vc.clips_per_actor)
        mdd = minimum_detectable_difference(vc.between, vc.within, vc.clips_per_actor, alpha, power)
        pairs.append({**record, "between": vc.between, "within": vc.within, "se": se, "mdd": mdd,
                      "separable": bool(abs(gap * scale) >= mdd), "note": ""})
    if not components:
        return {"pairs": pairs, "pooled": None, "by_actors": {}, "n_actors": 0, "clips_per_actor": 0.0}
    between = float(np.mean([c.between for c in components]))
    within = float(np.mean([c.within for c in components]))
    design = max(components, key=lambda c: sum(c.clips_per_actor)).clips_per_actor
    per_actor = float(np.mean(design))
    own = minimum_detectable_difference(between, within, design, alpha, power)
    by_actors = {}
    for count in sorted({int(a) for a in actor_counts if int(a) >= 2} | {len(design)}, reverse=True):
        by_actors[count] = minimum_detectable_difference(between, within, [per_actor] * count, alpha, power)
    return {"pairs": pairs, "n_actors": len(design), "clips_per_actor": per_actor, "by_actors": by_actors,
            "pooled": {"between": between, "within": within, "icc": between / (between + within)
                       if between + within > 0 else math.nan, "mdd": own,
                       "se": standard_error(between, within, design)}}

"""A metric that predicts MOS (UTMOS, DNSMOS), judged the way ITU-T P.1401 (07/2020) judges a quality model.

P.1401 compares a model's predictions with subjective MOS only after a **monotonic third-order mapping**
that takes away offsets and scale differences the model cannot know (a test's own use of the scale):

* **Mapping**: ``MOS_p = a + b x + c x^2 + d x^3`` fitted by least squares from the metric ``x`` to the
  MOS, non-decreasing over the range of ``x`` (a higher prediction must not map to a lower MOS): the
  unconstrained least-squares cubic when its derivative is ``>= 0`` on that range, else the least-squares
  cubic whose derivative is ``>= 0`` on it: SLSQP with the derivative held ``>= 0`` at :data:`GRID` points
  spanning the range, plus (exchange method) every point where a solution's derivative still dipped below 0,
  until its exact minimum (ends and vertex of the quadratic) is ``>= 0`` up to rounding. The problem is
  convex, so the solver's optimum is the optimum. ``x`` is centred and scaled to ``[-1, 1]`` for the fit; the
  coefficients are returned on the metric's own scale.
* **RMSE** with ``N - d`` degrees of freedom, ``d = 4`` (the mapping's parameters):
  ``sqrt(sum_i (MOS_i - MOS_p,i)^2 / (N - d))``.
* **rmse\\*** (epsilon-insensitive): an error inside the item's 95% interval counts 0,
  ``Perror_i = max(0, |MOS_i - MOS_p,i| - ci95_i)``, ``rmse* = sqrt(sum_i Perror_i^2 / (N - d))``.
* **Outlier ratio**: the share of items with ``|MOS_i - MOS_p,i| > ci95_i``.
* **ci95** of an item rated by ``M`` votes with sample standard deviation ``s``:
  ``t_{0.975}(M - 1) s / sqrt(M)`` (:func:`vote_ci95`).

Example (the 4th discrete orthogonal polynomial on 7 points is orthogonal to every cubic, so the fit is the
line and the errors are exactly it):
    >>> x = np.arange(-3.0, 4.0)
    >>> r = 0.1 * np.array([3, -7, 1, 6, 1, -7, 3])
    >>> fit = p1401(x, 3 + 0.25 * x + r, np.full(7, 0.5))
    >>> round(fit.rmse, 6), round(fit.rmse_star, 6), round(fit.outlier_ratio, 6)   # sqrt(1.54/3), sqrt(0.09/3), 3/7
    (0.716473, 0.173205, 0.428571)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

#: Parameters of the third-order mapping (P.1401's ``d`` for the degrees of freedom).
N_PARAMETERS = 4
#: Points of the metric's range where the constrained mapping's derivative is held ``>= 0``.
GRID = 201


@dataclass(frozen=True)
class P1401Fit:
    """The mapping and P.1401's statistics.

    Attributes:
        coefficients: ``(a, b, c, d)`` of ``a + b x + c x^2 + d x^3`` on the metric's scale.
        predicted: ``MOS_p`` of every item.
        rmse, rmse_star, outlier_ratio: as the module docstring defines them (NaN when ``N <= 4`` or
            without intervals).
        n_items: ``N``.
        constrained: the unconstrained cubic was not monotonic, the constrained one is used.
    """

    coefficients: tuple[float, float, float, float]
    predicted: np.ndarray
    rmse: float
    rmse_star: float
    outlier_ratio: float
    n_items: int
    constrained: bool


def vote_ci95(votes: Sequence[float]) -> float:
    """P.1401's 95% interval half-width of a MOS from its votes: ``t_{0.975}(M - 1) s / sqrt(M)``; NaN for
    a single vote.

    Example:
        >>> round(vote_ci95([4, 5, 3]), 6)    # s = 1, M = 3, t = 4.302653
        2.484138
    """
    from scipy.stats import t

    v = np.asarray(votes, dtype=float)
    if v.size < 2:
        return math.nan
    return float(t.ppf(0.975, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))


def _design(t: np.ndarray) -> np.ndarray:
    return np.stack([np.ones_like(t), t, t * t, t ** 3], axis=1)


def _lowest_slope(beta: np.ndarray) -> tuple[float, float]:
    """The smallest value of the derivative ``b + 2c t + 3d t^2`` on ``[-1, 1]`` (ends and vertex) and where."""
    _, b, c, d = beta
    points = [-1.0, 1.0]
    if d != 0 and -1.0 < -c / (3 * d) < 1.0:
        points.append(-c / (3 * d))
    return min((b + 2 * c * p + 3 * d * p * p, p) for p in points)


def _monotone(beta: np.ndarray, tol: float) -> bool:
    """The derivative is ``>= -tol`` on ``[-1, 1]``."""
    return _lowest_slope(beta)[0] >= -tol


def monotonic_cubic(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray, bool]:
    """The least-squares non-decreasing cubic from ``x`` to ``y`` (module docstring).

    Returns:
        ``(coefficients a, b, c, d on x's scale, predictions, constrained)``.

    Example:
        >>> coef, pred, constrained = monotonic_cubic([1, 2, 3, 4, 5], [1, 8, 27, 64, 125])
        >>> (np.round(coef, 9) + 0.0).tolist(), constrained
        ([0.0, 0.0, 0.0, 1.0], False)
    """
    from scipy.optimize import minimize

    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.size != ya.size or xa.size < 2 or np.ptp(xa) == 0:
        raise ValueError("the mapping needs at least two items with different metric values")
    mid, half = (xa.max() + xa.min()) / 2.0, np.ptp(xa) / 2.0
    t = (xa - mid) / half
    design = _design(t)
    beta, *_ = np.linalg.lstsq(design, ya, rcond=None)
    scale = max(float(np.abs(ya).max()), 1.0)
    constrained = not _monotone(beta, 1e-10 * scale)
    if constrained:
        line = np.polyfit(t, ya, 1)
        beta = np.array([ya.mean() if line[0] < 0 else line[1], max(line[0], 0.0), 0.0, 0.0])

        def loss(b):
            r = design @ b - ya
            return float(r @ r), 2.0 * design.T @ r

        points = list(np.linspace(-1.0, 1.0, GRID))
        for _ in range(50):  # exchange method: add where the slope still dips below 0, solve again
            grid = np.array(points)
            slopes = np.stack([np.zeros_like(grid), np.ones_like(grid), 2 * grid, 3 * grid ** 2], axis=1)
            beta = minimize(loss, beta, jac=True, method="SLSQP",
                            constraints=[{"type": "ineq", "fun": lambda b, s=slopes: s @ b, "jac": lambda b, s=slopes: s}],
                            options={"ftol": 1e-15, "maxiter": 1000}).x
            low, where = _lowest_slope(beta)
            if low >= -1e-12 * scale:
                break
            points.append(where)
        low, _ = _lowest_slope(beta)
        beta[1] -= min(low, 0.0)  # what rounding left below 0 (<= 1e-12 of the scale): lift the slope to 0
    # Below 1e-12 of the MOS scale a coefficient is 0, not the fit's rounding, whose last bits vary with the CPU's
    # BLAS (a flat fit gave b = -2.2e-13 on one machine and 0 on another).
    beta[np.abs(beta) <= 1e-12 * scale] = 0.0
    # Back to x: t = (x - mid) / half, expand a + b t + c t^2 + d t^3.
    poly_t = np.polynomial.Polynomial(beta)
    poly_x = poly_t(np.polynomial.Polynomial([-mid / half, 1.0 / half]))
    coef = np.zeros(4)
    coef[:len(poly_x.coef)] = poly_x.coef
    return coef, design @ beta, constrained


def p1401(metric: Sequence[float], mos: Sequence[float], ci95: "Sequence[float] | None" = None,
          n_parameters: int = N_PARAMETERS) -> P1401Fit:
    """Map ``metric`` to ``mos`` (:func:`monotonic_cubic`) and compute RMSE, rmse* and the outlier ratio.

    Args:
        metric: the metric's prediction per item (NaN items are left out).
        mos: the subjective MOS per item.
        ci95: each MOS's 95% interval half-width (:func:`vote_ci95`); None: rmse* and the outlier ratio
            are NaN.
        n_parameters: ``d`` of ``N - d``.
    """
    x, y = np.asarray(metric, dtype=float), np.asarray(mos, dtype=float)
    ci = np.asarray(ci95, dtype=float) if ci95 is not None else np.full(x.shape, np.nan)
    keep = np.isfinite(x) & np.isfinite(y)
    x, y, ci = x[keep], y[keep], ci[keep]
    coef, predicted, constrained = monotonic_cubic(x, y)
    n = int(x.size)
    dof = n - n_parameters
    error = np.abs(y - predicted)
    rmse = math.sqrt(float(error @ error) / dof) if dof > 0 else math.nan
    if ci95 is None or not np.isfinite(ci).all():
        rmse_star = outliers = math.nan
    else:
        excess = np.maximum(0.0, error - ci)
        rmse_star = math.sqrt(float(excess @ excess) / dof) if dof > 0 else math.nan
        outliers = float((error > ci).mean())
    return P1401Fit(tuple(float(c) for c in coef), predicted, rmse, rmse_star, outliers, n, constrained)

"""FID (paper Table 7): streaming Gaussian statistics of features and the Frechet distance.

Pure math: the Inception features come from :mod:`hug_vis_dataset.models.inception` through the
vision-driven scorer (:mod:`hug_vis_dataset.tasks.generation`), which pools every frame of every
clip of a system against every reference frame (DisCo / StableAnimator practice).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FID_EPS = 1e-6


@dataclass
class GaussianStats:
    """Streaming first and second moments of feature vectors (float64 sums: batch-independent).

    Example:
        >>> import numpy as np
        >>> x = np.random.default_rng(0).normal(size=(50, 3))
        >>> s = GaussianStats(3); s.update(x[:7]); s.update(x[7:])
        >>> np.allclose(s.covariance(), np.cov(x, rowvar=False))
        True
    """

    dim: int
    n: int = 0
    sum_x: np.ndarray = field(default=None)  # type: ignore[assignment]
    sum_xx: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self):
        if self.sum_x is None:
            self.sum_x = np.zeros(self.dim)
        if self.sum_xx is None:
            self.sum_xx = np.zeros((self.dim, self.dim))

    def update(self, features: np.ndarray) -> None:
        f = np.asarray(features, dtype=np.float64)
        if f.ndim != 2 or f.shape[1] != self.dim:
            raise ValueError(f"features must be (n, {self.dim}), got {f.shape}")
        if not np.all(np.isfinite(f)):
            raise ValueError("features contain NaN or inf")
        self.n += len(f)
        self.sum_x += f.sum(0)
        self.sum_xx += f.T @ f

    def mean(self) -> np.ndarray:
        if self.n == 0:
            raise ValueError("no features accumulated")
        return self.sum_x / self.n

    def covariance(self) -> np.ndarray:
        """Unbiased covariance (ddof=1, as ``np.cov`` in the FID reference code)."""
        if self.n < 2:
            raise ValueError(f"covariance needs at least 2 samples, got {self.n}")
        mu = self.mean()
        return (self.sum_xx - self.n * np.outer(mu, mu)) / (self.n - 1)

    def save(self, path: "str | Path") -> None:
        np.savez(path, n=self.n, sum_x=self.sum_x, sum_xx=self.sum_xx)

    @classmethod
    def load(cls, path: "str | Path") -> "GaussianStats":
        with np.load(path) as z:
            return cls(int(z["sum_x"].shape[0]), int(z["n"]), z["sum_x"].copy(), z["sum_xx"].copy())


def frechet_distance(mu1: np.ndarray, sigma1: np.ndarray, mu2: np.ndarray, sigma2: np.ndarray,
                     eps: float = FID_EPS) -> float:
    """``||mu1 - mu2||^2 + tr(S1 + S2 - 2 sqrt(S1 S2))`` in float64.

    When ``sqrtm(S1 S2)`` is not finite (singular product), ``eps * I`` is added to both
    covariances (the usual fallback of the FID reference code). A small imaginary part from
    numerical error is dropped; a large one (> 1e-3) raises.

    Example:
        >>> import numpy as np
        >>> round(frechet_distance(np.zeros(2), np.eye(2), np.ones(2), 4 * np.eye(2)), 6)
        4.0
    """
    from scipy import linalg

    mu1, mu2 = np.atleast_1d(np.asarray(mu1, np.float64)), np.atleast_1d(np.asarray(mu2, np.float64))
    s1, s2 = np.atleast_2d(np.asarray(sigma1, np.float64)), np.atleast_2d(np.asarray(sigma2, np.float64))
    if mu1.shape != mu2.shape or s1.shape != s2.shape or s1.shape != (mu1.size, mu1.size):
        raise ValueError(f"shape mismatch: mu {mu1.shape}/{mu2.shape}, sigma {s1.shape}/{s2.shape}")
    for arr in (mu1, mu2, s1, s2):
        if not np.all(np.isfinite(arr)):
            raise ValueError("statistics contain NaN or inf")

    def _sqrtm(a):
        r = linalg.sqrtm(a)
        return r[0] if isinstance(r, tuple) else r

    diff = mu1 - mu2
    covmean = _sqrtm(s1 @ s2)
    if not np.all(np.isfinite(covmean)):
        offset = np.eye(s1.shape[0]) * eps
        covmean = _sqrtm((s1 + offset) @ (s2 + offset))
    if np.iscomplexobj(covmean):
        if not np.allclose(np.diagonal(covmean).imag, 0, atol=1e-3):
            raise ValueError(f"sqrtm has a large imaginary component {np.max(np.abs(covmean.imag))}")
        covmean = covmean.real
    return float(diff @ diff + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean))


def fid_from_stats(a: GaussianStats, b: GaussianStats) -> float:
    """FID between two accumulated feature sets; warns when either is rank-deficient."""
    for label, s in (("generated", a), ("reference", b)):
        if s.n < s.dim:
            warnings.warn(f"FID {label} set has {s.n} frames < {s.dim} feature dimensions: "
                          "the covariance is singular and the value is unstable", stacklevel=2)
    return frechet_distance(a.mean(), a.covariance(), b.mean(), b.covariance())

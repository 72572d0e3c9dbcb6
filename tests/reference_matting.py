"""Straightforward re-derivation of the matting metrics from their definitions (RVM-style, per frame).

Used by the tests and by ``scripts/bench_matting.py`` as the independent reference for
``hug_vis_dataset.metrics.matting``. It never calls the library: plain NumPy + OpenCV, one frame at
a time, the way the Robust Video Matting evaluation script computes them (``cv2.filter2D`` with a
9x9 kernel, ``cv2.connectedComponentsWithStats`` per threshold, masks per threshold).

``dtype=np.float32`` reproduces the reference script's arithmetic; ``np.float64`` gives the same
definitions with accurate sums (used where the tests need agreement far below float32 rounding).
"""

from __future__ import annotations

import math

import cv2
import numpy as np


def to_alpha(frame: np.ndarray, dtype=np.float32) -> np.ndarray:
    """uint8 -> float32 k / 255 (as the script reads PNGs); floats -> float32 first, then ``dtype``."""
    if frame.dtype == np.uint8:
        return (frame.astype(np.float32) / 255).astype(dtype)
    return frame.astype(np.float32).astype(dtype)


def ref_mad(p: np.ndarray, t: np.ndarray) -> float:
    return float(np.abs(p - t).mean() * 1e3)


def ref_mse(p: np.ndarray, t: np.ndarray) -> float:
    return float(((p - t) ** 2).mean() * 1e3)


def ref_dtssd(p: np.ndarray, p_prev: np.ndarray, t: np.ndarray, t_prev: np.ndarray) -> float:
    e = ((p - p_prev) - (t - t_prev)) ** 2
    return float(np.sqrt(np.sum(e) / t.size) * 1e2)


def gauss_kernels(sigma: float = 1.4, epsilon: float = 1e-2) -> tuple[np.ndarray, np.ndarray]:
    """9x9 f_x (element-wise loops, as in the definition) and f_y = f_x^T, unit L2 norm."""
    half = math.ceil(sigma * math.sqrt(-2 * math.log(math.sqrt(2 * math.pi) * sigma * epsilon)))
    size = 2 * half + 1

    def gauss(x):
        return math.exp(-x * x / (2 * sigma * sigma)) / (sigma * math.sqrt(2 * math.pi))

    fx = np.zeros((size, size))
    for i in range(size):
        for j in range(size):
            x = j - half
            fx[i, j] = gauss(i - half) * (-x * gauss(x) / sigma ** 2)
    fx /= np.sqrt((fx ** 2).sum())
    return fx, fx.T.copy()


_FX, _FY = gauss_kernels()


def ref_grad(p: np.ndarray, t: np.ndarray, normalize: bool = True) -> float:
    def magnitude(img):
        if normalize:
            out = np.zeros_like(img)
            cv2.normalize(img, out, 1.0, 0.0, cv2.NORM_MINMAX)
            img = out
        gx = cv2.filter2D(img, -1, _FX, borderType=cv2.BORDER_REPLICATE)
        gy = cv2.filter2D(img, -1, _FY, borderType=cv2.BORDER_REPLICATE)
        return np.sqrt(gx ** 2 + gy ** 2)

    return float(((magnitude(t) - magnitude(p)) ** 2).sum() / 1000)


def ref_conn(p: np.ndarray, t: np.ndarray, step: float = 0.1) -> float:
    thresholds = np.arange(0, 1 + step, step)
    round_down = -np.ones_like(t)
    for i in range(1, len(thresholds)):
        inter = ((t >= thresholds[i]) & (p >= thresholds[i])).astype(np.uint8)
        _, labels, stats, _ = cv2.connectedComponentsWithStats(inter, connectivity=4)
        sizes = stats[1:, cv2.CC_STAT_AREA]
        omega = np.zeros(t.shape, bool)
        if len(sizes):
            omega = labels == int(np.argmax(sizes)) + 1
        round_down[(round_down == -1) & ~omega] = thresholds[i - 1]
    round_down[round_down == -1] = 1
    dt = t - round_down
    dp = p - round_down
    phi_t = 1 - dt * (dt >= 0.15)
    phi_p = 1 - dp * (dp >= 0.15)
    return float(np.sum(np.abs(phi_t - phi_p)) / 1000)


def ref_clip(pred: np.ndarray, ref: np.ndarray, dtype=np.float32, normalize: bool = True) -> dict[str, np.ndarray]:
    """All five metrics of a clip (T, H, W), frame by frame; dtSSD for frames 1..T-1."""
    out: dict[str, list[float]] = {"mad": [], "mse": [], "grad": [], "conn": [], "dtssd": []}
    prev = None
    for pf, tf in zip(pred, ref):
        p, t = to_alpha(pf, dtype), to_alpha(tf, dtype)
        out["mad"].append(ref_mad(p, t))
        out["mse"].append(ref_mse(p, t))
        out["grad"].append(ref_grad(p, t, normalize))
        out["conn"].append(ref_conn(p, t))
        if prev is not None:
            out["dtssd"].append(ref_dtssd(p, prev[0], t, prev[1]))
        prev = (p, t)
    return {k: np.asarray(v, np.float64) for k, v in out.items()}

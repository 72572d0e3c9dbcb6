"""Video matting metrics of Table 11 (MAD, MSE, Grad, Conn, dtSSD) and the motion-difficulty analysis.

The definitions follow Robust Video Matting's ``evaluation/evaluate_lr.py`` (reused by MatAnyone),
the de-facto reference for the paper's numbers. Alphas are read as the reference reads them:
8-bit frames become float32 ``k / 255``; float frames (in [0, 1]) are evaluated at float32 too.
Every discrete decision (Conn thresholds, the ``d >= 0.15`` cut, the min-max normalisation of Grad)
is taken exactly as the reference takes it; sums are accumulated exactly (8-bit MAD/MSE/dtSSD) or
in float64 (the reference sums in float32), so values agree to about 1e-7 relative, see
``scripts/bench_matting.py``. One known source of larger differences: Grad of 8-bit frames is
computed from exact ``k / 255`` values and an exact min-max normalisation, while the script filters
float32-rounded (and float32-normalised) frames; where the gradient error is tiny next to the
gradient magnitudes, that input rounding is amplified and the two can differ by a few 1e-6
relative (seen on 2x1-pixel frames).

Per frame, with p the prediction and t the reference (paper scaling):

* MAD = mean|p - t| x 1e3, MSE = mean (p - t)^2 x 1e3;
* Grad = sum (|grad t| - |grad p|)^2 / 1000, Gaussian-derivative filters (sigma 1.4, 9x9, unit L2
  norm, replicate border) on min-max normalised frames (``grad_normalize=False``: raw frames, as
  RVM's high-resolution script);
* Conn = sum |phi_t - phi_p| / 1000 over thresholds 0, 0.1, ..., 1 (largest 4-connected component);
* dtSSD_k = sqrt(sum ((p_k - p_{k-1}) - (t_k - t_{k-1}))^2 / N) x 1e2 for frames k >= 1.

How it is fast (numba kernels in ``_matting_kernels.py``, one pass over a chunk of frames, frames
spread over threads; a frame's value is the same with 1 or N threads, in any process, on any CPU:
no fastmath, every float sum in an order fixed by the code):

* MAD/MSE/dtSSD: 8-bit frames accumulate exact integers, scaled by 1/255 once; asked for alone,
  they take a serial kernel computing only the requested sums;
* Grad: the 9x9 filters are separable (``f_x = G (x) dG``), applied as two 9-tap passes with their
  symmetry and a ring buffer of rows; tiles of 16 columns whose 9x9 neighbourhood is flat in both
  frames are skipped (both gradients are exactly 0 there, so the value is unchanged);
* Conn: the components of ``{min(t, p) >= theta_i}`` for all ten thresholds come from one union-find
  sweep over maximal horizontal runs of equal level, adding them level by level from the top (a
  uniform stretch of a row is one node); the round-down level of a pixel is read from the link
  tree. Ties between equal largest components go to the first in raster order, which is the label
  order of ``cv2.connectedComponentsWithStats`` in the reference script. See
  ``scripts/bench_matting.py`` for measured speed (a realistic figure matte and a noisy worst case)
  and agreement.

Aggregation over clips (:func:`aggregate`):

* ``rvm`` (paper default): RVM's spreadsheet -- per frame index the mean over the clips that have
  that frame, then the mean over frame indices; dtSSD is recorded as 0 at frame 0. Two artefacts of
  the spreadsheet are *not* reproduced silently: its summary cell ``AVERAGE(C2:ZZ2)`` only covers
  frame indices 0-699 (offered as ``rvm_max_frames=700``), and it writes per-index averages only for
  as many indices as the first clip has frames (irrelevant when clips have equal length; not offered).
* ``clip``: the mean of per-clip means (every clip weighs the same).

Example:
    >>> import numpy as np
    >>> ref = np.zeros((2, 3, 3), np.uint8); ref[:, 1, 1] = 255
    >>> pred = ref.copy(); pred[1, 1, 1] = 0
    >>> mad(pred, ref).round(3).tolist()
    [0.0, 111.111]
    >>> dtssd(pred, ref).round(3).tolist()
    [33.333]
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np


FRAME_METRICS: tuple[str, ...] = ("mad", "mse", "grad", "conn", "dtssd")
PROTOCOLS: tuple[str, ...] = ("rvm", "clip")
_KERNEL_COLUMNS: tuple[str, ...] = ("mad", "mse", "dtssd", "grad", "conn")  # score_chunk's output order
GRAD_SIGMA = 1.4
GRAD_EPSILON = 1e-2
CONN_STEP = 0.1
CONN_CUT = 0.15
MOTION_MASK_THRESHOLD = 0.5


class MattingInputError(ValueError):
    """Alpha inputs of the wrong shape, dtype or range, NaN, or an empty clip."""


# ----------------------------------------------------------------------------- filters
def gauss_filter(sigma: float = GRAD_SIGMA, epsilon: float = GRAD_EPSILON) -> tuple[np.ndarray, np.ndarray]:
    """The reference's 2-D Gaussian-derivative filters ``(f_x, f_y)``, unit L2 norm, ``f_y = f_x.T``.

    ``half = ceil(sigma sqrt(-2 ln(sqrt(2 pi) sigma epsilon)))``; ``f_x[i, j] = G(i - half) dG(j - half)``.

    Example:
        >>> fx, fy = gauss_filter()
        >>> fx.shape, round(float((fx ** 2).sum()), 12), bool((fy == fx.T).all())
        ((9, 9), 1.0, True)
    """
    g, dg, inv_norm = _separable_filter(sigma, epsilon)
    fx = np.outer(g, dg) * inv_norm
    return fx, fx.T.copy()


def _separable_filter(sigma: float, epsilon: float) -> tuple[np.ndarray, np.ndarray, float]:
    half = int(math.ceil(sigma * math.sqrt(-2.0 * math.log(math.sqrt(2.0 * math.pi) * sigma * epsilon))))
    x = np.arange(-half, half + 1, dtype=np.float64)
    g = np.exp(-(x ** 2) / (2.0 * sigma ** 2)) / (sigma * np.sqrt(2.0 * np.pi))
    dg = -x * g / sigma ** 2
    # ||outer(g, dg)||_2 = ||g|| ||dg||; applied after filtering, so the passes use raw g and dg.
    inv_norm = 1.0 / float(np.sqrt((np.outer(g, dg) ** 2).sum()))
    return g, dg, inv_norm


def grad_magnitude(frame: Any, normalize: bool = True,
                   window: "tuple[slice, slice] | None" = None) -> np.ndarray:
    """Per-pixel gradient magnitude that Grad compares: ``sqrt((f_x * a)^2 + (f_y * a)^2)``, float64.

    The same filters, border (replicate) and min-max rule as :func:`grad` (a frame whose range is
    at most ``DBL_EPSILON`` normalises to zeros, as ``cv2.normalize`` does), so
    ``((grad_magnitude(t) - grad_magnitude(p)) ** 2).sum() / 1000`` is Grad of the frame; the
    region-restricted errors of :mod:`.boundary` sum it over part of the frame instead.

    Args:
        frame: one alpha frame (H, W), uint8 0..255 or float in [0, 1].
        normalize: min-max normalise first (``grad_normalize`` of the scorers), over the whole frame.
        window: ``(rows, cols)`` slices (step 1): return only the magnitude there, equal to the
            whole frame's magnitude on that window, filtering just the window and the filter's reach.

    Example:
        >>> a = np.zeros((9, 9)); a[:, 5:] = 1.0   # a vertical step between columns 4 and 5
        >>> grad_magnitude(a)[4].round(2).tolist()
        [0.0, 0.1, 0.53, 1.56, 2.66, 2.66, 1.56, 0.53, 0.1]
        >>> grad_magnitude(a, window=(slice(4, 5), slice(3, 6))).round(2).tolist()
        [[1.56, 2.66, 2.66]]
    """
    import cv2

    a = np.asarray(frame)
    if a.ndim != 2:
        raise MattingInputError(f"frame must have shape (H, W), got {a.shape}")
    unit = 1.0 / 255.0 if a.dtype == np.uint8 else 1.0
    g, dg, inv_norm = _separable_filter(GRAD_SIGMA, GRAD_EPSILON)
    rows, cols = window if window is not None else (slice(0, a.shape[0]), slice(0, a.shape[1]))
    rows = slice(*rows.indices(a.shape[0])[:2])
    cols = slice(*cols.indices(a.shape[1])[:2])
    # The filter reaches `half` pixels: filter the window grown by that much (the replicate border
    # then only acts at the frame's own edges), and cut the window back out.
    half = g.size // 2
    r0, c0 = max(rows.start - half, 0), max(cols.start - half, 0)
    r1, c1 = min(rows.stop + half, a.shape[0]), min(cols.stop + half, a.shape[1])
    sub = a[r0:r1, c0:c1].astype(np.float64)
    if unit != 1.0:
        sub /= 255.0
    if normalize:
        lo, hi = float(a.min()), float(a.max())
        if unit != 1.0:
            lo, hi = lo / 255.0, hi / 255.0
        if hi - lo > float(np.finfo(np.float64).eps):
            sub -= lo
            sub /= hi - lo
        else:
            sub[:] = 0.0
    # f_x = G (x) dG is separable: two 9-tap passes instead of one 81-tap filter.
    gx = cv2.sepFilter2D(sub, cv2.CV_64F, dg, g, borderType=cv2.BORDER_REPLICATE)
    gy = cv2.sepFilter2D(sub, cv2.CV_64F, g, dg, borderType=cv2.BORDER_REPLICATE)
    # In place: a 1080p frame is 16 MB per float64 temporary.
    np.multiply(gx, gx, out=gx)
    np.multiply(gy, gy, out=gy)
    gx += gy
    np.sqrt(gx, out=gx)
    gx *= inv_norm
    return gx[rows.start - r0:rows.stop - r0, cols.start - c0:cols.stop - c0]


# ----------------------------------------------------------------------------- validation
def _as_alpha(name: str, arr: Any) -> np.ndarray:
    arr = np.asarray(arr)
    if arr.ndim != 3:
        raise MattingInputError(f"{name} must have shape (T, H, W), got {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0 or arr.shape[2] == 0:
        raise MattingInputError(f"{name} is empty: shape {arr.shape}")
    if arr.dtype == np.uint8:
        return np.ascontiguousarray(arr)
    if not np.issubdtype(arr.dtype, np.floating):
        raise MattingInputError(f"{name} must be uint8 (0..255) or float in [0, 1], got dtype {arr.dtype}")
    if np.isnan(arr).any():
        raise MattingInputError(f"{name} contains NaN")
    lo, hi = float(arr.min()), float(arr.max())
    if lo < 0.0 or hi > 1.0:
        raise MattingInputError(f"{name} values must lie in [0, 1], got [{lo}, {hi}]")
    return np.ascontiguousarray(arr, dtype=np.float32)


def _check_pair(pred: Any, ref: Any) -> tuple[np.ndarray, np.ndarray]:
    p = _as_alpha("pred", pred)
    t = _as_alpha("ref", ref)
    if p.shape != t.shape:
        raise MattingInputError(f"shape mismatch: pred {p.shape} vs ref {t.shape}")
    if p.dtype != t.dtype:
        # Mixed inputs: bring the 8-bit side to float32 k / 255, what the kernel would compute.
        p, t = as_unit_alpha(p), as_unit_alpha(t)
    return p, t


def _check_metrics(metrics: "Iterable[str] | None") -> tuple[str, ...]:
    chosen = FRAME_METRICS if metrics is None else tuple(metrics)
    unknown = sorted(set(chosen) - set(FRAME_METRICS))
    if unknown or not chosen:
        raise ValueError(f"unknown or no metrics {unknown or chosen}; choose from {FRAME_METRICS}")
    return chosen


# ----------------------------------------------------------------------------- per-frame core
def _score_chunk(p: np.ndarray, t: np.ndarray, prev: "tuple[np.ndarray, np.ndarray] | None",
                 metrics: tuple[str, ...], grad_normalize: bool) -> np.ndarray:
    """Raw per-frame values (n, 5) in paper scaling; dtSSD NaN for a frame without predecessor."""
    import numba

    from . import _matting_kernels as K

    g, dg, inv_norm = _separable_filter(GRAD_SIGMA, GRAD_EPSILON)
    if prev is None:
        pp, tp, has_prev = p[0], t[0], False
    else:
        pp, tp, has_prev = prev[0].astype(p.dtype, copy=False), prev[1].astype(t.dtype, copy=False), True
    if "grad" not in metrics and "conn" not in metrics:
        raw = K.pointwise_chunk(p, t, np.ascontiguousarray(pp), np.ascontiguousarray(tp), has_prev,
                                "mad" in metrics, "mse" in metrics, "dtssd" in metrics)
        return _scale(raw, p.shape[1] * p.shape[2])
    # Frames are the parallel grain: with one frame or one thread, skip the parallel region.
    parallel = p.shape[0] > 1 and numba.get_num_threads() > 1
    kernel = K.score_chunk if parallel else K.score_chunk_serial
    raw = kernel(p, t, np.ascontiguousarray(pp), np.ascontiguousarray(tp), has_prev,
                 "dtssd" in metrics, "grad" in metrics, "conn" in metrics, bool(grad_normalize), g, dg, inv_norm,
                 K.CONN_THRESHOLDS, K.CONN_THRESHOLDS_F32, K.CONN_CUT_F32, K.LEVEL_LUT, K.PHI_TABLE,
                 numba.get_num_threads() if parallel else 1)
    return _scale(raw, p.shape[1] * p.shape[2])


def _scale(raw: np.ndarray, n_pix: int) -> np.ndarray:
    out = np.empty_like(raw)
    # The kernel returns sums in alpha units (8-bit sums are exact integers times 1/255).
    out[:, 0] = raw[:, 0] / n_pix * 1e3
    out[:, 1] = raw[:, 1] / n_pix * 1e3
    out[:, 2] = np.sqrt(raw[:, 2] / n_pix) * 1e2
    out[:, 3] = raw[:, 3] / 1000.0
    out[:, 4] = raw[:, 4] / 1000.0
    return out


def matting_frame_metrics(pred: Any, ref: Any, metrics: "Iterable[str] | None" = None,
                          grad_normalize: bool = True) -> dict[str, np.ndarray]:
    """All requested matting metrics of one clip held in memory, in a single pass.

    Args:
        pred: predicted alpha, (T, H, W) uint8 in 0..255 or float in [0, 1].
        ref: reference alpha, same shape.
        metrics: subset of ``FRAME_METRICS`` (default all five).
        grad_normalize: min-max normalise each frame before Grad (the low-resolution script).

    Returns:
        ``{name: float64 array}``; length T, except ``dtssd`` of length T - 1.

    Example:
        >>> import numpy as np
        >>> a = np.full((2, 4, 4), 0.5, np.float32)
        >>> {k: v.tolist() for k, v in matting_frame_metrics(a, a).items()}
        {'mad': [0.0, 0.0], 'mse': [0.0, 0.0], 'grad': [0.0, 0.0], 'conn': [0.0, 0.0], 'dtssd': [0.0]}
    """
    chosen = _check_metrics(metrics)
    p, t = _check_pair(pred, ref)
    values = _score_chunk(p, t, None, chosen, grad_normalize)
    return _columns(values, chosen, first_chunk=True)


def _columns(values: np.ndarray, chosen: tuple[str, ...], first_chunk: bool) -> dict[str, np.ndarray]:
    out = {}
    for name in chosen:
        col = values[:, _KERNEL_COLUMNS.index(name)]
        out[name] = np.ascontiguousarray(col[1:] if (name == "dtssd" and first_chunk) else col, np.float64)
    return out


def mad(pred: Any, ref: Any) -> np.ndarray:
    """Per-frame MAD x1e3. Example: ``mad(np.zeros((1, 2, 2)), np.ones((1, 2, 2)))`` -> ``[1000.]``.

    >>> mad(np.zeros((1, 2, 2)), np.ones((1, 2, 2))).tolist()
    [1000.0]
    """
    return matting_frame_metrics(pred, ref, ("mad",))["mad"]


def mse(pred: Any, ref: Any) -> np.ndarray:
    """Per-frame MSE x1e3.

    >>> mse(np.zeros((1, 2, 2)), np.full((1, 2, 2), 0.5)).tolist()
    [250.0]
    """
    return matting_frame_metrics(pred, ref, ("mse",))["mse"]


def grad(pred: Any, ref: Any, normalize: bool = True) -> np.ndarray:
    """Per-frame gradient error / 1000 (``normalize``: per-frame min-max normalisation first).

    >>> grad(np.zeros((1, 8, 8)), np.zeros((1, 8, 8))).tolist()
    [0.0]
    """
    return matting_frame_metrics(pred, ref, ("grad",), grad_normalize=normalize)["grad"]


def conn(pred: Any, ref: Any) -> np.ndarray:
    """Per-frame connectivity error / 1000.

    >>> conn(np.zeros((1, 3, 3)), np.ones((1, 3, 3))).tolist()
    [0.009]
    """
    return matting_frame_metrics(pred, ref, ("conn",))["conn"]


def dtssd(pred: Any, ref: Any) -> np.ndarray:
    """Per-frame dtSSD x1e2 for frames 1..T-1 (length T - 1).

    >>> dtssd(np.zeros((2, 1, 2)), np.stack([np.zeros((1, 2)), np.ones((1, 2))])).tolist()
    [100.0]
    """
    return matting_frame_metrics(pred, ref, ("dtssd",))["dtssd"]


# ----------------------------------------------------------------------------- streaming
def _chunks_of(source: Any, chunk_frames: int) -> Iterator[np.ndarray]:
    """Chunks from a path (PNG folder / video), an array (T, H, W) or an iterable of chunks."""
    if isinstance(source, (str, Path)):
        from ..readers.media import iter_alpha_frames

        yield from iter_alpha_frames(source, chunk_frames)
    elif isinstance(source, np.ndarray):
        if source.ndim != 3:
            raise MattingInputError(f"clip array must have shape (T, H, W), got {source.shape}")
        for start in range(0, source.shape[0], chunk_frames):
            yield source[start:start + chunk_frames]
    else:
        for chunk in source:
            chunk = np.asarray(chunk)
            if chunk.ndim == 2:  # a single frame
                chunk = chunk[None]
            yield chunk


def _rechunk(chunks: Iterable[np.ndarray], size: int) -> Iterator[np.ndarray]:
    """Re-cut a stream of (n, H, W) chunks into chunks of exactly ``size`` frames (last may be short)."""
    buffer: list[np.ndarray] = []
    held = 0
    for chunk in chunks:
        while chunk.shape[0]:
            take = min(size - held, chunk.shape[0])
            buffer.append(chunk[:take])
            held += take
            chunk = chunk[take:]
            if held == size:
                yield buffer[0] if len(buffer) == 1 else np.concatenate(buffer)
                buffer, held = [], 0
    if held:
        yield buffer[0] if len(buffer) == 1 else np.concatenate(buffer)


def paired_alpha_chunks(pred_source: Any, ref_source: Any, chunk_frames: int = 32
                  ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Checked (pred, ref) chunks of exactly ``chunk_frames`` frames (the last may be short).

    Each pair has passed the pair check (shape, dtype, range; mixed 8-bit/float sides both become
    float32), and the frame size is the same throughout the clip. Every streamed matting scorer
    reads its clip through this.

    Args:
        pred_source, ref_source: PNG folder or video paths, (T, H, W) arrays, or iterables of chunks.
        chunk_frames: frames per yielded chunk.

    Raises:
        MattingInputError: different frame counts, a frame size change, bad values.

    Example:
        >>> a = np.zeros((5, 2, 2), np.uint8)
        >>> [p.shape[0] for p, _ in paired_alpha_chunks(a, a, chunk_frames=2)]
        [2, 2, 1]
    """
    if chunk_frames < 1:
        raise ValueError("chunk_frames must be >= 1")
    frame_shape = None
    frames = 0
    p_iter = _rechunk(_chunks_of(pred_source, chunk_frames), chunk_frames)
    t_iter = _rechunk(_chunks_of(ref_source, chunk_frames), chunk_frames)
    sentinel = object()
    while True:
        pc = next(p_iter, sentinel)
        tc = next(t_iter, sentinel)
        if pc is sentinel and tc is sentinel:
            return
        if pc is sentinel or tc is sentinel:
            longer = "reference" if pc is sentinel else "prediction"
            raise MattingInputError(f"frame count mismatch: the {longer} has more than {frames} frames")
        if pc.shape[0] != tc.shape[0]:
            raise MattingInputError(f"frame count mismatch near frame {frames + min(len(pc), len(tc))}")
        p, t = _check_pair(pc, tc)
        if frame_shape is not None and frame_shape != p.shape[1:]:
            raise MattingInputError(f"frame size changes at frame {frames}: {frame_shape} -> {p.shape[1:]}")
        frame_shape = p.shape[1:]
        yield p, t
        frames += p.shape[0]


def as_unit_alpha(chunk: np.ndarray) -> np.ndarray:
    """Alpha frames as the matting definitions read them: 8-bit ``k`` as float32 ``k / 255``, float
    frames (in [0, 1]) unchanged. What a per-frame row of a matting task receives.

    Example:
        >>> as_unit_alpha(np.array([[[0, 51, 255]]], np.uint8)).tolist()
        [[[0.0, 0.20000000298023224, 1.0]]]
    """
    return chunk.astype(np.float32) / np.float32(255) if chunk.dtype == np.uint8 else chunk


def score_matting_clip(pred_source: Any, ref_source: Any, chunk_frames: int = 32,
                       metrics: "Iterable[str] | None" = None, grad_normalize: bool = True,
                       on_chunk: "Callable[[np.ndarray, np.ndarray], None] | None" = None) -> dict[str, Any]:
    """Score one clip streamed in chunks; memory is bounded by ``chunk_frames`` whatever the length.

    The last frame of each chunk is carried over so dtSSD spans chunk boundaries; values do not
    depend on ``chunk_frames``. ``on_chunk(pred, ref)`` is called with every checked chunk pair after
    it is scored, so other per-frame metrics share this decode (the matting task's pass).

    Args:
        pred_source: a PNG folder or video path, a (T, H, W) array, or an iterable of (n, H, W) chunks.
        ref_source: the same for the reference alpha.
        chunk_frames: frames scored per kernel call (also the parallel grain: frames of a chunk are
            spread over the threads).
        metrics: subset of ``FRAME_METRICS`` (default all).
        grad_normalize: see :func:`grad`.

    Returns:
        ``{"frames": T, "per_frame": {name: array}, "clip": {name: mean}}``; ``clip["dtssd"]`` is NaN
        for a one-frame clip (no frame pair).

    Example:
        >>> import numpy as np
        >>> ref = np.linspace(0, 1, 5 * 6 * 7, dtype=np.float32).reshape(5, 6, 7)
        >>> out = score_matting_clip(ref * 0.5, ref, chunk_frames=2, metrics=("mad", "dtssd"))
        >>> out["frames"], len(out["per_frame"]["dtssd"]), round(out["clip"]["mad"], 3)
        (5, 4, 250.0)
    """
    chosen = _check_metrics(metrics)
    collected: dict[str, list[np.ndarray]] = {name: [] for name in chosen}
    prev = None
    frames = 0
    for p, t in paired_alpha_chunks(pred_source, ref_source, chunk_frames):
        values = _score_chunk(p, t, prev, chosen, grad_normalize)
        for name, col in _columns(values, chosen, first_chunk=prev is None).items():
            collected[name].append(col)
        if on_chunk is not None:
            on_chunk(p, t)
        # Copy: the chunk buffer may be reused by the reader.
        prev = (p[-1].copy(), t[-1].copy())
        frames += p.shape[0]
    if frames == 0:
        raise MattingInputError("empty clip: no frames")
    per_frame = {name: np.concatenate(cols) if cols else np.zeros(0) for name, cols in collected.items()}
    clip = {name: (float(v.mean()) if v.size else float("nan")) for name, v in per_frame.items()}
    return {"frames": frames, "per_frame": per_frame, "clip": clip}


# ----------------------------------------------------------------------------- aggregation
def aggregate(per_clip_frame_values: Sequence[Any], protocol: str = "rvm", temporal: bool = False,
              rvm_max_frames: "int | None" = None) -> float:
    """Aggregate per-frame values of several clips into one number.

    Args:
        per_clip_frame_values: one 1-D array per clip (as in ``score_matting_clip(...)["per_frame"][m]``).
        protocol: ``"rvm"`` (mean over frame index of the per-index mean over clips; paper default)
            or ``"clip"`` (mean of per-clip means).
        temporal: the arrays are dtSSD-style (frames 1..T-1); under ``rvm`` a 0 is recorded for
            frame 0 of every clip, as RVM does.
        rvm_max_frames: ``700`` reproduces RVM's summary cell ``AVERAGE(C2:ZZ2)`` (frame indices
            0-699 only); ``None`` (default) uses every frame index.

    Example:
        >>> aggregate([[1.0, 3.0], [5.0]], "rvm"), aggregate([[1.0, 3.0], [5.0]], "clip")
        (3.0, 3.5)
        >>> aggregate([[2.0], []], "rvm", temporal=True)  # clips of 2 and 1 frames
        1.0
    """
    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    if rvm_max_frames is not None and (protocol != "rvm" or rvm_max_frames < 1):
        raise ValueError("rvm_max_frames is a positive cap of the rvm protocol")
    clips = [np.asarray(v, dtype=np.float64).ravel() for v in per_clip_frame_values]
    if not clips:
        raise ValueError("no clips to aggregate")
    for i, v in enumerate(clips):
        if np.isnan(v).any():
            raise ValueError(f"clip {i} has NaN values")
    if protocol == "clip":
        empty = [i for i, v in enumerate(clips) if v.size == 0]
        if empty:
            raise ValueError(f"clips {empty} have no frames for this metric (a one-frame clip has no dtSSD)")
        return float(np.mean([v.mean() for v in clips]))
    if temporal:
        clips = [np.concatenate([[0.0], v]) for v in clips]
    length = max(v.size for v in clips)
    if length == 0:
        raise ValueError("no frames to aggregate")
    sums = np.zeros(length)
    counts = np.zeros(length)
    for v in clips:
        sums[: v.size] += v
        counts[: v.size] += 1
    per_index = sums / counts  # every index < length has at least one clip
    if rvm_max_frames is not None:
        per_index = per_index[:rvm_max_frames]
    return float(per_index.mean())


# ----------------------------------------------------------------------------- motion difficulty
def motion_stats(ref_chunks: Any, chunk_frames: int = 32, threshold: float = MOTION_MASK_THRESHOLD
                 ) -> tuple[float, float]:
    """(U_s, V_s) of one reference clip, streamed (paper Eq. 5-6).

    U_s = mean over t of mean |alpha_{t+1} - alpha_t| (alpha in [0, 1]); V_s = mean over t of
    ||c_{t+1} - c_t||_2, c_t the centroid of ``alpha >= threshold`` in coordinates normalised by the
    width and height (x / W, y / H, pixel indices 0..W-1). Frame pairs where either mask is empty
    have no centroid displacement and are left out of V_s's mean; V_s = 0 when no pair has both
    masks non-empty.

    Args:
        ref_chunks: a path, a (T, H, W) array or an iterable of chunks (uint8 or float in [0, 1]).

    Example:
        >>> import numpy as np
        >>> a = np.zeros((3, 2, 4), np.uint8); a[0, :, 0] = 255; a[1, :, 2] = 255; a[2, :, 2] = 255
        >>> motion_stats(a)
        (0.25, 0.25)
    """
    prev_alpha = None
    prev_c = None
    u_sum = 0.0
    v_sum = 0.0
    pairs = 0
    v_pairs = 0
    for chunk in _chunks_of(ref_chunks, chunk_frames):
        chunk = _as_alpha("ref", chunk)
        H, W = chunk.shape[1:]
        ys = np.arange(H, dtype=np.float64) / H
        xs = np.arange(W, dtype=np.float64) / W
        for raw in chunk:
            # One frame at a time in float64: a chunk converted at once would be 8x its size.
            frame = raw.astype(np.float64) / 255.0 if raw.dtype == np.uint8 else raw.astype(np.float64)
            mask = frame >= threshold
            count = int(mask.sum())
            c = None
            if count:
                c = np.array([(mask.sum(axis=0) * xs).sum() / count, (mask.sum(axis=1) * ys).sum() / count])
            if prev_alpha is not None:
                if prev_alpha.shape != frame.shape:
                    raise MattingInputError("frame size changes within the clip")
                u_sum += float(np.abs(frame - prev_alpha).mean())
                pairs += 1
                if c is not None and prev_c is not None:
                    v_sum += float(np.hypot(*(c - prev_c)))
                    v_pairs += 1
            prev_alpha, prev_c = frame, c
    if prev_alpha is None:
        raise MattingInputError("empty clip: no frames")
    if pairs == 0:
        raise MattingInputError("motion statistics need at least 2 frames")
    return u_sum / pairs, (v_sum / v_pairs if v_pairs else 0.0)


def motion_difficulty(u: Sequence[float], v: Sequence[float]) -> dict[str, np.ndarray]:
    """Percentile ranks of U and V over the clips analysed, and D_motion = their mean.

    Rank rule: ``scipy.stats.rankdata(x, "average") / n`` -- ties share the mean of their ranks,
    the largest value gets 1, the smallest 1/n.

    Example:
        >>> out = motion_difficulty([0.1, 0.3, 0.3, 0.2], [4.0, 1.0, 2.0, 3.0])
        >>> out["u_rank"].tolist(), out["d_motion"].tolist()
        ([0.25, 0.875, 0.875, 0.5], [0.625, 0.5625, 0.6875, 0.625])
    """
    from scipy.stats import rankdata

    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if u.ndim != 1 or u.shape != v.shape:
        raise ValueError(f"u and v must be 1-D of equal length, got {u.shape} and {v.shape}")
    if u.size == 0:
        raise ValueError("no clips")
    if np.isnan(u).any() or np.isnan(v).any():
        raise ValueError("u or v contains NaN")
    u_rank = rankdata(u, method="average") / u.size
    v_rank = rankdata(v, method="average") / v.size
    return {"u_rank": u_rank, "v_rank": v_rank, "d_motion": (u_rank + v_rank) / 2.0}


def _relation(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """Spearman rho (with its p-value) and the OLS line of y on x, from :mod:`hug_vis_dataset.stats`."""
    from scipy import stats as scipy_stats

    from ..statistics.basics import ols_fit, spearman

    fit = ols_fit(x, y)
    rho = spearman(x, y)
    # spearman() gives NaN for a constant variable; only then is there no p-value either
    p_value = float(scipy_stats.spearmanr(x, y).pvalue) if np.isfinite(rho) else float("nan")
    return {"n": int(x.size), "slope": fit.slope, "intercept": fit.intercept, "r2": fit.r2,
            "spearman_rho": rho, "spearman_p": p_value}


def motion_vs_dtssd(d_motion: Sequence[float], dtssd_per_clip: Sequence[float],
                    emotions: "Sequence[str] | None" = None) -> dict[str, Any]:
    """Spearman rho and OLS fit ``dtSSD_s ~ slope * D_motion(s) + intercept``, overall and per emotion.

    ``dtssd_per_clip`` is the model-averaged per-clip dtSSD. Groups with fewer than 2 clips or
    constant values give NaN statistics (reported, not dropped).

    Example:
        >>> r = motion_vs_dtssd([0.25, 0.5, 0.75, 1.0], [1.0, 2.0, 3.0, 5.0], ["Happy"] * 2 + ["Sad"] * 2)
        >>> r["overall"]["spearman_rho"], round(r["overall"]["slope"], 6), r["per_emotion"]["Sad"]["n"]
        (1.0, 5.2, 2)
    """
    x = np.asarray(d_motion, dtype=np.float64)
    y = np.asarray(dtssd_per_clip, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape or x.size == 0:
        raise ValueError(f"d_motion and dtssd_per_clip must be 1-D, non-empty, equal length: {x.shape}, {y.shape}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("NaN in d_motion or dtssd_per_clip")
    result: dict[str, Any] = {"overall": _relation(x, y), "per_emotion": {}}
    if emotions is not None:
        labels = np.asarray(list(emotions), dtype=object)
        if labels.shape != x.shape:
            raise ValueError("emotions must have one label per clip")
        for emotion in sorted(set(labels.tolist())):
            sel = labels == emotion
            result["per_emotion"][emotion] = _relation(x[sel], y[sel])
    return result

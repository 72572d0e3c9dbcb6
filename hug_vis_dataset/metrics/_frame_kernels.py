"""Fast per-frame PSNR and SSIM of uint8 RGB frames: a fused numba path (CPU) and a torch path (any device).

Both compute exactly the definitions pinned in :mod:`hug_vis_dataset.metrics.frames`:

- PSNR: data range 255, one MSE over all three channels of a frame; identical frames (MSE 0,
  where the formula is infinite) and any higher value are capped at ``cap_db``.
- SSIM: scikit-image's ``structural_similarity(data_range=255, channel_axis=-1,
  gaussian_weights=True, sigma=1.5, use_sample_covariance=False, K1=0.01, K2=0.03)``: a
  Gaussian window (sigma 1.5 truncated at 3.5 sigma, 11 taps, the weights of
  ``scipy.ndimage.gaussian_filter``), the SSIM map averaged over the valid interior (5 px cropped
  on each side) of each channel, then over the three channels (Wang et al.'s ``ssim_index.m``).

Why the result needs no border handling: scikit-image filters the whole frame with 'reflect'
padding and then crops 5 px, exactly the radius of the window, so every value it keeps comes
from a window lying wholly inside the frame. Only those windows are computed here ("valid"
filtering); the padding mode cannot change them (tested with scipy's reflect, mirror, nearest,
wrap and constant modes and with OpenCV's reflect-101, replicate and constant borders).

How the CPU path is fast (scikit-image takes about 0.8 s per 1080p frame on an idle core of this
project's machine; ``scripts/bench_scale.py`` measures both, ``docs/PERFORMANCE.md`` has the table):

- One fused pass and no full-size temporaries. The five filtered images of the textbook formula
  are reduced to four, because SSIM only needs ``sigma_x^2 + sigma_y^2``: x, y, ``x^2 + y^2``
  and ``x y`` are formed once per input pixel, filtered vertically then horizontally, turned
  into SSIM values and added into per-column sums.
- The interleaved RGB row is one contiguous line of ``3 W`` values; neighbours of the same
  channel are 3 apart, so the three channels go through the same vectorised loops.
- Cache: frames are cut into blocks of rows (the parallel grain) and column tiles, so a block's
  quantities stay in L2; the vertical filter produces four output rows per sweep, so each input
  value is loaded once for four outputs. The symmetric taps are paired (``w_k (a_-k + a_+k)``)
  and accumulated with fused multiply-adds (``llvm.fma``: one rounding, the same on every CPU).
- A frame's value does not depend on the thread count or on how frames are batched: each block's
  column sums are reduced in a fixed order and the blocks are added in a fixed order. No kernel
  uses fastmath.

Values equal scikit-image's to about 1e-15 relative (float64 throughout; only the rounding of
the additions differs; the tests assert 1e-9). The torch functions compute the same definition
in float64 on any device; float32 is not offered because ``E[x^2] - E[x]^2`` cancels in flat
regions: measured 7e-6 relative on a flat frame with noise, above the 1e-6 requirement.

Example:
    >>> import numpy as np
    >>> a = np.full((1, 16, 16, 3), 100, np.uint8); b = a.copy(); b[..., 0] = 110
    >>> round(float(psnr_batch(a, b)[0]), 4)  # MSE = 100/3
    32.902
    >>> round(float(ssim_batch(a, a)[0]), 12)
    1.0
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.extending import intrinsic

SSIM_SIGMA = 1.5
SSIM_TRUNCATE = 3.5
SSIM_RADIUS = int(SSIM_TRUNCATE * SSIM_SIGMA + 0.5)  # 5, as scipy.ndimage rounds it
SSIM_WINDOW = 2 * SSIM_RADIUS + 1  # 11
SSIM_K1 = 0.01
SSIM_K2 = 0.03
DATA_RANGE = 255.0
# Output rows per parallel task. Fixed (not derived from the thread count) so that the order in
# which a frame's SSIM values are added never changes.
BLOCK_ROWS = 32
# Output elements (3 per pixel) per column tile: the block's (BLOCK_ROWS + 10) x 4 x (TILE + 30)
# float64 quantities (0.7 MB) stay in L2.
TILE_ELEMENTS = 512


class FrameInputError(ValueError):
    """Frames of the wrong dtype or shape, a prediction/reference mismatch, or frames too small."""


def gaussian_half_weights(sigma: float = SSIM_SIGMA, radius: int = SSIM_RADIUS) -> np.ndarray:
    """Weights ``w[0..radius]`` of the normalised 1-D Gaussian (``w[k]`` applies at offsets +-k).

    The same formula as ``scipy.ndimage.gaussian_filter``'s kernel: ``exp(-x^2 / (2 sigma^2))``
    over ``x = -radius..radius``, divided by its sum.

    Example:
        >>> w = gaussian_half_weights()
        >>> len(w), round(float(w[0] + 2 * w[1:].sum()), 15)
        (6, 1.0)
    """
    x = np.arange(-radius, radius + 1)
    phi = np.exp(-0.5 / (sigma * sigma) * x.astype(np.float64) ** 2)
    phi /= phi.sum()
    return np.ascontiguousarray(phi[radius:])


_HALF_WEIGHTS = gaussian_half_weights()


# ----------------------------------------------------------------------------- checks
def _check_shapes(pred_shape: tuple, ref_shape: tuple, pred_dtype: str, ref_dtype: str, uint8: tuple[bool, bool],
                  min_side: int) -> None:
    """The checks shared by numpy arrays and torch tensors (dtype, rank, channels, equal shapes, size)."""
    for name, shape, dtype, ok in (("prediction", pred_shape, pred_dtype, uint8[0]),
                                   ("reference", ref_shape, ref_dtype, uint8[1])):
        if not ok:
            raise FrameInputError(f"{name} frames must be uint8 RGB, got dtype {dtype}; convert with "
                                  f"np.clip(x, 0, 255).astype(np.uint8) or decode the video as rgb24")
        if len(shape) != 4 or shape[-1] != 3:
            raise FrameInputError(f"{name} frames must be a batch (N, H, W, 3), got shape {shape}")
    if pred_shape != ref_shape:
        raise FrameInputError(f"prediction {pred_shape} and reference {ref_shape} frames differ in shape; "
                              f"resize the prediction to the reference's resolution")
    if pred_shape[0] == 0:
        raise FrameInputError("no frames to score (empty batch)")
    if min(pred_shape[1:3]) < min_side:
        why = " (the SSIM window)" if min_side > 1 else ""
        raise FrameInputError(f"frames must be at least {min_side}x{min_side} pixels{why}, "
                              f"got {pred_shape[1]}x{pred_shape[2]}")


def check_frame_pair(pred: Any, ref: Any, min_side: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Validate two uint8 RGB batches ``(N, H, W, 3)`` of one shape; return them C-contiguous.

    Raises:
        FrameInputError: wrong dtype, rank or channel count, shapes that differ, no frames, or a
            side shorter than ``min_side`` pixels.

    Example:
        >>> import numpy as np
        >>> try:
        ...     check_frame_pair(np.zeros((1, 4, 4, 3), np.float32), np.zeros((1, 4, 4, 3), np.uint8))
        ... except FrameInputError as err:
        ...     print(str(err).split(";")[0])
        prediction frames must be uint8 RGB, got dtype float32
    """
    pred, ref = np.asarray(pred), np.asarray(ref)
    _check_shapes(pred.shape, ref.shape, str(pred.dtype), str(ref.dtype),
                  (pred.dtype == np.uint8, ref.dtype == np.uint8), min_side)
    return np.ascontiguousarray(pred), np.ascontiguousarray(ref)


# ----------------------------------------------------------------------------- PSNR
@njit(cache=True)
def _squared_error_sums(p, r):
    """Exact per-frame sum of squared differences of (N, M) uint8 arrays (int64: no rounding)."""
    n = p.shape[0]
    out = np.empty(n, np.int64)
    for f in range(n):
        a = p[f]
        b = r[f]
        s = 0
        for e in range(a.shape[0]):
            d = np.int64(a[e]) - np.int64(b[e])
            s += d * d
        out[f] = s
    return out


def _psnr_from_sums(sums: np.ndarray, n_values: int, cap_db: float) -> np.ndarray:
    out = np.full(len(sums), float(cap_db))
    hit = sums > 0
    mse = sums[hit].astype(np.float64) / n_values
    out[hit] = np.minimum(cap_db, 10.0 * np.log10(DATA_RANGE * DATA_RANGE / mse))
    return out


def psnr_batch(pred: Any, ref: Any, cap_db: float = 100.0) -> np.ndarray:
    """Per-frame PSNR (dB) of uint8 RGB frames, data range 255, capped at ``cap_db``.

    Args:
        pred: predicted frames, uint8 ``(N, H, W, 3)``.
        ref: reference frames, same shape.
        cap_db: value for identical frames (infinite PSNR) and upper bound of every frame.

    Returns:
        float64 array of shape ``(N,)``.

    Raises:
        FrameInputError: see :func:`check_frame_pair`.

    Example:
        >>> import numpy as np
        >>> x = np.zeros((2, 4, 4, 3), np.uint8); y = x.copy(); y[1, 0, 0, 0] = 255
        >>> [round(v, 4) for v in psnr_batch(x, y).tolist()]  # frame 1: MSE = 255^2 / 48
        [100.0, 16.8124]
    """
    p, r = check_frame_pair(pred, ref)
    n = p.shape[0]
    sums = _squared_error_sums(p.reshape(n, -1), r.reshape(n, -1))
    return _psnr_from_sums(sums, p[0].size, cap_db)


# ----------------------------------------------------------------------------- SSIM (numba)
@intrinsic
def _fma(typingctx, a, b, c):
    """``a * b + c`` rounded once (``llvm.fma``): the same value on every CPU, and vectorisable."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        f64 = ir.DoubleType()
        fn = builder.module.declare_intrinsic("llvm.fma", [f64], ir.FunctionType(f64, [f64, f64, f64]))
        return builder.call(fn, args)

    return sig, codegen


@njit(cache=True)
def _load_rows(p, r, dst):
    """The four filtered quantities of one input row: x, y, x^2 + y^2 and x y (exact in float64)."""
    qx, qy, qq, qp = dst[0], dst[1], dst[2], dst[3]
    for e in range(p.shape[0]):
        a = np.float64(p[e])
        b = np.float64(r[e])
        qx[e] = a
        qy[e] = b
        qq[e] = a * a + b * b
        qp[e] = a * b


@njit(cache=True, inline="always")
def _column_taps(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, w0, w1, w2, w3, w4, w5):
    """The 11-tap filter of eleven vertically adjacent values (``a5`` the centre)."""
    acc = w0 * a5
    acc = _fma(w1, a4 + a6, acc)
    acc = _fma(w2, a3 + a7, acc)
    acc = _fma(w3, a2 + a8, acc)
    acc = _fma(w4, a1 + a9, acc)
    return _fma(w5, a0 + a10, acc)


@njit(cache=True)
def _vpass4(buf, q, b, w, out, n):
    """Vertical filter of quantity ``q`` for four output rows, centred on buffer rows ``b + 5 .. b + 8``.

    Four rows per sweep: each of the 14 input values is loaded once for four outputs, instead of
    11 loads per output (the loads, from L2, bound a one-row sweep).
    """
    w0, w1, w2, w3, w4, w5 = w[0], w[1], w[2], w[3], w[4], w[5]
    r0, r1, r2, r3, r4, r5, r6 = buf[b, q], buf[b + 1, q], buf[b + 2, q], buf[b + 3, q], buf[b + 4, q], \
        buf[b + 5, q], buf[b + 6, q]
    r7, r8, r9, r10, r11, r12, r13 = buf[b + 7, q], buf[b + 8, q], buf[b + 9, q], buf[b + 10, q], \
        buf[b + 11, q], buf[b + 12, q], buf[b + 13, q]
    o0, o1, o2, o3 = out[0, q], out[1, q], out[2, q], out[3, q]
    for e in range(n):
        a0, a1, a2, a3, a4, a5, a6 = r0[e], r1[e], r2[e], r3[e], r4[e], r5[e], r6[e]
        a7, a8, a9, a10, a11, a12, a13 = r7[e], r8[e], r9[e], r10[e], r11[e], r12[e], r13[e]
        o0[e] = _column_taps(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, w0, w1, w2, w3, w4, w5)
        o1[e] = _column_taps(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, w0, w1, w2, w3, w4, w5)
        o2[e] = _column_taps(a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, w0, w1, w2, w3, w4, w5)
        o3[e] = _column_taps(a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, w0, w1, w2, w3, w4, w5)


@njit(cache=True)
def _vpass1(buf, q, b, w, out, n):
    """:func:`_vpass4` for one output row (the last rows of a block); the same arithmetic."""
    w0, w1, w2, w3, w4, w5 = w[0], w[1], w[2], w[3], w[4], w[5]
    r0, r1, r2, r3, r4, r5 = buf[b, q], buf[b + 1, q], buf[b + 2, q], buf[b + 3, q], buf[b + 4, q], buf[b + 5, q]
    r6, r7, r8, r9, r10 = buf[b + 6, q], buf[b + 7, q], buf[b + 8, q], buf[b + 9, q], buf[b + 10, q]
    o0 = out[0, q]
    for e in range(n):
        o0[e] = _column_taps(r0[e], r1[e], r2[e], r3[e], r4[e], r5[e], r6[e], r7[e], r8[e], r9[e], r10[e],
                             w0, w1, w2, w3, w4, w5)


@njit(cache=True, inline="always")
def _taps(v, j, w0, w1, w2, w3, w4, w5):
    """Horizontal 11-tap filter at output element ``j`` (same channel = 3 elements apart)."""
    acc = w0 * v[15 + j]
    acc = _fma(w1, v[12 + j] + v[18 + j], acc)
    acc = _fma(w2, v[9 + j] + v[21 + j], acc)
    acc = _fma(w3, v[6 + j] + v[24 + j], acc)
    acc = _fma(w4, v[3 + j] + v[27 + j], acc)
    return _fma(w5, v[j] + v[30 + j], acc)


# error_model="numpy": a zero denominator gives inf/nan instead of a Python exception check
# per element, which would stop the loop from vectorising (denominators are >= C1 C2 > 0 anyway).
@njit(cache=True, error_model="numpy")
def _hpass(v, w, c1, c2, col, m):
    """Horizontal filter of the four vertical results and the SSIM formula, added into ``col``."""
    w0, w1, w2, w3, w4, w5 = w[0], w[1], w[2], w[3], w[4], w[5]
    vx, vy, vq, vp = v[0], v[1], v[2], v[3]
    for j in range(m):
        mx = _taps(vx, j, w0, w1, w2, w3, w4, w5)
        my = _taps(vy, j, w0, w1, w2, w3, w4, w5)
        mq = _taps(vq, j, w0, w1, w2, w3, w4, w5)
        mp = _taps(vp, j, w0, w1, w2, w3, w4, w5)
        mxy = mx * my
        mm = mx * mx + my * my
        # skimage: A1 A2 / (B1 B2) with A2 = 2 cov + C2, B2 = var_x + var_y + C2
        col[j] += ((2.0 * mxy + c1) * (2.0 * (mp - mxy) + c2)) / ((mm + c1) * ((mq - mm) + c2))


@njit(cache=True)
def _ssim_block_sum(p, r, o0, o1, w, c1, c2, tile, buf, v, col):
    """Sum of the SSIM map over output rows ``o0..o1-1`` of one frame.

    ``p``, ``r``: (H, 3 W) uint8 (an RGB frame, rows flattened). Output row ``o`` is centred on
    input row ``o + 5``; output element ``j`` on row element ``j + 15`` (pixel ``j // 3 + 5``).
    Columns are cut into tiles of ``tile`` output elements so that the quantities of the block's
    input rows stay in cache. Scratch: ``buf`` (o1 - o0 + 10, 4, tile + 30), ``v`` (4, 4, tile + 30),
    ``col`` (3 W - 30).
    """
    m = p.shape[1] - 30
    col[:] = 0.0
    for t0 in range(0, m, tile):
        t1 = min(m, t0 + tile)
        width = t1 - t0 + 30
        for i in range(o0, o1 + 10):
            _load_rows(p[i, t0:t0 + width], r[i, t0:t0 + width], buf[i - o0])
        o = o0
        while o < o1:
            rows = 4 if o + 4 <= o1 else 1
            for q in range(4):
                if rows == 4:
                    _vpass4(buf, q, o - o0, w, v, width)
                else:
                    _vpass1(buf, q, o - o0, w, v, width)
            for k in range(rows):
                _hpass(v[k], w, c1, c2, col[t0:t1], t1 - t0)
            o += rows
    total = 0.0
    for j in range(m):
        total += col[j]
    return total


@njit(cache=True)
def _ssim_task(p, r, f, b, block_rows, w, c1, c2):
    """SSIM sum of row block ``b`` of frame ``f``."""
    h_out = p.shape[1] - 10
    n = p.shape[2]
    o0 = b * block_rows
    o1 = min(h_out, o0 + block_rows)
    tile = min(TILE_ELEMENTS, n - 30)
    buf = np.empty((o1 - o0 + 10, 4, tile + 30))
    v = np.empty((4, 4, tile + 30))
    col = np.empty(n - 30)
    return _ssim_block_sum(p[f], r[f], o0, o1, w, c1, c2, tile, buf, v, col)


@njit(parallel=True, cache=True)
def _ssim_block_sums(p, r, block_rows, w, c1, c2):
    """(N, blocks) sums of the SSIM map; frames x row blocks are the parallel tasks."""
    nf = p.shape[0]
    nb = (p.shape[1] - 10 + block_rows - 1) // block_rows
    out = np.empty((nf, nb))
    for t in prange(nf * nb):
        f = t // nb
        b = t - f * nb
        out[f, b] = _ssim_task(p, r, f, b, block_rows, w, c1, c2)
    return out


# A separate function, not a second compilation of the one above: numba's on-disk cache keys on
# the Python function. Used with one thread, where a parallel region only costs its start-up.
@njit(cache=True)
def _ssim_block_sums_serial(p, r, block_rows, w, c1, c2):
    nf = p.shape[0]
    nb = (p.shape[1] - 10 + block_rows - 1) // block_rows
    out = np.empty((nf, nb))
    for f in range(nf):
        for b in range(nb):
            out[f, b] = _ssim_task(p, r, f, b, block_rows, w, c1, c2)
    return out


def _ssim_constants() -> tuple[float, float]:
    return (SSIM_K1 * DATA_RANGE) ** 2, (SSIM_K2 * DATA_RANGE) ** 2


def ssim_batch(pred: Any, ref: Any) -> np.ndarray:
    """Per-frame SSIM of uint8 RGB frames, equal to scikit-image's with the pinned parameters.

    Args:
        pred: predicted frames, uint8 ``(N, H, W, 3)``, H and W at least 11.
        ref: reference frames, same shape.

    Returns:
        float64 array of shape ``(N,)``: the mean over channels of the mean over the valid
        interior of the SSIM map.

    Raises:
        FrameInputError: see :func:`check_frame_pair` (frames smaller than 11x11 included).

    Example:
        >>> import numpy as np
        >>> x = np.zeros((1, 12, 12, 3), np.uint8); y = np.full_like(x, 255)
        >>> c1 = (0.01 * 255) ** 2  # flat frames: only the luminance term is left
        >>> bool(np.isclose(ssim_batch(x, y)[0], c1 / (255 ** 2 + c1), rtol=1e-12))
        True
    """
    import numba

    p, r = check_frame_pair(pred, ref, min_side=SSIM_WINDOW)
    n, h, w = p.shape[:3]
    p2, r2 = p.reshape(n, h, 3 * w), r.reshape(n, h, 3 * w)
    c1, c2 = _ssim_constants()
    parallel = numba.get_num_threads() > 1 and (n > 1 or h - 10 > BLOCK_ROWS)
    kernel = _ssim_block_sums if parallel else _ssim_block_sums_serial
    sums = kernel(p2, r2, BLOCK_ROWS, _HALF_WEIGHTS, c1, c2)
    total = np.zeros(n)
    for b in range(sums.shape[1]):  # fixed order of blocks, whatever the threads did
        total += sums[:, b]
    return total / (3 * (h - 10) * (w - 10))


# ----------------------------------------------------------------------------- torch (any device)
def _torch_pair(pred: Any, ref: Any, min_side: int):
    """Validate numpy arrays or torch tensors of uint8 RGB frames; return two uint8 tensors (N, H, W, 3)."""
    import torch

    if isinstance(pred, torch.Tensor) or isinstance(ref, torch.Tensor):
        if not (isinstance(pred, torch.Tensor) and isinstance(ref, torch.Tensor)):
            raise FrameInputError("pass both prediction and reference as torch tensors, or both as numpy arrays")
        _check_shapes(tuple(pred.shape), tuple(ref.shape), str(pred.dtype), str(ref.dtype),
                      (pred.dtype == torch.uint8, ref.dtype == torch.uint8), min_side)
        return pred, ref
    p, r = check_frame_pair(pred, ref, min_side=min_side)
    return torch.from_numpy(p), torch.from_numpy(r)


def psnr_batch_torch(pred: Any, ref: Any, cap_db: float = 100.0, device: Any = "cpu",
                     chunk_frames: int = 16) -> np.ndarray:
    """:func:`psnr_batch` computed with torch on ``device`` (the squared-error sums are exact int64).

    Args:
        pred: predicted frames, uint8 ``(N, H, W, 3)``: a numpy array or a torch tensor (on any device).
        ref: reference frames, same shape and kind.
        cap_db: value for identical frames and upper bound of every frame.
        device: where to compute (``"cpu"``, ``"cuda"``, ``"cuda:1"``, a ``torch.device``).
        chunk_frames: frames moved to the device at a time (bounds memory; values do not depend on it).

    Returns:
        float64 numpy array of shape ``(N,)``, equal to :func:`psnr_batch`'s.

    Example:
        >>> import numpy as np
        >>> x = np.zeros((2, 4, 4, 3), np.uint8); y = x.copy(); y[1, 0, 0, 0] = 255
        >>> [round(v, 4) for v in psnr_batch_torch(x, y).tolist()]
        [100.0, 16.8124]
    """
    import torch

    p, r = _torch_pair(pred, ref, min_side=1)
    device = torch.device(device)
    sums = []
    for s in range(0, p.shape[0], chunk_frames):
        d = p[s:s + chunk_frames].to(device, torch.int32) - r[s:s + chunk_frames].to(device, torch.int32)
        sums.append((d * d).sum(dim=(1, 2, 3), dtype=torch.int64).cpu())
    return _psnr_from_sums(torch.cat(sums).numpy(), int(p[0].numel()), cap_db)


def _valid_filter_torch(q, w, dim: int):
    """Symmetric 11-tap filter along ``dim`` keeping only windows inside the frame (length - 10)."""
    import torch

    n = q.shape[dim] - 2 * SSIM_RADIUS
    out = q.narrow(dim, SSIM_RADIUS, n) * w[0]
    pair = torch.empty_like(out)  # reused: full-size temporaries per tap cost more than the arithmetic
    for k in range(1, SSIM_RADIUS + 1):
        torch.add(q.narrow(dim, SSIM_RADIUS - k, n), q.narrow(dim, SSIM_RADIUS + k, n), out=pair)
        out.add_(pair, alpha=w[k])
    return out


def ssim_batch_torch(pred: Any, ref: Any, device: Any = "cpu", chunk_frames: int = 4) -> np.ndarray:
    """:func:`ssim_batch` computed with torch in float64 on ``device`` (e.g. a GPU).

    The same definition as scikit-image's (see the module docstring), as shifted-slice sums: the
    Gaussian applied along rows then columns to x, y, x^2 + y^2 and x y, valid windows only.
    float64 is required: in float32, ``E[x^2] - E[x]^2`` cancels in flat regions (7e-6 relative
    measured on a flat frame with noise, against a 1e-6 requirement).

    Args:
        pred: predicted frames, uint8 ``(N, H, W, 3)`` with H, W >= 11: a numpy array or a torch
            tensor (on any device).
        ref: reference frames, same shape and kind.
        device: where to compute (``"cpu"``, ``"cuda"``, ``"cuda:1"``, a ``torch.device``).
        chunk_frames: frames computed at a time (about 200 MB of float64 per 1080p frame; values do
            not depend on it).

    Returns:
        float64 numpy array of shape ``(N,)``; equal to :func:`ssim_batch`'s within about 1e-13 relative.

    Example:
        >>> import numpy as np
        >>> x = np.zeros((1, 12, 12, 3), np.uint8); y = np.full_like(x, 255)
        >>> c1 = (0.01 * 255) ** 2  # flat frames: only the luminance term is left
        >>> bool(np.isclose(ssim_batch_torch(x, y)[0], c1 / (255 ** 2 + c1), rtol=1e-12))
        True
    """
    import torch

    p, r = _torch_pair(pred, ref, min_side=SSIM_WINDOW)
    device = torch.device(device)
    w = [float(v) for v in _HALF_WEIGHTS]
    c1, c2 = _ssim_constants()
    out = []
    for s in range(0, p.shape[0], chunk_frames):
        x = p[s:s + chunk_frames].to(device).to(torch.float64)
        y = r[s:s + chunk_frames].to(device).to(torch.float64)
        q = torch.stack([x, y, x * x + y * y, x * y])  # (4, n, H, W, 3)
        del x, y
        q = _valid_filter_torch(_valid_filter_torch(q, w, 2), w, 3)
        mx, my, mq, mp = q.unbind(0)
        mxy = mx * my
        mm = mx * mx + my * my
        ssim_map = ((2.0 * mxy + c1) * (2.0 * (mp - mxy) + c2)) / ((mm + c1) * ((mq - mm) + c2))
        out.append(ssim_map.mean(dim=(1, 2, 3)).cpu())
    return torch.cat(out).numpy()

"""Numba kernels behind :mod:`hug_vis_dataset.metrics.matting` (private; use the public functions).

One call scores a chunk of frames: frames are independent, so the chunk is split over threads
by frame (``prange``) and every frame is computed by the same sequential code whatever the
thread count -- the values are bit-identical with 1 or N threads.

Arithmetic follows the reference scripts where it decides a branch (alpha as float32 ``k / 255``,
float64 thresholds ``np.arange(0, 1.1, 0.1)``, the Conn cut ``d >= 0.15`` in float32) and uses
float64 everywhere it only accumulates, so the sums are more accurate than the reference's float32
sums while every discrete decision is the same.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

# np.arange(0, 1 + 0.1, 0.1): exactly the thresholds the reference compares with (float64),
# e.g. 0.30000000000000004, not 0.3.
CONN_THRESHOLDS = np.arange(0, 1 + 0.1, 0.1)
# The round-down map is a float32 image in the reference, so the thresholds it stores are float32.
CONN_THRESHOLDS_F32 = CONN_THRESHOLDS.astype(np.float32)
CONN_CUT_F32 = np.float32(0.15)
# cv2.normalize(NORM_MINMAX) maps a frame whose range is <= DBL_EPSILON to all zeros.
DBL_EPSILON = float(np.finfo(np.float64).eps)


def _level(pv, tv, thr, lut):  # pragma: no cover
    raise NotImplementedError


@overload(_level)
def _level_overload(pv, tv, thr, lut):
    """Number of thresholds theta_1..theta_10 that min(p, t) reaches (0..10)."""
    if isinstance(pv, types.Integer):
        # Monotone in k, so the level of min(k_p, k_t) is a table look-up.
        return lambda pv, tv, thr, lut: lut[min(pv, tv)]

    def impl(pv, tv, thr, lut):
        m = np.float64(min(pv, tv))
        lv = 0
        for i in range(1, thr.shape[0]):
            if m >= thr[i]:
                lv = i
            else:
                break
        return lv

    return impl


def _phi(v, j, thr32, cut32, table):  # pragma: no cover
    raise NotImplementedError


@overload(_phi)
def _phi_overload(v, j, thr32, cut32, table):
    """1 - phi = d [d >= 0.15] with d = alpha - theta_j, in the reference's float32 arithmetic."""
    if isinstance(v, types.Integer):
        return lambda v, j, thr32, cut32, table: table[v, j]

    def impl(v, j, thr32, cut32, table):
        d = np.float32(v) - thr32[j]
        return np.float64(d) if d >= cut32 else 0.0

    return impl


def _unit(x):  # pragma: no cover
    raise NotImplementedError


@overload(_unit)
def _unit_overload(x):
    """Size of one raw step: 1/255 for 8-bit frames (kept as integers inside the kernels), 1 for floats."""
    if isinstance(x, types.Integer):
        return lambda x: 1.0 / 255.0
    return lambda x: 1.0


def make_level_lut() -> np.ndarray:
    """Level of each 8-bit value: #{i >= 1 : float32(k / 255) >= theta_i}, as the reference compares."""
    alpha = (np.arange(256, dtype=np.float32) / np.float32(255)).astype(np.float64)
    return (alpha[:, None] >= CONN_THRESHOLDS[None, 1:]).sum(axis=1).astype(np.int8)


def make_phi_table() -> np.ndarray:
    """(256, 11) table of d [d >= 0.15], d = float32(k / 255) - float32(theta_j), float32 arithmetic."""
    alpha = np.arange(256, dtype=np.float32) / np.float32(255)
    d = alpha[:, None] - CONN_THRESHOLDS_F32[None, :]
    return np.where(d >= CONN_CUT_F32, d, np.float32(0)).astype(np.float64)


@njit(cache=True, inline="always")
def _find(uf, x):
    # Path halving: keeps trees shallow without recursion.
    while uf[x] != x:
        uf[x] = uf[uf[x]]
        x = uf[x]
    return x


@njit(cache=True)
def _pointwise_frame(p, t, pp, tp, has_prev):
    """Sums of |d|, d^2 and the dtSSD term over one frame, in raw units (exact integers for uint8)."""
    H, W = p.shape
    s_abs = 0.0
    s_sq = 0.0
    s_dt = 0.0
    for y in range(H):
        s_a = 0.0
        s_s = 0.0
        for x in range(W):
            d = np.float64(p[y, x]) - np.float64(t[y, x])
            s_a += abs(d)
            s_s += d * d
        s_abs += s_a
        s_sq += s_s
    if has_prev:
        for y in range(H):
            s_d = 0.0
            for x in range(W):
                e = (np.float64(p[y, x]) - np.float64(pp[y, x])) - (np.float64(t[y, x]) - np.float64(tp[y, x]))
                s_d += e * e
            s_dt += s_d
    u = _unit(p[0, 0])
    return s_abs * u, s_sq * u * u, s_dt * u * u


@njit(cache=True)
def _minmax_scale(img, normalize):
    """Factor from raw values to the (optionally min-max normalised) alpha the filters see."""
    u = _unit(img[0, 0])
    if not normalize:
        return u
    lo = np.float64(img[0, 0])
    hi = lo
    H, W = img.shape
    for y in range(H):
        for x in range(W):
            v = np.float64(img[y, x])
            lo = min(lo, v)
            hi = max(hi, v)
    # cv2.normalize sees float32 alphas: the range is that of k / 255 in float32 for 8-bit frames.
    rng = (hi - lo) * u
    return u / rng if rng > DBL_EPSILON else 0.0


@njit(cache=True)
def _hrow(img, y, pad, g, dg, outg, outd):
    """Horizontal 9-tap pass of row y (replicate border): even taps g, odd taps dg (symmetry used)."""
    W = img.shape[1]
    for x in range(W):
        pad[x + 4] = np.float64(img[y, x])
    for x in range(4):
        pad[x] = pad[4]
        pad[W + 4 + x] = pad[W + 3]
    g0, g1, g2, g3, g4 = g[4], g[5], g[6], g[7], g[8]
    d1, d2, d3, d4 = dg[5], dg[6], dg[7], dg[8]
    for x in range(W):
        c = x + 4
        outg[x] = (g0 * pad[c] + g1 * (pad[c + 1] + pad[c - 1]) + g2 * (pad[c + 2] + pad[c - 2])
                   + g3 * (pad[c + 3] + pad[c - 3]) + g4 * (pad[c + 4] + pad[c - 4]))
        outd[x] = (d1 * (pad[c + 1] - pad[c - 1]) + d2 * (pad[c + 2] - pad[c - 2])
                   + d3 * (pad[c + 3] - pad[c - 3]) + d4 * (pad[c + 4] - pad[c - 4]))


@njit(cache=True)
def _vrow(hg, hd, rows, g, dg, sc, mag):
    """Vertical pass for one output row: |(f_x, f_y) * a| x sc, from the 9 horizontally filtered rows."""
    g0, g1, g2, g3, g4 = g[4], g[5], g[6], g[7], g[8]
    d1, d2, d3, d4 = dg[5], dg[6], dg[7], dg[8]
    D0, D1, D2, D3, D4 = hd[rows[0]], hd[rows[1]], hd[rows[2]], hd[rows[3]], hd[rows[4]]
    D5, D6, D7, D8 = hd[rows[5]], hd[rows[6]], hd[rows[7]], hd[rows[8]]
    G0, G1, G2, G3 = hg[rows[0]], hg[rows[1]], hg[rows[2]], hg[rows[3]]
    G5, G6, G7, G8 = hg[rows[5]], hg[rows[6]], hg[rows[7]], hg[rows[8]]
    for x in range(mag.shape[0]):
        # f_x = G(row) dG(col): vertical g over the row-wise dG pass; f_y = f_x^T the other way round.
        fx = (g0 * D4[x] + g1 * (D5[x] + D3[x]) + g2 * (D6[x] + D2[x]) + g3 * (D7[x] + D1[x])
              + g4 * (D8[x] + D0[x]))
        fy = d1 * (G5[x] - G3[x]) + d2 * (G6[x] - G2[x]) + d3 * (G7[x] - G1[x]) + d4 * (G8[x] - G0[x])
        mag[x] = np.sqrt(fx * fx + fy * fy) * sc


@njit(cache=True)
def _grad_frame(p, t, g, dg, inv_norm, normalize):
    """sum((|grad t| - |grad p|)^2) of one frame, filters applied separably (9 taps, half = 4)."""
    H, W = p.shape
    k = 9
    half = 4
    sc_p = _minmax_scale(p, normalize) * inv_norm
    sc_t = _minmax_scale(t, normalize) * inv_norm
    pad = np.empty(W + 2 * half)
    # Ring buffers of horizontally filtered rows: slot r % 9 holds image row r.
    hg_p = np.empty((k, W))
    hd_p = np.empty((k, W))
    hg_t = np.empty((k, W))
    hd_t = np.empty((k, W))
    mag_p = np.empty(W)
    mag_t = np.empty(W)
    rows = np.empty(k, np.int64)
    for r in range(min(half, H)):
        _hrow(p, r, pad, g, dg, hg_p[r % k], hd_p[r % k])
        _hrow(t, r, pad, g, dg, hg_t[r % k], hd_t[r % k])
    total = 0.0
    for y in range(H):
        r = y + half
        if r < H:
            _hrow(p, r, pad, g, dg, hg_p[r % k], hd_p[r % k])
            _hrow(t, r, pad, g, dg, hg_t[r % k], hd_t[r % k])
        for i in range(k):
            rows[i] = min(max(y + i - half, 0), H - 1) % k
        _vrow(hg_p, hd_p, rows, g, dg, sc_p, mag_p)
        _vrow(hg_t, hd_t, rows, g, dg, sc_t, mag_t)
        s = 0.0
        for x in range(W):
            e = mag_t[x] - mag_p[x]
            s += e * e
        total += s
    return total


@njit(cache=True)
def _conn_frame(p, t, thr, thr32, cut32, lut, table):
    """sum(|phi_t - phi_p|) of one frame.

    The largest 4-connected component L_i of S_i = {min(t, p) >= theta_i} is found for all ten
    thresholds in one union-find sweep that adds pixels level by level, highest level first
    (after adding level i the forest's trees are exactly the components of S_i). A pixel's
    round-down value is theta_J with J the largest j such that it lies in L_1, ..., L_j; because
    each L_i lies inside one component of S_{i-1}, these sets are nested up to the first i where
    L_i is not inside L_{i-1} (then no pixel reaches level i). Membership is read from the
    un-compressed link tree: a node's level-j root is itself above its link level, else its
    parent's. Ties between equal largest components go to the one whose first pixel in raster
    order comes first -- the label order of cv2.connectedComponentsWithStats used by the reference.
    """
    H, W = p.shape
    n = H * W
    nthr = thr.shape[0]  # 11: theta_0 .. theta_10
    top = nthr - 1
    level = np.empty(n, np.int8)
    counts = np.zeros(nthr, np.int64)
    for y in range(H):
        for x in range(W):
            lv = _level(p[y, x], t[y, x], thr, lut)
            level[y * W + x] = lv
            counts[lv] += 1
    J = np.zeros(n, np.int8)
    nfg = n - counts[0]
    if nfg > 0:
        # Counting sort of foreground pixels by level (raster order within a level).
        start = np.zeros(nthr + 1, np.int64)
        for i in range(1, nthr):
            start[i + 1] = start[i] + counts[i]
        fill = start.copy()
        order = np.empty(nfg, np.int32)
        for idx in range(n):
            lv = level[idx]
            if lv > 0:
                order[fill[lv]] = idx
                fill[lv] += 1
        uf = np.empty(n, np.int32)
        parent = np.empty(n, np.int32)
        link = np.empty(n, np.int8)
        size = np.empty(n, np.int32)
        first = np.empty(n, np.int32)
        link_order = np.empty(nfg, np.int32)
        n_links = 0
        best_size = 0
        best_first = 0
        best_root = -1
        root_at = np.full(nthr, -1, np.int64)
        inside_prev = np.zeros(nthr, np.bool_)
        for lv in range(top, 0, -1):
            for o in range(start[lv], start[lv + 1]):
                x0 = order[o]
                uf[x0] = x0
                parent[x0] = -1
                link[x0] = 0
                size[x0] = 1
                first[x0] = x0
                if best_root < 0:
                    best_size = 1
                    best_first = x0
                    best_root = x0
                yy = x0 // W
                xx = x0 - yy * W
                for nb in range(4):
                    if nb == 0:
                        if yy == 0:
                            continue
                        q = x0 - W
                    elif nb == 1:
                        if xx == 0:
                            continue
                        q = x0 - 1
                    elif nb == 2:
                        if xx == W - 1:
                            continue
                        q = x0 + 1
                    else:
                        if yy == H - 1:
                            continue
                        q = x0 + W
                    lq = level[q]
                    # Already added: a higher level, or this level earlier in raster order.
                    if lq > lv or (lq == lv and q < x0):
                        ra = _find(uf, x0)
                        rb = _find(uf, q)
                        if ra != rb:
                            if size[ra] < size[rb] or (size[ra] == size[rb] and ra > rb):
                                ra, rb = rb, ra
                            # rb goes under ra.
                            uf[rb] = ra
                            parent[rb] = ra
                            link[rb] = lv
                            link_order[n_links] = rb
                            n_links += 1
                            size[ra] += size[rb]
                            if first[rb] < first[ra]:
                                first[ra] = first[rb]
                            s = size[ra]
                            f = first[ra]
                            if s > best_size or (s == best_size and f < best_first):
                                best_size = s
                                best_first = f
                                best_root = ra
                # A new singleton can only be the best when every component is a singleton.
                if best_size == 1 and x0 < best_first:
                    best_first = x0
                    best_root = x0
            if best_root >= 0:
                root_at[lv] = _find(uf, best_root)
                if lv < top and root_at[lv + 1] >= 0:
                    inside_prev[lv + 1] = _find(uf, root_at[lv + 1]) == root_at[lv]
        # K: the last level of the nested chain L_1 ⊇ L_2 ⊇ ... (L_i empty or outside L_{i-1} stops it).
        K = 0
        for lv in range(1, nthr):
            if root_at[lv] < 0:
                break
            if lv > 1 and not inside_prev[lv]:
                break
            K = lv
        own = J  # reuse: own level first, then J in place
        for lv in range(1, K + 1):
            own[root_at[lv]] = lv  # ascending, so the max wins
        # Parents are linked after their children: reverse link order visits parents first.
        # Roots (never linked) keep J = own.
        for e in range(n_links - 1, -1, -1):
            c = link_order[e]
            if own[c] == 0:
                jp = J[parent[c]]
                lc = link[c]
                J[c] = jp if jp < lc else lc
    total = 0.0
    for y in range(H):
        for x in range(W):
            j = J[y * W + x]
            total += abs(_phi(t[y, x], j, thr32, cut32, table) - _phi(p[y, x], j, thr32, cut32, table))
    return total


@njit(cache=True)
def _score_frame(p, t, k, pp, tp, has_prev, want_grad, want_conn, normalize, g, dg, inv_norm, thr, thr32, cut32, lut, table, out):
    if k == 0:
        a, b, c = _pointwise_frame(p[0], t[0], pp, tp, has_prev)
        if not has_prev:
            c = np.nan
    else:
        a, b, c = _pointwise_frame(p[k], t[k], p[k - 1], t[k - 1], True)
    out[k, 0] = a
    out[k, 1] = b
    out[k, 2] = c
    if want_grad:
        out[k, 3] = _grad_frame(p[k], t[k], g, dg, inv_norm, normalize)
    if want_conn:
        out[k, 4] = _conn_frame(p[k], t[k], thr, thr32, cut32, lut, table)


@njit(parallel=True, cache=True)
def score_chunk(p, t, pp, tp, has_prev, want_grad, want_conn, normalize, g, dg, inv_norm, thr, thr32, cut32, lut, table):
    """Per-frame raw sums for a chunk (n, H, W); frame 0 of the chunk uses (pp, tp) as its predecessor.

    Returns (n, 5) float64: sum|d|, sum d^2, dtSSD sum (NaN where no predecessor), Grad sum, Conn sum
    (NaN for metrics not requested).
    """
    n = p.shape[0]
    out = np.full((n, 5), np.nan)
    # One frame per iteration, all work inside a plain function: the per-frame code is the same
    # whatever the number of threads.
    for k in prange(n):
        _score_frame(p, t, k, pp, tp, has_prev, want_grad, want_conn, normalize, g, dg, inv_norm, thr, thr32,
                     cut32, lut, table, out)
    return out


LEVEL_LUT = make_level_lut()
PHI_TABLE = make_phi_table()

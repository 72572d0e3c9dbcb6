"""Numba kernels behind :mod:`hug_vis_dataset.metrics.matting` (private; use the public functions).

One call scores a chunk of frames: frames are independent, so the chunk is split over threads
by frame (``prange``) and every frame is computed by the same sequential code whatever the
thread count -- the values are bit-identical with 1 or N threads.

Arithmetic follows the reference scripts where it decides a branch (alpha as float32 ``k / 255``,
float64 thresholds ``np.arange(0, 1.1, 0.1)``, the Conn cut ``d >= 0.15`` in float32) and is
more accurate where it only accumulates (exact integers for 8-bit MAD/MSE/dtSSD, float64
elsewhere, against the reference's float32 sums), so every discrete decision is the same and
values agree to about 1e-7 relative.

Reproducibility: no kernel uses fastmath. Every float sum has an order fixed by the code (pixel
order, or Grad's lanes by column), never one chosen by the compiler for a CPU or a calling
context, so a value is the same on any machine, in any process and after any recompilation
(tested in a fresh process with an empty numba cache). 8-bit MAD/MSE/dtSSD and all Conn sums
are exact, so their order does not matter at all.

Where the time goes on real mattes (exactly 0 or 1 almost everywhere, soft at the boundary):
Grad skips tiles whose 9x9 neighbourhood is flat in both frames (both gradients are exactly 0
there), and Conn's union-find works on maximal runs of equal level, so a uniform stretch of a
row is one node. The noisy-interior worst case is measured too (``scripts/bench_matting.py``).
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


def _level_row(pr, tr, thr, lut, kmin, out):  # pragma: no cover
    raise NotImplementedError


@overload(_level_row)
def _level_row_overload(pr, tr, thr, lut, kmin, out):
    """out[x] = level of (pr[x], tr[x]); returns whether a level-0 pixel has pr != tr (else level 0 adds nothing)."""
    if isinstance(pr.dtype, types.Integer):
        def impl_int(pr, tr, thr, lut, kmin, out):
            # Level = number of thresholds whose smallest passing 8-bit value min(p, t) reaches:
            # compares and adds only, so the loop vectorises (a table look-up would not).
            k1, k2, k3, k4, k5 = kmin[1], kmin[2], kmin[3], kmin[4], kmin[5]
            k6, k7, k8, k9, k10 = kmin[6], kmin[7], kmin[8], kmin[9], kmin[10]
            hot = np.uint8(0)
            for x in range(pr.shape[0]):
                a = pr[x]
                b = tr[x]
                m = min(a, b)
                lv = (np.uint8(m >= k1) + np.uint8(m >= k2) + np.uint8(m >= k3) + np.uint8(m >= k4)
                      + np.uint8(m >= k5) + np.uint8(m >= k6) + np.uint8(m >= k7) + np.uint8(m >= k8)
                      + np.uint8(m >= k9) + np.uint8(m >= k10))
                out[x] = lv
                hot |= np.uint8(m < k1) & np.uint8(a != b)
            return hot != 0
        return impl_int

    def impl(pr, tr, thr, lut, kmin, out):
        hot = False
        for x in range(pr.shape[0]):
            lv = _level(pr[x], tr[x], thr, lut)
            out[x] = lv
            hot |= (lv == 0) and (pr[x] != tr[x])
        return hot

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


def make_level_kmin() -> np.ndarray:
    """kmin[i] = smallest 8-bit value whose level is >= i, i = 0..10."""
    lut = make_level_lut()
    assert lut[255] == 10  # 1.0 passes every threshold, so every level has a smallest value
    return np.array([int(np.argmax(lut >= i)) for i in range(11)], np.uint8)


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


def _raw(x):  # pragma: no cover
    raise NotImplementedError


@overload(_raw)
def _raw_overload(x):
    """Raw value for exact accumulation: int32 for 8-bit frames, float64 otherwise."""
    if isinstance(x, types.Integer):
        return lambda x: np.int32(x)
    return lambda x: np.float64(x)


@njit(cache=True)
def _pointwise_frame(p, t, pp, tp, with_dt, with_abs, with_sq):
    """Sums of |d| (``with_abs``), d^2 (``with_sq``) and the dtSSD term (``with_dt``) over one frame, in
    alpha units (0 for a sum not asked for).

    8-bit frames accumulate exact integers: int32 within a row (|d| <= 255, d^2 <= 65025, the dtSSD
    term <= 510^2, so a row of up to 8000 pixels cannot overflow), int64 across rows, scaled once by
    1/255 at the end. Float frames accumulate in float64 in pixel order. No fastmath: a
    reassociated (vectorised) float sum would take whatever order the compiler picks for the CPU
    and the calling context, and the value would follow it; integer sums vectorise anyway.
    """
    H, W = p.shape
    zero = _raw(p[0, 0]) * 0
    s_abs = np.float64(0.0)
    s_sq = np.float64(0.0)
    s_dt = np.float64(0.0)
    for y in range(H):
        r_abs = zero
        r_sq = zero
        r_dt = zero
        # One loop per combination: a sum nobody asked for costs a third of the time of these
        # memory-bound loops. Each sum is accumulated the same way in every loop.
        if with_dt and (with_abs or with_sq):
            for x in range(W):
                a = _raw(p[y, x])
                b = _raw(t[y, x])
                d = a - b
                r_abs += abs(d)
                r_sq += d * d
                e = (a - _raw(pp[y, x])) - (b - _raw(tp[y, x]))
                r_dt += e * e
        elif with_dt:
            for x in range(W):
                e = (_raw(p[y, x]) - _raw(pp[y, x])) - (_raw(t[y, x]) - _raw(tp[y, x]))
                r_dt += e * e
        elif with_abs and with_sq:
            for x in range(W):
                d = _raw(p[y, x]) - _raw(t[y, x])
                r_abs += abs(d)
                r_sq += d * d
        elif with_abs:
            for x in range(W):
                r_abs += abs(_raw(p[y, x]) - _raw(t[y, x]))
        elif with_sq:
            for x in range(W):
                d = _raw(p[y, x]) - _raw(t[y, x])
                r_sq += d * d
        # Integer row sums are exact, so adding them in float64 (exact below 2^53) loses nothing.
        s_abs += np.float64(r_abs)
        s_sq += np.float64(r_sq)
        s_dt += np.float64(r_dt)
    u = _unit(p[0, 0])
    # u * u first: the grouping the previous (fastmath) build compiled to, kept so values do not move.
    return s_abs * u, s_sq * (u * u), s_dt * (u * u)


@njit(cache=True)
def _minmax_scale(img, normalize):
    """Factor from raw values to the (optionally min-max normalised) alpha the filters see."""
    u = _unit(img[0, 0])
    if not normalize:
        return u
    lo = _raw(img[0, 0])
    hi = lo
    H, W = img.shape
    for y in range(H):
        for x in range(W):
            v = _raw(img[y, x])
            lo = min(lo, v)
            hi = max(hi, v)
    # cv2.normalize sees float32 alphas: the range is that of k / 255 in float32 for 8-bit frames.
    rng = (hi - lo) * u
    return u / rng if rng > DBL_EPSILON else 0.0


# Grad skips flat parts of the frame. Activity is tracked per tile of GRAD_TILE columns of a row;
# GRAD_TILE >= 2 * 4 (the filter radius) keeps the horizontal reach of a tile within its two
# neighbours, and a multiple of 8 keeps tiles aligned with the 8 accumulator lanes of the row sum.
GRAD_TILE = 16
GRAD_LANES = 8


@njit(cache=True)
def _row_activity(p, t, tile, act):
    """act[r, j] = 1 where tile j of row r holds a pixel differing from its left or upper neighbour (p or t).

    An output pixel whose 9x9 window (replicate border) contains no such pixel -- apart from the
    window's top row and left column, which compare with pixels outside it -- sees a constant
    neighbourhood in both frames, where both gradients are exactly 0 (every odd tap multiplies a
    difference of equal values, every even tap sees equal rows), so its term is exactly 0.
    """
    H, W = p.shape
    nt = act.shape[1]
    diff = np.empty(nt * tile, np.uint8)
    diff[W:] = 0
    one = np.uint64(1)
    for r in range(H):
        # 1-D row views and unsigned indices keep the loops free of wraparound checks (vectorised).
        pr = p[r]
        tr = t[r]
        pu = p[r - 1] if r > 0 else pr
        tu = t[r - 1] if r > 0 else tr
        # Column 0's left neighbour is itself (replicate border).
        diff[0] = np.uint8((pr[0] != pu[0]) | (tr[0] != tu[0]))
        for x in range(one, np.uint64(W)):
            diff[x] = np.uint8((pr[x] != pr[x - one]) | (tr[x] != tr[x - one]) | (pr[x] != pu[x]) | (tr[x] != tu[x]))
        for j in range(nt):
            a = np.uint8(0)
            for x in range(np.uint64(j * tile), np.uint64(j * tile + tile)):
                a |= diff[x]
            act[r, j] = a


@njit(cache=True)
def _dilate_rows(src, dst, reach, widen):
    """dst[y, j] = any src[r, j'] for |r - y| <= reach and |j' - j| <= widen (widen 0 or 1); row flags returned."""
    H, nt = src.shape
    cnt = np.zeros(nt, np.int32)
    any_row = np.zeros(H, np.bool_)
    for r in range(min(reach, H - 1) + 1):
        for j in range(nt):
            cnt[j] += src[r, j]
    for y in range(H):
        if y > 0:
            ra = y + reach
            if ra < H:
                for j in range(nt):
                    cnt[j] += src[ra, j]
            rr = y - reach - 1
            if rr >= 0:
                for j in range(nt):
                    cnt[j] -= src[rr, j]
        hit = False
        for j in range(nt):
            c = cnt[j]
            if widen:
                if j > 0:
                    c += cnt[j - 1]
                if j < nt - 1:
                    c += cnt[j + 1]
            v = np.uint8(c > 0)
            dst[y, j] = v
            hit |= c > 0
        any_row[y] = hit
    return any_row


@njit(cache=True)
def _pad_row(img, y, pad):
    """Row y as float64 with 4 replicated pixels on each side."""
    W = img.shape[1]
    for x in range(W):
        pad[x + 4] = np.float64(img[y, x])
    for x in range(4):
        pad[x] = pad[4]
        pad[W + 4 + x] = pad[W + 3]


@njit(cache=True)
def _hspan(pad, g, dg, outg, outd, x0, x1):
    """Horizontal 9-tap pass over columns x0..x1-1: even taps g into outg, odd taps dg into outd.

    No fastmath: each output is the same IEEE expression wherever the span starts, so skipping
    columns elsewhere never changes a computed value.
    """
    g0, g1, g2, g3, g4 = g[4], g[5], g[6], g[7], g[8]
    d1, d2, d3, d4 = dg[5], dg[6], dg[7], dg[8]
    # Views starting at x0 and a loop from 0: indices are provably non-negative, so numba's
    # negative-index wraparound check (which blocks vectorisation) is optimised away.
    pad = pad[x0:]
    outg = outg[x0:]
    outd = outd[x0:]
    for x in range(x1 - x0):
        c = x + 4
        outg[x] = (g0 * pad[c] + g1 * (pad[c + 1] + pad[c - 1]) + g2 * (pad[c + 2] + pad[c - 2])
                   + g3 * (pad[c + 3] + pad[c - 3]) + g4 * (pad[c + 4] + pad[c - 4]))
        outd[x] = (d1 * (pad[c + 1] - pad[c - 1]) + d2 * (pad[c + 2] - pad[c - 2])
                   + d3 * (pad[c + 3] - pad[c - 3]) + d4 * (pad[c + 4] - pad[c - 4]))


@njit(cache=True)
def _e2_span(hg_p, hd_p, hg_t, hd_t, rows, g, dg, sc_p, sc_t, x0, x1, buf):
    """buf[x] = (|grad t| - |grad p|)^2 for x0 <= x < x1 of one output row (9 ring rows given by ``rows``).

    Two square roots per pixel: the one-root form M_t + M_p - 2 sqrt(M_t M_p) cancels badly when
    the prediction is close to the reference (relative error eps m^2 / e^2).
    """
    r0, r1, r2, r3, r4, r5, r6, r7, r8 = rows[0], rows[1], rows[2], rows[3], rows[4], rows[5], rows[6], rows[7], rows[8]
    g4, g5, g6, g7, g8 = g[4], g[5], g[6], g[7], g[8]
    d5, d6, d7, d8 = dg[5], dg[6], dg[7], dg[8]
    # Unsigned indices: no negative-index wraparound check in the loop (see _hspan).
    for x in range(np.uint64(x0), np.uint64(x1)):
        # f_x = G(row) dG(col): vertical g over the row-wise dG pass; f_y = f_x^T the other way round.
        fx = (g4 * hd_t[r4, x] + g5 * (hd_t[r5, x] + hd_t[r3, x]) + g6 * (hd_t[r6, x] + hd_t[r2, x])
              + g7 * (hd_t[r7, x] + hd_t[r1, x]) + g8 * (hd_t[r8, x] + hd_t[r0, x]))
        fy = (d5 * (hg_t[r5, x] - hg_t[r3, x]) + d6 * (hg_t[r6, x] - hg_t[r2, x])
              + d7 * (hg_t[r7, x] - hg_t[r1, x]) + d8 * (hg_t[r8, x] - hg_t[r0, x]))
        mt = np.sqrt(fx * fx + fy * fy)
        fx = (g4 * hd_p[r4, x] + g5 * (hd_p[r5, x] + hd_p[r3, x]) + g6 * (hd_p[r6, x] + hd_p[r2, x])
              + g7 * (hd_p[r7, x] + hd_p[r1, x]) + g8 * (hd_p[r8, x] + hd_p[r0, x]))
        fy = (d5 * (hg_p[r5, x] - hg_p[r3, x]) + d6 * (hg_p[r6, x] - hg_p[r2, x])
              + d7 * (hg_p[r7, x] - hg_p[r1, x]) + d8 * (hg_p[r8, x] - hg_p[r0, x]))
        e = mt * sc_t - np.sqrt(fx * fx + fy * fy) * sc_p
        buf[x] = e * e


@njit(cache=True)
def _grad_frame(p, t, g, dg, inv_norm, normalize, skip_flat):
    """sum((|grad t| - |grad p|)^2) of one frame, filters applied separably (9 taps, half = 4).

    Summation order is explicit and fixed by pixel position, not left to the compiler: column x
    of a row goes to accumulator lane x % 8, lanes are combined pairwise, rows are added in order.
    The value is therefore the same on any CPU, in any compilation, and with or without
    ``skip_flat``: skipped pixels contribute exactly 0 (see :func:`_row_activity`), and adding 0
    to a lane leaves it unchanged.
    """
    H, W = p.shape
    k = 9
    half = 4
    tile = GRAD_TILE
    nt = (W + tile - 1) // tile
    wpad = nt * tile
    sc_p = _minmax_scale(p, normalize) * inv_norm
    sc_t = _minmax_scale(t, normalize) * inv_norm
    act = np.empty((H, nt), np.uint8)
    out_act = np.empty((H, nt), np.uint8)
    need_h = np.empty((H, nt), np.uint8)
    if skip_flat:
        _row_activity(p, t, tile, act)
    else:
        act[:, :] = 1
    # Output tiles whose 9x9 windows may see activity; then the horizontally filtered tiles they read.
    out_any = _dilate_rows(act, out_act, half, True)
    need_any = _dilate_rows(out_act, need_h, half, False)
    pad = np.empty(W + 2 * half)
    # Ring buffers of horizontally filtered rows: slot r % 9 holds image row r. Columns of tiles not
    # needed for a row hold stale values that no computed output reads.
    hg_p = np.empty((k, wpad))
    hd_p = np.empty((k, wpad))
    hg_t = np.empty((k, wpad))
    hd_t = np.empty((k, wpad))
    # e^2 of the current row; entries past W stay 0 so every tile reduces over whole lanes.
    buf = np.zeros(wpad)
    rows = np.empty(k, np.int64)
    total = 0.0
    for y in range(-half, H):
        r = y + half
        if r < H and need_any[r]:
            _pad_row(p, r, pad)
            j = 0
            while j < nt:
                if need_h[r, j]:
                    j0 = j
                    while j < nt and need_h[r, j]:
                        j += 1
                    _hspan(pad, g, dg, hg_p[r % k], hd_p[r % k], j0 * tile, min(j * tile, W))
                else:
                    j += 1
            _pad_row(t, r, pad)
            j = 0
            while j < nt:
                if need_h[r, j]:
                    j0 = j
                    while j < nt and need_h[r, j]:
                        j += 1
                    _hspan(pad, g, dg, hg_t[r % k], hd_t[r % k], j0 * tile, min(j * tile, W))
                else:
                    j += 1
        if y < 0 or not out_any[y]:
            continue
        for i in range(k):
            rows[i] = min(max(y + i - half, 0), H - 1) % k
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
        j = 0
        while j < nt:
            if not out_act[y, j]:
                j += 1
                continue
            j0 = j
            while j < nt and out_act[y, j]:
                j += 1
            x0 = j0 * tile
            x1 = j * tile
            _e2_span(hg_p, hd_p, hg_t, hd_t, rows, g, dg, sc_p, sc_t, x0, min(x1, W), buf)
            for x in range(np.uint64(x0), np.uint64(x1), np.uint64(GRAD_LANES)):
                a0 += buf[x]
                a1 += buf[x + np.uint64(1)]
                a2 += buf[x + np.uint64(2)]
                a3 += buf[x + np.uint64(3)]
                a4 += buf[x + np.uint64(4)]
                a5 += buf[x + np.uint64(5)]
                a6 += buf[x + np.uint64(6)]
                a7 += buf[x + np.uint64(7)]
        total += ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
    return total


@njit(cache=True, inline="always")
def _union(uf, parent, link, size, first, link_order, state, a, b, lv):
    """Merge the components of a and b at level lv; record the link and the running largest."""
    ra = _find(uf, a)
    rb = _find(uf, b)
    if ra == rb:
        return
    if size[ra] < size[rb] or (size[ra] == size[rb] and ra > rb):
        ra, rb = rb, ra
    uf[rb] = ra
    parent[rb] = ra
    link[rb] = lv
    link_order[state[0]] = rb
    state[0] += 1
    size[ra] += size[rb]
    if first[rb] < first[ra]:
        first[ra] = first[rb]
    # Sizes only grow, so the largest component at the end of a level is the largest ever recorded;
    # equal sizes go to the smaller first pixel (raster order).
    if size[ra] > state[1] or (size[ra] == state[1] and first[ra] < state[2]):
        state[1] = size[ra]
        state[2] = first[ra]
        state[3] = ra


@njit(cache=True)
def _above_first(rend, lo, hi, x):
    """First run index in [lo, hi) whose end exceeds x (runs of one row, sorted), hi if none."""
    while lo < hi:
        mid = (lo + hi) // 2
        if rend[mid] > x:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def _conn_frame(p, t, thr, thr32, cut32, lut, table, ws32, ws8):
    """sum(|phi_t - phi_p|) of one frame.

    The largest 4-connected component L_i of S_i = {min(t, p) >= theta_i} is found for all ten
    thresholds in one union-find sweep that adds pixels level by level, highest level first
    (after adding level i the forest's trees are exactly the components of S_i). The nodes are
    maximal horizontal runs of equal level, not pixels: a run is connected, so it joins the forest
    in one step, and the large uniform regions of real mattes (exactly 1 inside, 0 outside) cost
    one node per row. A pixel's round-down value is theta_J with J the largest j such that it lies
    in L_1, ..., L_j; because each L_i lies inside one component of S_{i-1}, these sets are nested
    up to the first i where L_i is not inside L_{i-1} or is empty (then no pixel rounds down to
    theta_i or above). Membership is read from the un-compressed link tree: a node's level-j root
    is itself above its link level, else its parent's. Ties between equal largest components go
    to the one whose first pixel in raster order comes first -- the label order of
    cv2.connectedComponentsWithStats in the reference script.

    Order of summation does not matter here: every term |phi_t - phi_p| is a difference of two
    float32 values in {0} u [0.15, 1], a multiple of 2^-26 below 1, so sums of up to 2^26 terms
    are exact in float64. Pixels with p == t contribute exactly 0 and are skipped.

    ``ws32`` (8, H*W) int32 and ``ws8`` (3, H*W) int8 are scratch space (one entry per possible
    run) reused across the frames of a chunk; every entry read is written first in the same call.
    """
    H, W = p.shape
    nthr = thr.shape[0]  # 11: theta_0 .. theta_10
    top = nthr - 1
    rpos = ws32[0]  # run start, raster index
    rend = ws32[1]  # run end (exclusive), raster index
    order = ws32[2]
    uf = ws32[3]
    parent = ws32[4]
    size = ws32[5]
    first = ws32[6]
    link_order = ws32[7]
    rlv = ws8[0]
    link = ws8[1]
    J = ws8[2]
    row_start = np.empty(H + 1, np.int64)
    counts = np.zeros(nthr + 1, np.int64)
    # Level row padded to whole 8-byte words (read as uint64 to skip through long runs).
    lvrow = np.zeros((W + 7) // 8 * 8, np.uint8)
    lvwords = lvrow.view(np.uint64)
    kmin = np.zeros(nthr, np.uint8)  # smallest 8-bit value of each level (used by 8-bit frames)
    for i in range(nthr):
        k = 255
        while k > 0 and lut[k - 1] >= i:
            k -= 1
        kmin[i] = k
    spread = np.uint64(0x0101010101010101)
    nr = 0
    total = 0.0
    for y in range(H):
        row_start[y] = nr
        pr = p[y]
        tr = t[y]
        hot = _level_row(pr, tr, thr, lut, kmin, lvrow)
        x = 0
        while x < W:
            lv = lvrow[x]
            xa = x
            x += 1
            while x < W and (x & 7) and lvrow[x] == lv:
                x += 1
            if x < W and lvrow[x] == lv:
                # Aligned: compare 8 levels at a time (the padding never equals a full word of lv
                # past W because the loop below stops at W).
                pattern = np.uint64(lv) * spread
                while x + 8 <= W and lvwords[x >> 3] == pattern:
                    x += 8
                while x < W and lvrow[x] == lv:
                    x += 1
            if lv == 0:
                if not hot:
                    continue  # p == t wherever this row is below theta_1: nothing to add
                # Below theta_1 a pixel rounds down to 0 whatever the components: score it now.
                s = 0.0
                for i in range(xa, x):
                    pv = pr[i]
                    tv = tr[i]
                    if pv != tv:
                        s += abs(_phi(tv, 0, thr32, cut32, table) - _phi(pv, 0, thr32, cut32, table))
                total += s
            else:
                rpos[nr] = y * W + xa
                rend[nr] = y * W + x
                rlv[nr] = lv
                counts[lv] += 1
                nr += 1
    row_start[H] = nr
    if nr == 0:
        return total
    # Counting sort of runs by level (raster order within a level).
    start = np.zeros(nthr + 1, np.int64)
    for i in range(1, nthr):
        start[i + 1] = start[i] + counts[i]
    fill = start.copy()
    for r in range(nr):
        lv = rlv[r]
        order[fill[lv]] = r
        fill[lv] += 1
    # state: n_links, best_size, best_first, best_root (the running largest component).
    state = np.array([0, 0, 0, -1], np.int64)
    root_at = np.full(nthr, -1, np.int64)
    inside_prev = np.zeros(nthr, np.bool_)
    for lv in range(top, 0, -1):
        for o in range(start[lv], start[lv + 1]):
            r = order[o]
            a = rpos[r]
            b = rend[r]
            y = a // W
            uf[r] = r
            parent[r] = -1
            link[r] = 0
            J[r] = 0
            size[r] = b - a
            first[r] = a
            if size[r] > state[1] or (size[r] == state[1] and a < state[2]):
                state[1] = size[r]
                state[2] = a
                state[3] = r
            # Neighbours already in the forest: runs of a higher level anywhere, runs of this level
            # in the row above (same-level runs never touch in a row; those below come later).
            if r > row_start[y] and rend[r - 1] == a and rlv[r - 1] > lv:
                _union(uf, parent, link, size, first, link_order, state, r, r - 1, lv)
            if r + 1 < row_start[y + 1] and rpos[r + 1] == b and rlv[r + 1] > lv:
                _union(uf, parent, link, size, first, link_order, state, r, r + 1, lv)
            if y > 0:
                hi = row_start[y]
                q = _above_first(rend, row_start[y - 1], hi, a - W)
                while q < hi and rpos[q] < b - W:
                    if rlv[q] >= lv:
                        _union(uf, parent, link, size, first, link_order, state, r, q, lv)
                    q += 1
            if y < H - 1:
                hi = row_start[y + 2]
                q = _above_first(rend, row_start[y + 1], hi, a + W)
                while q < hi and rpos[q] < b + W:
                    if rlv[q] > lv:
                        _union(uf, parent, link, size, first, link_order, state, r, q, lv)
                    q += 1
        best_root = state[3]
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
    for e in range(state[0] - 1, -1, -1):
        c = link_order[e]
        if own[c] == 0:
            jp = J[parent[c]]
            lc = link[c]
            J[c] = jp if jp < lc else lc
    pf = p.reshape(H * W)
    tf = t.reshape(H * W)
    s = 0.0
    u = np.uint64
    for r in range(nr):
        # Most runs of a good prediction have p == t throughout (the opaque interior): a
        # vectorised check first (unsigned indices: no wraparound test in the loop).
        differs = False
        for i in range(u(rpos[r]), u(rend[r])):
            differs |= pf[i] != tf[i]
        if not differs:
            continue
        j = J[r]
        for i in range(rpos[r], rend[r]):
            pv = pf[i]
            tv = tf[i]
            if pv != tv:
                s += abs(_phi(tv, j, thr32, cut32, table) - _phi(pv, j, thr32, cut32, table))
    return total + s


@njit(cache=True)
def _score_frame(p, t, k, pp, tp, has_prev, want_dt, want_grad, want_conn, normalize, g, dg, inv_norm, thr, thr32, cut32, lut, table,
                 ws32, ws8, out):
    if k == 0:
        a, b, c = _pointwise_frame(p[0], t[0], pp, tp, has_prev and want_dt, True, True)
        if not (has_prev and want_dt):
            c = np.nan
    else:
        a, b, c = _pointwise_frame(p[k], t[k], p[k - 1], t[k - 1], want_dt, True, True)
        if not want_dt:
            c = np.nan
    out[k, 0] = a
    out[k, 1] = b
    out[k, 2] = c
    if want_grad:
        out[k, 3] = _grad_frame(p[k], t[k], g, dg, inv_norm, normalize, True)
    if want_conn:
        out[k, 4] = _conn_frame(p[k], t[k], thr, thr32, cut32, lut, table, ws32, ws8)


@njit(parallel=True, cache=True)
def score_chunk(p, t, pp, tp, has_prev, want_dt, want_grad, want_conn, normalize, g, dg, inv_norm, thr, thr32, cut32,
                lut, table, threads):
    """Per-frame raw sums for a chunk (n, H, W); frame 0 of the chunk uses (pp, tp) as its predecessor.

    Returns (n, 5) float64: sum|d|, sum d^2, dtSSD sum (NaN where no predecessor), Grad sum, Conn sum
    (NaN for metrics not requested). ``threads`` is the number of scratch slots; slot s scores frames
    s, s + slots, ... and a frame's value comes from the same sequential code whatever the slot or
    thread count.
    """
    n = p.shape[0]
    out = np.full((n, 5), np.nan)
    slots = max(1, min(n, threads))
    npix = p.shape[1] * p.shape[2] if want_conn else 1
    ws32 = np.empty((slots, 8, npix), np.int32)
    ws8 = np.empty((slots, 3, npix), np.int8)
    for sl in prange(slots):
        for k in range(sl, n, slots):
            _score_frame(p, t, k, pp, tp, has_prev, want_dt, want_grad, want_conn, normalize, g, dg, inv_norm, thr,
                         thr32, cut32, lut, table, ws32[sl], ws8[sl], out)
    return out


# A separate function, not a second compilation of the one above: numba's on-disk cache keys on
# the Python function, so two dispatchers of one function would share (and clobber) entries.
@njit(cache=True)
def score_chunk_serial(p, t, pp, tp, has_prev, want_dt, want_grad, want_conn, normalize, g, dg, inv_norm, thr, thr32,
                       cut32, lut, table, threads):
    """:func:`score_chunk` on one thread (one frame, or numba set to one thread): no parallel region
    to start, and one scratch slot."""
    n = p.shape[0]
    out = np.full((n, 5), np.nan)
    npix = p.shape[1] * p.shape[2] if want_conn else 1
    ws32 = np.empty((8, npix), np.int32)
    ws8 = np.empty((3, npix), np.int8)
    for k in range(n):
        _score_frame(p, t, k, pp, tp, has_prev, want_dt, want_grad, want_conn, normalize, g, dg, inv_norm, thr,
                     thr32, cut32, lut, table, ws32, ws8, out)
    return out


@njit(cache=True)
def pointwise_chunk(p, t, pp, tp, has_prev, want_mad, want_mse, want_dt):
    """:func:`score_chunk` when only MAD, MSE and dtSSD are asked for: serial (memory-bound loops
    gain little from a second thread) and only the sums requested; the same values."""
    n = p.shape[0]
    out = np.full((n, 5), np.nan)
    for k in range(n):
        if k == 0:
            dt = has_prev and want_dt
            a, b, c = _pointwise_frame(p[0], t[0], pp, tp, dt, want_mad, want_mse)
        else:
            dt = want_dt
            a, b, c = _pointwise_frame(p[k], t[k], p[k - 1], t[k - 1], dt, want_mad, want_mse)
        if want_mad:
            out[k, 0] = a
        if want_mse:
            out[k, 1] = b
        if dt:
            out[k, 2] = c
    return out


LEVEL_LUT = make_level_lut()
LEVEL_KMIN = make_level_kmin()
PHI_TABLE = make_phi_table()

"""Winograd minimal-filtering convolution on the CPU: F(4x4, 3x3) and F(4x4, 5x5), channels-last, FP32.

Why: LPIPS's AlexNet at 1080p is 118.5 GFLOP a frame pair, and oneDNN's direct convolutions already
run near one core's FP32 peak, so a CPU can only go faster by multiplying less. Winograd's algorithm
(Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR 2016) computes an
``m x m`` block of a stride-1 ``r x r`` convolution from an ``n x n`` input tile (``n = m + r - 1``):

    Y = A^T [ (G g G^T) (.) (B^T d B) ] A

summed over input channels, where ``(.)`` is the element-wise product. Summing over channels turns
the ``n * n`` element-wise products into ``n * n`` matrix products (tiles x input channels by input
channels x output channels), which BLAS runs near its peak (torch's MKL; *Determinism* says why not numpy's
OpenBLAS, 1.1-1.5x faster on some shapes on one machine). Multiplications per output fall from ``r * r`` to
``n * n / (m * m)``: 9 -> 2.25 for 3x3 (4x) and 25 -> 4 for 5x5 (6.25x).

The matrices come from :func:`cook_toom`, exactly, in rational arithmetic, for interpolation points
chosen for FP32 accuracy: ``0, 1, -1, 2, -1/2`` for F(4, 3) (mixing a point with its reciprocal
halves the error of the textbook ``+-2``: Barabasz et al., "Error analysis and improving the
accuracy of Winograd convolution for deep neural networks", ACM TOMS 2020) and
``0, +-1, +-2, +-1/2`` for F(4, 5). Against a float64 convolution on AlexNet's shapes, the largest
error of an output is 1e-5 to 2.5e-5 where the largest output is about 4 (a direct FP32 convolution:
1e-6 to 5e-6), and ``tests/test_winograd.py`` holds every layer shape to 1e-5 of the largest output
(7.8e-6 is the worst seen, F(4, 5)) and 1e-6 of it in RMS.

The input and output transforms are numba kernels generated from the matrices (constants folded,
one store stream per loop so LLVM vectorises over channels) and kept in
``_winograd_kernels.py``; ``python -m hug_vis_dataset.models.winograd`` rewrites that file and
``tests/test_winograd.py`` fails when it differs from what the generator writes.

Determinism: every output depends only on its own tile (same transforms, same matrix-product row
for whatever block of tiles the tile is in), so two identical images give bit-identical features,
and neither the block size nor the thread count is a parameter of the values. That needs a matrix
product whose row ``i`` depends only on row ``i`` of the left matrix, not on where it stands or how many
rows there are. numpy's OpenBLAS does not give that on every CPU: on an AMD EPYC where it picks its
Haswell kernels, a row's last bits depend on its position (identical rows differ by ~1e-6 relative;
measured 2026-12-06), so LPIPS of identical frames was 1e-12 instead of 0. torch's MKL gives the same
bits for a row wherever it stands once a product has :data:`MIN_GEMM_ROWS` rows or more (fewer take
other kernels), with one thread or several; smaller blocks are padded with zero rows to that many.

Example:
    >>> at, g, bt = cook_toom(2, 3, (0, 1, -1))
    >>> d, w = np.arange(4.0), np.array([1.0, 2.0, 3.0])
    >>> (at @ ((g @ w) * (bt @ d))).tolist(), [float(d[i:i + 3] @ w) for i in range(2)]
    ([8.0, 14.0], [8.0, 14.0])
"""

from __future__ import annotations

import contextlib
import threading
from fractions import Fraction
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

#: Interpolation points per (output tile m, kernel r); infinity is always the last point.
POINTS: "dict[tuple[int, int], tuple[Fraction, ...]]" = {
    (4, 3): tuple(Fraction(p) for p in (0, 1, -1, 2, Fraction(-1, 2))),
    (4, 5): tuple(Fraction(p) for p in (0, 1, -1, 2, -2, Fraction(1, 2), Fraction(-1, 2))),
}

KERNELS_FILE = Path(__file__).with_name("_winograd_kernels.py")
#: The fewest rows a block's matrix products get (zero rows pad a smaller block): MKL takes other kernels
#: for 1 to 3 rows, whose bits differ from those of the same row in a larger product (Determinism, above).
MIN_GEMM_ROWS = 8


def _polymul(p: "list[Fraction]", q: "list[Fraction]") -> "list[Fraction]":
    out = [Fraction(0)] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        for j, b in enumerate(q):
            out[i + j] += a * b
    return out


def cook_toom_exact(m: int, r: int, points: Sequence) -> "tuple[list, list, list]":
    """``(A^T, G, B^T)`` of the 1-D correlation F(m, r) as lists of :class:`~fractions.Fraction`.

    ``y_i = sum_k g_k d_(i+k)`` (``i < m``) equals ``A^T [(G g) * (B^T d)]`` for any ``d`` of
    ``n = m + r - 1`` values: the transposed Toom-Cook product of polynomials evaluated at the
    ``n - 1`` finite ``points`` and at infinity, with the Lagrange denominators moved into ``G``
    (so ``B^T`` and ``A^T`` hold small integers and the data transforms round least).

    Raises:
        ValueError: not ``n - 1`` distinct points.
    """
    n = m + r - 1
    a = [Fraction(p) for p in points]
    if len(a) != n - 1 or len(set(a)) != len(a):
        raise ValueError(f"F({m}, {r}) needs {n - 1} distinct finite points, got {list(points)}")
    g_rows = [[aj ** k for k in range(r)] for aj in a] + [[Fraction(0)] * (r - 1) + [Fraction(1)]]
    h_rows = [[aj ** k for k in range(m)] for aj in a] + [[Fraction(0)] * (m - 1) + [Fraction(1)]]
    interp = [[Fraction(0)] * n for _ in range(n)]  # column j: coefficients of the j-th basis polynomial
    for j, aj in enumerate(a):
        poly, denominator = [Fraction(1)], Fraction(1)
        for k, ak in enumerate(a):
            if k != j:
                poly = _polymul(poly, [-ak, Fraction(1)])
                denominator *= aj - ak
        g_rows[j] = [v / denominator for v in g_rows[j]]
        for i, c in enumerate(poly):
            interp[i][j] = c
    top = [Fraction(1)]  # the point at infinity: prod (x - a_j), of degree n - 1
    for ak in a:
        top = _polymul(top, [-ak, Fraction(1)])
    for i, c in enumerate(top):
        interp[i][n - 1] = c
    a_t = [[h_rows[j][i] for j in range(n)] for i in range(m)]
    b_t = [[interp[i][j] for i in range(n)] for j in range(n)]
    return a_t, g_rows, b_t


def cook_toom(m: int, r: int, points: Sequence) -> "tuple[np.ndarray, np.ndarray, np.ndarray]":
    """:func:`cook_toom_exact` as float64 arrays ``A^T (m, n)``, ``G (n, r)``, ``B^T (n, n)``."""
    return tuple(np.array([[float(v) for v in row] for row in mat]) for mat in cook_toom_exact(m, r, points))


# ----------------------------------------------------------------------------- kernel generation
def _combination(coefficients: Sequence[Fraction], names: Sequence[str]) -> str:
    """``sum c_k * name_k`` as FP32 source, zero terms left out and unit factors not multiplied."""
    terms = []
    for c, name in zip(coefficients, names):
        if c == 0:
            continue
        sign = "-" if c < 0 else "+"
        factor = "" if abs(c) == 1 else f"np.float32({float(abs(c))!r}) * "
        terms.append(f"{sign} {factor}{name}")
    text = " ".join(terms)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]


def _tile_loop(m: int) -> "list[str]":
    """The loop over the tiles of a block (tile rows ``ty0:ty1``, columns ``tx0:tx1``), in (row, image,
    column) order, with the tile's origin."""
    return ["    for ty in range(ty0, ty1):", "        for b in range(images):", "            for tx in range(tx0, tx1):",
            "                tile = ((ty - ty0) * images + b) * (tx1 - tx0) + tx - tx0", f"                y0 = ty * {m}",
            f"                x0 = tx * {m}"]


def _products(matrix, destination, sources: "list[str]", pad: str, guard=None,
              store: "tuple[str, ...]" = ("o[c] = {}",)) -> "list[str]":
    """For each row ``a`` of ``matrix``: ``destination(a)[c] = sum_k matrix[a][k] * sources[k][c]`` over
    the channels, as one loop per row (one store stream, so it vectorises); ``guard(a)``, when given,
    is a condition the row's loop is under; ``store``: the loop body's lines, ``{}`` the sum."""
    lines = []
    for a, row in enumerate(matrix):
        inner = pad
        if guard is not None:
            lines.append(f"{pad}if {guard(a)}:")
            inner = pad + "    "
        total = _combination(row, [f"{name}[c]" for name in sources])
        lines += [f"{inner}o = {destination(a)}", f"{inner}for c in range(channels):"]
        lines += [f"{inner}    " + line.format(total) for line in store]
    return lines


def _transform_source(m: int, r: int) -> str:
    """The input and output transforms of F(m, r) as numba source (see :data:`KERNELS_FILE`).

    Each is two passes over a tile, ``M^T X`` then ``(M^T X) M``: the first pass's coefficients depend on
    the matrix row and the tile row only, the second's on the matrix row and the tile column only, so
    the other index is a run-time loop (small generated code, and a short numba compile).
    """
    a_t, _, b_t = cook_toom_exact(m, r, POINTS[(m, r)])
    n, tag = m + r - 1, f"f{m}{r}"
    pad = " " * 20
    lines = [f"# F({m}x{m}, {r}x{r}), points {', '.join(str(p) for p in POINTS[(m, r)])}, infinity", "",
             "", "@njit(cache=True, nogil=True, fastmath={'nsz'})",
             f"def input_{tag}(x, v, ty0, ty1, tx0, tx1):",
             f'    """``v[f, tile, :] = (B^T d B)[f]`` for the {n}x{n} tiles ``ty0 <= ty < ty1``, ``tx0 <= tx < tx1`` of'
             f' the padded channels-last ``x``; tiles in (row, image, column) order."""',
             "    images, channels = x.shape[0], x.shape[3]",
             f"    rows = np.empty(({n}, {n}, channels), np.float32)  # B^T d: one tile, all channels",
             *_tile_loop(m), f"                for j in range({n}):"]
    lines += [f"{pad}d{k} = x[b, y0 + {k}, x0 + j]" for k in range(n)]
    lines += _products(b_t, lambda i: f"rows[{i}, j]", [f"d{k}" for k in range(n)], pad)
    lines.append(f"                for i in range({n}):")
    lines += [f"{pad}t{j} = rows[i, {j}]" for j in range(n)]
    lines += _products(b_t, lambda col: f"v[i * {n} + {col}, tile]", [f"t{j}" for j in range(n)], pad)
    lines += ["", "", "@njit(cache=True, nogil=True, fastmath={'nsz'})",
              f"def output_{tag}(mm, bias, ty0, ty1, tx0, tx1, images, out, oy, ox, height, width):",
              f'    """``out[b, oy + y, ox + x, :] = relu(A^T mm A + bias)`` for the tiles of ``input_{tag}``, rows'
              f' ``y < height`` and columns ``x < width`` only."""',
              "    channels = mm.shape[2]",
              f"    rows = np.empty(({m}, {n}, channels), np.float32)  # A^T M: one tile, all channels",
              "    zero = np.float32(0.0)",
              *_tile_loop(m), f"                for j in range({n}):"]
    lines += [f"{pad}m{k} = mm[{k} * {n} + j, tile]" for k in range(n)]
    lines += _products(a_t, lambda i: f"rows[{i}, j]", [f"m{k}" for k in range(n)], pad)
    lines += [f"                for i in range({m}):", f"{pad}if y0 + i < height:"]
    lines += [f"{pad}    t{j} = rows[i, {j}]" for j in range(n)]
    lines += _products(a_t, lambda col: f"out[b, oy + y0 + i, ox + x0 + {col}]", [f"t{j}" for j in range(n)],
                       pad + "    ", guard=lambda col: f"x0 + {col} < width",
                       store=("s = ({}) + bias[c]", "o[c] = s if s > zero else zero"))
    return "\n".join(lines) + "\n"


def kernels_source() -> str:
    """The whole text of :data:`KERNELS_FILE`."""
    head = ('"""Generated by ``python -m hug_vis_dataset.models.winograd``: do not edit (see that module).\n\n'
            "Each loop stores one stream and reads at most n streams, so LLVM vectorises it over channels;\n"
            "``fastmath={'nsz'}`` only (no reassociation, no contraction): the arithmetic is the order written.\n"
            '"""\n\n# ruff: noqa: E501\nimport numpy as np\nfrom numba import njit\n\n')
    return head + "\n\n".join(_transform_source(m, r) for m, r in sorted(POINTS))


# ----------------------------------------------------------------------------- the convolution
class WinogradConv2d:
    """``relu(conv2d(x, weight, bias, padding))``, stride 1, on channels-last FP32 arrays.

    Args:
        weight: ``(out_channels, in_channels, r, r)`` with ``r`` 3 or 5 (array or tensor).
        bias: ``(out_channels,)``.
        padding: the zero padding of the convolution (the caller's buffer carries it, see
            :meth:`geometry`).
        band: tile rows per matrix product (memory and cache reuse only: not a parameter of the values).
        columns: tile columns per matrix product, ``None`` for whole rows (likewise: a block of ``band``
            rows by ``columns`` columns of tiles, of both images, is one product; a layer whose
            transformed block would not stay in the core's cache runs faster in narrower blocks).

    Example:
        >>> import torch, torch.nn.functional as F
        >>> _ = torch.manual_seed(0)
        >>> w, b = torch.randn(8, 4, 3, 3, dtype=torch.float64), torch.randn(8, dtype=torch.float64)
        >>> x = torch.randn(1, 4, 9, 11, dtype=torch.float64)
        >>> conv = WinogradConv2d(w, b, padding=1)
        >>> buf = conv.padded_input(1, 9, 11, 4); buf[:, 1:10, 1:12] = x.permute(0, 2, 3, 1).numpy()
        >>> out = np.zeros((1, 9, 11, 8), np.float32); conv(buf, 9, 11, out)
        >>> ref = F.conv2d(x, w, b, padding=1).relu().permute(0, 2, 3, 1).numpy()
        >>> bool(np.abs(out - ref).max() < 1e-5 * np.abs(ref).max())  # the feature bound (FP32 Winograd)
        True
    """

    def __init__(self, weight, bias, padding: int, band: int = 4, columns: "int | None" = None) -> None:
        import torch

        weight = torch.as_tensor(weight).detach().double().cpu()
        out_channels, in_channels, r, r2 = weight.shape
        if r != r2 or (4, r) not in POINTS:
            raise ValueError(f"no Winograd transform for a {r}x{r2} kernel (have {sorted(k for _, k in POINTS)})")
        from . import _winograd_kernels as kernels

        self.m, self.r, self.n, self.padding, self.band = 4, r, 4 + r - 1, int(padding), int(band)
        self.columns = None if columns is None else int(columns)
        if self.band < 1 or (self.columns is not None and self.columns < 1):
            raise ValueError(f"a block needs at least one tile row and column, got band={band}, columns={columns}")
        _, g, _ = cook_toom(self.m, r, POINTS[(self.m, r)])
        g = torch.from_numpy(g)
        # U = G w G^T in float64, rounded once to float32: (n*n, in, out), one matrix per tile element
        u = torch.einsum("ij,ocjl,kl->ikco", g, weight, g).reshape(self.n * self.n, in_channels, out_channels)
        self.u = u.float().contiguous().numpy()
        self._u = torch.from_numpy(self.u)  # the same memory, as the right operand of torch's matmul
        self.bias = np.ascontiguousarray(torch.as_tensor(bias).detach().cpu().numpy(), dtype=np.float32)
        self.in_channels, self.out_channels = in_channels, out_channels
        self._input = getattr(kernels, f"input_f{self.m}{r}")
        self._output = getattr(kernels, f"output_f{self.m}{r}")
        self._lock = threading.Lock()
        self._buffers: dict = {}

    def geometry(self, height: int, width: int) -> "tuple[int, int, int, int, int, int]":
        """``(out_height, out_width, tile_rows, tile_cols, padded_height, padded_width)`` of an input.

        The padded input holds the image at ``(padding, padding)`` and zeros around it, over every
        tile's extent (``tile_rows * m + r - 1`` rows), so the transform never tests a bound.
        """
        out_h, out_w = height + 2 * self.padding - self.r + 1, width + 2 * self.padding - self.r + 1
        if out_h < 1 or out_w < 1:
            raise ValueError(f"input {height}x{width} is smaller than the {self.r}x{self.r} kernel")
        th, tw = -(-out_h // self.m), -(-out_w // self.m)
        return out_h, out_w, th, tw, th * self.m + self.r - 1, tw * self.m + self.r - 1

    def padded_input(self, images: int, height: int, width: int, channels: int) -> np.ndarray:
        """A zeroed input buffer of :meth:`geometry`'s padded size."""
        *_, ph, pw = self.geometry(height, width)
        return np.zeros((images, ph, pw, channels), np.float32)

    def __call__(self, x: np.ndarray, height: int, width: int, out: np.ndarray, oy: int = 0, ox: int = 0,
                 threads: int = 1) -> None:
        """Write ``relu(conv(x) + bias)`` of the ``height x width`` image held in the padded ``x``
        (:meth:`padded_input`) into ``out[:, oy:oy + out_height, ox:ox + out_width]``.

        ``threads > 1`` spreads the blocks of tiles over that many threads, each with its own buffers
        and its matrix products on one BLAS thread (call it under :func:`blas_threads` ``(1)``): the
        transforms run in parallel too, and no BLAS thread spins while they run. Each output is
        computed the same way whichever thread has its block, so the values do not depend on it.
        """
        images = x.shape[0]
        out_h, out_w, th, tw, ph, pw = self.geometry(height, width)
        if x.shape[1:] != (ph, pw, self.in_channels) or x.dtype != np.float32 or not x.flags.c_contiguous:
            raise ValueError(f"input buffer {x.shape} {x.dtype} is not the padded ({images}, {ph}, {pw}, "
                             f"{self.in_channels}) float32 of geometry()")
        if (out.ndim != 4 or out.shape[0] != images or out.shape[1] < oy + out_h or out.shape[2] < ox + out_w
                or out.shape[3] != self.out_channels or out.dtype != np.float32):
            raise ValueError(f"output buffer {out.shape} {out.dtype} cannot hold ({images}, {out_h}, {out_w}, "
                             f"{self.out_channels}) float32 at ({oy}, {ox})")
        # blocks of tiles as even as they divide (sizes differ by one at most: no thin last block); where
        # there are few blocks per thread, a multiple of the threads (no thread waits on another's block)
        threads = max(1, int(threads))
        row_blocks = -(-th // self.band)
        col_blocks = -(-tw // min(self.columns or tw, tw))
        if threads > 1 and row_blocks * col_blocks < threads * 4:
            row_blocks = min(th, -(-row_blocks // threads) * threads)
        blocks = [(th * i // row_blocks, th * (i + 1) // row_blocks, tw * j // col_blocks, tw * (j + 1) // col_blocks)
                  for i in range(row_blocks) for j in range(col_blocks)]
        band, columns = -(-th // row_blocks), -(-tw // col_blocks)
        workers = min(threads, len(blocks))
        import torch

        with self._lock:  # the work buffers are reused between calls (no fresh pages per frame)
            size = self.n * self.n * max(band * images * columns, MIN_GEMM_ROWS)
            if self._buffers.get("size") != (size, workers):  # flat: a smaller block is a contiguous prefix
                # zeros: the padding rows of a small block hold finite values (their products are not read)
                self._buffers = {"size": (size, workers),
                                 "slots": [(np.zeros(size * self.in_channels, np.float32),
                                            np.zeros(size * self.out_channels, np.float32)) for _ in range(workers)]}

            def run(worker: int) -> None:
                v_buf, m_buf = self._buffers["slots"][worker]
                for ty0, ty1, tx0, tx1 in blocks[worker::workers]:
                    shape = (self.n * self.n, max((ty1 - ty0) * images * (tx1 - tx0), MIN_GEMM_ROWS))
                    v = v_buf[:shape[0] * shape[1] * self.in_channels].reshape(*shape, self.in_channels)
                    mm = m_buf[:shape[0] * shape[1] * self.out_channels].reshape(*shape, self.out_channels)
                    self._input(x, v, ty0, ty1, tx0, tx1)  # writes the block's tiles, rows 0.. of each product
                    torch.matmul(torch.from_numpy(v), self._u, out=torch.from_numpy(mm))  # MKL: see Determinism
                    self._output(mm, self.bias, ty0, ty1, tx0, tx1, images, out, oy, ox, out_h, out_w)

            if workers == 1:
                run(0)
            else:  # the kernels release the GIL (nogil) and so does numpy's matmul
                list(thread_pool(workers).map(run, range(workers)))


_POOLS: dict = {}
_POOLS_LOCK = threading.Lock()


def thread_pool(workers: int):
    """A thread pool of ``workers`` threads, made once per size and kept (threads are not started per call)."""
    from concurrent.futures import ThreadPoolExecutor

    with _POOLS_LOCK:
        if workers not in _POOLS:
            _POOLS[workers] = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="winograd")
        return _POOLS[workers]


@contextlib.contextmanager
def blas_threads(threads: int) -> Iterator[None]:
    """A context in which the matrix products of :class:`WinogradConv2d` (torch's MKL) and numpy's BLAS
    run on ``threads`` threads; torch's thread count is put back on exit. The LPIPS path runs them on
    one and spreads blocks of tiles over threads itself (a BLAS that takes every core spins between
    calls: 1.3-1.5x the CPU time of one thread per 1080p LPIPS pair, measured). Values do not depend on
    it. torch's count is the process's: other torch work in the process runs on that many meanwhile."""
    import torch
    from threadpoolctl import threadpool_limits

    before = torch.get_num_threads()
    torch.set_num_threads(max(1, int(threads)))
    try:
        with threadpool_limits(limits=max(1, int(threads)), user_api="blas"):
            yield
    finally:
        torch.set_num_threads(before)


def main() -> int:
    """Write :data:`KERNELS_FILE` from the generator."""
    KERNELS_FILE.write_text(kernels_source(), encoding="utf-8")
    print(f"wrote {KERNELS_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

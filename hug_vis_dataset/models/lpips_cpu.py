"""LPIPS v0.1 AlexNet on the CPU, about 3.3x cheaper than the ``lpips`` package, with the same values.

:func:`hug_vis_dataset.models.lpips.lpips_distances` takes this path for an ``lpips.LPIPS(net='alex',
version='0.1')`` module on the CPU (the GPU keeps the package's own forward). It computes the same
function as ``LPIPS.forward`` from the module's own parameters; what changes is how many
multiplications the convolutions take, the arithmetic's order and the memory traffic
(``scripts/bench_lpips.py`` measures the cost against the package in one run, ``docs/PERFORMANCE.md``
runs O and P):

- **Winograd convolutions** (:mod:`hug_vis_dataset.models.winograd`). AlexNet's five convolutions
  are 118.5 GFLOP a 1080p pair, and a direct FP32 convolution already runs near a core's peak, so
  the only way down on a CPU is fewer multiplications: conv2 (5x5) runs as F(4x4, 5x5), 6.25x fewer,
  conv3-5 (3x3) as F(4x4, 3x3), 4x fewer; each an input transform, one matrix product per tile
  element (BLAS), an output transform with the bias and the ReLU. **conv1** (11x11, stride 4, 3
  channels) is first rewritten as a 3x3 stride-1 convolution over the 16 stride phases of its input
  (48 channels, the kernel split the same way: the same sums, exactly), then run as F(4x4, 3x3):
  3.4x fewer multiplications. Each matrix product covers a block of tiles sized per layer for the cache
  (conv2's in narrow blocks, so its transformed tiles stay in L2; conv3-5's in wide ones).
- **The input is the package's own scaling**, exactly: a 256 x 3 table of ``scaling_layer(im2tensor(u))``
  built with the package's functions, read while the frames are split into conv1's phases, so the
  uint8 -> float conversion, the scaling, the padding and the transposition are one pass.
- **Channels-last work buffers, zeroed once per frame size and reused**: each layer writes its output
  straight inside the next layer's zero border (no padding pass), the max-pools are numba passes into
  those borders, and no fresh pages are faulted in per frame.
- **The distance is one fused pass** (:func:`_layer_distance`, numba). The package normalises each
  feature map (square, sum, sqrt, add, divide), subtracts, squares, runs the 1x1 linear head and
  averages: about a dozen full passes over every activation. Channels-last puts a pixel's channels
  side by side, so one pass per pixel forms both norms and the weighted squared difference (float64
  accumulators, one thread: a value does not depend on the thread count).

Values: Winograd's FP32 error on a feature is about ten times a direct FP32 convolution's (at most
7.8e-6 of the layer's largest value seen, :mod:`~hug_vis_dataset.models.winograd`), and LPIPS averages
millions of them: per-frame values agree with the package's to about 1e-10 at 1080p (tests assert
1e-5 on random, smooth, 1080p, small and odd-sized frames). A frame's value does not depend on
``batch`` nor on the thread count: one pair per forward, every output computed from its own tile in a
fixed order. Identical frames give exactly 0 (their features are bit-identical). Tried and not kept,
by measurement (PERFORMANCE.md runs M and O): ONNX Runtime, ``torch.jit.freeze``, ``torch.compile``,
oneDNN's bf16 arithmetic even as a three-term split, NNPACK, Winograd transforms as torch operations
(memory passes: slower than direct), FFT convolutions (0.7-1.1x direct), F(6x6, 3x3) and F(5x5, 3x3)
(a feature's error at or near the 1e-5 bound of the tests).

Example:
    >>> import numpy as np
    >>> f = np.ones((1, 2, 3, 4), np.float32)  # (pair member, H, W, C): identical features
    >>> float(_layer_distance(np.concatenate([f, f]), np.ones(4)))
    0.0
"""

from __future__ import annotations

import threading

import numpy as np
from numba import njit

EPS = 1e-10
"""``lpips.normalize_tensor``'s epsilon: ``x / (sqrt(sum x^2) + eps)``."""


# Reassociation lets the channel sums vectorise (3-4x faster than a strict left-to-right sum; values
# move by about 1e-15 relative). "contract" is left out on purpose: fusing ``a * r0 - b * r1`` into an
# FMA would round its two products differently, and identical frames would no longer give exactly 0.
@njit(cache=True, nogil=True, fastmath={"reassoc", "nsz", "arcp", "nnan", "ninf", "afn"})
def _layer_distance(feat: np.ndarray, weights: np.ndarray) -> float:
    """``mean_hw sum_c w_c (a / (|a| + eps) - b / (|b| + eps))^2`` of one layer's channels-last features.

    ``feat`` is ``(2, H, W, C)`` float32 and finite (ReLU outputs): the prediction's features at 0, the
    reference's at 1.
    """
    _, height, width, channels = feat.shape
    rows = np.zeros(height)
    for y in range(height):
        a, b = feat[0, y], feat[1, y]
        row = 0.0
        for x in range(width):
            s0 = 0.0
            s1 = 0.0
            for c in range(channels):
                s0 += np.float64(a[x, c]) * a[x, c]
                s1 += np.float64(b[x, c]) * b[x, c]
            r0 = 1.0 / (np.sqrt(s0) + EPS)
            r1 = 1.0 / (np.sqrt(s1) + EPS)
            acc = 0.0
            for c in range(channels):
                d = a[x, c] * r0 - b[x, c] * r1
                acc += weights[c] * d * d
            row += acc
        rows[y] = row
    total = 0.0
    for y in range(height):  # a fixed order: the value does not depend on the thread count
        total += rows[y]
    return total / (height * width)


@njit(cache=True, nogil=True)
def _phase_input(frames: np.ndarray, table: np.ndarray, out: np.ndarray) -> None:
    """conv1's input, split into its 4 x 4 stride phases: ``out[b, I, J, (4 pa + pb) * 3 + c]`` is the
    scaled pixel ``table[u, c]`` of ``u = frames[b, 4 I + pa - 2, 4 J + pb - 2, c]`` (the 2-pixel zero
    padding and every position past the image stay as they are: zero)."""
    images, height, width, _ = frames.shape
    for b in range(images):
        for y in range(height):
            big_i, pa = (y + 2) // 4, (y + 2) % 4
            for x in range(width):
                big_j, pb = (x + 2) // 4, (x + 2) % 4
                base = (4 * pa + pb) * 3
                for c in range(3):
                    out[b, big_i, big_j, base + c] = table[frames[b, y, x, c], c]


@njit(cache=True, nogil=True)
def _max_pool_into(y: np.ndarray, out: np.ndarray, oy: int, ox: int) -> None:
    """``F.max_pool2d(y, 3, 2)`` of channels-last ``y`` (finite values) into ``out[:, oy:, ox:]``: a max
    over the window's rows, then over its columns (each loop one store stream, so it vectorises)."""
    images, height, width, channels = y.shape
    out_h, out_w = (height - 3) // 2 + 1, (width - 3) // 2 + 1
    rows = np.empty((width, channels), np.float32)
    for b in range(images):
        for i in range(out_h):
            r0, r1, r2 = y[b, 2 * i], y[b, 2 * i + 1], y[b, 2 * i + 2]
            for x in range(width):
                a0, a1, a2, o = r0[x], r1[x], r2[x], rows[x]
                for c in range(channels):
                    m = a0[c] if a0[c] > a1[c] else a1[c]
                    o[c] = m if m > a2[c] else a2[c]
            for j in range(out_w):
                a0, a1, a2, o = rows[2 * j], rows[2 * j + 1], rows[2 * j + 2], out[b, oy + i, ox + j]
                for c in range(channels):
                    m = a0[c] if a0[c] > a1[c] else a1[c]
                    o[c] = m if m > a2[c] else a2[c]


def is_alex_v01(model) -> bool:
    """Whether ``model`` is the package's ``LPIPS(net='alex', version='0.1')`` metric (not spatial)."""
    return (getattr(model, "pnet_type", None) == "alex" and getattr(model, "version", None) == "0.1"
            and bool(getattr(model, "lpips", False)) and not getattr(model, "spatial", True))


class AlexLPIPS:
    """The CPU forward of an ``lpips.LPIPS(net='alex', version='0.1')`` module, from its parameters.

    Args:
        model: the package's module (:func:`hug_vis_dataset.models.lpips.load_lpips`), on the CPU.

    Raises:
        ValueError: ``model`` is not the AlexNet v0.1 metric this path computes.
    """

    def __init__(self, model) -> None:
        import lpips
        import torch

        from .winograd import WinogradConv2d

        if not is_alex_v01(model):
            raise ValueError("the CPU path computes lpips.LPIPS(net='alex', version='0.1') only")
        convs = [m for m in model.net.modules() if isinstance(m, torch.nn.Conv2d)]
        if [tuple(c.weight.shape) for c in convs] != [(64, 3, 11, 11), (192, 64, 5, 5), (384, 192, 3, 3),
                                                       (256, 384, 3, 3), (256, 256, 3, 3)]:
            raise ValueError("not the AlexNet feature stack of lpips 0.1")
        with torch.no_grad():
            # the package's own scaling of every uint8 value (im2tensor, then the scaling layer): exact
            levels = np.repeat(np.arange(256, dtype=np.uint8)[:, None, None], 3, axis=2)  # (256, 1, 3)
            self.table = model.scaling_layer.cpu()(lpips.im2tensor(levels))[0, :, :, 0].T.contiguous().numpy()
            # conv1 (11x11, stride 4) = a 3x3 stride-1 convolution over the 16 stride phases of its input
            w1 = torch.zeros(64, 3, 12, 12, dtype=torch.float64)
            w1[:, :, :11, :11] = convs[0].weight.double()
            phased = w1.reshape(64, 3, 3, 4, 3, 4).permute(0, 3, 5, 1, 2, 4).reshape(64, 48, 3, 3)
            # tile rows and columns per matrix product, the fastest measured at 1080p for each layer (one
            # thread, then numpy's OpenBLAS): conv2's 64 transformed elements of 192 channels stay in the
            # core's cache only in narrow blocks; conv3-5 amortise their large weights over wide ones.
            # Speed only, not values
            blocks = ((1, 60), (1, 8), (6, None), (6, None), (6, None))
            weights = [(phased, convs[0].bias, 0)] + [(c.weight, c.bias, c.padding[0]) for c in convs[1:]]
            self.convs = [WinogradConv2d(w, b, padding=p, band=band, columns=columns)
                          for (w, b, p), (band, columns) in zip(weights, blocks)]
            self.heads = []
            for k in range(5):
                head = [m for m in getattr(model, f"lin{k}").modules() if isinstance(m, torch.nn.Conv2d)]
                self.heads.append(head[0].weight.detach().double().reshape(-1).numpy().copy())
        self._lock = threading.Lock()
        self._work: dict = {}

    def _buffers(self, height: int, width: int) -> dict:
        """The pair's work buffers for one frame size, zeroed once and reused: each frame rewrites the
        same positions, so the zero borders stay zero (and no fresh pages are faulted in per frame)."""
        if self._work.get("size") == (height, width):
            return self._work
        c1, c2, c3, c4, c5 = self.convs
        h1, w1 = (height + 4 - 11) // 4 + 1, (width + 4 - 11) // 4 + 1
        h2, w2 = (h1 - 3) // 2 + 1, (w1 - 3) // 2 + 1
        h3, w3 = (h2 - 3) // 2 + 1, (w2 - 3) // 2 + 1
        if min(h3, w3) < 1:  # the package fails there too, in its second max-pool
            raise ValueError(f"frames of {height}x{width} are too small for AlexNet's features (31x31 at least)")
        self._work = {"size": (height, width), "shapes": ((h1, w1), (h2, w2), (h3, w3)),
                      "x1": c1.padded_input(2, h1 + 2, w1 + 2, 48), "x2": c2.padded_input(2, h2, w2, 64),
                      "x3": c3.padded_input(2, h3, w3, 192), "x4": c4.padded_input(2, h3, w3, 384),
                      "x5": c5.padded_input(2, h3, w3, 256),
                      "y1": np.empty((2, h1, w1, 64), np.float32), "y2": np.empty((2, h2, w2, 192), np.float32),
                      "y5": np.empty((2, h3, w3, 256), np.float32)}
        return self._work

    def _forward(self, pair: "tuple[np.ndarray, np.ndarray]", threads: int = 1) -> list:
        """The five ReLU outputs (channels-last views of the work buffers) of a pair of ``(1, H, W, 3)``
        frames; ``threads``: the work spread over that many threads (not a parameter of the values)."""
        c1, c2, c3, c4, c5 = self.convs
        work = self._buffers(pair[0].shape[1], pair[0].shape[2])
        (h1, w1), (h2, w2), (h3, w3) = work["shapes"]
        two = (slice(0, 1), slice(1, 2))  # the pair's images, one per thread where there are two
        _each(threads, [lambda k=k, b=b: _phase_input(pair[k], self.table, work["x1"][b]) for k, b in enumerate(two)])
        c1(work["x1"], h1 + 2, w1 + 2, work["y1"], threads=threads)
        _each(threads, [lambda b=b: _max_pool_into(work["y1"][b], work["x2"][b], 2, 2) for b in two])
        c2(work["x2"], h2, w2, work["y2"], threads=threads)
        _each(threads, [lambda b=b: _max_pool_into(work["y2"][b], work["x3"][b], 1, 1) for b in two])
        c3(work["x3"], h3, w3, work["x4"], 1, 1, threads=threads)  # written inside conv4's zero border
        c4(work["x4"], h3, w3, work["x5"], 1, 1, threads=threads)
        c5(work["x5"], h3, w3, work["y5"], threads=threads)
        inner = (slice(None), slice(1, 1 + h3), slice(1, 1 + w3))
        return [work["y1"], work["y2"], work["x4"][inner], work["x5"][inner], work["y5"]]

    def features(self, frames: np.ndarray) -> list:
        """The five ReLU outputs of a pair of uint8 ``(2, H, W, 3)`` frames, as NCHW-shaped tensors."""
        import torch

        from .winograd import blas_threads

        threads = torch.get_num_threads()  # read before blas_threads(1) sets torch's count to 1
        with self._lock, blas_threads(1):
            frames = np.ascontiguousarray(frames)
            features = self._forward((frames[0:1], frames[1:2]), threads)
            return [torch.from_numpy(f.copy()).permute(0, 3, 1, 2) for f in features]

    def __call__(self, pred: np.ndarray, ref: np.ndarray) -> np.ndarray:
        """Per-frame LPIPS of uint8 ``(n, H, W, 3)`` frames, one pair per forward."""
        import torch

        from .winograd import blas_threads

        out = np.empty(len(pred))
        # torch's thread count is the one knob (the runner's workers set 1): the blocks of each
        # convolution are spread over that many threads, each on one BLAS thread (winograd.py)
        threads = torch.get_num_threads()
        with self._lock, blas_threads(1):
            for i in range(len(pred)):
                features = self._forward((np.ascontiguousarray(pred[i:i + 1]), np.ascontiguousarray(ref[i:i + 1])),
                                         threads)
                layers = _each(threads, [lambda f=f, w=w: _layer_distance(f, w) for f, w in zip(features, self.heads)])
                out[i] = sum(layers)  # in layer order, whichever thread computed each
        return out


def _each(threads: int, calls: list) -> list:
    """The results of ``calls`` (nogil kernels), on up to ``threads`` threads of the Winograd pool."""
    if threads <= 1:
        return [call() for call in calls]
    from .winograd import thread_pool

    return list(thread_pool(min(threads, len(calls))).map(lambda call: call(), calls))

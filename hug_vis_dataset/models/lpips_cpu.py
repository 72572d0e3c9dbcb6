"""LPIPS v0.1 AlexNet on the CPU, 1.4-1.7x cheaper than the ``lpips`` package, with the same values.

:func:`hug_vis_dataset.models.lpips.lpips_distances` takes this path for an ``lpips.LPIPS(net='alex',
version='0.1')`` module on the CPU (the GPU keeps the package's own forward). It computes the same
function as ``LPIPS.forward`` from the module's own parameters; what changes is the arithmetic's
order and the memory traffic (``scripts/bench_lpips.py`` measures both, ``docs/PERFORMANCE.md`` run M):

- **The scaling layer is folded into conv1.** The package maps ``u`` (uint8) to ``x = u / 127.5 - 1``,
  then ``z = (x - shift) / scale``, then conv1 with zero padding. ``z = a_c u + b_c`` per channel, so
  conv1's weights become ``w a_c`` and its bias ``bias + sum w b_c``; the zero padding of ``z`` is the
  value ``u = 127.5 (1 + shift_c)``, so the frames are copied once, as float, into a buffer whose
  2-pixel border holds that value and the folded conv1 runs unpadded (exact algebra: only rounding
  differs). That one copy is the uint8 -> float conversion, the NCHW -> channels-last transposition
  and the padding together.
- **Channels-last and one forward per pair.** The prediction and the reference go through the five
  convolutions as one batch of two, in channels-last layout (oneDNN's fastest fp32 kernels here),
  under ``torch.inference_mode``, with in-place ReLUs. On this CPU the convolutions then run at about
  the FP32 FMA peak of a core, so they are most of what is left (about 85 %).
- **The distance is one fused pass** (:func:`_layer_distance`, numba). The package normalises each
  feature map (square, sum, sqrt, add, divide), subtracts, squares, runs the 1x1 linear head and
  averages: about a dozen full passes over every activation, 45 % of its time at 1080p. Channels-last
  puts a pixel's channels side by side, so one pass per pixel forms both norms and the weighted
  squared difference (float64 accumulators, one thread: a value does not depend on the thread count).
- **ReLU as the convolution's post-op** (oneDNN's fused convolution, when torch has it).

A frame's value does not depend on ``batch`` at all: the CPU path always runs one pair per forward
(batching pairs was measured slower on the CPU: the 1080p activations of a batch outgrow the caches).
Identical frames give exactly 0 (both go through the same kernels, so their features are
bit-identical). Values agree with the package's to about 1e-9 (tests assert 1e-5 on random, smooth,
1080p, small and odd-sized frames). Tried and not kept, by measurement (PERFORMANCE.md run M): ONNX
Runtime with all graph optimisations (1.5x slower than torch on the five convolutions),
``torch.jit.freeze`` + ``optimize_for_inference`` (no gain), oneDNN's bf16 arithmetic (AMX) even as
a three-term bf16 split (no faster than fp32 once exact enough), NNPACK (2-3x slower).

Example:
    >>> import numpy as np
    >>> f = np.ones((1, 2, 3, 4), np.float32)  # (pair member, H, W, C): identical features
    >>> float(_layer_distance(np.concatenate([f, f]), np.ones(4)))
    0.0
"""

from __future__ import annotations

import numpy as np
from numba import njit

EPS = 1e-10
"""``lpips.normalize_tensor``'s epsilon: ``x / (sqrt(sum x^2) + eps)``."""


# Reassociation lets the channel sums vectorise (3-4x faster than a strict left-to-right sum; values
# move by about 1e-15 relative). "contract" is left out on purpose: fusing ``a * r0 - b * r1`` into an
# FMA would round its two products differently, and identical frames would no longer give exactly 0.
@njit(cache=True, fastmath={"reassoc", "nsz", "arcp", "nnan", "ninf", "afn"})
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


_FUSED: "list[bool]" = [True]


def _conv_relu(x, weight, bias, padding: int, stride: int = 1):
    """``relu(conv2d(x))`` with the ReLU as oneDNN's post-op (one pass less over the output, the same
    values: 7-10 ms per 1080p convolution); torch's two calls where that operator is missing."""
    import torch
    import torch.nn.functional as F

    if _FUSED[0]:
        try:
            return torch.ops.mkldnn._convolution_pointwise(x, weight, bias, [padding] * 2, [stride] * 2, [1, 1], 1,
                                                           "relu", [], "")
        except (AttributeError, RuntimeError, NotImplementedError):  # a torch without the fused operator
            _FUSED[0] = False
    return F.conv2d(x, weight, bias, stride=stride, padding=padding).relu_()


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
        import torch

        if not is_alex_v01(model):
            raise ValueError("the CPU path computes lpips.LPIPS(net='alex', version='0.1') only")
        convs = [m for m in model.net.modules() if isinstance(m, torch.nn.Conv2d)]
        if [tuple(c.weight.shape[:2]) for c in convs] != [(64, 3), (192, 64), (384, 192), (256, 384), (256, 256)]:
            raise ValueError("not the AlexNet feature stack of lpips 0.1")
        with torch.no_grad():
            shift = model.scaling_layer.shift.double().reshape(3)
            scale = model.scaling_layer.scale.double().reshape(3)
            gain, offset = 1.0 / (127.5 * scale), -(1.0 + shift) / scale  # z = gain * u + offset
            w1 = convs[0].weight.double()
            self.conv1 = ((w1 * gain.view(1, 3, 1, 1)).float().contiguous(),
                          (convs[0].bias.double() + (w1 * offset.view(1, 3, 1, 1)).sum((1, 2, 3))).float())
            self.border = (127.5 * (1.0 + shift)).float().view(1, 3, 1, 1)  # u where z = 0
            self.convs = [(c.weight.detach().clone(), c.bias.detach().clone()) for c in convs[1:]]
            self.heads = []
            for k in range(5):
                head = [m for m in getattr(model, f"lin{k}").modules() if isinstance(m, torch.nn.Conv2d)]
                self.heads.append(head[0].weight.detach().double().reshape(-1).numpy().copy())

    def features(self, frames: "np.ndarray") -> list:
        """The five ReLU outputs (channels-last float32) of ``frames``, uint8 ``(n, H, W, 3)``."""
        import torch
        import torch.nn.functional as F

        n, height, width, _ = frames.shape
        x = torch.empty((n, 3, height + 4, width + 4), memory_format=torch.channels_last)
        x[:, :, :2], x[:, :, -2:] = self.border, self.border
        x[:, :, :, :2], x[:, :, :, -2:] = self.border, self.border
        x[:, :, 2:-2, 2:-2] = torch.from_numpy(frames).permute(0, 3, 1, 2)
        y = _conv_relu(x, *self.conv1, padding=0, stride=4)
        out = [y]
        y = _conv_relu(F.max_pool2d(y, 3, 2), *self.convs[0], padding=2)
        out.append(y)
        y = _conv_relu(F.max_pool2d(y, 3, 2), *self.convs[1], padding=1)
        out.append(y)
        for weight, bias in self.convs[2:]:
            y = _conv_relu(y, weight, bias, padding=1)
            out.append(y)
        return out

    def __call__(self, pred: np.ndarray, ref: np.ndarray) -> np.ndarray:
        """Per-frame LPIPS of uint8 ``(n, H, W, 3)`` frames, one pair per forward."""
        import torch

        out = np.empty(len(pred))
        with torch.inference_mode():
            for i in range(len(pred)):
                features = self.features(np.stack([pred[i], ref[i]]))
                # a channels-last tensor's NHWC view is contiguous: the kernel reads it in place
                out[i] = sum(_layer_distance(f.permute(0, 2, 3, 1).numpy(), w) for f, w in zip(features, self.heads))
        return out

"""Fast PSNR/SSIM kernels (numba and torch) against scikit-image, scipy and OpenCV re-derivations.

The definition (issue 13): scikit-image's ``structural_similarity`` with the parameters below and
``peak_signal_noise_ratio(data_range=255)``; values must agree within 1e-6 relative. Both paths
are float64 throughout, so the assertions use 1e-9 (far inside the requirement, far above rounding).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter
from skimage.metrics import peak_signal_noise_ratio, structural_similarity

from hug_vis_dataset.metrics import _frame_kernels as F

SKIMAGE_SSIM = dict(data_range=255, channel_axis=-1, gaussian_weights=True, sigma=1.5,
                    use_sample_covariance=False, K1=0.01, K2=0.03)
RTOL = 1e-9


def _skimage_ssim(pred: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return np.array([structural_similarity(r, p, **SKIMAGE_SSIM) for p, r in zip(pred, ref)])


def _skimage_psnr(pred: np.ndarray, ref: np.ndarray, cap: float = 100.0) -> np.ndarray:
    out = []
    for p, r in zip(pred, ref):
        out.append(cap if np.array_equal(p, r) else min(cap, peak_signal_noise_ratio(r, p, data_range=255)))
    return np.array(out)


# ----------------------------------------------------------------------------- inputs
def _noise(shape, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (2, *shape, 3), dtype=np.uint8), rng.integers(0, 256, (2, *shape, 3), dtype=np.uint8)


def _gradients(shape, seed):
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    ref = np.stack([np.stack([xx * 255 / (w - 1), yy * 255 / (h - 1), (xx + yy) * 255 / (h + w - 2)], -1),
                    np.stack([255 - xx * 255 / (w - 1), np.full_like(xx, 90.0), yy * 255 / (h - 1)], -1)])
    pred = ref * 0.9 + 12 + np.random.default_rng(seed).normal(0, 2, ref.shape)
    return np.clip(np.round(pred), 0, 255).astype(np.uint8), np.round(ref).astype(np.uint8)


def _photos(shape, seed):
    from skimage import data

    h, w = shape
    ref = np.stack([data.astronaut()[100:100 + h, 100:100 + w], data.chelsea()[20:20 + h, 40:40 + w],
                    data.coffee()[50:50 + h, 60:60 + w]])
    rng = np.random.default_rng(seed)
    blurred = np.stack([gaussian_filter(f.astype(np.float64), (1.2, 1.2, 0)) for f in ref])
    pred = np.clip(blurred + rng.normal(0, 6, ref.shape), 0, 255).astype(np.uint8)
    return pred, ref


def _constant(shape, seed):
    ref = np.stack([np.full((*shape, 3), v, np.uint8) for v in (0, 128, 255)])
    pred = np.stack([np.full((*shape, 3), v, np.uint8) for v in (255, 120, 255)])
    return pred, ref


def _identical(shape, seed):
    pred, _ = _photos(shape, seed)
    return pred, pred.copy()


INPUTS = {"noise": _noise, "gradients": _gradients, "photos": _photos, "constant": _constant,
          "identical": _identical}
# Tiny frames (the 11x11 window fits once), odd sizes, and one frame with several row blocks
# (BLOCK_ROWS) and column tiles (TILE_ELEMENTS), so the seams between them are covered.
SIZES = [(11, 11), (11, 12), (13, 17), (37, 50), (150, 380)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_ssim_and_psnr_equal_skimage(kind, size):
    pred, ref = INPUTS[kind](size, seed=sum(size))
    np.testing.assert_allclose(F.ssim_batch(pred, ref), _skimage_ssim(pred, ref), rtol=RTOL, atol=0)
    np.testing.assert_allclose(F.psnr_batch(pred, ref), _skimage_psnr(pred, ref), rtol=RTOL, atol=0)


def test_large_frame_spans_several_blocks_and_tiles():
    # Guards the seam coverage of SIZES[-1] if the block or tile constants change.
    h, w = SIZES[-1]
    assert h - 10 > 2 * F.BLOCK_ROWS and 3 * w - 30 > F.TILE_ELEMENTS


def test_ssim_hand_values():
    # Flat frames: sigma = cov = 0, so SSIM = (2 mx my + C1) / (mx^2 + my^2 + C1) exactly.
    c1 = (0.01 * 255) ** 2
    ref = np.full((1, 15, 20, 3), 200, np.uint8)
    pred = np.full_like(ref, 50)
    assert F.ssim_batch(pred, ref)[0] == pytest.approx((2 * 200 * 50 + c1) / (200 ** 2 + 50 ** 2 + c1), rel=1e-12)
    assert F.ssim_batch(ref, ref)[0] == pytest.approx(1.0, rel=1e-12)
    # Per channel, then averaged: one channel differs, the other two are identical (SSIM 1).
    pred2 = ref.copy()
    pred2[..., 1] = 50
    assert F.ssim_batch(pred2, ref)[0] == pytest.approx((2 + (2 * 200 * 50 + c1) / (200 ** 2 + 50 ** 2 + c1)) / 3,
                                                        rel=1e-12)


def test_psnr_hand_values_and_cap():
    ref = np.zeros((3, 12, 12, 3), np.uint8)
    pred = ref.copy()
    pred[1, 0, 0, 0] = 1  # MSE = 1 / 432
    pred[2] = 255  # MSE = 255^2: 0 dB
    out = F.psnr_batch(pred, ref)
    assert out[0] == 100.0
    assert out[1] == pytest.approx(10 * np.log10(255 ** 2 * 432), rel=1e-12)
    assert out[2] == 0.0
    # The cap bounds every frame, not only identical ones.
    assert F.psnr_batch(pred, ref, cap_db=40.0).tolist() == [40.0, 40.0, 0.0]


def test_interior_does_not_depend_on_border_mode():
    """The claim the kernels rest on: after cropping 5 px, every border mode gives the same SSIM.

    Re-derived per channel with scipy's gaussian_filter in each of its modes and with OpenCV's
    separable filter (whose BORDER_REFLECT_101 / BORDER_REPLICATE differ from scipy's 'reflect').
    """
    import cv2

    pred, ref = _photos((40, 57), seed=3)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    g = np.exp(-0.5 * np.arange(-5, 6) ** 2 / 1.5 ** 2)
    g /= g.sum()

    def ssim_with(filt):
        vals = []
        for p, r in zip(pred, ref):
            per_channel = []
            for ch in range(3):
                x, y = r[..., ch].astype(np.float64), p[..., ch].astype(np.float64)
                mx, my = filt(x), filt(y)
                vx, vy, vxy = filt(x * x) - mx * mx, filt(y * y) - my * my, filt(x * y) - mx * my
                s = ((2 * mx * my + c1) * (2 * vxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
                per_channel.append(s[5:-5, 5:-5].mean())
            vals.append(np.mean(per_channel))
        return np.array(vals)

    filters = {f"scipy-{mode}": (lambda z, mode=mode: gaussian_filter(z, 1.5, truncate=3.5, mode=mode))
               for mode in ("reflect", "mirror", "nearest", "wrap", "constant")}
    for name, border in (("reflect101", cv2.BORDER_REFLECT_101), ("replicate", cv2.BORDER_REPLICATE),
                         ("constant", cv2.BORDER_CONSTANT)):
        filters[f"cv2-{name}"] = lambda z, border=border: cv2.sepFilter2D(z, cv2.CV_64F, g, g, borderType=border)
    ours = F.ssim_batch(pred, ref)
    full_maps_differ = False
    for name, filt in filters.items():
        np.testing.assert_allclose(ssim_with(filt), ours, rtol=RTOL, atol=0, err_msg=name)
        # The modes really differ before cropping (else this test would prove nothing).
        full_maps_differ |= not np.allclose(filt(ref[0, ..., 0].astype(np.float64)),
                                            gaussian_filter(ref[0, ..., 0].astype(np.float64), 1.5, truncate=3.5,
                                                            mode="reflect"), rtol=1e-6)
    assert full_maps_differ


def test_gaussian_weights_are_scipys():
    impulse = np.zeros(21)
    impulse[10] = 1.0
    kernel = gaussian_filter(impulse, 1.5, truncate=3.5, mode="constant")[5:16]
    w = F.gaussian_half_weights()
    np.testing.assert_allclose(np.concatenate([w[:0:-1], w]), kernel, rtol=1e-14, atol=0)
    assert F.SSIM_WINDOW == 11


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("fn", [F.ssim_batch, F.ssim_batch_torch], ids=["numba", "torch"])
def test_ssim_rejects_frames_smaller_than_window(fn):
    x = np.zeros((1, 10, 40, 3), np.uint8)
    with pytest.raises(F.FrameInputError, match="at least 11x11"):
        fn(x, x)
    with pytest.raises(ValueError):  # skimage refuses them too
        structural_similarity(x[0], x[0], **SKIMAGE_SSIM)


@pytest.mark.parametrize("fn", [F.ssim_batch, F.psnr_batch, F.ssim_batch_torch, F.psnr_batch_torch],
                         ids=["ssim", "psnr", "ssim-torch", "psnr-torch"])
def test_bad_inputs_raise_one_clear_error(fn):
    good = np.zeros((2, 16, 16, 3), np.uint8)
    with pytest.raises(F.FrameInputError, match="uint8"):
        fn(good.astype(np.float32), good)
    with pytest.raises(F.FrameInputError, match="uint8"):
        fn(good, good.astype(np.uint16))
    with pytest.raises(F.FrameInputError, match="differ in shape"):
        fn(good, good[:, :15])
    with pytest.raises(F.FrameInputError, match="differ in shape"):
        fn(good, good[:1])
    with pytest.raises(F.FrameInputError, match=r"\(N, H, W, 3\)"):
        fn(good[0], good[0])
    with pytest.raises(F.FrameInputError, match=r"\(N, H, W, 3\)"):
        fn(np.zeros((2, 16, 16, 4), np.uint8), np.zeros((2, 16, 16, 4), np.uint8))
    with pytest.raises(F.FrameInputError, match="empty"):
        fn(good[:0], good[:0])


# ----------------------------------------------------------------------------- batching
def _clip(n=16, size=(80, 96), seed=7):
    pred, ref = _photos(size, seed)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(ref), n)
    shifts = rng.integers(-20, 20, n)
    ref = np.stack([np.roll(ref[i], s, axis=1) for i, s in zip(idx, shifts)])
    pred = np.stack([np.roll(pred[i], s, axis=1) for i, s in zip(idx, shifts)])
    pred[3] = ref[3]  # one identical frame in the clip
    return pred, ref


def test_values_do_not_depend_on_batching_or_threads():
    import numba

    pred, ref = _clip()
    whole_s, whole_p = F.ssim_batch(pred, ref), F.psnr_batch(pred, ref)
    single_s = np.concatenate([F.ssim_batch(pred[i:i + 1], ref[i:i + 1]) for i in range(len(ref))])
    single_p = np.concatenate([F.psnr_batch(pred[i:i + 1], ref[i:i + 1]) for i in range(len(ref))])
    assert np.array_equal(whole_s, single_s) and np.array_equal(whole_p, single_p)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        assert np.array_equal(F.ssim_batch(pred, ref), whole_s)
    finally:
        numba.set_num_threads(threads)
    # Row order of the batch: each frame keeps its value.
    order = np.random.default_rng(0).permutation(len(ref))
    assert np.array_equal(F.ssim_batch(pred[order], ref[order]), whole_s[order])
    np.testing.assert_allclose(whole_s, _skimage_ssim(pred, ref), rtol=RTOL, atol=0)


# ----------------------------------------------------------------------------- torch
@pytest.mark.parametrize("size", [(11, 11), (13, 17), (150, 380)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_torch_path_equals_skimage_on_cpu(kind, size):
    pred, ref = INPUTS[kind](size, seed=sum(size))
    np.testing.assert_allclose(F.ssim_batch_torch(pred, ref, device="cpu"), _skimage_ssim(pred, ref),
                               rtol=RTOL, atol=0)
    # Exact integer sums on both paths: the same doubles.
    assert np.array_equal(F.psnr_batch_torch(pred, ref, device="cpu"), F.psnr_batch(pred, ref))


def test_torch_path_batching_and_tensor_inputs():
    import torch

    pred, ref = _clip()
    whole = F.ssim_batch_torch(pred, ref, chunk_frames=16)
    single = F.ssim_batch_torch(pred, ref, chunk_frames=1)
    np.testing.assert_allclose(single, whole, rtol=1e-14, atol=0)
    np.testing.assert_allclose(whole, F.ssim_batch(pred, ref), rtol=RTOL, atol=0)
    tensors = F.ssim_batch_torch(torch.from_numpy(pred), torch.from_numpy(ref), device=torch.device("cpu"))
    np.testing.assert_allclose(tensors, whole, rtol=1e-14, atol=0)
    assert np.array_equal(F.psnr_batch_torch(torch.from_numpy(pred), torch.from_numpy(ref), chunk_frames=3),
                          F.psnr_batch(pred, ref))
    with pytest.raises(F.FrameInputError, match="both"):
        F.ssim_batch_torch(torch.from_numpy(pred), ref)


def test_torch_tensor_inputs_are_checked_like_arrays():
    import torch

    good = torch.zeros((2, 16, 16, 3), dtype=torch.uint8)
    with pytest.raises(F.FrameInputError, match="uint8"):
        F.ssim_batch_torch(good.float(), good)
    with pytest.raises(F.FrameInputError, match="differ in shape"):
        F.psnr_batch_torch(good, good[:, :, :12])
    with pytest.raises(F.FrameInputError, match="at least 11x11"):
        F.ssim_batch_torch(good[:, :10], good[:, :10])

"""Winograd convolutions (models/winograd.py) and the LPIPS CPU path built on them (models/lpips_cpu.py).

References: exact rational arithmetic for the transforms, torch's float64 ``conv2d`` for the layers,
``F.max_pool2d`` for the pools and the ``lpips`` package's own functions for the input scaling.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

from hug_vis_dataset.models import winograd as W  # noqa: E402


def _correlate(d, g):
    return [sum(g[k] * d[i + k] for k in range(len(g))) for i in range(len(d) - len(g) + 1)]


@pytest.mark.parametrize("m, r", sorted(W.POINTS))
def test_transforms_compute_the_correlation_exactly(m, r):
    """A^T [(G g) * (B^T d)] is the 1-D correlation, exactly in rationals, for inputs including
    zeros, negatives and fractions; and its 2-D nesting is the 2-D correlation."""
    a_t, g_m, b_t = W.cook_toom_exact(m, r, W.POINTS[(m, r)])
    n = m + r - 1
    rng = np.random.default_rng(m * 10 + r)

    def apply(mat, vec):
        return [sum(row[k] * vec[k] for k in range(len(vec))) for row in mat]

    cases = [[Fraction(int(v)) for v in rng.integers(-9, 10, n)] for _ in range(5)]
    cases += [[Fraction(0)] * n, [Fraction(1, 3)] * n, [Fraction(k * k, 7) for k in range(n)]]
    for d in cases:
        g = [Fraction(int(v), 5) for v in rng.integers(-9, 10, r)]
        winograd = apply(a_t, [x * y for x, y in zip(apply(g_m, g), apply(b_t, d))])
        assert winograd == _correlate(d, g)
    # 2-D: Y = A^T [(G w G^T) * (B^T D B)] A
    d2 = rng.integers(-5, 6, (n, n)).astype(object)
    w2 = rng.integers(-5, 6, (r, r)).astype(object)
    at, gm, bt = (np.array(x, dtype=object) for x in (a_t, g_m, b_t))
    y = at @ ((gm @ w2 @ gm.T) * (bt @ d2 @ bt.T)) @ at.T
    expected = [[sum(w2[a, b] * d2[i + a, j + b] for a in range(r) for b in range(r)) for j in range(m)]
                for i in range(m)]
    assert y.tolist() == expected


def test_cook_toom_refuses_bad_points():
    with pytest.raises(ValueError, match="distinct"):
        W.cook_toom_exact(4, 3, (0, 1, 1, 2, -2))
    with pytest.raises(ValueError, match="needs 3 distinct"):
        W.cook_toom_exact(2, 3, (0, 1, -1, 2))


def test_generated_kernels_file_is_current():
    """``_winograd_kernels.py`` is what the generator writes (``python -m hug_vis_dataset.models.winograd``)."""
    assert W.KERNELS_FILE.read_text(encoding="utf-8") == W.kernels_source()


def _conv_case(in_ch, out_ch, r, padding, height, width, images=2, seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.relu(torch.randn(images, in_ch, height, width, generator=gen, dtype=torch.float64))
    w = torch.randn(out_ch, in_ch, r, r, generator=gen, dtype=torch.float64) / (in_ch * r * r) ** 0.5
    b = torch.randn(out_ch, generator=gen, dtype=torch.float64) * 0.1
    return x, w, b


def _winograd(conv, x):
    images, channels, height, width = x.shape
    buf = conv.padded_input(images, height, width, channels)
    p = conv.padding
    buf[:, p:p + height, p:p + width] = x.permute(0, 2, 3, 1).numpy()
    out_h, out_w, *_ = conv.geometry(height, width)
    out = np.full((images, out_h, out_w, conv.out_channels), np.nan, np.float32)
    conv(buf, height, width, out)
    return out


@pytest.mark.parametrize("in_ch, out_ch, r, padding, height, width", [
    (384, 256, 3, 1, 66, 119),  # conv4 at 1080p
    (64, 192, 5, 2, 33, 47),  # conv2's kernel, odd sizes
    (48, 64, 3, 0, 19, 23),  # conv1 as phases (no padding)
    (5, 7, 3, 1, 1, 1),  # one output, mostly padding
    (3, 4, 5, 2, 2, 9),  # smaller than one tile
    (17, 9, 3, 1, 4, 8),  # an exact number of tiles
])
def test_winograd_equals_direct_convolution(in_ch, out_ch, r, padding, height, width):
    """relu(conv2d) within 1e-5 of the layer's largest value everywhere (the LPIPS feature bound) and
    1e-6 in RMS, against torch's float64 convolution; every output position written."""
    x, w, b = _conv_case(in_ch, out_ch, r, padding, height, width)
    ref = F.conv2d(x, w, b, padding=padding).relu().permute(0, 2, 3, 1).numpy()
    ours = _winograd(W.WinogradConv2d(w, b, padding=padding), x)
    assert ours.shape == ref.shape and np.isfinite(ours).all()
    scale = np.abs(ref).max()
    err = np.abs(ours - ref)
    assert err.max() <= 1e-5 * scale
    assert np.sqrt((err ** 2).mean()) <= 1e-6 * scale


def test_winograd_values_do_not_depend_on_blocks_threads_or_inference_mode():
    """Each output comes from its own tile: blocks of 1, 2, 3 and all tile rows by 1, 3 and all tile
    columns, 1 and 2 BLAS threads, in and out of torch's inference mode, give the same bits; two
    identical images give identical outputs."""
    x, w, b = _conv_case(32, 24, 3, 1, 21, 30, images=1, seed=3)
    x = torch.cat([x, x])
    outs = []
    for band, columns, nthreads, inference in itertools.product((1, 2, 3, 100), (1, 3, None), (1, 2), (False, True)):
        with W.blas_threads(nthreads), torch.inference_mode(inference):
            outs.append(_winograd(W.WinogradConv2d(w, b, padding=1, band=band, columns=columns), x))
    for out in outs[1:]:
        assert np.array_equal(out, outs[0])
    assert np.array_equal(outs[0][0], outs[0][1])


def test_winograd_refuses_what_it_cannot_compute():
    with pytest.raises(ValueError, match="7x7"):
        W.WinogradConv2d(torch.zeros(2, 2, 7, 7), torch.zeros(2), padding=3)
    for band, columns in ((0, None), (1, 0)):
        with pytest.raises(ValueError, match="at least one tile row and column"):
            W.WinogradConv2d(torch.zeros(2, 3, 3, 3), torch.zeros(2), padding=0, band=band, columns=columns)
    conv = W.WinogradConv2d(torch.zeros(2, 3, 3, 3), torch.zeros(2), padding=0)
    with pytest.raises(ValueError, match="smaller than the 3x3 kernel"):
        conv.geometry(2, 5)
    with pytest.raises(ValueError, match="padded"):  # a buffer of the wrong size is refused, not read past
        conv(np.zeros((1, 5, 5, 3), np.float32), 5, 5, np.zeros((1, 3, 3, 2), np.float32))
    with pytest.raises(ValueError, match="output buffer"):  # nor written past
        conv(conv.padded_input(1, 5, 5, 3), 5, 5, np.zeros((1, 2, 3, 2), np.float32))


# ----------------------------------------------------------------------------- the LPIPS pieces
def test_max_pool_into_equals_torch():
    from hug_vis_dataset.models.lpips_cpu import _max_pool_into

    rng = np.random.default_rng(5)
    for height, width, channels in ((7, 9, 3), (134, 239, 16), (3, 3, 5), (8, 4, 1)):
        y = rng.normal(size=(2, height, width, channels)).astype(np.float32)
        ref = F.max_pool2d(torch.from_numpy(y).permute(0, 3, 1, 2), 3, 2).permute(0, 2, 3, 1).numpy()
        out = np.full((2, ref.shape[1] + 3, ref.shape[2] + 3, channels), 7.0, np.float32)
        _max_pool_into(y, out, 1, 2)
        assert np.array_equal(out[:, 1:1 + ref.shape[1], 2:2 + ref.shape[2]], ref)
        out[:, 1:1 + ref.shape[1], 2:2 + ref.shape[2]] = 7.0
        assert np.all(out == 7.0)  # nothing written outside the window


@pytest.fixture(scope="module")
def alex_lpips(tmp_path_factory):
    import torchvision

    from hug_vis_dataset.models.lpips import load_lpips

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("alex") / "alexnet.pth"
    torch.save(torchvision.models.alexnet(weights=None).state_dict(), path)
    return load_lpips(alexnet_path=str(path), verify=False)


def test_input_table_is_the_packages_scaling(alex_lpips):
    """Every uint8 value of every channel maps to what ``scaling_layer(im2tensor(u))`` gives, bit for bit."""
    import lpips

    from hug_vis_dataset.models.lpips_cpu import AlexLPIPS

    table = AlexLPIPS(alex_lpips).table
    rng = np.random.default_rng(1)
    image = rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)
    image[0, :3] = [[0, 0, 0], [255, 255, 255], [128, 127, 1]]
    with torch.no_grad():
        z = alex_lpips.scaling_layer(lpips.im2tensor(image))[0].permute(1, 2, 0).numpy()
    assert np.array_equal(table[image, np.arange(3)], z)


def test_conv1_as_stride_phases_equals_the_strided_convolution(alex_lpips):
    """conv1 (11x11, stride 4, padding 2) through the phase split and Winograd equals torch's float64
    strided convolution of the scaled frames, on sizes whose padded extent is not a multiple of 4."""
    import lpips

    from hug_vis_dataset.models.lpips_cpu import AlexLPIPS

    ours = AlexLPIPS(alex_lpips)
    conv1 = [m for m in alex_lpips.net.modules() if isinstance(m, torch.nn.Conv2d)][0]
    rng = np.random.default_rng(2)
    for height, width in ((31, 33), (45, 67), (50, 61)):
        frames = rng.integers(0, 256, (2, height, width, 3), dtype=np.uint8)
        with torch.no_grad():
            z = torch.cat([alex_lpips.scaling_layer(lpips.im2tensor(f)) for f in frames]).double()
            ref = F.conv2d(z, conv1.weight.double(), conv1.bias.double(), stride=4, padding=2).relu()
        mine = ours.features(frames)[0].double()
        assert mine.shape == ref.shape
        assert float((mine - ref).abs().max()) <= 1e-5 * float(ref.abs().max())


def test_lpips_refuses_frames_too_small_for_alexnet(alex_lpips):
    from hug_vis_dataset.models.lpips_cpu import AlexLPIPS

    frames = np.zeros((2, 30, 40, 3), np.uint8)
    with pytest.raises(ValueError, match="too small"):
        AlexLPIPS(alex_lpips)(frames[:1], frames[1:])


def test_lpips_cpu_values_do_not_depend_on_threads_or_frame_order(alex_lpips):
    """1 and 2 torch threads and a different frame order give the same bits (each pair is its own
    forward; the work buffers are reused between frames of one size and remade for another)."""
    from hug_vis_dataset.models.lpips_cpu import AlexLPIPS

    rng = np.random.default_rng(4)
    a = rng.integers(0, 256, (3, 48, 80, 3), dtype=np.uint8)
    b = np.clip(a + rng.normal(0, 20, a.shape), 0, 255).astype(np.uint8)
    c = rng.integers(0, 256, (1, 37, 53, 3), dtype=np.uint8)
    fast = AlexLPIPS(alex_lpips)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = fast(a, b)
        other_size = fast(c, c[:, ::-1].copy())
        torch.set_num_threads(2)
        two = fast(a[::-1].copy(), b[::-1].copy())[::-1]
    finally:
        torch.set_num_threads(threads)
    assert np.array_equal(one, two)
    assert np.array_equal(other_size, AlexLPIPS(alex_lpips)(c, c[:, ::-1].copy()))

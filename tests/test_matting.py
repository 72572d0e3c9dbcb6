"""Matting metrics against hand-worked values and an independent RVM-style re-derivation."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference_matting as R  # noqa: E402

from hug_vis_dataset.metrics import matting as M  # noqa: E402
from hug_vis_dataset import catalog  # noqa: E402

NAMES = ("mad", "mse", "grad", "conn", "dtssd")


# ----------------------------------------------------------------------------- inputs
def soft_blobs(T, H, W, seed, blobs=3):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float64)
    centres = rng.uniform(0, 1, (blobs, 2)) * (W, H)
    radii = rng.uniform(0.1, 0.35, blobs) * min(H, W)
    levels = rng.uniform(0.3, 1.0, blobs)
    vel = rng.normal(0, 1.5, (blobs, 2))
    out = np.zeros((T, H, W))
    for k in range(T):
        for (cx, cy), r, lv, (vx, vy) in zip(centres, radii, levels, vel):
            d = np.hypot(xx - cx - vx * k, yy - cy - vy * k) - r
            out[k] = np.maximum(out[k], lv * np.clip(0.5 - d / 3.0, 0, 1))
    return out


def to_u8(a):
    return np.round(np.clip(a, 0, 1) * 255).astype(np.uint8)


def cases():
    rng = np.random.default_rng(7)
    ref = soft_blobs(4, 23, 31, 1)
    pred = np.clip(ref + rng.normal(0, 0.08, ref.shape) * (ref > 0.05), 0, 1)
    yield "soft_blobs", to_u8(pred), to_u8(ref)
    yield "uniform_noise", rng.integers(0, 256, (3, 17, 19), dtype=np.uint8), rng.integers(0, 256, (3, 17, 19), dtype=np.uint8)
    # Sparse speckle: many small components, frequent ties of the largest size.
    sp = (rng.random((3, 20, 20)) < 0.35) * rng.integers(30, 256, (3, 20, 20))
    st = (rng.random((3, 20, 20)) < 0.35) * rng.integers(30, 256, (3, 20, 20))
    yield "speckle", sp.astype(np.uint8), st.astype(np.uint8)
    yield "all_zero", np.zeros((2, 9, 11), np.uint8), np.zeros((2, 9, 11), np.uint8)
    yield "all_one", np.full((2, 9, 11), 255, np.uint8), np.full((2, 9, 11), 255, np.uint8)
    yield "zero_vs_one", np.zeros((2, 9, 11), np.uint8), np.full((2, 9, 11), 255, np.uint8)
    yield "single_frame", to_u8(soft_blobs(1, 15, 16, 3)), to_u8(soft_blobs(1, 15, 16, 4))
    lines_t = np.zeros((2, 12, 13), np.uint8)
    lines_t[:, 3, :] = 255
    lines_t[:, :, 6] = 200
    lines_p = np.zeros_like(lines_t)
    lines_p[:, 3, 1:] = 240
    lines_p[1, :, 7] = 180
    yield "one_pixel_lines", lines_p, lines_t
    # Nothing reaches 0.1 in the intersection: every pixel rounds down to 0.
    low = np.zeros((2, 8, 8), np.uint8)
    low[:, 2:6, 2:6] = 20
    yield "below_first_threshold", low, np.full((2, 8, 8), 230, np.uint8)
    # The chain of largest components breaks: a big dim blob, a small bright one.
    chain = np.zeros((2, 10, 12), np.uint8)
    chain[:, 1:6, 1:6] = 80
    chain[:, 7:9, 8:10] = 255
    yield "chain_break", chain, np.maximum(chain, 60)
    # Larger frames with a noisy interior: many runs and unions in the Conn sweep.
    big = soft_blobs(2, 90, 160, 8, blobs=4)
    noisy = np.clip(big + rng.normal(0, 0.06, big.shape) * (big > 0.02), 0, 1)
    noisy[:, 5:9, 10:30] = 0.7
    yield "medium_noisy", to_u8(noisy), to_u8(big)
    fp = soft_blobs(3, 14, 18, 5).astype(np.float32)
    ft = soft_blobs(3, 14, 18, 6).astype(np.float64)
    yield "float_inputs", fp, ft
    # Blocks of equal value: long runs of one Conn level touching runs of other levels left, right,
    # above and below with partial overlaps; Grad sees flat tiles next to active ones.
    bp = np.repeat(np.repeat(rng.choice([0, 30, 90, 160, 255], (3, 9, 11)), 2, axis=1), 7, axis=2)[:, :17, :75]
    bt = np.repeat(np.repeat(rng.choice([0, 60, 128, 200, 255], (3, 6, 9)), 3, axis=1), 9, axis=2)[:, :17, :75]
    yield "blocks", bp.astype(np.uint8), bt.astype(np.uint8)
    yield "figure", *figure_mattes()
    yield "single_row", rng.integers(0, 256, (2, 1, 13), dtype=np.uint8), rng.integers(0, 256, (2, 1, 13), dtype=np.uint8)
    column = np.zeros((2, 9, 1), np.uint8)
    column[:, 2:7] = 255
    yield "single_column", np.roll(column, 1, axis=1), column


def figure_mattes():
    """The synthetic HUG-VIS figure (mostly exactly 0 or 1, soft edges, thin fingers) and a
    simulated matting system's degraded copy, 3 frames at 72x128."""
    from hug_vis_dataset.synth.figure import appearance_for_actor, render_pose, rest_pose
    from hug_vis_dataset.synth.systems import degrade_alpha

    pose = rest_pose()
    ref = []
    for k in range(3):
        pose = pose.copy()
        pose[6] += 0.4 * k  # raise one upper arm
        ref.append(np.round(render_pose(pose, appearance_for_actor(2), 128, 72)[0] * 255))
    ref = np.stack(ref).astype(np.uint8)
    return degrade_alpha(ref, 0.45, np.random.default_rng(4), 72 / 180), ref


CASES = list(cases())


# ----------------------------------------------------------------------------- hand-worked
def test_kernel_half_size_and_norm():
    sigma, eps = 1.4, 1e-2
    half = math.ceil(sigma * math.sqrt(-2 * math.log(math.sqrt(2 * math.pi) * sigma * eps)))
    assert half == 4
    fx, fy = M.gauss_filter()
    assert fx.shape == (9, 9)
    assert np.sum(fx ** 2) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_array_equal(fy, fx.T)
    np.testing.assert_allclose(fx, R.gauss_kernels()[0], rtol=1e-12, atol=1e-15)
    # d/dx of a horizontal ramp is positive along x with this sign convention? G(i) dG(j) with dG(x) = -x G / s^2.
    assert fx[4, 3] > 0 > fx[4, 5]


def test_mad_mse_dtssd_by_hand():
    ref = np.array([[[0, 255, 0], [0, 255, 0], [0, 0, 0]],
                    [[0, 255, 255], [0, 255, 0], [0, 0, 0]]], np.uint8)
    pred = np.array([[[0, 255, 0], [0, 0, 0], [0, 0, 0]],
                     [[0, 255, 255], [0, 255, 0], [51, 0, 0]]], np.uint8)
    # frame 0: one pixel off by 1 -> MAD 1/9, MSE 1/9; frame 1: one pixel off by 0.2.
    np.testing.assert_allclose(M.mad(pred, ref), [1000 / 9, 200 / 9], rtol=1e-12)
    np.testing.assert_allclose(M.mse(pred, ref), [1000 / 9, 40 / 9], rtol=1e-12)
    # dtSSD frame 1: (p1 - p0) - (t1 - t0) = +1 at (1, 1), +0.2 at (2, 0); sqrt(1.04 / 9) x 100.
    np.testing.assert_allclose(M.dtssd(pred, ref), [100 * math.sqrt(1.04 / 9)], rtol=1e-12)


def test_conn_by_hand_including_tie():
    # min(p, t) = [1, 0, 191/255]: pixels 0 and 2 are equal-size components for theta <= 0.7; the
    # reference (cv2 label order) keeps the first in raster order, so pixel 2 rounds down to 0:
    # phi_t = 1 - 1 = 0, phi_p = 1 - 191/255 -> 64/255. (Keeping pixel 2 instead would round it down
    # to 0.7: phi_t = 0.7, phi_p = 1 (d = 0.049 < 0.15), and pixel 0 to 0: total 0.3.)
    t = np.array([[[255, 0, 255]]], np.uint8)
    p = np.array([[[255, 0, 191]]], np.uint8)
    assert M.conn(p, t)[0] == pytest.approx(64 / 255 / 1000, rel=1e-6)
    assert R.ref_conn(R.to_alpha(p[0]), R.to_alpha(t[0])) == pytest.approx(64 / 255 / 1000, rel=1e-6)
    # All of t = 1, p = 0: nothing passes any threshold, round-down 0, |phi_t - phi_p| = 1 per pixel.
    assert M.conn(np.zeros((1, 3, 3)), np.ones((1, 3, 3)))[0] == pytest.approx(9 / 1000)


def test_grad_zero_for_constant_and_identical():
    a = to_u8(soft_blobs(2, 16, 16, 9))
    np.testing.assert_array_equal(M.grad(a, a), [0.0, 0.0])
    # A constant frame normalises to 0 (cv2 NORM_MINMAX with zero range) whatever its value.
    assert M.grad(np.full((1, 8, 8), 77, np.uint8), np.full((1, 8, 8), 200, np.uint8))[0] == 0.0


def test_cv2_label_order_is_raster_order_of_first_pixel():
    """Justifies the tie rule: cv2's 4-connected labels are numbered like scipy's (first pixel order)."""
    import cv2
    from scipy import ndimage

    rng = np.random.default_rng(3)
    for _ in range(5):
        mask = (rng.random((40, 50)) < 0.45).astype(np.uint8)
        _, lab_cv = cv2.connectedComponentsWithStats(mask, connectivity=4)[:2]
        lab_sp, _ = ndimage.label(mask)
        np.testing.assert_array_equal(lab_cv, lab_sp)


# ----------------------------------------------------------------------------- vs reference
@pytest.mark.parametrize("name,pred,ref", CASES, ids=[c[0] for c in CASES])
def test_all_metrics_match_reference(name, pred, ref):
    ours = M.matting_frame_metrics(pred, ref)
    exact = R.ref_clip(pred, ref, dtype=np.float64)
    script = R.ref_clip(pred, ref, dtype=np.float32)
    for metric in NAMES:
        assert ours[metric].dtype == np.float64
        assert ours[metric].shape == exact[metric].shape, metric
        np.testing.assert_allclose(ours[metric], exact[metric], rtol=1e-6, atol=1e-12, err_msg=f"{name} {metric}")
        # The float32 script: agreement limited by its float32 sums.
        np.testing.assert_allclose(ours[metric], script[metric], rtol=1e-6, atol=1e-7, err_msg=f"{name} {metric} f32")


@pytest.mark.parametrize("name,pred,ref", CASES[:3], ids=[c[0] for c in CASES[:3]])
def test_single_metric_functions_and_unnormalised_grad(name, pred, ref):
    exact = R.ref_clip(pred, ref, dtype=np.float64, normalize=False)
    for metric in NAMES:
        if metric == "grad":
            got = M.grad(pred, ref, normalize=False)
        else:
            got = getattr(M, metric)(pred, ref)
        np.testing.assert_allclose(got, exact[metric], rtol=1e-6, atol=1e-12, err_msg=metric)


@pytest.mark.parametrize("name,pred,ref", CASES, ids=[c[0] for c in CASES])
def test_single_metric_equals_all_five_bitwise(name, pred, ref):
    """MAD/MSE/dtSSD alone take a separate serial kernel with only the requested sums: same bits."""
    together = M.matting_frame_metrics(pred, ref)
    for subset in (("mad",), ("mse",), ("dtssd",), ("mad", "dtssd"), ("mse", "conn"), ("grad",)):
        alone = M.matting_frame_metrics(pred, ref, subset)
        for metric in subset:
            np.testing.assert_array_equal(alone[metric], together[metric], err_msg=f"{subset} {metric}")


# ----------------------------------------------------------------------------- streaming
# Chunk size (1, 2, 3, 7; arrays, PNG folders, uneven chunk iterators), numba thread count and the
# seven-frame clip that spans chunks: tests/metric_tester.py (MATTING variants), bit for bit.


def test_one_frame_clip_has_no_dtssd():
    a = to_u8(soft_blobs(1, 8, 8, 2))
    out = M.score_matting_clip(a, a)
    assert out["per_frame"]["dtssd"].size == 0 and math.isnan(out["clip"]["dtssd"])


# ----------------------------------------------------------------------------- aggregation
def test_protocols_by_hand():
    clips = [np.array([1.0, 2.0, 3.0]), np.array([5.0])]
    # rvm: index means (1+5)/2 = 3, 2, 3 -> 8/3; clip: (2 + 5) / 2 = 3.5.
    assert M.aggregate(clips, "rvm") == pytest.approx(8 / 3)
    assert M.aggregate(clips, "clip") == pytest.approx(3.5)
    # dtSSD-style (frames 1..T-1) under rvm: frame 0 counts as 0 for every clip.
    dts = [np.array([4.0, 6.0]), np.array([2.0])]
    # indices: 0 -> 0, 1 -> (4 + 2) / 2 = 3, 2 -> 6  => 3
    assert M.aggregate(dts, "rvm", temporal=True) == pytest.approx(3.0)
    assert M.aggregate(dts, "clip", temporal=True) == pytest.approx((5.0 + 2.0) / 2)
    # RVM's spreadsheet cap: frame indices 0..699 only.
    long = [np.r_[np.zeros(700), np.full(300, 10.0)]]
    assert M.aggregate(long, "rvm") == pytest.approx(3.0)
    assert M.aggregate(long, "rvm", rvm_max_frames=700) == 0.0
    with pytest.raises(ValueError):
        M.aggregate([np.array([1.0]), np.array([])], "clip")
    with pytest.raises(ValueError):
        M.aggregate(clips, "frame")
    with pytest.raises(ValueError):
        M.aggregate([np.array([np.nan])], "rvm")


def test_aggregate_independent_of_clip_order():
    rng = np.random.default_rng(0)
    clips = [rng.random(rng.integers(1, 9)) for _ in range(6)]
    for protocol in ("rvm", "clip"):
        assert M.aggregate(clips, protocol) == pytest.approx(M.aggregate(clips[::-1], protocol), rel=1e-12)


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize("pred,ref,match", [
    (np.zeros((2, 4, 4), np.uint8), np.zeros((2, 4, 5), np.uint8), "shape mismatch"),
    (np.zeros((4, 4), np.uint8), np.zeros((4, 4), np.uint8), r"\(T, H, W\)"),
    (np.zeros((2, 4, 4), np.int16), np.zeros((2, 4, 4), np.int16), "dtype"),
    (np.full((1, 4, 4), 1.5), np.zeros((1, 4, 4)), r"\[0, 1\]"),
    (np.full((1, 4, 4), np.nan), np.zeros((1, 4, 4)), "NaN"),
    (np.zeros((0, 4, 4), np.uint8), np.zeros((0, 4, 4), np.uint8), "empty"),
])
def test_clear_errors(pred, ref, match):
    with pytest.raises(M.MattingInputError, match=match):
        M.matting_frame_metrics(pred, ref)


def test_streaming_errors():
    a = np.zeros((3, 4, 4), np.uint8)
    with pytest.raises(M.MattingInputError, match="frame count"):
        M.score_matting_clip(a, a[:2], chunk_frames=2)
    with pytest.raises(M.MattingInputError, match="empty"):
        M.score_matting_clip(iter([]), iter([]))
    with pytest.raises(ValueError):
        M.matting_frame_metrics(a, a, metrics=("sad",))


def test_catalog_rows_of_the_matting_metrics():
    for name in NAMES:
        spec = catalog.spec(name)
        assert spec.tasks == ("matting",) and spec.higher_is_better is False and spec.paper_table == "Table 11"
        # the library already returns RVM's scaling (MAD x1e3 ...): stored values are paper units
        assert spec.paper_scale == 1.0 and spec.protocol == catalog.RVM
    assert catalog.table_metrics("matting") == ("mad", "mse", "dtssd", "grad", "conn")


# ----------------------------------------------------------------------------- motion difficulty
def test_motion_stats_by_hand():
    a = np.zeros((3, 2, 4), np.float32)
    a[0, :, 0] = 1.0  # centroid x = 0 / 4
    a[1, :, 2] = 1.0  # x = 2 / 4
    a[2, :, 2] = 0.6  # x = 2 / 4, alpha change 0.4 on 2 of 8 pixels
    u, v = M.motion_stats(a, chunk_frames=1)
    assert u == pytest.approx(((4 / 8) + (0.4 * 2 / 8)) / 2)
    assert v == pytest.approx((0.5 + 0.0) / 2)
    # Vertical displacement is normalised by the height, and an empty mask skips its pairs.
    b = np.zeros((4, 4, 2), np.uint8)
    b[0, 0, :] = 255
    b[1, 2, :] = 255
    b[3, 3, :] = 255  # frame 2 empty: pairs (1, 2) and (2, 3) have no displacement
    u, v = M.motion_stats(b)
    assert v == pytest.approx(0.5)
    assert u == pytest.approx(np.mean([4 / 8, 2 / 8, 2 / 8]))
    with pytest.raises(M.MattingInputError):
        M.motion_stats(b[:1])


def test_motion_difficulty_ranks_with_ties():
    out = M.motion_difficulty([0.1, 0.3, 0.3, 0.2], [4.0, 1.0, 2.0, 3.0])
    # u ranks: 1, 3.5, 3.5, 2 (ties share the mean rank) / 4; v ranks 4, 1, 2, 3 / 4.
    np.testing.assert_allclose(out["u_rank"], [0.25, 0.875, 0.875, 0.5])
    np.testing.assert_allclose(out["v_rank"], [1.0, 0.25, 0.5, 0.75])
    np.testing.assert_allclose(out["d_motion"], [0.625, 0.5625, 0.6875, 0.625])


def test_motion_vs_dtssd_against_hand_formulas():
    rng = np.random.default_rng(4)
    x = rng.random(12)
    y = 2 * x + rng.normal(0, 0.3, 12)
    emo = np.array(["Happy", "Sad", "Neutral"] * 4)
    out = M.motion_vs_dtssd(x, y, emo)

    def spearman(a, b):  # Pearson correlation of ranks (no ties here)
        ra, rb = a.argsort().argsort(), b.argsort().argsort()
        return np.corrcoef(ra, rb)[0, 1]

    slope, intercept = np.polyfit(x, y, 1)
    assert out["overall"]["spearman_rho"] == pytest.approx(spearman(x, y))
    assert out["overall"]["slope"] == pytest.approx(slope)
    assert out["overall"]["intercept"] == pytest.approx(intercept)
    assert out["overall"]["r2"] == pytest.approx(np.corrcoef(x, y)[0, 1] ** 2)
    for e in ("Happy", "Sad", "Neutral"):
        sel = emo == e
        assert out["per_emotion"][e]["n"] == 4
        assert out["per_emotion"][e]["spearman_rho"] == pytest.approx(spearman(x[sel], y[sel]))
        assert out["per_emotion"][e]["slope"] == pytest.approx(np.polyfit(x[sel], y[sel], 1)[0])
    single = M.motion_vs_dtssd([0.5], [1.0])
    assert single["overall"]["n"] == 1 and math.isnan(single["overall"]["spearman_rho"])


def test_conn_many_small_random_frames():
    """Many tiny frames: ties, chains that break, thresholds nobody reaches, 1-pixel-wide shapes."""
    rng = np.random.default_rng(123)
    values = np.array([0, 25, 26, 51, 77, 102, 128, 153, 179, 204, 230, 255])
    for it in range(240):
        H, W = rng.integers(1, 12, 2)
        if it % 3 == 0:
            p = rng.integers(0, 256, (1, H, W)).astype(np.uint8)
            t = rng.integers(0, 256, (1, H, W)).astype(np.uint8)
        elif it % 3 == 1:
            p = (rng.choice(values, (1, H, W)) * (rng.random((1, H, W)) < 0.6)).astype(np.uint8)
            t = (rng.choice(values, (1, H, W)) * (rng.random((1, H, W)) < 0.7)).astype(np.uint8)
        else:
            p = rng.random((1, H, W)).astype(np.float32)
            t = rng.random((1, H, W)).astype(np.float32)
        want = R.ref_conn(R.to_alpha(p[0], np.float64), R.to_alpha(t[0], np.float64))
        assert M.conn(p, t)[0] == pytest.approx(want, rel=1e-6, abs=1e-12), (it, p, t)


def test_video_source_matches_png_folder(tmp_path):
    """A lossless video matte (PNG-in-MOV, 3 equal channels) scores like the same frames as PNGs."""
    from hug_vis_dataset.readers.media import write_alpha_pngs, write_video

    ref = to_u8(soft_blobs(5, 16, 24, 21))
    pred = to_u8(np.clip(soft_blobs(5, 16, 24, 21) * 0.8 + 0.1, 0, 1))
    write_alpha_pngs(tmp_path / "ref", [ref])
    write_video(tmp_path / "pred.mov", [np.repeat(pred[..., None], 3, axis=-1)], codec="png")
    from_video = M.score_matting_clip(str(tmp_path / "pred.mov"), str(tmp_path / "ref"), chunk_frames=2)
    expected = R.ref_clip(pred, ref, dtype=np.float64)
    for metric in NAMES:
        np.testing.assert_allclose(from_video["per_frame"][metric], expected[metric], rtol=1e-6, atol=1e-12)


# ----------------------------------------------------------------------------- kernel invariants
def _grad_kernel(p, t, skip, normalize=True):
    from hug_vis_dataset.metrics import _matting_kernels as K

    g, dg, inv_norm = M._separable_filter(M.GRAD_SIGMA, M.GRAD_EPSILON)
    return K._grad_frame(p, t, g, dg, inv_norm, normalize, skip)


def test_grad_flat_tile_skipping_changes_nothing():
    """Skipping flat tiles gives exactly the full computation's value (and both match the reference)."""
    frames = [(p[k], t[k]) for _, p, t in CASES for k in range(len(p))]
    # One differing pixel at tile edges (columns 15/16 and 31/32), corners, and a lone row.
    for y, x in [(0, 0), (5, 15), (5, 16), (20, 31), (39, 32), (39, 69), (12, 47), (0, 69)]:
        a = np.zeros((40, 70), np.uint8)
        a[10:30, 20:50] = 255
        b = a.copy()
        b[y, x] = 128 if b[y, x] == 0 else 0
        frames.append((b, a))
    frames.append((np.full((6, 3), 9, np.uint8), np.full((6, 3), 9, np.uint8)))
    for p, t in frames:
        p, t = M._check_pair(p[None], t[None])
        for normalize in (True, False):
            full = _grad_kernel(p[0], t[0], False, normalize)
            assert _grad_kernel(p[0], t[0], True, normalize) == full
    # The sparse frames against the independent reference as well.
    for p, t in frames[-9:-1]:
        want = R.ref_grad(R.to_alpha(p, np.float64), R.to_alpha(t, np.float64))
        assert M.grad(p[None], t[None])[0] == pytest.approx(want, rel=1e-6, abs=1e-12)


_FRESH_PROCESS = """
import sys, numpy as np, numba
from hug_vis_dataset.metrics import matting as M
data = np.load(sys.argv[1])
out = {}
for threads in (1, numba.config.NUMBA_NUM_THREADS):
    numba.set_num_threads(threads)
    for name in sorted({k.split("|")[0] for k in data.files}):
        res = M.matting_frame_metrics(data[name + "|p"], data[name + "|t"])
        for metric, values in res.items():
            out[f"{name}|{metric}|{threads}"] = values
np.savez(sys.argv[2], **out)
"""


@pytest.mark.slow
def test_values_identical_in_fresh_process_and_fresh_compilation(tmp_path):
    """Bit-identical values in another process whose numba cache is empty (a new compilation), on
    1 and all threads: no result depends on compile specialisation, thread count or process."""
    import os
    import subprocess

    chosen = [c for c in CASES if c[0] in ("soft_blobs", "uniform_noise", "medium_noisy", "float_inputs", "figure", "blocks")]
    np.savez(tmp_path / "in.npz", **{f"{n}|p": p for n, p, _ in chosen}, **{f"{n}|t": t for n, _, t in chosen})
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba_cache"), NUMBA_NUM_THREADS="2")
    subprocess.run([sys.executable, "-c", _FRESH_PROCESS, str(tmp_path / "in.npz"), str(tmp_path / "out.npz")],
                   check=True, env=env, timeout=600)
    other = np.load(tmp_path / "out.npz")
    for name, p, t in chosen:
        here = M.matting_frame_metrics(p, t)
        for metric in NAMES:
            for threads in (1, 2):
                np.testing.assert_array_equal(other[f"{name}|{metric}|{threads}"], here[metric], err_msg=f"{name} {metric}")

"""Boundary, thin-structure and moving-region matting errors (hug_vis_dataset.metrics.boundary).

The reference here is a plain re-derivation from the definitions: brute-force Euclidean distances
for the bands, scipy.ndimage binary erosion/dilation with an explicit disk for the opening, the
9x9 Gaussian-derivative kernels of ``tests/reference_matting.py`` applied with scipy.ndimage, and
loops over frames.
"""

from __future__ import annotations

import csv
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import ndimage

from hug_vis_dataset.readers import media
from hug_vis_dataset.metrics import matting
from hug_vis_dataset.metrics.boundary import (
    RegionSpec, boundary_band, region_errors, region_masks, score_boundary_clip, thin_structure_region,
    transition_region,
)
from hug_vis_dataset.synth import synthesize
from hug_vis_dataset.synth.systems import SYSTEMS

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reference_matting import gauss_kernels  # noqa: E402

FX, FY = gauss_kernels()


# ----------------------------------------------------------------------------- re-derivation
def ref_transition(t: np.ndarray) -> np.ndarray:
    H, W = t.shape
    out = (t > 0) & (t < 1)
    mask = t >= 0.5
    for y in range(H):
        for x in range(W):
            for dy, dx in ((0, 1), (0, -1), (1, 0), (-1, 0)):
                yy, xx = y + dy, x + dx
                if 0 <= yy < H and 0 <= xx < W and mask[yy, xx] != mask[y, x]:
                    out[y, x] = True
    return out


def ref_band(transition: np.ndarray, width: float) -> np.ndarray:
    ys, xs = np.nonzero(transition)
    if ys.size == 0:
        return np.zeros(transition.shape, bool)
    gy, gx = np.mgrid[: transition.shape[0], : transition.shape[1]]
    d2 = (gy[..., None] - ys) ** 2 + (gx[..., None] - xs) ** 2
    return np.sqrt(d2.min(axis=-1)) <= width


def ref_thin(foreground: np.ndarray, radius: float) -> np.ndarray:
    k = int(math.floor(radius))
    y, x = np.mgrid[-k : k + 1, -k : k + 1]
    disk = (x * x + y * y) <= radius * radius
    eroded = ndimage.binary_erosion(foreground, structure=disk, border_value=1)
    opened = ndimage.binary_dilation(eroded, structure=disk, border_value=0)
    return foreground & ~opened


def ref_magnitude(a: np.ndarray) -> np.ndarray:
    lo, hi = a.min(), a.max()
    a = (a - lo) / (hi - lo) if hi > lo else np.zeros_like(a)
    gx = ndimage.correlate(a, FX, mode="nearest")
    gy = ndimage.correlate(a, FY, mode="nearest")
    return np.hypot(gx, gy)


def ref_scores(pred: np.ndarray, ref: np.ndarray, widths, radius_1080: float):
    """Per-frame {region: {metric: [values]}} straight from the definitions (NaN for empty)."""
    p_all = pred.astype(np.float64) / (255.0 if pred.dtype == np.uint8 else 1.0)
    t_all = ref.astype(np.float64) / (255.0 if ref.dtype == np.uint8 else 1.0)
    H = ref.shape[1]
    out: dict[str, dict[str, list[float]]] = {}

    def add(region, key, value):
        out.setdefault(region, {}).setdefault(key, []).append(value)

    for k in range(ref.shape[0]):
        p, t = p_all[k], t_all[k]
        trans = ref_transition(t)
        fg = t >= 0.5
        thin = ref_thin(fg, radius_1080 * H / 1080)
        regions = {f"band_{w:g}": ref_band(trans, w * H / 1080) for w in widths}
        regions["thin"] = thin
        regions["bulk"] = fg & ~thin
        if k:
            regions["moving"] = t != t_all[k - 1]
        g = ref_magnitude(t) - ref_magnitude(p)
        for name, m in regions.items():
            n = m.sum()
            for key, value in (("mad", np.abs(p - t)[m].sum() / n * 1e3 if n else np.nan),
                               ("mse", ((p - t) ** 2)[m].sum() / n * 1e3 if n else np.nan),
                               ("grad", (g ** 2)[m].sum() / n * 1e3 if n else np.nan),
                               ("size", float(n))):
                add(name, key, value)
            if k:
                d = (p - p_all[k - 1]) - (t - t_all[k - 1])
                add(name, "dtssd", np.sqrt((d ** 2)[m].sum() / n) * 1e2 if n else np.nan)
    return out


def assert_matches(scored, expected):
    assert set(scored["per_frame"]) == set(expected)
    for region, cols in expected.items():
        for key, values in cols.items():
            np.testing.assert_allclose(scored["per_frame"][region][key], values, rtol=1e-9, atol=1e-9,
                                       err_msg=f"{region}/{key}")


# ----------------------------------------------------------------------------- inputs
def figure_clip(T: int = 4, H: int = 36, W: int = 48, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A moving blob with a 1-px bar and soft edges, and a noisy prediction of it."""
    rng = np.random.default_rng(seed)
    ref = np.zeros((T, H, W), np.uint8)
    for k in range(T):
        yy, xx = np.mgrid[:H, :W]
        blob = (yy - 18) ** 2 + (xx - 16 - k) ** 2 <= 64
        ref[k][blob] = 255
        ref[k, 17, 24 + k : 40] = 255  # a finger-like 1-px bar
        edge = ndimage.binary_dilation(blob) & ~blob
        ref[k][edge] = rng.integers(1, 255, edge.sum())
    pred = np.clip(ref.astype(int) + rng.integers(-60, 61, ref.shape), 0, 255).astype(np.uint8)
    return pred, ref


CASES = {
    "figure": figure_clip(),
    "random": (np.random.default_rng(1).integers(0, 256, (3, 20, 30)).astype(np.uint8),
               np.random.default_rng(2).integers(0, 256, (3, 20, 30)).astype(np.uint8)),
    "float_figure": tuple(x.astype(np.float32) / np.float32(255) for x in figure_clip(seed=5)),
    "binary_random": (np.random.default_rng(3).integers(0, 256, (3, 24, 24)).astype(np.uint8),
                      (np.random.default_rng(4).random((3, 24, 24)) > 0.6).astype(np.uint8) * 255),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("widths,radius", [((45.0, 90.0), 90.0), ((30.0,), 60.0)])
def test_matches_rederivation(case, widths, radius):
    pred, ref = CASES[case]
    scored = score_boundary_clip(pred, ref, chunk_frames=2, band_widths=widths, thin_radius=radius)
    assert_matches(scored, ref_scores(pred, ref, widths, radius))
    assert scored["frames"] == ref.shape[0]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7])
def test_chunk_size_does_not_change_values(chunk):
    pred, ref = figure_clip(T=7)
    whole = score_boundary_clip(pred, ref, chunk_frames=100, thin_radius=90.0)
    part = score_boundary_clip(iter(list(pred)), iter(list(ref)), chunk_frames=chunk, thin_radius=90.0)
    for region, cols in whole["per_frame"].items():
        for key, values in cols.items():
            np.testing.assert_array_equal(part["per_frame"][region][key], values)
    for region, summary in whole["clip"].items():
        assert part["clip"][region] == pytest.approx(summary, nan_ok=True, rel=0, abs=0)


# ----------------------------------------------------------------------------- hand-made frames
def test_thin_bar_of_known_width():
    f = np.zeros((12, 30), bool)
    f[4:7, 5:25] = True  # a bar 3 px wide, 20 long
    # A disk of radius 2 (diameter 5) fits nowhere: the whole bar is thin.
    assert thin_structure_region(f, 2.0).sum() == 60
    # The 3x3 cross (radius 1) fits along the bar: only the 4 corner pixels are lost.
    thin = thin_structure_region(f, 1.0)
    assert sorted(zip(*np.nonzero(thin))) == [(4, 5), (4, 24), (6, 5), (6, 24)]
    # Radius below 1: the disk is one pixel, the opening changes nothing.
    assert thin_structure_region(f, 0.9).sum() == 0


def test_disk_regions():
    H = W = 41
    yy, xx = np.mgrid[:H, :W]
    disk = ((yy - 20) ** 2 + (xx - 20) ** 2 <= 12 ** 2)
    t = disk.astype(np.float64)
    trans = transition_region(t)
    np.testing.assert_array_equal(trans, ref_transition(t))
    inner = disk & ~ndimage.binary_erosion(disk)  # 4-connected inner contour
    outer = ndimage.binary_dilation(disk) & ~disk
    np.testing.assert_array_equal(trans, inner | outer)
    for width in (1.0, 2.5, 4.0):
        np.testing.assert_array_equal(boundary_band(trans, width), ref_band(trans, width))
    # A disk of radius 12 is far thicker than a radius-3 opening disk: nothing but its rim's
    # digital corners can be thin, and the re-derivation agrees pixel for pixel.
    np.testing.assert_array_equal(thin_structure_region(disk, 3.0), ref_thin(disk, 3.0))
    assert thin_structure_region(disk, 3.0).sum() < 0.05 * disk.sum()
    assert thin_structure_region(disk, 13.0).sum() == disk.sum()  # the whole disk fits nowhere


def test_band_width_scales_with_height():
    for H, expected_columns in ((216, 6), (108, 4)):
        t = np.zeros((H, 20))
        t[:, 10:] = 1.0  # a hard vertical edge: transition = columns 9 and 10
        masks = region_masks(t, spec=RegionSpec(band_widths=(10.0,)))  # 2 px at 216 rows, 1 px at 108
        assert masks["band_10"].sum() == expected_columns * H
        assert RegionSpec().scaled(H)["band_10"] == pytest.approx(10 * H / 1080)


def test_empty_regions_are_nan_and_counted():
    T = 3
    for value in (0, 255):
        ref = np.full((T, 16, 16), value, np.uint8)  # no boundary, no thin part, no motion
        pred = np.full_like(ref, 128)
        out = score_boundary_clip(pred, ref, chunk_frames=2)
        for region in ("band_5", "band_10", "band_20", "thin"):
            assert np.isnan(out["per_frame"][region]["mad"]).all()
            assert out["clip"][region]["empty_frames"] == T and math.isnan(out["clip"][region]["mad"])
            assert out["per_frame"][region]["size"].tolist() == [0.0] * T
        assert out["clip"]["moving"]["empty_frames"] == T - 1
        assert math.isnan(out["clip"]["moving"]["dtssd"])
        bulk = out["clip"]["bulk"]
        if value == 255:  # all foreground, all bulk: the frame's own error
            assert bulk["mad"] == pytest.approx(127 / 255 * 1e3) and bulk["mean_size"] == 256
        else:
            assert bulk["empty_frames"] == T and math.isnan(bulk["mad"])


def test_one_frame_clip_has_no_moving_region():
    ref = np.zeros((1, 10, 10), np.uint8)
    ref[0, 3:7, 3:7] = 255
    out = score_boundary_clip(ref, ref)
    assert out["per_frame"]["moving"]["mad"].size == 0
    assert out["clip"]["moving"]["scored_frames"] == 0 and math.isnan(out["clip"]["moving"]["mad"])
    assert out["per_frame"]["band_5"]["dtssd"].size == 0


# ----------------------------------------------------------------------------- consistency with Table 11
def test_whole_frame_region_equals_table11_metrics():
    pred, ref = figure_clip(T=3)
    p = pred.astype(np.float64) / 255
    t = ref.astype(np.float64) / 255
    everything = np.ones(ref.shape[1:], bool)
    for k in range(3):
        g = matting.grad_magnitude(ref[k]) - matting.grad_magnitude(pred[k])
        d = None if k == 0 else (p[k] - p[k - 1]) - (t[k] - t[k - 1])
        e = region_errors(p[k] - t[k], g, d, everything)
        assert e["mad"] == pytest.approx(matting.mad(pred, ref)[k], rel=1e-9)
        assert e["mse"] == pytest.approx(matting.mse(pred, ref)[k], rel=1e-9)
        # Region Grad is a mean x1e3; Table 11's is the sum / 1000.
        assert e["grad"] * everything.size / 1e6 == pytest.approx(matting.grad(pred, ref)[k], rel=1e-7)
        if k:
            assert e["dtssd"] == pytest.approx(matting.dtssd(pred, ref)[k - 1], rel=1e-9)


@pytest.mark.parametrize("window", [(slice(0, 5), slice(0, 7)), (slice(10, 20), slice(3, 30)),
                                    (slice(30, 36), slice(40, 48)), (slice(17, 18), slice(24, 25))])
@pytest.mark.parametrize("normalize", [True, False])
def test_grad_magnitude_window_is_the_whole_frames_magnitude_there(window, normalize):
    pred, ref = figure_clip(T=1)
    for frame in (pred[0], ref[0], ref[0].astype(np.float32) / 255):
        whole = matting.grad_magnitude(frame, normalize)
        np.testing.assert_allclose(matting.grad_magnitude(frame, normalize, window), whole[window],
                                   rtol=1e-12, atol=1e-15)
        if normalize:  # the independent filter (scipy, 81-tap kernel) agrees on the whole frame
            as_alpha = frame.astype(np.float64) / (255 if frame.dtype == np.uint8 else 1)
            np.testing.assert_allclose(whole, ref_magnitude(as_alpha), rtol=1e-9, atol=1e-12)


def test_moving_region_carries_all_of_the_motion_statistic():
    _, ref = figure_clip(T=5)
    t = ref.astype(np.float64) / 255
    per_pair = []
    for k in range(1, 5):
        m = region_masks(ref[k], ref[k - 1])["moving"]
        per_pair.append(np.abs(t[k] - t[k - 1])[m].sum() / t[k].size)
    assert np.mean(per_pair) == pytest.approx(matting.motion_stats(ref)[0], rel=1e-12)


def test_bad_parameters_are_rejected():
    with pytest.raises(ValueError, match="band widths"):
        RegionSpec(band_widths=(0.0,))
    with pytest.raises(ValueError, match="thin_radius"):
        RegionSpec(thin_radius=-1.0)
    with pytest.raises(matting.MattingInputError, match="frame count"):
        score_boundary_clip(np.zeros((2, 4, 4)), np.zeros((3, 4, 4)))


# ----------------------------------------------------------------------------- the synthetic figure
@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    root = tmp_path_factory.mktemp("synth_boundary")
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.2, size=(320, 180))
    with (root / "metadata" / "clips.csv").open(encoding="utf-8", newline="") as handle:
        return root, list(csv.DictReader(handle))


def test_degraded_systems_err_more_on_thin_structures_than_in_the_bulk(synthetic):
    root, rows = synthetic
    degraded = [s for s in SYSTEMS["matting"] if s.strength >= 0.3]  # these lose thin structures
    assert degraded
    for row in rows:
        ref = np.concatenate(list(media.iter_alpha_frames(root / row["alpha_matte_path"])))
        thin_mads = {}
        for system in SYSTEMS["matting"]:
            pred_dir = root / "simulated_systems" / "matting" / system.name / row["clip_id"]
            clip = score_boundary_clip(pred_dir, ref, chunk_frames=4)["clip"]
            assert clip["thin"]["empty_frames"] < clip["thin"]["scored_frames"] / 2  # fingers found
            thin_mads[system.name] = clip["thin"]["mad"]
            if system in degraded:
                assert clip["thin"]["mad"] > 2 * clip["bulk"]["mad"], (system.name, clip["thin"], clip["bulk"])
                assert clip["thin"]["mse"] > 2 * clip["bulk"]["mse"]
        # Losing the fingers costs more there than the mild system's blur. (The strongest system's
        # dilation partly grows them back, so thin errors are not monotone in strength.)
        mildest = min(SYSTEMS["matting"], key=lambda s: s.strength)
        for system in degraded:
            assert thin_mads[system.name] > 1.5 * thin_mads[mildest.name]

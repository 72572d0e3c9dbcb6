"""Generation metrics: PSNR/SSIM vs independent formulas, FID closed form, streaming, demo."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.ndimage import gaussian_filter

from hug_vis_dataset.metrics import fid as F
from hug_vis_dataset.metrics import frames as G
from hug_vis_dataset.tasks import ModelCache, get_task
from hug_vis_dataset.tasks.generation import frame_metric_sums
from hug_vis_dataset.weights import WeightsMissingError


def _psnr_ref(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return 10 * np.log10(255.0 ** 2 / mse)


def _ssim_ref(x, y):
    """Wang et al. 2004 re-derived: Gaussian sigma 1.5 (11 taps), per channel, 5-px border cropped."""
    vals = []
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    for ch in range(3):
        a, b = x[..., ch].astype(np.float64), y[..., ch].astype(np.float64)
        f = lambda z: gaussian_filter(z, 1.5, truncate=3.5, mode="reflect")  # noqa: E731
        mx, my = f(a), f(b)
        vx, vy, cxy = f(a * a) - mx * mx, f(b * b) - my * my, f(a * b) - mx * my
        s = ((2 * mx * my + c1) * (2 * cxy + c2)) / ((mx ** 2 + my ** 2 + c1) * (vx + vy + c2))
        vals.append(s[5:-5, 5:-5].mean())
    return float(np.mean(vals))


def _photos():
    from skimage import data

    return [data.astronaut()[:200, :240], data.chelsea()[:200, :240], data.coffee()[:200, :240]]


@pytest.mark.parametrize("noise", [3, 20])
def test_psnr_ssim_on_package_photographs(noise):
    rng = np.random.default_rng(noise)
    refs = np.stack(_photos())
    preds = np.clip(refs + rng.normal(0, noise, refs.shape), 0, 255).astype(np.uint8)
    p, s = G.psnr_frames(preds, refs), G.ssim_frames(preds, refs)
    for i in range(len(refs)):
        assert p[i] == pytest.approx(_psnr_ref(preds[i], refs[i]), abs=1e-9)
        assert s[i] == pytest.approx(_ssim_ref(preds[i], refs[i]), abs=1e-6)
    assert p.mean() > 20 and 0 < s.mean() < 1


def test_psnr_edge_cases():
    x = np.zeros((1, 12, 12, 3), np.uint8)
    y = x.copy()
    assert G.psnr_frames(x, y)[0] == G.PSNR_CAP_DB  # identical frames: capped
    y[0, 0, 0, 0] = 1  # mse = 1 / 432
    assert G.psnr_frames(y, x)[0] == pytest.approx(min(100.0, 10 * np.log10(255 ** 2 * 432)))
    y2 = np.full_like(x, 255)
    assert G.psnr_frames(y2, x)[0] == pytest.approx(0.0)
    with pytest.raises(ValueError):
        G.psnr_frames(x.astype(np.float32), x)
    with pytest.raises(ValueError):
        G.psnr_frames(x, x[:, :10])
    with pytest.raises(ValueError):
        G.ssim_frames(x[:, :8, :8], x[:, :8, :8])
    with pytest.raises(ValueError):
        G.psnr_frames(x[:0], x[:0])


def test_frechet_distance_closed_form_diagonal():
    rng = np.random.default_rng(0)
    for d in (1, 3, 16):
        mu1, mu2 = rng.normal(size=d), rng.normal(size=d)
        s1, s2 = rng.uniform(0.1, 3, d), rng.uniform(0.1, 3, d)
        expected = np.sum((mu1 - mu2) ** 2) + np.sum(s1 + s2 - 2 * np.sqrt(s1 * s2))
        assert F.frechet_distance(mu1, np.diag(s1), mu2, np.diag(s2)) == pytest.approx(expected, rel=1e-9)


def test_frechet_distance_rotated_and_singular():
    rng = np.random.default_rng(1)
    q, _ = np.linalg.qr(rng.normal(size=(4, 4)))
    s1, s2 = np.array([1.0, 2, 3, 4]), np.array([2.0, 0.5, 1, 3])
    # commuting covariances (same eigenbasis): closed form still holds
    expected = np.sum(s1 + s2 - 2 * np.sqrt(s1 * s2))
    assert F.frechet_distance(np.zeros(4), q @ np.diag(s1) @ q.T, np.zeros(4), q @ np.diag(s2) @ q.T) == \
        pytest.approx(expected, rel=1e-7)
    # identical singular covariances: distance 0 (fallback path keeps it finite)
    sing = np.diag([1.0, 0.0, 0.0])
    assert F.frechet_distance(np.ones(3), sing, np.ones(3), sing) == pytest.approx(0.0, abs=1e-5)
    with pytest.raises(ValueError):
        F.frechet_distance(np.zeros(2), np.eye(3), np.zeros(2), np.eye(3))
    with pytest.raises(ValueError):
        F.frechet_distance(np.array([np.nan, 0]), np.eye(2), np.zeros(2), np.eye(2))


def test_gaussian_stats_batch_and_order_independent(tmp_path):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(103, 5)) * 3 + 7
    a, b = F.GaussianStats(5), F.GaussianStats(5)
    a.update(x)
    for s in range(0, 103, 10):
        b.update(x[::-1][s:s + 10])
    np.testing.assert_allclose(a.mean(), x.mean(0), rtol=1e-12)
    np.testing.assert_allclose(a.covariance(), np.cov(x, rowvar=False), rtol=1e-9)
    np.testing.assert_allclose(a.covariance(), b.covariance(), rtol=1e-9)
    a.save(tmp_path / "s.npz")
    c = F.GaussianStats.load(tmp_path / "s.npz")
    assert c.n == 103 and np.allclose(c.sum_xx, a.sum_xx)
    with pytest.warns(UserWarning, match="feature dimensions"):
        F.fid_from_stats(F.GaussianStats(5, 3, x[:3].sum(0), x[:3].T @ x[:3]), a)


def test_model_metrics_raise_clear_error_without_weights(monkeypatch, tmp_path):
    monkeypatch.setenv("HUGVIS_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.delenv("HUGVIS_WEIGHTS_DIR", raising=False)
    from hug_vis_dataset.models.arcface import ArcFaceEmbedder, SCRFDDetector
    from hug_vis_dataset.models.inception import load_inception
    from hug_vis_dataset.models.syncnet import load_syncnet

    from hug_vis_dataset.models.lpips import load_lpips

    for loader, name in ((load_lpips, "alexnet"), (load_inception, "inception_fid"),
                         (load_syncnet, "syncnet_v2"), (ArcFaceEmbedder, "arcface_w600k_r50"),
                         (SCRFDDetector, "arcface_det_10g")):
        with pytest.raises(WeightsMissingError, match=f"hugvis weights download {name}"):
            loader()
    avail = {**get_task("vision_driven").availability(), **get_task("audio_driven").availability()}
    assert avail["psnr"] == "" and avail["ssim"] == ""
    for m in ("lpips", "fid", "csim", "sync_c", "sync_d"):
        assert avail[m].startswith("skipped: needs weights: run `hugvis weights download")


def _write(path, frames, fps=25.0):
    from hug_vis_dataset.readers.media import write_video

    write_video(path, [frames], fps=fps, crf=0)


def test_score_video_pair_streaming(tmp_path):
    rng = np.random.default_rng(3)
    ref = np.repeat(np.stack(_photos())[:, :64, :64], 3, axis=0)  # 9 frames
    pred = np.clip(ref + rng.normal(0, 10, ref.shape), 0, 255).astype(np.uint8)
    _write(tmp_path / "ref.mp4", ref)
    _write(tmp_path / "pred.mp4", pred[:7])  # two frames fewer: reported
    from hug_vis_dataset.readers.media import iter_video_frames

    dref = np.concatenate(list(iter_video_frames(tmp_path / "ref.mp4")))
    dpred = np.concatenate(list(iter_video_frames(tmp_path / "pred.mp4")))
    r1 = frame_metric_sums(str(tmp_path / "pred.mp4"), str(tmp_path / "ref.mp4"), ("psnr", "ssim"), ModelCache(), 2)
    r2 = frame_metric_sums(str(tmp_path / "pred.mp4"), str(tmp_path / "ref.mp4"), ("psnr", "ssim"), ModelCache(), 32)
    assert r1.notes["frames"] == 7 and r1.notes["frames_dropped"] == 2
    assert r1.values["psnr"] == pytest.approx(r2.values["psnr"], rel=1e-12)
    assert r1.values["ssim"] == pytest.approx(r2.values["ssim"], rel=1e-12)
    assert r1.values["psnr"] == pytest.approx(np.mean([_psnr_ref(dpred[i], dref[i]) for i in range(7)]), rel=1e-12)


def test_evaluate_modules_offline(tmp_path):
    import evaluate

    rng = np.random.default_rng(5)
    ref = np.stack(_photos())[:, :64, :64]
    pred = np.clip(ref + rng.normal(0, 8, ref.shape), 0, 255).astype(np.uint8)
    _write(tmp_path / "r.mp4", ref)
    _write(tmp_path / "p.mp4", pred)
    direct = frame_metric_sums(str(tmp_path / "p.mp4"), str(tmp_path / "r.mp4"), ("psnr", "ssim"), ModelCache(), 32)
    for name in ("psnr", "ssim"):
        module = evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / name))
        out = module.compute(predictions=[str(tmp_path / "p.mp4")] * 2, references=[str(tmp_path / "r.mp4")] * 2)
        assert out[name] == pytest.approx(direct.values[name], rel=1e-12)
        assert out["per_clip"] == [pytest.approx(direct.values[name], rel=1e-12)] * 2 and out["n_ok"] == 2

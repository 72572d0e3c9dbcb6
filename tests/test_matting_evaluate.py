"""The matting evaluate modules load offline and return aggregates and per-clip values in input order."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference_matting as R  # noqa: E402

from hug_vis_dataset.readers.media import write_alpha_pngs  # noqa: E402

METRICS_DIR = Path(__file__).resolve().parents[1] / "metrics"
NAMES = ("mad", "mse", "grad", "conn", "dtssd")


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    """Three clips of unequal length (so rvm and clip protocols differ), as PNG folders."""
    root = tmp_path_factory.mktemp("matting_clips")
    rng = np.random.default_rng(5)
    preds, refs, arrays = [], [], []
    for i, T in enumerate((4, 2, 3)):
        yy, xx = np.mgrid[0:12, 0:14]
        ref = np.stack([np.clip(255 - 30 * np.hypot(yy - 6, xx - 4 - k - i), 0, 255) for k in range(T)]).astype(np.uint8)
        pred = np.clip(ref.astype(int) + rng.integers(-40, 40, ref.shape), 0, 255).astype(np.uint8)
        write_alpha_pngs(root / f"pred_{i}", [pred])
        write_alpha_pngs(root / f"ref_{i}", [ref])
        preds.append(str(root / f"pred_{i}"))
        refs.append(str(root / f"ref_{i}"))
        arrays.append((pred, ref))
    return preds, refs, arrays


def _expected(arrays, metric, protocol):
    per_frame = [R.ref_clip(p, t, dtype=np.float64)[metric] for p, t in arrays]
    per_clip = [v.mean() for v in per_frame]
    if protocol == "clip":
        return float(np.mean(per_clip)), per_clip
    if metric == "dtssd":
        per_frame = [np.r_[0.0, v] for v in per_frame]
    length = max(len(v) for v in per_frame)
    index_means = [np.mean([v[k] for v in per_frame if len(v) > k]) for k in range(length)]
    return float(np.mean(index_means)), per_clip


@pytest.fixture(scope="module")
def offline():
    import os

    old = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    yield
    if old is None:
        os.environ.pop("HF_HUB_OFFLINE", None)
    else:
        os.environ["HF_HUB_OFFLINE"] = old


@pytest.mark.parametrize("name", NAMES)
def test_single_metric_module(name, clips, offline):
    import evaluate

    preds, refs, arrays = clips
    module = evaluate.load(str(METRICS_DIR / name))
    for protocol in ("rvm", "clip"):
        result = module.compute(predictions=preds, references=refs, protocol=protocol)
        value, per_clip = _expected(arrays, name, protocol)
        assert result[name] == pytest.approx(value, rel=1e-6)
        np.testing.assert_allclose(result["per_clip"], per_clip, rtol=1e-6)
        assert result["protocol"] == protocol and result["n_ok"] == 3 and result["n_failed"] == 0
    # Input order is kept: reversing the inputs reverses per_clip.
    rev = module.compute(predictions=preds[::-1], references=refs[::-1], protocol="clip")
    np.testing.assert_allclose(rev["per_clip"], per_clip[::-1], rtol=1e-6)


def test_matting_module_all_five(clips, offline):
    import evaluate

    preds, refs, arrays = clips
    module = evaluate.load(str(METRICS_DIR / "matting"))
    result = module.compute(predictions=preds, references=refs)
    assert result["protocol"] == "rvm"
    rvm_differs = False
    for name in NAMES:
        value, per_clip = _expected(arrays, name, "rvm")
        assert result[name] == pytest.approx(value, rel=1e-6)
        np.testing.assert_allclose(result["per_clip"][name], per_clip, rtol=1e-6)
        rvm_differs |= abs(value - _expected(arrays, name, "clip")[0]) > 1e-6 * abs(value)
    assert rvm_differs  # the fixture really distinguishes the protocols


def test_motion_difficulty_module_on_rows(clips, offline):
    """The module takes stored rows (reference motion + matting dtSSD) and equals the library analysis."""
    import evaluate
    import pandas as pd
    from scipy.stats import rankdata, spearmanr

    from hug_vis_dataset.metrics.matting import motion_stats
    from hug_vis_dataset.tasks import result_rows

    preds, refs, arrays = clips
    ids = ["actor_0001_happy_action_01_script_001", "actor_0001_sad_action_01_script_001",
           "actor_0002_happy_action_01_script_001"]
    rows = []
    for cid, (p, t) in zip(ids, arrays):
        u, v = motion_stats(t)
        rows += result_rows("reference", "motion", cid, {"motion_u": u, "motion_v": v})
        rows += result_rows("m", "matting", cid, {"dtssd": R.ref_clip(p, t, dtype=np.float64)["dtssd"].mean()})
    frame = pd.DataFrame(rows)
    module = evaluate.load(str(METRICS_DIR / "motion_difficulty"))
    result = module.compute(**frame.to_dict("list"))
    u = np.array([motion_stats(t)[0] for _, t in arrays])
    v = np.array([motion_stats(t)[1] for _, t in arrays])
    d = (rankdata(u) / 3 + rankdata(v) / 3) / 2
    np.testing.assert_allclose(result["per_clip"]["u"], u, rtol=1e-12)
    np.testing.assert_allclose(result["per_clip"]["d_motion"], d, rtol=1e-12)
    dts = [R.ref_clip(p, t, dtype=np.float64)["dtssd"].mean() for p, t in arrays]
    np.testing.assert_allclose(result["per_clip"]["dtssd"], dts, rtol=1e-12)
    assert result["relation"]["overall"]["n"] == 3
    assert result["relation"]["overall"]["spearman_rho"] == pytest.approx(spearmanr(d, dts)[0])
    assert set(result["relation"]["per_emotion"]) == {"Happy", "Sad"}

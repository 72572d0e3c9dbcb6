"""Cross-task analyses (paper Eq. 1-4) against by-hand computations on small inputs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset import catalog
from scipy import stats as sps

from hug_vis_dataset.datamodel.grid import EMOTION_NAMES, DEFAULT_EMOTION_TOKENS, Emotion
from hug_vis_dataset.metrics.crosstask import (
    DEFAULT_PAPER_METRICS,
    DifficultyMetric,
    difficulty_agreement,
    emotion_difficulty,
    source_difficulty,
)
from hug_vis_dataset.stats import bootstrap_ci

TOKENS = {e.value: DEFAULT_EMOTION_TOKENS[e] for e in Emotion}


def clip(emotion: str, actor: int = 1, script: int = 1) -> str:
    return f"actor_{actor:04d}_{TOKENS[emotion]}_action_01_script_{script:03d}"


def row(model, task, emotion, metric, value, actor=1, script=1, status="ok"):
    return {"model": model, "task": task, "clip_id": clip(emotion, actor, script), "metric": metric,
            "value": value, "status": status}


MAD = DifficultyMetric("VM-MAD", "matting", "mad", "retain")
UT = DifficultyMetric("VC-UTMOS", "voice_cloning", "utmos", "negate")
RE = DifficultyMetric("MER-RE", "emotion", "emotion_accuracy", "complement")


def small_rows():
    rows = []
    # matting MAD, two models; m1 has two clips per emotion, m2 one (models weigh equally, Eq. 1).
    mad = {"m1": {e: [i + 1.0, i + 3.0] for i, e in enumerate(EMOTION_NAMES)},
           "m2": {e: [10.0 - i] for i, e in enumerate(EMOTION_NAMES)}}
    for model, per in mad.items():
        for e, vals in per.items():
            rows += [row(model, "matting", e, "mad", v, script=s + 1) for s, v in enumerate(vals)]
    # UTMOS, one model; Neutral missing entirely; Sad and Afraid tied.
    ut = {"Happy": 4.0, "Angry": 3.0, "Sad": 2.0, "Afraid": 2.0, "Disgusted": 3.5, "Surprised": 1.0}
    rows += [row("v1", "voice_cloning", e, "utmos", v) for e, v in ut.items()]
    # recognition correctness: constant accuracy 0.5 everywhere -> constant profile
    for e in EMOTION_NAMES:
        rows += [row("llm", "emotion", e, "emotion_accuracy", 1.0, script=1),
                 row("llm", "emotion", e, "emotion_accuracy", 0.0, script=2)]
    # a failed row and a NaN row are left out
    rows.append(row("m1", "matting", "Happy", "mad", float("nan"), script=9, status="failed"))
    rows.append(row("m1", "matting", "Happy", "mad", 1e9, script=8, status="failed"))
    return rows


def test_emotion_difficulty_by_hand():
    res = emotion_difficulty(small_rows(), [MAD, UT, RE])
    # MAD: g_{m1,e} = i + 2, g_{m2,e} = 10 - i, g_e = (i + 2 + 10 - i) / 2 = 6 for every e -> constant
    assert res.g["VM-MAD"].tolist() == [6.0] * 7
    assert res.D["VM-MAD"].tolist() == [0.0] * 7 and res.hardest["VM-MAD"] is None
    # UTMOS negated: -4, -3, -2, -2, -3.5, -1, NaN -> min -4, max -1
    expected = [(-v + 4.0) / 3.0 for v in (4.0, 3.0, 2.0, 2.0, 3.5, 1.0)] + [math.nan]
    assert res.D["VC-UTMOS"].tolist()[:6] == pytest.approx(expected[:6])
    assert math.isnan(res.D.loc["Neutral", "VC-UTMOS"])
    assert res.missing["VC-UTMOS"] == ["Neutral"] and res.hardest["VC-UTMOS"] == "Surprised"
    # recognition error 1 - mean(emotion_accuracy) = 0.5 everywhere -> constant
    assert res.g["MER-RE"].tolist() == [0.5] * 7 and res.D["MER-RE"].tolist() == [0.0] * 7
    assert res.n_dropped == 2
    assert res.n_models.loc["Happy", "VM-MAD"] == 2 and res.n_models.loc["Neutral", "VC-UTMOS"] == 0


def test_emotion_difficulty_unequal_models_and_tie_for_hardest():
    rows = []
    # m1: Happy 1, Sad 3 (two clips 2 and 4), Angry 3; m2: Happy 5, Sad 1, Angry 1
    for e, vals in {"Happy": [1.0], "Sad": [2.0, 4.0], "Angry": [3.0]}.items():
        rows += [row("m1", "matting", e, "mad", v, script=i + 1) for i, v in enumerate(vals)]
    for e, v in {"Happy": 5.0, "Sad": 1.0, "Angry": 1.0}.items():
        rows.append(row("m2", "matting", e, "mad", v))
    res = emotion_difficulty(rows, [MAD])
    # g: Happy (1+5)/2=3, Sad (3+1)/2=2, Angry (3+1)/2=2 -> D Happy 1, Sad 0, Angry 0
    assert res.g["VM-MAD"].dropna().to_dict() == {"Happy": 3.0, "Angry": 2.0, "Sad": 2.0}
    assert res.D["VM-MAD"].dropna().to_dict() == {"Happy": 1.0, "Angry": 0.0, "Sad": 0.0}
    rows.append(row("m2", "matting", "Angry", "mad", 3.0, script=2))  # m2 Angry (1+3)/2=2 -> g (3+2)/2
    res = emotion_difficulty(rows, [MAD])
    assert res.g.loc["Angry", "VM-MAD"] == 2.5
    # a tie for the hardest: hardest is the first in Table 1 order
    tie = [row("m", "matting", e, "mad", v) for e, v in {"Sad": 2.0, "Angry": 2.0, "Happy": 1.0}.items()]
    res = emotion_difficulty(tie, [MAD])
    assert res.hardest["VM-MAD"] == "Angry" and res.D["VM-MAD"].dropna().to_dict() == {
        "Happy": 0.0, "Angry": 1.0, "Sad": 1.0}


def test_orientation_override_and_negate_equals_complement():
    rows = [row("m", "audio_driven", e, "csim", v) for e, v in zip(EMOTION_NAMES, [0.9, 0.7, 0.8, 0.6, 0.5, 0.95, 0.85])]
    spec = DifficultyMetric("AD-CSIM", "audio_driven", "csim", "complement")
    a = emotion_difficulty(rows, [spec]).D
    b = emotion_difficulty(rows, [spec], orientations={"AD-CSIM": "negate"}).D
    c = emotion_difficulty(rows, [spec], orientations={"AD-CSIM": "retain"}).D
    assert np.allclose(a, b) and np.allclose(a, 1.0 - c)
    assert a.loc["Disgusted", "AD-CSIM"] == 1.0 and a.loc["Surprised", "AD-CSIM"] == 0.0
    with pytest.raises(ValueError, match="orientation"):
        emotion_difficulty(rows, [spec], orientations={"AD-CSIM": "flip"})
    with pytest.raises(ValueError, match="unknown metric labels"):
        emotion_difficulty(rows, [spec], orientations={"XX": "negate"})


def test_default_metrics_and_missing_tasks():
    res = emotion_difficulty(small_rows())
    assert list(res.D.columns) == [m.label for m in DEFAULT_PAPER_METRICS]
    assert list(res.D.index) == list(EMOTION_NAMES)
    assert res.D["AD-CSIM"].isna().all() and res.missing["AD-CSIM"] == list(EMOTION_NAMES)


def test_rows_need_task_and_valid_clip_ids():
    with pytest.raises(ValueError, match="task"):
        emotion_difficulty([{"model": "m", "clip_id": clip("Sad"), "metric": "mad", "value": 1.0}], [MAD])
    with pytest.raises(ValueError, match="bad clip id"):
        emotion_difficulty([{"model": "m", "task": "matting", "clip_id": "x", "metric": "mad", "value": 1.0}], [MAD])
    with pytest.raises(ValueError, match="no result rows"):
        emotion_difficulty([], [MAD])


def test_row_order_independence_bitwise():
    rng = np.random.default_rng(0)
    rows = [row(f"m{m}", "matting", e, "mad", float(rng.uniform()), actor=a, script=s)
            for m in range(3) for e in EMOTION_NAMES for a in (1, 2) for s in range(1, 4)]
    rows += [row("v", "voice_cloning", e, "utmos", float(rng.uniform(1, 5)), actor=a)
             for e in EMOTION_NAMES for a in (1, 2, 3)]
    base = emotion_difficulty(rows, [MAD, UT])
    for seed in range(3):
        perm = np.random.default_rng(seed + 10).permutation(len(rows))
        other = emotion_difficulty([rows[i] for i in perm], [MAD, UT])
        assert base.D.equals(other.D) and base.g.equals(other.g)
        assert base.hardest == other.hardest


def test_difficulty_agreement_by_hand_and_scipy():
    D = pd.DataFrame(
        {"a": [0.0, 0.2, 0.5, 0.5, 1.0, 0.1, 0.3],    # tie at 0.5
         "b": [1.0, 0.8, 0.5, 0.4, 0.0, 0.9, 0.7],
         "c": [0.0] * 7,                               # constant profile
         "d": [0.3, np.nan, 0.1, 0.9, 1.0, 0.0, 0.2]},  # missing emotion
        index=list(EMOTION_NAMES),
    )
    rho = difficulty_agreement(D)
    assert rho.equals(rho.T)
    assert rho.loc["a", "b"] == pytest.approx(sps.spearmanr(D["a"], D["b"]).statistic)
    assert rho.loc["a", "b"] < -0.95
    assert math.isnan(rho.loc["a", "c"]) and math.isnan(rho.loc["c", "c"])
    keep = D["d"].notna()
    assert rho.loc["a", "d"] == pytest.approx(sps.spearmanr(D["a"][keep], D["d"][keep]).statistic)
    assert rho.loc["a", "a"] == 1.0
    # by hand for a pair with ties: ranks of x=[1,2,2] are [1, 2.5, 2.5]; y=[1,2,3] -> rho = sqrt(3)/2
    small = pd.DataFrame({"x": [1.0, 2.0, 2.0], "y": [1.0, 2.0, 3.0]})
    assert difficulty_agreement(small).loc["x", "y"] == pytest.approx(math.sqrt(3) / 2)


AD = {"csim": "negate", "sync_d": "retain"}
VD = {"lpips": "retain"}


def source_rows():
    clips = [clip(e, a) for e in ("Happy", "Sad", "Angry") for a in (1, 2)]
    rows = []
    csim = {"a1": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4], "a2": [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]}
    syncd = {"a1": [1.0, 3.0, 2.0, 5.0, 4.0, 6.0], "a2": [2.0, 1.0, 4.0, 3.0, 6.0, 5.0]}
    lpips = {"v1": [0.1, 0.3, 0.2, 0.5, 0.4, 0.6], "v2": [0.2, 0.2, 0.4, 0.3, 0.6, 0.5]}
    for m in ("a1", "a2"):
        for i, c in enumerate(clips):
            rows.append({"model": m, "task": "audio_driven", "clip_id": c, "metric": "csim", "value": csim[m][i]})
            rows.append({"model": m, "task": "audio_driven", "clip_id": c, "metric": "sync_d", "value": syncd[m][i]})
    for m in ("v1", "v2"):
        for i, c in enumerate(clips):
            rows.append({"model": m, "task": "vision_driven", "clip_id": c, "metric": "lpips", "value": lpips[m][i]})
    return clips, csim, syncd, lpips, rows


def _mm(v):
    v = np.asarray(v, float)
    return np.zeros_like(v) if v.max() == v.min() else (v - v.min()) / (v.max() - v.min())


def test_source_difficulty_by_hand():
    clips, csim, syncd, lpips, rows = source_rows()
    # a fresh clip valid for VD but with a failed AD value is left out of the common set
    extra = clip("Neutral", 1)
    rows += [{"model": "a1", "task": "audio_driven", "clip_id": extra, "metric": "csim", "value": 0.1},
             {"model": "a1", "task": "audio_driven", "clip_id": extra, "metric": "sync_d", "value": float("nan")},
             {"model": "a2", "task": "audio_driven", "clip_id": extra, "metric": "csim", "value": 0.1},
             {"model": "a2", "task": "audio_driven", "clip_id": extra, "metric": "sync_d", "value": 9.0},
             {"model": "v1", "task": "vision_driven", "clip_id": extra, "metric": "lpips", "value": 0.9},
             {"model": "v2", "task": "vision_driven", "clip_id": extra, "metric": "lpips", "value": 0.9}]
    res = source_difficulty(rows, AD, VD)
    z_a1 = (_mm(-np.array(csim["a1"])) + _mm(syncd["a1"])) / 2
    z_a2 = (_mm(-np.array(csim["a2"])) + _mm(syncd["a2"])) / 2  # constant csim -> 0
    Z_ad = (z_a1 + z_a2) / 2
    Z_vd = (_mm(lpips["v1"]) + _mm(lpips["v2"])) / 2
    got = res.pairs.set_index("clip_id")
    for i, c in enumerate(clips):
        assert got.loc[c, "Z_AD"] == pytest.approx(Z_ad[i]) and got.loc[c, "Z_VD"] == pytest.approx(Z_vd[i])
    # pairs come in grid order: actor first, then emotion in Table 1 order (Happy, Angry, Sad)
    assert list(res.pairs["clip_id"]) == [clips[i] for i in (0, 4, 2, 1, 5, 3)]
    assert extra not in set(res.pairs["clip_id"]) and res.n_valid == {"AD": 6, "VD": 7, "common": 6}
    assert res.rho == pytest.approx(sps.spearmanr(Z_ad, Z_vd).statistic)
    ref = sps.linregress(Z_ad, Z_vd)
    assert res.fit.slope == pytest.approx(ref.slope) and res.fit.intercept == pytest.approx(ref.intercept)
    assert res.fit.r2 == pytest.approx(ref.rvalue**2)
    assert res.models == {"AD": ["a1", "a2"], "VD": ["v1", "v2"]} and res.n_dropped == 1


def test_source_difficulty_order_independent_and_errors():
    _, _, _, _, rows = source_rows()
    base = source_difficulty(rows, AD, VD)
    perm = np.random.default_rng(1).permutation(len(rows))
    other = source_difficulty([rows[i] for i in perm], AD, VD)
    assert base.pairs.equals(other.pairs) and base.rho == other.rho
    from hug_vis_dataset.metrics.crosstask import MissingMetricsError

    # without vision-driven rows: every missing metric is named with the command that gets it
    with pytest.raises(MissingMetricsError, match="no valid rows of Vision-driven video generation") as err:
        source_difficulty([r for r in rows if r["task"] == "audio_driven"], AD, VD)
    assert all(f"Vision-driven video generation {catalog.spec(m).label}" in str(err.value) for m in VD)
    if any(catalog.spec(m).weights for m in VD):
        assert "hugvis weights download" in str(err.value)
    with pytest.raises(ValueError, match="clip"):
        source_difficulty(rows, AD, VD, clips=[clip("Happy", 1)])
    with pytest.raises(ValueError, match="orientation"):
        source_difficulty(rows, {"csim": "up"}, VD)


def test_bootstrap_of_an_analysis_runs_and_brackets_estimate():
    _, _, _, _, rows = source_rows()
    ci = bootstrap_ci(rows, lambda f: source_difficulty(f, AD, VD).rho, n_boot=40, seed=0)
    assert ci.n_clusters == 2 and np.isfinite(ci.estimate)
    assert ci.low <= ci.high

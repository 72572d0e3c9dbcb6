"""Distill-MOS (beyond the paper): equal to the ``distillmos`` package's own API on the same audio at several
sample rates, batch-size invariant, its weights through the registry, its agreement with the naturalness MOS
through the agreement code of the other metrics."""

from __future__ import annotations

import functools

import numpy as np
import pytest
import soundfile as sf

from test_voice import tone_noise

from hug_vis_dataset import catalog

RATES = (16000, 22050, 44100, 48000)


@functools.lru_cache(maxsize=None)
def _package_model():
    import distillmos

    return distillmos.ConvTransformerSQAModel().eval()  # the package's default: its weights, in-forward segmenting


def package_distill_mos(audio: np.ndarray, rate: int) -> float:
    """The clip scored as the distillmos README scores a file: torchaudio's Resample to 16 kHz, then the model."""
    import torch
    import torchaudio

    wave = torch.from_numpy(np.asarray(audio, np.float32))[None]
    if rate != 16000:
        wave = torchaudio.transforms.Resample(rate, 16000)(wave)
    with torch.no_grad():
        return float(_package_model()(wave))


@functools.lru_cache(maxsize=None)
def _ours():
    from hug_vis_dataset.models.distill_mos import load_distill_mos

    return load_distill_mos()


def ours(audio: np.ndarray, rate: int, batch: int = 8) -> float:
    from hug_vis_dataset.metrics.distill_mos import distill_mos_clip

    return distill_mos_clip(_ours(), audio, rate, batch)


# one zero-padded segment at every rate; three segments (past 7.68 s) at two rates
@pytest.mark.parametrize("rate,seconds", [(r, s) for r in RATES for s in (0.4, 2.0)] + [(16000, 9.3), (44100, 9.3)])
def test_equals_the_package_api_at_each_sample_rate(rate, seconds):
    audio = tone_noise(seconds, 2, rate)
    want = package_distill_mos(audio, rate)
    assert 1.0 <= want <= 5.0
    assert ours(audio, rate) == pytest.approx(want, abs=1e-6)


def test_segments_are_the_packages():
    from hug_vis_dataset.metrics.distill_mos import SEGMENT, distill_mos_segments

    for n in (1, SEGMENT - 1, SEGMENT, SEGMENT + 1, SEGMENT + 16000, SEGMENT + 16001, 16000 * 30):
        over = max(n - SEGMENT, 0)
        hops = int(np.ceil(over / 16000)) + 1
        # the package's forward: int(c * overlength) for c in np.linspace(0, 1, num_hops)
        assert distill_mos_segments(n) == [int(c * over) for c in np.linspace(0, 1, hops)]
    assert distill_mos_segments(SEGMENT + 16001) == [0, 8000, 16001]


def test_batch_size_changes_nothing_beyond_rounding():
    audio = tone_noise(9.3, 4, 16000)  # 3 segments
    values = [ours(audio, 16000, batch) for batch in (1, 2, 3)]
    assert max(values) - min(values) < 1e-6
    with pytest.raises(ValueError, match="batch_size must be a whole number >= 1"):
        ours(audio, 16000, 0)


def test_weights_resolve_through_the_registry_and_an_override_is_checked(tmp_path, monkeypatch):
    from hug_vis_dataset import weights

    spec = weights.get_spec("distill_mos_v7")
    assert spec.source == "package" and weights.resolve("distill_mos_v7").name == "distill_mos_v7.pt"
    assert catalog.spec("distill_mos").weights == ("distill_mos_v7",)
    bad = tmp_path / "distill_mos_v7.pt"
    bad.write_bytes(b"not the checkpoint")
    monkeypatch.setenv(weights.env_var("distill_mos_v7"), str(bad))
    with pytest.raises(weights.WeightsHashError, match="distill_mos_v7"):
        weights.resolve("distill_mos_v7")
    monkeypatch.setenv(weights.env_var("distill_mos_v7"), str(tmp_path / "absent.pt"))
    with pytest.raises(weights.WeightsMissingError) as err:
        weights.resolve("distill_mos_v7")
    text = str(err.value)
    assert "distill_mos_v7.pt" in text and "HUGVIS_WEIGHT_DISTILL_MOS_V7" in text and "distillmos" in text


def test_the_scorer_reads_the_file_at_its_own_rate(tmp_path):
    """The voice scorer's one decode hands Distill-MOS the samples at the file's rate (22.05 kHz here)."""
    from hug_vis_dataset.tasks import ModelCache, get_task

    audio = tone_noise(1.5, 1, 22050)
    path = tmp_path / "clip.wav"
    sf.write(path, audio, 22050, subtype="FLOAT")
    stereo = tmp_path / "stereo.wav"
    sf.write(stereo, np.stack([audio, audio], axis=1), 22050, subtype="FLOAT")
    scorer, models = get_task("voice_cloning"), ModelCache("cpu")
    for file in (path, stereo):
        scores, errors = scorer.score_groups(str(file), {}, ["distill_mos"], models, {})
        assert not errors
        assert scores.values["distill_mos"] == pytest.approx(package_distill_mos(audio, 22050), abs=1e-6)


def test_agreement_with_the_naturalness_mos_uses_the_agreement_code():
    """Distill-MOS joins the metric-MOS agreement (metrics/mos_agreement.py) and the report's MOS-metric view
    beside UTMOS, as its naturalness predictor; CER (a corpus ratio) is not compared as a clip mean."""
    import pandas as pd

    from hug_vis_dataset.analyses import mos_agreement_by_task
    from hug_vis_dataset.metrics.mos_agreement import metric_mos_agreement
    from hug_vis_dataset.studies.mos import mos_metric_agreement

    clips = [f"actor_000{a}_happy_action_01_script_00{s}" for a in (1, 2) for s in (1, 2)]
    level = {"good": 4.0, "fair": 3.0, "poor": 2.0}  # per-clip Distill-MOS and MOS of each system
    rows, ratings = [], []
    for model, base in level.items():
        for i, clip in enumerate(clips):
            for metric, value in (("distill_mos", base + 0.1 * i), ("cer", 0.1 * i), ("utmos", 5 - base)):
                rows.append({"model": model, "task": "voice_cloning", "clip_id": clip, "metric": metric,
                             "value": value, "status": "ok"})
            ratings.append({"rater": "r1", "clip_id": clip, "model": model, "criterion": "emotion_naturalness",
                            "score": base})
    frame = pd.DataFrame(rows)
    out = mos_agreement_by_task(frame, ratings=pd.DataFrame(ratings), n_boot=20)["voice_cloning"]
    by_metric = {r["metric"]: r for r in out}
    assert set(by_metric) == {"distill_mos", "utmos"}
    # the same numbers as the agreement code on the system means
    means = frame[frame.metric == "distill_mos"].groupby("model")["value"].mean().to_frame("distill_mos")
    mos = pd.DataFrame({"emotion_naturalness": level})
    direct = metric_mos_agreement(means, mos, {"distill_mos": True}, 3, "voice_cloning").iloc[0]
    assert by_metric["distill_mos"]["spearman"] == direct.spearman == 1.0
    assert by_metric["utmos"]["spearman"] == -1.0
    # the report's MOS-metric view compares the naturalness criterion with both predictors
    table = pd.DataFrame({"utmos": {"good": 1.0, "fair": 2.0, "poor": 3.0},
                          "distill_mos": {"good": 4.2, "fair": 3.1, "poor": 2.3}})
    mos_table = pd.DataFrame({"mos": list(level.values())},
                             index=pd.MultiIndex.from_tuples([(m, "emotion_naturalness") for m in level],
                                                             names=["model", "criterion"]))
    joint = {r["metric"]: r for r in mos_metric_agreement(mos_table, table, "voice_cloning")}
    assert joint["distill_mos"]["spearman"] == 1.0 and joint["distill_mos"]["best_by_metric"] == "good"
    assert joint["utmos"]["spearman"] == -1.0

"""The cross-task evaluate modules load offline and return the library's results."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.metrics.crosstask import DifficultyMetric, difficulty_agreement, emotion_difficulty, source_difficulty

ROOT = Path(__file__).resolve().parents[1]
SPEC = [["AD-CSIM", "audio_driven", "csim", "complement"], ["VD-LPIPS", "vision_driven", "lpips", "retain"],
        ["VM-MAD", "matting", "mad", "retain"]]


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")


def _rows():
    rng = np.random.default_rng(0)
    tokens = ["happy", "angry", "sad", "fearful", "disgusted", "surprised", "neutral"]
    clips = [f"actor_{a:04d}_{t}_action_01_script_001" for a in (1, 2) for t in tokens]
    out = []
    for task, metric, models in (("audio_driven", "csim", "ab"), ("audio_driven", "sync_c", "ab"),
                                 ("audio_driven", "sync_d", "ab"), ("vision_driven", "csim", "cd"),
                                 ("vision_driven", "lpips", "cd"), ("vision_driven", "psnr", "cd"),
                                 ("vision_driven", "ssim", "cd"), ("matting", "mad", "e")):
        for m in models:
            out += [{"model": m, "task": task, "clip_id": c, "metric": metric, "value": float(rng.uniform())}
                    for c in clips]
    return pd.DataFrame(out)


def _columns(frame):
    return {k: frame[k].tolist() for k in ("model", "task", "clip_id", "metric", "value")}


def _same(a, b):
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b)


def test_emotion_difficulty_and_agreement_modules():
    evaluate = pytest.importorskip("evaluate")
    rows = _rows()
    lib = emotion_difficulty(rows, [DifficultyMetric(*s) for s in SPEC])
    got = evaluate.load(str(ROOT / "metrics" / "emotion_difficulty")).compute(**_columns(rows), metrics=SPEC)
    for label in lib.D.columns:
        for emotion, value in lib.D[label].items():
            assert _same(got["D"][label][emotion], value)
    assert got["hardest"] == lib.hardest
    rho = evaluate.load(str(ROOT / "metrics" / "difficulty_agreement")).compute(**_columns(rows), metrics=SPEC)
    ref = difficulty_agreement(lib.D)
    assert rho["metrics"] == list(ref.columns)
    for a in ref.columns:
        for b in ref.columns:
            assert _same(rho["rho"][a][b], ref.loc[a, b])


def test_source_difficulty_module():
    evaluate = pytest.importorskip("evaluate")
    rows = _rows()
    got = evaluate.load(str(ROOT / "metrics" / "source_difficulty")).compute(**_columns(rows))
    lib = source_difficulty(rows)
    assert got["rho"] == pytest.approx(lib.rho) and got["slope"] == pytest.approx(lib.fit.slope)
    assert got["n_clips"] == 14 and len(got["pairs"]) == 14


# ----------------------------------------------------------------------------- one row + one function (#36)
def test_every_analysis_row_names_its_function_in_analyses():
    # (every row, per-clip metrics too, names its function: tests/test_dispatch.py)
    from hug_vis_dataset import analyses, catalog

    for spec in catalog.analyses():
        function = analyses.implementation(spec)
        assert callable(function) and function.__module__ == "hug_vis_dataset.analyses", spec.name
    with pytest.raises(ValueError, match="^x: implementation '' does not name its function"):
        catalog.MetricSpec("x", "x", (), catalog.ANALYSIS, True, (0.0, 1.0), "u")
    with pytest.raises(KeyError, match="is not an analysis"):
        analyses.implementation(catalog.spec("mad"))


def counting_analysis(frame, scale: float = 1.0) -> dict:
    """A stand-in analysis added as one catalog row (module-level: the row names it by import path)."""
    return {"n_rows": len(frame), "sum": float(frame["value"].sum()) * scale}


def test_a_new_analysis_is_one_row_plus_one_function(monkeypatch):
    # dispatch reads the table: a row the library has never heard of runs through the module door
    from dataclasses import replace

    from hug_vis_dataset import catalog, modules

    row = replace(catalog.spec("motion_difficulty"), name="row_count",
                  implementation=f"{__name__}:counting_analysis")
    monkeypatch.setitem(catalog._BY_NAME, "row_count", row)
    monkeypatch.setattr(catalog, "METRIC_NAMES", catalog.METRIC_NAMES | {"row_count"})
    rows = {"model": ["a", "b"], "task": ["matting"] * 2, "clip_id": ["c", "c"], "metric": ["mad"] * 2,
            "value": [0.25, 0.5]}
    assert modules.compute("row_count", **rows, scale=2.0) == {"n_rows": 2, "sum": 1.5}
    with pytest.raises(KeyError, match="is not an analysis"):
        modules.compute_analysis("mad", rows)

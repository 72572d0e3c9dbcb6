"""The emotion_accuracy evaluate module loads offline and returns the library's numbers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hug_vis_dataset.catalog import extras_of
from hug_vis_dataset.publish.release_info import requirements_lines

from hug_vis_dataset.metrics.emotion import emotion_accuracy

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")


def test_emotion_accuracy_module_matches_library():
    evaluate = pytest.importorskip("evaluate")
    module = evaluate.load(str(ROOT / "metrics" / "emotion_accuracy"))
    preds = ["Emotion: Surprise", "not angry", "她看起来很害怕", "I think she is disgusted, not angry", "sad"]
    refs = ["Surprised", "Angry", "fearful", "Disgusted", "Happy"]
    settings = ["video", "video", "text", "text", "audio"]
    got = module.compute(predictions=preds, references=refs, input_settings=settings)
    want = emotion_accuracy(preds, refs, settings)
    assert got["accuracy"] == want["accuracy"] == 0.6
    assert got["emotion_accuracy"] == pytest.approx(60.0)  # the scorer's rows, in Table 4's percent
    assert got["per_clip"] == [1.0, 0.0, 1.0, 1.0, 0.0] and got["n_ok"] == 5
    assert got["unparsed"] == 1 and got["confusion_matrix"] == want["confusion_matrix"]
    assert got["by_input_setting"]["Text"]["accuracy"] == 1.0


def test_module_card_front_matter():
    for name in ("emotion_accuracy", "emotion_difficulty", "difficulty_agreement", "source_difficulty"):
        folder = ROOT / "metrics" / name
        card = (folder / "README.md").read_text(encoding="utf-8")
        head = card.split("---")[1]
        for key in ("title:", "emoji:", "colorFrom:", "colorTo:", "sdk: gradio", "sdk_version: 6.31.0",
                    "app_file: app.py", "pinned: false", "- evaluate", "- metric", "description:"):
            assert key in head, (name, key)
        assert (folder / "requirements.txt").read_text().split() == requirements_lines("metric", extras_of([name]))
        assert "from hug_vis_dataset.space.metric_app import launch" in (folder / "app.py").read_text()
        # evaluate scans import lines: one import per line
        for line in (folder / f"{name}.py").read_text().splitlines():
            if line.startswith("import "):
                assert "," not in line, line

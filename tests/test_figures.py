"""Figures 8-11 are written as PNG and SVG with the marks the paper describes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.figures import (
    column_maxima,
    plot_agreement,
    plot_emotion_difficulty,
    plot_motion_difficulty,
    plot_source_difficulty,
)
from hug_vis_dataset.grid import EMOTION_NAMES


def _check(paths):
    assert [p.suffix for p in paths] == [".png", ".svg"]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in paths[1].read_text()


def test_fig8_boxes_every_column_maximum(tmp_path):
    D = pd.DataFrame({"A": [0.0, 1.0, 0.5, 1.0, 0.2, 0.3, 0.1], "B": [0.0] * 7,
                      "C": [np.nan, 0.0, 1.0, 0.5, 0.5, 0.5, 0.5]}, index=list(EMOTION_NAMES))
    assert column_maxima(D) == [(1, 0), (2, 2), (3, 0)]  # ties both boxed, constant column none
    paths = plot_emotion_difficulty(D, tmp_path / "fig8")
    _check(paths)
    assert paths[0].stat().st_size > 5000


def test_fig9_fig10_fig11(tmp_path):
    rho = pd.DataFrame([[1.0, -0.5], [-0.5, np.nan]], index=["a", "b"], columns=["a", "b"])
    _check(plot_agreement(rho, tmp_path / "fig9"))
    rng = np.random.default_rng(0)
    x = rng.uniform(size=60)
    _check(plot_source_difficulty(x, 0.8 * x + 0.1, tmp_path / "sub" / "fig10.png"))
    svg = (tmp_path / "sub" / "fig10.svg").read_text()
    assert "stroke-dasharray" in svg  # the dashed equality line
    assert "#ff0000" in svg  # the red OLS fit
    emotions = [EMOTION_NAMES[i % 7] for i in range(60)]
    _check(plot_motion_difficulty(x, x**2, emotions, tmp_path / "fig11"))
    assert "Neutral" in (tmp_path / "fig11.svg").read_text()
    with pytest.raises(ValueError, match="equally long"):
        plot_motion_difficulty(x, x[:5], emotions, tmp_path / "bad")
    with pytest.raises(ValueError, match="equally long"):
        plot_source_difficulty([], [], tmp_path / "bad")


def test_crosstask_figures_from_rows(tmp_path):
    from hug_vis_dataset.figures import crosstask_figures

    rng = np.random.default_rng(1)
    tokens = ["happy", "angry", "sad", "fearful", "disgusted", "surprised", "neutral"]
    clips = [f"actor_0001_{t}_action_01_script_00{s}" for t in tokens for s in (1, 2)]
    rows = []
    for task, metric, model in (("audio_driven", "csim", "a"), ("audio_driven", "sync_c", "a"),
                                ("audio_driven", "sync_d", "a"), ("vision_driven", "csim", "v"),
                                ("vision_driven", "lpips", "v"), ("vision_driven", "psnr", "v"),
                                ("vision_driven", "ssim", "v"), ("matting", "mad", "m")):
        rows += [{"model": model, "task": task, "clip_id": c, "metric": metric, "value": float(rng.uniform())}
                 for c in clips]
    from types import SimpleNamespace

    motion = SimpleNamespace(d_motion=rng.uniform(size=14), dtssd=rng.uniform(size=14),
                             emotions=[EMOTION_NAMES[i // 2] for i in range(14)])
    written = crosstask_figures(rows, tmp_path, motion=motion)
    assert sorted(written) == ["fig10", "fig11", "fig8", "fig9"]
    for paths in written.values():
        _check(paths)
    only_matting = [r for r in rows if r["task"] == "matting"]
    assert sorted(crosstask_figures(only_matting, tmp_path / "m")) == ["fig8", "fig9"]

"""Figures 8-11 are written as PNG and SVG with the marks the paper describes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.reporting.figures import (
    column_maxima,
    plot_agreement,
    plot_emotion_difficulty,
    plot_motion_difficulty,
    plot_source_difficulty,
)
from hug_vis_dataset.datamodel.grid import EMOTION_NAMES


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
    from hug_vis_dataset.reporting.figures import crosstask_figures

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


@pytest.fixture
def drawn(monkeypatch):
    """The Figures the plot functions would save (their artists, not their pixels)."""
    from hug_vis_dataset.reporting import figures

    captured = []
    monkeypatch.setattr(figures, "_save", lambda fig, stem: captured.append(fig) or [])
    return captured


def _missing(ax):
    hatched = [p for p in ax.patches if p.get_gid() == "missing"]
    texts = [(t.get_position(), t.get_text()) for t in ax.texts if t.get_text() == "n/a"]
    return sorted((int(p.get_y() + 0.5), int(p.get_x() + 0.5)) for p in hatched), sorted(
        (int(round(y)), int(round(x))) for (x, y), _ in texts), hatched


def test_fig8_and_fig9_draw_missing_cells_hatched_and_labelled_with_a_caption(drawn, tmp_path):
    from hug_vis_dataset.reporting.figure_style import MISSING_CAPTION, MISSING_HATCH

    D = pd.DataFrame({"A": [0.0, 1.0, np.nan], "B": [np.nan, 0.0, 1.0]}, index=["Happy", "Sad", "Angry"])
    plot_emotion_difficulty(D, tmp_path / "fig8")
    plot_agreement(pd.DataFrame([[1.0, np.nan], [np.nan, 1.0]], index=["A", "B"], columns=["A", "B"]),
                   tmp_path / "fig9")
    for fig, want in zip(drawn, ([(0, 1), (2, 0)], [(0, 1), (1, 0)])):
        ax = fig.axes[0]
        patches, texts, hatched = _missing(ax)
        assert patches == want and texts == want  # every NaN cell, and only those
        assert all(p.get_hatch() == MISSING_HATCH for p in hatched)
        assert ax.get_title() and ax.get_xlabel() == "Metric"  # a label, not the key
    fig8 = drawn[0].axes[0]
    assert sorted(t.get_text() for t in fig8.texts if t.get_text() != "n/a") == ["0.00", "0.00", "1.00", "1.00"]
    for name in ("fig8", "fig9"):
        caption = (tmp_path / f"{name}.caption.txt").read_text()
        assert caption.startswith("Fig. " + name[-1]) and MISSING_CAPTION in caption
    plot_emotion_difficulty(D.fillna(0.5), tmp_path / "full")
    assert MISSING_CAPTION not in (tmp_path / "full.caption.txt").read_text()  # said only when cells are missing


def test_fig10_fig11_units_titles_and_legends_outside_the_data(drawn, tmp_path):
    rng = np.random.default_rng(1)
    x = rng.uniform(size=40)
    plot_source_difficulty(x, 0.5 * x + 0.2, tmp_path / "fig10")
    emotions = [EMOTION_NAMES[i % 3] for i in range(40)]
    plot_motion_difficulty(x, 3 * x + 1, emotions, tmp_path / "fig11")
    for fig in drawn:
        ax = fig.axes[0]
        legend = ax.get_legend()
        assert legend is not None and legend.get_bbox_to_anchor().x0 > ax.get_window_extent().x1 - 1  # right of the axes
        assert ax.get_title().startswith(("Source difficulty (Fig. 10)", "Motion difficulty (Fig. 11)"))
    assert "×1e2" in drawn[1].axes[0].get_ylabel()  # dtSSD's unit, as the board prints it
    assert (tmp_path / "fig11.caption.txt").read_text().startswith("Fig. 11")

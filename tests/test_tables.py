"""Paper-style table rendering: best bold, second-best underlined, by direction, with ties and groups."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from hug_vis_dataset.presentation.tables import mark_ranks, render_table


@pytest.mark.parametrize(
    "values,higher,expected",
    [
        ([0.1, 0.3, 0.2], True, [None, "best", "second"]),
        ([0.1, 0.3, 0.2], False, ["best", None, "second"]),
        ([5.0, 5.0, 4.0, 3.0], True, ["best", "best", "second", None]),      # tie for best
        ([1.0, 2.0, 2.0, 3.0], False, ["best", "second", "second", None]),   # tie for second
        ([7.0, 7.0], True, ["best", "best"]),                                # single distinct value
        ([math.nan, 1.0, 2.0], True, [None, "second", "best"]),              # NaN never marked
        ([0.123, 0.124, 0.1], True, ["best", "best", "second"]),             # equal once rounded to 2 places
    ],
)
def test_mark_ranks(values, higher, expected):
    assert mark_ranks(values, higher, decimals=2) == expected


def _frame():
    return pd.DataFrame({
        "model": ["A", "B", "C", "D"],
        "csim": [0.71, 0.90, 0.90, 0.80],
        "sync_d": [8.9, 7.73, 7.73, 10.3],
    })


def test_markdown_directions_and_ties():
    text = render_table(_frame(), higher_is_better={"csim": True, "sync_d": False}, scales={"csim": 1, "sync_d": 1},
                        display={"csim": "CSIM", "sync_d": "Sync-D"})
    lines = text.splitlines()
    assert lines[0] == "| Model | CSIM ↑ | Sync-D ↓ |"
    assert lines[2] == "| A | 0.71 | <u>8.90</u> |"
    assert lines[3] == "| B | **0.90** | **7.73** |"
    assert lines[4] == "| C | **0.90** | **7.73** |"
    assert lines[5] == "| D | <u>0.80</u> | 10.30 |"


def test_latex_and_html_marks():
    latex = render_table(_frame(), higher_is_better={"csim": True, "sync_d": False}, fmt="latex",
                         scales={"csim": 1, "sync_d": 1}, caption="Table 5_x")
    assert r"B & \textbf{0.90} & \textbf{7.73} \\" in latex and r"D & \underline{0.80} & 10.30 \\" in latex
    assert r"\caption{Table 5\_x}" in latex and r"$\downarrow$" in latex
    html = render_table(_frame(), higher_is_better={"csim": True, "sync_d": False}, fmt="html",
                        scales={"csim": 1, "sync_d": 1})
    assert "<tr><td>A</td><td>0.71</td><td><u>8.90</u></td></tr>" in html
    assert "<td><b>0.90</b></td>" in html


def test_groups_rank_within_group_and_all():
    frame = pd.DataFrame({"model": ["a", "b", "c", "d", "e"],
                          "setting": ["Video", "Video", "Video", "Text", "Text"],
                          "emotion_accuracy": [0.3, 0.5, 0.4, 0.8, 0.7]})
    text = render_table(frame, group="setting", decimals=2)  # direction and x100 scale from MetricInfo
    lines = text.splitlines()
    assert lines[0] == "| Model | Acc. (%) ↑ |"
    assert lines[2] == "| *Video* |  |" and lines[6] == "| *Text* |  |"
    assert lines[3:6] == ["| a | 30.00 |", "| b | **50.00** |", "| c | <u>40.00</u> |"]
    assert lines[7:9] == ["| d | **80.00** |", "| e | <u>70.00</u> |"]
    overall = render_table(frame, group="setting", rank_within="all").splitlines()
    assert "| b | 50.00 |" in overall and "| d | **80.00** |" in overall and "| e | <u>70.00</u> |" in overall


def test_long_frame_equals_wide_frame():
    wide = _frame()
    long = wide.melt(id_vars="model", var_name="metric", value_name="value")
    kwargs = dict(higher_is_better={"csim": True, "sync_d": False}, scales={"csim": 1, "sync_d": 1})
    assert render_table(long, **kwargs) == render_table(wide, **kwargs)
    with pytest.raises(ValueError, match="duplicate"):
        render_table(pd.concat([long, long.iloc[:1]]), **kwargs)


def test_errors_and_missing_values():
    frame = pd.DataFrame({"model": ["a", "b"], "x": [1.0, float("nan")]})
    assert "| b | – |" in render_table(frame, higher_is_better={"x": True})
    with pytest.raises(KeyError, match="higher_is_better"):
        render_table(frame)
    with pytest.raises(ValueError, match="fmt"):
        render_table(frame, higher_is_better={"x": True}, fmt="rst")
    with pytest.raises(ValueError, match="lacks column"):
        render_table(frame, row_label="system", higher_is_better={"x": True})

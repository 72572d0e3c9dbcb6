"""The paper's Tables 4-11 as data: every value matches the paper text; leaderboards mark leaders."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from hug_vis_dataset.datamodel import paper_tables as pt

PAPER = Path(__file__).resolve().parents[1] / ".." / "shared" / "reference" / "001_533d7c1c1ccda447.txt"
EXPECTED_ROWS = {4: 34, 5: 8, 6: 8, 7: 10, 8: 10, 9: 7, 10: 6, 11: 9}
NUMBER = re.compile(r"^-?\d+(\.\d+)?$")


def _paper_table_rows(lines: list[str], number: int) -> list[tuple[str, list[str]]]:
    """(model, printed values) per data row of one table, re-read straight from the paper text."""
    start = next(i for i, line in enumerate(lines) if line.startswith(f"Table {number}:"))
    rows = []
    for line in lines[start + 2:]:  # skip caption and header
        if line.startswith("Table ") or ("\t" not in line and len(line) > 60):
            break
        cells = line.split("\t")
        numeric = [c for c in cells if NUMBER.match(c.strip())]
        if not numeric:
            continue  # group label (Open-source, Head Animation, Video + Text, ...)
        # The model name is printed with a citation after a no-break space.
        rows.append((re.split(r"\s\(", cells[0].replace("\u00a0", " "))[0].strip(), numeric))
    return rows


@pytest.mark.skipif(not PAPER.is_file(), reason=f"paper text not present at {PAPER}")
def test_every_value_matches_the_paper_text():
    lines = [line for line in PAPER.read_text(encoding="utf-8").splitlines() if line.strip()]
    frame = pt.paper_frame()
    for number, expected_count in EXPECTED_ROWS.items():
        paper_rows = _paper_table_rows(lines, number)
        assert len(paper_rows) == expected_count, number
        keys = [m["key"] for m in pt.table_info(number)["metrics"]]
        ours = frame[frame.table == number]
        assert len(ours) == expected_count * len(keys)
        # Rows in the data follow the paper's row order, metrics its column order.
        for row_index, (model, printed) in enumerate(paper_rows):
            block = ours.iloc[row_index * len(keys):(row_index + 1) * len(keys)]
            assert block.model.unique().tolist() == [model]
            assert block.metric.tolist() == keys
            assert block.text.tolist() == printed, (number, model)
            assert block.value.tolist() == [float(p) for p in printed]


@pytest.mark.skipif(not PAPER.is_file(), reason=f"paper text not present at {PAPER}")
def test_directions_match_the_header_arrows():
    lines = [line for line in PAPER.read_text(encoding="utf-8").splitlines() if line.strip()]
    for number in EXPECTED_ROWS:
        start = next(i for i, line in enumerate(lines) if line.startswith(f"Table {number}:"))
        header = lines[start + 1].split("\t")
        arrows = [("uparrow" in h) for h in header if "arrow" in h]
        assert arrows == [m["higher_is_better"] for m in pt.table_info(number)["metrics"]]


def test_groups_are_recorded():
    frame = pt.paper_frame()
    t4 = frame[frame.table == 4]
    assert sorted(t4.input_setting.unique()) == sorted(
        ["Image frame", "Video", "Audio", "Text", "Video + Audio", "Video + Text", "Video + Audio + Text"])
    t7 = frame[(frame.table == 7) & (frame.metric == "fid")]
    assert t7.groupby(["source", "paradigm"]).size().to_dict() == {
        ("closed", ""): 2, ("open", "Body Animation"): 4, ("open", "Head Animation"): 4}
    assert frame[(frame.table == 9) & (frame.source == "reference")].model.unique().tolist() == ["Real audio"]


def _reference_marks(values, higher):
    """Independent re-derivation: rank distinct finite values, best first."""
    distinct = sorted(set(v for v in values if not math.isnan(v)))
    if higher:
        distinct = distinct[::-1]
    return ["best" if not math.isnan(v) and v == distinct[0] else
            "second" if not math.isnan(v) and len(distinct) > 1 and v == distinct[1] else None for v in values]


@pytest.mark.parametrize("values,higher", [
    ([1.0, 2.0, 3.0], True), ([1.0, 2.0, 3.0], False), ([5.0, 5.0, 4.0, 3.0], True), ([2.0], False),
    ([float("nan"), 2.0, 2.0], True), ([3.0, float("nan"), 1.0, 2.0, 1.0], False),
])
def test_one_ranking_rule_against_reference(values, higher):
    """The Space's paper tables use the report's ranker (exact values: the paper's are as printed)."""
    from hug_vis_dataset.presentation.tables import mark_ranks

    assert mark_ranks(values, higher, None) == _reference_marks(values, higher)


def _board(table, **filters):
    from hug_vis_dataset.leaderboard import board, paper_rows

    view = board(paper_rows(pt.paper_frame()), table, **filters).frame.set_index("Model")
    return view.rename(columns=lambda c: c.split(" ↑")[0].split(" ↓")[0])  # the paper's headers


def test_leaderboard_marks_match_the_papers_statements():
    t11 = _board(11)
    # Section 5.4: BiRefNet best on every criterion, MatAnyone 2 second throughout.
    for column in ("MAD", "MSE", "dtSSD", "Grad", "Conn"):
        assert t11.loc["BiRefNet", column].endswith("(best)")
        assert t11.loc["MatAnyone 2", column].endswith("(second)")
    t5 = _board(5)
    assert t5.loc["Sonic", "Sync-D"] == t5.loc["LatentSync", "Sync-D"] == "7.73 (best)"
    assert t5.loc["Ditto", "CSIM"] == "0.904 (best)"
    # Table 9: the real-audio reference is shown but never ranked.
    t9 = _board(9)
    assert t9.loc["Real audio", "Speaker Sim."] == "0.990"
    assert t9.loc["CosyVoice 3", "Speaker Sim."] == "0.856 (best)"


def test_filters_recompute_marks_on_the_view():
    head = _board(7, source="open", paradigm="Head Animation")
    assert list(head.index) == ["HunyuanPortrait", "X-NeMo", "PersonaLive!", "AniPortrait"]
    # Section 5.2: X-NeMo leads LPIPS, PSNR, FID; AniPortrait leads CSIM and SSIM within Head Animation.
    assert head.loc["X-NeMo", "LPIPS"] == "0.520 (best)"
    assert head.loc["AniPortrait", "CSIM"] == "0.884 (best)"
    closed = _board(7, source="closed")
    assert closed.loc["Kling", "PSNR"] == "16.41 (best)" and closed.loc["Vidu", "PSNR"] == "15.96 (second)"
    video = _board(4, input_setting="Video")
    assert video.loc["MiniCPM-o 4.5", "Acc. (%)"] == "48.52 (best)"
    assert _board(7, source="nonexistent").empty
    with pytest.raises(KeyError, match="no Table 3"):
        _board(3)

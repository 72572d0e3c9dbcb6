"""Every surface applies the statistics engine's one set of rules to the same store and states the same numbers.

One store per design, 2 and 30 actors: three complete vision-driven runs and one partial run (a copy of a system's
predictions with an actor's clips removed), scored by the toolkit, and the synthetic release's simulated raters, one
of whom quality control flags. Rendered by the board (the Space's leaderboard), ``hugvis leaderboard show``, the
Space's Findings, and ``hugvis report --mos --preferences``; the test checks that they state:

* the same values and the same verdict marks for every stored row, and the same best / second marks (drawn only where
  the verdicts separate the rows: never with 2 actors);
* the same comparison sets: the partial run is compared with nothing (alone in its set), is left out of the analyses
  that pool the systems, and its missing clips are counted as missing, never as failed;
* the same MOS of the raters quality control keeps, on the board and in the report, and the same joint table in the
  Space's Findings and the report;
* with 2 actors every interval carries the small-sample mark and its words; with 30 actors none does, and some
  stored row is bold.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest

METRICS = ("psnr", "ssim")
PARTIAL = "vis_part"


def _store(root: Path, actors: int):
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize

    release = root / "release"
    synthesize(release, actors=actors, emotions=["Happy"], actions=1, scripts=2, seconds=0.3, size=(48, 32), seed=5)
    systems = release / "simulated_systems" / "vision_driven"
    for system in sorted(p for p in systems.iterdir() if p.is_dir()):
        evaluate_submission("vision_driven", system, system.name, release, root / "results", progress=False,
                            metrics=METRICS)
    partial = root / "partial"
    shutil.copytree(systems / "vis_fair", partial)
    for path in partial.glob("actor_0002_*"):
        path.unlink()  # every clip of actor 2 missing
    evaluate_submission("vision_driven", partial, PARTIAL, release, root / "results", progress=False, metrics=METRICS)
    return release, root / "results"


@pytest.fixture(scope="module", params=[2, 30], ids=["two-actors", "thirty-actors"])
def world(request, tmp_path_factory):
    from hug_vis_dataset.reporting.report import build_report
    from hug_vis_dataset.space.app import Explorer

    root = tmp_path_factory.mktemp(f"rules{request.param}")
    release, results = _store(root, request.param)
    systems = release / "simulated_systems"
    report = build_report([results], root / "report", formats=("md",), figures=False,
                          mos=systems / "mos_ratings.csv", preferences=systems / "pairwise_ratings.csv")
    space = Explorer(release, results, work_dir=root / "work")
    return {"actors": request.param, "release": release, "results": results, "report": report.markdown,
            "space": space, "root": root}


def _table(lines: list[str], start: int) -> list[list[str]]:
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        if not set(line) <= set("|-: "):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def _report_table(markdown: str, heading: str) -> dict[str, dict[str, str]]:
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    rows = _table(lines, start)
    header = rows[0]
    return {r[0]: dict(zip(header, r)) for r in rows[1:]}


def _cell(text: str) -> tuple[str, str, str]:
    """(value as printed, verdict/small-sample marks, rank mark) of a report or board cell."""
    rank = "best" if text.startswith("**") or "(best)" in text else "second" if "<u>" in text or "(second)" in text \
        else ""
    plain = re.sub(r"\*\*|</?u>| \((best|second)\)", "", text)
    value = plain.split()[0]
    marks = "".join(ch for ch in plain if ch in "≈?")
    return value, marks, rank


def _cli_board(results: Path, table: int) -> dict[str, dict[str, str]]:
    from hug_vis_dataset.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["leaderboard", "show", str(results), "--table", str(table), "--show", "synthetic"]) == 0
    rows = _table(out.getvalue().splitlines(), 0)
    return {r[0]: dict(zip(rows[0], r)) for r in rows[1:]}


def test_tables_state_the_same_values_marks_and_comparison_sets(world):
    from hug_vis_dataset import catalog

    frame, notes, _ = world["space"].leaderboard("Table 7: x", ["paper", "synthetic demo"])
    board = {row["Model"]: row for row in frame.to_dict("records")}
    cli = _cli_board(world["results"], 7)
    report = _report_table(world["report"], "Table 7 (Vision-driven video generation), stored results")
    stored = ["vis_fair", "vis_good", "vis_poor", PARTIAL]
    for metric in METRICS:
        column = catalog.spec(metric).header
        for model in stored:
            on_board, on_cli, in_report = (_cell(board[model][column]), _cell(cli[model][column]),
                                           _cell(report[model][column]))
            assert on_board == on_cli, (metric, model)
            # The report prints the interval beside the value (and its small-sample mark): same value, verdict
            # marks and rank marks as the board.
            assert in_report[0] == on_board[0] and in_report[2] == on_board[2], (metric, model, in_report, on_board)
            assert set(on_board[1]) <= set(in_report[1]), (metric, model, in_report, on_board)
        # The partial run is alone in its comparison set: no verdict, no rank mark.
        assert _cell(board[PARTIAL][column])[1:] == ("", "")
    assert board[PARTIAL][catalog.label_of("n_failed")] == "0" and board[PARTIAL]["Coverage"].startswith("50.0%" if world["actors"] == 2
                                                                                       else "96.7%")
    assert "ranked only among runs that miss clips too" in notes
    # Metrics the runs did not score (hugvis evaluate --metrics psnr,ssim) are said to be that, not failures.
    assert "every clip failed" not in notes and "LPIPS ↓: not scored in this run" in notes
    assert f"missing clip(s) (never predicted) in {PARTIAL}" in world["report"]
    bold = [m for m in stored for metric in METRICS if _cell(board[m][catalog.spec(metric).header])[2] == "best"]
    if world["actors"] == 2:
        assert not bold  # two actors separate nothing: no winner is drawn
        assert "? after an interval: 2 actors: fewer than 6, so no 95% interval or test" in world["report"]
        for model in stored[:3]:
            assert all(_cell(report[model][catalog.spec(m).header])[1].endswith("?") for m in METRICS)
    else:
        assert bold  # thirty actors: the best system is separated from the next
        assert "? after an interval" not in world["report"].split("### Significance")[0]


def test_findings_compare_the_boards_pairs_and_leave_the_partial_run_out_of_pooled_analyses(world):
    from hug_vis_dataset.space.app import FINDINGS

    space = world["space"]
    findings, _, _ = space.findings(FINDINGS[1], "vision_driven")
    pairs = {(r["Metric"], r["Model"], r["Next model"]): r["Verdict"] for r in findings.to_dict("records")}
    assert pairs and not any(PARTIAL in key for key in pairs)  # alone in its set: compared with nothing
    lines = world["report"].split("### Significance between leaderboard neighbours")[1].split("\n### ")[0]
    rows = _table(lines.splitlines(), 0)
    header = rows[0]
    in_report = {(r[header.index("Metric")], r[header.index("Model")], r[header.index("Next model")]):
                 r[header.index("Verdict")] for r in rows[1:]}
    assert in_report == pairs
    crosstask = space.crosstask("Emotion difficulty (Fig. 8)")[2]
    assert f"{PARTIAL} (partial run: " in crosstask and PARTIAL not in space.crosstask_models()
    assert f"{PARTIAL} (partial run: " in world["report"].split("## Cross-task analyses")[1]


def test_the_mos_and_the_joint_table_count_the_same_raters_everywhere(world):
    import pandas as pd

    from hug_vis_dataset.reporting.joint import joint_wide
    from hug_vis_dataset.space.app import FINDINGS
    from hug_vis_dataset.studies.human_metric import human_metric_tables
    from hug_vis_dataset.studies.judgments import counted_ratings
    from hug_vis_dataset.studies.mos import mos_table

    ratings_path = world["release"] / "simulated_systems" / "mos_ratings.csv"
    kept, qc = counted_ratings(ratings_path)
    assert qc.excluded  # the careless rater is flagged, and left out below
    hand = mos_table(kept)["mos"]
    frame, notes, _ = world["space"].leaderboard("Table 8: x", ["paper", "synthetic demo"])
    board = {row["Model"]: row for row in frame.to_dict("records")}
    report = _report_table(world["report"], "Table 8-shaped subjective results")
    for system in ("vis_fair", "vis_good", "vis_poor"):
        cell = board[f"{system} (simulated raters)"]["ID Similarity ↑ (1-5)"]
        value = float(_cell(cell)[0])
        assert value == pytest.approx(hand[(system, "id_similarity")], abs=0.005)
        assert _cell(report[system]["ID Similarity ↑"])[0] == _cell(cell)[0]
        # the same interval on the board and in the report (one replicate count, one set of raters)
        assert re.search(r"\[[0-9.]+, [0-9.]+\]", cell).group(0) in report[system]["ID Similarity ↑"]
    assert "1 flagged" in notes and "flagged" in world["report"].split("## Subjective study (MOS)")[1]
    table, _, message = world["space"].findings(FINDINGS[3], "vision_driven")
    rows = world["space"].pooled_rows()[0]
    library = human_metric_tables(rows, kept, tasks=("vision_driven",), all_raters=True)
    pd.testing.assert_frame_equal(table.reset_index(drop=True), joint_wide(library, "vision_driven"))
    assert PARTIAL not in set(table["System"])
    joint_md = world["report"].split("### Automatic metrics and human judgment jointly")[1]
    for cell in table["PSNR"]:
        assert cell in joint_md
    if world["actors"] == 2:
        assert all(cell.count("?") >= 1 for cell in table["PSNR"]) and "fewer than 6" in message
    else:
        assert not any(" ?" in cell for cell in table["PSNR"])

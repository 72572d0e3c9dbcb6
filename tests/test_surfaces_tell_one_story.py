"""Every surface states the same verdict for the same comparison (hug_vis_dataset.verdicts).

One store of stored runs is read by the four surfaces a researcher reads: the board (the Space's leaderboard), the
Space's Findings ("Significance between neighbours"), the report's Findings section and ``hugvis leaderboard
show``. Each pair of systems one surface compares carries one verdict: separable (no mark), not separable (≈) or
cannot tell (?); where two surfaces show the same pair, they must say the same. Two stores: six actors (the test
can decide: separable and not separable both occur) and two actors (it cannot: every pair says cannot tell).
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from hug_vis_dataset.verdicts import CANNOT_TELL, MARKS, NOT_SEPARABLE, SEPARABLE

MARK_WORD = {"≈": NOT_SEPARABLE, "?": CANNOT_TELL}


def _store(root: Path, actors: int) -> tuple[Path, Path]:
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize

    release = root / "release"
    synthesize(release, actors=actors, emotions=["Happy"], actions=1, scripts=2, seconds=0.3, size=(48, 32), seed=2)
    systems = release / "simulated_systems" / "vision_driven"
    for system in sorted(p for p in systems.iterdir() if p.is_dir()):
        evaluate_submission("vision_driven", system, system.name, release, root / "results", progress=False)
    return release, root / "results"


@pytest.fixture(scope="module", params=[6, 2], ids=["six-actors", "two-actors"])
def store(request, tmp_path_factory):
    return _store(tmp_path_factory.mktemp(f"story{request.param}"), request.param), request.param


def _board_pairs(frame, column: str) -> dict:
    """(model, next model) -> verdict of the synthetic rows of one board column, best first."""
    rows = frame[frame["Origin"] == "synthetic demo"]
    cells = {m: str(c).split() for m, c in zip(rows["Model"], rows[column]) if str(c).strip()}
    higher = "↑" in column
    ranked = sorted(cells, key=lambda m: (-float(cells[m][0]) if higher else float(cells[m][0]), m))
    return {(a, b): MARK_WORD.get(cells[a][1] if len(cells[a]) > 1 else "", SEPARABLE)
            for a, b in zip(ranked, ranked[1:])}


def _findings_pairs(frame, label: str) -> dict:
    mine = frame[frame["Metric"] == label]
    return {(a, b): v for a, b, v in zip(mine["Model"], mine["Next model"], mine["Verdict"])}


def _markdown_rows(text: str, heading: str) -> list[list[str]]:
    """The cells of the Markdown table rows under a heading (up to the next heading)."""
    section = text.split(heading, 1)[1].split("\n### ", 1)[0]
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("|") and not set(line) <= set("|-: ")]


def test_board_findings_report_and_cli_state_the_same_verdicts(store, tmp_path):
    (release, results), actors = store
    from hug_vis_dataset import catalog
    from hug_vis_dataset.cli import main
    from hug_vis_dataset.reporting.report import build_report
    from hug_vis_dataset.space.app import Explorer

    space = Explorer(release, results, work_dir=tmp_path / "work")
    label = next(t for t in space.table_labels() if t.startswith("Table 7"))
    board, notes, _ = space.leaderboard(label, ["paper", "synthetic demo"])
    findings, _, summary = space.findings("Significance between neighbours", "vision_driven")
    report = build_report([results], tmp_path / "report", formats=("md",), n_boot=0, figures=False).markdown
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["leaderboard", "show", str(results), "--table", "7", "--show", "synthetic"]) == 0
    cli_rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in out.getvalue().splitlines()
                if line.startswith("|") and not set(line) <= set("|-: ")]
    cli_header, cli_body = cli_rows[0], cli_rows[1:]
    report_rows = _markdown_rows(report, "### Significance between leaderboard neighbours")
    report_header = report_rows[0]

    seen_words = set()
    for metric in ("psnr", "ssim"):
        spec = catalog.spec(metric)
        column = spec.header
        on_board = _board_pairs(board, column)
        in_findings = _findings_pairs(findings, spec.label)
        report_pairs = {(r[report_header.index("Model")], r[report_header.index("Next model")]):
                        r[report_header.index("Verdict")] for r in report_rows[1:]
                        if r[report_header.index("Metric")] == spec.label}
        import pandas as pd

        cli_frame = pd.DataFrame(cli_body, columns=cli_header)
        on_cli = _board_pairs(cli_frame, column)
        assert on_board == on_cli, metric
        assert in_findings == report_pairs, metric
        shared = set(on_board) & set(in_findings)
        assert shared, (metric, on_board, in_findings)  # the surfaces compare the same neighbours here
        for pair in shared:
            assert on_board[pair] == in_findings[pair], (metric, pair, on_board[pair], in_findings[pair])
        seen_words |= set(in_findings.values())
    if actors == 2:  # absence of evidence everywhere, and said so
        assert seen_words == {CANNOT_TELL}
        assert f"{MARKS[CANNOT_TELL]} cannot tell against the next-ranked row: 2 actors cannot reach p < 0.05" in notes
        assert re.search(r"0 separable, 0 not separable, \d+ cannot tell", summary), summary
    else:
        assert SEPARABLE in seen_words  # six actors can tell a good system from a poor one

"""What a person reads about a run scored over several samples per clip, on every surface: the board's seed spread,
the report's "Seeds" block, rank-stability figure and the variance decomposition's sample term, the Space's clip
viewer, and an analysis module fed the stored rows.

Planted truth: the synthetic release's ``matte_seeded`` (``simulated_systems/seeded/matting``) gives three samples
per clip with strengths 0.55, 0.65 and 0.75, so its per-clip sample means lie between ``matte_fair`` (0.45) and
``matte_poor`` (0.85), its samples differ (a sample term above 0), and its seed spread is what the stored samples
give when worked out by hand.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset import catalog
from hug_vis_dataset.datamodel.layout import SIMULATED_SEEDED_DIR, SIMULATED_SYSTEMS_DIR
from hug_vis_dataset.datamodel.results import SAMPLE_COLUMN
from hug_vis_dataset.scoring.runner import evaluate_submission
from hug_vis_dataset.scoring.runs import read_run


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from hug_vis_dataset.synth.generate import synthesize

    root = tmp_path_factory.mktemp("seed_surfaces")
    release = root / "release"
    synthesize(release, actors=2, emotions=["Happy", "Sad"], actions=1, scripts=2, seconds=0.4, size=(64, 36))
    systems = release / SIMULATED_SYSTEMS_DIR
    results = root / "results"
    folders = [*sorted(p for p in (systems / "matting").iterdir() if p.is_dir()),
               systems / SIMULATED_SEEDED_DIR / "matting" / "matte_seeded"]
    for folder in folders:
        evaluate_submission("matting", folder, folder.name, release, out=results, progress=False)
    return release, results


def _hand_mean_sd(stored: pd.DataFrame, metric: str) -> tuple[float, float]:
    """The seed spread worked out by hand: per clip the unbiased variance over its samples."""
    part = stored[(stored["metric"] == metric) & (stored["status"] == "ok")]
    variances = [np.var(g["value"].to_numpy(), ddof=1) for _, g in part.groupby("clip_id")]
    return float(np.sqrt(np.mean(variances))), float(np.sqrt(np.sum(variances)) / len(variances))


def test_the_planted_seeded_system_ranks_between_fair_and_poor(world):
    _, results = world
    mad = {name: read_run(results / "matting" / name).table.iloc[0]["mad"]
           for name in ("matte_good", "matte_fair", "matte_seeded", "matte_poor")}
    assert mad["matte_good"] < mad["matte_fair"] < mad["matte_seeded"] < mad["matte_poor"]
    run = read_run(results / "matting" / "matte_seeded")
    assert run.samples_per_clip == 3 and run.summary["coverage"]["samples"]["min"] == 3


def test_the_board_shows_the_seed_spread_beside_the_value(world):
    from hug_vis_dataset.leaderboard.board import board, paper_rows, stored_rows
    from hug_vis_dataset.leaderboard.seed_cells import SEED_NOTE
    from hug_vis_dataset.datamodel.paper_tables import paper_frame
    from hug_vis_dataset.scoring.runs import scan_runs

    _, results = world
    runs, damaged = scan_runs(results)
    assert not damaged
    frame = pd.concat([paper_rows(paper_frame()), stored_rows(runs)], ignore_index=True)
    view = board(frame, 11, origins=("paper", "synthetic"))
    row = view.frame[view.frame["Model"].str.contains("matte_seeded")].iloc[0]
    header = catalog.spec("mad").header
    stored = pd.read_parquet(results / "matting" / "matte_seeded" / "rows.parquet")
    _, mean_sd = _hand_mean_sd(stored, "mad")
    assert f"±{catalog.spec('mad').printed(mean_sd * catalog.spec('mad').paper_scale)} (3 seeds)" in row[header]
    assert any(SEED_NOTE.split(":")[0] in note for note in view.notes)
    plain = view.frame[view.frame["Model"].str.contains("matte_good")].iloc[0]
    assert "seeds" not in plain[header]


def test_the_report_has_a_seeds_block_a_figure_and_the_sample_term(world, tmp_path):
    from hug_vis_dataset.reporting.report import build_report

    _, results = world
    out = tmp_path / "report"
    build_report([results], out, figures=True)
    text = (out / "report.md").read_text(encoding="utf-8")
    block = text.split("### Seeds: runs scored over several samples per clip", 1)[1].split("\n### ", 1)[0]
    assert "matte_seeded" in block and "Share kept" in block and "Seed SD of the mean" in block
    # the rank-stability rows are the table's neighbour pairs that involve the seeded system, in the table's order
    mad = [line.split(" | ") for line in block.splitlines() if line.startswith("| MAD | ")]
    assert [(cells[1], cells[2]) for cells in mad] == [("matte_fair", "matte_seeded"), ("matte_seeded", "matte_poor")]
    assert all(0.5 <= float(cells[4]) <= 1.0 for cells in mad)  # the planted gaps exceed the seed noise
    assert (out / "figures" / "rank_stability_matting.png").is_file()
    variance = text.split("Condition-factor decomposition of variance", 1)[1].split("\n### ", 1)[0]
    assert "Sample (seed)" in variance
    matting = text.split("## Video matting (Table 11", 1)[1].split("\n## ", 1)[0]
    assert "- matte_seeded: each clip's value is the mean over its 3 samples (a stochastic model's seeds)" in matting


def test_the_variance_module_reads_the_samples_and_the_other_analyses_their_means(world):
    from hug_vis_dataset.modules import compute

    _, results = world
    rows = pd.concat([pd.read_parquet(p) for p in sorted((results / "matting").glob("*/rows.parquet"))],
                     ignore_index=True)
    rows[SAMPLE_COLUMN] = rows[SAMPLE_COLUMN].fillna(0).astype(int)
    columns = {c: rows[c].tolist() for c in rows.columns}
    out = compute("variance_decomposition", metric_name="mad", **columns)
    assert out["shares"]["sample"] > 0
    assert sum(v for v in out["shares"].values() if v == v) == pytest.approx(1.0)
    # the same rows as every table reads them (one row per clip, the mean over its samples): no sample term
    per_clip = pd.concat([read_run(p.parent).rows for p in sorted((results / "matting").glob("*/rows.parquet"))],
                         ignore_index=True)
    plain_columns = {c: per_clip[c].tolist() for c in per_clip.columns}
    plain = compute("variance_decomposition", metric_name="mad", **plain_columns)
    assert "sample" not in plain["shares"]
    # every other analysis reads the per-clip means: the same answer from the samples as from their means
    tests = compute("neighbour_significance", metric_name="mad", **columns)
    assert tests == compute("neighbour_significance", metric_name="mad", **plain_columns)
    assert any("matte_seeded" in (t["model"], t["next_model"]) for t in tests["tests"])


def test_the_clip_viewer_says_which_sample_it_shows(world):
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.space.viewer import clip_view

    release, results = world
    run = read_run(results / "matting" / "matte_seeded")
    clip = str(run.rows["clip_id"].iloc[0])
    view = clip_view(Release(release), run, clip, 0, "mad")
    assert "Scored over 3 samples" in view.text and "(sample 2)" in view.text
    assert view.output is not None and view.curve is not None
    stored = pd.read_parquet(results / "matting" / "matte_seeded" / "frames.parquet")
    first = stored[(stored["clip_id"] == clip) & (stored["metric"] == "mad") & (stored["frame"] == 0)]
    assert view.curve["value"].iloc[0] == pytest.approx(first["value"].mean())


def test_an_upload_of_several_samples_is_checked_scored_and_stored_as_samples(world, tmp_path):
    """The Space's Score tab: a zip of ``<clip>/sample_<k>/`` matting folders passes the layout check on names alone
    and is scored and stored as a run of several samples per clip, whose table is the per-clip sample mean."""
    import os
    import zipfile

    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from hug_vis_dataset.space.app import Explorer

    release, _ = world
    seeded = release / SIMULATED_SYSTEMS_DIR / SIMULATED_SEEDED_DIR / "matting" / "matte_seeded"
    upload = tmp_path / "seeded.zip"
    with zipfile.ZipFile(upload, "w") as archive:
        for clip in sorted(p for p in seeded.iterdir() if p.is_dir()):
            for png in sorted(clip.rglob("*.png")):
                archive.write(png, f"matte_seeded/{png.relative_to(seeded).as_posix()}")
    store = tmp_path / "store"
    store.mkdir()
    explorer = Explorer(release, store, work_dir=tmp_path / "work")
    check = explorer.check_upload("matting", str(upload))
    assert "match the video matting layout" in check and "do not" not in check, check
    message, table, _ = explorer.score("matting", "uploaded_seeds", str(upload))
    assert message.startswith("Scored "), message
    run = read_run(store / "matting" / "uploaded_seeds")
    assert run.samples_per_clip == 3
    # the same samples scored by hugvis evaluate give the same table
    reference = read_run(world[1] / "matting" / "matte_seeded")
    pd.testing.assert_series_equal(run.table.iloc[0], reference.table.iloc[0], check_names=False)


def test_the_spaces_findings_tab_shows_the_seeds_and_the_sample_term_as_the_report_does(world, tmp_path):
    """The Space's Findings tab reads the same samples as the report: its variance table has the sample (seed) term
    with the report's shares, and its Seeds finding the report's rank-stability rows, the seed spread and a figure."""
    import os

    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from hug_vis_dataset.reporting import findings as rf
    from hug_vis_dataset.reporting.report import load_results
    from hug_vis_dataset.space.app import FINDINGS, Explorer

    release, results = world
    explorer = Explorer(release, results, work_dir=tmp_path / "work")
    table, png, message = explorer.findings(FINDINGS[0], "matting")
    sample_row = table[table.iloc[:, 0] == "Sample (seed)"]
    assert len(sample_row) == 1
    samples: dict = {}
    rows, *_ = load_results([results], samples=samples)
    frame, _, _ = rf.variance_frame(rows, "matting", samples=samples)
    report = rf.variance_table(frame).round(4)
    assert sample_row.iloc[0, 1:].tolist() == report.loc["Sample (seed)"].tolist()

    table, png, message = explorer.findings(FINDINGS[4], "matting")
    assert png is not None and Path(png).is_file()
    assert "Seed spread" in message and "matte_seeded" in message
    pairs = list(zip(table["Model"], table["Next model"]))
    assert ("matte_fair", "matte_seeded") in pairs and ("matte_seeded", "matte_poor") in pairs
    _, stability, _, _ = rf.seeds_frames(rows[rows["task"] == "matting"], "matting", samples)
    assert table["Share kept"].tolist() == stability["Share kept"].round(3).tolist()
    # runs of one sample per clip say so; a task without runs says how to make one
    assert rf.seeds_frames(rows[rows["task"] == "matting"], "matting", {})[3] == (
        "Video matting: every run holds one sample per clip, so there is no seed statistic")
    _, _, why = explorer.findings(FINDINGS[4], "vision_driven")
    assert why.startswith("no per-clip values of Vision-driven video generation: score a submission")

"""The demo's baseline step (issue 17): ``hugvis predict --model baseline`` then ``hugvis evaluate`` for
every task, giving the report one real, non-simulated ``baseline`` row per task."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset import catalog
from hug_vis_dataset.predict.api import TASKS as PREDICT_TASKS
from hug_vis_dataset.reporting.report import build_report
from hug_vis_dataset.demo import score_baselines

# The fixture runs the whole demo on two clips (DNSMOS and Resemblyzer for five voice submissions):
# about 50 s on 2 cores.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    """The demo on two clips (Happy, scripts 1 and 2): simulated systems, then every task's baseline."""
    from hug_vis_dataset.demo import run_demo

    root = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as env:  # no downloadable weight can be found, as on a fresh install
        for var in [v for v in os.environ if v.startswith("HUGVIS_WEIGHT")]:
            env.delenv(var)
        # an empty folder (a missing one is an error: weights_dir), outside the demo's own folder
        env.setenv("HUGVIS_WEIGHTS_DIR", str(tmp_path_factory.mktemp("no-weights")))
        env.setenv("HUGVIS_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        env.setenv("HF_HUB_OFFLINE", "1")
        import contextlib
        import io

        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            run_demo(root, grid=dict(actors=1, emotions=["Happy"], actions=1, scripts=2, seconds=0.4,
                                     size=(64, 36)), build=False, n_boot=0, progress=False)
    PRINTED[root] = printed.getvalue()
    return root


#: What the demo printed, by its folder.
PRINTED: dict = {}


def test_the_demo_ends_with_the_reports_summary_and_where_to_look(scored):
    """The demo's last lines are what ``hugvis report`` prints (where the report is, its tables, Tables 6/8/10 from
    the simulated raters) and where to look next; the whole report (it was hundreds of lines) stays in report.md."""
    out = PRINTED[scored]
    tail = out.split("[4] writing the report ...", 1)[1].strip().splitlines()
    assert "# HUG-VIS results" not in out and len(tail) < 15, tail
    assert tail[0].startswith(f"report written to {scored / 'report'} (") and str(scored / "report" / "report.md") in tail[0]
    for line in ("- Table 4: Multimodal emotion recognition", "- Table 9: Voice cloning",
                 "- Table 10: Voice cloning, MOS", "- Table 11: Video matting"):
        assert line in tail, tail
    assert tail[-2].startswith("demo finished in") and tail[-2].endswith(f"report in {scored / 'report'}")
    assert tail[-1] == (f"leaderboard and clips in the browser: hugvis space --release {scored / 'release'} "
                        f"--results {scored / 'results'}")


def test_the_baseline_step_predicts_every_clip_of_every_task(scored, tmp_path):
    for task in PREDICT_TASKS:
        log = [json.loads(line) for line in
               (scored / "baselines" / task / ".hugvis-predict" / "log.jsonl").read_text().splitlines()]
        assert [entry["status"] for entry in log] == ["ok", "ok"], task
    # score_baselines alone (what run_demo calls) gives the same stored rows.
    done = score_baselines(scored / "release", tmp_path / "baselines", tmp_path / "results", progress=False,
                           tasks=["emotion", "matting"])
    for task in ("emotion", "matting"):
        assert done[task][0].counts() == {"ok": 2, "failed": 0, "skipped": 0}
        ours = pd.read_parquet(tmp_path / "results" / task / "baseline" / "rows.parquet")
        demo = pd.read_parquet(scored / "results" / task / "baseline" / "rows.parquet")
        key = ["clip_id", "metric"]
        pd.testing.assert_frame_equal(ours.sort_values(key).reset_index(drop=True),
                                      demo.sort_values(key).reset_index(drop=True))


def test_every_task_gets_a_baseline_row_with_no_failed_clip(scored):
    report = build_report([scored / "results"], None, n_boot=0, figures=False)
    for task in PREDICT_TASKS:
        coverage = json.loads((scored / "results" / task / "baseline" / "coverage.json").read_text())
        assert (coverage["grid_size"], coverage["predicted"], coverage["problems"], coverage["failed"]) == (2, 2, 0, {})
    # audio_driven's metrics (CSIM, Sync-C/D) all need downloadable weights: without them the report
    # has the "no metric could run" note instead of a table, as for the simulated systems.
    scorable = ["emotion", "vision_driven", "voice_cloning", "matting"]
    assert "## Audio-driven video generation (Table 5)\n\nNo metric of this task could run here:" in report.markdown
    assert sorted(report.tables) == sorted(scorable)
    for task in scorable:
        row = "baseline | Text" if task == "emotion" else "baseline"
        table = report.tables[task]
        assert row in table.index, task
        assert (table.loc[row, "n_ok"], table.loc[row, "n_failed"]) == (2, 0), task
    for task in scorable:  # the printed table of each task has the baseline row once, never ranked
        whole = report.markdown.split(f"\n## {catalog.task(task).label} (", 1)[1].split("\n## ", 1)[0]
        # the paper's table, then (voice cloning) the one beside it with the columns beyond the paper
        tables = whole.split("\n### ")
        assert len(tables) == (2 if task == "voice_cloning" else 1), task
        for section in tables:
            assert section.count("\n| baseline (built-in) |") == 1, task
            line = next(x for x in section.splitlines() if x.startswith("| baseline (built-in) |"))
            assert "**" not in line and "<u>" not in line, task


def test_baseline_values_match_what_the_baselines_do(scored):
    rows = pd.read_parquet(scored / "results" / "emotion" / "baseline" / "rows.parquet")
    # Read by hand: script 1 of Happy says 开心 (the keyword baseline answers Happy), script 2
    # ("我们的项目拿了第一名，大家辛苦了！") has no emotion word, so it answers Neutral.
    correct = rows[rows["metric"] == "emotion_accuracy"].set_index("clip_id")["value"].to_dict()
    assert correct == {"actor_0001_happy_action_01_script_001": 1.0, "actor_0001_happy_action_01_script_002": 0.0}
    voice = pd.read_parquet(scored / "results" / "voice_cloning" / "baseline" / "rows.parquet")
    # The replay is the enrollment recording itself: an embedding's cosine similarity with itself.
    similarity = voice[voice["metric"] == "speaker_similarity"]["value"].to_numpy()
    assert len(similarity) == 2 and similarity == pytest.approx(1.0, abs=1e-5)
    assert np.isfinite(voice[voice["status"] == "ok"]["value"]).all()

"""Every "why empty" message names its real cause, and no door is a dead end (issue 51).

One small synthetic release (two actors) and a store: two vision-driven runs scored on PSNR and SSIM only (the
metrics that need no weights), two audio-driven runs scored on the paper's metrics (each needs weights not here:
stored, no per-clip value), two matting runs (one of them partial: one clip) and the reference motion rows; the
release's simulated raters stand behind Tables 6, 8 and 10.

* Cross-task and Findings say which of three causes holds: no run of the task stored, none of its models ticked,
  or its runs stored without the weights their metrics need (with the command) -- never weights for PSNR;
* a collapse warning counts the actors of the row it names (a one-actor partial run has no interval);
* the detectable difference of an accuracy is never printed above 100 points;
* ``hugvis leaderboard show RESULTS --table 6`` (8, 10) shows the MOS rows the Space shows, from the same code;
* an upload whose predictions are a stored run's is refused before a clip is scored;
* a partial run leaves no RuntimeWarning on the way.
"""

from __future__ import annotations

import warnings
import zipfile

import pytest

from hug_vis_dataset import catalog


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from hug_vis_dataset.datamodel.results import REFERENCE_MODEL
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("why-empty")
    release, results = root / "release", root / "results"
    synthesize(release, actors=2, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.3, size=(48, 32),
               seed=5)
    systems = release / "simulated_systems"
    for system in ("vis_good", "vis_poor"):
        evaluate_submission("vision_driven", systems / "vision_driven" / system, system, release, results,
                            progress=False, metrics=["psnr", "ssim"])
    for system in ("talk_good", "talk_poor"):
        evaluate_submission("audio_driven", systems / "audio_driven" / system, system, release, results,
                            progress=False, metrics=list(catalog.table_metrics("audio_driven")))
    for system in ("matte_good", "matte_poor"):
        evaluate_submission("matting", systems / "matting" / system, system, release, results, progress=False)
    one = root / "one_clip"
    clip = sorted(p for p in (systems / "matting" / "matte_fair").iterdir() if p.is_dir())[0]
    import shutil

    shutil.copytree(clip, one / clip.name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        evaluate_submission("matting", one, "one_clip", release, results, progress=False)
    evaluate_submission("motion", "reference", REFERENCE_MODEL, release, results, progress=False)
    return {"root": root, "release": release, "results": results, "partial_warnings": caught}


@pytest.fixture()
def explorer(world, tmp_path):
    from hug_vis_dataset.space.app import Explorer

    return Explorer(world["release"], world["results"], work_dir=tmp_path / "work")


# ----------------------------------------------------------------------------- why empty
def test_fig8_of_a_vision_metric_with_no_vision_model_ticked_says_so_not_weights(explorer):
    """With only matting models ticked, VD-LPIPS's empty column says no vision-driven model is ticked (it blamed
    pretrained files whatever the cause); with every model ticked, the weights LPIPS needs."""
    assert "vis_good" in explorer.crosstask_models()
    _, _, message = explorer.crosstask("Emotion difficulty (Fig. 8)", models=["matte_good", "matte_poor"],
                                       metric="VD-LPIPS")
    assert "no Vision-driven video generation model is ticked: tick one under Models" in message
    assert "weights" not in message
    _, _, message = explorer.crosstask("Emotion difficulty (Fig. 8)", metric="VD-LPIPS")  # every model ticked
    assert "the Vision-driven video generation runs have no LPIPS values: it needs weights" in message
    assert "`hugvis weights download alexnet lpips_alex_linear`" in message


def test_fig10_names_each_regimes_real_cause(explorer):
    """Fig. 10 with every model: each regime's missing metrics and their weights (PSNR and SSIM are there, never
    blamed); with no vision-driven model ticked: said so (it blamed pretrained files for PSNR/SSIM)."""
    _, _, message = explorer.crosstask("Source difficulty (Fig. 10)")
    assert "the Audio-driven video generation runs have no CSIM, Sync-C, Sync-D values: they need weights" in message
    assert "the Vision-driven video generation runs have no CSIM, LPIPS values" in message  # PSNR/SSIM are there
    assert "PSNR" not in message.split("):", 1)[1]
    _, _, message = explorer.crosstask("Source difficulty (Fig. 10)", models=["matte_good", "matte_poor"])
    assert "no Vision-driven video generation model is ticked" in message
    # the audio-driven runs have no per-clip row to tick: their cause stays the weights
    assert "the Audio-driven video generation runs have no CSIM, Sync-C, Sync-D values: they need weights" in message


def test_findings_of_runs_stored_without_weights_say_they_are_stored(explorer):
    """Two audio-driven runs are stored; their metrics need weights: said, with the commands (it said "no stored
    per-clip rows", asking for runs that are there)."""
    for finding in ("Variance decomposition (finding iv)", "Significance between neighbours"):
        _, _, message = explorer.findings(finding, "audio_driven")
        assert message.startswith("2 Audio-driven video generation run(s) stored, none with per-clip values: CSIM "
                                  "needs weights: run `hugvis weights download"), message
    _, _, message = explorer.findings("Variance decomposition (finding iv)", "voice_cloning")
    assert message.startswith("no per-clip values of Voice cloning: score a submission"), message


def test_the_reports_notes_say_why_and_count_each_rows_own_actors(world, tmp_path):
    from hug_vis_dataset.reporting.report import build_report

    report = build_report([world["results"]], tmp_path / "report", formats=("md",), n_boot=50, figures=False,
                          mos=world["release"] / "simulated_systems" / "mos_ratings.csv")
    text = report.markdown
    # the joint view of audio-driven generation: its runs are stored, without weights
    assert "- 2 Audio-driven video generation run(s) stored, none with per-clip values: CSIM needs weights" in text
    assert "no stored per-clip rows" not in text
    matting = text.split("## Video matting (")[1].split("\n## ")[0]
    # one_clip covers one actor: no interval of its own, never "collapsed ... with 2 actors"
    assert "one_clip MAD" not in matting and "interval(s) left out: one actor, nothing to resample" in matting
    assert "- 3 missing clip(s) (never predicted) in one_clip: " in matting
    assert "ranked only among runs that miss clips too" in matting  # the partial-run rule, where the run is


def test_the_detectable_difference_of_an_accuracy_stays_on_its_scale():
    from hug_vis_dataset.reporting.findings import _within_scale

    accuracy = catalog.spec("emotion_accuracy")
    assert _within_scale(185.0, accuracy) == "> 100 (the whole scale)"
    assert _within_scale(99.0, accuracy) == 99.0
    assert _within_scale(185.0, catalog.spec("psnr")) == "> 100 (the whole scale)"  # PSNR is capped at 100 dB
    assert _within_scale(1e9, catalog.spec("dtssd")) == 1e9  # an unbounded scale


# ----------------------------------------------------------------------------- dead ends
def test_leaderboard_show_prints_the_mos_tables_the_space_shows(world, tmp_path, capsys):
    """Tables 6, 8 and 10 on the command line: the same rows as the Space's board (one code path,
    leaderboard/human_rows.py), from the release's simulated raters, then from the store's own ratings log."""
    from hug_vis_dataset.cli import main
    from hug_vis_dataset.presentation.escaping import terminal_markdown
    from hug_vis_dataset.space.app import Explorer
    from hug_vis_dataset.presentation.tables import markdown_table

    explorer = Explorer(world["release"], world["results"], work_dir=tmp_path / "work")
    for task in ("audio_driven", "vision_driven", "voice_cloning"):
        table = catalog.task(task).mos_table
        label = next(t for t in explorer.table_labels() if t.startswith(f"Table {table}:"))
        frame, _, _ = explorer.leaderboard(label, ["paper", "synthetic demo"])
        assert main(["leaderboard", "show", str(world["results"]), "--table", str(table), "--show", "synthetic",
                     "--release", str(world["release"])]) == 0
        out = capsys.readouterr().out
        assert terminal_markdown(markdown_table(frame)) in out
        assert "(simulated raters)" in out and "No stored result" not in out
    # without the release and without ratings: where the ratings come from, in the CLI's words
    assert main(["leaderboard", "show", str(world["results"]), "--table", "6"]) == 0
    out = capsys.readouterr().out
    assert "pass `--mos RATINGS.csv`, or `--release DIR`" in out and "MOS study tab" in out
    # the store's ratings log (what the Space's MOS study writes) is read as the study's ratings
    from hug_vis_dataset.studies.ratings import RatingStore

    store = tmp_path / "store"
    import shutil

    shutil.copytree(world["results"], store)
    log = RatingStore(store / "ratings" / "ratings.jsonl")
    clips = [str(c) for c in explorer.release.clip_ids()]
    for rater in ("r1", "r2"):
        for clip in clips:
            for model, score in (("talk_good", 5), ("talk_poor", 2)):
                log.add(rater, "audio_driven", clip, model, {"id_similarity": score, "emotion_naturalness": score,
                                                             "lip_sync": score})
    assert main(["leaderboard", "show", str(store), "--table", "6", "--show", "synthetic"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("| talk_good |"))
    assert "| 5.00" in row and "ratings" in row


def test_a_duplicate_upload_is_refused_before_a_clip_is_scored(world, tmp_path, monkeypatch):
    from hug_vis_dataset.scoring import runner
    from hug_vis_dataset.space.app import Explorer

    import shutil

    store = tmp_path / "store"
    shutil.copytree(world["results"], store)
    explorer = Explorer(world["release"], store, work_dir=tmp_path / "work")
    system = world["release"] / "simulated_systems" / "matting" / "matte_good"
    upload = tmp_path / "same.zip"
    with zipfile.ZipFile(upload, "w") as archive:
        for png in sorted(system.rglob("*.png")):
            archive.write(png, f"renamed/{png.relative_to(system).as_posix()}")
    calls = []
    scored = runner.run  # every door runs one EvaluationRequest: counting the runs counts the scorings
    monkeypatch.setattr(runner, "run", lambda *a, **k: calls.append(a) or scored(*a, **k))
    message, table, rows = explorer.score("matting", "twin", str(upload))
    assert message.startswith("**Not added:** these predictions are already on the Table 11 leaderboard as "
                              "`matte_good`"), message
    assert "nothing was scored or added" in message and calls == [] and len(table) == len(rows) == 0
    assert [r.model for r in explorer.store.runs() if r.task == "matting"] == ["matte_good", "matte_poor", "one_clip"]
    # other predictions (one clip changed) are scored
    first = sorted(p for p in system.iterdir() if p.is_dir())[0]
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as archive:
        for png in sorted(system.rglob("*.png")):
            data = png.read_bytes() if png.parent != first or png.name != "000000.png" else \
                (world["release"] / "simulated_systems" / "matting" / "matte_poor" / first.name / png.name).read_bytes()
            archive.writestr(f"renamed/{png.relative_to(system).as_posix()}", data)
    message, _, _ = explorer.score("matting", "almost_twin", str(other))
    assert message.startswith("Scored ") and len(calls) == 1, message


def test_a_partial_run_leaves_no_runtime_warning(world):
    assert [str(w.message) for w in world["partial_warnings"] if issubclass(w.category, RuntimeWarning)] == []

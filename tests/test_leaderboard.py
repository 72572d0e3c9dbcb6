"""The leaderboard: the results store (local folder and Hub repo) and the board built from it."""

from __future__ import annotations

import inspect
import json
import math
import zipfile

import numpy as np
import pandas as pd
import pytest

from hub_standin import ConflictError, LocalHub
from hug_vis_dataset import catalog
from hug_vis_dataset.leaderboard import (HubResultsStore, LocalResultsStore, ModelNameError, StoreError, board,
                                         paper_rows, stored_rows)
from hug_vis_dataset.leaderboard.board import NEEDS_WEIGHTS
from hug_vis_dataset.datamodel.paper_tables import paper_frame
from hug_vis_dataset.presentation.tables import mark_ranks


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("lb") / "release"
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.3, size=(32, 18))
    return root


def _score(release, out, system="matte_good", model=None):
    from hug_vis_dataset.scoring.runner import evaluate_submission

    return evaluate_submission("matting", release / "simulated_systems" / "matting" / system, model or system,
                               release, out, progress=False)


def _run(task, model, aggregate, grid=8400, synthetic=False, skipped=None, link="x", scored_by="self-reported"):
    """A validated run whose aggregate (what its rows give, in paper units) is ``aggregate``."""
    from hug_vis_dataset.leaderboard import StoredRun

    summary = {"task": task, "model": model, "aggregate": aggregate, "coverage": {"grid_size": grid},
               "metrics": {"computed": [], "skipped": skipped or {}}, "provenance": {"dataset": {"synthetic": synthetic}}}
    table = pd.DataFrame.from_dict(aggregate, orient="index") if aggregate else None
    origin = "synthetic" if synthetic else ("submitted" if grid == 8400 else "subset")
    return StoredRun(task, model, None, summary, link, table=table, origin=origin, scored_by=scored_by)


# ----------------------------------------------------------------------------- the store
def test_local_store_adds_a_scored_run_once(release, tmp_path):
    store = LocalResultsStore(tmp_path / "results")
    from hug_vis_dataset.scoring.runs import RUN_FILES

    with store.staging() as stage:
        result = _score(release, stage, model="mine")
        staged = sorted(p.name for p in result.summary_path.parent.iterdir())
        stored = store.add(stage, "matting", "mine")
    assert not any(p.name.startswith(".staging") for p in store.root.iterdir())  # staging removed
    assert "run.json" in staged and ".input-digests.json" in staged
    # The run's files and the guard's marker and ledger of it, nothing else (the digest cache stays with the scorer).
    from hug_vis_dataset.outputs import LEDGER, MARKER

    assert sorted(p.name for p in stored.folder.iterdir()) == sorted([n for n in staged if n in RUN_FILES]
                                                                     + [LEDGER, MARKER])
    assert stored.scored_by == "self-reported"  # added without verified=True
    pd.testing.assert_frame_equal(store.rows(), pd.read_parquet(stored.folder / "rows.parquet"))
    assert stored.summary["aggregate"] == result.summary["aggregate"]
    assert [(r.task, r.model) for r in store.runs()] == [("matting", "mine")]
    with pytest.raises(ModelNameError, match="already on the Video matting leaderboard"):
        store.check_new_model("matting", "mine")
    with store.staging() as stage, pytest.raises(ModelNameError, match="already"):
        _score(release, stage, model="mine")
        store.add(stage, "matting", "mine")
    assert store.check_new_model("emotion", "mine") == "mine"  # one name per leaderboard, not global


@pytest.mark.parametrize("name, why", [("my model", "no spaces"), ("", "must be"), ("-x", "starting with"),
                                       ("a" * 65, "1-64"), ("baseline", "reserved"), ("real-audio", "reserved"),
                                       ("audit@h264_crf18", "reserved")])
def test_model_names_are_checked(name, why):
    from hug_vis_dataset.leaderboard import check_model_name

    with pytest.raises(ModelNameError, match=why):
        check_model_name(name)


@pytest.mark.parametrize("name", ["rvm-1.0", "m+ft@v2=3", "A_b.c", "a" * 64,
                                  "my model", "", "-x", ".hidden", "a/b", "a" * 65, "ü", "a\nb"])
def test_every_door_takes_the_same_names(name):
    """A name the scorer stores is one the leaderboard and the MOS study accept, and vice versa."""
    from hug_vis_dataset.leaderboard import check_model_name
    from hug_vis_dataset.datamodel.results import name_problem
    from hug_vis_dataset.scoring.store import BadNameError, check_name
    from hug_vis_dataset.studies.ratings import RatingError, validate_rating

    clip = "actor_0002_sad_action_03_script_004"
    scores = {"emotion_naturalness": 3, "id_similarity": 4}
    verdicts = {}
    for door, call, refusal in [
        ("scoring", lambda: check_name("model", name), BadNameError),
        ("leaderboard", lambda: check_model_name(name), ModelNameError),
        ("mos model", lambda: validate_rating("r1", "voice_cloning", clip, name, scores), RatingError),
        ("mos rater", lambda: validate_rating(name, "voice_cloning", clip, "m", scores), RatingError),
    ]:
        try:
            call()
            verdicts[door] = True
        except refusal as err:
            assert "must be 1-64 letters" in str(err)
            verdicts[door] = False
    expected = len(name) <= 64 and name[:1].isascii() and name[:1].isalnum() and \
        all(c.isascii() and (c.isalnum() or c in "._+@=-") for c in name)
    assert verdicts == dict.fromkeys(verdicts, expected)
    assert (name_problem("model", name) is None) == expected
    assert name_problem("model", name + "\n") is not None  # a trailing newline is not a folder name


def test_unreadable_summary_is_named_not_skipped(tmp_path):
    bad = tmp_path / "matting" / "m"
    bad.mkdir(parents=True)
    (bad / "summary.json").write_text("{not json")
    scan = LocalResultsStore(tmp_path).scan()
    assert scan.runs == [] and len(scan.damaged) == 1
    assert scan.damaged[0].message().startswith(f"{bad}: summary.json cannot be read")


def test_hub_standin_has_the_hub_clients_calling_convention():
    from huggingface_hub import HfApi

    for name in ("repo_info", "snapshot_download", "create_commit"):
        ours = [p for p in inspect.signature(getattr(LocalHub, name)).parameters.values()
                if p.kind is not p.VAR_KEYWORD]
        real = inspect.signature(getattr(HfApi, name)).parameters
        assert [p.name for p in ours if p.name not in real] == [], name


def test_hub_store_appends_by_commit_and_a_restart_reads_it(release, tmp_path):
    hub = LocalHub()
    hub.create_repo("hugvis/results", repo_type="dataset")
    space_a = HubResultsStore("hugvis/results", tmp_path / "mirror_a", api=hub)
    space_a.pull()
    with space_a.staging() as stage:
        _score(release, stage, model="hub_run")
        added = space_a.add(stage, "matting", "hub_run")
    assert added.link == "https://huggingface.co/datasets/hugvis/results/blob/main/matting/hub_run/summary.json"
    files = hub.repos["hugvis/results"][-1][1]
    assert "matting/hub_run/rows.parquet" in files and not any(".staging" in f or "/rows/" in f for f in files)
    # Another Space (or a restart with an empty mirror) sees the run.
    space_b = HubResultsStore("hugvis/results", tmp_path / "mirror_b", api=hub)
    space_b.pull()
    assert [(r.task, r.model) for r in space_b.runs()] == [("matting", "hub_run")]
    pd.testing.assert_frame_equal(space_b.rows(), space_a.rows())
    with space_b.staging() as stage, pytest.raises(ModelNameError, match="already"):
        _score(release, stage, model="hub_run")
        space_b.add(stage, "matting", "hub_run")
    # A commit based on a stale revision is refused, never merged over the other Space's commit.
    with space_a.staging() as stage:
        _score(release, stage, "matte_poor")
        space_a.add(stage, "matting", "matte_poor")
    space_b.ratings_path.parent.mkdir(parents=True, exist_ok=True)
    space_b.ratings_path.write_text("")
    with pytest.raises(StoreError, match="nothing was stored"):
        space_b.save_ratings()
    assert isinstance(ConflictError("x"), RuntimeError)


def test_a_running_board_sees_runs_added_elsewhere(release, tmp_path):
    """The Space's board refreshes its mirror: a run a worker adds appears without a restart; a
    failed refresh keeps the mirror and says why."""
    hub = LocalHub()
    hub.create_repo("hugvis/results", repo_type="dataset")
    space = HubResultsStore("hugvis/results", tmp_path / "space", api=hub, refresh_s=0)
    space.pull()
    assert space.runs() == []
    worker = HubResultsStore("hugvis/results", tmp_path / "worker", api=hub)
    worker.pull()
    with worker.staging() as stage:
        _score(release, stage, model="from_worker")
        worker.add(stage, "matting", "from_worker")
    assert [(r.task, r.model) for r in space.runs()] == [("matting", "from_worker")]
    del hub.repos["hugvis/results"]  # the Hub goes away
    assert [r.model for r in space.runs()] == ["from_worker"]
    assert "hugvis/results cannot be read" in space.refresh_error
    calls = len(hub.calls)
    never = HubResultsStore("hugvis/results", tmp_path / "never", api=hub, refresh_s=None)
    assert never.scan().runs == [] and len(hub.calls) == calls  # refresh off: no call to the Hub


def test_hub_store_unreachable_repo_names_the_fix(tmp_path):
    with pytest.raises(StoreError, match="cannot be read .*use a local results folder instead"):
        HubResultsStore("hugvis/missing", tmp_path, api=LocalHub()).pull()


# ----------------------------------------------------------------------------- the board
def test_synthetic_rows_are_hidden_by_default_and_ranked_in_their_own_pool():
    runs = [_run("matting", "tiny_err", {"tiny_err": {"mad": 0.5, "mse": 0.1, "dtssd": 0.2, "grad": 0.01,
                                                     "conn": 0.02, "n_ok": 28, "n_failed": 0}}, grid=28, synthetic=True),
            _run("matting", "big_err", {"big_err": {"mad": 9.0, "mse": 5.0, "dtssd": 4.0, "grad": 1.0, "conn": 2.0,
                                                   "n_ok": 27, "n_failed": 1}}, grid=28, synthetic=True)]
    frame = pd.concat([paper_rows(paper_frame()), stored_rows(runs)], ignore_index=True)
    default = board(frame, 11).frame
    assert "tiny_err" not in set(default["Model"])
    shown = board(frame, 11, ("paper", "synthetic")).frame.set_index("Model")
    mad = "MAD ↓ (×1e3)"
    # Independent re-derivation: the paper's own best is the smallest printed MAD among paper rows.
    paper = paper_frame()
    paper_mad = paper[(paper.table == 11) & (paper.metric == "mad")]
    assert shown.loc[paper_mad.loc[paper_mad.value.idxmin(), "model"], mad].endswith("(best)")
    assert shown.loc["tiny_err", mad] == "0.500 (best)" and shown.loc["big_err", mad] == "9.00 (second)"
    assert shown.loc["big_err", "Clips scored"] == "27" and shown.loc["big_err", "Clips failed"] == "1"
    assert shown.loc["big_err", "Coverage"] == f"{100 * 27 / 28:.1f}%"
    assert shown.loc["tiny_err", "Origin"] == "synthetic demo"
    notes = board(frame, 11).notes
    assert any("2 synthetic demo row(s) hidden" in n for n in notes)


def test_submitted_rows_rank_with_the_paper_table4_per_input_setting():
    runs = [_run("emotion", "mine", {"mine | Text": {"emotion_accuracy": 90.0, "n_ok": 8400, "n_failed": 0},
                                     "mine | Audio": {"emotion_accuracy": 10.0, "n_ok": 8400, "n_failed": 0}})]
    frame = pd.concat([paper_rows(paper_frame()), stored_rows(runs)], ignore_index=True)
    view = board(frame, 4).frame
    acc = catalog.spec("emotion_accuracy").header
    paper = paper_frame()
    for setting in ("Text", "Audio", "Video"):
        group = view[view["Input"] == setting]
        values = [float(v.split()[0]) for v in group[acc]]
        want = mark_ranks(values, True, None)  # the report's rule, per setting
        got = [v.split("(")[1].rstrip(")") if "(" in v else None for v in group[acc]]
        assert got == want, setting
        assert len(group) == (paper[(paper.table == 4) & (paper.input_setting == setting)].model.nunique()
                              + (setting in ("Text", "Audio")))
    mine = view[view.Model == "mine"].set_index("Input")
    assert mine.loc["Text", acc] == "90.00 (best)" and mine.loc["Audio", acc] == "10.00"


def test_reference_and_baseline_rows_are_printed_never_ranked():
    runs = [_run("voice_cloning", "real-audio", {"real-audio": {"utmos": 9.0, "dnsmos": 9.0, "speaker_similarity": 1.0,
                                                                "n_ok": 8400, "n_failed": 0}}),
            _run("voice_cloning", "baseline", {"baseline": {"utmos": 8.0, "dnsmos": 8.0, "speaker_similarity": 1.0,
                                                            "n_ok": 8400, "n_failed": 0}})]
    frame = pd.concat([paper_rows(paper_frame()), stored_rows(runs)], ignore_index=True)
    view = board(frame, 9).frame.set_index("Model")
    utmos = catalog.spec("utmos").header
    assert view.loc["Real audio (reference)", utmos] == "9.00"
    assert view.loc["baseline (built-in)", utmos] == "8.00"
    assert view[utmos].str.contains(r"\(best\)").sum() >= 1


def test_headers_filters_and_empty_cells_name_their_fix():
    why = "needs weights: run `hugvis weights download alexnet lpips_alex_linear`"
    runs = [_run("vision_driven", "vd", {"vd": {"psnr": 30.0, "ssim": 0.9, "lpips": None, "n_ok": 8400, "n_failed": 0}},
                 skipped={"lpips": why})]
    frame = pd.concat([paper_rows(paper_frame()), stored_rows(runs)], ignore_index=True)
    view = board(frame, 7)
    assert view.filters == ("source", "paradigm")
    headers = [catalog.spec(m).header for m in ("lpips", "csim", "psnr", "ssim", "fid")]
    assert [c for c in view.frame.columns if c in headers] == headers
    row = view.frame.set_index("Model").loc["vd"]
    assert row[catalog.spec("lpips").header] == NEEDS_WEIGHTS and row[catalog.spec("psnr").header].split()[0] == "30.00"
    assert any("LPIPS" in n and "hugvis weights download alexnet" in n for n in view.notes)
    # A filter that leaves nothing keeps the headers and says which filter to reset.
    empty = board(frame, 7, source="nobody")
    assert list(empty.frame.columns) == list(view.frame.columns) and empty.frame.empty
    assert "source = 'nobody'" in empty.notes[0] and "back to All" in empty.notes[0]
    # Table 11 is not split by source: the filter does not apply and is ignored.
    assert board(frame, 11, source="open").frame.shape == board(frame, 11).frame.shape
    assert any("No stored result for Table 11 yet" in n and "hugvis evaluate matting" in n
               for n in board(frame, 11).notes)


# ----------------------------------------------------------------------------- the Space over the store
def _hub_space(release, tmp_path):
    """An explorer whose store is a results repo on a stand-in Hub: (hub, explorer)."""
    from hug_vis_dataset.space.app import Explorer

    hub = LocalHub()
    hub.create_repo("hugvis/results")
    store = HubResultsStore("hugvis/results", tmp_path / "mirror", api=hub)
    store.pull()
    return hub, Explorer(release, work_dir=tmp_path / "work", store=store)


def test_upload_scored_in_the_space_is_on_the_board_at_once_and_after_restart(release, tmp_path):
    from hug_vis_dataset.space.app import Explorer

    hub, space = _hub_space(release, tmp_path)
    upload = tmp_path / "up.zip"
    system = release / "simulated_systems" / "matting" / "matte_good"
    with zipfile.ZipFile(upload, "w") as archive:
        for png in sorted(system.rglob("*.png")):
            archive.write(png, f"s/{png.relative_to(system).as_posix()}")
    seen = []
    message, table, rows = space.score("matting", "uploaded", str(upload), progress=lambda d, t: seen.append((d, t)))
    assert "2 clip(s) ok of 2" in message and "Added to the Table 11 leaderboard as **synthetic demo**" in message
    assert seen == [(1, 2), (2, 2)]  # one call per clip scored
    assert not list((tmp_path / "work" / "uploads").iterdir())  # extracted files deleted
    view = space.leaderboard("Table 11: x", ["paper", "synthetic demo"])[0].set_index("Model")
    # The upload's table has the board's headers and printed values: the two agree cell for cell.
    agg = table.set_index("Model")
    header = catalog.spec("mad").header
    assert view.loc["uploaded", header].split()[0] == agg.loc["uploaded", header]
    assert "mad" not in table.columns and catalog.spec("dtssd").header in table.columns
    restarted = Explorer(release, work_dir=tmp_path / "work2",
                         store=HubResultsStore("hugvis/results", tmp_path / "mirror2", api=hub))
    restarted.store.pull()
    assert "uploaded" in set(restarted.leaderboard("Table 11: x", ["synthetic demo"])[0]["Model"])
    assert "uploaded" in restarted.crosstask_models()
    again = space.score("matting", "uploaded", str(upload))[0]
    assert again.startswith("**Model name:**") and "already" in again


def test_zero_scored_says_no_file_matched(release, tmp_path):
    from hug_vis_dataset.space.app import Explorer

    space = Explorer(release, tmp_path / "results", work_dir=tmp_path / "work")
    only_text = tmp_path / "t.zip"
    with zipfile.ZipFile(only_text, "w") as archive:
        archive.writestr("notes.txt", "hello")
    message = space.score("matting", "m1", str(only_text))[0]
    assert message.startswith("**0 scored**: no file matched the matting layout") and "Nothing was added" in message
    assert space.store.runs() == []
    wrong = tmp_path / "w.zip"
    system = release / "simulated_systems" / "matting" / "matte_good"
    with zipfile.ZipFile(wrong, "w") as archive:
        for png in sorted(system.rglob("*.png")):
            archive.write(png, png.relative_to(system).as_posix())
    precheck = space.check_upload("voice_cloning", str(wrong))
    assert "No file matches the voice cloning layout" in precheck and "look like **video matting**" in precheck
    assert "`<clip_id>.wav`" in precheck and "upload the voice cloning files" in precheck  # a pattern as code


def test_fig10_emotion_filter_recomputes_rho_on_the_filtered_clips(release, tmp_path):
    from hug_vis_dataset.metrics import crosstask as ct
    from hug_vis_dataset.datamodel.results import result_rows
    from hug_vis_dataset.space.app import Explorer
    from hug_vis_dataset.synth import synthesize

    rel = tmp_path / "rel"
    synthesize(rel, actors=2, emotions=["Happy", "Sad"], actions=1, scripts=3, seconds=0.2, size=(32, 18),
               systems=False)
    rng = np.random.default_rng(4)
    clips = [r.clip_id for r in Explorer(rel, tmp_path / "r0", work_dir=tmp_path / "w0").release]
    rows = []
    for model in ("a", "b"):
        for clip in clips:
            rows += result_rows(model, "audio_driven", clip, {"csim": rng.random(), "sync_c": rng.random() * 8,
                                                              "sync_d": rng.random() * 8})
            rows += result_rows(model, "vision_driven", clip, {"csim": rng.random(), "lpips": rng.random(),
                                                               "psnr": 20 + rng.random(), "ssim": rng.random()})
    from run_files import write_run

    frame = pd.DataFrame(rows)
    for (task, model), part in frame.groupby(["task", "model"]):
        write_run(tmp_path / "results", task, model, part)
    space = Explorer(rel, tmp_path / "results", work_dir=tmp_path / "work")
    stored = space.result_rows()
    _, _, all_message = space.crosstask("Source difficulty (Fig. 10)")
    table, _, happy_message = space.crosstask("Source difficulty (Fig. 10)", emotion="Happy")
    want = ct.source_difficulty(stored[stored["emotion"] == "Happy"])
    assert f"rho = {want.rho:.2f} on these clips" in happy_message and "(Happy)" in happy_message
    assert len(table) == len(want.pairs) == len(clips) // 2
    assert f"rho = {ct.source_difficulty(stored).rho:.2f}" in all_message
    assert not math.isclose(want.rho, ct.source_difficulty(stored).rho)
    # Fig. 11 does not take the emotion filter (its rho is over emotions): it is ignored, not half-applied.
    assert space.crosstask("Motion difficulty (Fig. 11)", emotion="Happy")[2] == \
        space.crosstask("Motion difficulty (Fig. 11)")[2]


def test_cli_show_and_push(release, tmp_path, monkeypatch, capsys):
    import huggingface_hub

    from hug_vis_dataset.cli import main

    _score(release, tmp_path / "results")
    assert main(["leaderboard", "show", str(tmp_path / "results"), "--table", "11"]) == 0
    out = capsys.readouterr().out
    assert "| Model | Origin | Scored by | MAD ↓ (×1e3) |" in out and "matte_good" not in out.split("- ")[0]
    # The note names this door's way to show them (the Space's says to tick a box).
    assert "1 synthetic demo row(s) hidden: pass --show synthetic to see them" in out
    assert main(["leaderboard", "show", str(tmp_path / "results"), "--table", "11", "--show", "synthetic"]) == 0
    assert "| matte_good | synthetic demo | self-reported |" in capsys.readouterr().out
    hub = LocalHub()
    hub.create_repo("hugvis/results")
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda: hub)
    monkeypatch.setattr("hug_vis_dataset.readers.hub_access.unreachable_reason", lambda *a, **k: None)  # the stand-in is up
    assert main(["leaderboard", "push", str(tmp_path / "results"), "--repo", "hugvis/results"]) == 0
    assert "1 run(s) pushed, 0 refused" in capsys.readouterr().out
    assert "matting/matte_good/summary.json" in hub.repos["hugvis/results"][-1][1]
    assert main(["leaderboard", "push", str(tmp_path / "results"), "--repo", "hugvis/results"]) == 1
    assert "already on the Video matting leaderboard" in capsys.readouterr().out


def test_a_run_whose_every_metric_needs_weights_is_listed_with_the_command():
    why = "skipped: needs weights: run `hugvis weights download syncnet_v2 arcface_det_10g`"
    run = _run("audio_driven", "talk", None, grid=28, synthetic=True,
               skipped={"csim": why, "sync_c": why, "sync_d": why})
    run.summary["coverage"]["ok"] = 0
    frame = pd.concat([paper_rows(paper_frame()), stored_rows([run])], ignore_index=True)
    view = board(frame, 5, ("paper", "synthetic"))
    row = view.frame.set_index("Model").loc["talk"]
    assert [row[catalog.spec(m).header] for m in ("csim", "sync_c", "sync_d")] == [NEEDS_WEIGHTS] * 3
    assert any(n.startswith("CSIM ↑, Sync-C ↑, Sync-D ↓: needs weights: run `hugvis weights download") for n in view.notes)


def test_mos_tables_show_one_source_per_task_and_say_how_far_the_study_is(release, tmp_path):
    """A few ratings of a new study do not replace the simulated raters (the one rule of
    hug_vis_dataset.studies.judgments): the board shows the simulated raters' MOS, computed as by hand, and the notes
    say how far the study's ratings cover the task."""
    from hug_vis_dataset.studies.mos import mos_table, read_ratings
    from hug_vis_dataset.space.app import Explorer

    space = Explorer(release, tmp_path / "results", work_dir=tmp_path / "work")
    system = space.mos.systems("audio_driven")[0]
    clips = space.mos.clip_ids()
    space.mos.rate("audio_driven", system, clips[0], "r1", 2, 4, 5)
    space.mos.rate("audio_driven", system, clips[1], "r1", 4, 4, 2)
    space.mos.rate("audio_driven", system, clips[1], "r2", 5, 3, 3)
    frame, notes, _ = space.leaderboard("Table 6: x", ["paper", "synthetic demo"])
    view = frame.set_index("Model")
    assert system not in view.index  # three answers of a new study replace nothing
    import re

    assert re.search(r"The study's ratings \(9 counted ratings\) rate [01] of the 3 systems on clips of \d actors?; "
                     r"they replace the simulated raters once they rate every system on every criterion", notes)
    valid, _ = read_ratings(release / "simulated_systems" / "mos_ratings.csv")
    simulated = mos_table(valid[valid["model"] == system])
    want = simulated.loc[(system, "id_similarity"), "mos"]
    got = view.loc[f"{system} (simulated raters)", "ID Similarity ↑ (1-5)"].split()[0]
    assert got == (f"{want:.2f}" if want >= 1 else f"{want:.3f}")
    assert f"{system} (simulated raters)" not in set(space.leaderboard("Table 6: x")[0]["Model"])  # synthetic: on request


def test_hub_store_fails_fast_offline_naming_the_local_folder(tmp_path, monkeypatch):
    import time

    from hug_vis_dataset.readers.hub_access import HubUnreachableError

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = time.perf_counter()
    with pytest.raises(HubUnreachableError, match=r"hugvis/results is not reachable \(offline.*local results folder"):
        HubResultsStore("hugvis/results", tmp_path).pull()
    assert time.perf_counter() - started < 10  # no retries (the client's default retries for ~23 s)


def test_ratings_go_to_the_hub_store_and_a_failed_push_is_said(release, tmp_path):
    hub, space = _hub_space(release, tmp_path)
    system = space.mos.systems("voice_cloning")[0]
    clip = space.mos.clip_ids()[0]
    message, _ = space.mos.rate("voice_cloning", system, clip, "r1", 4, 2)
    assert message.startswith("Stored 2") and "**" not in message
    pushed = hub.repos["hugvis/results"][-1][1]["ratings/ratings.jsonl"].decode()
    assert [json.loads(line)["score"] for line in pushed.splitlines()] == [4, 2]
    # Another writer moved the branch: the push is refused, the rating is kept here and the rater is told.
    hub.create_commit("hugvis/results", [], commit_message="elsewhere")
    message, table = space.mos.rate("voice_cloning", system, clip, "r2", 5, 5)
    assert "Kept on this machine; not yet in the results repo" in message and "nothing was stored" in message
    assert table.loc[table.criterion == "ID Similarity", "n_ratings"].item() == 2


def test_local_links_are_absolute_whatever_the_folder_was_given_as(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = LocalResultsStore("results")
    assert store.link("matting", "m") == str(tmp_path / "results" / "matting" / "m" / "summary.json")


def test_a_damaged_rows_file_is_named_with_the_fix(release, tmp_path):
    _score(release, tmp_path / "results")
    (tmp_path / "results" / "matting" / "matte_good" / "rows.parquet").write_bytes(b"PAR1 truncated")
    store = LocalResultsStore(tmp_path / "results")
    assert len(store.rows()) == 0  # a damaged run gives no rows
    [damaged] = store.scan().damaged
    assert "matte_good: rows.parquet cannot be read" in damaged.message() and "--overwrite" in damaged.message()


def test_board_html_sort_keys():
    """Each cell's sort key: the printed number in a column of numbers (rank marks and % dropped;
    a cell without a number has none, so it sorts last), the text elsewhere; cells stay escaped."""
    import re

    import pandas as pd

    from hug_vis_dataset.space.ui import board_html

    frame = pd.DataFrame({"Model": ["b<1", "2a", "c"], "MAD ↓ (×1e3)": ["3.86 (second)", "needs weights", "-1e-3 (best)"],
                          "Coverage": ["100.0%", "", "50%"], "n_ok": ["28", "", "7"]})
    page = board_html(frame)
    keys = [re.findall(r'<td[^>]*?(?: data-sort="([^"]*)")?>', row) for row in re.split(r"<tr[ >]", page)[2:]]
    assert keys == [["b&lt;1", "3.86", "100.0", "28"], ["2a", "", "", ""], ["c", "-1e-3", "50", "7"]]
    assert page.count(' data-sort="') == 9  # 12 cells; the three number cells without a number carry no key
    # One winning style: bold / underline, the rank words are not printed on top of it.
    assert "b&lt;1" in page and "<b>-1e-3</b>" in page and "<u>3.86</u>" in page and "(best)" not in page


def test_mos_cells_show_interval_and_ratings_and_sort_on_the_mos():
    import re

    import pandas as pd

    from hug_vis_dataset.leaderboard.board import MOS_NOTE, board, board_rows, mos_rows
    from hug_vis_dataset.space.ui import _PRINTED_NUMBER, board_html

    mos = pd.DataFrame([{"task": "voice_cloning", "model": m, "criterion": "ID Similarity", "mos": v, "n_clips": 4,
                         "n_ratings": n, "n_raters": 2, "ci_low": lo, "ci_high": hi}
                        for m, v, n, lo, hi in (("a", 4.2, 12, 3.9, 4.41), ("b", 3.1, 3, float("nan"), float("nan")))])
    view = board(board_rows([], mos_rows(mos, "synthetic")), 10, ("paper", "synthetic"))
    cells = view.frame.set_index("Model")
    column = [c for c in cells.columns if c.startswith("ID Similarity")][0]
    assert cells.loc["a", column] == "4.20 [3.90, 4.41], 12 ratings (best)"
    assert cells.loc["b", column] == "3.10 3 ratings (second)"  # one actor: no interval, the count stays
    assert MOS_NOTE in view.notes
    assert _PRINTED_NUMBER.fullmatch(cells.loc["a", column]).group(1) == "4.20"
    assert 'data-sort="4.20"' in board_html(view.frame)


def test_rows_keep_their_groups_reference_first_and_unranked_rows_are_explained():
    from hug_vis_dataset.leaderboard.board import ROW_GROUPS, UNRANKED_NOTE, board, board_rows

    runs = [_run("voice_cloning", "real-audio", {"real-audio": {"speaker_similarity": 0.9, "n_ok": 8400,
                                                                "n_failed": 0}}),
            _run("voice_cloning", "baseline", {"baseline": {"speaker_similarity": 0.99, "n_ok": 8400,
                                                            "n_failed": 0}}),
            _run("voice_cloning", "mine", {"mine": {"speaker_similarity": 0.5, "n_ok": 8400, "n_failed": 0}})]
    view = board(board_rows(runs), 9)
    models = list(view.frame["Model"])
    groups = view.frame.attrs["groups"]
    assert groups == sorted(groups)  # printed group by group
    assert models[0] == "Real audio" and models[-1] == "baseline (built-in)"
    assert [ROW_GROUPS[g] for g in groups].count("reference") == 1  # only the paper's reference row heads the table
    # a stored reference row sits with its origin (after the paper's rows), never above them, and is never ranked
    stored = models.index("Real audio (reference)")
    assert ROW_GROUPS[groups[stored]] == "submitted" and stored > models.index("Inworld TTS-1.5")
    assert any(n.startswith("Real audio") and "never ranked" in n and "baseline (built-in)" in n for n in view.notes)
    assert "(best)" not in view.frame.set_index("Model").loc["baseline (built-in)"].to_string()


def _clip_rows(means: dict, noise: float, seed: int = 0):
    """Per-clip MAD rows (stored units = paper units, x1e3) of several models on 6 actors x 4 clips."""
    rng = np.random.default_rng(seed)
    clip_effect = rng.normal(0, noise, 24)
    return pd.DataFrame([{"task": "matting", "metric": "mad", "model": m, "clip_id": f"c{c}", "actor_id": c // 4,
                          "value": mean + clip_effect[c] + rng.normal(0, noise), "status": "ok"}
                         for m, mean in means.items() for c in range(24)])


def _brute_force_p(rows, better: str, worse: str) -> float:
    """Two-sided sign-flip p-value by enumerating every sign pattern of the actors (an independent reference)."""
    import itertools

    a = rows[rows.model == better].set_index("clip_id")["value"]
    b = rows[rows.model == worse].set_index("clip_id")["value"]
    d = (b - a)  # MAD: lower is better, so a positive difference means `better` is better
    actors = rows[rows.model == better].set_index("clip_id")["actor_id"]
    sums = d.groupby(actors).sum().to_numpy()
    observed = sums.sum()
    null = [sum(s * x for s, x in zip(signs, sums)) for signs in itertools.product((1, -1), repeat=len(sums))]
    tol = abs(observed) * 1e-12
    low = sum(v <= observed + tol for v in null) / len(null)
    high = sum(v >= observed - tol for v in null) / len(null)
    return min(1.0, 2 * min(low, high))


def test_stored_neighbours_carry_the_one_verdict_of_their_comparison():
    from hug_vis_dataset.leaderboard.board import board, board_rows
    from hug_vis_dataset.verdicts import LEGEND, NOT_SEPARABLE

    means = {"near_a": 5.0, "near_b": 5.01, "far": 9.0}
    rows = _clip_rows(means, noise=1.0)
    runs = [_run("matting", m, {m: {"mad": float(rows[rows.model == m].value.mean()), "n_ok": 24,
                                    "n_failed": 0}}, synthetic=True) for m in means]
    view = board(board_rows(runs), 11, ("paper", "synthetic"), clip_rows=rows)
    cells = view.frame.set_index("Model")["MAD ↓ (×1e3)"]
    printed = {m: float(cells[m].split()[0]) for m in means}
    ranked = sorted(means, key=printed.get)
    # 6 actors: the test can decide; the near pair is not separable, the far one is (p by brute force).
    assert _brute_force_p(rows, ranked[0], ranked[1]) >= 0.05 > _brute_force_p(rows, ranked[1], ranked[2])
    assert "≈" in cells[ranked[0]] and "≈" not in cells[ranked[1]] and "?" not in cells[ranked[1]]
    assert not any("≈" in str(v) for v in view.frame[view.frame.Origin == "paper"]["MAD ↓ (×1e3)"])
    assert f"MAD ↓ (×1e3): {LEGEND[NOT_SEPARABLE]}" in view.notes
    # Without per-clip rows nothing is marked and no legend is given.
    plain = board(board_rows(runs), 11, ("paper", "synthetic"))
    assert not any("≈" in str(v) or "?" in str(v) for v in plain.frame["MAD ↓ (×1e3)"])
    assert not any("not separable" in n for n in plain.notes)
    # Two actors cannot decide: "cannot tell" (?), never drawn like a separation or a tie.
    two = rows[rows.actor_id < 2]
    view = board(board_rows(runs), 11, ("paper", "synthetic"), clip_rows=two)
    cells = view.frame.set_index("Model")["MAD ↓ (×1e3)"]
    assert cells[ranked[0]].split()[1] == "?" and cells[ranked[1]].split()[1] == "?"
    assert ("MAD ↓ (×1e3): ? cannot tell against the next-ranked row: 2 actors cannot reach p < 0.05 (smallest p = "
            "0.5); absence of evidence, not a tie and not a separation") in view.notes

"""Where a number becomes public: re-runs, the results store and the board cannot be made stale,
forged or broken (issue 22). Every refused or failed operation leaves earlier results byte-identical."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hostile_cli import assert_one_line_error, run_cli, snapshot
from run_files import write_run

from hug_vis_dataset import catalog
from hug_vis_dataset.leaderboard import LocalResultsStore, board, board_rows
from hug_vis_dataset.scoring.runner import evaluate_submission
from hug_vis_dataset.scoring.runs import SELF_REPORTED, VERIFIED, scan_runs

REPO = Path(__file__).resolve().parents[1]
MAD = catalog.spec("mad").header


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("integrity") / "release"
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=2, seconds=0.3, size=(32, 18))
    return root


def system(release, name):
    return release / "simulated_systems" / "matting" / name


def evaluate(capsys, release, predictions, out, *extra, model="m"):
    return run_cli(capsys, "evaluate", "matting", "--predictions", predictions, "--model", model, "--dataset", release,
                   "--out", out, "--no-progress", *extra)


def mad_of(out, model="m"):
    summary = json.loads((Path(out) / "matting" / model / "summary.json").read_text())
    return summary["aggregate"][model]["mad"]


@pytest.fixture(scope="module")
def fresh_mads(release, tmp_path_factory):
    """MAD of each system scored alone, the independent value every re-run must reproduce."""
    out = tmp_path_factory.mktemp("fresh")
    return {name: evaluate_submission("matting", system(release, name), name, release, out, progress=False)
            .summary["aggregate"][name]["mad"] for name in ("matte_good", "matte_poor")}


# ----------------------------------------------------------------------------- re-runs
def test_another_predictions_folder_under_a_stored_model_is_refused(release, tmp_path, capsys, fresh_mads):
    out = tmp_path / "out"
    a, b = system(release, "matte_good"), system(release, "matte_poor")
    assert evaluate(capsys, release, a, out)[0] == 0
    before = snapshot(out)
    line = assert_one_line_error(evaluate(capsys, release, b, out), 2, str(a.resolve()), str(b.resolve()),
                                 "--overwrite", "another --model")
    assert "was scored from" in line
    assert snapshot(out) == before  # nothing written, not even a work folder
    assert mad_of(out) == fresh_mads["matte_good"]


def test_overwrite_replaces_the_run_with_the_new_predictions(release, tmp_path, capsys, fresh_mads):
    out = tmp_path / "out"
    evaluate(capsys, release, system(release, "matte_good"), out)
    status, stdout, _ = evaluate(capsys, release, system(release, "matte_poor"), out, "--overwrite")
    assert status == 0
    assert mad_of(out) == fresh_mads["matte_poor"] != fresh_mads["matte_good"]
    summary = json.loads((out / "matting" / "m" / "summary.json").read_text())
    assert summary["provenance"]["predictions"] == str(system(release, "matte_poor").resolve())
    assert summary["provenance"]["clips_computed_this_run"] == 4  # nothing of the other system kept
    rows = pd.read_parquet(out / "matting" / "m" / "rows.parquet")
    assert rows["input_sha256"].str.fullmatch(r"[0-9a-f]{64}").all()
    assert sorted(p.name for p in (out / "matting").iterdir()) == ["m"]  # no work or retired folder left


def test_unchanged_rerun_computes_nothing_and_a_changed_clip_is_rescored(release, tmp_path, capsys, fresh_mads):
    import cv2

    sub = tmp_path / "sub"
    shutil.copytree(system(release, "matte_good"), sub)
    out = tmp_path / "out"
    first = evaluate_submission("matting", sub, "m", release, out, progress=False)
    assert first.computed == 4
    again = evaluate_submission("matting", sub, "m", release, out, progress=False)
    assert again.computed == 0 and again.summary["aggregate"] == first.summary["aggregate"]
    # One frame of one clip changes: that clip alone is scored again, and the run equals a fresh
    # run of the changed folder.
    clip = sorted(p for p in sub.iterdir() if p.is_dir())[1]
    frame = sorted(clip.glob("*.png"))[0]
    image = cv2.imread(str(frame), cv2.IMREAD_UNCHANGED)
    cv2.imwrite(str(frame), 255 - image)
    changed = evaluate_submission("matting", sub, "m", release, out, progress=False)
    assert changed.computed == 1
    fresh = evaluate_submission("matting", sub, "m", release, tmp_path / "fresh", progress=False)
    assert changed.summary["aggregate"] == fresh.summary["aggregate"]
    assert changed.summary["aggregate"]["m"]["mad"] != first.summary["aggregate"]["m"]["mad"]
    pd.testing.assert_frame_equal(pd.read_parquet(out / "matting" / "m" / "rows.parquet"),
                                  pd.read_parquet(tmp_path / "fresh" / "matting" / "m" / "rows.parquet"))


def test_a_changed_dataset_or_metric_definition_rescores_every_clip(release, tmp_path, monkeypatch):
    from hug_vis_dataset.scoring import binding

    out = tmp_path / "out"
    evaluate_submission("matting", system(release, "matte_good"), "m", release, out, progress=False)
    real = binding.metric_definitions
    monkeypatch.setattr("hug_vis_dataset.scoring.rerun.metric_definitions",
                        lambda metrics: {**real(metrics), "mad": "changed"})
    assert evaluate_submission("matting", system(release, "matte_good"), "m", release, out,
                               progress=False).computed == 4
    monkeypatch.undo()
    copy = tmp_path / "release_copy"
    shutil.copytree(release, copy)
    assert evaluate_submission("matting", system(release, "matte_good"), "m", copy, out,
                               progress=False).computed == 4  # definitions changed back: rescored
    assert evaluate_submission("matting", system(release, "matte_good"), "m", copy, out,
                               progress=False).computed == 0  # a moved copy is the same dataset
    clips = copy / "metadata" / "clips.csv"
    clips.write_text(clips.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # the metadata changed
    assert evaluate_submission("matting", system(release, "matte_good"), "m", copy, out,
                               progress=False).computed == 4


KILL_AT_REPLACE = """
import os, sys
target, nth = sys.argv[1], int(sys.argv[2])
real_replace, real_rename, seen = os.replace, os.rename, [0]
def dying(src, dst, *a, **k):
    if os.path.basename(str(dst)) == target or (target == "part-" and os.path.basename(str(dst)).startswith(target)):
        seen[0] += 1
        if seen[0] == nth:
            os._exit(75)   # killed right before this file (or folder) would have been put in place
    return (real_replace if dying.kind == "replace" else real_rename)(src, dst, *a, **k)
def dying_replace(src, dst, *a, **k):
    dying.kind = "replace"; return dying(src, dst, *a, **k)
def dying_rename(src, dst, *a, **k):
    dying.kind = "rename"; return dying(src, dst, *a, **k)
os.replace, os.rename = dying_replace, dying_rename
from hug_vis_dataset.outputs import guard
guard.exchange = lambda a, b: False   # the two-rename path, so the folder swap can be cut too
from hug_vis_dataset.scoring.runner import evaluate_submission
evaluate_submission("matting", sys.argv[3], "m", sys.argv[4], sys.argv[5], progress=False, overwrite=True,
                    flush_every=1)
"""


@pytest.mark.parametrize("target,nth", [("rows.parquet", 1), ("frames.parquet", 1), ("run.json", 1),
                                        ("coverage.json", 1), ("summary.json", 1), ("m", 1), ("part-", 3)])
def test_an_interrupted_rerun_leaves_the_stored_run_byte_identical(release, tmp_path, target, nth, fresh_mads):
    out = tmp_path / "out"
    evaluate_submission("matting", system(release, "matte_good"), "m", release, out, progress=False)
    before = snapshot(out / "matting" / "m")
    proc = subprocess.run([sys.executable, "-c", KILL_AT_REPLACE, target, str(nth), str(system(release, "matte_poor")),
                           str(release), str(out)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 75, proc.stderr
    if target == "m":  # killed between the two renames: the old run is aside, in a retired folder
        retired = [p / "old" for p in (out / "matting").iterdir() if p.name.startswith(".retired-")]
        assert len(retired) == 1 and snapshot(retired[0]) == before
        shutil.move(retired[0], out / "matting" / "m")  # (what recovery by hand looks like; nothing lost)
    assert snapshot(out / "matting" / "m") == before
    board_view = board(board_rows(LocalResultsStore(out).runs()), 11, ("paper", "synthetic"))
    assert board_view.frame.set_index("Model").loc["m", MAD].split()[0] == f"{fresh_mads['matte_good']:.2f}"
    # The next run completes from where it was cut.
    evaluate_submission("matting", system(release, "matte_poor"), "m", release, out, progress=False, overwrite=True)
    assert mad_of(out) == fresh_mads["matte_poor"]


def test_a_full_disk_during_a_rerun_is_one_line_and_changes_nothing(release, tmp_path, capsys, monkeypatch):
    import errno

    out = tmp_path / "out"
    evaluate(capsys, release, system(release, "matte_good"), out)
    before = snapshot(out / "matting" / "m")
    real_fsync = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    result = evaluate(capsys, release, system(release, "matte_poor"), out, "--overwrite")
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert_one_line_error(result, 1, "No space left on device")
    assert snapshot(out / "matting" / "m") == before


def test_concurrent_runs_of_one_model_are_refused_not_interleaved(release, tmp_path):
    out = tmp_path / "out"
    slow = ("import sys, time; from hug_vis_dataset.scoring.runner import evaluate_submission as e; "
            "e('matting', sys.argv[1], 'm', sys.argv[2], sys.argv[3], progress=False, flush_every=1, "
            "on_persisted=lambda n: time.sleep(4))")
    first = subprocess.Popen([sys.executable, "-c", slow, str(system(release, "matte_good")), str(release), str(out)],
                             cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (out / "matting" / ".work-m" / "rows").is_dir() and time.monotonic() < deadline:
            time.sleep(0.2)
        second = subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", "evaluate", "matting", "--predictions",
                                 str(system(release, "matte_good")), "--model", "m", "--dataset", str(release),
                                 "--out", str(out), "--no-progress"], cwd=REPO, capture_output=True, text=True,
                                timeout=300)
    finally:
        stdout, stderr = first.communicate(timeout=300)
    assert second.returncode == 1 and "Traceback" not in second.stderr
    assert "another hugvis evaluate is scoring matting/m" in second.stderr and "wait for it" in second.stderr
    assert first.returncode == 0, stderr
    assert LocalResultsStore(out).runs()[0].table.loc["m", "n_ok"] == 4


# ----------------------------------------------------------------------------- the board trusts rows
@pytest.fixture()
def store_with_run(release, tmp_path):
    out = tmp_path / "results"
    evaluate_submission("matting", system(release, "matte_good"), "matte_good", release, out, progress=False)
    return out


def edit_summary(folder: Path, change) -> None:
    path = folder / "summary.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def show(capsys, results, table=11):
    return run_cli(capsys, "leaderboard", "show", results, "--table", str(table), "--show", "synthetic")


def test_board_cells_come_from_rows_not_from_the_summary(store_with_run, capsys):
    folder = store_with_run / "matting" / "matte_good"
    rows = pd.read_parquet(folder / "rows.parquet")
    by_hand = rows[rows.metric == "dtssd"]  # RVM protocol: per-frame, from frames.parquet
    frames = pd.read_parquet(folder / "frames.parquet")
    from hug_vis_dataset.metrics.matting import aggregate

    per_clip = [np.concatenate([[0.0], g.sort_values("frame")["value"].to_numpy()])
                for _, g in frames[frames.metric == "dtssd"].groupby("clip_id")]
    want = aggregate(per_clip, "rvm", temporal=False) * catalog.spec("dtssd").paper_scale
    assert len(by_hand) == 4
    [run] = LocalResultsStore(store_with_run).runs()
    assert run.table.loc["matte_good", "dtssd"] == pytest.approx(want, rel=1e-12)
    # A summary that disagrees with its rows marks the run damaged; it is never printed.
    edit_summary(folder, lambda s: s["aggregate"]["matte_good"].update(mad=0.001))
    status, out, err = show(capsys, store_with_run)
    assert status == 0 and "Traceback" not in err
    assert "| matte_good |" not in out
    assert "Damaged run, not shown:" in out and "aggregate disagrees with its rows" in out and "--overwrite" in out


@pytest.mark.parametrize("summary_text,problem", [
    ("[1, 2]", "summary.json is a JSON list, not an object"),
    ("null", "summary.json is a JSON null, not an object"),
    ('"text"', "summary.json is a JSON string, not an object"),
    ("3.5", "summary.json is a JSON number, not an object"),
    ("true", "summary.json is a JSON boolean, not an object"),
    ("{not json", "summary.json cannot be read"),
    (b"\xff\xfe{}", "summary.json cannot be read"),
])
def test_malformed_summaries_are_listed_damaged_and_the_board_still_shows(store_with_run, tmp_path, capsys,
                                                                          summary_text, problem):
    bad = store_with_run / "matting" / "broken"
    bad.mkdir()
    shutil.copy(store_with_run / "matting" / "matte_good" / "rows.parquet", bad / "rows.parquet")
    (bad / "summary.json").write_bytes(summary_text if isinstance(summary_text, bytes) else summary_text.encode())
    before = snapshot(store_with_run)
    for table in (4, 11):
        status, out, err = show(capsys, store_with_run, table)
        assert status == 0 and "Traceback" not in err
        if table == 11:
            assert "| matte_good |" in out  # every other run still shows
            assert out.count("Damaged run, not shown:") == 1 and problem in out and "broken" in out
    assert snapshot(store_with_run) == before


@pytest.mark.parametrize("field,value,problem", [
    ("n_ok", "4", "n_ok of 'matte_good' is '4', not a count"),
    ("n_ok", -1, "not a count"),
    ("mad", "big", "mad of 'matte_good' is 'big', not a number"),
    ("mad", [1], "not a number"),
])
def test_mistyped_aggregate_fields_are_damaged(store_with_run, field, value, problem):
    folder = store_with_run / "matting" / "matte_good"
    edit_summary(folder, lambda s: s["aggregate"]["matte_good"].update({field: value}))
    runs, damaged = scan_runs(store_with_run)
    assert runs == [] and problem in damaged[0].problem


def test_a_forged_label_is_damaged_and_a_paper_name_is_shown_apart(store_with_run, release, capsys):
    # A folder whose summary and rows call the run BiRefNet: the label would come from inside.
    evil = store_with_run / "matting" / "evil"
    shutil.copytree(store_with_run / "matting" / "matte_good", evil)
    edit_summary(evil, lambda s: (s.update(model="BiRefNet"), s.__setitem__("aggregate", {
        "BiRefNet": s["aggregate"].pop("matte_good")})))
    _, damaged = scan_runs(store_with_run)
    assert [d.model for d in damaged] == ["evil"] and "names model 'BiRefNet'" in damaged[0].problem
    # Rows renamed too: still damaged (rows must name the folder's model).
    rows = pd.read_parquet(evil / "rows.parquet").assign(model="BiRefNet")
    rows.to_parquet(evil / "rows.parquet")
    edit_summary(evil, lambda s: s.update(model="evil"))
    _, damaged = scan_runs(store_with_run)
    assert "rows.parquet names model(s) ['BiRefNet']" in damaged[0].problem
    # A run legitimately named like a paper system is its own row, labelled with its origin.
    evaluate_submission("matting", system(release, "matte_poor"), "BiRefNet", release, store_with_run, progress=False)
    frame = board(board_rows(LocalResultsStore(store_with_run).runs()), 11, ("paper", "synthetic")).frame
    assert list(frame.Model).count("BiRefNet") == 1  # the paper's
    mine = frame[frame.Model == "BiRefNet (synthetic demo)"]
    assert len(mine) == 1 and mine.Origin.item() == "synthetic demo"
    paper = frame[frame.Model == "BiRefNet"]
    assert paper[catalog.spec("dtssd").header].item().startswith("2.04")  # the paper's value, untouched


@pytest.mark.parametrize("metric,value,problem", [("dtssd", -0.5, "outside its range"),
                                                  ("mad", float("nan"), "outside its range"),
                                                  ("mse", float("inf"), "outside its range"),
                                                  ("mad", 5000.0, "outside its range [0, 1000]")])
def test_impossible_values_are_damaged_never_ranked_best(store_with_run, metric, value, problem):
    folder = store_with_run / "matting" / "matte_good"
    rows = pd.read_parquet(folder / "rows.parquet")
    rows.loc[rows.metric == metric, "value"] = value
    rows.to_parquet(folder / "rows.parquet")
    runs, damaged = scan_runs(store_with_run)
    assert runs == [] and problem in damaged[0].problem and metric in damaged[0].problem


def test_rows_of_another_task_or_an_unknown_metric_are_damaged(store_with_run):
    folder = store_with_run / "matting" / "matte_good"
    rows = pd.read_parquet(folder / "rows.parquet")
    rows.assign(metric=np.where(rows.metric == "mad", "psnr", rows.metric)).to_parquet(folder / "rows.parquet")
    assert "metric(s) ['psnr'] that the task does not compute" in scan_runs(store_with_run)[1][0].problem
    rows.assign(task="emotion").to_parquet(folder / "rows.parquet")
    assert "rows of task(s) ['emotion']" in scan_runs(store_with_run)[1][0].problem
    (folder / "rows.parquet").unlink()
    assert scan_runs(store_with_run)[1][0].problem == "rows.parquet is missing"


def test_staging_leftovers_are_never_runs_and_ours_are_cleaned(store_with_run):
    from hug_vis_dataset.outputs.transient import MARKER

    run = store_with_run / "matting" / "matte_good"
    ours = store_with_run / "matting" / ".incoming-0123"
    shutil.copytree(run, ours)
    (ours / MARKER).write_text(json.dumps({"kind": "incoming", "pid": 1}))
    foreign = store_with_run / "matting" / ".someone-elses"
    shutil.copytree(run, foreign)
    stage = store_with_run / ".staging-abc"
    shutil.copytree(run, stage / "matting" / "x")
    (stage / MARKER).write_text(json.dumps({"kind": "staging", "pid": 1}))
    assert [(r.task, r.model) for r in scan_runs(store_with_run)[0]] == [("matting", "matte_good")]
    store = LocalResultsStore(store_with_run)  # reading writes nothing: the leftovers stay until a write
    assert ours.is_dir() and stage.is_dir() and store.runs() and ours.is_dir()
    with store.staging():  # the first write cleans our leftovers, only ours
        pass
    assert not ours.exists() and not stage.exists() and foreign.is_dir()
    assert [(r.task, r.model) for r in store.runs()] == [("matting", "matte_good")]
    assert store.check_new_model("matting", "incoming-0123") == "incoming-0123"


def test_a_held_staging_folder_is_not_cleaned(store_with_run):
    with LocalResultsStore(store_with_run).staging() as stage:
        LocalResultsStore(store_with_run)  # another reader opens the store meanwhile
        assert stage.is_dir()


# ----------------------------------------------------------------------------- who computed it
def _upload(release, tmp_path, name="matte_good"):
    upload = tmp_path / f"{name}.zip"
    with zipfile.ZipFile(upload, "w") as archive:
        for png in sorted(system(release, name).rglob("*.png")):
            archive.write(png, png.relative_to(system(release, name)).as_posix())
    return upload


def test_space_runs_are_verified_cli_and_pushed_runs_self_reported(release, tmp_path, monkeypatch):
    from hub_standin import LocalHub

    from hug_vis_dataset.leaderboard import HubResultsStore
    from hug_vis_dataset.space.app import Explorer

    monkeypatch.setenv("HUGVIS_LEADERBOARD_KEY", "space-secret")
    space = Explorer(release, tmp_path / "results", work_dir=tmp_path / "work")
    space.score("matting", "uploaded", str(_upload(release, tmp_path)))
    evaluate_submission("matting", system(release, "matte_poor"), "cli_run", release, tmp_path / "results",
                        progress=False)
    scored = {r.model: r.scored_by for r in LocalResultsStore(tmp_path / "results").runs()}
    assert scored == {"uploaded": VERIFIED, "cli_run": SELF_REPORTED}
    frame = space.leaderboard("Table 11: x", ["paper", "synthetic demo"])[0].set_index("Model")
    assert frame.loc["uploaded", "Scored by"] == "verified" and frame.loc["cli_run", "Scored by"] == "self-reported"
    assert frame.loc["BiRefNet", "Scored by"] == "paper"
    # Copying a verification record onto another run, or editing a verified run, loses the mark.
    uploaded = tmp_path / "results" / "matting" / "uploaded"
    shutil.copy(uploaded / "verification.json", tmp_path / "results" / "matting" / "cli_run" / "verification.json")
    edit_summary(uploaded, lambda s: s["provenance"].update(command_line=["edited"]))
    scored = {r.model: r.scored_by for r in LocalResultsStore(tmp_path / "results").runs()}
    assert scored == {"uploaded": SELF_REPORTED, "cli_run": SELF_REPORTED}
    # A verification record without the Space's key does not verify where the key is set.
    evaluate_submission("matting", system(release, "matte_good"), "forged", release, tmp_path / "results",
                        progress=False)
    monkeypatch.delenv("HUGVIS_LEADERBOARD_KEY")
    from hug_vis_dataset.scoring.runs import write_verification

    write_verification(tmp_path / "results" / "matting" / "forged", "me")
    monkeypatch.setenv("HUGVIS_LEADERBOARD_KEY", "space-secret")
    assert {r.model: r.scored_by for r in LocalResultsStore(tmp_path / "results").runs()}["forged"] == SELF_REPORTED
    # Pushed runs never carry a verification record, even when the pushed folder has one.
    hub = LocalHub()
    hub.create_repo("hugvis/results")
    store = HubResultsStore("hugvis/results", tmp_path / "mirror", api=hub)
    store.pull()
    pushed = store.add(tmp_path / "results", "matting", "uploaded")
    assert pushed.scored_by == SELF_REPORTED
    assert not any(f.endswith("verification.json") for f in hub.repos["hugvis/results"][-1][1])


# ----------------------------------------------------------------------------- escaping
HOSTILE = '<script>alert(1)</script> [click](javascript:alert(1)) `code` a|b\n| fake | row |'


def _html_of(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").render(markdown)


def _assert_inert(html: str) -> None:
    """No tag, link or code span made from the hostile text (our own notes may have code spans)."""
    assert "<script" not in html and 'href="javascript:' not in html and "<code>code</code>" not in html
    assert "<code>[x](javascript" not in html and "<img" not in html


def test_hostile_stored_text_is_escaped_in_the_cli_and_the_space(release, tmp_path, capsys):
    from hug_vis_dataset.datamodel.results import result_rows
    from hug_vis_dataset.space.app import Explorer
    from hug_vis_dataset.space.ui import board_html

    results = tmp_path / "results"
    clips = [c.name for c in sorted(system(release, "matte_good").iterdir())]
    rows = pd.DataFrame([r for clip in clips for r in result_rows("lpips_less", "vision_driven", clip,
                                                                  {"psnr": 30.0, "ssim": 0.9})])
    write_run(results, "vision_driven", "lpips_less", rows, skipped={"lpips": "skipped: " + HOSTILE})
    emotion = pd.DataFrame([r for clip in clips for r in result_rows(
        "mine | Text\n| fake | row |<script>", "emotion", clip, {"emotion_accuracy": 1.0})])
    write_run(results, "emotion", "mine", emotion)
    hostile_folder = results / "matting" / "<script>x"
    hostile_folder.mkdir(parents=True)
    (hostile_folder / "summary.json").write_text("[]")
    for table in (4, 7, 11):
        status, out, err = show(capsys, results, table)
        assert status == 0 and "Traceback" not in err
        table_lines = [line for line in out.splitlines() if line.startswith("|")]
        assert all(line.count(" | ") == table_lines[0].count(" | ") for line in table_lines), out  # no fake row
        _assert_inert(_html_of(out))
    space = Explorer(release, results, work_dir=tmp_path / "work")
    for label in ("Table 4: x", "Table 7: x", "Table 11: x"):
        frame, notes, _ = space.leaderboard(label, ["paper", "synthetic demo", "grid subset"])
        _assert_inert(_html_of(notes))
        page = board_html(frame)
        assert "<script" not in page and "javascript:alert" not in page.replace("javascript:alert(1)", "")
    notes = space.leaderboard("Table 11: x", ["paper", "synthetic demo"])[1]
    assert "&lt;script&gt;x" in _html_of(notes)  # the damaged folder is named, as text


def test_hostile_member_names_stay_text_in_the_precheck(release, tmp_path):
    from hug_vis_dataset.space.app import Explorer

    upload = tmp_path / "hostile.zip"
    with zipfile.ZipFile(upload, "w") as archive:
        archive.writestr("`code` [x](javascript:alert(1)) <img src=x onerror=alert(1)>.mp4", "x")
    message = Explorer(release, tmp_path / "results", work_dir=tmp_path / "work").check_upload("matting", str(upload))
    html = _html_of(message)
    _assert_inert(html)
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html

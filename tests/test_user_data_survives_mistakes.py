"""The ordinary mistakes of a new user, one test each: their data survives, and every reader reads what was written.

Each case was a loss or a broken view before the output guard (hug_vis_dataset.outputs):

* predictions inside the results store, then ``--overwrite``: the predictions were deleted;
* ``hugvis synth`` into an existing release: its files (a transcript the user edited) were overwritten;
* ``hugvis predict`` into another model's submission: its predictions were replaced without ``--resume``;
* a run in which every clip failed, or a damaged summary, took ``leaderboard show`` and ``report`` down;
* files were written mode 600, unreadable by a colleague under umask 022;
* a clip whose dtSSD failed was "failed" yet its other values were still averaged.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hug_vis_dataset.outputs import GUARD_FILES, OutputError
from hug_vis_dataset.scoring.aggregate import COUNT_COLUMNS

REPO = Path(__file__).resolve().parents[1]


def snapshot(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def hugvis(*argv) -> tuple[int, str, str]:
    """``hugvis ARGV`` through its entry point, in this process: (exit status, stdout, stderr)."""
    from hug_vis_dataset.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as done:
            code = int(done.code or 0)
    return code, out.getvalue(), err.getvalue()


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("mistakes") / "release"
    synthesize(root, actors=2, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.3, size=(32, 18), seed=11)
    return root


def matting_system(release: Path, name: str = "matte_good") -> Path:
    return release / "simulated_systems" / "matting" / name


# ----------------------------------------------------------------------------- data loss
def test_predictions_inside_the_store_survive_overwrite(release, tmp_path):
    store = tmp_path / "RES"
    assert hugvis("evaluate", "matting", "--predictions", matting_system(release), "--model", "m", "--dataset",
                  release, "--out", store, "--no-progress")[0] == 0
    mixed_up = store / "matting" / "mine"  # the user put their predictions inside the store
    shutil.copytree(matting_system(release, "matte_poor"), mixed_up)
    before = snapshot(store)
    for predictions, model in ((mixed_up, "mine"), (store / "matting" / "m", "m")):
        code, _, err = hugvis("evaluate", "matting", "--predictions", predictions, "--model", model, "--dataset",
                              release, "--out", store, "--overwrite", "--no-progress")
        line = one_line(err)
        assert code == 2 and f"--out {store} holds --predictions {predictions}" in line, line
        assert snapshot(store) == before
    # Predictions elsewhere, but a folder of someone's at the run's place: never replaced, even with --overwrite.
    code, _, err = hugvis("evaluate", "matting", "--predictions", matting_system(release, "matte_poor"), "--model",
                          "mine", "--dataset", release, "--out", store, "--overwrite", "--no-progress")
    assert code == 2 and "is not a stored run made by hugvis" in one_line(err) and str(mixed_up) in err
    assert snapshot(store) == before
    # --overwrite replaces a stored run, and that is all it replaces.
    (store / "notes.txt").write_text("mine")
    code, _, err = hugvis("evaluate", "matting", "--predictions", matting_system(release, "matte_poor"), "--model", "m",
                          "--dataset", release, "--out", store, "--overwrite", "--no-progress")
    assert code == 0, err
    assert (store / "notes.txt").read_text() == "mine" and snapshot(mixed_up) == before_sub(before, "matting/mine/")


def before_sub(snap: dict, prefix: str) -> dict:
    return {k[len(prefix):]: v for k, v in snap.items() if k.startswith(prefix)}


def test_synth_never_overwrites_a_release_it_did_not_make_or_a_file_changed_since(release, tmp_path):
    theirs = tmp_path / "theirs"
    shutil.copytree(release, theirs, ignore=shutil.ignore_patterns(*GUARD_FILES))  # a release from elsewhere
    before = snapshot(theirs)
    code, _, err = hugvis("synth", theirs, "--actors", "1", "--scripts", "1", "--actions", "1", "--emotions", "Happy",
                          "--seconds", "0.2", "--size", "32x18")
    assert code == 2 and "was not made by hugvis" in one_line(err) and str(theirs) in err
    assert snapshot(theirs) == before

    ours = tmp_path / "ours"
    args = ["--actors", "2", "--scripts", "1", "--actions", "1", "--emotions", "Happy", "Sad", "--seconds", "0.2",
            "--size", "32x18", "--no-systems"]
    assert hugvis("synth", ours, *args)[0] == 0
    transcript = next((ours / "transcripts").rglob("*.txt"))
    transcript.write_text("corrected by hand\n", encoding="utf-8")
    before = snapshot(ours)
    code, _, err = hugvis("synth", ours, *args)
    assert code == 2 and f"{transcript} was written by hugvis synth and changed since" in one_line(err)
    assert snapshot(ours) == before
    # With the edit moved away, a smaller grid replaces the earlier release; a file of the user's stays.
    transcript.unlink()
    (ours / "NOTES.md").write_text("mine")
    assert hugvis("synth", ours, *args[:1], "1", *args[2:])[0] == 0
    clips = (ours / "metadata" / "clips.csv").read_text(encoding="utf-8").splitlines()
    assert len(clips) == 1 + 2 and (ours / "NOTES.md").read_text() == "mine"
    assert not list((ours / "audio").glob("actor_0002*")), "the earlier release's other actor is left over"


def test_predict_never_replaces_another_models_predictions(release, tmp_path):
    from hug_vis_dataset.predict import predict
    from hug_vis_dataset.predict.matting import chroma_key_alpha

    sub = tmp_path / "SUB"
    assert hugvis("predict", "matting", "--model", "baseline", "--dataset", release, "--out", sub, "--no-progress")[0] == 0
    before = snapshot(sub)

    def my_model(chunk):
        return chroma_key_alpha(chunk) * 0.5

    with pytest.raises(OutputError, match=f"{sub} holds a submission .* for model 'baseline', not 'my_model'"):
        predict("matting", my_model, release, sub, progress=False)
    assert snapshot(sub) == before
    # The same model again replaces its own files; a file someone put at a clip's place stops it first.
    clip = sorted(p for p in sub.iterdir() if p.is_dir() and not p.name.startswith("."))[0]
    # rewritten by hand: other bytes (the guard judges content: the same bytes rewritten are still the toolkit's)
    frame = (clip / "000000.png").read_bytes()
    (clip / "000000.png").write_bytes(frame[:-1] + bytes([frame[-1] ^ 1]))
    before = snapshot(sub)
    code, _, err = hugvis("predict", "matting", "--model", "baseline", "--dataset", release, "--out", sub,
                          "--no-progress")
    assert code == 2 and f"{clip} was written by hugvis predict and changed since" in one_line(err)
    assert snapshot(sub) == before


# ----------------------------------------------------------------------------- a board the toolkit cannot take down
@pytest.fixture(scope="module")
def degenerate_store(release, tmp_path_factory) -> Path:
    """A store of runs written by hugvis evaluate itself: a valid one, one of every clip failed, one of a single clip,
    one with zero frames per prediction, one whose every metric was skipped, and a damaged summary."""
    from hug_vis_dataset.readers.media import write_alpha_pngs

    import numpy as np

    root = tmp_path_factory.mktemp("degenerate")
    store = root / "RES"
    clips = sorted(p.name for p in matting_system(release).iterdir() if p.is_dir())
    wrong = root / "wrong_size"
    for clip in clips:  # every prediction of the wrong size: every clip fails
        write_alpha_pngs(wrong / clip, [np.zeros((1, 9, 9), np.uint8)])
    single = root / "single"
    shutil.copytree(matting_system(release) / clips[0], single / clips[0])
    empty = root / "empty"
    for clip in clips:
        (empty / clip).mkdir(parents=True)
    runs = {"good": matting_system(release), "all_failed": wrong, "one_clip": single, "zero_frames": empty}
    for model, predictions in runs.items():
        code, _, err = hugvis("evaluate", "matting", "--predictions", predictions, "--model", model, "--dataset",
                              release, "--out", store, "--no-progress")
        assert code == 0, (model, err)
    code, _, err = hugvis("evaluate", "vision_driven", "--predictions", release / "simulated_systems" / "vision_driven"
                          / "vis_good", "--model", "no_metric", "--dataset", release, "--out", store, "--metrics",
                          "lpips", "--no-progress")
    assert code == 0, err
    code, _, err = hugvis("evaluate", "matting", "--predictions", matting_system(release, "matte_poor"), "--model",
                          "broken_summary", "--dataset", release, "--out", store, "--no-progress")
    assert code == 0, err
    summary = store / "matting" / "broken_summary" / "summary.json"
    summary.write_text(summary.read_text()[:40])  # cut: unreadable
    return store


def test_every_view_shows_the_valid_runs_and_names_the_others(degenerate_store, tmp_path):
    code, out, err = hugvis("leaderboard", "show", degenerate_store, "--table", "11", "--show", "synthetic")
    assert code == 0, err
    for model in ("good", "all_failed", "one_clip", "zero_frames"):
        assert model in out, out
    assert "broken_summary" in out and "damaged" in out.lower(), out  # named, never shown as numbers
    code, out, err = hugvis("report", degenerate_store, "--out", tmp_path / "report", "--n-boot", "0", "--no-figures")
    assert code == 0, err
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "good" in report and "broken_summary" in report
    from hug_vis_dataset.leaderboard.store import LocalResultsStore

    scan = LocalResultsStore(degenerate_store).scan()
    assert {r.model for r in scan.runs} == {"good", "all_failed", "one_clip", "zero_frames", "no_metric"}
    assert [d.model for d in scan.damaged] == ["broken_summary"]
    failed = next(r for r in scan.runs if r.model == "all_failed")
    assert int(failed.table["n_ok"].iloc[0]) == 0 and failed.table.drop(columns=list(COUNT_COLUMNS)).isna().all().all()


def test_the_space_board_reads_a_store_of_degenerate_runs(release, degenerate_store, tmp_path):
    from hug_vis_dataset.space.app import Explorer

    space = Explorer(release, degenerate_store, work_dir=tmp_path / "work")
    frame, notes, _ = space.leaderboard("Table 11: Video matting", ["paper", "synthetic demo"])
    assert {"good", "all_failed", "one_clip", "zero_frames"} <= set(frame["Model"])
    assert "broken_summary" in notes


# ----------------------------------------------------------------------------- partial failures: one rule
def test_a_clip_whose_dtssd_fails_counts_for_no_metric(tmp_path):
    from hug_vis_dataset.leaderboard.store import LocalResultsStore
    from hug_vis_dataset.synth import synthesize

    one_frame = tmp_path / "one_frame"
    synthesize(one_frame, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=1 / 30, size=(32, 18))
    code, _, err = hugvis("evaluate", "matting", "--predictions", matting_system(one_frame), "--model", "m",
                          "--dataset", one_frame, "--out", tmp_path / "RES", "--no-progress")
    assert code == 0, err
    [run] = LocalResultsStore(tmp_path / "RES").runs()
    dtssd = run.rows[run.rows["metric"] == "dtssd"]
    assert set(dtssd["error"]) == {"dtSSD needs at least two frames (the clip has 1): it compares each frame with "
                                   "the previous one"}
    others = run.rows[run.rows["metric"] != "dtssd"]
    assert set(others["status"]) == {"failed"} and set(others["error"]) == {
        "not counted: dtssd failed on this clip (a clip counts for every metric or for none)"}
    assert int(run.table["n_ok"].iloc[0]) == 0 and int(run.table["n_failed"].iloc[0]) == 2
    assert run.table.drop(columns=list(COUNT_COLUMNS)).isna().all().all()  # nothing averaged: no "(best)" to mark
    coverage = json.loads((tmp_path / "RES" / "matting" / "m" / "coverage.json").read_text())
    assert coverage["ok"] == 0
    code, out, err = hugvis("report", tmp_path / "RES", "--out", tmp_path / "report", "--n-boot", "0", "--no-figures",
                            "--no-paper")
    assert code == 0, err
    assert "- 2 failed clip(s) excluded from the means" in (tmp_path / "report" / "report.md").read_text()


# ----------------------------------------------------------------------------- files others can read
_MODES = r"""
import os, sys
os.umask(int(sys.argv[1], 8))
from hug_vis_dataset.cli import main
release, repo, store, preds = sys.argv[2:6]
assert main(["build", release, repo, "--no-storage-report"]) == 0
assert main(["evaluate", "matting", "--predictions", preds, "--model", "m", "--dataset", repo, "--out", store,
             "--no-progress"]) == 0
"""


@pytest.mark.parametrize("umask, file_mode, folder_mode", [("022", 0o644, 0o755), ("077", 0o600, 0o700)])
def test_files_get_the_mode_open_would_give_them(release, tmp_path, umask, file_mode, folder_mode):
    repo, store = tmp_path / "repo", tmp_path / "RES"
    done = subprocess.run([sys.executable, "-c", _MODES, umask, str(release), str(repo), str(store),
                           str(matting_system(release))], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 0, done.stderr[-3000:]
    for name in ("README.md", "manifest.json", "checksums.sha256"):
        assert stat.S_IMODE((repo / name).stat().st_mode) == file_mode, name
    run = store / "matting" / "m"
    for path in [run, *run.rglob("*")]:
        expected = folder_mode if path.is_dir() else file_mode
        assert stat.S_IMODE(path.stat().st_mode) == expected, (path, oct(path.stat().st_mode))

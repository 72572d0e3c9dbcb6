"""The output guard (hug_vis_dataset.outputs): overlap, folder and file ownership, units, umask, scratch.

Each rule of the guard's module docstring is checked on its own here, on real folders; the property tests
over whole commands are in ``tests/test_writes_never_touch_user_files.py``.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from hug_vis_dataset.outputs import (GUARD_FILES, LEDGER, MARKER, NotOursError, Output, OutputError, OverlapError,
                                     check_overlaps, claim, discard, scratch, scratch_folder, seal_unit, unit_problem,
                                     write_text_file)

REPO = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- rule 1: no overlap
@pytest.mark.parametrize("output, source, relation", [
    ("data", "data", "is"),
    ("data", "data/preds", "holds"),
    ("data/preds/out", "data/preds", "is inside"),
    ("data/.hidden/out", "data", "is inside"),
    ("data/./preds/../preds", "data/preds", "is"),
])
def test_overlapping_output_and_input_are_refused_naming_both(tmp_path, output, source, relation):
    (tmp_path / "data" / "preds").mkdir(parents=True)
    (tmp_path / "data" / ".hidden").mkdir()
    with pytest.raises(OverlapError) as err:
        check_overlaps("hugvis evaluate", "--out", tmp_path / output, [("--predictions", tmp_path / source)])
    message = str(err.value)
    assert f" {relation} --predictions " in message and str(tmp_path / source) in message
    assert str(tmp_path / output) in message and "\n" not in message


def test_overlap_is_found_through_symlinks_and_relative_paths(tmp_path, monkeypatch):
    (tmp_path / "store" / "matting" / "m").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "store" / "matting")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OverlapError, match=r"--out store \(= .*/store\) holds --predictions link/m \(= .*/store/matting/m\)"):
        check_overlaps("hugvis evaluate", "--out", "store", [("--predictions", "link/m")])
    (tmp_path / "alias").symlink_to(tmp_path / "store")
    with pytest.raises(OverlapError, match=r"--out alias \(= .*/store\) holds"):
        check_overlaps("hugvis evaluate", "--out", "alias", [("--predictions", tmp_path / "store" / "matting")])
    # Siblings, a Hub id and an absent input are not overlaps.
    check_overlaps("hugvis evaluate", "--out", "results", [("--predictions", "store"), ("--dataset", "hugvis/hug-vis"),
                                                          ("--mos", None)])


# ----------------------------------------------------------------------------- rule 2: only the toolkit's folders
def test_a_non_empty_folder_without_the_marker_needs_into_existing(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("mine")
    with pytest.raises(OutputError, match=r"is not empty \(thesis.tex \.\.\.\) and was not made by hugvis.*--into-existing"):
        claim("hugvis report", mine, "report")
    out = claim("hugvis report", mine, "report", into_existing=True)
    with out.staged() as stage:
        (stage / "report.md").write_text("# r\n")
    assert (mine / "thesis.tex").read_text() == "mine" and (mine / "report.md").is_file()
    assert json.loads((mine / MARKER).read_text())["adopted"] is True
    # ... and what was there stays someone else's: a report that would write thesis.tex is refused.
    with pytest.raises(NotOursError, match="thesis.tex was not made by hugvis"):
        with claim("hugvis report", mine, "report").staged() as stage:
            (stage / "thesis.tex").write_text("ours")
    assert (mine / "thesis.tex").read_text() == "mine"


def test_new_and_empty_folders_are_taken_and_marked_at_the_first_write(tmp_path):
    out = claim("hugvis synth", tmp_path / "new" / "release", "release", label="OUT_DIR")
    assert not (tmp_path / "new").exists()  # a claim writes nothing
    out.ensure()
    marker = json.loads((tmp_path / "new" / "release" / MARKER).read_text())
    assert (marker["kind"], marker["made_by"], marker["format"]) == ("release", "hugvis synth", 1)
    (tmp_path / "empty").mkdir()
    claim("hugvis synth", tmp_path / "empty", "release").ensure()
    assert (tmp_path / "empty" / MARKER).is_file()


def test_another_kind_another_model_and_nesting_are_refused(tmp_path):
    claim("hugvis build", tmp_path / "repo", "dataset-repo").ensure()
    with pytest.raises(OutputError, match=r"is a dataset repo \(hugvis build\), not a report"):
        claim("hugvis report", tmp_path / "repo", "report")
    with pytest.raises(OutputError, match=r"is inside .*/repo, a dataset repo \(hugvis build\)"):
        claim("hugvis report", tmp_path / "repo" / "report", "report")
    claim("hugvis predict", tmp_path / "sub", "submission", attrs={"task": "matting", "model": "a"}).ensure()
    with pytest.raises(OutputError, match="holds a submission .* for model 'a', not 'b'"):
        claim("hugvis predict", tmp_path / "sub", "submission", attrs={"task": "matting", "model": "b"})
    claim("hugvis predict", tmp_path / "sub", "submission", attrs={"task": "matting", "model": "a"})
    # A demo folder holds its steps' outputs.
    claim("hugvis demo", tmp_path / "demo", "demo").ensure()
    claim("hugvis synth", tmp_path / "demo" / "release", "release").ensure()
    (tmp_path / "afile").write_text("x")
    with pytest.raises(OutputError, match="is a file"):
        claim("hugvis report", tmp_path / "afile", "report")


def test_an_unreadable_marker_is_refused_not_guessed(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / MARKER).write_text('{"kind": ')
    with pytest.raises(OutputError, match="cannot be read"):
        claim("hugvis report", tmp_path / "out", "report")


# ----------------------------------------------------------------------------- rule 3: only the toolkit's files
def test_the_ledger_tells_ours_changed_and_foreign(tmp_path):
    out = claim("hugvis report", tmp_path / "r", "report")
    out.write_text("a.md", "one")
    assert out.state_of("a.md") == "ours"
    out.write_text("a.md", "two")  # ours, unchanged: replaced
    assert (tmp_path / "r" / "a.md").read_text() == "two"
    (tmp_path / "r" / "a.md").write_text("edited by hand")
    assert out.state_of("a.md") == "changed"
    with pytest.raises(NotOursError, match="a.md was written by hugvis report and changed since"):
        out.write_text("a.md", "three")
    with pytest.raises(NotOursError, match="changed since; this command would delete it"):
        out.remove("a.md")
    assert (tmp_path / "r" / "a.md").read_text() == "edited by hand"
    (tmp_path / "r" / "b.md").write_text("theirs")
    assert out.state_of("b.md") == "foreign"
    with pytest.raises(NotOursError, match="b.md was not made by hugvis"):
        out.remove("b.md")
    out.write_text("c/d.md", "x")
    out.remove("c/d.md")
    assert not (tmp_path / "r" / "c").exists()  # the folder it left empty goes too


def test_merge_replaces_and_prunes_only_this_commands_files(tmp_path):
    out = claim("hugvis report", tmp_path / "r", "report")
    with out.staged() as stage:
        for name in ("keep.md", "stale.md", "figs/a.png"):
            (stage / name).parent.mkdir(parents=True, exist_ok=True)
            (stage / name).write_text(name)
    (tmp_path / "r" / "notes.txt").write_text("mine")
    with out.staged() as stage:
        (stage / "keep.md").write_text("new")
    names = sorted(p.relative_to(tmp_path / "r").as_posix() for p in (tmp_path / "r").rglob("*")
                   if p.name not in GUARD_FILES)
    assert names == ["keep.md", "notes.txt"]
    assert (tmp_path / "r" / "keep.md").read_text() == "new"
    # A stale file changed by hand stops the merge before anything moves.
    (tmp_path / "r" / "keep.md").write_text("edited")
    with pytest.raises(NotOursError, match="keep.md was written .* changed since; this command would delete it"):
        with out.staged() as stage:
            (stage / "other.md").write_text("x")
    assert (tmp_path / "r" / "keep.md").read_text() == "edited" and not (tmp_path / "r" / "other.md").exists()
    assert not [p for p in (tmp_path / "r").iterdir() if p.name.startswith(".staging-")]


def test_paths_cannot_leave_the_output(tmp_path):
    out = claim("hugvis report", tmp_path / "r", "report")
    (tmp_path / "outside").mkdir()
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "escape").symlink_to(tmp_path / "outside")
    for rel in ("../x.md", "/etc/x.md", "escape/x.md"):
        with pytest.raises(OutputError, match="would be written outside"):
            out.write_text(rel, "x")
    assert list((tmp_path / "outside").iterdir()) == []


# ----------------------------------------------------------------------------- units (stored runs)
def test_a_unit_is_replaced_only_when_everything_in_it_is_its_own(tmp_path):
    store = claim("hugvis evaluate", tmp_path / "store", "results")
    first = scratch_folder(parent=tmp_path / "store")
    (first / "rows.parquet").write_bytes(b"1")
    store.replace_unit(first, "matting/m")
    assert unit_problem(tmp_path / "store" / "matting" / "m", "run") is None
    second = scratch_folder(parent=tmp_path / "store")
    (second / "rows.parquet").write_bytes(b"2")
    store.replace_unit(second, "matting/m")
    assert (tmp_path / "store" / "matting" / "m" / "rows.parquet").read_bytes() == b"2"
    (tmp_path / "store" / "matting" / "m" / "notes.txt").write_text("mine")
    third = scratch_folder(parent=tmp_path / "store")
    (third / "rows.parquet").write_bytes(b"3")
    with pytest.raises(NotOursError, match="notes.txt was not made by hugvis"):
        store.replace_unit(third, "matting/m")
    assert (tmp_path / "store" / "matting" / "m" / "notes.txt").read_text() == "mine"
    # A folder someone else made (predictions copied into the store) is no unit: never replaced.
    theirs = tmp_path / "store" / "matting" / "theirs"
    theirs.mkdir()
    (theirs / "000000.png").write_bytes(b"png")
    with pytest.raises(NotOursError, match="is not a stored run made by hugvis"):
        store.remove_unit("matting/theirs")
    assert (theirs / "000000.png").read_bytes() == b"png"


def test_seal_records_every_file(tmp_path):
    unit = tmp_path / "u"
    (unit / "a").mkdir(parents=True)
    (unit / "a" / "b.json").write_text("{}")
    seal_unit(unit, "run", "hugvis evaluate", {"task": "matting"})
    lines = [json.loads(line) for line in (unit / LEDGER).read_text().splitlines()]
    assert [line["path"] for line in lines] == ["a/b.json"]
    assert unit_problem(unit, "run") is None and "not a a dataset" not in (unit_problem(unit, "dataset-repo") or "")


# ----------------------------------------------------------------------------- scratch space and discard
def test_discard_deletes_only_scratch_or_ledger_files(tmp_path):
    with scratch(parent=tmp_path) as folder:
        (folder / "x").write_text("1")
        discard(folder / "x")
        assert not (folder / "x").exists()
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "user.txt").write_text("mine")
    with pytest.raises(NotOursError, match="not inside anything hugvis made"):
        discard(tmp_path / "user.txt")
    out = claim("hugvis report", tmp_path / "r", "report")
    out.write_text("ours.md", "x")
    (tmp_path / "r" / "theirs.md").write_text("y")
    discard(tmp_path / "r" / "ours.md")
    with pytest.raises(NotOursError):
        discard(tmp_path / "r" / "theirs.md")
    assert (tmp_path / "r" / "theirs.md").read_text() == "y"
    with pytest.raises(NotOursError, match="not inside a folder hugvis made"):
        write_text_file(tmp_path / "loose.txt", "x")
    assert not (tmp_path / "loose.txt").exists()


# ----------------------------------------------------------------------------- rule 4: the user's umask
_UMASK_CHILD = r"""
import os, sys, stat
from pathlib import Path
os.umask(int(sys.argv[2], 8))
from hug_vis_dataset.outputs import claim, write_text_file
from hug_vis_dataset.outputs.files import atomic_write_text
root = Path(sys.argv[1])
out = claim("hugvis report", root / "r", "report")
with out.staged() as stage:
    (stage / "b.md").write_text("y")
out.write_text("a.md", "x")
unit_store = claim("hugvis evaluate", root / "s", "results")
from hug_vis_dataset.outputs import scratch_folder
new = scratch_folder(parent=root / "s")
write_text_file(new / "summary.json", "{}")
unit_store.replace_unit(new, "matting/m")
modes = {str(p.relative_to(root)): oct(stat.S_IMODE(p.stat().st_mode)) for p in sorted(root.rglob("*"))}
print(repr(modes))
"""


@pytest.mark.parametrize("umask, file_mode, dir_mode", [("022", "0o644", "0o755"), ("077", "0o600", "0o700")])
def test_files_and_folders_get_the_users_umask(tmp_path, umask, file_mode, dir_mode):
    done = subprocess.run([sys.executable, "-c", _UMASK_CHILD, str(tmp_path), umask], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    modes = eval(done.stdout)  # noqa: S307 - our own child's repr of a dict of strings
    files = {p: m for p, m in modes.items() if (tmp_path / p).is_file()}
    folders = {p: m for p, m in modes.items() if (tmp_path / p).is_dir()}
    assert {"r/a.md", "r/b.md", "r/" + MARKER, "s/matting/m/summary.json", "s/matting/m/" + MARKER} <= set(files)
    assert set(files.values()) == {file_mode}, files
    assert set(folders.values()) == {dir_mode}, folders


def test_output_objects_travel_to_worker_processes(tmp_path):
    import pickle

    out = claim("hugvis build", tmp_path / "repo", "dataset-repo")
    again = pickle.loads(pickle.dumps(out))
    assert isinstance(again, Output) and again.root == out.root and again.kind == "dataset-repo"


def test_a_stopped_write_leaves_no_temporary(tmp_path):
    """A stop between the temporary's creation and its rename leaves nothing: the name is registered first."""
    code = r"""
import os, signal, sys
from pathlib import Path
from hug_vis_dataset import stopping
from hug_vis_dataset.outputs import claim
stopping.install()
out = claim("hugvis report", Path(sys.argv[1]) / "r", "report")
def write(handle):
    handle.write(b"half")
    os.kill(os.getpid(), signal.SIGTERM)   # the stop lands while the temporary is open
try:
    with out.atomic("a.md") as tmp:
        from hug_vis_dataset.outputs.files import atomic_write
        atomic_write(tmp, write)
except stopping.Stopped as err:
    sys.exit(stopping.finish(err))
"""
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 143, done.stderr
    left = sorted(p.name for p in (tmp_path / "r").iterdir())
    assert left == sorted(GUARD_FILES - {".hugvis-transient"}) or left == [MARKER], left


# ----------------------------------------------------------------------------- two claims of one folder at once
def _marker_under_way(folder: Path) -> Path:
    """What a second hugvis process sees while the first writes the folder's marker: only its temporary."""
    folder.mkdir(parents=True)
    claim("hugvis leaderboard worker", folder / "_", "worker").ensure()  # a real marker to copy the content of
    temporary = folder / f".partial-{os.getpid()}-0123456789ab-{MARKER}"
    (folder / "_" / MARKER).rename(temporary)
    for leftover in (folder / "_").iterdir():
        leftover.unlink()
    (folder / "_").rmdir()
    return temporary


def test_a_folder_whose_marker_another_process_is_writing_is_claimed_once_it_lands(tmp_path):
    import threading

    folder = tmp_path / "work"
    temporary = _marker_under_way(folder)
    landing = threading.Timer(0.3, lambda: temporary.rename(folder / MARKER))
    landing.start()
    try:
        out = claim("hugvis leaderboard worker", folder, "worker")  # waits for the rename, then sees a work folder
    finally:
        landing.join()
    assert out.root == folder.resolve() and (folder / MARKER).is_file()


def test_a_marker_temporary_that_never_lands_leaves_the_folder_refused(tmp_path, monkeypatch):
    from hug_vis_dataset.outputs import guard

    monkeypatch.setattr(guard, "MARKER_WAIT_S", 0.2)
    folder = tmp_path / "work"
    _marker_under_way(folder)
    with pytest.raises(OutputError, match="is not empty .* and was not made by hugvis"):
        claim("hugvis leaderboard worker", folder, "worker")


class _Killed(BaseException):
    """A process ended in the middle of a placement (a worker's SIGTERM taken by another of its threads)."""


@pytest.mark.parametrize("replacing", [False, True], ids=["new file", "replacement"])
@pytest.mark.parametrize("dies", ["before the rename", "after the rename"])
def test_a_placement_cut_anywhere_leaves_a_file_the_next_run_calls_ours(tmp_path, monkeypatch, replacing, dies):
    """The ledger entry is written ahead of the rename (with what it replaces): a process killed before the rename
    or between the rename and the final entry leaves the old content or the new, each the toolkit's, so the next
    run may replace it (a resumed build rewrites a shard a killed worker had renamed but not recorded)."""
    from hug_vis_dataset.outputs import files as output_files

    out = claim("hugvis build", tmp_path / "repo", "dataset-repo", label="REPO_DIR")
    if replacing:
        out.write_text("data/test-00004.parquet", "old shard")
    real_place = output_files.place

    def place(source, target):
        if dies == "before the rename":
            raise _Killed()
        real_place(source, target)
        raise _Killed()  # renamed, the final entry never written

    monkeypatch.setattr(output_files, "place", place)
    with pytest.raises(_Killed):
        out.write_text("data/test-00004.parquet", "new shard")
    monkeypatch.setattr(output_files, "place", real_place)
    again = claim("hugvis build", tmp_path / "repo", "dataset-repo", label="REPO_DIR", into_existing=True)
    expected = "absent" if dies == "before the rename" and not replacing else "ours"
    assert again.state_of("data/test-00004.parquet") == expected
    again.check_replaceable(["data/test-00004.parquet"], doing="rewrite")  # no refusal
    again.write_text("data/test-00004.parquet", "rewritten")
    assert (tmp_path / "repo" / "data" / "test-00004.parquet").read_text() == "rewritten"
    assert again.state_of("data/test-00004.parquet") == "ours"
    # a file changed by someone else afterwards is still refused (the entry ahead names the toolkit's contents only)
    (tmp_path / "repo" / "data" / "test-00004.parquet").write_text("a user's edit")
    with pytest.raises(Exception, match="changed since"):
        again.check_replaceable(["data/test-00004.parquet"], doing="rewrite")

"""Hostile input to ``hugvis validate`` and ``hugvis build``: each bad input is made here and must
give exit status 1 or 2, one ``error:`` line (or one validation finding) naming the file, no
traceback, and no change to anything written before."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from hug_vis_dataset.outputs import GUARD_FILES
from hostile_cli import assert_one_line_error, run_cli, snapshot
from test_builder import make_release
from test_validate import _rows, _write_rows, good_tree, tree  # noqa: F401 - fixtures

from hug_vis_dataset.outputs import GUARD_FILES
from hug_vis_dataset.datamodel.grid import NUM_ACTORS
from hug_vis_dataset.datamodel.layout import DEFAULT_LAYOUT
from hug_vis_dataset.validate import validate_release

CSV = DEFAULT_LAYOUT.metadata_csv


def _first_non_ascii_line(text: str) -> int:
    """1-based number of the first line holding a non-ASCII character (found independently)."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if any(ord(c) > 127 for c in line))


# ----------------------------------------------------------------------------- text encodings
@pytest.mark.parametrize("encoding", ["gbk", "gb18030", "big5", "shift_jis", "utf-16", "utf-32"])
def test_non_utf8_clips_csv_names_file_line_and_encoding(tree, capsys, encoding):
    path = tree / CSV
    text = path.read_text(encoding="utf-8")
    data = text.encode(encoding, errors="replace")
    with pytest.raises(UnicodeDecodeError):  # precondition: really not UTF-8
        data.decode("utf-8")
    path.write_bytes(data)
    want_line = 1 if encoding.startswith("utf-") else _first_non_ascii_line(text)
    status, out, err = run_cli(capsys, "validate", tree)
    assert status == 1 and "Traceback" not in out + err
    finding = [line for line in out.splitlines() if "[metadata]" in line]
    assert len(finding) == 1
    assert f"clips.csv: line {want_line} is not UTF-8" in finding[0] and "save the file as UTF-8" in finding[0]


def test_utf8_bom_clips_csv_is_accepted(tree, capsys):
    path = tree / CSV
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    status, out, err = run_cli(capsys, "validate", tree)
    assert status == 0, out + err
    assert validate_release(tree).ok


@pytest.mark.parametrize("sep,word", [(";", "';'"), ("\t", "tabs")])
def test_clips_csv_with_other_separator(tree, capsys, sep, word):
    path = tree / CSV
    path.write_text(path.read_text(encoding="utf-8").replace(",", sep), encoding="utf-8")
    status, out, err = run_cli(capsys, "validate", tree)
    assert status == 1 and "Traceback" not in out + err
    assert f"clips.csv is separated by {word}; save it comma-separated" in out


def test_empty_clips_csv(tree, capsys):
    (tree / CSV).write_bytes(b"")
    status, out, err = run_cli(capsys, "validate", tree)
    assert status == 1 and "Traceback" not in out + err
    assert "clips.csv is empty" in out


def test_clips_csv_missing_a_column(tree, capsys):
    rows = _rows(tree)
    _write_rows(tree, [{k: v for k, v in r.items() if k != "fps"} for r in rows])
    status, out, err = run_cli(capsys, "validate", tree)
    assert status == 1 and "Traceback" not in out + err
    assert "lacks columns ['fps']" in out


# ----------------------------------------------------------------------------- grid declaration / --grid
@pytest.mark.parametrize("content,needle", [
    (b"{not json", "grid.json is not a valid grid declaration"),
    (b"[1, 2]", "a grid declaration is a JSON object"),
    (b'{"actors": 1, "moods": ["happy"]}', "unknown grid fields ['moods']"),
    (b'{"emotions": ["ecstatic"]}', "bad grid value"),
    (b'{"actors": [0]}', f"actors [0] outside 1..{NUM_ACTORS}"),
    (b'{"scripts": "two"}', "bad grid value"),
    ('{"emotions": ["快乐"]}'.encode("gbk"), "line 1 is not UTF-8"),
])
def test_invalid_grid_json_is_one_line_error(tree, capsys, content, needle):
    (tree / "metadata" / "grid.json").write_bytes(content)
    assert_one_line_error(run_cli(capsys, "validate", tree), 1, "grid.json", needle)


@pytest.mark.parametrize("spec", ["actors=x", "actors", "moods=1", "emotions=ecstatic", "actors=1-x",
                                  "actors=0", "scripts=1+", "actors=2,,"])
def test_bad_grid_option_is_a_usage_error(good_tree, capsys, spec):
    before = snapshot(good_tree)
    assert_one_line_error(run_cli(capsys, "validate", good_tree, "--grid", spec), 2, "--grid")
    assert snapshot(good_tree) == before


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_bad_num_proc_for_validate(good_tree, capsys, value):
    assert_one_line_error(run_cli(capsys, "validate", good_tree, "--num-proc", value), 2, "--num-proc", value)


def test_missing_release_folder(tmp_path, capsys):
    assert_one_line_error(run_cli(capsys, "validate", tmp_path / "nope"), 2, "nope", "does not exist")


def test_bad_layout_json(good_tree, tmp_path, capsys):
    layout = tmp_path / "layout.json"
    layout.write_text('{"audio": ', encoding="utf-8")
    assert_one_line_error(run_cli(capsys, "validate", good_tree, "--layout", layout), 1)


# ----------------------------------------------------------------------------- links and stray files
@pytest.mark.parametrize("kind", ["audio_path", "video_path", "alpha_frame", "transcript"])
def test_symlink_leaving_the_release_is_a_finding_and_build_refuses(tree, tmp_path, capsys, kind):
    row = _rows(tree)[0]
    if kind == "alpha_frame":
        target = tree / row["alpha_matte_path"] / "000000.png"
    elif kind == "transcript":
        target = tree / row["audio_path"].replace("audio/", "transcripts/").replace(".wav", ".txt")
    else:
        target = tree / row[kind]
    outside = tmp_path / "outside" / target.name
    outside.parent.mkdir()
    shutil.copy(target, outside)  # same bytes: only the link itself is wrong
    target.unlink()
    os.symlink(outside, target)
    status, out, err = run_cli(capsys, "validate", tree)
    assert status == 1 and "Traceback" not in out + err
    findings = [line for line in out.splitlines() if "[symlink]" in line]
    assert len(findings) == 1 and row["clip_id"] in findings[0] and str(outside) in findings[0]
    repo = tmp_path / "repo"
    assert_one_line_error(run_cli(capsys, "build", tree, repo), 1, "fails validation")
    assert not repo.exists()  # nothing embedded from outside


def test_unlisted_media_are_warnings_not_errors(tree, capsys):
    row = _rows(tree)[0]
    stray = tree / "video_processed" / "actor_0009" / "happy" / "action_01" / "script_001.mp4"
    stray.parent.mkdir(parents=True)
    shutil.copy(tree / row["video_path"], stray)
    junk = tree / row["alpha_matte_path"] / "notes.txt"
    junk.write_text("junk", encoding="utf-8")
    report = validate_release(tree)
    assert report.ok
    messages = sorted(p.message for p in report.warnings)
    assert len(messages) == 2
    assert messages[0].startswith(row["alpha_matte_path"] + "/notes.txt in an alpha folder is not a frame PNG")
    assert messages[1].startswith("video_processed/actor_0009/happy/action_01/script_001.mp4 is not listed")
    status, out, _ = run_cli(capsys, "validate", tree)
    assert status == 0 and out.count("warning: [unlisted]") == 2


# ----------------------------------------------------------------------------- build options
@pytest.mark.parametrize("option,value", [("--shard-mb", "0"), ("--shard-mb", "-1"), ("--shard-mb", "nan"),
                                          ("--shard-mb", "inf"), ("--shard-mb", "x"), ("--row-group-mb", "-1"),
                                          ("--row-group-mb", "0"), ("--num-proc", "0")])
def test_bad_build_options_are_usage_errors(good_tree, tmp_path, capsys, option, value):
    repo = tmp_path / "repo"
    assert_one_line_error(run_cli(capsys, "build", good_tree, repo, option, value), 2, option)
    assert not repo.exists()


def test_tiny_shard_size_rounding_to_zero_bytes(good_tree, tmp_path, capsys):
    assert_one_line_error(run_cli(capsys, "build", good_tree, tmp_path / "r", "--shard-mb", "1e-9"), 2,
                          "must be positive")


def test_unknown_config(good_tree, tmp_path, capsys):
    assert_one_line_error(run_cli(capsys, "build", good_tree, tmp_path / "r", "--configs", "nosuch"), 1, "nosuch")


def test_build_into_a_file(good_tree, tmp_path, capsys):
    target = tmp_path / "file"
    target.write_text("mine", encoding="utf-8")
    assert_one_line_error(run_cli(capsys, "build", good_tree, target, "--resume"), 1, "is a file")
    assert target.read_text(encoding="utf-8") == "mine"


def test_build_of_a_non_utf8_release(tree, tmp_path, capsys):
    path = tree / CSV
    path.write_bytes(path.read_text(encoding="utf-8").encode("gbk"))
    assert_one_line_error(run_cli(capsys, "build", tree, tmp_path / "r"), 1, "clips.csv", "not UTF-8")


# ----------------------------------------------------------------------------- --resume into foreign folders
@pytest.fixture(scope="module")
def tiny_release(tmp_path_factory):
    return make_release(tmp_path_factory.mktemp("tiny"))


FOREIGN_FOLDERS = {
    "plain folder": {"data/matting/test-00000.parquet": b"my own data", "notes.txt": b"keep me"},
    "foreign manifest": {"manifest.json": b'{"configs": {}, "plan": "x"}', "data/matting/a.parquet": b"mine"},
    "broken manifest": {"manifest.json": b"{oops", "data/clips/test-00000.parquet": b"mine"},
    "foreign state": {".hugvis-build/matting.json": b"[1, 2]", "data/matting/test-00000.parquet": b"mine"},
}


@pytest.mark.parametrize("case", sorted(FOREIGN_FOLDERS))
def test_resume_refuses_a_folder_that_is_not_our_build(tiny_release, tmp_path, capsys, case):
    repo = tmp_path / "repo"
    for name, data in FOREIGN_FOLDERS[case].items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(data)
    before = snapshot(repo)
    assert_one_line_error(run_cli(capsys, "build", tiny_release, repo, "--resume"), 1, str(repo),
                          "not a hug-vis build")
    assert snapshot(repo) == before


def test_resume_refuses_a_build_of_another_release(tiny_release, tmp_path, capsys):
    repo = tmp_path / "repo"
    assert run_cli(capsys, "build", tiny_release, repo)[0] == 0
    other = make_release(tmp_path / "other", seed=1)
    rows = (other / CSV).read_text(encoding="utf-8").replace("。", ".")  # another release, same clips
    (other / CSV).write_text(rows, encoding="utf-8")
    before = snapshot(repo)
    assert_one_line_error(run_cli(capsys, "build", other, repo, "--resume"), 1, "another release")
    assert snapshot(repo) == before


def test_resume_never_deletes_a_file_it_did_not_write(tiny_release, tmp_path, capsys):
    repo = tmp_path / "repo"
    assert run_cli(capsys, "build", tiny_release, repo)[0] == 0
    mine = repo / "data" / "matting" / "my_notes.parquet"
    mine.write_bytes(b"precious")
    before = snapshot(repo)
    assert_one_line_error(run_cli(capsys, "build", tiny_release, repo, "--resume"), 1, "my_notes.parquet",
                          "not written by hugvis build")
    assert snapshot(repo) == before
    mine.unlink()
    status, out, err = run_cli(capsys, "build", tiny_release, repo, "--resume")  # our own build: resumes
    assert status == 0, err
    # The same bytes, but the guard's ledger (it records when each file was written again).
    after = {k: v for k, v in snapshot(repo).items() if Path(k).name not in GUARD_FILES}
    assert after == {k: v for k, v in before.items() if k != "data/matting/my_notes.parquet" and Path(k).name not in GUARD_FILES}


def test_debug_flag_shows_the_traceback_instead(tree, capsys):
    from hug_vis_dataset.cli import main
    from hug_vis_dataset.validate import GridDeclarationError

    (tree / "metadata" / "grid.json").write_bytes(b"{not json")
    with pytest.raises(GridDeclarationError, match="grid.json"):
        main(["--debug", "validate", str(tree)])

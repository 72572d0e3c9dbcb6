"""Hostile input to ``hugvis report`` and ``hugvis mos``: broken results folders, mistyped
folders, unreadable ratings. One ``error:`` line naming the file (or a skipped folder named in
the report), no traceback, nothing earlier changed."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest
from hostile_cli import assert_one_line_error, run_cli, snapshot
from test_scoring_repo import built, systems  # noqa: F401 - fixture

from hug_vis_dataset.studies.mos import RATING_COLUMNS
from hug_vis_dataset.scoring.runner import evaluate_submission


@pytest.fixture(scope="module")
def results(built, tmp_path_factory):
    """Emotion results of two simulated systems."""
    release, _ = built
    out = tmp_path_factory.mktemp("results")
    for system in systems(release, "emotion")[:2]:
        evaluate_submission("emotion", system, system.name, release, out, progress=False)
    return out


@pytest.fixture
def damaged(results, tmp_path):
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    return copy


def _model_folders(root):
    return sorted(p.parent for p in root.glob("*/*/summary.json"))


def _break(folder, how: str) -> None:
    rows = folder / "rows.parquet"
    if how == "truncated rows":
        rows.write_bytes(rows.read_bytes()[: rows.stat().st_size // 2])
    elif how == "empty rows":
        rows.write_bytes(b"")
    elif how == "garbage summary":
        (folder / "summary.json").write_text("{not json", encoding="utf-8")
    elif how == "summary of another tool":
        (folder / "summary.json").write_text('{"hello": 1}', encoding="utf-8")
    elif how == "gbk summary":
        (folder / "summary.json").write_bytes('{"task": "情绪"}'.encode("gbk"))


HOW = ["truncated rows", "empty rows", "garbage summary", "summary of another tool", "gbk summary"]


@pytest.mark.parametrize("how", HOW)
def test_report_skips_a_broken_folder_names_it_and_writes_the_rest(damaged, tmp_path, capsys, how):
    broken, kept = _model_folders(damaged)
    _break(broken, how)
    before = snapshot(damaged)
    status, out, err = run_cli(capsys, "report", damaged, "--out", tmp_path / "rep", "--n-boot", "0",
                               "--no-figures", "--format", "md")
    assert status == 0 and "Traceback" not in out + err
    warnings = [line for line in err.splitlines() if line.startswith("warning: skipped results folder")]
    assert len(warnings) == 1 and str(broken) in warnings[0]
    table = (tmp_path / "rep" / "emotion.md").read_text(encoding="utf-8")
    assert kept.name in table and broken.name not in table
    assert str(broken) in (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert snapshot(damaged) == before


def test_report_with_every_folder_broken_is_an_error(damaged, tmp_path, capsys):
    folders = _model_folders(damaged)
    for folder in folders:
        _break(folder, "truncated rows")
    assert_one_line_error(run_cli(capsys, "report", damaged, "--out", tmp_path / "rep", "--n-boot", "0"), 1,
                          "every results folder is broken", str(folders[0]))


@pytest.mark.parametrize("what", ["empty", "mistyped", "a file", "task level"])
def test_report_on_a_folder_without_results_is_an_error(results, tmp_path, capsys, what):
    target = {"empty": tmp_path / "empty", "mistyped": tmp_path / "resluts", "a file": tmp_path / "r.txt",
              "task level": results / "emotion"}[what]
    if what == "empty":
        target.mkdir()
    elif what == "a file":
        target.write_text("x", encoding="utf-8")
    result = run_cli(capsys, "report", target, "--out", tmp_path / "rep", "--n-boot", "0")
    assert_one_line_error(result, 1, str(target), "hugvis evaluate")
    assert not (tmp_path / "rep").exists()


@pytest.mark.parametrize("option,value", [("--n-boot", "-1"), ("--n-boot", "x"), ("--format", "pdf")])
def test_report_bad_options(results, tmp_path, capsys, option, value):
    assert_one_line_error(run_cli(capsys, "report", results, "--out", tmp_path / "rep", option, value),
                          2 if option == "--n-boot" else 1, value)


# ----------------------------------------------------------------------------- ratings files
GOOD = [("r1", "actor_0001_happy_action_01_script_001", "m", "lip_sync", "4"),
        ("r2", "actor_0001_happy_action_01_script_001", "m", "lip_sync", "5"),
        ("r1", "actor_0001_sad_action_01_script_001", "m", "lip_sync", "3")]


def _csv(rows, columns=RATING_COLUMNS, sep=",") -> str:
    return "\n".join([sep.join(columns)] + [sep.join(r) for r in rows]) + "\n"


BAD_RATINGS = {
    "missing column": (_csv([r[:4] for r in GOOD], RATING_COLUMNS[:4]).encode(), "lacks columns ['score']"),
    "semicolons": (_csv(GOOD, sep=";").encode(), "separated by ';'"),
    "tabs": (_csv(GOOD, sep="\t").encode(), "separated by tabs"),
    "empty": (b"", "is empty"),
    "blank lines": (b"\n\n  \n", "is empty"),
    "header only": (_csv([]).encode(), "has a header but no ratings"),
    "gbk": (_csv([("评分员", *GOOD[0][1:])]).encode("gbk"), "line 2 is not UTF-8"),
    "utf-16": (_csv(GOOD).encode("utf-16"), "line 1 is not UTF-8"),
    "ragged": (_csv(GOOD).encode() + b"a,b,c,d,e,f,g,h\n", "not a readable CSV"),
    "all invalid": (_csv([(r[0], r[1], r[2], r[3], "9") for r in GOOD]).encode(), "no valid ratings"),
}


@pytest.mark.parametrize("case", sorted(BAD_RATINGS))
def test_mos_bad_ratings_file(tmp_path, capsys, case):
    data, needle = BAD_RATINGS[case]
    path = tmp_path / "ratings.csv"
    path.write_bytes(data)
    assert_one_line_error(run_cli(capsys, "mos", path, "--n-boot", "10"), 1, "ratings.csv", needle)


@pytest.mark.parametrize("case", ["missing column", "semicolons", "empty", "header only", "gbk"])
def test_report_mos_bad_ratings_file(results, tmp_path, capsys, case):
    data, needle = BAD_RATINGS[case]
    path = tmp_path / "ratings.csv"
    path.write_bytes(data)
    result = run_cli(capsys, "report", results, "--out", tmp_path / "rep", "--n-boot", "0", "--no-figures",
                     "--mos", path)
    assert_one_line_error(result, 1, "ratings.csv", needle)


def test_mos_missing_file_and_bad_n_boot(tmp_path, capsys):
    assert_one_line_error(run_cli(capsys, "mos", tmp_path / "nope.csv"), 1, "nope.csv", "does not exist")
    path = tmp_path / "ok.csv"
    path.write_text(_csv(GOOD), encoding="utf-8")
    assert_one_line_error(run_cli(capsys, "mos", path, "--n-boot", "0"), 2, "--n-boot")


def test_mos_bom_is_accepted_and_one_actor_intervals_say_na(tmp_path, capsys):
    path = tmp_path / "ratings.csv"
    path.write_bytes(b"\xef\xbb\xbf" + _csv(GOOD).encode())
    status, out, err = run_cli(capsys, "mos", path, "--n-boot", "50")
    assert status == 0, err
    # clip means 4.5 and 3 -> MOS 3.75 from one actor: no interval to show
    line = next(x for x in out.splitlines() if "lip_sync" in x and "clips" in x)
    assert "3.75 n/a (1 actor)" in line and "[" not in line


def test_mos_two_actors_print_an_interval(tmp_path, capsys):
    rows = GOOD + [("r1", "actor_0002_sad_action_01_script_001", "m", "lip_sync", "1")]
    path = tmp_path / "ratings.csv"
    path.write_text(_csv(rows), encoding="utf-8")
    status, out, _ = run_cli(capsys, "mos", path, "--n-boot", "50")
    assert status == 0
    line = next(x for x in out.splitlines() if "lip_sync" in x and "clips" in x)
    mos = (4.5 + 3 + 1) / 3
    assert line.split()[2] == f"{mos:.2f}" and "[" in line and "n/a" not in line
    assert pd.read_csv(path).shape == (4, 5)  # the input is untouched

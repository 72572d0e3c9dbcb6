"""Validator on a good synthetic tree and on deliberately broken copies."""

import csv
import json
import shutil
import subprocess
import sys

import pytest

from hug_vis_dataset.datamodel.layout import DEFAULT_LAYOUT
from hug_vis_dataset.validate import GridSpec, validate_release

SMALL = dict(actors=1, emotions=["Happy", "Afraid"], actions=1, scripts=2, seconds=0.4, size=(64, 36), systems=False)


@pytest.fixture(scope="module")
def good_tree(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("release")
    synthesize(root, seed=3, **SMALL)
    return root


@pytest.fixture
def tree(good_tree, tmp_path):
    copy = tmp_path / "release"
    shutil.copytree(good_tree, copy)
    return copy


def _rows(root):
    with open(root / DEFAULT_LAYOUT.metadata_csv, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _write_rows(root, rows):
    with open(root / DEFAULT_LAYOUT.metadata_csv, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_good_tree_is_clean_and_cli_exits_zero(good_tree):
    report = validate_release(good_tree)
    assert report.ok, report.to_text()
    assert report.expected_clips == report.checked_clips == 4
    done = _cli("validate", good_tree, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["ok"] is True


def test_full_grid_expectation_reports_missing_clips(good_tree):
    report = validate_release(good_tree, grid=GridSpec())
    missing = [p for p in report.problems if p.check == "missing"]
    assert len(missing) == 8400 - 4


def test_broken_tree_names_every_clip_and_problem(tree):
    rows = _rows(tree)
    ids = [r["clip_id"] for r in rows]
    assert len(ids) == 4
    # 1. a removed alpha frame (in the middle: a gap, and a frame-count mismatch)
    alpha_dir = tree / rows[0]["alpha_matte_path"]
    (alpha_dir / "000005.png").unlink()
    # 2. a truncated audio file (header intact, data cut)
    audio = tree / rows[1]["audio_path"]
    data = audio.read_bytes()
    audio.write_bytes(data[: len(data) // 2])
    # 3. a corrupt PNG
    (tree / rows[2]["alpha_matte_path"] / "000003.png").write_bytes(b"\x89PNG\r\n\x1a\n garbage")
    # 4. a missing CSV row and 5. a duplicated id
    removed = rows.pop(3)
    rows.append(dict(rows[0]))
    _write_rows(tree, rows)

    report = validate_release(tree)
    assert not report.ok
    found = {(p.clip_id, p.check) for p in report.problems}
    text = report.to_text()
    assert (ids[0], "alpha") in found and "alpha frames missing: 5" in text
    assert (ids[0], "frame_count") in found
    assert any(p.clip_id == ids[1] and p.check in ("audio", "duration") for p in report.problems)
    assert (ids[2], "alpha") in found and "corrupt PNG" in text
    assert (removed["clip_id"], "missing") in found
    assert (ids[0], "duplicate") in found
    # no error is reported for an unrelated clip id; the removed row's media are unlisted (warnings)
    assert {p.clip_id for p in report.errors} <= set(ids)
    unlisted = {p.message.split(" ", 1)[0] for p in report.warnings if p.check == "unlisted"}
    assert unlisted == {removed["audio_path"], removed["video_path"], removed["alpha_matte_path"].rstrip("/") + "/",
                        removed["audio_path"].replace("audio/", "transcripts/").replace(".wav", ".txt")}

    done = _cli("validate", tree)
    assert done.returncode == 1
    for clip in (ids[0], ids[1], ids[2], removed["clip_id"]):
        assert clip in done.stdout


def test_mismatched_paths_and_fields_are_reported(tree):
    rows = _rows(tree)
    rows[0]["emotion"] = "Sad"
    rows[1]["video_path"] = rows[0]["video_path"]
    rows[2]["resolution"] = "65x36"
    rows[3]["clip_id"] = "actor_01_happy"
    _write_rows(tree, rows)
    report = validate_release(tree)
    messages = {(p.clip_id, p.check): p.message for p in report.problems}
    assert "emotion column" in messages[(rows[0]["clip_id"], "metadata")]
    assert "video_path" in messages[(rows[1]["clip_id"], "metadata")]
    assert (rows[2]["clip_id"], "resolution") in messages
    assert any(p.clip_id == "actor_01_happy" and "bad clip id" in p.message for p in report.problems)


def test_missing_modalities_are_reported_not_crashing(tree):
    rows = _rows(tree)
    (tree / rows[0]["video_path"]).unlink()
    shutil.rmtree(tree / rows[1]["alpha_matte_path"])
    (tree / rows[2]["audio_path"]).unlink()
    (tree / DEFAULT_LAYOUT.transcript_path(__import__("hug_vis_dataset").ClipId.parse(rows[3]["clip_id"]))).unlink()
    (tree / rows[3]["video_path"]).write_bytes(b"not a video")
    checks = {(p.clip_id, p.check) for p in validate_release(tree).problems}
    assert (rows[0]["clip_id"], "video") in checks
    assert (rows[1]["clip_id"], "alpha") in checks
    assert (rows[2]["clip_id"], "audio") in checks
    assert (rows[3]["clip_id"], "transcript") in checks
    assert (rows[3]["clip_id"], "video") in checks


def test_missing_csv_is_one_clear_problem(tree):
    (tree / DEFAULT_LAYOUT.metadata_csv).unlink()
    report = validate_release(tree)
    assert [p.check for p in report.problems] == ["metadata"]
    assert "does not exist" in report.problems[0].message


def test_num_proc_gives_the_same_report(tree):
    rows = _rows(tree)
    (tree / rows[2]["alpha_matte_path"] / "000001.png").write_bytes(b"junk")
    one = validate_release(tree, num_proc=1)
    two = validate_release(tree, num_proc=2)
    assert one.problems == two.problems and not one.ok


def test_grid_spec_parsing():
    spec = GridSpec.parse("actors=2,actions=4,scripts=1-2,emotions=happy+fearful")
    assert spec.actors == (1, 2) and spec.actions == (1, 2, 3, 4) and spec.scripts == (1, 2)
    assert spec.emotions == ("Happy", "Afraid")
    assert len(GridSpec.parse("full").clip_ids()) == 8400

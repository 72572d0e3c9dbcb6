"""Skipped lines of the MOS store are named where they are read (issue 35, "the MOS store").

A rating message used to say that the ratings log has skipped lines "listed below", where the rater may
see no list. The message itself now names them, ``ratings.jsonl:<line>: <reason>; <fix>`` (the first
ten, then how many more; Markdown-escaped, the server's folders left out), and so do ``hugvis mos status``
and ``hugvis mos`` (``<file>:<line>: <reason>``), each checked in a real subprocess.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hug_vis_dataset.presentation.escaping import markdown_text
from hug_vis_dataset.studies.mos import RATING_COLUMNS
from hug_vis_dataset.studies.ratings import LINE_FIX

SHOWN_LINES = 10  # the bound every listing keeps (hug_vis_dataset.presentation.skipped_lines.SHOWN_LINES)

REPO = Path(__file__).resolve().parents[1]
TASK = "audio_driven"
FORGED = "<img src=x onerror=alert(1)>|*x*"  # a model name in a hand-edited line: shown, never rendered


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("named") / "rel"
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.2, size=(32, 18))
    return root


def damage(log: Path, clip: str) -> list[int]:
    """Append 12 lines that are not JSON and one forged rating; returns their line numbers."""
    first = len(log.read_bytes().splitlines()) + 1 if log.is_file() else 1
    forged = {"rater": "r9", "task": TASK, "clip_id": clip, "model": FORGED, "criterion": "lip_sync", "score": 3,
              "seq": 99, "time": 0}
    with open(log, "ab") as handle:
        for n in range(12):
            handle.write(f"garbage {n}\n".encode())
        handle.write((json.dumps(forged) + "\n").encode())
    return list(range(first, first + 13))


def test_the_rating_message_names_each_skipped_line(release, tmp_path):
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.studies.study_desk import MosStudy

    log = tmp_path / "store" / "ratings" / "ratings.jsonl"
    study = MosStudy(Release(release), release, log)
    system, clips = study.systems(TASK)[0], study.clip_ids()
    study.rate(TASK, system, clips[0], "r1", 2, 4, 5)
    numbers = damage(log, clips[1])  # lines 4..16 (the first rating is lines 1..3)
    message, _ = study.rate(TASK, system, clips[1], "r2", 4, 4, 3)

    head, listing = message.split("\n\n", 1)
    assert head == f"Stored 3 score(s) from r2 for {markdown_text(system)} on {markdown_text(clips[1])}."
    lines = listing.splitlines()
    assert lines[0] == "The ratings log has 13 skipped line(s), left out of the MOS:"
    items = lines[1:]
    assert len(items) == SHOWN_LINES + 1 and items[-1] == "- and 3 more"
    for item, number in zip(items[:SHOWN_LINES], numbers):  # file:line: reason; fix, in file order
        assert item == "- " + markdown_text(f"ratings.jsonl:{number}: not JSON (Expecting value at column 1); "
                                            f"{LINE_FIX}")
    assert str(log.parent) not in message  # the public page never shows the server's folders
    # The forged name, listed when it is among the first shown, is escaped: never an <img> tag.
    note = study.skipped_note(study.problems()[-1:], 1)
    assert re.search(r"(?<!\\)<img", note) is None and markdown_text("<img src=x onerror=alert(1)>") in note
    assert note.splitlines()[1].startswith("- " + markdown_text(f"ratings.jsonl:{numbers[-1]}: model name '"))
    from hug_vis_dataset.presentation.skipped_lines import SHOWN_LINES as bound

    assert bound == SHOWN_LINES
    # A clean log: nothing about skipped lines.
    clean = MosStudy(Release(release), release, tmp_path / "clean.jsonl")
    assert "\n" not in clean.rate(TASK, system, clips[0], "r1", 2, 4, 5)[0]


def run_hugvis(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", *args], capture_output=True, text=True,
                          timeout=300, env=env)


def test_mos_status_names_each_skipped_line(release, tmp_path):
    study = release / "simulated_systems" / "study"
    log = tmp_path / "ratings.jsonl"
    log.write_bytes((study / "ratings.jsonl").read_bytes())
    (tmp_path / "sessions.jsonl").write_bytes((study / "sessions.jsonl").read_bytes())
    numbers = damage(log, "actor_0001_happy_action_01_script_001")
    done = run_hugvis("mos", "status", "--study", str(study / "mos_study.json"), "--log", str(log), "--release",
                      str(release))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    start = lines.index(f"13 skipped line(s) in {log}, left out of the MOS:")
    named = lines[start + 1:start + 2 + SHOWN_LINES]
    assert named[:SHOWN_LINES] == [f"  {log}:{n}: not JSON (Expecting value at column 1); {LINE_FIX}"
                                   for n in numbers[:SHOWN_LINES]]
    assert named[SHOWN_LINES] == "  and 3 more"


def test_hugvis_mos_names_each_invalid_line(tmp_path):
    clip = "actor_0001_happy_action_01_script_001"
    rows = [("r1", clip, "m", "lip_sync", "4"), ("r2", clip, "m", "lip_sync", "9"), ("r3", clip, "m", "lip_sync", "5"),
            ("", clip, "m", "lip_sync", "3"), ("r4", "not-a-clip", "m", "lip_sync", "2")]
    path = tmp_path / "ratings.csv"
    path.write_text("\n".join([",".join(RATING_COLUMNS)] + [",".join(r) for r in rows]) + "\n")
    done = run_hugvis("mos", str(path), "--n-boot", "10")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "2 valid ratings, 3 invalid"
    assert [line for line in lines if line.startswith(f"  {path}:")] == [
        f"  {path}:3: score 9 is not an integer in 1..5", f"  {path}:5: empty rater", f"  {path}:6: bad clip id"]
    # Nothing valid at all: the one-line error names the lines too.
    path.write_text("\n".join([",".join(RATING_COLUMNS)] + [",".join(r) for r in rows[3:]]) + "\n")
    done = run_hugvis("mos", str(path), "--n-boot", "10")
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert f"{path}:2: empty rater; {path}:3: bad clip id" in done.stderr

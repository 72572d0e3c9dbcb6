"""Integrity of the MOS study's ratings: only what the study presents is stored, scores are
validated as sent, corrupt log lines are skipped and named, concurrent writers keep every line.

Real values on a synthetic release (``hug_vis_dataset.synth.synthesize``) and a real ratings file;
the expected MOS values are worked out by hand from the valid lines.
"""

from __future__ import annotations

import json
import math
import multiprocessing
import re
import shutil

import pytest

from hug_vis_dataset.presentation.escaping import markdown_text
from hug_vis_dataset.studies.ratings import LINE_FIX, RatingError, read_log

TASK = "audio_driven"
CRITERIA_LABELS = ("ID Similarity", "Emotion Naturalness", "Lip Synchronization")
# Only clips[0] has an output of this system: a real system of the study with a missing output.
PARTIAL = "talk_partial"


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("integrity") / "rel"
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.2, size=(32, 18))
    systems = root / "simulated_systems" / TASK
    first = sorted(p for p in systems.iterdir() if p.is_dir())[0]
    clip = sorted(first.glob("*.mp4"))[0]
    (systems / PARTIAL).mkdir()
    shutil.copy(clip, systems / PARTIAL / clip.name)
    return root


def _study(release, path):
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.studies.study_desk import MosStudy

    return MosStudy(Release(release), release, path)


def _system(study) -> str:
    return next(s for s in study.systems(TASK) if s != PARTIAL)


def _mos(study) -> dict[str, float]:
    from hug_vis_dataset.studies.status import aggregate_ratings

    table = aggregate_ratings(study.ratings.frame())
    return {r.criterion: r.mos for r in table.itertuples() if r.task == TASK and r.model == _system(study)}


def _writer(args):
    release, path, rater, n = args
    study = _study(release, path)
    system, clips = _system(study), study.clip_ids()
    refused = 0
    for i in range(n):
        message, _ = study.rate(TASK, system, clips[i % 2], rater, 1 + i % 5, 3.0, 5)
        refused += message.startswith("**Rating refused:**")
    return refused


def test_a_rating_outside_the_study_is_refused_and_nothing_is_written(release, tmp_path):
    path = tmp_path / "ratings.jsonl"
    study = _study(release, path)
    system, clips = _system(study), study.clip_ids()
    assert PARTIAL in study.systems(TASK) and study.media(TASK, PARTIAL, clips[1]) is None
    assert study.rate(TASK, system, clips[0], "r1", 2, 4, 5)[0].startswith("Stored 3")
    before = path.read_bytes()
    outside_release = "actor_0009_sad_action_01_script_001"  # a valid clip id the release does not have
    cases = [
        ((TASK, "GPT-7-fake", clips[0]), "system 'GPT-7-fake' is not in the audio_driven study; choose one of"),
        ((TASK, "../../..", clips[0]), "model name '../../..' must be 1-64 letters"),  # the name rule first
        ((TASK, system, outside_release), f"clip '{outside_release}' is not in the release; choose a clip"),
        ((TASK, PARTIAL, clips[1]), f"system '{PARTIAL}' has no audio_driven output for clip '{clips[1]}'"),
        (("voice_cloning", system, clips[0]), f"system '{system}' is not in the voice_cloning study"),
        (("matting", system, clips[0]), "task 'matting' has no MOS study; choose one of"),
    ]
    for (task, model, clip), want in cases:
        message, table = study.rate(task, model, clip, "r2", 3, 3, 3)
        assert message.startswith(f"**Rating refused:** {markdown_text(want)}") and "\n" not in message
        assert len(table) == 3  # the table of the one valid rating is still shown
    # The rule is the store's, not only the callback's: a direct add is refused the same way.
    with pytest.raises(RatingError, match="'GPT-7-fake' is not in the audio_driven study"):
        study.ratings.add("r2", TASK, clips[0], "GPT-7-fake", {"id_similarity": 3, "emotion_naturalness": 3,
                                                               "lip_sync": 3})
    # A criterion the task does not have, sent straight to the store.
    with pytest.raises(RatingError, match=r"criteria \['motion_naturalness'\] are not rated for audio_driven"):
        study.ratings.add("r2", TASK, clips[0], system, {"id_similarity": 3, "emotion_naturalness": 3,
                                                         "lip_sync": 3, "motion_naturalness": 3})
    assert path.read_bytes() == before
    # The partial system's one output can be rated.
    assert study.rate(TASK, PARTIAL, clips[0], "r2", 3, 3, 3)[0].startswith("Stored 3")


def test_forged_request_values_never_raise_and_are_escaped(release, tmp_path):
    path = tmp_path / "ratings.jsonl"
    study = _study(release, path)
    system, clip = _system(study), study.clip_ids()[0]
    forged = [(["x"], system, clip, "r1"), (TASK, 5, clip, "r1"), (TASK, system, None, "r1"),
              (TASK, system, clip, None), (TASK, system, clip, 7), (None, None, None, None),
              (TASK, "**bold** <img src=x>", clip, "r1"), (TASK, system, clip, "`x` [a](javascript:1)")]
    for task, model, clip_id, rater in forged:
        message, _ = study.rate(task, model, clip_id, rater, 3, 3, 3)
        assert message.startswith("**Rating refused:** ") and "\n" not in message
        # Every character that could open markup is escaped.
        assert not re.search(r"(?<!\\)[<`]", message) and "**bold**" not in message and "[a](" not in message
    assert not path.exists()
    message, _ = study.rate(TASK, "**bold** <img src=x>", clip, "r1", 3, 3, 3)
    assert markdown_text("'**bold** <img src=x>'") in message
    # The item notes escape what the dropdowns sent as well.
    note = study.item(TASK, "<b>x</b>", clip).note
    assert note.startswith("No output of \\<b\\>x\\</b\\> for ") and "<b>" not in note
    assert study.item(TASK, system, "../../etc/passwd").note == "Clip ../../etc/passwd is not in the release."
    assert study.item(TASK, ["x"], clip).video is None and study.item(TASK, system, ["x"]).video is None


@pytest.mark.parametrize("score,shown", [(4.6, "4.6"), (4.5, "4.5"), ("abc", "'abc'"), (math.nan, "nan"),
                                         (True, "True"), ("4", "'4'"), ([4], "[4]"), (0, "0"), (6.0, "6.0")])
def test_scores_are_validated_as_sent(release, tmp_path, score, shown):
    path = tmp_path / "ratings.jsonl"
    study = _study(release, path)
    message, _ = study.rate(TASK, _system(study), study.clip_ids()[0], "r1", 3, score, 3)
    assert message == "**Rating refused:** " + markdown_text(f"emotion_naturalness score {shown} must be an "
                                                              "integer in 1..5")
    assert not path.exists()


def test_an_unset_slider_is_refused_naming_the_criterion(release, tmp_path):
    path = tmp_path / "ratings.jsonl"
    study = _study(release, path)
    message, _ = study.rate(TASK, _system(study), study.clip_ids()[0], "r1", 3, 3, None)
    assert message == "**Rating refused:** " + markdown_text("missing scores for ['lip_sync']: each needs an "
                                                              "integer in 1..5")
    message, _ = study.rate(TASK, _system(study), study.clip_ids()[0], "r1", 3, 3)  # a request one short
    assert "missing scores for" in message and "lip" in message
    assert not path.exists()


def test_a_slider_float_is_stored_as_its_integer(release, tmp_path):
    path = tmp_path / "ratings.jsonl"
    study = _study(release, path)
    # 4.0 as a slider sends it; the fourth value is a hidden slider of another task, ignored.
    message, _ = study.rate(TASK, _system(study), study.clip_ids()[0], "r1", 4.0, 1.0, 5.0, 3.0)
    assert message.startswith("Stored 3 score(s) from r1")
    scores = [json.loads(line)["score"] for line in path.read_text().splitlines()]
    assert scores == [4, 1, 5] and all(type(s) is int for s in scores)
    assert _mos(study) == dict(zip(CRITERIA_LABELS, (4.0, 1.0, 5.0)))


def test_corrupt_lines_are_skipped_counted_and_named(release, tmp_path):
    path = tmp_path / "ratings.jsonl"
    study = _study(release, path)
    system, (a, b) = _system(study), study.clip_ids()
    study.rate(TASK, system, a, "r1", 2, 4, 5)  # seq 1
    study.rate(TASK, system, a, "r2", 4, 4, 3)  # seq 2
    valid = {"rater": "r3", "task": TASK, "clip_id": b, "model": system, "criterion": "id_similarity",
             "score": 1, "seq": 30, "time": 0}
    with open(path, "ab") as handle:  # lines 7..11
        handle.write(b"this is not json\n")
        handle.write(b"[1, 2, 3]\n")
        handle.write((json.dumps(valid | {"seq": "30"}) + "\n").encode())  # would pull clip b's ID MOS down
        handle.write(b'{"rater": "r1", "score": "\xff\xfe"}\n')
        handle.write((json.dumps(valid | {"model": "GPT-7-fake"}) + "\n").encode())  # a forged row of old
    study.rate(TASK, system, b, "r1", 5, 1, 1)  # lines 12..14, seq 31: above the forged line's 30
    with open(path, "ab") as handle:  # line 15: a crash in the middle of a submission, before its seq
        handle.write(json.dumps(valid)[:60].encode())
    seqs_before = study.ratings.history().seq.tolist()

    problems = study.problems()
    where = [p.split(": ", 1)[0] for p in problems]
    assert where == [f"{path}:{n}" for n in (7, 8, 9, 10, 11, 15)]
    assert all(p.endswith("; " + LINE_FIX) for p in problems)
    assert problems[0] == f"{path}:7: not JSON (Expecting value at column 1); {LINE_FIX}"
    assert problems[1] == f"{path}:8: not a JSON object (a list); {LINE_FIX}"
    assert problems[2] == f"{path}:9: seq '30' must be a positive integer; {LINE_FIX}"
    assert problems[3] == f"{path}:10: not UTF-8 text; {LINE_FIX}"
    assert problems[4].startswith(f"{path}:11: system 'GPT-7-fake' is not in the audio_driven study")
    assert problems[5] == (f"{path}:15: incomplete last line (no newline at its end: a write cut short, "
                           f"e.g. by a crash); {LINE_FIX}")
    # By hand from the valid lines: ID clip a (2 + 4) / 2 = 3, clip b 5 -> 4; emotion 4 and 1 -> 2.5;
    # lip sync (5 + 3) / 2 = 4 and 1 -> 2.5.
    assert _mos(study) == {"ID Similarity": 4.0, "Emotion Naturalness": 2.5, "Lip Synchronization": 2.5}
    notes = study.log_notes()
    assert notes.startswith("**The ratings log has 6 skipped line(s)**") and len(notes.splitlines()) == 7
    assert markdown_text(problems[0]) in notes

    # A new rating works, says the log has skipped lines, and its seq is above every seq written.
    message, table = study.rate(TASK, system, b, "r3", 3, 3, 3)
    assert message.startswith(f"Stored 3 score(s) from r3 for {system} on {b}.\n\n"
                              "The ratings log has 6 skipped line(s), left out of the MOS:\n")
    assert message.splitlines()[3] == "- " + markdown_text(problems[0].replace(f"{path.parent}/", ""))  # named
    lines = path.read_bytes().split(b"\n")
    assert lines[14] == json.dumps(valid)[:60].encode()  # the cut line is left as it was ...
    new = [json.loads(line) for line in lines[15:18]]  # ... and the new submission starts on its own line
    assert {r["seq"] for r in new} == {32} and seqs_before == [1] * 3 + [2] * 3 + [31] * 3
    # Clip b's ID now averages 5 and 3: MOS (3 + 4) / 2 = 3.5; emotion (4 + (1 + 3) / 2) / 2 = 3;
    # lip sync (4 + (1 + 3) / 2) / 2 = 3.
    assert _mos(study) == {"ID Similarity": 3.5, "Emotion Naturalness": 3.0, "Lip Synchronization": 3.0}
    assert len(table) == 3
    # The cut line now ends with a newline: still skipped, now as not JSON; the count is unchanged.
    assert len(study.problems()) == 6 and study.problems()[5].startswith(f"{path}:15: not JSON")
    # The rest of the study still works on this log.
    assert study.item(TASK, system, a).video is not None
    assert len(study.ratings.history()) == 12


def test_a_cut_seq_is_never_reused(release, tmp_path):
    path = tmp_path / "ratings.jsonl"
    study = _study(release, path)
    system, clip = _system(study), study.clip_ids()[0]
    study.rate(TASK, system, clip, "r1", 2, 2, 2)
    line = {"rater": "r2", "task": TASK, "clip_id": clip, "model": system, "criterion": "id_similarity",
            "score": 4, "seq": 2, "time": 0}
    with open(path, "a") as handle:  # a crash after the seq of the second submission was written
        handle.write(json.dumps(line)[:-12])
    message, _ = study.rate(TASK, system, clip, "r2", 4, 4, 4)
    assert "1 skipped line(s)" in message
    assert read_log(path)[0].seq.tolist() == [1, 1, 1, 3, 3, 3]


def test_concurrent_writers_keep_every_line_and_distinct_seqs(release, tmp_path):
    path = tmp_path / "ratings.jsonl"
    path.write_bytes(b"garbage left by an earlier crash\n")
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        refused = pool.map(_writer, [(release, path, "ra", 20), (release, path, "rb", 20)])
    assert refused == [0, 0]
    frame, problems = read_log(path)
    assert problems == [f"{path}:1: not JSON (Expecting value at column 1); {LINE_FIX}"]
    assert len(frame) == 2 * 20 * 3 and len(path.read_bytes().split(b"\n")) == 1 + 120 + 1
    per_seq = frame.groupby("seq").agg(n=("criterion", "size"), raters=("rater", "nunique"))
    assert sorted(per_seq.index) == list(range(1, 41))  # 40 distinct seqs, none lost or shared
    assert (per_seq.n == 3).all() and (per_seq.raters == 1).all()
    for rater in ("ra", "rb"):
        mine = frame[(frame.rater == rater) & (frame.criterion == "id_similarity")]
        assert mine.score.tolist() == [1 + i % 5 for i in range(20)] and mine.seq.is_monotonic_increasing


def test_the_leaderboard_still_shows_the_mos_with_a_corrupt_log(release, tmp_path):
    from hug_vis_dataset.space.app import Explorer

    space = Explorer(release, tmp_path / "results", work_dir=tmp_path / "work")
    system, (a, b) = _system(space.mos), space.mos.clip_ids()
    space.mos.rate(TASK, system, a, "r1", 2, 4, 5)
    with open(space.mos.ratings.path, "a") as handle:
        handle.write('{"rater": "r2", "task": "audio_dri')  # a crash mid-write: no newline
    space.mos.rate(TASK, system, b, "r1", 4, 4, 2)
    assert len(space.mos.problems()) == 1
    view, notes, _ = space.leaderboard("Table 6: x", ["paper", "synthetic demo"])
    # The board is drawn, and says how far the study is (its two answers do not replace the simulated raters yet).
    assert f"{system} (simulated raters)" in set(view["Model"]) and "The study's ratings (6 counted ratings)" in notes
    from hug_vis_dataset.studies.status import aggregate_ratings

    study = aggregate_ratings(space.mos.ratings.frame()).set_index(["model", "criterion"])
    # By hand: ID similarity clip means 2 and 4 -> 3; lip sync 5 and 2 -> 3.5.
    assert study.loc[(system, "ID Similarity"), "mos"] == 3.0
    assert study.loc[(system, "Lip Synchronization"), "mos"] == 3.5

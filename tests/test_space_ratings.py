"""MOS rating store: validation rules, append-only storage, tampered lines skipped and named, latest-wins
resolution, concurrent writers."""

from __future__ import annotations

import json
import multiprocessing
import math

import pytest

from hug_vis_dataset.studies.ratings import (CRITERIA, LINE_FIX, RatingError, RatingStore, latest_ratings,
                                           load_ratings, validate_rating)

CLIP = "actor_0001_happy_action_01_script_001"
CRITERIA_LABEL = {"id_similarity": "ID Similarity", "emotion_naturalness": "Emotion Naturalness"}


def _writer(args):
    path, rater, n = args
    store = RatingStore(path)
    for i in range(n):
        store.add(rater, "vision_driven", CLIP, f"model_{i % 3}",
                  {"id_similarity": 1 + i % 5, "emotion_naturalness": 5, "motion_naturalness": 3})
    return n


def test_criteria_follow_the_paper_tables():
    assert CRITERIA["audio_driven"] == ("id_similarity", "emotion_naturalness", "lip_sync")
    assert CRITERIA["vision_driven"] == ("id_similarity", "emotion_naturalness", "motion_naturalness")
    assert CRITERIA["voice_cloning"] == ("id_similarity", "emotion_naturalness")


@pytest.mark.parametrize("scores,message", [
    ({"id_similarity": 0, "emotion_naturalness": 3, "lip_sync": 3}, "integer in 1..5"),
    ({"id_similarity": 6, "emotion_naturalness": 3, "lip_sync": 3}, "integer in 1..5"),
    ({"id_similarity": 3.5, "emotion_naturalness": 3, "lip_sync": 3}, "integer in 1..5"),
    ({"id_similarity": math.nan, "emotion_naturalness": 3, "lip_sync": 3}, "integer in 1..5"),
    ({"id_similarity": True, "emotion_naturalness": 3, "lip_sync": 3}, "integer in 1..5"),
    ({"id_similarity": "4", "emotion_naturalness": 3, "lip_sync": 3}, "integer in 1..5"),
    ({"id_similarity": 3, "emotion_naturalness": 3}, r"missing scores for \['lip_sync'\]"),
    ({"id_similarity": 3, "emotion_naturalness": 3, "lip_sync": 3, "motion_naturalness": 2}, "not rated for audio_driven"),
])
def test_bad_scores_are_refused(tmp_path, scores, message):
    store = RatingStore(tmp_path / "r.jsonl")
    with pytest.raises(RatingError, match=message):
        store.add("r1", "audio_driven", CLIP, "sonic", scores)
    assert not (tmp_path / "r.jsonl").exists()  # nothing stored on failure


@pytest.mark.parametrize("rater,task,clip,model,message", [
    ("", "audio_driven", CLIP, "m", "rater"),
    ("a/../b", "audio_driven", CLIP, "m", "rater"),
    ("r", "audio_driven", CLIP, "m\nx", "model"),
    ("r", "matting", CLIP, "m", "no MOS study"),
    ("r", "audio_driven", "actor_1_happy", "m", "bad clip id"),
])
def test_bad_fields_are_refused(rater, task, clip, model, message):
    with pytest.raises(RatingError, match=message):
        validate_rating(rater, task, clip, model, {"id_similarity": 1, "emotion_naturalness": 1, "lip_sync": 1})


def test_boundaries_and_float_integers_are_accepted(tmp_path):
    store = RatingStore(tmp_path / "r.jsonl")
    stored = store.add("r1", "voice_cloning", "actor_0003_afraid_action_02_script_010", "m",
                       {"id_similarity": 1, "emotion_naturalness": 5.0})
    assert (stored.seq, stored.scores, stored.replaced) == (1, {"id_similarity": 1, "emotion_naturalness": 5}, {})
    frame = store.frame()
    assert frame.score.tolist() == [1, 5]
    assert frame.clip_id.tolist() == ["actor_0003_fearful_action_02_script_010"] * 2  # canonical spelling


def test_append_only_and_tampering_is_reported(tmp_path):
    path = tmp_path / "r.jsonl"
    store = RatingStore(path)
    store.add("r1", "audio_driven", CLIP, "a", {"id_similarity": 2, "emotion_naturalness": 3, "lip_sync": 4})
    first = path.read_text()
    store.add("r2", "audio_driven", CLIP, "a", {"id_similarity": 5, "emotion_naturalness": 5, "lip_sync": 5})
    assert path.read_text().startswith(first)
    assert len(load_ratings(path)) == 6
    assert load_ratings(path).seq.tolist() == [1, 1, 1, 2, 2, 2]


@pytest.mark.parametrize("change,what", [
    ({"score": 9}, "lip_sync score 9 must be an integer in 1..5"),
    ({"seq": 0}, "seq 0 must be a positive integer"),
    ({"seq": "3"}, "seq '3' must be a positive integer"),
    ({"seq": None}, "seq None must be a positive integer"),
    ({"criterion": "lip"}, "criterion 'lip' is not rated for audio_driven"),
])
def test_tampered_lines_are_skipped_and_named_with_their_number(tmp_path, change, what):
    path = tmp_path / "r.jsonl"
    store = RatingStore(path)
    for rater in ("r1", "r2"):
        store.add(rater, "audio_driven", CLIP, "a", {"id_similarity": 2, "emotion_naturalness": 3, "lip_sync": 4})
    line = {"rater": "r3", "task": "audio_driven", "clip_id": CLIP, "model": "a", "criterion": "lip_sync",
            "score": 2, "seq": 3, "time": 0} | change
    with open(path, "a") as handle:
        handle.write(json.dumps(line) + "\n")
    assert len(load_ratings(path)) == 6  # the six valid lines; the tampered one is left out
    assert store.problems() == [f"{path}:7: {what}; {LINE_FIX}"]


def test_resubmission_replaces_and_the_history_keeps_both(tmp_path):
    path = tmp_path / "r.jsonl"
    store = RatingStore(path)
    first = store.add("r1", "audio_driven", CLIP, "a", {"id_similarity": 2, "emotion_naturalness": 3, "lip_sync": 4})
    other = store.add("r2", "audio_driven", CLIP, "a", {"id_similarity": 1, "emotion_naturalness": 1, "lip_sync": 1})
    again = store.add("r1", "audio_driven", CLIP, "a", {"id_similarity": 5, "emotion_naturalness": 3, "lip_sync": 1})
    assert (first.seq, other.seq, again.seq) == (1, 2, 3)
    assert first.replaced == other.replaced == {}  # r2's rating is not r1's earlier one
    assert again.replaced == {"id_similarity": 2, "emotion_naturalness": 3, "lip_sync": 4}
    current = store.frame()
    assert len(current) == 6  # one per (rater, criterion): r1's latest and r2's
    by_key = {(r.rater, r.criterion): (r.score, r.seq) for r in current.itertuples()}
    assert by_key == {("r1", "id_similarity"): (5, 3), ("r1", "emotion_naturalness"): (3, 3),
                      ("r1", "lip_sync"): (1, 3), ("r2", "id_similarity"): (1, 2),
                      ("r2", "emotion_naturalness"): (1, 2), ("r2", "lip_sync"): (1, 2)}
    assert len(store.history()) == 9  # the audit trail keeps the replaced lines
    # The same rater on another model, task or clip is another rating, not a replacement.
    assert store.add("r1", "audio_driven", CLIP, "b", {"id_similarity": 1, "emotion_naturalness": 1,
                                                       "lip_sync": 1}).replaced == {}
    assert store.add("r1", "voice_cloning", CLIP, "a", {"id_similarity": 1, "emotion_naturalness": 1}).replaced == {}
    assert store.add("r1", "audio_driven", "actor_0001_sad_action_01_script_001", "a",
                     {"id_similarity": 1, "emotion_naturalness": 1, "lip_sync": 1}).replaced == {}
    assert len(store.frame()) == 6 + 3 + 2 + 3
    # A new store on the same file (a restart) sees the same ratings and continues the numbering.
    again = RatingStore(path)
    assert again.frame().equals(store.frame())
    assert again.add("r3", "voice_cloning", CLIP, "a", {"id_similarity": 2, "emotion_naturalness": 2}).seq == 7


def test_latest_wins_by_sequence_number_not_line_order_or_clock():
    import pandas as pd

    rows = [  # (rater, score, seq, time): a merged file whose lines and clocks are out of order
        ("a", 2, 4, 100.0), ("a", 5, 9, 50.0), ("a", 1, 7, 300.0), ("b", 3, 1, 10.0), ("b", 4, 2, 5.0)]
    frame = pd.DataFrame([{"rater": r, "task": "voice_cloning", "clip_id": CLIP, "model": "m",
                           "criterion": "id_similarity", "score": s, "seq": q, "time": t} for r, s, q, t in rows])
    want = {"a": 5, "b": 4}  # the largest seq of each rater: 9 and 2
    for seed in range(4):  # and whatever the row order
        shuffled = frame.sample(frac=1.0, random_state=seed)
        got = latest_ratings(shuffled)
        assert dict(zip(got.rater, got.score)) == want and len(got) == 2


def test_concurrent_writers_never_interleave(tmp_path):
    path = str(tmp_path / "r.jsonl")
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        counts = pool.map(_writer, [(path, "ra", 40), (path, "rb", 40)])
    frame = load_ratings(path)  # every line parses and validates: no line lost or interleaved
    assert sum(counts) * 3 == len(frame) == 240
    assert frame.groupby("rater").size().to_dict() == {"ra": 120, "rb": 120}
    # Every submission got its own number, 1..80, the three lines of one submission the same one.
    assert sorted(frame.groupby("seq").size().to_dict().items()) == [(q, 3) for q in range(1, 81)]
    # Each rater's identity scores are exactly what that rater wrote, in order, with rising numbers.
    for rater in ("ra", "rb"):
        mine = frame[(frame.rater == rater) & (frame.criterion == "id_similarity")]
        assert mine.score.tolist() == [1 + i % 5 for i in range(40)]
        assert mine.seq.is_monotonic_increasing and mine.seq.is_unique
    # In force: per (rater, model) the last submission, i = 39, 37, 38 for models 0, 1, 2.
    current = RatingStore(path).frame()
    ident = current[current.criterion == "id_similarity"]
    assert sorted(zip(ident.rater, ident.model, ident.score)) == sorted(
        (r, f"model_{k}", 1 + i % 5) for r in ("ra", "rb") for k, i in ((0, 39), (1, 37), (2, 38)))


def test_space_mos_table_averages_within_clip_then_over_clips():
    import pandas as pd

    from hug_vis_dataset.studies.status import aggregate_ratings

    clip_a = "actor_0001_happy_action_01_script_001"
    clip_b = "actor_0002_sad_action_01_script_001"
    rows = [  # clip a: raters give 5 and 1 -> clip mean 3; clip b: one rater gives 5 -> MOS (3 + 5) / 2 = 4
        ("r1", "voice_cloning", clip_a, "m", "id_similarity", 5),
        ("r2", "voice_cloning", clip_a, "m", "id_similarity", 1),
        ("r1", "voice_cloning", clip_b, "m", "id_similarity", 5),
    ]
    frame = pd.DataFrame(rows, columns=["rater", "task", "clip_id", "model", "criterion", "score"])
    table = aggregate_ratings(frame)
    assert len(table) == 1
    row = table.iloc[0]
    assert row["mos"] == 4.0  # a plain mean over ratings would give 11 / 3
    assert (row["n_clips"], row["n_ratings"], row["n_raters"]) == (2, 3, 2)
    assert row["criterion"] == "ID Similarity"


def test_exported_csv_gives_hugvis_mos_the_spaces_mos(tmp_path):
    from hug_vis_dataset.studies.mos import mos_report
    from hug_vis_dataset.studies.status import aggregate_ratings

    store = RatingStore(tmp_path / "r.jsonl")
    sad = "actor_0002_sad_action_01_script_001"
    for rater, clip, model, ident, emo in [("r1", CLIP, "m", 2, 3), ("r2", CLIP, "m", 4, 4), ("r1", sad, "m", 5, 1),
                                           ("r1", CLIP, "m", 1, 2),  # r1 replaces 2, 3 by 1, 2
                                           ("r1", CLIP, "n", 3, 3)]:
        store.add(rater, "voice_cloning", clip, model, {"id_similarity": ident, "emotion_naturalness": emo})
    store.add("r1", "audio_driven", CLIP, "t", {"id_similarity": 1, "emotion_naturalness": 1, "lip_sync": 1})
    assert store.to_csv(tmp_path / "voice.csv", task="voice_cloning") == 8
    report = mos_report(tmp_path / "voice.csv", n_boot=10)
    assert report.invalid_count == 0
    # By hand: model m, ID: clip means (1 + 4) / 2 = 2.5 and 5 -> 3.75; emotion (2 + 4) / 2 = 3 and 1 -> 2.
    assert report.table.loc[("m", "id_similarity"), "mos"] == 3.75
    assert report.table.loc[("m", "emotion_naturalness"), "mos"] == 2.0
    space = aggregate_ratings(store.frame())
    space = space[space.task == "voice_cloning"].set_index(["model", "criterion"])["mos"]
    assert space[("m", "ID Similarity")] == 3.75 and space[("n", "Emotion Naturalness")] == 3.0
    for (model, criterion), mos in report.table["mos"].items():
        assert space[(model, CRITERIA_LABEL[criterion])] == mos  # unrounded: the leaderboard ranks these

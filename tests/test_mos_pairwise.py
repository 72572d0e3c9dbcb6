"""The pairwise protocol without a browser: blind sides, explicit answers, storage in the ratings log
(latest answer per rater and item wins, MOS reading unaffected), and the strengths it gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TASK = "voice_cloning"
SYSTEMS = ["clone_good", "clone_mid", "clone_poor"]
CLIP = "actor_0001_happy_action_01_script_001"


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("pairwise") / "rel"
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.3, size=(32, 18))
    return root


def _study(release, tmp_path, **overrides):
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.studies.study_desk import MosStudy

    systems = sorted(p.name for p in (release / "simulated_systems" / TASK).iterdir() if p.is_dir())
    spec = {"name": "pw", "protocol": "pairwise", "tasks": {TASK: {"systems": systems}}, "clips": "all",
            "ratings_per_item": 1, "items_per_session": 3, "seed": 3, **overrides}
    (tmp_path / "study.json").write_text(json.dumps(spec))
    return MosStudy(Release(release), release, tmp_path / "ratings" / "ratings.jsonl",
                    study_path=tmp_path / "study.json"), systems


def test_outcome_of_maps_sides_to_the_stored_pair():
    from hug_vis_dataset.studies.preferences import outcome_of
    from hug_vis_dataset.studies.ratings import RatingError

    pair = ("x", "y")
    # "A" is the left system; the outcome is for pair[0].
    assert [outcome_of(c, pair, "x") for c in ("A", "B", "Tie")] == [1.0, 0.0, 0.5]
    assert [outcome_of(c, pair, "y") for c in ("A", "B", "tie")] == [0.0, 1.0, 0.5]
    with pytest.raises(RatingError, match="must be one of"):
        outcome_of("C", pair, "x")


def test_store_latest_answer_wins_and_mos_reading_is_unaffected(tmp_path):
    from hug_vis_dataset.studies.preferences import PreferenceStore
    from hug_vis_dataset.studies.ratings import RatingError, RatingStore

    path = tmp_path / "ratings.jsonl"
    ratings, prefs = RatingStore(path), PreferenceStore(path)
    ratings.add("r1", TASK, CLIP, "m", {"id_similarity": 4, "emotion_naturalness": 2})
    first = prefs.add("r1", TASK, CLIP, ("a", "b"), {"id_similarity": "A", "emotion_naturalness": "B"}, left="b")
    second = prefs.add("r1", TASK, CLIP, ("a", "b"), {"id_similarity": "Tie", "emotion_naturalness": "B"}, left="b")
    third = ratings.add("r2", TASK, CLIP, "m", {"id_similarity": 5, "emotion_naturalness": 5})
    # One sequence over both kinds of line.
    assert (first.seq, second.seq, third.seq) == (2, 3, 4)
    assert first.scores == {"id_similarity": 0.0, "emotion_naturalness": 1.0}
    frame = prefs.frame()
    assert frame[["criterion", "outcome", "seq"]].values.tolist() == [["id_similarity", 0.5, 3],
                                                                      ["emotion_naturalness", 1.0, 3]]
    assert len(prefs.history()) == 4
    # The MOS reader neither counts the pairwise lines as ratings nor as problems.
    assert ratings.problems() == [] and len(ratings.frame()) == 4 and set(ratings.frame()["model"]) == {"m"}
    with pytest.raises(RatingError, match=r"missing answers for \['emotion_naturalness'\]"):
        prefs.add("r1", TASK, CLIP, ("a", "b"), {"id_similarity": "A"}, left="a")
    with pytest.raises(RatingError, match="left 'c'"):
        prefs.add("r1", TASK, CLIP, ("a", "b"), {"id_similarity": "A", "emotion_naturalness": "A"}, left="c")
    assert len(prefs.history()) == 4  # nothing written by a refusal
    # A damaged pairwise line is skipped and named, the others still count.
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"kind": "preference", "rater": "r3", "task": TASK, "clip_id": CLIP,
                                 "system_a": "a", "system_b": "b", "criterion": "id_similarity", "outcome": 0.7,
                                 "left": "a", "seq": 9}) + "\n")
    frame, problems = prefs.read()
    assert len(frame) == 4 and len(problems) == 1 and ":9: outcome 0.7 must be 1, 0.5 or 0" in problems[0]
    assert prefs.add("r1", TASK, CLIP, ("a", "b"), {"id_similarity": "A", "emotion_naturalness": "A"},
                     left="a").seq == 10  # after the damaged line's seq
    out = tmp_path / "pairwise.csv"
    assert prefs.to_csv(out) == 2
    from hug_vis_dataset.studies.answers import read_preferences

    back = read_preferences(out)
    assert back[["system_a", "system_b", "criterion", "outcome", "left"]].values.tolist() == [
        ["a", "b", "id_similarity", 1.0, "a"], ["a", "b", "emotion_naturalness", 1.0, "a"]]


def test_blind_pairwise_session(release, tmp_path):
    from hug_vis_dataset.studies.schedule import pair_sides

    study, systems = _study(release, tmp_path)
    blind = study.blind
    assert blind.pairwise and study.spec.items()[0].systems == (systems[0], systems[1])
    view, message = blind.current("r1")
    assert message == "" and view.code and view.criteria == ("id_similarity", "emotion_naturalness")
    # Two blind copies named by the code and the side only; the reference speech beside them.
    assert Path(view.speech).name == f"{view.code}-a.wav" and Path(view.speech_b).name == f"{view.code}-b.wav"
    assert view.video is None and view.reference_speech
    assert not any(s in view.speech + view.speech_b + "".join(view.anchors) + view.progress for s in systems)
    assert view.anchors[0].startswith("**Which is better on ID Similarity?**")
    text, stored = blind.submit("r1", view.code, "A", None)
    assert (text, stored) == ("**Not stored:** please answer Emotion Naturalness (every criterion needs an answer: "
                              "A, B or Tie).", False)
    assert len(blind.preferences.frame()) == 0
    text, stored = blind.submit("r1", view.code, "A", "Tie")
    assert stored and text == f"Stored your answer to item `{view.code}`."
    session = blind.log.latest("r1")
    item = dict(session.entries)[view.code]
    left, right = pair_sides(session.seed, view.code, item.systems)
    # The "A" copy is the left system's output: same bytes as that system's file.
    source = release / "simulated_systems" / TASK / left / f"{item.clip_id}.wav"
    assert Path(view.speech).read_bytes() == source.read_bytes()
    frame = blind.preferences.frame()
    assert frame["left"].tolist() == [left, left] and frame["item"].tolist() == [view.code] * 2
    won = 1.0 if left == item.systems[0] else 0.0
    assert frame[["criterion", "outcome"]].values.tolist() == [["id_similarity", won], ["emotion_naturalness", 0.5]]
    assert frame["duration"].iloc[0] == pytest.approx(0.3, abs=0.05)
    # Another rater's code is refused.
    assert blind.submit("r2", view.code, "A", "A") == (
        "**Not stored:** this item is not in your session; press *Start / resume*.", False)
    # Not a MOS rating: the MOS tables stay empty.
    assert len(study.ratings.frame()) == 0 and study.ratings.problems() == []


def test_sides_are_randomised_per_rater_and_coverage_counts_pairs(release, tmp_path):
    from hug_vis_dataset.studies.schedule import pair_sides

    study, systems = _study(release, tmp_path, ratings_per_item=2, items_per_session=6)
    blind = study.blind
    n_items = len(study.spec.items())
    assert n_items == 3 * 2  # 3 pairs x 2 clips
    sides = set()
    for rater in ("r1", "r2"):
        answered = 0
        while True:
            view, _ = blind.current(rater, new_session=False) if answered else blind.current(rater)
            if not view.code:
                break
            session = blind.log.latest(rater)
            item = dict(session.entries)[view.code]
            sides.add((item.key, pair_sides(session.seed, view.code, item.systems)[0]))
            assert blind.submit(rater, view.code, "B", "A")[1]
            answered += 1
        assert answered == n_items
    # Across the two raters and six pairs both sides came up for some pair (seeded, not fixed).
    assert len({left for _, left in sides}) >= 2 and len(sides) > n_items
    cov = blind.coverage()
    assert cov["by_ratings"] == {2: n_items} and cov["raters"] == 2 and cov["completion"] == 1.0
    frame = blind.preferences.frame()
    assert len(frame) == 2 * n_items * 2
    # "B" on ID similarity: the right-hand system won, whatever the side was.
    idsim = frame[frame["criterion"] == "id_similarity"]
    right = [b if left == a else a for a, b, left in zip(idsim["system_a"], idsim["system_b"], idsim["left"])]
    winner = [a if o == 1.0 else b for a, b, o in zip(idsim["system_a"], idsim["system_b"], idsim["outcome"])]
    assert right == winner

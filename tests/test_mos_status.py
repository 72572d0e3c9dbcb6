"""The blind study without a browser: two raters through BlindStudy, then ``hugvis mos status``:
coverage, gold answers, a rater flagged by the gold rule, MOS with and without flagged raters."""

from __future__ import annotations

import json

import pytest

TASK = "voice_cloning"


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("status") / "rel"
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.3, size=(32, 18))
    return root


def test_two_raters_then_status(release, tmp_path, capsys):
    from hug_vis_dataset.cli import main
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.studies.study_desk import MosStudy
    from hug_vis_dataset.studies.status import aggregate_ratings

    study_file = tmp_path / "study.json"
    systems = ["clone_good", "clone_poor"]
    study_file.write_text(json.dumps({"name": "st", "tasks": {TASK: {"systems": systems}}, "clips": "all",
                                      "ratings_per_item": 2, "items_per_session": 5, "gold_rate": 0.2,
                                      # Answers here come instantly: the speed rule is off, the gold rule decides.
                                      "qc": {"max_fast_share": 1.0}}))
    ratings = tmp_path / "ratings" / "ratings.jsonl"
    study = MosStudy(Release(release), release, ratings, study_path=study_file)
    blind = study.blind
    golds = {}
    for rater, good in (("careful", True), ("careless", False)):
        answered = 0
        while True:
            view, message = blind.current(rater, new_session=False) if answered else blind.current(rater)
            if not view.code:
                break
            item = blind.log.lookup()[view.code][1]
            assert view.speech.endswith(f"/{view.code}.wav") and not any(s in view.speech for s in systems)
            # An unanswered criterion is refused by name, nothing stored.
            assert blind.submit(rater, view.code, "4") == (
                "**Not stored:** please answer Emotion Naturalness (every criterion needs a score).", False)
            gold = item.systems[0].startswith("gold")
            golds[rater] = golds.get(rater, 0) + gold
            high = item.systems[0] != "gold_degraded"
            score = ("5" if high else "1") if good else ("1" if high else "5")
            assert blind.submit(rater, view.code, score, score)[1]
            answered += 1
        assert answered == 5 and golds[rater] == 1  # 4 scheduled + 1 gold (rate 0.2 of 5)
    # Someone else's code is refused.
    other = blind.log.latest("careful").codes()[0]
    assert blind.submit("careless", other, "3", "3") == (
        "**Not stored:** this item is not in your session; press *Start / resume*.", False)
    cov = blind.coverage()
    assert cov["by_ratings"] == {2: 4} and cov["raters"] == 2 and cov["completion"] == 1.0
    # Gold never enters a MOS row.
    assert set(aggregate_ratings(study.ratings.frame())["model"]) == set(systems)

    assert main(["mos", "status", "--study", str(study_file), "--log", str(ratings), "--release", str(release)]) == 0
    out = capsys.readouterr().out
    assert "items by number of ratings: 2: 4" in out and "raters 2, sessions 2, answers 8 + 2 gold" in out
    assert "completion 100.0%" in out
    assert "flagged raters: 1" in out and "careless: 1 of 1 gold answers failed (> 0.5)" in out
    assert "MOS (without flagged raters):" in out and "Krippendorff" in out
    # All raters: careful gives 5, careless 1 on every scheduled item -> 3; without careless: 5.
    everyone = out.split("MOS (all raters):")[1].split("MOS without")[0]
    without = out.split("MOS (without flagged raters):")[1].split("Inter-rater")[0]
    assert everyone.count(" 3.00 ") == 4 and without.count(" 5.00 ") == 4 and "careless" not in without
    assert main(["mos", "status", "--study", str(study_file)]) == 2  # --log missing: a usage error

"""People as the ceiling of emotion recognition (issue 54, part 1): the analysis of the emotion study's answers.

* per-clip people rows and the People accuracy against a hand re-derivation, their interval against the generic
  bootstrap (:func:`hug_vis_dataset.statistics.generic.bootstrap_ci`, the engine's reference path);
* people against the best model: the verdict's p-value against a brute-force enumeration of every actor sign
  pattern, its difference against the per-clip differences, the best model picked as the highest complete run;
* the per-emotion comparison on a hand-worked case;
* planted truths: the simulated raters' per-setting accuracy is recovered (inside the interval, within a few
  points), the careless rater is the one flagged, and counting it biases the estimate down by its share.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.datamodel.grid import EMOTION_NAMES
from hug_vis_dataset.statistics.generic import bootstrap_ci
from hug_vis_dataset.studies.emotion_answers import CANNOT_TELL
from hug_vis_dataset.studies.judgments import counted_emotion_answers
from hug_vis_dataset.studies.people import (accuracy_table, best_models, confusion_comparison, people_clip_rows,
                                            people_confusion, people_vs_models, verdict_words)
from hug_vis_dataset.synth.emotion_raters import PEOPLE_ACCURACY, simulate_emotion_study


def _clip(actor: int, emotion: str, script: int = 1) -> str:
    return f"actor_{actor:04d}_{emotion.lower()}_action_01_script_{script:03d}"


def _grid(actors: int, scripts: int = 2) -> list[str]:
    return [_clip(a, e, s) for a in range(1, actors + 1) for e in EMOTION_NAMES for s in range(1, scripts + 1)]


def _model_rows(label: str, clips, p: float, seed: int, partial: bool = False) -> pd.DataFrame:
    """Per-clip 0/1 rows of a model answering right with probability ``p`` (wrong answers note 'answered X')."""
    rng = np.random.default_rng(seed)
    right = rng.uniform(size=len(clips)) < p
    rows = pd.DataFrame({"model": label, "task": "emotion", "clip_id": clips, "metric": "emotion_accuracy",
                         "value": right.astype(float), "status": "ok",
                         "error": ["" if r else "answered Neutral" for r in right]})
    rows["actor_id"] = [int(c[6:10]) for c in clips]
    rows["emotion"] = [c.split("_")[2].capitalize() for c in clips]
    if partial:  # a run that never predicted its last clip
        rows.loc[rows.index[-1], ["status", "value", "error"]] = ["failed", np.nan, "missing prediction: x"]
    return rows


# ----------------------------------------------------------------------------- hand-worked
ANSWERS = pd.DataFrame([
    # rater, clip, setting, answer
    ("a", _clip(1, "Sad"), "Video", "Sad"), ("b", _clip(1, "Sad"), "Video", "Happy"),
    ("c", _clip(1, "Sad"), "Video", CANNOT_TELL), ("a", _clip(2, "Sad"), "Video", "Sad"),
    ("b", _clip(2, "Happy"), "Video", "Happy"), ("c", _clip(3, "Happy"), "Video", "Surprised"),
    ("a", _clip(3, "Happy"), "Text", "Happy"), ("b", _clip(1, "Sad"), "Text", "Sad"),
    ("c", _clip(2, "Sad"), "gold_clear", "Sad"),
], columns=["rater", "clip_id", "setting", "answer"])


def test_people_rows_are_the_share_of_raters_naming_the_emotion():
    rows = people_clip_rows(ANSWERS)
    got = {(m, c): v for m, c, v in rows[["model", "clip_id", "value"]].itertuples(index=False)}
    # by hand: clip 1 Sad in Video: a right, b wrong, c cannot tell -> 1/3; gold left out
    assert got == {("people | Video", _clip(1, "Sad")): 1 / 3, ("people | Video", _clip(2, "Sad")): 1.0,
                   ("people | Video", _clip(2, "Happy")): 1.0, ("people | Video", _clip(3, "Happy")): 0.0,
                   ("people | Text", _clip(3, "Happy")): 1.0, ("people | Text", _clip(1, "Sad")): 1.0}
    assert set(rows["status"]) == {"ok"} and set(rows["metric"]) == {"emotion_accuracy"}
    assert rows.set_index("clip_id").loc[_clip(3, "Happy"), "actor_id"].tolist() == [3, 3]


def test_accuracy_table_against_a_rederivation_and_the_generic_bootstrap():
    table = accuracy_table(ANSWERS, n_boot=300).set_index("setting")
    assert list(table.index) == ["Video", "Text"]  # Table 4's order
    video = table.loc["Video"]
    assert video["accuracy"] == pytest.approx(100 * (1 / 3 + 1 + 1 + 0) / 4)
    assert (video["n_clips"], video["n_answers"], video["n_raters"]) == (4, 6, 3)
    assert video["cannot_tell"] == pytest.approx(100 / 6)
    rows = people_clip_rows(ANSWERS)
    ref = bootstrap_ci(rows[rows["model"] == "people | Video"], lambda f: f["value"].mean(), n_boot=300)
    assert (video["ci_low"], video["ci_high"]) == pytest.approx((100 * ref.low, 100 * ref.high), abs=1e-9)


def test_people_confusion_rows_are_shares_of_answers():
    m = people_confusion(ANSWERS, "Video")
    assert list(m.columns)[-1] == CANNOT_TELL and list(m.index) == list(EMOTION_NAMES)
    assert m.loc["Sad", "Sad"] == pytest.approx(0.5) and m.loc["Sad", CANNOT_TELL] == pytest.approx(0.25)
    assert m.loc["Happy", "Surprised"] == pytest.approx(0.5) and m.loc["Angry"].isna().all()


def _sign_flip_p(d: pd.Series, actors: pd.Series) -> float:
    """Brute force: every sign pattern of the actors' sums of per-clip differences (scipy's two-sided rule)."""
    sums = d.groupby(actors).sum().to_numpy()
    observed = sums.sum() / len(d)
    null = np.array([np.dot(signs, sums) / len(d) for signs in itertools.product((1.0, -1.0), repeat=len(sums))])
    gamma = abs(observed) * np.finfo(float).eps * 100
    return min(1.0, 2 * min((null <= observed + gamma).mean(), (null >= observed - gamma).mean()))


def test_people_against_the_best_model_is_the_engines_verdict_rederived():
    clips = _grid(8)
    sim = simulate_emotion_study(clips, {"Video": 0.9, "Text": 0.6}, seed=4, clip_fraction=1.0, n_raters=10,
                                 gold_rate=0.0, careless=0)
    answers = pd.DataFrame(sim.rows())
    models = pd.concat([_model_rows("strong | Video", clips, 0.55, 1), _model_rows("weak | Video", clips, 0.3, 2),
                        _model_rows("strong | Text", clips, 0.6, 3), _model_rows("partial | Video", clips, 0.99, 4,
                                                                                 partial=True)])
    assert best_models(models) == {"Video": "strong | Video", "Text": "strong | Text"}  # the partial run not
    results = {r.setting: r for r in people_vs_models(models, answers, n_boot=300)}
    assert list(results) == ["Video", "Text"]
    people = people_clip_rows(answers)
    for setting, result in results.items():
        p = people[people["model"] == f"people | {setting}"].set_index("clip_id")["value"]
        m = models[models["model"] == f"strong | {setting}"].set_index("clip_id")["value"]
        common = p.index.intersection(m.index)
        d = (p[common] - m[common]) * 100
        actors = pd.Series([int(c[6:10]) for c in common], index=common)
        v = result.verdict
        assert v.difference == pytest.approx(d.mean()) and v.n_clips == len(common) and v.n_actors == 8
        assert v.p_value == pytest.approx(_sign_flip_p(d, actors))
        assert result.people.estimate == pytest.approx(100 * p.mean())
        assert result.model.estimate == pytest.approx(100 * m.mean())
        ref = bootstrap_ci(pd.DataFrame({"clip_id": common, "value": d.to_numpy()}), lambda f: f["value"].mean(),
                           n_boot=2000)
        assert (v.ci_low, v.ci_high) == pytest.approx((ref.low, ref.high), abs=1e-9)
    assert results["Video"].verdict.word == "separable" and results["Video"].verdict.difference > 25
    assert results["Text"].verdict.word == "not separable"
    assert verdict_words(results["Video"]).startswith("Video: the best model, strong, is separable from people (people +")
    assert verdict_words(results["Text"]).startswith("Text: the best model, strong, is not separable from people")


def test_a_small_study_cannot_tell():
    clips = _grid(2, 1)
    sim = simulate_emotion_study(clips, {"Audio": 0.95}, seed=0, clip_fraction=1.0, n_raters=4, careless=0,
                                 gold_rate=0.0)
    result = people_vs_models(_model_rows("m | Audio", clips, 0.2, 0), pd.DataFrame(sim.rows()), n_boot=100)[0]
    assert result.verdict.word == "cannot tell" and "2 actors cannot reach p < 0.05" in result.verdict.why
    assert verdict_words(result).startswith("Audio: cannot tell whether the best model, m, is separable from people")


def test_the_per_emotion_comparison_by_hand():
    clips = [_clip(a, e) for a in (1, 2) for e in ("Sad", "Happy")]
    answers = pd.DataFrame([("a", _clip(1, "Sad"), "Audio", "Sad"), ("b", _clip(1, "Sad"), "Audio", "Afraid"),
                            ("a", _clip(2, "Sad"), "Audio", "Afraid"), ("b", _clip(2, "Sad"), "Audio", CANNOT_TELL),
                            ("a", _clip(1, "Happy"), "Audio", "Happy"), ("b", _clip(2, "Happy"), "Audio", "Happy")],
                           columns=["rater", "clip_id", "setting", "answer"])
    model = _model_rows("m | Audio", clips, 0.0, 0)
    model.loc[model["clip_id"] == _clip(1, "Happy"), ["value", "error"]] = [1.0, ""]
    model.loc[model["clip_id"] == _clip(2, "Sad"), "error"] = "unparsed answer"
    model = pd.concat([model, _model_rows("m | Audio", [_clip(3, "Angry")], 1.0, 0)])  # people never saw it
    table = confusion_comparison(model, answers, "Audio", "m | Audio").set_index("emotion")
    assert list(table.index) == ["Happy", "Sad"]  # Table 1's order, only emotions with a clip both have
    sad, happy = table.loc["Sad"], table.loc["Happy"]
    assert sad["clips"] == 2 and happy["clips"] == 2
    assert sad["people"] == pytest.approx(25.0) and sad["model"] == 0.0 and sad["difference"] == pytest.approx(25.0)
    assert sad["people_instead"] == "Afraid 50%"  # 2 of Sad's 4 answers
    assert sad["model_instead"] in ("Neutral 50%", "unparsed 50%")  # one clip each: ties by first seen
    assert happy["people"] == 100.0 and happy["model"] == 50.0 and happy["people_instead"] == "-"
    assert happy["model_instead"] == "Neutral 50%" and happy["difference"] == pytest.approx(50.0)
    assert sad["verdict"] == "cannot tell"  # 2 actors


# ----------------------------------------------------------------------------- planted truths
@pytest.fixture(scope="module")
def planted():
    clips = _grid(12)
    sim = simulate_emotion_study(clips, PEOPLE_ACCURACY, seed=11, clip_fraction=1.0, n_raters=16, careless=1,
                                 ratings_per_item=3, items_per_session=8, gold_rate=0.125)
    return clips, pd.DataFrame(sim.rows())


def test_the_planted_people_accuracy_is_recovered(planted):
    _, answers = planted
    kept, qc = counted_emotion_answers(answers)
    assert sorted(qc.flagged) == ["sim_person_01"]  # the careless rater, and only it
    assert "gold answers failed" in qc.flagged["sim_person_01"] and "faster than the media" in qc.flagged["sim_person_01"]
    table = accuracy_table(kept, n_boot=1000).set_index("setting")
    assert list(table.index) == list(PEOPLE_ACCURACY)
    for setting, truth in PEOPLE_ACCURACY.items():
        row = table.loc[setting]
        assert row["ci_low"] <= 100 * truth <= row["ci_high"], (setting, row.to_dict())
        assert abs(row["accuracy"] - 100 * truth) < 4.0, (setting, row["accuracy"])
        assert row["n_clips"] == 12 * 7 * 2
    # every item has its 3 answers; counted answers are those of the 15 careful raters
    assert (kept.groupby(["clip_id", "setting"]).size() <= 3).all()


def test_counting_the_careless_rater_biases_people_down(planted):
    _, answers = planted
    kept = accuracy_table(counted_emotion_answers(answers)[0], n_boot=10).set_index("setting")["accuracy"]
    every = accuracy_table(counted_emotion_answers(answers, all_raters=True)[0], n_boot=10).set_index("setting")
    share = (answers[answers["setting"] != "gold_clear"]["rater"] == "sim_person_01").mean()
    for setting, truth in PEOPLE_ACCURACY.items():
        # a random answer is right 1 time in 8: the expected drop is the careless share x (p - 1/8), per clip
        expected = 100 * share * (truth - 1 / 8)
        assert every.loc[setting, "accuracy"] < kept[setting]
        assert abs((kept[setting] - every.loc[setting, "accuracy"]) - expected) < 3.0, setting
    assert math.isclose(share, 1 / 16, abs_tol=0.03)


def test_people_are_separable_from_a_model_far_below_and_not_from_one_planted_equal(planted):
    clips, answers = planted
    kept = counted_emotion_answers(answers)[0]
    models = pd.concat([_model_rows("sys | Video", clips, 0.70, 21), _model_rows("sys | Text", clips,
                                                                                  PEOPLE_ACCURACY["Text"], 22)])
    results = {r.setting: r for r in people_vs_models(models, kept, n_boot=200)}
    assert results["Video"].verdict.word == "separable" and results["Video"].verdict.difference > 15
    assert results["Text"].verdict.word == "not separable"
    assert results["Audio"].verdict is None and "no model answered" in verdict_words(results["Audio"])

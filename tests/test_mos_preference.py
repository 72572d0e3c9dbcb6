"""Bradley-Terry fit: the two-system closed form, a hand-worked three-system case, ties, the prior,
degenerate inputs, and the actor-clustered strengths table; plus the flagged-rater rules."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.studies.bradley_terry import (PreferenceInputError, bradley_terry, fit_strengths, strengths_table,
                                                win_matrix, win_probability)
from hug_vis_dataset.studies.rater_qc import GOLD_HIGH, GOLD_LOW, QcRules, flag_raters, flagged_raters


@pytest.mark.parametrize("w_ab,w_ba", [(3, 1), (1, 1), (7, 2), (1, 9), (2.5, 0.5)])
def test_two_systems_closed_form(w_ab, w_ba):
    wins = np.array([[0.0, w_ab], [w_ba, 0.0]])
    s = fit_strengths(wins)
    assert math.isclose(math.exp(s[0] - s[1]), w_ab / w_ba, rel_tol=1e-9)
    assert math.isclose(s.mean(), 0.0, abs_tol=1e-12)
    fit = dict(zip("ab", s))
    assert math.isclose(win_probability(fit, "a", "b"), w_ab / (w_ab + w_ba), rel_tol=1e-9)
    # With the prior c (virtual ties): (w_ab + c/2) / (w_ba + c/2).
    p = fit_strengths(wins, prior=2.0)
    assert math.isclose(math.exp(p[0] - p[1]), (w_ab + 1) / (w_ba + 1), rel_tol=1e-9)


def test_three_systems_hand_worked():
    # p = (4, 2, 1) is the MLE when the wins are the expected ones: A-B 6 games (A wins 4 = 6 * 4/6),
    # A-C 5 games (A wins 4), B-C 3 games (B wins 2). Check: W_A = 8 = 6*4/6 + 5*4/5, W_B = 4, W_C = 2.
    answers = [("A", "B", 1)] * 4 + [("A", "B", 0)] * 2 + [("A", "C", 1)] * 4 + [("C", "A", 1)] \
        + [("B", "C", 1)] * 2 + [("B", "C", 0)]
    fit = bradley_terry(answers)
    ratios = [math.exp(fit[x] - fit["C"]) for x in "ABC"]
    assert np.allclose(ratios, [4.0, 2.0, 1.0], rtol=1e-9)
    assert math.isclose(sum(fit.values()), 0.0, abs_tol=1e-12)
    # Row order of the answers does not matter.
    assert bradley_terry(answers[::-1]) == pytest.approx(fit, abs=1e-12)


def test_ties_count_half_and_outcomes_are_checked():
    names, w = win_matrix([("a", "b", 0.5), ("a", "b", 1)])
    assert names == ["a", "b"] and w.tolist() == [[0, 1.5], [0.5, 0]]
    with pytest.raises(PreferenceInputError, match="outcome 0.7"):
        win_matrix([("a", "b", 0.7)])
    with pytest.raises(PreferenceInputError, match="compared with itself"):
        win_matrix([("a", "a", 1)])


def test_degenerate_inputs_say_so():
    # A system that never won: the MLE is at infinity (reported, not made up); the prior keeps it finite.
    s = fit_strengths(np.array([[0.0, 3.0], [0.0, 0.0]]))
    assert s.tolist() == [math.inf, -math.inf]
    assert np.isfinite(fit_strengths(np.array([[0.0, 3.0], [0.0, 0.0]]), prior=1.0)).all()
    # Two groups never compared: not comparable.
    w = np.zeros((4, 4))
    w[0, 1] = w[1, 0] = w[2, 3] = w[3, 2] = 1
    assert np.isnan(fit_strengths(w)).all()
    assert fit_strengths(np.zeros((1, 1))).tolist() == [0.0]


def test_strengths_table_ranks_and_intervals():
    rows = []
    for actor in range(1, 7):
        clip = f"actor_{actor:04d}_happy_action_01_script_001"
        for r in range(3):
            rows += [("r%d" % r, clip, "lip_sync", "good", "poor", 1.0), ("r%d" % r, clip, "lip_sync", "poor", "fair", 0.0),
                     ("r%d" % r, clip, "lip_sync", "good", "fair", 1.0 if r else 0.5)]
    frame = pd.DataFrame(rows, columns=["rater", "clip_id", "criterion", "system_a", "system_b", "outcome"])
    table = strengths_table(frame, n_boot=50).set_index("system")
    assert table["rank"].to_dict() == {"fair": 2, "good": 1, "poor": 3}
    assert (table["ci_low"] <= table["strength"]).all() and (table["strength"] <= table["ci_high"]).all()
    assert table.loc["good", "n_answers"] == 36 and table.loc["good", "ties"] == 6
    assert table.loc["good", "wins"] == 18 + 12 + 3 and table.loc["good", "n_actors"] == 6


def _answers(rows):
    return pd.DataFrame(rows, columns=["rater", "item", "model", "score", "elapsed", "duration"])


def test_gold_rules_on_constructed_answers():
    rows = [  # (rater, item, model, score, elapsed, duration); two criteria per answer
        ("good", "g1", GOLD_HIGH, 5, 9, 2), ("good", "g1", GOLD_HIGH, 4, 9, 2),  # mean 4.5 >= 3.5: pass
        ("good", "g2", GOLD_LOW, 1, 9, 2), ("good", "g2", GOLD_LOW, 2, 9, 2),  # mean 1.5 <= 2.5: pass
        ("bad", "g1", GOLD_HIGH, 2, 9, 2), ("bad", "g1", GOLD_HIGH, 3, 9, 2),  # mean 2.5 < 3.5: fail
        ("bad", "g2", GOLD_LOW, 5, 9, 2), ("bad", "g2", GOLD_LOW, 4, 9, 2),  # mean 4.5 > 2.5: fail
        ("half", "g1", GOLD_HIGH, 3, 9, 2), ("half", "g1", GOLD_HIGH, 3, 9, 2),  # 3 < 3.5: fail
        ("half", "g2", GOLD_LOW, 1, 9, 2), ("half", "g2", GOLD_LOW, 1, 9, 2),  # pass: 1 of 2 failed = 0.5, not > 0.5
    ]
    table = flag_raters(_answers(rows)).set_index("rater")
    assert table["gold_failed"].to_dict() == {"bad": 2, "good": 0, "half": 1}
    assert table["flagged"].to_dict() == {"bad": True, "good": False, "half": False}
    assert table.loc["bad", "reasons"] == "2 of 2 gold answers failed (> 0.5)"
    assert flagged_raters(_answers(rows), QcRules(max_gold_fail_share=0.4)) == {"bad", "half"}


def test_fast_answers_flag_a_rater():
    rows = [("quick", f"i{n}", "sys", 3, 1.0 if n < 2 else 5.0, 3.0) for n in range(4)]  # 2 of 4 under 3 s
    rows += [("slow", f"i{n}", "sys", 3, 3.0, 3.0) for n in range(4)]  # exactly the duration: not fast
    rows += [("unknown", "i0", "sys", 3, math.nan, 3.0)]  # no time recorded: never fast
    table = flag_raters(_answers(rows)).set_index("rater")
    assert table["fast_answers"].to_dict() == {"quick": 2, "slow": 0, "unknown": 0}
    assert table.loc["quick", "reasons"] == "2 of 4 answers faster than the media (> 0.25)"
    assert flagged_raters(_answers(rows)) == {"quick"}
    assert flagged_raters(_answers(rows), QcRules(max_fast_share=0.5)) == set()

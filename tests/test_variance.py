"""Condition-factor variance decomposition (hug_vis_dataset.metrics.variance) against statsmodels."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

from hug_vis_dataset.reporting.figures import plot_variance_decomposition, variance_figure
from hug_vis_dataset.metrics.variance import (
    RESIDUAL, TERMS, VarianceInputError, variance_decomposition,
)
from hug_vis_dataset.datamodel.results import result_rows

# Nested factors get globally unique labels (action "Sad/2", script "Sad/2/7"). Each term's sum of
# squares is statsmodels' ANOVA of the nested models that add the terms one at a time in the
# decomposition's order (anova_lm of several fits: ss_diff, df_diff), so the reference keeps that
# order (a single formula's anova_lm would sort terms by degree) and rank-deficient codings are fine.
FORMULA_TERMS = {
    "actor": "C(actor)", "emotion": "C(emotion)", "action": "C(action_in)", "script": "C(script_in)",
    "model": "C(model)", "emotion:model": "C(emotion):C(model)", "actor:model": "C(actor):C(model)",
}


def grid_rows(seed: int, actors=3, emotions=("Happy", "Sad"), actions=2, scripts=2, models=("a", "b", "c")):
    rng = np.random.default_rng(seed)
    eff = {k: rng.normal(0, s, n) for k, s, n in (("actor", 1.0, actors), ("model", 2.0, len(models)),
                                                   ("emotion", 0.7, len(emotions)))}
    rows = []
    for (a, ei, k, s, mi) in itertools.product(range(actors), range(len(emotions)), range(actions), range(scripts),
                                               range(len(models))):
        value = (eff["actor"][a] + eff["model"][mi] + eff["emotion"][ei] + 0.3 * k * (ei + 1)
                 + 0.4 * (a == mi) + 0.5 * (ei == mi) + rng.normal(0, 0.3))
        clip = f"actor_{a + 1:04d}_{emotions[ei].lower()}_action_{k + 1:02d}_script_{s + 1:03d}"
        rows += result_rows(models[mi], "matting", clip, {"mad": value})
    return pd.DataFrame(rows)


def statsmodels_anova(frame: pd.DataFrame, terms=TERMS) -> pd.DataFrame:
    data = pd.DataFrame({
        "y": frame["value"].astype(float), "actor": frame["actor_id"].astype(str), "model": frame["model"],
        "emotion": frame["emotion"], "action_in": frame["emotion"] + "/" + frame["action_id"].astype(str),
        "script_in": frame["emotion"] + "/" + frame["action_id"].astype(str) + "/" + frame["script_id"].astype(str),
    })
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rank-deficient nested codings are expected here
        fits = [smf.ols("y ~ 1", data=data).fit()]
        for k in range(1, len(terms) + 1):
            fits.append(smf.ols("y ~ " + " + ".join(FORMULA_TERMS[t] for t in terms[:k]), data=data).fit())
        table = anova_lm(*fits)
    out = pd.DataFrame({"df": table["df_diff"].to_numpy()[1:], "sum_sq": table["ss_diff"].to_numpy()[1:]},
                       index=list(terms))
    out.loc[RESIDUAL] = [fits[-1].df_resid, fits[-1].ssr]
    return out


def assert_matches_statsmodels(decomposition, expected, terms=TERMS):
    got = decomposition.table.set_index("term")
    total = got.loc["total", "sum_sq"]
    assert expected["sum_sq"].sum() == pytest.approx(total, rel=1e-9)
    for term in (*terms, RESIDUAL):
        assert got.loc[term, "df"] == pytest.approx(expected.loc[term, "df"]), term
        assert got.loc[term, "sum_sq"] == pytest.approx(expected.loc[term, "sum_sq"], rel=1e-7, abs=1e-9), term
        assert got.loc[term, "share"] == pytest.approx(expected.loc[term, "sum_sq"] / total, rel=1e-7, abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_balanced_grid_matches_statsmodels(seed):
    frame = grid_rows(seed)
    d = variance_decomposition(frame)
    assert d.method == "balanced" and not d.fell_back and d.reason == "" and d.n_rows == len(frame)
    assert_matches_statsmodels(d, statsmodels_anova(frame))
    assert sum(d.shares().values()) == pytest.approx(1.0)


@pytest.mark.parametrize("seed,drop", [(3, 5), (4, 17), (5, 1)])
def test_incomplete_grid_falls_back_to_sequential_regression(seed, drop):
    frame = grid_rows(seed)
    rng = np.random.default_rng(seed)
    frame = frame.drop(index=rng.choice(frame.index, drop, replace=False))
    d = variance_decomposition(frame)
    assert d.method == "sequential" and d.fell_back and "complete grid" in d.reason
    assert_matches_statsmodels(d, statsmodels_anova(frame))


def test_failed_rows_make_the_grid_incomplete():
    frame = grid_rows(6)
    frame.loc[frame.index[0], ["status", "value"]] = ["failed", np.nan]
    d = variance_decomposition(frame)
    assert d.fell_back and d.n_rows == len(frame) - 1
    assert_matches_statsmodels(d, statsmodels_anova(frame.iloc[1:]))


def test_unequal_actions_per_emotion_is_not_balanced():
    frame = grid_rows(7)
    frame = frame[~((frame["emotion"] == "Sad") & (frame["action_id"] == 2))]  # Sad has one action
    d = variance_decomposition(frame)
    assert d.fell_back and "numbers of actions" in d.reason
    assert_matches_statsmodels(d, statsmodels_anova(frame))


def test_single_actor_terms_are_not_estimable():
    frame = grid_rows(8, actors=1)
    d = variance_decomposition(frame)
    got = d.table.set_index("term")
    for term in ("actor", "actor:model"):
        assert got.loc[term, "df"] == 0 and math.isnan(got.loc[term, "sum_sq"]) and math.isnan(got.loc[term, "share"])
    rest = tuple(t for t in TERMS if "actor" not in t)
    assert_matches_statsmodels(d, statsmodels_anova(frame, rest), rest)


def test_hand_worked_two_by_two():
    # value = 2 [model y] + 1 [actor 2]: SS_model = 8 x 1^2 = 8, SS_actor = 8 x 0.5^2 = 2, total 10.
    rows = [{"model": m, "actor_id": a, "emotion": e, "action_id": 1, "script_id": 1,
             "value": 2.0 * (m == "y") + 1.0 * (a == 2)}
            for m, a, e in itertools.product("xy", (1, 2), ("Happy", "Sad"))]
    d = variance_decomposition(rows).table.set_index("term")
    assert d.loc["model", "sum_sq"] == pytest.approx(2.0 * 4) and d.loc["actor", "sum_sq"] == pytest.approx(2.0)
    assert d.loc["total", "sum_sq"] == pytest.approx(10.0) and d.loc["model", "share"] == pytest.approx(0.8)
    assert d.loc["emotion", "sum_sq"] == 0.0
    # One action and one script per emotion: those nested terms have no degrees of freedom.
    assert d.loc["action", "df"] == 0 and math.isnan(d.loc["action", "share"])


def test_row_order_does_not_matter():
    frame = grid_rows(9)
    a = variance_decomposition(frame).table
    b = variance_decomposition(frame.sample(frac=1.0, random_state=1)).table
    pd.testing.assert_frame_equal(a, b)


def test_bad_inputs():
    with pytest.raises(VarianceInputError, match="no rows"):
        variance_decomposition([])
    with pytest.raises(VarianceInputError, match="no rows"):
        variance_decomposition(pd.DataFrame())
    frame = grid_rows(0)
    with pytest.raises(VarianceInputError, match="mix metrics"):
        variance_decomposition(pd.concat([frame, frame.assign(metric="mse")]))
    with pytest.raises(VarianceInputError, match="two values"):
        variance_decomposition(pd.concat([frame, frame]))
    with pytest.raises(VarianceInputError, match="no finite"):
        variance_decomposition(frame.assign(value=np.nan))


def test_constant_values_give_nan_shares():
    d = variance_decomposition(grid_rows(0).assign(value=1.0))
    assert all(math.isnan(v) for v in d.shares().values())


def test_figure_bar_heights_are_the_shares(tmp_path):
    balanced = variance_decomposition(grid_rows(1))
    fallback = variance_decomposition(grid_rows(2).iloc[3:])
    fig = variance_figure({"matting": balanced, "voice_cloning": fallback})
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Video matting", "Voice cloning*"]  # labels, not keys
    assert len(ax.containers) == len(TERMS) + 1
    for column, d in enumerate((balanced, fallback)):
        shares = d.shares()
        bottom = 0.0
        for container, term in zip(ax.containers, (*TERMS, RESIDUAL)):
            patch = container.patches[column]
            assert patch.get_height() == pytest.approx(shares[term])
            assert patch.get_y() == pytest.approx(bottom)
            bottom += shares[term]
        assert bottom == pytest.approx(1.0)
    paths = plot_variance_decomposition({"matting": balanced}, tmp_path / "fig_variance")
    assert [p.suffix for p in paths] == [".png", ".svg"] and all(p.stat().st_size > 0 for p in paths)

"""The within-clip ``sample`` term of the variance decomposition (several samples per clip: a model's seeds)."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

from hug_vis_dataset.metrics import variance
from hug_vis_dataset.metrics.variance import (
    RESIDUAL, SAMPLE, TERMS, VarianceInputError, variance_decomposition,
)
from hug_vis_dataset.presentation.labels import variance_term
from hug_vis_dataset.reporting.figures import variance_figure
from test_variance import FORMULA_TERMS, grid_rows

# The hand-worked grid: 2 models x 2 actors x 2 emotions, one action and script; cell means
# 2 [model y] + 1 [actor 2] + 1 [actor 2 and Sad] (the last one is actor x emotion: the residual).
#   cells x: a1 H 0, a1 S 0, a2 H 1, a2 S 2;  y: a1 H 2, a1 S 2, a2 H 3, a2 S 4;  grand mean 1.75
#   SS on cell means: model 8 x 1^2 = 8, actor 8 x 0.75^2 = 4.5, emotion 8 x 0.25^2 = 0.5, emotion:model 0,
#   actor:model 0, residual 13.5 - 13 = 0.5, total 13.5 (df: 1, 1, 1, 1, 1, residual 8 - 1 - 5 = 2).
CELL_SS = {"actor": 4.5, "emotion": 0.5, "model": 8.0, "emotion:model": 0.0, "actor:model": 0.0}
CELL_RESIDUAL, CELL_TOTAL = 0.5, 13.5


def cell_mean(model: str, actor: int, emotion: str) -> float:
    return 2.0 * (model == "y") + 1.0 * (actor == 2) + 1.0 * (actor == 2 and emotion == "Sad")


def hand_rows(deviations) -> list[dict]:
    """One row per sample: the cell mean plus ``deviations(model)`` (each sums to 0, so cell means stay)."""
    return [{"model": m, "actor_id": a, "emotion": e, "action_id": 1, "script_id": 1, "sample": k,
             "value": cell_mean(m, a, e) + d, "status": "ok"}
            for m, a, e in itertools.product("xy", (1, 2), ("Happy", "Sad")) for k, d in enumerate(deviations(m))]


def table_of(d) -> pd.DataFrame:
    return d.table.set_index("term")


def test_hand_worked_two_samples():
    # Each cell's two samples are its mean -/+ 0.5: SS_sample = 8 cells x 2 x 0.25 = 4 (df 16 - 8 = 8); every grid
    # term doubles; total = 2 x 13.5 + 4 = 31.
    d = variance_decomposition(hand_rows(lambda m: (-0.5, 0.5)))
    t = table_of(d)
    assert d.method == "balanced" and d.reason == "" and d.n_rows == 16
    assert list(t.index) == [*TERMS, SAMPLE, RESIDUAL, "total"]
    for term, ss in CELL_SS.items():
        assert t.loc[term, "sum_sq"] == pytest.approx(2 * ss, abs=1e-12) and t.loc[term, "df"] == 1, term
    for term in ("action", "script"):
        assert t.loc[term, "df"] == 0 and math.isnan(t.loc[term, "sum_sq"])
    assert t.loc[SAMPLE, "sum_sq"] == pytest.approx(4.0) and t.loc[SAMPLE, "df"] == 8
    assert t.loc[RESIDUAL, "sum_sq"] == pytest.approx(2 * CELL_RESIDUAL) and t.loc[RESIDUAL, "df"] == 2
    assert t.loc["total", "sum_sq"] == pytest.approx(31.0) and t.loc["total", "df"] == 15
    assert t.loc[SAMPLE, "share"] == pytest.approx(4 / 31) and t.loc["model", "share"] == pytest.approx(16 / 31)
    assert np.nansum(list(d.shares().values())) == pytest.approx(1.0)  # action, script: NaN (one level each)


def test_hand_worked_three_samples():
    # Samples mean + (-1, 0, 1) x s, s = 1 for model x and 2 for model y: SS_sample = 4 x 2 + 4 x 8 = 40
    # (df 24 - 8 = 16); every grid term triples; total = 3 x 13.5 + 40 = 80.5.
    d = variance_decomposition(hand_rows(lambda m: tuple(s * (1.0 if m == "x" else 2.0) for s in (-1, 0, 1))))
    t = table_of(d)
    assert d.method == "balanced" and d.n_rows == 24
    for term, ss in CELL_SS.items():
        assert t.loc[term, "sum_sq"] == pytest.approx(3 * ss, abs=1e-12), term
    assert (t.loc[SAMPLE, "sum_sq"], t.loc[SAMPLE, "df"]) == (pytest.approx(40.0), 16)
    assert (t.loc[RESIDUAL, "sum_sq"], t.loc[RESIDUAL, "df"]) == (pytest.approx(1.5), 2)
    assert t.loc["total", "sum_sq"] == pytest.approx(80.5) and t.loc["total", "df"] == 23
    assert t.loc[SAMPLE, "share"] == pytest.approx(40 / 80.5)


def statsmodels_with_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """Type I ANOVA of the per-sample rows: the grid terms in order, then the cell (every grid factor crossed):
    the cell's sum of squares is the between-cell residual, the final residual the within-cell ``sample`` term."""
    cell = (frame["model"].astype(str) + "|" + frame["actor_id"].astype(str) + "|" + frame["emotion"].astype(str)
            + "|" + frame["action_id"].astype(str) + "|" + frame["script_id"].astype(str))
    data = pd.DataFrame({
        "y": frame["value"].astype(float).to_numpy(), "actor": frame["actor_id"].astype(str).to_numpy(),
        "model": frame["model"].astype(str).to_numpy(), "emotion": frame["emotion"].astype(str).to_numpy(),
        "action_in": (frame["emotion"].astype(str) + "/" + frame["action_id"].astype(str)).to_numpy(),
        "script_in": (frame["emotion"].astype(str) + "/" + frame["action_id"].astype(str) + "/"
                      + frame["script_id"].astype(str)).to_numpy(),
        "cell": cell.to_numpy(),
    })
    formulas = [FORMULA_TERMS[t] for t in TERMS] + ["C(cell)"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rank-deficient nested codings are expected here
        fits = [smf.ols("y ~ 1", data=data).fit()]
        for k in range(1, len(formulas) + 1):
            fits.append(smf.ols("y ~ " + " + ".join(formulas[:k]), data=data).fit())
        table = anova_lm(*fits)
    out = pd.DataFrame({"df": table["df_diff"].to_numpy()[1:], "sum_sq": table["ss_diff"].to_numpy()[1:]},
                       index=[*TERMS, RESIDUAL])
    out.loc[SAMPLE] = [fits[-1].df_resid, fits[-1].ssr]
    return out


def assert_matches(d, expected: pd.DataFrame) -> None:
    got = table_of(d)
    total = got.loc["total", "sum_sq"]
    assert expected["sum_sq"].sum() == pytest.approx(total, rel=1e-9)
    for term in (*TERMS, SAMPLE, RESIDUAL):
        if got.loc[term, "df"] == 0:
            assert expected.loc[term, "df"] == 0 and math.isnan(got.loc[term, "sum_sq"]), term
            continue
        assert got.loc[term, "df"] == pytest.approx(expected.loc[term, "df"]), term
        assert got.loc[term, "sum_sq"] == pytest.approx(expected.loc[term, "sum_sq"], rel=1e-7, abs=1e-9), term


def with_samples(frame: pd.DataFrame, k: int, noise: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = pd.concat([frame.assign(sample=s) for s in range(k)], ignore_index=True)
    out["value"] = out["value"].astype(float) + rng.normal(0.0, noise, len(out))
    return out


@pytest.mark.parametrize("seed,k", [(0, 2), (1, 3), (2, 4)])
def test_balanced_with_samples_matches_statsmodels_and_the_sequential_fallback(seed, k):
    frame = with_samples(grid_rows(seed), k, 0.5, seed)
    d = variance_decomposition(frame)
    assert d.method == "balanced" and d.n_rows == len(frame)
    assert_matches(d, statsmodels_with_cells(frame))
    # The same data through the fallback: the type I fit of the cell means weighted by their sample counts.
    prepared = variance._prepare(frame)
    cells = prepared.groupby(list(variance._CELL), sort=True)
    means = cells["value"].mean().reset_index()
    ss_seq, df_seq = variance._sequential(means, means["value"].to_numpy(), cells.size().to_numpy().astype(float))
    t = table_of(d)
    for term in TERMS:
        assert df_seq[term] == t.loc[term, "df"], term
        if df_seq[term] > 0:
            assert ss_seq[term] == pytest.approx(t.loc[term, "sum_sq"], rel=1e-9, abs=1e-9), term
    # Each grid term is K times its sum of squares on the cell means (the decomposition without samples).
    on_means = table_of(variance_decomposition(means.assign(sample=0)))
    for term in (*TERMS, RESIDUAL):
        if on_means.loc[term, "df"] > 0:
            assert t.loc[term, "sum_sq"] == pytest.approx(k * on_means.loc[term, "sum_sq"], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", [3, 4])
def test_unequal_samples_fall_back_to_sequential(seed):
    frame = with_samples(grid_rows(seed), 3, 0.5, seed)
    rng = np.random.default_rng(seed)
    frame = frame.drop(index=rng.choice(frame.index[frame["sample"] == 2], 5, replace=False))
    d = variance_decomposition(frame)
    assert d.method == "sequential" and d.fell_back and "different numbers of samples (2 to 3)" in d.reason
    assert_matches(d, statsmodels_with_cells(frame))


def test_incomplete_grid_with_samples_falls_back():
    frame = with_samples(grid_rows(5), 2, 0.3, 5)
    first = frame.iloc[0]
    cell = (frame[list(variance._CELL)] == first[list(variance._CELL)]).all(axis=1)
    frame = frame[~cell]  # a whole cell missing: equal K, but not a complete grid
    d = variance_decomposition(frame)
    assert d.method == "sequential" and "complete grid" in d.reason
    assert_matches(d, statsmodels_with_cells(frame))


def test_failed_and_non_finite_samples_are_left_out():
    frame = with_samples(grid_rows(6), 3, 0.4, 6)
    dropped = frame.copy()
    dropped.loc[dropped.index[0], "status"] = "failed"
    dropped.loc[dropped.index[1], "value"] = np.inf
    d = variance_decomposition(dropped)
    assert d.n_rows == len(frame) - 2 and d.fell_back
    assert_matches(d, statsmodels_with_cells(frame.iloc[2:]))


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_planted_seed_noise_sets_the_sample_share(seed):
    # Cell values mu_c (grid_rows: factor effects, sd ~ 1-2), K = 3 samples mu_c + N(0, noise^2). Expected sums of
    # squares: E[SS_sample] = noise^2 (n - cells); E[total] = K sum_c (mu_c - mu)^2 + noise^2 (n - 1). The sample
    # share follows the planted seed noise, from nothing to its df share (n - cells) / (n - 1) when noise dominates.
    cells, k = grid_rows(seed, actors=6), 3
    mu = cells["value"].to_numpy()
    shares = []
    for noise in (0.01, 0.5, 3.0, 20.0):
        rows = with_samples(cells, k, noise, seed)
        d = variance_decomposition(rows)
        t = table_of(d)
        n = len(rows)
        expected = noise**2 * (n - len(cells)) / (k * ((mu - mu.mean()) ** 2).sum() + noise**2 * (n - 1))
        assert t.loc[SAMPLE, "sum_sq"] / t.loc[SAMPLE, "df"] == pytest.approx(noise**2, rel=0.25)  # mean square
        assert d.shares()[SAMPLE] == pytest.approx(expected, abs=0.05), noise
        shares.append(d.shares()[SAMPLE])
    assert shares[0] < 1e-3 and shares == sorted(shares) and shares[-1] > 0.6


def test_one_sample_per_cell_is_exactly_todays_table():
    frame = grid_rows(8)
    today = variance_decomposition(frame)
    for rows in (frame.assign(sample=0), frame.assign(sample=3), frame.assign(sample=np.nan),
                 frame.assign(sample=pd.array([0] * len(frame), dtype="Int64"))):
        got = variance_decomposition(rows)
        pd.testing.assert_frame_equal(got.table, today.table, check_exact=True)
        assert (got.method, got.reason, got.n_rows) == (today.method, today.reason, today.n_rows)
        assert SAMPLE not in got.shares()
    # A second sample that failed leaves one ok sample per cell: today's table again.
    failed = pd.concat([frame.assign(sample=0), frame.assign(sample=1, status="failed")], ignore_index=True)
    pd.testing.assert_frame_equal(variance_decomposition(failed).table, today.table, check_exact=True)
    incomplete = frame.iloc[5:]
    pd.testing.assert_frame_equal(variance_decomposition(incomplete.assign(sample=0)).table,
                                  variance_decomposition(incomplete).table, check_exact=True)


def test_row_order_does_not_matter_with_samples():
    frame = with_samples(grid_rows(9), 3, 0.5, 9)
    a = variance_decomposition(frame).table
    b = variance_decomposition(frame.sample(frac=1.0, random_state=2)).table
    pd.testing.assert_frame_equal(a, b)
    unequal = frame.iloc[4:]
    pd.testing.assert_frame_equal(variance_decomposition(unequal).table,
                                  variance_decomposition(unequal.sample(frac=1.0, random_state=3)).table)


def test_bad_sample_inputs():
    frame = with_samples(grid_rows(0), 2, 0.5, 0)
    with pytest.raises(VarianceInputError, match="two values for sample 1"):
        variance_decomposition(pd.concat([frame, frame[frame["sample"] == 1].head(1)]))
    with pytest.raises(VarianceInputError, match="integers >= 0"):
        variance_decomposition(frame.assign(sample=frame["sample"] - 1))
    with pytest.raises(VarianceInputError, match="integers >= 0"):
        variance_decomposition(frame.assign(sample=frame["sample"] + 0.5))
    # Without a sample column two values of a cell are still an error (one metric's rows expected).
    with pytest.raises(VarianceInputError, match="two values for one clip"):
        variance_decomposition(frame.drop(columns="sample"))


def test_figure_shows_the_sample_term():
    seeds = variance_decomposition(with_samples(grid_rows(1), 3, 1.0, 1))
    plain = variance_decomposition(grid_rows(2))
    fig = variance_figure({"matting": seeds, "voice_cloning": plain})
    ax = fig.axes[0]
    terms = (*TERMS, SAMPLE, RESIDUAL)
    assert len(ax.containers) == len(terms)
    assert [t.get_text() for t in ax.get_legend().get_texts()][-2:] == [variance_term(SAMPLE), "Residual"]
    for column, d in enumerate((seeds, plain)):
        shares = d.shares()
        bottom = 0.0
        for container, term in zip(ax.containers, terms):
            expected = shares.get(term, 0.0)
            expected = expected if math.isfinite(expected) else 0.0
            patch = container.patches[column]
            assert patch.get_height() == pytest.approx(expected) and patch.get_y() == pytest.approx(bottom), term
            bottom += expected
        assert bottom == pytest.approx(1.0)
    # Without samples anywhere, the figure keeps today's segments.
    assert len(variance_figure({"matting": plain}).axes[0].containers) == len(TERMS) + 1

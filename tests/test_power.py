"""Minimum detectable difference (hug_vis_dataset.metrics.power) against Monte-Carlo simulations.

The reference is a simulation of the design the formula describes: per-clip differences
``delta + u_actor + e_clip`` with ``delta`` set to the computed MDD, tested with the cluster-robust
t test (and the project's own sign-flip test): the rejection rate must be 0.80 within its
Monte-Carlo error (binomial standard error, 4 sigma).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from hug_vis_dataset.metrics import power as pw
from hug_vis_dataset.metrics.significance import sign_flip_p_value

N_SIM = 6000
TOL = 4 * math.sqrt(0.8 * 0.2 / N_SIM)  # 4 Monte-Carlo standard errors of a rejection rate near 0.8


def _simulate(counts, between, within, delta, n_sim, seed):
    """Actor sums S (n_sim x A) and mean differences D of simulated datasets."""
    rng = np.random.default_rng(seed)
    counts = np.asarray(counts)
    A, n = counts.size, int(counts.sum())
    idx = np.repeat(np.arange(A), counts)
    d = delta + rng.normal(0, math.sqrt(between), (n_sim, A))[:, idx] + rng.normal(0, math.sqrt(within), (n_sim, n))
    sums = np.stack([np.bincount(idx, weights=row, minlength=A) for row in d])
    return d, idx, sums, sums.sum(1) / n


def _cr1_rejections(counts, sums, D, alpha=0.05):
    counts = np.asarray(counts, float)
    A, n = counts.size, counts.sum()
    se = np.sqrt(A / (A - 1) * ((sums - counts * D[:, None]) ** 2).sum(1)) / n
    return np.abs(D / se) > stats.t.ppf(1 - alpha / 2, A - 1)


DESIGNS = {
    "30 actors x 10 clips": ([10] * 30, 0.02, 0.5),
    "6 actors x 6 clips": ([6] * 6, 0.05, 0.3),
    "12 actors, 2-19 clips": ([10, 11, 15, 19, 2, 4, 16, 19, 6, 7, 17, 9], 0.03, 0.4),
    "8 actors, 3-20 clips": ([3, 5, 8, 12, 20, 4, 9, 15], 0.05, 0.4),
}


@pytest.mark.parametrize("name", list(DESIGNS))
def test_mdd_has_80_percent_power_in_simulation(name):
    counts, between, within = DESIGNS[name]
    mdd = pw.minimum_detectable_difference(between, within, counts)
    _, _, sums, D = _simulate(counts, between, within, mdd, N_SIM, seed=11)
    rate = _cr1_rejections(counts, sums, D).mean()
    assert abs(rate - 0.80) < TOL, (name, mdd, rate)
    # and the formula's own size prediction matches the simulated null rejection rate
    _, _, sums0, D0 = _simulate(counts, between, within, 0.0, N_SIM, seed=12)
    size = pw.cr1_distribution(between, within, counts).size()
    assert abs(_cr1_rejections(counts, sums0, D0).mean() - size) < 4 * math.sqrt(size * (1 - size) / N_SIM) + 0.01


def test_plain_formula_is_wrong_on_unequal_design_and_correction_fixes_it():
    counts, between, within = DESIGNS["8 actors, 3-20 clips"]
    plain = pw.detectable_multiplier(len(counts)) * pw.standard_error(between, within, counts)
    corrected = pw.minimum_detectable_difference(between, within, counts)
    _, _, sums, D = _simulate(counts, between, within, plain, N_SIM, seed=5)
    assert _cr1_rejections(counts, sums, D).mean() > 0.80 + TOL  # the liberal test "detects" more
    assert corrected < plain


def test_sign_flip_test_has_the_same_power_at_30_actors():
    counts, between, within = DESIGNS["30 actors x 10 clips"]
    mdd = pw.minimum_detectable_difference(between, within, counts)
    d, idx, _, _ = _simulate(counts, between, within, mdd, 400, seed=3)
    rejected = [sign_flip_p_value(row, idx, n_resamples=999, seed=i)[0] < 0.05 for i, row in enumerate(d)]
    rate = float(np.mean(rejected))
    assert abs(rate - 0.80) < 4 * math.sqrt(0.16 / 400), rate


def test_balanced_multiplier_is_the_noncentral_t_solution_and_closed_forms():
    for A in (6, 12, 30):
        lam = pw.detectable_multiplier(A)
        crit = stats.t.ppf(0.975, A - 1)
        assert stats.nct.sf(crit, A - 1, lam) + stats.nct.cdf(-crit, A - 1, lam) == pytest.approx(0.8, abs=1e-8)
        assert pw.detectable_multiplier(A, method="t") == pytest.approx(crit + stats.t.ppf(0.8, A - 1))
        assert abs(pw.detectable_multiplier(A, method="t") / lam - 1) < 0.01
    assert pw.detectable_multiplier(30, method="z") == pytest.approx(stats.norm.ppf(0.975) + stats.norm.ppf(0.8))
    # balanced designs: the Satterthwaite path equals the exact multiplier x SE
    assert pw.minimum_detectable_difference(0.1, 0.5, [10] * 30) == pytest.approx(
        pw.detectable_multiplier(30) * math.sqrt((0.1 + 0.05) / 30), rel=1e-7)
    with pytest.raises(pw.PowerInputError):
        pw.detectable_multiplier(1)


def test_variance_components_recover_simulated_components_and_se_matches_cr1():
    # unbiased (before truncation at 0, rare here): the mean over 300 simulated datasets
    d, idx, _, _ = _simulate([4, 9, 12, 6] * 5, 0.2, 1.0, 0.0, 300, seed=7)
    estimates = [pw.variance_components(row, idx) for row in d]
    assert np.mean([e.within for e in estimates]) == pytest.approx(1.0, abs=0.02)
    assert np.mean([e.between for e in estimates]) == pytest.approx(0.2, abs=0.03)
    # hand-computed one-way ANOVA on a small unequal case
    values, actors = [1.0, 2.0, 6.0, 4.0, 5.0], ["a", "a", "b", "b", "b"]
    grand = 18 / 5
    msw = ((1 - 1.5) ** 2 + (2 - 1.5) ** 2 + (6 - 5) ** 2 + (4 - 5) ** 2 + 0) / 3
    msb = (2 * (1.5 - grand) ** 2 + 3 * (5 - grand) ** 2) / 1
    n0 = 5 - (4 + 9) / 5
    vc = pw.variance_components(values, actors)
    assert vc.within == pytest.approx(msw) and vc.between == pytest.approx((msb - msw) / n0)
    # CR1 SE with equal clips = sd(actor means) / sqrt(A)
    d = np.arange(12.0) ** 1.5
    means = d.reshape(4, 3).mean(1)
    assert pw.cluster_robust_se(d, np.repeat([1, 2, 3, 4], 3)) == pytest.approx(means.std(ddof=1) / 2)


def test_separable_neighbours_marks_gaps_below_mdd():
    assert pw.separable_neighbours([0.9, 0.1, 0.85, float("nan")], 0.1, True) == [False, None, True, None]
    assert pw.separable_neighbours([1.0, 2.0], float("nan"), True) == [None, None]
    assert pw.separable_neighbours([5.0, 5.0], 0.0, False) == [True, None]


def _rows(effects, n_actors=8, clips=6, seed=0):
    rng = np.random.default_rng(seed)
    actor_effect = rng.normal(0, 0.3, n_actors)
    rows = []
    for model, effect in effects.items():
        per_model = rng.normal(0, 0.2, n_actors)
        for a in range(n_actors):
            for s in range(clips):
                rows.append({"model": model, "clip_id": f"actor_{a + 1:04d}_happy_action_01_script_{s + 1:03d}",
                             "value": effect + actor_effect[a] + per_model[a] + rng.normal(0, 0.5), "status": "ok"})
    return pd.DataFrame(rows)


def test_detectable_differences_from_rows_matches_components_of_each_pair():
    rows = _rows({"x": 1.0, "y": 0.9, "z": 0.0})
    out = pw.detectable_differences(rows, higher_is_better=True, actor_counts=(30, 6))
    ranked = rows.groupby("model")["value"].mean().sort_values(ascending=False).index.tolist()
    assert [(p["model"], p["next_model"]) for p in out["pairs"]] == list(zip(ranked, ranked[1:]))
    wide = rows.pivot(index="clip_id", columns="model", values="value")
    actors = [int(c[6:10]) for c in wide.index]
    for pair in out["pairs"]:
        d = (wide[pair["model"]] - wide[pair["next_model"]]).to_numpy()
        vc = pw.variance_components(d, actors)
        assert pair["mdd"] == pytest.approx(pw.minimum_detectable_difference(vc.between, vc.within, [6] * 8))
        assert pair["separable"] == (abs(pair["gap"]) >= pair["mdd"])
    pooled = out["pooled"]
    assert out["n_actors"] == 8 and sorted(out["by_actors"]) == [6, 8, 30]
    assert out["by_actors"][8] == pytest.approx(pooled["mdd"])
    assert out["by_actors"][30] < out["by_actors"][8] < out["by_actors"][6]
    # lower-is-better: same magnitudes, reversed ranking
    flipped = rows.assign(value=-rows["value"])
    assert pw.detectable_differences(flipped, False)["pooled"]["mdd"] == pytest.approx(pooled["mdd"])
    # row order never matters
    shuffled = rows.sample(frac=1.0, random_state=1)
    assert pw.detectable_differences(shuffled, True)["pooled"]["mdd"] == pytest.approx(pooled["mdd"], rel=1e-12)

"""Paired tests between leaderboard neighbours (hug_vis_dataset.metrics.significance).

References: ``scipy.stats.permutation_test`` (sign flips of per-actor sums, and of single clips),
:func:`hug_vis_dataset.stats.bootstrap_ci` and a loop-by-loop bootstrap written here.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import permutation_test

from hug_vis_dataset.metrics.significance import (
    SignificanceInputError, cluster_bootstrap_interval, neighbour_tests, paired_test, sign_flip_p_value,
)
from hug_vis_dataset.stats import bootstrap_ci


def clustered(seed: int, n_actors: int, shift: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 5, n_actors)
    actors = np.repeat(np.arange(1, n_actors + 1), sizes)
    effect = rng.normal(shift, 1.0, n_actors)[actors - 1]
    return effect + rng.normal(0, 0.5, actors.size), actors


def scipy_cluster_p(d: np.ndarray, actors: np.ndarray) -> float:
    sums = np.array([d[actors == a].sum() for a in np.unique(actors)])
    n = d.size
    res = permutation_test((sums,), lambda x, axis: np.sum(x, axis=axis) / n, vectorized=True,
                           permutation_type="samples", n_resamples=np.inf, alternative="two-sided")
    return float(res.pvalue)


@pytest.mark.parametrize("seed,n_actors,shift", [(0, 3, 0.0), (1, 6, 0.5), (2, 8, 1.5), (3, 10, -0.8), (4, 5, 0.0)])
def test_sign_flip_matches_scipy_exact(seed, n_actors, shift):
    d, actors = clustered(seed, n_actors, shift)
    p, exact = sign_flip_p_value(d, actors, n_resamples=10_000)
    assert exact
    assert p == pytest.approx(scipy_cluster_p(d, actors), rel=1e-12)


def test_one_clip_per_actor_is_scipys_paired_permutation_test():
    rng = np.random.default_rng(5)
    a, b = rng.normal(0.3, 1, 9), rng.normal(0, 1, 9)
    res = permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis), vectorized=True,
                           permutation_type="samples", n_resamples=np.inf)
    assert sign_flip_p_value(a - b, range(9))[0] == pytest.approx(res.pvalue, rel=1e-12)


def test_random_sign_patterns_approach_the_exact_p_value():
    d, actors = clustered(6, 12, 0.4)
    exact, is_exact = sign_flip_p_value(d, actors, n_resamples=5000)
    assert is_exact  # 4096 patterns
    approx, is_exact = sign_flip_p_value(d, actors, n_resamples=4000, seed=1)
    assert not is_exact
    assert approx == pytest.approx(exact, abs=0.03)
    assert approx >= 2 / 4001  # the (count + 1) / (n + 1) rule never gives 0


@pytest.mark.parametrize("seed,n_actors", [(0, 4), (7, 9), (8, 2)])
def test_bootstrap_equals_stats_bootstrap_ci_and_a_loop(seed, n_actors):
    d, actors = clustered(seed, n_actors, 0.3)
    low, high = cluster_bootstrap_interval(d, actors, n_boot=300, level=0.9, seed=seed)
    ci = bootstrap_ci([{"actor_id": int(a), "d": float(x)} for a, x in zip(actors, d)], lambda f: f["d"].mean(),
                      n_boot=300, level=0.9, seed=seed)
    assert (low, high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    # By hand: draw actors, pool their clips, average.
    keys = sorted(set(actors.tolist()))
    rng = np.random.default_rng(seed)
    reps = []
    for _ in range(300):
        pooled = []
        for pos in rng.integers(0, len(keys), size=len(keys)):
            pooled.extend(d[actors == keys[pos]].tolist())
        reps.append(sum(pooled) / len(pooled))
    assert (low, high) == pytest.approx(tuple(np.percentile(reps, [5, 95])), rel=1e-12)


def test_two_actor_interval_by_hand():
    # Actor sums 3 (2 clips) and 7 (2 clips): replicates are 1.5, 2.5 or 3.5.
    low, high = cluster_bootstrap_interval([1.0, 2.0, 3.0, 4.0], [1, 1, 2, 2], n_boot=400, level=0.5)
    rng = np.random.default_rng(0)
    reps = [np.mean([[1.5, 3.5][i] for i in rng.integers(0, 2, 2)]) for _ in range(400)]
    assert (low, high) == tuple(np.percentile(reps, [25, 75]))


def test_single_actor_is_not_applicable_never_zero_width():
    r = paired_test([0.5, 0.25, 0.75], ["a", "a", "a"])
    assert r.mean_difference == 0.5
    assert math.isnan(r.ci_low) and math.isnan(r.ci_high) and math.isnan(r.p_value)
    assert r.distinguishable is None and "one actor" in r.note
    assert math.isnan(sign_flip_p_value([1.0, 2.0], [3, 3])[0])
    assert all(math.isnan(x) for x in cluster_bootstrap_interval([1.0, 2.0], [3, 3]))


def test_too_few_actors_to_ever_reject_is_not_applicable():
    d = np.array([5.0, 6.0, 7.0, 8.0, 9.0])  # all positive: the most extreme pattern
    r = paired_test(d, range(5))
    assert r.p_value == pytest.approx(2 / 32) and r.distinguishable is None and "5 actors" in r.note
    r6 = paired_test(np.append(d, 4.0), range(6))
    assert r6.p_value == pytest.approx(2 / 64) and r6.distinguishable is True and r6.note == ""


def rows_for(values: dict[str, list[float]], n_actors: int, clips_per_actor: int = 2) -> list[dict]:
    rows = []
    for model, vals in values.items():
        for i, v in enumerate(vals):
            actor, script = i // clips_per_actor + 1, i % clips_per_actor + 1
            rows.append({"model": model, "clip_id": f"actor_{actor:04d}_sad_action_01_script_{script:03d}",
                         "metric": "m", "value": v, "status": "ok"})
    assert len(rows) == len(values) * n_actors * clips_per_actor
    return rows


def test_leaderboard_ties_and_clear_gaps():
    rng = np.random.default_rng(0)
    base = rng.normal(0, 1, 16)  # 8 actors x 2 clips
    rows = rows_for({"tied_a": base + 5.0, "tied_b": base + 5.0, "far": base - 10.0, "best": base + 9.0}, 8)
    out = neighbour_tests(rows, higher_is_better=True, n_boot=200)
    assert [(r["model"], r["next_model"]) for r in out] == [("best", "tied_a"), ("tied_a", "tied_b"), ("tied_b", "far")]
    assert out[0]["verdict"] == "distinguishable" and out[0]["p_value"] == pytest.approx(2 / 256)
    tie = out[1]
    assert tie["difference"] == 0.0 and tie["p_value"] == 1.0 and (tie["ci_low"], tie["ci_high"]) == (0.0, 0.0)
    assert tie["distinguishable"] is False and tie["verdict"] == "not distinguishable at 95%"
    assert out[2]["difference"] == pytest.approx(15.0)
    # Lower is better: the order flips, differences stay positive for the better system.
    low = neighbour_tests(rows, higher_is_better=False, n_boot=200)
    assert [r["model"] for r in low] == ["far", "tied_a", "tied_b"] and low[0]["difference"] == pytest.approx(15.0)


def test_leaderboard_pairs_by_clip_and_drops_failed_rows():
    rows = rows_for({"a": [1.0] * 12, "b": [0.0] * 12}, 6)
    rows[0] = {**rows[0], "status": "failed", "value": float("nan")}
    out = neighbour_tests(rows, higher_is_better=True, n_boot=50)
    assert out[0]["n_clips"] == 11 and out[0]["n_actors"] == 6 and out[0]["difference"] == 1.0
    # An explicit order is kept, even against the means.
    assert neighbour_tests(rows, True, order=["b", "a"], n_boot=50)[0]["difference"] == -1.0


def test_seed_determinism_and_row_order():
    rng = np.random.default_rng(3)
    rows = rows_for({"a": rng.normal(0.2, 1, 40), "b": rng.normal(0, 1, 40)}, 20)
    first = neighbour_tests(rows, True, n_resamples=999, n_boot=300, seed=11)
    again = neighbour_tests(list(reversed(rows)), True, n_resamples=999, n_boot=300, seed=11)
    assert pd.DataFrame(first).equals(pd.DataFrame(again))
    other = neighbour_tests(rows, True, n_resamples=999, n_boot=300, seed=12)
    assert (other[0]["ci_low"], other[0]["p_value"]) != (first[0]["ci_low"], first[0]["p_value"])
    assert other[0]["difference"] == first[0]["difference"]


def test_bad_rows_are_reported():
    with pytest.raises(SignificanceInputError, match="lack columns"):
        neighbour_tests([{"model": "a", "value": 1.0}], True)
    rows = rows_for({"a": [1.0, 2.0]}, 1)
    with pytest.raises(SignificanceInputError, match="twice"):
        neighbour_tests(rows + rows, True)
    with pytest.raises(SignificanceInputError, match="without rows"):
        neighbour_tests(rows, True, order=["a", "zzz"])
    assert paired_test([], []).note == "n/a: no common clips"

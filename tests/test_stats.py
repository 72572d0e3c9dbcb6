"""Actor-clustered bootstrap, Spearman, OLS and min-max helpers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from hug_vis_dataset.stats import bootstrap_ci, minmax, ols_fit, spearman


@pytest.mark.parametrize(
    "x,y",
    [
        ([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]),
        ([1, 1, 2, 3, 3, 3], [2, 1, 4, 4, 5, 6]),  # ties in both
        ([0.3, 0.1, 0.2], [0.9, 0.1, 0.1]),
        (list(np.random.default_rng(3).normal(size=40)), list(np.random.default_rng(4).normal(size=40))),
    ],
)
def test_spearman_matches_scipy(x, y):
    assert spearman(x, y) == pytest.approx(sps.spearmanr(x, y).statistic, abs=1e-12)


def test_spearman_constant_and_nan():
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))
    assert math.isnan(spearman([1], [2]))
    # NaN pairs are dropped: equal to the correlation of the remaining pairs
    assert spearman([1, 2, np.nan, 4], [1, 3, 9, 2]) == pytest.approx(sps.spearmanr([1, 2, 4], [1, 3, 2]).statistic)
    with pytest.raises(ValueError, match="differ in length"):
        spearman([1, 2], [1])


def test_ols_matches_scipy_linregress():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=30)
    y = 0.7 * x + 0.2 + rng.normal(scale=0.1, size=30)
    fit, ref = ols_fit(x, y), sps.linregress(x, y)
    assert fit.slope == pytest.approx(ref.slope) and fit.intercept == pytest.approx(ref.intercept)
    assert fit.r2 == pytest.approx(ref.rvalue**2) and fit.n == 30
    degenerate = ols_fit([1, 1, 1], [1, 2, 3])
    assert math.isnan(degenerate.slope) and degenerate.n == 3


def test_minmax_by_hand():
    assert minmax([3.0, 1.0, 2.0]).tolist() == [1.0, 0.0, 0.5]
    assert minmax([7.0, 7.0, np.nan]).tolist()[:2] == [0.0, 0.0]
    assert np.isnan(minmax([np.nan, np.nan])).all()


def _clip(actor: int, script: int) -> str:
    return f"actor_{actor:04d}_happy_action_01_script_{script:03d}"


def test_one_clip_per_actor_equals_ordinary_bootstrap():
    rng = np.random.default_rng(9)
    values = rng.normal(size=12)
    rows = [{"actor_id": a + 1, "clip_id": _clip(a + 1, 1), "value": float(v)} for a, v in enumerate(values)]
    ci = bootstrap_ci(rows, lambda f: f["value"].mean(), n_boot=300, seed=4)
    # Ordinary clip bootstrap with the documented draw: default_rng(seed).integers(0, n, n) per replicate.
    draw = np.random.default_rng(4)
    reps = [values[draw.integers(0, 12, size=12)].mean() for _ in range(300)]
    low, high = np.percentile(reps, [2.5, 97.5])
    assert ci.estimate == pytest.approx(values.mean())
    assert ci.low == pytest.approx(low) and ci.high == pytest.approx(high)
    assert ci.n_clusters == 12 and ci.n_valid == 300


def test_resampling_is_by_cluster():
    per_actor = {1: 0.2, 2: 0.9, 3: 0.4, 4: 1.5, 5: -0.3, 6: 0.8}
    many = [{"actor_id": a, "clip_id": _clip(a, s), "value": v} for a, v in per_actor.items() for s in range(1, 6)]
    one = [{"actor_id": a, "clip_id": _clip(a, 1), "value": v} for a, v in per_actor.items()]
    stat = lambda f: f["value"].mean()  # noqa: E731
    a = bootstrap_ci(many, stat, n_boot=200, seed=1)
    b = bootstrap_ci(one, stat, n_boot=200, seed=1)
    assert (a.low, a.high, a.estimate) == pytest.approx((b.low, b.high, b.estimate))
    # A clip-level bootstrap of the 30 rows would be far narrower than the actor-level one.
    clip_level = bootstrap_ci([dict(r, actor_id=i) for i, r in enumerate(many)], stat, cluster="actor_id", n_boot=200)
    assert (clip_level.high - clip_level.low) < 0.8 * (a.high - a.low)


def test_deterministic_order_independent_and_contains_estimate():
    rng = np.random.default_rng(2)
    rows = [{"actor_id": int(a), "clip_id": _clip(int(a), s), "value": float(rng.normal(a))}
            for a in range(1, 9) for s in range(1, 4)]
    stat = lambda f: f["value"].median()  # noqa: E731
    first = bootstrap_ci(rows, stat, n_boot=150, seed=7)
    assert bootstrap_ci(rows, stat, n_boot=150, seed=7) == first
    shuffled = pd.DataFrame(rows).sample(frac=1.0, random_state=3)
    assert bootstrap_ci(shuffled, stat, n_boot=150, seed=7) == first
    assert first.low <= first.estimate <= first.high
    assert bootstrap_ci(rows, stat, n_boot=150, seed=8) != first


def test_duplicated_actors_become_distinct_pseudo_actors():
    # The statistic counts distinct clip ids: every replicate must keep all 4 actors x 2 clips distinct.
    rows = [{"actor_id": a, "clip_id": _clip(a, s), "value": 1.0} for a in range(1, 5) for s in (1, 2)]
    ci = bootstrap_ci(rows, lambda f: f["clip_id"].nunique(), n_boot=50, seed=0)
    assert ci.low == ci.high == ci.estimate == 8.0


def test_mapping_statistic_actor_from_clip_id_and_errors():
    rows = [{"clip_id": _clip(a, 1), "value": float(a)} for a in range(1, 7)]
    res = bootstrap_ci(rows, lambda f: {"mean": f["value"].mean(), "max": f["value"].max()}, n_boot=100)
    assert set(res) == {"mean", "max"} and res["max"].estimate == 6.0 and res["max"].high == 6.0
    with pytest.raises(ValueError, match="no cluster column"):
        bootstrap_ci([{"value": 1.0}], lambda f: 0.0)
    with pytest.raises(ValueError, match="n_boot"):
        bootstrap_ci(rows, lambda f: 0.0, n_boot=0)
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(rows, lambda f: 0.0, level=1.5)
    with pytest.raises(ValueError, match="no rows"):
        bootstrap_ci([], lambda f: 0.0)


def test_rvm_intervals_equal_the_bootstrap_of_rvm_means_on_rebuilt_replicates():
    """The fast per-actor-sums bootstrap of the rvm values against the slow reference: bootstrap_ci
    rebuilding every replicate's clips and running rvm_means on them (same draws, same percentiles)."""
    import numpy as np
    import pandas as pd

    from hug_vis_dataset import catalog
    from hug_vis_dataset.scoring.aggregate import rvm_intervals, rvm_means
    from hug_vis_dataset.stats import bootstrap_ci

    rng = np.random.default_rng(3)
    rows = []
    for model in ("a", "b"):
        for actor in (1, 2, 3, 5):
            for script, length in ((1, 4 + actor), (2, 3)):
                clip = f"actor_{actor:04d}_sad_action_01_script_{script:03d}"
                for metric, first in (("mad", 0), ("dtssd", 1)):
                    for frame in range(first, length):
                        rows.append({"model": model, "clip_id": clip, "metric": metric, "frame": frame,
                                     "value": float(rng.gamma(2.0, 0.01 * actor) + (model == "b"))})
    frames = pd.DataFrame(rows)
    fast = rvm_intervals(frames, n_boot=60, seed=4)
    slow = bootstrap_ci(frames, lambda f: rvm_means(f), n_boot=60, seed=4)
    assert set(fast) == set(slow) == {(m, k) for m in "ab" for k in ("mad", "dtssd")}
    for key, ci in fast.items():
        scale = catalog.spec(key[1]).paper_scale
        reference = slow[key]
        assert ci.estimate == pytest.approx(reference.estimate * scale, rel=1e-12)
        assert (ci.low, ci.high) == pytest.approx((reference.low * scale, reference.high * scale), rel=1e-12)
        assert ci.n_clusters == 4 and ci.n_valid == 60 and ci.low < ci.estimate < ci.high
    # The estimate is the table's rvm value.
    assert fast[("a", "mad")].estimate == pytest.approx(rvm_means(frames).loc["a", "mad"] * catalog.spec("mad").paper_scale)

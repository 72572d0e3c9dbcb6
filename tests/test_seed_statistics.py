"""Seed statistics (hug_vis_dataset.statistics.seeds): per-clip seed spread and rank stability under one seed."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.statistics import seeds
from hug_vis_dataset.statistics.seeds import STABILITY_WORDS, SeedInputError, rank_stability, seed_spread


def long_rows(samples: dict, metric: str = "fvd") -> pd.DataFrame:
    """``{model: {clip: [values of samples 0, 1, ...]}}`` as per-sample rows."""
    return pd.DataFrame([{"model": m, "task": "audio_driven", "metric": metric, "clip_id": c, "sample": k,
                          "value": float(v), "status": "ok", "error": ""}
                         for m, clips in samples.items() for c, vs in clips.items() for k, v in enumerate(vs)])


# ----------------------------------------------------------------------------- seed_spread
def test_seed_spread_worked_by_hand():
    rows = long_rows({"a": {"c1": [1.0, 3.0], "c2": [2.0, 4.0, 9.0], "c3": [5.0], "c4": [7.0, 8.0]},
                      "b": {"c1": [1.0], "c2": [2.0]}})
    # a's c4 second sample failed (left out: c4 then has one sample), c1 gets a failed third sample and an ok but
    # infinite fourth one (both left out), a second metric's rows are ignored when metric is given.
    rows.loc[(rows["model"] == "a") & (rows["clip_id"] == "c4") & (rows["sample"] == 1), ["status", "value"]] = [
        "failed", np.nan]
    extra = pd.DataFrame([
        {"model": "a", "metric": "fvd", "clip_id": "c1", "sample": 2, "value": 100.0, "status": "failed"},
        {"model": "a", "metric": "fvd", "clip_id": "c1", "sample": 3, "value": np.inf, "status": "ok"},
        {"model": "a", "metric": "psnr", "clip_id": "c1", "sample": 0, "value": 30.0, "status": "ok"},
        {"model": "a", "metric": "psnr", "clip_id": "c1", "sample": 1, "value": 10.0, "status": "ok"}])
    rows = pd.concat([rows, extra], ignore_index=True)
    got = seed_spread(rows, "fvd").set_index("model")
    var = [np.var([1.0, 3.0], ddof=1), np.var([2.0, 4.0, 9.0], ddof=1)]  # 2 and 13
    assert var == [2.0, 13.0]
    assert got.loc["a", "n_clips"] == 2 and got.loc["a", "k"] == 2.5
    assert got.loc["a", "within_sd"] == pytest.approx(math.sqrt(7.5))
    assert got.loc["a", "mean_sd"] == pytest.approx(math.sqrt(15.0) / 2)
    # b has no clip with two samples: kept as a row, with nothing to measure.
    assert got.loc["b", "n_clips"] == 0
    assert math.isnan(got.loc["b", "within_sd"]) and math.isnan(got.loc["b", "mean_sd"])
    both = seed_spread(rows)
    assert list(zip(both["model"], both["metric"])) == [("a", "fvd"), ("a", "psnr"), ("b", "fvd")]
    psnr = both[both["metric"] == "psnr"].iloc[0]
    assert psnr["within_sd"] == pytest.approx(np.std([30.0, 10.0], ddof=1)) and psnr["mean_sd"] == pytest.approx(
        np.std([30.0, 10.0], ddof=1))


def test_seed_spread_planted_seed_noise():
    # 400 clips, clip effects sd 5, K = 5 seeds of sd 2: within_sd ~ 2, mean_sd ~ 2 / sqrt(400).
    rng = np.random.default_rng(0)
    clips = {f"c{i:03d}": rng.normal(0, 5) + rng.normal(0, 2.0, 5) for i in range(400)}
    got = seed_spread(long_rows({"m": clips})).iloc[0]
    assert got["n_clips"] == 400 and got["k"] == 5.0
    assert got["within_sd"] == pytest.approx(2.0, rel=0.05)
    assert got["mean_sd"] == pytest.approx(2.0 / 20.0, rel=0.05)
    # mean_sd is the sd of the mean of one fresh seed per clip: simulate it with the clips fixed.
    fresh = np.array([np.mean(v) for v in clips.values()]) + rng.normal(0, 2.0, (4000, len(clips)))
    assert fresh.mean(axis=1).std() == pytest.approx(got["mean_sd"], rel=0.06)


def test_seed_spread_row_order_and_missing_sample_column():
    rng = np.random.default_rng(1)
    rows = long_rows({m: {f"c{i}": rng.normal(0, 1, 3) for i in range(20)} for m in ("a", "b")})
    a = seed_spread(rows)
    b = seed_spread(rows.sample(frac=1.0, random_state=3))
    pd.testing.assert_frame_equal(a, b)
    # Without a sample column every row reads as sample 0: two rows of a clip are then one sample twice.
    with pytest.raises(SeedInputError, match="twice"):
        seed_spread(rows.drop(columns="sample"))
    one = rows[rows["sample"] == 0].drop(columns="sample")
    assert (seed_spread(one)["n_clips"] == 0).all()


def test_seed_spread_bad_inputs():
    rows = long_rows({"a": {"c1": [1.0, 2.0]}})
    with pytest.raises(SeedInputError, match="lack columns"):
        seed_spread(rows.drop(columns="clip_id"))
    with pytest.raises(SeedInputError, match="integers >= 0"):
        seed_spread(rows.assign(sample=[0, -1]))
    with pytest.raises(SeedInputError, match="twice"):
        seed_spread(pd.concat([rows, rows.head(1)]))
    assert seed_spread(rows.assign(status="failed")).empty


# ----------------------------------------------------------------------------- rank_stability
def exact_share(a: dict, b: dict, higher_is_better: bool) -> float:
    """Every joint pick enumerated: the share of equally likely one-sample-per-clip evaluations keeping a above b
    (ties half), means over the common clips."""
    common = sorted(set(a) & set(b))
    kept, total = 0.0, 0
    for picks_a in itertools.product(*(a[c] for c in common)):
        for picks_b in itertools.product(*(b[c] for c in common)):
            gap = (np.mean(picks_a) - np.mean(picks_b)) * (1 if higher_is_better else -1)
            kept += 1.0 if gap > 0 else 0.5 if gap == 0 else 0.0
            total += 1
    return kept / total


def test_worked_two_clip_example_matches_the_enumeration():
    a = {"c1": [1.0, 4.0], "c2": [2.0, 3.0, 7.0]}
    b = {"c1": [2.0, 3.0], "c2": [1.0, 5.0], "c3": [100.0]}  # c3: b only, not compared
    # By hand (sums over the two clips, equally likely): a's 6 sums {3, 4, 8, 6, 7, 11}, b's 4 sums {3, 4, 7, 8}.
    # a wins against 0, 1, 3, 2, 2, 4 of b's sums (12 of 24 pairs), ties 4 (3=3, 4=4, 7=7, 8=8), loses 8:
    # higher is better: (12 + 4/2) / 24 = 14/24; lower is better: (8 + 4/2) / 24 = 10/24.
    assert exact_share(a, b, True) == pytest.approx(14 / 24)
    n = 40000
    (got,) = rank_stability(long_rows({"a": a, "b": b}), "fvd", ["a", "b"], True, n_draws=n, seed=3)
    assert (got["better"], got["worse"], got["n_clips"], got["n_draws"]) == ("a", "b", 2, n)
    assert got["share_kept"] == pytest.approx(14 / 24, abs=4 * math.sqrt(0.25 / n))
    # Lower is better: ties still count half, the rest flips.
    (low,) = rank_stability(long_rows({"a": a, "b": b}), "fvd", ["a", "b"], False, n_draws=n, seed=3)
    assert exact_share(a, b, False) == pytest.approx(10 / 24)
    assert low["share_kept"] == pytest.approx(10 / 24, abs=4 * math.sqrt(0.25 / n))
    # The same draws (same seed): a draw kept one way is lost the other way, a tie counts half both ways.
    assert got["share_kept"] + low["share_kept"] == pytest.approx(1.0, abs=1e-12)


def test_one_clip_picks_are_uniform():
    # One clip: a's three samples against b's one value 0.5: kept when a draws 1 or 2, exactly 2/3.
    rows = long_rows({"a": {"c": [0.0, 1.0, 2.0]}, "b": {"c": [0.5]}})
    (got,) = rank_stability(rows, "fvd", ["a", "b"], True, n_draws=30000, seed=0)
    assert got["share_kept"] == pytest.approx(2 / 3, abs=4 * math.sqrt(2 / 9 / 30000))


def planted_rows(gaps: dict, n_clips: int = 60, k: int = 3, noise: float = 1.0, seed: int = 0) -> pd.DataFrame:
    """Systems with mean ``gaps[system]`` over shared clip effects, K seeds of sd ``noise`` per clip."""
    rng = np.random.default_rng(seed)
    clip_effect = rng.normal(0, 2.0, n_clips)
    return long_rows({m: {f"actor_{c % 12 + 1:04d}_happy_action_01_script_{c:03d}":
                          mu + clip_effect[c] + rng.normal(0, noise, k) for c in range(n_clips)}
                      for m, mu in gaps.items()})


def test_planted_large_gap_keeps_order_and_equal_systems_are_a_coin_flip():
    # a is 10 seed-sds better than b: no single seed swaps them. b and c have the same per-clip sample means
    # (c's samples are b's, reversed): their draws are exchangeable, so the order is kept half the time.
    rows = planted_rows({"a": 10.0, "b": 0.0})
    c = rows[rows["model"] == "b"].copy()
    c["model"] = "c"
    c["value"] = c.groupby("clip_id")["value"].transform(lambda v: v.to_numpy()[::-1])
    rows = pd.concat([rows, c], ignore_index=True)
    out = rank_stability(rows, "fvd", ["a", "b", "c"], True, n_draws=4000, seed=1)
    assert [(r["better"], r["worse"], r["n_clips"]) for r in out] == [("a", "b", 60), ("b", "c", 60)]
    assert out[0]["share_kept"] == 1.0
    assert out[1]["share_kept"] == pytest.approx(0.5, abs=4 * math.sqrt(0.25 / 4000))
    # A gap of about one sd of the draw-mean difference: b's samples are a's, shuffled within the clip, less 0.18, so
    # the realised gap is exactly 0.18; one draw's difference of means has variance 2 mean_c(pop. var_c) / 60
    # (independent uniform picks from the same clip values); kept ~ Phi(0.18 / sd) by the normal approximation.
    close = planted_rows({"a": 0.0}, seed=2)
    close_b = close.assign(model="b", value=close["value"] - 0.18)
    close_b["value"] = close_b.groupby("clip_id")["value"].transform(lambda v: v.to_numpy()[[1, 2, 0]])
    (mid,) = rank_stability(pd.concat([close, close_b]), "fvd", ["a", "b"], True, n_draws=4000, seed=0)
    from scipy.stats import norm

    sd = math.sqrt(2 * close.groupby("clip_id")["value"].var(ddof=0).mean() / 60)
    assert 0.6 < norm.cdf(0.18 / sd) < 0.95
    assert mid["share_kept"] == pytest.approx(norm.cdf(0.18 / sd), abs=0.04)


def test_draw_means_use_the_common_clips_only():
    # a has an extra clip with a huge value; over the common clips a is clearly worse than b (higher is better).
    rows = long_rows({"a": {"c1": [0.0, 0.1], "c2": [0.0, 0.2], "c9": [1000.0, 1000.0]},
                      "b": {"c1": [1.0, 1.1], "c2": [1.0, 1.3]}})
    (got,) = rank_stability(rows, "fvd", ["a", "b"], True, n_draws=200)
    assert got["n_clips"] == 2 and got["share_kept"] == 0.0


def test_failed_rows_missing_systems_and_no_common_clip():
    rows = long_rows({"a": {"c1": [2.0, 3.0]}, "b": {"c1": [1.0, 1.5]}, "c": {"c7": [0.0, 1.0]}})
    rows = pd.concat([rows, pd.DataFrame([{"model": "b", "metric": "fvd", "clip_id": "c1", "sample": 2,
                                          "value": 99.0, "status": "failed"}])], ignore_index=True)
    out = rank_stability(rows, "fvd", ["a", "b", "c", "ghost"], True, n_draws=100)
    assert out[0]["share_kept"] == 1.0 and out[0]["n_clips"] == 1  # b's failed 99 is not drawn
    assert out[1]["n_clips"] == 0 and math.isnan(out[1]["share_kept"])
    assert out[2] == {"better": "c", "worse": "ghost", "share_kept": out[2]["share_kept"], "n_draws": 100,
                      "n_clips": 0} and math.isnan(out[2]["share_kept"])
    assert rank_stability(rows, "fvd", ["a"], True) == []


def test_row_order_does_not_matter_and_draws_are_deterministic(monkeypatch):
    rows = planted_rows({"a": 0.3, "b": 0.2, "c": 0.0}, n_clips=40, noise=1.5, seed=4)
    rows = rows[~((rows["model"] == "c") & (rows["sample"] == 2) & (rows["clip_id"].str.endswith("7")))]  # unequal K
    order = ["a", "b", "c"]
    first = rank_stability(rows, "fvd", order, True, n_draws=500, seed=7)
    assert rank_stability(rows, "fvd", order, True, n_draws=500, seed=7) == first
    assert rank_stability(rows.sample(frac=1.0, random_state=5), "fvd", order, True, n_draws=500, seed=7) == first
    # The same picks whatever block of draws they are made in (memory bound) ...
    monkeypatch.setattr(seeds, "_BLOCK_ELEMENTS", 37)
    assert rank_stability(rows, "fvd", order, True, n_draws=500, seed=7) == first
    monkeypatch.undo()
    # ... and a system's picks do not depend on the other systems or the pair.
    alone = rank_stability(rows[rows["model"] != "c"], "fvd", ["a", "b"], True, n_draws=500, seed=7)
    assert alone == first[:1]
    other = rank_stability(rows, "fvd", order, True, n_draws=500, seed=8)
    assert other != first and all(abs(o["share_kept"] - f["share_kept"]) < 0.1 for o, f in zip(other, first))


def test_rank_stability_bad_inputs():
    rows = long_rows({"a": {"c1": [1.0, 2.0]}, "b": {"c1": [0.0]}})
    with pytest.raises(ValueError, match="n_draws"):
        rank_stability(rows, "fvd", ["a", "b"], True, n_draws=0)
    with pytest.raises(ValueError, match="twice"):
        rank_stability(rows, "fvd", ["a", "b", "a"], True)
    mixed = pd.concat([rows, rows.assign(task="vision_driven")], ignore_index=True)
    with pytest.raises(SeedInputError, match="one task's rows"):
        rank_stability(mixed, "fvd", ["a", "b"], True)


def test_stability_words_say_what_the_share_means():
    assert STABILITY_WORDS.count(". ") == 0 and STABILITY_WORDS.endswith(".")
    for words in ("one-seed", "0.5", "1.0", "neighbour"):
        assert words in STABILITY_WORDS


def test_rank_stability_figure(tmp_path):
    from hug_vis_dataset.reporting.figures import plot_rank_stability, rank_stability_figure

    rows = planted_rows({"a": 1.0, "b": 0.0, "c": -0.05}, n_clips=24)
    stabilities = {"psnr": rank_stability(rows, "fvd", ["a", "b", "c"], True, n_draws=200),
                   "fvd": [{"better": "x", "worse": "y", "share_kept": math.nan, "n_draws": 200, "n_clips": 0}]}
    fig = rank_stability_figure(stabilities, title="seeds")
    top, bottom = fig.axes[:2]
    assert [t.get_text() for t in top.get_yticklabels()] == ["a > b", "b > c"]
    assert [p.get_width() for p in top.patches] == pytest.approx([r["share_kept"] for r in stabilities["psnr"]])
    assert top.get_title(loc="left") == "PSNR"  # the metric's label, not its key
    assert sorted(round(line.get_xdata()[0], 2) for line in top.get_lines()) == [0.5, 0.95]
    assert [t.get_text() for t in bottom.texts] == ["n/a"] and bottom.patches[0].get_width() == 0.0
    assert any(STABILITY_WORDS[:30] in t.get_text().replace("\n", " ") for t in fig.texts)
    paths = plot_rank_stability(stabilities, tmp_path / "fig_stability")
    assert [p.suffix for p in paths] == [".png", ".svg"] and all(p.stat().st_size > 0 for p in paths)
    with pytest.raises(ValueError, match="no rank stabilities"):
        rank_stability_figure({})

"""The statistics engine against the generic path it replaces, on several inputs and edge cases.

Every interval of the engine (hug_vis_dataset.statistics) is computed from per-actor sums with the bootstrap's
replicates as weight vectors over actors; the generic path (statistics.generic.bootstrap_ci: the statistic
re-evaluated on each rebuilt replicate frame, the toolkit's path before the engine) is kept as the reference. Each
test computes both on the same rows and requires the same intervals to float rounding; the sign-flip counts are held
to a dense matrix product of every pattern; the verdicts to the paired test on the pandas rows; the ranking to its
rule worked by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.scoring.aggregate import counted_rows, rvm_means, task_table
from hug_vis_dataset.statistics.basics import cluster_draws
from hug_vis_dataset.statistics.draws import draw_weights, percentile_intervals
from hug_vis_dataset.statistics.generic import bootstrap_ci
from hug_vis_dataset.statistics.intervals import UnsupportedStatistic, mean_intervals, rvm_intervals, table_intervals
from hug_vis_dataset.statistics.sums import ClipValues, FrameSums

REL = 1e-10


def clip(actor: int, script: int, emotion: str = "happy") -> str:
    return f"actor_{actor:04d}_{emotion}_action_01_script_{script:03d}"


def result_rows(models: dict, actors, scripts=(1, 2, 3), metrics=("psnr", "ssim"), seed=0, task="vision_driven"):
    """Rows of several models: value = model offset + actor effect + noise (raw units)."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, offset in models.items():
        for a in actors:
            for s in scripts:
                for m in metrics:
                    base = 20.0 if m == "psnr" else 0.6
                    rows.append({"model": model, "task": task, "clip_id": clip(a, s), "actor_id": a, "metric": m,
                                 "value": base + offset + 0.5 * a + rng.normal(), "status": "ok", "error": ""})
    return pd.DataFrame(rows)


def assert_same(engine, generic, keys=None):
    keys = keys if keys is not None else generic.keys()
    for key in keys:
        a, b = engine[key], generic[key]
        assert a.n_clusters == b.n_clusters and a.n_valid == b.n_valid, key
        for x, y in ((a.estimate, b.estimate), (a.low, b.low), (a.high, b.high)):
            assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, rel=REL, abs=1e-12), (key, x, y)


# ----------------------------------------------------------------------------- draws
@pytest.mark.parametrize("n_clusters,n_boot,seed", [(1, 5, 0), (2, 50, 1), (3, 40, 7), (7, 100, 0), (30, 20, 3)])
def test_weights_count_the_generic_paths_draws(n_clusters, n_boot, seed):
    counted = np.stack([np.bincount(p, minlength=n_clusters) for p in cluster_draws(n_clusters, n_boot, seed)])
    weights = draw_weights(n_clusters, n_boot, seed)
    assert (weights == counted).all() and (weights.sum(axis=1) == n_clusters).all()
    assert not weights.flags.writeable  # shared between callers: nobody may change it


def test_percentiles_of_columns_with_missing_replicates_are_numpys():
    reps = np.array([[1.0, np.nan, 3.0], [2.0, 4.0, np.inf], [3.0, 6.0, 5.0], [9.0, 7.0, np.nan]])
    cis = percentile_intervals([2.0, 5.0, 4.0], reps, 0.9, 4)
    for k, ci in enumerate(cis):
        finite = reps[np.isfinite(reps[:, k]), k]
        assert (ci.low, ci.high) == tuple(np.percentile(finite, [5, 95])) and ci.n_valid == len(finite)
    assert math.isnan(percentile_intervals([1.0], np.full((3, 1), np.nan), 0.9, 2)[0].low)


# ----------------------------------------------------------------------------- task tables
def _generic_table(rows, metrics, n_boot, seed=0):
    ok = rows[rows["status"] == "ok"]
    return bootstrap_ci(ok, lambda f: task_table(f, protocol="clip", metrics=metrics).drop(
        columns=["n_ok", "n_failed", "n_missing"]), n_boot=n_boot, seed=seed)


@pytest.mark.parametrize("actors", [(1, 2), (1, 2, 3, 5, 8, 9, 11)])
def test_clip_table_intervals_equal_the_generic_path(actors):
    rows = result_rows({"a": 1.0, "b": 0.0, "c | Text": -1.0}, actors)
    engine = table_intervals(rows, ["psnr", "ssim"], n_boot=150, seed=3)
    assert_same(engine, _generic_table(rows, ["psnr", "ssim"], 150, seed=3))


def test_a_system_without_some_actors_and_failed_clips_follow_the_counted_rule():
    rows = result_rows({"a": 1.0, "b": 0.0}, range(1, 7))
    rows = rows[~((rows["model"] == "b") & (rows["actor_id"] >= 5))]  # b has no clip of actors 5 and 6
    failed = (rows["model"] == "a") & (rows["clip_id"] == clip(2, 1)) & (rows["metric"] == "ssim")
    rows.loc[failed, ["status", "value", "error"]] = ["failed", np.nan, "ssim window larger than the frame"]
    counted = counted_rows(rows)  # the clip's psnr leaves the means too: one rule for partial failures
    engine = table_intervals(counted, ["psnr", "ssim"], n_boot=200)
    assert_same(engine, _generic_table(counted, ["psnr", "ssim"], 200))
    table = task_table(rows, metrics=["psnr"])
    assert engine[("a", "psnr")].estimate == pytest.approx(table.loc["a", "psnr"])
    assert engine[("b", "psnr")].n_clusters == 6  # every actor of the task is a cluster, as the generic path draws


def test_one_actor_gives_an_interval_of_one_cluster_never_a_fake_width():
    rows = result_rows({"a": 1.0}, (4,))
    ci = table_intervals(rows, ["psnr"], n_boot=20)[("a", "psnr")]
    assert ci.n_clusters == 1 and ci.low == ci.high == pytest.approx(ci.estimate)


def test_ratio_metric_interval_is_the_corpus_ratios():
    rng = np.random.default_rng(5)
    rows = []
    for model in ("m", "n"):
        for a in range(1, 7):
            for s in (1, 2):
                chars, edits = float(rng.integers(5, 20)), float(rng.integers(0, 4))
                for metric, value in (("cer", edits / chars), ("cer_edits", edits), ("cer_ref_chars", chars)):
                    rows.append({"model": model, "task": "voice_cloning", "clip_id": clip(a, s), "actor_id": a,
                                 "metric": metric, "value": value, "status": "ok", "error": ""})
    rows = pd.DataFrame(rows)
    engine = table_intervals(rows, ["cer"], n_boot=300, seed=1)
    assert_same(engine, _generic_table(rows, ["cer"], 300, seed=1))
    m = rows[rows["model"] == "m"]
    by_hand = m.loc[m.metric == "cer_edits", "value"].sum() / m.loc[m.metric == "cer_ref_chars", "value"].sum()
    assert engine[("m", "cer")].estimate == pytest.approx(100 * by_hand)  # paper units: %


def test_a_statistic_without_sums_is_refused_by_name():
    from hug_vis_dataset import catalog

    rows = result_rows({"a": 1.0}, (1, 2), metrics=("psnr",))
    spec = catalog.spec("psnr")
    original = spec.protocol
    object.__setattr__(spec, "protocol", "median")
    try:
        with pytest.raises(UnsupportedStatistic, match="psnr's protocol 'median'"):
            table_intervals(rows, ["psnr"], n_boot=10)
    finally:
        object.__setattr__(spec, "protocol", original)


# ----------------------------------------------------------------------------- rvm
def _frames(seed=0, actors=range(1, 6)):
    rng = np.random.default_rng(seed)
    frames = []
    for model, scale in (("good", 0.5), ("poor", 1.5)):
        for a in actors:
            for s, length in ((1, 6), (2, 3 + a % 4)):
                for metric, first in (("mad", 0), ("dtssd", 1)):
                    for f in range(first, length):
                        frames.append({"model": model, "clip_id": clip(a, s), "metric": metric, "frame": f,
                                       "value": float(rng.gamma(2.0, scale * a))})
    return pd.DataFrame(frames)


def test_rvm_values_and_intervals_equal_the_generic_path_and_rvms_definition():
    from hug_vis_dataset.metrics.matting import aggregate

    frames = _frames()
    sums = FrameSums.from_frames(frames)
    for (model, metric), value in sums.means().items():
        part = frames[(frames.model == model) & (frames.metric == metric)]
        vectors = [g.sort_values("frame")["value"].to_numpy() for _, g in part.groupby("clip_id")]
        assert value == pytest.approx(aggregate(vectors, "rvm", temporal=metric == "dtssd"), rel=1e-12)
    engine = rvm_intervals(sums, n_boot=120, seed=2)
    generic = bootstrap_ci(frames, lambda f: rvm_means(f), n_boot=120, seed=2)
    assert_same({k: engine[k] for k in engine}, {k: generic[k] for k in engine})


def test_frame_sums_do_not_depend_on_row_order_to_the_last_bit():
    frames = _frames(seed=3)
    a = FrameSums.from_frames(frames)
    b = FrameSums.from_frames(frames.sample(frac=1.0, random_state=4))
    assert a.keys() == b.keys()
    for key in a.keys():
        for x, y in zip(a.parts[key], b.parts[key]):
            assert np.array_equal(x, y)


# ----------------------------------------------------------------------------- MOS, rank correlations, strengths
def test_mos_intervals_equal_the_generic_path():
    from hug_vis_dataset.studies.mos import clip_means, mos_intervals

    rng = np.random.default_rng(2)
    ratings = pd.DataFrame([{"rater": f"r{r}", "clip_id": clip(a, s), "model": m, "criterion": c,
                             "score": int(rng.integers(1, 6))}
                            for r in range(3) for a in range(1, 8) for s in (1, 2) for m in ("x", "y")
                            for c in ("id_similarity", "lip_sync")])
    engine = mos_intervals(ratings, n_boot=200, seed=1)
    generic = bootstrap_ci(clip_means(ratings), lambda f: f.groupby(["model", "criterion"])["score"].mean(),
                           cluster="actor_id", n_boot=200, seed=1)
    assert_same(engine, generic)
    keys = [("x", "id_similarity"), ("y", "lip_sync")]
    by_key = mean_intervals(pd.DataFrame(keys * 2, columns=["model", "criterion"]), [1, 1, 2, 2], [1.0, 2.0, 3.0, 4.0],
                            n_boot=50)
    assert by_key[("x", "id_similarity")].estimate == 2.0 and by_key[("y", "lip_sync")].estimate == 3.0


def test_rank_correlation_intervals_equal_the_generic_path():
    from hug_vis_dataset.metrics.mos_agreement import metric_mos_agreement, metric_mos_agreement_rows

    rng = np.random.default_rng(9)
    systems = ["s1", "s2", "s3", "s4", "s5"]
    metric = pd.DataFrame([{"model": s, "clip_id": clip(a, c), "metric": "psnr", "value": 20 + i + rng.normal() * 2,
                            "status": "ok"} for i, s in enumerate(systems) for a in range(1, 7) for c in (1, 2)])
    mos = pd.DataFrame([{"model": s, "clip_id": clip(a, c), "criterion": "motion_naturalness",
                         "score": float(np.clip(round(1 + i * 0.8 + rng.normal()), 1, 5))}
                        for i, s in enumerate(systems) for a in range(1, 7) for c in (1, 2)])
    out = metric_mos_agreement_rows(metric, mos, n_boot=150, seed=4)

    def statistic(frame):
        means = frame.groupby(["kind", "name", "model"])["value"].mean()
        t = metric_mos_agreement(means.xs("metric").unstack("name"), means.xs("mos").unstack("name"))
        return {(r.metric, r.criterion, s): getattr(r, s) for r in t.itertuples() for s in ("spearman", "kendall")}

    combined = pd.concat([metric.assign(kind="metric", name=metric["metric"]),
                          mos.assign(kind="mos", name=mos["criterion"], value=mos["score"])], ignore_index=True)
    generic = bootstrap_ci(combined[["model", "clip_id", "kind", "name", "value"]], statistic, n_boot=150, seed=4)
    for stat in ("spearman", "kendall"):
        ci = generic[("psnr", "motion_naturalness", stat)]
        assert out.iloc[0][f"{stat}_low"] == pytest.approx(ci.low, abs=1e-12)
        assert out.iloc[0][f"{stat}_high"] == pytest.approx(ci.high, abs=1e-12)


def test_bradley_terry_intervals_equal_the_generic_path():
    from hug_vis_dataset.studies.bradley_terry import bradley_terry, strengths_table

    rng = np.random.default_rng(1)
    names = ["a", "b", "c", "d"]
    answers = pd.DataFrame([{"rater": "r", "task": "voice_cloning", "clip_id": clip(a, k % 9 + 1),
                             "system_a": x, "system_b": y, "criterion": "id_similarity",
                             "outcome": float(rng.choice([0.0, 0.5, 1.0]))}
                            for a in range(1, 8) for k in range(20) for x, y in [rng.choice(names, 2, replace=False)]])
    table = strengths_table(answers, n_boot=200).set_index("system")
    generic = bootstrap_ci(answers, lambda s: pd.Series(bradley_terry(zip(s.system_a, s.system_b, s.outcome), 0.5,
                                                                      names)), n_boot=200)
    for name in names:
        assert table.loc[name, "ci_low"] == pytest.approx(generic[name].low, abs=1e-9)
        assert table.loc[name, "ci_high"] == pytest.approx(generic[name].high, abs=1e-9)


# ----------------------------------------------------------------------------- sign flips and verdicts
def _dense_counts(sums, signs):
    null = np.einsum("ra,bpa->brp", signs, sums)
    observed = sums.sum(axis=2)
    tol = 100 * np.finfo(float).eps * np.abs(sums).sum(axis=2)
    above = (null > (observed + tol)[:, None, :]).sum(axis=1)
    below = (null < (observed - tol)[:, None, :]).sum(axis=1)
    return above, below


@pytest.mark.parametrize("n_actors,kind", [(3, "ties"), (9, "ties"), (17, "normal"), (30, "normal"), (30, "one-sided"),
                                           (30, "zeros")])
def test_sign_flip_counts_equal_every_pattern_summed(n_actors, kind):
    from hug_vis_dataset.statistics.paired import pair_p_values_batch, sign_patterns

    rng = np.random.default_rng(n_actors)
    sums = (rng.integers(-2, 3, (40, 6, n_actors)).astype(float) if kind == "ties"
            else rng.standard_normal((40, 6, n_actors)))
    if kind in ("one-sided", "zeros"):
        sums = np.abs(sums) * np.where(rng.random((40, 6, 1)) < 0.5, -1.0, 1.0)
    if kind == "zeros":
        sums[:, :, :4] = 0.0  # actors without a common clip
    sums[0, 0] = np.nan  # a pair without common clips
    signs, exact = sign_patterns(n_actors, 1000, 0)
    one, two = pair_p_values_batch(sums, signs, exact)
    clean = np.nan_to_num(sums)
    above, below = _dense_counts(clean, signs)
    n = len(signs)
    equal = n - above - below
    want_one = (above + 0.5 * equal) / n
    adjust = 0 if exact else 1
    want_two = np.minimum(1, 2 * np.minimum((below + equal + adjust) / (n + adjust), (above + equal + adjust) / (n + adjust)))
    assert np.isnan(one[0, 0]) and np.isnan(two[0, 0])
    one[0, 0] = two[0, 0] = want_one[0, 0] = want_two[0, 0] = 0.0
    assert np.array_equal(one, want_one) and np.array_equal(two, want_two)


def test_verdicts_equal_the_paired_test_on_the_rows_and_ignore_row_order():
    from hug_vis_dataset.metrics.significance import _rows_frame
    from hug_vis_dataset.statistics.paired import paired_test
    from hug_vis_dataset.statistics.verdicts import compare

    rows = result_rows({"a": 2.0, "b": 0.0, "c": 0.05}, range(1, 10), metrics=("psnr",), seed=4)
    rows = rows[~((rows["model"] == "c") & (rows["clip_id"] == clip(3, 2)))]  # c misses a clip
    for x, y in (("a", "b"), ("b", "c")):
        v = compare(rows, "vision_driven", "psnr", x, y)
        frame = _rows_frame(rows[rows["model"].isin([x, y])])
        a, b = (frame[frame.model == m].set_index("clip_id") for m in (x, y))
        common = sorted(set(a.index) & set(b.index))
        test = paired_test(a.loc[common, "value"] - b.loc[common, "value"], a.loc[common, "actor_id"].tolist(),
                           9999, 2000, seed=0)
        assert v.p_value == test.p_value and v.n_clips == test.n_clips == len(common)
        assert v.difference == pytest.approx(test.mean_difference) and v.ci_low == pytest.approx(test.ci_low)
        shuffled = compare(rows.sample(frac=1.0, random_state=1), "vision_driven", "psnr", x, y)
        assert (shuffled.word, shuffled.p_value, shuffled.ci_high) == (v.word, v.p_value, v.ci_high)
    assert compare(rows, "vision_driven", "psnr", "a", "b").word == "separable"
    values = ClipValues.from_rows(rows[rows.metric == "psnr"])
    assert values.systems == ("a", "b", "c") and np.isnan(values.values).sum() == 1


# ----------------------------------------------------------------------------- ranking and rules
def test_marks_are_drawn_only_where_the_verdicts_separate_the_rows():
    from hug_vis_dataset.statistics.ranking import Entry, rank_column

    six = result_rows({"a": 3.0, "b": 0.0, "c": 0.02}, range(1, 8), metrics=("psnr",))
    means = six.groupby("model")["value"].mean().round(2)
    entries = [Entry(m, "synthetic", float(means[m]), m) for m in ("a", "b", "c")] + [
        Entry("Paper X", "synthetic", 99.0, None), Entry("baseline", "synthetic", 120.0, "baseline", ranked=False)]
    out = rank_column(entries, "vision_driven", "psnr", True, six)
    # The paper row (no per-clip rows) keeps its mark; a is separable from the next stored row; b and c are not.
    assert out["Paper X"].mark == "best" and out["a"].mark == "second" and out["a"].verdict.word == "separable"
    assert out["baseline"].mark is None and out["baseline"].verdict is None
    two = result_rows({"a": 3.0, "b": 0.0}, (1, 2), metrics=("psnr",))
    means = two.groupby("model")["value"].mean().round(2)
    out = rank_column([Entry(m, "s", float(means[m]), m) for m in ("a", "b")], "vision_driven", "psnr", True, two)
    assert out["a"].mark is None and out["a"].verdict.word == "cannot tell" and out["a"].verdict.mark == "?"


def test_the_rules_words_and_marks():
    from hug_vis_dataset.statistics import rules

    assert [rules.distinct_resamples(a) for a in (2, 5, 6)] == [3, 126, 462]
    assert rules.interval_mark(5, 1.0, 2.0) == "?" and rules.interval_mark(6, 1.0, 2.0) == ""
    assert rules.interval_mark(30, 2.0, 2.0) == "?" and rules.interval_caveat(30, 2.0, 2.0) == rules.COLLAPSED
    assert "smallest sign-flip p is 0.0625" in rules.small_sample_words(5)
    assert rules.comparison_set("submitted", True, "Text") == "benchmark (partial) | Text"
    assert rules.comparison_set("synthetic") != rules.comparison_set("synthetic", True)


def test_partial_runs_are_told_by_their_missing_rows_and_pooled_analyses_leave_them_out():
    from hug_vis_dataset.statistics.evidence import Comparisons

    rows = result_rows({"full": 0.0, "other": 1.0, "part": 2.0}, (1, 2), metrics=("psnr",))
    missing = (rows["model"] == "part") & (rows["actor_id"] == 2)
    rows.loc[missing, ["status", "value", "error"]] = ["failed", np.nan, "missing prediction: no file named by this clip"]
    c = Comparisons.from_rows(rows, {("vision_driven", "full"): "synthetic", ("vision_driven", "other"): "synthetic",
                                     ("vision_driven", "part"): "synthetic"})
    assert c.sets("vision_driven") == {"synthetic": ["full", "other"], "synthetic (partial)": ["part"]}
    assert c.pooled("vision_driven") == (["full", "other"], {"part": "partial run: 3 clip(s) of its grid missing"})
    table = task_table(rows, metrics=["psnr"])
    assert table.loc["part", ["n_ok", "n_failed", "n_missing"]].tolist() == [3, 0, 3]

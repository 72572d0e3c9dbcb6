"""Metrics and human judgment jointly (hug_vis_dataset.metrics.human_agreement, metrics.p1401,
studies.human_metric) against independent references: the definitions implemented directly with every
sign pattern enumerated by itertools, pce.py's p-value definition, scipy, a brute-force threshold search, a
second constrained solver, worked examples, and the simulated raters with planted systems."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from hug_vis_dataset.metrics import human_agreement as ha
from hug_vis_dataset.metrics.p1401 import monotonic_cubic, p1401, vote_ci95
from hug_vis_dataset.metrics.significance import sign_flip_p_value, sign_patterns
from hug_vis_dataset.studies.human_metric import human_metric_tables


# ----------------------------------------------------------------------------- direct definitions
def direct_p(diffs: np.ndarray, actors: np.ndarray) -> dict:
    """Every sign pattern of the actors enumerated (itertools), the mean difference over clips recomputed
    per pattern: pce.py's p (T* >= T), the mid-p and the two-sided p, from the definitions."""
    keys = sorted(set(actors.tolist()))
    observed = diffs.mean()
    null = []
    for signs in itertools.product((1.0, -1.0), repeat=len(keys)):
        flip = dict(zip(keys, signs))
        null.append(np.mean([flip[a] * d for a, d in zip(actors.tolist(), diffs)]))
    null = np.array(null)
    tol = 1e-12
    ge, le = (null >= observed - tol).mean(), (null <= observed + tol).mean()
    eq = (np.abs(null - observed) <= tol).mean()
    return {"pce": ge, "mid": (null > observed + tol).mean() + eq / 2, "two": min(1.0, 2 * min(ge, le))}


def per_clip_pairs(values: np.ndarray, actors: np.ndarray):
    """(pair sums (P, A) for pair_p_values, per-pair clip differences) of complete (S, C) values."""
    n_actors = int(actors.max()) + 1
    sums, diffs = [], []
    for i, j in ha.pair_index(values.shape[0]):
        d = values[i] - values[j]
        diffs.append(d)
        sums.append(np.bincount(actors, weights=d, minlength=n_actors))
    return np.array(sums), diffs


def test_pair_p_values_equal_the_definition_with_every_sign_pattern():
    rng = np.random.default_rng(0)
    for n_actors, clips in ((3, 2), (4, 3), (5, 1)):
        actors = np.repeat(np.arange(n_actors), clips)
        values = rng.normal(size=(4, actors.size))
        sums, diffs = per_clip_pairs(values, actors)
        one, two = ha.pair_p_values(sums, *sign_patterns(n_actors))
        for k, d in enumerate(diffs):
            ref = direct_p(d, actors)
            assert one[k] == pytest.approx(ref["mid"], abs=1e-15)
            assert two[k] == pytest.approx(ref["two"], abs=1e-15)
    # By hand: actor sums 1, 2, 0.5 (T = 3.5); of the 8 patterns none exceeds T and one equals it.
    one, two = ha.pair_p_values(np.array([[1.0, 2.0, 0.5]]), *sign_patterns(3))
    assert (one[0], two[0]) == (0.5 / 8, 2 / 8)
    # Sums 3, -1, 1 (T = 3): the 8 patterns give 3, 1, 5, 3, -3, -5, -1, -3; above T one (5), equal to it
    # two (3, 3): (1 + 2 / 2) / 8.
    one, _ = ha.pair_p_values(np.array([[3.0, -1.0, 1.0]]), *sign_patterns(3))
    assert one[0] == 2 / 8


def test_two_sided_p_is_the_significance_modules_sign_flip_test():
    rng = np.random.default_rng(1)
    for n_actors, n_resamples in ((5, 9999), (14, 999)):  # exact, then drawn patterns (same seed, same draws)
        actors = np.repeat(np.arange(n_actors), 3)
        values = rng.normal(size=(3, actors.size)) + np.array([[0.4], [0.0], [-0.2]])
        sums, diffs = per_clip_pairs(values, actors)
        signs, exact = sign_patterns(n_actors, n_resamples, seed=3)
        assert exact == (n_actors == 5)
        _, two = ha.pair_p_values(sums, signs, exact)
        for k, d in enumerate(diffs):
            assert two[k] == pytest.approx(sign_flip_p_value(d, actors, n_resamples, seed=3)[0], abs=1e-12)


def test_spa_is_pce_pys_definition_and_its_one_deviation_keeps_it_symmetric():
    rng = np.random.default_rng(2)
    actors = np.repeat(np.arange(4), 2)
    human, metric = rng.normal(size=(5, 8)), rng.normal(size=(5, 8))
    sh, dh = per_clip_pairs(human, actors)
    sm, dm = per_clip_pairs(metric, actors)
    signs, exact = sign_patterns(4)
    spa = ha.soft_pairwise_accuracy(ha.pair_p_values(sh, signs, exact)[0], ha.pair_p_values(sm, signs, exact)[0])
    # pce.py: p_ij = P(T* >= T) for i < j, SPA = 1 - mean |p^h - p^m| (continuous data: both sides put 2^-A on T).
    reference = 1 - np.mean([abs(direct_p(a, actors)["pce"] - direct_p(b, actors)["pce"]) for a, b in zip(dh, dm)])
    assert spa == pytest.approx(reference, abs=1e-12)
    # Discrete ratings tie: pce.py's SPA then depends on which system of a pair is first, ours does not.
    h = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])  # actor sums (1, 1, 0, 0) after pairing
    m = np.array([[0.5, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    acts = np.arange(4)
    forward = [direct_p(h[0] - h[1], acts), direct_p(m[0] - m[1], acts)]
    backward = [direct_p(h[1] - h[0], acts), direct_p(m[1] - m[0], acts)]
    assert abs(forward[0]["pce"] - forward[1]["pce"]) != abs(backward[0]["pce"] - backward[1]["pce"])
    ours = [ha.pair_p_values(per_clip_pairs(x, acts)[0], *sign_patterns(4))[0][0] for x in (h, m)]
    ours_rev = [ha.pair_p_values(per_clip_pairs(x[::-1], acts)[0], *sign_patterns(4))[0][0] for x in (h, m)]
    assert abs(ours[0] - ours[1]) == pytest.approx(abs(ours_rev[0] - ours_rev[1]), abs=1e-15)
    assert ours[0] == pytest.approx(forward[0]["mid"]) and ours_rev[0] == pytest.approx(backward[0]["mid"])


def test_drawn_patterns_are_seeded_and_close_to_the_exact_p_values():
    rng = np.random.default_rng(4)
    actors = np.repeat(np.arange(12), 2)
    values = rng.normal(size=(3, 24)) + np.array([[0.3], [0.0], [0.1]])
    sums, _ = per_clip_pairs(values, actors)
    exact = ha.pair_p_values(sums, *sign_patterns(12, 4096))[0]
    signs, is_exact = sign_patterns(12, 2000, seed=7)
    assert not is_exact and signs.shape == (2000, 12)
    drawn = ha.pair_p_values(sums, signs, False)[0]
    assert np.array_equal(drawn, ha.pair_p_values(sums, *sign_patterns(12, 2000, seed=7))[0])
    assert np.all(np.abs(drawn - exact) <= 4 * np.sqrt(exact * (1 - exact) / 2000) + 1e-3)


# ----------------------------------------------------------------------------- acc_eq and tau-b
def brute_acc_eq(human, metric):
    """Every candidate threshold (0, each gap, midpoints, beyond the largest) tried with loops."""
    n = len(human)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    gaps = sorted({abs(metric[i] - metric[j]) for i, j in pairs})
    candidates = sorted({0.0, *gaps, *[(a + b) / 2 for a, b in zip(gaps, gaps[1:])], gaps[-1] + 1.0})
    best, best_eps = -1.0, None
    for eps in candidates:
        good = 0
        for i, j in pairs:
            dh, dm = human[i] - human[j], metric[i] - metric[j]
            tied_m = abs(dm) <= eps
            good += (dh == 0 and tied_m) or (dh != 0 and not tied_m and (dh > 0) == (dm > 0))
        if good / len(pairs) > best + 1e-15:
            best, best_eps = good / len(pairs), eps
    return best, best_eps


@pytest.mark.parametrize("seed", range(6))
def test_acc_eq_matches_a_brute_force_threshold_search(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 9))
    human = np.round(rng.uniform(1, 5, n) * 2) / 2  # half points: people tie pairs
    metric = np.round(human + rng.normal(0, 0.6, n), 1)  # tenths: the metric ties some too
    acc, eps = ha.tie_calibrated_accuracy(human, metric)
    ref_acc, ref_eps = brute_acc_eq(human.tolist(), metric.tolist())
    assert acc == pytest.approx(ref_acc, abs=1e-12)
    # the smallest maximiser: any threshold between it and the next gap gives the same value
    assert ha.tie_calibrated_accuracy(human, metric)[0] == ref_acc
    assert eps <= ref_eps + 1e-12
    assert brute_acc_eq_at(human, metric, eps) == pytest.approx(ref_acc, abs=1e-12)


def brute_acc_eq_at(human, metric, eps):
    pairs = list(itertools.combinations(range(len(human)), 2))
    good = sum((human[i] == human[j] and abs(metric[i] - metric[j]) <= eps)
               or (human[i] != human[j] and abs(metric[i] - metric[j]) > eps
                   and (human[i] > human[j]) == (metric[i] > metric[j])) for i, j in pairs)
    return good / len(pairs)


def test_acc_eq_edge_cases_and_tau_b_against_scipy():
    assert ha.tie_calibrated_accuracy([2.0, 2.0, 2.0], [1.0, 3.0, 2.0]) == (1.0, 2.0)  # people tie all: tie all
    assert ha.tie_calibrated_accuracy([1.0, 2.0, 3.0], [5.0, 5.0, 5.0]) == (0.0, 0.0)  # metric ties all
    assert ha.tie_calibrated_accuracy([1.0, 2.0], [1.0, 2.0]) == (1.0, 0.0)
    assert all(math.isnan(v) for v in ha.tie_calibrated_accuracy([1.0], [2.0]))
    rng = np.random.default_rng(9)
    for _ in range(5):
        h, m = np.round(rng.uniform(0, 3, 7)), rng.normal(size=7)
        assert ha.kendall_tau_b(h, m) == pytest.approx(kendalltau(h, m).statistic, abs=1e-12)


# ----------------------------------------------------------------------------- PERM-BOTH
def test_perm_both_equals_its_definition_with_every_swap_enumerated():
    rng = np.random.default_rng(5)
    n_actors = 3
    actors = np.repeat(np.arange(n_actors), 2)
    people = rng.normal(size=(3, 6)) + np.array([[1.0], [0.0], [-1.0]])
    a_vals = people + rng.normal(0, 1.5, size=(3, 6))
    b_vals = 10 * people + rng.normal(0, 2.0, size=(3, 6)) + 50  # another scale: z-scoring makes it comparable
    judges = [ha.judge_from_values(n, v, actors, n_actors) for n, v in (("h", people), ("a", a_vals), ("b", b_vals))]
    signs, exact = sign_patterns(n_actors)
    got = ha.perm_both(judges[0], judges[1], judges[2], signs, exact, n_actors, n_perm=1000)

    def spa_direct(metric):
        return 1 - np.mean([abs(direct_p(people[i] - people[j], actors)["mid"]
                                - direct_p(metric[i] - metric[j], actors)["mid"])
                            for i, j in ha.pair_index(3)])

    za, zb = (a_vals - a_vals.mean()) / a_vals.std(), (b_vals - b_vals.mean()) / b_vals.std()
    delta = spa_direct(zb) - spa_direct(za)
    count = 0
    for swap in itertools.product((0, 1), repeat=n_actors):
        w = np.array(swap)[actors]  # per clip: 1 where its actor takes the other metric
        h1, h2 = np.where(w, zb, za), np.where(w, za, zb)
        count += spa_direct(h2) - spa_direct(h1) >= delta - 1e-12
    assert got["exact"] and got["n_permutations"] == 8
    assert got["delta"] == pytest.approx(delta, abs=1e-12)
    assert got["p_value"] == pytest.approx(count / 8, abs=1e-15)


def test_perm_both_finds_the_metric_that_agrees_better():
    rng = np.random.default_rng(6)
    n_actors = 14
    actors = np.repeat(np.arange(n_actors), 2)
    quality = np.linspace(1, -1, 6)[:, None]
    actor_noise = rng.normal(0, 0.5, (6, n_actors))[:, actors]
    people = quality + actor_noise + rng.normal(0, 0.3, (6, 28))
    good = quality + actor_noise + rng.normal(0, 0.3, (6, 28))  # sees what people see
    noise = rng.normal(0, 1.0, (6, 28))  # sees nothing
    judges = [ha.judge_from_values(n, v, actors, n_actors) for n, v in (("h", people), ("good", good), ("noise", noise))]
    result = ha.joint_agreement(judges[0], judges[1:], n_actors, n_boot=50, n_perm=200, n_resamples=500)
    better = result.comparisons[0]  # metric_b = noise vs metric_a = good: noise is not better
    assert better["metric_a"] == "good" and better["delta"] < 0 and better["p_value"] > 0.5
    flipped = ha.perm_both(judges[0], judges[2], judges[1], *sign_patterns(n_actors, 500), n_actors, n_perm=200)
    assert flipped["delta"] > 0 and flipped["p_value"] < 0.05 and not flipped["exact"]


# ----------------------------------------------------------------------------- P.1401
def test_p1401_on_a_worked_example():
    # y = 3 + 0.25 x + r with r the 4th discrete orthogonal polynomial on 7 points (orthogonal to every
    # cubic), so the least-squares cubic is the line and the errors are exactly r.
    x = np.arange(-3.0, 4.0)
    r = 0.1 * np.array([3, -7, 1, 6, 1, -7, 3])
    fit = p1401(x, 3 + 0.25 * x + r, np.full(7, 0.5))
    assert np.allclose(fit.coefficients, [3.0, 0.25, 0.0, 0.0], atol=1e-12) and not fit.constrained
    assert fit.rmse == pytest.approx(math.sqrt(1.54 / 3), abs=1e-12)      # sum r^2 = 1.54, N - 4 = 3
    assert fit.rmse_star == pytest.approx(math.sqrt(0.09 / 3), abs=1e-12)  # excess 0.2, 0.1, 0.2 over ci 0.5
    assert fit.outlier_ratio == pytest.approx(3 / 7)                         # |r| = 0.7, 0.6, 0.7 above 0.5
    # The per-item interval: votes 4, 5, 3 (s = 1, M = 3, t_0.975(2) = 4.302653 from the table).
    assert vote_ci95([4, 5, 3]) == pytest.approx(4.302653 / math.sqrt(3), abs=1e-6)
    assert vote_ci95([2, 2]) == 0.0 and math.isnan(vote_ci95([3]))
    assert math.isnan(p1401([1, 2, 3, 4], [1, 2, 3, 3]).rmse)  # N - 4 = 0 degrees of freedom
    assert math.isnan(p1401([1, 2, 3, 4, 5], [1, 2, 3, 3, 4]).rmse_star)  # no intervals given


def test_monotonic_cubic_against_polyfit_and_an_exact_reparameterisation():
    """Unconstrained case: numpy.polyfit. Constrained case: a second, exact formulation. A quadratic is >= 0
    on [-1, 1] iff it is (u0 + u1 t)^2 + w^2 + s^2 (1 - t^2) (Lukacs), so the non-decreasing cubics are
    exactly a + integral of that: an unconstrained least-squares problem in (a, u0, u1, w, s), solved from 10
    starts by scipy.optimize.least_squares."""
    from scipy.optimize import least_squares

    rng = np.random.default_rng(8)
    x = np.sort(rng.uniform(1, 5, 25))
    y = 1 + 0.5 * x + rng.normal(0, 0.05, 25)  # monotone: the plain least-squares cubic
    coef, predicted, constrained = monotonic_cubic(x, y)
    assert not constrained
    assert np.allclose(coef, np.polyfit(x, y, 3)[::-1], atol=1e-8)
    t = (x - (x.max() + x.min()) / 2) / (np.ptp(x) / 2)

    def monotone(z):
        a, u0, u1, w, s = z
        return a + (u0 * u0 + w * w + s * s) * t + u0 * u1 * t * t + (u1 * u1 - s * s) / 3 * t ** 3

    for y2 in ((x - 3.0) ** 2 + 0.2 * x, np.sin(2 * x) + 0.1 * x, -x + rng.normal(0, 0.1, 25)):
        coef2, pred2, constrained2 = monotonic_cubic(x, y2)
        assert constrained2
        grid = np.linspace(x.min(), x.max(), 20001)
        assert (coef2[1] + 2 * coef2[2] * grid + 3 * coef2[3] * grid ** 2).min() >= -1e-9
        assert np.allclose(np.polyval(coef2[::-1], x), pred2, atol=1e-9)  # the coefficients are on x's scale
        sse = float(((pred2 - y2) ** 2).sum())
        exact = min(float((least_squares(lambda z: monotone(z) - y2, np.random.default_rng(k).normal(0, 1, 5),
                                         xtol=1e-15, ftol=1e-15, gtol=1e-15).fun ** 2).sum()) for k in range(10))
        free = float(((np.polyval(np.polyfit(x, y2, 3), x) - y2) ** 2).sum())
        assert free <= sse and sse == pytest.approx(exact, rel=1e-8)


def test_a_flat_fit_has_exact_zero_slope_terms_on_every_cpu():
    """Where the best non-decreasing cubic is flat (MOS falling with the metric, or constant), b, c and d are 0
    exactly, not the solver's rounding (seen: b = -2.2e-13 on one CPU, 0 on another), and a is the mean MOS;
    a real coefficient far below the MOS scale but above 1e-12 of it is kept."""
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    for y in (np.array([4.2, 4.0, 3.9, 3.7, 3.8, 3.6]), np.full(6, 3.5)):
        coef, predicted, _ = monotonic_cubic(x, y)
        assert coef[1:].tolist() == [0.0, 0.0, 0.0]
        assert coef[0] == pytest.approx(y.mean(), abs=1e-12) and np.allclose(predicted, y.mean(), atol=1e-12)
    tiny = 1e-9 * x  # 1e-9 of the scale: a slope, not rounding
    coef, _, constrained = monotonic_cubic(x, 3.0 + tiny)
    assert not constrained and coef[1] == pytest.approx(1e-9, rel=1e-3)


# ----------------------------------------------------------------------------- the rows level
def _world(n_actors=8, seed=0, planted=None, strengths=None, metric_of=None):
    """Simulated raters (synth/ratings.py) of vision-driven systems and per-clip metric rows built from each
    system's degradation strength (a PSNR-like and an SSIM-like value with actor and clip noise)."""
    from hug_vis_dataset.synth.ratings import simulate_study

    strengths = strengths or {"vis_good": 0.15, "vis_fair": 0.45, "vis_poor": 0.85}
    clips = [f"actor_{a:04d}_{e}_action_01_script_00{s}" for a in range(1, n_actors + 1)
             for e in ("happy", "sad") for s in (1, 2)]
    study = simulate_study(clips, {"vision_driven": strengths}, seed=seed, planted=planted)
    rng = np.random.default_rng(seed + 100)
    actor_effect = {a: rng.normal(0, 1.5) for a in range(1, n_actors + 1)}
    rows = []
    for system, strength in sorted(strengths.items()):
        s = (metric_of or {}).get(system, strength)
        for clip in clips:
            a = int(clip[6:10])
            rows.append({"model": system, "task": "vision_driven", "clip_id": clip, "metric": "psnr",
                         "value": 36 - 14 * s + actor_effect[a] + rng.normal(0, 0.8), "status": "ok"})
            rows.append({"model": system, "task": "vision_driven", "clip_id": clip, "metric": "lpips",
                         "value": 0.05 + 0.4 * s + rng.normal(0, 0.03), "status": "ok"})
    return pd.DataFrame(rows), pd.DataFrame(study.mos_rows()), pd.DataFrame(study.pairwise_rows())


def test_planted_systems_of_the_simulated_raters_come_out_as_planted():
    """People perceive people_pick as good and metric_pick as poor; the metrics see the opposite (their
    degradation). The twins are perceived exactly alike and degraded alike: never discordant."""
    from hug_vis_dataset.synth.ratings import Planted

    strengths = {"metric_pick": 0.2, "people_pick": 0.8, "twin_a": 0.5, "twin_b": 0.5, "plain": 0.65}
    planted = {"vision_driven": {"metric_pick": Planted(perceived=0.8), "people_pick": Planted(perceived=0.2),
                                 "twin_b": Planted(same_as="twin_a")}}
    rows, ratings, answers = _world(n_actors=30, planted=planted, strengths=strengths)
    tables = human_metric_tables(rows, ratings, answers, n_boot=0, n_perm=0, compare=False)
    pairs = tables.pairs.set_index(["criterion", "source", "metric", "system_a", "system_b"])
    for (criterion, source, metric), _ in tables.summary.groupby(["criterion", "source", "metric"]):
        planted_pair = pairs.loc[(criterion, source, metric, "metric_pick", "people_pick")]
        assert planted_pair["discordant"], (criterion, source, metric)
        assert planted_pair["human_difference"] < 0 < planted_pair["metric_difference"]
        twins = pairs.loc[(criterion, source, metric, "twin_a", "twin_b")]
        assert not twins["discordant"] and twins["p_human_two_sided"] > 0.05, (criterion, source, metric)
    joint = tables.joint
    mark = joint[(joint["judge"] == "psnr") & (joint["system"] == "people_pick")]["discordant_with"]
    assert all("metric_pick" in m for m in mark)


def test_discordant_exactly_where_the_simulated_raters_truth_contradicts_the_metric_and_few_actors_say_so():
    """The demo's simulated raters offset each (system, criterion) by a fixed draw, so people now and then
    order two systems against their degradation: the pairs whose latent quality (synth.ratings.perceived_quality)
    contradicts the metrics' order by a clear margin must come out discordant, the agreeing ones never."""
    from hug_vis_dataset.synth.ratings import perceived_quality

    strengths = {"vis_good": 0.15, "vis_fair": 0.45, "vis_poor": 0.85}
    rows, ratings, answers = _world(n_actors=30, strengths=strengths)
    tables = human_metric_tables(rows, ratings, answers, n_boot=0, n_perm=0, compare=False)
    truth = perceived_quality({"vision_driven": strengths})
    checked = {"contradicted": 0, "agreeing": 0}
    for r in tables.pairs.itertuples():
        people = truth[("vision_driven", r.system_a, r.criterion)] - truth[("vision_driven", r.system_b, r.criterion)]
        metric = strengths[r.system_b] - strengths[r.system_a]  # lower strength: the metrics' better
        if people * metric > 0:
            assert not r.discordant, r
            checked["agreeing"] += 1
        elif abs(people) > 0.2:
            assert r.discordant, r
            checked["contradicted"] += 1
    assert checked["contradicted"] >= 4 and checked["agreeing"] >= 20  # seed 0: motion naturalness, good vs fair
    few = human_metric_tables(*_world(n_actors=5)[:2], n_boot=0, n_perm=0, compare=False)
    assert few.summary["note"].str.contains("5 actors cannot reach p < 0.05").all()
    assert not few.pairs["discordant"].any()


def test_results_do_not_depend_on_system_names_row_order_or_answer_order():
    rows, ratings, answers = _world(n_actors=10, seed=3)
    options = dict(n_boot=40, n_perm=40, n_resamples=400)
    base = human_metric_tables(rows, ratings, answers, **options)
    rename = {"vis_good": "z_good", "vis_fair": "y_fair", "vis_poor": "a_poor"}  # reverses the sorted order
    shuffled = human_metric_tables(
        rows.replace({"model": rename}).sample(frac=1, random_state=1),
        ratings.replace({"model": rename}).sample(frac=1, random_state=2),
        answers.replace({"system_a": rename, "system_b": rename}).sample(frac=1, random_state=3), **options)
    key = ["criterion", "source", "metric"]
    a, b = base.summary.sort_values(key).reset_index(drop=True), shuffled.summary.sort_values(key).reset_index(drop=True)
    for column in ("spa", "spa_top_k", "kendall_tau_b", "acc_eq", "acc_eq_epsilon", "n_discordant"):
        np.testing.assert_allclose(a[column].to_numpy(float), b[column].to_numpy(float), rtol=0, atol=1e-12)
    back = {v: k for k, v in rename.items()}
    joint_a = base.joint.set_index(["criterion", "source", "judge", "system"]).sort_index()
    joint_b = shuffled.joint.assign(system=shuffled.joint["system"].map(back)).set_index(
        ["criterion", "source", "judge", "system"]).sort_index()
    np.testing.assert_allclose(joint_a[["value", "rank"]].to_numpy(float), joint_b[["value", "rank"]].to_numpy(float),
                               atol=1e-12)
    # The intervals are the same resamples' percentiles, wherever a system sits in the sorted order.
    np.testing.assert_allclose(joint_a[["low", "high", "rank_low", "rank_high"]].to_numpy(float),
                               joint_b[["low", "high", "rank_low", "rank_high"]].to_numpy(float), atol=1e-12)


def test_intervals_are_the_toolkits_actor_bootstrap():
    """People's MOS interval = studies.mos.mos_intervals (bootstrap_ci) and the Bradley-Terry interval =
    strengths_table's, same seed and replicates; a rank interval = the replicates' rank quantiles."""
    from hug_vis_dataset.stats import cluster_draws
    from hug_vis_dataset.studies.bradley_terry import strengths_table
    from hug_vis_dataset.studies.mos import mos_intervals

    rows, ratings, answers = _world(n_actors=6, seed=5)
    ratings = ratings[~ratings["rater"].isin(["sim_rater_06"])]  # the careless rater QC would drop anyway
    tables = human_metric_tables(rows, ratings, answers, n_boot=120, n_perm=0, compare=False, seed=4)
    people = tables.joint[tables.joint["judge"] == "people"].set_index(["source", "criterion", "system"])
    cis = mos_intervals(ratings, n_boot=120, seed=4)
    for (model, criterion), ci in cis.items():
        row = people.loc[("MOS", criterion, model)]
        assert (row["low"], row["high"]) == pytest.approx((ci.low, ci.high), abs=1e-12)
    strengths = strengths_table(answers, n_boot=120, seed=4).set_index(["criterion", "system"])
    for (criterion, system), s in strengths.iterrows():
        row = people.loc[("pairwise", criterion, system)]
        assert row["value"] == pytest.approx(s["strength"], abs=1e-9)
        assert (row["low"], row["high"]) == pytest.approx((s["ci_low"], s["ci_high"]), abs=1e-9)
    # Rank interval of the PSNR column by hand: per replicate, systems ranked by their mean over drawn actors.
    psnr = rows[rows["metric"] == "psnr"].assign(actor=lambda f: f["clip_id"].str[6:10].astype(int))
    systems = sorted(set(psnr["model"]))
    sums = psnr.pivot_table(index="model", columns="actor", values="value", aggfunc="sum").loc[systems].to_numpy()
    counts = psnr.pivot_table(index="model", columns="actor", values="value", aggfunc="count").loc[systems].to_numpy()
    ranks = np.array([ha.ranks(sums[:, p].sum(1) / counts[:, p].sum(1)) for p in cluster_draws(6, 120, seed=4)])
    shown = tables.joint[(tables.joint["judge"] == "psnr") & (tables.joint["criterion"] == "id_similarity")
                         & (tables.joint["source"] == "MOS")].set_index("system").loc[systems]
    assert shown["rank_low"].tolist() == np.percentile(ranks, 2.5, axis=0, method="lower").tolist()
    assert shown["rank_high"].tolist() == np.percentile(ranks, 97.5, axis=0, method="higher").tolist()


def test_mos_prediction_uses_items_with_two_votes_and_their_intervals():
    from hug_vis_dataset.studies.mos import clip_means

    clips = [f"actor_{a:04d}_happy_action_01_script_00{s}" for a in (1, 2, 3) for s in (1, 2, 3)]
    rng = np.random.default_rng(11)
    votes, rows = [], []
    for system, level in (("c_good", 4.0), ("c_fair", 3.0), ("c_poor", 2.0)):
        for clip in clips:
            for rater in ("r1", "r2", "r3"):
                votes.append({"rater": rater, "clip_id": clip, "model": system, "criterion": "emotion_naturalness",
                              "score": int(np.clip(round(level + rng.normal(0, 0.7)), 1, 5))})
            rows.append({"model": system, "task": "voice_cloning", "clip_id": clip, "metric": "utmos",
                         "value": level / 2 + rng.normal(0, 0.2), "status": "ok"})
            rows.append({"model": system, "task": "voice_cloning", "clip_id": clip, "metric": "speaker_similarity",
                         "value": 0.8 + rng.normal(0, 0.02), "status": "ok"})
    votes = pd.DataFrame(votes)
    tables = human_metric_tables(pd.DataFrame(rows), votes, n_boot=0, n_perm=0)
    got = tables.mos_prediction.set_index("metric").loc["utmos"]
    per_clip = clip_means(votes).merge(pd.DataFrame(rows).query("metric == 'utmos'")[["model", "clip_id", "value"]],
                                       on=["model", "clip_id"])
    cis = votes.groupby(["model", "clip_id"])["score"].apply(lambda s: vote_ci95(s.to_numpy()))
    ref = p1401(per_clip["value"], per_clip["score"], cis.loc[list(zip(per_clip["model"], per_clip["clip_id"]))])
    assert got["n_items"] == 27 and got["n_left_out"] == 0
    assert (got["rmse"], got["rmse_star"], got["outlier_ratio"]) == pytest.approx(
        (ref.rmse, ref.rmse_star, ref.outlier_ratio), abs=1e-9)
    assert list(tables.mos_prediction["metric"]) == ["utmos"]  # speaker similarity does not predict MOS


def test_without_human_judgments_it_says_what_is_needed():
    from hug_vis_dataset.studies.human_metric import HumanMetricInputError

    rows, ratings, _ = _world(n_actors=2)
    with pytest.raises(HumanMetricInputError, match="needs ratings"):
        human_metric_tables(rows)
    with pytest.raises(HumanMetricInputError, match="no generation task"):
        human_metric_tables(rows.assign(model="other"), ratings)


# ----------------------------------------------------------------------------- the paper's tables
def test_paper_block_is_scipy_and_brute_force_on_the_published_means_and_is_the_docs():
    from pathlib import Path

    from hug_vis_dataset.catalog import spec
    from hug_vis_dataset.studies.human_metric_paper import _paper_wide, paper_joint_agreement, paper_markdown

    frame = paper_joint_agreement().set_index(["task", "metric", "criterion"])
    for task, (metrics, mos) in _paper_wide().items():
        for metric in metrics.columns:
            sign = 1 if spec(metric).higher_is_better else -1
            for criterion in mos.columns:
                both = metrics[[metric]].join(mos[[criterion]], how="inner").dropna()
                m, h = sign * both[metric].to_numpy(), both[criterion].to_numpy()
                row = frame.loc[(task, metric, criterion)]
                assert row["kendall_tau_b"] == pytest.approx(kendalltau(h, m).statistic, abs=1e-12)
                assert row["acc_eq"] == pytest.approx(brute_acc_eq(h.tolist(), m.tolist())[0], abs=1e-12)
                assert row["n_systems"] == len(both) and row["spa"] == "needs per-clip rows"
    text = (Path(__file__).resolve().parents[1] / "docs" / "FINDINGS.md").read_text(encoding="utf-8")
    block = text.split("<!-- human-metric-paper:begin -->\n")[1].split("<!-- human-metric-paper:end -->")[0]
    assert block == paper_markdown(), "run: python -m hug_vis_dataset.studies.human_metric_paper"

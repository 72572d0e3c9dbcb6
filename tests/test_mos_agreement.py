"""Metric-vs-MOS agreement (hug_vis_dataset.metrics.mos_agreement) against scipy and by-hand counts."""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from hug_vis_dataset.catalog import spec as metric_info
from hug_vis_dataset.metrics.mos_agreement import (
    AgreementInputError, metric_mos_agreement, metric_mos_agreement_rows, paper_agreement,
    paper_agreement_markdown, paper_table_pairs, pairwise_accuracy,
)

ROOT = Path(__file__).resolve().parents[1]


def by_hand_pairwise(metric: dict, mos: dict, systems) -> float:
    good = total = 0.0
    for x, y in itertools.combinations(sorted(systems), 2):
        if mos[x] == mos[y]:
            continue
        total += 1
        if metric[x] == metric[y]:
            good += 0.5
        elif (metric[x] > metric[y]) == (mos[x] > mos[y]):
            good += 1
    return good / total


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_trend_matches_scipy_with_directions(seed):
    rng = np.random.default_rng(seed)
    systems = [f"s{i}" for i in range(7)]
    auto = pd.DataFrame({"lpips": rng.random(7), "psnr": rng.normal(15, 3, 7)}, index=systems)
    mos = pd.DataFrame({"mos_a": rng.uniform(1, 5, 7), "mos_b": rng.uniform(1, 5, 7)}, index=systems)
    out = metric_mos_agreement(auto, mos, top_k=3).set_index(["metric", "criterion"])
    for metric, criterion in itertools.product(auto.columns, mos.columns):
        sign = 1 if metric_info(metric).higher_is_better else -1  # LPIPS lower is better
        x, y = sign * auto[metric].to_numpy(), mos[criterion].to_numpy()
        row = out.loc[(metric, criterion)]
        assert row["spearman"] == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
        assert row["kendall"] == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
        # Without ties, pairwise accuracy over all pairs is (1 + tau) / 2.
        assert row["pairwise_all"] == pytest.approx((1 + kendalltau(x, y).statistic) / 2)
        m, h = dict(zip(systems, x)), dict(zip(systems, y))
        top_h = sorted(systems, key=lambda s: -h[s])[:3]
        top_m = sorted(systems, key=lambda s: -m[s])[:3]
        assert row["pairwise_top_k"] == pytest.approx(by_hand_pairwise(m, h, top_h))
        assert row["top_k_overlap"] == pytest.approx(len(set(top_h) & set(top_m)) / 3)
        assert row["top1_metric"] == top_m[0] and row["top1_mos"] == top_h[0]
        assert row["same_top1"] == (top_m[0] == top_h[0])
        assert row["n_systems"] == 7


def test_ties_at_the_top_and_in_pairs():
    # Sync-D-like: two systems share the best (lowest) value.
    auto = pd.DataFrame({"err": [7.73, 7.73, 8.1, 9.0]}, index=["sonic", "latent", "vex", "ed"])
    mos = pd.DataFrame({"m": [4.44, 4.29, 3.4, 1.3]}, index=["sonic", "latent", "vex", "ed"])
    row = metric_mos_agreement(auto, mos, {"err": False}, top_k=2).iloc[0]
    assert row["top1_metric"] == "latent = sonic" and row["top1_mos"] == "sonic" and row["same_top1"]
    # One metric tie among 6 pairs, the rest concordant: (5 + 0.5) / 6.
    assert row["pairwise_all"] == pytest.approx(5.5 / 6)
    assert row["pairwise_top_k"] == 0.5  # the top-2 pair is tied by the metric
    # Ties at the k-th place put every tied system in: metric top-2 {a, b, c} vs MOS top-2 {a, b}.
    auto3 = pd.DataFrame({"v": [3.0, 2.0, 2.0, 1.0]}, index=list("abcd"))
    mos3 = pd.DataFrame({"h": [4.0, 3.0, 1.0, 2.0]}, index=list("abcd"))
    row3 = metric_mos_agreement(auto3, mos3, {"v": True}, top_k=2).iloc[0]
    assert row3["top_k_overlap"] == pytest.approx(2 / 3)
    assert math.isnan(pairwise_accuracy({"a": 1, "b": 1}, {"a": 2, "b": 2}, "ab"))  # no pair with different MOS


def test_missing_values_shrink_the_system_set():
    auto = pd.DataFrame({"v": [1.0, np.nan, 3.0, 4.0]}, index=list("abcd"))
    mos = pd.DataFrame({"h": [1.0, 2.0, 3.0, np.nan]}, index=list("abcd"))
    row = metric_mos_agreement(auto, mos, {"v": True}).iloc[0]
    assert row["n_systems"] == 2 and row["spearman"] == 1.0


def test_errors():
    auto = pd.DataFrame({"not_a_metric": [1.0, 2.0]}, index=["a", "b"])
    mos = pd.DataFrame({"h": [1.0, 2.0]}, index=["a", "b"])
    with pytest.raises(AgreementInputError, match="not_a_metric"):
        metric_mos_agreement(auto, mos)
    with pytest.raises(AgreementInputError, match="top_k"):
        metric_mos_agreement(auto, mos, {"not_a_metric": True}, top_k=0)
    with pytest.raises(AgreementInputError, match="lack columns"):
        metric_mos_agreement_rows(pd.DataFrame({"model": ["a"]}), pd.DataFrame({"model": ["a"]}))


# ----------------------------------------------------------------------------- the paper's tables
def test_paper_tables_against_the_raw_json():
    raw = json.loads((ROOT / "hug_vis_dataset" / "data" / "paper_tables.json").read_text(encoding="utf-8"))
    assert paper_table_pairs() == [("audio_driven", 5, 6), ("vision_driven", 7, 8), ("voice_cloning", 9, 10)]
    frame = paper_agreement().set_index(["task", "metric", "criterion"])
    assert len(frame) == 3 * 3 + 5 * 3 + 3 * 2

    def table(number):
        out: dict[str, dict[str, float]] = {}
        for v in raw["values"]:
            if v["table"] == number and v["source"] != "reference":
                out.setdefault(v["metric"], {})[v["model"]] = v["value"]
        return out

    for task, objective, subjective in ((("audio_driven", 5, 6)), ("vision_driven", 7, 8), ("voice_cloning", 9, 10)):
        auto, mos = table(objective), table(subjective)
        directions = {v["metric"]: v["higher_is_better"] for v in raw["values"] if v["table"] == objective}
        for metric, criterion in itertools.product(auto, mos):
            # The metric table and the paper's own flags agree on every direction.
            assert metric_info(metric).higher_is_better == directions[metric]
            systems = sorted(auto[metric])
            assert systems == sorted(mos[criterion])  # the names match; Real audio is not rated
            x = [(1 if directions[metric] else -1) * auto[metric][s] for s in systems]
            y = [mos[criterion][s] for s in systems]
            row = frame.loc[(task, metric, criterion)]
            assert row["n_systems"] == len(systems)
            assert row["spearman"] == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
            assert row["kendall"] == pytest.approx(kendalltau(x, y).statistic, abs=1e-12)
    assert frame.loc[("audio_driven", "sync_c", "mos_lip_sync"), "top1_metric"] == "LatentSync"
    assert frame.loc[("vision_driven", "fid", "mos_motion"), "top1_mos"] == "Wan2.2"


def test_findings_doc_shows_what_the_function_prints():
    text = (ROOT / "docs" / "FINDINGS.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- metric-mos-agreement:begin -->\n(.*?)<!-- metric-mos-agreement:end -->", text, re.S)
    assert block is not None
    assert block.group(1) == paper_agreement_markdown()
    assert "python -m hug_vis_dataset.metrics.mos_agreement" in text


# ----------------------------------------------------------------------------- per-clip rows
def clip_rows(n_actors: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    quality = {"a": 3.0, "b": 2.5, "c": 1.0, "d": 0.5}
    metric, mos = [], []
    for model, q in quality.items():
        for actor in range(1, n_actors + 1):
            for script in (1, 2):
                clip = f"actor_{actor:04d}_happy_action_01_script_{script:03d}"
                metric.append({"model": model, "clip_id": clip, "actor_id": actor, "metric": "lpips",
                               "value": 1.0 - 0.2 * q + rng.normal(0, 0.3), "status": "ok"})
                mos.append({"model": model, "clip_id": clip, "actor_id": actor, "criterion": "mos_motion",
                            "score": 1 + q + rng.normal(0, 0.8)})
    return pd.DataFrame(metric), pd.DataFrame(mos)


def test_per_clip_rows_point_estimate_and_actor_bootstrap_by_hand():
    metric, mos = clip_rows(5)
    out = metric_mos_agreement_rows(metric, mos, n_boot=40, seed=3).iloc[0]
    x = -metric.groupby("model")["value"].mean()
    y = mos.groupby("model")["score"].mean()
    assert out["spearman"] == pytest.approx(spearmanr(x, y.loc[x.index]).statistic)
    # By hand: draw actors (sorted ids) with replacement, pool their clips, redo the system means.
    actors = sorted(metric["actor_id"].unique())
    rng = np.random.default_rng(3)
    rhos, taus = [], []
    for _ in range(40):
        picks = [actors[i] for i in rng.integers(0, len(actors), size=len(actors))]
        m = pd.concat([metric[metric.actor_id == a] for a in picks])
        h = pd.concat([mos[mos.actor_id == a] for a in picks])
        xm = -m.groupby("model")["value"].mean()
        ym = h.groupby("model")["score"].mean().loc[xm.index]
        rhos.append(spearmanr(xm, ym).statistic if xm.nunique() > 1 and ym.nunique() > 1 else np.nan)
        taus.append(kendalltau(xm, ym).statistic if xm.nunique() > 1 and ym.nunique() > 1 else np.nan)
    rhos, taus = np.array(rhos), np.array(taus)
    assert (out["spearman_low"], out["spearman_high"]) == pytest.approx(
        tuple(np.percentile(rhos[np.isfinite(rhos)], [2.5, 97.5])))
    assert (out["kendall_low"], out["kendall_high"]) == pytest.approx(
        tuple(np.percentile(taus[np.isfinite(taus)], [2.5, 97.5])))


def test_per_clip_rows_single_actor_has_no_interval():
    metric, mos = clip_rows(1)
    out = metric_mos_agreement_rows(metric, mos, n_boot=10).iloc[0]
    assert math.isfinite(out["spearman"])
    assert all(math.isnan(out[c]) for c in ("spearman_low", "spearman_high", "kendall_low", "kendall_high"))


def test_per_clip_rows_ignore_row_order_and_failed_rows():
    metric, mos = clip_rows(4, seed=1)
    a = metric_mos_agreement_rows(metric, mos, n_boot=20)
    extra = metric.iloc[:1].assign(status="failed", value=99.0, clip_id="actor_0009_sad_action_01_script_001",
                                   actor_id=9)
    failed = pd.concat([metric, extra])
    b = metric_mos_agreement_rows(failed.sample(frac=1.0, random_state=2), mos.sample(frac=1.0, random_state=3),
                                  n_boot=20)
    pd.testing.assert_frame_equal(a, b)

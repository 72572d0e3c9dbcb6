"""MOS aggregation, invalid ratings, Krippendorff's alpha and the MOS/metric joint view."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.studies.mos import (agreement, krippendorff_alpha, mos_metric_agreement, mos_report, mos_table,
                                 read_ratings, validate_ratings)

C1, C2, C3 = ("actor_0001_happy_action_01_script_001", "actor_0001_sad_action_01_script_001",
              "actor_0002_angry_action_01_script_001")


def pairwise_alpha(units, delta):
    """Independent re-derivation: alpha = 1 - D_o / D_e from value pairs.

    D_o averages delta over ordered pairs of distinct ratings within a unit, each unit weighted by
    m_u / (m_u - 1) / n; D_e averages delta over ordered pairs of all pairable values.
    """
    units = [list(map(float, u)) for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)
    d_o = sum(sum(delta(a, b) for (i, a), (j, b) in itertools.product(enumerate(u), enumerate(u)) if i != j)
              / (len(u) - 1) for u in units) / n
    d_e = sum(delta(values[i], values[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    return 1 - d_o / d_e


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_interval_and_nominal_match_pairwise_derivation(seed):
    rng = np.random.default_rng(seed)
    units = [list(rng.integers(1, 6, size=rng.integers(1, 5))) for _ in range(15)]
    assert krippendorff_alpha(units, "interval") == pytest.approx(pairwise_alpha(units, lambda a, b: (a - b) ** 2))
    assert krippendorff_alpha(units, "nominal") == pytest.approx(pairwise_alpha(units, lambda a, b: float(a != b)))


def test_alpha_published_example_and_edge_cases():
    # Krippendorff (2011), 4 observers x 12 units, missing values dropped.
    data = [[1, 1, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4], [4, 4, 4, 4],
            [1, 1, 2, 1], [2, 2, 2, 2], [5, 5, 5], [1, 1], [3]]
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(data, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.849, abs=5e-4)
    assert krippendorff_alpha([[1, 1], [5, 5]]) == 1.0  # perfect agreement
    assert np.isnan(krippendorff_alpha([[3, 3], [3]]))  # no variation: undefined
    assert np.isnan(krippendorff_alpha([[3], [4]]))  # nothing pairable
    # systematic disagreement: alpha below zero
    assert krippendorff_alpha([[1, 5], [5, 1], [1, 5]]) < 0
    # ordinal with a hand-computed case: units (1,2),(2,3): n_1=1,n_2=2,n_3=1 ...
    # d(1,2) = (1 + 2/2 ... ) computed by the rank formula: (n_1/2 + n_2/2)^2 = 1.5^2
    alpha = krippendorff_alpha([[1, 2], [2, 3]], "ordinal")
    o = {(1, 2): 1, (2, 1): 1, (2, 3): 1, (3, 2): 1}
    d = {(1, 2): 1.5 ** 2, (2, 3): 1.5 ** 2, (1, 3): (0.5 + 2 + 0.5) ** 2}
    dd = lambda a, b: 0.0 if a == b else d[tuple(sorted((a, b)))]  # noqa: E731
    n_c = {1: 1, 2: 2, 3: 1}
    d_o = sum(v * dd(*k) for k, v in o.items())
    d_e = sum(n_c[a] * n_c[b] * dd(a, b) for a in n_c for b in n_c)
    assert alpha == pytest.approx(1 - (4 - 1) * d_o / d_e)
    with pytest.raises(ValueError):
        krippendorff_alpha(data, "ratio")


def ratings_frame():
    rows = [
        # rater, clip, model, criterion, score
        ("r1", C1, "A", "lip_sync", 5), ("r2", C1, "A", "lip_sync", 4), ("r3", C1, "A", "lip_sync", 4),
        ("r1", C2, "A", "lip_sync", 2),
        ("r1", C3, "A", "lip_sync", 3), ("r2", C3, "A", "lip_sync", 3),
        ("r1", C1, "B", "lip_sync", 1), ("r2", C1, "B", "lip_sync", 2),
        ("r1", C2, "B", "lip_sync", 3),
        ("r1", C1, "A", "id_similarity", 4),
        # invalid
        ("r1", C3, "B", "lip_sync", 6), ("r2", C3, "B", "lip_sync", "3.5"), ("r3", C3, "B", "lip_sync", "x"),
        ("r1", C3, "B", "sharpness", 3), ("r1", "actor_1_x", "B", "lip_sync", 3),
        ("r4", C2, "B", "lip_sync", 2), ("r4", C2, "B", "lip_sync", 5),
    ]
    return pd.DataFrame(rows, columns=["rater", "clip_id", "model", "criterion", "score"]).astype(str)


def test_mos_by_hand_and_invalid_ratings_reported(tmp_path):
    frame = ratings_frame()
    path = tmp_path / "ratings.csv"
    frame.to_csv(path, index=False)
    valid, invalid = read_ratings(path)
    assert len(valid) == 10 and len(invalid) == 7
    reasons = dict(zip(invalid["line"], invalid["reason"]))
    assert reasons[12] == "score 6 is not an integer in 1..5"
    assert reasons[13] == "score 3.5 is not an integer in 1..5"
    assert reasons[14] == "score x is not an integer in 1..5"
    assert reasons[15].startswith("unknown criterion")
    assert reasons[16] == "bad clip id"
    assert reasons[17].startswith("duplicate") and reasons[18].startswith("duplicate")
    table = mos_table(valid)
    # A lip_sync: clip means C1 = 13/3, C2 = 2, C3 = 3 -> (13/3 + 2 + 3) / 3
    assert table.loc[("A", "lip_sync"), "mos"] == pytest.approx((13 / 3 + 2 + 3) / 3)
    assert table.loc[("B", "lip_sync"), "mos"] == pytest.approx((1.5 + 3) / 2)
    assert table.loc[("A", "lip_sync"), "n_clips"] == 3 and table.loc[("A", "lip_sync"), "n_ratings"] == 6
    report = mos_report(path, n_boot=200)
    assert report.invalid_count == 7
    assert report.invalid_summary()["score is not an integer in 1..5"] == 3
    row = report.table.loc[("A", "lip_sync")]
    assert row["ci_low"] <= row["mos"] <= row["ci_high"]
    # two actors: actor 1 clip means (13/3, 2), actor 2 (3); replicate means lie between extremes
    assert row["ci_low"] >= min(3, (13 / 3 + 2) / 2) - 1e-12 and row["ci_high"] <= max(3, (13 / 3 + 2) / 2) + 1e-12
    text = report.to_text()
    assert "7 invalid" in text and "lip_sync" in text
    report.save(tmp_path / "out")
    assert (tmp_path / "out" / "invalid_ratings.csv").read_text().count("\n") == 8


def test_agreement_uses_clip_model_units():
    valid, _ = validate_ratings(ratings_frame())
    got = agreement(valid)["lip_sync"]
    units = [[5, 4, 4], [2], [3, 3], [1, 2], [3]]  # (C1,A), (C2,A), (C3,A), (C1,B), (C2,B)
    assert got["alpha"] == pytest.approx(pairwise_alpha(units, lambda a, b: (a - b) ** 2))
    assert got["pairable_units"] == 3


def test_row_order_does_not_change_mos():
    frame = ratings_frame()
    a = mos_table(validate_ratings(frame)[0])
    b = mos_table(validate_ratings(frame.sample(frac=1, random_state=3))[0])
    pd.testing.assert_frame_equal(a, b)


def test_mos_metric_rank_correlation():
    mos = pd.DataFrame({"model": ["a", "b", "c"] * 2, "criterion": ["lip_sync"] * 3 + ["id_similarity"] * 3,
                        "mos": [4.0, 3.0, 2.0, 1.0, 2.0, 3.0]}).set_index(["model", "criterion"])
    auto = pd.DataFrame({"sync_c": [5.0, 4.0, 1.0], "csim": [0.9, 0.8, 0.7]}, index=["a", "b", "c"])
    rows = {r["criterion"]: r for r in mos_metric_agreement(mos, auto, "audio_driven")}
    assert rows["lip_sync"]["spearman"] == pytest.approx(1.0)
    assert rows["id_similarity"]["spearman"] == pytest.approx(-1.0)
    assert rows["id_similarity"]["best_by_mos"] == "c" and rows["id_similarity"]["best_by_metric"] == "a"

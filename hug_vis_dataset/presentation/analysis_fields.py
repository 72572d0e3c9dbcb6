"""What each analysis module returns, field by field: one text for the module docstrings
(:func:`hug_vis_dataset.modules.inputs_description`) and the cards (:mod:`hug_vis_dataset.publish.module_cards`).

Example:
    >>> [key for key, _ in ANALYSIS_FIELDS["variance_decomposition"]][:3]
    ['metric', 'method', 'reason']
"""

from __future__ import annotations

#: What each analysis returns, field by field (the keys of its ``compute`` output).
ANALYSIS_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "emotion_difficulty": (
        ("D", "metric label -> emotion -> normalised difficulty in [0, 1] (Eq. 2; 1 = the hardest emotion for that "
              "metric, `null` for an emotion without rows)"),
        ("g", "metric label -> emotion -> the oriented, model-averaged value before normalisation (Eq. 1)"),
        ("hardest", "metric label -> the emotion with the largest difficulty"),
        ("missing", "metric label -> emotions without valid rows"),
        ("n_dropped", "rows left out as failed or non-finite")),
    "difficulty_agreement": (
        ("rho", "metric label -> metric label -> Spearman correlation of the two difficulty profiles over emotions "
                "(Eq. 3)"),
        ("metrics", "the metric labels compared"),
        ("D", "the emotion difficulties compared, as `emotion_difficulty` returns them")),
    "source_difficulty": (
        ("rho", "Spearman correlation of audio-driven and vision-driven clip difficulty (Eq. 4)"),
        ("slope, intercept, r2", "the least-squares fit of Z_VD on Z_AD"),
        ("n_clips", "clips with both regimes"), ("n_valid", "regime -> clips where every model has every metric"),
        ("models", "regime -> models averaged"), ("pairs", "one record per clip: clip_id, emotion, Z_AD, Z_VD"),
        ("n_dropped", "rows left out as failed or non-finite")),
    "motion_difficulty": (
        ("motion_difficulty", "mean D_motion over clips (Eq. 5-6: mean percentile rank of U_s and V_s)"),
        ("n_clips", "clips with reference motion rows and matting dtSSD rows"),
        ("per_clip", "clip_id, u, v, d_motion and the model-averaged dtssd of every clip"),
        ("relation", "the fit of dtSSD on D_motion (Fig. 11)")),
    "variance_decomposition": (
        ("metric", "the metric decomposed"), ("method", "`balanced` (complete grid) or the fallback used"),
        ("reason", "why the fallback was used (empty otherwise)"), ("n_rows", "rows used"),
        ("shares", "factor -> share of the per-clip variance in [0, 1] (`null` for a factor with one level)"),
        ("table", "one record per term: term, df, sum_sq, share")),
    "neighbour_significance": (
        ("metric", "the metric tested"),
        ("tests", "one record per pair of neighbours in the ranking: rank, model, next_model, mean, next_mean, "
                  "difference with its actor-clustered interval (ci_low, ci_high), p_value, n_clips, n_actors, exact, "
                  "distinguishable (`null` when the design cannot reach the level) and a verdict in words"),
        ("ties", "pairs of neighbours that are not distinguishable")),
    "detectable_difference": (
        ("metric", "the metric"),
        ("pairs", "one record per pair of neighbours: model, next_model, gap, between- and within-actor variance, se, "
                  "the minimum detectable difference mdd and whether the gap exceeds it (separable)"),
        ("n_actors, clips_per_actor", "the design of the rows"),
        ("by_actors", "number of actors -> the minimum detectable difference with that many actors"),
        ("pooled", "the pooled between/within variance, ICC and mdd")),
    "metric_mos_agreement": (
        ("<task>", "one list per generation task with ratings: per metric and MOS criterion, n_systems, Spearman and "
                   "Kendall correlations with bootstrap intervals, the top-1 system of each and top-k agreement"),
        ("pairwise", "with preferences: per task, per criterion the Bradley-Terry strengths against the MOS and "
                     "against each automatic metric (Spearman, Kendall, top-1 of each, top-k agreement)"),),
    "human_metric_agreement": (
        ("summary", "one record per task, criterion, human source (MOS or pairwise) and metric: n_systems, n_actors, "
                    "n_pairs, exact (every sign pattern enumerated), soft pairwise accuracy spa with its actor-bootstrap "
                    "interval (spa_low, spa_high), top_k and spa_top_k with its interval, kendall_tau_b, acc_eq and "
                    "acc_eq_epsilon (its tie threshold, metric units), n_discordant and a note when the actors cannot "
                    "reach significance"),
        ("joint", "the joint table: per task, criterion, source, judge (`people` or a metric) and system the value "
                  "(MOS, Bradley-Terry strength or the metric in its units) with its interval (low, high), rank with "
                  "its interval (rank_low, rank_high) and discordant_with (the systems it is discordant with)"),
        ("pairs", "per system pair and metric: the oriented differences (positive: system_a better), one-sided p-values "
                  "that system_a is better (p_human, p_metric), two-sided ones, in_top_k and discordant"),
        ("comparisons", "PERM-BOTH per pair of metrics: spa_a, spa_b, delta and the p_value that metric_b agrees "
                        "with people better than metric_a"),
        ("mos_prediction", "ITU-T P.1401 per metric that predicts MOS: items, the mapping's a, b, c, d, whether the "
                           "monotonic constraint was active, rmse (N - 4 df), rmse_star and outlier_ratio"),
        ("notes", "what could not be measured, with why")),
}

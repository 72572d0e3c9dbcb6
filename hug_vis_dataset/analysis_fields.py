"""What each analysis module returns, field by field: one text for the module docstrings
(:func:`hug_vis_dataset.modules.inputs_description`) and the cards (:mod:`hug_vis_dataset.module_cards`).

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
}

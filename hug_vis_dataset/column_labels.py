"""Part of the catalog (:mod:`hug_vis_dataset.catalog` re-exports it): the words a person reads for every key that
is not a metric or a task, the MOS criteria and the columns of stored rows and of every table the toolkit computes.

A table a person reads shows ``label_of(key)`` (:func:`hug_vis_dataset.catalog.label_of`), never the key; the key
stays the value behind the label (CSV files written for programs keep it). ``tests/test_labels_a_person_reads.py``
checks that every column the package defines has a label here and that no surface shows a key.

Example:
    >>> MOS_CRITERIA["lip_sync"], COLUMN_LABELS["n_missing"]
    ('Lip Synchronization', 'Clips missing')
"""

from __future__ import annotations

#: The criteria of the subjective study (Tables 6, 8, 10), as the paper's tables print them.
MOS_CRITERIA: dict[str, str] = {
    "id_similarity": "ID Similarity",
    "emotion_naturalness": "Emotion Naturalness",
    "lip_sync": "Lip Synchronization",
    "motion_naturalness": "Motion Naturalness",
}

#: Every column key of stored rows and of the tables the toolkit computes -> its label.
COLUMN_LABELS: dict[str, str] = {
    # stored per-clip rows and the release's clips
    "model": "Model", "task": "Task", "clip_id": "Clip", "actor_id": "Actor", "emotion": "Emotion",
    "action_id": "Action", "script_id": "Script", "metric": "Metric", "value": "Value", "status": "Status",
    "error": "Why failed", "input_sha256": "Input SHA-256", "sample": "Sample (seed)", "frame": "Frame",
    "duration": "Duration (s)",
    "fps": "Frame rate", "resolution": "Resolution", "width": "Width", "height": "Height",
    "num_frames": "Frames", "sample_rate": "Sample rate", "video_path": "Video file", "audio_path": "Audio file",
    "alpha_matte_path": "Alpha matte file", "rgba_foreground_path": "Foreground file", "transcript": "Transcript",
    "asr_transcript": "ASR transcript",
    # a run's counts and the board's columns
    "n_ok": "Clips scored", "n_failed": "Clips failed", "n_missing": "Clips missing", "coverage": "Coverage",
    "origin": "Origin", "link": "Provenance", "note": "Note", "scored_by": "Scored by", "detail": "Detail",
    "partial": "Partial run", "source": "Source", "input_setting": "Input setting", "paradigm": "Paradigm",
    "table": "Table", "text": "Text", "higher_is_better": "Higher is better", "metric_display": "Metric",
    # ratings, pairwise answers and the raters' quality control
    "rater": "Rater", "criterion": "Criterion", "score": "Score", "seq": "Order", "time": "Time",
    "elapsed": "Answer time (s)", "study": "Study", "item": "Item", "left": "Shown left",
    "system_a": "System A", "system_b": "System B", "outcome": "Outcome", "answers": "Answers",
    "answer": "Answer", "setting": "Input setting",
    "gold_answers": "Gold answers", "gold_failed": "Gold answers failed", "fast_answers": "Answers faster than the media",
    "flagged": "Flagged", "reasons": "Why flagged", "against": "Against",
    # metrics against MOS at the top (finding ii)
    "n_systems": "Systems", "spearman": "Spearman rho", "kendall": "Kendall tau", "top1_metric": "Best by metric",
    "top1_mos": "Best by MOS", "top1_pairwise": "Best by people", "top1_against": "Best by the other",
    "same_top1": "Same best", "top_k": "Top k", "top_k_overlap": "Top-k overlap",
    "pairwise_top_k": "Pairwise accuracy (top k)", "pairwise_all": "Pairwise accuracy (all pairs)",
    "spearman_low": "Spearman low", "spearman_high": "Spearman high", "kendall_low": "Kendall low",
    "kendall_high": "Kendall high",
    # metrics and human judgment jointly (finding ii, measured)
    "n_actors": "Actors", "n_clips": "Clips", "n_pairs": "Pairs", "exact": "Exact test", "spa": "SPA",
    "spa_low": "SPA low", "spa_high": "SPA high", "spa_top_k": "Top-k SPA", "spa_top_k_low": "Top-k SPA low",
    "spa_top_k_high": "Top-k SPA high", "kendall_tau_b": "Kendall tau-b", "acc_eq": "Tie-calibrated accuracy",
    "acc_eq_epsilon": "Tie threshold", "n_discordant": "Discordant pairs", "judge": "Judge", "system": "System",
    "low": "Low", "high": "High", "rank": "Rank", "rank_low": "Rank low", "rank_high": "Rank high",
    "discordant_with": "Discordant with", "in_top_k": "In people's top k", "human_difference": "People's difference",
    "p_human": "p (people)", "p_human_two_sided": "Two-sided p (people)", "metric_difference": "Metric's difference",
    "p_metric": "p (metric)", "p_metric_two_sided": "Two-sided p (metric)", "discordant": "Discordant",
    "metric_a": "Metric A", "metric_b": "Metric B", "spa_a": "SPA of A", "spa_b": "SPA of B", "delta": "B - A",
    "p_value": "p", "n_permutations": "Permutations",
    # ITU-T P.1401's mapping of a metric to MOS
    "n_items": "Items", "n_left_out": "Items left out", "a": "Mapping a", "b": "Mapping b", "c": "Mapping c",
    "d": "Mapping d", "constrained": "Monotonic constraint active", "rmse": "RMSE", "rmse_star": "RMSE*",
    "outlier_ratio": "Outlier ratio",
    # the statistics engine's results (verdicts, paired tests, intervals, rankings)
    "next_model": "Next model", "word": "Verdict", "why": "Why", "difference": "Difference", "ci_low": "CI low",
    "ci_high": "CI high", "n_boot": "Replicates", "n_clusters": "Actors", "n_ratings": "Ratings",
}

#: The paper's Source column (Tables 4-11: open or closed systems, and Table 9's Real audio row), as a board prints it.
SOURCE_LABELS: dict[str, str] = {"open": "open", "closed": "closed", "reference": "real recordings"}

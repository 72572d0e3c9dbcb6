"""Automatic metrics and human judgment of the same systems, jointly and with their uncertainty, from rows.

The paper's finding (ii) ends with a demand: metrics and people "agree in overall trend yet diverge at the
top, so the two must be reported jointly". :func:`human_metric_tables` does that from stored per-clip result
rows and the study's ratings (MOS) or pairwise answers, per generation task and criterion, with the measures
of :mod:`hug_vis_dataset.metrics.human_agreement` (SPA and top-k SPA with actor-bootstrap intervals,
tie-calibrated accuracy, Kendall tau-b, discordant pairs, PERM-BOTH) and, for the metrics that predict MOS
(:attr:`hug_vis_dataset.catalog.MetricSpec.predicts_mos`), ITU-T P.1401 (:mod:`hug_vis_dataset.metrics.p1401`).

* **Systems**: those of the task with stored rows (reference rows, failed rows and non-finite values left
  out) that people rated on the criterion (or compared, for pairwise answers); sorted by name, so nothing
  depends on the order rows come in. **Actors**: every actor of those rows, sorted; one bootstrap draw and
  one set of sign patterns serve people and every metric.
* **People**: MOS per clip = the mean over the clip's raters, the raters quality control keeps
  (:func:`hug_vis_dataset.studies.mos_qc.select_raters`, as the MOS tables; ``all_raters`` keeps everyone),
  gold items left out; the system score is the MOS (mean over clips). Pairwise answers: per clip and pair
  the mean of +1 / 0 / -1; the system score is the Bradley-Terry log-strength with ``prior`` virtual ties
  (:func:`hug_vis_dataset.studies.bradley_terry.fit_strengths`, the strengths of the pairwise block).
* **Metrics**: each per-clip table metric of the task (set-level FID has no per-clip differences), values
  on every clip the metric scored (the leaderboard's evidence), lower-is-better ones negated for the tests;
  the joint table prints them in their own units and direction. A pair's ``human_difference`` and
  ``metric_difference`` are oriented: positive when ``system_a`` is the better one (a metric's in its own
  units with the sign of "better").
* **P.1401**: items = (system, clip) rated by at least two kept raters with a value of the metric;
  MOS = the clip's mean vote, ci95 from its votes (:func:`hug_vis_dataset.metrics.p1401.vote_ci95`).

Example:
    >>> import pandas as pd
    >>> clips = [f"actor_{a:04d}_happy_action_01_script_00{s}" for a in (1, 2) for s in (1, 2)]
    >>> rows = pd.DataFrame([{"model": m, "task": "vision_driven", "clip_id": c, "metric": "psnr",
    ...                       "value": v + i, "status": "ok"}
    ...                      for m, v in (("a", 30.0), ("b", 20.0)) for i, c in enumerate(clips)])
    >>> ratings = pd.DataFrame([{"rater": r, "clip_id": c, "model": m, "criterion": "id_similarity",
    ...                          "score": s} for r in ("r1", "r2") for c in clips for m, s in (("a", 4), ("b", 2))])
    >>> t = human_metric_tables(rows, ratings, n_boot=0)
    >>> t.summary[["task", "criterion", "metric", "n_systems", "n_actors", "spa"]].values.tolist()
    [['vision_driven', 'id_similarity', 'psnr', 2, 2, 1.0]]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import catalog
from ..metrics import human_agreement as ha
from ..datamodel.results import reserved_label

SOURCES = ("MOS", "pairwise")
PEOPLE = "people"
#: The note of a task with no per-clip metric row (a surface that knows its stored runs says why: weights, or none).
NO_VALUES = "no per-clip values"
SUMMARY_COLUMNS = ("task", "criterion", "source", "metric", "n_systems", "n_actors", "n_pairs", "exact", "spa",
                   "spa_low", "spa_high", "top_k", "spa_top_k", "spa_top_k_low", "spa_top_k_high", "kendall_tau_b",
                   "acc_eq", "acc_eq_epsilon", "n_discordant", "note")
JOINT_COLUMNS = ("task", "criterion", "source", "judge", "system", "value", "low", "high", "rank", "rank_low",
                 "rank_high", "discordant_with")
PAIR_COLUMNS = ("task", "criterion", "source", "metric", "system_a", "system_b", "in_top_k", "human_difference",
                "p_human", "p_human_two_sided", "metric_difference", "p_metric", "p_metric_two_sided", "discordant")
COMPARISON_COLUMNS = ("task", "criterion", "source", "metric_a", "metric_b", "spa_a", "spa_b", "delta", "p_value",
                      "exact", "n_permutations")
PREDICTION_COLUMNS = ("task", "metric", "criterion", "n_items", "n_left_out", "a", "b", "c", "d", "constrained",
                      "rmse", "rmse_star", "outlier_ratio")


class HumanMetricInputError(ValueError):
    """Inputs that give nothing to compare; the message names what is missing and how to get it."""


@dataclass
class HumanMetricTables:
    """The frames of :func:`human_metric_tables` (columns: the ``*_COLUMNS`` constants) and notes on what
    could not be measured, with why."""

    summary: Any
    joint: Any
    pairs: Any
    comparisons: Any
    mos_prediction: Any
    notes: list[str] = field(default_factory=list)

    def records(self) -> dict[str, Any]:
        """Every frame as a list of records (the evaluate module's output), plus the notes."""
        return {name: getattr(self, name).to_dict("records")
                for name in ("summary", "joint", "pairs", "comparisons", "mos_prediction")} | {"notes": self.notes}


# ----------------------------------------------------------------------------- inputs
def _metric_rows(rows, tasks: "Sequence[str] | None" = None):
    import pandas as pd

    from ..datamodel.results import reference_rows

    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    missing = [c for c in ("model", "task", "clip_id", "metric", "value") if c not in frame.columns]
    if missing:
        raise HumanMetricInputError(f"result rows lack columns {missing}: pass the columns of rows.parquet")
    # Only the columns read here (a full grid's rows carry long texts: errors, input digests), one filter.
    frame = frame[[c for c in ("model", "task", "clip_id", "metric", "value", "status", "actor_id") if c in frame]]
    if tasks:  # the asked tasks' rows first (the Space asks one task of a store of every task's millions of rows)
        frame = frame[frame["task"].isin(list(tasks)).to_numpy()]
    # Text columns as categories (the report's rows already are): every filter and group below moves codes.
    frame = frame.astype({c: "category" for c in ("model", "task", "clip_id", "metric") if c in frame
                          and not isinstance(frame[c].dtype, pd.CategoricalDtype)})
    value = frame["value"].astype(float).to_numpy()
    keep = np.isfinite(value) & ~reference_rows(frame["model"]).to_numpy()
    if "status" in frame.columns:
        keep &= (frame["status"].fillna("ok") == "ok").to_numpy()
    return frame[keep].assign(value=value[keep])


def kept_ratings(ratings: Any, all_raters: bool = False):
    """The valid ratings people's scores use (:func:`hug_vis_dataset.studies.judgments.counted_ratings`, the one
    rule: gold items and, unless ``all_raters``, the raters quality control flags left out); ``(ratings, QC)``."""
    from .judgments import counted_ratings

    return counted_ratings(ratings, all_raters)


def _answers(preferences: Any):
    import pandas as pd

    from .answers import read_preferences

    if preferences is None:
        return None
    frame = read_preferences(preferences) if isinstance(preferences, (str, Path)) else pd.DataFrame(preferences)
    return frame.assign(outcome=frame["outcome"].astype(float))


def _actor(clip_ids) -> np.ndarray:
    """The actor of each clip id (one parse per distinct id: a full grid's rows name 8,400 clips)."""
    import pandas as pd

    from ..statistics.basics import actor_of_clip

    codes, uniques = pd.factorize(pd.Series(list(clip_ids) if not hasattr(clip_ids, "dtype") else clip_ids))
    return np.array([actor_of_clip(c) for c in uniques], dtype=np.int64)[codes] if len(uniques) else \
        np.zeros(0, dtype=np.int64)


def _matrix(frame, systems: Sequence[str], value: str):
    """``(S, C)`` values (NaN where missing) over the frame's clips in sorted order, and the clips."""
    import pandas as pd

    c_codes, clips = pd.factorize(frame["clip_id"], sort=True)
    s_codes = pd.Index(list(systems)).get_indexer(np.asarray(frame["model"], dtype=object))
    out = np.full((len(systems), len(clips)), np.nan)
    out[s_codes, c_codes] = frame[value].to_numpy(float)
    return out, [str(c) for c in clips]


# ----------------------------------------------------------------------------- one comparison
def _metric_judges(by_metric: dict, task: str, systems: Sequence[str], actor_pos: dict):
    """The metrics' judges of ``systems``; ``by_metric``: the task's rows split by metric once (every criterion and
    source of the task reads them)."""
    import pandas as pd

    judges, signs = [], {}
    empty = pd.DataFrame(columns=["model", "clip_id", "value"])
    for metric in catalog.table_metrics(task):
        spec = catalog.spec(metric)
        part = by_metric.get(metric, empty)
        mine = part[part["model"].isin(systems)]
        if spec.mode == catalog.SET_LEVEL or mine.empty:
            continue
        mine = mine.groupby(["model", "clip_id"], sort=True)["value"].mean().reset_index()
        values, clips = _matrix(mine, systems, "value")
        sign = 1.0 if spec.higher_is_better else -1.0
        judges.append(ha.judge_from_values(metric, sign * values, np.array([actor_pos[a] for a in _actor(clips)]),
                                           len(actor_pos)))
        signs[metric] = sign
    return judges, signs


def _compare(task, criterion, source, human, metrics, signs, systems, actor_ids, options, out) -> None:
    result = ha.joint_agreement(human, metrics, len(actor_ids), **options)
    pairs = ha.pair_index(len(systems))
    discordant_with: dict[tuple[str, int], list[str]] = {}
    for metric, agree, judged in zip(metrics, result.agreement, result.metrics):
        out["summary"].append({
            "task": task, "criterion": criterion, "source": source, "metric": metric.name,
            "n_systems": len(systems), "n_actors": len(actor_ids), "n_pairs": agree.n_pairs, "exact": result.exact,
            "spa": agree.spa, "spa_low": agree.spa_low, "spa_high": agree.spa_high, "top_k": result.top_k,
            "spa_top_k": agree.spa_top_k, "spa_top_k_low": agree.spa_top_k_low, "spa_top_k_high": agree.spa_top_k_high,
            "kendall_tau_b": agree.kendall_tau_b, "acc_eq": agree.acc_eq,
            "acc_eq_epsilon": agree.acc_eq_epsilon,
            "n_discordant": int(agree.discordant.sum()), "note": result.note})
        for k, (i, j) in enumerate(pairs):
            if agree.discordant[k]:
                discordant_with.setdefault((metric.name, i), []).append(systems[j])
                discordant_with.setdefault((metric.name, j), []).append(systems[i])
            out["pairs"].append({
                "task": task, "criterion": criterion, "source": source, "metric": metric.name,
                "system_a": systems[i], "system_b": systems[j], "in_top_k": bool(result.in_top_k[k]),
                "human_difference": result.human.difference[k], "p_human": result.human.p_one_sided[k],
                "p_human_two_sided": result.human.p_two_sided[k],
                "metric_difference": judged.difference[k], "p_metric": judged.p_one_sided[k],
                "p_metric_two_sided": judged.p_two_sided[k], "discordant": bool(agree.discordant[k])})
    for judged in [result.human, *result.metrics]:
        sign = signs.get(judged.name, 1.0)
        low, high = (judged.low, judged.high) if sign > 0 else (-judged.high, -judged.low)
        for s, system in enumerate(systems):
            out["joint"].append({
                "task": task, "criterion": criterion, "source": source,
                "judge": PEOPLE if judged is result.human else judged.name, "system": system,
                "value": sign * judged.scores[s], "low": low[s], "high": high[s], "rank": judged.rank[s],
                "rank_low": judged.rank_low[s], "rank_high": judged.rank_high[s],
                "discordant_with": ", ".join(discordant_with.get((judged.name, s), []))
                if judged is not result.human else ""})
    for c in result.comparisons:
        out["comparisons"].append({"task": task, "criterion": criterion, "source": source, **c})


def _mos_prediction(rows, votes, task: str, systems: Sequence[str], out: dict) -> None:
    from ..metrics.p1401 import p1401

    for metric in catalog.table_metrics(task) + tuple(m.name for m in catalog.metrics_of(task) if not m.in_table):
        criterion = catalog.spec(metric).predicts_mos
        mine = rows[(rows["metric"] == metric) & rows["model"].isin(systems)]
        if not criterion or mine.empty:
            continue
        rated = votes[(votes["criterion"] == criterion) & votes["model"].isin(systems)]
        groups = rated.groupby(["model", "clip_id"], sort=True)["score"]
        items = groups.agg(["mean", "count", "std"]).reset_index()
        # vote_ci95 of every item at once: t_{0.975}(M - 1) s / sqrt(M), NaN for a single vote.
        items["vote_ci95"] = _vote_ci95(items["count"].to_numpy(), items["std"].to_numpy())
        items = items.drop(columns="std")
        values = mine.groupby(["model", "clip_id"], sort=True)["value"].mean().rename("metric").reset_index()
        items = items.merge(values, on=["model", "clip_id"], how="left")
        usable = items[(items["count"] >= 2) & np.isfinite(items["metric"].astype(float))]
        record = {"task": task, "metric": metric, "criterion": criterion, "n_items": len(usable),
                  "n_left_out": len(items) - len(usable)}
        if len(usable) < 2 or usable["metric"].nunique() < 2:
            out["mos_prediction"].append({**record, "a": math.nan, "b": math.nan, "c": math.nan, "d": math.nan,
                                          "constrained": None, "rmse": math.nan, "rmse_star": math.nan,
                                          "outlier_ratio": math.nan})
            continue
        fit = p1401(usable["metric"].to_numpy(float), usable["mean"].to_numpy(float), usable["vote_ci95"].to_numpy(float))
        out["mos_prediction"].append({**record, **dict(zip("abcd", fit.coefficients)), "constrained": fit.constrained,
                                      "rmse": fit.rmse, "rmse_star": fit.rmse_star, "outlier_ratio": fit.outlier_ratio})


def _vote_ci95(count: np.ndarray, std: np.ndarray) -> np.ndarray:
    """:func:`hug_vis_dataset.metrics.p1401.vote_ci95` of many items from their vote counts and standard
    deviations (``ddof=1``)."""
    from scipy.stats import t

    count = np.asarray(count, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = t.ppf(0.975, np.maximum(count - 1, 1)) * np.asarray(std, dtype=np.float64) / np.sqrt(count)
    return np.where(count >= 2, half, np.nan)


# ----------------------------------------------------------------------------- everything
def human_metric_tables(metric_rows: Any, ratings: Any = None, preferences: Any = None, top_k: int = 3,
                        level: float = ha.DEFAULT_LEVEL, n_resamples: int = ha.DEFAULT_RESAMPLES,
                        n_boot: int = ha.DEFAULT_BOOT, n_perm: int = ha.DEFAULT_PERM, seed: int = 0,
                        all_raters: bool = False, prior: float = 0.5, tasks: "Sequence[str] | None" = None,
                        compare: bool = True, predict: bool = True) -> HumanMetricTables:
    """Every measure of the module docstring per generation task, criterion and human source.

    Args:
        metric_rows: stored per-clip rows (``model, task, clip_id, metric, value[, status]``) of any tasks.
        ratings: a ratings CSV path or its rows (``rater, clip_id, model, criterion, score``).
        preferences: a pairwise CSV path or its rows (``rater, task, clip_id, system_a, system_b,
            criterion, outcome``).
        top_k, level, n_resamples, n_boot, n_perm, seed, compare: see
            :func:`hug_vis_dataset.metrics.human_agreement.joint_agreement`.
        all_raters: keep the raters quality control flags (the MOS tables' unfiltered view).
        prior: virtual ties per compared pair of the Bradley-Terry strengths.
        tasks: the generation tasks to measure (default: every task with a MOS table).
        predict: fit P.1401 for the metrics that predict MOS (the ``mos_prediction`` frame; False: empty).

    Raises:
        HumanMetricInputError: neither ratings nor answers, or no task with both rows and human judgments
            of at least two systems.
    """
    import pandas as pd

    from .bradley_terry import fit_strengths, fit_strengths_batch
    from .mos import TASK_CRITERIA, clip_means

    if ratings is None and preferences is None:
        raise HumanMetricInputError("human_metric_agreement needs ratings=<ratings CSV> (rater, clip_id, model, "
                                    "criterion, score) and/or preferences=<pairwise CSV>")
    rows = _metric_rows(metric_rows, tasks)
    votes = kept_ratings(ratings, all_raters)[0] if ratings is not None else None
    per_clip = clip_means(votes) if votes is not None and len(votes) else None
    answers = _answers(preferences)
    options = dict(top_k=top_k, level=level, n_resamples=n_resamples, n_boot=n_boot, n_perm=n_perm, seed=seed,
                   compare=compare)
    out: dict[str, list] = {k: [] for k in ("summary", "joint", "pairs", "comparisons", "mos_prediction")}
    notes: list[str] = []
    for task in tasks or [t.name for t in catalog.TASKS if t.mos_table]:
        mine = rows[rows["task"] == task]
        if mine.empty:
            notes.append(f"{catalog.task(task).label}: {NO_VALUES}")
            continue
        scored = sorted(set(mine["model"].unique()))
        by_metric = {str(m): part for m, part in mine.groupby("metric", sort=False)}
        sources = []
        if per_clip is not None:
            for criterion in TASK_CRITERIA.get(task, ()):
                rated = per_clip[(per_clip["criterion"] == criterion) & per_clip["model"].isin(scored)]
                if rated["model"].nunique() >= 2:
                    sources.append(("MOS", criterion, rated))
                elif len(rated):
                    notes.append(f"{catalog.task(task).label} / {catalog.label_of(criterion)}: only "
                                 f"{reserved_label(rated['model'].iloc[0])} of the scored systems was rated")
        if answers is not None and "task" in answers.columns:
            mine_answers = answers[answers["task"] == task]
            named = list(TASK_CRITERIA.get(task, ()))  # the paper's order, then any other criterion
            for criterion in named + sorted(set(mine_answers["criterion"].unique()) - set(named)):
                group = mine_answers[mine_answers["criterion"] == criterion]
                group = group[group["system_a"].isin(scored) & group["system_b"].isin(scored)]
                if len(set(group["system_a"].unique()) | set(group["system_b"].unique())) >= 2:
                    sources.append(("pairwise", criterion, group))
        if not sources:
            notes.append(f"{catalog.task(task).label}: fewer than two of its scored systems "
                         f"({', '.join(map(reserved_label, scored))}) were rated or compared")
            continue
        for source, criterion, human_rows in sources:
            if source == "MOS":
                systems = sorted(set(human_rows["model"].unique()))
            else:
                systems = sorted(set(human_rows["system_a"].unique()) | set(human_rows["system_b"].unique()))
            metric_part = mine[mine["model"].isin(systems)]
            actor_ids = sorted(set(_actor(human_rows["clip_id"])) | set(_actor(metric_part["clip_id"])))
            actor_pos = {a: k for k, a in enumerate(actor_ids)}
            metrics, signs = _metric_judges(by_metric, task, systems, actor_pos)
            if not metrics:
                notes.append(f"{catalog.task(task).label} / {catalog.label_of(criterion)}: no per-clip metric rows of "
                             "the rated systems")
                continue
            if source == "MOS":
                values, clips = _matrix(human_rows.rename(columns={"score": "value"}), systems, "value")
                human = ha.judge_from_values(PEOPLE, values, np.array([actor_pos[a] for a in _actor(clips)]),
                                             len(actor_ids))
            else:
                pos = {s: i for i, s in enumerate(systems)}
                ordered = human_rows.sort_values(["clip_id", "system_a", "system_b", "rater"], kind="stable")
                clip_ids = sorted(set(ordered["clip_id"].unique()))
                clip_pos = {c: i for i, c in enumerate(clip_ids)}
                human = ha.judge_from_answers(
                    PEOPLE, ordered["system_a"].map(pos).to_numpy(), ordered["system_b"].map(pos).to_numpy(),
                    ordered["outcome"].to_numpy(float), ordered["clip_id"].map(clip_pos).to_numpy(),
                    np.array([actor_pos[a] for a in _actor(ordered["clip_id"])]), len(systems), len(actor_ids),
                    fit=lambda w: fit_strengths(w, prior), fit_batch=lambda w: fit_strengths_batch(w, prior))
            _compare(task, criterion, source, human, metrics, signs, systems, actor_ids, options, out)
        if votes is not None and predict:
            rated_systems = sorted(set(votes["model"].unique()) & set(scored))
            _mos_prediction(mine, votes, task, rated_systems, out)
    if votes is not None:  # a rated system no task's rows hold is left out: said, never silently
        unscored = sorted(set(votes["model"]) - set(rows["model"]))
        if unscored:
            notes.append(f"rated systems without stored per-clip rows, left out: {', '.join(unscored)}")
    if not out["summary"]:
        raise HumanMetricInputError("no generation task has stored per-clip rows and human judgments of at least two "
                                    "of the same systems: " + "; ".join(notes))
    frames = {k: pd.DataFrame(v, columns=list(c)) for (k, v), c in zip(out.items(), (
        SUMMARY_COLUMNS, JOINT_COLUMNS, PAIR_COLUMNS, COMPARISON_COLUMNS, PREDICTION_COLUMNS))}
    return HumanMetricTables(**frames, notes=notes)

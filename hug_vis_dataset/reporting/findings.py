"""The paper's findings as measurements, from stored rows: one function per finding, shared by
``hugvis report`` (its "Findings" section) and the explorer Space (its Findings tab).

* :func:`variance_frame` -- condition-factor decomposition (finding iv) of each table metric of a task;
* :func:`significance_frame` -- paired tests between leaderboard neighbours (ties at 95%);
* :func:`boundary_frame` -- boundary, thin-structure and moving-region matting errors (finding iii),
  from the rows of ``hugvis evaluate matting_boundary``;
* :func:`mos_agreement_frame` -- automatic metric vs MOS at the top (finding ii), with ratings; with
  pairwise answers also the Bradley-Terry strengths against both (:mod:`hug_vis_dataset.reporting.pairwise`);
* :mod:`hug_vis_dataset.reporting.joint` -- with ratings or pairwise answers, metrics and human judgment
  jointly: SPA, acc_eq, PERM-BOTH, P.1401 and the joint table with discordant pairs (finding ii, measured);
* :func:`detectable_frame` -- the minimum detectable difference per table metric (80% power at 0.05,
  actors as clusters) at the rows' actor count and at the grid's 30, and the neighbours closer than it;
  :func:`noise_floor_markdown` -- the noise floors an audit measured (``hugvis audit robustness``).

Every function takes the stored per-clip rows (all tasks, as ``load_results`` returns them) and
returns a DataFrame; an empty frame comes with the reason (which rows or weights are missing).

Example:
    >>> import pandas as pd
    >>> frame, why = significance_frame(pd.DataFrame(columns=["model", "task", "clip_id", "metric", "value",
    ...                                                          "status"]), "matting")
    >>> len(frame), why
    (0, 'no per-clip values of Video matting: score a submission with `hugvis evaluate matting`')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import catalog
from ..presentation.labels import no_rows, why_no_values  # noqa: F401 (the findings' words for an empty result)
from ..datamodel.results import EMOTION_MODEL_SEP, reference_rows
from ..presentation.tables import markdown_table


def _model_rows(rows, task: str):
    """OK rows of a task's models (reference rows left out); ``(rows, why-empty)``."""
    if rows is None or not len(rows):
        return None, no_rows(task)
    sel = rows[(rows["task"] == task) & ~reference_rows(rows["model"])]
    if "status" in sel.columns:
        sel = sel[sel["status"] == "ok"]
    if sel.empty:
        return None, no_rows(task)
    return sel, ""


def pooled_rows(rows, comparisons=None):
    """The rows an analysis pooling each task's systems uses: per task, the labels of
    :meth:`~hug_vis_dataset.statistics.evidence.Comparisons.pooled` (complete runs of one comparison set; partial
    runs left out), plus the reference rows (Fig. 11's reference motion, Table 9's real audio), which the analyses
    read as references."""
    from ..statistics.evidence import comparisons_of

    if rows is None or not len(rows):
        return rows
    comparisons = comparisons_of(rows, comparisons)
    keep = reference_rows(rows["model"]).to_numpy().copy()
    for task in rows["task"].unique():
        labels = comparisons.pooled(str(task))[0]
        keep |= ((rows["task"] == task) & rows["model"].isin(labels)).to_numpy()
    return rows[keep]


def _table_values(one, task: str, metric: str, tables) -> dict:
    """label -> the metric's value as the task table gives it (paper units; the report's or the stored runs' tables,
    under the task's protocol; else the clip protocol of these rows)."""
    from ..scoring.aggregate import task_table

    table = (tables or {}).get(task)
    if table is None or metric not in getattr(table, "columns", ()):
        table = task_table(one, protocol="clip", metrics=[metric])
    if metric not in table.columns:
        return {}
    return {str(k): float(v) for k, v in table[metric].items() if v == v}


def _neighbours(sel, task: str, comparisons=None, tables=None, evidence=None):
    """``(comparison set, metric, spec, rows, verdicts)`` of each per-clip table metric that at least two systems of a
    comparison set share: the systems ranked as the task table prints them (the board's order:
    :func:`hug_vis_dataset.statistics.ranking.order` on the printed values), each against the next one down
    (:func:`hug_vis_dataset.statistics.verdicts.compare`, the one verdict every surface shows)."""
    from ..statistics.evidence import comparisons_of
    from ..statistics.ranking import Entry, order
    from ..statistics.verdicts import neighbour_verdicts

    comparisons = comparisons_of(sel, comparisons)
    for name, labels in comparisons.sets(task).items():
        mine = sel[sel["model"].isin(labels)]
        for metric in catalog.table_metrics(task):
            spec = catalog.spec(metric)
            one = mine[mine["metric"] == metric]
            if one["model"].nunique() < 2 or spec.mode == catalog.SET_LEVEL:
                continue
            values = _table_values(one, task, metric, tables)
            entries = [Entry(label, name, float(spec.printed(values[label])), label) for label in sorted(set(one["model"].unique()))
                       if label in values]
            ranked = [e.label for e in order(entries, spec.higher_is_better)]
            yield name, metric, spec, one, neighbour_verdicts(evidence if evidence is not None else one, task, metric,
                                                              ranked)


def _set_columns(task: str, name: str) -> dict:
    """The display columns naming a comparison set: ``Input`` (Table 4's setting) and ``Compared among``."""
    pool, _, setting = name.partition(" | ")
    return {"Input": setting, "Compared among": pool}


def _drop_constant_set(frame, task: str):
    """Drop ``Input`` outside Table 4 and ``Compared among`` when every row has the same comparison set."""
    drop = [] if task == "emotion" else ["Input"]
    if frame["Compared among"].nunique() <= 1:
        drop.append("Compared among")
    return frame.drop(columns=[c for c in drop if c in frame.columns])


def significance_frame(rows, task: str, comparisons=None, tables=None, evidence=None):
    """Each table metric's leaderboard neighbours and the verdict of each comparison (actors as clusters), per
    comparison set (a partial run only against partial runs, Table 4 per input setting).

    Returns:
        ``(frame, why)``: one row per (comparison set, metric, neighbour pair) with the display columns
        ``Input`` (emotion only), ``Compared among`` (when there is more than one comparison set), ``Metric``,
        ``Model``, ``Next model``, ``Difference`` (paper units, positive when the model is better), ``95% interval``,
        ``p``, ``Actors``, ``Verdict`` and ``Why``.
    """
    import pandas as pd

    from ..statistics.evidence import comparisons_of

    comparisons = comparisons_of(rows, comparisons)  # from every row: a partial run's missing clips are failed rows
    sel, why = _model_rows(rows, task)
    if sel is None:
        return pd.DataFrame(), why
    records = []
    for name, metric, spec, _, verdicts in _neighbours(sel, task, comparisons, tables, evidence):
        for v in verdicts:
            interval = (f"[{v.ci_low:.4g}, {v.ci_high:.4g}]" if v.ci_low == v.ci_low and v.ci_high == v.ci_high
                        else "")
            records.append({**_set_columns(task, name), "Metric": spec.label, "Model": v.model,
                            "Next model": v.next_model, "Difference": v.difference, "95% interval": interval,
                            "p": v.p_value, "Actors": v.n_actors, "Verdict": v.word, "Why": v.why})
    if not records:
        return pd.DataFrame(), f"{catalog.task(task).label}: fewer than two models share a per-clip metric"
    return _drop_constant_set(pd.DataFrame(records), task), ""


def variance_frame(rows, task: str, comparisons=None, samples=None):
    """Shares of variance per table metric of a task (the task's pooled systems:
    :meth:`~hug_vis_dataset.statistics.evidence.Comparisons.pooled`; a partial run left out). A run scored over
    several samples per clip (``samples``: ``(task, model) -> per-sample rows``) enters with its samples, so the
    decomposition has its sample (seed) term (:func:`metric_rows_with_samples`).

    Returns:
        ``(frame, decompositions, why)``: frame rows ``metric``, ``term``, ``share``, ``method``;
        ``decompositions`` metric -> :class:`~hug_vis_dataset.metrics.variance.VarianceDecomposition`.
    """
    import pandas as pd

    from ..metrics.variance import VarianceInputError, variance_decomposition

    sel, why = _model_rows(pooled_rows(rows, comparisons), task)
    if sel is None:
        return pd.DataFrame(), {}, why
    mine = runs_with_samples(sel, task, samples)
    decompositions, records, problems = {}, [], []
    for metric in catalog.table_metrics(task):
        one = sel[sel["metric"] == metric]
        if one.empty or catalog.spec(metric).mode == catalog.SET_LEVEL:
            continue
        if mine:  # the runs of several samples per clip enter with their samples: the sample (seed) term
            one = metric_rows_with_samples(one, metric, mine, VARIANCE_COLUMNS)
        try:
            result = variance_decomposition(one)
        except VarianceInputError as err:
            problems.append(f"{catalog.label_of(metric)}: {err}")
            continue
        decompositions[metric] = result
        records += [{"metric": metric, "term": term, "share": share, "method": result.method}
                    for term, share in result.shares().items()]
    if not records:
        return pd.DataFrame(), {}, "; ".join(problems) or f"{catalog.task(task).label}: no per-clip metric rows"
    return pd.DataFrame(records), decompositions, ""


#: The columns the variance decomposition reads (the grid cell, the value, the status and the sample).
VARIANCE_COLUMNS = ("model", "actor_id", "emotion", "action_id", "script_id", "value", "status")


def runs_with_samples(rows, task: str, samples=None) -> dict:
    """``model -> per-sample rows`` of the runs of ``task`` among ``rows`` that hold several samples per clip
    (``samples``: ``(task, model) -> rows``, :func:`hug_vis_dataset.reporting.report.load_results`); a run left out of
    ``rows`` (a partial run of a pooled analysis) stays out."""
    if rows is None or not len(rows) or not samples:
        return {}
    labels = {str(m) for m in rows.loc[rows["task"] == task, "model"].unique()}
    return {model: part for (t, model), part in samples.items()
            if t == task and model in labels and part is not None and len(part)}


def metric_rows_with_samples(one, metric: str, mine: dict, columns) -> "object":
    """One metric's rows ``one`` (per clip) with each run of ``mine`` replaced by its samples of that metric; only
    ``columns`` (and the sample) kept, so a full grid's samples concatenate in a moment."""
    import pandas as pd

    from ..datamodel.results import SAMPLE_COLUMN

    keep = [c for c in columns if c in one.columns]
    parts = [_plain(one.loc[~one["model"].isin(list(mine)).to_numpy(), keep])]
    for part in mine.values():
        picked = part.loc[(part["metric"] == metric).to_numpy(), [*keep, SAMPLE_COLUMN]]
        parts.append(_plain(picked))
    out = pd.concat([p for p in parts if len(p)], ignore_index=True)
    out[SAMPLE_COLUMN] = out[SAMPLE_COLUMN].fillna(0).astype("int64")
    return out


def _plain(frame):
    """``frame`` with its category columns as plain objects (frames of other categories concatenate)."""
    return frame.astype({c: "object" for c in frame.columns if str(frame[c].dtype) == "category"})


def seeds_frames(rows, task: str, samples=None, comparisons=None, tables=None, evidence=None, n_draws: "int | None" = None,
                 seed: int = 0):
    """What the samples of a task's runs scored over several samples per clip say (``samples``: ``(task, model) ->
    per-sample rows``): the seed spread per system and metric (:func:`hug_vis_dataset.statistics.seeds.seed_spread`,
    paper units) and, per comparison set and table metric, each neighbour pair of the task table (the board's order,
    with the pair's verdict) that involves such a run, with the share of one-seed evaluations keeping its order
    (:func:`hug_vis_dataset.statistics.seeds.rank_stability`; a run of one sample per clip enters a draw with its one
    value).

    Returns:
        ``(spread, stability, figure input, why)``: ``spread`` rows Model, Metric, Seeds, Clips, Seed SD of a clip,
        Seed SD of the mean; ``stability`` rows (Compared among), Metric, Model, Next model, Verdict, Share kept;
        ``figure input``: metric label -> the pairs for :func:`hug_vis_dataset.reporting.figures.plot_rank_stability`;
        ``why``: why there is nothing (empty when there is something).
    """
    import pandas as pd

    from ..datamodel.results import SAMPLE_COLUMN
    from ..statistics.rules import N_BOOT
    from ..statistics.seeds import rank_stability, seed_spread

    mine = runs_with_samples(rows, task, samples)
    label = catalog.task(task).label
    if not mine:
        stored = rows is not None and len(rows) and (rows["task"] == task).any()
        return pd.DataFrame(), pd.DataFrame(), {}, (f"{label}: every run holds one sample per clip, so there is no "
                                                    "seed statistic" if stored else no_rows(task))
    columns = ("model", "clip_id", "metric", "value", "status")  # what the seed statistics read
    spread_records = []
    shown = [m for m in catalog.table_metrics(task) if m in catalog.METRIC_NAMES]
    for model in sorted(mine):
        picked = mine[model].loc[mine[model]["metric"].isin(shown).to_numpy(), [*columns, SAMPLE_COLUMN]]
        spread = {str(r["metric"]): r for r in seed_spread(_plain(picked)).to_dict("records")}
        for metric in (m for m in shown if m in spread):
            r = spread[metric]
            scale = catalog.spec(metric).paper_scale
            spread_records.append({"Model": model, "Metric": catalog.label_of(metric), "Seeds": r["k"],
                                   "Clips": int(r["n_clips"]), "Seed SD of a clip": r["within_sd"] * scale,
                                   "Seed SD of the mean": r["mean_sd"] * scale})
    stability, figure = [], {}
    sel, _ = _model_rows(rows, task)
    for name, metric, spec, one, verdicts in (_neighbours(sel, task, comparisons, tables, evidence)
                                              if sel is not None else ()):
        if not any(v.model in mine or v.next_model in mine for v in verdicts):
            continue
        ranked = [v.model for v in verdicts] + [verdicts[-1].next_model]
        draws = metric_rows_with_samples(one[one["model"].isin(ranked).to_numpy()], metric,
                                         {m: part for m, part in mine.items() if m in ranked}, columns)
        # One call per column: each system drawn once, each pair over its own common clips (as its verdict).
        shares = rank_stability(draws, metric, ranked, spec.higher_is_better, n_draws or N_BOOT, seed)
        for v, share in zip(verdicts, shares):
            if v.model in mine or v.next_model in mine:
                stability.append({**_set_columns(task, name), "Metric": spec.label, "Model": v.model,
                                  "Next model": v.next_model, "Verdict": v.word, "Share kept": share["share_kept"],
                                  "Clips": share["n_clips"]})
                figure.setdefault(spec.label, []).append(share)
    return (pd.DataFrame(spread_records), _drop_constant_set(pd.DataFrame(stability), task) if stability
            else pd.DataFrame(), figure, "")


#: What the "Seeds" block says before its tables.
SEEDS_INTRO = ("A run may score several samples per clip (a stochastic model's seeds: `<clip>/sample_<k>`); its table "
               "values are the means over clips of each clip's sample mean, and every interval and verdict, "
               "resampling actors over those means, already carries the seed noise. Seed SD of a clip: the typical "
               "seed-to-seed standard deviation of one clip's value; Seed SD of the mean: the standard deviation "
               "seed noise alone gives a one-sample-per-clip score (paper units). Share kept: per neighbour pair of "
               "the table (with its verdict), the share of one-seed evaluations, one of each clip's samples drawn at "
               "random, in which the better-ranked system still scores better on their common clips.")


def seeds_markdown(of_task, tasks, samples, comparisons, tables, evidence, out_dir, figures: bool, files: list,
                   step=None) -> list[str]:
    """The "Seeds" block of the findings (:func:`seeds_frames` per task; a figure per task with rank stability);
    one line when no run holds several samples per clip."""
    from ..presentation.tables import markdown_table

    step = step or (lambda text: None)
    md = ["### Seeds: runs scored over several samples per clip", ""]
    if not any(t in tasks for t, _ in (samples or {})):
        return md + ["Every run holds one sample per clip, so there is no seed statistic: a stochastic model's "
                     "submission may give `<clip>/sample_<k>` predictions (docs/SCORING.md, \"Several samples per "
                     "clip\").", ""]
    step("findings: seeds ...")
    md += [SEEDS_INTRO, ""]
    for task in tasks:
        spread, stability, figure, why = seeds_frames(of_task[task], task, samples, comparisons, tables, evidence)
        if spread.empty:
            continue
        md += [f"**{catalog.task(task).label}**, seed spread:", "", markdown_table(spread, 4), ""]
        if not stability.empty:
            md += [f"**{catalog.task(task).label}**, rank stability of neighbours:", "", markdown_table(stability, 3), ""]
        if figures and out_dir and figure:
            from .figures import plot_rank_stability

            paths = plot_rank_stability(figure, out_dir / "figures" / f"rank_stability_{task}",
                                        title=f"{catalog.task(task).label}: rank stability under one-seed draws")
            files.extend(paths)
            md += [f"- figure: {', '.join(p.name for p in paths)}", ""]
    return md


def variance_table(frame):
    """The decomposition as a reader reads it: one row per condition factor (``Condition factor``), one column per
    metric under its label, each cell the share of variance (:func:`variance_frame`'s long frame, pivoted)."""
    from ..presentation.labels import variance_term

    wide = frame.pivot_table(index="term", columns="metric", values="share", sort=False)
    wide.index = [variance_term(t) for t in wide.index]
    wide.index.name = "Condition factor"
    return wide.rename(columns=catalog.label_of)


def boundary_frame(rows, regions: "tuple[str, ...]" = ("band_10", "thin", "bulk", "moving"), error: str = "mad"):
    """Per model: one error (default MAD) in chosen regions, clip protocol (mean over clips).

    Returns:
        ``(frame, why)``: index model, one column per ``<error>_<region>``, plus ``n_ok``.
    """
    import pandas as pd

    from ..scoring.aggregate import task_table

    sel, why = _model_rows(rows, "matting_boundary")
    if sel is None:
        return pd.DataFrame(), why
    metrics = [f"{error}_{r}" for r in regions]
    table = task_table(rows[rows["task"] == "matting_boundary"], protocol="clip", metrics=metrics)
    table = table[[m for m in metrics if m in table.columns] + ["n_ok"]]
    table.index.name = "Model"
    return table.rename(columns={**{m: catalog.spec(m).label for m in metrics}, "n_ok": "Clips scored"}), ""


def mos_agreement_frame(rows, ratings: "str | Path", n_boot: int = 200, seed: int = 0, all_raters: bool = False):
    """Metric vs MOS agreement per generation task with stored rows and ratings of the same models (the ratings that
    count: :func:`hug_vis_dataset.studies.judgments.counted_ratings`, as in the MOS tables)."""
    import pandas as pd

    from ..modules import ModuleInputError, mos_agreement_by_task

    try:
        out = mos_agreement_by_task(rows, ratings=ratings, n_boot=n_boot, seed=seed, all_raters=all_raters)
    except ModuleInputError as err:
        return pd.DataFrame(), str(err)
    from ..presentation.labels import readable

    frame = pd.concat([pd.DataFrame(v).assign(task=k) for k, v in out.items()], ignore_index=True)
    return readable(frame[["task", *[c for c in frame.columns if c != "task"]]]), ""


def detectable_frame(rows, task: str, actor_counts: "tuple[int, ...]" = (30, 10, 6), comparisons=None, tables=None,
                     evidence=None):
    """Minimum detectable difference of each per-clip table metric of a task (paper units).

    Returns:
        ``(frame, why)``: one row per (input setting, metric) with the rows' ``Actors`` and ``Clips per actor``,
        the pooled ``MDD`` at that design and at each of ``actor_counts``, the ``ICC`` of the differences, and
        ``Neighbour verdicts``: the verdicts of the neighbour comparisons in their own words (the same verdicts
        as the significance table and the board: :mod:`hug_vis_dataset.verdicts`).
    """
    import pandas as pd

    from ..metrics.power import PowerInputError, detectable_differences
    from ..statistics.evidence import comparisons_of
    from ..statistics.verdicts import verdict_counts

    comparisons = comparisons_of(rows, comparisons)
    sel, why = _model_rows(rows, task)
    if sel is None:
        return pd.DataFrame(), why
    records = []
    for name, metric, spec, one, verdicts in _neighbours(sel, task, comparisons, tables, evidence):
        base = {**_set_columns(task, name), "Metric": spec.label}
        try:
            out = detectable_differences(one, spec.higher_is_better, actor_counts, scale=spec.paper_scale)
        except PowerInputError as err:
            records.append({**base, "Note": str(err), "Neighbour verdicts": verdict_counts(verdicts)})
            continue
        pooled = out["pooled"]
        records.append({**base, "Actors": out["n_actors"], "Clips per actor": out["clips_per_actor"],
                        "MDD": _within_scale(pooled["mdd"] if pooled else float("nan"), spec),
                        **{f"MDD at {a} actors": _within_scale(out["by_actors"].get(a, float("nan")), spec)
                           for a in actor_counts},
                        "ICC": pooled["icc"] if pooled else float("nan"),
                        "Neighbour verdicts": verdict_counts(verdicts), "Note": ""})
    if not records:
        return pd.DataFrame(), f"{catalog.task(task).label}: fewer than two models share a per-clip metric"
    return _drop_constant_set(pd.DataFrame(records), task), ""


#: What an MDD wider than its metric's whole scale means (an accuracy cannot differ by more than 100 points).
SCALE_WORDS = ("an MDD wider than the metric's whole scale reads \"> <scale> (the whole scale)\": no difference the "
               "metric can take would be detected")


def _within_scale(mdd: float, spec) -> "float | str":
    """An MDD as a table prints it: the number, or ``"> <width>"`` when it exceeds the width of the metric's bounded
    scale in paper units (Acc. (%): 100), where no difference the metric can take would be detected.

    Example:
        >>> _within_scale(185.2, catalog.spec("emotion_accuracy")), _within_scale(23.0, catalog.spec("emotion_accuracy"))
        ('> 100 (the whole scale)', 23.0)
        >>> _within_scale(1e6, catalog.spec("mad"))   # MAD's scale (x1e3) is 0-1000
        '> 1000 (the whole scale)'
    """
    import math

    low, high = spec.value_range
    width = (high - low) * spec.paper_scale
    if spec.range_is_bound and math.isfinite(width) and math.isfinite(mdd) and mdd > width:
        return f"> {width:g} (the whole scale)"
    return mdd


def noise_floor_markdown(audit_dir: "str | Path") -> list[str]:
    """The "Noise floor under ordinary processing" block from an audit folder (empty list when none)."""
    from ..audit.robustness import load_robustness, robustness_markdown

    audits = load_robustness(audit_dir)
    if not audits:
        return []
    return ["### Noise floor under ordinary processing (`hugvis audit robustness`)", "",
            "Each transform applied to the reference media and scored as a pseudo-system (never ranked); "
            "shift = mean per-clip change against the untouched reference with a 95% actor-clustered "
            "interval; the last column counts the paper table's neighbour gaps smaller than the shift.", "",
            robustness_markdown(audits), ""]


def methods_text(decompositions: "dict[str, Any]") -> str:
    """The decomposition method of each metric in words, grouped by method.

    Example:
        >>> from types import SimpleNamespace as D
        >>> methods_text({"mad": D(method="balanced"), "mse": D(method="balanced"), "grad": D(method="sequential")})
        "MAD, MSE: a complete, balanced grid (each factor's share from its marginal means, the same in any order); Grad: an unbalanced grid (sequential type-I sums of squares: a share depends on the factor order)"
    """
    by_method: dict[str, list[str]] = {}
    for metric, result in decompositions.items():
        label = catalog.label_of(metric)
        by_method.setdefault(str(result.method), []).append(label)
    return "; ".join(f"{', '.join(names)}: {METHOD_WORDS.get(m, m)}" for m, names in by_method.items())


#: What each decomposition method means, as every surface words it.
METHOD_WORDS = {"balanced": "a complete, balanced grid (each factor's share from its marginal means, the same in any "
                            "order)",
                "sequential": "an unbalanced grid (sequential type-I sums of squares: a share depends on the factor "
                              "order)"}


def findings_markdown(rows, out_dir: "Path | None", figures: bool, files: list, mos: Any = None,
                      preferences: Any = None, n_boot: "int | None" = None, paper: bool = True,
                      all_raters: bool = False, formats: "tuple[str, ...]" = ("md",), comparisons=None,
                      evidence=None, tables=None, step=None, summaries=None, samples=None) -> list[str]:
    """The report's "Findings" section (every table computed from the stored rows); ``preferences``
    (a pairwise CSV) adds the pairwise source (:mod:`hug_vis_dataset.reporting.pairwise`); with either, the
    joint view of metrics and human judgment (:mod:`hug_vis_dataset.reporting.joint`, ``n_boot`` replicates;
    ``paper``: with what the paper's own tables allow; ``all_raters``: keep the raters quality control flags;
    ``formats``: of the joint table's files).

    The statistics engine's rules hold throughout: neighbours are compared within the board's comparison sets
    (``comparisons``, default from the rows), ranked by the task tables' printed values (``tables``, default the
    clip protocol of the rows); analyses that pool a task's systems use its complete runs
    (:func:`pooled_rows`); ratings are the counted ones. ``evidence``: the rows' ``RowsIndex`` (arranged once);
    ``step``: called with a line per step (progress); ``summaries``: the stored runs' summaries (why a task has no
    per-clip value); ``samples``: ``(task, model) -> per-sample rows`` of the runs scored over several samples per
    clip (the variance decomposition's sample term and the "Seeds" block).
    """
    from ..statistics.evidence import comparisons_of
    from ..statistics.verdicts import CANNOT_TELL, NOT_SEPARABLE, SEPARABLE

    step = step or (lambda text: None)
    comparisons = comparisons_of(rows, comparisons)
    pooled = pooled_rows(rows, comparisons)
    # Each task's rows split off once: every finding of a task reads only them.
    of_task = {str(t): part for t, part in rows.groupby("task", sort=False)} if rows is not None else {}
    pooled_of = {str(t): part for t, part in pooled.groupby("task", sort=False)} if pooled is not None else {}
    md = ["## Findings (measured from the stored rows)", ""]
    tasks = [t for t in catalog.task_names(with_paper_table=True) if t in of_task]
    left = [comparisons.left_out_words(t) for t in tasks]
    if any(left):
        md += [f"- {line}" for line in left if line] + [""]
    md += ["### Significance between leaderboard neighbours", "",
           f"Each system against the next one down, as the table ranks them, within its comparison set (as the "
           f"board: a partial run only against partial runs): a paired sign-flip test on their "
           f"common clips, actors as clusters (exact when 2^actors <= 9999). The verdict is **{SEPARABLE}** "
           f"(p < 0.05), **{NOT_SEPARABLE}** (the test could decide and did not), or **{CANNOT_TELL}** (the design "
           f"cannot decide: with fewer than 6 actors no gap can reach p < 0.05); the board marks the last two "
           f"≈ and ? (the statistics engine's verdicts).", ""]
    step("findings: significance between neighbours ...")
    for task in tasks:
        frame, why = significance_frame(of_task[task], task, comparisons, tables, evidence)
        md += [f"**{catalog.task(task).label}**: {why}" if frame.empty else f"**{catalog.task(task).label}**:", ""]
        if not frame.empty:
            md += [markdown_table(frame, 4), ""]
    md += ["### Condition-factor decomposition of variance (finding iv)", ""]
    step("findings: variance decomposition ...")
    for task in tasks:
        frame, decompositions, why = variance_frame(pooled_of.get(task, pooled.iloc[:0]), task, comparisons, samples)
        if frame.empty:
            md += [f"**{catalog.task(task).label}**: {why}", ""]
            continue
        md += [f"**{catalog.task(task).label}** (share of variance; {methods_text(decompositions)}):", "",
               markdown_table(variance_table(frame), 3, index=True), ""]
        if figures and out_dir:
            from .figures import plot_variance_decomposition

            paths = plot_variance_decomposition(decompositions, out_dir / "figures" / f"variance_{task}",
                                                title=f"{catalog.task(task).label}: share of variance")
            files.extend(paths)
            md += [f"- figure: {', '.join(p.name for p in paths)}", ""]
    md += seeds_markdown(of_task, tasks, samples, comparisons, tables, evidence, out_dir, figures, files, step)
    md += ["### Smallest detectable difference (80% power at alpha = 0.05)", "",
           "Per metric, the difference between two systems the stored rows' design detects with 80% power "
           "(paired per-clip differences, actors as clusters, variance components pooled over neighbour pairs; "
           "formulas in docs/FINDINGS.md), at the rows' actor count and at others with the same clips per "
           f"actor; {SCALE_WORDS}; Neighbour verdicts repeats the significance table's verdicts in its words.", ""]
    step("findings: detectable differences ...")
    for task in tasks:
        frame, why = detectable_frame(of_task[task], task, comparisons=comparisons, tables=tables, evidence=evidence)
        md += [f"**{catalog.task(task).label}**: {why}" if frame.empty else f"**{catalog.task(task).label}**:", ""]
        if not frame.empty:
            md += [markdown_table(frame, 3), ""]
    md += ["### Boundary, thin-structure and moving-region matting errors (finding iii)", ""]
    frame, why = boundary_frame(pooled_of.get("matting_boundary", pooled.iloc[:0]))
    md += [why if frame.empty else markdown_table(frame, 4, index=True), ""]
    if mos is not None:
        step("findings: automatic metrics vs MOS ...")
        md += ["### Automatic metrics vs MOS at the top (finding ii)", ""]
        frame, why = mos_agreement_frame(pooled, mos, all_raters=all_raters)
        md += [why if frame.empty else markdown_table(frame, 3), ""]
    if preferences is not None:
        from .pairwise import INTRO, TITLE, pairwise_frames

        step("findings: pairwise preferences (Bradley-Terry) ...")
        md += [TITLE, "", INTRO, ""]
        for frame, why in pairwise_frames(pooled, preferences, mos, all_raters=all_raters):
            md += [why if frame.empty else markdown_table(frame, 3), ""]
    if mos is not None or preferences is not None:
        from .joint import joint_markdown

        step("findings: metrics and human judgment jointly ...")
        md += joint_markdown(pooled, mos, preferences, out_dir, files, n_boot, paper, all_raters, tuple(formats),
                             summaries)
    return md

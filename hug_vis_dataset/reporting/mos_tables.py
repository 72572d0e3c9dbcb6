"""The report's subjective-study section: Tables 6/8/10 (MOS per criterion) from a ratings CSV, the
raters quality control keeps (:mod:`hug_vis_dataset.studies.mos_qc`), intervals, agreement, and the MOS vs
automatic-metric joint view. Split from :mod:`hug_vis_dataset.reporting.report`, which calls :func:`_mos_section`."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from .. import catalog
from ..presentation.escaping import markdown_code_text, markdown_text
from ..presentation.labels import readable
from ..presentation.tables import markdown_table
from ..datamodel.layout import SIMULATED_RATINGS_FILE, SIMULATED_SYSTEMS_DIR

#: After a model name whose ratings are the synthetic release's simulated raters (the Space's label).
SIMULATED_LABEL = " (simulated raters)"

FORMATS = {"md": "markdown", "tex": "latex", "html": "html"}

MOS_PAPER_TABLE = {"audio_driven": "Table 6", "vision_driven": "Table 8", "voice_cloning": "Table 10"}
# Criteria that only one task rates: they tell which task a rated model belongs to.
_DISTINCTIVE = {"lip_sync": "audio_driven", "motion_naturalness": "vision_driven"}


def mos_model_tasks(models_criteria: "dict[str, set[str]]", summaries: Sequence[dict] = ()) -> "tuple[dict, dict]":
    """Assign every rated model to a MOS task; returns ``(model -> task, model -> why unassigned)``.

    The ratings CSV has no task column, so a model's task comes from its criteria when one is
    task-specific (``lip_sync``: audio-driven, ``motion_naturalness``: vision-driven); otherwise
    from the stored results (``summary.json`` of ``hugvis evaluate``) when they name exactly one MOS
    task for the model; otherwise voice cloning, whose criteria are exactly the shared ones.

    Example:
        >>> mos_model_tasks({"a": {"lip_sync", "id_similarity"}, "b": {"id_similarity"},
        ...                  "c": {"id_similarity"}, "d": {"lip_sync", "motion_naturalness"}},
        ...                 [{"task": "vision_driven", "model": "c"}])[0]
        {'a': 'audio_driven', 'b': 'voice_cloning', 'c': 'vision_driven'}
    """
    from ..studies.mos import TASK_CRITERIA

    stored: dict[str, set[str]] = {}
    for s in summaries:
        if s.get("task") in TASK_CRITERIA:
            stored.setdefault(s["model"], set()).add(s["task"])
    tasks, unassigned = {}, {}
    for model in sorted(models_criteria):
        hinted = {_DISTINCTIVE[c] for c in models_criteria[model] if c in _DISTINCTIVE}
        if len(hinted) > 1:
            both = " and ".join(catalog.label_of(c) for c in _DISTINCTIVE)
            unassigned[model] = f"rated on both {both} (model names must be unique per task)"
        elif hinted:
            tasks[model] = hinted.pop()
        elif len(stored.get(model, ())) > 1:
            unassigned[model] = f"stored results name several tasks ({', '.join(sorted(stored[model]))})"
        else:
            tasks[model] = next(iter(stored.get(model, ())), "voice_cloning")
    return tasks, unassigned


def render_mos_table(task: str, mos, fmt: str = "markdown", cis: "dict | None" = None, evidence=None) -> str:
    """One task's MOS table shaped like the paper's Table 6, 8 or 10.

    Args:
        task: ``audio_driven``, ``vision_driven`` or ``voice_cloning``.
        mos: model x criterion MOS (a wide frame, index = model); criteria of the task that were
            not rated print as a dash.
        fmt: ``markdown``, ``latex`` or ``html``.
        cis: ``(model, criterion) -> BootstrapCI``: each MOS's 95% actor-clustered interval, printed beside it, with
            the small-sample mark where it cannot be read as one (:func:`hug_vis_dataset.statistics.rules.interval_mark`).
        evidence: the per-clip MOS rows (``task``, ``model``, ``metric`` = criterion, ``clip_id``, ``value``): each
            system is compared with the next-ranked one (the one verdict) and best / second are drawn only where the
            verdicts separate them, as on the board; None: marks by printed value alone.

    Example:
        >>> import pandas as pd
        >>> m = pd.DataFrame({"id_similarity": [4.2, 3.1], "emotion_naturalness": [4.0, 4.5]}, index=["a", "b"])
        >>> for line in render_mos_table("voice_cloning", m).splitlines()[2:]:
        ...     print(line)
        | Model | ID Similarity ↑ | Emotion Naturalness ↑ |
        | --- | ---: | ---: |
        | a | **4.20** | <u>4.00</u> |
        | b | <u>3.10</u> | **4.50** |
    """
    from ..studies.mos import CRITERIA, TASK_CRITERIA
    from ..presentation.tables import render_table
    from .table_marks import table_marks

    criteria = list(TASK_CRITERIA[task])
    frame = mos.reindex(columns=criteria).rename_axis("model").reset_index()
    caption = f"{MOS_PAPER_TABLE[task]}-shaped subjective results (MOS, 1-5) for {catalog.task(task).label}"
    marked = suffixes = None
    intervals = {}
    if cis is not None or evidence is not None:
        frame["_label"], frame["_origin"] = frame["model"].astype(str), "subset"
        marked, suffixes, legends = table_marks(task, frame, criteria, {}, [], cis, None, None, evidence, CRITERIA)
        intervals = {(i, c): (ci.low, ci.high) for i, model in enumerate(frame["model"]) for c in criteria
                     for ci in [(cis or {}).get((model, c))] if ci is not None and ci.n_clusters >= 2}
        caption += "; each cell: MOS [95% actor-clustered interval]" + "".join(f". {line}" for line in legends)
    # MOS criteria are not automatic metrics (not in METRIC_INFO): direction and header given here.
    return render_table(frame[["model", *criteria]], metrics=criteria, fmt=fmt,
                        higher_is_better={c: True for c in criteria}, display={c: CRITERIA[c] for c in criteria},
                        scales={c: 1.0 for c in criteria}, caption=caption, intervals=intervals, marked=marked,
                        suffixes=suffixes)


def _joint_gaps(task: str, criteria: "set[str]", tables, summaries) -> list[str]:
    """Why each rated criterion of ``task`` has no joint-view row (no silent omission)."""
    from ..studies.mos import matching_pairs

    gaps = []
    table = tables[task][0] if task in tables else None
    for criterion, metric in matching_pairs(task):
        if criterion not in criteria:
            continue
        if table is None or metric not in table.columns or not table[metric].notna().any():
            why = next((s["metrics"]["skipped"][metric] for s in summaries
                        if s.get("task") == task and metric in s.get("metrics", {}).get("skipped", {})),
                       "no stored run computed it")
            gaps.append(f"- {catalog.task(task).label} / {catalog.label_of(criterion)}: matching metric "
                        f"{catalog.label_of(metric)} not available ({markdown_code_text(why)})")
    return gaps


def _labelled(cis: "dict | None", evidence, label: str) -> tuple:
    """``(cis, evidence)`` keyed by the names the table prints (``label`` after each model)."""
    if not label:
        return cis, evidence
    cis = {(f"{m}{label}", c): ci for (m, c), ci in (cis or {}).items()}
    return cis, (evidence.assign(model=evidence["model"] + label) if evidence is not None else None)


def _mos_html(task: str, wide, table, simulated: bool, qc_line: str, cis=None, evidence=None) -> str:
    """One task's MOS table as a whole HTML document: the ranked MOS (models marked "(simulated raters)"
    where they are), then every MOS with its 95% actor-clustered interval and the clips, ratings and
    actors behind it, the rater-QC note, and a warning for intervals that collapsed to a point."""
    import html as escape_html

    from ..statistics.basics import format_interval
    from ..statistics.rules import COLLAPSED, collapsed as collapsed_interval, small_sample_legend
    from .html import html_note, html_page

    label = SIMULATED_LABEL if simulated else ""
    body = [render_mos_table(task, wide.rename(index=lambda m: f"{m}{label}"), "html", *_labelled(cis, evidence, label))]
    rows = []
    collapsed = []
    for (model, criterion), row in table.iterrows():
        actors = int(row["n_actors"]) if "n_actors" in row and row["n_actors"] == row["n_actors"] else 0
        low, high = float(row["ci_low"]), float(row["ci_high"])
        # The small-sample and collapsed marks come with the interval (statistics.rules), as on the board.
        cell = format_interval(float(row["mos"]), low, high, actors) if actors else f"{float(row['mos']):.2f} [n/a]"
        if actors >= 2 and collapsed_interval(low, high):
            collapsed.append(f"{model}{label} {catalog.label_of(criterion)}")
        rows.append("<tr>" + "".join(f"<td>{escape_html.escape(str(v))}</td>" for v in (
            f"{model}{label}", catalog.label_of(criterion), cell, int(row["n_clips"]), int(row["n_ratings"]), actors)) + "</tr>")
    body.append("<table><caption>MOS with its 95% actor-clustered bootstrap interval and the counts behind it"
                "</caption><thead><tr><th>Model</th><th>Criterion</th><th>MOS [95% interval]</th><th>Clips</th>"
                "<th>Ratings</th><th>Actors</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    if simulated:
        body.append(html_note("Simulated raters (the synthetic release's), not human judgements."))
    if qc_line:
        body.append(html_note(qc_line.replace("\\", "")))
    if collapsed:
        body.append(html_note(f"? on a MOS interval ({', '.join(collapsed)}): {COLLAPSED}; rate clips of more actors."))
    small = small_sample_legend(table["n_actors"].dropna().astype(int)) if "n_actors" in table else ""
    if small:
        body.append(html_note(small))
    return html_page(f"{MOS_PAPER_TABLE[task]} ({catalog.task(task).label}): HUG-VIS subjective results", "\n".join(body))


def _mos_section(mos_path, tables, summaries, out_dir, n_boot, formats, files, all_raters: bool = False,
                 shown: "list | None" = None) -> list[str]:
    """Tables 6/8/10 (MOS per criterion, best bold / second underlined), intervals, per-task
    inter-rater agreement, invalid-rating counts, and the MOS vs automatic-metric joint view; ``shown`` collects the
    tasks whose MOS table it printed.

    Raters flagged by the study's quality control (:mod:`hug_vis_dataset.studies.mos_qc`) are left out,
    and the note under each table says so, unless ``all_raters``."""
    import pandas as pd

    from ..studies.judgments import counted_ratings
    from ..studies.mos import (TASK_CRITERIA, MOSReport, agreement, clip_means, mos_intervals, mos_metric_agreement,
                               mos_table, read_ratings)

    md = ["## Subjective study (MOS)", ""]
    _, invalid = read_ratings(mos_path)
    # The one rule (studies.judgments): gold answers are quality control only, never a MOS row, and the raters
    # the study's QC flags are left out unless all_raters; every other block of the report counts the same ratings.
    valid, qc = counted_ratings(mos_path, all_raters)
    qc_line = markdown_text(qc.note("run hugvis report with --mos-all-raters")) if qc.raters else ""
    simulated = Path(mos_path).name == SIMULATED_RATINGS_FILE and Path(mos_path).parent.name == SIMULATED_SYSTEMS_DIR
    if simulated:
        md += ["These ratings are the synthetic release's **simulated raters**, not human judgements.", ""]
    md.append(f"{len(valid)} valid ratings, {len(invalid)} invalid"
              + (" (excluded; each listed with its CSV line and reason in mos/invalid_ratings.csv):"
                 if len(invalid) else "."))
    if len(invalid):
        reasons = invalid["reason"].str.replace(r"score .* is not", "score is not", regex=True)
        md += [f"- {count} x {reason}" for reason, count in reasons.value_counts().sort_index().items()]
    md.append("")
    if valid.empty:
        if out_dir:
            (out_dir / "mos").mkdir(parents=True, exist_ok=True)
            invalid.to_csv(out_dir / "mos" / "invalid_ratings.csv", index=False)
            files.append(out_dir / "mos" / "invalid_ratings.csv")
        return md + ["No valid rating: no MOS table.", ""]
    if qc_line:
        md += [qc_line, ""]
    if valid.empty:
        return md + ["Every rater was flagged by quality control: no MOS table.", ""]
    table = mos_table(valid).assign(ci_low=float("nan"), ci_high=float("nan"), n_actors=float("nan"))
    rated = valid.groupby("model")["criterion"].agg(set).to_dict()
    model_task, unassigned = mos_model_tasks(rated, summaries)
    cis: dict = {}
    if n_boot:  # per task, its actors resampled (the board's aggregate_ratings does the same), seed 0
        for task in MOS_PAPER_TABLE:
            mine = valid[valid["model"].isin([m for m, t in model_task.items() if t == task])]
            if len(mine):
                cis.update(mos_intervals(mine, n_boot=n_boot))
        keys = [k for k in table.index if k in cis]
        table.loc[keys, "ci_low"] = [cis[k].low for k in keys]
        table.loc[keys, "ci_high"] = [cis[k].high for k in keys]
        table.loc[keys, "n_actors"] = [cis[k].n_clusters for k in keys]
    report = MOSReport(table, agreement(valid), invalid, len(valid))
    per_clip = clip_means(valid)
    evidence = per_clip.assign(task=per_clip["model"].map(model_task), metric=per_clip["criterion"],
                               value=per_clip["score"])
    wide = report.table["mos"].unstack("criterion")
    interval_rows, joint, gaps = [], [], []
    for task in MOS_PAPER_TABLE:
        models = sorted(m for m, t in model_task.items() if t == task)
        if not models:
            continue
        mine = valid[valid["model"].isin(models)]
        if shown is not None:
            shown.append(task)
        md += [f"### {catalog.task(task).label} ({MOS_PAPER_TABLE[task]}: MOS, ratings averaged within each clip, then "
               "over clips)", "",
               render_mos_table(task, wide.loc[models], "markdown", cis, evidence), ""]
        if qc_line:
            md += [qc_line, ""]
        alphas = agreement(mine)
        md.append("Inter-rater agreement (Krippendorff's alpha, interval; units = rated (clip, model) pairs): "
                  + "; ".join(f"{catalog.label_of(c)} {a['alpha']:.2f} ({a['pairable_units']} units, {a['raters']} raters)"
                              for c, a in alphas.items()))
        extra = sorted(set(mine["criterion"].unique()) - set(TASK_CRITERIA[task]))
        if extra:
            md.append(f"- criteria rated but not part of {MOS_PAPER_TABLE[task]}: "
                      f"{', '.join(catalog.label_of(c) for c in extra)} "
                      "(in mos/mos.csv, not in the table)")
        md.append("")
        for (model, criterion), row in report.table.loc[models].iterrows():
            interval_rows.append({"task": task, "model": model, "criterion": criterion, "estimate": row["mos"],
                                  "low": row["ci_low"], "high": row["ci_high"], "n_clips": int(row["n_clips"]),
                                  "n_ratings": int(row["n_ratings"]),
                                  "n_clusters": int(mine.loc[(mine["model"] == model)
                                                             & (mine["criterion"] == criterion), "actor_id"].nunique()),
                                  "alpha": alphas[criterion]["alpha"]})
        if task in tables:
            joint += mos_metric_agreement(report.table.loc[models], tables[task][0], task)
        gaps += _joint_gaps(task, set(mine["criterion"].unique()), tables, summaries)
        if out_dir:
            for f in formats:
                path = out_dir / f"{task}_mos.{f}"
                if f == "html":
                    text = _mos_html(task, wide.loc[models], report.table.loc[models], simulated, qc_line, cis,
                                     evidence)
                else:
                    text = render_mos_table(task, wide.loc[models], FORMATS[f], cis, evidence)
                path.write_text(text, encoding="utf-8")
                files.append(path)
    if n_boot and interval_rows and min(r["n_clusters"] for r in interval_rows) < 2:
        md += ["- some MOS were rated on one actor only: their actor-clustered intervals are degenerate "
               "(low = high) and say nothing about uncertainty", ""]
    for model, why in unassigned.items():
        md.append(f"- ratings of model {model} not tabulated: {why}")
    if unassigned:
        md.append("")
    md += ["MOS vs automatic metric (Spearman rho over models per criterion; lower-is-better metrics negated, so "
           "rho > 0 means agreement):", ""]
    if joint:
        md += [markdown_table(readable(pd.DataFrame(joint)[["task", "criterion", "metric", "models", "spearman",
                                                               "best_by_mos", "best_by_metric"]]
                                       .assign(spearman=lambda f: f["spearman"].map(lambda v: f"{v:.2f}"))
                                       .rename(columns={"models": "Models", "spearman": "rho",
                                                        "best_by_mos": "Best by MOS",
                                                        "best_by_metric": "Best by metric"}))), ""]
    else:
        md += ["(no criterion has both MOS and its matching automatic metric)", ""]
    if gaps:
        md += ["Not in the joint view:"] + gaps + [""]
    if out_dir:
        report.save(out_dir / "mos")
        files += [out_dir / "mos" / "mos.csv", out_dir / "mos" / "invalid_ratings.csv"]
        if interval_rows:
            pd.DataFrame(interval_rows).to_csv(out_dir / "mos_intervals.csv", index=False)
            files.append(out_dir / "mos_intervals.csv")
    return md

"""``hugvis report``: paper-style tables, cross-task analyses and figures from stored rows.

Everything is recomputed from the per-clip rows written by ``hugvis evaluate``
(``RESULTS/<task>/<model>/rows.parquet``, ``frames.parquet``, ``set_rows.parquet``):

* one table per task, shaped like the paper (Table 4 emotion grouped by input setting, Table 5
  audio-driven, Table 7 vision-driven, Table 9 voice cloning, Table 11 matting); one row per model,
  best bold and second-best underlined (:func:`hug_vis_dataset.tables.render_table`), in Markdown,
  LaTeX and HTML; each value has a 95% actor-clustered bootstrap interval in ``intervals.csv``;
* metrics that were skipped (weights missing) are listed under the table, not filled in;
* the cross-task analyses (Eq. 1-4) and Figs. 8-10 (:mod:`hug_vis_dataset.figures`);
* with ``--mos RATINGS.csv``: MOS tables (Tables 6, 8, 10 shapes) and the joint view, Spearman
  rho per criterion between model MOS and the matching automatic metric.

Example:
    >>> report = build_report([], None, formats=("md",))
    >>> report.markdown.startswith("# HUG-VIS results")
    True
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

TASK_ORDER = ("emotion", "audio_driven", "vision_driven", "voice_cloning", "matting")
PAPER_TABLE = {"emotion": "Table 4", "audio_driven": "Table 5", "vision_driven": "Table 7",
               "voice_cloning": "Table 9", "matting": "Table 11"}
TABLE_METRICS = {
    "emotion": ("emotion_accuracy",),
    "audio_driven": ("csim", "sync_c", "sync_d"),
    "vision_driven": ("lpips", "csim", "psnr", "ssim", "fid"),
    "voice_cloning": ("utmos", "dnsmos", "speaker_similarity"),
    "matting": ("mad", "mse", "dtssd", "grad", "conn"),
}
FORMATS = {"md": "markdown", "tex": "latex", "html": "html"}


@dataclass
class Report:
    markdown: str
    files: list[Path] = field(default_factory=list)
    tables: dict = field(default_factory=dict)


def load_results(roots: "Sequence[str | Path]"):
    """All stored rows, frames, set rows and summaries under the results roots."""
    import pandas as pd

    rows, frames, set_rows, summaries = [], [], [], []
    for root in roots:
        for summary in sorted(Path(root).glob("*/*/summary.json")):
            folder = summary.parent
            summaries.append(json.loads(summary.read_text()))
            for name, bucket in (("rows.parquet", rows), ("frames.parquet", frames), ("set_rows.parquet", set_rows)):
                if (folder / name).is_file():
                    bucket.append(pd.read_parquet(folder / name))
    cat = lambda b: pd.concat(b, ignore_index=True) if b else None  # noqa: E731
    return cat(rows), cat(frames), cat(set_rows), summaries


def _intervals(rows, task: str, n_boot: int, metrics):
    """Actor-clustered bootstrap interval of each model's clip-protocol mean, paper units."""
    from .scoring.aggregate import task_table
    from .stats import bootstrap_ci

    ok = rows[rows["status"] == "ok"]
    if ok.empty or ok["actor_id"].nunique() < 1:
        return {}

    def statistic(frame):
        table = task_table(frame, protocol="clip", metrics=metrics)
        return table.drop(columns=["n_ok", "n_failed"])

    return bootstrap_ci(ok, statistic, n_boot=n_boot, seed=0)


def task_tables(rows, frames, set_rows, summaries, n_boot: int = 1000):
    """Per task: (wide table in paper units, intervals, skipped metrics)."""
    from .scoring.aggregate import task_table

    out = {}
    for task in TASK_ORDER:
        sub = rows[rows["task"] == task] if rows is not None else None
        if sub is None or sub.empty:
            continue
        metrics = TABLE_METRICS[task]
        fr = frames[frames["task"] == task] if frames is not None and len(frames) else None
        sr = set_rows[set_rows["task"] == task] if set_rows is not None and len(set_rows) else None
        protocol = "rvm" if task == "matting" and fr is not None and len(fr) else "clip"
        table = task_table(sub, fr, sr, protocol=protocol, metrics=metrics)
        skipped = {}
        for s in summaries:
            if s["task"] == task:
                skipped.update(s["metrics"]["skipped"])
        cis = _intervals(sub, task, n_boot, metrics) if n_boot else {}
        out[task] = (table, cis, skipped, protocol)
    return out


REAL_AUDIO_LABEL = "Real audio (reference)"


def _render(task: str, table, fmt: str) -> str:
    import pandas as pd

    from .scoring.tasks import split_emotion_model
    from .tables import render_table

    metrics = [m for m in TABLE_METRICS[task] if m in table.columns and table[m].notna().any()]
    frame = table.reset_index().rename(columns={"index": "model"})
    extra = ["n_ok", "n_failed"]
    group = None
    if task == "emotion":
        from .metrics.emotion import input_setting_sort_key

        split = frame["model"].map(split_emotion_model)
        frame["model"], frame["input"] = split.str[0], split.str[1]
        frame = frame.iloc[sorted(range(len(frame)), key=lambda i: (input_setting_sort_key(frame["input"].iat[i]),
                                                                     frame["emotion_accuracy"].iat[i]))]
        group = "input"
    unranked: list[str] = []
    if task == "voice_cloning":
        from .scoring.tasks import REAL_AUDIO_MODEL

        # Table 9's reference row: real recordings, printed first and never ranked against models.
        is_real = frame["model"] == REAL_AUDIO_MODEL
        frame = pd.concat([frame[is_real], frame[~is_real]], ignore_index=True)
        frame.loc[frame["model"] == REAL_AUDIO_MODEL, "model"] = REAL_AUDIO_LABEL
        unranked = [REAL_AUDIO_LABEL]
    if not metrics:
        return "(no metric could be computed)"
    return render_table(frame[["model", *([group] if group else []), *metrics, *extra]], metrics=metrics,
                        group=group, fmt=fmt, extra_columns=extra, scales={m: 1.0 for m in metrics},
                        caption=f"{PAPER_TABLE[task]}-shaped results for {task}", unranked=unranked)


def build_report(results: "Sequence[str | Path]", out: "str | Path | None", formats: Sequence[str] = ("md", "tex", "html"),
                 mos: "str | Path | None" = None, n_boot: int = 1000, figures: bool = True) -> Report:
    """Write tables (md/tex/html), ``intervals.csv``, analyses and figures; return the Markdown."""
    import pandas as pd

    for f in formats:
        if f not in FORMATS:
            raise ValueError(f"unknown format {f!r}; choose from {sorted(FORMATS)}")
    rows, frames, set_rows, summaries = load_results(results)
    out_dir = Path(out) if out is not None else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
    md = ["# HUG-VIS results", ""]
    files: list[Path] = []
    tables = task_tables(rows, frames, set_rows, summaries, n_boot) if rows is not None else {}
    interval_rows = []
    for task, (table, cis, skipped, protocol) in tables.items():
        md += [f"## {task} ({PAPER_TABLE[task]}, aggregation: {protocol})", "", _render(task, table, "markdown"), ""]
        for metric, why in sorted(skipped.items()):
            md.append(f"- {metric}: {why}")
        failed = int(table["n_failed"].sum())
        if failed:
            md.append(f"- {failed} failed clip(s) excluded from the means (see coverage.json per model)")
        md.append("")
        for (model, metric), ci in (cis.items() if isinstance(cis, dict) else []):
            interval_rows.append({"task": task, "model": model, "metric": metric, "estimate": ci.estimate,
                                  "low": ci.low, "high": ci.high, "n_clusters": ci.n_clusters})
        if out_dir:
            for f in formats:
                path = out_dir / f"{task}.{f}"
                path.write_text(_render(task, table, FORMATS[f]), encoding="utf-8")
                files.append(path)
    for task in TASK_ORDER:
        skipped_only = {m: w for s in summaries if s["task"] == task and task not in tables
                        for m, w in s["metrics"]["skipped"].items()}
        if skipped_only:
            md += [f"## {task} ({PAPER_TABLE[task]})", "", "No metric of this task could run here:"]
            md += [f"- {m}: {why}" for m, why in sorted(skipped_only.items())] + [""]
    if out_dir and interval_rows:
        pd.DataFrame(interval_rows).to_csv(out_dir / "intervals.csv", index=False)
        files.append(out_dir / "intervals.csv")
    if rows is not None and len(rows):
        md += _crosstask(rows, out_dir, figures, files)
    if mos is not None:
        md += _mos_section(mos, tables, out_dir, n_boot, files)
    text = "\n".join(md)
    if out_dir:
        (out_dir / "report.md").write_text(text, encoding="utf-8")
        files.append(out_dir / "report.md")
    return Report(text, files, {t: v[0] for t, v in tables.items()})


def _analysis_rows(rows):
    """Rows as the cross-task module expects them: model rows only (not the Real-audio reference
    row nor reference statistics), emotion correctness as metric ``correct``."""
    from .scoring.tasks import REAL_AUDIO_MODEL, REFERENCE_MODEL

    rows = rows[~rows["model"].isin([REAL_AUDIO_MODEL, REFERENCE_MODEL])].copy()
    rows.loc[rows["metric"] == "emotion_accuracy", "metric"] = "correct"
    return rows


def _crosstask(rows, out_dir, figures: bool, files: list) -> list[str]:
    from .metrics.crosstask import difficulty_agreement, emotion_difficulty

    md = ["## Cross-task analyses", ""]
    arows = _analysis_rows(rows)
    try:
        difficulty = emotion_difficulty(arows)
        D = difficulty.D.dropna(axis=1, how="all")
        md += ["Emotion difficulty D (Eq. 1-2, Fig. 8; 0 = easiest, 1 = hardest):", "",
               D.to_string(float_format=lambda v: f"{v:.2f}"), ""]
        if D.shape[1] >= 2:
            rho = difficulty_agreement(D)
            md += ["Agreement between difficulty profiles (Spearman, Eq. 3, Fig. 9):", "", rho.to_string(
                float_format=lambda v: f"{v:.2f}"), ""]
    except (ValueError, KeyError, ImportError) as err:
        md += [f"(emotion difficulty not available: {err})", ""]
    motion, motion_md = motion_analysis(rows)
    md += motion_md
    if figures and out_dir:
        try:
            from .figures import crosstask_figures

            written = crosstask_figures(arows, out_dir / "figures", motion=motion)
            for name, paths in written.items():
                files.extend(paths)
                md.append(f"- {name}: " + ", ".join(p.name for p in paths))
            md.append("")
        except (ValueError, KeyError, ImportError) as err:
            md += [f"(figures not written: {err})", ""]
    return md


def motion_analysis(rows) -> "tuple[tuple | None, list[str]]":
    """Motion difficulty vs dtSSD (paper Eq. 5-6, Fig. 11) from stored rows.

    U_s and V_s come from the ``motion`` task's reference rows (``hugvis evaluate motion``);
    dtSSD_s is the per-clip dtSSD averaged over the matting models that scored the clip. The
    percentile ranks are taken over the clips that have both, so D_motion depends on that set.

    Returns:
        ``((d_motion, dtssd, emotions) or None, markdown lines)``.
    """
    import numpy as np

    from .metrics.matting import motion_difficulty, motion_vs_dtssd

    ok = rows[rows["status"] == "ok"]
    motion = ok[ok["task"] == "motion"].pivot_table(index="clip_id", columns="metric", values="value",
                                                    aggfunc="first")
    dtssd = ok[(ok["task"] == "matting") & (ok["metric"] == "dtssd")].groupby("clip_id")["value"].mean()
    if motion.empty or dtssd.empty or not {"motion_u", "motion_v"} <= set(motion.columns):
        need = "the motion task's rows (hugvis evaluate motion)" if motion.empty else "matting dtSSD rows"
        return None, [f"(motion difficulty, Fig. 11: needs {need})", ""]
    from .grid import ClipId

    clips = sorted(set(motion.index) & set(dtssd.index), key=ClipId.parse)
    if len(clips) < 2:
        return None, ["(motion difficulty, Fig. 11: fewer than 2 clips with both motion and dtSSD rows)", ""]
    d = motion_difficulty(motion.loc[clips, "motion_u"].to_numpy(), motion.loc[clips, "motion_v"].to_numpy())
    y = dtssd.loc[clips].to_numpy(dtype=np.float64)
    emotions = [ClipId.parse(c).emotion.value for c in clips]
    relation = motion_vs_dtssd(d["d_motion"], y, emotions)
    o = relation["overall"]
    md = [f"Motion difficulty vs model-averaged dtSSD (Eq. 5-6, Fig. 11) over {len(clips)} clips: "
          f"Spearman rho = {o['spearman_rho']:.2f}, OLS dtSSD = {o['slope']:.3f} x D_motion + {o['intercept']:.3f}", ""]
    return (d["d_motion"], y, emotions), md


def _mos_section(mos_path, tables, out_dir, n_boot, files) -> list[str]:
    from .mos import mos_metric_agreement, mos_report

    report = mos_report(mos_path, n_boot=n_boot)
    md = ["## Subjective study (MOS)", "", "```", report.to_text(), "```", ""]
    joint = []
    for task, (table, *_rest) in tables.items():
        joint += mos_metric_agreement(report.table, table, task)
    if joint:
        md += ["MOS vs automatic metric (Spearman over models, per criterion):", ""]
        md += ["| task | criterion | metric | models | rho | best by MOS | best by metric |",
               "| --- | --- | --- | --- | --- | --- | --- |"]
        md += [f"| {j['task']} | {j['criterion']} | {j['metric']} | {j['models']} | {j['spearman']:.2f} | "
               f"{j['best_by_mos']} | {j['best_by_metric']} |" for j in joint]
        md.append("")
    if out_dir:
        report.save(out_dir / "mos")
        files.append(out_dir / "mos" / "mos.csv")
    return md

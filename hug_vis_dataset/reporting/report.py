"""``hugvis report``: paper-style tables, cross-task analyses and figures from stored rows.

Everything is recomputed from the per-clip rows written by ``hugvis evaluate``
(``RESULTS/<task>/<model>/rows.parquet``, ``frames.parquet``, ``set_rows.parquet``):

* one table per task, shaped like the paper (Table 4 emotion grouped by input setting, Table 5
  audio-driven, Table 7 vision-driven, Table 9 voice cloning, Table 11 matting); one row per model,
  best bold and second-best underlined (:func:`hug_vis_dataset.presentation.tables.render_table`), in Markdown,
  LaTeX and HTML; each value has a 95% actor-clustered bootstrap interval in ``intervals.csv``;
  the paper's published rows are printed beside the stored ones (origin ``paper``), ranked in the
  leaderboard's pools (:data:`hug_vis_dataset.leaderboard.board.RANK_POOLS`);
* metrics that were skipped (weights missing) are listed under the table, not filled in;
* the cross-task analyses (Eq. 1-4) and Figs. 8-10 (:mod:`hug_vis_dataset.reporting.figures`);
* with ``--people ANSWERS.csv`` (an emotion study's answers): Table 4's People row per input setting and
  "People as the ceiling of emotion recognition" (:mod:`hug_vis_dataset.reporting.people`);
* with ``--mos RATINGS.csv``: criterion-specific MOS tables shaped like Tables 6, 8 and 10
  (``<task>_mos.{md,tex,html}``, best bold and second underlined; a model's task from its criteria
  or the stored results, :func:`mos_model_tasks`), their actor-clustered intervals in
  ``mos_intervals.csv``, Krippendorff's alpha per criterion under each table, the count of
  invalid ratings per reason (listed in ``mos/invalid_ratings.csv``), and the joint view:
  Spearman rho per criterion between model MOS and the matching automatic metric, with the
  criteria whose metric is unavailable named, not dropped.

Example:
    >>> report = build_report([], None, formats=("md",))
    >>> report.markdown.startswith("# HUG-VIS results")
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from .. import catalog
from ..errors import HugvisError
# The MOS section lives in mos_tables (re-exported: the report's API).
from .html import html_page
from .captions import (BEYOND_CAPTION, CELL_CONVENTION, PAPER_CAPTION, RATIO_CAPTION, RVM_CAPTION,  # noqa: F401
                       SYNTHETIC_CAPTION, SYNTHETIC_SCALE, samples_line)
from .table_marks import collapsed_intervals, table_marks, with_own_actors  # noqa: F401 (collapsed_intervals: the report's API)
from .mos_tables import FORMATS, MOS_PAPER_TABLE, _mos_section, mos_model_tasks, render_mos_table  # noqa: F401
from ..presentation.labels import skipped_markdown
from ..datamodel.results import (AUDIT_PREFIX, BASELINE_MODEL, PEOPLE_LABEL, PEOPLE_NOTE, REAL_AUDIO_MODEL, RESERVED_LABELS,
                       baseline_note)
from ..statistics.rules import N_BOOT, PARTIAL_RULE

TASK_ORDER = catalog.task_names(with_paper_table=True)


@dataclass
class Report:
    markdown: str
    files: list[Path] = field(default_factory=list)
    tables: dict = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)  # broken results folders, with the reason
    mos_tables: list[str] = field(default_factory=list)  # tasks whose MOS table (6, 8, 10) it holds


class ResultsFolderError(HugvisError, ValueError):
    """A results root given to the report does not exist or holds no results at all."""


def load_results(roots: "Sequence[str | Path]", skipped: "list[str] | None" = None,
                 origins: "dict[tuple[str, str], str] | None" = None,
                 samples: "dict[tuple[str, str], Any] | None" = None):
    """All stored rows, per-frame sums, set rows and summaries under the results roots.

    Returns:
        ``(rows, frame_sums, set_rows, summaries)``: ``rows`` and ``set_rows`` concatenated (None when there are
        none), ``frame_sums`` task -> :class:`~hug_vis_dataset.statistics.sums.FrameSums` of the runs' counted
        per-frame rows (what the ``rvm`` protocol needs; the rows themselves are not kept).

    ``origins`` (when given) is filled with ``(task, model) -> origin`` of every valid run
    (``synthetic``, ``submitted`` or ``subset``: :attr:`~hug_vis_dataset.scoring.runs.StoredRun.origin`), and
    ``samples`` with ``(task, model) -> per-sample rows`` of every run scored over several samples per clip
    (:attr:`~hug_vis_dataset.scoring.runs.StoredRun.sample_rows`; ``rows`` holds their per-clip means).

    Runs are read through the one validated schema (:func:`hug_vis_dataset.scoring.runs.scan_runs`):
    a ``<task>/<model>`` folder that fails it (truncated Parquet, broken or disagreeing summary,
    out-of-range values) is left out and named in ``skipped`` with the reason and the fix, so one
    damaged run does not hide the others.

    Raises:
        ResultsFolderError: a root does not exist or holds no run (a mistyped folder must not give
            an empty report), or every run is damaged.
    """
    import pandas as pd

    from ..scoring.runs import run_folders, scan_runs
    from ..statistics.sums import FrameSums

    rows, set_rows, summaries = [], [], []
    sums: dict[str, list] = {}
    skipped = skipped if skipped is not None else []
    for root in roots:
        root = Path(root)
        if not root.is_dir():
            raise ResultsFolderError(f"results folder {root} does not exist; pass the --out folder of hugvis evaluate")
        if not run_folders(root):
            raise ResultsFolderError(f"{root} holds no results (no <task>/<model>/summary.json); pass the --out "
                                     f"folder of hugvis evaluate")
        runs, damaged = scan_runs(root)
        skipped.extend(d.message() for d in damaged)
        for run in runs:
            summaries.append(run.summary)
            if origins is not None:
                origins[(run.task, run.model)] = run.origin
            if samples is not None and run.sample_rows is not None:
                samples[(run.task, run.model)] = run.sample_rows
            for table, bucket in ((run.rows, rows), (run.set_rows, set_rows)):
                if table is not None:
                    bucket.append(table)
            if run.frame_sums is not None and len(run.frame_sums):
                sums.setdefault(run.task, []).append(run.frame_sums)
    if skipped and not summaries:
        raise ResultsFolderError(f"every results folder is broken; first: {skipped[0]}")
    cat = lambda b: pd.concat(b, ignore_index=True) if b else None  # noqa: E731
    return (as_categories(cat(rows)), {task: FrameSums.merge(parts) for task, parts in sums.items()}, cat(set_rows),
            summaries)


#: The text columns of stored rows: a handful of distinct values over millions of rows.
CATEGORY_COLUMNS = ("model", "task", "clip_id", "emotion", "metric", "status", "error", "input_sha256")


def as_categories(rows):
    """``rows`` with its text columns as pandas categories: every filter, group and sort of the report then moves
    integer codes, not millions of strings (the values, their order and every comparison are unchanged)."""
    if rows is None:
        return rows
    return rows.astype({c: "category" for c in CATEGORY_COLUMNS if c in rows.columns})


def _task_frame_sums(frames, task: str, rows):
    """The task's :class:`~hug_vis_dataset.statistics.sums.FrameSums`: from :func:`load_results`' per-task sums, or
    reduced from per-frame rows (a DataFrame with a ``task`` column)."""
    from ..scoring.aggregate import frame_sums

    if frames is None:
        return None
    if isinstance(frames, dict):
        return frames.get(task)
    part = frames[frames["task"] == task] if "task" in frames.columns else frames
    return frame_sums(rows, part) if len(part) else None


def task_tables(rows, frames, set_rows, summaries, n_boot: int = N_BOOT):
    """Per task: (wide table in paper units, intervals, skipped metrics, protocol).

    ``frames``: :func:`load_results`' per-task frame sums (or per-frame rows). The intervals are the statistics
    engine's (:func:`hug_vis_dataset.statistics.intervals.table_intervals`): of each cell's own statistic (the rvm
    value where the table prints it, CER's corpus ratio), actors resampled, all replicates from per-actor sums.
    """
    from ..scoring.aggregate import task_table
    from ..statistics.intervals import table_intervals

    out = {}
    for task in TASK_ORDER:
        sub = rows[rows["task"] == task] if rows is not None else None
        if sub is None or sub.empty:
            continue
        # the paper's columns, then the columns printed beside its table (beyond the paper)
        metrics = catalog.table_metrics(task) + catalog.beyond_paper_metrics(task)
        fs = _task_frame_sums(frames, task, sub)
        sr = set_rows[set_rows["task"] == task] if set_rows is not None and len(set_rows) else None
        protocol = catalog.task_protocol(task) if fs is not None and len(fs) else "clip"
        table = task_table(sub, fs, sr, protocol=protocol, metrics=metrics)
        skipped = {}
        for s in summaries:
            if s["task"] == task:
                skipped.update(s["metrics"]["skipped"])
        cis = table_intervals(sub, metrics, n_boot, seed=0, frame_sums=fs, protocol=protocol) if n_boot else {}
        out[task] = (table, cis, skipped, protocol)
    return out


#: A protocol's name in a heading (its full words: catalog.PROTOCOL_WORDS).
PROTOCOL_NAMES = {"rvm": "RVM average over frame indices", "clip": "mean over clips"}
#: What a report without ratings says about the MOS tables (and ``hugvis report`` prints).
MOS_NEEDS_RATINGS = ("Tables 6, 8 and 10 (criterion-specific MOS): not in this report; pass --mos RATINGS.csv to add "
                     "them")


def paper_rows(task: str):
    """The paper's published rows of ``task``'s objective table, one row per system (and input
    setting, Table 4): ``model``, ``input``, ``source``, one column per metric (paper units) and
    ``text:<metric>``, the digits as printed.

    Example:
        >>> rows = paper_rows("matting")
        >>> rows.loc[rows.model == "BiRefNet", ["mse", "text:mse"]].values.tolist()
        [[0.82, '0.82']]
    """
    import pandas as pd

    from ..datamodel.paper_tables import TASK_TABLES, paper_frame

    frame = paper_frame()
    frame = frame[frame["table"] == TASK_TABLES[task]]
    keys = ["model", "input_setting", "source"]
    index = pd.MultiIndex.from_frame(frame[keys].drop_duplicates())
    parts = []
    for column, prefix in (("value", ""), ("text", "text:")):
        part = frame.pivot_table(index=keys, columns="metric", values=column, aggfunc="first", sort=False)
        parts.append(part.reindex(index).add_prefix(prefix))
    wide = pd.concat(parts, axis=1).reset_index()
    wide.columns.name = None
    return wide.rename(columns={"input_setting": "input"})


def beyond_paper_shown(task: str, table) -> tuple[str, ...]:
    """The task's beyond-the-paper columns with a value in ``table`` (the report prints their table)."""
    return tuple(m for m in catalog.beyond_paper_metrics(task) if m in table.columns and table[m].notna().any())


def _render(task: str, table, fmt: str, cis: "dict | None" = None, synthetic: bool = False,
            origins: "dict[str, str] | None" = None, paper=None, protocol: str = "clip",
            beyond: bool = False, comparisons=None, evidence=None) -> str:
    """One task's paper-shaped table: the board's headers (label, arrow, unit), each metric's
    printed precision from the catalog, the interval beside each value that has one.

    Args:
        origins: stored model (run folder name) -> origin (default: ``synthetic`` when
            ``synthetic``, else ``subset``).
        protocol: the table's aggregation (``rvm``: the caption says the intervals are of the rvm
            statistic, :func:`hug_vis_dataset.scoring.aggregate.rvm_intervals`).
        beyond: the table of the columns beside the paper's (:func:`hug_vis_dataset.catalog.beyond_paper_metrics`:
            CER, Distill-MOS), with the same rows, never the paper's.
        comparisons: the stored rows' comparison sets (:class:`~hug_vis_dataset.statistics.evidence.Comparisons`:
            a partial run ranks only with partial runs); None: every stored row complete.
        evidence: the per-clip rows (or their :class:`~hug_vis_dataset.statistics.sums.RowsIndex`): each stored
            row is compared with the next-ranked one and marked as the board marks it (``≈``, ``?``), and best /
            second are drawn only where the verdicts separate the rows
            (:func:`hug_vis_dataset.statistics.ranking.rank_column`); None: marks by printed value alone.
        paper: :func:`paper_rows` of the task, printed beside the stored rows with origin
            ``paper`` and ranked in the board's pools (paper with submitted runs; synthetic and
            subset runs each among themselves); ``None``: stored rows only.
    """
    import pandas as pd

    from ..leaderboard.board import ORIGIN_LABELS, PAPER, RANK_POOLS, row_order
    from ..datamodel.paper_tables import UNRANKED_SOURCES
    from ..presentation.tables import render_table
    from ..tasks import split_emotion_model

    if beyond:
        paper = None  # the paper has no such column
    stored_metrics = {m for m in table.columns if table[m].notna().any()}
    paper_metrics = {m for m in (paper.columns if paper is not None else ()) if paper[m].notna().any()}
    columns = catalog.beyond_paper_metrics(task) if beyond else catalog.table_metrics(task)
    metrics = [m for m in columns if m in stored_metrics | paper_metrics]
    frame = table.reset_index().rename(columns={"index": "model"})
    for m in metrics:
        if m not in frame.columns:
            frame[m] = float("nan")
    frame["_label"] = frame["model"]  # the stored label, the intervals' key
    extra = ["n_ok", "n_failed"]
    group = None
    from ..metrics.emotion import input_setting_sort_key

    if task == "emotion":
        split = frame["model"].map(split_emotion_model)
        frame["model"], frame["input"] = split.str[0], split.str[1]
        frame = frame.iloc[sorted(range(len(frame)), key=lambda i: (input_setting_sort_key(frame["input"].iat[i]),
                                                                     frame["emotion_accuracy"].iat[i]))]
        group = "input"
    if task == "voice_cloning":
        # Table 9's reference row: real recordings, printed first and never ranked against models.
        is_real = frame["model"] == REAL_AUDIO_MODEL
        frame = pd.concat([frame[is_real], frame[~is_real]], ignore_index=True)
    default = "synthetic" if synthetic else "subset"
    frame["_origin"] = [(origins or {}).get(m, default) for m in frame["model"]]
    frame["source"] = ["reference" if m == REAL_AUDIO_MODEL else "" for m in frame["model"]]
    if paper is not None and len(paper):
        shown = paper.assign(_origin=PAPER, _label=None, n_ok=None, n_failed=None)
        if group is None:
            shown = shown.drop(columns=["input"])
        keep = [c for c in shown.columns if c in frame.columns or c in metrics or c.startswith("text:")]
        frame = pd.concat([frame, shown[keep]], ignore_index=True)
    # Rows in the board's groups (reference first, paper, submitted, synthetic, subset, baselines
    # last), within each input setting for Table 4; stable, so each group keeps its order.
    order = sorted(range(len(frame)), key=lambda i: (
        input_setting_sort_key(frame["input"].iat[i]) if group else (),
        row_order(frame["model"].iat[i], frame["_origin"].iat[i], frame["source"].iat[i])))
    frame = frame.iloc[order].reset_index(drop=True)
    for column in ("n_ok", "n_failed"):
        frame[column] = ["" if pd.isna(v) else str(int(v)) for v in frame[column]]
    frame["_pool"] = frame["_origin"].map(RANK_POOLS)  # kept for render_table's columns; the ranking is _ranking's
    with_origin = frame["_origin"].nunique() > 1
    if with_origin:
        frame["origin"] = frame["_origin"].map(ORIGIN_LABELS)
        extra = ["origin", *extra]
    # The reserved rows (real audio; the built-in baselines, floors to read the systems against) are
    # printed under their labels and never ranked; so are the paper's reference rows (Real audio).
    has_baseline = bool((frame["model"] == BASELINE_MODEL).any())
    frame["model"] = frame["model"].astype(str).replace(RESERVED_LABELS)  # plain text: a label is no category
    # An audit's pseudo-systems (hugvis report on an audit's results root) are never ranked either.
    unranked = list(RESERVED_LABELS.values()) + [str(m) for m, src in zip(frame["model"], frame["source"])
                                                 if src in UNRANKED_SOURCES or str(m).startswith(AUDIT_PREFIX)]
    if not metrics:
        return "(no metric could be computed)"
    # An interval of one actor is not an interval (nothing to resample): left out, and the caption says so.
    intervals = {(i, m): (ci.low, ci.high) for i, label in enumerate(frame["_label"]) for m in metrics
                 for ci in [(cis or {}).get((label, m))] if ci is not None and getattr(ci, "n_clusters", 2) >= 2}
    # The paper's cells print its digits as published (Table 11's MSE 0.82, not 0.820).
    texts = {(i, m): text for m in metrics if f"text:{m}" in frame.columns
             for i, text in enumerate(frame[f"text:{m}"]) if isinstance(text, str) and text}
    marked, suffixes, legends = table_marks(task, frame, metrics, texts, unranked, cis, group, comparisons, evidence)
    caption = f"{catalog.paper_table_of(task)} ({catalog.task(task).label}), stored results; {CELL_CONVENTION}."
    if beyond:
        caption = BEYOND_CAPTION.format(table=catalog.paper_table_of(task), task=catalog.task(task).label, cells=CELL_CONVENTION)
        ratios = [catalog.spec(m).label for m in metrics if catalog.spec(m).protocol == catalog.RATIO]
        if ratios:
            caption += " " + RATIO_CAPTION.format(labels=", ".join(ratios))
    if paper is not None and len(paper):
        caption += " " + PAPER_CAPTION.format(table=catalog.paper_table_of(task))
    if protocol == "rvm" and cis:
        caption += " " + RVM_CAPTION
    if synthetic:
        caption += " " + SYNTHETIC_CAPTION + (f" {SYNTHETIC_SCALE[task]}" if task in SYNTHETIC_SCALE else "")
    if has_baseline and baseline_note(task):  # what the built-in floor is (voice cloning's replays the reference)
        caption += " " + baseline_note(task)
    if (frame["model"] == PEOPLE_LABEL).any():  # the emotion study's raters: a ceiling, never ranked
        caption += f" {PEOPLE_NOTE}."
    collapsed = collapsed_intervals(cis)
    if collapsed:
        caption += " " + collapsed
    for legend in legends:
        caption += f" {legend}."
    return render_table(frame[["model", *([group] if group else []), *metrics, *extra, "_pool"]], metrics=metrics,
                        group=group, fmt=fmt, extra_columns=extra, scales={m: 1.0 for m in metrics},
                        caption=caption, unranked=unranked, intervals=intervals, precision="catalog",
                        pool="_pool", texts=texts, marked=marked, suffixes=suffixes)


def build_report(results: "Sequence[str | Path]", out: "str | Path | None", formats: Sequence[str] = ("md", "tex", "html"),
                 mos: "str | Path | None" = None, n_boot: int = N_BOOT, figures: bool = True,
                 audit: "str | Path | None" = None, paper: bool = True,
                 preferences: "str | Path | None" = None, mos_all_raters: bool = False,
                 into_existing: bool = False, appendix: Sequence[str] = (),
                 progress: "Callable[[str], None] | None" = None, people: "str | Path | None" = None) -> Report:
    """Write tables (md/tex/html), ``intervals.csv``, analyses and figures; return the Markdown.

    ``out`` is the command's one output (:func:`hug_vis_dataset.outputs.claim`): outside every results
    folder and ratings file it reads; the report is written in a staging folder of it and merged in, so
    it replaces an earlier report's files (and removes those this one does not write again) and refuses,
    before writing anything, a file there that is not an earlier report's, unchanged. ``None``: nothing
    is written (the Markdown is returned).

    ``audit``: a ``hugvis audit robustness`` folder; its noise floors follow the Findings section.
    ``preferences``: a pairwise CSV; its Bradley-Terry strengths and their agreement with the MOS and
    the metrics join the Findings (:mod:`hug_vis_dataset.reporting.pairwise`).
    ``mos_all_raters``: count the raters quality control flags in Tables 6/8/10 (by default they are
    left out, :mod:`hug_vis_dataset.studies.mos_qc`).
    ``paper``: print the paper's published rows (:func:`paper_rows`, origin ``paper``) in each
    task table beside the stored rows, ranked only with full-grid runs.
    ``appendix``: Markdown lines put at the end of ``report.md`` (the demo's simulated study status).
    ``people``: an emotion study's exported answers; Table 4 gains a People row per input setting and the block
    "People as the ceiling of emotion recognition" follows it (:mod:`hug_vis_dataset.reporting.people`; the raters
    quality control flags are left out unless ``mos_all_raters``).
    ``progress``: called with one line per step (what it reads or computes, with counts); ``hugvis report`` prints
    them on stderr unless ``--quiet``.
    """
    if out is None:
        return _build_report(results, None, formats, mos, n_boot, figures, audit, paper, preferences, mos_all_raters,
                             appendix, progress, people)
    from ..outputs import claim

    inputs = [("RESULTS", r) for r in results] + [("--mos", mos), ("--preferences", preferences), ("--audit", audit),
                                                  ("--people", people)]
    output = claim("hugvis report", out, "report", inputs=inputs, into_existing=into_existing)
    # report.md is always written: someone's file there refuses the report now, not after every table is computed.
    output.check_replaceable(["report.md"])
    with output.staged() as stage:
        report = _build_report(results, stage, formats, mos, n_boot, figures, audit, paper, preferences,
                               mos_all_raters, appendix, progress, people)
    return Report(report.markdown, [Path(out) / p.relative_to(stage) for p in report.files], report.tables,
                  report.skipped, report.mos_tables)


def _build_report(results, out, formats, mos, n_boot, figures, audit, paper, preferences, mos_all_raters,
                  appendix: Sequence[str] = (), progress=None, people=None) -> Report:
    """:func:`build_report` into the folder ``out`` (a staging folder), or nowhere when it is None."""
    import time

    import pandas as pd

    from ..statistics.evidence import Comparisons
    from ..statistics.sums import RowsIndex

    for f in formats:
        if f not in FORMATS:
            raise ValueError(f"unknown format {f!r}; choose from {sorted(FORMATS)}")
    started = time.perf_counter()

    def step(text: str) -> None:
        if progress is not None:
            progress(f"[{time.perf_counter() - started:6.1f} s] {text}")

    skipped_folders: list[str] = []
    origins: dict[tuple[str, str], str] = {}
    samples: dict[tuple[str, str], Any] = {}
    step(f"reading the stored runs of {len(results)} results folder(s) ...")
    rows, frames, set_rows, summaries = load_results(results, skipped_folders, origins, samples)
    step(f"read {len(summaries)} run(s), {0 if rows is None else len(rows):,} per-clip rows"
         + (f", {len(skipped_folders)} damaged run(s) left out" if skipped_folders else ""))
    comparisons = Comparisons.from_rows(rows, origins)
    stored, answers = rows, None
    if people is not None:  # Table 4's People rows: per-clip rows of the emotion study's counted answers
        from .people import read_people

        answers = read_people(people, mos_all_raters)
        rows = pd.concat([r for r in (rows, answers.rows) if r is not None and len(r)], ignore_index=True)
        step(f"read {len(answers.answers):,} counted emotion-study answers for Table 4's People rows")
    evidence = RowsIndex(rows) if rows is not None else None
    out_dir = Path(out) if out is not None else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
    md = ["# HUG-VIS results", ""]
    if skipped_folders:
        md += ["Results folders left out (unreadable):"] + [f"- {s}" for s in skipped_folders] + [""]
    files: list[Path] = []
    tables = task_tables(rows, frames, set_rows, summaries, n_boot) if rows is not None else {}
    step(f"task tables and their intervals ({n_boot} actor-bootstrap replicates): "
         + ", ".join(f"{catalog.task(t).label} {len(v[0])} row(s)" for t, v in tables.items()))
    interval_rows, mos_tables = [], []
    synthetic = {s["task"] for s in summaries if s.get("provenance", {}).get("dataset", {}).get("synthetic") is True}
    for task, (table, cis, skipped, protocol) in tables.items():
        computed = cis if isinstance(cis, dict) else {}
        cis = with_own_actors(computed, rows, task)  # shown with each row's own actors; intervals.csv as computed
        mine = {model: origin for (t, model), origin in origins.items() if t == task}
        published = paper_rows(task) if paper else None
        md += [f"## {catalog.task(task).label} ({catalog.paper_table_of(task)}, aggregation: {PROTOCOL_NAMES[protocol]})",
               "",
               _render(task, table, "markdown", cis, task in synthetic, mine, published, protocol,
                       comparisons=comparisons, evidence=evidence), ""]
        beyond = beyond_paper_shown(task, table)
        if beyond:
            md += [f"### {catalog.task(task).label}: beyond the paper ({', '.join(catalog.spec(m).label for m in beyond)})", "",
                   _render(task, table, "markdown", cis, task in synthetic, mine, None, protocol, beyond=True,
                           comparisons=comparisons, evidence=evidence), ""]
        md += skipped_markdown(skipped)
        md += [line for line in [samples_line({m: part for (t, m), part in samples.items() if t == task})] if line]
        failed = int(table["n_failed"].sum())
        if failed:
            md.append(f"- {failed} failed clip(s) excluded from the means (see coverage.json per model)")
        missing = int(table["n_missing"].sum()) if "n_missing" in table.columns else 0
        if missing:
            partial = sorted(label for label in table.index if int(table.at[label, "n_missing"]))
            md.append(f"- {missing} missing clip(s) (never predicted) in {', '.join(partial)}: {PARTIAL_RULE}")
        md.append("")
        if task == "emotion" and people is not None:
            from .people import people_markdown

            md += people_markdown(stored, answers, comparisons, n_boot or N_BOOT, out_dir, files)
        for (model, metric), ci in computed.items():
            interval_rows.append({"task": task, "model": model, "metric": metric, "estimate": ci.estimate,
                                  "low": ci.low, "high": ci.high, "n_clusters": ci.n_clusters})
        if out_dir:
            for f in formats:
                path = out_dir / f"{task}.{f}"
                text = _render(task, table, FORMATS[f], cis, task in synthetic, mine, published, protocol,
                               comparisons=comparisons, evidence=evidence)
                if f == "html":  # a whole document (charset, styles), not a bare fragment
                    text = html_page(f"{catalog.paper_table_of(task)} ({catalog.task(task).label}): HUG-VIS results", text)
                path.write_text(text, encoding="utf-8")
                files.append(path)
                if beyond:  # the columns beside the paper's table, in their own file
                    path = out_dir / f"{task}_beyond_paper.{f}"
                    text = _render(task, table, FORMATS[f], cis, task in synthetic, mine, None, protocol, beyond=True,
                                   comparisons=comparisons, evidence=evidence)
                    if f == "html":
                        text = html_page(f"{catalog.paper_table_of(task)} ({catalog.task(task).label}), beyond the paper: HUG-VIS "
                                         "results", text)
                    path.write_text(text, encoding="utf-8")
                    files.append(path)
    for task in TASK_ORDER:
        skipped_only = {m: w for s in summaries if s["task"] == task and task not in tables
                        for m, w in s["metrics"]["skipped"].items()}
        if skipped_only:
            md += [f"## {catalog.task(task).label} ({catalog.paper_table_of(task)})", "",
                   "No metric of this task could run here:"]
            md += skipped_markdown(skipped_only) + [""]
    if out_dir and interval_rows:
        pd.DataFrame(interval_rows).to_csv(out_dir / "intervals.csv", index=False)
        files.append(out_dir / "intervals.csv")
    rows = stored  # the analyses read the stored runs (people are Table 4's and their block's)
    if rows is not None and len(rows):
        from .findings import pooled_rows

        step("cross-task analyses (Eq. 1-6) on the complete runs ...")
        md += _crosstask(pooled_rows(rows, comparisons), out_dir, figures, files,
                         left_out=[comparisons.left_out_words(t) for t in TASK_ORDER])
    if rows is not None and len(rows):
        from .findings import findings_markdown

        md += findings_markdown(rows, out_dir, figures, files, mos, preferences, n_boot, paper, mos_all_raters,
                                formats, comparisons=comparisons, evidence=evidence,
                                tables={t: v[0] for t, v in tables.items()}, step=step, summaries=summaries, samples=samples)
    if audit is not None:
        from .findings import noise_floor_markdown

        md += noise_floor_markdown(audit) or [f"(no robustness audit found in {Path(audit).name}: run "
                                              "`hugvis audit robustness` first)", ""]
    if mos is not None:
        step("MOS tables (Tables 6, 8, 10) ...")
        md += _mos_section(mos, tables, summaries, out_dir, n_boot, formats, files, mos_all_raters, mos_tables)
    else:
        md += ["## Criterion-specific MOS (Tables 6, 8, 10)", "", MOS_NEEDS_RATINGS + ".", ""]
    step(f"report of {len(files)} file(s) done")
    text = "\n".join(md)
    if appendix:
        text = text.rstrip("\n") + "\n\n" + "\n".join(appendix)
    if out_dir:
        (out_dir / "report.md").write_text(text, encoding="utf-8")
        files.append(out_dir / "report.md")
    return Report(text, files, {t: v[0] for t, v in tables.items()}, skipped_folders, mos_tables)


def _crosstask(rows, out_dir, figures: bool, files: list, left_out: Sequence[str] = ()) -> list[str]:
    from ..metrics.crosstask import PreparedRows, difficulty_agreement, emotion_difficulty

    md = ["## Cross-task analyses", ""]
    md += [line for line in left_out if line] + ([""] if any(left_out) else [])
    difficulty = prepared = None
    try:
        prepared = PreparedRows.of(rows)  # once for Figs. 8-10
        difficulty = emotion_difficulty(prepared)
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

            written = crosstask_figures(prepared if prepared is not None else rows, out_dir / "figures", motion=motion,
                                        difficulty=difficulty)
            for name, paths in written.items():
                files.extend(paths)
                md.append(f"- {name}: " + ", ".join(p.name for p in paths))
            md.append("")
        except (ValueError, KeyError, ImportError) as err:
            md += [f"(figures not written: {err})", ""]
    return md


def motion_analysis(rows) -> "tuple[object | None, list[str]]":
    """Motion difficulty vs dtSSD (paper Eq. 5-6, Fig. 11) from stored rows, as Markdown lines.

    Returns:
        ``(MotionRelation or None, markdown lines)``
        (:func:`hug_vis_dataset.metrics.crosstask.motion_relation`).
    """
    from ..metrics.crosstask import motion_relation

    try:
        result = motion_relation(rows)
    except ValueError as err:
        return None, [f"(motion difficulty, Fig. 11: {err})", ""]
    o = result.relation["overall"]
    return result, [f"Motion difficulty vs model-averaged dtSSD (Eq. 5-6, Fig. 11) over {len(result.clips)} clips: "
                    f"Spearman rho = {o['spearman_rho']:.2f}, OLS dtSSD = {o['slope']:.3f} x D_motion + "
                    f"{o['intercept']:.3f}", ""]

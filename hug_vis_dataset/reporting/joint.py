"""The report's and the Space's joint view of automatic metrics and human judgment (finding ii, measured).

:func:`joint_tables` runs :func:`hug_vis_dataset.studies.human_metric.human_metric_tables` on the stored rows
and the ratings / pairwise answers (the one computation every door shares); :func:`joint_wide` renders one
task's joint table, the table a paper should print: per system the human score and each metric, each with
its 95% actor-bootstrap interval and rank interval, a dagger on a metric's cell where that system is in a
discordant pair (people and the metric both significant, in opposite directions);
:func:`joint_markdown` is the Findings block of ``hugvis report`` (and the files it writes:
``joint_<task>.{md,tex,html}``, ``human_metric_agreement.csv``, ``joint_table.csv``, ``pair_p_values.csv``,
``metric_comparisons.csv``, ``mos_prediction.csv``), followed by what the paper's own Tables 5-10 allow
(:mod:`hug_vis_dataset.studies.human_metric_paper`).

Example:
    >>> cell(4.114, 3.9, 4.3, 1, 1, 2)
    '4.11 (3.90, 4.30); rank 1 (1-2)'
    >>> cell(0.8123, float("nan"), float("nan"), 2, float("nan"), float("nan"), "ssim", "†")
    '0.812; rank 2 †'
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .. import catalog
from ..presentation.labels import readable, task_label
from ..datamodel.results import reserved_label

TITLE = "### Automatic metrics and human judgment jointly, with uncertainty (finding ii)"
INTRO = ("For every pair of systems, the one-sided p-value that one is better than the other under people "
         "(per-clip MOS, or pairwise answers) and under each metric, each from a paired sign-flip test that flips "
         "whole actors (exact when 2^actors <= 1000 patterns, else 1000 drawn with seed 0; mid-p). "
         "SPA = 1 - mean |p(people) - p(metric)| over the pairs (Thompson et al. 2024), top-k SPA over the pairs with "
         "a system in the people's top k; intervals from actors resampled as clusters. Tie-calibrated accuracy: the "
         "pairwise accuracy of the system scores with ties (Deutsch et al. 2023), its tie threshold in the metric's "
         "units. A pair is discordant when people and the metric are both significant (two-sided p < 0.05) in "
         "opposite directions (marked †). PERM-BOTH: the p-value that metric B agrees with people better than "
         "metric A (SPA), actors swapped between the two z-scored metrics. docs/FINDINGS.md gives the formulas.")
SOURCE_LABEL = {"MOS": "MOS", "pairwise": "Bradley-Terry strength"}


def cell(value: float, low: float, high: float, rank: float, rank_low: float, rank_high: float,
         metric: "str | None" = None, mark: str = "", small: str = "") -> str:
    """One joint-table cell: value, interval, rank and rank interval (digits: the catalog's for a metric);
    ``small``: the small-sample mark (:func:`hug_vis_dataset.statistics.rules.interval_mark`) after the interval and
    the rank interval when they cannot be read as 95% intervals.

    >>> cell(4.114, 3.9, 4.3, 1, 1, 2, small="?")
    '4.11 (3.90, 4.30) ?; rank 1 (1-2) ?'
    """
    from .. import catalog

    def number(v: float) -> str:
        return catalog.spec(metric).printed(v) if metric else f"{v:.2f}"

    tail = f" {small}" if small else ""
    if value is None or not math.isfinite(value):
        return "n/a"
    text = number(value)
    if math.isfinite(low) and math.isfinite(high):
        text += f" ({number(low)}, {number(high)}){tail}"
    if math.isfinite(rank):
        text += f"; rank {int(rank)}"
        if math.isfinite(rank_low) and math.isfinite(rank_high):
            text += f" ({int(rank_low)}-{int(rank_high)}){tail}"
    return f"{text} {mark}" if mark else text


def _actors(tables) -> dict:
    """(task, criterion, source) -> the actors resampled (every judge of a comparison shares them)."""
    s = tables.summary
    return {(t, c, src): int(n) for t, c, src, n in zip(s["task"], s["criterion"], s["source"], s["n_actors"])}


def small_sample_note(tables, task: "str | None" = None) -> str:
    """The legend of the small-sample mark for the comparisons shown ("" when none is small)."""
    from ..statistics.rules import small_sample_legend

    s = tables.summary if task is None else tables.summary[tables.summary["task"] == task]
    return small_sample_legend(s["n_actors"].astype(int))


def joint_tables(rows, ratings: Any = None, preferences: Any = None, n_boot: "int | None" = None, seed: int = 0,
                 all_raters: bool = False, tasks: "tuple[str, ...] | None" = None, joint_only: bool = False):
    """``(HumanMetricTables or None, why-empty)`` of the stored rows and the human judgments (``n_boot``: the
    library's default when None; ``all_raters``: keep the raters quality control flags; ``tasks``: only these;
    ``joint_only``: the joint table, SPA and discordant pairs only, without PERM-BOTH and P.1401, which the
    Space's Findings tab does not show: the same numbers for what it shows, computed in half the time)."""
    from ..studies.human_metric import HumanMetricInputError, human_metric_tables
    from ..metrics.human_agreement import DEFAULT_BOOT

    if ratings is None and preferences is None:
        return None, "no human judgments: pass --mos RATINGS.csv and/or --preferences PAIRWISE.csv"
    try:
        return human_metric_tables(rows, ratings, preferences, n_boot=DEFAULT_BOOT if n_boot is None else n_boot,
                                   seed=seed, all_raters=all_raters, tasks=tasks, compare=not joint_only,
                                   predict=not joint_only), ""
    except HumanMetricInputError as err:
        return None, str(err)


def joint_wide(tables, task: str):
    """One task's joint table as text cells: a row per (criterion, source, system), a column per judge
    (people first, then the metrics by their catalog label)."""
    import pandas as pd

    from .. import catalog

    from ..statistics.rules import interval_mark

    joint = tables.joint[tables.joint["task"] == task]
    actors = _actors(tables)
    records = []
    for (criterion, source, system), group in joint.groupby(["criterion", "source", "system"], sort=False):
        small = interval_mark(actors.get((task, criterion, source), 0))
        record = {"Criterion": catalog.label_of(criterion), "People": SOURCE_LABEL.get(source, source),
                  "System": reserved_label(system)}
        for r in group.itertuples():
            metric = None if r.judge == "people" else r.judge
            name = f"people ({SOURCE_LABEL.get(source, source)})" if metric is None else catalog.spec(metric).label
            record[name] = cell(r.value, r.low, r.high, r.rank, r.rank_low, r.rank_high, metric,
                                "†" if r.discordant_with else "", small)
        records.append(record)
    frame = pd.DataFrame(records)
    # One human source per criterion block: the people column's header names it, so merge them.
    people = [c for c in frame.columns if str(c).startswith("people (")]
    if people:
        frame.insert(3, "People's score", frame[people].bfill(axis=1).iloc[:, 0])
        frame = frame.drop(columns=people)
    return frame


def discordant_lines(tables, task: str) -> list[str]:
    """One line per discordant pair of a task: who people prefer, who the metric prefers, both p-values."""
    from .. import catalog

    pairs = tables.pairs[(tables.pairs["task"] == task) & tables.pairs["discordant"]]
    lines = []
    for r in pairs.itertuples():
        people_pick, metric_pick = ((r.system_a, r.system_b) if r.human_difference > 0 else (r.system_b, r.system_a))
        lines.append(f"- † {catalog.label_of(r.criterion)} ({SOURCE_LABEL.get(r.source, r.source)}), "
                     f"{catalog.spec(r.metric).label}: people prefer {reserved_label(people_pick)} "
                     f"(two-sided p = {r.p_human_two_sided:.3g}), the metric prefers {reserved_label(metric_pick)} "
                     f"(p = {r.p_metric_two_sided:.3g})")
    return lines


def summary_frame(tables):
    """The agreement rows, SPA and its intervals as text, for the report and the Space."""
    import pandas as pd

    from .. import catalog

    from ..statistics.rules import interval_mark

    s = tables.summary

    def interval(point, low, high, actors):
        if not math.isfinite(point):
            return "n/a"
        if not (math.isfinite(low) and math.isfinite(high)):
            return f"{point:.3f}"
        mark = interval_mark(int(actors), low, high)
        return f"{point:.3f} [{low:.3f}, {high:.3f}]" + (f" {mark}" if mark else "")

    return pd.DataFrame({
        "Task": s["task"].map(task_label), "Criterion": s["criterion"].map(catalog.label_of),
        "People": s["source"].map(lambda v: SOURCE_LABEL.get(v, v)),
        "Metric": s["metric"].map(lambda m: catalog.spec(m).label), "Systems": s["n_systems"], "Actors": s["n_actors"],
        "SPA [95%]": [interval(*v) for v in zip(s["spa"], s["spa_low"], s["spa_high"], s["n_actors"])],
        "top-k SPA [95%]": [interval(*v) for v in zip(s["spa_top_k"], s["spa_top_k_low"], s["spa_top_k_high"],
                                                       s["n_actors"])],
        catalog.label_of("kendall_tau_b"): s["kendall_tau_b"], catalog.label_of("acc_eq"): s["acc_eq"],
        catalog.label_of("acc_eq_epsilon"): [catalog.spec(m).printed(e) if math.isfinite(e) else "n/a"
                                             for m, e in zip(s["metric"], s["acc_eq_epsilon"])],
        catalog.label_of("n_discordant"): s["n_discordant"]})


def prediction_frame(prediction):
    """ITU-T P.1401's mapping of each metric to the MOS as a person reads it: the four coefficients in one cell, the
    constraint as yes / no, every key by its label.

    Example:
        >>> import pandas as pd
        >>> p = pd.DataFrame([{"task": "voice_cloning", "metric": "dnsmos", "criterion": "emotion_naturalness",
        ...                    "n_items": 9, "n_left_out": 0, "a": 1.0, "b": 0.5, "c": 0.0, "d": 0.0,
        ...                    "constrained": True, "rmse": 0.4, "rmse_star": 0.1, "outlier_ratio": 0.0}])
        >>> list(prediction_frame(p).columns)
        ['Task', 'Metric', 'Criterion', 'Items', 'Items left out', 'Mapping a + b x + c x^2 + d x^3', \
'Monotonic constraint active', 'RMSE', 'RMSE*', 'Outlier ratio']
    """
    if prediction is None or not len(prediction):
        return prediction
    mapping = [", ".join(f"{k} = {float(getattr(r, k)):.3g}" for k in "abcd") for r in prediction.itertuples()]
    shown = prediction.drop(columns=[c for c in "abcd" if c in prediction.columns])
    shown.insert(shown.columns.get_loc("n_left_out") + 1, "Mapping a + b x + c x^2 + d x^3", mapping)
    return readable(shown)


def _joint_files(out_dir: Path, task: str, tables, block: list[str], notes: list[str],
                 formats: "tuple[str, ...]") -> list[Path]:
    """``joint_<task>.<md|tex|html>``: the joint table in each of the report's formats, with its notes."""
    from ..presentation.tables import text_table
    from .html import html_note, html_page

    caption = (f"{task_label(task)}: people and each metric per system, 95% actor-bootstrap interval (low, high), rank and "
               "95% rank interval; † = in a discordant pair (both two-sided p < 0.05, opposite directions)")
    frame = joint_wide(tables, task)
    written = []
    for fmt in formats:
        path = out_dir / f"joint_{task}.{fmt}"
        if fmt == "md":
            text = "\n".join([f"# Joint table: {catalog.task(task).label}", "", INTRO, "", *block])
        elif fmt == "tex":
            text = text_table(frame, "latex", caption) + "\n" + "".join(f"% {n}\n" for n in notes)
        else:
            text = html_page(f"Joint table ({task_label(task)}): HUG-VIS", text_table(frame, "html", caption) + "\n"
                             + "\n".join(html_note(n) for n in [INTRO, *notes]))
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def _why_empty(note: str, summaries: "list | None") -> str:
    """A task's "no per-clip values" note in the words of its stored runs (:func:`~.findings.why_no_values`: none
    stored, or stored without the weights their metrics need); any other note as it is."""
    from ..presentation.labels import why_no_values
    from ..studies.human_metric import NO_VALUES

    for task in catalog.task_names():
        if summaries is not None and note == f"{catalog.task(task).label}: {NO_VALUES}":
            return why_no_values(task, [s["metrics"]["skipped"] for s in summaries if s.get("task") == task])
    return note


def joint_markdown(rows, ratings: Any, preferences: Any, out_dir: "Path | None", files: list,
                   n_boot: "int | None" = None, paper: bool = True, all_raters: bool = False,
                   formats: "tuple[str, ...]" = ("md",), summaries: "list | None" = None) -> list[str]:
    """The Findings block (see the module docstring); writes its files into ``out_dir`` (the report's
    staging folder) when given, the joint table in each of ``formats`` (``md``, ``tex``, ``html``); ``summaries``:
    the stored runs' summaries, to say why a task has no per-clip value."""
    from ..presentation.tables import markdown_table
    from .. import catalog

    md = [TITLE, "", INTRO, ""]
    tables, why = joint_tables(rows, ratings, preferences, n_boot, all_raters=all_raters)
    if tables is None:
        md += [why, ""]
    else:
        notes = sorted(set(n for n in tables.summary["note"] if n))
        small = small_sample_note(tables)
        notes += [small] if small else []
        md += ["**Agreement per metric and criterion** (top-k: k = "
               f"{int(tables.summary['top_k'].iloc[0])}):", "", markdown_table(summary_frame(tables), 3), ""]
        md += [f"- {n}" for n in notes] + ([""] if notes else [])
        for task in dict.fromkeys(tables.summary["task"]):
            block = [f"**{task_label(task)}**: per system the human score and each metric, its 95% actor-bootstrap "
                     "interval (low, high), its rank and 95% rank interval (best-worst); † = in a discordant pair "
                     "for that metric.", "", markdown_table(joint_wide(tables, task), 3), ""]
            lines = discordant_lines(tables, task)
            block += (lines or ["No discordant pair."]) + [""]
            md += block
            if out_dir:
                files += _joint_files(out_dir, task, tables, block, lines or ["No discordant pair."], formats)
        if len(tables.comparisons):
            c = tables.comparisons
            shown = c.assign(metric_a=c["metric_a"].map(lambda m: catalog.spec(m).label),
                             metric_b=c["metric_b"].map(lambda m: catalog.spec(m).label),
                             people=c["source"].map(lambda v: SOURCE_LABEL.get(v, v)),
                             criterion=c["criterion"].map(catalog.label_of),
                             task=c["task"].map(task_label))[
                ["task", "criterion", "people", "metric_a", "metric_b", "spa_a", "spa_b", "delta", "p_value",
                 "n_permutations"]].rename(columns={
                    "task": "Task", "criterion": "Criterion", "people": "People", "metric_a": "Metric A",
                    "metric_b": "Metric B", "spa_a": "SPA of A", "spa_b": "SPA of B", "delta": "B - A", "p_value": "p",
                    "n_permutations": "Permutations"})
            md += ["**Is metric B better aligned than metric A?** (PERM-BOTH on SPA; p-value that B agrees better)",
                   "", markdown_table(shown, 3), ""]
        if len(tables.mos_prediction):
            md += ["**Metrics that predict MOS** (ITU-T P.1401: monotonic cubic mapping of the metric to the "
                   "per-clip MOS, items = rated (system, clip) with at least two votes; RMSE on N - 4 degrees of "
                   "freedom; RMSE*: errors inside each MOS's 95% interval count 0; outlier ratio: share outside):",
                   "", markdown_table(prediction_frame(tables.mos_prediction), 3), ""]
        notes = [_why_empty(n, summaries) for n in tables.notes]
        md += [f"- {n}" for n in notes] + ([""] if notes else [])
        if out_dir:
            for name, frame in (("human_metric_agreement", tables.summary), ("joint_table", tables.joint),
                                ("pair_p_values", tables.pairs), ("metric_comparisons", tables.comparisons),
                                ("mos_prediction", tables.mos_prediction)):
                frame.to_csv(out_dir / f"{name}.csv", index=False)
                files.append(out_dir / f"{name}.csv")
    if paper:
        from ..studies.human_metric_paper import paper_markdown

        # The block's task headings become bold lines here: a heading "### <task>" is the MOS section's.
        block = [f"*Paper, {line[5:]}*" if line.startswith("#### ") else line for line in paper_markdown().splitlines()]
        md += ["**From the paper's own Tables 5-10** (system means only: Kendall tau-b, the tie-calibrated accuracy "
               "and P.1401's mapping and RMSE apply; SPA, intervals, rank intervals, discordant pairs, PERM-BOTH and "
               "P.1401's RMSE* and outlier ratio need per-clip rows and ratings):", "", *block, ""]
    return md

"""The Cross-task tab's analyses (paper section 4.3, Fig. 8-11) on the stored per-clip rows, for the explorer.

The same functions as the report (:mod:`hug_vis_dataset.metrics.crosstask`, :func:`reporting.report.motion_analysis`,
:mod:`hug_vis_dataset.reporting.figures`); this module only chooses the rows, applies the tab's filters and says in words what a
result was computed from, or why it is empty (no model ticked, a metric absent and the weights it needs).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from .. import catalog
from ..presentation.escaping import markdown_text
from ..leaderboard.board import ALL

ANALYSES = ("Emotion difficulty (Fig. 8)", "Difficulty agreement (Fig. 9)", "Source difficulty (Fig. 10)",
            "Motion difficulty (Fig. 11)")
#: The cross-task filters each analysis uses; the others are hidden for it.
ANALYSIS_FILTERS: dict[str, tuple[str, ...]] = {
    ANALYSES[0]: ("emotion", "metric"), ANALYSES[1]: (), ANALYSES[2]: ("emotion",), ANALYSES[3]: ()}


def missing_cause(task: str, metrics, selected, stored, stored_tasks=()) -> str:
    """Why the chosen models' rows lack ``metrics`` of ``task``, from its real cause (Markdown; "" when none
    lacks): no run of the task stored, none of its models ticked, or the runs did not compute them (the weights
    they need, with the command). ``stored_tasks``: the tasks of every stored run, those without a per-clip row
    (every metric needed weights) included.

    Example:
        >>> import pandas as pd
        >>> stored = pd.DataFrame({"task": ["vision_driven", "audio_driven"], "model": ["v", "a"],
        ...                        "metric": ["psnr", "sync_c"], "status": "ok"})
        >>> missing_cause("vision_driven", ["psnr"], stored[stored.model == "a"], stored)
        'no Vision-driven video generation model is ticked: tick one under Models'
        >>> missing_cause("vision_driven", ["psnr", "lpips"], stored, stored)
        'the Vision-driven video generation runs have no LPIPS values: it needs weights (`hugvis weights download alexnet lpips_alex_linear`)'
        >>> missing_cause("matting", ["mad"], stored, stored)
        'no Video matting run is stored: score one (`hugvis evaluate matting`, or the Score tab)'
    """
    from ..weights import download_command

    label = catalog.task(task).label
    has_rows = bool((stored["task"] == task).any())
    if not has_rows and task not in stored_tasks:
        return f"no {label} run is stored: score one (`hugvis evaluate {task}`, or the Score tab)"
    mine = selected[selected["task"] == task]
    if has_rows and not len(mine):
        return f"no {label} model is ticked: tick one under Models"
    ok = mine[mine["status"] == "ok"] if "status" in mine.columns else mine
    absent = [m for m in metrics if m not in set(ok["metric"])]
    if not absent:
        return ""
    names = ", ".join(catalog.label_of(m) for m in absent)
    weights = catalog.weights_of(absent)
    if weights:
        return (f"the {label} runs have no {names} values: {'it needs' if len(absent) == 1 else 'they need'} weights "
                f"(`{download_command(weights)}`)")
    return f"the {label} runs have no {names} values: score them with those metrics"


def crosstask_view(stored: Any, work_dir: "str | Path", analysis: str, models: "list[str] | None" = None,
                   emotion: str = ALL, metric: str = ALL, stored_tasks=()):
    """(table, figure path or None, message) of one analysis on the chosen models' rows of ``stored``.

    Only the filters of :data:`ANALYSIS_FILTERS` apply. ``metric`` keeps one column of Fig. 8;
    ``emotion`` keeps one emotion's row of Fig. 8 (its min-max normalisation needs every
    emotion, so D is computed on all of them) and, for Fig. 10, restricts the clips the
    z-scores and the reported Spearman rho are computed on. ``models=[]`` (every box unticked) is said, never
    read as all. ``stored_tasks``: the tasks of the stored runs (an empty result names its real cause,
    :func:`missing_cause`).
    """
    import pandas as pd

    from ..reporting import figures
    from ..metrics import crosstask as ct
    from ..reporting.report import motion_analysis

    applies = ANALYSIS_FILTERS.get(analysis, ())
    # A filter that does not apply, or is left empty, is All; below, only ``== ALL`` is asked.
    emotion = emotion if "emotion" in applies and emotion else ALL
    metric = metric if "metric" in applies and metric else ALL
    if models is not None and not list(models) and len(stored):  # every box unticked: say so, never use all
        return pd.DataFrame(), None, "No model is ticked: tick at least one model under Models."
    selected = stored[stored["model"].isin(models)] if models else stored
    if not len(selected):
        return pd.DataFrame(), None, ("No stored per-clip rows yet: score a run in the Score tab, or run "
                                      "`hugvis evaluate TASK ... --out RESULTS` and start the Space with "
                                      "`--results RESULTS`.")
    stem = Path(work_dir) / f"fig-{uuid.uuid4().hex}"
    if analysis in ANALYSES[:2]:
        D = ct.emotion_difficulty(selected).D.dropna(axis=1, how="all")
        if analysis == ANALYSES[0]:
            if metric != ALL:  # one metric: shown alone, or said to be absent (never the others instead)
                if metric not in D.columns:
                    return pd.DataFrame(), None, absent_metric(metric, D.columns, selected, stored, stored_tasks)
                D = D[[metric]]
            paths = figures.plot_emotion_difficulty(D, stem)  # the report's figure, title and all
            table = D if emotion == ALL else D.loc[[emotion]] if emotion in D.index else D.iloc[:0]
            note = "" if emotion == ALL else f" (D normalised over all seven emotions; showing {emotion})"
            return table.round(3).reset_index(names="Emotion"), png_of(paths), rows_basis(selected) + note
        if D.shape[1] < 2:
            causes = [c for c in (missing_cause(m.task, [m.metric], selected, stored, stored_tasks)
                                  for m in ct.DEFAULT_PAPER_METRICS
                                  if m.label not in D.columns) if c]
            return pd.DataFrame(), None, (f"Difficulty agreement needs two or more metrics with values; the chosen "
                                          f"models' rows have {', '.join(map(str, D.columns)) or 'none'}: "
                                          + "; ".join(dict.fromkeys(causes)) + ".")
        rho = ct.difficulty_agreement(D)
        paths = figures.plot_agreement(rho, stem)
        return rho.round(3).reset_index(names="Metric"), png_of(paths), rows_basis(selected)
    if analysis == ANALYSES[2]:
        rows = selected if emotion == ALL else selected[selected["emotion"] == emotion]
        causes = [c for c in (missing_cause(t, list(m), selected, stored, stored_tasks) for t, m in (
            ("audio_driven", ct.DEFAULT_AD_METRICS), ("vision_driven", ct.DEFAULT_VD_METRICS))) if c]
        if causes:  # the rows Fig. 10 needs are not all there: say which and why
            return pd.DataFrame(), None, ("Source difficulty needs per-clip rows of audio- and vision-driven runs "
                                          f"(CSIM, Sync-C/D; LPIPS, CSIM, PSNR, SSIM): {'; '.join(causes)}.")
        try:
            result = ct.source_difficulty(rows)
        except (ValueError, KeyError) as err:
            return pd.DataFrame(), None, f"Source difficulty cannot be computed on these rows: {markdown_text(err)}."
        paths = figures.plot_source_difficulty(result.pairs["Z_AD"], result.pairs["Z_VD"], stem)
        scope = "all emotions" if emotion == ALL else emotion
        return (result.pairs.round(4), png_of(paths),
                f"{len(result.pairs)} clips ({scope}), Spearman rho = {result.rho:.2f} on these clips")
    # Motion difficulty: the reference statistics are kept whatever models are selected.
    motion, lines = motion_analysis(pd.concat([selected, stored[stored["task"] == "motion"]]).drop_duplicates())
    if motion is None:
        return pd.DataFrame(), None, " ".join(lines).strip()
    paths = figures.plot_motion_difficulty(motion.d_motion, motion.dtssd, motion.emotions, stem)
    from .viewer import clip_display

    table = pd.DataFrame({"Clip": [clip_display(c) for c in motion.clips], "Emotion": motion.emotions,
                          "D_motion": motion.d_motion, "dtSSD": motion.dtssd}).round(4)
    return table, png_of(paths), lines[0]



def absent_metric(label: str, present, selected=None, stored=None, stored_tasks=()) -> str:
    """Why a chosen Fig. 8 metric has no column, from its real cause (:func:`missing_cause`: no run of its task, none
    ticked, or the runs did not compute it and the weights it needs)."""
    from ..metrics.crosstask import DEFAULT_PAPER_METRICS

    spec = next((m for m in DEFAULT_PAPER_METRICS if m.label == label), None)
    cause = ""
    if spec is not None and spec.task and selected is not None and stored is not None:
        cause = missing_cause(spec.task, [spec.metric], selected, stored, stored_tasks)
    elif spec is not None and spec.task:
        cause = f"score a run of {catalog.task(spec.task).label}"
    return (f"{markdown_text(label)} has no per-clip values in the chosen models' rows (these have: "
            f"{', '.join(map(str, present)) or 'none'}): {cause or 'score its task'}.")


def rows_basis(rows) -> str:
    """What an analysis was computed from, in words: the per-clip rows, and the models, clips and metrics in them.

    Example:
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"model": ["a", "a", "b"], "clip_id": ["c1", "c2", "c1"], "metric": "mad"})
        >>> rows_basis(rows)
        'Computed from 3 stored per-clip rows (one per model, clip and metric): 2 models, 2 clips, 1 metric.'
    """
    def count(n: int, word: str) -> str:
        return f"{n:,} {word}{'' if n == 1 else 's'}"

    return (f"Computed from {count(len(rows), 'stored per-clip row')} (one per model, clip and metric): "
            f"{count(rows['model'].nunique(), 'model')}, {count(rows['clip_id'].nunique(), 'clip')}, "
            f"{count(rows['metric'].nunique(), 'metric')}.")


def png_of(paths) -> "str | None":
    """The first PNG of a figure's written files (the Space shows it), or None."""
    for path in paths or []:
        if str(path).endswith(".png"):
            return str(path)
    return None

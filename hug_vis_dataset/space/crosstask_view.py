"""The Cross-task tab's analyses (paper section 4.3, Fig. 8-11) on the stored per-clip rows, for the explorer.

The same functions as the report (:mod:`hug_vis_dataset.metrics.crosstask`, :func:`reporting.report.motion_analysis`,
:mod:`hug_vis_dataset.figures`); this module only chooses the rows, applies the tab's filters and says in words what a
result was computed from, or why it is empty (no model ticked, a metric absent and the weights it needs).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from .. import catalog
from ..escaping import markdown_text
from ..leaderboard.board import ALL

ANALYSES = ("Emotion difficulty (Fig. 8)", "Difficulty agreement (Fig. 9)", "Source difficulty (Fig. 10)",
            "Motion difficulty (Fig. 11)")
#: The cross-task filters each analysis uses; the others are hidden for it.
ANALYSIS_FILTERS: dict[str, tuple[str, ...]] = {
    ANALYSES[0]: ("emotion", "metric"), ANALYSES[1]: (), ANALYSES[2]: ("emotion",), ANALYSES[3]: ()}


def weights_command(tasks: "tuple[str, ...] | list[str]") -> str:
    """The ``hugvis weights download`` line that lets these tasks' table metrics run."""
    from ..weights import download_command

    return f"`{download_command(catalog.weights_of(m for t in tasks for m in catalog.table_metrics(t)))}`"


def crosstask_view(stored: Any, work_dir: "str | Path", analysis: str, models: "list[str] | None" = None,
                   emotion: str = ALL, metric: str = ALL):
    """(table, figure path or None, message) of one analysis on the chosen models' rows of ``stored``.

    Only the filters of :data:`ANALYSIS_FILTERS` apply. ``metric`` keeps one column of Fig. 8;
    ``emotion`` keeps one emotion's row of Fig. 8 (its min-max normalisation needs every
    emotion, so D is computed on all of them) and, for Fig. 10, restricts the clips the
    z-scores and the reported Spearman rho are computed on. ``models=[]`` (every box unticked) is said, never
    read as all.
    """
    import pandas as pd

    from .. import figures
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
                    return pd.DataFrame(), None, absent_metric(metric, D.columns)
                D = D[[metric]]
            paths = figures.plot_emotion_difficulty(D, stem)  # the report's figure, title and all
            table = D if emotion == ALL else D.loc[[emotion]] if emotion in D.index else D.iloc[:0]
            note = "" if emotion == ALL else f" (D normalised over all seven emotions; showing {emotion})"
            return table.round(3).reset_index(names="Emotion"), png_of(paths), rows_basis(selected) + note
        if D.shape[1] < 2:
            return pd.DataFrame(), None, (f"Difficulty agreement needs two or more metrics with values; "
                                          f"the stored rows have {list(D.columns)}. Score more tasks, or get "
                                          f"the weights: {weights_command(catalog.task_names(with_paper_table=True))}.")
        rho = ct.difficulty_agreement(D)
        paths = figures.plot_agreement(rho, stem)
        return rho.round(3).reset_index(names="Metric"), png_of(paths), rows_basis(selected)
    if analysis == ANALYSES[2]:
        rows = selected if emotion == ALL else selected[selected["emotion"] == emotion]
        try:
            result = ct.source_difficulty(rows)
        except (ValueError, KeyError) as err:
            return pd.DataFrame(), None, (
                f"Source difficulty needs per-clip CSIM/Sync and LPIPS/CSIM/PSNR/SSIM rows of both audio- and "
                f"vision-driven runs ({err}). Their network metrics need weights: "
                f"{weights_command(('audio_driven', 'vision_driven'))}, then score both tasks.")
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



def absent_metric(label: str, present) -> str:
    """Why a chosen Fig. 8 metric has no column: no run of its task scored it here; the weights it needs."""
    from ..metrics.crosstask import DEFAULT_PAPER_METRICS
    from ..weights import download_command

    spec = next((m for m in DEFAULT_PAPER_METRICS if m.label == label), None)
    weights = catalog.weights_of([spec.metric]) if spec is not None else ()
    how = (f"score a run of {catalog.task(spec.task).label}" if spec is not None and spec.task else "score its task")
    return (f"{markdown_text(label)} has no per-clip values in the chosen models' rows (these have: "
            f"{', '.join(present) or 'none'}): {how}"
            + (f"; its metric needs weights: `{download_command(weights)}`" if weights else "") + ".")


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

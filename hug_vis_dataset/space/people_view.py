"""Table 4's People rows on the Space's board, which answers they come from, and what Table 4's notes say.

The source is decided by the one rule (:func:`hug_vis_dataset.studies.judgments.choose_people_source`): the
answers of the emotion study the Space runs (in the results store's ratings log, counted with the study's quality
control) once they cover every input setting the release's simulated raters answer, else the synthetic release's
simulated raters (``simulated_systems/emotion_answers.csv``). The rows are
:func:`hug_vis_dataset.leaderboard.board.people_rows` of :func:`hug_vis_dataset.studies.people.accuracy_table`; the
notes say, per setting, whether the best model is separable from people (the engine's verdict,
:func:`hug_vis_dataset.studies.people.verdict_words`) and which raters quality control left out, and, for the runs
that asked their questions under reordered options (``hugvis predict emotion --circular K``), the plain accuracy,
circular accuracy and flip rate with their intervals (:func:`circular_notes`).
"""

from __future__ import annotations

from typing import Any

from ..datamodel.layout import SIMULATED_EMOTION_ANSWERS_FILE, SIMULATED_SYSTEMS_DIR


def people_source(explorer: Any, all_raters: bool = False):
    """``(Source, [QC lines])`` of the People rows (module docstring); the source's ``ratings`` is None without
    answers."""
    from ..studies.emotion_answers import EmotionAnswerStore
    from ..studies.judgments import choose_people_source, counted_emotion_answers
    from ..studies.rater_qc import QcRules

    try:
        spec = explorer.mos.spec
        rules, study = spec.qc, spec.name if spec.protocol == "emotion" else None
    except Exception:  # noqa: BLE001 - a broken study file is the MOS tab's to report; QC keeps its defaults
        rules, study = QcRules(), None
    live = EmotionAnswerStore(explorer.mos.ratings.path).frame()
    live = live[live["study"] == study] if study is not None and len(live) else live.iloc[0:0]
    path = explorer.release_dir / SIMULATED_SYSTEMS_DIR / SIMULATED_EMOTION_ANSWERS_FILE
    counted = [counted_emotion_answers(live, all_raters, rules) if len(live) else (None, None),
               counted_emotion_answers(path, all_raters, rules) if path.is_file() else (None, None)]
    source = choose_people_source(counted[0][0], counted[1][0])
    lines = [f"{what}: {qc.note(counted_in='the People rows')}" for what, (_, qc) in
             zip(("Emotion study answers", "Simulated raters (emotion study)"), counted) if qc is not None and qc.raters]
    return source, lines + ([source.note] if source.note else [])


def people_board_rows(explorer: Any, all_raters: bool = False):
    """Board rows of Table 4's People row per input setting (an empty frame without answers)."""
    from ..leaderboard.board import SUBMITTED, SUBSET, SYNTHETIC, BOARD_COLUMNS, people_rows
    from ..studies.judgments import SIMULATED
    from ..studies.people import accuracy_table

    import pandas as pd

    source, _ = people_source(explorer, all_raters)
    if source.ratings is None or not len(source.ratings):
        return pd.DataFrame(columns=list(BOARD_COLUMNS))
    simulated = source.whose == SIMULATED
    full = source.ratings["clip_id"].nunique() >= len(explorer.release) and not explorer.release.synthetic
    origin = SYNTHETIC if simulated or explorer.release.synthetic else SUBMITTED if full else SUBSET
    return people_rows(accuracy_table(source.ratings), origin, simulated)


def people_notes(explorer: Any, runs, all_raters: bool = False) -> list[str]:
    """The notes under Table 4 (plain text): per input setting whether the best model is separable from people,
    then the quality-control lines and why this source ([] without answers)."""
    import pandas as pd

    from ..studies.people import people_vs_models, verdict_words

    source, lines = people_source(explorer, all_raters)
    if source.ratings is None or not len(source.ratings):
        return []
    stored = [run.rows for run in runs if run.task == "emotion" and run.rows is not None and len(run.rows)]
    rows = pd.concat(stored, ignore_index=True) if stored else None
    verdicts = [verdict_words(r) for r in people_vs_models(rows, source.ratings)]
    return ["People against the best model, per input setting: " + "; ".join(verdicts) + "."] + lines


def circular_notes(runs) -> list[str]:
    """One note (plain text) for the runs with answers under reordered options: per row label its plain accuracy,
    circular accuracy and flip rate (%), each with the actor-clustered interval every cell has
    (:func:`hug_vis_dataset.statistics.intervals.table_intervals`); [] when no run has them.

    Example:
        >>> circular_notes([])
        []
    """
    import pandas as pd

    from ..statistics.intervals import table_intervals
    from ..statistics.rules import N_BOOT, interval_mark

    metrics = ["emotion_accuracy", "emotion_circular_accuracy", "emotion_flip_rate"]
    parts = [run.rows for run in runs if run.task == "emotion" and run.rows is not None
             and (run.rows["metric"] == "emotion_circular_accuracy").any()]
    if not parts:
        return []
    rows = pd.concat(parts, ignore_index=True)
    rows = rows[rows["model"].isin(set(rows.loc[rows["metric"] == "emotion_circular_accuracy", "model"]))]
    cells = table_intervals(rows, metrics, N_BOOT)

    def cell(label: str, metric: str) -> str:
        ci = cells.get((label, metric))
        if ci is None:
            return "n/a"
        mark = interval_mark(ci.n_clusters, ci.low, ci.high)
        return f"{ci.estimate:.2f} [{ci.low:.2f}, {ci.high:.2f}]{' ' + mark if mark else ''}"

    words = [f"{label}: plain {cell(label, metrics[0])}, circular {cell(label, metrics[1])}, flip rate "
             f"{cell(label, metrics[2])}" for label in sorted(set(rows["model"]))]
    return ["Asked under reordered options (hugvis predict emotion --circular K; %, actor-clustered 95% intervals; "
            "circular: right under every order; flip rate: the answer changed with the order): " + "; ".join(words) + "."]


def table4_notes(explorer: Any, runs, all_raters: bool = False) -> list[str]:
    """Everything Table 4's notes add: :func:`people_notes` and :func:`circular_notes`."""
    return people_notes(explorer, runs, all_raters) + circular_notes(runs)


__all__ = ["circular_notes", "people_board_rows", "people_notes", "people_source", "table4_notes"]

"""``hugvis mos status``: a study's coverage, flagged raters, MOS with and without them, agreement;
for a pairwise study the Bradley-Terry strengths with and without the flagged raters; for an emotion study
people's accuracy per input setting with and without them (:func:`hug_vis_dataset.studies.people.accuracy_table`).

Reads only files: the study file, the ratings log and the session log next to it; shared by the CLI
(:mod:`hug_vis_dataset.reporting.commands`), the demo's report (:func:`study_markdown`, the synthetic
release's simulated study) and usable from a notebook. :func:`aggregate_ratings` is the MOS table of a
ratings log the Space, the status and the leaderboard show (ratings averaged per clip, actor-clustered intervals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..presentation.escaping import one_line
from ..presentation.skipped_lines import listed
from ..statistics.rules import N_BOOT
from .rater_qc import GOLD_MODELS
from .sessions import SESSIONS_FILE, SessionLog, coverage

#: What a study's tables hold, by protocol.
WHAT = {"pairwise": "Bradley-Terry strengths", "emotion": "People's accuracy per input setting (%)"}
#: Bootstrap replicates of the strengths' intervals shown by the status.
STATUS_BOOT = 200
#: Bootstrap replicates of the intervals :func:`aggregate_ratings` adds (actor-clustered): every surface's
#: (hugvis report's default), so the board's MOS intervals are the report's.
TABLE_BOOT = N_BOOT


@dataclass
class StudyStatus:
    """What :func:`read_status` measured for one study (frames are pandas DataFrames)."""

    spec: Any
    coverage: dict
    problems: list[str]
    flags: Any  # rater_qc.flag_raters table (None: no answers)
    flagged: set[str] = field(default_factory=set)
    tables: list = field(default_factory=list)  # [(title, frame)]: MOS or strengths, all / without flagged
    alphas: list[str] = field(default_factory=list)


def read_status(study_path: "str | Path", ratings_path: "str | Path", clip_ids: "list[str] | None" = None,
                n_boot: int = STATUS_BOOT) -> StudyStatus:
    """The measurements of ``hugvis mos status`` for one study file over one ratings log."""
    from .rater_qc import flag_raters
    from .spec import EMOTION, MOS, PAIRWISE, load_study
    from .ratings import latest_ratings, read_log

    spec = load_study(study_path, clip_ids)
    ratings_path = Path(ratings_path)
    if spec.protocol == EMOTION:
        from .emotion_answers import EmotionAnswerStore

        store = EmotionAnswerStore(ratings_path)
        frame, problems = store.read()
        frame = store.frame()
    elif spec.protocol == PAIRWISE:
        from .preferences import PreferenceStore

        frame, problems = PreferenceStore(ratings_path).read()
        frame = PreferenceStore(ratings_path).frame()
    else:
        frame, problems = read_log(ratings_path)
        frame = latest_ratings(frame)
    mine = frame[frame["study"] == spec.name] if len(frame) else frame
    log = SessionLog(ratings_path.parent / SESSIONS_FILE, spec)
    answered = {r: set(g["item"]) for r, g in mine.groupby("rater")} if len(mine) else {}
    status = StudyStatus(spec, coverage(spec, log.sessions(), answered), problems, None)
    if not len(mine):
        return status
    qc_frame = mine.assign(item=mine["item"].fillna(mine["seq"].astype(str)))
    if spec.protocol == PAIRWISE:
        # No gold items in a pairwise study: the speed rule alone (score is unused without gold).
        qc_frame = qc_frame.assign(model="pair", score=qc_frame["outcome"])
    elif spec.protocol == EMOTION:  # a clear gold item scores 1 when answered with its emotion (judgments.py)
        from .judgments import emotion_qc_frame

        qc_frame = emotion_qc_frame(qc_frame)
    status.flags = flag_raters(qc_frame, spec.qc)
    status.flagged = set(status.flags.loc[status.flags["flagged"], "rater"]) if len(status.flags) else set()
    for title, exclude in (("all raters", set()), ("without flagged raters", status.flagged)):
        status.tables.append((title, _table(spec, mine, exclude, n_boot)))
    if spec.protocol == MOS:
        status.alphas = _alphas(mine)
    return status


def _table(spec, answers, exclude: "set[str]", n_boot: int):
    """MOS (mos study) or Bradley-Terry strengths per task (pairwise study) of the raters not excluded."""
    import pandas as pd

    from .spec import EMOTION, PAIRWISE

    if spec.protocol == EMOTION:
        from .people import accuracy_table

        return accuracy_table(answers[~answers["rater"].isin(list(exclude))], n_boot=n_boot)
    if spec.protocol != PAIRWISE:
        return aggregate_ratings(answers, exclude_raters=exclude)
    from .bradley_terry import PreferenceInputError, strengths_table

    kept = answers[~answers["rater"].isin(list(exclude))]
    parts, why = [], []
    for task, group in kept.groupby("task", sort=True):
        try:
            table = strengths_table(group, n_boot=n_boot)
        except PreferenceInputError as err:  # a young study: its answers do not join every system yet
            why.append(f"{task}: {err}")
            continue
        table.insert(0, "task", task)
        parts.append(table)
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    out.attrs["why"] = "; ".join(why)
    return out


def _alphas(answers) -> list[str]:
    from .mos import RATING_COLUMNS, agreement, validate_ratings

    rated = answers[~answers["model"].isin(GOLD_MODELS)]
    lines = []
    for task, part in rated.groupby("task"):
        valid, _ = validate_ratings(part[list(RATING_COLUMNS)].astype(str))
        for criterion, a in agreement(valid).items():
            lines.append(f"{task} {criterion}: alpha {a['alpha']:.3f}, {a['raters']} raters, "
                         f"{a['units']} units ({a['pairable_units']} pairable)")
    return lines


def study_status(study_path: "str | Path", ratings_path: "str | Path", clip_ids: "list[str] | None" = None) -> str:
    """``hugvis mos status``: coverage, flagged raters, MOS (or strengths) with and without them,
    agreement, as text.

    Reads the study file, the ratings log and the session log next to it (``sessions.jsonl``);
    ``clip_ids`` resolves a study's ``"clips": "all"``.
    """
    s = read_status(study_path, ratings_path, clip_ids)
    cov = s.coverage
    lines = [f"study {s.spec.name} ({s.spec.protocol}): {cov['items']} items, target {cov['target']} ratings each",
             "items by number of ratings: " + ", ".join(f"{c}: {n}" for c, n in cov["by_ratings"].items()),
             f"raters {cov['raters']}, sessions {cov['sessions']}, answers {cov['answers']} + {cov['gold_answers']} "
             f"gold, completion {100 * cov['completion']:.1f}%"]
    lines += [f"  {r}: {a} of {n} answered" for r, (a, n) in cov["per_rater"].items()]
    if s.problems:  # named here, file:line: reason, not only counted
        lines.append(f"{len(s.problems)} skipped line(s) in {ratings_path}, left out of the MOS:")
        lines += [f"  {one_line(p)}" for p in listed(s.problems)]
    lines += ["", f"flagged raters: {len(s.flagged)}"]
    if s.flags is not None and len(s.flags):
        lines += [f"  {r.rater}: {r.reasons}" for r in s.flags.itertuples() if r.flagged]
    what = WHAT.get(s.spec.protocol, "MOS")
    for title, table in s.tables or [("all raters", None), ("without flagged raters", None)]:
        lines += ["", f"{what} ({title}):", table.to_string(index=False, float_format=lambda v: f"{v:.2f}")
                  if table is not None and len(table) else "  no ratings"]
        if table is not None and table.attrs.get("why"):
            lines.append(f"  not computed for {table.attrs['why']}")
    if s.alphas:
        lines += ["", "Inter-rater agreement (Krippendorff's alpha, interval; units = (clip, system)):"]
        lines += [f"  {a}" for a in s.alphas]
    return "\n".join(lines)


def study_markdown(study_paths: Sequence["str | Path"], ratings_path: "str | Path",
                   clip_ids: "list[str] | None" = None) -> list[str]:
    """The report's "Subjective study: schedule and quality control" section for one or more study
    files over one ratings log: coverage, flagged raters and why, MOS (or strengths) with and without
    them, agreement. Stored text (rater ids, reasons) is escaped."""
    from ..presentation.escaping import markdown_text
    from ..presentation.tables import markdown_table

    md = ["## Subjective study: schedule and quality control", "",
          "Blind, scheduled study (docs/MOS.md): every item reaches k ratings before any gets k + 1; gold items "
          "(the reference shown as a system, and a degraded copy; in the emotion study the clip with all its "
          "evidence) and the media's duration flag careless raters; every table with and without them.", ""]
    for path in study_paths:
        s = read_status(path, ratings_path, clip_ids)
        cov = s.coverage
        levels = ", ".join(f"{n} with {c}" for c, n in cov["by_ratings"].items())
        md += [f"### {markdown_text(s.spec.name)} ({s.spec.protocol})", "",
               f"{cov['items']} items, target {cov['target']} ratings each ({levels}); {cov['raters']} raters, "
               f"{cov['sessions']} sessions, {cov['answers']} answers + {cov['gold_answers']} gold; completion "
               f"{100 * cov['completion']:.1f}%.", ""]
        if s.flags is not None and len(s.flags):
            md += [f"Flagged raters: {len(s.flagged)} of {len(s.flags)}"
                   + "".join(f"; {markdown_text(r.rater)} ({markdown_text(r.reasons)})"
                             for r in s.flags.itertuples() if r.flagged) + ".", ""]
        what = WHAT.get(s.spec.protocol, "MOS")
        for title, table in s.tables:
            md += [f"**{what}, {title}:**", "", markdown_table(table, 3) if len(table) else "no answers", ""]
            if table.attrs.get("why"):
                md += [f"Not computed for {markdown_text(table.attrs['why'])}.", ""]
        if s.alphas:
            md += ["Inter-rater agreement (Krippendorff's alpha, interval): " + "; ".join(s.alphas) + ".", ""]
    return md


def mos_clip_rows(frame, note: str = ""):
    """Per-clip MOS rows of ratings (``task`` column; ratings averaged within each clip): the evidence the board's
    MOS verdicts compare (``task, model`` + ``note``, ``metric`` = the MOS table's column key, ``clip_id``,
    ``actor_id``, ``value``, ``status``), gold items left out.

    Example:
        >>> import pandas as pd
        >>> r = pd.DataFrame({"rater": ["a", "b"], "task": "voice_cloning", "model": "m", "criterion": "id_similarity",
        ...                   "clip_id": "actor_0001_sad_action_01_script_001", "score": [4, 5]})
        >>> mos_clip_rows(r)[["model", "metric", "value"]].values.tolist()
        [['m', 'mos_similarity', 4.5]]
    """
    import pandas as pd

    from .. import catalog
    from ..datamodel.paper_tables import table_info
    from .mos import clip_means
    from .ratings import CRITERION_LABELS

    columns = ["task", "model", "metric", "clip_id", "actor_id", "value", "status"]
    if frame is None or not len(frame):
        return pd.DataFrame(columns=columns)
    frame = frame[~frame["model"].isin(GOLD_MODELS)]
    parts = []
    for task, ratings in frame.groupby("task", sort=True):
        table = catalog.task(str(task)).mos_table
        if table is None or not len(ratings):
            continue
        keys = {m["display"]: m["key"] for m in table_info(table)["metrics"]}
        per_clip = clip_means(ratings.assign(score=pd.to_numeric(ratings["score"], errors="coerce")))
        per_clip = per_clip.assign(metric=per_clip["criterion"].map(lambda c: keys.get(CRITERION_LABELS.get(c, c))))
        per_clip = per_clip.dropna(subset=["metric"])
        parts.append(pd.DataFrame({"task": task, "model": per_clip["model"].astype(str) + note,
                                   "metric": per_clip["metric"], "clip_id": per_clip["clip_id"],
                                   "actor_id": per_clip["actor_id"].astype("int64"), "value": per_clip["score"],
                                   "status": "ok"}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


def aggregate_ratings(frame, exclude_raters=()):
    """MOS per (task, model, criterion) with :mod:`hug_vis_dataset.studies.mos` (ratings averaged within
    each clip, then over clips), its 95% actor-clustered bootstrap interval, and the number of
    clips, ratings and raters behind it.

    ``frame`` holds one rating per (rater, task, clip, model, criterion) (the store's
    :meth:`~hug_vis_dataset.studies.ratings.RatingStore.frame`); a duplicate left in it is
    excluded by :func:`hug_vis_dataset.studies.mos.validate_ratings`, every copy. Gold items
    (:data:`~hug_vis_dataset.studies.rater_qc.GOLD_MODELS`) are quality control, never a MOS row;
    ``exclude_raters`` (e.g. the flagged ones) are left out.

    Columns: ``task, model, criterion, mos, ci_low, ci_high, n_clips, n_ratings, n_raters``
    (``ci_low``/``ci_high`` NaN with a single actor: nothing to resample).
    """
    import numpy as np
    import pandas as pd

    from .mos import RATING_COLUMNS, mos_intervals, mos_table, validate_ratings
    from .ratings import CRITERION_LABELS

    columns = ["task", "model", "criterion", "mos", "ci_low", "ci_high", "n_clips", "n_ratings", "n_raters"]
    if len(frame):
        frame = frame[~frame["model"].isin(GOLD_MODELS) & ~frame["rater"].isin(list(exclude_raters))]
    if not len(frame):
        return pd.DataFrame(columns=columns)
    parts = []
    for task, ratings in frame.groupby("task", sort=True):
        valid, _invalid = validate_ratings(ratings[list(RATING_COLUMNS)].astype(str))
        if not len(valid):
            continue
        table = mos_table(valid)
        cis = mos_intervals(valid, n_boot=TABLE_BOOT)
        several = {k: ci.n_clusters > 1 for k, ci in cis.items()}
        table["ci_low"] = [cis[k].low if several[k] else np.nan for k in table.index]
        table["ci_high"] = [cis[k].high if several[k] else np.nan for k in table.index]
        table = table.reset_index()
        raters = valid.groupby(["model", "criterion"])["rater"].nunique().rename("n_raters").reset_index()
        table = table.merge(raters, on=["model", "criterion"])
        table.insert(0, "task", task)
        parts.append(table)
    if not parts:
        return pd.DataFrame(columns=columns)
    out = pd.concat(parts, ignore_index=True)[columns]
    out["criterion"] = out["criterion"].map(lambda c: CRITERION_LABELS.get(c, c))
    return out

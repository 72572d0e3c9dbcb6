"""Which human judgments count, decided once: the ratings every MOS, joint table and agreement uses.

Two rules, applied here and nowhere else (every surface calls these functions):

* **Quality control** (:func:`counted_ratings`): the valid ratings of a ratings file or log, gold items left out
  (they are quality control, never a MOS), and the raters the study's rule flags
  (:func:`hug_vis_dataset.studies.mos_qc.select_raters`: failed gold answers, answers faster than the media) left
  out, unless the unfiltered view is asked for (``all_raters``: the Space's *include flagged raters* box,
  ``hugvis report --mos-all-raters``). The MOS tables, "metrics vs MOS", the pairwise block and the joint tables
  all read these ratings, so none can name another best system than the others.
* **Which source** (:func:`choose_source`): where a synthetic release ships simulated raters beside a live study,
  the study's ratings replace the simulated raters of a task only once they cover it: every system the simulated
  raters rate, on every criterion of the task, rated (after quality control) on clips of at least
  ``min(MIN_ACTORS, the simulated raters' actors)`` actors. Until then every surface shows the simulated raters and
  says how far the study is; a few answers of one new rater never replace a whole study.

The forced-choice emotion study (people as the ceiling of Table 4) follows the same two rules:
:func:`counted_emotion_answers` applies the study's quality control to its answers (a clear gold item answered
with another emotion fails; answers faster than the media are fast) and :func:`choose_people_source` lets the
study's answers replace the simulated raters once they cover every input setting the simulated raters answer,
on clips of ``min(MIN_ACTORS, their actors)`` actors.

Example:
    >>> import pandas as pd
    >>> r = pd.DataFrame({"rater": ["a", "a", "b", "b"], "model": ["m", "gold_reference"] * 2, "criterion": "lip_sync",
    ...                   "clip_id": "actor_0001_sad_action_01_script_001", "score": [4, 5, 1, 1]})
    >>> kept, qc = counted_ratings(r)
    >>> kept["rater"].tolist(), sorted(qc.flagged)
    (['a'], ['b'])
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .mos_qc import QcSelection, select_raters
from .rater_qc import GOLD_MODELS, QcRules

STUDY, SIMULATED = "the study's ratings", "simulated raters"


def counted_ratings(ratings: Any, all_raters: bool = False, rules: QcRules = QcRules()):
    """``(ratings, QC selection)``: the ratings that count (module docstring), read when given a CSV path.

    ``ratings``: a ratings CSV path or its rows (``rater, clip_id, model, criterion, score`` and, when the study
    logged them, ``item``, ``elapsed``, ``duration``, ``task``)."""
    from .mos import ratings_frames

    valid = ratings_frames(ratings)[0]  # the one ratings reader, for a file and for rows alike
    if not len(valid):
        return valid.reset_index(drop=True), select_raters(None, rules, apply=not all_raters)
    qc = select_raters(valid, rules, apply=not all_raters)
    kept = valid[~valid["model"].isin(GOLD_MODELS) & ~valid["rater"].astype(str).isin(sorted(qc.excluded))]
    return kept.reset_index(drop=True), qc


@dataclass(frozen=True)
class Source:
    """The human judgments a surface shows for one task: the counted ratings, whose they are, and the coverage
    note (why the study's ratings are or are not used yet)."""

    ratings: Any
    whose: str
    note: str = ""


def _coverage(ratings, task: str) -> dict[str, dict[str, int]]:
    """criterion -> system -> actors whose clips were rated."""
    from ..statistics.basics import actor_of_clip
    from .mos import TASK_CRITERIA

    out: dict[str, dict[str, int]] = {c: {} for c in TASK_CRITERIA.get(task, ())}
    if ratings is None or not len(ratings):
        return out
    actors = ratings["clip_id"].astype(str).map(actor_of_clip)
    for (criterion, model), part in actors.groupby([ratings["criterion"], ratings["model"]]):
        if criterion in out:
            out[criterion][str(model)] = int(part.nunique())
    return out


def choose_source(study, simulated, task: str) -> Source:
    """The source of one task's human judgments (module docstring), both already :func:`counted_ratings`.

    ``study``/``simulated``: counted ratings (None: none), each with a ``task`` column when it holds several tasks.

    Example:
        >>> import pandas as pd
        >>> clips = [f"actor_000{a}_sad_action_01_script_001" for a in (1, 2)]
        >>> sim = pd.DataFrame([{"rater": "s", "model": m, "criterion": c, "clip_id": k, "score": 3, "task": "voice_cloning"}
        ...                     for m in ("x", "y") for c in ("id_similarity", "emotion_naturalness") for k in clips])
        >>> new = sim.iloc[:1].assign(rater="new")
        >>> source = choose_source(new, sim, "voice_cloning")
        >>> source.whose, source.note.split(";")[0]
        ('simulated raters', "The study's ratings (1 counted rating) rate 0 of the 2 systems on clips of 2 actors")
        >>> choose_source(sim.assign(rater="r"), sim, "voice_cloning").whose
        "the study's ratings"
    """
    from ..statistics.rules import MIN_ACTORS

    def of_task(frame):
        if frame is None or not len(frame):
            return None
        return frame[frame["task"] == task] if "task" in frame.columns else frame

    live, sim = of_task(study), of_task(simulated)
    if sim is None or not len(sim):
        return Source(live, STUDY)
    if live is None or not len(live):
        return Source(sim, SIMULATED)
    wanted = _coverage(sim, task)
    systems = sorted({s for per in wanted.values() for s in per})
    need = min(MIN_ACTORS, max((a for per in wanted.values() for a in per.values()), default=1))
    have = _coverage(live, task)
    covered = [s for s in systems if all(have.get(c, {}).get(s, 0) >= need for c in wanted)]
    rule = (f"they replace the simulated raters once they rate every system on every criterion of the task, on "
            f"clips of at least {need} actor{'s' if need != 1 else ''}")
    if len(covered) == len(systems):
        return Source(live, STUDY, f"The study's ratings ({len(live):,} counted) cover every system: {rule}.")
    n = len(live)
    return Source(sim, SIMULATED, f"The study's ratings ({n:,} counted rating{'s' if n != 1 else ''}) rate "
                                  f"{len(covered)} of the {len(systems)} systems on clips of {need} "
                                  f"actor{'s' if need != 1 else ''}; {rule}.")


def task_sources(study: Any, simulated: Any, rules: QcRules = QcRules(), all_raters: bool = False
                 ) -> tuple[dict[str, Source], QcSelection, "QcSelection | None"]:
    """Every generation task's :class:`Source` from the raw study ratings and the raw simulated ratings (None: a
    release without them), both counted with ``rules``; with the two quality-control selections (what the MOS
    tables' notes say)."""
    from .. import catalog

    live, live_qc = counted_ratings(study, all_raters, rules)
    sim, sim_qc = counted_ratings(simulated, all_raters, rules) if simulated is not None else (None, None)
    return {t.name: choose_source(live, sim, t.name) for t in catalog.TASKS if t.mos_table}, live_qc, sim_qc


def emotion_qc_frame(answers):
    """The emotion study's answers as :func:`~hug_vis_dataset.studies.mos_qc.select_raters` reads answers: one row
    per answer (``rater, clip_id, item, elapsed, duration``), ``model`` the gold kind of a gold answer (else the
    setting) and ``score`` 1 when a gold answer names the clip's emotion, else 0 (only gold scores are read)."""
    import pandas as pd

    from ..datamodel.grid import ClipId
    from .rater_qc import GOLD_CLEAR

    frame = pd.DataFrame(answers).copy()
    truth = frame["clip_id"].map(lambda c: ClipId.parse(c).emotion.value) if len(frame) else frame["clip_id"]
    frame["model"] = frame["setting"]
    frame["score"] = ((frame["setting"] == GOLD_CLEAR) & (frame["answer"] == truth)).astype(float)
    for column in ("item", "elapsed", "duration"):
        if column not in frame.columns:
            frame[column] = None
    return frame


def counted_emotion_answers(answers: Any, all_raters: bool = False, rules: QcRules = QcRules()):
    """``(answers, QC selection)``: the emotion study's answers that count: gold answers left out (quality control,
    never an accuracy) and the raters the study's rule flags left out unless ``all_raters``; read when given the
    exported CSV (:func:`~hug_vis_dataset.studies.emotion_answers.read_emotion_answers`).

    Example:
        >>> import pandas as pd
        >>> clip = "actor_0001_sad_action_01_script_001"
        >>> a = pd.DataFrame({"rater": ["a", "a", "b", "b"], "clip_id": clip, "answer": ["Sad", "Sad", "Sad", "Happy"],
        ...                   "setting": ["Video", "gold_clear", "Video", "gold_clear"]})
        >>> kept, qc = counted_emotion_answers(a)
        >>> kept["rater"].tolist(), sorted(qc.flagged)
        (['a'], ['b'])
    """
    import pandas as pd

    from .emotion_answers import read_emotion_answers
    from .rater_qc import GOLD_CLEAR

    frame = read_emotion_answers(answers) if isinstance(answers, (str, Path)) else pd.DataFrame(answers)
    if not len(frame):
        return frame.reset_index(drop=True), select_raters(None, rules, apply=not all_raters)
    qc = select_raters(emotion_qc_frame(frame), rules, apply=not all_raters)
    kept = frame[(frame["setting"] != GOLD_CLEAR) & ~frame["rater"].astype(str).isin(sorted(qc.excluded))]
    return kept.reset_index(drop=True), qc


def choose_people_source(study, simulated) -> Source:
    """The source of Table 4's People rows: the study's counted answers once they cover every input setting the
    simulated raters answer (on clips of at least ``min(MIN_ACTORS, the simulated raters' actors)`` actors), else
    the simulated raters (both already :func:`counted_emotion_answers`; None: none).

    Example:
        >>> import pandas as pd
        >>> clips = [f"actor_000{a}_sad_action_01_script_001" for a in (1, 2)]
        >>> sim = pd.DataFrame([{"rater": "s", "clip_id": c, "setting": "Video", "answer": "Sad"} for c in clips])
        >>> choose_people_source(sim.iloc[:1], sim).whose, choose_people_source(sim, sim).whose
        ('simulated raters', "the study's ratings")
    """
    from ..statistics.basics import actor_of_clip
    from ..statistics.rules import MIN_ACTORS

    def actors(frame) -> dict[str, int]:
        if frame is None or not len(frame):
            return {}
        ids = frame["clip_id"].astype(str).map(actor_of_clip)
        return {str(s): int(n) for s, n in ids.groupby(frame["setting"]).nunique().items()}

    live = study if study is not None and len(study) else None
    if simulated is None or not len(simulated):
        return Source(live, STUDY)
    if live is None:
        return Source(simulated, SIMULATED)
    wanted, have = actors(simulated), actors(live)
    need = min(MIN_ACTORS, max(wanted.values(), default=1))
    covered = [s for s in wanted if have.get(s, 0) >= need]
    rule = (f"they replace the simulated raters once they answer every input setting on clips of at least {need} "
            f"actor{'s' if need != 1 else ''}")
    if len(covered) == len(wanted):
        return Source(live, STUDY, f"The study's answers ({len(live):,} counted) cover every input setting: {rule}.")
    return Source(simulated, SIMULATED, f"The study's answers ({len(live):,} counted) cover {len(covered)} of the "
                                        f"{len(wanted)} input settings; {rule}.")


__all__ = ["SIMULATED", "STUDY", "Source", "QcSelection", "choose_people_source", "choose_source",
           "counted_emotion_answers", "counted_ratings", "emotion_qc_frame", "task_sources"]

"""The study's rater quality control applied to the MOS tables (Tables 6, 8, 10) of the Space and the report.

``hugvis mos status`` flags raters with :func:`hug_vis_dataset.studies.rater_qc.flag_raters` (gold answers
that contradict the gold item, answers faster than the media). The MOS tables apply the same function to
the ratings they aggregate and, by default, leave the flagged raters out; the note under each table says
how many raters were kept and flagged, by which rule, and how to see every rater (the Space's
*include flagged raters* box, ``hugvis report --mos-all-raters``).

Ratings without gold answers or without answer times (a plain ``hugvis mos`` CSV) can only be checked by
the rules their columns allow; the note names what was checked.

Example:
    >>> import pandas as pd
    >>> r = pd.DataFrame({"rater": ["a", "a", "b", "b"], "model": ["m", "gold_reference"] * 2,
    ...                   "clip_id": ["c"] * 4, "score": [4, 5, 1, 1], "elapsed": 9.0, "duration": 2.0})
    >>> qc = select_raters(r)
    >>> qc.kept, sorted(qc.flagged)
    (['a'], ['b'])
    >>> qc.note().split(": ")[1]
    '2 rater(s), 1 flagged, 1 counted in the MOS (flagged when more than 0.5 of their gold answers fail or more than 0.25 of their answers are faster than the media; checked here'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .rater_qc import GOLD_MODELS, QcRules, flag_raters


@dataclass(frozen=True)
class QcSelection:
    """Which raters of a set of ratings the MOS tables keep.

    Attributes:
        raters: every rater with a (non-gold) rating, sorted.
        flagged: rater -> why :func:`~hug_vis_dataset.studies.rater_qc.flag_raters` flags them.
        rules: the thresholds used.
        applied: whether the flagged raters are left out (False: the unfiltered view).
        gold: whether the ratings had gold answers to check; ``timed``: answer times.
    """

    raters: tuple[str, ...]
    flagged: dict[str, str] = field(default_factory=dict)
    rules: QcRules = QcRules()
    applied: bool = True
    gold: bool = False
    timed: bool = False

    @property
    def kept(self) -> list[str]:
        """The raters whose ratings enter the MOS."""
        return [r for r in self.raters if not (self.applied and r in self.flagged)]

    @property
    def excluded(self) -> set[str]:
        return set(self.flagged) if self.applied else set()

    def note(self, unfiltered: str = "tick 'include flagged raters'", counted_in: str = "the MOS") -> str:
        """One plain-text line for under a MOS table (escape it where it is shown as Markdown): raters
        kept / flagged, the rule, what was checked, each flagged rater and why, and how to get the
        other view (``unfiltered``: the door's words; ``counted_in``: what the kept raters' answers make,
        ``"the People rows"`` for the emotion study)."""
        checked = [what for what, ok in (("gold answers", self.gold), ("answer times", self.timed)) if ok]
        n_flag = len([r for r in self.raters if r in self.flagged])
        head = (f"Rater quality control (the study's rule, as hugvis mos status): {len(self.raters)} rater(s), "
                f"{n_flag} flagged, {len(self.kept)} counted in {counted_in} (flagged when more than {self.rules.max_gold_fail_share:g} of their gold "
                f"answers fail or more than {self.rules.max_fast_share:g} of their answers are faster than the "
                f"media; checked here: {', '.join(checked) if checked else 'nothing (no gold answers, no answer times)'})")
        who = "; ".join(f"{r}: {self.flagged[r]}" for r in self.raters if r in self.flagged)
        if not n_flag:
            return head + "."
        if self.applied:
            return f"{head}. Left out of {counted_in}: {who}. For every rater, {unfiltered}."
        return f"{head}. Unfiltered view: the flagged raters are counted ({who})."


def select_raters(ratings: Any, rules: QcRules = QcRules(), apply: bool = True) -> QcSelection:
    """Flag the raters of ``ratings`` with the study's rule and say which the MOS keeps.

    Args:
        ratings: one row per score with ``rater``, ``model``, ``score`` and ``clip_id`` (or ``item``:
            the answer's code), optionally ``elapsed`` and ``duration`` (seconds) and gold rows
            (:data:`~hug_vis_dataset.studies.rater_qc.GOLD_MODELS`).
        rules: the study's thresholds (``StudySpec.qc``).
        apply: False for the unfiltered view (flags still computed and named).
    """
    import pandas as pd

    if ratings is None or not len(ratings):
        return QcSelection((), {}, rules, apply)
    frame = ratings.copy()
    # One answer = the criteria scores of one (rater, clip, model); its item code when stored.
    key = frame["clip_id"].astype(str) + "|" + frame["model"].astype(str)
    frame["item"] = frame["item"].where(frame["item"].notna() & (frame["item"].astype(str) != ""), key) \
        if "item" in frame.columns else key
    frame["score"] = pd.to_numeric(frame["score"], errors="coerce")
    timed = all(c in frame.columns for c in ("elapsed", "duration")) and bool(
        (pd.to_numeric(frame["elapsed"], errors="coerce").notna()
         & pd.to_numeric(frame["duration"], errors="coerce").notna()).any())
    gold = bool(frame["model"].isin(GOLD_MODELS).any())
    flags = flag_raters(frame, rules)
    flagged = {r.rater: r.reasons for r in flags.itertuples() if r.flagged} if len(flags) else {}
    raters = tuple(sorted(set(frame.loc[~frame["model"].isin(GOLD_MODELS), "rater"].astype(str).unique())))
    return QcSelection(raters, {r: why for r, why in flagged.items() if r in raters}, rules, apply, gold, timed)


__all__ = ["QcSelection", "select_raters"]

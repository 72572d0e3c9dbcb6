"""Rater quality control of a subjective study: gold answers and answers faster than the media.

Pure rules on a frame of answers (no I/O). A study (``docs/MOS.md``) mixes **gold items** into every
session, presented exactly like a system's output under an opaque code:

* ``gold_reference``: the clip's real recording shown as if it were a system (expected **high**);
* ``gold_degraded``: a deliberately degraded copy of it (heavy blur, noise; expected **low**);
* ``gold_clear`` (the forced-choice emotion study): a clip shown with all its evidence (video with sound and
  the transcript), whose answer is the clip's instructed emotion; its ``score`` is 1 when the answer names it,
  else 0 ("Cannot tell" included).

A gold answer *fails* when the mean of its criteria is below ``gold_high_min`` (reference) or above
``gold_low_max`` (degraded), or when a clear gold item is not answered with its emotion. An answer is *fast* when the rater submitted it sooner than the
media's duration after it was shown (``elapsed < duration``): they cannot have watched it.

A rater is **flagged** when the share of their gold answers that fail exceeds
``max_gold_fail_share``, or the share of their answers that are fast exceeds ``max_fast_share``.
The MOS tables report every MOS with and without flagged raters; gold answers never enter a MOS.

Example:
    >>> import pandas as pd
    >>> answers = pd.DataFrame({"rater": ["a", "a", "b", "b"], "model": [GOLD_HIGH, GOLD_LOW] * 2,
    ...                         "item": ["g1", "g2", "g1", "g2"], "score": [5, 1, 1, 5],
    ...                         "elapsed": 10.0, "duration": 2.0})
    >>> flag_raters(answers)[["rater", "gold_failed", "flagged"]].values.tolist()
    [['a', 0, False], ['b', 2, True]]
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping

#: Model names of the gold items in stored ratings (never a MOS row; see :func:`is_gold`).
GOLD_HIGH = "gold_reference"
GOLD_LOW = "gold_degraded"
GOLD_CLEAR = "gold_clear"
GOLD_MODELS: tuple[str, ...] = (GOLD_HIGH, GOLD_LOW, GOLD_CLEAR)
FLAG_COLUMNS: tuple[str, ...] = ("rater", "answers", "gold_answers", "gold_failed", "fast_answers", "flagged",
                                 "reasons")


@dataclass(frozen=True)
class QcRules:
    """The thresholds of the flag rules (a study file's ``qc`` object; every field optional).

    Example:
        >>> QcRules.from_mapping({"max_fast_share": 0.5}).max_fast_share
        0.5
    """

    gold_high_min: float = 3.5
    gold_low_max: float = 2.5
    max_gold_fail_share: float = 0.5
    max_fast_share: float = 0.25

    @classmethod
    def from_mapping(cls, values: "Mapping[str, Any] | None") -> "QcRules":
        """Rules from a mapping; unknown keys and out-of-range values raise ``ValueError`` naming them."""
        values = dict(values or {})
        unknown = sorted(set(values) - set(asdict(cls())))
        if unknown:
            raise ValueError(f"unknown qc key(s) {unknown}; expected some of {sorted(asdict(cls()))}")
        rules = cls(**{k: float(v) for k, v in values.items()})
        for name in ("max_gold_fail_share", "max_fast_share"):
            if not 0.0 <= getattr(rules, name) <= 1.0:
                raise ValueError(f"qc {name} must be in [0, 1], got {getattr(rules, name)}")
        return rules


def is_gold(model: object) -> bool:
    """Whether a stored model name is a gold item's.

    Example:
        >>> is_gold("gold_reference"), is_gold("talk_good")
        (True, False)
    """
    return model in GOLD_MODELS


def gold_failed(model: str, mean_score: float, rules: QcRules = QcRules()) -> bool:
    """Whether one gold answer (its mean over criteria) contradicts what the gold item is.

    Example:
        >>> gold_failed(GOLD_HIGH, 3.0), gold_failed(GOLD_LOW, 3.0), gold_failed(GOLD_HIGH, 4.0)
        (True, True, False)
        >>> gold_failed(GOLD_CLEAR, 1.0), gold_failed(GOLD_CLEAR, 0.0)   # score: the answer names the emotion
        (False, True)
    """
    if model == GOLD_CLEAR:
        return mean_score < 1.0
    if model == GOLD_HIGH:
        return mean_score < rules.gold_high_min
    if model == GOLD_LOW:
        return mean_score > rules.gold_low_max
    return False


def flag_raters(answers, rules: QcRules = QcRules()):
    """One row per rater: answers, gold answers and failures, fast answers, ``flagged`` and why.

    Args:
        answers: one row per stored score with ``rater``, ``model``, ``item`` (the answer's item
            code or key; rows of one item are one answer), ``score``, and optionally ``elapsed``
            and ``duration`` (seconds; a missing or NaN value never makes an answer fast).
        rules: the thresholds.

    Returns:
        DataFrame with :data:`FLAG_COLUMNS`, sorted by rater; ``reasons`` is text ("" when not flagged).
    """
    import pandas as pd

    if not len(answers):
        return pd.DataFrame(columns=list(FLAG_COLUMNS))
    frame = answers.copy()
    for column in ("elapsed", "duration"):
        if column not in frame.columns:
            frame[column] = math.nan
    per_answer = frame.groupby(["rater", "item", "model"], sort=True).agg(
        score=("score", "mean"), elapsed=("elapsed", "max"), duration=("duration", "max")).reset_index()
    per_answer["gold"] = per_answer["model"].map(is_gold)
    per_answer["failed"] = [bool(g) and gold_failed(m, s, rules)
                            for g, m, s in zip(per_answer["gold"], per_answer["model"], per_answer["score"])]
    elapsed = pd.to_numeric(per_answer["elapsed"], errors="coerce")
    duration = pd.to_numeric(per_answer["duration"], errors="coerce")
    per_answer["fast"] = (elapsed < duration).fillna(False)  # NaN compares False: unknown is never fast
    rows = []
    for rater, mine in per_answer.groupby("rater", sort=True):
        n, n_gold = len(mine), int(mine["gold"].sum())
        failed, fast = int(mine["failed"].sum()), int(mine["fast"].sum())
        reasons = []
        if n_gold and failed / n_gold > rules.max_gold_fail_share:
            reasons.append(f"{failed} of {n_gold} gold answers failed (> {rules.max_gold_fail_share:g})")
        if n and fast / n > rules.max_fast_share:
            reasons.append(f"{fast} of {n} answers faster than the media (> {rules.max_fast_share:g})")
        rows.append({"rater": rater, "answers": n, "gold_answers": n_gold, "gold_failed": failed,
                     "fast_answers": fast, "flagged": bool(reasons), "reasons": "; ".join(reasons)})
    return pd.DataFrame(rows, columns=list(FLAG_COLUMNS))


def flagged_raters(answers, rules: QcRules = QcRules()) -> set[str]:
    """The raters :func:`flag_raters` flags.

    Example:
        >>> import pandas as pd
        >>> flagged_raters(pd.DataFrame({"rater": ["a"], "model": ["m"], "item": ["i"], "score": [3],
        ...                              "elapsed": [0.5], "duration": [2.0]}))
        {'a'}
    """
    table = flag_raters(answers, rules)
    return set(table.loc[table["flagged"], "rater"]) if len(table) else set()

"""People as the ceiling of emotion recognition: the forced-choice study's answers beside Table 4's models.

The emotion study (:mod:`hug_vis_dataset.studies.spec`, protocol ``emotion``) shows each clip in one input setting
(the video without sound, the audio, the transcript, or a combination) and asks which of the seven emotions the
person expresses, or "Cannot tell". Its counted answers (:func:`hug_vis_dataset.studies.judgments.counted_emotion_answers`:
gold items and flagged raters out) become **per-clip rows**, exactly like a model's (:func:`people_clip_rows`): per
clip and setting the share of raters naming the clip's instructed emotion ("Cannot tell" is wrong, as a model's
unparsed answer is), under the reserved label ``people | <setting>``. Everything else is the statistics engine's:

* the **People row** of Table 4 is the mean over clips of those values, its interval the actor-clustered bootstrap
  of that mean (:func:`hug_vis_dataset.statistics.intervals.table_intervals`, the cell of every other row); it is
  printed as People and never ranked (a reserved row, :data:`hug_vis_dataset.datamodel.results.PEOPLE_MODEL`);
* **people vs the best model** of each setting (:func:`people_vs_models`): the one verdict
  (:func:`hug_vis_dataset.statistics.verdicts.compare`: the paired sign-flip test on the clips both have, actors
  as clusters): *separable*, *not separable* or *cannot tell*, with the difference and its interval;
* **per emotion** (:func:`confusion_comparison`): the recall of people and of the model on the clips of each
  instructed emotion, the verdict on those clips, and what each answered instead (people's answers; the model's
  from its stored rows' notes, ``answered Sad``).

Example:
    >>> import pandas as pd
    >>> answers = pd.DataFrame({"rater": ["a", "b", "a"], "setting": "Video", "answer": ["Sad", "Happy", "Happy"],
    ...                         "clip_id": ["actor_0001_sad_action_01_script_001"] * 2 + ["actor_0002_happy_action_01_script_001"]})
    >>> people_clip_rows(answers)[["model", "clip_id", "value"]].values.tolist()
    [['people | Video', 'actor_0001_sad_action_01_script_001', 0.5], ['people | Video', 'actor_0002_happy_action_01_script_001', 1.0]]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..datamodel.results import EMOTION_MODEL_SEP, PEOPLE_MODEL, RESULT_COLUMNS
from ..statistics.rules import N_BOOT
from .emotion_answers import ANSWER_CHOICES, CANNOT_TELL
from .rater_qc import GOLD_CLEAR

TASK, METRIC = "emotion", "emotion_accuracy"
#: A model's answer the parser could not read (its stored note), in the per-emotion comparison.
UNPARSED = "unparsed"


def people_label(setting: str) -> str:
    """The row label of people in one setting (``people | Video``)."""
    return f"{PEOPLE_MODEL}{EMOTION_MODEL_SEP}{setting}"


def _truth(clip_ids) -> np.ndarray:
    """The instructed emotion of each clip id (parsed once per distinct id)."""
    import pandas as pd

    from ..datamodel.grid import ClipId

    codes, uniques = pd.factorize(pd.Series(clip_ids, dtype=object).astype(str))
    labels = np.array([ClipId.parse(c).emotion.value for c in uniques], dtype=object)
    return labels[codes] if len(codes) else np.array([], dtype=object)


def scored_answers(answers):
    """The answers (gold items left out) with ``emotion`` (the clip's instructed emotion) and ``correct`` (0/1)."""
    import pandas as pd

    frame = pd.DataFrame(answers)
    frame = frame[frame["setting"] != GOLD_CLEAR] if len(frame) else frame
    frame = frame.assign(emotion=_truth(frame["clip_id"]) if len(frame) else [])
    return frame.assign(correct=(frame["answer"] == frame["emotion"]).astype(float))


def people_clip_rows(answers):
    """Per-clip rows of people (:data:`~hug_vis_dataset.datamodel.results.RESULT_COLUMNS`): per (setting, clip) the share of
    the answers that name the clip's instructed emotion, model ``people | <setting>``, metric ``emotion_accuracy``
    (pass counted answers: :func:`~hug_vis_dataset.studies.judgments.counted_emotion_answers`)."""
    import pandas as pd

    from ..datamodel.results import clip_fields

    scored = scored_answers(answers)
    if not len(scored):
        return pd.DataFrame(columns=list(RESULT_COLUMNS))
    per_clip = scored.groupby(["setting", "clip_id"], sort=True)["correct"].mean().reset_index()
    fields = pd.DataFrame([clip_fields(c) for c in per_clip["clip_id"].unique()]).set_index("clip_id")
    out = pd.DataFrame({"model": per_clip["setting"].map(people_label), "task": TASK, "clip_id": per_clip["clip_id"]})
    for column in ("actor_id", "emotion", "action_id", "script_id"):
        out[column] = per_clip["clip_id"].map(fields[column]).to_numpy()
    out["metric"], out["value"], out["status"], out["error"] = METRIC, per_clip["correct"].to_numpy(), "ok", ""
    return out[list(RESULT_COLUMNS)].reset_index(drop=True)


def accuracy_table(answers, n_boot: int = N_BOOT, seed: int = 0):
    """People's accuracy per input setting (Table 4's order): ``setting, accuracy, ci_low, ci_high`` (%, the
    actor-clustered interval of the mean over clips; NaN with one actor), ``n_clips, n_answers, n_raters,
    cannot_tell`` (% of the answers).

    Example:
        >>> import pandas as pd
        >>> a = pd.DataFrame({"rater": ["a", "b"], "setting": "Text", "answer": ["Sad", "Cannot tell"],
        ...                   "clip_id": ["actor_0001_sad_action_01_script_001", "actor_0002_sad_action_01_script_001"]})
        >>> accuracy_table(a, n_boot=200)[["setting", "accuracy", "n_clips", "cannot_tell"]].values.tolist()
        [['Text', 50.0, 2, 50.0]]
    """
    import pandas as pd

    from ..metrics.emotion import input_setting_sort_key
    from ..statistics.intervals import mean_intervals

    columns = ["setting", "accuracy", "ci_low", "ci_high", "n_clips", "n_answers", "n_raters", "cannot_tell"]
    scored = scored_answers(answers)
    if not len(scored):
        return pd.DataFrame(columns=columns)
    rows = people_clip_rows(scored)
    cis = mean_intervals(rows["model"], rows["actor_id"].to_numpy(np.int64), rows["value"].to_numpy(float), n_boot,
                         seed=seed)
    out = []
    for setting in sorted(scored["setting"].unique(), key=input_setting_sort_key):
        mine = scored[scored["setting"] == setting]
        ci = cis[people_label(setting)]
        several = ci.n_clusters > 1
        out.append({"setting": setting, "accuracy": 100 * ci.estimate,
                    "ci_low": 100 * ci.low if several else np.nan, "ci_high": 100 * ci.high if several else np.nan,
                    "n_clips": int(mine["clip_id"].nunique()), "n_answers": len(mine),
                    "n_raters": int(mine["rater"].nunique()),
                    "cannot_tell": 100 * float((mine["answer"] == CANNOT_TELL).mean())})
    return pd.DataFrame(out, columns=columns)


@dataclass(frozen=True)
class PeopleSetting:
    """People against the best model of one input setting.

    Attributes:
        setting: the input setting.
        people, model: the Table 4 cells (:class:`~hug_vis_dataset.statistics.basics.BootstrapCI`, %) of people
            and of the best model (None: no model in this setting).
        model_label: the best model's row label (``m | Video``), None without one.
        verdict: the engine's verdict of people against that model
            (:class:`~hug_vis_dataset.statistics.verdicts.Verdict`; ``difference`` > 0: people are better).
        n_answers, n_raters, cannot_tell: the answers behind the people cell (``cannot_tell``: % of them).
    """

    setting: str
    people: Any
    model_label: "str | None"
    model: Any
    verdict: Any
    n_answers: int
    n_raters: int
    cannot_tell: float

    @property
    def model_name(self) -> str:
        return (self.model_label or "").partition(EMOTION_MODEL_SEP)[0]


def emotion_rows(rows):
    """The emotion task's accuracy rows of ``rows`` (any tasks), people's left out."""
    if rows is None or not len(rows):
        return rows
    mine = rows[(rows["task"] == TASK) & (rows["metric"] == METRIC)]
    return mine[~mine["model"].astype(str).str.startswith(PEOPLE_MODEL + EMOTION_MODEL_SEP)]


def best_models(rows, comparisons=None) -> dict[str, str]:
    """Setting -> the label of its best model: the highest mean accuracy among the ranked rows of the setting's
    complete runs (partial runs only where no complete one is), ties by name; reserved rows never."""
    from ..statistics.evidence import comparisons_of
    from ..statistics.sums import ClipValues

    mine = emotion_rows(rows)
    if mine is None or not len(mine):
        return {}
    sets = comparisons_of(mine, comparisons).sets(TASK)
    values = ClipValues.from_rows(mine)
    means = dict(zip(values.systems, values.means()))
    out: dict[str, str] = {}
    for partial in (False, True):
        for name, labels in sets.items():
            setting = name.rpartition(" | ")[2]
            if ("(partial)" in name) != partial or (partial and setting in out):
                continue
            for label in labels:
                value = means.get(label, np.nan)
                best = out.get(setting)
                if np.isfinite(value) and (best is None or (value, best) > (means[best], label)):
                    out[setting] = label
    return out


def people_vs_models(rows, answers, comparisons=None, n_boot: int = N_BOOT, people_rows=None) -> list[PeopleSetting]:
    """People against the best model of every setting they answered (Table 4's order; module docstring).

    Args:
        rows: stored per-clip rows (the emotion task's are read; people's are made from ``answers``).
        answers: the counted answers (:func:`~hug_vis_dataset.studies.judgments.counted_emotion_answers`).
        comparisons: the rows' comparison sets (:class:`~hug_vis_dataset.statistics.evidence.Comparisons`).
        people_rows: :func:`people_clip_rows` of ``answers`` when already made.
    """
    import pandas as pd

    from ..metrics.emotion import input_setting_sort_key
    from ..statistics.intervals import table_intervals
    from ..statistics.verdicts import compare

    scored = scored_answers(answers)
    people = people_clip_rows(scored) if people_rows is None else people_rows
    if not len(people):
        return []
    models = emotion_rows(rows)
    both = pd.concat([x for x in (models, people) if x is not None and len(x)], ignore_index=True)
    cells = table_intervals(both, [METRIC], n_boot)  # the Table 4 cells, people's among them
    best = best_models(models, comparisons)
    out = []
    for setting in sorted(scored["setting"].unique(), key=input_setting_sort_key):
        label, mine = best.get(setting), scored[scored["setting"] == setting]
        verdict = compare(both, TASK, METRIC, people_label(setting), label) if label else None
        out.append(PeopleSetting(setting, cells.get((people_label(setting), METRIC)), label,
                                 cells.get((label, METRIC)) if label else None, verdict, len(mine),
                                 int(mine["rater"].nunique()), 100 * float((mine["answer"] == CANNOT_TELL).mean())))
    return out


def _instead(counts: Any, total: int) -> str:
    """The most frequent wrong answer and its share of all answers (``"Surprised 25%"``; ``"-"`` when none)."""
    if not len(counts) or total == 0:
        return "-"
    top = counts.sort_values(ascending=False, kind="stable")
    return f"{top.index[0]} {100 * top.iloc[0] / total:.0f}%"


def confusion_comparison(rows, answers, setting: str, model_label: str, people_rows=None):
    """Per instructed emotion (Table 1's order), on the emotion's clips both people and the model have: ``emotion,
    clips``, ``people`` and ``model`` (their recall %, the mean over those clips), ``difference`` (people - model,
    the verdict's), ``verdict``, ``why`` (the engine's, on those clips), and what each answered instead most often
    (``people_instead``, ``model_instead``: the answer and its share of the emotion's answers, or clips). Emotions
    without a common clip are left out."""
    import pandas as pd

    from ..datamodel.grid import EMOTION_NAMES
    from ..statistics.verdicts import compare
    from ..tasks.emotion import ANSWERED_NOTE, UNPARSED_NOTE

    scored = scored_answers(answers)
    scored = scored[scored["setting"] == setting]
    people = people_clip_rows(scored) if people_rows is None else people_rows
    people = people[people["model"] == people_label(setting)]
    model = emotion_rows(rows)
    model = model[(model["model"] == model_label) & (model["status"] == "ok")] if model is not None and len(model) \
        else people.iloc[0:0]
    common = set(people["clip_id"]) & set(model["clip_id"])
    out = []
    for emotion in EMOTION_NAMES:
        p = people[(people["emotion"] == emotion) & people["clip_id"].isin(common)]
        m = model[(model["emotion"] == emotion) & model["clip_id"].isin(common)]
        if not len(p):
            continue
        verdict = compare(pd.concat([p, m], ignore_index=True), TASK, METRIC, people_label(setting), model_label)
        mine = scored[scored["clip_id"].isin(set(p["clip_id"]))]
        said = mine.loc[mine["correct"] == 0, "answer"].value_counts()
        notes = (m.loc[m["value"] == 0, "error"] if "error" in m.columns else m.loc[m["value"] == 0, "clip_id"].map(
            lambda _: "")).fillna("").astype(str)  # rows without notes (a CSV of a few columns): nothing named
        named = notes.map(lambda n: UNPARSED if n == UNPARSED_NOTE else n.removeprefix(ANSWERED_NOTE) if
                          n.startswith(ANSWERED_NOTE) else "")
        out.append({"emotion": emotion, "clips": len(p), "people": 100 * p["value"].mean(),
                    "model": 100 * m["value"].mean(), "difference": verdict.difference, "verdict": verdict.word,
                    "why": verdict.why, "people_instead": _instead(said, len(mine)),
                    "model_instead": _instead(named[named != ""].value_counts(), len(m))})
    return pd.DataFrame(out, columns=["emotion", "clips", "people", "model", "difference", "verdict", "why",
                                      "people_instead", "model_instead"])


def people_confusion(answers, setting: str):
    """People's confusion matrix in one setting: rows the instructed emotions, columns the answers
    (:data:`~hug_vis_dataset.studies.emotion_answers.ANSWER_CHOICES`), each row the shares of that emotion's answers."""
    import pandas as pd

    from ..datamodel.grid import EMOTION_NAMES

    scored = scored_answers(answers)
    scored = scored[scored["setting"] == setting]
    counts = pd.crosstab(scored["emotion"], scored["answer"]).reindex(index=list(EMOTION_NAMES),
                                                                      columns=list(ANSWER_CHOICES), fill_value=0)
    totals = counts.sum(axis=1).replace(0, np.nan)
    return counts.div(totals, axis=0)


def verdict_words(result: PeopleSetting) -> str:
    """One sentence: whether the best model of the setting is separable from people, in the verdict's words.

    Example:
        >>> verdict_words(PeopleSetting("Video", None, None, None, None, 0, 0, 0.0))
        'Video: no model answered this setting; nothing to compare people with'
    """
    if result.verdict is None:
        return f"{result.setting}: no model answered this setting; nothing to compare people with"
    v = result.verdict
    gap = (f"people {'-' if v.difference < 0 else '+'}{abs(v.difference):.2f} points [{v.ci_low:.2f}, {v.ci_high:.2f}]"
           if np.isfinite(v.difference) and np.isfinite(v.ci_low) else
           f"people {v.difference:+.2f} points" if np.isfinite(v.difference) else "no common clip")
    facts = f"{gap} on the {v.n_clips} clips both have; {v.why}" if v.n_clips else f"{gap}; {v.why}"
    if v.word == "cannot tell":
        return f"{result.setting}: cannot tell whether the best model, {result.model_name}, is separable from people ({facts})"
    return f"{result.setting}: the best model, {result.model_name}, is {v.word} from people ({facts})"


def settings_of(answers) -> list[str]:
    """The input settings the (non-gold) answers cover, in Table 4's order."""
    from ..metrics.emotion import input_setting_sort_key

    scored = scored_answers(answers)
    return sorted(scored["setting"].unique(), key=input_setting_sort_key) if len(scored) else []


__all__ = ["PeopleSetting", "accuracy_table", "best_models", "confusion_comparison", "emotion_rows",
                          "people_clip_rows", "people_confusion", "people_label", "people_vs_models", "scored_answers",
                          "settings_of", "verdict_words"]

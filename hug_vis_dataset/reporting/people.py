"""The report's people block: Table 4's People rows and "People as the ceiling of emotion recognition".

From an emotion study's exported answers (``hugvis report --people ANSWERS.csv``; the synthetic release's
``simulated_systems/emotion_answers.csv``; :meth:`~hug_vis_dataset.studies.emotion_answers.EmotionAnswerStore.to_csv`):

* :func:`read_people`: the answers that count (the one rule, :func:`hug_vis_dataset.studies.judgments.counted_emotion_answers`:
  gold items and flagged raters out unless ``--mos-all-raters``) and their per-clip rows, which join the emotion
  task's stored rows so Table 4 prints a People row per input setting with the interval every cell has, never
  ranked (:data:`hug_vis_dataset.datamodel.results.PEOPLE_NOTE`);
* :func:`people_markdown`: per setting, people against the setting's best model in the engine's verdict words
  (:func:`hug_vis_dataset.studies.people.people_vs_models`), then per emotion the recall of each and what each
  answered instead (:func:`hug_vis_dataset.studies.people.confusion_comparison`); ``people.csv`` and
  ``people_confusion.csv`` beside the report.

Example:
    >>> people_markdown(None, None)[:2]
    ['## People as the ceiling of emotion recognition (Table 4)', '']
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HEADING = "## People as the ceiling of emotion recognition (Table 4)"
NO_PEOPLE = ("No emotion study answers: pass --people ANSWERS.csv (an emotion study's export, or a synthetic "
             "release's simulated_systems/emotion_answers.csv) to add Table 4's People rows.")


@dataclass
class PeopleAnswers:
    """An emotion study's answers as the report uses them: the counted ``answers``, the QC selection, their per-clip
    ``rows`` (:func:`~hug_vis_dataset.studies.people.people_clip_rows`) and the file they came from."""

    answers: Any
    qc: Any
    rows: Any
    source: str = ""


def read_people(path: "str | Path", all_raters: bool = False) -> PeopleAnswers:
    """The counted answers of an exported emotion-answers CSV and their per-clip rows.

    Raises:
        EmotionAnswersFileError: the file cannot be read (one line naming it).
    """
    from ..studies.judgments import counted_emotion_answers
    from ..studies.people import people_clip_rows

    answers, qc = counted_emotion_answers(Path(path), all_raters)
    return PeopleAnswers(answers, qc, people_clip_rows(answers), Path(path).name)


def _cell(ci, marks: bool = True) -> str:
    """``93.35 [90.77, 96.03]`` (%, two decimals as Table 4 prints), with the small-sample mark where it applies."""
    from ..statistics.rules import interval_mark

    if ci is None or not math.isfinite(ci.estimate):
        return "n/a"
    if ci.n_clusters < 2 or not math.isfinite(ci.low):
        return f"{ci.estimate:.2f}"
    mark = interval_mark(ci.n_clusters, ci.low, ci.high) if marks else ""
    return f"{ci.estimate:.2f} [{ci.low:.2f}, {ci.high:.2f}]" + (f" {mark}" if mark else "")


def people_frames(rows, people: "PeopleAnswers | None", comparisons=None, n_boot: int = 1000):
    """``(summary, per-emotion comparisons by (setting, model), people's confusion, results)``: the block's
    frames (empty without answers) and the :class:`~hug_vis_dataset.studies.people.PeopleSetting` of each setting."""
    import pandas as pd

    from ..studies.people import confusion_comparison, people_confusion, people_vs_models

    if people is None or not len(people.rows):
        return pd.DataFrame(), {}, pd.DataFrame(), []
    results = people_vs_models(rows, people.answers, comparisons, n_boot, people.rows)
    summary, per_emotion, confusion = [], {}, []
    for r in results:
        v = r.verdict
        gap = "-" if v is None else f"{v.difference:+.2f}" + (
            f" [{v.ci_low:+.2f}, {v.ci_high:+.2f}]" if math.isfinite(v.ci_low) else "")
        summary.append({"Input": r.setting, "People (%)": _cell(r.people), "answers": r.n_answers,
                        "raters": r.n_raters, "Cannot tell (%)": round(r.cannot_tell, 1),
                        "Best model": r.model_name or "-", "Model (%)": _cell(r.model),
                        "Clips both have": v.n_clips if v is not None else 0,
                        "People - model (points)": gap, "Verdict": f"{v.word} ({v.why})" if v is not None else "no model"})
        if r.model_label:
            per_emotion[(r.setting, r.model_name)] = confusion_comparison(rows, people.answers, r.setting,
                                                                          r.model_label, people.rows)
        matrix = people_confusion(people.answers, r.setting)
        long = matrix.stack(future_stack=True).rename("share").reset_index()
        long.columns = ["emotion", "answer", "share"]
        confusion.append(long.assign(setting=r.setting)[["setting", "emotion", "answer", "share"]])
    return (pd.DataFrame(summary), per_emotion, pd.concat(confusion, ignore_index=True) if confusion else
            pd.DataFrame(), results)


def people_markdown(rows, people: "PeopleAnswers | None", comparisons=None, n_boot: int = 1000,
                    out_dir: "Path | None" = None, files: "list | None" = None) -> list[str]:
    """The block's Markdown lines (module docstring); writes ``people.csv`` and ``people_confusion.csv`` into
    ``out_dir`` when given (appended to ``files``). Stored text is escaped."""
    from ..presentation.escaping import markdown_text
    from ..datamodel.results import PEOPLE_NOTE
    from ..statistics.rules import small_sample_legend
    from ..studies.people import verdict_words
    from ..presentation.tables import markdown_table

    md = [HEADING, ""]
    if people is None or not len(people.rows):
        return md + [NO_PEOPLE if people is None else f"{markdown_text(people.source)}: no counted answer.", ""]
    summary, per_emotion, confusion, results = people_frames(rows, people, comparisons, n_boot)
    actors = int(people.rows["actor_id"].nunique())
    md += [f"{PEOPLE_NOTE}. Answers: {markdown_text(people.source)}. {markdown_text(people.qc.note('pass --mos-all-raters', 'the People rows'))}",
           "", "Per input setting, people against the setting's best model (the highest complete stored run): the "
           "People and model cells are Table 4's; the difference, its interval and the verdict are the paired "
           "comparison on the clips both have (sign-flip test and bootstrap, actors as clusters), in points, "
           "positive when people are better.", "", markdown_table(summary), ""]
    md += [f"- {markdown_text(verdict_words(r))}" for r in results] + [""]
    legend = small_sample_legend([actors])
    if legend:
        md += [markdown_text(legend) + ".", ""]
    for (setting, model), table in per_emotion.items():
        shown = table.rename(columns={"emotion": "Emotion", "clips": "Clips", "people": "People (%)", "model": "Model (%)",
                                      "difference": "People - model", "verdict": "Verdict",
                                      "people_instead": "People answered instead", "model_instead":
                                      "Model answered instead"}).drop(columns=["why"])
        md += [f"### {markdown_text(setting)}: people and {markdown_text(model)} per instructed emotion", "",
               "On the emotion's clips both have: recall, the mean over those clips; answered instead, the most "
               "frequent wrong answer and its share of the answers (people) or clips (the model's stored notes).", "",
               markdown_table(shown, 4), ""]
    if out_dir is not None:
        for name, frame in (("people.csv", summary), ("people_confusion.csv", confusion)):
            frame.to_csv(Path(out_dir) / name, index=False)
            if files is not None:
                files.append(Path(out_dir) / name)
    return md


__all__ = ["HEADING", "NO_PEOPLE", "PeopleAnswers", "people_frames", "people_markdown", "read_people"]

"""Emotion recognition (Table 4): per clip and input setting, 1 when the parsed answer names the
clip's instructed emotion, else 0 (unparsed answers count as wrong and carry the note
``unparsed answer``; a wrong answer carries the emotion it named, ``answered Sad``, so a model's
confusions can be read from its stored rows). Rows name the model ``"<model> | <input setting>"``.

A submission may ask a clip several times with the options reordered (``hugvis predict emotion --circular K``,
lines with ``order``, ``options`` and ``language``): the setting's rows are then
:func:`~hug_vis_dataset.metrics.emotion.circular_scores` (plain accuracy on order 0, circular accuracy, flip rate),
and the flip-rate row's note keeps which order gave which answer (``answers by order: en 0 Sad, en 2 Sad, en 4
Angry``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..datamodel.grid import ClipId, parse_emotion
from ..datamodel.results import EMOTION_MODEL_SEP, MISSING_PREDICTION, STATUS_OK
from .base import ClipJob, ClipOutcome, ClipScores, TaskScorer, failed_rows, result_rows
from .submission import PredictionIndex

UNPARSED_NOTE = "unparsed answer"
#: The rows of a question asked under reordered options (``hugvis predict emotion --circular K``).
CIRCULAR_METRICS: tuple[str, ...] = ("emotion_circular_accuracy", "emotion_flip_rate")
#: The note of a wrong answer, followed by the emotion it named (``answered Sad``).
ANSWERED_NOTE = "answered "
PREDICTIONS_FILE = "predictions.jsonl"


def _entry(entry) -> tuple:
    """A payload entry as ``(setting, answer, where, variant)``: a plain line's variant is None."""
    return tuple(entry) if len(entry) == 4 else (*entry, None)


def split_emotion_model(model: str) -> tuple[str, str]:
    """``"qwen | Video + Text"`` -> ``("qwen", "Video + Text")``; other models -> ``(model, "")``.

    Example:
        >>> split_emotion_model("m | Audio")
        ('m', 'Audio')
    """
    name, sep, setting = model.partition(EMOTION_MODEL_SEP)
    return (name, setting) if sep else (model, "")


class EmotionTask(TaskScorer):
    """One ``predictions.jsonl`` per submission; one row per clip and input setting."""

    name = "emotion"
    kernels = {"hug_vis_dataset.metrics.emotion:parse_answer": "_correct"}

    def reference(self, record) -> dict[str, str]:
        return {"emotion": ClipId.parse(record.clip_id).emotion.value}

    def _correct(self, prediction, reference, metrics, models, options) -> ClipScores:
        from ..metrics.emotion import parse_answer

        parsed = parse_answer(prediction)
        truth = parse_emotion(reference["emotion"])
        notes = ({"note": UNPARSED_NOTE} if parsed is None else {} if parsed == truth
                 else {"note": ANSWERED_NOTE + parsed.value})
        return ClipScores({"emotion_accuracy": float(parsed == truth)}, notes=notes)

    def match_names(self, entries: "Mapping[str, bool]", sample_folders=()) -> "tuple[int, list[tuple[str, str]]]":
        """One ``predictions.jsonl`` file at the top level (its answers are checked line by line when scored; the
        task takes no samples folders)."""
        if entries.get(PREDICTIONS_FILE) is False:
            return 1, []
        return 0, [("(zip)", f"no {PREDICTIONS_FILE} at the top level")]

    def index_predictions(self, pred_dir: "str | Path") -> PredictionIndex:
        """Answers by clip from ``predictions.jsonl`` (bad lines are *unmatched*, with file and line)."""
        from ..metrics.emotion import iter_prediction_lines, normalize_input_setting

        pred_dir = Path(pred_dir)
        path = pred_dir / PREDICTIONS_FILE if pred_dir.is_dir() else pred_dir
        if not path.exists():  # there but no regular file (a FIFO, a device): its reader says so (regular_files.py)
            raise FileNotFoundError(f"no {PREDICTIONS_FILE} in {pred_dir}")
        index = PredictionIndex()
        for where, record, error in iter_prediction_lines(path):
            if record is None:
                index.unmatched.append((where, error))
                continue
            cid = ClipId.parse(str(record["clip_id"]))
            setting = normalize_input_setting(record.get("input_setting") or "unknown")
            answer = record["answer"]
            # The option order the answer was given under (None: a plain line, asked once as the protocol asks).
            variant = None if record.get("order") is None else (int(record["order"]), str(record.get("language") or ""))
            index.found.setdefault(cid, [where])
            # A plain line keeps its three fields, so a submission without orders has the fingerprint it always had.
            entry = (setting, "" if answer is None else str(answer), where) + ((variant,) if variant else ())
            index.payload.setdefault(cid, []).append(entry)
        index.duplicate_keys = {}
        for cid, answers in index.payload.items():
            by_setting: dict = {}
            for setting, _, where, variant in map(_entry, answers):
                by_setting.setdefault(setting, {}).setdefault(variant, []).append(where)
            # the same (setting, order, language) twice, or a plain line beside others of the setting
            dup = [w for variants in by_setting.values() for v, ws in variants.items()
                   if len(ws) > 1 or (v is None and len(variants) > 1) for w in ws]
            if dup:
                index.duplicate_keys[cid] = dup
        return index

    def metrics_for(self, index: PredictionIndex, metrics) -> tuple[str, ...]:
        """Circular accuracy and flip rate only for a submission that asks reordered questions (a plain one
        computes, records and re-runs exactly what it always did)."""
        ordered = any(len(entry) == 4 for answers in index.payload.values() for entry in answers)
        return tuple(m for m in metrics if ordered or m not in CIRCULAR_METRICS)

    def settings(self, index: PredictionIndex) -> list[str]:
        """The input settings present in a submission, in Table 4's order."""
        from ..metrics.emotion import input_setting_sort_key

        return sorted({a[0] for answers in index.payload.values() for a in answers}, key=input_setting_sort_key)

    def score(self, job: ClipJob, models) -> ClipOutcome:
        answers: dict[str, list[tuple]] = {}
        for setting, answer, where, variant in map(_entry, job.payload or ()):
            answers.setdefault(setting, []).append((answer, where, variant))
        reference = {"emotion": ClipId.parse(job.clip_id).emotion.value}
        plain = [m for m in job.metrics if m == "emotion_accuracy"]
        rows: list[dict] = []
        for setting in job.options.get("settings", ()):
            model = f"{job.model}{EMOTION_MODEL_SEP}{setting}"
            given = answers.get(setting, [])
            variants = [v for _, _, v in given]
            if not given:
                rows += failed_rows(job, f"{MISSING_PREDICTION} for input setting {setting!r}", model=model)
            elif len(set(variants)) < len(variants) or (None in variants and len(given) > 1):
                rows += failed_rows(job, "duplicate predictions: " + ", ".join(w for _, w, _ in given), model=model)
            elif variants == [None]:
                scores = self.score_clip(given[0][0], reference, plain, models)
                rows += result_rows(model, job.task, job.clip_id, scores.values, error=scores.notes.get("note", ""),
                                    status=STATUS_OK)
            else:
                rows += self._circular(job, model, {v: a for a, _, v in given}, reference["emotion"])
        return ClipOutcome(job.clip_id, rows)

    def _circular(self, job: ClipJob, model: str, answers: Mapping[tuple[int, str], str], truth: str) -> list[dict]:
        """The rows of one setting asked under several option orders (:func:`circular_scores`): the plain row notes
        its order-0 answer as a single answer's row does, the flip-rate row which order gave which answer. A setting
        without its order-0 answer fails, naming it."""
        from ..metrics.emotion import circular_scores, parse_answer

        try:
            values = circular_scores(answers, truth)
        except ValueError as err:
            return failed_rows(job, str(err), model=model)

        def named(answer: str) -> str:
            parsed = parse_answer(answer)
            return "unparsed" if parsed is None else parsed.value

        keys = sorted(answers, key=lambda k: (k[1], k[0]))
        several = len({language for _, language in keys}) > 1
        said = "; ".join(f"{language + ' ' if several else ''}{order} {named(answers[(order, language)])}"
                         for order, language in keys)
        first = [answers[k] for k in keys if k[0] == 0]
        notes = {"emotion_flip_rate": f"answers by order: {said}",
                 "emotion_accuracy": self._correct(first[0], {"emotion": truth}, (), None, {}).notes.get("note", "")
                 if len(first) == 1 else ""}
        return [row for metric, value in sorted(values.items()) if metric in job.metrics
                for row in result_rows(model, job.task, job.clip_id, {metric: value}, error=notes.get(metric, ""),
                                       status=STATUS_OK)]

    def check(self, prediction: str, reference: Mapping[str, str], expected: Mapping[str, Any]) -> None:
        return None


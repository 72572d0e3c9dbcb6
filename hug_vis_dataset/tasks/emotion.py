"""Emotion recognition (Table 4): per clip and input setting, 1 when the parsed answer names the
clip's instructed emotion, else 0 (unparsed answers count as wrong and carry the note
``unparsed answer``; a wrong answer carries the emotion it named, ``answered Sad``, so a model's
confusions can be read from its stored rows). Rows name the model ``"<model> | <input setting>"``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..grid import ClipId, parse_emotion
from ..results import EMOTION_MODEL_SEP, MISSING_PREDICTION, STATUS_OK
from .base import ClipJob, ClipOutcome, ClipScores, TaskScorer, failed_rows, result_rows
from .submission import PredictionIndex

UNPARSED_NOTE = "unparsed answer"
#: The note of a wrong answer, followed by the emotion it named (``answered Sad``).
ANSWERED_NOTE = "answered "
PREDICTIONS_FILE = "predictions.jsonl"


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

    def match_names(self, entries: "Mapping[str, bool]") -> "tuple[int, list[tuple[str, str]]]":
        """One ``predictions.jsonl`` file at the top level (its answers are checked line by line when scored)."""
        if entries.get(PREDICTIONS_FILE) is False:
            return 1, []
        return 0, [("(zip)", f"no {PREDICTIONS_FILE} at the top level")]

    def index_predictions(self, pred_dir: "str | Path") -> PredictionIndex:
        """Answers by clip from ``predictions.jsonl`` (bad lines are *unmatched*, with file and line)."""
        from ..metrics.emotion import iter_prediction_lines, normalize_input_setting

        pred_dir = Path(pred_dir)
        path = pred_dir / PREDICTIONS_FILE if pred_dir.is_dir() else pred_dir
        if not path.is_file():
            raise FileNotFoundError(f"no {PREDICTIONS_FILE} in {pred_dir}")
        index = PredictionIndex()
        for where, record, error in iter_prediction_lines(path):
            if record is None:
                index.unmatched.append((where, error))
                continue
            cid = ClipId.parse(str(record["clip_id"]))
            setting = normalize_input_setting(record.get("input_setting") or "unknown")
            answer = record["answer"]
            index.found.setdefault(cid, [where])
            index.payload.setdefault(cid, []).append((setting, "" if answer is None else str(answer), where))
        index.duplicate_keys = {}
        for cid, answers in index.payload.items():
            by_setting: dict[str, list[str]] = {}
            for setting, _, where in answers:
                by_setting.setdefault(setting, []).append(where)
            dup = [w for ws in by_setting.values() if len(ws) > 1 for w in ws]
            if dup:
                index.duplicate_keys[cid] = dup
        return index

    def settings(self, index: PredictionIndex) -> list[str]:
        """The input settings present in a submission, in Table 4's order."""
        from ..metrics.emotion import input_setting_sort_key

        return sorted({s for answers in index.payload.values() for s, _, _ in answers}, key=input_setting_sort_key)

    def score(self, job: ClipJob, models) -> ClipOutcome:
        answers: dict[str, list[tuple[str, str]]] = {}
        for setting, answer, where in job.payload or ():
            answers.setdefault(setting, []).append((answer, where))
        reference = {"emotion": ClipId.parse(job.clip_id).emotion.value}
        rows: list[dict] = []
        for setting in job.options.get("settings", ()):
            model = f"{job.model}{EMOTION_MODEL_SEP}{setting}"
            given = answers.get(setting, [])
            if not given:
                rows += failed_rows(job, f"{MISSING_PREDICTION} for input setting {setting!r}", model=model)
            elif len(given) > 1:
                rows += failed_rows(job, "duplicate predictions: " + ", ".join(w for _, w in given), model=model)
            else:
                scores = self.score_clip(given[0][0], reference, job.metrics, models)
                rows += result_rows(model, job.task, job.clip_id, scores.values, error=scores.notes.get("note", ""),
                                    status=STATUS_OK)
        return ClipOutcome(job.clip_id, rows)

    def check(self, prediction: str, reference: Mapping[str, str], expected: Mapping[str, Any]) -> None:
        return None


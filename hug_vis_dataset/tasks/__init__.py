"""One scorer per task: the per-clip step every door calls.

``hugvis evaluate`` (:mod:`hug_vis_dataset.scoring.runner`), the evaluate modules
(:mod:`hug_vis_dataset.modules`) and the Space's upload scoring all reach the metric math through
:meth:`TaskScorer.score_clip` of the task's scorer, and aggregate the resulting rows with the
protocols of :mod:`hug_vis_dataset.scoring.aggregate`. Each scorer reads a clip's media once and calls
the function each catalog row names, as the row's ``call`` says (:mod:`.dispatch`): it owns decoding,
models and the passes, never a metric's math or a list of metrics.

Example:
    >>> sorted(TASKS)
    ['audio_driven', 'emotion', 'matting', 'matting_boundary', 'motion', 'vision_driven', 'voice_cloning']
    >>> get_task("voice_cloning").prediction_suffixes
    ('.wav', '.flac')
"""

from __future__ import annotations

from .. import catalog
from .base import (ClipJob, ClipOutcome, ClipScores, MetricUnavailable, SubmissionError, TaskScorer, failed_rows,
                   result_rows)
from .emotion import EmotionTask, split_emotion_model
from .generation import AudioDrivenTask, VisionDrivenTask
from .matting import MattingBoundaryTask, MattingTask, MotionTask
from .models import ModelCache, process_models
from .submission import PredictionIndex, index_folder
from .voice import REAL_AUDIO, VoiceCloningTask

TASKS: dict[str, TaskScorer] = {
    t.name: t for t in (EmotionTask(), AudioDrivenTask(), VisionDrivenTask(), VoiceCloningTask(), MattingTask(),
                        MattingBoundaryTask(), MotionTask())
}
if set(TASKS) != set(catalog.task_names()):
    raise RuntimeError("every catalog task needs exactly one scorer")


def get_task(name: str) -> TaskScorer:
    """The scorer of a task by name (``ValueError`` naming the known tasks otherwise)."""
    catalog.task(name)
    return TASKS[name]


def index_predictions(task: str, pred_dir) -> PredictionIndex:
    """What a submission folder holds for ``task``, by clip id."""
    scorer = get_task(task)
    if hasattr(scorer, "index_predictions"):
        return scorer.index_predictions(pred_dir)
    return index_folder(pred_dir, scorer.prediction_suffixes, scorer.prediction_dirs, scorer.spec.samples)


def score_job(job: ClipJob) -> ClipOutcome:
    """Score one clip with the worker's models (top-level so process pools and Ray can ship it)."""
    return get_task(job.task).score(job, process_models(str(job.options.get("device", "cpu"))))


__all__ = ["TASKS", "REAL_AUDIO", "ClipJob", "ClipOutcome", "ClipScores", "MetricUnavailable", "ModelCache",
           "PredictionIndex", "SubmissionError", "TaskScorer", "failed_rows", "get_task", "index_predictions",
           "result_rows", "score_job", "split_emotion_model"]

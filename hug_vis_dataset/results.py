"""Per-clip result rows: the primary result of every evaluation.

Every aggregate (task tables, emotion breakdowns, cross-task analyses, bootstrap intervals)
is computed from these rows, never from a running mean kept elsewhere.

One row per (model, clip, metric)::

    model, task, clip_id, actor_id, emotion, action_id, script_id, metric, value, status, error

``status`` is ``ok`` or ``failed``; failed rows keep ``value`` NaN and the error text, so
failures are counted and reported, never silently dropped.
"""

from __future__ import annotations

from typing import Iterable, Mapping

RESULT_COLUMNS: tuple[str, ...] = (
    "model",
    "task",
    "clip_id",
    "actor_id",
    "emotion",
    "action_id",
    "script_id",
    "metric",
    "value",
    "status",
    "error",
)
# Reserved model names of rows that are not a model's output. Readers of stored rows (reports,
# the cross-task analyses) leave them out of model comparisons.
REAL_AUDIO_MODEL = "real-audio"  # Table 9's "Real audio" row: the release's own recordings
REFERENCE_MODEL = "reference"  # statistics of the reference data (motion U_s, V_s)
BASELINE_MODEL = "baseline"  # the toolkit's built-in trivial baselines (hugvis predict --model baseline)
# Emotion rows name the model "<model> | <input setting>" (Table 4 has one row per both).
EMOTION_MODEL_SEP = " | "
REFERENCE_MODELS: tuple[str, ...] = (REAL_AUDIO_MODEL, REFERENCE_MODEL, BASELINE_MODEL)


def reference_rows(models):
    """Boolean mask of rows whose model is reserved (:data:`REFERENCE_MODELS`, emotion rows by their
    model part): readers leave them out of model comparisons.

    Example:
        >>> import pandas as pd
        >>> reference_rows(pd.Series(["m", "baseline | Text", "real-audio", "m | Text"])).tolist()
        [False, True, True, False]
    """
    return models.astype(str).str.partition(EMOTION_MODEL_SEP)[0].isin(list(REFERENCE_MODELS))
STATUS_OK = "ok"
STATUS_FAILED = "failed"


def make_rows(
    model: str, task: str, clip_id: str, values: Mapping[str, float], status: str = STATUS_OK, error: str = ""
) -> list[dict]:
    """Result rows of one clip, grid fields filled from the clip id.

    Example:
        >>> make_rows("m", "matting", "actor_0001_happy_action_01_script_001", {"mad": 1.5})[0]["emotion"]
        'Happy'
    """
    from .grid import ClipId

    fields = ClipId.parse(clip_id).fields()
    return [
        {"model": model, "task": task, **fields, "metric": metric, "value": float(value), "status": status,
         "error": error}
        for metric, value in values.items()
    ]


def rows_to_frame(rows: Iterable[Mapping]):
    """A pandas DataFrame with exactly :data:`RESULT_COLUMNS` (missing columns filled)."""
    import pandas as pd

    frame = pd.DataFrame(list(rows))
    for column in RESULT_COLUMNS:
        if column not in frame:
            frame[column] = "" if column in ("error", "status") else None
    return frame[list(RESULT_COLUMNS)]

"""Per-clip result rows: the primary result of every evaluation.

Every aggregate (task tables, emotion breakdowns, cross-task analyses, bootstrap intervals)
is computed from these rows, never from a running mean kept elsewhere.

One row per (model, clip, metric)::

    model, task, clip_id, actor_id, emotion, action_id, script_id, metric, value, status, error

``status`` is ``ok`` or ``failed``; failed rows keep ``value`` NaN and the error text, so
failures are counted and reported, never silently dropped.
"""

from __future__ import annotations

import math
import re
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
#: The optional column of a run scored over several samples per clip (a stochastic model's seeds: the submission's
#: ``<clip>/sample_<k>.<ext>``): the sample index ``k`` of each row. A run without it has one sample per clip (an
#: older run reads as sample 0); every table, interval and verdict reads per-clip means over the samples
#: (:func:`hug_vis_dataset.scoring.aggregate.sample_means`), the seed statistics read the samples themselves.
SAMPLE_COLUMN = "sample"
# One rule for the names stored rows carry (model, rater) and the folders they become, so a model
# scored by the CLI can be pushed to the leaderboard and rated in the MOS study under the same name.
NAME_RULE = ("1-64 letters, digits, '.', '_', '-', '+', '@' or '=' (no spaces or slashes), "
             "starting with a letter or digit")
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+@=-]{0,63}")


def name_problem(kind: str, name: object) -> "str | None":
    """Why ``name`` cannot be a stored ``kind`` name (model, rater), or ``None`` when it can.

    Example:
        >>> name_problem("model", "rvm-1.0+ft@v2") is None
        True
        >>> name_problem("model", "my model")
        "model name 'my model' must be 1-64 letters, digits, '.', '_', '-', '+', '@' or '=' (no spaces or slashes), starting with a letter or digit"
    """
    if isinstance(name, str) and _NAME_RE.fullmatch(name):  # match's $ would admit a trailing newline
        return None
    return f"{kind} name {name!r} must be {NAME_RULE}"


# Reserved model names of rows that are not a model's output. Readers of stored rows (reports,
# the cross-task analyses) leave them out of model comparisons.
REAL_AUDIO_MODEL = "real-audio"  # Table 9's "Real audio" row: the release's own recordings
REFERENCE_MODEL = "reference"  # statistics of the reference data (motion U_s, V_s)
BASELINE_MODEL = "baseline"  # the toolkit's built-in trivial baselines (hugvis predict --model baseline)
# Table 4's People rows: the emotion study's raters (studies/people.py), the ceiling models are read against.
PEOPLE_MODEL = "people"
# Emotion rows name the model "<model> | <input setting>" (Table 4 has one row per both).
EMOTION_MODEL_SEP = " | "
REFERENCE_MODELS: tuple[str, ...] = (REAL_AUDIO_MODEL, REFERENCE_MODEL, BASELINE_MODEL, PEOPLE_MODEL)
# Pseudo-systems of ``hugvis audit robustness`` (processed reference media: ``audit@h264_crf23``):
# measurements of a metric's noise floor, never systems to rank.
AUDIT_PREFIX = "audit@"
# How tables (the report, the leaderboard) print the reserved rows.
REAL_AUDIO_LABEL = "Real audio (reference)"
BASELINE_LABEL = "baseline (built-in)"
#: Printed name of each reserved row (printed, never ranked; the reference clips' motion statistics feed Fig. 11).
REFERENCE_LABEL = "reference clips"
PEOPLE_LABEL = "People"
RESERVED_LABELS: dict[str, str] = {REAL_AUDIO_MODEL: REAL_AUDIO_LABEL, BASELINE_MODEL: BASELINE_LABEL,
                                   REFERENCE_MODEL: REFERENCE_LABEL, PEOPLE_MODEL: PEOPLE_LABEL}
#: What a table with People rows says under them (Table 4).
PEOPLE_NOTE = ("People: the forced-choice emotion study's raters shown the clip in that input setting (per clip the "
               "share of counted raters naming the instructed emotion, 'Cannot tell' counted wrong; gold items and "
               "raters flagged by quality control left out); a ceiling to read the models against, never ranked "
               "with them")
#: What each task's built-in baseline does (``hugvis predict --model baseline``), as a table's note says it: a
#: reader must know that voice cloning's replays the reference, so its Speaker Sim. is a ceiling, not a system.
BASELINE_DOES: dict[str, str] = {
    "matting": "a chroma key of the clip's own frames",
    "audio_driven": "the source portrait held still",
    "vision_driven": "the source portrait held still",
    "voice_cloning": ("replays the reference recording itself, so its Speaker Sim. compares a recording with "
                      "itself (1.000): a ceiling to read the systems against, not a system"),
    "emotion": "transcript keywords (Text input only)",
}


def reserved_form(name: str) -> "str | None":
    """The reserved name ``name`` is a spelling of (:data:`REFERENCE_MODELS`, or :data:`AUDIT_PREFIX` for any
    ``audit@...``), compared without case (a case-insensitive file system stores ``Real-Audio`` in the
    ``real-audio`` folder); None for a name of one's own.

    >>> reserved_form("Audit@h264_crf23"), reserved_form("REAL-AUDIO"), reserved_form("auditor")
    ('audit@', 'real-audio', None)
    """
    folded = str(name).lower()
    if folded.startswith(AUDIT_PREFIX):
        return AUDIT_PREFIX
    return next((reserved for reserved in REFERENCE_MODELS if folded == reserved), None)


def model_name_problem(name: object, allowed: "tuple[str, ...]" = ()) -> "str | None":
    """Why ``name`` cannot be a model name a user gives (the one rule of every door that takes one), or None.

    It must pass :func:`name_problem` and be no spelling of a reserved name (:func:`reserved_form`), unless the
    door itself stores that reserved row (``allowed``: ``baseline`` for ``hugvis evaluate`` of the built-in
    baseline's outputs), and then exactly as the readers know it.

    Example:
        >>> model_name_problem("my-net") is None, model_name_problem("baseline", allowed=("baseline",)) is None
        (True, True)
        >>> model_name_problem("audit@h264_crf23")
        "model name 'audit@h264_crf23' is reserved for the robustness audit's pseudo-systems (audit@...), never ranked; choose another name"
        >>> model_name_problem("Baseline", allowed=("baseline",))
        "model name 'Baseline' is another spelling of the reserved name 'baseline'; write baseline, or choose another name"
    """
    problem = name_problem("model", name)
    if problem:
        return problem
    form = reserved_form(str(name))
    if form is None or (form in allowed and (name == form or form == AUDIT_PREFIX and str(name).startswith(form))):
        return None
    if form in allowed:
        return f"model name {name!r} is another spelling of the reserved name {form!r}; write {form}, or choose another name"
    if form == AUDIT_PREFIX:
        return (f"model name {name!r} is reserved for the robustness audit's pseudo-systems ({AUDIT_PREFIX}...), never "
                "ranked; choose another name")
    return f"model name {name!r} is reserved for the toolkit's reference rows ({form}); choose another name"


def reserved_label(model: str) -> str:
    """The printed name of a model: a reserved row under its label, any other name as it is.

    >>> reserved_label("real-audio"), reserved_label("Real audio"), reserved_label("clone_good")
    ('Real audio (reference)', 'Real audio', 'clone_good')
    """
    return RESERVED_LABELS.get(model, model)


def baseline_note(task: str) -> str:
    """The sentence a table of ``task`` prints under its built-in baseline row ("" when the task has none).

    >>> baseline_note("voice_cloning").startswith("baseline (built-in): replays the reference recording")
    True
    """
    return f"{BASELINE_LABEL}: {BASELINE_DOES[task]}." if task in BASELINE_DOES else ""


def is_reference(name: str) -> bool:
    """Whether one row label is reserved (:func:`reference_rows` of a single name).

    >>> is_reference("baseline | Text"), is_reference("m")
    (True, False)
    """
    name = str(name)
    return name.partition(EMOTION_MODEL_SEP)[0] in REFERENCE_MODELS or name.startswith(AUDIT_PREFIX)


def reference_rows(models):
    """Boolean mask of rows whose model is reserved (:data:`REFERENCE_MODELS`, emotion rows by their
    model part, and audit pseudo-systems by :data:`AUDIT_PREFIX`): readers leave them out of model
    comparisons.

    Example:
        >>> import pandas as pd
        >>> reference_rows(pd.Series(["m", "baseline | Text", "real-audio", "m | Text", "audit@h264_crf23"])).tolist()
        [False, True, True, False, True]
    """
    import numpy as np
    import pandas as pd

    codes, names = pd.factorize(pd.Series(models))  # distinct names first (a category column: its codes)
    names = [str(n) for n in names]
    # One test per distinct name (a full grid's millions of rows hold a few dozen names).
    reserved = np.array([is_reference(n) for n in names] + [False], dtype=bool)  # code -1: a missing name
    return pd.Series(reserved[codes] if len(codes) else np.zeros(0, dtype=bool),
                     index=models.index if hasattr(models, "index") else None)
STATUS_OK = "ok"
STATUS_FAILED = "failed"
#: How a clip's rows begin their error when the run has no prediction for it: a *missing* clip (its run's
#: coverage), never counted as a *failed* one (statistics.rules: missing is not failed).
MISSING_PREDICTION = "missing prediction"


def clip_fields(clip_id: str) -> dict[str, Any]:
    """Grid fields of a clip id (``actor_id`` ... ``script_id``); ``None`` fields for a free-form key.

    The evaluate modules accept paths that carry no clip id; their rows are keyed by position.
    """
    from .grid import ClipId, ClipIdError

    try:
        fields = ClipId.parse(clip_id).fields()
    except ClipIdError:
        return {"clip_id": clip_id, "actor_id": None, "emotion": "", "action_id": None, "script_id": None}
    fields["clip_id"] = clip_id
    return fields


def result_rows(model: str, task: str, clip_id: str, values: Mapping[str, float], error: str = "",
                status: "str | None" = None) -> list[dict]:
    """The one row builder: result rows of one clip, sorted by metric.

    A non-finite value makes its row ``failed`` (never a silent NaN in a mean); ``status``
    forces every row's status (failed rows of a clip that could not be scored).

    Example:
        >>> [r["status"] for r in result_rows("m", "matting", "actor_0001_happy_action_01_script_001",
        ...                                     {"mad": 1.5, "mse": float("nan")})]
        ['ok', 'failed']
    """
    fields = clip_fields(clip_id)
    out = []
    for metric in sorted(values):
        value = float(values[metric])
        finite = math.isfinite(value)
        row_status = status or (STATUS_OK if finite else STATUS_FAILED)
        row_error = error or ("" if finite else f"{metric} is not finite ({value})")
        out.append({"model": model, "task": task, **fields, "metric": metric, "value": value,
                    "status": row_status, "error": row_error})
    return out


def rows_to_frame(rows: Iterable[Mapping]):
    """A pandas DataFrame with exactly :data:`RESULT_COLUMNS` (missing columns filled)."""
    import pandas as pd

    frame = pd.DataFrame(list(rows))
    for column in RESULT_COLUMNS:
        if column not in frame:
            frame[column] = "" if column in ("error", "status") else None
    return frame[list(RESULT_COLUMNS)]

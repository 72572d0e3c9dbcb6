"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.datamodel.results` (docs/CHANGELOG.md)."""

from .datamodel.results import (RESULT_COLUMNS, NAME_RULE, name_problem, REAL_AUDIO_MODEL, REFERENCE_MODEL,
    BASELINE_MODEL, PEOPLE_MODEL, EMOTION_MODEL_SEP, REFERENCE_MODELS, AUDIT_PREFIX, REAL_AUDIO_LABEL,
    BASELINE_LABEL, REFERENCE_LABEL, PEOPLE_LABEL, RESERVED_LABELS, PEOPLE_NOTE, BASELINE_DOES,
    reserved_form, model_name_problem, reserved_label, baseline_note, is_reference, reference_rows,
    STATUS_OK, STATUS_FAILED, MISSING_PREDICTION, clip_fields, result_rows, rows_to_frame)  # noqa: F401

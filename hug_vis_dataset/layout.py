"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.datamodel.layout` (docs/CHANGELOG.md)."""

from .datamodel.layout import (DEFAULT_EMOTION_TOKENS, ClipId, Emotion, parse_emotion, InputFileError,
    read_json, require_fields, CSV_COLUMNS, ReleaseLayout, DEFAULT_LAYOUT, SYNTHETIC_MARKER,
    SIMULATED_SYSTEMS_DIR, SIMULATED_RATINGS_FILE, SIMULATED_EMOTION_ANSWERS_FILE, layout_for)  # noqa: F401

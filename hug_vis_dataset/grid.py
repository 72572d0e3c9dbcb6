"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.datamodel.grid` (docs/CHANGELOG.md)."""

from .datamodel.grid import (NUM_ACTORS, NUM_ACTIONS, NUM_SCRIPTS, Emotion, EMOTIONS, EMOTION_NAMES,
    EMOTION_ALIASES, parse_emotion, EmotionDesign, TABLE1, DEFAULT_EMOTION_TOKENS, ClipIdError, ClipId,
    iter_grid, full_grid)  # noqa: F401

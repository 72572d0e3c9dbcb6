"""HUG-VIS reference toolkit: grid model, release reader/validator, synthetic mini-grid,
Hub dataset builder, metrics, scoring and reports.

Example:
    >>> import hug_vis_dataset as hv
    >>> len(hv.full_grid())
    8400
"""

from .datamodel.grid import (
    EMOTION_NAMES,
    EMOTIONS,
    TABLE1,
    ClipId,
    ClipIdError,
    Emotion,
    full_grid,
    iter_grid,
    parse_emotion,
)
from .datamodel.layout import DEFAULT_LAYOUT, ReleaseLayout

__version__ = "0.1.0"

__all__ = [
    "EMOTIONS",
    "EMOTION_NAMES",
    "TABLE1",
    "ClipId",
    "ClipIdError",
    "Emotion",
    "full_grid",
    "iter_grid",
    "parse_emotion",
    "DEFAULT_LAYOUT",
    "ReleaseLayout",
    "__version__",
]

"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.presentation.analysis_fields` (docs/CHANGELOG.md)."""

from .presentation.analysis_fields import (ANALYSIS_FIELDS)  # noqa: F401

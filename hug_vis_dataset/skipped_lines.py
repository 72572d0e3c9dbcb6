"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.presentation.skipped_lines` (docs/CHANGELOG.md)."""

from .presentation.skipped_lines import (SHOWN_LINES, listed)  # noqa: F401

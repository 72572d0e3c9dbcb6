"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.reporting.figure_style` (docs/CHANGELOG.md)."""

from .reporting.figure_style import (RC, MISSING_TEXT, MISSING_HATCH, MISSING_FACE, MISSING_EDGE,
    MISSING_CAPTION, apply, missing_positions, draw_missing, legend_outside, write_caption)  # noqa: F401

"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.presentation.tables` (docs/CHANGELOG.md)."""

from .presentation.tables import (BEST, SECOND, FORMATS, mark_ranks, render_table, text_table,
    markdown_table)  # noqa: F401

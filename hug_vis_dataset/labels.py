"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.presentation.labels` (docs/CHANGELOG.md)."""

from .presentation.labels import (markdown_code_text, reserved_label, METRIC_COLUMNS, CRITERION_COLUMNS,
    TASK_COLUMNS, MODEL_COLUMNS, task_label, value_label, readable, part_of, skipped_words, skipped_lines,
    skipped_markdown, variance_term, no_rows, why_no_values, clip_display)  # noqa: F401

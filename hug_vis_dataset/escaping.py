"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.presentation.escaping` (docs/CHANGELOG.md)."""

from .presentation.escaping import (one_line, terminal_text, SafeStream, safe_output, html_text,
    markdown_text, markdown_code_text, terminal_markdown)  # noqa: F401

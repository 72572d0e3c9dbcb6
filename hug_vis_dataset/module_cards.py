"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.publish.module_cards` (docs/CHANGELOG.md)."""

from .publish.module_cards import (ANALYSIS_FIELDS, CITATION, links_markdown, ANALYSIS_OPTIONS,
    example_names, input_kind, needs_reference, title, paper_values, example_code, card_body)  # noqa: F401

"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.presentation.citation` (docs/CHANGELOG.md)."""

from .presentation.citation import (PAPER_TITLE, HOMEPAGE, CODEBASE, ARXIV_ID, PAPER_URL, DATASET_URL,
    PROJECT_LINKS, AUTHORS_NOTE, CITATION, links_markdown)  # noqa: F401

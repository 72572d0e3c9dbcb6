"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.readers.regular_files` (docs/CHANGELOG.md)."""

from .readers.regular_files import (InputFileError, GIB, LIMITS, MAX_LINE_BYTES, FIX, open_regular,
    check_regular)  # noqa: F401

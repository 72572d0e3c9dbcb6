"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.readers.textio` (docs/CHANGELOG.md)."""

from .readers.textio import (HugvisError, InputFileError, MAX_LINE_BYTES, open_regular, BOM,
    TextEncodingError, iter_text_lines, read_text_lines, read_text, parse_form, csv_header_problem)  # noqa: F401

"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.datamodel.release` (docs/CHANGELOG.md)."""

from .datamodel.release import (HugvisError, ClipId, ClipIdError, CSV_COLUMNS, ReleaseLayout, layout_for,
    InputFileError, CsvTable, read_csv_table, ClipRecord, ReleaseError, parse_resolution, MetadataFileError,
    read_metadata_table, read_metadata_rows, record_from_row, Release)  # noqa: F401

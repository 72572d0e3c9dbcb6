"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.datamodel.paper_tables` (docs/CHANGELOG.md)."""

from .datamodel.paper_tables import (read_json, DATA_PATH, PAPER_COLUMNS, UNRANKED_SOURCES, paper_data,
    paper_frame, table_info, TASK_TABLES)  # noqa: F401

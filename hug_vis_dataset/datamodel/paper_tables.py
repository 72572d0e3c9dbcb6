"""The paper's Tables 4-11 shipped as data (leaderboards over them: :mod:`hug_vis_dataset.leaderboard`).

``hug_vis_dataset/data/paper_tables.json`` holds one record per reported number, each traceable
to its table: ``table``, ``task``, ``model``, ``input_setting`` (Table 4), ``source`` (``open``,
``closed``, ``reference`` or empty where the paper does not group by it), ``paradigm``
(``Head Animation`` / ``Body Animation``, Tables 7-8), ``metric`` (a machine key),
``metric_display`` (the paper's column header), ``value``, ``text`` (the digits exactly as printed)
and ``higher_is_better``.

Example:
    >>> frame = paper_frame()
    >>> row = frame[(frame.table == 11) & (frame.model == "BiRefNet") & (frame.metric == "dtssd")].iloc[0]
    >>> row.text, bool(row.higher_is_better)
    ('2.04', False)
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import catalog
from ..readers.json_files import read_json

DATA_PATH = Path(__file__).resolve().parents[1] / "data" / "paper_tables.json"
PAPER_COLUMNS: tuple[str, ...] = (
    "table", "task", "model", "input_setting", "source", "paradigm", "metric", "metric_display", "value", "text",
    "higher_is_better",
)
# Rows that are references, not competitors: the paper does not rank them (Table 9's real audio).
UNRANKED_SOURCES = frozenset({"reference"})


@lru_cache(maxsize=4)
def _load(path: str) -> dict[str, Any]:
    data = read_json(path)  # strict: a value given twice in the paper's table is an error, not the last one
    for number, record in enumerate(data.get("values", [])):
        missing = [c for c in PAPER_COLUMNS if c not in record]
        if missing:
            raise ValueError(f"{path}: value record {number} lacks fields {missing}")
        if not math.isfinite(float(record["value"])) or float(record["text"]) != float(record["value"]):
            raise ValueError(f"{path}: value record {number} has value {record['value']!r} != text {record['text']!r}")
    return data


def paper_data(path: "str | Path | None" = None) -> dict[str, Any]:
    """The raw JSON: ``{"source", "tables": [{table, task, title, metrics}], "values": [...]}``."""
    return _load(str(path or DATA_PATH))


def paper_frame(path: "str | Path | None" = None):
    """All paper values as a pandas DataFrame with :data:`PAPER_COLUMNS`, in the paper's row order."""
    import pandas as pd

    return pd.DataFrame(paper_data(path)["values"], columns=list(PAPER_COLUMNS))


def table_info(table: int, path: "str | Path | None" = None) -> dict[str, Any]:
    """Title, task and ordered metrics (``key``, ``display``, ``higher_is_better``) of one table."""
    for info in paper_data(path)["tables"]:
        if info["table"] == int(table):
            return info
    raise KeyError(f"the paper data has no Table {table}; known: {[t['table'] for t in paper_data(path)['tables']]}")


# The objective table of each scored task: our results sit beside these paper rows.
TASK_TABLES: dict[str, int] = {t.name: t.paper_table for t in catalog.TASKS if t.paper_table is not None}

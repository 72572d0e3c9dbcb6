"""The paper's Tables 4-11 shipped as data, and leaderboards built from them and from our results.

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
    >>> board = leaderboard(frame, 5)
    >>> board.loc[board.Model == "LatentSync", "Sync-C"].item()
    '5.43 (best)'
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import catalog
from .results import EMOTION_MODEL_SEP
from .tables import mark_ranks

DATA_PATH = Path(__file__).resolve().parent / "data" / "paper_tables.json"
PAPER_COLUMNS: tuple[str, ...] = (
    "table", "task", "model", "input_setting", "source", "paradigm", "metric", "metric_display", "value", "text",
    "higher_is_better",
)
BEST, SECOND = "best", "second"
# Rows that are references, not competitors: the paper does not rank them (Table 9's real audio).
UNRANKED_SOURCES = frozenset({"reference"})


@lru_cache(maxsize=4)
def _load(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
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


def _format(text: str, mark: "str | None") -> str:
    return f"{text} ({mark})" if mark else text


def leaderboard(
    frame,
    table: int,
    source: "str | None" = None,
    input_setting: "str | None" = None,
    paradigm: "str | None" = None,
    marked: bool = True,
):
    """One paper table as a wide frame (``Model`` + grouping columns + one column per metric).

    Args:
        frame: :func:`paper_frame` output (possibly concatenated with :func:`load_results`).
        table: 4..11.
        source, input_setting, paradigm: optional filters (``None`` or ``"All"`` keeps every row).
        marked: append `` (best)`` / `` (second)`` to the printed value; marks are recomputed on
            the filtered rows, so a filtered view marks the leaders of that view.

    Raises:
        KeyError: unknown table. ValueError: the filters leave no row.
    """
    import pandas as pd

    info = table_info(table)
    sub = frame[frame["table"] == int(table)]
    for column, wanted in (("source", source), ("input_setting", input_setting), ("paradigm", paradigm)):
        if wanted not in (None, "", "All"):
            sub = sub[sub[column] == wanted]
    if sub.empty:
        raise ValueError(f"no Table {table} rows match source={source!r} input_setting={input_setting!r} "
                         f"paradigm={paradigm!r}")
    keys = ["model", "input_setting", "source", "paradigm"]
    order = list(dict.fromkeys(tuple(r) for r in sub[keys].itertuples(index=False)))
    wide: dict[tuple, dict[str, str]] = {k: {} for k in order}
    for metric in info["metrics"]:
        part = sub[sub["metric"] == metric["key"]]
        ranked = part[~part["source"].isin(UNRANKED_SOURCES)]
        # The paper's values are exact as printed: rank them unrounded (ties share a mark).
        marks = dict(zip(ranked.index, mark_ranks(ranked["value"].tolist(), metric["higher_is_better"], None)))
        for index, record in part.iterrows():
            cell = _format(record["text"], marks.get(index, "") if marked else "")
            wide[tuple(record[k] for k in keys)][metric["display"]] = cell
    rows = []
    for key in order:
        row = {"Model": key[0]}
        if table == 4:
            row["Input"] = key[1]
        if sub["source"].astype(bool).any():
            row["Source"] = key[2]
        if sub["paradigm"].astype(bool).any():
            row["Paradigm"] = key[3]
        for metric in info["metrics"]:
            row[metric["display"]] = wide[key].get(metric["display"], "")
        rows.append(row)
    return pd.DataFrame(rows)


# The objective table of each scored task: our results sit beside these paper rows.
TASK_TABLES: dict[str, int] = {t.name: t.paper_table for t in catalog.TASKS if t.paper_table is not None}


def _print_value(value: float) -> str:
    return f"{value:.2f}" if abs(value) >= 1 or value == 0 else f"{value:.3f}"


def summary_as_paper_rows(summary: dict):
    """The aggregate of one ``hugvis evaluate`` summary, shaped like paper rows of its task's table.

    The values are the scorer's own aggregate (already in the paper's units and protocol), never
    re-averaged here; metrics the paper table does not report (``n_ok``, extra DNSMOS parts) and
    non-finite values are left out. Emotion models are named ``"<model> | <input setting>"``
    by the scorer; the setting goes to ``input_setting``.

    Example:
        >>> s = {"task": "matting", "model": "m", "aggregate": {"m": {"mad": 2.5, "dtssd": None, "n_ok": 3}}}
        >>> summary_as_paper_rows(s)[["model", "metric", "text", "source"]].values.tolist()
        [['m (ours)', 'mad', '2.50', 'ours']]
        >>> e = {"task": "emotion", "aggregate": {"x | Video + Text": {"emotion_accuracy": 50.0}}}
        >>> summary_as_paper_rows(e)[["model", "input_setting", "value"]].values.tolist()
        [['x (ours)', 'Video + Text', 50.0]]
    """
    import pandas as pd

    task = summary.get("task")
    if task not in TASK_TABLES:
        raise ValueError(f"summary task {task!r} has no paper table; known: {sorted(TASK_TABLES)}")
    table = TASK_TABLES[task]
    info = table_info(table)
    records = []
    for label, values in (summary.get("aggregate") or {}).items():
        model, _, setting = str(label).partition(EMOTION_MODEL_SEP) if task == "emotion" else (str(label), "", "")
        for metric in info["metrics"]:
            value = values.get(metric["key"])
            if value is None or not math.isfinite(float(value)):
                continue
            records.append({
                "table": table, "task": task, "model": f"{model} (ours)", "input_setting": setting,
                "source": "ours", "paradigm": "", "metric": metric["key"], "metric_display": metric["display"],
                "value": float(value), "text": _print_value(float(value)),
                "higher_is_better": metric["higher_is_better"],
            })
    return pd.DataFrame(records, columns=list(PAPER_COLUMNS))


def load_results(results_dir: "str | Path | None"):
    """Paper-shaped rows of every ``RESULTS/<task>/<model>/summary.json`` (empty frame when none)."""
    import pandas as pd

    frames = []
    if results_dir is not None and Path(results_dir).is_dir():
        for path in sorted(Path(results_dir).glob("*/*/summary.json")):
            with open(path, encoding="utf-8") as handle:
                summary = json.load(handle)
            if summary.get("task") in TASK_TABLES:
                frames.append(summary_as_paper_rows(summary))
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=list(PAPER_COLUMNS))
    return pd.concat(frames, ignore_index=True)

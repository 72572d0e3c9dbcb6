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
from typing import Any, Sequence

DATA_PATH = Path(__file__).resolve().parents[1] / "data" / "paper_tables.json"
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


def mark_best(values: Sequence[float], higher_is_better: bool) -> list[str]:
    """``"best"``/``"second"``/``""`` per value: the best and second-best *distinct* values are marked.

    Ties share a mark (the paper's Sync-D 7.73 is best for both Sonic and LatentSync); NaN is
    never marked.

    Example:
        >>> mark_best([7.73, 8.10, 7.73, 8.90], higher_is_better=False)
        ['best', 'second', 'best', '']
        >>> mark_best([1.0, float("nan"), 3.0], higher_is_better=True)
        ['second', '', 'best']
        >>> mark_best([], True)
        []
    """
    finite = sorted({float(v) for v in values if v is not None and math.isfinite(float(v))}, reverse=higher_is_better)
    ranks = {v: BEST if i == 0 else SECOND for i, v in enumerate(finite[:2])}
    return [ranks.get(float(v), "") if v is not None and math.isfinite(float(v)) else "" for v in values]


def _format(text: str, mark: str) -> str:
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
        frame: :func:`paper_frame` output (possibly concatenated with :func:`results_as_paper_rows`).
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
        marks = dict(zip(ranked.index, mark_best(ranked["value"].tolist(), metric["higher_is_better"])))
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


def results_as_paper_rows(results, table: int, scales: "dict[str, float] | None" = None):
    """Our per-clip result rows, averaged per model and metric, shaped like paper rows of ``table``.

    Only ``status == "ok"`` rows with a finite value enter the mean (failures are reported by the
    scorer, not averaged as zeros). The mean is over clips, so it does not depend on row order.
    ``scales`` maps a metric key to the factor that converts the raw value to the paper's unit
    (e.g. MAD x1000); the library's ``MetricInfo.scale`` is used when not given.

    Example:
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"model": ["m", "m", "m"], "task": ["matting"] * 3, "metric": ["dtssd"] * 3,
        ...                      "value": [1.0, 2.0, float("nan")], "status": ["ok", "ok", "failed"]})
        >>> out = results_as_paper_rows(rows, 11, scales={"dtssd": 1.0})
        >>> out[["model", "metric", "text", "source"]].values.tolist()
        [['m (ours)', 'dtssd', '1.50', 'ours']]
    """
    import numpy as np
    import pandas as pd

    info = table_info(table)
    by_key = {m["key"]: m for m in info["metrics"]}
    ok = results[(results["status"] == "ok") & (results["task"] == info["task"])]
    ok = ok[ok["metric"].isin(by_key) & np.isfinite(ok["value"].astype(float))]
    records = []
    for (model, metric), group in ok.groupby(["model", "metric"], sort=True):
        scale = (scales or {}).get(metric)
        if scale is None:
            scale = _library_scale(metric)
        value = float(group["value"].astype(float).mean()) * scale
        records.append({
            "table": int(table), "task": info["task"], "model": f"{model} (ours)", "input_setting": "",
            "source": "ours", "paradigm": "", "metric": metric, "metric_display": by_key[metric]["display"],
            "value": value, "text": f"{value:.2f}" if abs(value) >= 1 or value == 0 else f"{value:.3f}",
            "higher_is_better": by_key[metric]["higher_is_better"],
        })
    return pd.DataFrame(records, columns=list(PAPER_COLUMNS))


def _library_scale(metric: str) -> float:
    """The paper-unit factor declared by the library's MetricInfo, 1.0 when the metric is not declared."""
    from ..metrics import all_metric_info

    info = all_metric_info().get(metric)
    return float(info.scale) if info is not None else 1.0

"""Write a stored run from rows the way the runner does (summary with the aggregate the rows give).

Tests that build rows by hand use it so that what they store passes the results store's
validation (:mod:`hug_vis_dataset.scoring.runs`); forging tests start from it and then damage one
thing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd


def write_run(root: Path, task: str, model: str, rows: pd.DataFrame, grid_size: "int | None" = None,
              synthetic: bool = True, skipped: "dict | None" = None) -> Path:
    """Store ``rows`` (result rows of one task and model) as ``root/<task>/<model>/``."""
    from hug_vis_dataset.scoring.aggregate import aggregate_record, task_table

    folder = Path(root) / task / model
    folder.mkdir(parents=True)
    rows.to_parquet(folder / "rows.parquet", index=False)
    table = task_table(rows, protocol="clip") if len(rows) else None
    aggregate = aggregate_record(table)
    summary = {"task": task, "model": model, "protocol": {"aggregation": "clip"},
               "metrics": {"computed": sorted(set(rows["metric"])), "skipped": skipped or {}},
               "aggregate": aggregate, "coverage": {"grid_size": grid_size or rows["clip_id"].nunique()},
               "provenance": {"dataset": {"synthetic": synthetic}}}
    (folder / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return folder

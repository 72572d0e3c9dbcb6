"""What the Score tab shows of an upload and what refuses one before it is scored.

* :func:`upload_inputs` / :func:`same_predictions`: an upload whose predictions are a stored run's (the same clips,
  each with the same input sha256: :func:`hug_vis_dataset.scoring.binding.clip_fingerprint`, what the run's rows
  store) is refused before scoring, as the scoring queue refuses the same predictions under a second name;
* :func:`score_table`: the upload's task scores under the board's headers and printing;
* :func:`shown_link`: a run's provenance as a reader may see it.

Example:
    >>> import pandas as pd
    >>> from types import SimpleNamespace as Run
    >>> rows = pd.DataFrame({"clip_id": ["a", "b"], "input_sha256": ["1", "2"]})
    >>> same_predictions([Run(task="matting", model="m", rows=rows)], "matting", frozenset({("a", "1"), ("b", "2")}))
    'm'
    >>> same_predictions([Run(task="matting", model="m", rows=rows)], "matting", frozenset({("a", "1")})) is None
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from .. import catalog
from ..leaderboard.board import provenance_href


def input_pairs(frame) -> "frozenset | None":
    """``(clip id, input sha256)`` of stored rows (None when they carry none)."""
    if frame is None or not len(frame) or "input_sha256" not in frame.columns:
        return None
    pairs = frame[["clip_id", "input_sha256"]].dropna()
    return frozenset(zip(pairs["clip_id"].astype(str), pairs["input_sha256"].astype(str))) or None


def upload_inputs(task: str, root: "str | Path", clip_ids: Iterable[Any]) -> "frozenset | None":
    """``(clip id, input sha256)`` of an extracted upload's clips, as its run's rows would store them (the runner's
    own fingerprint of each clip's prediction), before anything is scored; None when it predicts no clip."""
    from ..hashing import DigestCache
    from ..scoring.binding import clip_fingerprint
    from ..tasks import index_predictions

    index = index_predictions(task, root)
    digests = DigestCache()
    pairs = {(str(cid), clip_fingerprint(index.found.get(cid, ()), index.payload.get(cid), digests))
             for cid in clip_ids if cid in index.found or cid in index.payload}
    return frozenset(p for p in pairs if p[1]) or None


def same_predictions(runs, task: str, mine: "frozenset | None") -> "str | None":
    """The stored run of ``task`` scored from exactly these predictions (``(clip id, input sha256)`` pairs: the
    same clips, the same bytes), or None; the queue refuses such a request (same predictions)."""
    if not mine:
        return None
    return next((run.model for run in runs if run.task == task and input_pairs(run.rows) == mine), None)


def score_table(task: str, table):
    """The upload's task scores under the board's headers (label, arrow, unit) and printed precision, the counts
    under their catalog labels."""
    from ..leaderboard.board import print_value

    if table is None or not len(table):
        return table
    out = table.rename(columns={"index": "Model", "model": "Model"})
    for column in list(out.columns):
        if column in catalog.METRIC_NAMES:
            out[column] = [print_value(float(v), column) if v == v else "n/a" for v in out[column]]
            out = out.rename(columns={column: catalog.spec(column).header})
    return out.rename(columns=lambda c: catalog.label_of(str(c)))


def shown_link(link: str) -> str:
    """A run's provenance as a reader may see it: a Hub URL as it is, a local path as the app's relative link
    (never the server's folder layout)."""
    if link.startswith("https://"):
        return link
    return provenance_href(link)


def stored_rows_of(path):
    """A scored upload's stored rows (the declared rows schema, checked); an empty frame when there are none."""
    import pandas as pd

    from ..scoring.store import read_stored

    return read_stored(Path(path)) if Path(path).is_file() else pd.DataFrame()

"""Task aggregates computed only from stored rows, under explicit protocols.

Protocols (values in the paper's unit: stored value x the catalog's ``paper_scale``, the one
conversion rule of :mod:`hug_vis_dataset.catalog`):

* ``clip`` (default for every task): mean over clips of the per-clip values. A per-clip value is
  already the mean over the clip's frames (generation, matting) or windows (DNSMOS), so
  generation is "mean over frames, then over clips"; emotion accuracy is the mean of per-clip
  correctness (x100 = %).
* ``rvm`` (matting, paper default): RobustVideoMatting's spreadsheet average. For each frame
  index, the mean over the clips that have that frame; then the mean over frame indices. dtSSD
  is recorded as 0 at frame 0, as RVM's script does. RVM's cap at frame index 699 (a spreadsheet
  column limit) is *not* reproduced. Needs the per-frame table (``frames.parquet``).
* Set-level metrics (FID) are one row per model in ``set_rows.parquet`` (``clip_id`` empty) and
  enter tables as they are.
* ``ratio`` (a metric's own protocol, whatever the task's: CER): the corpus ratio, the sum of one
  stored per-clip row over the sum of another (``MetricSpec.ratio_of``: CER's ``cer_edits`` over
  ``cer_ref_chars``, total edits / total target characters), over the clips whose three rows are
  ok. The per-clip quotient is stored too (per-clip analyses read it); the table never averages it.

**Several samples per clip: one rule** (:func:`sample_means`). A run of a stochastic model may score K samples of a
clip (rows carrying :data:`~hug_vis_dataset.datamodel.results.SAMPLE_COLUMN`). Every table, interval, verdict and
analysis reads the clip's **mean over its samples** as its one per-clip value, so one sample per clip is exactly
the run without samples; a clip counts only when every sample of it counts (a failed sample fails the clip, as a
failed metric does). Frames of the ``rvm`` protocol are averaged over the samples per frame index first; a set
metric (FID) is computed per sample draw (sample k of every clip) and its table value is the mean over draws.
Resampling actors over these per-clip means carries the seed variance into every interval (a second stage that
resamples samples too would count it twice: Davison & Hinkley 1997, sec. 3.8); the seed's own share and the rank
stability under one-sample draws are read from the samples (:mod:`hug_vis_dataset.statistics.seeds`).

**Partial failures: one rule** (:func:`counted_rows`, docs/SCORING.md "Failed clips"). A clip counts for every
metric of its run or for none: when any of its metrics failed (dtSSD on a one-frame clip, SSIM on frames
smaller than its window), the clip is failed for every metric, its other values are left out of every mean,
and it is counted once in ``n_failed``. So each column of a table is a mean over the same clips, ``n_ok``
is the number of clips in every mean, and "failed clips excluded from the means" is exactly true. Every
reader of stored runs gets rows with this rule applied (:func:`hug_vis_dataset.scoring.runs.read_run`).
The one kind of task it does not apply to says so in the catalog (``TaskSpec.counted_per_metric``: the
boundary errors, undefined on a clip whose reference has no such region, for every model alike).

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"model": ["a", "a", "b"], "metric": ["psnr"] * 3, "value": [10.0, 20.0, 30.0],
    ...                      "status": ["ok"] * 3, "clip_id": ["c1", "c2", "c1"]})
    >>> float(clip_means(rows).loc["a", "psnr"])
    15.0
"""

from __future__ import annotations

import numpy as np

PROTOCOLS = ("clip", "rvm")  # the task tables' protocols; a metric's own "ratio" applies within either
#: The clip counts of a task table: scored (in every mean), failed (predicted, scoring failed) and missing (never
#: predicted: the run's coverage). Missing is not failed (statistics.rules).
COUNT_COLUMNS = ("n_ok", "n_failed", "n_missing")


def _ok(rows):
    return rows[rows["status"] == "ok"]


#: The error of a row left out because another metric of its clip failed (its own value was computed).
NOT_COUNTED = "not counted: {metrics} failed on this clip (a clip counts for every metric or for none)"


def counted_rows(rows):
    """``rows`` with the one rule for partial failures applied: every row of a (model, clip) that has a failed
    row becomes ``failed`` too (value NaN, error naming the metric that failed). Set-level rows (no clip)
    are left as they are.

    Example:
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"model": "m", "clip_id": ["c1", "c1", "c2", "c2"], "metric": ["mad", "dtssd"] * 2,
        ...                      "value": [1.0, float("nan"), 2.0, 3.0], "status": ["ok", "failed", "ok", "ok"],
        ...                      "error": ["", "dtssd needs at least two frames", "", ""]})
        >>> out = counted_rows(rows)
        >>> out["status"].tolist(), out.loc[0, "error"]
        (['failed', 'failed', 'ok', 'ok'], 'not counted: dtssd failed on this clip (a clip counts for every metric or for none)')
    """
    import pandas as pd

    from .. import catalog

    if rows is None or not len(rows) or "status" not in rows:
        return rows
    failed = (rows["status"] != "ok").to_numpy()
    from ..statistics.sums import text_test

    clipped = text_test(rows["clip_id"], lambda t: t != "")
    if "task" in rows:
        per_metric = [t.name for t in catalog.TASKS if t.counted_per_metric]
        clipped = clipped & ~rows["task"].isin(per_metric).to_numpy()
    # a row counted alone (MetricSpec.counted_alone) fails by itself: it never uncounts the clip's other rows
    alone = rows["metric"].isin([m.name for m in catalog.METRICS if m.counted_alone]).to_numpy()
    if not (failed & clipped & ~alone).any():
        return rows
    bad = rows[failed & clipped & ~alone].groupby(["model", "clip_id"])["metric"].agg(lambda m: ", ".join(sorted(set(m))))
    keys = pd.MultiIndex.from_arrays([rows["model"], rows["clip_id"]])
    mask = keys.isin(bad.index) & ~failed & clipped
    if not mask.any():
        return rows
    out = rows.copy()
    out.loc[mask, "status"] = "failed"
    out.loc[mask, "value"] = np.nan
    if "error" in out:
        out.loc[mask, "error"] = [NOT_COUNTED.format(metrics=bad[k]) for k in keys[mask]]
    return out


def sample_means(rows):
    """Per-clip rows from rows of several samples per clip (:data:`~hug_vis_dataset.datamodel.results.SAMPLE_COLUMN`):
    one row per (model, task, clip, metric) whose value is the mean over the clip's samples, ``ok`` only when every
    sample's row is ok (else failed, with the error of the first sample that failed itself, not one left uncounted
    because of it). Apply after :func:`counted_rows`, which
    already fails every sample of a clip with a failed row. Rows without the column come back as they are; with
    one sample per clip, without the column.

    Example:
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"model": "m", "task": "matting", "clip_id": ["c1", "c1", "c2", "c2"],
        ...                      "metric": "mad", "sample": [0, 1, 0, 1], "value": [1.0, 2.0, 5.0, float("nan")],
        ...                      "status": ["ok", "ok", "ok", "failed"], "error": ["", "", "", "sample 1: decode"]})
        >>> out = sample_means(rows)
        >>> out[["clip_id", "value", "status", "error"]].values.tolist()
        [['c1', 1.5, 'ok', ''], ['c2', nan, 'failed', 'sample 1: decode']]
    """
    from ..datamodel.results import SAMPLE_COLUMN
    from ..statistics.sums import text_codes, text_test

    if rows is None or SAMPLE_COLUMN not in getattr(rows, "columns", ()):
        return rows
    n = len(rows)
    key = np.zeros(n, dtype=np.int64)
    for column in (c for c in ("model", "task", "clip_id", "metric") if c in rows.columns):
        codes, names = text_codes(rows[column])  # codes, not strings: a full-grid run has millions of rows
        key = key * (len(names) + 1) + (codes + 1)
    sample = rows[SAMPLE_COLUMN].fillna(0).to_numpy(dtype=np.int64)
    order = np.lexsort((sample, key))  # each group's rows in sample order: its sum does not depend on row order
    in_order = key[order]
    starts = np.flatnonzero(np.r_[True, in_order[1:] != in_order[:-1]]) if n else np.zeros(0, dtype=np.int64)
    if len(starts) == n:  # one sample per clip
        return rows.drop(columns=[SAMPLE_COLUMN]).reset_index(drop=True)
    counts = np.diff(np.r_[starts, n])
    ok = text_test(rows["status"], lambda t: t == "ok")[order]
    all_ok = np.logical_and.reduceat(ok, starts)
    with np.errstate(invalid="ignore"):
        means = np.add.reduceat(rows["value"].to_numpy(dtype=np.float64)[order], starts) / counts
    # One row per group, where the group first appears in the input (stored rows keep their canonical order).
    arrange = np.argsort(np.minimum.reduceat(order, starts), kind="stable")
    out = rows.iloc[order[starts][arrange]].drop(columns=[SAMPLE_COLUMN]).reset_index(drop=True)
    out["value"] = np.where(all_ok, means, np.nan)[arrange]
    out["status"] = np.where(all_ok, "ok", "failed")[arrange]
    if "error" in out.columns:
        # The sample that failed names the clip's failure, not its samples left uncounted because of it: per group
        # the first row, in sample order, that failed itself, else the first that failed.
        uncounted = text_test(rows["error"], lambda t: t.startswith(NOT_COUNTED.split("{", 1)[0]))[order]
        score = np.where(ok, 2, np.where(uncounted, 1, 0))
        best = np.minimum.reduceat(score, starts)
        candidate = np.where(score == np.repeat(best, counts), np.arange(n), n)
        errors = rows["error"].to_numpy(dtype=object)[order[np.minimum.reduceat(candidate, starts)]]
        out["error"] = np.where(all_ok[arrange], out["error"].to_numpy(dtype=object), errors[arrange])
    return out


def counted_frames(rows, frames):
    """The per-frame rows of the clips that count (:func:`counted_rows`): a failed clip's frames leave every
    ``rvm`` average with its other values. A :class:`~hug_vis_dataset.statistics.sums.FrameSums` (already reduced
    from the counted clips) is returned as it is."""
    from ..statistics.sums import FrameSums

    if isinstance(frames, FrameSums) or frames is None or not len(frames) or rows is None or not len(rows):
        return frames
    mask = _counted_mask(rows, frames)
    return frames if mask.all() else frames[mask]


def _counted_keys(rows):
    """The (model, clip_id) pairs whose rows all count (:func:`counted_rows`)."""
    import pandas as pd

    rows = counted_rows(rows)
    ok = rows[rows["status"] == "ok"]
    return pd.MultiIndex.from_arrays([ok["model"], ok["clip_id"]])


def _counted_mask(rows, frames):
    import pandas as pd

    return pd.MultiIndex.from_arrays([frames["model"], frames["clip_id"]]).isin(_counted_keys(rows))


def frame_sums(rows, frames):
    """The per-frame rows of the counted clips reduced to per-actor sums by frame index
    (:class:`~hug_vis_dataset.statistics.sums.FrameSums`): everything the ``rvm`` protocol's values and intervals
    need, without keeping the rows."""
    from ..statistics.sums import FrameSums

    if isinstance(frames, FrameSums):
        return frames
    if frames is None or not len(frames):
        return FrameSums()
    keep = _counted_keys(rows) if rows is not None and len(rows) else None
    return FrameSums.from_frames(frames, keep)


def clip_means(rows):
    """Model x metric table of the mean of ``ok`` per-clip values (raw units)."""
    import pandas as pd

    ok = _ok(rows)
    if ok.empty:
        return pd.DataFrame()
    return ok.groupby(["model", "metric"], sort=True)["value"].mean().unstack("metric")


def ratio_means(rows):
    """Model x metric table of the metrics whose catalog protocol is ``ratio`` (raw units): per model,
    the sum of the numerator row over the sum of the denominator row, over the clips where the metric
    and both rows are ok (NaN when the denominator sums to 0 or the rows are absent).

    The rows hold integers (edits, characters), so the sums are exact and their order does not matter.

    Example:
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"model": "m", "clip_id": ["a"] * 3 + ["b"] * 3, "status": "ok",
        ...                      "metric": ["cer", "cer_edits", "cer_ref_chars"] * 2,
        ...                      "value": [0.5, 1.0, 2.0, 0.0, 0.0, 8.0]})
        >>> float(ratio_means(rows).loc["m", "cer"])  # (1 + 0) / (2 + 8), not the mean 0.25
        0.1
    """
    import pandas as pd

    from .. import catalog

    ok = _ok(rows)
    table: dict = {}
    for metric in sorted({str(m) for m in ok["metric"].unique()} & catalog.METRIC_NAMES):
        spec = catalog.spec(metric)
        if spec.protocol != catalog.RATIO:
            continue
        names = (metric, *spec.ratio_of)
        part = ok[ok["metric"].isin(names)]
        # A (model, clip) has each metric once (stored runs are validated), so its row count says it is complete.
        complete = part.groupby(["model", "clip_id"])["metric"].transform("size") == len(names)
        sums = part[complete].groupby(["model", "metric"])["value"].sum().unstack("metric")
        for model in sorted(str(m) for m in ok.loc[ok["metric"] == metric, "model"].unique()):
            num, den = (float(sums.at[model, r]) if model in sums.index and r in sums.columns else 0.0
                        for r in spec.ratio_of)
            table.setdefault(model, {})[metric] = num / den if den > 0 else float("nan")
    return pd.DataFrame.from_dict(table, orient="index").sort_index()


def rvm_means(frames):
    """Model x metric table under the ``rvm`` protocol from per-frame rows or their
    :class:`~hug_vis_dataset.statistics.sums.FrameSums` (stored units).

    The mean over frame indices of the per-index mean over clips, dtSSD with RVM's 0 at frame 0 of every clip:
    :func:`hug_vis_dataset.metrics.matting.aggregate`'s definition (the one RVM implementation, which the tests
    hold this to), computed from per-actor sums by frame index in one vectorised pass.

    Example:
        >>> import pandas as pd
        >>> f = pd.DataFrame({"model": ["m"] * 3, "clip_id": ["actor_0001_sad_action_01_script_001"] * 2
        ...                   + ["actor_0002_sad_action_01_script_001"], "metric": ["mad"] * 3,
        ...                   "frame": [0, 1, 0], "value": [1.0, 3.0, 5.0]})
        >>> float(rvm_means(f).loc["m", "mad"])   # frame 0: (1 + 5) / 2 = 3; frame 1: 3 -> mean 3
        3.0
    """
    import pandas as pd

    from ..statistics.sums import FrameSums

    sums = frames if isinstance(frames, FrameSums) else FrameSums.from_frames(frames)
    if not len(sums):
        return pd.DataFrame()
    table: dict = {}
    for (model, metric), value in sorted(sums.means().items()):
        table.setdefault(model, {})[metric] = value
    return pd.DataFrame.from_dict(table, orient="index").sort_index()


def rvm_intervals(frames, n_boot: int = 1000, level: float = 0.95, seed: int = 0) -> dict:
    """Actor-clustered bootstrap intervals of the ``rvm`` values (paper units), keyed ``(model, metric)``: the
    statistics engine's (:func:`hug_vis_dataset.statistics.intervals.rvm_intervals`) on per-frame rows or their sums.

    Example:
        >>> import pandas as pd
        >>> f = pd.DataFrame({"model": "m", "metric": "mse", "frame": [0, 1, 0],
        ...                   "clip_id": ["actor_0001_sad_action_01_script_001"] * 2
        ...                              + ["actor_0002_sad_action_01_script_001"], "value": [1.0, 3.0, 5.0]})
        >>> ci = rvm_intervals(f, n_boot=200)[("m", "mse")]
        >>> ci.estimate, ci.n_clusters, ci.low <= ci.estimate <= ci.high
        (3.0, 2, True)
    """
    from ..statistics.intervals import rvm_intervals as engine_rvm_intervals
    from ..statistics.sums import FrameSums

    if frames is None or len(frames) == 0:
        return {}
    sums = frames if isinstance(frames, FrameSums) else FrameSums.from_frames(frames)
    return engine_rvm_intervals(sums, n_boot=n_boot, level=level, seed=seed)


def task_table(rows, frames=None, set_rows=None, protocol: str = "clip", metrics=None):
    """Model x metric table in paper units, plus the clip counts ``n_ok`` / ``n_failed`` / ``n_missing``
    (:func:`clip_counts`).

    Args:
        rows: per-clip rows of one task (any number of models).
        frames: per-frame rows or their :class:`~hug_vis_dataset.statistics.sums.FrameSums` (needed for
            ``protocol="rvm"``).
        set_rows: set-level rows (FID).
        protocol: ``clip`` or ``rvm`` (see module docstring).
        metrics: column order; defaults to the metrics present.
    """

    import pandas as pd

    from .. import catalog

    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose one of {PROTOCOLS}")
    rows = sample_means(counted_rows(rows))  # the rules for partial failures and samples (module docstring)
    table = clip_means(rows)
    ratios = ratio_means(rows) if len(table) else None
    for metric in ratios.columns if ratios is not None else ():  # never the mean of the per-clip quotients
        table[metric] = ratios[metric].reindex(table.index)
    if protocol == "rvm":
        if (frames is None or len(frames) == 0) and not _ok(rows).empty:
            raise ValueError("protocol 'rvm' needs the per-frame table (frames.parquet)")
        rvm = rvm_means(frame_sums(rows, frames))
        for metric in rvm.columns:
            table.loc[rvm.index, metric] = rvm[metric]
    if set_rows is not None and len(set_rows):  # per sample draw when there are several: their mean, all ok
        ok = _ok(sample_means(set_rows))
        for (model, metric), value in ok.groupby(["model", "metric"])["value"].first().items():
            table.loc[model, metric] = value
    for metric in table.columns:
        if metric in catalog.METRIC_NAMES:
            table[metric] = table[metric] * catalog.spec(metric).paper_scale
    if metrics is not None:
        table = table.reindex(columns=[m for m in metrics if m in table.columns])
    table = table.join(clip_counts(rows), how="outer") if len(table) else clip_counts(rows)
    for column in COUNT_COLUMNS:
        table[column] = table[column].fillna(0).astype(int)
    return table.sort_index()


def clip_counts(rows):
    """Per model: ``n_ok`` (clips whose every row is ok, rows counted alone aside, with at least one row ok),
    ``n_missing`` (clips the run has no prediction for: their rows' error begins with
    :data:`~hug_vis_dataset.datamodel.results.MISSING_PREDICTION`) and ``n_failed`` (the other clips); a clip counts once.

    Example:
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"model": "m", "clip_id": ["a", "b", "c"], "status": ["ok", "failed", "failed"],
        ...                      "error": ["", "missing prediction: no file", "decode error"]})
        >>> clip_counts(rows).loc["m"].tolist()
        [1, 1, 1]
    """
    import pandas as pd

    from ..datamodel.results import MISSING_PREDICTION

    from .. import catalog

    keys = [rows["model"], rows["clip_id"]]
    # A clip counts or fails whole; a row counted alone (MetricSpec.counted_alone) fails by itself, as in the run's
    # coverage, but a clip none of whose rows is ok (say, only a counted-alone row, failed) has failed.
    alone = rows["metric"].isin([m.name for m in catalog.METRICS if m.counted_alone]) if "metric" in rows else False
    row_ok = rows["status"] == "ok"
    ok = (row_ok | alone).groupby(keys, observed=True).all() & row_ok.groupby(keys, observed=True).any()
    from ..statistics.sums import text_test

    missing = (pd.Series(text_test(rows["error"], lambda t: t.startswith(MISSING_PREDICTION)), index=rows.index)
               if "error" in rows.columns else pd.Series(False, index=rows.index))
    missing = missing.groupby(keys, observed=True).any() & ~ok
    per_model = pd.DataFrame({"ok": ok, "missing": missing}).groupby(level=0).agg(["sum", "size"])
    n_ok, n_missing = per_model[("ok", "sum")].astype(int), per_model[("missing", "sum")].astype(int)
    out = pd.DataFrame({"n_ok": n_ok, "n_failed": per_model[("ok", "size")].astype(int) - n_ok - n_missing,
                        "n_missing": n_missing})
    out.index.name = None
    return out


def aggregate_record(table) -> "dict | None":
    """A task table as ``summary.json`` caches it: per row label its values (NaN as null) and clip counts (integers).

    Example:
        >>> import pandas as pd
        >>> aggregate_record(pd.DataFrame({"mad": [float("nan")], "n_ok": [0], "n_failed": [1], "n_missing": [0]},
        ...                               index=["m"]))
        {'m': {'mad': None, 'n_ok': 0, 'n_failed': 1, 'n_missing': 0}}
    """
    if table is None:
        return None
    return {str(label): {c: (int(v) if c in COUNT_COLUMNS else finite_or_none(v)) for c, v in table.loc[label].items()}
            for label in table.index}


def finite_or_none(value) -> "float | None":
    """JSON-friendly number (NaN -> None)."""
    value = float(value)
    return value if np.isfinite(value) else None

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
    clipped = (rows["clip_id"].astype(str) != "").to_numpy()
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


def counted_frames(rows, frames):
    """The per-frame rows of the clips that count (:func:`counted_rows`): a failed clip's frames leave every
    ``rvm`` average with its other values."""
    if frames is None or not len(frames) or rows is None or not len(rows):
        return frames
    import pandas as pd

    rows = counted_rows(rows)
    ok = rows[rows["status"] == "ok"]
    keep = pd.MultiIndex.from_arrays([ok["model"], ok["clip_id"]])
    mask = pd.MultiIndex.from_arrays([frames["model"], frames["clip_id"]]).isin(keep)
    return frames if mask.all() else frames[mask]


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
    for metric in sorted(set(ok["metric"]) & catalog.METRIC_NAMES):
        spec = catalog.spec(metric)
        if spec.protocol != catalog.RATIO:
            continue
        names = (metric, *spec.ratio_of)
        part = ok[ok["metric"].isin(names)]
        complete = part.groupby(["model", "clip_id"])["metric"].transform("nunique") == len(names)
        sums = part[complete].groupby(["model", "metric"])["value"].sum().unstack("metric")
        for model in sorted(set(ok.loc[ok["metric"] == metric, "model"])):
            num, den = (float(sums.at[model, r]) if model in sums.index and r in sums.columns else 0.0
                        for r in spec.ratio_of)
            table.setdefault(model, {})[metric] = num / den if den > 0 else float("nan")
    return pd.DataFrame.from_dict(table, orient="index").sort_index()


def rvm_means(frames):
    """Model x metric table under the ``rvm`` protocol from per-frame rows (stored units).

    The averaging itself is :func:`hug_vis_dataset.metrics.matting.aggregate` (the one RVM
    implementation); this function only regroups stored frame rows into per-clip arrays.

    Example:
        >>> import pandas as pd
        >>> f = pd.DataFrame({"model": ["m"] * 3, "clip_id": ["a", "a", "b"], "metric": ["mad"] * 3,
        ...                   "frame": [0, 1, 0], "value": [1.0, 3.0, 5.0]})
        >>> float(rvm_means(f).loc["m", "mad"])   # frame 0: (1 + 5) / 2 = 3; frame 1: 3 -> mean 3
        3.0
    """
    import pandas as pd

    from ..metrics.matting import aggregate

    if frames is None or len(frames) == 0:
        return pd.DataFrame()
    table: dict = {}
    for (model, metric), clips in _clip_frame_vectors(frames):
        # dtSSD rows start at frame 1: RVM's zero at frame 0 is added by the aggregator.
        table.setdefault(model, {})[metric] = aggregate([v for _, v in clips], "rvm", temporal=metric == "dtssd")
    return pd.DataFrame.from_dict(table, orient="index").sort_index()


def _clip_frame_vectors(frames):
    """Per (model, metric), in sorted order: ``[(clip_id, per-frame values)]`` of each clip, from
    its first frame (1 for dtSSD) to its last, the stored frame rows regrouped."""
    frames = frames[["model", "clip_id", "metric", "frame", "value"]].sort_values(
        ["model", "metric", "clip_id", "frame"], kind="mergesort")
    for (model, metric), part in frames.groupby(["model", "metric"], sort=True):
        first = 1 if metric == "dtssd" else 0
        clips = []
        for clip_id, clip in part.groupby("clip_id", sort=True):
            values = clip.set_index("frame")["value"]
            clips.append((clip_id, values.reindex(range(first, int(values.index.max()) + 1)).to_numpy(np.float64)))
        yield (model, metric), clips



def _rvm_sums(frames, actors: list):
    """Per (model, metric): per-actor sums and clip counts by frame index, ``(S, N)`` of shape
    (actors, frame indices); dtSSD gets RVM's 0 at frame 0 of every clip."""
    from ..stats import actor_of_clip

    position = {a: i for i, a in enumerate(actors)}
    out = {}
    for (model, metric), clips in _clip_frame_vectors(frames):
        vectors = [(position[actor_of_clip(c)], np.concatenate([[0.0], v]) if metric == "dtssd" else v)
                   for c, v in clips]
        length = max(v.size for _, v in vectors)
        sums, counts = np.zeros((len(actors), length)), np.zeros((len(actors), length))
        for a, v in vectors:
            sums[a, : v.size] += v
            counts[a, : v.size] += 1
        out[(model, metric)] = (sums, counts)
    return out


def rvm_intervals(frames, n_boot: int = 1000, level: float = 0.95, seed: int = 0) -> dict:
    """Actor-clustered bootstrap intervals of the ``rvm`` values (paper units), keyed ``(model, metric)``.

    The same resampling as :func:`hug_vis_dataset.stats.bootstrap_ci` (its draws, its percentile
    rule), computed from per-actor sums by frame index: a replicate's value at each frame index is
    (drawn actors' sums) / (drawn actors' clip counts), averaged over the indices some drawn clip
    has, which is exactly :func:`rvm_means` on the replicate's clips, without rebuilding them (the
    full grid's 1,000 replicates take milliseconds, not an hour).

    Example:
        >>> import pandas as pd
        >>> f = pd.DataFrame({"model": "m", "metric": "mse", "frame": [0, 1, 0],
        ...                   "clip_id": ["actor_0001_sad_action_01_script_001"] * 2
        ...                              + ["actor_0002_sad_action_01_script_001"], "value": [1.0, 3.0, 5.0]})
        >>> ci = rvm_intervals(f, n_boot=200)[("m", "mse")]
        >>> ci.estimate, ci.n_clusters, ci.low <= ci.estimate <= ci.high
        (3.0, 2, True)
    """
    from .. import catalog
    from ..stats import actor_of_clip, cluster_draws, percentile_ci

    if frames is None or len(frames) == 0:
        return {}
    actors = sorted({actor_of_clip(c) for c in frames["clip_id"].unique()})
    draws = np.stack([np.bincount(p, minlength=len(actors)) for p in cluster_draws(len(actors), n_boot, seed)])
    out = {}
    for (model, metric), (sums, counts) in _rvm_sums(frames, actors).items():
        scale = catalog.spec(metric).paper_scale if metric in catalog.METRIC_NAMES else 1.0
        estimate = float(np.mean(sums.sum(0) / counts.sum(0)))
        num, den = draws @ sums, draws @ counts
        with np.errstate(invalid="ignore", divide="ignore"):
            per_index = np.where(den > 0, num / den, np.nan)  # indices no drawn clip reaches are left out
        replicates = np.nanmean(per_index, axis=1)
        ci = percentile_ci(estimate, replicates, level, len(actors))
        out[(model, metric)] = type(ci)(ci.estimate * scale, ci.low * scale, ci.high * scale, ci.level, ci.n_boot,
                                        ci.n_valid, ci.n_clusters)
    return out

def task_table(rows, frames=None, set_rows=None, protocol: str = "clip", metrics=None):
    """Model x metric table in paper units, plus ``n_ok`` / ``n_failed`` clip counts.

    Args:
        rows: per-clip rows of one task (any number of models).
        frames: per-frame rows (needed for ``protocol="rvm"``).
        set_rows: set-level rows (FID).
        protocol: ``clip`` or ``rvm`` (see module docstring).
        metrics: column order; defaults to the metrics present.
    """

    from .. import catalog

    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; choose one of {PROTOCOLS}")
    rows = counted_rows(rows)  # the one rule for partial failures (module docstring)
    frames = counted_frames(rows, frames)
    table = clip_means(rows)
    ratios = ratio_means(rows) if len(table) else None
    for metric in ratios.columns if ratios is not None else ():  # never the mean of the per-clip quotients
        table[metric] = ratios[metric].reindex(table.index)
    if protocol == "rvm":
        if (frames is None or len(frames) == 0) and not _ok(rows).empty:
            raise ValueError("protocol 'rvm' needs the per-frame table (frames.parquet)")
        rvm = rvm_means(frames)
        for metric in rvm.columns:
            table.loc[rvm.index, metric] = rvm[metric]
    if set_rows is not None and len(set_rows):
        ok = _ok(set_rows)
        for (model, metric), value in ok.groupby(["model", "metric"])["value"].first().items():
            table.loc[model, metric] = value
    for metric in table.columns:
        if metric in catalog.METRIC_NAMES:
            table[metric] = table[metric] * catalog.spec(metric).paper_scale
    if metrics is not None:
        table = table.reindex(columns=[m for m in metrics if m in table.columns])
    per_clip = rows.groupby(["model", "clip_id"])["status"].agg(lambda s: bool((s == "ok").all()))
    counts = per_clip.groupby(level="model").agg(n_ok="sum", n_failed=lambda s: int((~s).sum()))
    table = table.join(counts, how="outer") if len(table) else counts
    table["n_ok"] = table["n_ok"].fillna(0).astype(int)
    table["n_failed"] = table["n_failed"].fillna(0).astype(int)
    return table.sort_index()


def finite_or_none(value) -> "float | None":
    """JSON-friendly number (NaN -> None)."""
    value = float(value)
    return value if np.isfinite(value) else None

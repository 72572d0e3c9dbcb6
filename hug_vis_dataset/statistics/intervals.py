"""Actor-clustered bootstrap intervals of the toolkit's tables, from per-actor sums, every replicate at once.

Each statistic here is a ratio of per-actor sums, so a replicate is a weight vector over actors
(:func:`~hug_vis_dataset.statistics.draws.draw_weights`) and all replicates of all cells are a few matrix products:

* :func:`table_intervals`: a task table's cells under its protocol: ``clip`` (mean over clips of the counted
  per-clip values), ``ratio`` (CER: total edits / total target characters over the clips whose three rows are ok)
  and ``rvm`` (the mean over frame indices of the per-index mean over clips, from
  :class:`~hug_vis_dataset.statistics.sums.FrameSums`); in paper units;
* :func:`mean_intervals`: a mean over clips of any per-clip value per key (the MOS of a (model, criterion) from
  its per-clip means).

The draws, the clusters (the sorted actors of the rows given) and the percentile rule are those of the generic
path (:func:`hug_vis_dataset.statistics.generic.bootstrap_ci`), which the tests keep as the reference: the
intervals equal its intervals to float rounding. A statistic this module cannot express is refused by name
(:class:`UnsupportedStatistic`), never computed on a slow path without a word.

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"model": "m", "metric": "psnr", "status": "ok", "value": [20.0, 22.0, 30.0, 34.0],
    ...                      "clip_id": [f"actor_000{a}_sad_action_01_script_00{s}" for a in (1, 2) for s in (1, 2)]})
    >>> ci = table_intervals(rows, ["psnr"], n_boot=200)[("m", "psnr")]
    >>> ci.estimate, ci.n_clusters, (ci.low, ci.high)   # replicates: actor 1 twice, mixed, actor 2 twice
    (26.5, 2, (21.0, 32.0))
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import catalog
from .basics import BootstrapCI
from .draws import check_level, draw_weights, percentile_intervals, replicate_means
from .sums import FrameSums, _actor_ids


class UnsupportedStatistic(ValueError):
    """A statistic the engine has no sufficient statistics for; the message names it (no slow fallback)."""


def _ok(rows):
    if rows is None or not len(rows):
        return rows
    return rows[rows["status"].to_numpy() == "ok"] if "status" in rows.columns else rows


def _scale(metric: str) -> float:
    return catalog.spec(metric).paper_scale if metric in catalog.METRIC_NAMES else 1.0


def grouped_sums(keys, actor_ids: np.ndarray, values: np.ndarray, actors: np.ndarray
                 ) -> tuple[list[Any], np.ndarray, np.ndarray]:
    """``(keys, sums, counts)``: per distinct key (sorted) and actor (the given sorted ids), the sum and count of
    the finite values; ``sums``/``counts`` are ``(actors, keys)``. ``keys``: one key per value, or a DataFrame of key
    columns (keys are then tuples)."""
    import pandas as pd

    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values)
    if isinstance(keys, pd.DataFrame):  # key columns: factorised column by column, never a tuple per row
        codes, uniques = pd.MultiIndex.from_frame(keys[finite].reset_index(drop=True)).factorize(sort=True)
        uniques = list(uniques)
    else:
        codes, uniques = pd.factorize(pd.Series(list(keys) if not hasattr(keys, "iloc") else keys)[finite].reset_index(
            drop=True), sort=True)
    position = np.searchsorted(actors, np.asarray(actor_ids)[finite])
    flat = position * len(uniques) + codes
    size = len(actors) * len(uniques)
    sums = np.bincount(flat, weights=values[finite], minlength=size).reshape(len(actors), len(uniques))
    counts = np.bincount(flat, minlength=size).reshape(len(actors), len(uniques)).astype(np.float64)
    return list(uniques), sums, counts


def _intervals_of(keys: list, sums: np.ndarray, counts: np.ndarray, weights: np.ndarray, level: float,
                  n_clusters: int, scale: "float | Sequence[float]" = 1.0) -> dict[Any, BootstrapCI]:
    scale = np.broadcast_to(np.asarray(scale, dtype=np.float64), (len(keys),))
    total = counts.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        points = np.where(total > 0, sums.sum(axis=0) / np.where(total > 0, total, 1.0), np.nan) * scale
    replicates = replicate_means(weights, sums, counts) * scale
    return dict(zip(keys, percentile_intervals(points, replicates, level, n_clusters)))


def mean_intervals(keys, actor_ids, values, n_boot: int = 1000, level: float = 0.95, seed: int = 0,
                   actors: "Sequence[int] | None" = None) -> dict[Any, BootstrapCI]:
    """Interval of the mean over clips of ``values`` per key (one value per clip and key), actors resampled.

    Args:
        keys: the key of each value (e.g. ``(model, criterion)`` tuples).
        actor_ids: the actor of each value.
        values: one per clip and key (NaN ones are left out).
        actors: the clusters (default: the sorted actors of the values given).

    Example:
        >>> cis = mean_intervals(["m"] * 4, [1, 1, 2, 2], [4.0, 5.0, 2.0, 2.0], n_boot=200)
        >>> cis["m"].estimate, cis["m"].n_clusters
        (3.25, 2)
    """
    check_level(level)
    actor_ids = np.asarray(actor_ids, dtype=np.int64)
    pool = np.unique(actor_ids) if actors is None else np.asarray(actors, dtype=np.int64)
    weights = draw_weights(len(pool), n_boot, seed)
    uniques, sums, counts = grouped_sums(keys, actor_ids, values, pool)
    return _intervals_of(uniques, sums, counts, weights, level, len(pool))


def table_intervals(rows, metrics: Sequence[str], n_boot: int = 1000, level: float = 0.95, seed: int = 0,
                    frame_sums: "FrameSums | None" = None, protocol: str = "clip") -> dict[tuple[str, str], BootstrapCI]:
    """Interval of every ``(row label, metric)`` cell of one task's table, in paper units.

    Args:
        rows: the task's per-clip rows (every label: models, ``model | setting``, reference rows) with the one rule
            for partial failures applied (:func:`hug_vis_dataset.scoring.aggregate.counted_rows`; stored runs'
            rows are read with it).
        metrics: the table's columns; set-level metrics (FID: one value per system, no clips) have no interval.
        frame_sums: the task's per-frame sums, for ``protocol="rvm"``.
        protocol: the table's protocol; under ``rvm`` a metric with per-frame sums gets the interval of its rvm
            value, the others (and every metric under ``clip``) the interval of their mean over clips, and a
            ``ratio`` metric (CER) always the interval of its corpus ratio.

    Clusters: the sorted actors of the rows' ok values (rvm: of the per-frame sums), as the generic path draws them.

    Raises:
        UnsupportedStatistic: a metric whose protocol the engine has no sums for.
    """
    check_level(level)
    ok = _ok(rows)
    out: dict[tuple[str, str], BootstrapCI] = {}
    if ok is None or not len(ok):
        return out
    actor_ids = _actor_ids(ok)
    actors = np.unique(actor_ids)
    weights = draw_weights(len(actors), n_boot, seed)
    from .sums import text_codes

    labels = np.asarray(ok["model"], dtype=object)
    metric_codes, metric_names = text_codes(ok["metric"])
    values = ok["value"].to_numpy(dtype=np.float64)
    rvm_parts = frame_sums if protocol == "rvm" and frame_sums is not None and len(frame_sums) else None
    frame_actors = rvm_parts.actors() if rvm_parts is not None else None
    for metric in metrics:
        spec = catalog.spec(metric) if metric in catalog.METRIC_NAMES else None
        if spec is not None and spec.mode == catalog.SET_LEVEL:
            continue
        if spec is not None and spec.protocol == catalog.RATIO:
            out.update(_ratio_intervals(ok, metric, spec.ratio_of, actor_ids, actors, weights, level))
        elif rvm_parts is not None and any(k[1] == metric for k in rvm_parts.parts):
            out.update(rvm_intervals(rvm_parts, metric, n_boot, level, seed, frame_actors))
        elif spec is None or spec.protocol in (None, "clip", "rvm"):
            if metric not in metric_names:
                continue
            mine = metric_codes == metric_names.index(metric)
            keys, sums, counts = grouped_sums(labels[mine], actor_ids[mine], values[mine], actors)
            out.update({(k, metric): ci for k, ci in _intervals_of(keys, sums, counts, weights, level, len(actors),
                                                                   _scale(metric)).items()})
        else:
            raise UnsupportedStatistic(f"no per-actor sums for {metric}'s protocol {spec.protocol!r}")
    return out


def _ratio_intervals(ok, metric: str, parts: Sequence[str], actor_ids, actors, weights, level: float) -> dict:
    """The corpus ratio's interval: per actor the numerator's and the denominator's sums over the clips whose
    three rows are ok; a replicate is ``(W @ num) / (W @ den)``."""
    names = (metric, *parts)
    mine = ok["metric"].isin(names).to_numpy()
    part = ok[mine]
    if not len(part):
        return {}
    complete = (part.groupby(["model", "clip_id"])["metric"].transform("nunique") == len(names)).to_numpy()
    part, ids = part[complete], actor_ids[mine][complete]
    out = {}
    models = np.asarray(part["model"], dtype=object)
    for label in sorted({str(m) for m in part.loc[part["metric"] == metric, "model"].unique()}):
        sel = models == label
        num, den = (np.bincount(np.searchsorted(actors, ids[sel & (part["metric"] == name).to_numpy()]),
                                weights=part.loc[sel & (part["metric"] == name).to_numpy(), "value"].to_numpy(float),
                                minlength=len(actors)) for name in parts)
        with np.errstate(invalid="ignore", divide="ignore"):
            point = num.sum() / den.sum() if den.sum() > 0 else np.nan
            rep_den = weights @ den
            replicates = np.where(rep_den > 0, (weights @ num) / np.where(rep_den > 0, rep_den, 1.0), np.nan)
        scale = _scale(metric)
        out[(label, metric)] = percentile_intervals([point * scale], (replicates * scale)[:, None], level,
                                                    len(actors))[0]
    return out


def rvm_intervals(frame_sums: FrameSums, metric: "str | None" = None, n_boot: int = 1000, level: float = 0.95,
                  seed: int = 0, actors: "np.ndarray | None" = None) -> dict[tuple[str, str], BootstrapCI]:
    """Intervals of the ``rvm`` values (paper units), keyed ``(model, metric)``: a replicate's value at each frame
    index is (drawn actors' sums) / (drawn actors' clip counts), averaged over the indices some drawn clip reaches,
    which is exactly the rvm value of the replicate's clips, without rebuilding them.

    Example:
        >>> import pandas as pd
        >>> f = pd.DataFrame({"model": "m", "metric": "mse", "frame": [0, 1, 0],
        ...                   "clip_id": ["actor_0001_sad_action_01_script_001"] * 2
        ...                              + ["actor_0002_sad_action_01_script_001"], "value": [1.0, 3.0, 5.0]})
        >>> ci = rvm_intervals(FrameSums.from_frames(f), n_boot=200)[("m", "mse")]
        >>> ci.estimate, ci.n_clusters, ci.low <= ci.estimate <= ci.high
        (3.0, 2, True)
    """
    check_level(level)
    actors = frame_sums.actors() if actors is None else actors
    weights = draw_weights(len(actors), n_boot, seed)
    out = {}
    for key in frame_sums.keys():
        if metric is not None and key[1] != metric:
            continue
        sums, counts = frame_sums.aligned(key, actors)
        total = counts.sum(axis=0)
        estimate = float(np.mean(sums.sum(axis=0)[total > 0] / total[total > 0]))
        num, den = weights @ sums, weights @ counts
        with np.errstate(invalid="ignore", divide="ignore"):
            reached = den > 0  # indices no drawn clip reaches are left out of the replicate's mean
            per_index = np.where(reached, num / np.where(reached, den, 1.0), 0.0)
            n_reached = reached.sum(axis=1)
            replicates = np.where(n_reached > 0, per_index.sum(axis=1) / np.maximum(n_reached, 1), np.nan)
        scale = _scale(key[1])
        out[key] = percentile_intervals([estimate * scale], (replicates * scale)[:, None], level, len(actors))[0]
    return out


__all__ = ["UnsupportedStatistic", "grouped_sums", "mean_intervals", "rvm_intervals", "table_intervals"]

"""The generic actor bootstrap: any statistic of a DataFrame, re-evaluated on rebuilt replicate frames.

This is the toolkit's *reference* path, kept so that the engine's vectorised statistics can be checked against
it (``tests/test_statistics_engine.py``) and for a user's own statistic. No surface of the toolkit calls it: on the
full grid one replicate of a task table costs seconds here and milliseconds in the engine
(:mod:`hug_vis_dataset.statistics.intervals`). The draws are those of every interval of the toolkit
(:func:`hug_vis_dataset.statistics.basics.cluster_draws`), so the engine reproduces its intervals to float rounding.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping

import numpy as np

from .basics import _ACTOR_IN_ID, BootstrapCI, actor_of_clip, cluster_draws, percentile_ci


def _as_frame(data: Any):
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return data.copy()
    return pd.DataFrame(list(data))


def _flatten(value: Any) -> "float | dict":
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        value = value.stack(future_stack=True)
    if isinstance(value, pd.Series):
        return {k: float(v) for k, v in value.items()}
    if isinstance(value, Mapping):
        return {k: float(v) for k, v in value.items()}
    return float(value)


def bootstrap_ci(
    rows_or_frame: "Iterable[Mapping] | Any",
    statistic: Callable[[Any], Any],
    cluster: str = "actor_id",
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> "BootstrapCI | dict[Any, BootstrapCI]":
    """Cluster (actor) bootstrap percentile interval of any statistic of per-clip rows.

    Procedure: the distinct cluster ids are sorted (so the result does not depend on row
    order); ``rng = numpy.random.default_rng(seed)``; for each of ``n_boot`` replicates,
    ``rng.integers(0, n_clusters, size=n_clusters)`` draws cluster positions with replacement and
    the replicate frame holds all rows of each drawn cluster, in draw order. The statistic is
    evaluated on every replicate; the interval is the percentile interval
    (``numpy.percentile``, linear interpolation) of the finite replicate values.

    When ``cluster == "actor_id"`` and rows carry ``clip_id``, the k-th drawn actor is renamed
    to pseudo-actor k (both ``actor_id`` and the ``actor_NNNN`` prefix of ``clip_id``), so an
    actor drawn twice contributes two distinct sets of clips: statistics that join or group by
    clip id (pairing models, min-max over clips) see twice the clips, not one clip with doubled
    rows. If ``actor_id`` is missing it is read from the clip id.

    Args:
        rows_or_frame: per-clip result rows (mappings) or a pandas DataFrame.
        statistic: function of a DataFrame returning a number, or a Mapping/Series/DataFrame of
            numbers (then one interval per entry; a DataFrame is stacked to (row, column) keys).
        cluster: the resampling unit's column.
        n_boot: number of replicates (>= 1).
        level: interval coverage in (0, 1).
        seed: seed of the generator; the same seed gives the same interval.

    Returns:
        A :class:`BootstrapCI`, or a dict of them keyed like the statistic's output.

    Raises:
        ValueError: no rows, no cluster column, bad ``n_boot`` or ``level``.

    Example:
        >>> rows = [{"actor_id": a, "value": float(a)} for a in range(1, 11)]
        >>> ci = bootstrap_ci(rows, lambda f: f["value"].mean(), n_boot=200, seed=1)
        >>> ci.estimate, ci.low < 5.5 < ci.high
        (5.5, True)
    """
    import pandas as pd

    if not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    frame = _as_frame(rows_or_frame)
    if frame.empty:
        raise ValueError("no rows to bootstrap")
    if cluster not in frame.columns:
        if cluster == "actor_id" and "clip_id" in frame.columns:
            frame[cluster] = frame["clip_id"].map(actor_of_clip)
        else:
            raise ValueError(f"no cluster column {cluster!r} in rows (columns: {list(frame.columns)})")
    rename_clips = cluster == "actor_id" and "clip_id" in frame.columns
    estimate = _flatten(statistic(frame))
    clusters = sorted(frame[cluster].unique().tolist())
    groups = {c: g for c, g in frame.groupby(cluster, sort=True)}
    replicates = []
    for picks in cluster_draws(len(clusters), n_boot, seed):
        parts = []
        for k, pos in enumerate(picks, start=1):
            part = groups[clusters[pos]].copy()
            if rename_clips:
                part["clip_id"] = part["clip_id"].map(lambda c, k=k: _ACTOR_IN_ID.sub(f"actor_{k:04d}_", str(c)))
                part[cluster] = k
            parts.append(part)
        replicates.append(_flatten(statistic(pd.concat(parts, ignore_index=True))))
    def interval(point: float, values: list[float]) -> BootstrapCI:
        return percentile_ci(point, values, level, len(clusters))

    if isinstance(estimate, dict):
        return {key: interval(point, [r.get(key, np.nan) for r in replicates]) for key, point in estimate.items()}
    return interval(estimate, replicates)

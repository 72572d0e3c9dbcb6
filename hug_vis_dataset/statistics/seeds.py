"""Seed statistics of a generation task scored over several samples per clip (a stochastic model's seeds).

A run scored over ``K`` samples per clip stores one row per (model, clip, metric, sample)
(:data:`hug_vis_dataset.datamodel.results.SAMPLE_COLUMN`). Every table, interval and verdict reads the per-clip
means over the samples; resampling actors over those means already carries the seed noise into every interval
(a second stage that also resamples the samples within a clip would count it twice: Davison & Hinkley 1997,
sec. 3.8). What the means hide, and this module states, is how much a single seed would have moved things:

* :func:`seed_spread`: per (model, metric) the typical seed-to-seed spread of one clip's value (``within_sd``) and
  the standard deviation that seed noise alone gives the system mean of a one-sample-per-clip evaluation
  (``mean_sd``);
* :func:`rank_stability`: per neighbour pair of a ranking, the share of one-seed evaluations (one sample drawn per
  clip and system) in which the better-ranked system is still the better one.

Only rows with status ``ok`` and a finite value count; a row without a ``sample`` column reads as sample 0 (an
older run, one sample per clip). Values stay in stored units (the caller scales).

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"model": "m", "metric": "psnr", "status": "ok",
    ...                      "clip_id": ["c1", "c1", "c2", "c2"], "sample": [0, 1, 0, 1],
    ...                      "value": [1.0, 3.0, 5.0, 5.0]})
    >>> seed_spread(rows)[["model", "n_clips", "k", "within_sd", "mean_sd"]].values.tolist()
    [['m', 2, 2.0, 1.0, 0.7071067811865476]]
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..datamodel.results import SAMPLE_COLUMN

if TYPE_CHECKING:
    import pandas as pd

#: What ``share_kept`` of :func:`rank_stability` means, as a figure or table prints it.
STABILITY_WORDS = ("Share kept: the share of one-seed evaluations (one of each clip's samples drawn at random per "
                   "system) in which the better-ranked system of a neighbour pair still scores better on their "
                   "common clips; 1.0 means no single seed would have swapped them, 0.5 that seed noise alone "
                   "decides their order.")
# Draws are made in blocks of at most this many (draw, clip) picks, to bound memory; the random stream and every
# sum are the same whatever the block size.
_BLOCK_ELEMENTS = 1 << 22


class SeedInputError(ValueError):
    """Sample rows that cannot be read: missing columns, one sample given twice, bad sample indices."""


def _sample_rows(sample_rows: Any, metric: "str | None") -> "pd.DataFrame":
    """The ok, finite rows (of ``metric`` when given) with integer samples, sorted (model, metric, clip, sample)."""
    import pandas as pd

    frame = sample_rows if isinstance(sample_rows, pd.DataFrame) else pd.DataFrame(list(sample_rows))
    missing = [c for c in ("model", "clip_id", "metric", "value") if c not in frame.columns]
    if missing:
        raise SeedInputError(f"sample rows lack columns {missing}; expected model, clip_id, metric, value[, "
                             f"{SAMPLE_COLUMN}, status]")
    if metric is not None:
        frame = frame[frame["metric"].astype(str).to_numpy() == str(metric)]
    if "status" in frame.columns:
        frame = frame[np.isin(frame["status"].fillna("ok").astype(str).to_numpy(), ("ok", ""))]
    values = pd.to_numeric(frame["value"], errors="coerce").to_numpy(dtype=np.float64)
    frame, values = frame[np.isfinite(values)], values[np.isfinite(values)]
    if SAMPLE_COLUMN in frame.columns:
        raw = frame[SAMPLE_COLUMN]
        numbers = pd.to_numeric(raw, errors="coerce")
        bad = raw.notna() & (numbers.isna() | (numbers < 0) | (numbers != numbers.round()))
        if bad.any():
            raise SeedInputError(f"sample indices must be integers >= 0, got {raw[bad].iloc[0]!r}")
        samples = numbers.fillna(0).to_numpy(dtype=np.int64)
    else:
        samples = np.zeros(len(frame), dtype=np.int64)
    out = pd.DataFrame({"model": frame["model"].astype(str).to_numpy(),
                        "metric": frame["metric"].astype(str).to_numpy(),
                        "clip_id": frame["clip_id"].astype(str).to_numpy(), "sample": samples, "value": values})
    if "task" in frame.columns and frame["task"].nunique() > 1:
        if out.duplicated(["model", "metric", "clip_id", "sample"]).any():
            raise SeedInputError(f"rows mix tasks {sorted(frame['task'].astype(str).unique())} with the same model, "
                                 "metric and clip; pass one task's rows")
    keys = ["model", "metric", "clip_id", "sample"]
    if out.duplicated(keys).any():
        first = out[out.duplicated(keys)].iloc[0]
        raise SeedInputError(f"model {first['model']!r} has sample {first['sample']} of clip {first['clip_id']!r} "
                             f"twice ({first['metric']}); pass one metric's rows, one row per sample")
    # A fixed order: sums and draws must not depend on how the rows came in.
    return out.sort_values(keys, kind="stable").reset_index(drop=True)


def seed_spread(sample_rows: Any, metric: "str | None" = None) -> "pd.DataFrame":
    """How far a single seed moves one clip's value, and the system mean, per (model, metric).

    With ``var_c`` the unbiased variance (``ddof=1``) of clip ``c``'s ok samples, over the ``n`` clips with two or
    more of them:

    * ``within_sd = sqrt(mean_c var_c)``: the typical seed-to-seed standard deviation of one clip's value;
    * ``mean_sd = sqrt(sum_c var_c) / n``: the standard deviation of the system mean over those clips when each clip
      contributes one sample drawn at random (seed noise only: the clips are held fixed).

    Args:
        sample_rows: per-sample rows (``model``, ``clip_id``, ``metric``, ``value``, ``sample``; ``status`` when
            present: only ``ok`` rows with a finite value count).
        metric: only this metric's rows (default: every metric of the rows).

    Returns:
        A DataFrame, one row per (model, metric) sorted by them: ``model``, ``metric``, ``n_clips`` (clips with 2+
        samples), ``k`` (median samples per such clip), ``within_sd``, ``mean_sd`` (stored units; NaN, and
        ``n_clips`` 0, for a model with no clip of two samples). Clips with fewer than two samples are left out.

    Raises:
        SeedInputError: missing columns, a sample given twice, sample indices that are not integers >= 0.

    Example:
        >>> rows = [{"model": "m", "metric": "fvd", "clip_id": c, "sample": k, "value": v}
        ...         for c, vs in (("c1", [1.0, 2.0, 3.0]), ("c2", [4.0])) for k, v in enumerate(vs)]
        >>> seed_spread(rows).to_dict("records")   # c2 has one sample: left out
        [{'model': 'm', 'metric': 'fvd', 'n_clips': 1, 'k': 3.0, 'within_sd': 1.0, 'mean_sd': 1.0}]
    """
    import pandas as pd

    frame = _sample_rows(sample_rows, metric)
    columns = ["model", "metric", "n_clips", "k", "within_sd", "mean_sd"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    clips = frame.groupby(["model", "metric", "clip_id"], sort=True)["value"].agg(["size", "var"]).reset_index()
    records = []
    for (model, name), part in clips.groupby(["model", "metric"], sort=True):
        kept = part[part["size"] >= 2]
        var = kept["var"].to_numpy(dtype=np.float64)
        n = len(kept)
        records.append({"model": model, "metric": name, "n_clips": n,
                        "k": float(np.median(kept["size"])) if n else float("nan"),
                        "within_sd": float(np.sqrt(var.mean())) if n else float("nan"),
                        "mean_sd": float(np.sqrt(var.sum()) / n) if n else float("nan")})
    return pd.DataFrame(records, columns=columns)


def _system_samples(codes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(clips, counts, padded)`` of one system's rows (clip codes in sorted order, samples in index order within a
    clip): its clips (sorted codes), their sample counts, and ``(clips, K_max)`` values (zero-padded)."""
    clips, position, counts = np.unique(codes, return_inverse=True, return_counts=True)
    padded = np.zeros((len(clips), int(counts.max()) if len(counts) else 0))
    if len(clips):
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        padded[position, np.arange(len(codes)) - starts[position]] = values
    return clips, counts, padded


def _draw_sums(system: str, seed: int, counts: np.ndarray, padded: np.ndarray, masks: np.ndarray,
               n_draws: int) -> np.ndarray:
    """``(n_draws, len(masks))``: per draw, the sum of the system's drawn samples over each mask's clips.

    A draw picks sample ``floor(u * n_c)`` of clip ``c`` (``u`` uniform in [0, 1)), ``u`` from a stream seeded by
    ``seed`` and the system's name, one row of ``len(clips)`` uniforms per draw: the picks of a (system, clip) do
    not depend on the pair, the other systems or the block size."""
    n_clips = len(counts)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), *system.encode("utf-8")]))
    flat = padded.reshape(-1)
    base = np.arange(n_clips, dtype=np.int64) * padded.shape[1]
    limit = (counts - 1).astype(np.int64)
    out = np.empty((n_draws, len(masks)))
    block = max(1, _BLOCK_ELEMENTS // max(n_clips, 1))
    for start in range(0, n_draws, block):
        rows = min(block, n_draws - start)
        picks = (rng.random((rows, n_clips)) * counts).astype(np.int64)
        np.minimum(picks, limit, out=picks)  # u * n just below 1 can round up to n
        picks += base
        drawn = flat[picks]
        for j, mask in enumerate(masks):
            # a row-wise sum over the clips in their sorted order: the same whatever the block's size
            out[start:start + rows, j] = (drawn if mask.all() else np.where(mask, drawn, 0.0)).sum(axis=1)
    return out


def rank_stability(sample_rows: Any, metric: str, order: Sequence[str], higher_is_better: bool,
                   n_draws: int = 1000, seed: int = 0) -> list[dict]:
    """How often a one-seed evaluation keeps each neighbour pair of a ranking in order.

    A *draw* picks, independently for each (system, clip), one of that clip's ok samples uniformly at random (what
    an evaluation with a single seed would have scored). For the neighbour pair ``(order[i], order[i + 1])`` each
    system's draw mean is taken over the clips both systems have; the pair is *kept* in a draw when the better-ranked
    system's mean is still better (in the metric's direction), a tie counting half.

    Args:
        sample_rows: per-sample rows (``model``, ``clip_id``, ``metric``, ``value``, ``sample``; ``status``).
        metric: the metric whose rows are read.
        order: the table's ranking of the systems, best first (by their means of per-clip sample means).
        higher_is_better: the metric's direction.
        n_draws: draws per pair.
        seed: the draws' seed (the result is a function of the rows, ``seed`` and ``n_draws``; row order does not
            matter).

    Returns:
        One record per neighbour pair: ``better``, ``worse``, ``share_kept`` (NaN without a common clip),
        ``n_draws``, ``n_clips`` (common clips).

    Raises:
        SeedInputError: bad rows (see :func:`seed_spread`).
        ValueError: ``n_draws`` not a positive integer, or a system twice in ``order``.

    Example:
        >>> rows = [{"model": m, "metric": "fvd", "clip_id": c, "sample": k, "value": v}
        ...         for m, clips in (("a", {"c1": [1.0, 3.0], "c2": [2.0]}), ("b", {"c1": [2.0], "c2": [2.5]}))
        ...         for c, vs in clips.items() for k, v in enumerate(vs)]
        >>> r = rank_stability(rows, "fvd", ["a", "b"], higher_is_better=False, n_draws=2000)
        >>> r[0]["better"], r[0]["worse"], r[0]["n_clips"], round(r[0]["share_kept"], 1)   # exactly 0.5
        ('a', 'b', 2, 0.5)
    """
    if not isinstance(n_draws, (int, np.integer)) or isinstance(n_draws, bool) or n_draws < 1:
        raise ValueError(f"n_draws must be a positive integer, got {n_draws!r}")
    order = [str(s) for s in order]
    if len(set(order)) != len(order):
        raise ValueError(f"order names a system twice: {order}")
    import pandas as pd

    frame = _sample_rows(sample_rows, metric)
    codes = pd.factorize(frame["clip_id"], sort=True)[0]  # clips as integers, in the rows' (sorted) clip order
    models, values = frame["model"].to_numpy(dtype=object), frame["value"].to_numpy(dtype=np.float64)
    systems = {}
    for system in order:
        mine = models == system
        systems[system] = _system_samples(codes[mine], values[mine])
    pairs = list(zip(order, order[1:]))
    common = [np.intersect1d(systems[a][0], systems[b][0]) for a, b in pairs]
    # Each system is drawn once; its sums over the common clips of its (at most two) pairs come from the same picks.
    sums: dict[tuple[int, str], np.ndarray] = {}
    for system in order:
        clips, counts, padded = systems[system]
        mine = [i for i, (a, b) in enumerate(pairs) if system in (a, b) and len(common[i])]
        if not mine:
            continue
        masks = np.array([np.isin(clips, common[i]) for i in mine])
        drawn = _draw_sums(system, seed, counts, padded, masks, int(n_draws))
        for j, i in enumerate(mine):
            sums[(i, system)] = drawn[:, j]
    sign = 1.0 if higher_is_better else -1.0
    out = []
    for i, (better, worse) in enumerate(pairs):
        n = len(common[i])
        share = float("nan")
        if n:
            gap = sign * (sums[(i, better)] / n - sums[(i, worse)] / n)
            share = float(((gap > 0).sum() + 0.5 * (gap == 0).sum()) / n_draws)
        out.append({"better": better, "worse": worse, "share_kept": share, "n_draws": int(n_draws), "n_clips": n})
    return out


__all__ = ["STABILITY_WORDS", "SeedInputError", "rank_stability", "seed_spread"]

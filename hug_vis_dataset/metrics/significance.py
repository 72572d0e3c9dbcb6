"""Is a leaderboard gap real? Paired tests between neighbouring systems, actors as clusters.

The procedures are the statistics engine's (:mod:`hug_vis_dataset.statistics.paired`, re-exported here); this
module ranks one leaderboard's systems and tests each against the next one down (:func:`neighbour_tests`).

The difference of two systems, the sign-flip test over actors and the paired actor bootstrap are described
once, in :mod:`hug_vis_dataset.statistics.paired`.

The verdict of a pair (distinguishable, not distinguishable at 95%, or n/a below the actors that can reach
p < 0.05) is the one :mod:`hug_vis_dataset.statistics.paired` defines, with its example.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

# The paired procedures live in the statistics engine; this module ranks a leaderboard with them.
from ..statistics.paired import (DEFAULT_LEVEL, PairedTest, SignificanceInputError, actor_sums,  # noqa: F401
                                 cluster_bootstrap_interval, paired_test, sign_flip_p_value, sign_patterns)


# ----------------------------------------------------------------------------- leaderboards
def _rows_frame(rows: "Iterable[Mapping] | Any"):
    import pandas as pd

    from ..datamodel.grid import ClipId

    frame = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    missing = [c for c in ("model", "clip_id", "value") if c not in frame.columns]
    if missing:
        raise SignificanceInputError(f"rows lack columns {missing}; expected model, clip_id, value[, actor_id, status]")
    if "status" in frame.columns:
        frame = frame[frame["status"].fillna("ok") == "ok"]
    frame = frame[np.isfinite(frame["value"].astype(float))].copy()
    frame["value"] = frame["value"].astype(float)
    if "actor_id" not in frame.columns or frame["actor_id"].isna().any():
        frame["actor_id"] = frame["clip_id"].map(lambda c: ClipId.parse(str(c)).actor_id)
    # A fixed row order: means (float sums) must not depend on how the rows came in.
    frame = frame.sort_values(["model", "clip_id"], kind="stable").reset_index(drop=True)
    duplicated = frame.duplicated(["model", "clip_id"])
    if duplicated.any():
        first = frame[duplicated].iloc[0]
        raise SignificanceInputError(f"model {first['model']!r} has clip {first['clip_id']!r} twice; "
                                     "pass one metric's rows")
    return frame


def neighbour_tests(rows: "Iterable[Mapping] | Any", higher_is_better: bool,
                    order: "Sequence[str] | None" = None, n_resamples: int = 9999, n_boot: int = 2000,
                    level: float = DEFAULT_LEVEL, seed: int = 0) -> list[dict[str, Any]]:
    """Rank the systems of one leaderboard and test each against the next one down.

    Args:
        rows: per-clip rows of several systems on **one** metric (``model``, ``clip_id``,
            ``value``; ``actor_id`` read from the clip id when absent; rows whose ``status`` is not
            ``ok`` or whose value is not finite are left out).
        higher_is_better: the metric's direction (from the metric table).
        order: the leaderboard's ranking, best first (e.g. by the paper's protocol); default: by the
            mean over each system's clips, ties broken by name.
        n_resamples, n_boot, level, seed: see :func:`paired_test` (the same seed for every pair).

    Returns:
        One dict per neighbouring pair, best first: ``rank`` (of ``model``), ``model``,
        ``next_model``, ``mean``, ``next_mean`` (over each system's own clips), ``difference``
        (over common clips, positive when ``model`` is better), ``ci_low``, ``ci_high``,
        ``p_value``, ``n_clips``, ``n_actors``, ``exact``, ``distinguishable`` (True/False/None) and
        ``verdict`` (``"distinguishable"``, ``"not distinguishable at 95%"`` or the n/a reason).

    Example:
        >>> rows = [{"model": m, "clip_id": f"actor_{a:04d}_happy_action_01_script_00{s}", "value": v + a * s}
        ...         for m, v in (("x", 3.0), ("y", 3.0), ("z", 0.0)) for a in range(1, 7) for s in (1, 2)]
        >>> [(r["model"], r["next_model"], r["verdict"]) for r in neighbour_tests(rows, True)]
        [('x', 'y', 'not distinguishable at 95%'), ('y', 'z', 'distinguishable')]
    """
    frame = _rows_frame(rows)
    sign = 1.0 if higher_is_better else -1.0
    means = frame.groupby("model", sort=True)["value"].mean()
    if order is None:
        ranked = sorted(means.index, key=lambda m: (-sign * means[m], str(m)))
    else:
        unknown = sorted(set(order) - set(means.index))
        if unknown:
            raise SignificanceInputError(f"order names systems without rows: {unknown}")
        ranked = list(order)
    by_model = {m: g.set_index("clip_id") for m, g in frame.groupby("model", sort=True)}
    label = f"not distinguishable at {round(level * 100):d}%"
    results = []
    for rank, (model, nxt) in enumerate(zip(ranked, ranked[1:]), start=1):
        a, b = by_model[model], by_model[nxt]
        common = sorted(set(a.index) & set(b.index))
        d = sign * (a.loc[common, "value"].to_numpy() - b.loc[common, "value"].to_numpy())
        test = paired_test(d, a.loc[common, "actor_id"].tolist(), n_resamples, n_boot, level, seed)
        verdict = test.note or ("distinguishable" if test.distinguishable else label)
        results.append({"rank": rank, "model": model, "next_model": nxt, "mean": float(means[model]),
                        "next_mean": float(means[nxt]), "difference": test.mean_difference,
                        **{k: v for k, v in asdict(test).items() if k not in ("mean_difference", "note", "level")},
                        "distinguishable": test.distinguishable, "verdict": verdict})
    return results

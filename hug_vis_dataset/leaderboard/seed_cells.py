"""The board's cells of a run scored over several samples per clip (a stochastic model's seeds): the seed spread
beside the value, and the note that says what it is.

The value of such a run is the mean over clips of each clip's sample mean (:mod:`hug_vis_dataset.scoring.aggregate`);
the detail is the standard deviation that seed noise alone gives a one-sample-per-clip score
(:func:`hug_vis_dataset.statistics.seeds.seed_spread`), in the paper's units, printed as the column prints values.
"""

from __future__ import annotations

import math

from .. import catalog


#: The note under a board with a cell of a run scored over several samples per clip.
SEED_NOTE = ("± (K seeds) after a value: the run scored K samples per clip (a stochastic model's seeds); the value is "
             "the mean over clips of each clip's sample mean, and ± the standard deviation that seed noise alone "
             "gives a one-sample-per-clip score (statistics.seeds.seed_spread). Intervals and verdicts already "
             "include that noise (actors resampled over the per-clip sample means).")
SEED_MARK = " seeds)"


def seed_details(run) -> dict[str, str]:
    """Per metric, the cell detail ``±sd (K seeds)`` of a run scored over several samples per clip (paper units: the
    seed spread's ``mean_sd``), or nothing for a run of one sample per clip.

    Example:
        >>> import pandas as pd
        >>> from types import SimpleNamespace
        >>> rows = pd.DataFrame({"model": "m", "metric": "psnr", "status": "ok", "sample": [0, 1, 0, 1],
        ...                      "clip_id": ["c1", "c1", "c2", "c2"], "value": [20.0, 22.0, 30.0, 30.0]})
        >>> seed_details(SimpleNamespace(sample_rows=rows))
        {'psnr': '±0.707 (2 seeds)'}
    """
    if getattr(run, "sample_rows", None) is None or not len(run.sample_rows):
        return {}
    from ..statistics.seeds import seed_spread

    out = {}
    for record in seed_spread(run.sample_rows).to_dict("records"):
        metric, sd = str(record["metric"]), float(record["mean_sd"])
        if metric in catalog.METRIC_NAMES and record["n_clips"] and math.isfinite(sd):
            spec = catalog.spec(metric)  # printed as its column prints values
            out[metric] = f"±{spec.printed(sd * spec.paper_scale)} ({record['k']:g}{SEED_MARK}"
    return out


__all__ = ["SEED_MARK", "SEED_NOTE", "seed_details"]

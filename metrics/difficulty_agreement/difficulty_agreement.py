"""HUG-VIS agreement between emotion difficulty profiles (paper Eq. 3, Fig. 9) as an evaluate module.

The analysis lives in ``hug_vis_dataset.metrics.crosstask``; this file only adapts it.
"""

import evaluate

from hug_vis_dataset.evaluate_support import TASK_RESULT_ROW_FEATURES
from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.crosstask import difficulty_agreement
from hug_vis_dataset.metrics.crosstask import emotion_difficulty
from hug_vis_dataset.metrics.crosstask import metrics_from_spec

_DESCRIPTION = """Spearman rank correlation (ties averaged) between the emotion difficulty profiles of every
pair of metrics; a constant profile gives NaN."""

_KWARGS_DESCRIPTION = """
Args:
    model, task, clip_id, metric, value (lists): per-clip result rows.
    metrics (list of [label, task, metric, orientation], optional): default the paper's eight.
    orientations (dict, optional): orientation overrides.
Returns:
    rho (label -> label -> Spearman rho, symmetric), metrics (label order), D (the profiles used).
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class DifficultyAgreement(evaluate.Metric):
    def _info(self):
        return metric_module_info("difficulty_agreement", _DESCRIPTION, TASK_RESULT_ROW_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, model, task, clip_id, metric, value, metrics=None, orientations=None):
        rows = {"model": model, "task": task, "clip_id": clip_id, "metric": metric, "value": value}
        import pandas as pd

        difficulty = emotion_difficulty(pd.DataFrame(rows), metrics_from_spec(metrics), orientations)
        rho = difficulty_agreement(difficulty.D)
        return {
            "rho": {a: {b: float(v) for b, v in col.items()} for a, col in rho.items()},
            "metrics": list(rho.columns),
            "D": difficulty.to_dict()["D"],
        }

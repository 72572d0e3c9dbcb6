"""HUG-VIS emotion difficulty across metrics (paper Eq. 1-2, Fig. 8) as an evaluate module.

The analysis lives in ``hug_vis_dataset.metrics.crosstask``; this file only adapts it.
"""

import evaluate

from hug_vis_dataset.evaluate_support import TASK_RESULT_ROW_FEATURES
from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.crosstask import emotion_difficulty
from hug_vis_dataset.metrics.crosstask import metrics_from_spec

_DESCRIPTION = """Per-metric emotion difficulty D_{e,k}: per-clip values oriented so that larger is harder,
averaged per model and emotion, averaged over models, then min-max normalised over the seven emotions."""

_KWARGS_DESCRIPTION = """
Args:
    model, task, clip_id, metric, value (lists): per-clip result rows (the emotion comes from the clip id).
    metrics (list of [label, task, metric, orientation], optional): default the paper's eight.
    orientations (dict label -> retain|negate|complement, optional): overrides.
Returns:
    D and g (label -> emotion -> value), hardest (label -> emotion or None), missing, n_dropped.
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class EmotionDifficulty(evaluate.Metric):
    def _info(self):
        return metric_module_info("emotion_difficulty", _DESCRIPTION, TASK_RESULT_ROW_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, model, task, clip_id, metric, value, metrics=None, orientations=None):
        rows = {"model": model, "task": task, "clip_id": clip_id, "metric": metric, "value": value}
        import pandas as pd

        result = emotion_difficulty(pd.DataFrame(rows), metrics_from_spec(metrics), orientations)
        return result.to_dict()

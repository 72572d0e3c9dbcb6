"""HUG-VIS source-level difficulty across generation regimes (paper Eq. 4, Fig. 10) as an evaluate module.

The analysis lives in ``hug_vis_dataset.metrics.crosstask``; this file only adapts it.
"""

import evaluate

from hug_vis_dataset.evaluate_support import TASK_RESULT_ROW_FEATURES
from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.crosstask import DEFAULT_AD_METRICS
from hug_vis_dataset.metrics.crosstask import DEFAULT_VD_METRICS
from hug_vis_dataset.metrics.crosstask import source_difficulty

_DESCRIPTION = """Clip-level difficulty Z_s of audio-driven (AD) and vision-driven (VD) video generation on the
clips valid for both: per model and metric min-max over the clips (higher is harder), mean over metrics,
mean over the regime's models; Spearman rho and the OLS fit of Z_VD on Z_AD."""

_KWARGS_DESCRIPTION = """
Args:
    model, task, clip_id, metric, value (lists): per-clip result rows (tasks audio_driven, vision_driven).
    ad_metrics, vd_metrics (dict metric -> retain|negate|complement, optional): the metrics of each regime.
Returns:
    rho, slope, intercept, r2, n_clips, n_valid, models, pairs (clip_id, emotion, Z_AD, Z_VD), n_dropped.
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SourceDifficulty(evaluate.Metric):
    def _info(self):
        return metric_module_info("source_difficulty", _DESCRIPTION, TASK_RESULT_ROW_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, model, task, clip_id, metric, value, ad_metrics=None, vd_metrics=None):
        rows = {"model": model, "task": task, "clip_id": clip_id, "metric": metric, "value": value}
        import pandas as pd

        result = source_difficulty(
            pd.DataFrame(rows), ad_metrics or DEFAULT_AD_METRICS, vd_metrics or DEFAULT_VD_METRICS
        )
        return result.to_dict()

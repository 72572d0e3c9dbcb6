"""HUG-VIS PSNR as an evaluate module; the metric lives in ``hug_vis_dataset.metrics.generation``."""

import evaluate

from hug_vis_dataset.evaluate_support import PATH_PAIR_FEATURES
from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.generation import evaluate_frame_metric

_DESCRIPTION = """Per-frame PSNR (dB, RGB, data range 255, capped at 100 dB for identical frames), mean per clip then over clips (HUG-VIS Table 7)."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): generated video paths (MP4).
    references (list of str): reference video paths (the release's `video_processed` clips).
Returns:
    psnr (mean over clips), per_clip, frames_dropped (surplus frames of the longer video)
Examples:
    >>> module = evaluate.load("metrics/psnr")
    >>> module.compute(predictions=["gen/clip.mp4"], references=["release/video_processed/clip.mp4"])  # doctest: +SKIP
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Psnr(evaluate.Metric):
    def _info(self):
        return metric_module_info("psnr", _DESCRIPTION, PATH_PAIR_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, predictions, references):
        return evaluate_frame_metric(predictions, references, "psnr")

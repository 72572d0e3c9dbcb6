"""HUG-VIS CSIM as an evaluate module; the metric lives in ``hug_vis_dataset.metrics.generation``."""

import evaluate

from hug_vis_dataset.evaluate_support import PATH_PAIR_FEATURES
from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.generation import evaluate_csim

_DESCRIPTION = """ArcFace identity cosine similarity (SCRFD + 5-point alignment + w600k_r50) of generated frames to the source portrait or the reference frames (HUG-VIS Tables 5 and 7). Needs `hugvis weights download arcface_det_10g arcface_w600k_r50`."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): generated video paths (MP4).
    references (list of str): a source portrait image (audio-driven) or the reference video (vision-driven).
Returns:
    csim (mean over clips), per_clip, frames_no_face (counted, not scored)
Examples:
    >>> module = evaluate.load("metrics/csim")
    >>> module.compute(predictions=["gen/clip.mp4"], references=["release/video_processed/clip.mp4"])  # doctest: +SKIP
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Csim(evaluate.Metric):
    def _info(self):
        return metric_module_info("csim", _DESCRIPTION, PATH_PAIR_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, predictions, references):
        return evaluate_csim(predictions, references)

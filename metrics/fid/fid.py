"""HUG-VIS FID as an evaluate module; the metric lives in ``hug_vis_dataset.metrics.generation``."""

import evaluate

from hug_vis_dataset.evaluate_support import PATH_PAIR_FEATURES
from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.generation import evaluate_fid

_DESCRIPTION = """Frechet Inception Distance (torch-fidelity Inception-v3 pool3, 2048-d) over all frames of all generated videos vs all reference frames (HUG-VIS Table 7). Needs `hugvis weights download inception_fid`."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): generated video paths (MP4).
    references (list of str): reference video paths (the release's `video_processed` clips).
Returns:
    fid, frames_generated, frames_reference
Examples:
    >>> module = evaluate.load("metrics/fid")
    >>> module.compute(predictions=["gen/clip.mp4"], references=["release/video_processed/clip.mp4"])  # doctest: +SKIP
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Fid(evaluate.Metric):
    def _info(self):
        return metric_module_info("fid", _DESCRIPTION, PATH_PAIR_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, predictions, references):
        return evaluate_fid(predictions, references)

"""HUG-VIS SyncNet Sync-C / Sync-D as an evaluate module; the metric lives in ``hug_vis_dataset.metrics.generation``."""

import evaluate

from hug_vis_dataset.evaluate_support import PATH_PAIR_FEATURES
from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.generation import evaluate_syncnet

_DESCRIPTION = """Lip-sync confidence (Sync-C) and distance (Sync-D) with the SyncNet protocol (25 fps, 16 kHz, 13 MFCC, offsets -15..15), plus the offset (HUG-VIS Table 5). Needs `hugvis weights download syncnet_v2 arcface_det_10g`."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): generated video paths (MP4).
    references (list of str): required by the feature spec but unused (each video is scored with its own audio).
Returns:
    sync_c, sync_d, offset (means over videos), per_clip
Examples:
    >>> module = evaluate.load("metrics/syncnet")
    >>> module.compute(predictions=["gen/clip.mp4"], references=["release/video_processed/clip.mp4"])  # doctest: +SKIP
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Syncnet(evaluate.Metric):
    def _info(self):
        return metric_module_info("syncnet", _DESCRIPTION, PATH_PAIR_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, predictions, references):
        return evaluate_syncnet(predictions)

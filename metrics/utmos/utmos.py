"""HUG-VIS UTMOS as an evaluate module; the metric lives in ``hug_vis_dataset.metrics.voice``."""

import evaluate

from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.voice import REFERENCE_FREE_FEATURES
from hug_vis_dataset.metrics.voice import evaluate_utmos

_DESCRIPTION = """UTMOS22 strong learner (SpeechMOS utmos22_strong: wav2vec 2.0 base + domain/judge embeddings + BLSTM, score = 2 x frame mean + 3) naturalness MOS of generated speech (HUG-VIS Table 9). Reference-free. Needs `hugvis weights download utmos22_strong`."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): generated speech files (WAV or any format soundfile reads).
Returns:
    utmos (mean over clips), per_clip (float or None per input), failed, errors
Examples:
    >>> module = evaluate.load("metrics/utmos")
    >>> module.compute(predictions=["gen/actor_0001_happy_action_01_script_001.wav"])  # doctest: +SKIP
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Utmos(evaluate.Metric):
    def _info(self):
        return metric_module_info("utmos", _DESCRIPTION, REFERENCE_FREE_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, predictions):
        return evaluate_utmos(predictions)

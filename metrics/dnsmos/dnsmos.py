"""HUG-VIS DNSMOS as an evaluate module; the metric lives in ``hug_vis_dataset.metrics.voice``."""

import evaluate

from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.voice import REFERENCE_FREE_FEATURES
from hug_vis_dataset.metrics.voice import evaluate_dnsmos

_DESCRIPTION = """DNSMOS P.835 (SIG, BAK, OVRL) and P.808 MOS of generated speech with Microsoft's dnsmos_local.py protocol (16 kHz, 9.01 s windows, 1 s hop, per-clip mean) and the ONNX models shipped in the speechmos wheel; the single DNSMOS number of HUG-VIS Table 9 is OVRL. Reference-free, runs offline."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): generated speech files (WAV or any format soundfile reads).
Returns:
    dnsmos (mean OVRL over clips), dnsmos_sig, dnsmos_bak, dnsmos_p808, per_clip (dict or None per input), failed, errors
Examples:
    >>> module = evaluate.load("metrics/dnsmos")
    >>> module.compute(predictions=["gen/actor_0001_happy_action_01_script_001.wav"])  # doctest: +SKIP
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Dnsmos(evaluate.Metric):
    def _info(self):
        return metric_module_info("dnsmos", _DESCRIPTION, REFERENCE_FREE_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, predictions):
        return evaluate_dnsmos(predictions)

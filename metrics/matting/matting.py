"""HUG-VIS Matting (all five) as an evaluate module; the metric lives in ``hug_vis_dataset.metrics.matting``."""

import evaluate

from hug_vis_dataset.evaluate_support import PATH_PAIR_FEATURES
from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.matting import evaluate_inputs_description
from hug_vis_dataset.metrics.matting import evaluate_paths

_DESCRIPTION = """MAD, MSE, Grad, Conn and dtSSD of alpha mattes in one streaming pass (HUG-VIS Table 11)."""

_KWARGS_DESCRIPTION = evaluate_inputs_description("matting", None, grad_option=True)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Matting(evaluate.Metric):
    def _info(self):
        return metric_module_info("matting", _DESCRIPTION, PATH_PAIR_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, predictions, references, protocol="rvm", rvm_max_frames=None, chunk_frames=32, grad_normalize=True):
        return evaluate_paths(predictions, references, metrics=None, protocol=protocol,
                              rvm_max_frames=rvm_max_frames, chunk_frames=chunk_frames, grad_normalize=grad_normalize)

"""HUG-VIS Grad as an evaluate module; the metric lives in ``hug_vis_dataset.metrics.matting``."""

import evaluate

from hug_vis_dataset.evaluate_support import PATH_PAIR_FEATURES
from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.matting import evaluate_inputs_description
from hug_vis_dataset.metrics.matting import evaluate_paths

_DESCRIPTION = """Gradient error of alpha mattes: Gaussian-derivative filters (sigma 1.4, 9x9), per-frame min-max normalisation, sum of squared magnitude differences / 1000 (HUG-VIS Table 11)."""

_KWARGS_DESCRIPTION = evaluate_inputs_description("grad", ("grad",), grad_option=True)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Grad(evaluate.Metric):
    def _info(self):
        return metric_module_info("grad", _DESCRIPTION, PATH_PAIR_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, predictions, references, protocol="rvm", rvm_max_frames=None, chunk_frames=32, grad_normalize=True):
        return evaluate_paths(predictions, references, metrics=("grad",), protocol=protocol,
                              rvm_max_frames=rvm_max_frames, chunk_frames=chunk_frames, grad_normalize=grad_normalize)

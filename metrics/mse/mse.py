"""HUG-VIS MSE as an evaluate module; the metric lives in ``hug_vis_dataset.metrics.matting``."""

import evaluate

from hug_vis_dataset.evaluate_support import PATH_PAIR_FEATURES
from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.matting import evaluate_inputs_description
from hug_vis_dataset.metrics.matting import evaluate_paths

_DESCRIPTION = """Mean squared difference of alpha mattes x1e3 (HUG-VIS Table 11, RVM evaluation)."""

_KWARGS_DESCRIPTION = evaluate_inputs_description("mse", ("mse",), grad_option=False)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Mse(evaluate.Metric):
    def _info(self):
        return metric_module_info("mse", _DESCRIPTION, PATH_PAIR_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, predictions, references, protocol="rvm", rvm_max_frames=None, chunk_frames=32):
        return evaluate_paths(predictions, references, metrics=("mse",), protocol=protocol,
                              rvm_max_frames=rvm_max_frames, chunk_frames=chunk_frames)

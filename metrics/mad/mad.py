"""HUG-VIS `mad` evaluate module. Generated from hug_vis_dataset/catalog.py; do not edit."""

import evaluate

from hug_vis_dataset.modules import compute
from hug_vis_dataset.modules import description
from hug_vis_dataset.modules import inputs_description
from hug_vis_dataset.modules import module_info


@evaluate.utils.file_utils.add_start_docstrings(description("mad"), inputs_description("mad"))
class Mad(evaluate.Metric):
    def _info(self):
        return module_info("mad")

    def _compute(self, **inputs):
        return compute("mad", **inputs)

"""HUG-VIS `hand_recall` evaluate module. Generated from hug_vis_dataset/catalog.py; do not edit."""

import evaluate

try:
    from hug_vis_dataset.modules import compute
    from hug_vis_dataset.modules import description
    from hug_vis_dataset.modules import inputs_description
    from hug_vis_dataset.modules import module_info
except ImportError as _err:  # say how to install the library (evaluate would name the import package)
    raise ImportError("the HUG-VIS module 'hand_recall' needs the hug-vis library; install it with: pip install \"hug-vis[hub,human,video]==0.1.0\"") from _err


@evaluate.utils.file_utils.add_start_docstrings(description("hand_recall"), inputs_description("hand_recall"))
class HandRecall(evaluate.Metric):
    def _info(self):
        return module_info("hand_recall")

    def _compute(self, **inputs):
        return compute("hand_recall", **inputs)

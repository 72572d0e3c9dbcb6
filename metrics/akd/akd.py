"""HUG-VIS `akd` evaluate module. Generated from hug_vis_dataset/catalog.py; do not edit."""

import evaluate

try:
    from hug_vis_dataset.modules import compute
    from hug_vis_dataset.modules import description
    from hug_vis_dataset.modules import inputs_description
    from hug_vis_dataset.modules import module_info
except ImportError as _err:  # say how to install the library (evaluate would name the import package)
    raise ImportError("the HUG-VIS module 'akd' needs the hug-vis library; install it with: pip install \"hug-vis[hub,human,video]==0.1.0\"") from _err


@evaluate.utils.file_utils.add_start_docstrings(description("akd"), inputs_description("akd"))
class Akd(evaluate.Metric):
    def _info(self):
        return module_info("akd")

    def _compute(self, **inputs):
        return compute("akd", **inputs)

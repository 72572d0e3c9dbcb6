"""HUG-VIS motion difficulty as an evaluate module; the analysis lives in ``hug_vis_dataset.metrics.matting``."""

import evaluate

from hug_vis_dataset.evaluate_support import PATH_PAIR_FEATURES
from hug_vis_dataset.evaluate_support import metric_module_info
from hug_vis_dataset.metrics.matting import evaluate_motion_paths

_DESCRIPTION = """Motion difficulty of reference alpha clips (HUG-VIS Eq. 5-6, Fig. 11): percentile ranks of the mean inter-frame alpha change U_s and of the normalised foreground-centroid shift V_s, averaged; with predictions, Spearman rho and OLS fit against per-clip dtSSD, overall and per emotion."""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): predicted alpha clips used for the dtSSD relation, or "" for none.
    references (list of str): reference alpha clips (PNG folder or video); D_motion uses only these.
    emotions (list of str, optional): emotion label per clip, for per-emotion fits.
    dtssd_per_clip (list of float, optional): per-clip dtSSD given directly (e.g. averaged over models,
        as in the paper); replaces the predictions' dtSSD.
    chunk_frames (int, optional): frames decoded at a time (does not change values).
Returns:
    motion_difficulty (mean D_motion), per_clip (u, v, d_motion[, dtssd] lists, input order),
    relation (overall and per_emotion: n, spearman_rho, spearman_p, slope, intercept, r2) when dtSSD is given.
Examples:
    >>> module = evaluate.load("metrics/motion_difficulty")
    >>> module.compute(predictions=["pred/a", "pred/b"], references=["ref/a", "ref/b"])  # doctest: +SKIP
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class MotionDifficulty(evaluate.Metric):
    def _info(self):
        return metric_module_info("motion_difficulty", _DESCRIPTION, PATH_PAIR_FEATURES, _KWARGS_DESCRIPTION)

    def _compute(self, predictions, references, emotions=None, dtssd_per_clip=None, chunk_frames=32):
        return evaluate_motion_paths(references, predictions, emotions=emotions, dtssd_per_clip=dtssd_per_clip,
                                     chunk_frames=chunk_frames)

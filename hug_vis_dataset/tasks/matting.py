"""Video matting (Table 11) and the reference motion statistics (Fig. 11 inputs).

Matting stores per-frame values (the ``rvm`` protocol of Table 11 is computed from them) and per-clip
rows holding the mean over the clip's frames, in the library's paper scaling (MAD x1e3 ...).
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from .base import ClipScores, TaskScorer
from .submission import check_video


def _alpha_source(ref: str, chunk_frames: int):
    """A reference alpha as the matting library reads it: a path, or a repo cell decoded in chunks."""
    from ..references import is_row_locator, iter_reference_alpha

    return iter_reference_alpha(ref, chunk_frames) if is_row_locator(ref) else ref


class MattingTask(TaskScorer):
    """MAD, MSE, dtSSD, Grad, Conn against the reference alpha (RobustVideoMatting's evaluation)."""

    name = "matting"
    reference_kinds = ("alpha",)

    def computations(self):
        return {m: self._errors for m in self.metrics}

    def reference(self, record) -> dict[str, str]:
        return {"alpha": str(record.alpha_matte_path)}

    def check(self, prediction: str, reference: Mapping[str, str], expected: Mapping[str, Any]) -> None:
        check_video(prediction, reference["alpha"], size=True, what="alpha",
                    decode_first=expected.get("decode_first", True))

    def _errors(self, prediction, reference, metrics: Sequence[str], models, options) -> ClipScores:
        from ..metrics.matting import score_matting_clip

        chunk = int(options.get("chunk_frames", 32))
        result = score_matting_clip(prediction, _alpha_source(reference["alpha"], chunk), chunk_frames=chunk,
                                    metrics=tuple(metrics))
        frames = []
        for metric in metrics:
            # dtSSD has no value at frame 0 (no predecessor): its per-frame values start at frame 1.
            offset = 1 if metric == "dtssd" else 0
            frames.extend({"metric": metric, "frame": i + offset, "value": float(v)}
                          for i, v in enumerate(result["per_frame"][metric]))
        return ClipScores({m: float(result["clip"][m]) for m in metrics}, frames, {"frames": result["frames"]})


class MattingBoundaryTask(MattingTask):
    """Boundary-aware matting errors (finding iii): the matting submission scored inside boundary
    bands, thin structures and moving regions of the reference (:mod:`hug_vis_dataset.metrics.boundary`).

    A task of its own (``hugvis evaluate matting_boundary``) so Table 11's scoring stays fast: these
    regions cost about 14x Table 11's five metrics per frame (``scripts/bench_boundary.py``).
    """

    name = "matting_boundary"

    def computations(self):
        return {m: self._regions for m in self.metrics}

    def _regions(self, prediction, reference, metrics: Sequence[str], models, options) -> ClipScores:
        from ..metrics.boundary import clip_values, score_boundary_clip

        chunk = int(options.get("chunk_frames", 32))
        values = clip_values(score_boundary_clip(prediction, _alpha_source(reference["alpha"], chunk), chunk))
        regions = {m: m.split("_", 1)[1] for m in metrics}
        notes = {f"size_{r}": values[f"size_{r}"] for r in set(regions.values())}
        notes.update({f"empty_{r}": values[f"empty_{r}"] for r in set(regions.values())})
        # An empty region has no error to measure: NaN with the reason, never 0.
        errors = {m: f"the {regions[m]} region is empty in all {int(values[f'empty_{regions[m]}'])} scored frames"
                  for m in metrics if math.isnan(values[m])}
        return ClipScores({m: float(values[m]) for m in metrics}, notes=notes, errors=errors)


class MotionTask(TaskScorer):
    """Reference motion statistics for the motion-difficulty analysis (paper Eq. 5-6, Fig. 11).

    Not a model evaluation: for every clip it stores U_s (mean absolute inter-frame alpha
    change) and V_s (mean centroid displacement) of the *reference* matte as rows of model
    :data:`hug_vis_dataset.results.REFERENCE_MODEL`. D_motion is a percentile rank over the clips
    analysed, so it is computed from these stored rows
    (:func:`hug_vis_dataset.metrics.crosstask.motion_relation`).
    """

    name = "motion"
    reference_kinds = ("alpha",)
    reference_only = True

    def computations(self):
        return {m: self._motion for m in self.metrics}

    def reference(self, record) -> dict[str, str]:
        return {"alpha": str(record.alpha_matte_path)}

    def availability(self) -> dict[str, str]:
        return {m: "" for m in self.metrics}

    def index_from_references(self, refs, predictions):
        from .submission import PredictionIndex

        index = PredictionIndex()
        for cid in refs.clip_ids():
            index.found[cid] = ["reference"]  # the reference alpha is the only input
        return index

    def _motion(self, prediction, reference, metrics, models, options) -> ClipScores:
        from ..metrics.matting import motion_stats

        chunk = int(options.get("chunk_frames", 32))
        u, v = motion_stats(_alpha_source(reference["alpha"], chunk), chunk)
        return ClipScores({k: float(x) for k, x in (("motion_u", u), ("motion_v", v)) if k in metrics})

"""Video matting (Table 11) and the reference motion statistics (Fig. 11 inputs).

Matting stores per-frame values (the ``rvm`` protocol of Table 11 is computed from them) and per-clip
rows holding the mean over the clip's frames, in the library's paper scaling (MAD x1e3 ...). One pass
over the clip's alpha chunks runs the fused kernel of Table 11's five errors and every row the catalog
calls per frame (:mod:`hug_vis_dataset.tasks.dispatch`), so a new frame-paired matte metric is one
catalog row and one function.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from .. import catalog
from .base import ClipScores, TaskScorer
from .dispatch import FrameMeans, rows_calling, rows_naming
from .submission import check_video

#: The kernels the matting tasks run (the rows naming them are in the catalog).
MATTING_KERNEL = "hug_vis_dataset.metrics.matting:score_matting_clip"
BOUNDARY_KERNEL = "hug_vis_dataset.metrics.boundary:score_boundary_clip"
MOTION_KERNEL = "hug_vis_dataset.metrics.matting:motion_stats"


def _alpha_source(ref: str, chunk_frames: int):
    """A reference alpha as the matting library reads it: a path, or a repo cell decoded in chunks."""
    from ..references import is_row_locator, iter_reference_alpha

    return iter_reference_alpha(ref, chunk_frames) if is_row_locator(ref) else ref


class MattingTask(TaskScorer):
    """MAD, MSE, dtSSD, Grad, Conn against the reference alpha (RobustVideoMatting's evaluation)."""

    name = "matting"
    reference_kinds = ("alpha",)
    # One pass over the alpha chunks: the fused kernel and every per-frame row.
    kernels = {MATTING_KERNEL: "_alpha_pass"}
    passes = {catalog.PER_FRAME: "_alpha_pass"}

    def reference(self, record) -> dict[str, str]:
        return {"alpha": str(record.alpha_matte_path)}

    def check(self, prediction: str, reference: Mapping[str, str], expected: Mapping[str, Any]) -> None:
        check_video(prediction, reference["alpha"], size=True, what="alpha",
                    decode_first=expected.get("decode_first", True))

    def _alpha_pass(self, prediction, reference, metrics: Sequence[str], models, options) -> ClipScores:
        """The fused kernel's rows and the per-frame rows from one read of each matte; per-frame values
        are stored for the rows aggregated under the ``rvm`` protocol."""
        from ..metrics.matting import MattingInputError, as_unit_alpha, paired_alpha_chunks, score_matting_clip

        chunk = int(options.get("chunk_frames", 32))
        fused = rows_naming(metrics, MATTING_KERNEL)
        per_frame = rows_calling(metrics, catalog.PER_FRAME)
        means = FrameMeans(per_frame, models, options,
                           keep=[m for m in per_frame if catalog.spec(m).protocol == catalog.RVM])
        feed = (lambda p, t: means.feed(as_unit_alpha(p), as_unit_alpha(t))) if means else None
        source = _alpha_source(reference["alpha"], chunk)
        scores = ClipScores()
        if fused:
            result = score_matting_clip(prediction, source, chunk_frames=chunk, metrics=tuple(fused), on_chunk=feed)
            for metric in fused:
                # dtSSD has no value at frame 0 (no predecessor): its per-frame values start at frame 1.
                offset = 1 if metric == "dtssd" else 0
                scores.frames.extend({"metric": metric, "frame": i + offset, "value": float(v)}
                                     for i, v in enumerate(result["per_frame"][metric]))
            scores.values.update({m: float(result["clip"][m]) for m in fused})
            scores.notes["frames"] = result["frames"]
            if "dtssd" in fused and result["frames"] < 2:
                # No frame-to-frame change to measure: a failure that says why, not "dtssd is not finite (nan)".
                scores.values.pop("dtssd")
                scores.errors["dtssd"] = (f"dtSSD needs at least two frames (the clip has {result['frames']}): it "
                                          f"compares each frame with the previous one")
        elif means:
            for p, t in paired_alpha_chunks(prediction, source, chunk):
                feed(p, t)
            if means.n == 0:
                raise MattingInputError("empty clip: no frames")
            scores.notes["frames"] = means.n
        scores.update(ClipScores(means.values(), means.frame_rows(), errors=dict(means.errors)))
        return scores


class MattingBoundaryTask(MattingTask):
    """Boundary-aware matting errors (finding iii): the matting submission scored inside boundary
    bands, thin structures and moving regions of the reference (:mod:`hug_vis_dataset.metrics.boundary`).

    A task of its own (``hugvis evaluate matting_boundary``) so Table 11's scoring stays fast: these
    regions cost about 14x Table 11's five metrics per frame (``scripts/bench_boundary.py``).
    """

    name = "matting_boundary"
    # Its per-frame rows (none in the catalog) would run in the matting pass: a second read of the mattes.
    kernels = {BOUNDARY_KERNEL: "_regions"}

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
    :data:`hug_vis_dataset.datamodel.results.REFERENCE_MODEL`. D_motion is a percentile rank over the clips
    analysed, so it is computed from these stored rows
    (:func:`hug_vis_dataset.metrics.crosstask.motion_relation`).
    """

    name = "motion"
    reference_kinds = ("alpha",)
    reference_only = True
    kernels = {MOTION_KERNEL: "_motion"}
    passes: Mapping[str, str] = {}  # reference statistics: no prediction to pair frames with

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

"""Audio-driven (Table 5) and vision-driven (Table 7) video generation.

Frame metrics (PSNR, SSIM, LPIPS) pair generated frame i with reference frame i over the common
prefix, streamed in chunks; CSIM compares every generated frame with the clip's source portrait
(one definition for both tasks, see :mod:`hug_vis_dataset.metrics.identity`); Sync-C/D score the
generated video with its own audio track; FID pools every frame of a system's valid clips against
the reference frames.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .base import ClipScores, SubmissionError, TaskScorer
from .submission import check_video


def frame_metric_sums(prediction: str, reference_video: str, metrics: Sequence[str], models,
                      chunk_frames: int, batch_size: "int | None" = None) -> ClipScores:
    """Per-clip means of PSNR/SSIM/LPIPS over the common frame prefix (surplus frames are noted).

    ``batch_size``: LPIPS frame pairs per forward pass (default 1 on CPU, measured fastest there by
    ``scripts/bench_scale.py``, 8 on a GPU); values do not depend on it beyond float rounding.
    """
    from ..media import paired_video_chunks, video_info
    from ..metrics.frames import lpips_frames, psnr_frames, ssim_frames

    batch = int(batch_size or (1 if models.device == "cpu" else 8))
    functions = {"psnr": psnr_frames, "ssim": ssim_frames,
                 "lpips": lambda p, r: lpips_frames(models.get("lpips"), p, r, batch)}
    sums = {m: 0.0 for m in metrics}
    n = 0
    for p, r in paired_video_chunks(prediction, reference_video, chunk_frames):
        if p.shape != r.shape:
            raise SubmissionError(f"frames {p.shape[1:]} differ from the reference's {r.shape[1:]}")
        for metric in metrics:
            sums[metric] += float(np.sum(functions[metric](p, r)))
        n += len(p)
    if n == 0:
        raise SubmissionError("no frames to compare with the reference video")
    total = max(video_info(prediction).frames, video_info(reference_video).frames)
    return ClipScores({m: v / n for m, v in sums.items()}, notes={"frames": n, "frames_dropped": total - n})


def csim_to_portrait(prediction: str, portrait: str, models, chunk_frames: int) -> ClipScores:
    """CSIM of a generated video to its source portrait (an image, a video's first frame or a repo cell)."""
    from ..media import iter_video_frames
    from ..metrics.identity import aligned_face_of, csim_clip
    from ..references import read_reference_portrait

    detector, embedder = models.get("face_detector"), models.get("face_embedder")
    source = aligned_face_of(read_reference_portrait(portrait), detector)
    result = csim_clip(iter_video_frames(prediction, chunk_frames), source, detector, embedder)
    return ClipScores({"csim": float(result.csim)}, notes={"frames_no_face": result.frames_no_face})


class _GenerationTask(TaskScorer):
    same_size = True
    file_kinds = ("video",)
    reference_kinds = ("video", "portrait")

    def computations(self):
        table = {"psnr": self._frames, "ssim": self._frames, "lpips": self._frames, "csim": self._identity,
                 "sync_c": self._sync, "sync_d": self._sync}
        return {m: table[m] for m in self.metrics}

    def reference(self, record) -> dict[str, str]:
        # The source portrait is the reference video's first frame (the repo's `source_frame`).
        return {"video": str(record.video_path), "audio": str(record.audio_path), "portrait": str(record.video_path)}

    def check(self, prediction: str, reference: Mapping[str, str], expected: Mapping[str, Any]) -> None:
        if "video" in reference:
            check_video(prediction, reference["video"], size=self.same_size, what="video")

    def _frames(self, prediction, reference, metrics, models, options) -> ClipScores:
        return frame_metric_sums(prediction, reference["video"], metrics, models, int(options.get("chunk_frames", 32)),
                                 options.get("batch_size"))

    def _identity(self, prediction, reference, metrics, models, options) -> ClipScores:
        return csim_to_portrait(prediction, reference["portrait"], models, int(options.get("chunk_frames", 32)))

    def _sync(self, prediction, reference, metrics, models, options) -> ClipScores:
        from ..metrics.sync import syncnet_clip

        sync = syncnet_clip(prediction, models.get("syncnet"), models.get("face_detector"),
                            chunk_frames=int(options.get("chunk_frames", 32)), batch=int(options.get("batch_size") or 20))
        return ClipScores({m: float(sync[m]) for m in metrics}, notes={"sync_offset": sync["offset"]})

    def score_set(self, predictions, references, metrics, models, options=None) -> dict[str, float]:
        if "fid" not in metrics:
            return {}
        from ..media import iter_video_frames
        from ..metrics.fid import GaussianStats, fid_from_stats
        from ..models.inception import FEATURE_DIM, inception_features
        from ..references import iter_reference_files

        chunk = int((options or {}).get("chunk_frames", 32))
        net = models.get("inception")

        def stats(paths) -> GaussianStats:
            out = GaussianStats(FEATURE_DIM)
            for path in paths:
                for frames in iter_video_frames(path, chunk):
                    out.update(inception_features(net, frames, int((options or {}).get("batch_size") or 16)))
            return out

        # One temporary file at a time when the references are repo cells.
        reference_stats = stats(iter_reference_files([r["video"] for r in references], ".mp4"))
        return {"fid": float(fid_from_stats(stats(predictions), reference_stats))}


class AudioDrivenTask(_GenerationTask):
    """CSIM to the source portrait, Sync-C, Sync-D (any output size)."""

    name = "audio_driven"
    same_size = False


class VisionDrivenTask(_GenerationTask):
    """LPIPS, CSIM, PSNR, SSIM per clip; FID per system."""

    name = "vision_driven"

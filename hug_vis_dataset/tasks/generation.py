"""Audio-driven (Table 5) and vision-driven (Table 7) video generation.

Frame metrics (PSNR, SSIM, LPIPS: the rows the catalog calls per frame, so a new one joins with no
change here) pair generated frame i with reference frame i over the common prefix, streamed in
chunks; CSIM compares every generated frame with the clip's source portrait
(one definition for both tasks, see :mod:`hug_vis_dataset.metrics.identity`); Sync-C/D score the
generated video with its own audio track, their face detection in the same decode: the boxes CSIM's
detector finds on each decoded frame are SyncNet's detections (one detector call per frame for both,
:class:`hug_vis_dataset.metrics.sync.SourceDetections`), and only the crops of the face tracks are
decoded again (:func:`hug_vis_dataset.metrics.sync.syncnet_from_detections`); FID pools every frame
of a system's valid clips against the reference frames. The human-motion rows (beyond the paper) read
MediaPipe's landmarks of the same decoded frames (:mod:`hug_vis_dataset.tasks.human_pass`).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .. import catalog
from ..metrics.exact_sum import ExactSum
from .base import ClipScores, SubmissionError, TaskScorer
from .dispatch import FrameMeans, error_text, frame_function, rows_calling, rows_naming, setup_errors
from .fid_features import CACHE_KIND, PassFeatures, fid_batch, narrow, reference_entry
from .human_pass import HumanPass
from .submission import check_video

#: The kernels of the one-decode pass (rows naming them in the catalog): CSIM's accumulator, whose
#: face detections SyncNet's tracks reuse.
CSIM_KERNEL = "hug_vis_dataset.metrics.identity:CsimAccumulator"
SYNC_KERNEL = "hug_vis_dataset.metrics.sync:syncnet_from_detections"


def frame_metric_sums(prediction: str, reference_video: str, metrics: Sequence[str], models,
                      chunk_frames: int, batch_size: "int | None" = None) -> ClipScores:
    """Per-clip means of per-frame rows (PSNR/SSIM/LPIPS ...) over the common frame prefix (surplus
    frames are noted): the one-metric path :func:`video_pass` is checked against.

    ``batch_size``: LPIPS frame pairs per forward pass on a GPU (default 8; values do not depend on it
    beyond float rounding); the CPU path runs one pair per forward whatever it is (``models/lpips_cpu.py``).
    """
    from ..readers.media import paired_video_chunks, video_info

    functions = {m: frame_function(m, models, {"batch_size": batch_size}) for m in metrics}
    sums = {m: ExactSum() for m in metrics}  # exact: the mean cannot depend on chunking
    n = 0
    for p, r in paired_video_chunks(prediction, reference_video, chunk_frames):
        if p.shape != r.shape:
            raise SubmissionError(f"frames {p.shape[1:]} differ from the reference's {r.shape[1:]}")
        for metric in metrics:
            sums[metric].add(functions[metric](p, r))
        n += len(p)
    if n == 0:
        raise SubmissionError("no frames to compare with the reference video")
    # Container counts (demuxed, not decoded): the surplus needs no second decode.
    total = max(video_info(prediction).frames, video_info(reference_video).frames)
    return ClipScores({m: v.value() / n for m, v in sums.items()}, notes={"frames": n, "frames_dropped": total - n})


def portrait_embedding(portrait: str, models) -> np.ndarray:
    """The ArcFace embedding ``(1, d)`` of a source portrait's aligned face, computed once per
    (portrait bytes, detector + embedder weights, preprocessing version) and cached on disk."""
    from .. import catalog
    from ..cache.features import FEATURE_VERSIONS, reference_digest, shared_cache
    from ..metrics.identity import aligned_face_of
    from ..references import read_reference_portrait

    detector, embedder = models.get("face_detector"), models.get("face_embedder")

    def compute() -> dict:
        return {"embedding": np.asarray(embedder(aligned_face_of(read_reference_portrait(portrait), detector)[None]))}

    weights = catalog.spec("csim").weights
    ids = (models.identity("face_detector", weights), models.identity("face_embedder", weights))
    cache = shared_cache()
    if cache is None or None in ids:
        return compute()["embedding"]
    parts = {"reference": reference_digest(portrait), "extractor": ids,
             "version": FEATURE_VERSIONS["portrait_embedding"]}
    return cache.get_or_compute("portrait_embedding", parts, compute)["embedding"]


def csim_to_portrait(prediction: str, portrait: str, models, chunk_frames: int) -> ClipScores:
    """CSIM of a generated video to its source portrait (an image, a video's first frame or a repo cell)."""
    from ..readers.media import iter_video_frames
    from ..metrics.identity import CsimAccumulator

    accumulator = CsimAccumulator(portrait_embedding(portrait, models), models.get("face_detector"),
                                  models.get("face_embedder"))
    for chunk in iter_video_frames(prediction, chunk_frames):
        accumulator.feed(chunk)
    result = accumulator.result()
    return ClipScores({"csim": float(result.csim)}, notes={"frames_no_face": result.frames_no_face})


def _paired_or_alone(prediction: str, reference_video: "str | None", chunk_frames: int):
    """(pred chunk, ref chunk) over the common prefix, then (pred chunk, None) for surplus
    prediction frames; ``(pred, None)`` throughout without a reference. Each file decoded once."""
    from ..readers.media import iter_video_frames

    pit = iter_video_frames(prediction, chunk_frames)
    if reference_video is None:
        for p in pit:
            yield p, None
        return
    rit = iter_video_frames(reference_video, chunk_frames)
    pbuf = rbuf = None
    while True:
        # A spent chunk (an empty view still holds its array) is dropped before the next is decoded.
        if pbuf is None or len(pbuf) == 0:
            pbuf = None
            pbuf = next(pit, None)
        if rbuf is None or (len(rbuf) == 0 and rit is not None):
            rbuf = None
            rbuf = next(rit, None) if rit is not None else None
        if pbuf is None:
            return
        if rbuf is None:
            rit = None
            yield pbuf, None
            pbuf = None
            continue
        n = min(len(pbuf), len(rbuf))
        yield pbuf[:n], rbuf[:n]
        pbuf, rbuf = pbuf[n:], rbuf[n:]


def video_pass(prediction: str, reference: Mapping[str, str], metrics: Sequence[str], models,
               options: Mapping[str, Any]) -> ClipScores:
    """Every per-frame row (PSNR/SSIM/LPIPS, and any row the catalog calls per frame), CSIM and
    Sync-C/D of one clip from one decode of each video (see the module docstring); Sync-C/D decode
    the prediction once more, for the crops of its face tracks only. Which row is which comes from
    the catalog (:mod:`hug_vis_dataset.tasks.dispatch`).

    Values equal :func:`frame_metric_sums`, :func:`csim_to_portrait` and
    :func:`~hug_vis_dataset.metrics.sync.syncnet_clip` (``tests/test_one_decode.py``,
    ``tests/test_sync_one_decode.py``). A metric that cannot score the clip (frames of another size,
    a per-frame function that raises, no face, no face track) is in ``errors``; the others keep their
    values. Model loading errors (missing weights) raise, before anything is decoded.
    """
    from ..metrics.identity import CsimAccumulator
    from ..metrics.sync import SourceDetections, syncnet_from_detections

    chunk = int(options.get("chunk_frames", 32))
    frame_metrics = rows_calling(metrics, catalog.PER_FRAME)
    frames = FrameMeans(frame_metrics, models, options)  # every per-frame row of the catalog, one decode
    errors: dict[str, str] = {}
    # The human-motion rows: MediaPipe's landmarks of every decoded frame (tasks/human_pass.py).
    human_metrics, human = rows_calling(metrics, catalog.PER_TRACK), None
    try:
        human = HumanPass.start(prediction, reference, human_metrics, models, options)
    except setup_errors():
        raise
    except Exception as err:  # noqa: BLE001 - fails the human rows alone
        errors.update(dict.fromkeys(human_metrics, error_text(err)))
    sync_metrics, sync = rows_naming(metrics, SYNC_KERNEL), None
    if sync_metrics:
        syncnet, sync_detector = models.get("syncnet"), models.get("face_detector")
        try:
            sync = SourceDetections(prediction, sync_detector)  # boxes per decoded frame, for SyncNet
        except Exception as err:  # noqa: BLE001 - fails Sync alone
            errors.update(dict.fromkeys(sync_metrics, error_text(err)))
    csim_metrics, csim = rows_naming(metrics, CSIM_KERNEL), None
    if csim_metrics:
        detector, embedder = models.get("face_detector"), models.get("face_embedder")
        try:
            csim = CsimAccumulator(portrait_embedding(reference["portrait"], models), detector, embedder,
                                   on_detect=None if sync is None else sync.record)
        except Exception as err:  # noqa: BLE001 - no face in the portrait fails CSIM alone
            errors.update(dict.fromkeys(csim_metrics, error_text(err)))
    # FID's Inception features of this decode, when the run scores FID (tasks/fid_features.py).
    fid = PassFeatures.start(reference.get("video"), models, options)
    surplus = 0
    paired = frame_metrics or (fid is not None and fid.wants_reference) or (human is not None and human.wants_reference)
    for p, r in _paired_or_alone(prediction, reference.get("video") if paired else None, chunk):
        if frames and r is not None and not frames.failed:
            if p.shape != r.shape:
                frames.fail(f"SubmissionError: frames {p.shape[1:]} differ from the reference's {r.shape[1:]}")
            else:
                frames.feed(p, r)
        elif r is None:
            surplus += len(p)
        if csim is not None and not any(m in errors for m in csim_metrics):
            try:
                csim.feed(p)
            except Exception as err:  # noqa: BLE001 - a failing detector fails CSIM alone
                errors.update(dict.fromkeys(csim_metrics, error_text(err)))
        if sync is not None and not any(m in errors for m in sync_metrics):
            try:
                sync.feed(p)  # detects the frames CSIM's detector did not see (no CSIM, or it failed)
            except Exception as err:  # noqa: BLE001 - a failing detector fails Sync alone
                errors.update(dict.fromkeys(sync_metrics, error_text(err)))
        if fid is not None:
            fid.feed(p, r)
        if human is not None:
            try:
                human.feed(p, r)
            except setup_errors():
                raise
            except Exception as err:  # noqa: BLE001 - a failing landmark network fails the human rows alone
                errors.update(dict.fromkeys(human_metrics, error_text(err)))
                human = None
        if all(m in errors or m in frames.errors for m in metrics) and not (fid is not None and fid.active):
            break  # nothing left to compute from the rest of the video
    scores = ClipScores(errors=errors)
    if frames and not frames.failed:
        n = frames.n
        if n == 0:
            frames.fail("SubmissionError: no frames to compare with the reference video")
        else:
            from ..readers.media import video_info

            scores.values.update(frames.values())
            scores.notes.update(frames=n, frames_dropped=max(surplus, video_info(reference["video"]).frames - n))
    errors.update(frames.errors)
    if csim is not None and not any(m in errors for m in csim_metrics):
        try:
            result = csim.result()
            scores.values.update(dict.fromkeys(csim_metrics, float(result.csim)))
            scores.notes["frames_no_face"] = result.frames_no_face
        except ValueError as err:
            errors.update(dict.fromkeys(csim_metrics, f"ValueError: {err}"))
    if sync is not None and not any(m in errors for m in sync_metrics):
        try:
            out = syncnet_from_detections(prediction, sync.boxes, syncnet, chunk_frames=chunk,
                                          batch=int(options.get("batch_size") or 20))
            scores.values.update({m: float(out[m]) for m in sync_metrics})
            scores.notes["sync_offset"] = out["offset"]
        except Exception as err:  # noqa: BLE001 - no face track fails Sync alone
            errors.update(dict.fromkeys(sync_metrics, error_text(err)))
    if fid is not None:
        scores.set_features.update(fid.finish(reference["video"]))
    if human is not None:
        human_scores = human.finish()
        scores.values.update(human_scores.values)
        scores.remarks.update(human_scores.remarks)
        errors.update(human_scores.errors)
    return scores


class _GenerationTask(TaskScorer):
    same_size = True
    file_kinds = ("video",)
    reference_kinds = ("video", "portrait")
    # One group for every row read from decoded frames: one decode per video (video_pass).
    kernels = {CSIM_KERNEL: "_pass", SYNC_KERNEL: "_pass"}
    passes = {catalog.PER_FRAME: "_pass", catalog.PER_TRACK: "_pass"}

    def _pass(self, prediction, reference, metrics, models, options) -> ClipScores:
        return video_pass(prediction, reference, metrics, models, options)

    def reference(self, record) -> dict[str, str]:
        # The source portrait is the reference video's first frame (the repo's `source_frame`).
        return {"video": str(record.video_path), "audio": str(record.audio_path), "portrait": str(record.video_path)}

    def check(self, prediction: str, reference: Mapping[str, str], expected: Mapping[str, Any]) -> None:
        if "video" in reference:
            check_video(prediction, reference["video"], size=self.same_size, what="video", fps=expected.get("fps"),
                        decode_first=expected.get("decode_first", True))

    def score_set(self, predictions, references, metrics, models, options=None, features=None) -> dict[str, float]:
        """FID of the system's valid clips; a prediction's Inception features are ``features(path, "fid")``
        when the runner kept them from the clip's pass (the same arrays), else decoded here."""
        if "fid" not in metrics:
            return {}
        from ..metrics.fid import GaussianStats, fid_from_stats
        from ..models.inception import FEATURE_DIM

        chunk = int((options or {}).get("chunk_frames", 32))
        batch = fid_batch(options)
        net = models.get("inception")
        generated, reference_stats = GaussianStats(FEATURE_DIM), GaussianStats(FEATURE_DIM)
        # Updated chunk by chunk as the frames were decoded: the same float sums as one pass.
        for path in predictions:
            stored = features(path, "fid") if features is not None else None
            _update_by_chunk(generated, video_features(path, net, chunk, batch) if stored is None
                             else np.asarray(stored).astype(np.float64), chunk)
        for ref in references:
            _update_by_chunk(reference_stats, reference_features(ref["video"], models, chunk, batch), chunk)
        return {"fid": float(fid_from_stats(generated, reference_stats))}


def _update_by_chunk(stats, features: np.ndarray, chunk: int) -> None:
    for start in range(0, len(features), chunk):
        stats.update(features[start:start + chunk])


def video_features(path: str, net, chunk: int, batch: int) -> np.ndarray:
    """Inception pool3 features ``(frames, 2048)`` of every frame of one video, chunk by chunk.

    Through the same :class:`~.fid_features.ChunkedInception` the one-decode pass feeds, so both
    paths run the network on the same ``chunk``-frame blocks.
    """
    from ..readers.media import iter_video_frames
    from .fid_features import ChunkedInception

    features = ChunkedInception(net, chunk, batch)
    for frames in iter_video_frames(path, chunk):
        features.feed(frames)
    return features.result()


def reference_features(ref: str, models, chunk: int, batch: int) -> np.ndarray:
    """A reference video's Inception features, computed once per (video bytes, Inception weights,
    preprocessing version) and cached: a second system scored against the same dataset reads them.

    Stored as float32 when that is exact (the network computes in float32), so the cache holds
    the same values in half the bytes.
    """
    from ..references import reference_file

    net = models.get("inception")

    def compute() -> dict:
        with reference_file(ref, ".mp4") as path:  # a repo cell: one temporary file at a time
            return {"features": narrow(video_features(path, net, chunk, batch))}

    # The key the one-decode pass stores a reference's features under (fid_features.reference_entry).
    cache, parts = reference_entry(ref, models)
    if cache is None:
        return compute()["features"].astype(np.float64)
    return cache.get_or_compute(CACHE_KIND, parts, compute)["features"].astype(np.float64)


class AudioDrivenTask(_GenerationTask):
    """CSIM to the source portrait, Sync-C, Sync-D (any output size)."""

    name = "audio_driven"
    same_size = False


class VisionDrivenTask(_GenerationTask):
    """LPIPS, CSIM, PSNR, SSIM per clip; FID per system."""

    name = "vision_driven"

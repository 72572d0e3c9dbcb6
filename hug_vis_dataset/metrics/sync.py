"""Lip sync (paper Table 5): Sync-C and Sync-D of a talking-head video with its own audio track.

The syncnet_python / LatentSync pipeline (:func:`syncnet_clip`): the video on the 25 fps timeline
``ffmpeg -r 25`` makes (:func:`~.sync_timeline.ffmpeg_rate_indices`, equal to Debian's ffmpeg frame
for frame), 16 kHz mono audio through ffmpeg's default resampler with no MP3 step
(:func:`~.sync_timeline.video_audio_16k`), face tracks, 224x224 crops, SyncNet embeddings of 5-frame windows against
MFCC windows, the offset search of :mod:`hug_vis_dataset.models.syncnet`. Models are injected or
loaded from the weights layer; decoding goes through :mod:`hug_vis_dataset.readers.media` in chunks.

The face detection can come from outside (:func:`syncnet_from_detections`): the audio-driven task's
one-decode pass (:func:`hug_vis_dataset.tasks.generation.video_pass`) records the boxes CSIM's
detector finds on every decoded frame (:class:`SourceDetections`), so the detector runs once per
frame for both metrics; only the crops of the kept tracks are decoded again.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterator

import numpy as np

from .sync_timeline import ffmpeg_rate_indices, video_audio_16k

SYNC_METRICS = ("sync_c", "sync_d")


class SyncFailure(ValueError):
    """A video that cannot be scored by SyncNet (no valid face track, too short): no number is made up."""


def _boxes_of(detector, frame: np.ndarray) -> list:
    """Boxes from a detector object (``.detect`` -> ``[(box, landmarks, score)]``) or a callable -> boxes."""
    if hasattr(detector, "detect"):
        return [d[0] for d in detector.detect(frame)]
    return list(detector(frame))


def _frames_at(video_path, keep: np.ndarray, chunk_frames: int, start: int = 0, stop: "int | None" = None
               ) -> Iterator[tuple[int, np.ndarray]]:
    """(output index, frame) of output frames ``start..stop-1`` of the resampled timeline ``keep``."""
    from ..readers.media import iter_video_frames

    stop = len(keep) if stop is None else stop
    o, i = start, 0
    for chunk in iter_video_frames(video_path, chunk_frames):
        for frame in chunk:
            while o < stop and keep[o] == i:  # a source frame may serve several output frames
                yield o, frame
                o += 1
            if o >= stop:
                return
            i += 1


class SourceDetections:
    """Face boxes per decoded SOURCE frame, gathered while another pass drives the decode.

    The one-decode pass feeds it every chunk it decodes, in order. A frame's boxes come from
    :meth:`record` (the hook :class:`~hug_vis_dataset.metrics.identity.CsimAccumulator` calls with
    what its detector found on that frame) or, for the frames of a chunk nothing recorded (no
    CSIM, or CSIM failed part-way), from :meth:`feed` running the detector itself: one detector call
    per frame in all. Frames the 25 fps timeline never shows are not detected by :meth:`feed` and
    hold ``None`` (:func:`syncnet_from_detections` does not read them).

    Args:
        video_path: the video being decoded (its container gives the frame count and rate).
        detector: as in :func:`syncnet_clip`.
    """

    def __init__(self, video_path: "str | Path", detector) -> None:
        from ..readers.media import video_info
        from ..models.syncnet import SYNC_FPS

        info = video_info(video_path)
        self.detector = detector
        self.shown = np.zeros(info.frames, bool)  # source frames on the 25 fps timeline
        self.shown[ffmpeg_rate_indices(info.frames, info.fps, SYNC_FPS)] = True
        self.boxes: list = []
        self._seen = 0

    def _wanted(self, i: int) -> bool:
        return i < len(self.shown) and bool(self.shown[i])  # a surplus frame fails the count check

    def record(self, found) -> None:
        """The detector's ``[(box, landmarks, score)]`` on the next source frame (the CSIM hook)."""
        self.boxes.append([d[0] for d in found] if self._wanted(len(self.boxes)) else None)

    def feed(self, chunk: np.ndarray) -> None:
        """After the chunk went through the recording pass: detect the frames nothing recorded."""
        start, self._seen = self._seen, self._seen + len(chunk)
        if not start <= len(self.boxes) <= self._seen:
            raise RuntimeError(f"{len(self.boxes)} frames recorded, {start}..{self._seen} decoded")
        for frame in chunk[len(self.boxes) - start:]:
            self.boxes.append(_boxes_of(self.detector, frame) if self._wanted(len(self.boxes)) else None)


def syncnet_clip(video_path: "str | Path", net=None, detector=None, vshift: int = 15,
                 min_track: int = 50, min_face_size: float = 100, num_failed_det: int = 25,
                 iou_threshold: float = 0.5, crop_scale: float = 0.4, batch: int = 20,
                 chunk_frames: int = 32) -> dict:
    """Sync-C, Sync-D and offset of one talking-head video (its own audio track).

    The syncnet_python / LatentSync protocol: the video on a 25 fps timeline
    (:func:`~.sync_timeline.ffmpeg_rate_indices`), audio at 16 kHz mono (:func:`~.sync_timeline.video_audio_16k`); faces detected on every frame and linked into
    tracks (:func:`hug_vis_dataset.models.facetrack.track_faces`: IoU > ``iou_threshold``, gaps up
    to ``num_failed_det`` frames interpolated, more than ``min_track`` detections, mean box side
    above ``min_face_size`` px); each track median-filtered, cropped with ``crop_scale`` padding to
    224x224 and scored with the audio of its own time span. The clip's Sync-C, Sync-D and offset
    are means over tracks (LatentSync averages confidences and offsets over its crop videos).

    Here the detector runs on every frame of the 25 fps timeline in a first decode (frames not
    kept); :func:`syncnet_from_detections` takes detections made elsewhere (the one-decode pass).

    Difference from the reference: the default detector is SCRFD (``det_10g``), not S3FD, and
    the clip is one shot (no scene detection). ``min_track`` defaults to LatentSync's 50 frames
    (run_pipeline uses 100); the clip must be longer than that at 25 fps.

    Args:
        video_path: video with its audio track.
        net: loaded SyncNet ``S`` (default :func:`~hug_vis_dataset.models.syncnet.load_syncnet`).
        detector: ``.detect(frame) -> [(box, landmarks, score)]`` or a callable
            ``frame -> [(x0, y0, x1, y1), ...]`` (default SCRFD).
        vshift: offsets searched, in frames.
        batch, chunk_frames: windows per forward pass and frames per decoded chunk (the result
            does not depend on them).

    Returns:
        ``sync_c``, ``sync_d``, ``offset`` (means over scored tracks), ``frames`` (frames at
        25 fps), ``frames_untracked`` (frames in no kept track), ``tracks_failed`` and ``tracks``:
        per track ``start``, ``end`` (inclusive, 25 fps frames), ``detected`` (frames with a
        detection), ``windows``, ``sync_c``, ``sync_d``, ``offset``, ``mdist`` (mean distance per
        shift ``-vshift..vshift`` of the search, see
        :func:`~hug_vis_dataset.models.syncnet.sync_offset_search`), or ``error``.

    Raises:
        SyncFailure: no face track passes the filters, or no track is long enough to score.
    """
    from ..readers.media import video_info
    from ..models.syncnet import SYNC_FPS, load_syncnet

    if detector is None:
        from ..models.arcface import SCRFDDetector

        detector = SCRFDDetector()
    net = net if net is not None else load_syncnet()
    info = video_info(video_path)
    keep = ffmpeg_rate_indices(info.frames, info.fps, SYNC_FPS)  # output frame -> source frame
    # pass 1: boxes only (frames are not kept)
    detections: list[list] = [_boxes_of(detector, frame) for _, frame in _frames_at(video_path, keep, chunk_frames)]
    return _score_tracks(video_path, keep, detections, net, vshift, min_track, min_face_size, num_failed_det,
                         iou_threshold, crop_scale, batch, chunk_frames)


def syncnet_from_detections(video_path: "str | Path", source_detections: list, net=None, vshift: int = 15,
                            min_track: int = 50, min_face_size: float = 100, num_failed_det: int = 25,
                            iou_threshold: float = 0.5, crop_scale: float = 0.4, batch: int = 20,
                            chunk_frames: int = 32) -> dict:
    """:func:`syncnet_clip` from face boxes detected elsewhere, one entry per decoded source frame.

    ``source_detections[i]`` is the list of boxes the detector gives on source frame ``i`` (what
    :func:`syncnet_clip`'s detector pass gives, e.g. ``[d[0] for d in detector.detect(frame)]``);
    entries of source frames the 25 fps timeline never shows may be ``None``. The 25 fps timeline
    reads ``[source_detections[i] for i in keep]`` (``keep``: :func:`~.sync_timeline.ffmpeg_rate_indices`),
    so with the same detector the result equals :func:`syncnet_clip`'s. Other arguments, return
    value and :class:`SyncFailure` as there.

    Raises:
        ValueError: the number of entries is not the container's frame count
            (:func:`hug_vis_dataset.readers.media.video_info`), or a frame on the timeline has ``None``.
    """
    from ..readers.media import video_info
    from ..models.syncnet import SYNC_FPS, load_syncnet

    net = net if net is not None else load_syncnet()
    info = video_info(video_path)
    if len(source_detections) != info.frames:
        raise ValueError(f"{video_path}: {len(source_detections)} source frame detections for a video of "
                         f"{info.frames} frames (one entry per decoded source frame)")
    keep = ffmpeg_rate_indices(info.frames, info.fps, SYNC_FPS)
    detections = [source_detections[i] for i in keep]
    missing = [int(i) for i, d in zip(keep, detections) if d is None]
    if missing:
        raise ValueError(f"{video_path}: no detections for source frames {missing[:5]} on the 25 fps timeline")
    return _score_tracks(video_path, keep, detections, net, vshift, min_track, min_face_size, num_failed_det,
                         iou_threshold, crop_scale, batch, chunk_frames)


def _score_tracks(video_path, keep: np.ndarray, detections: list, net, vshift, min_track, min_face_size,
                  num_failed_det, iou_threshold, crop_scale, batch, chunk_frames) -> dict:
    """Tracks, audio, crops and scores from the boxes of each 25 fps frame and a loaded ``net``
    (see :func:`syncnet_clip`).

    The crops are a second decode, restricted to each track's span: a track's crop boxes are its
    median-filtered, gap-interpolated boxes (:func:`~hug_vis_dataset.models.facetrack.smooth_track`),
    known only once the whole track is linked, so cropping during the detection pass would mean
    keeping every frame until the end of the clip (memory growing with its length).
    """
    from ..models.facetrack import smooth_track, crop_face, track_faces
    from ..models.syncnet import (SYNC_FPS, SYNC_SAMPLE_RATE, audio_embeddings, lip_embeddings,
                                  sync_offset_search, sync_windows)

    n_out = len(keep)
    tracks = track_faces(detections, iou_threshold, num_failed_det, min_track, min_face_size)
    if not tracks:
        n_det = sum(1 for d in detections if d)
        raise SyncFailure(f"{video_path}: no face track (faces in {n_det} of {n_out} frames at 25 fps; a track "
                          f"needs more than {min_track} linked detections with mean side > {min_face_size} px)")
    audio = video_audio_16k(video_path)
    per_frame = SYNC_SAMPLE_RATE // SYNC_FPS
    covered = np.zeros(n_out, bool)
    results = []
    for track in tracks:
        covered[track.start:track.end + 1] = True
        row = {"start": track.start, "end": track.end, "detected": int(track.detected.sum())}
        segment = audio[track.start * per_frame:(track.end + 1) * per_frame]
        n_win = sync_windows(len(track.frames), len(segment))
        if n_win <= 0:
            results.append(row | {"error": f"track of {len(track.frames)} frames with {len(segment)} audio "
                                           "samples is too short for SyncNet"})
            continue
        size, cx, cy = smooth_track(track.boxes)

        def crops(track=track, size=size, cx=cx, cy=cy):
            buf = []
            for o, frame in _frames_at(video_path, keep, chunk_frames, track.start, track.end + 1):
                k = o - track.start
                buf.append(crop_face(frame, size[k], cx[k], cy[k], crop_scale))
                if len(buf) == chunk_frames:
                    yield np.stack(buf)
                    buf = []
            if buf:
                yield np.stack(buf)

        v = lip_embeddings(net, crops(), n_win, batch)
        a = audio_embeddings(net, segment, n_win, batch)
        c, d, off, mdist = sync_offset_search(v, a, vshift)
        results.append(row | {"windows": n_win, "sync_c": c, "sync_d": d, "offset": int(off),
                              "mdist": mdist.tolist()})
    scored = [r for r in results if "error" not in r]
    if not scored:
        raise SyncFailure(f"{video_path}: no face track long enough for SyncNet: {results}")
    return {"sync_c": float(np.mean([r["sync_c"] for r in scored])),
            "sync_d": float(np.mean([r["sync_d"] for r in scored])),
            "offset": float(np.mean([r["offset"] for r in scored])),
            "frames": n_out, "frames_untracked": int(n_out - covered.sum()),
            "tracks_failed": len(results) - len(scored), "tracks": results}

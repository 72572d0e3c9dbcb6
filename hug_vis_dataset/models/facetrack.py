"""Face tracks for SyncNet: syncnet_python's ``track_shot`` / ``crop_video`` as pure functions.

The Sync-C / Sync-D protocol (joonson/syncnet_python ``run_pipeline.py``, also LatentSync's
``eval/syncnet_detect.py``) does not score a face per frame: it links per-frame detections into
tracks, drops short tracks and small faces, fills gaps by linear interpolation, median-filters
the box size and centre, and crops every frame of the track around the smoothed box. Each track
is then scored by SyncNet on its own (with the audio of the track's time span).

Steps and their parameters (reference defaults in brackets):

1. :func:`link_tracks`: greedy linking in frame order; a detection joins the current track when
   its IoU with the track's last box is > ``iou_threshold`` [0.5] and it lies at most
   ``num_failed_det`` [25] frames after that box; a larger gap ends the track. Repeated until no
   detection is left.
2. :func:`track_faces`: keep a track when it has more than ``min_track`` detections [100 in
   run_pipeline, 50 in LatentSync] and its mean box width or height exceeds ``min_face_size``
   [100 px]; interpolate the boxes over every frame between its first and last detection
   (:func:`interpolate_boxes`).
3. :func:`smooth_track`: half-size ``s = max(w, h) / 2`` and centre, each through a median filter
   of ``kernel`` [13] frames with zero padding at the ends (``scipy.signal.medfilt``'s behaviour).
4. :func:`crop_face`: the frame padded by ``int(s * (1 + 2 * crop_scale))`` pixels of value 110,
   rows ``[cy - s, cy + s (1 + 2 cs))``, columns ``[cx - s (1 + cs), cx + s (1 + cs))``
   (``crop_scale`` [0.4]), resized to 224 x 224 with bilinear interpolation.

Differences from the reference, on purpose:
- No scene (shot) detection: a benchmark clip is one shot, so the whole clip is one scene.
- When several detections of one frame overlap the track's last box, the one with the highest
  IoU joins (the reference takes the first in detector order and, through a list-mutation quirk,
  may add two boxes of the same frame); a track holds at most one box per frame.
- A crop window that reaches beyond the padded frame is filled with 110 instead of wrapping
  around (the reference's negative slice indices).

Example:
    >>> dets = [[(0, 0, 10, 10)], [(1, 0, 11, 10)], [], [(2, 0, 12, 10)]]
    >>> [t.frames.tolist() for t in track_faces(dets, min_track=2, min_face_size=5)]
    [[0, 1, 2, 3]]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

IOU_THRESHOLD = 0.5
NUM_FAILED_DET = 25
MIN_TRACK_PIPELINE = 100  # syncnet_python run_pipeline.py
MIN_TRACK_LATENTSYNC = 50  # LatentSync eval_sync_conf.py
MIN_FACE_SIZE = 100
MEDIAN_KERNEL = 13
CROP_SCALE = 0.4
CROP_SIZE = 224
PAD_VALUE = 110


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two (x0, y0, x1, y1) boxes (0 when they do not overlap).

    Example:
        >>> box_iou((0, 0, 2, 2), (1, 0, 3, 2))
        0.3333333333333333
    """
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    if union <= 0:
        return 0.0  # two empty boxes: no evidence they are the same face
    return float(inter / union)


def _check_boxes(detections: Sequence[Sequence[Sequence[float]]]) -> list[list[tuple[float, ...]]]:
    out = []
    for f, frame in enumerate(detections):
        boxes = []
        for box in frame:
            b = tuple(float(v) for v in box)
            if len(b) != 4:
                raise ValueError(f"frame {f}: a box needs 4 values (x0, y0, x1, y1), got {len(b)}")
            if not all(np.isfinite(b)):
                raise ValueError(f"frame {f}: box {b} has NaN or inf")
            if b[2] < b[0] or b[3] < b[1]:
                raise ValueError(f"frame {f}: box {b} has x1 < x0 or y1 < y0")
            boxes.append(b)
        out.append(boxes)
    return out


def link_tracks(detections: Sequence[Sequence[Sequence[float]]], iou_threshold: float = IOU_THRESHOLD,
                num_failed_det: int = NUM_FAILED_DET) -> list[list[tuple[int, tuple[float, ...]]]]:
    """Greedy IoU linking of per-frame boxes into tracks (syncnet_python ``track_shot``).

    Args:
        detections: per frame, a list of (x0, y0, x1, y1) boxes (frame index = list index).
        iou_threshold: a box joins a track when IoU with the track's last box is strictly above.
        num_failed_det: the largest frame gap between consecutive boxes of one track.

    Returns:
        Tracks in the order they were built, each a list of (frame, box), one box per frame.

    Example:
        >>> link_tracks([[(0, 0, 4, 4), (10, 10, 14, 14)], [(10, 10, 14, 15)]])
        [[(0, (0.0, 0.0, 4.0, 4.0))], [(0, (10.0, 10.0, 14.0, 14.0)), (1, (10.0, 10.0, 14.0, 15.0))]]
    """
    if num_failed_det < 1:
        raise ValueError(f"num_failed_det must be >= 1, got {num_failed_det}")
    remaining = _check_boxes(detections)
    tracks = []
    while any(remaining):
        track: list[tuple[int, tuple[float, ...]]] = []
        for f, boxes in enumerate(remaining):
            if not boxes:
                continue
            if not track:
                track.append((f, boxes.pop(0)))
                continue
            if f - track[-1][0] > num_failed_det:
                break  # every later frame is even further away: the track has ended
            ious = [box_iou(b, track[-1][1]) for b in boxes]
            best = int(np.argmax(ious))
            if ious[best] > iou_threshold:
                track.append((f, boxes.pop(best)))
        tracks.append(track)
    return tracks


def interpolate_boxes(frames: Sequence[int], boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Boxes on every frame from the first to the last detection, linear in each coordinate.

    Example:
        >>> f, b = interpolate_boxes([0, 2], np.array([[0, 0, 2, 2], [2, 0, 4, 2]], float))
        >>> f.tolist(), b[1].tolist()
        ([0, 1, 2], [1.0, 0.0, 3.0, 2.0])
    """
    frames = np.asarray(frames, dtype=np.int64)
    boxes = np.asarray(boxes, dtype=np.float64)
    if frames.ndim != 1 or len(frames) == 0 or boxes.shape != (len(frames), 4):
        raise ValueError(f"need n >= 1 frames and (n, 4) boxes, got {frames.shape} and {boxes.shape}")
    if np.any(np.diff(frames) <= 0):
        raise ValueError("track frames must be strictly increasing")
    every = np.arange(frames[0], frames[-1] + 1)
    return every, np.stack([np.interp(every, frames, boxes[:, j]) for j in range(4)], axis=1)


@dataclass(frozen=True)
class FaceTrack:
    """One face track on the 25 fps timeline.

    Attributes:
        frames: (n,) consecutive frame indices.
        boxes: (n, 4) float64 (x0, y0, x1, y1), interpolated where not detected.
        detected: (n,) bool, True where the box is a detection (not interpolated).
    """

    frames: np.ndarray
    boxes: np.ndarray
    detected: np.ndarray

    @property
    def start(self) -> int:
        return int(self.frames[0])

    @property
    def end(self) -> int:
        """Last frame (inclusive)."""
        return int(self.frames[-1])


def track_faces(detections: Sequence[Sequence[Sequence[float]]], iou_threshold: float = IOU_THRESHOLD,
                num_failed_det: int = NUM_FAILED_DET, min_track: int = MIN_TRACK_LATENTSYNC,
                min_face_size: float = MIN_FACE_SIZE) -> list[FaceTrack]:
    """Link, filter and interpolate face tracks (syncnet_python ``track_shot`` on one shot).

    Args:
        detections: per frame (25 fps timeline), a list of (x0, y0, x1, y1) boxes.
        iou_threshold, num_failed_det: see :func:`link_tracks`.
        min_track: a track is kept when it has **more than** ``min_track`` detections (the
            reference's ``len(track) > min_track``). 100 in run_pipeline, 50 in LatentSync;
            short synthetic clips need a smaller value.
        min_face_size: kept when the mean interpolated box width or height exceeds it (pixels).

    Returns:
        Kept tracks in the order they were linked.

    Example:
        >>> dets = [[(0, 0, 50, 50)]] * 3 + [[]] * 3
        >>> [(t.start, t.end) for t in track_faces(dets, min_track=2, min_face_size=40)]
        [(0, 2)]
        >>> track_faces(dets, min_track=3, min_face_size=40)
        []
    """
    if min_track < 0:
        raise ValueError(f"min_track must be >= 0, got {min_track}")
    kept = []
    for track in link_tracks(detections, iou_threshold, num_failed_det):
        if len(track) <= min_track:
            continue
        frames = [f for f, _ in track]
        every, boxes = interpolate_boxes(frames, np.array([b for _, b in track]))
        if max(np.mean(boxes[:, 2] - boxes[:, 0]), np.mean(boxes[:, 3] - boxes[:, 1])) <= min_face_size:
            continue
        kept.append(FaceTrack(every, boxes, np.isin(every, frames)))
    return kept


def median_filter(x: np.ndarray, kernel: int = MEDIAN_KERNEL) -> np.ndarray:
    """Running median with zero padding at both ends (``scipy.signal.medfilt``'s convention).

    Example:
        >>> median_filter(np.array([5.0, 1, 9, 3]), 3).tolist()
        [1.0, 5.0, 3.0, 3.0]
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"median_filter expects a 1-D array, got shape {x.shape}")
    if kernel < 1 or kernel % 2 == 0:
        raise ValueError(f"kernel must be odd and positive, got {kernel}")
    half = kernel // 2
    padded = np.concatenate([np.zeros(half), x, np.zeros(half)])
    return np.median(np.lib.stride_tricks.sliding_window_view(padded, kernel), axis=1)


def smooth_track(boxes: np.ndarray, kernel: int = MEDIAN_KERNEL) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median-filtered half-size ``max(w, h) / 2`` and centre (x, y) of a track's boxes.

    The zero padding of the filter pulls values towards 0 at the track ends when fewer than
    ``kernel // 2 + 1`` real values fall in the window, so shorter tracks are refused.

    Returns:
        (size, cx, cy), each (n,) float64.

    Example:
        >>> s, cx, cy = smooth_track(np.tile([10.0, 20, 30, 60], (13, 1)))
        >>> float(s[6]), float(cx[6]), float(cy[6])
        (20.0, 20.0, 40.0)
    """
    b = np.asarray(boxes, dtype=np.float64)
    if b.ndim != 2 or b.shape[1] != 4:
        raise ValueError(f"boxes must be (n, 4), got {b.shape}")
    if len(b) < kernel // 2 + 1:
        raise ValueError(f"a track of {len(b)} frames is too short for a {kernel}-frame median filter "
                         f"(needs >= {kernel // 2 + 1})")
    size = np.maximum(b[:, 3] - b[:, 1], b[:, 2] - b[:, 0]) / 2
    cx, cy = (b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2
    return median_filter(size, kernel), median_filter(cx, kernel), median_filter(cy, kernel)


def crop_face(frame: np.ndarray, size: float, cx: float, cy: float, crop_scale: float = CROP_SCALE,
              out_size: int = CROP_SIZE) -> np.ndarray:
    """syncnet_python's face crop of one frame, resized to ``out_size`` squared (bilinear).

    Args:
        frame: uint8 (H, W, 3).
        size: smoothed half box size ``s``.
        cx, cy: smoothed box centre.
        crop_scale: padding factor ``cs``; the window is ``2 s (1 + cs)`` wide and tall.

    Example:
        >>> import numpy as np
        >>> crop_face(np.zeros((100, 100, 3), np.uint8), 20, 50, 50).shape
        (224, 224, 3)
    """
    import cv2

    frame = np.asarray(frame)
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise ValueError(f"frame must be uint8 (H, W, 3), got {frame.dtype} {frame.shape}")
    if not (np.isfinite(size) and np.isfinite(cx) and np.isfinite(cy)) or size <= 0:
        raise ValueError(f"crop needs a finite positive size and centre, got s={size}, c=({cx}, {cy})")
    pad = int(size * (1 + 2 * crop_scale))
    # window in the coordinates of the padded frame, truncated with int() as the reference does
    r0, r1 = int(cy + pad - size), int(cy + pad + size * (1 + 2 * crop_scale))
    c0, c1 = int(cx + pad - size * (1 + crop_scale)), int(cx + pad + size * (1 + crop_scale))
    h, w = frame.shape[:2]
    out = np.full((r1 - r0, c1 - c0, 3), PAD_VALUE, np.uint8)
    # the frame occupies rows pad..pad+h, columns pad..pad+w of the padded frame
    rr0, rr1 = max(r0, pad), min(r1, pad + h)
    cc0, cc1 = max(c0, pad), min(c1, pad + w)
    if rr1 > rr0 and cc1 > cc0:
        out[rr0 - r0:rr1 - r0, cc0 - c0:cc1 - c0] = frame[rr0 - pad:rr1 - pad, cc0 - pad:cc1 - pad]
    return cv2.resize(out, (out_size, out_size))

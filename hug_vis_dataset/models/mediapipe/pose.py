"""BlazePose GHUM (``pose_landmark_full``): 33 body landmarks per frame, tracked from frame to frame.

Re-derived from ``mediapipe/modules/pose_landmark/pose_landmark_cpu.pbtxt`` and the graphs it uses
(google-ai-edge/mediapipe, read, not copied):

* no region from the previous frame: ``pose_detection/pose_detection_cpu.pbtxt`` (:data:`~.ssd.POSE`), the
  first detection, ``pose_landmark/pose_detection_to_roi.pbtxt`` (alignment points 0 -> 1, the hips'
  centre and the full-body scale point, at 90 degrees; x1.25, ``square_long``);
* ``pose_landmark_by_roi_cpu.pbtxt``: the region cropped to 256 x 256 in ``[0, 1]`` (letterboxed), the
  network, ``tensors_to_pose_landmarks_and_segmentation.pbtxt`` (pose presence >= 0.5; 39 landmarks of
  x, y, z, visibility and presence logits, sigmoids applied; ``RefineLandmarksFromHeatmapCalculator`` with a
  7 x 7 kernel on the 64 x 64 heatmaps; world landmarks rotated by the region's rotation,
  ``WorldLandmarkProjectionCalculator``), projected back (``pose_landmarks_and_segmentation_inverse_projection``);
* ``pose_landmark_filtering.pbtxt``: the auxiliary landmarks are smoothed by a one-euro filter
  (``LandmarksSmoothingCalculator``: min cutoff 0.01, beta 10, derivative cutoff 1, values in pixels scaled
  by the object's size, ``util/filtering/one_euro_filter.cc``) before they give the next region;
* ``pose_landmarks_to_roi.pbtxt``: the next frame's region from the auxiliary landmarks 33 -> 34 (90 degrees,
  x1.25, ``square_long``).

Two deliberate differences, both for measuring: the 33 landmarks themselves are not smoothed (the
switchable one-euro filter of ``pose_landmark_filtering.pbtxt`` is off), since the metrics measure a
video's jitter and a filter would hide it; and when the region
carried from the previous frame holds no pose, the detector runs on the same frame (MediaPipe waits for
the next one), so a tracking loss costs no frame.

Example:
    >>> import skimage.data
    >>> tracker = PoseTracker(load_pose_networks(), fps=30.0)
    >>> pose = tracker.process(skimage.data.astronaut())
    >>> pose.points.shape, bool(pose.visibility[[11, 12]].min() > 0.5)
    ((33, 2), True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import geometry as g
from . import ssd

LANDMARK_SIZE = 256
HEATMAP_KERNEL = 7
MIN_REFINE_CONFIDENCE = 0.5  # RefineLandmarksFromHeatmapCalculatorOptions default
PRESENCE_THRESHOLD = 0.5
ROI_SCALE = 1.25


@dataclass
class PoseResult:
    """One frame's pose: ``points`` ``(33, 2)`` pixels, ``visibility`` and ``presence`` ``(33,)``, ``world``
    ``(33, 3)`` metres (hips' centre at the origin), ``score`` the pose presence, ``rect`` the region used."""

    points: np.ndarray
    visibility: np.ndarray
    presence: np.ndarray
    world: np.ndarray
    score: float
    rect: g.Rect
    auxiliary: np.ndarray


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -80.0, 80.0)))


def refine_from_heatmap(points: np.ndarray, heatmap: np.ndarray, kernel: int = HEATMAP_KERNEL,
                        min_confidence: float = MIN_REFINE_CONFIDENCE) -> np.ndarray:
    """``RefineLandmarksFromHeatmapCalculator``: each point ``(n, 2)`` (tensor coordinates) moved to the
    sigmoid-weighted mean cell of the ``kernel`` x ``kernel`` window of its heatmap ``(h, w, n)`` around it,
    when the window's largest confidence reaches ``min_confidence``. Cell ``c`` sits at ``c / w`` (as the
    calculator computes it); the window is cut at the heatmap's edges (cells outside weigh 0). All points
    at once: every window gathered from the heatmap padded with confidence 0.

    Example:
        >>> heat = np.full((8, 8, 1), -20.0); heat[2, 5, 0] = heat[2, 6, 0] = 20.0  # two hot cells
        >>> refine_from_heatmap(np.array([[5.5 / 8, 2.5 / 8]]), heat, kernel=3).round(4).tolist()
        [[0.6875, 0.25]]
    """
    height, width, count = heatmap.shape
    half = (kernel - 1) // 2
    cols = np.floor(points[:, 0] * width).astype(np.int64)  # C++ float -> int truncation for x >= 0
    rows = np.floor(points[:, 1] * height).astype(np.int64)
    inside = (cols >= 0) & (cols < width) & (rows >= 0) & (rows < height) & (points[:, 0] >= 0) & (points[:, 1] >= 0)
    out = points.copy()
    if not inside.any():
        return out
    index = np.flatnonzero(inside)
    offsets = np.arange(-half, half + 1)
    window_rows = rows[index, None] + offsets  # (m, k)
    window_cols = cols[index, None] + offsets
    valid = ((window_rows >= 0) & (window_rows < height))[:, :, None] & ((window_cols >= 0) & (window_cols < width))[:, None, :]
    values = heatmap[np.clip(window_rows, 0, height - 1)[:, :, None], np.clip(window_cols, 0, width - 1)[:, None, :],
                     index[:, None, None]].astype(np.float64)
    confidence = np.where(valid, _sigmoid(values), 0.0)  # (m, k, k)
    total = confidence.sum(axis=(1, 2))
    refine = (confidence.max(axis=(1, 2)) >= min_confidence) & (total > 0)
    safe = np.where(total > 0, total, 1.0)
    x = (confidence * window_cols[:, None, :]).sum(axis=(1, 2)) / width / safe
    y = (confidence * window_rows[:, :, None]).sum(axis=(1, 2)) / height / safe
    out[index[refine]] = np.stack([x, y], axis=1)[refine]
    return out


class OneEuroFilter:
    """The one-euro filter of ``mediapipe/util/filtering/one_euro_filter.cc`` on an array of values sampled at a
    fixed rate (the frame rate): a low-pass filter whose cutoff rises with the filtered speed."""

    def __init__(self, frequency: float, min_cutoff: float, beta: float, derivative_cutoff: float) -> None:
        self.frequency, self.min_cutoff, self.beta, self.derivative_cutoff = frequency, min_cutoff, beta, derivative_cutoff
        self.value: "np.ndarray | None" = None  # last filtered value
        self.raw: "np.ndarray | None" = None  # last raw value
        self.speed: "np.ndarray | None" = None  # last filtered derivative

    def _alpha(self, cutoff: "float | np.ndarray") -> "float | np.ndarray":
        tau = 1.0 / (2 * np.pi * cutoff)
        return 1.0 / (1.0 + tau * self.frequency)

    def __call__(self, value: np.ndarray, value_scale: float = 1.0) -> np.ndarray:
        value = np.asarray(value, np.float64)
        if self.raw is None:
            self.value = self.raw = value
            self.speed = np.zeros_like(value)  # the derivative's filter starts at its first value, 0
            return value
        derivative = (value - self.raw) * value_scale * self.frequency
        a = self._alpha(self.derivative_cutoff)
        self.speed = a * derivative + (1 - a) * self.speed
        a = self._alpha(self.min_cutoff + self.beta * np.abs(self.speed))
        self.value = a * value + (1 - a) * self.value
        self.raw = value
        return self.value


def load_pose_networks(threads: int = 1) -> dict:
    """The pose detector and landmark networks, through the weights layer."""
    from .runtime import TfliteNet

    return {"detector": TfliteNet.load("mediapipe_pose_detection", threads=threads),
            "landmarks": TfliteNet.load("mediapipe_pose_landmark_full", threads=threads)}


def roi_from_detection(keypoints: np.ndarray) -> g.Rect:
    """``pose_detection_to_roi.pbtxt``: keypoint 0 (hips' centre) -> 1 (full-body scale point)."""
    return g.transform_rect(g.rect_from_alignment_points(keypoints[0], keypoints[1], 90.0),
                            ROI_SCALE, ROI_SCALE, square_long=True)


def roi_from_landmarks(auxiliary: np.ndarray) -> g.Rect:
    """``pose_landmarks_to_roi.pbtxt``: auxiliary landmark 33 -> 34, as the detection's two keypoints."""
    return roi_from_detection(auxiliary)


def landmarks_in(net, image: np.ndarray, rect: g.Rect) -> "PoseResult | None":
    """The landmark network on one region; None when its pose presence is under the threshold."""
    padded = g.pad_to_aspect(rect, LANDMARK_SIZE, LANDMARK_SIZE)
    tensor = g.crop(image, padded, (LANDMARK_SIZE, LANDMARK_SIZE), (0.0, 1.0))
    raw, flag, _segmentation, heatmap, world = net(tensor)
    score = float(np.asarray(flag).ravel()[0])
    if score < PRESENCE_THRESHOLD:
        return None
    values = np.asarray(raw, np.float64).reshape(39, 5)
    tensor_points = refine_from_heatmap(values[:, :2] / LANDMARK_SIZE, np.asarray(heatmap))
    points = g.to_image(tensor_points, padded)
    c, s = np.cos(rect.rotation), np.sin(rect.rotation)
    w = np.asarray(world, np.float64).reshape(39, 3)[:33]
    world_rotated = np.stack([w[:, 0] * c - w[:, 1] * s, w[:, 0] * s + w[:, 1] * c, w[:, 2]], axis=1)
    return PoseResult(points[:33], _sigmoid(values[:33, 3]), _sigmoid(values[:33, 4]), world_rotated, score, rect,
                      points[33:35])


class PoseTracker:
    """One video's pose, frame after frame (feed frames in order; the region is carried between them).

    ``last_reason`` says why :meth:`process` found no pose (``no person detected``, ...).
    """

    def __init__(self, networks: dict, fps: float = 30.0) -> None:
        self.networks = networks
        self.fps = float(fps)
        self.roi: "g.Rect | None" = None
        self.last_reason = ""
        self.detections = 0
        self._smooth: "OneEuroFilter | None" = None

    def _next_roi(self, auxiliary: np.ndarray) -> g.Rect:
        """The next frame's region from this frame's auxiliary landmarks, smoothed as MediaPipe smooths them."""
        if self._smooth is None:
            self._smooth = OneEuroFilter(self.fps, min_cutoff=0.01, beta=10.0, derivative_cutoff=1.0)
        size = g.rect_from_alignment_points(auxiliary[0], auxiliary[1], 90.0).w  # the object's scale (pixels)
        smoothed = self._smooth(auxiliary, value_scale=1.0 / size if size > 0 else 1.0)
        return roi_from_landmarks(smoothed)

    def _from_detection(self, image: np.ndarray) -> "PoseResult | None":
        self.detections += 1
        found = ssd.detect(self.networks["detector"], image, ssd.POSE)
        if not len(found):
            self.last_reason = "no person detected"
            return None
        result = landmarks_in(self.networks["landmarks"], image, roi_from_detection(found.keypoints[0]))
        if result is None:
            self.last_reason = "a person was detected but the landmark model found no pose in its region"
        return result

    def process(self, image: np.ndarray) -> "PoseResult | None":
        """The pose of one uint8 RGB frame, or None (then :attr:`last_reason` says why)."""
        result = None
        if self.roi is not None:
            result = landmarks_in(self.networks["landmarks"], image, self.roi)
        if result is None:
            result = self._from_detection(image)
        if result is None:
            self.roi, self._smooth = None, None  # tracking lost: the filter starts again with the next pose
        else:
            self.roi = self._next_roi(result.auxiliary)
            self.last_reason = ""
        return result

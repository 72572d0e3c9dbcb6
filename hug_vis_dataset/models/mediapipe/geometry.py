"""Rotated regions of interest, the letterboxed crop and the projection back to the image.

Re-derived from MediaPipe's calculators (google-ai-edge/mediapipe, read, not copied):

* ``mediapipe/calculators/util/alignment_points_to_rects_calculator.cc`` (a square box centred on one
  keypoint, twice the distance to a second one) and ``detections_to_rects_calculator.cc``
  (``ComputeRotation``: ``target_angle - atan2(-(y1 - y0), x1 - x0)``, normalised to ``[-pi, pi)``; a box
  from a detection's bounding box);
* ``mediapipe/calculators/util/rect_transformation_calculator.cc`` (shift along the rotated axes, then
  ``square_long``, then scale);
* ``mediapipe/calculators/tensor/image_to_tensor_utils.cc`` (``PadRoi``: the region enlarged to the
  tensor's aspect ratio when ``keep_aspect_ratio``, so the crop is letterboxed;
  ``GetRotatedSubRectToRectTransformMatrix``: tensor coordinates to image coordinates) and
  ``image_to_tensor_converter_opencv.cc`` (the crop: bilinear, zero or replicated border, then the value
  range);
* ``mediapipe/calculators/util/landmark_letterbox_removal_calculator.cc`` +
  ``landmark_projection_calculator.cc`` and ``detection_projection_calculator.cc``: the projection of tensor
  coordinates back to the image. The padded region carries the letterbox, so one affine map of the padded
  region undoes both. It is computed in pixels (the calculators' ``IMAGE_DIMENSIONS`` / matrix form), so a
  rotated region of a non-square image projects exactly where it was cropped.

Everything is in continuous pixel coordinates: the image's top-left corner is ``(0, 0)`` and pixel
``(i, j)`` is the square ``[i, i+1) x [j, j+1)`` (MediaPipe's normalised coordinates times the image size).

Example:
    >>> r = Rect(50.0, 40.0, 20.0, 10.0)
    >>> pad_to_aspect(r, 64, 64).w, pad_to_aspect(r, 64, 64).h
    (20.0, 20.0)
    >>> to_image(np.array([[0.5, 0.5], [0.0, 0.0]]), Rect(50.0, 40.0, 20.0, 20.0)).tolist()
    [[50.0, 40.0], [40.0, 30.0]]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class Rect:
    """A rotated rectangle in pixels: centre, width, height, rotation (radians, clockwise on the screen,
    as MediaPipe's ``NormalizedRect.rotation``)."""

    cx: float
    cy: float
    w: float
    h: float
    rotation: float = 0.0

    def corners(self) -> np.ndarray:
        """The four corners ``(4, 2)``: tensor corners (0,0), (1,0), (1,1), (0,1) in the image."""
        return to_image(np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]), self)


def normalize_radians(angle: float) -> float:
    """``angle`` in ``[-pi, pi)`` (MediaPipe's ``NormalizeRadians``).

    >>> round(normalize_radians(3 * math.pi / 2), 6)
    -1.570796
    """
    return angle - 2 * math.pi * math.floor((angle + math.pi) / (2 * math.pi))


def rotation_between(start: np.ndarray, end: np.ndarray, target_degrees: float) -> float:
    """The rotation that turns the vector ``start -> end`` (pixels) to ``target_degrees`` (counter-clockwise
    from the x axis, y up): ``DetectionsToRectsCalculator::ComputeRotation``.

    >>> rotation_between(np.array([0.0, 0.0]), np.array([0.0, -1.0]), 90.0)  # already pointing up
    0.0
    """
    dx, dy = float(end[0] - start[0]), float(end[1] - start[1])
    return normalize_radians(math.radians(target_degrees) - math.atan2(-dy, dx))


def rect_from_alignment_points(center: np.ndarray, scale_point: np.ndarray, target_degrees: float) -> Rect:
    """``AlignmentPointsRectsCalculator``: a square centred on ``center`` whose side is twice the distance to
    ``scale_point``, rotated so that ``center -> scale_point`` points to ``target_degrees``."""
    side = 2.0 * float(np.hypot(*(np.asarray(scale_point, float) - np.asarray(center, float))))
    return Rect(float(center[0]), float(center[1]), side, side, rotation_between(center, scale_point, target_degrees))


def rect_from_points(points: np.ndarray, start: int, end: int, target_degrees: float) -> Rect:
    """``LandmarksToDetectionCalculator`` + ``DetectionsToRectsCalculator`` (bounding box conversion): the
    axis-aligned bounding box of ``points`` ``(n, 2)``, rotated by the angle of ``points[start] -> points[end]``."""
    points = np.asarray(points, np.float64)
    lo, hi = points.min(axis=0), points.max(axis=0)
    return Rect(float(lo[0] + hi[0]) / 2, float(lo[1] + hi[1]) / 2, float(hi[0] - lo[0]), float(hi[1] - lo[1]),
                rotation_between(points[start], points[end], target_degrees))


def transform_rect(rect: Rect, scale_x: float = 1.0, scale_y: float = 1.0, shift_x: float = 0.0,
                   shift_y: float = 0.0, square_long: bool = False) -> Rect:
    """``RectTransformationCalculator``: shift by fractions of the width/height along the rotated axes, make
    square on the long side, then scale.

    >>> transform_rect(Rect(10.0, 10.0, 4.0, 2.0), 2.0, 2.0, shift_y=-0.5, square_long=True)
    Rect(cx=10.0, cy=9.0, w=8.0, h=8.0, rotation=0.0)
    """
    c, s = math.cos(rect.rotation), math.sin(rect.rotation)
    dx, dy = rect.w * shift_x, rect.h * shift_y
    w, h = rect.w, rect.h
    if square_long:
        w = h = max(w, h)
    return replace(rect, cx=rect.cx + dx * c - dy * s, cy=rect.cy + dx * s + dy * c, w=w * scale_x, h=h * scale_y)


def pad_to_aspect(rect: Rect, tensor_w: int, tensor_h: int) -> Rect:
    """``PadRoi``: the region enlarged (never shrunk) to the tensor's aspect ratio, so the crop keeps the
    image's aspect ratio and the rest of the tensor is letterbox."""
    tensor_aspect, rect_aspect = tensor_h / tensor_w, rect.h / rect.w
    if tensor_aspect > rect_aspect:
        return replace(rect, h=rect.w * tensor_aspect)
    return replace(rect, w=rect.h / tensor_aspect)


def full_image(width: int, height: int) -> Rect:
    """The whole image as a region (``GetRoi`` without a rect)."""
    return Rect(width / 2.0, height / 2.0, float(width), float(height))


def to_image(points: np.ndarray, rect: Rect) -> np.ndarray:
    """Points ``(..., 2)`` in the region's tensor coordinates (``[0, 1]`` across the region) to image pixels.

    The region must be the one that was cropped (the padded one when letterboxed).
    """
    points = np.asarray(points, np.float64)
    c, s = math.cos(rect.rotation), math.sin(rect.rotation)
    u = (points[..., 0] - 0.5) * rect.w
    v = (points[..., 1] - 0.5) * rect.h
    return np.stack([rect.cx + u * c - v * s, rect.cy + u * s + v * c], axis=-1)


def crop(image: np.ndarray, rect: Rect, size: tuple[int, int], value_range: tuple[float, float],
         zero_border: bool = False) -> np.ndarray:
    """The region of ``image`` (uint8 ``(H, W, 3)`` RGB) as a float32 ``(height, width, 3)`` tensor in
    ``value_range``: bilinear, outside the image zero (``BORDER_ZERO``, before the range is applied) or the
    nearest edge pixel (``BORDER_REPLICATE``, MediaPipe's default). Tensor pixel ``(u, v)`` samples the
    image at ``to_image(((u + 0.5) / width, (v + 0.5) / height))``.
    """
    import cv2

    width, height = size
    c, s = math.cos(rect.rotation), math.sin(rect.rotation)
    # destination pixel index -> source pixel index (index = continuous coordinate - 0.5)
    ax, ay = rect.w / width, rect.h / height
    a0, b0 = 0.5 / width - 0.5, 0.5 / height - 0.5
    matrix = np.array([[ax * c, -ay * s, rect.cx - 0.5 + a0 * rect.w * c - b0 * rect.h * s],
                       [ax * s, ay * c, rect.cy - 0.5 + a0 * rect.w * s + b0 * rect.h * c]])
    border = cv2.BORDER_CONSTANT if zero_border else cv2.BORDER_REPLICATE
    patch = cv2.warpAffine(np.ascontiguousarray(image), matrix, (width, height),
                           flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=border, borderValue=0)
    low, high = value_range
    tensor = np.multiply(patch, np.float32((high - low) / 255.0), dtype=np.float32)
    if low:
        tensor += np.float32(low)
    return tensor


def hand_rect_from_landmarks(points: np.ndarray) -> Rect:
    """``HandLandmarksToRectCalculator`` (``hand_landmark/calculators/``) on the 21 hand landmarks: rotation
    from the wrist to the mean of the middle finger's PIP joint and the mean of the index and ring PIP joints
    (90 degrees: fingers up), then the bounding box of every landmark in that rotated frame.

    The calculator names its joints in a 12-point palm subset (index PIP 4, middle PIP 6, ring PIP 8), the
    split its graph once made; in the 21-point list those joints are 6, 10 and 14.
    """
    points = np.asarray(points, np.float64)
    tip = ((points[6] + points[14]) / 2 + points[10]) / 2
    rotation = rotation_between(points[0], tip, 90.0)
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    c, s = math.cos(-rotation), math.sin(-rotation)
    rel = points - centre
    rotated = np.stack([rel[:, 0] * c - rel[:, 1] * s, rel[:, 0] * s + rel[:, 1] * c], axis=1)
    lo, hi = rotated.min(axis=0), rotated.max(axis=0)
    mid = (lo + hi) / 2
    c, s = math.cos(rotation), math.sin(rotation)
    return Rect(float(centre[0] + mid[0] * c - mid[1] * s), float(centre[1] + mid[0] * s + mid[1] * c),
                float(hi[0] - lo[0]), float(hi[1] - lo[1]), rotation)


def keep_tracking(previous: Rect, recrop: Rect, previous_points: np.ndarray, rotation_degrees: float,
                  translation: float, scale: float, margin: float) -> bool:
    """``RoiTrackingCalculator`` (``holistic_landmark/calculators/``): keep the region from the previous
    frame's landmarks when it is close to the re-crop region (rotation within ``rotation_degrees``, centre
    within ``translation`` and size within ``scale`` of the re-crop's size, measured along its axes) and every
    previous landmark lies inside the re-crop region grown by ``margin``."""
    c, s = math.cos(-recrop.rotation), math.sin(-recrop.rotation)

    def along(x, y):
        return x * c - y * s, x * s + y * c

    diff = math.degrees(previous.rotation - recrop.rotation)
    diff = diff - 360 if diff > 180 else diff + 360 if diff < -180 else diff
    px, py = along(previous.cx, previous.cy)
    rx, ry = along(recrop.cx, recrop.cy)
    if (abs(diff) > rotation_degrees or abs(px - rx) > recrop.w * translation or abs(py - ry) > recrop.h * translation
            or abs(previous.w - recrop.w) > recrop.w * scale or abs(previous.h - recrop.h) > recrop.h * scale):
        return False
    half_w, half_h = recrop.w * (1 + margin) / 2, recrop.h * (1 + margin) / 2
    x, y = along(previous_points[:, 0], previous_points[:, 1])
    return bool(np.all((np.abs(x - rx) < half_w) & (np.abs(y - ry) < half_h)))

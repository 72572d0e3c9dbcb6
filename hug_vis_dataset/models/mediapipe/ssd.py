"""SSD anchors, box and keypoint decoding and weighted non-maximum suppression of MediaPipe's detectors.

Re-derived from (google-ai-edge/mediapipe, read, not copied):

* ``mediapipe/calculators/tflite/ssd_anchors_calculator.cc``: per run of layers with the same stride, the
  feature map of ``ceil(input / stride)`` cells, each with one anchor per aspect ratio plus one
  interpolated-scale anchor when ``interpolated_scale_aspect_ratio > 0``; centres at
  ``(x + offset) / feature_map_width``; with ``fixed_anchor_size`` every anchor is 1 x 1;
* ``mediapipe/calculators/tensor/tensors_to_detections_calculator.cc``: ``reverse_output_order`` means
  x, y, w, h order (``XYWH``); centre ``= raw / scale * anchor_size + anchor_centre``, size
  ``= raw / scale * anchor_size``, keypoints as centres; scores clipped to ``+-score_clipping_thresh`` then
  a sigmoid; detections under ``min_score_thresh`` or with a negative size are dropped;
* ``mediapipe/calculators/util/non_max_suppression_calculator.cc``: ``WEIGHTED`` suppression with
  ``INTERSECTION_OVER_UNION``: the best remaining detection absorbs every remaining one overlapping it by
  more than ``min_suppression_threshold`` (itself included), its box corners and keypoints becoming their
  score-weighted means (its score stays).

The options of each detector are those of its graph: ``pose_detection/pose_detection_cpu.pbtxt``,
``palm_detection/palm_detection_cpu.pbtxt``, ``face_detection/face_detection_short_range.pbtxt`` and
``face_detection_full_range.pbtxt`` (through ``face_detection.pbtxt``).

Example:
    >>> len(anchors(POSE)), len(anchors(PALM)), len(anchors(FACE_SHORT)), len(anchors(FACE_FULL))
    (2254, 2016, 896, 2304)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np


@dataclass(frozen=True)
class SsdOptions:
    """One detector's anchor, decoding and suppression options (the names of MediaPipe's protos)."""

    input_size: int
    strides: tuple[int, ...]
    num_keypoints: int
    min_score: float
    value_range: tuple[float, float]
    min_scale: float = 0.1484375
    max_scale: float = 0.75
    interpolated_scale_aspect_ratio: float = 1.0
    score_clipping: float = 100.0
    nms_threshold: float = 0.3

    @property
    def num_coords(self) -> int:
        return 4 + 2 * self.num_keypoints


POSE = SsdOptions(224, (8, 16, 32, 32, 32), num_keypoints=4, min_score=0.5, value_range=(-1.0, 1.0))
PALM = SsdOptions(192, (8, 16, 16, 16), num_keypoints=7, min_score=0.5, value_range=(0.0, 1.0))
FACE_SHORT = SsdOptions(128, (8, 16, 16, 16), num_keypoints=6, min_score=0.5, value_range=(-1.0, 1.0))
FACE_FULL = SsdOptions(192, (4,), num_keypoints=6, min_score=0.6, value_range=(-1.0, 1.0),
                       interpolated_scale_aspect_ratio=0.0)


@lru_cache(maxsize=None)
def anchors(options: SsdOptions) -> np.ndarray:
    """Anchor centres ``(n, 2)`` in tensor coordinates (every anchor is 1 x 1: ``fixed_anchor_size``)."""
    out = []
    strides, layer = options.strides, 0
    while layer < len(strides):
        last = layer
        per_cell = 0
        while last < len(strides) and strides[last] == strides[layer]:
            per_cell += 1 + (options.interpolated_scale_aspect_ratio > 0)  # aspect ratio 1.0 (+ interpolated)
            last += 1
        cells = math.ceil(options.input_size / strides[layer])
        grid = (np.arange(cells, dtype=np.float64) + 0.5) / cells
        ys, xs = np.meshgrid(grid, grid, indexing="ij")
        centres = np.stack([xs.ravel(), ys.ravel()], axis=1)
        out.append(np.repeat(centres, per_cell, axis=0))
        layer = last
    return np.concatenate(out).astype(np.float32)


@dataclass
class Detections:
    """Detections in one coordinate frame: ``boxes`` ``(n, 4)`` as xmin, ymin, xmax, ymax; ``keypoints``
    ``(n, k, 2)``; ``scores`` ``(n,)``."""

    boxes: np.ndarray
    keypoints: np.ndarray
    scores: np.ndarray

    def __len__(self) -> int:
        return len(self.scores)


def decode(raw_boxes: np.ndarray, raw_scores: np.ndarray, options: SsdOptions) -> Detections:
    """Boxes, keypoints and scores ``>= min_score`` in tensor coordinates ([0, 1] across the tensor)."""
    anchor = anchors(options)
    raw = np.asarray(raw_boxes, np.float32).reshape(len(anchor), options.num_coords)
    scale = np.float32(options.input_size)
    logits = np.clip(np.asarray(raw_scores, np.float64).reshape(len(anchor)), -options.score_clipping,
                     options.score_clipping)
    scores = 1.0 / (1.0 + np.exp(-logits))
    keep = np.flatnonzero(scores >= options.min_score)
    raw, anchor = raw[keep], anchor[keep]
    centre = raw[:, 0:2] / scale + anchor
    size = raw[:, 2:4] / scale
    boxes = np.concatenate([centre - size / 2, centre + size / 2], axis=1)
    keypoints = raw[:, 4:].reshape(len(keep), options.num_keypoints, 2) / scale + anchor[:, None, :]
    valid = (size >= 0).all(axis=1)
    return Detections(boxes[valid].astype(np.float64), keypoints[valid].astype(np.float64),
                      scores[keep][valid].astype(np.float64))


def iou(box: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Intersection over union of one box with each of ``boxes`` (0 where they do not intersect)."""
    lo = np.maximum(box[:2], boxes[:, :2])
    hi = np.minimum(box[2:], boxes[:, 2:])
    inter = np.prod(np.clip(hi - lo, 0, None), axis=1)
    area = lambda b: np.prod(b[..., 2:] - b[..., :2], axis=-1)  # noqa: E731 - local shorthand
    union = area(box) + area(boxes) - inter
    return np.where((inter > 0) & (union > 0), inter / np.where(union > 0, union, 1), 0.0)


def weighted_nms(detections: Detections, threshold: float) -> Detections:
    """``NonMaxSuppressionCalculator`` with ``algorithm: WEIGHTED``, best first."""
    order = np.argsort(-detections.scores, kind="stable")
    boxes, keypoints, scores = detections.boxes[order], detections.keypoints[order], detections.scores[order]
    out_boxes, out_keypoints, out_scores = [], [], []
    remaining = np.arange(len(scores))
    while len(remaining):
        best = remaining[0]
        overlap = iou(boxes[best], boxes[remaining]) > threshold
        members = remaining[overlap]
        weights = scores[members][:, None]
        total = weights.sum()
        out_boxes.append((boxes[members] * weights).sum(axis=0) / total)
        out_keypoints.append((keypoints[members] * weights[:, :, None]).sum(axis=0) / total)
        out_scores.append(scores[best])
        if overlap.sum() == 0:  # cannot happen (a box overlaps itself) unless it is empty: stop as MediaPipe does
            break
        remaining = remaining[~overlap]
    k = detections.keypoints.shape[1]
    return Detections(np.array(out_boxes).reshape(-1, 4), np.array(out_keypoints).reshape(-1, k, 2),
                      np.array(out_scores))


def detect(net, image: np.ndarray, options: SsdOptions, region=None) -> Detections:
    """Run a detector on ``image`` (uint8 RGB) or on a ``region`` of it (:class:`~.geometry.Rect`), letterboxed;
    the suppressed detections in image pixels, best first (``*_detection_cpu.pbtxt``, ``face_detection.pbtxt``:
    letterboxed crop, inference, decoding, weighted NMS, projection back through the crop)."""
    from .geometry import crop, full_image, pad_to_aspect, to_image

    height, width = image.shape[:2]
    rect = pad_to_aspect(region if region is not None else full_image(width, height),
                         options.input_size, options.input_size)
    tensor = crop(image, rect, (options.input_size, options.input_size), options.value_range, zero_border=True)
    raw_boxes, raw_scores = net(tensor)[:2]
    found = weighted_nms(decode(raw_boxes, raw_scores, options), options.nms_threshold)
    # Keypoints and the box's corners through the crop (DetectionProjectionCalculator: a rotated region
    # gives the bounding box of the projected corners).
    corners = np.stack([found.boxes[:, [0, 1]], found.boxes[:, [2, 1]], found.boxes[:, [2, 3]],
                        found.boxes[:, [0, 3]]], axis=1)
    projected = to_image(corners, rect)
    boxes = np.concatenate([projected.min(axis=1), projected.max(axis=1)], axis=1)
    return Detections(boxes, to_image(found.keypoints, rect), found.scores)

"""Both hands of the tracked person from the pose, as MediaPipe Holistic finds them.

Re-derived from ``mediapipe/modules/holistic_landmark/`` (google-ai-edge/mediapipe, read, not copied):
``hand_landmarks_left_and_right_cpu.pbtxt`` (pose landmarks 15, 17, 19 are the left wrist, pinky and index,
16, 18, 20 the right ones), ``hand_landmarks_from_pose_cpu.pbtxt``:

* ``hand_visibility_from_hand_landmarks_from_pose.pbtxt``: the pose wrist's visibility must exceed 0.1;
* ``hand_landmarks_from_pose_to_recrop_roi.pbtxt``: ``HandDetectionsFromPoseToRectsCalculator`` (centre at
  the estimated middle finger ``(2 index + pinky) / 3``, side twice its distance to the wrist, rotated so the
  wrist -> middle finger points up), x2.7, shift -0.1 along the hand, ``square_long``;
* ``hand_recrop_by_roi_cpu.pbtxt``: ``hand_recrop.tflite`` on that region (256 x 256, ``[0, 1]``, letterboxed)
  gives two alignment points; ``AlignmentPointsRectsCalculator`` at -90 degrees, shift -0.1,
  ``square_long``;
* ``hand_tracking.pbtxt``: the region from the previous frame's hand landmarks
  (``hand_landmarks_to_roi.pbtxt``: ``HandLandmarksToRectCalculator``, x2, shift -0.1, ``square_long``) is kept
  while ``RoiTrackingCalculator`` allows it (40 degrees, 0.2, 0.4, margin -0.1), else the re-crop region;
* ``hand_landmark/hand_landmark_cpu.pbtxt``: 224 x 224 in ``[0, 1]``, letterboxed; hand presence >= 0.5;
  21 landmarks (x, y, z in tensor pixels) projected back.

Example:
    >>> import numpy as np
    >>> rect = hand_rect_from_pose(np.array([[0.0, 0.0], [-20.0, -30.0], [10.0, -30.0]]))  # fingers up
    >>> round(rect.w, 3), round(rect.rotation, 3), round(rect.cy, 3)
    (162.0, 0.0, -36.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import geometry as g

RECROP_SIZE = 256
LANDMARK_SIZE = 224
PRESENCE_THRESHOLD = 0.5
WRIST_VISIBILITY = 0.1
#: Pose landmark indices (wrist, pinky, index) of each hand; "left" is the person's left hand.
POSE_HAND_POINTS = {"left": (15, 17, 19), "right": (16, 18, 20)}


@dataclass
class HandResult:
    """One hand: ``points`` ``(21, 2)`` pixels, ``world`` ``(21, 3)`` metres, ``score`` its presence."""

    points: np.ndarray
    world: np.ndarray
    score: float
    rect: g.Rect


def load_hand_networks(threads: int = 1) -> dict:
    """The re-crop and hand landmark networks, through the weights layer."""
    from .runtime import TfliteNet

    return {"recrop": TfliteNet.load("mediapipe_hand_recrop", threads=threads),
            "landmarks": TfliteNet.load("mediapipe_hand_landmark_full", threads=threads)}


def hand_rect_from_pose(points: np.ndarray) -> g.Rect:
    """``HandDetectionsFromPoseToRectsCalculator`` + the x2.7 transformation: ``points`` are the pose's wrist,
    pinky and index (pixels)."""
    wrist, pinky, index = (np.asarray(p, np.float64) for p in points)
    middle = (2.0 * index + pinky) / 3.0
    rect = g.rect_from_alignment_points(middle, wrist, 0.0)  # side: twice middle -> wrist
    rect = g.Rect(rect.cx, rect.cy, rect.w, rect.h, g.rotation_between(wrist, middle, 90.0))
    return g.transform_rect(rect, 2.7, 2.7, shift_y=-0.1, square_long=True)


def recrop_rect(net, image: np.ndarray, rect: g.Rect) -> g.Rect:
    """``hand_recrop_by_roi_cpu.pbtxt``: the re-crop network's two points -> the hand's region."""
    padded = g.pad_to_aspect(rect, RECROP_SIZE, RECROP_SIZE)
    (raw,) = net(g.crop(image, padded, (RECROP_SIZE, RECROP_SIZE), (0.0, 1.0)))[:1]
    points = g.to_image(np.asarray(raw, np.float64).reshape(2, 2) / RECROP_SIZE, padded)
    aligned = g.rect_from_alignment_points(points[0], points[1], -90.0)
    return g.transform_rect(aligned, 1.0, 1.0, shift_y=-0.1, square_long=True)


def landmarks_in(net, image: np.ndarray, rect: g.Rect) -> "HandResult | None":
    """The hand landmark network on one region; None when its hand presence is under the threshold."""
    padded = g.pad_to_aspect(rect, LANDMARK_SIZE, LANDMARK_SIZE)
    raw, flag, _handedness, world = net(g.crop(image, padded, (LANDMARK_SIZE, LANDMARK_SIZE), (0.0, 1.0)))
    score = float(np.asarray(flag).ravel()[0])
    if score < PRESENCE_THRESHOLD:
        return None
    values = np.asarray(raw, np.float64).reshape(21, 3)
    c, s = np.cos(rect.rotation), np.sin(rect.rotation)
    w = np.asarray(world, np.float64).reshape(21, 3)
    world_rotated = np.stack([w[:, 0] * c - w[:, 1] * s, w[:, 0] * s + w[:, 1] * c, w[:, 2]], axis=1)
    return HandResult(g.to_image(values[:, :2] / LANDMARK_SIZE, padded), world_rotated, score, rect)


class HandTracker:
    """One hand (``side``: ``left`` or ``right``) of one video, frame after frame, from the pose."""

    def __init__(self, networks: dict, side: str) -> None:
        self.networks = networks
        self.side = side
        self.previous: "HandResult | None" = None
        self.last_reason = ""

    def process(self, image: np.ndarray, pose) -> "HandResult | None":
        """The hand in one frame given its pose (:class:`~.pose.PoseResult` or None)."""
        result = None
        if pose is None:
            self.last_reason = "no pose to find the hand from"
        else:
            wrist, pinky, index = POSE_HAND_POINTS[self.side]
            if pose.visibility[wrist] <= WRIST_VISIBILITY:
                self.last_reason = f"the pose's {self.side} wrist is not visible"
            else:
                rect = recrop_rect(self.networks["recrop"], image, hand_rect_from_pose(pose.points[[wrist, pinky, index]]))
                if self.previous is not None:
                    tracked = g.transform_rect(g.hand_rect_from_landmarks(self.previous.points), 2.0, 2.0,
                                               shift_y=-0.1, square_long=True)
                    if g.keep_tracking(tracked, rect, self.previous.points, 40.0, 0.2, 0.4, -0.1):
                        rect = tracked
                result = landmarks_in(self.networks["landmarks"], image, rect)
                self.last_reason = "" if result is not None else f"no {self.side} hand in its region"
        self.previous = result
        return result

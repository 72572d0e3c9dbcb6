"""The 468-point face mesh of the tracked person, from the pose when there is one, else from the frame.

Re-derived from (google-ai-edge/mediapipe, read, not copied):

* with a pose, MediaPipe Holistic (``holistic_landmark/face_landmarks_from_pose_cpu.pbtxt``):
  ``face_landmarks_from_pose_to_recrop_roi.pbtxt`` (the bounding box of pose landmarks 0-10, rotated by
  pose eye 5 -> eye 2 at 0 degrees, x3, ``square_long``), ``face_detection_short_range_by_roi_cpu``
  (:data:`~.ssd.FACE_SHORT` inside that region), ``face_detection_front_detections_to_roi.pbtxt`` (the
  bounding box of the detection's keypoints, rotated eye 0 -> eye 1, x2, shift -0.1, ``square_long``),
  ``face_tracking.pbtxt`` (the region from the previous landmarks is kept while ``RoiTrackingCalculator``
  allows it: 15 degrees, 0.1, 0.3, margin -0.2);
* without one (a generated head-and-shoulders crop the pose model misses), MediaPipe Face Mesh
  (``face_landmark/face_landmark_front_cpu.pbtxt``) with the full-range detector
  (``face_detection/face_detection_full_range.pbtxt``, :data:`~.ssd.FACE_FULL`: faces up to 5 m, so a
  seated actor in a 1080p frame) and ``face_detection_front_detection_to_roi.pbtxt`` (the detection's box,
  rotated eye 0 -> eye 1, x1.5, ``square_long``); then the previous landmarks' region is used directly;
* ``face_landmark/face_landmark_landmarks_to_roi.pbtxt`` (the bounding box of the 468 landmarks, rotated
  33 -> 263, x1.5, ``square_long``) and ``face_landmark_cpu.pbtxt`` (192 x 192 in ``[0, 1]``, no letterbox;
  face presence = sigmoid of the flag >= 0.5; 468 points in tensor pixels, projected back).

Example:
    >>> len(LIPS), len(set(LIPS)), EYE_CORNERS
    (40, 40, (33, 263))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import geometry as g
from . import ssd

LANDMARK_SIZE = 192
PRESENCE_THRESHOLD = 0.5
#: The lips of the face mesh (MediaPipe's FACEMESH_LIPS points): outer contour, then inner contour.
LIPS: tuple[int, ...] = (61, 146, 91, 181, 84, 17, 314, 405, 321, 375, 291, 185, 40, 39, 37, 0, 267, 269, 270, 409,
                         78, 95, 88, 178, 87, 14, 317, 402, 318, 324, 308, 191, 80, 81, 82, 13, 312, 311, 310, 415)
#: Inner lip midpoints (upper, lower): the mouth's opening.
INNER_LIPS = (13, 14)
#: Outer eye corners (the face's scale and roll).
EYE_CORNERS = (33, 263)


@dataclass
class FaceResult:
    """One face: ``points`` ``(468, 2)`` pixels, ``score`` its presence."""

    points: np.ndarray
    score: float
    rect: g.Rect


def load_face_networks(threads: int = 1) -> dict:
    """The two face detectors and the face mesh network, through the weights layer."""
    from .runtime import TfliteNet

    return {"short": TfliteNet.load("mediapipe_face_detection_short_range", threads=threads),
            "full": TfliteNet.load("mediapipe_face_detection_full_range", threads=threads),
            "landmarks": TfliteNet.load("mediapipe_face_landmark", threads=threads)}


def landmarks_in(net, image: np.ndarray, rect: g.Rect) -> "FaceResult | None":
    """The face mesh network on one region; None when its face presence is under the threshold."""
    raw, flag = net(g.crop(image, rect, (LANDMARK_SIZE, LANDMARK_SIZE), (0.0, 1.0)))[:2]
    score = float(1.0 / (1.0 + np.exp(-np.clip(np.asarray(flag, np.float64).ravel()[0], -80, 80))))
    if score < PRESENCE_THRESHOLD:
        return None
    points = np.asarray(raw, np.float64).reshape(468, 3)[:, :2] / LANDMARK_SIZE
    return FaceResult(g.to_image(points, rect), score, rect)


def rect_from_face_landmarks(points: np.ndarray) -> g.Rect:
    """``face_landmark_landmarks_to_roi.pbtxt`` (and Holistic's ``face_landmarks_to_roi.pbtxt``)."""
    return g.transform_rect(g.rect_from_points(points, *EYE_CORNERS, 0.0), 1.5, 1.5, square_long=True)


def rect_from_pose(pose_points: np.ndarray) -> g.Rect:
    """``face_landmarks_from_pose_to_recrop_roi.pbtxt``: pose landmarks 0-10."""
    return g.transform_rect(g.rect_from_points(pose_points[:11], 5, 2, 0.0), 3.0, 3.0, square_long=True)


class FaceTracker:
    """One video's face, frame after frame (``last_reason`` says why a frame has none)."""

    def __init__(self, networks: dict) -> None:
        self.networks = networks
        self.previous: "FaceResult | None" = None
        self.last_reason = ""

    def _recrop(self, image: np.ndarray, pose) -> "g.Rect | None":
        if pose is not None:
            found = ssd.detect(self.networks["short"], image, ssd.FACE_SHORT, region=rect_from_pose(pose.points))
            if len(found):  # the keypoints' box (USE_KEYPOINTS), eye 0 -> eye 1
                return g.transform_rect(g.rect_from_points(found.keypoints[0], 0, 1, 0.0), 2.0, 2.0, shift_y=-0.1,
                                        square_long=True)
        found = ssd.detect(self.networks["full"], image, ssd.FACE_FULL)
        if not len(found):
            return None
        box, keypoints = found.boxes[0], found.keypoints[0]
        rect = g.Rect(float(box[0] + box[2]) / 2, float(box[1] + box[3]) / 2, float(box[2] - box[0]),
                      float(box[3] - box[1]), g.rotation_between(keypoints[0], keypoints[1], 0.0))
        return g.transform_rect(rect, 1.5, 1.5, square_long=True)

    def process(self, image: np.ndarray, pose=None) -> "FaceResult | None":
        """The face of one uint8 RGB frame (``pose``: its :class:`~.pose.PoseResult`, or None)."""
        tracked = None if self.previous is None else rect_from_face_landmarks(self.previous.points)
        result = None
        if tracked is not None and pose is None:  # Face Mesh: the previous landmarks' region as it is
            result = landmarks_in(self.networks["landmarks"], image, tracked)
        if result is None:
            recrop = self._recrop(image, pose)
            rect = recrop
            if recrop is not None and tracked is not None and pose is not None and \
                    g.keep_tracking(tracked, recrop, self.previous.points, 15.0, 0.1, 0.3, -0.2):
                rect = tracked
            result = None if rect is None else landmarks_in(self.networks["landmarks"], image, rect)
            self.last_reason = ("no face detected" if rect is None else
                                "a face was detected but the face mesh found none in its region" if result is None
                                else "")
        else:
            self.last_reason = ""
        self.previous = result
        return result

"""One person's body, hands and face, frame after frame: what the human-motion metrics are computed from.

The structure of MediaPipe Holistic (``mediapipe/modules/holistic_landmark/holistic_landmark_cpu.pbtxt``):
the pose first (:mod:`~.pose`), then both hands (:mod:`~.hands`) and the face (:mod:`~.face`) from it. Which
parts run is the union of what the requested rows need (``MetricSpec.networks``), and a part's result
never depends on which other parts ran (hands and face always start from the pose), so a metric has one
value whether it is computed alone or with the others.

The networks are LiteRT interpreters on the CPU whatever ``device`` a scorer was given (the ``.tflite``
files have no GPU path here); they are loaded once per process by the scorers' model cache
(:data:`hug_vis_dataset.tasks.models.LOADERS`: ``human_pose``, ``human_hands``, ``human_face``).

Example:
    >>> import skimage.data
    >>> video = VideoLandmarks({"human_pose": load_pose(), "human_face": load_face()})
    >>> frame = video.process(skimage.data.astronaut())
    >>> frame.body.shape, frame.face.shape, bool(np.isnan(frame.hands).all()), frame.reasons["left hand"]
    ((33, 2), (42, 2), True, 'not computed')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from .face import EYE_CORNERS, LIPS, FaceTracker, load_face_networks
from .hands import HandTracker, load_hand_networks
from .pose import PoseTracker, load_pose_networks

#: The hands in the order of :attr:`FrameLandmarks.hands` (the person's left, then right).
SIDES = ("left", "right")
#: The face points kept per frame: the 40 lip points, then the two outer eye corners.
FACE_POINTS = LIPS + EYE_CORNERS


def load_pose(device: str = "cpu") -> dict:
    """The ``human_pose`` networks (the LiteRT CPU interpreter whatever ``device``)."""
    return load_pose_networks()


def load_hands(device: str = "cpu") -> dict:
    """The ``human_hands`` networks."""
    return load_hand_networks()


def load_face(device: str = "cpu") -> dict:
    """The ``human_face`` networks."""
    return load_face_networks()


@dataclass
class FrameLandmarks:
    """One frame's landmarks in pixels; NaN where a part was not found (or not computed).

    Attributes:
        body: ``(33, 2)`` pose landmarks; ``visibility`` ``(33,)`` (0 without a pose); ``world`` ``(33, 3)`` metres.
        hands: ``(2, 21, 2)`` the person's left and right hand; ``hands_world`` ``(2, 21, 3)`` metres.
        face: ``(42, 2)`` :data:`FACE_POINTS` (lips, then outer eye corners).
        reasons: part (``body``, ``face``, ``left hand``, ``right hand``) -> why it is missing ("" when found).
    """

    body: np.ndarray
    visibility: np.ndarray
    world: np.ndarray
    hands: np.ndarray
    hands_world: np.ndarray
    face: np.ndarray
    reasons: dict[str, str] = field(default_factory=dict)


class VideoLandmarks:
    """The landmark trackers of one video; feed its frames in order with :meth:`process`.

    Args:
        networks: model kind -> networks (``human_pose`` is required; ``human_hands`` and ``human_face``
            turn those parts on).
        fps: the video's frame rate (the pose region's smoothing runs in time).
    """

    def __init__(self, networks: Mapping[str, dict], fps: float = 30.0) -> None:
        self.pose = PoseTracker(networks["human_pose"], fps)
        self.hands = ([HandTracker(networks["human_hands"], side) for side in SIDES]
                      if "human_hands" in networks else [])
        self.face = FaceTracker(networks["human_face"]) if "human_face" in networks else None

    def process(self, image: np.ndarray) -> FrameLandmarks:
        """The landmarks of one uint8 RGB frame ``(H, W, 3)``."""
        nan = np.float64("nan")
        pose = self.pose.process(image)
        out = FrameLandmarks(np.full((33, 2), nan), np.zeros(33), np.full((33, 3), nan), np.full((2, 21, 2), nan),
                             np.full((2, 21, 3), nan), np.full((len(FACE_POINTS), 2), nan),
                             {"body": self.pose.last_reason, "face": "not computed",
                              **{f"{side} hand": "not computed" for side in SIDES}})
        if pose is not None:
            out.body, out.visibility, out.world = pose.points, pose.visibility, pose.world
        for index, tracker in enumerate(self.hands):
            hand = tracker.process(image, pose)
            if hand is not None:
                out.hands[index], out.hands_world[index] = hand.points, hand.world
            out.reasons[f"{tracker.side} hand"] = tracker.last_reason
        if self.face is not None:
            face = self.face.process(image, pose)
            if face is not None:
                out.face = face.points[list(FACE_POINTS)]
            out.reasons["face"] = self.face.last_reason
        return out

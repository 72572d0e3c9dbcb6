"""A video's human landmarks over time: what the human-motion metrics (:mod:`.human_motion`) read.

:class:`HumanTrack` holds, per frame, the 33 body landmarks (pixels, visibility, world coordinates in
metres), both hands (21 points each), the 40 lip points and the two outer eye corners, NaN where a part was
not found, with the reasons counted; and, for the clip's driving audio, its speech envelope at the frame
times (:func:`speech_envelope`). :class:`TrackBuilder` collects it frame by frame, so a video is decoded
in chunks and its frames are never kept (about 2 kB per frame of landmarks in float32).

Example:
    >>> builder = TrackBuilder(fps=30.0)
    >>> builder.add(body=np.zeros((33, 2)), visibility=np.ones(33), reasons={"body": ""})
    >>> builder.add(reasons={"body": "no person detected"})
    >>> track = builder.track()
    >>> track.n, track.found("body").tolist(), track.missing["body"]
    (2, [True, False], {'no person detected': 1})
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: Part -> the per-frame array that says whether it was found.
_PART_ARRAYS = {"body": "body", "face": "face"}


@dataclass
class HumanTrack:
    """Landmarks of ``n`` frames (NaN where a part is missing); see the module docstring.

    Attributes:
        fps: the video's frame rate.
        body: ``(n, 33, 2)``; visibility: ``(n, 33)`` (0 where no pose); world: ``(n, 33, 3)``.
        hands: ``(n, 2, 21, 2)`` (the person's left, right); hands_world: ``(n, 2, 21, 3)``.
        face: ``(n, 42, 2)``: the 40 lip points of ``models.mediapipe.face.LIPS``, then eye corners 33 and 263.
        missing: part (``body``, ``hands``, ``face``) -> reason -> frames it was missing for that reason.
        envelope: ``(n,)`` speech envelope of the driving audio at the frame times, or None.
    """

    fps: float
    body: np.ndarray
    visibility: np.ndarray
    world: np.ndarray
    hands: np.ndarray
    hands_world: np.ndarray
    face: np.ndarray
    missing: dict[str, dict[str, int]] = field(default_factory=dict)
    envelope: "np.ndarray | None" = None

    @property
    def n(self) -> int:
        """Frames."""
        return len(self.body)

    def found(self, part: str) -> np.ndarray:
        """``(n,)`` whether ``body`` or ``face`` was found in each frame (``(n, 2)`` per hand for ``hands``)."""
        if part == "hands":
            return ~np.isnan(self.hands[:, :, 0, 0])
        return ~np.isnan(getattr(self, _PART_ARRAYS[part])[:, 0, 0])

    def head(self, n: int) -> "HumanTrack":
        """The first ``n`` frames (pairing a prediction with its reference over their common frames)."""
        cut = lambda a: None if a is None else a[:n]  # noqa: E731 - local shorthand
        return HumanTrack(self.fps, self.body[:n], self.visibility[:n], self.world[:n], self.hands[:n],
                          self.hands_world[:n], self.face[:n], self.missing, cut(self.envelope))


class TrackBuilder:
    """Collects :class:`HumanTrack` one frame at a time (parts not given are missing)."""

    def __init__(self, fps: float) -> None:
        self.fps = float(fps)
        self._frames: dict[str, list[np.ndarray]] = {k: [] for k in
                                                     ("body", "visibility", "world", "hands", "hands_world", "face")}
        self.missing: dict[str, dict[str, int]] = {}

    _SHAPES = {"body": (33, 2), "visibility": (33,), "world": (33, 3), "hands": (2, 21, 2), "hands_world": (2, 21, 3),
               "face": (42, 2)}

    def add(self, reasons: "dict[str, str] | None" = None, **parts: np.ndarray) -> None:
        """One frame: arrays of :attr:`_SHAPES` (NaN or absent where missing) and part -> why it is missing."""
        for key, shape in self._SHAPES.items():
            value = parts.get(key)
            fill = 0.0 if key == "visibility" else np.nan
            array = np.full(shape, fill, np.float32) if value is None else np.asarray(value, np.float32)
            self._frames[key].append(array.reshape(shape))
        for part, reason in (reasons or {}).items():
            if reason:
                counts = self.missing.setdefault(part, {})
                counts[reason] = counts.get(reason, 0) + 1

    def track(self, envelope: "np.ndarray | None" = None) -> HumanTrack:
        """The collected frames (and the driving audio's envelope, when given)."""
        arrays = {k: (np.stack(v) if v else np.zeros((0, *self._SHAPES[k]), np.float32)).astype(np.float64)
                  for k, v in self._frames.items()}
        return HumanTrack(self.fps, missing={k: dict(v) for k, v in self.missing.items()}, envelope=envelope, **arrays)


def speech_envelope(samples: np.ndarray, rate: int, fps: float, frames: int) -> np.ndarray:
    """The driving audio's level at each video frame: the RMS of the mono samples during frame ``t``'s display
    interval ``[t / fps, (t + 1) / fps)``; NaN for a frame past the audio's end.

    Example:
        >>> envelope = speech_envelope(np.r_[np.zeros(100), np.ones(100)], 100, 1.0, 3)
        >>> envelope.tolist()[:2], bool(np.isnan(envelope[2]))
        ([0.0, 1.0], True)
    """
    samples = np.asarray(samples, np.float64)
    if samples.ndim == 2:
        samples = samples.mean(axis=1)
    out = np.full(frames, np.nan)
    for t in range(frames):
        start, stop = int(round(t * rate / fps)), int(round((t + 1) * rate / fps))
        if stop <= len(samples) and stop > start:
            out[t] = float(np.sqrt(np.mean(samples[start:stop] ** 2)))
    return out

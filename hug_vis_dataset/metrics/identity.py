"""Identity similarity (CSIM, paper Tables 5 and 7) and the cosine shared by every embedding metric.

One definition of CSIM for both generation tasks: every generated frame's largest face, aligned
to 112x112, against the aligned face of the clip's source portrait (the dataset's
``source_frame``: the first frame of the reference video); the clip value is the mean cosine over
the frames with a face. Detector and embedder are injected (:mod:`hug_vis_dataset.models.arcface`).

Example:
    >>> import numpy as np
    >>> round(float(cosine_similarity(np.array([1.0, 0.0]), np.array([1.0, 1.0]))), 6)
    0.707107
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine along the last axis of two embeddings or batches of embeddings (broadcast), float64.

    A 1-D pair gives a 0-d array (``float()`` it); ``(n, d)`` against ``(1, d)`` gives ``(n,)``.

    Raises:
        ValueError: last dimensions differ, or an embedding is zero or not finite.
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape[-1:] != b.shape[-1:]:
        raise ValueError(f"embeddings of different length: {a.shape} and {b.shape}")
    na, nb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)
    if np.any(na == 0) or np.any(nb == 0) or not (np.all(np.isfinite(na)) and np.all(np.isfinite(nb))):
        raise ValueError("cannot take the cosine of a zero or non-finite embedding")
    return (a * b).sum(-1) / (na * nb)


@dataclass(frozen=True)
class CsimResult:
    """CSIM of one clip and how many frames entered it."""

    csim: float
    frames_scored: int
    frames_no_face: int


class CsimAccumulator:
    """CSIM over a clip fed chunk by chunk (the one-decode pass feeds it the chunks it decodes once).

    Args:
        source_embedding: the embedding of the aligned source face, ``(1, d)`` (computed once per
            reference: :func:`hug_vis_dataset.tasks.generation.portrait_embedding`).
        detector, embedder: as in :func:`csim_clip`.
        on_detect: called with the detector's output on each fed frame, in order (the audio-driven
            pass hands it to Sync-C/D: :class:`hug_vis_dataset.metrics.sync.SourceDetections`), so
            the detector runs once per frame for both metrics.
    """

    def __init__(self, source_embedding: np.ndarray, detector, embedder, on_detect=None) -> None:
        self.src = np.asarray(source_embedding)
        self.detector, self.embedder, self.on_detect = detector, embedder, on_detect
        self.total, self.scored, self.missing = 0.0, 0, 0

    def feed(self, chunk: np.ndarray) -> None:
        from ..models.arcface import align_face

        faces = []
        for frame in chunk:
            found = self.detector.detect(frame)
            if self.on_detect is not None:
                self.on_detect(found)
            if found:
                faces.append(align_face(frame, found[0][1]))
            else:
                self.missing += 1
        if faces:
            sims = cosine_similarity(self.embedder(np.stack(faces)), self.src)
            self.total += float(sims.sum())
            self.scored += len(faces)

    def result(self) -> CsimResult:
        if self.scored == 0:
            raise ValueError(f"no face detected in any of {self.missing} frames")
        return CsimResult(self.total / self.scored, self.scored, self.missing)


def csim_clip(frames: Iterable[np.ndarray], source_face: np.ndarray, detector, embedder) -> CsimResult:
    """Mean cosine of each frame's largest aligned face to the aligned ``source_face`` (112x112).

    Frames without a detected face are counted (``frames_no_face``), not scored.

    Args:
        frames: iterable of uint8 (n, H, W, 3) chunks.
        source_face: aligned uint8 (112, 112, 3) source face.
        detector: object with ``detect(image) -> [(box, landmarks5, score), ...]`` (largest first).
        embedder: callable (n, 112, 112, 3) uint8 -> (n, d) embeddings.
    """
    accumulator = CsimAccumulator(embedder(np.asarray(source_face)[None]), detector, embedder)
    for chunk in frames:
        accumulator.feed(chunk)
    return accumulator.result()


def aligned_face_of(image: np.ndarray, detector) -> np.ndarray:
    """Largest detected face of an image, aligned to 112x112; raises if none."""
    from ..models.arcface import align_face

    found = detector.detect(np.asarray(image))
    if not found:
        raise ValueError("no face detected in the source image")
    return align_face(image, found[0][1])

"""Real photographs of people shipped in installed packages, made into video frames with known motion.

The framing lives in the library (:mod:`hug_vis_dataset.synth.photos`: ``photo``, ``scene``, ``placement``,
``open_mouth``, ``stretch_neck``...); this helper adds what only the tests need: writing a clip, a syllable
rhythm whose loudness is known, and the check that MediaPipe's models are installed
(``hugvis weights download mediapipe``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hug_vis_dataset.synth.photos import (  # noqa: F401 - the tests' names for the library's framing
    MOUTHS, SIZE, open_mouth, photo, placement, scene, stretch_neck, to_photo)


def write_clip(path: Path, frames, fps: float = 30.0, audio: "np.ndarray | None" = None) -> Path:
    """An H.264 MP4 of the frames (the toolkit's own writer)."""
    from hug_vis_dataset.readers.media import write_video

    frames = np.stack(list(frames))
    write_video(path, [frames], fps=fps, audio=audio, sample_rate=16000, preset="ultrafast")
    return path


def syllables(seconds: float, seed: int, rate: int = 16000) -> tuple[np.ndarray, np.ndarray]:
    """``(samples, envelope)``: noise modulated by a random syllable rhythm (about 4 per second), and that
    modulation (0..1) at every sample: a stand-in for speech whose loudness is known."""
    rng = np.random.default_rng(seed)
    n = int(seconds * rate)
    t = np.arange(n) / rate
    envelope = np.zeros(n)
    start = 0.1
    while start < seconds - 0.1:
        length = rng.uniform(0.12, 0.25)
        envelope += rng.uniform(0.4, 1.0) * np.exp(-0.5 * ((t - start - length / 2) / (length / 4)) ** 2)
        start += length + rng.uniform(0.03, 0.15)
    envelope = np.clip(envelope, 0, 1)
    return (envelope * rng.standard_normal(n) * 0.3).astype(np.float32), envelope


def needs_mediapipe() -> None:
    """Fail (never skip) when MediaPipe's models are missing, naming the command that fetches them."""
    import pytest

    from hug_vis_dataset import weights

    note = weights.missing_note(weights.registry.GROUPS["mediapipe"])
    if note:
        pytest.fail(f"MediaPipe's models are not installed ({note}); the install step runs "
                    "`hugvis weights download mediapipe`")

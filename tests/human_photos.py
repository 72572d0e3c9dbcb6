"""Real photographs of people shipped in installed packages, made into video frames with known motion.

scikit-image's ``data.astronaut()`` (512 x 512) and matplotlib's ``grace_hopper.jpg`` (512 x 600) are
head-and-shoulders portraits. :func:`scene` frames one like a seated half-body clip: scaled to the frame's
height, bottom-aligned (the body goes on below the frame, as it does in HUG-VIS), the sides filled with the
photo's edge pixels, then shifted and zoomed by known amounts; :func:`open_mouth` opens its mouth by a known
number of pixels (the jaw pulled down, a dark cavity between the lips). What the tests know by construction
is this geometry; the landmarks come from MediaPipe's networks (``hugvis weights download mediapipe``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

#: Frame size of the test clips (a 16:9 frame; values do not depend on it: everything is in body units).
SIZE = (640, 360)
#: The mouth of each photo (pixels of the photo): the point between the inner lips, and the jaw's half width.
MOUTHS = {"astronaut": (222.7, 146.1, 38.0, 22.0), "grace": (268.3, 276.8, 48.0, 30.0)}


def photo(name: str) -> np.ndarray:
    """The photograph as uint8 RGB."""
    if name == "astronaut":
        import skimage.data

        return skimage.data.astronaut()
    import matplotlib.cbook as cbook
    import matplotlib.image as mpimg

    return np.ascontiguousarray(mpimg.imread(cbook.get_sample_data("grace_hopper.jpg"))[..., :3])


def placement(image: np.ndarray, dx: float = 0.0, dy: float = 0.0, zoom: float = 1.0, size=SIZE) -> np.ndarray:
    """The 2 x 3 map from photo coordinates to frame coordinates (continuous pixels: corner at 0)."""
    width, height = size
    scale = height / image.shape[0] * zoom
    x0 = width / 2 - image.shape[1] * scale / 2 + dx
    y0 = height - image.shape[0] * scale + dy
    return np.array([[scale, 0.0, x0], [0.0, scale, y0]])


def scene(image: np.ndarray, dx: float = 0.0, dy: float = 0.0, zoom: float = 1.0, size=SIZE) -> np.ndarray:
    """One frame: the photo placed by :func:`placement` (edge pixels replicated around it)."""
    import cv2

    m = placement(image, dx, dy, zoom, size)
    index = m.copy()
    index[:, 2] += 0.5 * (m[0, 0] - 1)  # continuous -> pixel-index coordinates: i' + 0.5 = s (i + 0.5) + t
    return cv2.warpAffine(image, index, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def to_photo(points: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Frame points back to photo coordinates (the inverse of :func:`placement`)."""
    return (np.asarray(points, np.float64) - m[:, 2]) / m[0, 0]


def stretch_neck(frame: np.ndarray, shoulder_y: float, factor: float) -> np.ndarray:
    """Everything above ``shoulder_y`` stretched upwards by ``factor`` (a neck longer by that factor)."""
    import cv2

    height, width = frame.shape[:2]
    ys = np.arange(height, dtype=np.float32)
    source = np.where(ys < shoulder_y, shoulder_y - (shoulder_y - ys) / factor, ys).astype(np.float32)
    return cv2.remap(frame, np.tile(np.arange(width, dtype=np.float32), (height, 1)),
                     np.tile(source[:, None], (1, width)), cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def open_mouth(image: np.ndarray, name: str, opening: float) -> np.ndarray:
    """The photo with its mouth opened by ``opening`` pixels: the lower lip and chin pulled down (fading out
    sideways and under the chin) and a dark cavity between the lips."""
    import cv2

    xm, ym, jaw, half_width = MOUTHS[name]
    height, width = image.shape[:2]
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    weight = np.exp(-((xs - xm) / jaw) ** 2) * np.clip((ys - ym) / 4.0, 0, 1) * np.clip(1 - (ys - ym - 45) / 40, 0, 1)
    opening = float(opening)
    out = cv2.remap(image, xs, (ys - opening * weight).astype(np.float32), cv2.INTER_LINEAR,
                    borderMode=cv2.BORDER_REPLICATE)
    if opening > 0.5:
        out[((xs - xm) / half_width) ** 2 + ((ys - (ym + opening / 2)) / (opening / 2)) ** 2 <= 1] = (60, 20, 25)
    return out


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

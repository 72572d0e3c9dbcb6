"""Matting predictions: a model on chunks of RGB frames -> lossless 8-bit gray PNGs per clip.

The model is any callable ``f(frames) -> alpha`` where ``frames`` is uint8 ``(n, H, W, 3)`` RGB
(a chunk of consecutive frames, in order) and ``alpha`` is ``(n, H, W)``, float in [0, 1] or
uint8. The clip's video is decoded ``chunk_frames`` at a time and each chunk's alpha is written
before the next is decoded, so memory does not grow with the clip's length. A model that reads
the clip itself (``reads_path``) is called once per clip as ``f(video_path)`` and returns the
whole (T, H, W) alpha or, to keep memory flat, an iterable of (n, H, W) chunks in frame order. A stateful model
(recurrent matting) keeps its state between calls; chunks of one clip arrive in order, and
:func:`matte_clip` calls ``f.reset()`` before each clip when the callable has one.

Float alpha becomes ``round(255 * alpha)``. An alpha of the wrong shape, a dtype other than
float or uint8, non-finite values or values outside [0, 1] fail the clip (the PNGs written so
far are discarded).

Baseline: :func:`chroma_key_alpha`, a difference key on the green screen.

Example:
    >>> import numpy as np
    >>> green, skin = [0, 177, 64], [200, 150, 120]
    >>> chroma_key_alpha(np.array([[[green, skin]]], np.uint8)).tolist()
    [[[0.0, 1.0]]]
    >>> alpha_to_uint8(np.array([[[0.0, 0.5, 1.0]]]), (1, 1, 3)).tolist()
    [[[0, 128, 255]]]
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from .runner import FileTask, PredictionError

#: Difference-key thresholds on key = G - max(R, B) (8-bit units): key <= KEY_LOW is foreground
#: (alpha 1), key >= KEY_HIGH is screen (alpha 0), linear in between. A lit green screen has a
#: key near 100-120 ((0, 177, 64) gives 113); skin, hair and clothes are <= 0.
KEY_LOW = 16.0
KEY_HIGH = 48.0


def chroma_key_alpha(frames: np.ndarray, low: float = KEY_LOW, high: float = KEY_HIGH) -> np.ndarray:
    """Alpha of RGB frames over a green screen by the difference key ``G - max(R, B)``.

    ``alpha = clip((high - key) / (high - low), 0, 1)``.

    Args:
        frames: uint8 (..., 3) RGB.
        low, high: key values (8-bit units) of full foreground and full screen.

    Returns:
        float64 alpha of shape ``frames.shape[:-1]``.

    Example:
        >>> chroma_key_alpha(np.array([[10, 42, 10]], np.uint8)).tolist()  # key 32: halfway
        [0.5]
    """
    if high <= low:
        raise ValueError(f"high ({high}) must exceed low ({low})")
    rgb = np.asarray(frames).astype(np.int16)
    key = rgb[..., 1] - np.maximum(rgb[..., 0], rgb[..., 2])
    return np.clip((high - key) / (high - low), 0.0, 1.0)


def alpha_to_uint8(alpha, shape: tuple) -> np.ndarray:
    """Check a model's alpha for a chunk of ``shape`` (n, H, W, ...) and return uint8 (n, H, W).

    ``n`` may be None (any number of frames, for a model that reads the clip itself).

    Raises:
        PredictionError: wrong shape or dtype, non-finite values, values outside [0, 1].
    """
    arr = np.asarray(alpha)
    want = tuple(shape[:3])
    if arr.ndim != 3 or arr.shape[1:] != want[1:] or want[0] not in (None, arr.shape[0]):
        expected = f"(n, {want[1]}, {want[2]})" if want[0] is None else str(want)
        raise PredictionError(f"alpha has shape {arr.shape}, expected {expected} (frames, height, width)")
    if arr.dtype == np.uint8:
        return arr
    if not np.issubdtype(arr.dtype, np.floating):
        raise PredictionError(f"alpha has dtype {arr.dtype}, expected float in [0, 1] or uint8")
    if not np.isfinite(arr).all():
        raise PredictionError("alpha has NaN or infinite values")
    low, high = float(arr.min()), float(arr.max())
    if low < 0.0 or high > 1.0:
        raise PredictionError(f"alpha values span [{low:.4g}, {high:.4g}], expected [0, 1]")
    return np.rint(arr * 255.0).astype(np.uint8)


def matte_chunks(chunks: Iterable[np.ndarray], model: Callable[[np.ndarray], np.ndarray]) -> Iterator[np.ndarray]:
    """uint8 alpha chunks of a stream of RGB chunks, one model call per chunk."""
    for chunk in chunks:
        yield alpha_to_uint8(model(chunk), chunk.shape)


def matte_clip(video: "str | Path", model: Callable[[np.ndarray], np.ndarray], folder: "str | Path",
               chunk_frames: int = 32) -> int:
    """Write the alpha of every frame of ``video`` as ``folder/000000.png ...``; return the count."""
    from ..readers.media import iter_video_frames, write_alpha_pngs

    reset = getattr(model, "reset", None)
    if callable(reset):
        reset()
    return write_alpha_pngs(folder, matte_chunks(iter_video_frames(video, chunk_frames), model))


def matte_clip_path(video: "str | Path", model: Callable, folder: "str | Path", height: int, width: int) -> int:
    """Write the alpha a clip-level model returns for ``model(video_path)``: one (T, H, W) array
    or, to keep memory flat, an iterable of (n, H, W) chunks in frame order."""
    from ..readers.media import write_alpha_pngs

    result = model(str(video))
    chunks = [result] if isinstance(result, np.ndarray) else result
    try:
        iterator = iter(chunks)
    except TypeError:
        raise PredictionError(f"the model returned {type(result).__name__}, expected an alpha array or an "
                              f"iterable of alpha chunks") from None
    return write_alpha_pngs(folder, (alpha_to_uint8(c, (None, height, width)) for c in iterator))


class MattingPrediction(FileTask):
    """``<clip_id>/000000.png ...`` from a matting model; checked against the reference alpha.

    Args:
        model: ``f(frames (n, H, W, 3) uint8) -> alpha (n, H, W)``, or with ``reads_path`` a
            clip-level ``f(video_path) -> alpha (T, H, W) | iterable of (n, H, W) chunks``.
        chunk_frames: frames per call of a frame-chunk model.
        reads_path: the model opens the clip's video itself.
    """

    task = "matting"

    def __init__(self, model: Callable, chunk_frames: int = 32, reads_path: bool = False):
        if chunk_frames < 1:
            raise ValueError(f"chunk_frames must be >= 1, got {chunk_frames}")
        self.model = model
        self.chunk_frames = chunk_frames
        self.reads_path = reads_path

    def output_name(self, clip) -> str:
        return clip.clip_id

    def write(self, clip, path: Path) -> dict:
        from ..references import reference_file

        with reference_file(clip.media["video"], ".mp4") as video:
            if not self.reads_path:
                return {"frames": matte_clip(video, self.model, path, self.chunk_frames)}
            if clip.width and clip.height:
                width, height = clip.width, clip.height
            else:
                from ..readers.media import video_info

                info = video_info(video, count_frames=False)
                width, height = info.width, info.height
            return {"frames": matte_clip_path(video, self.model, path, int(height), int(width))}

    def verify(self, clip, path: Path) -> None:
        from ..references import reference_alpha_info

        n, w, h = reference_alpha_info(path)
        n_ref, w_ref, h_ref = reference_alpha_info(clip.media["alpha"])
        if (n, w, h) != (n_ref, w_ref, h_ref):
            raise PredictionError(f"prediction has {n} frames of {w}x{h}, the reference alpha {n_ref} of "
                                  f"{w_ref}x{h_ref}")

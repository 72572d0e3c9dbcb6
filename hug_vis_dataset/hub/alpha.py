"""Lossless alpha-matte storage for the Hub repo: 8-bit mattes in one video per clip.

The release ships mattes as PNG folders; a Parquet row needs one blob per clip that
``datasets.Video`` (torchcodec + FFmpeg) decodes back to the same 8-bit values. Every codec in
:data:`ALPHA_CODECS` is lossless for 8-bit gray and round-trips bit-exactly through torchcodec
(it returns three equal channels: take channel 0). :func:`measure_alpha_codecs` measures size and
decode time so the choice (:data:`DEFAULT_ALPHA_CODEC`) rests on numbers, which the card reports.

Example:
    >>> import numpy as np
    >>> frames = np.random.default_rng(0).integers(0, 256, (4, 36, 64), dtype=np.uint8)
    >>> blob, n = encode_alpha(iter([frames[:3], frames[3:]]), fps=30.0)
    >>> n, blob[:4] == b"\\x1aE\\xdf\\xa3"          # Matroska/EBML magic
    (4, True)
    >>> np.array_equal(decode_alpha(blob), frames)
    True
    >>> encode_alpha(iter([frames]), 30.0)[0] == blob   # deterministic bytes
    True
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable

import numpy as np


@dataclass(frozen=True)
class AlphaCodec:
    """A lossless way to store an 8-bit gray sequence as one video blob."""

    name: str
    codec: str
    container: str
    extension: str
    pix_fmt: str
    options: tuple[tuple[str, str], ...] = ()


ALPHA_CODECS: dict[str, AlphaCodec] = {
    c.name: c
    for c in (
        AlphaCodec("ffv1", "ffv1", "matroska", "mkv", "gray", (("slices", "4"), ("context", "1"), ("level", "3"))),
        AlphaCodec("png-mov", "png", "mov", "mov", "gray"),
        AlphaCodec("x264rgb-qp0", "libx264rgb", "mp4", "mp4", "rgb24", (("qp", "0"), ("preset", "medium"))),
        AlphaCodec("x264rgb-qp0-fast", "libx264rgb", "mp4", "mp4", "rgb24", (("qp", "0"), ("preset", "ultrafast"))),
    )
}
#: Chosen by :func:`measure_alpha_codecs` on synthetic mattes (see ALPHA_MEASUREMENT in card.py):
#: FFV1 is the smallest bit-exact codec and decodes fastest through torchcodec.
DEFAULT_ALPHA_CODEC = "ffv1"


def _codec(name: str) -> AlphaCodec:
    try:
        return ALPHA_CODECS[name]
    except KeyError:
        raise ValueError(f"unknown alpha codec {name!r}; expected one of {', '.join(ALPHA_CODECS)}") from None


def encode_alpha(chunks: Iterable[np.ndarray], fps: float, codec: str = DEFAULT_ALPHA_CODEC) -> tuple[bytes, int]:
    """Encode uint8 (n, H, W) chunks losslessly; return (blob, frame count).

    Chunks are encoded as they arrive, so memory holds one chunk plus the compressed blob.
    Muxing uses FFmpeg's ``bitexact`` flag (no random segment UID, no encoder version string)
    and one thread, so the same frames always give the same bytes.

    Raises:
        ValueError: a frame is not uint8 (H, W), frame sizes differ, or there are no frames.
    """
    import av

    spec = _codec(codec)
    buffer = io.BytesIO()
    count = 0
    with av.open(buffer, mode="w", format=spec.container, options={"fflags": "+bitexact"}) as container:
        stream = None
        for chunk in chunks:
            chunk = np.asarray(chunk)
            if chunk.dtype != np.uint8 or chunk.ndim != 3:
                raise ValueError(f"alpha chunks must be uint8 (n, H, W), got {chunk.dtype} {chunk.shape}")
            for frame in chunk:
                if stream is None:
                    stream = container.add_stream(spec.codec, rate=Fraction(fps).limit_denominator(1001))
                    stream.width, stream.height = frame.shape[1], frame.shape[0]
                    stream.pix_fmt = spec.pix_fmt
                    stream.options = {**dict(spec.options), "threads": "1"}
                    stream.codec_context.thread_count = 1
                    shape = frame.shape
                elif frame.shape != shape:
                    raise ValueError(f"alpha frame {count} is {frame.shape}, earlier frames are {shape}")
                if spec.pix_fmt == "gray":
                    video_frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(frame), format="gray")
                else:
                    video_frame = av.VideoFrame.from_ndarray(np.repeat(frame[..., None], 3, axis=2), format="rgb24")
                for packet in stream.encode(video_frame):
                    container.mux(packet)
                count += 1
        if stream is None:
            raise ValueError("no alpha frames to encode")
        for packet in stream.encode():
            container.mux(packet)
    return buffer.getvalue(), count


def decode_alpha(blob: "bytes | str", start: int = 0, stop: "int | None" = None) -> np.ndarray:
    """Decode frames ``start:stop`` of an alpha blob (or file) with torchcodec: uint8 (n, H, W).

    This is exactly the path ``datasets.Video`` takes, so a test of this function is a test
    of what users get.
    """
    from torchcodec.decoders import VideoDecoder

    decoder = VideoDecoder(blob, dimension_order="NHWC")
    stop = len(decoder) if stop is None else stop
    return decoder.get_frames_in_range(start, stop).data.numpy()[..., 0]


def alpha_from_decoder(decoder, chunk_frames: int = 32) -> "Iterable[np.ndarray]":
    """Yield uint8 (n, H, W) chunks from a ``datasets.Video`` value (a torchcodec VideoDecoder).

    Handles either dimension order; memory holds one chunk.
    """
    height = decoder.metadata.height
    for start in range(0, len(decoder), chunk_frames):
        data = decoder.get_frames_in_range(start, min(start + chunk_frames, len(decoder))).data.numpy()
        # NCHW has 3 at axis 1; NHWC has the height there (a 3-pixel-high matte is not a thing).
        yield data[:, 0] if data.shape[1] == 3 and height != 3 else data[..., 0]


@dataclass(frozen=True)
class CodecMeasurement:
    codec: str
    bytes: int
    png_bytes: int
    decode_seconds: float
    exact: bool

    @property
    def size_vs_png(self) -> float:
        return self.bytes / self.png_bytes if self.png_bytes else float("nan")


def measure_alpha_codecs(frames: np.ndarray, fps: float = 30.0, repeats: int = 3,
                         codecs: "Iterable[str] | None" = None) -> list[CodecMeasurement]:
    """Size, torchcodec decode time (best of ``repeats``) and exactness of each codec on ``frames``.

    ``png_bytes`` is the size of the same frames as release-style PNGs (cv2, compression 6).
    """
    import cv2

    frames = np.asarray(frames)
    png_bytes = sum(len(cv2.imencode(".png", f, [cv2.IMWRITE_PNG_COMPRESSION, 6])[1]) for f in frames)
    results = []
    for name in codecs or ALPHA_CODECS:
        blob, _ = encode_alpha(iter([frames]), fps, name)
        best = float("inf")
        decoded = None
        for _ in range(repeats):
            t0 = time.perf_counter()
            decoded = decode_alpha(blob)
            best = min(best, time.perf_counter() - t0)
        results.append(CodecMeasurement(name, len(blob), png_bytes, best, bool(np.array_equal(decoded, frames))))
    return results

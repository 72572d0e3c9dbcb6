"""Ordinary processing, as named transforms: what every pipeline does to video, alpha and audio.

Each transform is deterministic (same input, same output: encoders run single-threaded with fixed
options) and changes only what its description says. Frame count, frame rate, frame size, sample
rate and sample count are always kept, so the scorer's checks pass and a metric sees only the
processing:

=====================  ======  ==============================================================
name                   medium  what it does
=====================  ======  ==============================================================
identity               all     nothing (the bytes are copied)
h264_crf18/23/28       video   H.264 (libx264, yuv420p, preset medium) at CRF 18, 23, 28
h265_crf28             video   H.265 (libx265, yuv420p, preset medium) at CRF 28
vp9_crf32              video   VP9 (libvpx-vp9, yuv420p, constant quality 32, cpu-used 4)
fps_30_25_30           video   frame-rate conversion to 25 fps and back, nearest frame (FFmpeg's
                               ``fps`` filter rounding), stored losslessly
scale_720p_roundtrip   video   scaled by 2/3 (1080p -> 720p) and back, bicubic, stored losslessly
shift_1frame           video   delayed by one frame (first frame repeated, last one dropped)
aac_128k               audio   AAC-LC (FFmpeg's encoder) at 128 kbit/s, decoded back to PCM
mp3_128k               audio   MP3 (LAME) at 128 kbit/s, decoded back
opus_64k               audio   Opus (libopus) at 64 kbit/s, decoded back
shift_40ms             audio   delayed by 40 ms (silence in front, the tail dropped)
=====================  ======  ==============================================================

Alpha mattes (matting) take the video transforms the way a matte travels as a video: the gray
matte becomes limited-range luma (``Y = 16 + round(219 a / 255)``, flat chroma), is encoded, and
the decoded luma is mapped back (``a = round(255 (Y - 16) / 219)``); the result is written as PNGs.
Lossless outputs are FFV1 (``.mkv``, RGB): only the named change reaches the metric. Audio of
a video (audio-driven generation) is carried as AAC at 128 kbit/s by the video transforms (say so
when reading Sync shifts) and receives the audio transforms; the video is then stored losslessly.

Example:
    >>> [t.name for t in TRANSFORMS if t.medium == "audio"]
    ['aac_128k', 'mp3_128k', 'opus_64k', 'shift_40ms']
    >>> a = np.arange(6, dtype=np.uint8)[:, None, None].repeat(2, 1).repeat(2, 2)
    >>> resample_frame_rate(a, 30, 25)[:, 0, 0].tolist()   # 6 frames at 30 fps -> 5 at 25 fps
    [0, 1, 2, 4, 5]
"""

from __future__ import annotations

import io
import shutil
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ..readers.media import X264_REPRODUCIBLE
from ..names import require_all_known, require_known


@dataclass(frozen=True)
class Transform:
    """One named processing step.

    Attributes:
        name: the transform's name (part of the pseudo-system's model name).
        medium: ``video`` (also applied to alpha mattes) or ``audio``.
        description: what it does, in words.
        encoder: the encoder it needs (checked against PyAV's build), or ``""``.
    """

    name: str
    medium: str
    description: str
    encoder: str = ""


IDENTITY = "identity"
TRANSFORMS: tuple[Transform, ...] = (
    Transform("h264_crf18", "video", "H.264 (libx264) CRF 18", "libx264"),
    Transform("h264_crf23", "video", "H.264 (libx264) CRF 23", "libx264"),
    Transform("h264_crf28", "video", "H.264 (libx264) CRF 28", "libx264"),
    Transform("h265_crf28", "video", "H.265 (libx265) CRF 28", "libx265"),
    Transform("vp9_crf32", "video", "VP9 (libvpx-vp9) CQ 32", "libvpx-vp9"),
    Transform("fps_30_25_30", "video", "frame rate to 25 fps and back (nearest frame)", "ffv1"),
    Transform("scale_720p_roundtrip", "video", "scale x2/3 and back (1080p -> 720p -> 1080p), bicubic", "ffv1"),
    Transform("shift_1frame", "video", "video delayed by one frame", "ffv1"),
    Transform("aac_128k", "audio", "AAC-LC 128 kbit/s", "aac"),
    Transform("mp3_128k", "audio", "MP3 (LAME) 128 kbit/s", "libmp3lame"),
    Transform("opus_64k", "audio", "Opus 64 kbit/s", "libopus"),
    Transform("shift_40ms", "audio", "audio delayed by 40 ms", ""),
)
_BY_NAME = {t.name: t for t in TRANSFORMS}
# Encoders' options: single-threaded with fixed settings, so the same input gives the same bytes.
_VIDEO_CODECS = {
    "h264_crf18": ("libx264", {"crf": "18", "preset": "medium", "threads": "1", "x264-params": X264_REPRODUCIBLE}),
    "h264_crf23": ("libx264", {"crf": "23", "preset": "medium", "threads": "1", "x264-params": X264_REPRODUCIBLE}),
    "h264_crf28": ("libx264", {"crf": "28", "preset": "medium", "threads": "1", "x264-params": X264_REPRODUCIBLE}),
    "h265_crf28": ("libx265", {"crf": "28", "preset": "medium",
                               "x265-params": "pools=none:frame-threads=1:log-level=none"}),
    "vp9_crf32": ("libvpx-vp9", {"crf": "32", "b": "0", "cpu-used": "4", "threads": "1", "row-mt": "0",
                                 "lag-in-frames": "0"}),
}
_AUDIO_CODECS = {"aac_128k": ("aac", "mp4", 128_000), "mp3_128k": ("libmp3lame", "mp3", 128_000),
                 "opus_64k": ("libopus", "ogg", 64_000)}
_OPUS_RATES = (8000, 12000, 16000, 24000, 48000)
#: Audio carried by video transforms of a video with sound.
CARRIER_AUDIO = ("aac", 128_000)


def get(name: str) -> Transform:
    """The transform called ``name``; :class:`~hug_vis_dataset.names.UnknownNameError` naming the known ones."""
    if name == IDENTITY:
        return Transform(IDENTITY, "all", "untouched (bytes copied)")
    return _BY_NAME[require_known("transform", name, [IDENTITY, *_BY_NAME])]


def unavailable(names: Iterable[str]) -> dict[str, str]:
    """Transforms whose encoder this PyAV build lacks -> why (they are skipped, and said so)."""
    import av

    out = {}
    for name in names:
        encoder = get(name).encoder
        if encoder and encoder not in av.codecs_available:
            out[name] = f"PyAV {av.__version__} has no {encoder} encoder"
    return out


# ----------------------------------------------------------------------------- frame operations
def resample_frame_rate(frames: np.ndarray, rate_in: float, rate_out: float) -> np.ndarray:
    """Frames at ``rate_out`` picked from frames at ``rate_in`` by nearest timestamp.

    Output frame ``j`` (time ``j / rate_out``) takes input frame ``round(j rate_in / rate_out)``
    (halves rounded up, as FFmpeg's ``fps`` filter's default ``round=near``), for
    ``round(n rate_out / rate_in)`` output frames.
    """
    n = frames.shape[0]
    ratio = Fraction(rate_in).limit_denominator(1001) / Fraction(rate_out).limit_denominator(1001)
    count = max(1, int(Fraction(n) / ratio + Fraction(1, 2)))
    picks = [min(n - 1, int(j * ratio + Fraction(1, 2))) for j in range(count)]
    return frames[picks]


def fps_roundtrip(frames: np.ndarray, rate: float, via: float = 25.0) -> np.ndarray:
    """Down to ``via`` fps and back to ``rate``, with the original frame count kept."""
    out = resample_frame_rate(resample_frame_rate(frames, rate, via), via, rate)
    if out.shape[0] < frames.shape[0]:  # rounding of the two counts: repeat the last frame
        out = np.concatenate([out, np.repeat(out[-1:], frames.shape[0] - out.shape[0], 0)])
    return out[: frames.shape[0]]


def scale_roundtrip(frames: np.ndarray, factor: float = 2 / 3) -> np.ndarray:
    """Each frame resized by ``factor`` (even size) and back to its size, bicubic (cv2, FFmpeg's default kernel)."""
    import cv2

    h, w = frames.shape[1:3]
    small = (max(2, 2 * round(w * factor / 2)), max(2, 2 * round(h * factor / 2)))
    out = np.empty_like(frames)
    for i, frame in enumerate(frames):
        down = cv2.resize(frame, small, interpolation=cv2.INTER_CUBIC)
        out[i] = cv2.resize(down, (w, h), interpolation=cv2.INTER_CUBIC)  # uint8 in, saturated uint8 out
    return out


def shift_frames(frames: np.ndarray, shift: int = 1) -> np.ndarray:
    """Delayed by ``shift`` frames: the first frame repeated in front, the tail dropped."""
    if shift <= 0 or frames.shape[0] <= 1:
        return frames.copy()
    shift = min(shift, frames.shape[0] - 1)
    return np.concatenate([np.repeat(frames[:1], shift, 0), frames[:-shift]])


def shift_audio(audio: np.ndarray, sample_rate: int, seconds: float = 0.040) -> np.ndarray:
    """Delayed by ``seconds``: silence in front, the same number of samples."""
    k = min(audio.shape[0], int(round(seconds * sample_rate)))
    return np.concatenate([np.zeros(k, audio.dtype), audio[: audio.shape[0] - k]])


# ----------------------------------------------------------------------------- codecs
def _gray_to_yuv(alpha: np.ndarray) -> np.ndarray:
    """An 8-bit matte as limited-range yuv420p (flat chroma), FFmpeg's planar array layout."""
    h, w = alpha.shape
    y = (16 + np.round(alpha.astype(np.float64) * 219.0 / 255.0)).astype(np.uint8)
    chroma = np.full((h // 2, w), 128, np.uint8)
    return np.concatenate([y, chroma])


def _yuv_to_gray(y: np.ndarray) -> np.ndarray:
    return np.clip(np.round((y.astype(np.float64) - 16.0) * 255.0 / 219.0), 0, 255).astype(np.uint8)


def encode_frames(frames: np.ndarray, name: str, rate: float, path: "str | Path | None" = None,
                  gray: bool = False, audio: "np.ndarray | None" = None, sample_rate: int = 16000) -> "bytes | None":
    """Encode frames with the codec of transform ``name`` (RGB ``(n, H, W, 3)`` or, with ``gray``, mattes).

    Lossless transforms write FFV1 RGB. With ``path`` the file is written (container from its
    suffix) and ``None`` returned; else the encoded MKV bytes are returned.
    """
    import av

    from ..readers.media import rgb_to_yuv420p

    codec, options = _VIDEO_CODECS.get(name, ("ffv1", {"threads": "1", "slices": "4", "level": "3"}))
    target = str(path) if path is not None else io.BytesIO()
    fmt = None if path is not None else "matroska"
    fr = Fraction(rate).limit_denominator(1001)
    # bitexact: no random segment UID or muxing date, so the same frames give the same bytes
    with av.open(target, mode="w", format=fmt, options={"fflags": "+bitexact"}) as container:
        stream = container.add_stream(codec, rate=fr)
        stream.width, stream.height = frames.shape[2], frames.shape[1]
        stream.pix_fmt = "bgr0" if codec == "ffv1" and not gray else ("gray" if codec == "ffv1" else "yuv420p")
        stream.options = dict(options)
        stream.codec_context.thread_count = 1
        astream = None
        if audio is not None:
            astream = container.add_stream(CARRIER_AUDIO[0], rate=sample_rate)
            astream.layout, astream.bit_rate = "mono", CARRIER_AUDIO[1]
        for i, image in enumerate(frames):
            if stream.pix_fmt == "yuv420p":
                planar = _gray_to_yuv(image) if gray else rgb_to_yuv420p(image)
                frame = av.VideoFrame.from_ndarray(planar, format="yuv420p")
            elif gray:
                frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image), format="gray")
            else:
                frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(image), format="rgb24").reformat(format="bgr0")
            frame.pts, frame.time_base = i, 1 / fr
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
        if astream is not None:
            _encode_audio_stream(container, astream, audio, sample_rate)
    return None if path is not None else target.getvalue()


def _encode_audio_stream(container, astream, audio: np.ndarray, sample_rate: int) -> None:
    import av

    mono = np.asarray(audio, dtype=np.float32).reshape(1, -1)
    block = astream.codec_context.frame_size or 1024
    for start in range(0, mono.shape[1], block):
        frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(mono[:, start:start + block]), format="flt",
                                           layout="mono")
        frame.sample_rate, frame.pts = sample_rate, start
        for packet in astream.encode(frame):
            container.mux(packet)
    for packet in astream.encode():
        container.mux(packet)


def decode_frames(data: "bytes | str | Path", gray: bool = False) -> np.ndarray:
    """All frames of an encoded video as RGB uint8 (or, with ``gray``, the matte mapped back from luma)."""
    import av

    source = io.BytesIO(data) if isinstance(data, bytes) else str(data)
    out = []
    with av.open(source) as container:
        stream = container.streams.video[0]
        stream.codec_context.thread_count = 1
        for frame in container.decode(stream):
            if gray:
                plane = frame.to_ndarray(format="gray") if frame.format.name == "gray" else \
                    _yuv_to_gray(frame.to_ndarray(format="yuv420p")[: frame.height])
                out.append(plane)
            else:
                out.append(frame.to_ndarray(format="rgb24"))
    return np.stack(out)


def process_alpha(frames: np.ndarray, name: str, rate: float) -> np.ndarray:
    """A matte clip ``(n, H, W)`` after video transform ``name`` (see the module doc)."""
    if name == IDENTITY:
        return frames.copy()
    if name in _FRAME_LEVEL:
        return process_video_frames(frames, name, rate)
    return decode_frames(encode_frames(frames, name, rate, gray=True), gray=True)


#: The transforms applied to decoded frames (the codec transforms encode instead).
_FRAME_LEVEL = {"fps_30_25_30": lambda frames, rate: fps_roundtrip(frames, rate),
                "scale_720p_roundtrip": lambda frames, rate: scale_roundtrip(frames),
                "shift_1frame": lambda frames, rate: shift_frames(frames)}


def process_video_frames(frames: np.ndarray, name: str, rate: float) -> np.ndarray:
    """RGB (or matte) frames after a frame-level video transform; other names leave them as they are."""
    return _FRAME_LEVEL[name](frames, rate) if name in _FRAME_LEVEL else frames


def process_audio(audio: np.ndarray, sample_rate: int, name: str) -> np.ndarray:
    """Mono float32 audio after audio transform ``name``, same rate and number of samples.

    A codec's priming samples are removed by the decoder as FFmpeg does by default (the
    container's skip/edit information); what remains is cut or zero-padded to the original length.
    """
    audio = np.asarray(audio, dtype=np.float32)
    if name == IDENTITY:
        return audio.copy()
    if name == "shift_40ms":
        return shift_audio(audio, sample_rate)
    import av

    codec, fmt, bit_rate = _AUDIO_CODECS[name]
    rate = sample_rate if codec != "libopus" or sample_rate in _OPUS_RATES else 48000
    signal = audio if rate == sample_rate else _resample(audio, sample_rate, rate)
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format=fmt, options={"fflags": "+bitexact"}) as container:
        stream = container.add_stream(codec, rate=rate)
        stream.layout, stream.bit_rate = "mono", bit_rate
        stream.codec_context.thread_count = 1
        _encode_audio_stream(container, stream, signal, rate)
    buffer.seek(0)
    parts, decoded_rate = [], rate
    with av.open(buffer) as container:
        for frame in container.decode(container.streams.audio[0]):
            decoded_rate = frame.sample_rate  # FFmpeg's Opus decoder always gives 48 kHz
            parts.append(frame.to_ndarray().astype(np.float32).reshape(-1, frame.samples)[0])
    decoded = np.concatenate(parts) if parts else np.zeros(0, np.float32)
    if decoded_rate != sample_rate:
        decoded = _resample(decoded, decoded_rate, sample_rate)
    return _fit(decoded, audio.shape[0])


def _resample(audio: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    from ..readers.media import resample

    return resample(audio, rate_in, rate_out).astype(np.float32)


def _fit(audio: np.ndarray, n: int) -> np.ndarray:
    return audio[:n] if audio.shape[0] >= n else np.concatenate([audio, np.zeros(n - audio.shape[0], np.float32)])


# ----------------------------------------------------------------------------- files
def read_video(path: "str | Path") -> "tuple[np.ndarray, float, np.ndarray | None, int]":
    """RGB frames, frame rate, mono float32 audio (None when the file has none) and its rate."""
    import av

    from ..readers.media import video_info

    frames = decode_frames(path)
    rate = video_info(path, count_frames=False).fps
    audio, sample_rate = None, 16000
    with av.open(str(path)) as container:
        if container.streams.audio:
            stream = container.streams.audio[0]
            sample_rate = stream.codec_context.sample_rate
            parts = [f.to_ndarray().astype(np.float32).reshape(-1, f.samples).mean(0) for f in container.decode(stream)]
            audio = np.concatenate(parts) if parts else None
    return frames, rate, audio, int(sample_rate)


def transform_video_file(src: "str | Path", dst: "str | Path", name: str) -> Path:
    """Write ``src`` (a video) processed by transform ``name`` to ``dst`` (its suffix: ``.mp4`` or ``.mkv``).

    Codec transforms re-encode the decoded frames; frame and audio transforms store the frames
    losslessly (FFV1) so that only the named change remains.
    """
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    if name == IDENTITY:
        shutil.copyfile(src, dst)
        return dst
    frames, rate, audio, sample_rate = read_video(src)
    medium = get(name).medium
    if medium == "audio":
        if audio is None:
            raise ValueError(f"{src} has no audio track for transform {name}")
        audio = process_audio(audio, sample_rate, name)
        codec_name = "lossless"
    else:
        frames = process_video_frames(frames, name, rate)
        codec_name = name
    encode_frames(frames, codec_name, rate, path=dst, audio=audio, sample_rate=sample_rate)
    return dst


def output_suffix(name: str) -> str:
    """The file suffix a transformed video is stored with (MP4 for H.264/H.265, MKV otherwise)."""
    return ".mp4" if name.startswith(("h264", "h265")) else ".mkv"


def names(medium: str, chosen: "Sequence[str] | None" = None) -> list[str]:
    """The transforms of a medium (``video``, ``alpha`` or ``audio``), optionally a chosen subset, in table order."""
    kind = "video" if medium == "alpha" else medium
    out = [t.name for t in TRANSFORMS if t.medium == kind]
    if chosen is not None:
        # Checked against this medium's transforms: one of another medium would otherwise be dropped unsaid.
        require_all_known("transform", [c for c in chosen if c != IDENTITY], out, where="--transforms",
                          fix=f"choose from the {kind} transforms {', '.join(out)} (hugvis audit robustness --help "
                          "lists them)", option=True)
        out = [n for n in out if n in chosen]
    return out

"""Reading and writing clip media in bounded chunks.

Video goes through PyAV (it bundles FFmpeg with libx264/AAC, so writing H.264 works from a
wheel); alpha mattes are 8-bit single-channel PNG sequences or a lossless video; audio goes
through soundfile. Readers yield chunks of frames so memory does not grow with clip length.

Example:
    >>> import numpy as np, tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> frames = np.zeros((3, 16, 16), np.uint8)
    >>> write_alpha_pngs(os.path.join(d, "a"), iter([frames]))
    3
    >>> sum(len(c) for c in iter_alpha_frames(os.path.join(d, "a")))
    3
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from ..errors import HugvisError
from . import InputFileError
from .media_files import MEDIA_FIX, frames_problem, video_stream_problem, wav_layout
from .regular_files import check_regular

DEFAULT_CHUNK_FRAMES = 32
# x264 settings for byte-reproducible output. Measured here under CPU load: with only threads=1
# the same frames encoded to 2-5 different byte streams in 40-60 runs; pinning every x264 thread
# was not enough, turning off macroblock-tree rate control (mbtree=0) was (1 stream in 60 runs).
X264_REPRODUCIBLE = ("threads=1:lookahead-threads=1:sync-lookahead=0:sliced-threads=0:"
                     "non-deterministic=0:mbtree=0")
_FRAME_RE = re.compile(r"^(\d+)\.png$", re.IGNORECASE | re.ASCII)  # frame 1 is "000001", never "\u0661"
# A matte video decoded to RGB must have equal channels; lossy gray encodes may leave a level or
# two of chroma noise, a colour video differs by far more.
MATTE_CHANNEL_TOLERANCE = 3


class MediaError(HugvisError, RuntimeError):
    """A media file is missing, unreadable or not of the expected kind."""


class MediaHeaderError(MediaError, InputFileError):
    """A media file whose header does not match its payload (cut short, a size that lies): a
    :class:`MediaError` to the scorers (the clip fails, naming the file) and an
    :class:`~hug_vis_dataset.readers.InputFileError` (file, place, problem, fix) to everyone else."""


class MediaFileError(MediaError, InputFileError):
    """Not a regular file or too large (``regular_files.py``), or not scored as it is (``video_stream_problem``)."""


def _header_error(err: InputFileError) -> MediaHeaderError:
    return MediaHeaderError(err.path, err.where, err.problem, err.fix)


def _regular(path: "str | Path", what: str, kind: str = "media file") -> None:
    """The one file-kind rule before FFmpeg, libsndfile or OpenCV reads ``path`` (``what``: "read video")."""
    try:
        check_regular(path, kind, MediaFileError)
    except OSError as err:  # missing, a folder, no permission
        raise MediaError(f"cannot {what} {path}: {'missing' if isinstance(err, FileNotFoundError) else err}") from err


def video_stream(container, path: "str | Path"):
    """The container's first video stream, if scored as decoded (else :class:`MediaFileError`, in words)."""
    if problem := video_stream_problem(container):
        raise MediaFileError(path, "", *problem)
    return container.streams.video[0]


def check_decoded(path: "str | Path", decoded: int, declared: int, unit: str = "frames", slack: int = 0) -> None:
    """Raise :class:`MediaHeaderError` when a decode delivered fewer ``unit`` than the header declares.

    Example:
        >>> try:
        ...     check_decoded("clip.mp4", 3, 20)
        ... except MediaError as err:
        ...     print(err)
        clip.mp4: its header says 20 frames but the file holds 3 (truncated); replace it with a complete copy of the file
    """
    problem = frames_problem(decoded, declared, unit, slack)
    if problem:
        raise MediaHeaderError(path, "", problem, MEDIA_FIX)


def _expected_frames(stream) -> "tuple[int, int]":
    """(frames the container's header declares, frames it may be off by): the stream's frame count
    exactly (MP4 ``stsz``), else the video stream's own duration x rate give or take a frame; nothing
    (0, 0) when only the container's duration is known (Matroska/WebM often): that spans every stream,
    so an audio track longer than the picture (an Opus track's padding) would read as missing frames."""
    if stream.frames:
        return int(stream.frames), 0
    rate = float(stream.average_rate or 0)
    seconds = float(stream.duration * stream.time_base) if stream.duration and stream.time_base else 0.0
    return (int(round(seconds * rate)), 1) if rate and seconds else (0, 0)


class ChunkBuffers:
    """Chunk arrays for a decoder: a chunk is refilled only when nothing but this object refers to it.

    Two arrays alternate: the one handed out two chunks ago is refilled when no consumer kept it, nor
    any view of it (a view holds its base, so it shows in the reference count); otherwise it is left to
    its keeper and a new array is allocated. A plain ``for chunk in ...`` loop still holds the previous
    chunk while the next one is decoded, hence two. Why: a fresh 200 MB chunk per 32 frames of 1080p
    is page-faulted in by the kernel; decoding a 6 s 1080p pair measured 0.6-1.1 s of system CPU with a
    fresh array per chunk against 0.1-0.6 s refilled (the rest is PyAV's own).

    Example:
        >>> buffers = ChunkBuffers()
        >>> first = buffers.take((2, 3)); first_id = id(first); del first
        >>> second = buffers.take((2, 3))
        >>> id(buffers.take((2, 3))) == first_id  # the first was dropped: refilled
        True
        >>> buffers.take((2, 3)) is second  # the second is still held: a new array
        False
    """

    def __init__(self) -> None:
        self._older: "np.ndarray | None" = None
        self._newer: "np.ndarray | None" = None

    def take(self, shape: tuple[int, ...]) -> np.ndarray:
        """An uninitialised uint8 array of ``shape`` that no one else refers to."""
        candidate, self._older = self._older, None
        # 2 = the local name + getrefcount's argument: no consumer, no view.
        if candidate is None or candidate.shape != shape or sys.getrefcount(candidate) != 2:
            candidate = np.empty(shape, np.uint8)
        self._older, self._newer = self._newer, candidate
        return candidate


# ----------------------------------------------------------------------------- video
@dataclass(frozen=True)
class VideoInfo:
    frames: int
    fps: float
    width: int
    height: int
    duration: float


def video_info(path: "str | Path", count_frames: bool = True, decode_first: bool = False) -> VideoInfo:
    """Frame count, rate and size of a video, without decoding it.

    The count comes from demuxing: one packet per frame for the codecs the release and its
    submissions use (H.264, FFV1, PNG/gray video), packets an edit list discards excluded. It
    equals the decoded count (``tests/test_one_decode.py`` checks it on B-frame H.264, FFV1 and
    a video with an audio track) at a fraction of the cost: a 1080p frame takes about 10 ms to
    decode and microseconds to demux.

    Args:
        count_frames: count packets even when the header gives a count (headers can be wrong).
        decode_first: also decode the first frame, so an undecodable stream (a renamed text
            file, a truncated header) is a :class:`MediaError` here, not in the middle of scoring.
    """
    import av

    _regular(path, "read video")
    try:
        with av.open(str(path)) as container:
            stream = video_stream(container, path)
            fps = float(stream.average_rate or stream.guessed_rate or 0)
            frames = stream.frames
            if count_frames or not frames:
                declared, slack = _expected_frames(stream)
                packets = discarded = 0
                for packet in container.demux(stream):
                    if packet.size:
                        _check_packet(path, packet)
                        packets += 1
                        discarded += bool(getattr(packet, "is_discard", False))
                frames = packets - discarded
                # A file cut at a packet boundary demuxes without an error: only the header knows.
                check_decoded(path, packets, declared, slack=slack)
            width, height = stream.codec_context.width, stream.codec_context.height
        if decode_first:
            with av.open(str(path)) as container:
                if next(container.decode(video=0), None) is None:
                    raise MediaError(f"cannot decode video {path}: no frame decodes")
    except (av.error.FFmpegError, IndexError, OSError) as err:
        raise MediaError(f"cannot read video {path}: {err}") from err
    return VideoInfo(int(frames), fps, width, height, frames / fps if fps else 0.0)


def count_decoded_frames(path: "str | Path") -> int:
    """Frames a full decode yields (the slow count :func:`video_info` avoids; tests compare the two)."""
    import av

    _regular(path, "decode video")
    try:
        with av.open(str(path)) as container:
            return sum(1 for _ in container.decode(video_stream(container, path)))
    except (av.error.FFmpegError, IndexError, OSError) as err:
        raise MediaError(f"cannot decode video {path}: {err}") from err


def iter_video_frames(
    path: "str | Path", chunk_frames: int = DEFAULT_CHUNK_FRAMES, gray: bool = False
) -> Iterator[np.ndarray]:
    """Yield uint8 arrays of shape (n, H, W, 3) (or (n, H, W) with ``gray``) of at most ``chunk_frames``.

    Each frame is copied into its chunk as it is decoded, so a chunk costs its own bytes plus one
    frame (a list of frames stacked at the end held every frame twice). A consumer may keep a chunk
    or a view of it: chunk arrays are refilled only when no one holds them (:class:`ChunkBuffers`).

    Once the stream ends, the frames decoded are compared with the container's header (during the
    one decode, no second pass): a file cut short that still opens (``moov`` at the front, a cut at
    a packet boundary, Matroska) raises :class:`MediaHeaderError` naming it instead of yielding fewer
    frames as a complete clip.
    """
    import av

    fmt = "gray" if gray else "rgb24"
    buffers = ChunkBuffers()
    chunk: "np.ndarray | None" = None
    filled = decoded = discarded = 0
    _regular(path, "decode video")
    try:
        with av.open(str(path)) as container:
            stream = video_stream(container, path)
            stream.thread_type = "AUTO"
            declared, slack = _expected_frames(stream)
            for frame in _decode(path, container, stream):
                if frame is None:  # a packet an edit list discards: the header counts it, no frame comes
                    discarded += 1
                    continue
                decoded += 1
                arr = frame.to_ndarray(format=fmt)
                if chunk is None:
                    chunk = buffers.take((chunk_frames, *arr.shape))
                elif arr.shape != chunk.shape[1:]:
                    raise MediaError(f"video {path} changes frame size mid-stream ({chunk.shape[1:]} -> {arr.shape})")
                chunk[filled] = arr
                # Dropped now, not when the next frame replaces it: held across the next decode, it made
                # glibc shrink and regrow the heap by a frame per frame (measured at 1080p: 180 k page
                # faults, 0.4-1.2 s of system CPU per 6 s video, against 6 k faults once dropped).
                del arr
                filled += 1
                if filled == chunk_frames:
                    full, chunk, filled = chunk, None, 0
                    yield full
                    del full  # the buffers' reference counts must see only the consumer's
    except (av.error.FFmpegError, IndexError, OSError) as err:
        raise MediaError(f"cannot decode video {path}: {err}") from err
    check_decoded(path, decoded + discarded, declared, slack=slack)
    if filled:
        yield chunk[:filled]


def _check_packet(path: "str | Path", packet) -> None:
    """A packet the demuxer read short of its indexed size (the file ends inside it) is refused:
    decoders may conceal the missing bytes and return a damaged frame as a good one."""
    if packet.is_corrupt:
        where = f"byte {packet.pos}" if packet.pos is not None and packet.pos >= 0 else ""
        raise MediaHeaderError(path, where, f"a packet of {packet.size} bytes is cut short or damaged (truncated)",
                               MEDIA_FIX)


def _decode(path: "str | Path", container, stream) -> Iterator:
    """``container.decode(stream)``, packet by packet, with None for each packet marked discard;
    a packet cut short raises (:func:`_check_packet`)."""
    for packet in container.demux(stream):
        if packet.size:
            _check_packet(path, packet)
            if getattr(packet, "is_discard", False):
                yield None
        yield from packet.decode()


def write_video(
    path: "str | Path",
    chunks: Iterable[np.ndarray],
    fps: float = 30.0,
    crf: int = 18,
    audio: "np.ndarray | None" = None,
    sample_rate: int = 16000,
    codec: str = "libx264",
    preset: str = "medium",
) -> int:
    """Write RGB uint8 chunks (n, H, W, 3) as H.264 (yuv420p) MP4, optionally with AAC audio.

    Returns the number of frames written. The RGB -> YUV conversion is exact integer arithmetic
    (:func:`rgb_to_yuv420p`) and x264 runs with :data:`X264_REPRODUCIBLE`, so the same frames give
    the same bytes (tested under CPU load).
    """
    import av

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with av.open(str(path), mode="w") as container:
        stream = None
        for chunk in chunks:
            for rgb in chunk:
                if stream is None:
                    rate = Fraction(fps).limit_denominator(1001)
                    stream = container.add_stream(codec, rate=rate)
                    stream.width, stream.height = rgb.shape[1], rgb.shape[0]
                    stream.pix_fmt = "yuv420p" if codec == "libx264" else "rgb24"
                    stream.options = {"crf": str(crf), "threads": "1", "preset": preset}
                    if codec == "libx264":
                        stream.options["x264-params"] = X264_REPRODUCIBLE
                    stream.codec_context.thread_count = 1
                    if audio is not None:
                        astream = container.add_stream("aac", rate=sample_rate)
                        astream.layout = "mono"
                if stream.pix_fmt == "yuv420p":
                    frame = av.VideoFrame.from_ndarray(rgb_to_yuv420p(np.asarray(rgb)), format="yuv420p")
                else:
                    frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgb), format=stream.pix_fmt)
                frame.pts = written  # explicit timestamps: nothing left for the encoder to guess
                frame.time_base = 1 / rate
                for packet in stream.encode(frame):
                    container.mux(packet)
                written += 1
        if stream is None:
            raise MediaError(f"no frames to write to {path}")
        for packet in stream.encode():
            container.mux(packet)
        if audio is not None:
            _mux_audio(container, astream, audio, sample_rate)
    return written


def rgb_to_yuv420p(rgb: np.ndarray) -> np.ndarray:
    """BT.601 limited-range YUV 4:2:0 of an even-sized uint8 RGB frame, as FFmpeg's
    ``yuv420p`` array (Y rows, then U and V rows of half width stacked: shape (H * 3 / 2, W)).

    Done in numpy rather than by PyAV's swscale call, whose automatic slice threading gave
    different bytes for the same frames from run to run under CPU load (measured here); this
    conversion is exact integer arithmetic, the same on every machine.

    Example:
        >>> rgb_to_yuv420p(np.full((2, 2, 3), 255, np.uint8))[:2].tolist()  # white: Y = 235
        [[235, 235], [235, 235]]
    """
    h, w, _ = rgb.shape
    if h % 2 or w % 2:
        raise ValueError(f"yuv420p needs an even frame size, got {w}x{h}")
    r, g, b = (rgb[..., i].astype(np.int32) for i in range(3))
    # ITU-R BT.601 in 8-bit fixed point (coefficients x256), rounded, limited range
    y = ((66 * r + 129 * g + 25 * b + 128) >> 8) + 16
    # chroma from the mean of each 2x2 block (rounded), as 4:2:0 subsampling centres it
    def pool(c):
        return (c[0::2, 0::2] + c[1::2, 0::2] + c[0::2, 1::2] + c[1::2, 1::2] + 2) >> 2
    rp, gp, bp = pool(r), pool(g), pool(b)
    u = ((-38 * rp - 74 * gp + 112 * bp + 128) >> 8) + 128
    v = ((112 * rp - 94 * gp - 18 * bp + 128) >> 8) + 128
    planes = [np.clip(p, 0, 255).astype(np.uint8).ravel() for p in (y, u, v)]
    return np.concatenate(planes).reshape(h * 3 // 2, w)


def _mux_audio(container, astream, audio: np.ndarray, sample_rate: int) -> None:
    import av

    mono = np.asarray(audio, dtype=np.float32).reshape(1, -1)
    block = 1024
    for start in range(0, mono.shape[1], block):
        frame = av.AudioFrame.from_ndarray(mono[:, start : start + block].copy(), format="fltp", layout="mono")
        frame.sample_rate = sample_rate
        frame.pts = start
        for packet in astream.encode(frame):
            container.mux(packet)
    for packet in astream.encode():
        container.mux(packet)


# ----------------------------------------------------------------------------- alpha
def read_png_gray(path: "str | Path") -> np.ndarray:
    """Read an 8-bit single-channel PNG; raise :class:`MediaError` for anything else."""
    import cv2

    _regular(path, "read PNG", "image")  # not a FIFO, a device, nor a huge file
    data = np.fromfile(str(path), dtype=np.uint8)
    if data.size == 0:
        raise MediaError(f"empty PNG {path}")
    image = cv2.imdecode(data, cv2.IMREAD_UNCHANGED)
    if image is None:
        raise MediaError(f"corrupt PNG {path}")
    if image.dtype != np.uint8:
        raise MediaError(f"PNG {path} is {image.dtype}, expected 8-bit")
    if image.ndim != 2:
        raise MediaError(f"PNG {path} has {image.shape[2]} channels, expected 1 (grayscale)")
    return image


def alpha_frame_files(folder: "str | Path") -> dict[int, Path]:
    """Map frame index -> PNG path, by the number in each file name (never by sorted order)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MediaError(f"alpha folder {folder} does not exist")
    found: dict[int, Path] = {}
    for entry in folder.iterdir():
        match = _FRAME_RE.fullmatch(entry.name)
        if match:
            index = int(match[1])
            if index in found:
                raise MediaError(f"two PNGs for frame {index} in {folder}: {found[index].name}, {entry.name}")
            found[index] = entry
            check_regular(entry, "image", MediaFileError)  # listed = readable: no FIFO frame waits in the scorer
    return found


def iter_alpha_frames(
    source: "str | Path", chunk_frames: int = DEFAULT_CHUNK_FRAMES
) -> Iterator[np.ndarray]:
    """Yield uint8 (n, H, W) chunks of an alpha clip: a PNG folder (frames 0..T-1) or a video.

    A matte is single-channel: PNGs must be 8-bit gray, and a video must decode to equal
    R, G and B (a gray pixel format, or flat chroma) within :data:`MATTE_CHANNEL_TOLERANCE`
    levels; the first channel is returned.

    Raises:
        MediaError: a PNG folder with a gap in its frame numbers, an unreadable frame, a colour
            PNG, or a video with colour (it is not a matte; scoring its first channel would
            give a meaningless value).
    """
    source = Path(source)
    if source.is_dir():
        files = alpha_frame_files(source)
        if not files:
            raise MediaError(f"no alpha PNG frames in {source}")
        missing = sorted(set(range(max(files) + 1)) - set(files))
        if missing:
            raise MediaError(f"alpha folder {source} lacks frames {missing[:10]}")
        buffers = ChunkBuffers()
        for start in range(0, len(files), chunk_frames):
            indices = range(start, min(start + chunk_frames, len(files)))
            chunk = None
            for k, index in enumerate(indices):  # into the chunk as read: no list of frames beside it
                frame = read_png_gray(files[index])
                if chunk is None:
                    chunk = buffers.take((len(indices), *frame.shape))
                elif frame.shape != chunk.shape[1:]:
                    raise MediaError(f"alpha frame {files[index]} is {frame.shape[1]}x{frame.shape[0]}, the clip's "
                                     f"earlier frames {chunk.shape[2]}x{chunk.shape[1]}")
                chunk[k] = frame
            yield chunk
    else:
        # Lossless video mattes decode to 3 equal channels: keep the first, after checking they are.
        done = 0
        for chunk in iter_video_frames(source, chunk_frames, gray=False):
            spread = chunk.max(axis=-1) - chunk.min(axis=-1)
            per_frame = spread.reshape(len(chunk), -1).max(axis=1)
            if per_frame.max() > MATTE_CHANNEL_TOLERANCE:
                first = int(np.argmax(per_frame > MATTE_CHANNEL_TOLERANCE))
                raise MediaError(
                    f"matte video {source} is not single-channel: frame {done + first} has colour (R, G, B differ "
                    f"by up to {int(per_frame.max())} levels); write the matte as 8-bit gray PNGs or a gray video")
            done += len(chunk)
            yield chunk[..., 0]


def write_alpha_pngs(folder: "str | Path", chunks: Iterable[np.ndarray], start: int = 0) -> int:
    """Write uint8 (n, H, W) chunks as ``000000.png ...``; returns the number of frames."""
    import cv2

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    index = start
    for chunk in chunks:
        for frame in np.asarray(chunk):
            if frame.dtype != np.uint8 or frame.ndim != 2:
                raise ValueError("alpha frames must be uint8 (H, W)")
            ok, buf = cv2.imencode(".png", frame, [cv2.IMWRITE_PNG_COMPRESSION, 6])
            if not ok:
                raise MediaError(f"PNG encoding failed for frame {index}")
            (folder / f"{index:06d}.png").write_bytes(buf.tobytes())
            index += 1
    return index - start


# ----------------------------------------------------------------------------- audio
def _wav_frames(source: "str | Path | bytes", name: "str | Path") -> "int | None":
    """The frames a WAV's chunk headers declare (None: not a WAV), its sizes checked against the file."""
    try:
        layout = wav_layout(source, name)
    except InputFileError as err:
        raise _header_error(err) from None
    except OSError as err:
        raise MediaError(f"cannot read audio {name}: {err}") from err
    return None if layout is None else layout.frames


def decode_audio(source: "str | Path | bytes", name: "str | Path", mono: bool = True) -> tuple[np.ndarray, int]:
    """float32 samples and rate of a sound file or its bytes, every sample the header declares.

    A WAV's chunk sizes are checked against the file first (:func:`~hug_vis_dataset.readers.media_files.wav_layout`:
    libsndfile reads a cut file, or a ``data`` size that lies, as fewer samples without a word), and
    the samples decoded are compared with the header's count (FLAC, OGG: their own header's).

    Raises:
        MediaHeaderError: header and payload disagree (naming ``name``).
        MediaError: not a sound file libsndfile reads.
    """
    import io

    import soundfile as sf

    if not isinstance(source, (bytes, bytearray, memoryview)):
        _regular(source, "read audio")
    declared = _wav_frames(source, name)
    try:
        with sf.SoundFile(io.BytesIO(bytes(source)) if isinstance(source, (bytes, bytearray, memoryview))
                          else str(source)) as handle:
            header = declared if declared is not None else int(handle.frames)
            data, rate = handle.read(dtype="float32", always_2d=True), int(handle.samplerate)
    except (sf.LibsndfileError, RuntimeError, OSError) as err:
        raise MediaError(f"cannot read audio {name}: {err}") from err
    check_decoded(name, len(data), header, "samples")
    if declared is not None and len(data) != declared:  # libsndfile read past what the header declares
        raise MediaHeaderError(name, "", f"its header says {declared} samples but {len(data)} decode", MEDIA_FIX)
    return (data.mean(axis=1) if mono else data), rate


def read_audio(path: "str | Path", mono: bool = True) -> tuple[np.ndarray, int]:
    """Read a sound file as float32 (mono by channel mean unless ``mono=False``), checked by :func:`decode_audio`."""
    return decode_audio(path, path, mono)


def audio_info(path: "str | Path") -> tuple[int, int, int]:
    """(frames, sample_rate, channels) from the header, without decoding.

    A WAV's chunk sizes are checked against the file's size (O(header)), so a file cut short is a
    :class:`MediaHeaderError` here, not a shorter clip: libsndfile's own count shrinks to fit the file.
    """
    import soundfile as sf

    _regular(path, "read audio")
    declared = _wav_frames(path, path)
    try:
        info = sf.info(str(path))
    except (sf.LibsndfileError, RuntimeError, OSError) as err:
        raise MediaError(f"cannot read audio {path}: {err}") from err
    if declared is not None and declared != int(info.frames):
        raise MediaHeaderError(path, "", f"its header says {declared} samples but {int(info.frames)} can be read",
                               MEDIA_FIX)
    return int(info.frames), int(info.samplerate), int(info.channels)


def downmix_note(path: "str | Path") -> "str | None":
    """The note to keep with a value computed from a multi-channel file (None for mono): the
    readers average channels to mono, which must not happen silently.

    Example:
        >>> import tempfile, os
        >>> p = os.path.join(tempfile.mkdtemp(), "s.wav")
        >>> import soundfile as sf; sf.write(p, np.zeros((8, 2)), 16000)
        >>> downmix_note(p)
        's.wav has 2 channels; scored on their mean (mono)'
    """
    _, _, channels = audio_info(path)
    return f"{Path(path).name} has {channels} channels; scored on their mean (mono)" if channels > 1 else None


def resample(audio: np.ndarray, rate_in: int, rate_out: int) -> np.ndarray:
    """Polyphase resampling (scipy), exact rational ratio; a no-op when the rates agree."""
    if rate_in == rate_out:
        return np.asarray(audio, dtype=np.float32)
    from math import gcd

    from scipy.signal import resample_poly

    g = gcd(rate_in, rate_out)
    return resample_poly(audio, rate_out // g, rate_in // g).astype(np.float32)


def write_wav(path: "str | Path", audio: np.ndarray, sample_rate: int) -> None:
    """Write 16-bit PCM WAV (what the release ships)."""
    import soundfile as sf

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(path), np.clip(audio, -1.0, 1.0), sample_rate, subtype="PCM_16")


def paired_video_chunks(pred_path, ref_path, chunk_frames: int = 32) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Aligned (pred, ref) chunks over the common frame prefix of two videos (any chunk sizes)."""
    pit, rit = iter_video_frames(pred_path, chunk_frames), iter_video_frames(ref_path, chunk_frames)
    pbuf = rbuf = None
    while True:
        # A spent chunk (an empty view still holds its array) is dropped before the next is decoded.
        if pbuf is None or len(pbuf) == 0:
            pbuf = None
            pbuf = next(pit, None)
        if rbuf is None or len(rbuf) == 0:
            rbuf = None
            rbuf = next(rit, None)
        if pbuf is None or rbuf is None:
            return
        n = min(len(pbuf), len(rbuf))
        yield pbuf[:n], rbuf[:n]
        pbuf, rbuf = pbuf[n:], rbuf[n:]

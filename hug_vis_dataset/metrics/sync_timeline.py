"""The Sync-C / Sync-D front end of the reference pipelines: 25 fps frame timeline and 16 kHz audio.

syncnet_python (``run_pipeline.py``) and LatentSync (``eval/syncnet_detect.py``) first convert the
video with ``ffmpeg -i in -qscale:v 2 -async 1 -r 25 out`` (``-r`` as an *output* option), extract
the frames of ``out`` as JPEGs and its audio with ``-ac 1 -vn -acodec pcm_s16le -ar 16000``.
This module reproduces both steps without running ffmpeg:

* :func:`ffmpeg_rate_indices` -- which source frame each 25 fps output frame shows. ffmpeg's
  frame-rate conversion (``fftools`` video sync, not the ``fps`` filter) keeps a frame until the
  timeline has drifted by more than 1.1 output frames (mp4, constant-rate sync) or 0.6 (avi,
  variable-rate sync), so for 30 / 29.97 / 50 / 60 fps sources the early source frames are held
  and the output runs 0.8-1.6 frames later than nearest-frame resampling, with 1-3 more frames.
* :func:`video_audio_16k` -- the clip's audio as LatentSync reads it: mono, 16 kHz, 16-bit, through
  ffmpeg's default resampler (libswresample), with no delay.

Checked against Debian's ``ffmpeg`` 5.1 on bar-coded videos (``tests/test_sync_timeline.py``).

Example:
    >>> ffmpeg_rate_indices(16, 30).tolist()  # 30 fps: frame 13 is the first one dropped
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15]
    >>> ffmpeg_rate_indices(16, 30, container="avi").tolist()  # syncnet_python's video.avi
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15]
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Iterator

import numpy as np

from ..errors import InputFileError
from ..readers.regular_files import check_regular

SYNC_TIMELINE_FPS = 25
"""Frame rate of the SyncNet timeline (the reference pipelines' ``-r 25``)."""

SYNC_AUDIO_RATE = 16000
"""Sample rate of the SyncNet audio (the reference pipelines' ``-ar 16000``)."""

CONTAINERS = ("mp4", "avi")
"""Output containers of the ``-r 25`` conversion: ``mp4`` is LatentSync's ``video.mp4`` (ffmpeg's
constant-frame-rate sync), ``avi`` is syncnet_python's ``pyavi/video.avi`` (ffmpeg forces
variable-frame-rate sync for avi; the gaps are filled when the frames are extracted)."""

SYNC_FRONT_END_NOTE = (
    "Sync-C and Sync-D are computed on the timeline of the reference pipelines: the video is put on "
    "25 fps exactly as LatentSync's `ffmpeg -i in -r 25 video.mp4` does it, so for a 30 fps clip ffmpeg "
    "holds early frames and the 25 fps timeline runs 0.8-1.6 frames later than nearest-frame resampling "
    "(checked frame by frame against ffmpeg 5.1 at 24, 25, 29.97, 30, 50 and 60 fps). "
    "The audio is the clip's own track as LatentSync extracts it: mono, 16 kHz, 16-bit, through ffmpeg's "
    "default resampler, with no delay. "
    "syncnet_python's own pipeline differs in two details that we do not copy: it writes `video.avi`, "
    "where ffmpeg drops a slightly different set of frames, and it re-encodes the audio to MP3, which "
    "delays it by 23-69 ms. "
    "Matching the reference timeline, rather than resampling to the physically nearest frames, keeps our "
    "Sync-C / Sync-D comparable with published numbers for inputs that are not 25 fps."
)
"""For the Sync module card: what the front end reproduces and why."""

# ffmpeg's fftools video sync (ffmpeg 4.4-5.1 ``do_video_out``; the same rules in 6.x/7.x's
# ``video_sync_process``): a frame is dropped when it falls this many output frames behind the
# output clock (constant rate) or more than VFR_DROP behind (variable rate), and duplicated when
# it is CFR_DUP ahead.
_CFR_DROP = -1.1
_CFR_DUP = 1.1
_VFR_DROP = -0.6
_VFR_JUMP = 0.6
# ffmpeg adds 2**-17 output frames to every timestamp "to avoid exact midpoints".
_MIDPOINT_NUDGE = 1.0 / (1 << 17)


class SyncTimelineError(ValueError):
    """Arguments that give no 25 fps timeline (non-positive rate, negative frame count, unknown container)."""


def as_frame_rate(fps: "float | int | Fraction") -> Fraction:
    """The exact frame rate ffmpeg works with, from a float, int or :class:`~fractions.Fraction`.

    Floats within 0.005 of an NTSC rate ``k * 1000 / 1001`` (23.976, 29.97, 59.94 ...) are read as
    that fraction, because containers store 29.97 fps as 30000/1001; other floats become the
    nearest fraction with a denominator of at most 1001.

    Example:
        >>> as_frame_rate(29.97), as_frame_rate(30.0), as_frame_rate(Fraction(24000, 1001))
        (Fraction(30000, 1001), Fraction(30, 1), Fraction(24000, 1001))
    """
    if isinstance(fps, (Fraction, int)) and not isinstance(fps, bool):
        rate = Fraction(fps)
    else:
        value = float(fps)
        if not math.isfinite(value):
            raise SyncTimelineError(f"frame rate must be finite, got {fps}")
        ntsc = Fraction(round(value * 1.001) * 1000, 1001)
        rate = ntsc if ntsc > 0 and abs(value - float(ntsc)) < 0.005 else Fraction(value).limit_denominator(1001)
    if rate <= 0:
        raise SyncTimelineError(f"frame rate must be positive, got {fps}")
    return rate


def _lrintf(x: float) -> int:
    """C ``lrintf``: round a float32 to the nearest integer, halves to even."""
    return int(np.rint(np.float32(x)))


def _llrint(x: float) -> int:
    """C ``llrint`` on a double: nearest integer, halves to even."""
    return int(np.rint(np.float64(x)))


def _encoder_times(n_frames: int, source_fps: Fraction, target_fps: Fraction) -> Iterator[float]:
    """Timestamp of each source frame ``i`` (at ``i / source_fps`` s) in output frames, as ffmpeg sees it.

    ffmpeg rescales the pts into the encoder time base ``1 / target_fps`` refined by ``extra_bits``
    binary digits (rounding halves away from zero), then adds :data:`_MIDPOINT_NUDGE`.
    """
    tb_num, tb_den = target_fps.denominator, target_fps.numerator  # encoder time base 1 / target_fps
    extra_bits = min(max(29 - (tb_den.bit_length() - 1), 0), 16)
    scale = Fraction(tb_den << extra_bits, tb_num)
    for i in range(n_frames):
        ticks = i / source_fps * scale
        yield math.floor(ticks + Fraction(1, 2)) / (1 << extra_bits) + _MIDPOINT_NUDGE


def _frame_duration(source_fps: Fraction, target_fps: Fraction) -> float:
    """A source frame's duration in output frames as ffmpeg's video sync uses it.

    The packet duration rounded to whole output frames when that is at least one (``lrintf``,
    so 0.5 rounds to 0), otherwise the exact ratio capped at one output frame.
    """
    ratio = float(target_fps / source_fps)
    rounded = _lrintf(ratio)
    return float(rounded) if rounded > 0 else min(ratio, 1.0)


def _video_sync(times: "Iterator[float]", duration: float, constant_rate: bool) -> list[tuple[int, int]]:
    """ffmpeg's video sync: ``(output pts, source frame)`` for every frame sent to the encoder.

    Re-derived from ffmpeg's documented behaviour and its fftools video sync: each input frame has
    a drift ``delta0 = t - next_pts`` and ``delta = delta0 + duration``. A frame that overlaps the
    output clock is clipped to it. Constant rate: drop when ``delta < -1.1``, emit
    ``lrintf(delta)`` copies when ``delta > 1.1`` (the first ``llrint(delta0 - 0.6)`` of them
    repeat the previous frame when ``delta0 > 1.1``). Variable rate: drop when ``delta <= -0.6``,
    jump the clock to ``llrint(t)`` when ``delta > 0.6``. At the end of the stream the previous
    frame is repeated the median of the last three "previous-frame" counts.
    """
    out: list[tuple[int, int]] = []
    next_pts = 0
    previous = -1
    recent_repeats = [0, 0, 0]
    for index, t in enumerate(times):
        delta0 = t - next_pts
        delta = delta0 + duration
        copies, repeats = 1, 0
        if delta0 < 0 < delta:
            t, delta0 = float(next_pts), 0.0
        if constant_rate:
            if delta < _CFR_DROP:
                copies = 0
            elif delta > _CFR_DUP:
                copies = _lrintf(delta)
                if delta0 > _CFR_DUP:
                    repeats = _llrint(delta0 - 0.6)
        elif delta <= _VFR_DROP:
            copies = 0
        elif delta > _VFR_JUMP:
            next_pts = _llrint(t)
        repeats = min(repeats, copies)
        recent_repeats = [repeats] + recent_repeats[:2]
        for k in range(copies):
            out.append((next_pts, previous if k < repeats and previous >= 0 else index))
            next_pts += 1
        previous = index
    for _ in range(sorted(recent_repeats)[1]):
        out.append((next_pts, previous))
        next_pts += 1
    return out


def ffmpeg_rate_indices(n_source_frames: int, source_fps: "float | Fraction", target_fps: "float | Fraction" = 25.0,
                        *, container: str = "mp4") -> np.ndarray:
    """Source frame shown by each output frame of ``ffmpeg -i in -r 25 out.<container>``.

    The length of the result is the number of frames the reference pipelines extract. Assumes a
    constant-frame-rate source whose frame ``i`` is at ``i / source_fps`` seconds, the first at 0
    (ffmpeg subtracts the file's start time, so this holds when no stream starts before the video).

    * ``container="mp4"`` (default): LatentSync's ``video.mp4``. ffmpeg's constant-rate sync keeps
      a frame until it lags 1.1 output frames, duplicates when a frame leads by more than 1.1.
    * ``container="avi"``: syncnet_python's ``pyavi/video.avi``. ffmpeg uses variable-rate sync for
      avi (drop at 0.6 frames behind, timestamp jumps instead of duplicates); the frame extraction
      that follows (``-f image2``, constant rate) fills each gap with the next frame.

    Rule of ffmpeg 4.4-5.1's fftools (checked against Debian's ffmpeg 5.1.9 at 24, 25, 29.97,
    30, 50 and 60 fps; nearest-frame resampling, the ``fps`` filter's rule, differs at every rate
    above 25 fps).

    Args:
        n_source_frames: decoded frames of the source video.
        source_fps: its frame rate (a float such as ``29.97`` or ``29.97002997`` is read as
            30000/1001, see :func:`as_frame_rate`).
        target_fps: output rate (25 in both reference pipelines).
        container: ``"mp4"`` or ``"avi"`` (see :data:`CONTAINERS`).

    Returns:
        int64 array: for output frame ``k``, the index of the source frame it shows.

    Raises:
        SyncTimelineError: negative frame count, non-positive rate or an unknown container.

    Example:
        >>> ffmpeg_rate_indices(8, 60).tolist()
        [0, 1, 2, 4, 6]
        >>> ffmpeg_rate_indices(13, 24).tolist()  # 24 fps: frame 12 is shown twice
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 12]
    """
    if container not in CONTAINERS:
        raise SyncTimelineError(f"container must be one of {CONTAINERS}, got {container!r}")
    if n_source_frames < 0:
        raise SyncTimelineError(f"frame count must be >= 0, got {n_source_frames}")
    source, target = as_frame_rate(source_fps), as_frame_rate(target_fps)
    if n_source_frames == 0:
        return np.zeros(0, np.int64)
    duration = _frame_duration(source, target)
    times = _encoder_times(int(n_source_frames), source, target)
    if container == "mp4":
        return np.array([src for _, src in _video_sync(times, duration, constant_rate=True)], np.int64)
    encoded = _video_sync(times, duration, constant_rate=False)
    # Frame extraction from the avi: its own constant-rate sync at the same rate, one output
    # frame per timestamp (duration 1), over the avi's whole-number timestamps.
    extracted = _video_sync((pts + _MIDPOINT_NUDGE for pts, _ in encoded), 1.0, constant_rate=True)
    return np.array([encoded[k][1] for _, k in extracted], np.int64)


# ----------------------------------------------------------------------------- audio
class SyncAudioError(ValueError):
    """A video whose audio track cannot be read for SyncNet (none, empty, undecodable)."""


def video_audio_16k(path: "str | Path") -> np.ndarray:
    """The first audio track of a video as LatentSync reads it: mono, 16 kHz, 16-bit, no delay.

    Equivalent to ``ffmpeg -i video -ac 1 -vn -acodec pcm_s16le -ar 16000 audio.wav`` (what
    LatentSync's ``syncnet_detect.py`` runs on its converted video): the decoded track goes
    through libswresample with ffmpeg's default options (the resampler ffmpeg inserts for
    ``-ac``/``-ar``: channel downmix, 32-tap polyphase filter, rounding to 16 bits without
    dither), streamed frame by frame. Agrees with the ffmpeg command within one 16-bit step
    (different ffmpeg builds). There is no MP3 step (syncnet_python's ``video.avi`` re-encodes the
    audio to MP3, which delays it by the encoder's 23-69 ms), and LatentSync's intermediate AAC
    re-encode is skipped: it is lossy but adds no delay.

    Returns:
        float32 samples ``int16 / 32768`` in [-1, 1); ``audio_to_int16_scale`` of
        :mod:`hug_vis_dataset.models.syncnet` recovers the exact 16-bit values.

    Raises:
        SyncAudioError: the file has no audio track, an empty one, or cannot be decoded.

    Example:
        >>> import tempfile, os, numpy as np
        >>> from hug_vis_dataset.readers.media import write_wav
        >>> path = os.path.join(tempfile.mkdtemp(), "tone.wav")
        >>> write_wav(path, 0.5 * np.sin(np.arange(48000) / 48000 * 2 * np.pi * 440), 48000)
        >>> video_audio_16k(path).shape
        (16000,)
    """
    import av

    resampler = av.AudioResampler(format="s16", layout="mono", rate=SYNC_AUDIO_RATE)
    parts: list[np.ndarray] = []
    try:
        check_regular(path, "media file")  # never a FIFO (FFmpeg would wait for a writer) nor a device
    except (InputFileError, OSError) as err:
        raise SyncAudioError(f"cannot read the audio of {path}: {err}") from None
    try:
        with av.open(str(path)) as container:
            if not container.streams.audio:
                raise SyncAudioError(f"{path} has no audio track: SyncNet needs the clip's speech")
            stream = container.streams.audio[0]
            for frame in container.decode(stream):
                parts.extend(out.to_ndarray().reshape(-1) for out in resampler.resample(frame))
            parts.extend(out.to_ndarray().reshape(-1) for out in resampler.resample(None))
    except av.error.FFmpegError as err:
        raise SyncAudioError(f"cannot decode the audio of {path}: {err}") from err
    if not parts or sum(len(p) for p in parts) == 0:
        raise SyncAudioError(f"{path} has an empty audio track")
    return (np.concatenate(parts).astype(np.float32) / 32768.0).astype(np.float32)

"""Sync front end vs the real ffmpeg: 25 fps frame mapping on bar-coded videos, 16 kHz audio without delay.

The reference is Debian's ``ffmpeg`` binary run exactly as the reference pipelines run it:
``ffmpeg -y -i src -qscale:v 2 -async 1 -r 25 video.{mp4,avi}`` (LatentSync / syncnet_python),
then ``ffmpeg -y -i video -qscale:v 2 -threads 1 -f image2 %06d.jpg``. Every source frame carries
its index as a 10-bit bar code of 32x32 black/white blocks, so the JPEGs still say which source
frame each output frame shows.
"""

from __future__ import annotations

import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from hug_vis_dataset.metrics.sync_timeline import (
    SYNC_FRONT_END_NOTE,
    SyncAudioError,
    SyncTimelineError,
    as_frame_rate,
    ffmpeg_rate_indices,
    video_audio_16k,
)

FFMPEG = shutil.which("ffmpeg") or "ffmpeg"  # Debian's binary (torchcodec needs it too): the reference

BITS, BLOCK = 10, 32
HEIGHT, WIDTH = 2 * BLOCK, 5 * BLOCK
RATES = {"24": 24, "25": 25, "30000/1001": Fraction(30000, 1001), "30": 30, "50": 50, "60": 60}


def barcode(index: int) -> np.ndarray:
    """Gray frame whose block ``b`` (row-major, 2 x 5 blocks) is white when bit ``b`` of ``index`` is set."""
    frame = np.zeros((HEIGHT, WIDTH), np.uint8)
    for bit in range(BITS):
        row, col = divmod(bit, 5)
        if (index >> bit) & 1:
            frame[row * BLOCK:(row + 1) * BLOCK, col * BLOCK:(col + 1) * BLOCK] = 255
    return frame


def read_barcode(frame: np.ndarray) -> int:
    """Index of a decoded frame; every block must be clearly black or white (robust to JPEG)."""
    index = 0
    for bit in range(BITS):
        row, col = divmod(bit, 5)
        inner = frame[row * BLOCK + 8:(row + 1) * BLOCK - 8, col * BLOCK + 8:(col + 1) * BLOCK - 8]
        level = float(inner.mean())
        assert level < 40 or level > 215, f"block {bit} is neither black nor white ({level:.0f})"
        index |= int(level > 128) << bit
    return index


def ffmpeg(*args: str) -> None:
    subprocess.run([FFMPEG, "-y", "-nostdin", "-loglevel", "error", *args], check=True)


def make_source(path: Path, n_frames: int, rate: str, with_audio: bool = False) -> Path:
    """Lossless H.264 (qp 0, 4:4:4) bar-coded video at ``rate``, starting at time 0."""
    audio = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"] if with_audio else []
    codecs = ["-c:v", "libx264", "-qp", "0", "-pix_fmt", "yuv444p"]
    codecs += ["-c:a", "aac", "-shortest"] if with_audio else []
    proc = subprocess.Popen([FFMPEG, "-y", "-nostdin", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", "gray",
                             "-s", f"{WIDTH}x{HEIGHT}", "-framerate", rate, "-i", "-", *audio, *codecs, str(path)],
                            stdin=subprocess.PIPE)
    for i in range(n_frames):
        proc.stdin.write(barcode(i).tobytes())
    proc.stdin.close()
    assert proc.wait() == 0
    return path


def reference_indices(source: Path, container: str, work: Path) -> list[int]:
    """Source index of each frame the reference pipeline extracts after its ``-r 25`` conversion."""
    import cv2

    converted = work / f"video.{container}"
    ffmpeg("-i", str(source), "-qscale:v", "2", "-async", "1", "-r", "25", str(converted))
    frames = work / f"frames_{container}"
    frames.mkdir()
    ffmpeg("-i", str(converted), "-qscale:v", "2", "-threads", "1", "-f", "image2", str(frames / "%06d.jpg"))
    return [read_barcode(cv2.imread(str(f), cv2.IMREAD_GRAYSCALE)) for f in sorted(frames.glob("*.jpg"))]


@pytest.mark.parametrize("n_frames", [41, 137])
@pytest.mark.parametrize("rate", list(RATES))
def test_frame_indices_equal_ffmpeg(tmp_path, rate, n_frames):
    source = make_source(tmp_path / "src.mp4", n_frames, rate)
    for container in ("mp4", "avi"):
        expected = reference_indices(source, container, tmp_path)
        ours = ffmpeg_rate_indices(n_frames, RATES[rate], 25, container=container)
        assert ours.tolist() == expected, (rate, n_frames, container)


def test_source_with_audio_track_and_float_rate(tmp_path):
    # The release's clips are H.264 + AAC; with two streams ffmpeg picks constant-rate sync as for
    # one; the float rate PyAV reports for 29.97 fps must map to 30000/1001.
    source = make_source(tmp_path / "src.mp4", 90, "30000/1001", with_audio=True)
    expected = reference_indices(source, "mp4", tmp_path)
    assert ffmpeg_rate_indices(90, 30000 / 1001).tolist() == expected
    assert ffmpeg_rate_indices(90, 29.97).tolist() == expected


def test_rule_by_hand_at_30_fps():
    # 30 -> 25 fps, constant rate: source frame i is at 5i/6 output frames and lasts 1 output
    # frame. While every frame so far was kept once, the output clock is k = i, so
    # delta = 5i/6 + 1 - i = 1 - i/6. ffmpeg drops a frame when delta < -1.1: frame 12 (-1.0) is
    # kept, frame 13 (-1.17) is the first dropped; frame 14 then has 70/6 + 1 - 13 = -0.33: kept.
    assert ffmpeg_rate_indices(15, 30).tolist() == list(range(13)) + [14]
    # avi (variable rate): dropped when delta <= -0.6: frame 10 (1 - 10/6 = -0.67) is the first.
    assert ffmpeg_rate_indices(12, 30, container="avi").tolist() == list(range(10)) + [11]


def test_nearest_frame_mapping_differs_and_runs_early():
    # What the reference pipelines do is not nearest-frame resampling: at 30 fps the ffmpeg
    # timeline shows earlier source frames (held frames), never later ones.
    n = 300
    ours = ffmpeg_rate_indices(n, 30)
    nearest = np.minimum(np.floor(np.arange(len(ours)) * 30 / 25 + 0.5).astype(int), n - 1)
    assert np.all(ours <= nearest) and (ours < nearest).mean() > 0.5
    lag_output_frames = (nearest - ours)[25:] * 25 / 30
    assert 0.8 <= lag_output_frames.mean() <= 1.7


@pytest.mark.parametrize("container", ["mp4", "avi"])
def test_timeline_is_ordered_and_covers_the_clip(container):
    # Streaming readers walk the source once: the mapping must never go back in time, start at
    # frame 0, stay inside the clip, and last as long as the clip (within one output frame).
    for fps in RATES.values():
        for n in (1, 2, 5, 26, 299, 1800):
            keep = ffmpeg_rate_indices(n, fps, container=container)
            assert keep[0] == 0 and keep[-1] <= n - 1 and np.all(np.diff(keep) >= 0)
            assert abs(len(keep) - n * 25 / fps) <= 3


def test_edge_cases_and_errors():
    assert ffmpeg_rate_indices(0, 30).tolist() == []
    assert ffmpeg_rate_indices(1, 60).tolist() == [0]
    assert ffmpeg_rate_indices(50, 25).tolist() == list(range(50))
    assert ffmpeg_rate_indices(50, 25, container="avi").tolist() == list(range(50))
    for bad in (dict(n_source_frames=-1, source_fps=30), dict(n_source_frames=5, source_fps=0),
                dict(n_source_frames=5, source_fps=30, container="mkv"),
                dict(n_source_frames=5, source_fps=float("nan"))):
        with pytest.raises(SyncTimelineError):
            ffmpeg_rate_indices(**bad)


@pytest.mark.parametrize("value, exact", [(29.97, Fraction(30000, 1001)), (30000 / 1001, Fraction(30000, 1001)),
                                          (59.94, Fraction(60000, 1001)), (23.976, Fraction(24000, 1001)),
                                          (30.0, Fraction(30)), (25, Fraction(25)), (12.5, Fraction(25, 2)),
                                          (Fraction(30000, 1001), Fraction(30000, 1001))])
def test_as_frame_rate(value, exact):
    assert as_frame_rate(value) == exact


def test_front_end_note_is_short_prose():
    sentences = [s for s in SYNC_FRONT_END_NOTE.split(". ") if s.strip()]
    assert 3 <= len(sentences) <= 6 and "25 fps" in SYNC_FRONT_END_NOTE and "16 kHz" in SYNC_FRONT_END_NOTE


# ----------------------------------------------------------------------------- audio
def _stereo_tones(rate: int, seconds: float) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return np.stack([0.4 * np.sin(2 * np.pi * 440 * t), 0.3 * np.sin(2 * np.pi * 1250 * t + 0.3)], axis=1)


@pytest.mark.parametrize("rate", [44100, 48000, 16000])
def test_audio_equals_ffmpeg_extraction(tmp_path, rate):
    import soundfile as sf

    sf.write(tmp_path / "a.wav", _stereo_tones(rate, 1.3), rate, subtype="PCM_16")
    video = tmp_path / "clip.mp4"
    ffmpeg("-f", "lavfi", "-i", "color=c=gray:s=64x64:r=30:d=1.3", "-i", str(tmp_path / "a.wav"),
           "-c:v", "libx264", "-c:a", "aac", "-shortest", str(video))
    # LatentSync's extraction of the converted video's audio
    ffmpeg("-i", str(video), "-ac", "1", "-vn", "-acodec", "pcm_s16le", "-ar", "16000", str(tmp_path / "ref.wav"))
    expected, ref_rate = sf.read(tmp_path / "ref.wav", dtype="int16")
    ours = video_audio_16k(video)
    assert ref_rate == 16000 and ours.dtype == np.float32 and len(ours) == len(expected)
    # one 16-bit step: the Debian ffmpeg and PyAV's bundled libraries differ in AAC float rounding
    assert np.abs(np.round(ours * 32768).astype(int) - expected.astype(int)).max() <= 1


def _band_limited_noise_16k(seconds: float, seed: int = 0) -> np.ndarray:
    from scipy.signal import firwin, lfilter

    rng = np.random.default_rng(seed)
    return 0.2 * lfilter(firwin(101, 6000, fs=16000), 1.0, rng.normal(size=int(16000 * seconds)))


def _lag(signal: np.ndarray, reference: np.ndarray, max_lag: int = 2000) -> int:
    """Lag (samples) of ``signal`` behind ``reference`` at the cross-correlation peak."""
    n = min(len(signal), len(reference)) - max_lag
    scores = [float(np.dot(signal[lag:lag + n], reference[:n])) for lag in range(max_lag)]
    return int(np.argmax(scores))


def test_audio_has_no_delay_unlike_an_mp3_step(tmp_path):
    import soundfile as sf
    from scipy.signal import resample_poly

    speech_like = _band_limited_noise_16k(2.0)
    wav48 = resample_poly(speech_like, 3, 1)  # zero-phase: no delay of its own
    sf.write(tmp_path / "a.wav", wav48, 48000, subtype="PCM_16")
    video = tmp_path / "clip.mkv"  # PCM audio in a video container: no codec delay
    ffmpeg("-f", "lavfi", "-i", "color=c=gray:s=64x64:r=30:d=2", "-i", str(tmp_path / "a.wav"),
           "-c:v", "libx264", "-c:a", "pcm_s16le", "-shortest", str(video))
    ours = video_audio_16k(video)
    assert _lag(ours, speech_like) == 0
    residual = ours[200:-200] - speech_like[200:len(ours) - 200]
    assert np.sqrt(np.mean(residual ** 2)) < 0.01 * np.sqrt(np.mean(speech_like ** 2)) + 1e-4
    # syncnet_python's video.avi step (MP3) shifts the same audio by the encoder delay
    mp3 = tmp_path / "video.avi"
    ffmpeg("-i", str(video), "-c:v", "mpeg4", "-c:a", "libmp3lame", str(mp3))
    delay_ms = _lag(video_audio_16k(mp3), speech_like) / 16
    assert 20 <= delay_ms <= 70


def test_audio_errors(tmp_path):
    silent = tmp_path / "silent.mp4"
    ffmpeg("-f", "lavfi", "-i", "color=c=gray:s=64x64:r=25:d=0.2", "-c:v", "libx264", str(silent))
    with pytest.raises(SyncAudioError, match="no audio track"):
        video_audio_16k(silent)
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video")
    with pytest.raises(SyncAudioError, match="broken.mp4"):
        video_audio_16k(broken)

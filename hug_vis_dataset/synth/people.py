"""People mode of the synthetic grid (``hugvis synth --people``): real photographs moved by known motion.

Each actor is one of the photographs of :mod:`.photos` (odd actor ids the astronaut, even ids Grace Hopper),
cut out by :func:`.photos.person_alpha` and composited over the green screen (:func:`.photos.composite`), so
the clip's alpha matte is exactly the alpha the frame was blended with. Per frame the cut-out is shifted,
zoomed and turned as the clip's action template moves the cartoon figure's body (:func:`.motion.clip_motion`:
``shift_x``, ``shift_y`` and half of ``head_nod`` in frame heights, ``scale`` as zoom, ``lean`` plus 0.3 of
``head_tilt`` as the turn); the photographs show no arms, so the arm joints of the template move nothing.
The speech is espeak-ng's Mandarin voice (``cmn``) reading the clip's prompt (resampled to the release's
rate, starting at 8 % of the clip, cut with a 20 ms fade where the clip ends), and the mouth opens by the
per-frame envelope of that speech (:func:`.voice.frame_envelope`) times :data:`MAX_OPENING` photo pixels.

The simulated systems of the generation tasks plant known defects of graded size (:data:`PEOPLE_DEFECTS`):
a per-frame random shift (jitter), a neck that stretches and shrinks back (a stretched limb), a sideways
drift growing over the clip, and a mouth that follows the audio late (frames). The human-motion rows
(docs/HUMAN_METRICS.md) must find that order: ``good < fair < poor``. :class:`.systems.SystemWriter` writes
them (:func:`system_frames`; voice cloning: :func:`clip_speech` at a pitch offset, then its degradation).

Example:
    >>> actor_photo(1), actor_photo(2), actor_photo(3)
    ('astronaut', 'grace', 'astronaut')
    >>> [d.lag for d in PEOPLE_DEFECTS["audio_driven"]]
    [0, 2, 6]
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .photos import PHOTOS, SHOULDER_Y, composite, open_mouth, person_alpha, photo, placement, stretch_neck

#: The mouth's opening (photo pixels) at the speech envelope's peak.
MAX_OPENING = {"astronaut": 20.0, "grace": 24.0}
#: espeak-ng's speaking rate (words per minute) at the neutral prosody; the emotion's tempo scales it.
ESPEAK_RATE = 300
#: espeak-ng writes 22.05 kHz.
ESPEAK_SAMPLE_RATE = 22050
#: Where the speech starts, as a fraction of the clip (the rest -> expression -> rest protocol).
SPEECH_START = 0.08
#: How often a planted neck stretch comes and goes (Hz).
STRETCH_HZ = 1.5


@dataclass(frozen=True)
class Defects:
    """What a simulated system plants in a people clip.

    Attributes:
        jitter: standard deviation of an independent random shift per frame (x and y), in frame heights.
        stretch: the neck's largest extra length (0.1: 10 % longer), coming and going at :data:`STRETCH_HZ`.
        drift: the body's sideways shift at the clip's end, in frame heights (growing linearly from 0).
        lag: frames the mouth follows the audio late.
    """

    jitter: float = 0.0
    stretch: float = 0.0
    drift: float = 0.0
    lag: int = 0


#: The planted defects per task, in the order of :data:`.systems.SYSTEMS` (good, fair, poor).
PEOPLE_DEFECTS: dict[str, tuple[Defects, ...]] = {
    "vision_driven": (Defects(jitter=0.002), Defects(jitter=0.008, stretch=0.08, drift=0.03),
                      Defects(jitter=0.02, stretch=0.2, drift=0.1)),
    "audio_driven": (Defects(jitter=0.002, lag=0), Defects(jitter=0.006, lag=2), Defects(jitter=0.015, lag=6)),
}
#: What each task's systems are in people mode (the manifest's words).
PEOPLE_DESCRIPTIONS = {
    "vision_driven": "the reference actor (a cut-out photograph) moved as in the reference, with graded "
    "per-frame jitter, a neck that stretches and shrinks back, and a sideways drift; <clip_id>.mp4",
    "audio_driven": "the reference actor moved as in the reference, the mouth opened by the driving audio's "
    "envelope with a graded delay, and graded per-frame jitter; <clip_id>.mp4 with the driving audio",
    "voice_cloning": "espeak-ng's Mandarin reading of the clip text at a graded pitch offset from the actor's, "
    "plus graded noise, clicks and dropouts; <clip_id>.wav",
}


def missing_requirement() -> "str | None":
    """Why people mode cannot run here, with the fix (None when it can): espeak-ng speaks, and MediaPipe's
    selfie segmentation cuts the person out (:func:`.photos.person_alpha`).

    Example:
        >>> missing_requirement() is None or "espeak-ng" in missing_requirement() or "weights" in missing_requirement()
        True
    """
    from .. import weights

    if shutil.which("espeak-ng") is None:
        return "people mode speaks with espeak-ng, which is not installed (apt-get install espeak-ng)"
    note = weights.missing_note(["mediapipe_selfie_segmentation"])
    return f"people mode cuts the person out with MediaPipe's selfie segmentation: {note}" if note else None


def actor_photo(actor_id: int) -> str:
    """The photograph an actor is made of (:data:`.photos.PHOTOS`, in turn by actor id)."""
    return PHOTOS[(int(actor_id) - 1) % len(PHOTOS)]


def actor_pitch(actor_id: int) -> int:
    """The actor's espeak-ng pitch (0-99, default 50): deterministic by actor id.

    Example:
        >>> [actor_pitch(a) for a in (1, 2, 3)]
        [37, 54, 71]
    """
    return 20 + (int(actor_id) * 17) % 60


def describe(defects: Defects) -> str:
    """The manifest's words for a system's planted defects.

    Example:
        >>> describe(Defects(jitter=0.008, stretch=0.08, lag=2))
        'jitter 0.8% of the frame height; neck stretched up to 8%; mouth 2 frames late'
    """
    words = [f"jitter {100 * defects.jitter:g}% of the frame height"] if defects.jitter else []
    words += [f"neck stretched up to {100 * defects.stretch:g}%"] if defects.stretch else []
    words += [f"drift {100 * defects.drift:g}% of the frame height"] if defects.drift else []
    words += [f"mouth {defects.lag} frames late"] if defects.lag else []
    return "; ".join(words) or "no defect"


def espeak_speech(text: str, n_samples: int, sample_rate: int, pitch: int = 50, rate: float = 1.0,
                  loudness: float = 0.5) -> np.ndarray:
    """espeak-ng's Mandarin reading of ``text`` as float32 of exactly ``n_samples`` at ``sample_rate``: silence
    for the first :data:`SPEECH_START` of the clip, then the speech (peak ``loudness``), cut with a 20 ms fade
    where the clip ends.

    Raises:
        RuntimeError: espeak-ng is not installed (the README's system set-up installs it).

    Example:
        >>> x = espeak_speech("你好。", 16000, 16000)
        >>> x.shape, x.dtype, bool(np.abs(x[:1000]).max() == 0), round(float(np.abs(x).max()), 3)
        ((16000,), dtype('float32'), True, 0.5)
    """
    import soundfile
    from scipy.signal import resample_poly

    binary = shutil.which("espeak-ng")
    if binary is None:
        raise RuntimeError("people mode speaks with espeak-ng, which is not installed (apt-get install espeak-ng)")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "speech.wav"
        subprocess.run([binary, "-v", "cmn", "-s", str(int(round(ESPEAK_RATE * rate))), "-p", str(int(pitch)),
                        "-w", str(path), text], check=True, capture_output=True)
        speech, rate_in = soundfile.read(path, dtype="float64")
    if speech.ndim == 2:
        speech = speech.mean(axis=1)
    divisor = np.gcd(int(sample_rate), int(rate_in))
    speech = resample_poly(speech, int(sample_rate) // divisor, int(rate_in) // divisor)
    out = np.zeros(int(n_samples))
    start = int(round(SPEECH_START * n_samples))
    piece = speech[: max(0, len(out) - start)].copy()
    if len(piece) < len(speech):  # cut by the clip's end: fade out
        fade = min(len(piece), int(0.02 * sample_rate))
        piece[len(piece) - fade:] *= np.linspace(1.0, 0.0, fade)
    out[start:start + len(piece)] = piece
    peak = np.abs(out).max()
    if peak > 0:
        out *= loudness / peak
    return out.astype(np.float32)


def clip_speech(spec, pitch_shift: float = 0.0) -> np.ndarray:
    """The people clip's speech: :func:`espeak_speech` of its prompt at the actor's pitch (plus ``pitch_shift``)
    and the emotion's tempo and loudness (:data:`.voice.PROSODY`).

    Example:
        >>> from hug_vis_dataset.grid import ClipId, Emotion
        >>> from hug_vis_dataset.synth.generate import ClipSpec
        >>> spec = ClipSpec(ClipId(1, Emotion.SAD, 1, 1), 0, 6, 30.0, 16000, 64, 36, people=True)
        >>> speech = clip_speech(spec)
        >>> speech.shape, bool(np.abs(speech).max() > 0)
        ((3200,), True)
    """
    from .voice import PROSODY

    prosody = PROSODY[spec.cid.emotion]
    pitch = int(np.clip(round(actor_pitch(spec.cid.actor_id) + pitch_shift), 0, 99))
    return espeak_speech(spec.text, spec.n_samples, spec.sample_rate, pitch=pitch, rate=prosody.rate,
                         loudness=max(prosody.loudness, 0.3))


def body_track(spec) -> np.ndarray:
    """``(n_frames, 4)`` per frame ``(dx, dy, zoom, angle)`` of the actor (frame pixels, radians): the clip's
    action template (:func:`.motion.clip_motion`) at the frame times.

    Example:
        >>> from hug_vis_dataset.grid import ClipId, Emotion
        >>> from hug_vis_dataset.synth.generate import ClipSpec
        >>> track = body_track(ClipSpec(ClipId(1, Emotion.HAPPY, 1, 1), 0, 6, 30.0, 16000, 64, 36, people=True))
        >>> track.shape, track[0, 2].round(2)
        ((6, 4), np.float64(1.0))
    """
    from .figure import P
    from .motion import clip_motion
    from .seeds import TAG_MOTION

    poses = clip_motion(spec.cid.emotion, spec.cid.action_id, spec.duration,
                        spec.rng(TAG_MOTION))(np.arange(spec.n_frames) / spec.fps)
    h = spec.height
    return np.stack([poses[:, P["shift_x"]] * h, (poses[:, P["shift_y"]] + 0.5 * poses[:, P["head_nod"]]) * h,
                     poses[:, P["scale"]], poses[:, P["lean"]] + 0.3 * poses[:, P["head_tilt"]]], axis=1)


def planted(track: np.ndarray, defects: Defects, height: int, rng: np.random.Generator) -> np.ndarray:
    """The body track with a system's jitter and drift added (``(n, 4)``, as :func:`body_track`).

    Example:
        >>> out = planted(np.zeros((3, 4)), Defects(drift=0.1), 100, np.random.default_rng(0))
        >>> out[:, 0].tolist()
        [0.0, 5.0, 10.0]
    """
    out = np.array(track, np.float64)
    n = len(out)
    if defects.jitter:
        out[:, :2] += rng.normal(0.0, defects.jitter * height, (n, 2))
    if defects.drift:
        out[:, 0] += defects.drift * height * np.arange(n) / max(n - 1, 1)
    return out


def render(spec, track: np.ndarray, opening: np.ndarray, stretch: "np.ndarray | None" = None,
           chunk_frames: int = 32):
    """Yield ``(alpha uint8 (k, H, W), rgb uint8 (k, H, W, 3))`` chunks of a people clip: the actor's photo with
    its mouth opened by ``opening`` (0..1 per frame, times :data:`MAX_OPENING`), its neck stretched by
    ``stretch`` (factor per frame, 1 = none), placed by ``track`` (:func:`body_track`) over the green screen.

    Example:
        >>> from hug_vis_dataset.grid import ClipId, Emotion
        >>> from hug_vis_dataset.synth.generate import ClipSpec
        >>> spec = ClipSpec(ClipId(2, Emotion.HAPPY, 1, 1), 0, 3, 30.0, 16000, 64, 36, people=True)
        >>> [(a.shape, rgb.shape) for a, rgb in render(spec, np.zeros((3, 4)) + [0, 0, 1, 0], np.zeros(3),
        ...                                              chunk_frames=2)]
        [((2, 36, 64), (2, 36, 64, 3)), ((1, 36, 64), (1, 36, 64, 3))]
    """
    from .figure import background

    name = actor_photo(spec.cid.actor_id)
    image, alpha = photo(name), person_alpha(name)
    w, h = spec.width, spec.height
    bg = np.round(background(w, h) * 255.0).astype(np.uint8)
    for start in range(0, spec.n_frames, chunk_frames):
        stop = min(start + chunk_frames, spec.n_frames)
        alphas = np.empty((stop - start, h, w), np.uint8)
        rgbs = np.empty((stop - start, h, w, 3), np.uint8)
        for i in range(start, stop):
            face, cut = open_mouth(image, name, MAX_OPENING[name] * float(opening[i])), alpha
            if stretch is not None and stretch[i] != 1.0:
                face = stretch_neck(face, SHOULDER_Y[name], float(stretch[i]))
                cut = stretch_neck(cut, SHOULDER_Y[name], float(stretch[i]))
            dx, dy, zoom, angle = track[i]
            alphas[i - start], rgbs[i - start] = composite(face, cut, placement(image, dx, dy, zoom, (w, h), angle),
                                                           bg)
        yield alphas, rgbs


def reference_clip(spec) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(alpha (T, H, W) uint8, RGB (T, H, W, 3) uint8, audio float32, mouth envelope (T,)) of a people clip
    (the same contract as :func:`.generate.reference_clip`).

    Example:
        >>> from hug_vis_dataset.grid import ClipId, Emotion
        >>> from hug_vis_dataset.synth.generate import ClipSpec
        >>> alpha, rgb, audio, mouth = reference_clip(ClipSpec(ClipId(1, Emotion.SAD, 1, 1), 0, 6, 30.0, 16000,
        ...                                                    64, 36, people=True))
        >>> alpha.shape, rgb.dtype, audio.shape, mouth.shape
        ((6, 36, 64), dtype('uint8'), (3200,), (6,))
    """
    from .voice import frame_envelope

    audio = clip_speech(spec)
    mouth = frame_envelope(audio, spec.n_frames)
    chunks = list(render(spec, body_track(spec), mouth))
    return np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks]), audio, mouth


def neck_stretch(defects: Defects, n_frames: int, fps: float) -> "np.ndarray | None":
    """Per-frame neck factor ``1 + stretch * (1 - cos(2 pi f t)) / 2`` (None without a planted stretch).

    Example:
        >>> neck_stretch(Defects(stretch=0.2), 3, 3.0).round(3).tolist()
        [1.0, 1.2, 1.0]
    """
    if not defects.stretch:
        return None
    t = np.arange(n_frames) / fps
    return 1.0 + defects.stretch * 0.5 * (1.0 - np.cos(2 * np.pi * STRETCH_HZ * t))


def system_frames(spec, defects: Defects, mouth: np.ndarray, rng: np.random.Generator):
    """The RGB chunks of a simulated system's people clip: the reference's motion with ``defects`` planted (jitter
    and drift from ``rng``, the neck's stretch, the mouth ``defects.lag`` frames behind ``mouth``).

    Example:
        >>> from hug_vis_dataset.grid import ClipId, Emotion
        >>> from hug_vis_dataset.synth.generate import ClipSpec
        >>> spec = ClipSpec(ClipId(1, Emotion.SAD, 1, 1), 0, 4, 30.0, 16000, 64, 36, people=True)
        >>> chunks = system_frames(spec, PEOPLE_DEFECTS["vision_driven"][2], np.ones(4), np.random.default_rng(0))
        >>> np.concatenate(list(chunks)).shape
        (4, 36, 64, 3)
    """
    lag = min(defects.lag, spec.n_frames)
    opening = np.r_[np.zeros(lag), mouth[:spec.n_frames - lag]]
    for _, rgb in render(spec, planted(body_track(spec), defects, spec.height, rng), opening,
                         neck_stretch(defects, spec.n_frames, spec.fps)):
        yield rgb


__all__ = ["Defects", "MAX_OPENING", "PEOPLE_DEFECTS", "actor_photo", "body_track", "clip_speech",
           "espeak_speech", "reference_clip", "render", "system_frames"]

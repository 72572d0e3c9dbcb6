"""Source-filter speech synthesis for the synthetic grid.

A glottal pulse train (Rosenberg pulse, per-actor f0, jitter, shimmer, breathiness and
spectral tilt) is shaped by a cascade of second-order formant resonators whose
frequencies scale with the actor's vocal-tract length. One syllable is spoken per Han
character of the prompt with a Mandarin tone contour chosen from the character, and the
emotion changes loudness, tempo, pitch level and range, tremolo and tilt. The result is
not intelligible speech, but speaker-similarity and quality metrics see real, graded
differences between actors and between degraded copies.

Example:
    >>> import numpy as np
    >>> from hug_vis_dataset.datamodel.grid import Emotion
    >>> v = voice_for_actor(1, seed=0)
    >>> x = synthesize_speech("你好。", v, Emotion.NEUTRAL, 8000, 16000, np.random.default_rng(0))
    >>> x.shape, x.dtype, bool(np.abs(x).max() <= 1.0)
    ((8000,), dtype('float32'), True)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..datamodel.grid import Emotion
from .prompts import is_han

# scipy.signal is imported where lfilter is called, not here: importing it costs about 3 s of CPU
# (measured on the 2-vCPU machine, docs/PERFORMANCE.md), and `hugvis` imports this module to build
# every sub-command's parser (synth.commands -> synth -> generate -> voice).

# Vowel formant centres (Hz) of an adult male vocal tract; scaled per actor.
_VOWELS: tuple[tuple[float, float, float, float], ...] = (
    (800.0, 1200.0, 2500.0, 3500.0),  # a
    (300.0, 2300.0, 3000.0, 3700.0),  # i
    (350.0, 800.0, 2400.0, 3400.0),  # u
    (500.0, 1800.0, 2500.0, 3500.0),  # e
    (500.0, 900.0, 2500.0, 3400.0),  # o
    (300.0, 1900.0, 2400.0, 3400.0),  # ü
)
_BANDWIDTHS = (80.0, 100.0, 150.0, 200.0)

# Tone contours in semitones at (start, middle, end) of the syllable nucleus.
_TONES: dict[int, tuple[float, float, float]] = {
    1: (2.0, 2.0, 2.0),  # high level
    2: (-1.0, 0.5, 3.0),  # rising
    3: (-2.0, -4.0, -0.5),  # dipping
    4: (4.0, 1.0, -3.0),  # falling
}


@dataclass(frozen=True)
class Voice:
    """Per-actor voice parameters (source and filter)."""

    f0: float  # Hz, mean pitch
    tract: float  # formant scale (>1: shorter vocal tract, higher formants)
    breathiness: float  # aspiration noise relative to the voiced source
    tilt: float  # one-pole low-pass coefficient of the source (higher: darker)
    jitter: float  # relative cycle-to-cycle f0 perturbation
    shimmer: float  # relative amplitude perturbation
    bandwidth: float  # formant bandwidth scale


@dataclass(frozen=True)
class Prosody:
    """Emotion-dependent prosody (Table 1's styles carried into the voice)."""

    loudness: float  # peak level
    rate: float  # syllables faster (>1) or slower (<1) than neutral
    pitch: float  # f0 multiplier
    pitch_range: float  # tone contour scale
    tremolo: float  # relative f0/amplitude modulation at ~6 Hz
    slope: float  # semitones of utterance-level rise (+) or declination (-)
    tilt_shift: float  # added to the voice's tilt (negative: brighter, pressed voice)
    pause: float  # pause at punctuation, seconds at neutral rate


PROSODY: dict[Emotion, Prosody] = {
    Emotion.HAPPY: Prosody(0.55, 1.15, 1.18, 1.7, 0.0, 1.0, -0.04, 0.10),
    Emotion.ANGRY: Prosody(0.85, 1.35, 1.12, 1.3, 0.0, -1.0, -0.10, 0.06),
    Emotion.SAD: Prosody(0.18, 0.70, 0.88, 0.5, 0.0, -3.0, 0.03, 0.30),
    Emotion.AFRAID: Prosody(0.40, 1.20, 1.15, 1.0, 0.12, 0.5, -0.02, 0.12),
    Emotion.DISGUSTED: Prosody(0.40, 0.90, 0.95, 0.9, 0.0, -2.0, 0.0, 0.18),
    Emotion.SURPRISED: Prosody(0.60, 1.10, 1.22, 1.5, 0.0, 5.0, -0.05, 0.10),
    Emotion.NEUTRAL: Prosody(0.35, 1.00, 1.00, 0.6, 0.0, -1.0, 0.0, 0.15),
}


def voice_for_actor(actor_id: int, seed: int = 0) -> Voice:
    """The deterministic voice of an actor (odd ids lower-pitched, even ids higher).

    Example:
        >>> voice_for_actor(1) == voice_for_actor(1), voice_for_actor(1).f0 < voice_for_actor(2).f0
        (True, True)
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, actor_id, 0x701CE]))
    low = actor_id % 2 == 1
    return Voice(
        f0=float((105.0 if low else 205.0) * rng.uniform(0.85, 1.18)),
        tract=float((1.0 if low else 1.17) * rng.uniform(0.93, 1.07)),
        breathiness=float(rng.uniform(0.02, 0.18)),
        tilt=float(rng.uniform(0.55, 0.85)),
        jitter=float(rng.uniform(0.004, 0.015)),
        shimmer=float(rng.uniform(0.02, 0.08)),
        bandwidth=float(rng.uniform(0.8, 1.4)),
    )


def blend_voices(a: Voice, b: Voice, weight: float) -> Voice:
    """Interpolate two voices (``weight`` 0 -> a, 1 -> b); f0 geometrically.

    Example:
        >>> a, b = voice_for_actor(1), voice_for_actor(2)
        >>> blend_voices(a, b, 0.0) == a, round(blend_voices(a, b, 1.0).f0, 6) == round(b.f0, 6)
        (True, True)
    """
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be in [0, 1], got {weight}")
    if weight == 0.0:
        return a
    out = {}
    for f in dataclasses.fields(Voice):
        x, y = getattr(a, f.name), getattr(b, f.name)
        out[f.name] = float(x ** (1 - weight) * y**weight) if f.name == "f0" else float((1 - weight) * x + weight * y)
    return Voice(**out)


@dataclass(frozen=True)
class Syllable:
    char: str
    start: int  # sample index
    stop: int
    tone: int
    vowel: int
    onset: bool  # has a fricative/burst onset


def syllable_schedule(text: str, emotion: Emotion, n_samples: int, sample_rate: int) -> list[Syllable]:
    """Place one syllable per Han character inside the clip, pauses at punctuation.

    The utterance starts after a short rest and ends before the clip does (the paper's
    rest -> expression -> rest protocol). Slow emotions use more of the clip; when the text
    does not fit at its natural rate it is compressed uniformly.

    Example:
        >>> s = syllable_schedule("你好，再见。", Emotion.NEUTRAL, 32000, 16000)
        >>> len(s), all(a.stop <= b.start for a, b in zip(s, s[1:])), s[-1].stop <= 32000
        (4, True, True)
    """
    pro = PROSODY[emotion]
    syl_dur = 0.20 / pro.rate
    items: list[tuple[str, float]] = []
    for ch in text:
        if is_han(ch):
            items.append((ch, syl_dur))
        elif items and ch in "，。！？；：、,.!?;:":
            items.append(("", pro.pause / pro.rate))
    while items and items[-1][0] == "":
        items.pop()
    if not items:
        return []
    clip = n_samples / sample_rate
    begin = 0.08 * clip
    window = clip * (0.88 if emotion is Emotion.SAD else 0.80)
    total = sum(d for _, d in items)
    scale = min(1.0, window / total)
    out: list[Syllable] = []
    t = begin
    for ch, dur in items:
        d = dur * scale
        if ch:
            code = ord(ch)
            start, stop = int(round(t * sample_rate)), int(round((t + d) * sample_rate))
            stop = min(stop, n_samples)
            if stop - start >= 4:
                out.append(Syllable(ch, start, stop, code % 4 + 1, (code // 4) % len(_VOWELS), (code // 7) % 5 < 3))
        t += d
    return out


def _resonator(signal: np.ndarray, freq: float, bw: float, sample_rate: int) -> np.ndarray:
    # Klatt's digital resonator, unity gain at DC so a cascade keeps a sane level.
    r = np.exp(-np.pi * bw / sample_rate)
    c = -(r**2)
    b = 2 * r * np.cos(2 * np.pi * freq / sample_rate)
    a = 1.0 - b - c
    from scipy.signal import lfilter  # see the note under the imports

    return lfilter([a], [1.0, -b, -c], signal)


def _glottal(phase_frac: np.ndarray) -> np.ndarray:
    # Rosenberg pulse: 40 % opening, 16 % closing, closed for the rest of the cycle.
    x = phase_frac
    out = np.zeros_like(x)
    opening = x < 0.40
    closing = (x >= 0.40) & (x < 0.56)
    out[opening] = 0.5 * (1 - np.cos(np.pi * x[opening] / 0.40))
    out[closing] = np.cos(0.5 * np.pi * (x[closing] - 0.40) / 0.16)
    return out


def synthesize_speech(
    text: str,
    voice: Voice,
    emotion: Emotion,
    n_samples: int,
    sample_rate: int,
    rng: np.random.Generator,
    noise_level: float = 0.002,
) -> np.ndarray:
    """Speak ``text`` (one syllable per Han character) as float32 audio of exactly ``n_samples``.

    Args:
        text: the Mandarin prompt; non-Han characters are pauses or ignored.
        voice: the speaker.
        emotion: selects :data:`PROSODY`.
        n_samples: output length (the clip's video duration times the sample rate).
        sample_rate: Hz; formants above 0.45 of it are dropped.
        rng: source of jitter, shimmer, aspiration and background noise.
        noise_level: standard deviation of the background noise floor.

    Raises:
        ValueError: ``n_samples`` < 1 or ``sample_rate`` < 4000.
    """
    if n_samples < 1:
        raise ValueError(f"n_samples must be >= 1, got {n_samples}")
    if sample_rate < 4000:
        raise ValueError(f"sample_rate must be >= 4000 Hz, got {sample_rate}")
    pro = PROSODY[emotion]
    sr = sample_rate
    out = np.zeros(n_samples, np.float64)
    schedule = syllable_schedule(text, emotion, n_samples, sr)
    t_all = np.arange(n_samples) / sr
    total = max(1, len(schedule) - 1)
    f0_base = voice.f0 * pro.pitch
    tilt = float(np.clip(voice.tilt + pro.tilt_shift, 0.2, 0.95))
    for k, syl in enumerate(schedule):
        n = syl.stop - syl.start
        onset_n = int(min(0.35 * n, 0.035 * sr)) if syl.onset else 0
        nucleus = n - onset_n
        seg = np.zeros(n)
        if onset_n > 0:
            # Fricative/burst onset: high-passed noise with a quick decay.
            burst = rng.standard_normal(onset_n)
            burst = np.diff(burst, prepend=0.0) * np.linspace(1.0, 0.3, onset_n)
            seg[:onset_n] = 0.25 * burst
        if nucleus > 0:
            u = np.linspace(0.0, 1.0, nucleus)
            tone = _TONES[syl.tone]
            semis = np.interp(u, (0.0, 0.5, 1.0), tone) * pro.pitch_range
            semis = semis + pro.slope * (k / total - 0.5)
            f0 = f0_base * 2.0 ** (semis / 12.0)
            tt = t_all[syl.start + onset_n : syl.stop]
            if pro.tremolo:
                f0 = f0 * (1 + pro.tremolo * 0.5 * np.sin(2 * np.pi * 6.5 * tt))
            f0 = f0 * (1 + voice.jitter * rng.standard_normal(nucleus).cumsum() / np.sqrt(np.arange(1, nucleus + 1)))
            phase = np.cumsum(f0) / sr + rng.uniform()
            pulse = np.diff(_glottal(phase % 1.0), prepend=0.0)  # lip radiation: derivative of the flow
            from scipy.signal import lfilter  # see the note under the imports

            pulse = lfilter([1 - tilt], [1.0, -tilt], pulse) * 8.0
            cycle = np.floor(phase)
            shim = 1 + voice.shimmer * rng.standard_normal(int(cycle[-1] - cycle[0]) + 2)[(cycle - cycle[0]).astype(int)]
            voiced = pulse * shim + voice.breathiness * 0.3 * rng.standard_normal(nucleus) * (0.5 + _glottal(phase % 1.0))
            if pro.tremolo:
                voiced = voiced * (1 + pro.tremolo * np.sin(2 * np.pi * 6.5 * tt))
            seg[onset_n:] = voiced
        # Formant filter of this syllable's vowel in the actor's vocal tract.
        shaped = np.zeros(n)
        for f, bw in zip(_VOWELS[syl.vowel], _BANDWIDTHS):
            f = f * voice.tract
            if f < 0.45 * sr:
                shaped = shaped if shaped.any() else seg
                shaped = _resonator(shaped, f, bw * voice.bandwidth, sr)
        if not shaped.any():
            shaped = seg
        ramp = max(1, min(n // 4, int(0.02 * sr)))
        env = np.ones(n)
        env[:ramp] = np.linspace(0.0, 1.0, ramp)
        env[-ramp:] = np.minimum(env[-ramp:], np.linspace(1.0, 0.0, ramp))
        out[syl.start : syl.stop] += shaped * env
    peak = np.abs(out).max()
    if peak > 0:
        out *= pro.loudness / peak
    out += noise_level * rng.standard_normal(n_samples)
    return np.clip(out, -1.0, 1.0).astype(np.float32)


def frame_envelope(audio: np.ndarray, n_frames: int) -> np.ndarray:
    """Per-video-frame speech envelope in [0, 1] (RMS over each frame's span, normalised).

    Drives the mouth opening so lip motion follows the audio.

    Example:
        >>> import numpy as np
        >>> e = frame_envelope(np.r_[np.zeros(100), np.ones(100)].astype(np.float32), 2)
        >>> e.tolist()
        [0.0, 1.0]
    """
    if n_frames < 1:
        raise ValueError(f"n_frames must be >= 1, got {n_frames}")
    audio = np.asarray(audio, np.float64)
    edges = np.linspace(0, audio.size, n_frames + 1).round().astype(int)
    rms = np.array([np.sqrt(np.mean(audio[a:b] ** 2)) if b > a else 0.0 for a, b in zip(edges[:-1], edges[1:])])
    # A noise floor gate keeps the mouth closed in silence.
    gate = np.clip(rms - 0.01, 0.0, None)
    peak = gate.max()
    return (gate / peak) if peak > 0 else gate

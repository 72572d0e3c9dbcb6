"""Simulated system outputs for the synthetic grid, graded by construction.

Each task gets three systems of increasing degradation ``strength`` (``expected_rank`` 1 is
the best), written exactly as a user's submission (docs/CONVENTIONS.md):

* ``matting``: the reference alpha with boundary blur, erosion/dilation, lost thin
  structures (fingers, hair strands) and frame-to-frame boundary flicker.
* ``vision_driven``: the reference video with colour drift, blur, a small drifting
  misalignment and noise.
* ``audio_driven``: a talking figure rendered from the first frame's appearance, driven by
  the clip's audio, with identity drift of the face over time and the mouth lagging the
  audio by 0, 2 or 6 frames.
* ``voice_cloning``: the clip text spoken by the actor's voice shifted towards another
  speaker, plus noise, clicks and dropouts.
* ``emotion``: ``predictions.jsonl`` free-text answers per input setting with graded accuracy
  (and a few unparseable answers); ground truth is the clip id's emotion.

Beside them, under ``seeded/`` (:data:`SEEDED`), a stochastic matting system scored over several samples per clip
(``<clip_id>/sample_<k>/``): each sample degrades the reference with its own strength and noise, so the report's
seed statistics (the sample term of the variance decomposition, the seed spread, rank stability) have a planted
truth: its per-clip sample means lie between ``matte_fair`` and ``matte_poor``.

Example:
    >>> [s.name for s in SYSTEMS["matting"]]
    ['matte_good', 'matte_fair', 'matte_poor']
    >>> [s.expected_rank for s in SYSTEMS["voice_cloning"]]
    [1, 2, 3]
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..datamodel.grid import EMOTIONS, Emotion
from ..datamodel.layout import SIMULATED_SEEDED_DIR, SIMULATED_SYSTEMS_DIR, ReleaseLayout
from .seeds import TAG_AUDIO, TAG_SYSTEM

SYSTEMS_DIR = SIMULATED_SYSTEMS_DIR
EMOTION_SETTINGS: tuple[str, ...] = ("video", "audio", "text", "video+audio+text")
SYSTEM_CRF = 23  # system videos are lossy predictions anyway; keeps the default synth fast


@dataclass(frozen=True)
class SimSystem:
    name: str
    strength: float  # 0 = perfect copy of the reference, 1 = heavily degraded
    expected_rank: int
    description: str
    lag_frames: int = 0  # audio_driven only
    accuracy: "tuple[float, ...] | None" = None  # emotion only, per EMOTION_SETTINGS


SYSTEMS: dict[str, tuple[SimSystem, ...]] = {
    "matting": (
        SimSystem("matte_good", 0.15, 1, "slight edge blur, rare boundary flicker"),
        SimSystem("matte_fair", 0.45, 2, "edge blur, 1 px erosion, thin strands thinned, some flicker"),
        SimSystem("matte_poor", 0.85, 3, "strong blur, dilation, fingers/hair lost, strong flicker"),
    ),
    "vision_driven": (
        SimSystem("vis_good", 0.15, 1, "faint colour drift, slight blur and noise"),
        SimSystem("vis_fair", 0.45, 2, "visible colour drift, blur, 1 px misalignment, noise"),
        SimSystem("vis_poor", 0.85, 3, "strong colour drift, heavy blur, misalignment, strong noise"),
    ),
    "audio_driven": (
        SimSystem("talk_good", 0.1, 1, "identity almost kept, lip-sync offset 0 frames", lag_frames=0),
        SimSystem("talk_fair", 0.4, 2, "moderate identity drift, lip-sync offset 2 frames", lag_frames=2),
        SimSystem("talk_poor", 0.8, 3, "strong identity drift, lip-sync offset 6 frames", lag_frames=6),
    ),
    "voice_cloning": (
        SimSystem("clone_good", 0.1, 1, "timbre 10% towards another speaker, faint noise"),
        SimSystem("clone_fair", 0.4, 2, "timbre 40% towards another speaker, noise and clicks"),
        SimSystem("clone_poor", 0.8, 3, "timbre 80% towards another speaker, loud noise, dropouts"),
    ),
    "emotion": (
        SimSystem("emo_strong", 0.2, 1, "accurate, best with all modalities", accuracy=(0.8, 0.7, 0.6, 0.9)),
        SimSystem("emo_medium", 0.5, 2, "moderate accuracy", accuracy=(0.55, 0.5, 0.45, 0.65)),
        SimSystem("emo_weak", 0.8, 3, "near chance", accuracy=(0.3, 0.28, 0.25, 0.35)),
    ),
}



@dataclass(frozen=True)
class SeededSystem:
    """A stochastic system: sample ``k`` of every clip degrades the reference with ``strengths[k]`` and its own noise."""

    name: str
    strengths: tuple[float, ...]
    description: str


#: Systems written as several samples per clip, by task (``simulated_systems/seeded/<task>/<name>/``).
SEEDED: dict[str, tuple[SeededSystem, ...]] = {
    "matting": (SeededSystem("matte_seeded", (0.55, 0.65, 0.75),
                             "a stochastic matting model: three samples per clip, strengths 0.55, 0.65 and 0.75 "
                             "(between matte_fair and matte_poor), each with its own boundary noise and flicker"),),
}

TASK_DESCRIPTIONS = {
    "matting": "reference alpha with graded boundary (blur, erosion/dilation, lost thin structures) "
    "and temporal (boundary flicker) errors; <clip_id>/000000.png",
    "vision_driven": "reference video with graded colour drift, blur, misalignment and noise; <clip_id>.mp4",
    "audio_driven": "figure rendered from the first frame's appearance driven by the audio, graded identity "
    "drift and lip-sync offset; <clip_id>.mp4 with the driving audio",
    "voice_cloning": "clip text in the actor's voice with graded timbre shift towards another speaker and "
    "graded noise/artifacts; <clip_id>.wav",
    "emotion": "free-text answers per input setting with graded accuracy; predictions.jsonl; ground truth "
    "is the emotion of the clip id",
}

# Free-text answer templates (English and Mandarin) an LLM might give.
_ANSWERS = (
    "The speaker sounds {en}.",
    "Emotion: {noun}",
    "她看起来很{zh}",
    "I think the person is {en}.",
    "{noun}",
    "这个人的情绪是{zh}。",
    "Based on the gestures and the voice, I would say {en}.",
)
_CONTRAST = "I think she is {en}, not {other}."
_UNPARSEABLE = ("I cannot determine the emotion from this input.", "无法判断。", "The clip is too short to tell.")
_WORDS = {
    Emotion.HAPPY: ("happy", "Happiness", "开心"),
    Emotion.ANGRY: ("furious", "Anger", "生气"),
    Emotion.SAD: ("sad", "Sadness", "伤心"),
    Emotion.AFRAID: ("scared", "Fear", "害怕"),
    Emotion.DISGUSTED: ("disgusted", "Disgust", "厌恶"),
    Emotion.SURPRISED: ("surprised", "Surprise", "惊讶"),
    Emotion.NEUTRAL: ("calm", "Neutral", "平静"),
}
# Plausible confusions (a wrong answer prefers a neighbour, as real recognisers do).
_CONFUSIONS = {
    Emotion.HAPPY: (Emotion.SURPRISED, Emotion.NEUTRAL),
    Emotion.ANGRY: (Emotion.DISGUSTED, Emotion.SURPRISED),
    Emotion.SAD: (Emotion.NEUTRAL, Emotion.AFRAID),
    Emotion.AFRAID: (Emotion.SURPRISED, Emotion.SAD),
    Emotion.DISGUSTED: (Emotion.ANGRY, Emotion.SAD),
    Emotion.SURPRISED: (Emotion.AFRAID, Emotion.HAPPY),
    Emotion.NEUTRAL: (Emotion.SAD, Emotion.HAPPY),
}


def emotion_answer(truth: Emotion, accuracy: float, rng: np.random.Generator, p_unparseable: float = 0.03) -> str:
    """A free-text answer that names ``truth`` with probability ``accuracy``.

    Example:
        >>> import numpy as np
        >>> emotion_answer(Emotion.ANGRY, 1.0, np.random.default_rng(1), p_unparseable=0.0) != ""
        True
    """
    if rng.uniform() < p_unparseable:
        return str(rng.choice(_UNPARSEABLE))
    if rng.uniform() < accuracy:
        said = truth
    elif rng.uniform() < 0.6:
        said = _CONFUSIONS[truth][int(rng.integers(2))]
    else:
        said = EMOTIONS[int(rng.choice([i for i in range(len(EMOTIONS)) if EMOTIONS[i] is not truth]))]
    en, noun, zh = _WORDS[said]
    if said is not truth and rng.uniform() < 0.15:
        other = _CONFUSIONS[said][0]
        if other is not said:
            return _CONTRAST.format(en=en, other=_WORDS[other][0])
    return _ANSWERS[int(rng.integers(len(_ANSWERS)))].format(en=en, noun=noun, zh=zh)


def _disk(radius: int) -> np.ndarray:
    y, x = np.mgrid[-radius : radius + 1, -radius : radius + 1]
    return x * x + y * y <= radius * radius + radius  # a round 3x3 cross for radius 1


def degrade_alpha(alpha: np.ndarray, strength: float, rng: np.random.Generator, px_unit: float = 1.0) -> np.ndarray:
    """Graded matting errors on a uint8 (T, H, W) alpha clip; returns uint8 of the same shape.

    Boundary: blur (sigma grows with strength), erosion (mid strengths) or dilation (high),
    thin structures removed by a morphological opening. Temporal: the boundary band is
    perturbed by an independent random gain per frame (flicker).

    Example:
        >>> import numpy as np
        >>> a = np.zeros((2, 20, 20), np.uint8); a[:, 5:15, 5:15] = 255
        >>> b = degrade_alpha(a, 0.0, np.random.default_rng(0))
        >>> bool((b == a).all())
        True
    """
    # scipy.ndimage, not OpenCV: OpenCV's multi-threaded float filters gave run-to-run
    # differences in the last bit, which broke byte-identical output for a seed.
    from scipy import ndimage

    if alpha.ndim != 3 or alpha.dtype != np.uint8:
        raise ValueError(f"alpha must be uint8 (T, H, W), got {alpha.dtype} {alpha.shape}")
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"strength must be in [0, 1], got {strength}")
    if strength == 0.0:
        return alpha.copy()
    out = np.empty_like(alpha)
    sigma = (0.2 + 2.0 * strength) * px_unit
    radius = int(round(2.0 * strength * px_unit))
    morph = _disk(radius) if radius else None
    thin = _disk(1)
    gains = rng.standard_normal(alpha.shape[0]) * 0.6 * strength
    for t, frame in enumerate(alpha):
        a = frame.astype(np.float64) / 255.0
        if strength >= 0.3:
            opened = ndimage.grey_opening(a, footprint=thin)  # loses 1-2 px fingers and strands
            keep = np.clip((strength - 0.3) / 0.4, 0, 1)
            a = keep * opened + (1 - keep) * a
        if morph is not None:
            a = ndimage.grey_dilation(a, footprint=morph) if strength > 0.6 else ndimage.grey_erosion(a, footprint=morph)
        a = ndimage.gaussian_filter(a, sigma, mode="nearest")
        band = 4 * a * (1 - a)
        a = np.clip(a + gains[t] * band, 0, 1)
        out[t] = np.round(a * 255.0)
    return out


def degrade_video(rgb: np.ndarray, strength: float, rng: np.random.Generator, px_unit: float = 1.0) -> np.ndarray:
    """Graded colour drift, blur, drifting misalignment and noise on uint8 (T, H, W, 3)."""
    from scipy import ndimage

    n = rgb.shape[0]
    out = np.empty_like(rgb)
    phases = rng.uniform(0, 2 * np.pi, 3)
    # A per-clip fixed noise pattern (generator texture artifacts) plus weak temporal noise:
    # independent strong noise per frame would dominate the encoding time of the whole synth.
    pattern = rng.standard_normal(rgb.shape[1:]) * (1.0 + 6.0 * strength)
    sigma = (0.3 + 1.6 * strength) * px_unit
    for t, frame in enumerate(rgb):
        u = t / max(n - 1, 1)
        gain = 1 + 0.15 * strength * np.sin(2 * np.pi * u + phases) * min(1.0, 0.3 + u)
        f = frame.astype(np.float64) * gain[None, None, :]
        f = ndimage.gaussian_filter(f, (sigma, sigma, 0), mode="nearest")
        dx, dy = 2.5 * strength * px_unit * (0.5 + 0.5 * u), 1.5 * strength * px_unit * np.sin(np.pi * u)
        f = ndimage.shift(f, (dy, dx, 0), order=1, mode="nearest")
        f += pattern + rng.standard_normal(f.shape) * strength
        out[t] = np.clip(np.round(f), 0, 255)
    return out


def degrade_speech(audio: np.ndarray, strength: float, rng: np.random.Generator, sample_rate: int) -> np.ndarray:
    """Add graded noise, clicks and dropouts (float32 in [-1, 1], same length)."""
    x = np.asarray(audio, np.float64).copy()
    rms = np.sqrt(np.mean(x**2)) or 1e-3
    snr_db = 40.0 - 30.0 * strength
    x += rng.standard_normal(x.size) * rms * 10 ** (-snr_db / 20)
    for _ in range(int(round(12 * strength))):  # clicks
        i = int(rng.integers(x.size))
        x[i : i + 3] += rng.choice([-1, 1]) * 0.5 * strength
    if strength > 0.5:  # dropouts of 20-40 ms
        for _ in range(int(round(6 * (strength - 0.5)))):
            n = int(rng.uniform(0.02, 0.04) * sample_rate)
            i = int(rng.integers(max(1, x.size - n)))
            x[i : i + n] *= 0.05
    return np.clip(x, -1, 1).astype(np.float32)


class SystemWriter:
    """Writes every task's simulated systems clip by clip, then the manifest."""

    def __init__(self, root: "str | Path", layout: ReleaseLayout, seed: int = 0, people: bool = False) -> None:
        self.root = Path(root) / SYSTEMS_DIR
        self.people = people  # the generation tasks' systems plant human-motion defects (synth/people.py)
        self.layout = layout
        self.seed = seed
        self.predictions: dict[str, list[str]] = {s.name: [] for s in SYSTEMS["emotion"]}

    def _rng(self, spec, task_index: int, system_index: int) -> np.random.Generator:
        c = spec.cid
        return np.random.default_rng(np.random.SeedSequence(
            [spec.seed, c.actor_id, c.emotion.index, c.action_id, c.script_id, TAG_SYSTEM + task_index,
             system_index]))

    def add_clip(self, spec, alpha: np.ndarray, rgb: np.ndarray, audio: np.ndarray, mouth: np.ndarray) -> None:
        """Write all systems' outputs for one clip from its reference media."""
        from ..readers import media
        from .figure import appearance_for_actor, background, blend_appearance, build_parts, render_parts, rest_pose
        from .voice import blend_voices, synthesize_speech, voice_for_actor

        name = self.layout.clip_id(spec.cid)
        px_unit = spec.height / 180.0
        for k, system in enumerate(SYSTEMS["matting"]):
            pred = degrade_alpha(alpha, system.strength, self._rng(spec, 0, k), px_unit)
            media.write_alpha_pngs(self.root / "matting" / system.name / name, [pred])
        for k, seeded in enumerate(SEEDED["matting"]):
            for sample, strength in enumerate(seeded.strengths):  # a stream per (system, sample): the seeds
                pred = degrade_alpha(alpha, strength, self._rng(spec, 0, 100 + 10 * k + sample), px_unit)
                media.write_alpha_pngs(self.root / SIMULATED_SEEDED_DIR / "matting" / seeded.name / name
                                       / f"sample_{sample}", [pred])
        if self.people:
            self._people(spec, name, audio, mouth)
            self._emotion(spec, name)
            return
        for k, system in enumerate(SYSTEMS["vision_driven"]):
            pred = degrade_video(rgb, system.strength, self._rng(spec, 1, k), px_unit)
            media.write_video(self.root / "vision_driven" / system.name / f"{name}.mp4", [pred], fps=spec.fps,
                              crf=SYSTEM_CRF)

        # Talking figure: static rest body from the source look; the head nods with speech,
        # drifts towards another identity and its mouth lags the audio.
        actor = spec.cid.actor_id
        source = appearance_for_actor(actor, spec.seed)
        other = appearance_for_actor(actor + 1000, spec.seed)
        W, H = spec.width, spec.height
        bg = background(W, H)
        rest = rest_pose()
        body = [p for p in build_parts(rest, source, W, H) if p.group == "body"]
        a_body, c_body = render_parts(body, W, H)
        for k, system in enumerate(SYSTEMS["audio_driven"]):
            frames = np.empty((spec.n_frames, H, W, 3), np.uint8)
            for i in range(spec.n_frames):
                lagged = mouth[max(i - system.lag_frames, 0)] if i >= system.lag_frames else 0.0
                pose = rest.copy()
                pose[2 + 3] = 0.01 * lagged  # head_nod follows the (lagged) speech
                pose[12] = lagged
                look = blend_appearance(source, other, system.strength * i / max(spec.n_frames - 1, 1))
                head = [p for p in build_parts(pose, look, W, H) if p.group == "head"]
                a_head, c_head = render_parts(head, W, H)
                a = a_head + a_body * (1 - a_head)
                c = c_head + c_body * (1 - a_head)[..., None]
                frames[i] = np.round(np.clip(c + (1 - a)[..., None] * bg, 0, 1) * 255)
            media.write_video(self.root / "audio_driven" / system.name / f"{name}.mp4", [frames], fps=spec.fps,
                              audio=audio, sample_rate=spec.sample_rate, crf=SYSTEM_CRF)

        voice = voice_for_actor(actor, spec.seed)
        other_voice = voice_for_actor(actor + 1000, spec.seed)
        for k, system in enumerate(SYSTEMS["voice_cloning"]):
            shifted = blend_voices(voice, other_voice, system.strength)
            speech = synthesize_speech(spec.text, shifted, spec.cid.emotion, spec.n_samples, spec.sample_rate,
                                       spec.rng(TAG_AUDIO))
            speech = degrade_speech(speech, system.strength, self._rng(spec, 3, k), spec.sample_rate)
            media.write_wav(self.root / "voice_cloning" / system.name / f"{name}.wav", speech, spec.sample_rate)
        self._emotion(spec, name)

    def _people(self, spec, name: str, audio: np.ndarray, mouth: np.ndarray) -> None:
        """The generation systems of a people clip (:mod:`.people`): planted human-motion defects."""
        from ..readers import media
        from .people import PEOPLE_DEFECTS, clip_speech, system_frames

        for task_index, task in ((1, "vision_driven"), (2, "audio_driven")):
            for k, (system, defects) in enumerate(zip(SYSTEMS[task], PEOPLE_DEFECTS[task])):
                frames = system_frames(spec, defects, mouth, self._rng(spec, task_index, k))
                driving = {"audio": audio, "sample_rate": spec.sample_rate} if task == "audio_driven" else {}
                media.write_video(self.root / task / system.name / f"{name}.mp4", frames, fps=spec.fps,
                                  crf=SYSTEM_CRF, **driving)
        for k, system in enumerate(SYSTEMS["voice_cloning"]):
            speech = degrade_speech(clip_speech(spec, pitch_shift=40.0 * system.strength), system.strength,
                                    self._rng(spec, 3, k), spec.sample_rate)
            media.write_wav(self.root / "voice_cloning" / system.name / f"{name}.wav", speech, spec.sample_rate)

    def _emotion(self, spec, name: str) -> None:
        for k, system in enumerate(SYSTEMS["emotion"]):
            rng = self._rng(spec, 4, k)
            for setting, acc in zip(EMOTION_SETTINGS, system.accuracy):
                answer = emotion_answer(spec.cid.emotion, acc, rng)
                self.predictions[system.name].append(json.dumps(
                    {"clip_id": name, "input_setting": setting, "answer": answer}, ensure_ascii=False))

    def finish(self) -> dict[str, list[str]]:
        """Write the emotion predictions and ``manifest.json``; return task -> system names."""
        for system in SYSTEMS["emotion"]:
            path = self.root / "emotion" / system.name / "predictions.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("".join(line + "\n" for line in self.predictions[system.name]), encoding="utf-8")
        manifest = {
            "description": "Simulated system outputs of the synthetic HUG-VIS grid; quality graded by "
            "construction (strength 0 = reference copy). expected_rank 1 = best.",
            "seed": self.seed,
            "ground_truth": {"emotion": "the emotion field of each clip id"},
            "tasks": {
                task: {
                    "description": TASK_DESCRIPTIONS[task],
                    "systems": {
                        s.name: {
                            "strength": s.strength,
                            "expected_rank": s.expected_rank,
                            "description": s.description,
                            **({"lip_sync_offset_frames": s.lag_frames} if task == "audio_driven" else {}),
                            **({"accuracy": dict(zip(EMOTION_SETTINGS, s.accuracy))} if s.accuracy else {}),
                        }
                        for s in systems
                    },
                }
                for task, systems in SYSTEMS.items()
            },
        }
        manifest[SIMULATED_SEEDED_DIR] = {
            task: {s.name: {"strengths": list(s.strengths), "samples": len(s.strengths), "description": s.description}
                   for s in systems} for task, systems in SEEDED.items()}
        if task_settings := EMOTION_SETTINGS:
            manifest["tasks"]["emotion"]["input_settings"] = list(task_settings)
        if self.people:
            from .people import PEOPLE_DEFECTS, PEOPLE_DESCRIPTIONS, describe

            for task, words in PEOPLE_DESCRIPTIONS.items():
                entry = manifest["tasks"][task]
                entry["description"] = words
                for system, defects in zip(SYSTEMS[task], PEOPLE_DEFECTS.get(task, ())):
                    entry["systems"][system.name]["description"] = describe(defects)
                    entry["systems"][system.name]["planted"] = dataclasses.asdict(defects)
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                                 encoding="utf-8")
        return {task: [s.name for s in systems] for task, systems in SYSTEMS.items()}

"""Write a synthetic release tree (and simulated system outputs) for a small grid.

See :func:`synthesize`. Everything random is drawn from ``numpy.random.SeedSequence``
keyed by ``(seed, clip fields, purpose)``, encoders run single-threaded, and nothing
depends on the wall clock, so the same arguments give the same bytes in every file.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from ..datamodel.grid import ClipId, Emotion, iter_grid
from ..datamodel.layout import CSV_COLUMNS, DEFAULT_LAYOUT, ReleaseLayout
from ..outputs import claim
from .figure import P, appearance_for_actor, background, build_parts, key_points, render_parts
from .motion import clip_motion
from .prompts import is_han, prompt_for
from .seeds import TAG_ASR, TAG_AUDIO, TAG_MOTION
from .voice import Voice, frame_envelope, synthesize_speech, voice_for_actor

SHUTTER = 0.5  # exposure as a fraction of the frame interval (a 180-degree shutter)
MAX_SUBFRAMES = 5
SUBFRAME_STEP = 2.0  # px the fastest key point may move between sub-frames (blur stays smooth)


@dataclass
class SynthSummary:
    """What :func:`synthesize` wrote."""

    root: Path
    clip_ids: list[str]
    n_frames: int
    fps: float
    sample_rate: int
    size: tuple[int, int]
    systems: dict[str, list[str]] = field(default_factory=dict)

    def __str__(self) -> str:
        systems = ", ".join(f"{t}: {len(s)}" for t, s in self.systems.items()) or "none"
        return (
            f"{len(self.clip_ids)} clips x {self.n_frames} frames ({self.size[0]}x{self.size[1]} @ {self.fps:g} fps, "
            f"{self.sample_rate} Hz) at {self.root}; simulated systems: {systems}"
        )


@dataclass(frozen=True)
class ClipSpec:
    """Everything needed to render one clip (pure data; rendering is a function of it)."""

    cid: ClipId
    seed: int
    n_frames: int
    fps: float
    sample_rate: int
    width: int
    height: int
    people: bool = False  # the actors are photographs (synth/people.py), not the cartoon figure

    @property
    def n_samples(self) -> int:
        return int(round(self.n_frames / self.fps * self.sample_rate))

    @property
    def duration(self) -> float:
        return self.n_frames / self.fps

    def rng(self, tag: int) -> np.random.Generator:
        c = self.cid
        return np.random.default_rng(
            np.random.SeedSequence([self.seed, c.actor_id, c.emotion.index, c.action_id, c.script_id, tag])
        )

    @property
    def text(self) -> str:
        return prompt_for(self.cid.emotion, self.cid.script_id)


def clip_audio(spec: ClipSpec, voice: "Voice | None" = None) -> np.ndarray:
    """The clip's speech, float32 of exactly ``spec.n_samples``."""
    voice = voice or voice_for_actor(spec.cid.actor_id, spec.seed)
    return synthesize_speech(spec.text, voice, spec.cid.emotion, spec.n_samples, spec.sample_rate,
                             spec.rng(TAG_AUDIO))


def render_frames(
    spec: ClipSpec,
    poses_at,
    mouth: np.ndarray,
    look_at,
    motion_blur: bool = True,
    chunk_frames: int = 32,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Yield (alpha uint8 (n, H, W), RGB uint8 (n, H, W, 3)) chunks of a clip.

    Args:
        poses_at: ``times -> poses`` (see :func:`motion.clip_motion`).
        mouth: per-frame mouth opening in [0, 1].
        look_at: ``frame index -> Appearance``.
        motion_blur: average sub-frame renders inside the exposure, as many as the fastest
            key point moves at most SUBFRAME_STEP px between sub-frames.
    """
    W, H = spec.width, spec.height
    bg = background(W, H)
    dt = SHUTTER / spec.fps
    for start in range(0, spec.n_frames, chunk_frames):
        stop = min(start + chunk_frames, spec.n_frames)
        alphas = np.empty((stop - start, H, W), np.uint8)
        rgbs = np.empty((stop - start, H, W, 3), np.uint8)
        for i in range(start, stop):
            t = i / spec.fps
            look = look_at(i)
            k = 1
            if motion_blur:
                ends = poses_at(np.array([t - dt / 2, t + dt / 2]))
                move = np.abs(key_points(ends[0], look, W, H) - key_points(ends[1], look, W, H)).max()
                k = int(np.clip(np.ceil(move / SUBFRAME_STEP), 1, MAX_SUBFRAMES))
            times = t + dt * ((np.arange(k) + 0.5) / k - 0.5) if k > 1 else np.array([t])
            alpha = np.zeros((H, W), np.float32)
            premult = np.zeros((H, W, 3), np.float32)
            for pose in poses_at(times):
                pose[P["mouth"]] = mouth[i]
                a, c = render_parts(build_parts(pose, look, W, H), W, H)
                alpha += a
                premult += c
            alpha /= k
            premult /= k
            alphas[i - start] = np.round(alpha * 255.0)
            rgb = premult + (1.0 - alpha)[..., None] * bg
            rgbs[i - start] = np.round(np.clip(rgb, 0, 1) * 255.0)
        yield alphas, rgbs


def reference_clip(spec: ClipSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(alpha (T, H, W) uint8, RGB (T, H, W, 3) uint8, audio float32, mouth envelope (T,)) of a clip (a people
    clip's from :func:`.people.reference_clip`)."""
    if spec.people:
        from .people import reference_clip as people_clip

        return people_clip(spec)
    audio = clip_audio(spec)
    mouth = frame_envelope(audio, spec.n_frames)
    look = appearance_for_actor(spec.cid.actor_id, spec.seed)
    motion = clip_motion(spec.cid.emotion, spec.cid.action_id, spec.duration, spec.rng(TAG_MOTION))
    chunks = list(render_frames(spec, motion, mouth, lambda i: look))
    alpha = np.concatenate([c[0] for c in chunks])
    rgb = np.concatenate([c[1] for c in chunks])
    return alpha, rgb, audio, mouth


# Plausible ASR slips: a character and a near-homophone.
_ASR_SWAPS = {"的": "得", "在": "再", "他": "她", "是": "事", "了": "啦", "我": "哦", "你": "呢", "这": "着",
              "么": "吗", "到": "道", "有": "又", "会": "回", "一": "衣", "天": "田", "不": "部"}


def asr_transcript(text: str, rng: np.random.Generator, p_error: float = 0.3) -> str:
    """A near-copy of ``text``: with probability ``p_error`` one Han character is substituted.

    Example:
        >>> import numpy as np
        >>> asr_transcript("你好", np.random.default_rng(0), p_error=0.0)
        '你好'
        >>> out = asr_transcript("你好", np.random.default_rng(0), p_error=1.0)
        >>> len(out) == 2 and out != "你好"
        True
    """
    if rng.uniform() >= p_error:
        return text
    positions = [i for i, c in enumerate(text) if is_han(c)]
    if not positions:
        return text
    swappable = [i for i in positions if text[i] in _ASR_SWAPS]
    i = int(rng.choice(swappable or positions))
    new = _ASR_SWAPS.get(text[i], "嗯" if text[i] != "嗯" else "啊")
    return text[:i] + new + text[i + 1 :]


def _parse_size(size: Sequence[int]) -> tuple[int, int]:
    if len(size) != 2:
        raise ValueError(f"size must be (width, height), got {size!r}")
    width, height = (int(v) for v in size)
    if width < 8 or height < 8 or width % 2 or height % 2:
        raise ValueError(f"size must be even and at least 8x8 (H.264 yuv420p), got {width}x{height}")
    return width, height


def synthesize(
    out_dir: "str | Path",
    actors: "int | Sequence[int]" = 2,
    emotions: "Sequence[Emotion | str] | None" = None,
    actions: "int | Sequence[int]" = 4,
    scripts: "int | Sequence[int]" = 2,
    seconds: float = 2.0,
    size: Sequence[int] = (320, 180),
    fps: float = 30,
    sample_rate: int = 16000,
    seed: int = 0,
    systems: bool = True,
    layout: "ReleaseLayout | None" = None,
    progress: bool = False,
    into_existing: bool = False,
    people: bool = False,
) -> SynthSummary:
    """Write a synthetic HUG-VIS release (and simulated system outputs) under ``out_dir``.

    Args:
        out_dir: release root: a new or empty folder, or one an earlier ``synthesize`` wrote (its files are
            replaced by this release's; a file it did not write, or changed since, stops it before anything is
            written: :mod:`hug_vis_dataset.outputs`).
        actors, emotions, actions, scripts: the grid slice, as in :func:`grid.iter_grid`
            (``emotions=None`` is all seven; an int ``n`` means ids ``1..n``).
        seconds: clip duration; frames = ``max(1, round(seconds * fps))`` and audio has exactly
            ``frames / fps * sample_rate`` samples.
        size: (width, height), both even.
        fps, sample_rate: video frame rate and audio rate.
        seed: every random draw derives from it and the clip fields.
        systems: also write ``simulated_systems/`` (see docs/CONVENTIONS.md).
        layout: release layout (default :data:`layout.DEFAULT_LAYOUT`); a non-default one is
            saved to ``metadata/layout.json`` so readers find it.
        progress: show a tqdm progress bar.
        into_existing: ``out_dir`` may be a non-empty folder hugvis did not make (nothing in it is replaced).
        people: the actors are real photographs moved by known motion, speaking with espeak-ng, and the
            generation tasks' simulated systems plant graded human-motion defects (:mod:`.people`; needs
            ``hugvis weights download mediapipe`` for the cut-out and espeak-ng; without them a ValueError says
            which is missing, before anything is written).

    Returns:
        A :class:`SynthSummary`.

    Example:
        >>> import tempfile, os
        >>> root = tempfile.mkdtemp()
        >>> s = synthesize(root, actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.2,
        ...                size=(64, 36), systems=False)
        >>> s.clip_ids, s.n_frames
        (['actor_0001_happy_action_01_script_001'], 6)
        >>> sorted(os.listdir(root))
        ['.hugvis-files.jsonl', '.hugvis-output.json', 'alpha_matte', 'audio', 'metadata', 'transcripts', 'video_processed']
    """
    from ..readers import media

    layout = layout or DEFAULT_LAYOUT
    if float(fps) != layout.expected_fps:
        # the release's frame rate is part of its layout; record it so validation agrees
        layout = dataclasses.replace(layout, expected_fps=float(fps))
    width, height = _parse_size(size)
    if not fps > 0 or not seconds > 0:
        raise ValueError(f"fps and seconds must be positive, got fps={fps}, seconds={seconds}")
    if int(sample_rate) < 4000:
        raise ValueError(f"sample_rate must be >= 4000, got {sample_rate}")
    n_frames = max(1, int(round(seconds * fps)))
    cids = list(iter_grid(actors, emotions, actions, scripts))
    if not cids:
        raise ValueError("the requested grid is empty")
    if people:
        from .people import missing_requirement

        if why := missing_requirement():
            raise ValueError(why)
    specs = [ClipSpec(c, int(seed), n_frames, float(fps), int(sample_rate), width, height, bool(people))
             for c in cids]
    output = claim("hugvis synth", out_dir, "release", label="OUT_DIR", into_existing=into_existing)
    # Written in a staging folder of OUT_DIR, then merged in: what an earlier synth wrote there is replaced
    # (or, not written again, deleted); a file it did not write, or one changed since, stops it first.
    with output.staged() as root:
        sim = None
        if systems:
            from .systems import SystemWriter

            sim = SystemWriter(root, layout, seed=int(seed), people=bool(people))
        rows = []
        iterator = specs
        if progress:
            from tqdm import tqdm

            iterator = tqdm(specs, desc="synth", unit="clip")
        for spec in iterator:
            cid = spec.cid
            alpha, rgb, audio, mouth = reference_clip(spec)
            media.write_wav(root / layout.audio_path(cid), audio, spec.sample_rate)
            media.write_video(root / layout.video_path(cid), [rgb], fps=spec.fps, audio=audio,
                              sample_rate=spec.sample_rate)
            media.write_alpha_pngs(root / layout.alpha_dir_path(cid), [alpha])
            transcript = root / layout.transcript_path(cid)
            transcript.parent.mkdir(parents=True, exist_ok=True)
            transcript.write_text(spec.text + "\n", encoding="utf-8")
            if sim is not None:
                sim.add_clip(spec, alpha, rgb, audio, mouth)
            rows.append({
                "clip_id": layout.clip_id(cid),
                "actor_id": cid.actor_id,
                "emotion": cid.emotion.value,
                "action_id": cid.action_id,
                "script_id": cid.script_id,
                "transcript": spec.text,
                "asr_transcript": asr_transcript(spec.text, spec.rng(TAG_ASR)),
                "audio_path": layout.audio_path(cid),
                "video_path": layout.video_path(cid),
                "alpha_matte_path": layout.alpha_dir_path(cid),
                "rgba_foreground_path": "",
                "duration": f"{spec.duration:.6g}",
                "fps": f"{spec.fps:g}",
                "sample_rate": spec.sample_rate,
                "resolution": f"{width}x{height}",
            })
        csv_path = root / layout.metadata_csv
        csv_path.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        csv_path.write_text(buffer.getvalue(), encoding="utf-8")
        if layout != DEFAULT_LAYOUT:
            (root / "metadata").mkdir(parents=True, exist_ok=True)
            (root / "metadata" / "layout.json").write_text(layout.to_json() + "\n", encoding="utf-8")
        from ..validate import GridSpec, write_grid_declaration

        # declare the subset this tree holds, so `hugvis validate` checks completeness against it
        write_grid_declaration(root, GridSpec.from_dict({
            "actors": sorted({c.actor_id for c in cids}),
            "emotions": [e.value for e in dict.fromkeys(c.emotion for c in cids)],
            "actions": sorted({c.action_id for c in cids}),
            "scripts": sorted({c.script_id for c in cids}),
        }))
        from ..datamodel.layout import SYNTHETIC_MARKER

        (root / SYNTHETIC_MARKER).write_text(json.dumps({"synthetic": True, "generator": "hug_vis_dataset.synth",
                                                         "seed": int(seed), **({"people": True} if people else {})})
                                              + "\n", encoding="utf-8")
        system_names = sim.finish() if sim is not None else {}
        if sim is not None:
            from .ratings import write_simulated_ratings

            # simulated raters (not human judgements) so the MOS path runs on the synthetic grid too
            write_simulated_ratings(sim.root, [r["clip_id"] for r in rows], seed=int(seed),
                                    transcripts={r["clip_id"]: r["transcript"] for r in rows},
                                    duration=float(n_frames) / float(fps))
    return SynthSummary(Path(out_dir), [r["clip_id"] for r in rows], n_frames, float(fps), int(sample_rate),
                        (width, height), system_names)

"""The blind rater session of the Space's MOS study: what a rater is shown and what is stored.

:class:`BlindStudy` holds the callbacks (plain functions, tested without a browser);
:func:`hug_vis_dataset.space.mos_study.build_mos_tab` wires them to Gradio.

* **Blind.** The rater enters an id and gets their session (:mod:`hug_vis_dataset.studies.sessions`):
  items under opaque codes, in the session's seeded order. The media are hard links (copies where
  links fail) named ``<code>.mp4`` / ``<code>.wav`` in a per-study folder, so no URL, file name or
  label carries a system name; the server alone maps a code to (task, clip, system).
* **Explicit answers.** Every criterion starts unset; a submission with an unanswered criterion is
  refused naming it, and nothing is stored.
* **Gold items** are served like the others: the clip's real recording (``gold_reference``) and a
  degraded copy (``gold_degraded``, heavy blur and noise; :func:`degrade_video`, :func:`degrade_speech`).
* **Pairwise items** (a study with ``"protocol": "pairwise"``): two systems' outputs of the same
  clip side by side as "A" and "B", the side drawn per rater and item from the session seed
  (:func:`~hug_vis_dataset.studies.schedule.pair_sides`) and stored with the answer (``left``);
  media ``<code>-a`` / ``<code>-b``; each criterion is answered A, B or Tie and stored by
  :class:`~hug_vis_dataset.studies.preferences.PreferenceStore` in the same ratings log.
* **Emotion items** (a study with ``"protocol": "emotion"``): one clip in one input setting, only that
  setting's media (:mod:`hug_vis_dataset.studies.emotion_study`: the video without its sound, the
  recording, the middle frame, the transcript), answered with one of the seven emotions or "Cannot
  tell" and stored by :class:`~hug_vis_dataset.studies.emotion_answers.EmotionAnswerStore` in the same
  ratings log.
* **Timing.** The server notes when an item was shown; the answer is stored with ``elapsed`` and
  the media's ``duration`` (seconds), so raters answering faster than the media are flagged
  (:mod:`hug_vis_dataset.studies.rater_qc`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..presentation.escaping import markdown_text
from .anchors import ANCHORS, anchor_markdown, pairwise_markdown
from .emotion_answers import EmotionAnswerStore
from .preferences import PreferenceStore
from .rater_qc import GOLD_HIGH, GOLD_LOW
from .ratings import RatingError, RatingStore
from .schedule import pair_sides
from .sessions import SESSIONS_FILE, Session, SessionLog, coverage, coverage_markdown
from .spec import EMOTION, PAIRWISE, StudyItem, StudySpec

VOICE_TASK = "voice_cloning"


@dataclass
class ItemView:
    """What the form shows for the current item (media paths carry only the opaque code)."""

    code: str = ""
    task: str = ""
    criteria: tuple[str, ...] = ()
    video: "str | None" = None
    speech: "str | None" = None
    portrait: "np.ndarray | None" = None
    reference_speech: "str | None" = None
    progress: str = ""
    done: bool = False
    anchors: list[str] = field(default_factory=list)
    #: Pairwise items: the media shown as "B" (``video`` / ``speech`` are "A").
    video_b: "str | None" = None
    speech_b: "str | None" = None
    #: Emotion items: the middle frame (Image frame) and the transcript (Text); ``speech`` is the recording alone.
    image: "str | None" = None
    text: "str | None" = None


class BlindStudy:
    """Sessions, blind media and submissions of one study over one rating store.

    Args:
        study: the :class:`~hug_vis_dataset.studies.study_desk.MosStudy` (release, system media,
            reference media, the store with its ``allowed`` check).
        spec: the study definition.
        folder: where the session log and the blind media live.
    """

    def __init__(self, study, spec: StudySpec, folder: "str | Path"):
        self.study = study
        self.spec = spec
        self.folder = Path(folder)
        self.log = SessionLog(self.folder / SESSIONS_FILE, spec)
        self.media_dir = self.folder / "blind_media" / spec.name
        self._shown: dict[tuple[str, str], float] = {}  # (rater, code) -> when it was shown
        # Pairwise and emotion answers share the ratings log (and its lock); the study decides what is presented.
        self.preferences = PreferenceStore(self.ratings.path, allowed=study.offer_problem)
        self.emotion_answers = EmotionAnswerStore(self.ratings.path, allowed=study.emotion_offer_problem)

    @property
    def ratings(self) -> RatingStore:
        return self.study.ratings

    @property
    def pairwise(self) -> bool:
        return self.spec.protocol == PAIRWISE

    @property
    def emotion(self) -> bool:
        return self.spec.protocol == EMOTION

    def answered(self, rater: "str | None" = None) -> dict[str, set[str]]:
        """rater -> the item codes they answered (in this study)."""
        frame = (self.preferences.frame() if self.pairwise else self.emotion_answers.frame() if self.emotion
                 else self.ratings.frame())
        if not len(frame):
            return {}
        frame = frame[(frame["study"] == self.spec.name) & frame["item"].notna()]
        if rater is not None:
            frame = frame[frame["rater"] == rater]
        return {r: set(g["item"]) for r, g in frame.groupby("rater")}

    # ------------------------------------------------------------------ session
    def current(self, rater: Any, new_session: bool = True) -> "tuple[ItemView, str]":
        """The rater's next item (resuming their session) and a message; never raises.

        With ``new_session`` False (right after an answer) a finished session is not followed by a
        new one: the rater is told it is complete and may press *Start / resume* for another.
        """
        from ..datamodel.results import name_problem

        rater = rater.strip() if isinstance(rater, str) else rater
        problem = name_problem("rater", rater)
        if problem:
            return ItemView(), f"**Enter your rater id:** {markdown_text(problem)}"
        done = self.answered(rater).get(rater, set())
        latest = self.log.latest(rater)
        if not new_session and latest is not None and not latest.remaining(done):
            return ItemView(done=True), (f"Session {latest.number} is complete: thank you. Press *Start / resume* "
                                         "for another session, or close the page.")
        session = self.log.open_session(rater, done)
        left = session.remaining(done)
        if not left:
            return ItemView(done=True), (f"Thank you, {markdown_text(rater)}: there is nothing left for you to rate "
                                         "in this study.")
        code, item = left[0]
        position = session.codes().index(code) + 1
        view = self._view(code, item, session)
        view.progress = f"Session {session.number}, item {position} of {len(session.entries)} (code `{code}`)"
        self._shown[(rater, code)] = time.monotonic()
        return view, ""

    def submit(self, rater: Any, code: Any, *answers: Any) -> "tuple[str, bool]":
        """Store the rater's answers to ``code``; (Markdown message, stored?). Never raises.

        ``answers`` are the radio values in the item's criteria order (None = unanswered).
        """
        rater = rater.strip() if isinstance(rater, str) else rater
        session = self._session_of(rater, code) if isinstance(code, str) else None
        if session is None:
            return "**Not stored:** this item is not in your session; press *Start / resume*.", False
        item = dict(session.entries)[code]
        values = dict(zip(item.criteria, answers))
        if self.emotion and values.get(item.criteria[0]) in (None, ""):
            return "**Not stored:** please choose an answer (one of the seven emotions, or Cannot tell).", False
        missing = [ANCHORS[c][0] for c in item.criteria if values.get(c) in (None, "") and c in ANCHORS]
        if missing:
            need = "an answer: A, B or Tie" if self.pairwise else "a score"
            return f"**Not stored:** please answer {', '.join(missing)} (every criterion needs {need}).", False
        shown = self._shown.get((rater, code))
        extra = {"study": self.spec.name, "item": code, "duration": self._duration(code, item),
                 "elapsed": None if shown is None else round(time.monotonic() - shown, 3)}
        try:
            if self.pairwise:
                left = pair_sides(session.seed, code, item.systems)[0]
                self.preferences.add(rater, item.task, item.clip_id, item.systems, values, left, extra=extra)
            elif self.emotion:
                self.emotion_answers.add(rater, item.clip_id, item.systems[0], values[item.criteria[0]], extra=extra)
            else:
                scores = {c: _as_score(v) for c, v in values.items()}
                self.ratings.add(rater, item.task, item.clip_id, item.systems[0], scores, extra=extra)
        except RatingError as err:
            return f"**Not stored:** {markdown_text(err)}", False
        problem = self.study.on_stored() if self.study.on_stored is not None else None
        message = f"Stored your answer to item `{code}`."
        return message + (f" **{markdown_text(problem)}**" if problem else ""), True

    def coverage(self) -> dict:
        """:func:`~hug_vis_dataset.studies.sessions.coverage` of this study now."""
        return coverage(self.spec, self.log.sessions(), self.answered())

    def coverage_markdown(self) -> str:
        return coverage_markdown(self.coverage())

    def _session_of(self, rater: Any, code: str) -> "Session | None":
        """The rater's session that holds ``code`` (None: not theirs, or no such code)."""
        for session in self.log.sessions():
            if session.rater == rater and code in session.codes():
                return session
        return None

    # ------------------------------------------------------------------ media
    def _view(self, code: str, item: StudyItem, session: Session) -> ItemView:
        from ..references import read_reference_portrait

        if self.emotion:  # one clip in one input setting: only that setting's media, named by the code
            from .emotion_study import instructions, item_media

            media = item_media(self.study.release.record(item.clip_id), item.systems[0], self.media_dir, code)
            return ItemView(code, item.task, item.criteria, video=media.video, speech=media.audio, image=media.image,
                            text=media.text, anchors=[instructions(item.systems[0])])
        refs = self.study.references(item.task, item.clip_id)
        if self.pairwise:
            # "A" and "B" in the session's seeded order; the files carry the code and the side only.
            sides = pair_sides(session.seed, code, item.systems)
            shown = [self._blind_copy(f"{code}-{tag}", source) if source else None
                     for tag, source in zip("ab", (self._source(item, refs, s) for s in sides))]
            anchors = [pairwise_markdown(c, item.task) for c in item.criteria]
        else:
            source = self._source(item, refs)
            shown = [self._blind_copy(code, source) if source else None, None]
            anchors = [anchor_markdown(c, item.task) for c in item.criteria]
        if item.task == VOICE_TASK:
            return ItemView(code, item.task, item.criteria, speech=shown[0], speech_b=shown[1],
                            reference_speech=refs.get("audio"), anchors=anchors)
        try:
            portrait = read_reference_portrait(refs["portrait"])
        except Exception:  # noqa: BLE001 - a broken portrait must not stop the session; the video still plays
            portrait = None
        return ItemView(code, item.task, item.criteria, video=shown[0], video_b=shown[1], portrait=portrait,
                        anchors=anchors)

    def _source(self, item: StudyItem, refs: dict, system: "str | None" = None) -> "str | None":
        """The file behind an item (or one ``system`` of a pair): the system's output, the
        reference, or its degraded copy."""
        system = system or item.systems[0]
        voice = item.task == VOICE_TASK
        reference = refs.get("audio" if voice else "video")
        if system == GOLD_HIGH:
            return reference
        if system == GOLD_LOW:
            out = self.media_dir / "_gold" / f"{item.task}-{item.clip_id}{'.wav' if voice else '.mp4'}"
            if not out.is_file():
                from ..outputs import mark_cache

                mark_cache(self.media_dir.parent)
                out.parent.mkdir(parents=True, exist_ok=True)
                (degrade_speech if voice else degrade_video)(reference, out)
            return str(out)
        return self.study.media(item.task, system, item.clip_id)

    def _blind_copy(self, code: str, source: str) -> str:
        """``<media_dir>/<code><suffix>``: a hard link (a copy across file systems) of ``source``.

        The blind media folder is a cache of the toolkit's (:func:`hug_vis_dataset.outputs.mark_cache`):
        everything in it is made again from the release when missing."""
        from ..outputs import mark_cache, put_scratch

        mark_cache(self.media_dir.parent)
        self.media_dir.mkdir(parents=True, exist_ok=True)
        target = self.media_dir / f"{code}{Path(source).suffix}"
        if not target.is_file():
            tmp = target.with_name(f".{code}.{os.getpid()}.tmp{Path(source).suffix}")
            try:
                os.link(source, tmp)
            except OSError:
                shutil.copyfile(source, tmp)
            put_scratch(tmp, target)
        return str(target)

    def _duration(self, code: str, item: StudyItem) -> "float | None":
        from ..readers.media import MediaError, audio_info, video_info

        if self.emotion:  # the media's duration, or the transcript's reading time (emotion_study.minimum_seconds)
            from .emotion_study import minimum_seconds

            record = self.study.release.record(item.clip_id)
            return minimum_seconds(item.systems[0], record.duration, record.transcript)

        suffix = ".wav" if item.task == VOICE_TASK else ".mp4"
        names = [f"{code}-a", f"{code}-b"] if self.pairwise else [code]
        durations = []
        for name in names:  # a pair: the longer of the two (the rater has to watch both)
            path = self.media_dir / f"{name}{suffix}"
            try:
                if item.task == VOICE_TASK:
                    frames, rate, _ = audio_info(path)
                    durations.append(round(frames / rate, 3))
                else:
                    durations.append(round(float(video_info(path, count_frames=False).duration), 3))
            except (MediaError, OSError, ValueError, ZeroDivisionError):
                return None
        return max(durations)


def _as_score(value: Any) -> Any:
    """A radio's value ("4") as the number it names; anything else as sent, for validation to refuse."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return value


def degrade_video(source: "str | Path", out: "str | Path") -> None:
    """A deliberately bad copy of a video (heavy blur, strong noise, muffled sound): the low gold item."""
    chain = ("boxblur=luma_radius='min(h/4,10)':luma_power=3:chroma_radius='min(ch/4,5)':chroma_power=3,"
             "noise=alls=70:allf=t,format=yuv420p")
    tmp = Path(out).with_name(Path(out).stem + ".tmp.mp4")
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", str(source), "-vf", chain,
                    "-af", "lowpass=f=400,volume=0.5", "-c:v", "libx264", "-c:a", "aac", str(tmp)], check=True)
    from ..outputs import put_scratch

    put_scratch(tmp, out)  # the gold items live in the blind-media cache


def degrade_speech(source: "str | Path", out: "str | Path", seed: int = 0) -> None:
    """A deliberately bad copy of a recording (noise at 0 dB SNR, hard clipping): the low gold item."""
    from ..readers.media import read_audio, write_wav

    audio, rate = read_audio(source)
    rng = np.random.default_rng(seed)
    power = float(np.sqrt(np.mean(audio ** 2))) or 0.1
    noisy = np.clip(audio + rng.normal(0.0, power, audio.shape), -0.3, 0.3).astype(np.float32)
    write_wav(out, noisy, rate)


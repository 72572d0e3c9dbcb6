"""The release tree layout, in one configurable place.

The provisional release (project page draft) is::

    metadata/clips.csv
    audio/actor_0001/happy/action_01/script_001.wav
    video_processed/actor_0001/happy/action_01/script_001.mp4
    alpha_matte/actor_0001/happy/action_01/script_001/000000.png ...
    rgba_foreground/actor_0001/happy/action_01/script_001.mov       (optional)
    transcripts/actor_0001/happy/action_01/script_001.txt

Every reader, writer and validator asks a :class:`ReleaseLayout` for paths; nothing else
hard-codes folder names. When the final release differs, change :data:`DEFAULT_LAYOUT` or
pass a layout loaded with :meth:`ReleaseLayout.from_json`.

Example:
    >>> from hug_vis_dataset.datamodel.grid import ClipId
    >>> cid = ClipId.parse("actor_0001_happy_action_01_script_001")
    >>> DEFAULT_LAYOUT.audio_path(cid)
    'audio/actor_0001/happy/action_01/script_001.wav'
    >>> DEFAULT_LAYOUT.alpha_frame_path(cid, 12)
    'alpha_matte/actor_0001/happy/action_01/script_001/000012.png'
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .grid import DEFAULT_EMOTION_TOKENS, ClipId, Emotion, parse_emotion
from ..readers import InputFileError
from ..readers.json_files import read_json, require_fields

CSV_COLUMNS: tuple[str, ...] = (
    "clip_id",
    "actor_id",
    "emotion",
    "action_id",
    "script_id",
    "transcript",
    "asr_transcript",
    "audio_path",
    "video_path",
    "alpha_matte_path",
    "rgba_foreground_path",
    "duration",
    "fps",
    "sample_rate",
    "resolution",
)


@dataclass(frozen=True)
class ReleaseLayout:
    """Relative paths of every modality of a clip inside a release tree.

    Templates use ``{actor}``, ``{emotion}``, ``{action}``, ``{script}`` and, for frames,
    ``{frame}``; ``{emotion}`` is the release's folder token for the emotion.
    """

    metadata_csv: str = "metadata/clips.csv"
    clip_dir: str = "{actor}/{emotion}/action_{action:02d}"
    audio: str = "audio/{clip_dir}/script_{script:03d}.wav"
    video: str = "video_processed/{clip_dir}/script_{script:03d}.mp4"
    alpha_dir: str = "alpha_matte/{clip_dir}/script_{script:03d}"
    alpha_frame: str = "{frame:06d}.png"
    rgba_foreground: str = "rgba_foreground/{clip_dir}/script_{script:03d}.mov"
    transcript: str = "transcripts/{clip_dir}/script_{script:03d}.txt"
    emotion_tokens: dict[str, str] = field(
        default_factory=lambda: {e.value: t for e, t in DEFAULT_EMOTION_TOKENS.items()}
    )
    expected_fps: float = 30.0
    expected_sample_rate: "int | None" = None

    # -- paths ---------------------------------------------------------------------------
    def token(self, emotion: "Emotion | str") -> str:
        """Folder/id token of an emotion (``fearful`` for Afraid in the draft)."""
        return self.emotion_tokens[parse_emotion(emotion).value]

    def _fmt(self, template: str, cid: ClipId, **extra: int) -> str:
        clip_dir = self.clip_dir.format(
            actor=cid.actor, emotion=self.token(cid.emotion), action=cid.action_id
        )
        return template.format(
            clip_dir=clip_dir,
            actor=cid.actor,
            emotion=self.token(cid.emotion),
            action=cid.action_id,
            script=cid.script_id,
            **extra,
        )

    def clip_id(self, cid: ClipId) -> str:
        """The clip id string as this release spells it."""
        return cid.format({parse_emotion(k): v for k, v in self.emotion_tokens.items()})

    def audio_path(self, cid: ClipId) -> str:
        return self._fmt(self.audio, cid)

    def video_path(self, cid: ClipId) -> str:
        return self._fmt(self.video, cid)

    def alpha_dir_path(self, cid: ClipId) -> str:
        return self._fmt(self.alpha_dir, cid)

    def alpha_frame_path(self, cid: ClipId, frame: int) -> str:
        return f"{self.alpha_dir_path(cid)}/{self.alpha_frame.format(frame=frame)}"

    def rgba_foreground_path(self, cid: ClipId) -> str:
        return self._fmt(self.rgba_foreground, cid)

    def transcript_path(self, cid: ClipId) -> str:
        return self._fmt(self.transcript, cid)

    def alpha_frame_index(self, filename: str) -> int:
        """Frame index encoded in an alpha PNG name (``000012.png`` -> 12).

        Frames are matched by the number in their name, never by sorted position, so a
        missing frame is detected rather than silently shifting the rest.
        """
        stem, ext = os.path.splitext(os.path.basename(filename))
        want_ext = os.path.splitext(self.alpha_frame)[1]
        if ext.lower() != want_ext.lower() or not stem.isdigit():
            raise ValueError(f"{filename!r} is not an alpha frame name like {self.alpha_frame.format(frame=0)!r}")
        return int(stem)

    # -- persistence ---------------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), indent=2, ensure_ascii=False)

    @classmethod
    def from_json(cls, path: "str | Path") -> "ReleaseLayout":
        """Load a layout override (any subset of the fields) from a JSON file.

        Read strictly (:func:`hug_vis_dataset.readers.json_files.read_json`: a field given twice is an
        error naming the line) and checked against the fields' types.

        Raises:
            InputFileError: (a ValueError) not strict JSON, an unknown field or one of the wrong type.
        """
        data = read_json(path)
        unknown = set(data) - {f.name for f in dataclasses.fields(cls)}
        if unknown:
            raise InputFileError(path, "", f"has unknown layout fields {sorted(unknown)}",
                                 f"use only {', '.join(f.name for f in dataclasses.fields(cls))}")
        types = {f.name: str for f in dataclasses.fields(cls)}
        types.update(emotion_tokens=dict, expected_fps=float)
        nullable = {"expected_sample_rate": int}  # null: the release's own rate, clip by clip
        require_fields(data, {k: t for k, t in types.items() if k in data and k not in nullable}, path,
                       optional=nullable)
        return dataclasses.replace(DEFAULT_LAYOUT, **data)


DEFAULT_LAYOUT = ReleaseLayout()
#: Written only by ``hugvis synth``: scores on such a tree are never ranked with the paper's.
SYNTHETIC_MARKER = "metadata/synthetic.json"
#: A synthetic tree's simulated model outputs (``<task>/<system>/``) and their simulated MOS ratings.
SIMULATED_SYSTEMS_DIR = "simulated_systems"
SIMULATED_RATINGS_FILE = "mos_ratings.csv"
#: Under it, systems scored over several samples per clip (``seeded/<task>/<system>/<clip_id>/sample_<k>``): a
#: stochastic model's seeds, kept apart from the one-sample systems every other reader lists.
SIMULATED_SEEDED_DIR = "seeded"
#: The synthetic release's simulated emotion-study answers (people as the ceiling of Table 4), exported as CSV.
SIMULATED_EMOTION_ANSWERS_FILE = "emotion_answers.csv"


def layout_for(release_dir: "str | Path", layout: "ReleaseLayout | None" = None) -> ReleaseLayout:
    """The layout of a release: an explicit one, else ``RELEASE/metadata/layout.json``, else the default.

    The environment variable ``HUGVIS_LAYOUT`` may name a layout JSON file too.
    """
    if layout is not None:
        return layout
    local = Path(release_dir) / "metadata" / "layout.json"
    if local.is_file():
        return ReleaseLayout.from_json(local)
    env = os.environ.get("HUGVIS_LAYOUT")
    if env:
        return ReleaseLayout.from_json(env)
    return DEFAULT_LAYOUT

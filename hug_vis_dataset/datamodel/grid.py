"""The HUG-VIS condition-aligned performance grid (paper section 3).

30 actors x 7 emotions x 4 action templates x 10 scripts = 8,400 evaluation units.
Every other module names a clip through :class:`ClipId` and an emotion through
:class:`Emotion`, so that results from every task join on the same keys.

Example:
    >>> from hug_vis_dataset.datamodel.grid import ClipId, parse_emotion
    >>> cid = ClipId.parse("actor_0001_happy_action_01_script_001")
    >>> cid.actor_id, cid.emotion.value, cid.action_id, cid.script_id
    (1, 'Happy', 1, 1)
    >>> str(cid)
    'actor_0001_happy_action_01_script_001'
    >>> parse_emotion("fearful") is parse_emotion("Afraid") is parse_emotion("害怕")
    True
"""

from __future__ import annotations

import enum
import functools
import re
from dataclasses import dataclass
from typing import Iterator, Sequence

NUM_ACTORS = 30
NUM_ACTIONS = 4
NUM_SCRIPTS = 10


class Emotion(str, enum.Enum):
    """The seven instructed conditions, in the paper's order (Table 1)."""

    HAPPY = "Happy"
    ANGRY = "Angry"
    SAD = "Sad"
    AFRAID = "Afraid"
    DISGUSTED = "Disgusted"
    SURPRISED = "Surprised"
    NEUTRAL = "Neutral"

    @property
    def index(self) -> int:
        """Position in :data:`EMOTIONS` (the ClassLabel id used everywhere)."""
        return EMOTIONS.index(self)

    def __str__(self) -> str:  # pragma: no cover - trivial
        return self.value


EMOTIONS: tuple[Emotion, ...] = tuple(Emotion)
EMOTION_NAMES: tuple[str, ...] = tuple(e.value for e in EMOTIONS)

# Every spelling we accept, lower-cased. The release draft writes "fearful" where the
# paper writes "Afraid"; LLM answers use adjectives, nouns and Mandarin words.
EMOTION_ALIASES: dict[str, Emotion] = {}
_ALIAS_TABLE: dict[Emotion, tuple[str, ...]] = {
    Emotion.HAPPY: ("happy", "happiness", "joy", "joyful", "高兴", "开心", "快乐", "喜悦"),
    Emotion.ANGRY: ("angry", "anger", "愤怒", "生气"),
    Emotion.SAD: ("sad", "sadness", "悲伤", "难过", "伤心"),
    Emotion.AFRAID: ("afraid", "fearful", "fear", "scared", "害怕", "恐惧"),
    Emotion.DISGUSTED: ("disgusted", "disgust", "厌恶", "恶心"),
    Emotion.SURPRISED: ("surprised", "surprise", "惊讶", "吃惊"),
    Emotion.NEUTRAL: ("neutral", "calm", "中性", "平静"),
}
for _emotion, _aliases in _ALIAS_TABLE.items():
    for _alias in _aliases:
        EMOTION_ALIASES[_alias] = _emotion


def parse_emotion(value: "str | Emotion | int") -> Emotion:
    """Map a label, alias, Mandarin name or class index to an :class:`Emotion`.

    Args:
        value: ``"Happy"``, ``"happy"``, ``"fearful"``, ``"害怕"``, an ``Emotion`` or an index 0..6.

    Raises:
        ValueError: when the value names no emotion. Free text (LLM answers) goes through
            :func:`hug_vis_dataset.metrics.emotion.parse_answer` instead.

    Example:
        >>> parse_emotion("Disgust").value
        'Disgusted'
        >>> parse_emotion(6).value
        'Neutral'
    """
    if isinstance(value, Emotion):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        if 0 <= value < len(EMOTIONS):
            return EMOTIONS[value]
        raise ValueError(f"emotion index {value} is outside 0..{len(EMOTIONS) - 1}")
    key = str(value).strip().lower()
    try:
        return EMOTION_ALIASES[key]
    except KeyError:
        raise ValueError(
            f"unknown emotion {value!r}; expected one of {', '.join(EMOTION_NAMES)} "
            f"or an alias ({', '.join(sorted(a for a in EMOTION_ALIASES if a.isascii()))})"
        ) from None


@dataclass(frozen=True)
class EmotionDesign:
    """One row of paper Table 1."""

    emotion: Emotion
    movement_style: str
    action_templates: tuple[str, ...]
    illustrative_prompt: str


# Table 1 as data. Sad, Afraid and Neutral list fewer than four templates although every
# emotion has four action ids; the release does not publish the action_id -> template map,
# so we do not invent one.
TABLE1: dict[Emotion, EmotionDesign] = {
    d.emotion: d
    for d in (
        EmotionDesign(
            Emotion.HAPPY,
            "Light, relaxed, and expansive, with an open posture",
            (
                "Two-handed open-palmed welcome",
                "One-handed open-palmed welcome",
                "Outward arm extension",
                "Two-handed thumbs-up gesture",
            ),
            "I finally got a ticket to the concert! I'm thrilled!",
        ),
        EmotionDesign(
            Emotion.ANGRY,
            "Fast, forceful, and sustained, with a forward-oriented posture",
            ("Table strike", "Forceful arm sweep", "Sharp pointing gesture", "Clenched-fist raise and drop"),
            "Enough! I don't want to hear another excuse.",
        ),
        EmotionDesign(
            Emotion.SAD,
            "Slow or paused, with a contracted, downward-oriented posture",
            (
                "Head or neck support with one or both hands",
                "Hand on head",
                "Self-embrace with hands on upper arms",
            ),
            "Everything I'd hoped for has fallen apart, and now I'm all alone.",
        ),
        EmotionDesign(
            Emotion.AFRAID,
            "Contracted, guarded, and withdrawing, with slight trembling",
            (
                "One- or two-handed guarding gesture",
                "Recoil",
                "Hands clasped close to the body while leaning backward",
            ),
            "Stay back! Please don't hurt me!",
        ),
        EmotionDesign(
            Emotion.DISGUSTED,
            "Restrained and outwardly rejecting, with a backward lean",
            ("Two-handed push-away", "One-handed wave or push-away", "Dismissive wave", "Shooing gesture"),
            "Get this away from me! I can't stand looking at it.",
        ),
        EmotionDesign(
            Emotion.SURPRISED,
            "Rapid and moderately expansive, ending in an abrupt freeze",
            (
                "Sudden raising of both hands",
                "Hands brought behind the head",
                "Sudden torso lean",
                "One-hand raise followed by a freeze",
            ),
            "There was nothing behind the curtain. So why is that shadow moving?",
        ),
        EmotionDesign(
            Emotion.NEUTRAL,
            "Gentle, even, and low-amplitude, with a stable, relaxed posture",
            (
                "Hands at rest with subtle finger or wrist movements",
                "Natural seated posture with minor head or hand adjustments",
            ),
            "The meeting is at 3 p.m. Remember to bring the materials.",
        ),
    )
}

# Token used for each emotion inside clip ids and folder names. The release draft spells
# Afraid as "fearful"; ClipId.parse accepts both, and ClipId.format writes this spelling.
# ReleaseLayout (layout.py) can override it per release.
DEFAULT_EMOTION_TOKENS: dict[Emotion, str] = {
    Emotion.HAPPY: "happy",
    Emotion.ANGRY: "angry",
    Emotion.SAD: "sad",
    Emotion.AFRAID: "fearful",
    Emotion.DISGUSTED: "disgusted",
    Emotion.SURPRISED: "surprised",
    Emotion.NEUTRAL: "neutral",
}

# re.ASCII: Python's \d is any script's digit ("actor_\u0660\u0660\u0660\u0661_..." would be actor 1), and an
# identifier has one spelling (tests/test_hostile_rules_digits.py checks every pattern of the package).
_CLIP_ID_RE = re.compile(
    r"^actor_(?P<actor>\d{4})_(?P<emotion>[a-z]+)_action_(?P<action>\d{2})_script_(?P<script>\d{3})$", re.ASCII
)


class ClipIdError(ValueError):
    """A string is not a valid HUG-VIS clip id."""


@functools.total_ordering
@dataclass(frozen=True)
class ClipId:
    """One evaluation unit: an actor's performance of one emotion-action-script assignment.

    Ordering is the grid order (actor, emotion in Table 1 order, action, script), never the
    lexical order of the id strings.

    Example:
        >>> ClipId(3, Emotion.AFRAID, 2, 10).format()
        'actor_0003_fearful_action_02_script_010'
        >>> ClipId.parse("actor_0003_afraid_action_02_script_010") == ClipId(3, Emotion.AFRAID, 2, 10)
        True
    """

    actor_id: int
    emotion: Emotion
    action_id: int
    script_id: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "emotion", parse_emotion(self.emotion))
        for name, value, upper in (
            ("actor_id", self.actor_id, 9999),
            ("action_id", self.action_id, 99),
            ("script_id", self.script_id, 999),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= upper:
                raise ClipIdError(f"{name} must be an integer in 1..{upper}, got {value!r}")

    def sort_key(self) -> tuple[int, int, int, int]:
        """Grid order: actor, emotion in Table 1 order, action, script."""
        return (self.actor_id, self.emotion.index, self.action_id, self.script_id)

    def __lt__(self, other: "ClipId") -> bool:
        if not isinstance(other, ClipId):
            return NotImplemented
        return self.sort_key() < other.sort_key()

    def format(self, emotion_tokens: "dict[Emotion, str] | None" = None) -> str:
        """The release-format id string."""
        token = (emotion_tokens or DEFAULT_EMOTION_TOKENS)[self.emotion]
        return f"actor_{self.actor_id:04d}_{token}_action_{self.action_id:02d}_script_{self.script_id:03d}"

    __str__ = format

    @classmethod
    def parse(cls, text: str) -> "ClipId":
        """Parse ``actor_0001_happy_action_01_script_001`` (any accepted emotion spelling).

        Raises:
            ClipIdError: naming the offending text and the expected pattern.
        """
        match = _CLIP_ID_RE.match(str(text).strip())
        if not match:
            raise ClipIdError(
                f"bad clip id {text!r}: expected 'actor_NNNN_<emotion>_action_NN_script_NNN', "
                "e.g. 'actor_0001_happy_action_01_script_001'"
            )
        try:
            emotion = parse_emotion(match["emotion"])
        except ValueError as err:
            raise ClipIdError(f"bad clip id {text!r}: {err}") from None
        return cls(int(match["actor"]), emotion, int(match["action"]), int(match["script"]))

    @property
    def actor(self) -> str:
        """Actor folder/id string, e.g. ``actor_0001``."""
        return f"actor_{self.actor_id:04d}"

    def fields(self) -> dict[str, "str | int"]:
        """Grid fields every result row carries (used for joins)."""
        return {
            "clip_id": self.format(),
            "actor_id": self.actor_id,
            "emotion": self.emotion.value,
            "action_id": self.action_id,
            "script_id": self.script_id,
        }


def iter_grid(
    actors: "int | Sequence[int]" = NUM_ACTORS,
    emotions: "Sequence[Emotion | str] | None" = None,
    actions: "int | Sequence[int]" = NUM_ACTIONS,
    scripts: "int | Sequence[int]" = NUM_SCRIPTS,
) -> Iterator[ClipId]:
    """Enumerate grid units in grid order; an int ``n`` means ids ``1..n``.

    Example:
        >>> sum(1 for _ in iter_grid())
        8400
        >>> [str(c) for c in iter_grid(1, ["Sad"], 1, 2)]
        ['actor_0001_sad_action_01_script_001', 'actor_0001_sad_action_01_script_002']
    """

    def ids(spec: "int | Sequence[int]") -> Sequence[int]:
        return range(1, spec + 1) if isinstance(spec, int) else spec

    chosen = EMOTIONS if emotions is None else tuple(parse_emotion(e) for e in emotions)
    for actor in ids(actors):
        for emotion in chosen:
            for action in ids(actions):
                for script in ids(scripts):
                    yield ClipId(actor, emotion, action, script)


def full_grid() -> list[ClipId]:
    """All 8,400 units of the paper's grid."""
    return list(iter_grid())

"""The study file: which systems, clips and criteria a subjective study rates, and how often.

A study is one JSON file (``docs/MOS.md``)::

    {"name": "talking-heads-2025", "protocol": "mos",          # or "pairwise", or "emotion"
     "tasks": {"audio_driven": {"systems": ["sonic", "hallo2"],
                                "criteria": ["id_similarity", "lip_sync"]}},   # default: the task's
     "clips": "all",                                           # or a list of clip ids
     "ratings_per_item": 3, "items_per_session": 12, "gold_rate": 0.15, "seed": 0,
     "qc": {"gold_high_min": 3.5, "gold_low_max": 2.5, "max_gold_fail_share": 0.5, "max_fast_share": 0.25}}

An **item** is what one rater answers once: (task, clip, system) rated on every criterion of the
task (MOS), (task, clip, two systems) compared on every criterion (pairwise), or (emotion, clip, one
input setting) answered with one of the seven emotions or "Cannot tell" (the forced-choice emotion
study, ``"tasks": {"emotion": {"settings": ["Video", "Audio", "Text"]}}``: people as the ceiling of
Table 4). Its ``key`` is internal (it names the system, or the clip whose id carries the emotion);
raters only ever see an opaque per-session code.

Example:
    >>> spec = study_from_mapping({"name": "s", "tasks": {"voice_cloning": {"systems": ["a", "b"]}},
    ...                            "clips": ["actor_0001_happy_action_01_script_001"], "ratings_per_item": 2,
    ...                            "items_per_session": 2})
    >>> [i.key for i in spec.items()]
    ['voice_cloning|actor_0001_happy_action_01_script_001|a', 'voice_cloning|actor_0001_happy_action_01_script_001|b']
    >>> spec.n_gold()   # gold_rate 0 by default
    0
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..errors import HugvisError
from ..datamodel.grid import ClipId, ClipIdError
from ..datamodel.results import name_problem
from .mos import TASK_CRITERIA
from .rater_qc import GOLD_CLEAR, GOLD_HIGH, GOLD_LOW, QcRules

MOS, PAIRWISE, EMOTION = "mos", "pairwise", "emotion"
PROTOCOLS = (MOS, PAIRWISE, EMOTION)
#: The one task of the forced-choice emotion study (Table 4's task) and its one question.
EMOTION_TASK, EMOTION_CRITERION = "emotion", "emotion"
#: Tasks the pairwise protocol applies to (the issue: generation and voice cloning).
PAIRWISE_TASKS = ("audio_driven", "vision_driven", "voice_cloning")
STUDY_KEYS = ("name", "protocol", "tasks", "clips", "ratings_per_item", "items_per_session", "gold_rate", "seed",
              "qc")


class StudyFileError(HugvisError, ValueError):
    """A study file that cannot define a study (the message names the field and the fix)."""


@dataclass(frozen=True)
class StudyItem:
    """One thing to answer: a clip of a task with one system (MOS) or two (pairwise), or a gold item.

    ``kind`` is ``system``, or ``gold`` for the quality-control items (their one "system" is
    :data:`~hug_vis_dataset.studies.rater_qc.GOLD_HIGH` or ``GOLD_LOW``; in the emotion study
    :data:`~hug_vis_dataset.studies.rater_qc.GOLD_CLEAR`). In the emotion study ``systems`` holds the one
    input setting the clip is shown in (``("Video",)``).
    """

    task: str
    clip_id: str
    systems: tuple[str, ...]
    criteria: tuple[str, ...]
    kind: str = "system"

    @property
    def key(self) -> str:
        """Internal identity (names the systems: never shown to a rater)."""
        return "|".join((self.task, self.clip_id, "~".join(self.systems)))

    @property
    def clip(self) -> ClipId:
        return ClipId.parse(self.clip_id)


@dataclass(frozen=True)
class StudySpec:
    """A parsed study file (see the module docstring); :func:`load_study` builds one."""

    name: str
    protocol: str
    tasks: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]  # task -> (systems, criteria)
    clips: tuple[str, ...]
    ratings_per_item: int = 3
    items_per_session: int = 10
    gold_rate: float = 0.0
    seed: int = 0
    qc: QcRules = field(default_factory=QcRules)

    def items(self) -> list[StudyItem]:
        """Every item of the study in a fixed order (task, clip, system or pair)."""
        out = []
        for task, (systems, criteria) in self.tasks.items():
            groups = list(itertools.combinations(systems, 2)) if self.protocol == PAIRWISE else [(s,) for s in systems]
            out += [StudyItem(task, clip, group, criteria) for clip in self.clips for group in groups]
        return out

    def gold_items(self) -> list[StudyItem]:
        """The gold items a session can draw: each clip's reference and degraded copy (MOS); each clip shown
        with all its evidence, video with sound and transcript, whose answer is the instructed emotion (emotion)."""
        if self.protocol == PAIRWISE or not self.gold_rate:
            return []
        kinds = (GOLD_CLEAR,) if self.protocol == EMOTION else (GOLD_HIGH, GOLD_LOW)
        return [StudyItem(task, clip, (gold,), criteria, kind="gold")
                for task, (_systems, criteria) in self.tasks.items() for clip in self.clips
                for gold in kinds]

    def n_gold(self) -> int:
        """Gold items per session: ``round(gold_rate x items_per_session)`` of its items.

        Example:
            >>> StudySpec("s", MOS, {}, (), items_per_session=10, gold_rate=0.2).n_gold()
            2
        """
        return int(math.floor(self.gold_rate * self.items_per_session + 0.5)) if self.protocol != PAIRWISE else 0

    def group_of(self, item: StudyItem) -> "str | None":
        """What a rater may meet only once (None: no such rule): in the emotion study the clip, so nobody sees a
        clip in a second setting (its transcript would give away the answer to its silent video) or as gold.

        Example:
            >>> spec = StudySpec("s", EMOTION, {EMOTION_TASK: (("Video",), (EMOTION_CRITERION,))}, ())
            >>> spec.group_of(StudyItem("emotion", "actor_0001_sad_action_01_script_001", ("Video",), ("emotion",)))
            'actor_0001_sad_action_01_script_001'
        """
        return item.clip_id if self.protocol == EMOTION else None

    @property
    def group_rule(self):
        """:meth:`group_of` where the study has a group rule (the emotion study), else None (for the schedule)."""
        return self.group_of if self.protocol == EMOTION else None

    def settings(self) -> tuple[str, ...]:
        """The input settings of an emotion study (Table 4's names, in the study file's order); () otherwise."""
        return self.tasks.get(EMOTION_TASK, ((), ()))[0] if self.protocol == EMOTION else ()

    def min_raters(self) -> int:
        """The fewest raters who can complete the study: in the emotion study each rater meets a clip once, so
        every clip needs ``ratings_per_item x settings`` different raters, and a gold item spends a clip of the
        rater's too (a share ``n_gold / items_per_session`` of what they meet):
        ``ceil(ratings_per_item x settings / (1 - gold share))``; else ``ratings_per_item``. A bound: the
        schedule's greedy picks may need a few more.

        Example:
            >>> StudySpec("s", EMOTION, {EMOTION_TASK: (("Video", "Text"), ("emotion",))}, (), ratings_per_item=3).min_raters()
            6
            >>> StudySpec("s", EMOTION, {EMOTION_TASK: (("Video", "Text"), ("emotion",))}, (), ratings_per_item=3,
            ...           items_per_session=8, gold_rate=0.25).min_raters()
            8
        """
        if self.protocol != EMOTION:
            return self.ratings_per_item
        regular = 1.0 - self.n_gold() / max(self.items_per_session, 1)
        return math.ceil(self.ratings_per_item * max(1, len(self.settings())) / max(regular, 1e-9) - 1e-9)

    def systems(self, task: str) -> tuple[str, ...]:
        return self.tasks.get(task, ((), ()))[0]


def study_from_mapping(data: Mapping[str, Any], clip_ids: "Sequence[str] | None" = None,
                       where: str = "study") -> StudySpec:
    """A :class:`StudySpec` from a parsed study file; ``clip_ids`` resolves ``"clips": "all"``.

    Raises:
        StudyFileError: an unknown key, task, criterion or protocol, a bad count or name; the
            message starts with ``where``.
    """
    def fail(message: str):
        raise StudyFileError(f"{where}: {message}")

    if not isinstance(data, Mapping):
        fail("must be a JSON object")
    unknown = sorted(set(data) - set(STUDY_KEYS))
    if unknown:
        fail(f"unknown key(s) {unknown}; expected some of {list(STUDY_KEYS)}")
    name = data.get("name", "study")
    if name_problem("study", name):
        fail(name_problem("study", name))
    protocol = data.get("protocol", MOS)
    if protocol not in PROTOCOLS:
        fail(f"protocol {protocol!r} must be one of {list(PROTOCOLS)}")
    tasks_in = data.get("tasks")
    if not isinstance(tasks_in, Mapping) or not tasks_in:
        fail('"tasks" must map a task to {"systems": [...]} (tasks: ' + ", ".join(TASK_CRITERIA) + ")")
    tasks = {}
    for task, part in tasks_in.items():
        if protocol == EMOTION:
            tasks[task] = _emotion_task(task, part, fail)
            continue
        allowed = PAIRWISE_TASKS if protocol == PAIRWISE else tuple(TASK_CRITERIA)
        if task not in allowed:
            fail(f"task {task!r} has no {protocol} study; choose one of {list(allowed)}")
        if not isinstance(part, Mapping) or not isinstance(part.get("systems"), list) or not part["systems"]:
            fail(f'tasks.{task} needs "systems": a non-empty list of system names')
        systems = tuple(part["systems"])
        for system in systems:
            if name_problem("system", system):
                fail(f"tasks.{task}: {name_problem('system', system)}")
            if system in (GOLD_HIGH, GOLD_LOW, GOLD_CLEAR):
                fail(f"tasks.{task}: {system!r} is reserved for gold items; rename the system")
        if len(set(systems)) != len(systems):
            fail(f"tasks.{task}: a system is listed twice")
        if protocol == PAIRWISE and len(systems) < 2:
            fail(f"tasks.{task}: a pairwise study needs at least 2 systems")
        criteria = tuple(part.get("criteria") or TASK_CRITERIA[task])
        bad = [c for c in criteria if c not in TASK_CRITERIA[task]]
        if len(set(criteria)) != len(criteria) and not bad:  # each item would be asked the same question twice
            fail(f"tasks.{task}: a criterion is listed twice")
        if bad:
            fail(f"tasks.{task}: criteria {bad} are not rated for {task}; choose from {list(TASK_CRITERIA[task])}")
        tasks[task] = (systems, criteria)
    clips = data.get("clips", "all")
    if clips == "all":
        if clip_ids is None:
            fail('"clips": "all" needs the release\'s clip ids')
        clips = list(clip_ids)
    if not isinstance(clips, list) or not clips:
        fail('"clips" must be "all" or a non-empty list of clip ids')
    try:
        canon = sorted({ClipId.parse(str(c)) for c in clips})
    except ClipIdError as err:
        fail(f"clips: {err}")
    numbers = {}
    for key, default, low in (("ratings_per_item", 3, 1), ("items_per_session", 10, 1), ("seed", 0, 0)):
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            fail(f"{key} must be an integer >= {low}, got {value!r}")
        numbers[key] = value
    gold_rate = data.get("gold_rate", 0.0)
    if isinstance(gold_rate, bool) or not isinstance(gold_rate, (int, float)) or not 0.0 <= gold_rate < 1.0:
        fail(f"gold_rate must be a number in [0, 1), got {gold_rate!r}")
    if protocol == PAIRWISE and gold_rate:
        fail("gold_rate applies to the mos and emotion protocols only; set it to 0 for a pairwise study")
    try:
        qc = QcRules.from_mapping(data.get("qc"))
    except (TypeError, ValueError) as err:
        fail(f"qc: {err}")
    return StudySpec(name, protocol, tasks, tuple(str(c) for c in canon), gold_rate=float(gold_rate), qc=qc,
                     **numbers)


def _emotion_task(task: object, part: object, fail) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(settings, criteria) of the emotion study's one task entry, ``{"settings": [...]}`` (Table 4's settings, any
    spelling :func:`~hug_vis_dataset.metrics.emotion.normalize_input_setting` reads)."""
    from ..metrics.emotion import INPUT_SETTING_ORDER, normalize_input_setting

    if task != EMOTION_TASK:
        fail(f"task {task!r} has no emotion study; the emotion protocol has one task, {EMOTION_TASK!r}")
    if not isinstance(part, Mapping) or set(part) - {"settings"}:
        fail(f'tasks.{EMOTION_TASK} takes one key, "settings": a list of input settings ({", ".join(INPUT_SETTING_ORDER)})')
    settings = part.get("settings")
    if not isinstance(settings, list) or not settings or not all(isinstance(s, str) for s in settings):
        fail(f'tasks.{EMOTION_TASK} needs "settings": a non-empty list of input settings '
             f'({", ".join(INPUT_SETTING_ORDER)})')
    names = tuple(normalize_input_setting(s) for s in settings)
    bad = [s for s, n in zip(settings, names) if n not in INPUT_SETTING_ORDER]
    if bad:
        fail(f"tasks.{EMOTION_TASK}: settings {bad} are not Table 4's; choose from {list(INPUT_SETTING_ORDER)}")
    if len(set(names)) != len(names):
        fail(f"tasks.{EMOTION_TASK}: a setting is listed twice")
    return names, (EMOTION_CRITERION,)


def load_study(path: "str | Path", clip_ids: "Sequence[str] | None" = None) -> StudySpec:
    """Read and check a study file (JSON).

    Raises:
        StudyFileError: missing, not JSON, or not a valid study (the message names the file).
    """
    path = Path(path)
    if not path.is_file():
        raise StudyFileError(f"study file {path} does not exist")
    from ..readers import InputFileError
    from ..readers.json_files import read_json

    try:  # strict: a duplicated key, NaN or a second value is refused, naming the line
        data = read_json(path)
    except InputFileError as err:
        raise StudyFileError(f"{err} (not a JSON study file)") from None
    return study_from_mapping(data, clip_ids, where=str(path))

"""The study file: which systems, clips and criteria a subjective study rates, and how often.

A study is one JSON file (``docs/MOS.md``)::

    {"name": "talking-heads-2025", "protocol": "mos",          # or "pairwise"
     "tasks": {"audio_driven": {"systems": ["sonic", "hallo2"],
                                "criteria": ["id_similarity", "lip_sync"]}},   # default: the task's
     "clips": "all",                                           # or a list of clip ids
     "ratings_per_item": 3, "items_per_session": 12, "gold_rate": 0.15, "seed": 0,
     "qc": {"gold_high_min": 3.5, "gold_low_max": 2.5, "max_gold_fail_share": 0.5, "max_fast_share": 0.25}}

An **item** is what one rater answers once: (task, clip, system) rated on every criterion of the
task (MOS), or (task, clip, two systems) compared on every criterion (pairwise). Its ``key`` is
internal (it names the system); raters only ever see an opaque per-session code.

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
from ..grid import ClipId, ClipIdError
from ..results import name_problem
from .mos import TASK_CRITERIA
from .rater_qc import GOLD_HIGH, GOLD_LOW, QcRules

MOS, PAIRWISE = "mos", "pairwise"
PROTOCOLS = (MOS, PAIRWISE)
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
    :data:`~hug_vis_dataset.studies.rater_qc.GOLD_HIGH` or ``GOLD_LOW``).
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
            groups = [(s,) for s in systems] if self.protocol == MOS else list(itertools.combinations(systems, 2))
            out += [StudyItem(task, clip, group, criteria) for clip in self.clips for group in groups]
        return out

    def gold_items(self) -> list[StudyItem]:
        """The gold items a session can draw (MOS only): each clip's reference and degraded copy."""
        if self.protocol != MOS or not self.gold_rate:
            return []
        return [StudyItem(task, clip, (gold,), criteria, kind="gold")
                for task, (_systems, criteria) in self.tasks.items() for clip in self.clips
                for gold in (GOLD_HIGH, GOLD_LOW)]

    def n_gold(self) -> int:
        """Gold items per session: ``round(gold_rate x items_per_session)`` of its items.

        Example:
            >>> StudySpec("s", MOS, {}, (), items_per_session=10, gold_rate=0.2).n_gold()
            2
        """
        return int(math.floor(self.gold_rate * self.items_per_session + 0.5)) if self.protocol == MOS else 0

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
        allowed = PAIRWISE_TASKS if protocol == PAIRWISE else tuple(TASK_CRITERIA)
        if task not in allowed:
            fail(f"task {task!r} has no {protocol} study; choose one of {list(allowed)}")
        if not isinstance(part, Mapping) or not isinstance(part.get("systems"), list) or not part["systems"]:
            fail(f'tasks.{task} needs "systems": a non-empty list of system names')
        systems = tuple(part["systems"])
        for system in systems:
            if name_problem("system", system):
                fail(f"tasks.{task}: {name_problem('system', system)}")
            if system in (GOLD_HIGH, GOLD_LOW):
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
        fail("gold_rate applies to the mos protocol only; set it to 0 for a pairwise study")
    try:
        qc = QcRules.from_mapping(data.get("qc"))
    except (TypeError, ValueError) as err:
        fail(f"qc: {err}")
    return StudySpec(name, protocol, tasks, tuple(str(c) for c in canon), gold_rate=float(gold_rate), qc=qc,
                     **numbers)


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

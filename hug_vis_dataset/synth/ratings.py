"""Simulated subjective study of the synthetic grid, in the format of a real blind study.

**These are simulated raters, not human judgements.** They exist to exercise the study pipeline
(:mod:`hug_vis_dataset.studies`, :mod:`hug_vis_dataset.studies.mos`, ``hugvis mos``, ``hugvis mos status``,
the MOS, quality-control and pairwise sections of ``hugvis report``) end to end on the synthetic
grid; no conclusion about perception may be drawn from them.

Two studies over the simulated systems of ``audio_driven``, ``vision_driven`` and ``voice_cloning``
(names and degradation ``strength`` from ``simulated_systems/manifest.json``), scheduled exactly as
the Space schedules real raters (:func:`hug_vis_dataset.studies.schedule.plan_session`):

* **MOS** (``synthetic-mos``): every (task, clip, system) rated on the task's criteria, ``k = 3``
  ratings per item, sessions of 8 items of which 2 are **gold** (the clip's reference, expected
  high, and a degraded copy, expected low);
* **pairwise** (``synthetic-pairwise``): every (task, clip, pair of systems), ``k = 2``, sessions of
  6 pairs, each answered A / B / Tie per criterion with the side drawn from the session seed
  (:func:`~hug_vis_dataset.studies.schedule.pair_sides`).

**Clips**: ``ceil(clip_fraction x n)`` clips of every actor (:func:`choose_clips`), so the
actor-clustered bootstrap sees every actor. **Raters** ``sim_rater_01`` ... take sessions in turn
until the schedule is full (every item reaches ``k`` ratings, nobody sees an item twice). The last
``careless`` raters answer at random and faster than the media, so quality control flags them.

**Scores.** The latent quality of (system, criterion, clip) is ``q = TOP - SPAN x strength^2 +
system_criterion + clip``: the quadratic makes mild degradations hard to tell apart (a ceiling near
the top), the fixed per-(system, criterion) offset (sd :data:`SYSTEM_SD`) occasionally reorders
neighbouring systems, and ``clip`` (sd :data:`CLIP_SD`) models stimulus difficulty. A careful
rater's MOS score is ``round(q + bias_r + e)`` clipped to 1..5 (bias sd :data:`RATER_BIAS_SD`,
``e ~ N(0, sd_r)``, ``sd_r`` uniform in :data:`RATER_NOISE_SD`); gold items use strength 0
(reference) and 1 (degraded) without the system offset. A pairwise answer compares
``q_a - q_b + e`` (``e ~ N(0, sd_r)``) with :data:`TIE_MARGIN`: within it a tie. Answers take
``duration x U(1.5, 4)`` seconds (careless: ``x U(0.2, 0.8)``).

**Planted perception** (``planted``, none by default, so the demo's study is unchanged): a system's raters
may perceive another strength than its degradation (:class:`Planted` ``perceived``: people prefer a system
the metrics rate low, or the other way round), or perceive it exactly as another system of the task
(``same_as``: the same strength and per-criterion offset, a pair planted equal), so the joint
human/metric measures (:mod:`hug_vis_dataset.metrics.human_agreement`) can be checked against a truth.

**Files** (under ``simulated_systems/``): :data:`RATINGS_FILE` (the MOS study's ratings of the
systems, with ``study, item, elapsed, duration``), :data:`PAIRWISE_FILE` (the pairwise answers,
:meth:`~hug_vis_dataset.studies.preferences.PreferenceStore.to_csv`'s columns) and the study folder
:data:`STUDY_DIR`: the two study files, ``ratings.jsonl`` (every answer, gold included, as the
Space's ratings log) and ``sessions.jsonl`` (the sessions, as the Space's session log), so
``hugvis mos status --study simulated_systems/study/mos_study.json --log
simulated_systems/study/ratings.jsonl`` reads it like a real study.

Every draw comes from ``numpy.random.SeedSequence`` keyed by ``(seed, TAG_RATINGS, purpose, ...)``
and files are written in a fixed order, so a seed gives the same bytes.

Example:
    >>> study = simulate_study(["actor_0001_happy_action_01_script_001"],
    ...                        {"voice_cloning": {"clone_good": 0.1, "clone_poor": 0.8}}, seed=0)
    >>> len(study.mos_rows())   # 2 items x 3 ratings x 2 criteria
    12
    >>> sorted({r["criterion"] for r in study.mos_rows()})
    ['emotion_naturalness', 'id_similarity']
    >>> all(1 <= r["score"] <= 5 for r in study.mos_rows()), len(study.pairwise_rows())   # 1 pair x 2 x 2
    (True, 4)
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ..datamodel.grid import ClipId
from ..datamodel.layout import SIMULATED_EMOTION_ANSWERS_FILE, SIMULATED_RATINGS_FILE
from ..readers.json_files import read_json, require_fields
from ..studies.mos import RATING_COLUMNS, TASK_CRITERIA
from ..studies.rater_qc import GOLD_HIGH, GOLD_LOW
from ..studies.schedule import pair_sides
from ..studies.sessions import SESSIONS_FILE
from ..studies.spec import StudyItem, StudySpec, study_from_mapping
from .emotion_raters import PEOPLE_ACCURACY, settings_of_systems, simulate_emotion_study, write_emotion_study
from .scheduling import choose_clips, schedule_sessions  # noqa: F401 (choose_clips: this module's API)
from .seeds import TAG_RATINGS

RATINGS_FILE = SIMULATED_RATINGS_FILE
PAIRWISE_FILE = "pairwise_ratings.csv"
STUDY_DIR = "study"
MOS_STUDY_FILE, PAIRWISE_STUDY_FILE, LOG_FILE = "mos_study.json", "pairwise_study.json", "ratings.jsonl"
MOS_STUDY, PAIRWISE_STUDY = "synthetic-mos", "synthetic-pairwise"
STUDY_COLUMNS = ("study", "item", "elapsed", "duration")
PAIRWISE_COLUMNS = ("rater", "task", "clip_id", "system_a", "system_b", "criterion", "outcome", "left") + STUDY_COLUMNS
TOP, SPAN = 4.6, 3.0  # latent quality of a perfect copy and its drop at strength 1
SYSTEM_SD = 0.3  # fixed per (system, criterion) offset: reorders neighbours now and then
CLIP_SD = 0.3  # stimulus difficulty shared by all systems of a clip
RATER_BIAS_SD = 0.35
RATER_NOISE_SD = (0.4, 0.8)
TIE_MARGIN = 0.25  # a pairwise quality difference below this (after noise) is answered "Tie"
# Purposes of the seed sequences (0 is the clip choice's: synth/scheduling.py).
_P_CLIPS, _P_RATERS, _P_SYSTEM, _P_CLIP, _P_ANSWER = range(5)
_TASK_INDEX = {task: i for i, task in enumerate(TASK_CRITERIA)}


def _rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed), TAG_RATINGS, *map(int, keys)]))


@dataclass(frozen=True)
class Planted:
    """What the simulated raters perceive of one system instead of its degradation (module docstring).

    Attributes:
        perceived: the strength in [0, 1] the raters perceive (None: the system's own).
        same_as: another system of the same task whose perceived strength and per-criterion offsets this
            one shares (a pair planted equal); that system may not itself be ``same_as`` another.
    """

    perceived: "float | None" = None
    same_as: str = ""


@dataclass
class SimulatedStudy:
    """The two simulated studies: their files, sessions and every answer (see the module docstring).

    ``sessions`` are ``(spec, rater, number, seed, [(code, item), ...])`` in the order they were
    taken; ``answers`` are the log lines (MOS ratings and pairwise answers) in submission order.
    """

    mos: StudySpec
    pairwise: StudySpec
    sessions: list = field(default_factory=list)
    answers: list[dict] = field(default_factory=list)
    secret: bytes = b""

    def mos_rows(self, gold: bool = False) -> list[dict]:
        """MOS ratings as ``hugvis mos`` CSV rows (:data:`RATING_COLUMNS` + study fields), ordered by
        task, clip, rater, system, criterion; gold answers only with ``gold``."""
        rows = [a for a in self.answers if "kind" not in a and (gold or a["model"] not in (GOLD_HIGH, GOLD_LOW))]
        order = {c: i for task in TASK_CRITERIA for i, c in enumerate(TASK_CRITERIA[task])}
        rows.sort(key=lambda a: (_TASK_INDEX[a["task"]], a["clip_id"], a["rater"], a["model"], order[a["criterion"]]))
        return [{k: a[k] for k in RATING_COLUMNS + STUDY_COLUMNS} for a in rows]

    def pairwise_rows(self) -> list[dict]:
        """Pairwise answers with :data:`PAIRWISE_COLUMNS`, ordered by task, clip, rater, pair, criterion."""
        rows = [a for a in self.answers if a.get("kind") == "preference"]
        order = {c: i for task in TASK_CRITERIA for i, c in enumerate(TASK_CRITERIA[task])}
        rows.sort(key=lambda a: (_TASK_INDEX[a["task"]], a["clip_id"], a["rater"], a["system_a"], a["system_b"],
                                 order[a["criterion"]]))
        return [{k: a[k] for k in PAIRWISE_COLUMNS} for a in rows]


def _study_spec(name: str, protocol: str, systems: Mapping[str, Sequence[str]], clips: Sequence[str], k: int,
                per_session: int, gold_rate: float, seed: int) -> StudySpec:
    return study_from_mapping({"name": name, "protocol": protocol,
                               "tasks": {t: {"systems": list(names)} for t, names in systems.items()},
                               "clips": list(clips), "ratings_per_item": k, "items_per_session": per_session,
                               "gold_rate": gold_rate, "seed": seed}, where=f"simulated study {name}")


def simulate_study(clip_ids: Sequence[str], systems: Mapping[str, Mapping[str, float]], seed: int = 0,
                   n_raters: int = 6, careless: int = 1, ratings_per_item: int = 3, items_per_session: int = 8,
                   gold_rate: float = 0.25, pairwise_ratings_per_item: int = 2, pairs_per_session: int = 6,
                   clip_fraction: float = 0.5, duration: float = 1.0,
                   planted: "Mapping[str, Mapping[str, Planted]] | None" = None) -> SimulatedStudy:
    """The simulated MOS and pairwise studies of the given systems (see the module docstring).

    Args:
        clip_ids: the grid's clip ids; a subset per actor is rated (:func:`choose_clips`).
        systems: task -> {system name: degradation strength in [0, 1]}; tasks without MOS
            criteria (:data:`hug_vis_dataset.studies.mos.TASK_CRITERIA`) are ignored.
        seed: every draw derives from it (and the studies' seed is it).
        n_raters: size of the rater pool (``sim_rater_01`` ...).
        careless: how many of them (the last ones) answer at random and too fast.
        ratings_per_item, items_per_session, gold_rate: the MOS study's schedule.
        pairwise_ratings_per_item, pairs_per_session: the pairwise study's schedule.
        clip_fraction: share of each actor's clips that is rated.
        duration: the media's duration in seconds (stored with every answer).
        planted: task -> {system: :class:`Planted`}: what the raters perceive instead (default: nothing).

    Raises:
        ValueError: bad counts, a strength outside [0, 1] or a planted system that is not one of the task's.
    """
    if not 0 <= careless < n_raters:
        raise ValueError(f"need 0 <= careless < n_raters, got {careless} of {n_raters}")
    if ratings_per_item < 2:
        raise ValueError(f"ratings_per_item must be >= 2 (agreement needs two raters), got {ratings_per_item}")
    names = {task: sorted(systems[task]) for task in TASK_CRITERIA if task in systems and systems[task]}
    for task, listed in names.items():
        for name in listed:
            if not 0.0 <= float(systems[task][name]) <= 1.0:
                raise ValueError(f"strength of {task}/{name} must be in [0, 1], got {systems[task][name]}")
    clips = choose_clips(clip_ids, seed, clip_fraction)
    secret = hashlib.sha256(f"simulated study {int(seed)}".encode()).digest()[:16]
    empty = StudySpec(MOS_STUDY, "mos", {}, ())
    if not names:
        return SimulatedStudy(empty, StudySpec(PAIRWISE_STUDY, "pairwise", {}, ()), secret=secret)
    mos = _study_spec(MOS_STUDY, "mos", names, clips, ratings_per_item, items_per_session, gold_rate, seed)
    paired = {t: n for t, n in names.items() if len(n) >= 2}
    pairwise = (_study_spec(PAIRWISE_STUDY, "pairwise", paired, clips, pairwise_ratings_per_item, pairs_per_session,
                            0.0, seed) if paired else StudySpec(PAIRWISE_STUDY, "pairwise", {}, ()))
    raters = [f"sim_rater_{i + 1:02d}" for i in range(n_raters)]
    pool = _rng(seed, _P_RATERS)
    bias = dict(zip(raters, pool.normal(0.0, RATER_BIAS_SD, n_raters)))
    noise = dict(zip(raters, pool.uniform(*RATER_NOISE_SD, n_raters)))
    sloppy = set(raters[n_raters - careless:])
    quality = _Quality(seed, names, systems, _check_planted(planted or {}, names))
    out = SimulatedStudy(mos, pairwise, secret=secret)
    out.sessions = schedule_sessions(mos, raters, secret) + (schedule_sessions(pairwise, raters, secret) if paired else [])
    seq = 0
    for spec, rater, number, s_seed, entries in out.sessions:
        for position, (code, item) in enumerate(entries):
            seq += 1
            draws = _rng(seed, _P_ANSWER, spec.protocol == "pairwise", raters.index(rater), number, position)
            speed = draws.uniform(0.2, 0.8) if rater in sloppy else draws.uniform(1.5, 4.0)
            common = {"seq": seq, "time": None, "study": spec.name, "item": code,
                      "elapsed": round(duration * speed, 3), "duration": round(float(duration), 3)}
            for criterion in item.criteria:
                if spec.protocol == "pairwise":
                    out.answers.append(_pairwise_answer(item, criterion, rater in sloppy, quality, noise[rater],
                                                        pair_sides(s_seed, code, item.systems)[0], draws, common, rater))
                else:
                    if rater in sloppy:
                        score = int(draws.integers(1, 6))
                    else:
                        q = quality(item.task, item.systems[0], criterion, item.clip_id)
                        score = int(np.clip(np.rint(q + bias[rater] + noise[rater] * draws.standard_normal()), 1, 5))
                    out.answers.append({"rater": rater, "task": item.task, "clip_id": item.clip_id,
                                        "model": item.systems[0], "criterion": criterion, "score": score, **common})
    return out


def _pairwise_answer(item: StudyItem, criterion: str, sloppy: bool, quality, sd: float, left: str, draws,
                     common: dict, rater: str) -> dict:
    a, b = item.systems
    if sloppy:
        outcome = (1.0, 0.5, 0.0)[int(draws.integers(3))]
    else:
        d = quality(item.task, a, criterion, item.clip_id) - quality(item.task, b, criterion, item.clip_id)
        d += sd * draws.standard_normal()
        outcome = 0.5 if abs(d) < TIE_MARGIN else (1.0 if d > 0 else 0.0)
    return {"kind": "preference", "rater": rater, "task": item.task, "clip_id": item.clip_id, "system_a": a,
            "system_b": b, "criterion": criterion, "outcome": outcome, "left": left, **common}


def _check_planted(planted: Mapping[str, Mapping[str, Planted]], names: Mapping[str, Sequence[str]]) -> dict:
    for task, systems in planted.items():
        for name, plant in systems.items():
            if name not in names.get(task, ()):
                raise ValueError(f"planted system {task}/{name} is not one of the task's systems {list(names.get(task, ()))}")
            if plant.perceived is not None and not 0.0 <= float(plant.perceived) <= 1.0:
                raise ValueError(f"perceived strength of {task}/{name} must be in [0, 1], got {plant.perceived}")
            if plant.same_as and (plant.same_as == name or plant.same_as not in names[task]
                                  or systems.get(plant.same_as, Planted()).same_as):
                raise ValueError(f"{task}/{name} is planted the same as {plant.same_as!r}: name another system of "
                                 "the task that is not itself planted the same as a third")
    return {(t, n): plant for t, systems in planted.items() for n, plant in systems.items()}


class _Quality:
    """The latent quality ``q`` of (task, system or gold item, criterion, clip)."""

    def __init__(self, seed: int, names: Mapping[str, Sequence[str]], systems: Mapping[str, Mapping[str, float]],
                 planted: "Mapping[tuple[str, str], Planted] | None" = None):
        self.seed = seed
        planted = planted or {}
        self.strength = {(t, n): float(systems[t][n]) for t, listed in names.items() for n in listed}
        # Offsets are keyed by the system's position in the sorted names, so adding a task or
        # renaming other tasks' systems does not change this task's draws.
        self.offset = {(t, n, c): _rng(seed, _P_SYSTEM, _TASK_INDEX[t], k, j).normal(0.0, SYSTEM_SD)
                       for t, listed in names.items() for k, n in enumerate(listed)
                       for j, c in enumerate(TASK_CRITERIA[t])}
        for (t, n), plant in planted.items():  # what the raters perceive, planted (a simulated truth)
            if plant.perceived is not None:
                self.strength[(t, n)] = float(plant.perceived)
        for (t, n), plant in planted.items():
            if plant.same_as:
                self.strength[(t, n)] = self.strength[(t, plant.same_as)]
                for c in TASK_CRITERIA[t]:
                    self.offset[(t, n, c)] = self.offset[(t, plant.same_as, c)]
        self._clip: dict = {}

    def __call__(self, task: str, system: str, criterion: str, clip_id: str) -> float:
        if (task, clip_id) not in self._clip:
            cid = ClipId.parse(clip_id)
            key = (cid.actor_id, cid.emotion.index, cid.action_id, cid.script_id)
            self._clip[(task, clip_id)] = _rng(self.seed, _P_CLIP, _TASK_INDEX[task], *key).normal(0.0, CLIP_SD)
        difficulty = self._clip[(task, clip_id)]
        if system in (GOLD_HIGH, GOLD_LOW):
            return TOP - SPAN * (system == GOLD_LOW) + difficulty
        return TOP - SPAN * self.strength[(task, system)] ** 2 + self.offset[(task, system, criterion)] + difficulty


def perceived_quality(systems: Mapping[str, Mapping[str, float]], seed: int = 0,
                      planted: "Mapping[str, Mapping[str, Planted]] | None" = None) -> dict[tuple[str, str, str], float]:
    """The simulated raters' truth: ``(task, system, criterion) -> TOP - SPAN x strength^2 + offset``, the
    latent quality of :func:`simulate_study` (same ``systems``, ``seed`` and ``planted``) less the clip's
    difficulty, which every system of a clip shares: what a difference between two systems converges to.

    Example:
        >>> q = perceived_quality({"voice_cloning": {"a": 0.0, "b": 0.0}}, planted={"voice_cloning": {"b": Planted(same_as="a")}})
        >>> q[("voice_cloning", "a", "id_similarity")] == q[("voice_cloning", "b", "id_similarity")]
        True
    """
    names = {task: sorted(systems[task]) for task in TASK_CRITERIA if task in systems and systems[task]}
    quality = _Quality(seed, names, systems, _check_planted(planted or {}, names))
    return {(t, n, c): TOP - SPAN * quality.strength[(t, n)] ** 2 + quality.offset[(t, n, c)]
            for t, listed in names.items() for n in listed for c in TASK_CRITERIA[t]}


def simulate_ratings(clip_ids: Sequence[str], systems: Mapping[str, Mapping[str, float]], seed: int = 0,
                     **options) -> list[dict]:
    """The simulated MOS study's ratings of the systems (no gold), as ``hugvis mos`` CSV rows.

    ``options`` are :func:`simulate_study`'s.

    Example:
        >>> rows = simulate_ratings(["actor_0001_sad_action_01_script_001"], {"voice_cloning": {"a": 0.2}})
        >>> len(rows), sorted(rows[0])[:3]
        (6, ['clip_id', 'criterion', 'duration'])
    """
    return simulate_study(clip_ids, systems, seed, **options).mos_rows()


def _csv(rows: Sequence[Mapping], columns: Sequence[str]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n", extrasaction="raise")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def ratings_csv(rows: Sequence[Mapping]) -> str:
    """MOS rows as CSV text (:data:`hug_vis_dataset.studies.mos.RATING_COLUMNS`, then the study fields when the
    rows have them) with ``\\n`` line ends."""
    columns = list(RATING_COLUMNS) + [c for c in STUDY_COLUMNS if rows and c in rows[0]]
    return _csv(rows, columns)


def write_study(study: SimulatedStudy, systems_root: "str | Path", emotion=None) -> dict[str, Path]:
    """Write the simulated study's files under ``systems_root`` (see the module docstring); ``emotion``: the
    simulated emotion study (:mod:`hug_vis_dataset.synth.emotion_raters`), whose answers and sessions follow the
    others' in the same log, as one Space's studies share it."""
    root = Path(systems_root)
    folder = root / STUDY_DIR
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"mos": root / RATINGS_FILE, "pairwise": root / PAIRWISE_FILE, "mos_study": folder / MOS_STUDY_FILE,
             "pairwise_study": folder / PAIRWISE_STUDY_FILE, "log": folder / LOG_FILE,
             "sessions": folder / SESSIONS_FILE}
    paths["mos"].write_text(ratings_csv(study.mos_rows()), encoding="utf-8")
    paths["pairwise"].write_text(_csv(study.pairwise_rows(), PAIRWISE_COLUMNS), encoding="utf-8")
    for key, spec in (("mos_study", study.mos), ("pairwise_study", study.pairwise)):
        paths[key].write_text(json.dumps(_spec_file(spec), indent=1) + "\n", encoding="utf-8")
    answers = list(study.answers)
    if emotion is not None:  # the log's one sequence continues over the emotion study's answers
        paths.update(write_emotion_study(emotion, root, SIMULATED_EMOTION_ANSWERS_FILE))
        last = max((int(a["seq"]) for a in study.answers), default=0)
        answers += [{**a, "seq": last + i} for i, a in enumerate(emotion.answers, start=1)]
    lines = [json.dumps(a, ensure_ascii=False) for a in answers]
    paths["log"].write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    sessions = [json.dumps({"study": spec.name, "rater": rater, "session": number, "seed": s_seed, "time": None,
                            "items": [{"code": c, "key": i.key, "kind": i.kind} for c, i in entries]})
                for spec, rater, number, s_seed, entries in study.sessions + (emotion.sessions if emotion else [])]
    paths["sessions"].write_text("".join(line + "\n" for line in sessions), encoding="utf-8")
    # The codes' key, where the Space's session log keeps it (a simulated study: nothing to hide).
    folder.joinpath(SESSIONS_FILE + ".secret").write_text(study.secret.hex(), encoding="utf-8")
    return paths


def _spec_file(spec: StudySpec) -> dict:
    return {"name": spec.name, "protocol": spec.protocol,
            "tasks": {t: {"systems": list(s), "criteria": list(c)} for t, (s, c) in spec.tasks.items()},
            "clips": list(spec.clips), "ratings_per_item": spec.ratings_per_item,
            "items_per_session": spec.items_per_session, "gold_rate": spec.gold_rate, "seed": spec.seed}


def write_simulated_ratings(systems_root: "str | Path", clip_ids: Sequence[str], seed: int = 0,
                            transcripts: "Mapping[str, str] | None" = None, **options) -> Path:
    """Write the simulated studies for the systems listed in ``manifest.json`` under ``systems_root``: the MOS and
    pairwise studies of the generation systems and, where the manifest has emotion systems, the forced-choice
    emotion study of their input settings with the planted people accuracy
    (:func:`hug_vis_dataset.synth.emotion_raters.simulate_emotion_study`).

    Args:
        systems_root: the ``simulated_systems`` folder (its manifest must exist).
        clip_ids: the grid's clip ids.
        seed: the synth seed.
        transcripts: clip id -> transcript (the emotion study's reading times).
        **options: :func:`simulate_study`'s (``n_raters``, ``duration``, ...).

    Returns:
        The MOS ratings CSV written (``mos_ratings.csv``); :func:`write_study` lists the others.
    """
    root = Path(systems_root)
    manifest = require_fields(read_json(root / "manifest.json"), {"tasks": dict}, root / "manifest.json")
    systems = {task: {name: float(info["strength"]) for name, info in manifest["tasks"][task]["systems"].items()}
               for task in TASK_CRITERIA if task in manifest.get("tasks", {})}
    study = simulate_study(clip_ids, systems, seed=seed, **options)
    planted = {s: PEOPLE_ACCURACY[s] for s in settings_of_systems(manifest) if s in PEOPLE_ACCURACY}
    emotion = (simulate_emotion_study(clip_ids, planted, seed=seed, duration=float(options.get("duration", 1.0)),
                                      transcripts=transcripts, secret=study.secret) if planted else None)
    return write_study(study, root, emotion)["mos"]

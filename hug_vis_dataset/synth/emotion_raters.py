"""Simulated raters of the forced-choice emotion study, with a planted accuracy per input setting.

**These are simulated raters, not human judgements.** They make the people-as-the-ceiling path (the emotion
study's schedule and quality control, Table 4's People rows, people against the best model) run end to end on the
synthetic grid, and their planted accuracy (:data:`PEOPLE_ACCURACY`) is the truth the analysis must recover
(``tests/test_people.py``); no conclusion about perception may be drawn from them.

The study (``synthetic-emotion``) shows every chosen clip (``ceil(clip_fraction x n)`` per actor, as the MOS
study's :func:`~hug_vis_dataset.synth.ratings.choose_clips`) in each input setting of the simulated emotion systems,
``k = 3`` answers per item, sessions of 8 items of which 1 is a clear gold item, scheduled exactly as the Space
schedules real raters (:func:`~hug_vis_dataset.synth.ratings.schedule_sessions`: a rater meets each clip once).

**Answers.** A careful rater names the clip's instructed emotion with the setting's planted probability
``p_s`` (:data:`PEOPLE_ACCURACY`); otherwise "Cannot tell" with probability :data:`CANNOT_TELL_SHARE`, else a
plausible confusion (one of the emotion's two neighbours, 60%) or any other emotion. So the expected per-clip
accuracy is ``p_s`` on every clip and the People row converges to it. A gold item (the clip with all its evidence)
is answered right with probability :data:`GOLD_ACCURACY`. The first ``careless`` raters answer uniformly at random
among the eight choices and faster than the media, so quality control flags them. Answers take
``minimum x U(1.5, 4)`` seconds (careless ``x U(0.2, 0.8)``), ``minimum`` being
:func:`hug_vis_dataset.studies.emotion_study.minimum_seconds` of the item.

Example:
    >>> sim = simulate_emotion_study(["actor_0001_sad_action_01_script_001", "actor_0002_sad_action_01_script_001"],
    ...                              {"Text": 1.0}, ratings_per_item=1, n_raters=2, careless=0, gold_rate=0.0)
    >>> sorted((a["setting"], a["answer"]) for a in sim.answers)
    [('Text', 'Sad'), ('Text', 'Sad')]
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ..datamodel.grid import EMOTIONS, ClipId
from ..studies.emotion_answers import ANSWER_CHOICES, CANNOT_TELL, CSV_COLUMNS
from ..studies.emotion_study import minimum_seconds
from ..studies.rater_qc import GOLD_CLEAR
from ..studies.spec import StudySpec, study_from_mapping
from .scheduling import choose_clips, schedule_sessions
from .seeds import TAG_PEOPLE
from .systems import _CONFUSIONS

EMOTION_STUDY, EMOTION_STUDY_FILE = "synthetic-emotion", "emotion_study.json"
#: The planted truth of the synthetic release: each setting's share of answers naming the instructed emotion.
#: People read faces far better than the simulated systems do (the paper's weakest setting for models), and a
#: transcript alone about as well as the best system.
PEOPLE_ACCURACY: dict[str, float] = {"Video": 0.92, "Audio": 0.78, "Text": 0.62, "Video + Audio + Text": 0.96}
#: Of a careful rater's wrong answers, the share that are "Cannot tell".
CANNOT_TELL_SHARE = 0.3
#: A careful rater's accuracy on a gold item (the clip with all its evidence).
GOLD_ACCURACY = 0.97
STUDY_COLUMNS = ("study", "item", "elapsed", "duration")
_P_ANSWER = 0


def _rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed), TAG_PEOPLE, *map(int, keys)]))


@dataclass
class SimulatedEmotionStudy:
    """The simulated emotion study: its spec, sessions ``(spec, rater, number, seed, [(code, item), ...])`` and
    every answer as the ratings log's lines (``kind`` emotion), in submission order."""

    spec: StudySpec
    sessions: list = field(default_factory=list)
    answers: list[dict] = field(default_factory=list)

    def rows(self) -> list[dict]:
        """The answers as the exported CSV's rows (:data:`~hug_vis_dataset.studies.emotion_answers.CSV_COLUMNS` and
        the study fields; gold answers included: quality control reads them), by clip, setting, rater."""
        rows = sorted(self.answers, key=lambda a: (a["clip_id"], a["setting"], a["rater"]))
        return [{k: a[k] for k in CSV_COLUMNS + STUDY_COLUMNS} for a in rows]


def _wrong(truth, draws: np.random.Generator) -> str:
    if draws.uniform() < CANNOT_TELL_SHARE:
        return CANNOT_TELL
    if draws.uniform() < 0.6:
        return _CONFUSIONS[truth][int(draws.integers(2))].value
    return EMOTIONS[int(draws.choice([i for i in range(len(EMOTIONS)) if EMOTIONS[i] is not truth]))].value


def simulate_emotion_study(clip_ids: Sequence[str], accuracy: "Mapping[str, float] | None" = None, seed: int = 0,
                           n_raters: int = 16, careless: int = 1, ratings_per_item: int = 3,
                           items_per_session: int = 8, gold_rate: float = 0.125, clip_fraction: float = 0.5,
                           duration: float = 1.0, transcripts: "Mapping[str, str] | None" = None,
                           secret: bytes = b"") -> SimulatedEmotionStudy:
    """The simulated emotion study of the given clips (module docstring).

    Args:
        clip_ids: the grid's clip ids; ``clip_fraction`` of each actor's are shown (the MOS study's choice).
        accuracy: input setting (Table 4's name) -> planted accuracy in [0, 1] (default :data:`PEOPLE_ACCURACY`);
            the settings of the study.
        seed: every draw derives from it (and the study's seed is it).
        n_raters, careless: the rater pool (``sim_person_01`` ...) and how many of its first raters are careless
            (the first take sessions in every study; the last may find nothing left).
        ratings_per_item, items_per_session, gold_rate: the schedule.
        duration: the clips' duration in seconds; ``transcripts``: clip id -> transcript (reading times).
        secret: the key of the item codes (:func:`~hug_vis_dataset.studies.sessions.item_code`).

    Raises:
        ValueError: an accuracy outside [0, 1] or a setting outside Table 4's, bad counts.
    """
    accuracy = dict(PEOPLE_ACCURACY if accuracy is None else accuracy)
    if not 0 <= careless < n_raters:
        raise ValueError(f"need 0 <= careless < n_raters, got {careless} of {n_raters}")
    for setting, p in accuracy.items():
        if not 0.0 <= float(p) <= 1.0:
            raise ValueError(f"planted accuracy of {setting!r} must be in [0, 1], got {p}")
    clips = choose_clips(clip_ids, seed, clip_fraction)
    spec = study_from_mapping({"name": EMOTION_STUDY, "protocol": "emotion",
                               "tasks": {"emotion": {"settings": list(accuracy)}}, "clips": clips,
                               "ratings_per_item": ratings_per_item, "items_per_session": items_per_session,
                               "gold_rate": gold_rate, "seed": seed}, where=f"simulated study {EMOTION_STUDY}")
    accuracy = dict(zip(spec.settings(), accuracy.values()))  # Table 4's spelling of each setting
    raters = [f"sim_person_{i + 1:02d}" for i in range(n_raters)]
    sloppy = set(raters[:careless])  # the first raters: they take sessions however small the study is
    out = SimulatedEmotionStudy(spec, schedule_sessions(spec, raters, secret))
    text = transcripts or {}
    for _spec, rater, number, _seed, entries in out.sessions:
        for position, (code, item) in enumerate(entries):
            draws = _rng(seed, _P_ANSWER, raters.index(rater), number, position)
            truth = ClipId.parse(item.clip_id).emotion
            setting = item.systems[0]
            if rater in sloppy:
                answer, speed = ANSWER_CHOICES[int(draws.integers(len(ANSWER_CHOICES)))], draws.uniform(0.2, 0.8)
            else:
                p = GOLD_ACCURACY if setting == GOLD_CLEAR else accuracy[setting]
                answer = truth.value if draws.uniform() < p else _wrong(truth, draws)
                speed = draws.uniform(1.5, 4.0)
            floor = minimum_seconds(setting, duration, text.get(item.clip_id, ""))
            out.answers.append({"kind": "emotion", "rater": rater, "task": "emotion", "clip_id": item.clip_id,
                                "setting": setting, "answer": answer, "seq": None, "time": None,
                                "study": spec.name, "item": code, "elapsed": round(floor * speed, 3),
                                "duration": round(float(floor), 3)})
    return out


def answers_csv(rows: Sequence[Mapping]) -> str:
    """Exported answers as CSV text (``\\n`` line ends)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(CSV_COLUMNS + STUDY_COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def spec_file(spec: StudySpec) -> dict:
    """The study file of a simulated emotion study (what ``hugvis mos status --study`` reads)."""
    return {"name": spec.name, "protocol": spec.protocol, "tasks": {"emotion": {"settings": list(spec.settings())}},
            "clips": list(spec.clips), "ratings_per_item": spec.ratings_per_item,
            "items_per_session": spec.items_per_session, "gold_rate": spec.gold_rate, "seed": spec.seed}


def write_emotion_study(study: SimulatedEmotionStudy, root: "str | Path", answers_file: str) -> dict[str, Path]:
    """Write the exported answers (``root/answers_file``) and the study file (``root/study/emotion_study.json``);
    the log lines and sessions go in the study folder's log with the other simulated studies
    (:func:`hug_vis_dataset.synth.ratings.write_study`)."""
    root = Path(root)
    paths = {"answers": root / answers_file, "emotion_study": root / "study" / EMOTION_STUDY_FILE}
    paths["emotion_study"].parent.mkdir(parents=True, exist_ok=True)
    paths["answers"].write_text(answers_csv(study.rows()), encoding="utf-8")
    paths["emotion_study"].write_text(json.dumps(spec_file(study.spec), indent=1) + "\n", encoding="utf-8")
    return paths


def settings_of_systems(manifest: Mapping) -> list[str]:
    """The input settings the simulated emotion systems answer (the manifest's), in Table 4's spelling."""
    from ..metrics.emotion import input_setting_sort_key, normalize_input_setting

    listed = manifest.get("tasks", {}).get("emotion", {}).get("input_settings", ())
    return sorted({normalize_input_setting(s) for s in listed}, key=input_setting_sort_key)


__all__ = ["CANNOT_TELL_SHARE", "EMOTION_STUDY", "EMOTION_STUDY_FILE", "GOLD_ACCURACY", "PEOPLE_ACCURACY",
           "SimulatedEmotionStudy", "answers_csv", "settings_of_systems", "simulate_emotion_study",
           "spec_file", "write_emotion_study"]

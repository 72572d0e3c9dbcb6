"""The MOS study as the Space runs it over one release: which outputs may be rated, what a rater sees
for an item, storing ratings, and the MOS so far (:class:`MosStudy`; no Gradio: the tab's layout and
wiring are :mod:`hug_vis_dataset.space.mos_study`'s).

What a rater sees for one item (task, system, clip), :meth:`MosStudy.item`:

* video tasks: the generated video beside the **source portrait** it should resemble (the
  reference clip's first frame, the dataset's ``source_frame``, read with the same function
  CSIM uses, :func:`hug_vis_dataset.references.read_reference_portrait`);
* voice cloning: the generated speech beside the actor's **reference speech** (the clip's
  recording, the speaker-similarity reference); no video box.

Ratings go to a :class:`~hug_vis_dataset.studies.ratings.RatingStore`: one rating per (rater, task,
clip, model, criterion), a resubmission replaces the earlier one (latest wins, by the store's sequence
number); aggregation is :mod:`hug_vis_dataset.studies.mos`'s, so the Space's MOS equals ``hugvis mos``'s
on the same (deduplicated) ratings. Where they live: :func:`ratings_location`.

Values of a request can be forged by a client, so the server decides what may be rated: the store
is built with :meth:`MosStudy.offer_problem`, which accepts only a system of the task's study, a
clip of the release and a system that has an output for that clip; the scores are validated as
sent (a slider's ``4.0`` is 4, ``4.6`` is refused, never truncated). A refusal is one line,
``**Rating refused:** ...``, naming the value and what to choose. Corrupt lines of the ratings log
are skipped, never fatal: :meth:`MosStudy.problems` lists them (``"<path>:<line>: <what>; <fix>"``)
and the tab shows them under the message. Text that came from a request (system, clip, rater,
error texts) is escaped with :func:`hug_vis_dataset.presentation.escaping.markdown_text` wherever it is returned
as Markdown.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from ..presentation.escaping import markdown_text
from ..datamodel.layout import SIMULATED_SYSTEMS_DIR
from ..presentation.skipped_lines import listed
from .blind_study import VOICE_TASK
from .ratings import CRITERIA, CRITERION_LABELS, RATINGS_FILE, RatingError, RatingStore
from .status import aggregate_ratings

#: Environment variable naming the ratings file (overridden by an explicit path).
RATINGS_ENV = "HUGVIS_RATINGS"
#: At most this many skipped log lines are listed in the tab (the rest are counted).
SHOWN_PROBLEMS = 10
#: Environment variable naming the study file the tab runs (default: :func:`default_study`).
STUDY_ENV = "HUGVIS_STUDY"


def ratings_location(ratings_path: "str | Path | None" = None, results_dir: "str | Path | None" = None,
                     work_dir: "str | Path | None" = None, environ: "Mapping[str, str] | None" = None) -> Path:
    """Where the Space keeps its ratings, first match wins.

    1. ``ratings_path``; 2. the environment variable ``HUGVIS_RATINGS``; 3.
    ``<results_dir>/ratings/ratings.jsonl`` (results outlive restarts); 4.
    ``<work_dir>/ratings.jsonl`` (a temporary work folder: ratings are lost with it).

    Example:
        >>> str(ratings_location(None, "/data/results", "/tmp/w", environ={}))
        '/data/results/ratings/ratings.jsonl'
        >>> str(ratings_location(None, "/data/results", "/tmp/w", environ={"HUGVIS_RATINGS": "/srv/r.jsonl"}))
        '/srv/r.jsonl'
    """
    environ = os.environ if environ is None else environ
    if ratings_path:
        return Path(ratings_path)
    if environ.get(RATINGS_ENV, "").strip():
        return Path(environ[RATINGS_ENV].strip())
    if results_dir:
        return Path(results_dir) / RATINGS_FILE
    if work_dir:
        return Path(work_dir) / "ratings.jsonl"
    raise ValueError("ratings_location needs a ratings path, $HUGVIS_RATINGS, a results folder or a work folder")


@dataclass
class MosItem:
    """The media of one item to rate; ``None`` where it does not apply or is missing."""

    video: "str | None" = None
    speech: "str | None" = None
    portrait: "np.ndarray | None" = None
    reference_speech: "str | None" = None
    note: str = ""


class MosStudy:
    """Rating callbacks over one release's simulated systems and one rating store."""

    def __init__(self, release, release_dir: "str | Path", ratings_path: "str | Path",
                 on_stored: "Callable[[], str | None] | None" = None, study_path: "str | Path | None" = None):
        self.release = release
        self.release_dir = Path(release_dir)
        self.study_path = study_path or os.environ.get(STUDY_ENV, "").strip() or None
        self._spec = None
        self._blind = None
        # The store itself enforces what the study presents, so no caller can store around it.
        self.ratings = RatingStore(ratings_path, allowed=self.offer_problem)
        # Called after every stored rating (a Hub results store pushes the ratings file); what it
        # returns (a problem with the push) is added to the rater's message.
        self.on_stored = on_stored

    def systems(self, task: str) -> list[str]:
        """The simulated systems of a MOS task (none for any other value: never a path from input)."""
        if not isinstance(task, str) or task not in CRITERIA:
            return []
        folder = self.release_dir / SIMULATED_SYSTEMS_DIR / task
        return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []

    def clip_ids(self) -> list[str]:
        return [r.clip_id for r in self.release]

    @property
    def spec(self):
        """The study the tab runs: the study file (``study_path`` or ``$HUGVIS_STUDY``), else
        :func:`default_study` over the release's simulated systems."""
        if self._spec is None:
            from .spec import load_study

            clips = [str(c) for c in self.release.clip_ids()]
            spec = load_study(self.study_path, clips) if self.study_path else default_study(self, clips)
            self._check_outputs(spec)
            self._spec = spec
        return self._spec

    def _check_outputs(self, spec) -> None:
        """Every system the study names has an output for every clip it is rated on (names checked against what
        exists, names.py): else one line naming the study, the system or item and what exists, before any rater
        is served an item whose every answer would be refused."""
        from ..names import require_known
        from .spec import EMOTION, StudyFileError

        if spec.protocol == EMOTION:  # its "systems" are Table 4's input settings, shown from the release's clips
            return
        where = str(self.study_path or "the default study")
        for task, (systems, _criteria) in spec.tasks.items():
            folder = self.release_dir / SIMULATED_SYSTEMS_DIR / task
            present = self.systems(task)
            for system in systems:
                try:
                    require_known("system", system, present, where=f"{where}: tasks.{task}",
                                  fix=f"choose from the systems with outputs in {folder}: {', '.join(present) or '(none)'}")
                except ValueError as err:
                    raise StudyFileError(str(err)) from None
            suffix = ".wav" if task == VOICE_TASK else ".mp4"
            missing = [(system, clip) for system in systems for clip in spec.clips
                       if not (folder / system / f"{clip}{suffix}").is_file()]
            if missing:
                system, clip = missing[0]
                raise StudyFileError(f"{where}: tasks.{task}: {len(missing)} of {len(systems) * len(spec.clips)} items "
                                     f"have no output (first: system {system!r} has no {folder / system / (clip + suffix)}); "
                                     "add those outputs, or leave those systems or clips out of the study")

    @property
    def blind(self):
        """The blind rater sessions (:class:`~hug_vis_dataset.studies.blind_study.BlindStudy`),
        kept next to the ratings file."""
        if self._blind is None:
            from .blind_study import BlindStudy

            self._blind = BlindStudy(self, self.spec, self.ratings.path.parent)
        return self._blind

    def media(self, task: str, system: str, clip_id: str) -> "str | None":
        """The system output to rate (a video, or a WAV for voice cloning), if it exists.

        Only for a system of the study and a clip of the release, so a forged value (``../x``)
        never names a file outside the simulated systems.
        """
        if not all(isinstance(v, str) and v for v in (task, system, clip_id)) \
                or system not in self.systems(task) or clip_id not in self._release_clips():
            return None
        suffix = ".wav" if task == VOICE_TASK else ".mp4"
        path = self.release_dir / SIMULATED_SYSTEMS_DIR / task / system / f"{clip_id}{suffix}"
        return str(path) if path.is_file() else None

    def _release_clips(self) -> set[str]:
        """The release's clip ids, as given and canonical (the store passes canonical ones)."""
        return {r.clip_id for r in self.release} | {str(c) for c in self.release.clip_ids()}

    def offer_problem(self, task: str, system: str, clip_id: str) -> "str | None":
        """Why the study does not present (task, system, clip) for rating, or None when it does.

        The store's ``allowed`` check: a rating is stored only for a system of the task's study,
        a clip of the release and a system with an output for that clip. The criteria are checked
        by the store (:func:`~hug_vis_dataset.studies.ratings.validate_rating`).
        """
        from .rater_qc import is_gold

        if is_gold(system) and task in CRITERIA:
            # Gold items rate the clip's own recording (or its degraded copy): any clip of the release.
            if clip_id not in self._release_clips():
                return f"clip {clip_id!r} is not in the release; choose a clip from the Clip list"
            return None
        systems = self.systems(task)
        if system not in systems:
            if not systems:
                return f"the {task} study has no systems to rate ({SIMULATED_SYSTEMS_DIR}/{task}/ is empty)"
            return f"system {system!r} is not in the {task} study; choose one of {systems}"
        if clip_id not in self._release_clips():
            return f"clip {clip_id!r} is not in the release; choose a clip from the Clip list"
        if self.media(task, system, clip_id) is None:
            return f"system {system!r} has no {task} output for clip {clip_id!r}; choose another clip or system"
        return None

    def emotion_offer_problem(self, task: str, setting: str, clip_id: str) -> "str | None":
        """Why the emotion study does not present (clip, setting), or None when it does: the emotion answers'
        ``allowed`` check (a clip of the release, a setting of the study, or the gold item's)."""
        from .rater_qc import GOLD_CLEAR

        if clip_id not in self._release_clips():
            return f"clip {clip_id!r} is not in the release; choose a clip from the Clip list"
        settings = self.spec.settings() if self.spec.protocol == "emotion" else ()
        if setting not in settings and not (setting == GOLD_CLEAR and self.spec.gold_rate):
            return f"input setting {setting!r} is not in the {self.spec.name} study; choose one of {list(settings)}"
        return None

    def problems(self) -> list[str]:
        """The ratings log's skipped lines (corrupt, invalid, or not an item of the study), each
        ``"<path>:<line>: <what is wrong>; <fix>"``, plain text in file order; empty when clean."""
        return self.ratings.problems()

    def log_notes(self) -> str:
        """:meth:`problems` as Markdown for the tab (escaped; empty when the log is clean)."""
        problems = self.problems()
        if not problems:
            return ""
        lines = [f"**The ratings log has {len(problems)} skipped line(s)**, left out of the MOS:"]
        lines += [f"- {markdown_text(p)}" for p in problems[:SHOWN_PROBLEMS]]
        if len(problems) > SHOWN_PROBLEMS:
            lines.append(f"- and {len(problems) - SHOWN_PROBLEMS} more")
        return "\n".join(lines)

    def references(self, task: str, clip_id: str) -> dict[str, str]:
        """The task's reference media of a clip (``portrait`` for video tasks, ``audio`` for voice),
        from the task scorer, so the rater judges identity against what the metric uses."""
        from ..tasks import get_task

        return get_task(task).reference(self.release.record(clip_id))

    def item(self, task: str, system: str, clip_id: str) -> MosItem:
        """What the tab shows for one (task, system, clip); problems go to ``note``, never raise."""
        from ..readers.media import MediaError
        from ..references import read_reference_portrait

        if not (task and clip_id) or not isinstance(task, str) or task not in CRITERIA:
            return MosItem(note="Choose a task, a system and a clip.")
        output = self.media(task, system, clip_id)
        note = "" if output else f"No output of {markdown_text(system or '(no system)')} for {markdown_text(clip_id)}."
        try:
            refs = self.references(task, clip_id)
        except (KeyError, ValueError):
            return MosItem(note=f"Clip {markdown_text(clip_id)} is not in the release.")
        if task == VOICE_TASK:
            reference = refs.get("audio")
            return MosItem(speech=output, reference_speech=reference if reference and Path(reference).is_file()
                           else None, note=note)
        try:
            portrait = read_reference_portrait(refs["portrait"])
        except (MediaError, OSError, StopIteration) as err:
            portrait, note = None, (note + f" Source portrait unreadable: {markdown_text(err)}").strip()
        return MosItem(video=output, portrait=portrait, note=note)

    def rate(self, task: str, system: str, clip_id: str, rater: str, *scores: Any):
        """Store one rater's scores; returns (Markdown message, aggregated MOS table).

        ``scores`` are the sliders in the task's criteria order, passed to validation as sent
        (extra values, the hidden sliders of a task with fewer criteria, are ignored). A
        resubmission of the same (rater, task, clip, system) replaces the earlier scores, and the
        message says which. Never raises for a bad request: the message is one line,
        ``**Rating refused:** ...``.
        """
        # isinstance: a forged request may send any JSON value, and a list is no dict key.
        wanted = CRITERIA.get(task, ()) if isinstance(task, str) else ()
        values = dict(zip(wanted, scores))
        rater = rater.strip() if isinstance(rater, str) else ("" if rater is None else rater)
        try:
            stored = self.ratings.add(rater, task, clip_id, system, values)
        except RatingError as err:
            return f"**Rating refused:** {markdown_text(err)}", self.table()
        problem = self.on_stored() if self.on_stored is not None else None
        who, what, clip = markdown_text(rater), markdown_text(system), markdown_text(clip_id)
        if stored.replaced:
            changes = ", ".join(f"{CRITERION_LABELS[c]} {stored.replaced.get(c, '-')} -> {v}"
                                for c, v in stored.scores.items())
            message = (f"Replaced your earlier rating of {what} on {clip} ({task}) by {who}: {changes}. "
                       "Only the latest rating counts.")
        else:
            message = f"Stored {len(stored.scores)} score(s) from {who} for {what} on {clip}."
        if stored.skipped:
            message += "\n\n" + self.skipped_note(stored.skipped_lines, stored.skipped)
        if problem:
            message += f" **{markdown_text(problem)}**"
        return message, self.table()

    def skipped_note(self, lines: "tuple[str, ...] | list[str]", total: int) -> str:
        """The skipped lines of the ratings log, named in the message itself (Markdown, escaped):
        ``ratings.jsonl:<line>: <what>; <fix>`` for the first ones, then how many more.

        The log is named by its file name: the page is public, the server's folders are not.
        """
        folder = str(self.ratings.path.parent) + os.sep
        items = [markdown_text(line.removeprefix(folder)) for line in listed(lines, total)]
        return (f"The ratings log has {total} skipped line(s), left out of the MOS:\n"
                + "\n".join(f"- {item}" for item in items))

    def table(self):
        """MOS per (task, model, criterion): mean and counts of the ratings in force (MOS shown to
        three decimals; :func:`aggregate_ratings` keeps them unrounded for the leaderboard)."""
        return aggregate_ratings(self.ratings.frame()).round({"mos": 3})


def default_study(study: MosStudy, clips: list[str]):
    """The study of a release without a study file: every simulated system of the three MOS
    tasks on every clip, 3 ratings per item, sessions of 6 items of which 1 is gold."""
    from .spec import study_from_mapping

    tasks = {task: {"systems": study.systems(task)} for task in CRITERIA if study.systems(task)}
    return study_from_mapping({"name": "space-study", "tasks": tasks, "clips": clips, "ratings_per_item": 3,
                               "items_per_session": 6, "gold_rate": 1 / 6, "seed": 0}, where="default study")

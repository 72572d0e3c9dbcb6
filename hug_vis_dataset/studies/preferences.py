"""Pairwise answers of a study in the results store's ratings log (the second protocol, ``docs/MOS.md``).

A pairwise answer says, for one criterion, which of two systems' outputs of the same clip is better,
or that they are tied. It is stored in the same file as the MOS ratings (``ratings/ratings.jsonl``,
:mod:`hug_vis_dataset.studies.ratings`), with the same convention: append-only, one JSON line per
criterion, written under the same file lock with the next sequence number ``seq`` of the file, and
**the latest answer per (rater, task, clip, pair, criterion) wins** on reading. Each line is marked
``"kind": "preference"``, so the MOS reader skips it (it is not a rating and not a problem)::

    {"kind": "preference", "rater": "r1", "task": "voice_cloning", "clip_id": "...",
     "system_a": "clone_good", "system_b": "clone_poor", "criterion": "id_similarity",
     "outcome": 1.0, "left": "clone_poor", "seq": 12, "time": ..., "study": "...", "item": "i...",
     "elapsed": 4.1, "duration": 1.0}

``system_a`` / ``system_b`` are the pair in the study's order; ``outcome`` is 1 when ``system_a`` is
better, 0 when ``system_b`` is, 0.5 for a tie (what :mod:`hug_vis_dataset.studies.bradley_terry`
fits); ``left`` is the system the rater saw as "A" (the randomised side, recorded).

Example:
    >>> import tempfile, os
    >>> store = PreferenceStore(os.path.join(tempfile.mkdtemp(), "ratings.jsonl"))
    >>> clip = "actor_0001_happy_action_01_script_001"
    >>> store.add("r1", "voice_cloning", clip, ("good", "poor"), {"id_similarity": "A",
    ...           "emotion_naturalness": "tie"}, left="poor").seq
    1
    >>> store.frame()[["criterion", "outcome", "left"]].values.tolist()
    [['id_similarity', 0.0, 'poor'], ['emotion_naturalness', 0.5, 'poor']]
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

from ..datamodel.grid import ClipId, ClipIdError
from ..readers.json_files import loads_strict
from ..datamodel.results import name_problem
from .bradley_terry import LOSS, TIE, WIN
from .ratings import (CRITERIA, EXTRA_COLUMNS, LINE_FIX, PREFERENCE_KIND, _SEQ_RE, RatingError,
                      _ends_without_newline, validate_extra)

#: What a rater answers per criterion: the system shown as "A", the one shown as "B", or a tie.
CHOICES: tuple[str, ...] = ("A", "Tie", "B")
PREFERENCE_FIELDS: tuple[str, ...] = ("rater", "task", "clip_id", "system_a", "system_b", "criterion", "outcome",
                                      "left", "seq", "time")
FRAME_COLUMNS: tuple[str, ...] = PREFERENCE_FIELDS + EXTRA_COLUMNS
#: One answer per key: a later one (larger ``seq``) replaces an earlier one.
PREFERENCE_KEY: tuple[str, ...] = ("rater", "task", "clip_id", "system_a", "system_b", "criterion")
#: ``allowed(task, system, clip_id)``: why the study does not present it, or None (as for ratings).
AllowedCheck = Callable[[str, str, str], "str | None"]


def outcome_of(choice: object, pair: Sequence[str], left: str) -> float:
    """The stored outcome (for ``pair[0]``) of a rater's choice between "A" (``left``) and "B".

    Raises:
        RatingError: the choice is not one of :data:`CHOICES` (case-insensitive).

    Example:
        >>> outcome_of("A", ("x", "y"), left="y"), outcome_of("b", ("x", "y"), left="y"), outcome_of("Tie", "xy", "x")
        (0.0, 1.0, 0.5)
    """
    text = choice.strip().lower() if isinstance(choice, str) else None
    if text == "tie":
        return TIE
    if text not in ("a", "b"):
        raise RatingError(f"answer {choice!r} must be one of {list(CHOICES)}")
    better = left if text == "a" else next(s for s in pair if s != left)
    return WIN if better == pair[0] else LOSS


def validate_preference(rater: object, task: object, clip_id: object, pair: Sequence[object],
                        left: object) -> None:
    """Check the fields of a pairwise answer other than the choices; one-line :class:`RatingError`."""
    for label, value in (("rater", rater),) + tuple(("system", s) for s in pair):
        problem = name_problem(label, value)
        if problem:
            raise RatingError(problem)
    if not isinstance(task, str) or task not in CRITERIA:
        raise RatingError(f"task {task!r} has no pairwise study; choose one of {sorted(CRITERIA)}")
    if len(pair) != 2 or pair[0] == pair[1]:
        raise RatingError(f"a pairwise answer compares two different systems, got {list(pair)}")
    if left not in pair:
        raise RatingError(f"left {left!r} must be one of the pair {list(pair)}")
    try:
        ClipId.parse(clip_id)
    except (ClipIdError, TypeError) as err:
        raise RatingError(str(err)) from None


def read_kind_lines(path: Path, kind: str, clean: Callable[[dict], dict]) -> "tuple[list[dict], list[str]]":
    """The lines of one ``kind`` of a ratings log (pairwise answers, emotion answers), each through ``clean``:
    (the records, ``"<path>:<line>: <what>; <fix>"`` per line of that kind ``clean`` refuses). MOS ratings and lines
    not readable at all are the ratings store's to read and report, not listed here."""
    records, problems = [], []
    if not path.is_file():
        return records, problems
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if b'"kind"' not in raw:
                continue  # a MOS rating (or a line the ratings store reports)
            try:  # strict, as the ratings store reads it: a duplicated key is a bad line
                record = loads_strict(raw.decode("utf-8"), path)
            except (UnicodeDecodeError, ValueError):
                continue  # not readable at all: the ratings store lists it
            if not isinstance(record, dict) or record.get("kind") != kind:
                continue
            try:
                records.append(clean(record))
            except (RatingError, KeyError, TypeError, ValueError) as err:
                what = f"missing field {err}" if isinstance(err, KeyError) else str(err)
                problems.append(f"{path}:{number}: {what}; {LINE_FIX}")
    return records, problems


class PreferenceStore:
    """The pairwise answers in a ratings log; appends under the log's lock, latest answer wins.

    Args:
        path: the ratings log (``ratings/ratings.jsonl``), shared with the MOS ratings.
        allowed: ``allowed(task, system, clip_id)``; an answer is refused (and a stored line
            skipped) when either system of its pair is not presented for that clip.
    """

    def __init__(self, path: "str | Path", allowed: "AllowedCheck | None" = None):
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")  # the ratings store's lock
        self.allowed = allowed

    def add(self, rater: str, task: str, clip_id: str, pair: Sequence[str], choices: Mapping[str, object],
            left: str, extra: "Mapping[str, object] | None" = None):
        """Validate and append one rater's answers to one pair (one line per criterion).

        Args:
            choices: criterion -> "A", "B" or "Tie" (what the rater saw: "A" is ``left``); every
                criterion of the task must be answered.
            left: the system shown as "A".
            extra: the study fields (:data:`~hug_vis_dataset.studies.ratings.EXTRA_COLUMNS`).

        Returns:
            A :class:`~hug_vis_dataset.studies.ratings.Submission`-like record: ``seq`` and the
            stored ``{criterion: outcome}`` (``scores``).

        Raises:
            RatingError: an invalid answer or one the study does not present (nothing written).
        """
        from filelock import FileLock

        from .ratings import Submission

        pair = tuple(pair)
        validate_preference(rater, task, clip_id, pair, left)
        wanted = CRITERIA[task]
        unknown = sorted(map(str, set(choices) - set(wanted)))
        if unknown:
            raise RatingError(f"criteria {unknown} are not rated for {task}; expected {list(wanted)}")
        missing = [c for c in wanted if choices.get(c) in (None, "")]
        if missing:
            raise RatingError(f"missing answers for {missing}: each needs one of {list(CHOICES)}")
        outcomes = {c: outcome_of(choices[c], pair, left) for c in wanted}
        extras = validate_extra(extra or {})
        clip = str(ClipId.parse(clip_id))
        for system in pair:
            problem = self.allowed(task, system, clip) if self.allowed is not None else None
            if problem:
                raise RatingError(problem)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.lock_path), timeout=30):
            seq = _last_seq(self.path) + 1
            now = time.time()
            lines = "".join(
                json.dumps({"kind": PREFERENCE_KIND, "rater": rater, "task": task, "clip_id": clip,
                            "system_a": pair[0], "system_b": pair[1], "criterion": c, "outcome": v, "left": left,
                            "seq": seq, "time": now, **extras}, ensure_ascii=False) + "\n"
                for c, v in outcomes.items())
            with open(self.path, "a+b") as handle:
                lead = b"\n" if _ends_without_newline(handle) else b""
                handle.write(lead + lines.encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
        return Submission(seq, outcomes)

    def read(self):
        """(every valid pairwise line as a DataFrame with :data:`FRAME_COLUMNS`, the skipped
        pairwise lines as ``"<path>:<line>: <what>; <fix>"``). MOS lines are not read here."""
        import pandas as pd

        records, problems = read_kind_lines(self.path, PREFERENCE_KIND, self._clean)
        return pd.DataFrame(records, columns=list(FRAME_COLUMNS)), problems

    def history(self):
        """Every valid pairwise line, replaced ones included."""
        return self.read()[0]

    def frame(self):
        """The answers in force: one per :data:`PREFERENCE_KEY`, the latest."""
        frame = self.history()
        if not len(frame):
            return frame
        ordered = frame.sort_values("seq", kind="stable")
        return ordered.drop_duplicates(subset=list(PREFERENCE_KEY), keep="last").sort_index().reset_index(drop=True)

    def problems(self) -> list[str]:
        return self.read()[1]

    def to_csv(self, path: "str | Path") -> int:
        """Write the answers in force as a pairwise CSV (:data:`FRAME_COLUMNS` but ``seq``/``time``):
        what :func:`hug_vis_dataset.studies.answers.read_preferences`, ``hugvis report --preferences``
        and ``metric_mos_agreement``'s ``preferences`` read."""
        frame = self.frame()
        columns = [c for c in FRAME_COLUMNS if c not in ("seq", "time")]
        frame[columns].to_csv(path, index=False)
        return len(frame)

    def _clean(self, record: dict) -> dict:
        pair = (record["system_a"], record["system_b"])
        validate_preference(record["rater"], record["task"], record["clip_id"], pair, record["left"])
        if record["criterion"] not in CRITERIA[record["task"]]:
            raise RatingError(f"criterion {record['criterion']!r} is not rated for {record['task']}")
        outcome = record["outcome"]
        if isinstance(outcome, bool) or outcome not in (WIN, TIE, LOSS):
            raise RatingError(f"outcome {outcome!r} must be 1, 0.5 or 0")
        seq = record["seq"]
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
            raise RatingError(f"seq {seq!r} must be a positive integer")
        clip = str(ClipId.parse(record["clip_id"]))
        for system in pair:
            problem = self.allowed(record["task"], system, clip) if self.allowed is not None else None
            if problem:
                raise RatingError(problem)
        extras = validate_extra({k: record[k] for k in EXTRA_COLUMNS if k in record})
        return {"rater": record["rater"], "task": record["task"], "clip_id": clip, "system_a": pair[0],
                "system_b": pair[1], "criterion": record["criterion"], "outcome": float(outcome),
                "left": record["left"], "seq": seq, "time": record.get("time"),
                **{k: extras.get(k) for k in EXTRA_COLUMNS}}


def _last_seq(path: Path) -> int:
    """The largest ``seq`` written on any line of the log (ratings, answers, damaged lines alike)."""
    if not path.is_file():
        return 0
    last = 0
    with open(path, "rb") as handle:
        for raw in handle:
            found = _SEQ_RE.search(raw)
            if found:
                last = max(last, int(found.group(1)))
    return last

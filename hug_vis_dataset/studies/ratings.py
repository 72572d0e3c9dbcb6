"""The MOS study's rating store: validated JSON lines, append-only, guarded by a file lock.

Raters score clips 1..5 on the paper's criteria (Tables 6, 8 and 10). Each submission is
validated, then appended as one JSON line per criterion under an exclusive lock, so concurrent
Gradio workers (or processes) never interleave lines and nothing stored is ever rewritten: the
file is the audit trail of every submission.

**One rating per (rater, task, clip, model, criterion); the latest submission wins.** Every
submission gets a sequence number ``seq``, one more than the largest in the file, assigned under
the lock, so it increases strictly with the order of writes whatever the clocks say (``time``
is kept for the audit only). A rater who resubmits the same clip and system *replaces* the
earlier scores: :func:`latest_ratings` keeps, per key, the line with the largest ``seq``, and
:meth:`RatingStore.add` reports which earlier scores it replaced. The task is part of the key
because one system name can be rated under several tasks. The history stays on disk
(:meth:`RatingStore.history`); aggregation (:mod:`hug_vis_dataset.studies.mos`) reads
:meth:`RatingStore.frame`, the resolved ratings.

This differs on purpose from a ratings CSV given to ``hugvis mos`` / ``hugvis report --mos``
(they read CSVs only, never this store): a CSV has no order a rater chose, so there a duplicate
(rater, clip, model, criterion) is excluded, every copy, and listed as invalid.
:meth:`RatingStore.to_csv` writes the ratings in force as such a CSV, so ``hugvis mos`` on it
gives the Space's MOS.

**A rating is stored only for what the study presents.** A store built with ``allowed`` (the
study's :meth:`~hug_vis_dataset.studies.study_desk.MosStudy.offer_problem`) refuses a submission
for a (task, system, clip) that the check rejects, before anything is written, and leaves such
lines out when reading, so a forged request can never become a row of the MOS tables.

**A bad line is skipped, counted and named; nothing else stops working.** A line that is not
UTF-8, not JSON, not an object, misses a field or fails the rules (a truncated last line after a
crash, a hand edit) is left out of :meth:`RatingStore.history` and :meth:`RatingStore.frame`
and listed by :meth:`RatingStore.problems` as ``"<path>:<line>: <what is wrong>; <fix>"``. The
sequence numbers stay unique: a new submission's ``seq`` is larger than any written on any line,
bad ones included, and an append after a line cut short starts on a fresh line.

Example:
    >>> import tempfile, os
    >>> store = RatingStore(os.path.join(tempfile.mkdtemp(), "ratings.jsonl"))
    >>> clip = "actor_0001_happy_action_01_script_001"
    >>> store.add("rater_01", "audio_driven", clip, "sonic",
    ...           {"id_similarity": 4, "emotion_naturalness": 5, "lip_sync": 3}).seq
    1
    >>> store.add("rater_01", "audio_driven", clip, "sonic",
    ...           {"id_similarity": 2, "emotion_naturalness": 5, "lip_sync": 3}).replaced
    {'id_similarity': 4, 'emotion_naturalness': 5, 'lip_sync': 3}
    >>> store.frame()[["criterion", "score", "seq"]].values.tolist()
    [['id_similarity', 2, 2], ['emotion_naturalness', 5, 2], ['lip_sync', 3, 2]]
    >>> len(store.history())
    6
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import reprlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Mapping, NamedTuple

from ..catalog import MOS_SCALE
from ..datamodel.grid import ClipId, ClipIdError
from ..readers import InputFileError
from ..readers.json_files import loads_strict
from ..datamodel.results import name_problem
from ..presentation.skipped_lines import SHOWN_LINES
from .mos import CRITERIA as MOS_CRITERIA
from .mos import TASK_CRITERIA

# The paper's criteria per task and their labels come from the MOS module, so what the form
# stores is exactly what hug_vis_dataset.studies.mos aggregates.
CRITERIA: dict[str, tuple[str, ...]] = TASK_CRITERIA
CRITERION_LABELS: dict[str, str] = MOS_CRITERIA
#: Criterion slots a rating form holds (the task with the most criteria fills them all).
MAX_CRITERIA = max(len(c) for c in CRITERIA.values())
#: Where a results store keeps the study's ratings log (the Space's default; a Hub store pushes it there).
RATINGS_FILE = "ratings/ratings.jsonl"
RATING_COLUMNS: tuple[str, ...] = ("rater", "task", "clip_id", "model", "criterion", "score", "seq", "time")
#: Optional fields a study's submission adds (None when absent): the study's name, the opaque item
#: code the rater answered, seconds from showing the item to the answer, and the media's duration
#: (quality control, :mod:`hug_vis_dataset.studies.rater_qc`).
EXTRA_COLUMNS: tuple[str, ...] = ("study", "item", "elapsed", "duration")
FRAME_COLUMNS: tuple[str, ...] = RATING_COLUMNS + EXTRA_COLUMNS
#: One rating per key: a later submission (larger ``seq``) replaces an earlier one.
RATING_KEY: tuple[str, ...] = ("rater", "task", "clip_id", "model", "criterion")
SCORE_RANGE = MOS_SCALE
#: What to do about a skipped line, the end of every :meth:`RatingStore.problems` entry.
LINE_FIX = "skipped: correct or delete this line (the ratings in force and the MOS leave it out)"
#: The ``kind`` of a pairwise-preference line in the same log (:mod:`hug_vis_dataset.studies.preferences`):
#: not a rating, never a problem; its ``seq`` still counts, so both kinds share one sequence.
PREFERENCE_KIND = "preference"
#: The ``kind`` of a forced-choice emotion answer in the same log (:mod:`hug_vis_dataset.studies.emotion_answers`):
#: read by its own store, never a rating nor a problem here; its ``seq`` counts like a preference's.
EMOTION_KIND = "emotion"
#: Lines of other stores in the ratings log, by ``kind``.
OTHER_KINDS: tuple[str, ...] = (PREFERENCE_KIND, EMOTION_KIND)
#: ``allowed(task, model, clip_id)``: why the study does not present that item, or None when it does.
AllowedCheck = Callable[[str, str, str], "str | None"]

# A seq written on a line that no longer parses (cut short by a crash): still counted, so the
# next submission never reuses the number of one that was half written.
_SEQ_RE = re.compile(rb'"seq"\s*:\s*(\d{1,18})')
# A stored value shown in a message: short and on one line whatever was sent.
_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 40


class RatingError(ValueError):
    """A rating failed validation; nothing was stored."""


def validate_rating(rater: str, task: str, clip_id: str, model: str, scores: Mapping[str, object]) -> dict[str, int]:
    """Check one rater's scores of one clip; returns ``{criterion: int score}`` in the paper's order.

    Every criterion of the task must be scored, with an integer 1..5 as given: ``4.0`` (what a
    slider sends) is 4; ``4.5``, ``4.6``, ``True``, NaN, ``None`` and strings are refused, never
    rounded or truncated. Every refusal is one line naming the field and the value.

    Example:
        >>> validate_rating("r1", "voice_cloning", "actor_0002_sad_action_03_script_004", "m",
        ...                 {"emotion_naturalness": 2.0, "id_similarity": 5})
        {'id_similarity': 5, 'emotion_naturalness': 2}
        >>> validate_rating("r1", "voice_cloning", "actor_0002_sad_action_03_script_004", "m",
        ...                 {"emotion_naturalness": 4.6, "id_similarity": 5})
        Traceback (most recent call last):
        ...
        hug_vis_dataset.studies.ratings.RatingError: emotion_naturalness score 4.6 must be an integer in 1..5
        >>> validate_rating("r1", "voice_cloning", "actor_0002_sad_action_03_script_004", "m", {"id_similarity": 4})
        Traceback (most recent call last):
        ...
        hug_vis_dataset.studies.ratings.RatingError: missing scores for ['emotion_naturalness']: each needs an integer in 1..5
    """
    for label, value in (("rater", rater), ("model", model)):
        problem = name_problem(label, value)
        if problem:
            raise RatingError(problem)
    # isinstance first: a forged request may send a list, which no dict lookup accepts.
    if not isinstance(task, str) or task not in CRITERIA:
        raise RatingError(f"task {_SHORT.repr(task)} has no MOS study; choose one of {sorted(CRITERIA)}")
    try:
        ClipId.parse(clip_id)
    except ClipIdError as err:
        raise RatingError(str(err)) from None
    wanted = CRITERIA[task]
    unknown = sorted(map(str, set(scores) - set(wanted)))
    if unknown:
        raise RatingError(f"criteria {unknown} are not rated for {task}; expected {list(wanted)}")
    scale = f"{SCORE_RANGE[0]}..{SCORE_RANGE[1]}"
    missing = [c for c in wanted if scores.get(c) is None]
    if missing:
        raise RatingError(f"missing scores for {missing}: each needs an integer in {scale}")
    out = {}
    for criterion in wanted:
        value = scores[criterion]
        # numbers.Real admits numpy scalars; bool is a Real too but never a score.
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
                or value != int(value) or not SCORE_RANGE[0] <= value <= SCORE_RANGE[1]:
            raise RatingError(f"{criterion} score {_SHORT.repr(value)} must be an integer in {scale}")
        out[criterion] = int(value)
    return out


@dataclass(frozen=True)
class Submission:
    """What :meth:`RatingStore.add` stored.

    Attributes:
        seq: the submission's sequence number (1 for the first in the file).
        scores: the stored ``{criterion: score}``.
        replaced: the same rater's earlier ``{criterion: score}`` of the same (task, clip, model)
            that this submission replaces; empty for a first rating.
        skipped: lines of the log skipped when it was read for this submission (see
            :meth:`RatingStore.problems`); 0 for a clean log.
        skipped_lines: the first :data:`~hug_vis_dataset.presentation.skipped_lines.SHOWN_LINES` of them, each
            ``"<path>:<line>: <what>; <fix>"`` (plain text), so the message of this submission can
            name them where the rater reads it.
    """

    seq: int
    scores: dict[str, int]
    replaced: dict[str, int] = field(default_factory=dict)
    skipped: int = 0
    skipped_lines: tuple[str, ...] = ()


class RatingStore:
    """Append-only JSON-lines file of ratings; the latest submission per key wins on reading.

    Args:
        path: the JSON-lines file (created on the first rating).
        allowed: ``allowed(task, model, clip_id) -> problem or None``, the items raters may score
            (the clip id canonical); a submission it rejects is refused and a stored line it
            rejects is skipped and listed by :meth:`problems`. None: any valid rating.
    """

    def __init__(self, path: "str | Path", allowed: "AllowedCheck | None" = None):
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.allowed = allowed

    def add(self, rater: str, task: str, clip_id: str, model: str, scores: Mapping[str, object],
            extra: "Mapping[str, object] | None" = None) -> Submission:
        """Validate and append one rater's scores of one clip (one line per criterion).

        ``extra`` holds the optional :data:`EXTRA_COLUMNS` of a study's submission, written on
        every line of it (validated like the rest: names by the name rule, times finite and >= 0).

        Raises:
            RatingError: the submission is invalid or not an item the study presents (nothing is
                written).
        """
        from filelock import FileLock

        clean = validate_rating(rater, task, clip_id, model, scores)
        extras = validate_extra(extra or {})
        clip = str(ClipId.parse(clip_id))
        problem = self.allowed(task, model, clip) if self.allowed is not None else None
        if problem:
            raise RatingError(problem)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.lock_path), timeout=30):
            # The sequence number and the replaced scores are read under the same lock as the
            # write, so two processes can never hand out the same number.
            last_seq, earlier, skipped, named = _scan(self.path, (rater, task, clip, model), self.allowed)
            seq = last_seq + 1
            now = time.time()
            lines = "".join(
                json.dumps({"rater": rater, "task": task, "clip_id": clip, "model": model, "criterion": c,
                            "score": v, "seq": seq, "time": now, **extras}, ensure_ascii=False) + "\n"
                for c, v in clean.items()
            )
            with open(self.path, "a+b") as handle:
                # A last line cut short (a crash mid-write) has no newline: without one first, this
                # submission's first line would be glued to it and lost with it.
                lead = b"\n" if _ends_without_newline(handle) else b""
                # One write call of whole lines in append mode: a reader never sees half a submission.
                handle.write(lead + lines.encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
        return Submission(seq, clean, {c: earlier[c] for c in clean if c in earlier}, skipped, tuple(named))

    def history(self):
        """Every valid stored line, replaced ones included (see :func:`load_ratings`)."""
        return read_log(self.path, self.allowed)[0]

    def frame(self):
        """The ratings in force: one per (rater, task, clip, model, criterion), the latest."""
        return latest_ratings(self.history())

    def problems(self) -> list[str]:
        """The skipped lines of the log, in file order, each ``"<path>:<line>: <what>; <fix>"``
        (plain text; empty when every line is valid)."""
        return read_log(self.path, self.allowed)[1]

    def to_csv(self, path: "str | Path", task: "str | None" = None) -> int:
        """Write the ratings in force as a ``hugvis mos`` ratings CSV; returns the number of rows.

        The CSV has no task column, so ``task`` picks one task's ratings (None: all; then a
        system name rated under two tasks gives duplicates, which ``hugvis mos`` excludes).
        """
        from .mos import RATING_COLUMNS as CSV_COLUMNS

        frame = self.frame()
        if task is not None:
            frame = frame[frame["task"] == task]
        # The study fields go along (hugvis mos reads them for quality control) when any is set.
        extras = [c for c in EXTRA_COLUMNS if c in frame.columns and frame[c].notna().any()]
        frame[list(CSV_COLUMNS) + extras].to_csv(path, index=False)
        return len(frame)


def validate_extra(extra: Mapping[str, object]) -> dict[str, object]:
    """The optional study fields of a submission, checked; unknown keys are refused.

    Example:
        >>> validate_extra({"item": "i0a1b2c3d4e", "elapsed": 4.0})
        {'item': 'i0a1b2c3d4e', 'elapsed': 4.0}
        >>> validate_extra({"elapsed": -1})
        Traceback (most recent call last):
        ...
        hug_vis_dataset.studies.ratings.RatingError: elapsed -1 must be a finite number of seconds >= 0
    """
    unknown = sorted(map(str, set(extra) - set(EXTRA_COLUMNS)))
    if unknown:
        raise RatingError(f"unknown field(s) {unknown}; a submission may add {list(EXTRA_COLUMNS)}")
    out: dict[str, object] = {}
    for key in EXTRA_COLUMNS:
        value = extra.get(key)
        if value is None:
            continue
        if key in ("study", "item"):
            problem = name_problem(key, value)
            if problem:
                raise RatingError(problem)
        elif isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or value < 0:
            raise RatingError(f"{key} {_SHORT.repr(value)} must be a finite number of seconds >= 0")
        else:
            value = float(value)
        out[key] = value
    return out


def _ends_without_newline(handle) -> bool:
    """Whether the file open in ``handle`` (binary, readable) is non-empty and lacks a final newline."""
    end = handle.seek(0, os.SEEK_END)
    if not end:
        return False
    handle.seek(end - 1)
    return handle.read(1) != b"\n"


class _Line(NamedTuple):
    """One non-blank line of the log: the clean record, or why it is skipped."""

    number: int
    record: "dict | None"  # None: skipped (``problem`` says why) or another kind's line (``problem`` None)
    problem: "str | None"
    seq: int  # the seq written on the line, valid or not (0 when none can be read)


def _lines(path: Path, allowed: "AllowedCheck | None") -> Iterator[_Line]:
    """Every non-blank line of the log, checked; streaming, never raises for a bad line."""
    if not path.is_file():
        return
    verdicts: dict[tuple, "str | None"] = {}  # allowed() once per item per read, not once per line
    # Binary: a line that is not UTF-8 is one bad line, not an error that ends the read.
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            record, problem = _parse_line(raw)
            if problem in OTHER_KINDS:
                written = _SEQ_RE.search(raw)
                yield _Line(number, None, None, int(written.group(1)) if written else 0)
                continue
            if record is not None and allowed is not None:
                item = (record["task"], record["model"], record["clip_id"])
                if item not in verdicts:
                    verdicts[item] = allowed(*item)
                problem = verdicts[item]
            if problem:
                written = _SEQ_RE.search(raw)
                yield _Line(number, None, f"{path}:{number}: {problem}; {LINE_FIX}",
                            int(written.group(1)) if written else 0)
            else:
                yield _Line(number, record, None, record["seq"])


def _parse_line(raw: bytes) -> "tuple[dict | None, str | None]":
    """(the clean record, None) for a valid line, else (None, what is wrong)."""
    try:  # strict JSON: a duplicated key ("score" twice) is a skipped line, not "the last one wins"
        record = loads_strict(raw.decode("utf-8"), "ratings log")
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    except InputFileError as err:
        if not raw.endswith(b"\n"):
            return None, "incomplete last line (no newline at its end: a write cut short, e.g. by a crash)"
        return None, err.problem.removeprefix("is ")
    if not isinstance(record, dict):
        return None, f"not a JSON object (a {type(record).__name__})"
    if record.get("kind") in OTHER_KINDS:
        return None, record["kind"]  # a pairwise or emotion answer: read by its own store, not here
    missing = [c for c in RATING_COLUMNS if c != "time" and c not in record]
    if missing:
        return None, f"missing field(s) {missing}"
    try:
        return _clean_line(record), None
    except RatingError as err:
        return None, str(err)


def _clean_line(record: dict) -> dict:
    """One stored line, checked with the same rules as a submission, as a :data:`RATING_COLUMNS` dict."""
    task, criterion = record["task"], record["criterion"]
    if not isinstance(task, str) or task not in CRITERIA:
        raise RatingError(f"unknown task {_SHORT.repr(task)}")
    if not isinstance(criterion, str) or criterion not in CRITERIA[task]:
        raise RatingError(f"criterion {_SHORT.repr(criterion)} is not rated for {task}")
    # Fill the other criteria with a valid placeholder so validate_rating checks this one score.
    scores = {c: 1 for c in CRITERIA[task]} | {criterion: record["score"]}
    score = validate_rating(record["rater"], task, record["clip_id"], record["model"], scores)[criterion]
    seq = record["seq"]
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        raise RatingError(f"seq {_SHORT.repr(seq)} must be a positive integer")
    stamp = record.get("time")
    if stamp is not None and (isinstance(stamp, bool) or not isinstance(stamp, (int, float))):
        raise RatingError(f"time {_SHORT.repr(stamp)} must be seconds since the epoch (a number) or null")
    # Canonical clip id and an int score, as add() writes them, so a hand-written line with another
    # emotion spelling or 4.0 is the same rating key and the same number.
    extras = validate_extra({k: record[k] for k in EXTRA_COLUMNS if k in record})
    return {"rater": record["rater"], "task": task, "clip_id": str(ClipId.parse(record["clip_id"])),
            "model": record["model"], "criterion": criterion, "score": score, "seq": seq,
            "time": record.get("time"), **{k: extras.get(k) for k in EXTRA_COLUMNS}}


def _scan(path: Path, item: tuple[str, str, str, str],
          allowed: "AllowedCheck | None") -> tuple[int, dict[str, int], int, list[str]]:
    """(largest ``seq`` written on any line, the latest ``{criterion: score}`` of ``item``, the
    number of skipped lines, the first :data:`SHOWN_LINES` of them), streaming."""
    last_seq, earlier, seqs, skipped, named = 0, {}, {}, 0, []
    for line in _lines(path, allowed):
        last_seq = max(last_seq, line.seq)
        if line.record is None:
            if line.problem is not None:
                skipped += 1
                if len(named) < SHOWN_LINES:  # bounded: a log of a million bad lines names ten
                    named.append(line.problem)
            continue
        record, seq = line.record, line.seq
        if (record["rater"], record["task"], record["clip_id"], record["model"]) == item \
                and seq >= seqs.get(record["criterion"], 0):
            seqs[record["criterion"]], earlier[record["criterion"]] = seq, record["score"]
    return last_seq, earlier, skipped, named


def latest_ratings(frame):
    """One rating per :data:`RATING_KEY`: the one with the largest ``seq`` (ties: the later line).

    Example:
        >>> import pandas as pd
        >>> f = pd.DataFrame({"rater": "a", "task": "voice_cloning", "clip_id": "c", "model": "m",
        ...                   "criterion": "id_similarity", "score": [2, 5, 4], "seq": [1, 3, 2]})
        >>> latest_ratings(f)[["score", "seq"]].values.tolist()
        [[5, 3]]
    """
    if not len(frame):
        return frame
    ordered = frame.sort_values("seq", kind="stable")
    latest = ordered.drop_duplicates(subset=list(RATING_KEY), keep="last")
    return latest.sort_index().reset_index(drop=True)


def read_log(path: "str | Path", allowed: "AllowedCheck | None" = None):
    """(every valid stored line as a DataFrame with :data:`FRAME_COLUMNS`, the skipped lines).

    A line is re-validated on read with the submission rules (and ``allowed``, when given); a bad
    one is left out and described, ``"<path>:<line>: <what is wrong>; <fix>"``, never raised, so
    one corrupt line cannot take the rating form or the MOS tables down.

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "ratings.jsonl")
        >>> _ = RatingStore(path).add("r1", "voice_cloning", "actor_0001_sad_action_01_script_001", "m",
        ...                           {"id_similarity": 4, "emotion_naturalness": 2})
        >>> with open(path, "a") as handle:
        ...     _ = handle.write('{"rater": "r2", "sc')  # a crash mid-write
        >>> frame, problems = read_log(path)
        >>> len(frame), len(problems), problems[0].split("; ")[0].split(": ", 1)[1]
        (2, 1, 'incomplete last line (no newline at its end: a write cut short, e.g. by a crash)')
    """
    import pandas as pd

    records, problems = [], []
    for line in _lines(Path(path), allowed):
        if line.problem is not None:
            problems.append(line.problem)
        elif line.record is not None:
            records.append(line.record)
    return pd.DataFrame(records, columns=list(FRAME_COLUMNS)), problems


def load_ratings(path: "str | Path"):
    """Every valid stored line as a DataFrame with :data:`RATING_COLUMNS` (:func:`read_log`'s
    frame; its list, or :meth:`RatingStore.problems`, names the lines left out)."""
    return read_log(path)[0]


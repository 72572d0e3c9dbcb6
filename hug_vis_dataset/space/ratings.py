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
(:meth:`RatingStore.history`); aggregation (:mod:`hug_vis_dataset.mos`) reads
:meth:`RatingStore.frame`, the resolved ratings.

This differs on purpose from a ratings CSV given to ``hugvis mos`` / ``hugvis report --mos``
(they read CSVs only, never this store): a CSV has no order a rater chose, so there a duplicate
(rater, clip, model, criterion) is excluded, every copy, and listed as invalid.
:meth:`RatingStore.to_csv` writes the ratings in force as such a CSV, so ``hugvis mos`` on it
gives the Space's MOS.

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
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Mapping

from ..catalog import MOS_SCALE
from ..grid import ClipId, ClipIdError
from ..mos import CRITERIA as MOS_CRITERIA
from ..mos import TASK_CRITERIA
from ..results import name_problem

# The paper's criteria per task and their labels come from the MOS module, so what the form
# stores is exactly what hug_vis_dataset.mos aggregates.
CRITERIA: dict[str, tuple[str, ...]] = TASK_CRITERIA
CRITERION_LABELS: dict[str, str] = MOS_CRITERIA
RATING_COLUMNS: tuple[str, ...] = ("rater", "task", "clip_id", "model", "criterion", "score", "seq", "time")
#: One rating per key: a later submission (larger ``seq``) replaces an earlier one.
RATING_KEY: tuple[str, ...] = ("rater", "task", "clip_id", "model", "criterion")
SCORE_RANGE = MOS_SCALE


class RatingError(ValueError):
    """A rating failed validation; nothing was stored."""


def validate_rating(rater: str, task: str, clip_id: str, model: str, scores: Mapping[str, object]) -> dict[str, int]:
    """Check one rater's scores of one clip; returns ``{criterion: int score}`` in the paper's order.

    Every criterion of the task must be scored, with an integer 1..5 (``4.0`` is accepted as 4;
    ``4.5``, ``True``, NaN and strings are not).

    Example:
        >>> validate_rating("r1", "voice_cloning", "actor_0002_sad_action_03_script_004", "m",
        ...                 {"emotion_naturalness": 2.0, "id_similarity": 5})
        {'id_similarity': 5, 'emotion_naturalness': 2}
        >>> validate_rating("r1", "voice_cloning", "actor_0002_sad_action_03_script_004", "m", {"id_similarity": 4})
        Traceback (most recent call last):
        ...
        hug_vis_dataset.space.ratings.RatingError: missing scores for ['emotion_naturalness']
    """
    for label, value in (("rater", rater), ("model", model)):
        problem = name_problem(label, value)
        if problem:
            raise RatingError(problem)
    if task not in CRITERIA:
        raise RatingError(f"task {task!r} has no MOS study; choose one of {sorted(CRITERIA)}")
    try:
        ClipId.parse(clip_id)
    except ClipIdError as err:
        raise RatingError(str(err)) from None
    wanted = CRITERIA[task]
    unknown = sorted(set(scores) - set(wanted))
    if unknown:
        raise RatingError(f"criteria {unknown} are not rated for {task}; expected {list(wanted)}")
    missing = [c for c in wanted if scores.get(c) is None]
    if missing:
        raise RatingError(f"missing scores for {missing}")
    out = {}
    for criterion in wanted:
        value = scores[criterion]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or value != int(value) or not SCORE_RANGE[0] <= value <= SCORE_RANGE[1]:
            raise RatingError(f"{criterion} score {value!r} must be an integer in {SCORE_RANGE[0]}..{SCORE_RANGE[1]}")
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
    """

    seq: int
    scores: dict[str, int]
    replaced: dict[str, int] = field(default_factory=dict)


class RatingStore:
    """Append-only JSON-lines file of ratings; the latest submission per key wins on reading."""

    def __init__(self, path: "str | Path"):
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")

    def add(self, rater: str, task: str, clip_id: str, model: str, scores: Mapping[str, object]) -> Submission:
        """Validate and append one rater's scores of one clip (one line per criterion).

        Raises:
            RatingError: the submission is invalid (nothing is written), or a stored line is
                not JSON (named by its line number).
        """
        from filelock import FileLock

        clean = validate_rating(rater, task, clip_id, model, scores)
        clip = str(ClipId.parse(clip_id))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.lock_path), timeout=30):
            # The sequence number and the replaced scores are read under the same lock as the
            # write, so two processes can never hand out the same number.
            last_seq, earlier = _scan(self.path, (rater, task, clip, model))
            seq = last_seq + 1
            now = time.time()
            lines = "".join(
                json.dumps({"rater": rater, "task": task, "clip_id": clip, "model": model, "criterion": c,
                            "score": v, "seq": seq, "time": now}, ensure_ascii=False) + "\n"
                for c, v in clean.items()
            )
            # One write call of whole lines in append mode: a reader never sees half a submission.
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(lines)
                handle.flush()
        return Submission(seq, clean, {c: earlier[c] for c in clean if c in earlier})

    def history(self):
        """Every stored line, replaced ones included (see :func:`load_ratings`)."""
        return load_ratings(self.path)

    def frame(self):
        """The ratings in force: one per (rater, task, clip, model, criterion), the latest."""
        return latest_ratings(load_ratings(self.path))

    def to_csv(self, path: "str | Path", task: "str | None" = None) -> int:
        """Write the ratings in force as a ``hugvis mos`` ratings CSV; returns the number of rows.

        The CSV has no task column, so ``task`` picks one task's ratings (None: all; then a
        system name rated under two tasks gives duplicates, which ``hugvis mos`` excludes).
        """
        from ..mos import RATING_COLUMNS as CSV_COLUMNS

        frame = self.frame()
        if task is not None:
            frame = frame[frame["task"] == task]
        frame[list(CSV_COLUMNS)].to_csv(path, index=False)
        return len(frame)


def _records(path: Path, check: "Callable[[dict], None]") -> Iterator[dict]:
    """The JSON lines of the store, each passed through ``check``; a bad line is a
    :class:`RatingError` naming the file and line (the file is append-only: never skipped)."""
    if not path.is_file():
        return
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                check(record)
            except (ValueError, KeyError, TypeError) as err:
                raise RatingError(f"{path}:{number}: bad rating line: {err}") from None
            yield record


def _has_key_fields(record: dict) -> None:
    int(record["seq"]), record["criterion"], record["rater"], record["task"], record["clip_id"], record["model"]


def _scan(path: Path, item: tuple[str, str, str, str]) -> tuple[int, dict[str, int]]:
    """(largest ``seq`` in the file, the latest ``{criterion: score}`` of ``item``), streaming."""
    last_seq, earlier, seqs = 0, {}, {}
    for record in _records(path, _has_key_fields):
        seq, criterion = int(record["seq"]), record["criterion"]
        last_seq = max(last_seq, seq)
        if (record["rater"], record["task"], record["clip_id"], record["model"]) == item \
                and seq >= seqs.get(criterion, 0):
            seqs[criterion], earlier[criterion] = seq, record["score"]
    return last_seq, earlier


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


def load_ratings(path: "str | Path"):
    """Every stored line as a DataFrame with :data:`RATING_COLUMNS`, re-validated on read.

    Raises:
        RatingError: naming the line number of a malformed or invalid line (the file is
            append-only, so a bad line means tampering or a bug, never something to skip).
    """
    import pandas as pd

    return pd.DataFrame(list(_records(Path(path), _validate_line)), columns=list(RATING_COLUMNS))


def _validate_line(record: dict) -> None:
    """One stored line: a single criterion's score, checked with the same rules as a submission."""
    task = record["task"]
    if task not in CRITERIA:
        raise RatingError(f"unknown task {task!r}")
    if record["criterion"] not in CRITERIA[task]:
        raise RatingError(f"criterion {record['criterion']!r} is not rated for {task}")
    # Fill the other criteria with a valid placeholder so validate_rating checks this one score.
    scores = {c: 1 for c in CRITERIA[task]} | {record["criterion"]: record["score"]}
    validate_rating(record["rater"], task, record["clip_id"], record["model"], scores)
    seq = record["seq"]
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        raise RatingError(f"seq {seq!r} must be a positive integer")

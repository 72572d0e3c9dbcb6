"""The MOS study's rating store: validated, append-only JSON lines guarded by a file lock.

Raters score clips 1..5 on the paper's criteria (Tables 6, 8 and 10). Each submitted rating is
validated, then appended as one JSON line under an exclusive lock, so concurrent Gradio
workers never interleave lines and nothing already stored is ever rewritten. Aggregation is
left to the MOS code (:mod:`hug_vis_dataset.mos`), which reads :func:`load_ratings`'s frame.

Example:
    >>> import tempfile, os
    >>> store = RatingStore(os.path.join(tempfile.mkdtemp(), "ratings.jsonl"))
    >>> store.add("rater_01", "audio_driven", "actor_0001_happy_action_01_script_001", "sonic",
    ...           {"id_similarity": 4, "emotion_naturalness": 5, "lip_sync": 3})
    3
    >>> store.frame()[["criterion", "score"]].values.tolist()
    [['id_similarity', 4], ['emotion_naturalness', 5], ['lip_sync', 3]]
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import Mapping

from ..grid import ClipId, ClipIdError
from ..mos import CRITERIA as MOS_CRITERIA
from ..mos import TASK_CRITERIA

# The paper's criteria per task and their labels come from the MOS module, so what the form
# stores is exactly what hug_vis_dataset.mos aggregates.
CRITERIA: dict[str, tuple[str, ...]] = TASK_CRITERIA
CRITERION_LABELS: dict[str, str] = MOS_CRITERIA
RATING_COLUMNS: tuple[str, ...] = ("rater", "task", "clip_id", "model", "criterion", "score", "time")
SCORE_RANGE = (1, 5)
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")


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
        if not isinstance(value, str) or not _NAME_RE.match(value):
            raise RatingError(f"{label} {value!r} must be 1-64 characters of letters, digits, '_', '.', '-'")
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


class RatingStore:
    """Append-only JSON-lines file of ratings, one line per (rater, clip, model, criterion)."""

    def __init__(self, path: "str | Path"):
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")

    def add(self, rater: str, task: str, clip_id: str, model: str, scores: Mapping[str, object]) -> int:
        """Validate and append one rater's scores of one clip; returns the number of lines written."""
        from filelock import FileLock

        clean = validate_rating(rater, task, clip_id, model, scores)
        now = time.time()
        lines = "".join(
            json.dumps({"rater": rater, "task": task, "clip_id": str(ClipId.parse(clip_id)), "model": model,
                        "criterion": c, "score": s, "time": now}, ensure_ascii=False) + "\n"
            for c, s in clean.items()
        )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.lock_path), timeout=30):
            # One write call of whole lines in append mode: a reader never sees half a rating.
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write(lines)
                handle.flush()
        return len(clean)

    def frame(self):
        """All stored ratings (see :func:`load_ratings`)."""
        return load_ratings(self.path)


def load_ratings(path: "str | Path"):
    """Ratings as a DataFrame with :data:`RATING_COLUMNS`; every line is re-validated on read.

    Raises:
        RatingError: naming the line number of a malformed or invalid line (the file is
            append-only, so a bad line means tampering or a bug, never something to skip).
    """
    import pandas as pd

    path = Path(path)
    records = []
    if path.is_file():
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    _validate_line(record)
                except (ValueError, KeyError, TypeError) as err:
                    raise RatingError(f"{path}:{number}: bad rating line: {err}") from None
                records.append(record)
    return pd.DataFrame(records, columns=list(RATING_COLUMNS))


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

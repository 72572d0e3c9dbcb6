"""Answers of the forced-choice emotion study in the results store's ratings log, and their CSV export.

People answer, for one clip shown in one input setting (Table 4's: the video without sound, the audio, the
transcript, or a combination), which of the seven emotions the person expresses, or "Cannot tell"
(:data:`ANSWER_CHOICES`). An answer is stored in the same file as the MOS ratings and the pairwise answers
(``ratings/ratings.jsonl``), with their conventions: append-only, one JSON line per answer written under the log's
file lock with the file's next ``seq``, **the latest answer per (rater, clip, setting) wins** on reading, and the
line marked ``"kind": "emotion"`` so the MOS and pairwise readers pass it by (neither a rating nor a problem)::

    {"kind": "emotion", "rater": "r1", "task": "emotion", "clip_id": "...", "setting": "Video",
     "answer": "Sad", "seq": 12, "time": ..., "study": "...", "item": "i...", "elapsed": 4.1, "duration": 1.5}

A gold item's answer has the setting :data:`~hug_vis_dataset.studies.rater_qc.GOLD_CLEAR` (the clip shown with all
its evidence). :meth:`EmotionAnswerStore.to_csv` exports the answers in force as the CSV ``hugvis report --people``
and the ``people_vs_models`` module read (:func:`read_emotion_answers`)::

    rater,clip_id,setting,answer,study,item,elapsed,duration

Example:
    >>> import tempfile, os
    >>> store = EmotionAnswerStore(os.path.join(tempfile.mkdtemp(), "ratings.jsonl"))
    >>> clip = "actor_0001_happy_action_01_script_001"
    >>> store.add("r1", clip, "video", "sad").seq, store.add("r1", clip, "Video", "Cannot tell").seq
    (1, 2)
    >>> store.frame()[["setting", "answer", "seq"]].values.tolist()   # the latest answer wins
    [['Video', 'Cannot tell', 2]]
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable, Mapping

from ..errors import HugvisError
from ..datamodel.grid import EMOTION_NAMES, ClipId, ClipIdError
from ..readers import InputFileError
from ..datamodel.results import name_problem
from .preferences import _last_seq, read_kind_lines
from .rater_qc import GOLD_CLEAR
from .ratings import EMOTION_KIND, EXTRA_COLUMNS, RatingError, _ends_without_newline, validate_extra

EMOTION_TASK = "emotion"
#: The answer that names no emotion: counted wrong (as a model's unparsed answer is), and counted apart.
CANNOT_TELL = "Cannot tell"
#: What a rater may answer, in the order the form lists them: Table 1's seven emotions, then "Cannot tell".
ANSWER_CHOICES: tuple[str, ...] = tuple(EMOTION_NAMES) + (CANNOT_TELL,)
ANSWER_FIELDS: tuple[str, ...] = ("rater", "task", "clip_id", "setting", "answer", "seq", "time")
FRAME_COLUMNS: tuple[str, ...] = ANSWER_FIELDS + EXTRA_COLUMNS
#: One answer per key: a later one (larger ``seq``) replaces an earlier one.
ANSWER_KEY: tuple[str, ...] = ("rater", "clip_id", "setting")
#: The exported CSV: required columns, then the optional study fields.
CSV_COLUMNS: tuple[str, ...] = ("rater", "clip_id", "setting", "answer")
#: ``allowed(task, setting, clip_id)``: why the study does not present that item, or None when it does.
AllowedCheck = Callable[[str, str, str], "str | None"]


class EmotionAnswersFileError(HugvisError, ValueError):
    """An exported emotion-answers CSV that cannot be read (missing, a column or value wrong): one line."""


def answer_of(value: object) -> str:
    """A rater's answer as stored: one of :data:`ANSWER_CHOICES` (any case and spacing).

    Raises:
        RatingError: anything else (the message lists the choices).

    Example:
        >>> answer_of(" sad "), answer_of("cannot TELL")
        ('Sad', 'Cannot tell')
    """
    text = " ".join(value.split()).casefold() if isinstance(value, str) else None
    for choice in ANSWER_CHOICES:
        if text == choice.casefold():
            return choice
    raise RatingError(f"answer {value!r} must be one of {list(ANSWER_CHOICES)}")


def setting_of(value: object) -> str:
    """An item's input setting as stored: one of Table 4's (any spelling), or the gold item's ``gold_clear``.

    Raises:
        RatingError: anything else.

    Example:
        >>> setting_of("video+text"), setting_of("gold_clear")
        ('Video + Text', 'gold_clear')
    """
    from ..metrics.emotion import INPUT_SETTING_ORDER, normalize_input_setting

    if value == GOLD_CLEAR:
        return GOLD_CLEAR
    name = normalize_input_setting(value) if isinstance(value, str) else None
    if name not in INPUT_SETTING_ORDER:
        raise RatingError(f"setting {value!r} must be one of {list(INPUT_SETTING_ORDER)} (or {GOLD_CLEAR!r})")
    return name


def validate_answer(rater: object, clip_id: object, setting: object, answer: object) -> tuple[str, str, str]:
    """``(canonical clip id, setting, answer)`` of one answer; one-line :class:`RatingError` otherwise."""
    problem = name_problem("rater", rater)
    if problem:
        raise RatingError(problem)
    try:
        clip = str(ClipId.parse(clip_id))
    except (ClipIdError, TypeError) as err:
        raise RatingError(str(err)) from None
    return clip, setting_of(setting), answer_of(answer)


class EmotionAnswerStore:
    """The emotion study's answers in a ratings log; appends under the log's lock, latest answer wins.

    Args:
        path: the ratings log (``ratings/ratings.jsonl``), shared with the MOS ratings and pairwise answers.
        allowed: ``allowed("emotion", setting, clip_id)``; an answer it rejects is refused (and a stored line
            skipped and named).
    """

    def __init__(self, path: "str | Path", allowed: "AllowedCheck | None" = None):
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")  # the ratings store's lock
        self.allowed = allowed

    def add(self, rater: str, clip_id: str, setting: str, answer: str, extra: "Mapping[str, object] | None" = None):
        """Validate and append one answer; returns a :class:`~hug_vis_dataset.studies.ratings.Submission`
        (``seq``, ``scores`` = ``{"emotion": answer}``).

        Raises:
            RatingError: an invalid answer or one the study does not present (nothing written).
        """
        from filelock import FileLock

        from .ratings import Submission

        clip, setting, answer = validate_answer(rater, clip_id, setting, answer)
        extras = validate_extra(extra or {})
        problem = self.allowed(EMOTION_TASK, setting, clip) if self.allowed is not None else None
        if problem:
            raise RatingError(problem)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.lock_path), timeout=30):
            seq = _last_seq(self.path) + 1  # the file's one sequence, shared with ratings and preferences
            line = json.dumps({"kind": EMOTION_KIND, "rater": rater, "task": EMOTION_TASK, "clip_id": clip,
                               "setting": setting, "answer": answer, "seq": seq, "time": time.time(), **extras},
                              ensure_ascii=False) + "\n"
            with open(self.path, "a+b") as handle:
                lead = b"\n" if _ends_without_newline(handle) else b""  # a line cut short keeps its own line
                handle.write(lead + line.encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
        return Submission(seq, {"emotion": answer})

    def read(self):
        """(every valid emotion line as a DataFrame with :data:`FRAME_COLUMNS`, the skipped emotion lines as
        ``"<path>:<line>: <what>; <fix>"``). Other kinds of lines are not read here."""
        import pandas as pd

        records, problems = read_kind_lines(self.path, EMOTION_KIND, self._clean)
        return pd.DataFrame(records, columns=list(FRAME_COLUMNS)), problems

    def history(self):
        """Every valid emotion line, replaced ones included."""
        return self.read()[0]

    def frame(self):
        """The answers in force: one per :data:`ANSWER_KEY`, the latest."""
        return latest_answers(self.history())

    def problems(self) -> list[str]:
        return self.read()[1]

    def to_csv(self, path: "str | Path", study: "str | None" = None) -> int:
        """Write the answers in force (of ``study`` when given) as the CSV :func:`read_emotion_answers` reads."""
        frame = self.frame()
        if study is not None and len(frame):
            frame = frame[frame["study"] == study]
        frame[list(CSV_COLUMNS) + list(EXTRA_COLUMNS)].to_csv(path, index=False)
        return len(frame)

    def _clean(self, record: dict) -> dict:
        if record.get("task", EMOTION_TASK) != EMOTION_TASK:
            raise RatingError(f"task {record.get('task')!r} is not {EMOTION_TASK!r}")
        clip, setting, answer = validate_answer(record["rater"], record["clip_id"], record["setting"],
                                                record["answer"])
        seq = record["seq"]
        if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
            raise RatingError(f"seq {seq!r} must be a positive integer")
        problem = self.allowed(EMOTION_TASK, setting, clip) if self.allowed is not None else None
        if problem:
            raise RatingError(problem)
        extras = validate_extra({k: record[k] for k in EXTRA_COLUMNS if k in record})
        return {"rater": record["rater"], "task": EMOTION_TASK, "clip_id": clip, "setting": setting, "answer": answer,
                "seq": seq, "time": record.get("time"), **{k: extras.get(k) for k in EXTRA_COLUMNS}}


def latest_answers(frame):
    """One answer per :data:`ANSWER_KEY`: the one with the largest ``seq`` (ties: the later line).

    Example:
        >>> import pandas as pd
        >>> f = pd.DataFrame({"rater": "a", "clip_id": "c", "setting": "Text", "answer": ["Sad", "Happy"], "seq": [2, 1]})
        >>> latest_answers(f)["answer"].tolist()
        ['Sad']
    """
    if not len(frame):
        return frame
    ordered = frame.sort_values("seq", kind="stable")
    return ordered.drop_duplicates(subset=list(ANSWER_KEY), keep="last").sort_index().reset_index(drop=True)


def read_emotion_answers(path: "str | Path"):
    """An exported emotion-answers CSV (:data:`CSV_COLUMNS`, then optional ``study, item, elapsed, duration``) as a
    frame: clip ids canonical, settings and answers as stored, times as numbers.

    Raises:
        EmotionAnswersFileError: a missing file or column, a bad clip id, setting or answer, or a repeated
            (rater, clip, setting); the message names the file and line.

    Example:
        >>> import tempfile, os
        >>> path = os.path.join(tempfile.mkdtemp(), "answers.csv")
        >>> _ = open(path, "w").write("rater,clip_id,setting,answer\\nr1,actor_0001_sad_action_01_script_001,text,sad\\n")
        >>> read_emotion_answers(path)[["setting", "answer"]].values.tolist()
        [['Text', 'Sad']]
    """
    import pandas as pd

    from ..readers.csv_files import read_csv_table

    path = Path(path)
    if not path.is_file():
        raise EmotionAnswersFileError(f"emotion answers {path} do not exist; export them with "
                                      "EmotionAnswerStore.to_csv or use simulated_systems/emotion_answers.csv")
    try:  # the one CSV reader: BOM/CRLF accepted; a ragged row, an open quote, a cut last line named
        table = read_csv_table(path, CSV_COLUMNS, optional=EXTRA_COLUMNS)
    except InputFileError as err:
        raise EmotionAnswersFileError(str(err)) from None
    records = []
    for number, row in table.records():
        try:
            clip, setting, answer = validate_answer(row["rater"], row["clip_id"], row["setting"], row["answer"])
        except RatingError as err:
            raise EmotionAnswersFileError(f"{path}:{number}: {err}; correct or delete this line") from None
        records.append({**row, "clip_id": clip, "setting": setting, "answer": answer, "line": number})
    frame = pd.DataFrame(records, columns=list(CSV_COLUMNS) + list(EXTRA_COLUMNS) + ["line"])
    repeated = frame.duplicated(subset=list(ANSWER_KEY), keep="first")
    if repeated.any():  # one answer per (rater, clip, setting): a repeated row would count twice
        row = frame[repeated].iloc[0]
        first = frame[(frame[list(ANSWER_KEY)] == row[list(ANSWER_KEY)]).all(axis=1)]["line"].iloc[0]
        raise EmotionAnswersFileError(f"{path}:{row['line']}: repeats the answer of line {first} (same rater, clip "
                                      "and setting); keep one line per answer")
    for column in ("elapsed", "duration"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce")
    for column in ("study", "item"):
        frame[column] = frame[column].where(frame[column].notna() & (frame[column].astype(str) != ""), None)
    return frame.drop(columns="line")


__all__ = ["ANSWER_CHOICES", "ANSWER_KEY", "CANNOT_TELL", "CSV_COLUMNS", "EMOTION_TASK", "EmotionAnswerStore",
           "EmotionAnswersFileError", "answer_of", "latest_answers", "read_emotion_answers", "setting_of",
           "validate_answer"]

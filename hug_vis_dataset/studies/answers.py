"""Exported pairwise answers: the CSV a study's preference answers are written to and read from.

The Space stores answers in the ratings log (:mod:`hug_vis_dataset.studies.preferences`); the report,
``hugvis report --preferences`` and the ``metric_mos_agreement`` module read the exported CSV
(``PreferenceStore.to_csv``, or the synthetic release's ``simulated_systems/pairwise_ratings.csv``)
through :func:`read_preferences`, one row per (rater, clip, pair, criterion):

    rater,task,clip_id,system_a,system_b,criterion,outcome,left,study,item,elapsed,duration

``outcome`` is 1 when ``system_a`` was judged better, 0 when ``system_b`` was, 0.5 for a tie; the
columns after ``outcome`` are optional.

Example:
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "pairwise.csv")
    >>> _ = open(path, "w").write("rater,task,clip_id,system_a,system_b,criterion,outcome\\n"
    ...                           "r1,voice_cloning,actor_0001_sad_action_01_script_001,a,b,id_similarity,1\\n")
    >>> read_preferences(path)[["system_a", "outcome"]].values.tolist()
    [['a', 1.0]]
"""

from __future__ import annotations

from pathlib import Path

from ..errors import HugvisError
from ..datamodel.grid import ClipId, ClipIdError
from ..readers import InputFileError
from ..readers.csv_files import read_csv_table
from .bradley_terry import LOSS, PREFERENCE_COLUMNS, TIE, WIN

#: Columns a pairwise CSV must have (the task names which study table a pair belongs to).
PAIRWISE_CSV_COLUMNS: tuple[str, ...] = ("rater", "task") + tuple(c for c in PREFERENCE_COLUMNS if c != "rater")


class PreferencesFileError(HugvisError, ValueError):
    """A pairwise CSV that cannot be read (missing, lacking columns, a bad outcome or clip): one line."""


def read_preferences(path: "str | Path"):
    """A pairwise CSV as a frame for :func:`hug_vis_dataset.studies.bradley_terry.strengths_table`.

    Raises:
        PreferencesFileError: a missing file or column, an outcome not in {0, 0.5, 1}, a system
            compared with itself or a bad clip id (the message names the line).
    """
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise PreferencesFileError(f"pairwise answers {path} do not exist")
    try:  # the one CSV reader: BOM/CRLF accepted; a ragged row, an open quote, a cut last line named
        table = read_csv_table(path, PAIRWISE_CSV_COLUMNS, extra="keep")
    except InputFileError as err:
        raise PreferencesFileError(str(err)) from None
    frame = table.frame()
    outcome = pd.to_numeric(frame["outcome"], errors="coerce")
    for index, (number, row) in enumerate(zip(table.lines, frame.itertuples(index=False))):
        value = outcome.iloc[index]
        if value not in (WIN, TIE, LOSS):
            raise PreferencesFileError(f"{path}:{number}: outcome {row.outcome!r} must be 1, 0.5 or 0")
        if row.system_a == row.system_b or not row.system_a:
            raise PreferencesFileError(f"{path}:{number}: a pair needs two different systems, got "
                                       f"{row.system_a!r} and {row.system_b!r}")
        try:
            ClipId.parse(row.clip_id)
        except ClipIdError as err:
            raise PreferencesFileError(f"{path}:{number}: {err}") from None
    key = ["rater", "task", "clip_id", "system_a", "system_b", "criterion"]
    repeated = frame.duplicated(subset=key, keep="first")
    if repeated.any():  # one answer per (rater, pair, criterion): a repeated row would count twice
        index = int(repeated.to_numpy().nonzero()[0][0])
        row = frame.iloc[index]
        first = next(table.lines[i] for i in range(index) if all(frame.iloc[i][c] == row[c] for c in key))
        raise PreferencesFileError(f"{path}:{table.lines[index]}: repeats the answer of line {first} (same rater, "
                                   f"clip, pair and criterion); keep one line per answer")
    frame["outcome"] = outcome.astype(float)
    for column in ("elapsed", "duration"):
        if column in frame.columns:
            frame[column] = pd.to_numeric(frame[column], errors="coerce")
    return frame

"""The per-clip result store: Parquet rows written as they are produced, resumable.

Layout of one evaluation (``RESULTS/<task>/<model>/``)::

    rows/part-<stamp>-<seq>.parquet   rows of a batch of finished clips (atomic: temp + rename)
    frames/part-<stamp>-<seq>.parquet per-frame values (matting, for the ``rvm`` protocol)
    rows.parquet                      the compacted table, sorted canonically
    frames.parquet                    the compacted per-frame table
    set_rows.parquet                  set-level metrics (FID): one row per metric, ``clip_id`` ""
    .set-features/<clip>.<metric>.npy the clip's features for a set metric (FID: its Inception features from
                                      the one-decode pass), with a ``.json`` side file (SetFeatures)
    summary.json, coverage.json       written by the runner (atomically, like every file here)
    run.json                          what the run is bound to (scoring.binding.RunBinding)

A run in progress lives in ``RESULTS/<task>/.work-<model>/`` (``ResultStore.work``) and is moved
into place by one rename when it is complete (:meth:`hug_vis_dataset.outputs.Output.replace_unit`),
so the published run is always a finished one.

A part file appears whole or not at all (written to a temporary name in the same folder and
renamed), so a run killed at any moment leaves only complete clips behind; rerunning reads the
clips already present and computes the rest. Rows are sorted in grid order, then metric name,
before the compacted table is written, so the table does not depend on worker count, batch size
or completion order.

Example:
    >>> from hug_vis_dataset.outputs import scratch_folder
    >>> from hug_vis_dataset.datamodel.results import result_rows
    >>> store = ResultStore(scratch_folder(), "matting", "m")
    >>> store.write_part(result_rows("m", "matting", "actor_0001_sad_action_01_script_001", {"mad": 0.5}))
    >>> sorted(store.done_clips())
    ['actor_0001_sad_action_01_script_001']
    >>> store.compact()["value"].tolist()
    [0.5]
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from ..errors import ToolUsageError
from ..outputs import discard, mark_cache
from ..readers import InputFileError, ParquetSchema, read_json, read_parquet_frame
from ..datamodel.results import RESULT_COLUMNS, SAMPLE_COLUMN, STATUS_FAILED, STATUS_OK, name_problem
from .binding import INPUT_COLUMN

#: Columns of stored rows: the result columns and the clip's input fingerprint.
STORED_COLUMNS: tuple[str, ...] = RESULT_COLUMNS + (INPUT_COLUMN,)

FRAME_COLUMNS: tuple[str, ...] = ("model", "task", "clip_id", "metric", "frame", "value")

#: Folder of a run's per-clip set-metric features (local to the machine, never published).
SET_FEATURES_DIR = ".set-features"
#: Run options a stored feature depends on (beyond float rounding): another value recomputes it.
FEATURE_OPTIONS = ("chunk_frames", "batch_size", "device")


class BadNameError(ToolUsageError):
    """A task or model name that cannot be one folder name."""


class StoredResultsError(InputFileError):
    """A stored Parquet file of an earlier run cannot be read (truncated, not Parquet, not rows)."""


#: What to do about a stored file that does not read (the run recomputes what it held).
STORED_FIX = "delete it to recompute those clips, or pass another --out"
_IDS = {"actor_id": "number", "action_id": "number", "script_id": "number"}  # Int64; NaN-filled in older files
#: The declared schema of stored result rows (``rows.parquet``, ``set_rows.parquet``, row parts): the
#: result columns (other columns are ignored, never read as a metric).
ROW_SCHEMA = ParquetSchema(
    "stored result rows",
    {**{c: "string" for c in RESULT_COLUMNS if c not in _IDS and c != "value"}, **_IDS, "value": "number"},
    {INPUT_COLUMN: "string", SAMPLE_COLUMN: "integer"}, True, STORED_FIX)
#: The declared schema of stored per-frame values (``frames.parquet``, frame parts).
FRAME_SCHEMA = ParquetSchema("stored per-frame values",
                             {"model": "string", "clip_id": "string", "metric": "string", "frame": "integer",
                              "value": "number"}, {"task": "string", SAMPLE_COLUMN: "integer"}, True, STORED_FIX)


def read_stored(path: Path, declared: ParquetSchema = ROW_SCHEMA):
    """One stored Parquet table, checked against ``declared`` (:data:`ROW_SCHEMA` or :data:`FRAME_SCHEMA`).

    Raises:
        StoredResultsError: truncated, not Parquet, or a result column missing or of another type
            (naming the file, the column and the fix), instead of pyarrow's error or a silent cast.
    """
    try:
        frame = read_parquet_frame(path, declared)
    except InputFileError as err:
        raise StoredResultsError(err.path, err.where, err.problem, err.fix) from None
    # The dtypes the writer gives (_rows_frame, _frames_frame), whatever pandas metadata the file
    # carries: a file whose metadata went stale would otherwise read its ids as int64, not Int64.
    for column, dtype in (_FRAME_DTYPES if declared is FRAME_SCHEMA else _ROW_DTYPES).items():
        if column in frame and str(frame[column].dtype) != dtype:
            try:
                frame[column] = frame[column].astype(dtype)
            except (TypeError, ValueError):
                raise StoredResultsError(path, f"column {column!r}", f"holds values that are not {dtype}",
                                         declared.fix) from None
    return frame


def read_stored_frame_codes(path: Path) -> dict:
    """``frames.parquet`` as arrays, its text columns (``model``, ``clip_id``, ``metric``) as ``(codes, names)``:
    a full-grid run's millions of per-frame rows read without a string per row (what
    :meth:`hug_vis_dataset.statistics.sums.FrameSums.from_codes` reduces).

    Raises:
        StoredResultsError: as :func:`read_stored`.
    """
    from ..readers import read_parquet_codes

    try:
        return read_parquet_codes(path, FRAME_SCHEMA, ("model", "clip_id", "metric"), ("frame", "value"),
                                  optional=(SAMPLE_COLUMN,))
    except InputFileError as err:
        raise StoredResultsError(err.path, err.where, err.problem, err.fix) from None


_ROW_DTYPES = {"actor_id": "Int64", "action_id": "Int64", "script_id": "Int64", "value": "float64"}
_FRAME_DTYPES = {"frame": "int64", "value": "float64"}


def check_name(kind: str, name: str) -> str:
    """Reject names that break :data:`hug_vis_dataset.datamodel.results.NAME_RULE` (one folder, no spaces).

    Example:
        >>> check_name("model", "rvm-1.0")
        'rvm-1.0'
    """
    problem = name_problem(kind, name)
    if problem:
        raise BadNameError(problem)
    return name


def _grid_key(clip_id: str) -> tuple:
    """Grid order of a clip id string; set-level rows (``""``) sort first, unparsable ids last.

    Two spellings of one grid clip ("fearful" and "afraid") are ordered by the string, so the order
    never depends on which part file was written first.
    """
    from ..datamodel.grid import ClipId, ClipIdError

    if not clip_id:
        return (0, ())
    try:
        return (1, ClipId.parse(clip_id).sort_key(), clip_id)
    except ClipIdError:
        return (2, (clip_id,))


def _ranks(column, key) -> "np.ndarray":
    """Each value's rank in the order of ``key`` over the column's distinct values; equal keys share a rank.

    ``key`` runs once per distinct value, not once per row: a full-grid frames table has millions of
    rows but a few thousand clip ids.
    """
    import numpy as np
    import pandas as pd

    codes, uniques = pd.factorize(column, use_na_sentinel=False)
    keys = [key(value) for value in uniques]
    rank_of_unique = np.empty(len(uniques), np.int64)
    rank, previous = -1, object()  # the sentinel equals no key: the first value opens rank 0
    for index in sorted(range(len(uniques)), key=keys.__getitem__):
        if keys[index] != previous:
            rank, previous = rank + 1, keys[index]
        rank_of_unique[index] = rank
    return rank_of_unique[codes]


def sort_rows(frame, extra: "tuple[str, ...]" = ()):
    """Canonical order: model, task, grid order of the clip, metric (then ``extra`` columns).

    A stable sort: rows equal in every key keep their order. Vectorised (ranks per distinct value,
    then one ``np.lexsort``), so sorting a full-grid frames table costs seconds, not a Python call per row.

    Example:
        >>> import pandas as pd
        >>> f = pd.DataFrame({"model": ["m", "m"], "task": ["t", "t"], "metric": ["b", "a"],
        ...     "clip_id": ["actor_0001_sad_action_01_script_001", "actor_0001_happy_action_01_script_001"]})
        >>> sort_rows(f)["clip_id"].str[11:16].tolist()
        ['happy', 'sad_a']
    """
    import numpy as np

    if len(frame) == 0:
        return frame.reset_index(drop=True)
    # np.lexsort sorts by its last key first.
    keys = [_ranks(frame[column], lambda value: value) for column in reversed(extra)]
    keys += [_ranks(frame["metric"], str), _ranks(frame["clip_id"], _grid_key),
             _ranks(frame["task"], str), _ranks(frame["model"], str)]
    return frame.iloc[np.lexsort(keys)].reset_index(drop=True)


def _write_parquet_atomic(frame, path: Path) -> None:
    """Write to a temporary file in the target folder, fsync, then rename over ``path``."""
    from ..outputs import write_file

    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, lambda handle: frame.to_parquet(handle, index=False))


def _rows_frame(rows: Iterable[Mapping]):
    import numpy as np
    import pandas as pd

    from ..datamodel.results import rows_to_frame

    rows = list(rows)
    frame = rows_to_frame(rows)
    frame[INPUT_COLUMN] = [str(r.get(INPUT_COLUMN) or "") for r in rows]
    if any(SAMPLE_COLUMN in r for r in rows):  # a run of several samples per clip; one sample: no column, as before
        frame[SAMPLE_COLUMN] = np.array([int(r.get(SAMPLE_COLUMN, 0)) for r in rows], dtype=np.int64)
    # Fixed dtypes so part files concatenate to one schema whatever a batch holds.
    frame = frame.astype({"model": str, "task": str, "clip_id": str, "emotion": str, "metric": str,
                          "status": str, "error": str, INPUT_COLUMN: str})
    for column in ("actor_id", "action_id", "script_id"):
        frame[column] = pd.array(frame[column], dtype="Int64")
    frame["value"] = frame["value"].astype("float64")
    return frame


def _with_samples(frame, keys: list) -> list:
    """``keys`` plus the sample column when the table has one (parts of one-sample clips, older files: sample 0)."""
    if SAMPLE_COLUMN not in frame.columns:
        return keys
    frame[SAMPLE_COLUMN] = frame[SAMPLE_COLUMN].fillna(0).astype("int64")
    return keys + [SAMPLE_COLUMN]


def _frames_frame(rows: Iterable[Mapping]):
    import pandas as pd

    rows = list(rows)
    sampled = any(SAMPLE_COLUMN in r for r in rows)
    frame = pd.DataFrame(rows, columns=list(FRAME_COLUMNS) + ([SAMPLE_COLUMN] if sampled else []))
    if sampled:
        frame[SAMPLE_COLUMN] = frame[SAMPLE_COLUMN].fillna(0).astype("int64")
    return frame.astype({"model": str, "task": str, "clip_id": str, "metric": str, "frame": "int64",
                         "value": "float64"})


class ResultStore:
    """Rows of one (task, model) evaluation under ``root/<task>/<model>/``."""

    def __init__(self, root: "str | Path", task: str, model: str, folder: "str | Path | None" = None):
        self.root = Path(root)
        self.task = check_name("task", task)
        self.model = check_name("model", model)
        self.dir = Path(folder) if folder is not None else self.root / task / model
        self.rows_dir = self.dir / "rows"
        self.frames_dir = self.dir / "frames"
        self.rows_path = self.dir / "rows.parquet"
        self.frames_path = self.dir / "frames.parquet"
        self.set_rows_path = self.dir / "set_rows.parquet"
        self.features_dir = self.dir / SET_FEATURES_DIR
        self._stamp = f"{time.time_ns():020d}-{os.getpid()}"
        self._seq = itertools.count()

    @classmethod
    def work(cls, root: "str | Path", task: str, model: str) -> "ResultStore":
        """The store of the run in progress for (task, model): ``root/<task>/.work-<model>/``."""
        check_name("model", model)
        return cls(root, task, model, folder=Path(root) / task / f".work-{model}")

    # -- writing ---------------------------------------------------------------------------
    def write_part(self, rows: "list[Mapping]", frames: "list[Mapping] | None" = None) -> None:
        """Persist the rows (and per-frame values) of a batch of finished clips atomically.

        The frames part is written first: a part of rows marks its clips done, so a crash
        between the two files leaves the clips to be recomputed, never rows without frames.
        """
        if not rows:
            return
        name = f"part-{self._stamp}-{next(self._seq):06d}.parquet"
        if frames:
            _write_parquet_atomic(_frames_frame(frames), self.frames_dir / name)
        _write_parquet_atomic(_rows_frame(rows), self.rows_dir / name)

    def write_set_rows(self, rows: "list[Mapping]") -> None:
        """Set-level rows (e.g. FID over all clips of the model), replacing earlier ones."""
        frame = _rows_frame(rows)
        _write_parquet_atomic(sort_rows(frame, extra=tuple(_with_samples(frame, []))), self.set_rows_path)

    # -- reading ---------------------------------------------------------------------------
    def _parts(self, folder: Path) -> list[Path]:
        return sorted(folder.glob("part-*.parquet")) if folder.is_dir() else []

    def read_rows(self):
        """Every stored row (compacted table plus parts), canonical order, duplicates removed."""
        import pandas as pd

        pieces = [read_stored(p) for p in ([self.rows_path] if self.rows_path.is_file() else [])
                  + self._parts(self.rows_dir)]
        frame = pd.concat(pieces, ignore_index=True) if pieces else _rows_frame([])
        if INPUT_COLUMN not in frame:  # rows stored before runs were bound to their inputs
            frame[INPUT_COLUMN] = ""
        frame[INPUT_COLUMN] = frame[INPUT_COLUMN].fillna("").astype(str)
        keys = _with_samples(frame, ["model", "clip_id", "metric"])
        # A clip written twice (two runs racing on one folder) keeps its first copy: values
        # are deterministic, so the copies agree.
        frame = frame.drop_duplicates(subset=keys, keep="first")
        return sort_rows(frame, extra=tuple(keys[3:]))

    def read_frames(self):
        """Every stored per-frame value, canonical order (clip, metric, frame)."""
        import pandas as pd

        pieces = [read_stored(p, FRAME_SCHEMA) for p in ([self.frames_path] if self.frames_path.is_file() else [])
                  + self._parts(self.frames_dir)]
        frame = pd.concat(pieces, ignore_index=True) if pieces else _frames_frame([])
        keys = _with_samples(frame, ["model", "clip_id", "metric"])
        frame = frame.drop_duplicates(subset=keys + ["frame"], keep="first")
        return sort_rows(frame, extra=tuple(keys[3:]) + ("frame",))

    def read_set_rows(self):
        import pandas as pd

        return read_stored(self.set_rows_path) if self.set_rows_path.is_file() else _rows_frame([])

    def done_clips(self) -> set[str]:
        """Clip ids that already have rows."""
        return set(self.read_rows()["clip_id"])

    def failed_clips(self) -> set[str]:
        """Clip ids whose stored rows include a failure."""
        rows = self.read_rows()
        return set(rows.loc[rows["status"] == STATUS_FAILED, "clip_id"].unique())

    # -- maintenance -----------------------------------------------------------------------
    def compact(self, drop_clips: "Iterable[str]" = ()):
        """Merge parts into ``rows.parquet`` / ``frames.parquet`` (sorted), optionally dropping clips.

        Returns the compacted rows. The merged file is written before any part is deleted, so
        an interruption here loses nothing (duplicates are removed on the next read).
        """
        drop = set(drop_clips)
        rows = self.read_rows()
        frames = self.read_frames()
        old_row_parts, old_frame_parts = self._parts(self.rows_dir), self._parts(self.frames_dir)
        if drop:
            rows = rows[~rows["clip_id"].isin(drop)].reset_index(drop=True)
            frames = frames[~frames["clip_id"].isin(drop)].reset_index(drop=True)
        _write_parquet_atomic(frames, self.frames_path)
        _write_parquet_atomic(rows, self.rows_path)
        for part in old_row_parts + old_frame_parts:
            discard(part)
        return rows


class SetFeatures:
    """Per-clip features of the set metrics (FID's Inception features), kept with a run's rows so the
    set-level step reads them instead of decoding every prediction again.

    One ``<clip>.<metric>.npy`` per clip and metric, written atomically, then its ``.json`` side file:
    the ``.npy``'s sha256 and shape, and the key the features were computed under (the clip's input
    fingerprint, the metric definitions and the options that can change a feature, ``key``). A read
    returns None for features of other inputs or options (recomputed, silently: an earlier run's) and
    for a damaged file (named in one line on stderr, deleted, and recomputed).

    Example:
        >>> import numpy as np
        >>> from hug_vis_dataset.outputs import scratch_folder
        >>> features = SetFeatures(scratch_folder(), {"c": "sha-1"}, {"chunk_frames": 32})
        >>> features.write("c", {"fid": np.ones((2, 3), np.float32)}, ("fid",))
        >>> features.read("c", "fid").tolist()
        [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
        >>> SetFeatures(features.folder, {"c": "sha-2"}, {"chunk_frames": 32}).read("c", "fid") is None
        True
    """

    def __init__(self, folder: "str | Path", fingerprints: Mapping[str, str], key: Mapping[str, Any]) -> None:
        self.folder = Path(folder)
        self.fingerprints = fingerprints
        self.key = dict(key)

    @classmethod
    def for_run(cls, store: "ResultStore", fingerprints: Mapping[str, str], definitions: Mapping[str, str],
                options: Mapping[str, Any], metrics: Iterable[str]) -> "SetFeatures":
        """The features of one run: keyed by the metrics' definitions and the options a feature depends on."""
        key = {"definitions": {m: definitions.get(m) for m in metrics}, **{k: options.get(k) for k in FEATURE_OPTIONS}}
        return cls(store.features_dir, fingerprints, key)

    @staticmethod
    def sample_key(clip_id: str, sample: int) -> str:
        """Where sample ``sample``'s features of a clip given as several samples are kept (``<clip>.sample_<k>``;
        bound to the clip's input fingerprint, which hashes every sample).

        >>> SetFeatures.sample_key("actor_0001_sad_action_01_script_001", 2)
        'actor_0001_sad_action_01_script_001.sample_2'
        """
        return f"{clip_id}.sample_{int(sample)}"

    def _key(self, clip_id: str) -> dict:
        clip = clip_id.split(".", 1)[0]  # a sample's key (sample_key) is bound to its clip's fingerprint
        key = {**self.key, INPUT_COLUMN: self.fingerprints.get(clip, "")}
        return json.loads(json.dumps(key, sort_keys=True, default=str))  # as the side file reads back

    def _paths(self, clip_id: str, metric: str) -> "tuple[Path, Path]":
        return self.folder / f"{clip_id}.{metric}.npy", self.folder / f"{clip_id}.{metric}.json"

    def write(self, clip_id: str, features: Mapping[str, Any], metrics: Iterable[str]) -> None:
        """Store the clip's features of each of ``metrics``; one it has none of (a failed clip) is removed."""
        import numpy as np

        from ..hashing import sha256_file
        from ..outputs import write_file, write_text_file

        for metric in metrics:
            data, meta = self._paths(clip_id, metric)
            if metric not in features:
                discard(meta)
                discard(data)
                continue
            array = np.asarray(features[metric])
            mark_cache(self.folder)  # a cache of the run's: a damaged file is recomputed, never an error
            discard(meta)  # no side file naming the old bytes while the new ones land
            write_file(data, lambda handle, array=array: np.save(handle, array, allow_pickle=False))
            write_text_file(meta, json.dumps({"sha256": sha256_file(data), "shape": list(array.shape),
                                                "dtype": str(array.dtype), "key": self._key(clip_id)}, sort_keys=True))

    def read(self, clip_id: str, metric: str):
        """The stored features, or None (absent, of other inputs or options, or damaged: named on stderr)."""
        import numpy as np

        from ..hashing import sha256_file

        data, meta = self._paths(clip_id, metric)
        if not meta.is_file():
            return None
        try:
            record = read_json(meta, expect=None)  # strict: an InputFileError is a ValueError: recomputed
            if not isinstance(record, dict):
                raise ValueError("side file is not a JSON object")
            if record.get("key") != self._key(clip_id):
                return None
            if not data.is_file():
                raise ValueError("features file missing")
            if record.get("sha256") != sha256_file(data):
                raise ValueError("sha256 mismatch")
            array = np.load(data, allow_pickle=False)
            if list(array.shape) != record.get("shape"):
                raise ValueError(f"shape {list(array.shape)} is not the recorded {record.get('shape')}")
        except (OSError, ValueError) as err:
            print(f"warning: stored {metric} features {data} are damaged ({err}); recomputing them from the "
                  f"prediction", file=sys.stderr)
            with contextlib.suppress(OSError):  # named once: the run goes on without them
                discard(meta)
                discard(data)
            return None
        return array

    def reader(self, clips: Mapping[str, str]) -> "Callable[[str, str], Any]":
        """``(prediction path, metric) -> features or None`` for the set-level step; ``clips``: path -> clip id."""
        return lambda path, metric: self.read(clips[path], metric)


def status_counts(rows) -> dict[str, int]:
    """Clips by outcome: ``ok`` (all rows ok) and ``failed`` (any failed row).

    Example:
        >>> import pandas as pd
        >>> status_counts(pd.DataFrame({"clip_id": ["a", "a", "b"], "status": ["ok", "failed", "ok"]}))
        {'ok': 1, 'failed': 1}
    """
    per_clip = rows.groupby("clip_id")["status"].agg(lambda s: STATUS_OK if (s == STATUS_OK).all() else STATUS_FAILED)
    return {"ok": int((per_clip == STATUS_OK).sum()), "failed": int((per_clip == STATUS_FAILED).sum())}


__all__ = ["FRAME_COLUMNS", "RESULT_COLUMNS", "SET_FEATURES_DIR", "STORED_COLUMNS", "ResultStore", "SetFeatures",
           "check_name", "sort_rows", "status_counts"]

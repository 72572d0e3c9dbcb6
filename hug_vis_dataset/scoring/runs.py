"""Reading a stored run through one validated schema: where rows become leaderboard cells.

Every reader of stored runs (the leaderboard in the CLI and the Space, the report) reads them
here, and only here are per-clip rows turned into the aggregate a table shows. A stored run is
untrusted input (anybody can write a results folder or push to a results repo), so
:func:`read_run` checks it before anything of it is shown:

* the folder names: a known task, a valid model name (transient ``.``-folders are never runs);
* ``summary.json``: a JSON object whose task and model are the folder's, with well-typed
  ``metrics``, ``coverage``, ``aggregate`` and ``provenance``;
* ``rows.parquet`` (required), ``frames.parquet`` and ``set_rows.parquet``: readable, with their
  columns, the folder's task and model in every row, only the task's metrics, ``ok`` or
  ``failed`` statuses, grid clip ids, and every ``ok`` value finite and inside the catalog's
  ``value_range`` (where that range is a bound: ``MetricSpec.range_is_bound``);
* the aggregate, computed from the rows by :func:`hug_vis_dataset.scoring.aggregate.task_table`
  under the task's documented protocol, must equal the summary's cached ``aggregate``.

A run failing any check is a :class:`DamagedRun`: listed once, with its path, what is wrong and
the fix; the other runs are unaffected. A run's **label** is its folder name, never a name stored
inside it. Its **origin** comes from the rows (do they cover the full 8,400-clip grid?) and the
dataset's synthetic flag; **scored by** is ``verified`` only when the run carries a verification
record written by the leaderboard's own scorer whose file digests still match (and, when
``$HUGVIS_LEADERBOARD_KEY`` is set, whose HMAC signature is valid), else ``self-reported``.

Example:
    >>> import tempfile, pathlib, json
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "matting" / "m").mkdir(parents=True)
    >>> _ = (root / "matting" / "m" / "summary.json").write_text("[1, 2]")
    >>> runs, damaged = scan_runs(root)
    >>> runs, damaged[0].problem
    ([], 'summary.json is a JSON list, not an object')
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from ..readers import InputFileError
from ..readers import read_json
from ..outputs import is_run_folder_name
from .aggregate import COUNT_COLUMNS

#: The files of one run that a store keeps, copies and publishes.
RUN_FILES: tuple[str, ...] = ("rows.parquet", "frames.parquet", "set_rows.parquet", "summary.json", "coverage.json",
                              "run.json")
VERIFICATION_FILE = "verification.json"
VERIFIED, SELF_REPORTED = "verified", "self-reported"
KEY_ENV = "HUGVIS_LEADERBOARD_KEY"
#: Cached aggregates are compared with the recomputed ones to this relative tolerance (JSON round trip).
AGGREGATE_RTOL = 1e-9
#: How far past a bound of ``value_range`` float rounding may carry a value (relative to the bound).
RANGE_RTOL = 1e-9
FIX_RESCORE = "re-score it (hugvis evaluate ... --overwrite) or delete the folder"


class RunValidationError(ValueError):
    """One thing wrong with a stored run (the message; the fix is given by the raiser)."""

    def __init__(self, problem: str, fix: str = FIX_RESCORE):
        super().__init__(problem)
        self.problem, self.fix = problem, fix


@dataclass(frozen=True)
class StoredRun:
    """One stored run that passed validation.

    Attributes:
        task, model: from the folder names (the label a board shows).
        folder: where it is; ``link``: where a reader finds its provenance.
        summary: the validated ``summary.json``.
        rows, set_rows: the stored tables (DataFrames; set rows may be empty).
        frame_sums: ``frames.parquet`` of the counted clips reduced to per-actor sums by frame index
            (:class:`~hug_vis_dataset.statistics.sums.FrameSums`: everything the ``rvm`` protocol's values and
            intervals need; a full-grid run's millions of per-frame rows are not kept), or None.
        table: the aggregate in paper units, computed from the rows (index: the row labels, emotion
            ``model | setting``; columns: metrics, ``n_ok``, ``n_failed``).
        sample_rows: a run scored over several samples per clip: its counted per-sample rows (with
            :data:`~hug_vis_dataset.datamodel.results.SAMPLE_COLUMN`; what the seed statistics read), while ``rows``
            and ``set_rows`` hold the per-clip (per-draw) means every table reads
            (:func:`~hug_vis_dataset.scoring.aggregate.sample_means`); None for one sample per clip.
        origin: ``synthetic``, ``submitted`` (full grid) or ``subset``.
        scored_by: ``verified`` or ``self-reported``.
    """

    task: str
    model: str
    folder: Path
    summary: dict
    link: str
    rows: Any = None
    frame_sums: Any = None
    set_rows: Any = None
    table: Any = None
    origin: str = "subset"
    scored_by: str = SELF_REPORTED
    sample_rows: Any = None

    @property
    def samples_per_clip(self) -> int:
        """The most samples any clip of the run holds (1: one sample per clip)."""
        from ..datamodel.results import SAMPLE_COLUMN

        if self.sample_rows is None or not len(self.sample_rows):
            return 1
        counts = self.sample_rows.groupby(["clip_id", "metric"], observed=True)[SAMPLE_COLUMN].nunique()
        return int(counts.max()) if len(counts) else 1

    @property
    def skipped(self) -> dict[str, str]:
        """Metrics that did not run, with the stored reason (untrusted text: escape it to show it)."""
        return dict(self.summary["metrics"]["skipped"])

    @property
    def grid_size(self) -> int:
        return int(self.summary["coverage"]["grid_size"])


@dataclass(frozen=True)
class DamagedRun:
    """A stored run that failed validation: shown once, as damaged, never as numbers."""

    task: str
    model: str
    folder: Path
    problem: str
    fix: str = FIX_RESCORE

    def message(self) -> str:
        """One line: the folder, what is wrong and the fix (plain text; escape it where shown)."""
        return f"{self.folder}: {self.problem}; {self.fix}"


# ----------------------------------------------------------------------------- verification
def _file_digests(folder: Path) -> dict[str, str]:
    from ..hashing import sha256_file

    return {name: sha256_file(folder / name) for name in RUN_FILES if (folder / name).is_file()}


def _signature(files: dict[str, str], key: str) -> str:
    message = json.dumps(files, sort_keys=True).encode("utf-8")
    return hmac.new(key.encode("utf-8"), message, hashlib.sha256).hexdigest()


def write_verification(folder: "str | Path", scorer: str) -> None:
    """Record that the leaderboard's own scorer computed the run in ``folder`` (digests of its files,
    signed with ``$HUGVIS_LEADERBOARD_KEY`` when set). Written by the store, never by a pushed run."""
    from .. import __version__
    from ..outputs import write_text_file

    folder = Path(folder)
    files = _file_digests(folder)
    record = {"scored_by": scorer, "library": __version__, "files": files}
    key = os.environ.get(KEY_ENV, "")
    if key:
        record["signature"] = _signature(files, key)
    write_text_file(folder / VERIFICATION_FILE, json.dumps(record, indent=2, sort_keys=True) + "\n")


def scored_by(folder: Path) -> str:
    """``verified`` when the run's verification record holds (see the module docstring), else ``self-reported``."""
    try:
        record = read_json(folder / VERIFICATION_FILE)  # strict: a "files" given twice verifies nothing
        files = record["files"]
    except (OSError, ValueError, TypeError, KeyError):
        return SELF_REPORTED
    if not isinstance(files, dict) or files != _file_digests(folder):
        return SELF_REPORTED
    key = os.environ.get(KEY_ENV, "")
    if key and not hmac.compare_digest(str(record.get("signature", "")), _signature(files, key)):
        return SELF_REPORTED
    return VERIFIED


# ----------------------------------------------------------------------------- validation
def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def _need(condition: bool, problem: str) -> None:
    if not condition:
        raise RunValidationError(problem)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number_or_null(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value))


def _check_summary(summary: Any, task: str, model: str) -> dict:
    _need(isinstance(summary, dict), f"summary.json is a JSON {_json_type(summary).split()[-1]}, not an object")
    _need(summary.get("task") == task, f"summary.json names task {summary.get('task')!r}, but the run is in the "
                                       f"{task!r} folder")
    _need(summary.get("model") == model, f"summary.json names model {summary.get('model')!r}, but the run's folder "
                                         f"is {model!r}")
    metrics = summary.get("metrics")
    _need(isinstance(metrics, dict), "summary.json has no 'metrics' object")
    _need(isinstance(metrics.get("computed"), list) and all(isinstance(m, str) for m in metrics["computed"]),
          "summary.json's metrics.computed is not a list of names")
    _need(len(set(metrics["computed"])) == len(metrics["computed"]), "summary.json's metrics.computed names a "
                                                                     "metric twice")
    unparsed = summary.get("unparsed_answers", 0)
    _need(_is_int(unparsed) and unparsed >= 0,  # the runner always writes the count (0 for other tasks)
          f"summary.json's unparsed_answers is {unparsed!r}, not a count")
    skipped = metrics.get("skipped")
    _need(isinstance(skipped, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in skipped.items()),
          "summary.json's metrics.skipped is not an object of texts")
    coverage = summary.get("coverage")
    _need(isinstance(coverage, dict) and _is_int(coverage.get("grid_size")) and coverage["grid_size"] > 0,
          "summary.json's coverage.grid_size is not a positive integer")
    aggregate = summary.get("aggregate")
    _need(aggregate is None or isinstance(aggregate, dict), f"summary.json's aggregate is {_json_type(aggregate)}")
    for label, values in (aggregate or {}).items():
        _need(isinstance(values, dict), f"summary.json's aggregate of {label!r} is {_json_type(values)}")
        for key, value in values.items():
            if key in COUNT_COLUMNS:
                _need(_is_int(value) and value >= 0, f"summary.json's {key} of {label!r} is {value!r}, not a count")
            else:
                _need(_is_number_or_null(value), f"summary.json's {key} of {label!r} is {value!r}, not a number")
    provenance = summary.get("provenance", {})
    _need(isinstance(provenance, dict), "summary.json's provenance is not an object")
    _need(isinstance(provenance.get("dataset", {}), dict), "summary.json's provenance.dataset is not an object")
    protocol = summary.get("protocol", {})
    _need(isinstance(protocol, dict), "summary.json's protocol is not an object")
    return summary


def _check_values(frame, name: str, allowed: Iterable[str], path_label: str) -> None:
    import numpy as np

    allowed = set(allowed)
    metric = frame["metric"].astype(str)
    unknown = sorted(set(metric.unique()) - allowed)
    _need(not unknown, f"{path_label} has metric(s) {unknown} that the task does not compute")
    ok = (frame["status"] == "ok").to_numpy() if "status" in frame else np.ones(len(frame), bool)
    values = frame["value"].to_numpy(dtype=np.float64)
    codes, names = metric.factorize(sort=True)
    for k, name in enumerate(names):  # vectorised per metric: a full-grid table has millions of rows
        _check_range(values[(codes == k) & ok], str(name), path_label)


def _check_range(values, metric: str, path_label: str) -> None:
    """Every value finite and inside the metric's ``value_range`` where that range is a bound."""
    import numpy as np

    from .. import catalog

    spec = catalog.spec(metric)
    low, high = spec.value_range if spec.range_is_bound else (-math.inf, math.inf)
    # A bound reached by a computation may be passed by float rounding (a cosine of 1 + 2e-16).
    slack = RANGE_RTOL * max(1.0, abs(low) if math.isfinite(low) else 0.0, abs(high) if math.isfinite(high) else 0.0)
    bad = ~np.isfinite(values) | (values < low - slack) | (values > high + slack)
    if bad.any():
        raise RunValidationError(f"{path_label}: {metric} value {float(values[bad.argmax()])!r} is outside its range "
                                 f"[{low:g}, {high:g}]")


def _check_rows(frame, task: str, model: str, allowed: Iterable[str], label: str, clip_required: bool = True) -> None:
    from ..datamodel.grid import ClipId, ClipIdError
    from ..datamodel.results import EMOTION_MODEL_SEP, RESULT_COLUMNS

    missing = [c for c in RESULT_COLUMNS if c not in frame.columns]
    _need(not missing, f"{label} lacks the column(s) {missing}")
    if not len(frame):
        return
    # Distinct values first: a full-grid run has hundreds of thousands of rows and a handful of names.
    tasks = {str(t) for t in frame["task"].unique()}
    _need(tasks == {task}, f"{label} holds rows of task(s) {sorted(tasks)}, but the run is in the {task!r} folder")
    names = {str(m).partition(EMOTION_MODEL_SEP)[0] for m in frame["model"].unique()}
    _need(names == {model}, f"{label} names model(s) {sorted(names)}, but the run's folder is {model!r}")
    statuses = {str(s) for s in frame["status"].unique()}
    _need(statuses <= {"ok", "failed"}, f"{label} has status(es) {sorted(statuses - {'ok', 'failed'})}")
    _check_samples(frame, label)
    if clip_required:
        known = _grid_ids()
        for clip in (c for c in frame["clip_id"].astype(str).unique() if c not in known):  # an alias spelling
            try:
                ClipId.parse(clip)
            except ClipIdError:
                raise RunValidationError(f"{label} has clip id {clip!r}, which is not a grid clip") from None
    _check_values(frame, label, allowed, label)


def _check_samples(frame, label: str) -> None:
    """A sample column (a run of several samples per clip) holds non-negative numbers, and each (clip, metric) has a
    sample number once; without the column each (clip, metric) has one row."""
    from ..datamodel.results import SAMPLE_COLUMN

    keys = ["model", "clip_id", "metric"]
    if SAMPLE_COLUMN in frame.columns:
        samples = frame[SAMPLE_COLUMN]
        _need(not samples.isna().any() and (samples >= 0).all(), f"{label} has a sample number that is empty or "
                                                                   "negative")
        keys.append(SAMPLE_COLUMN)
    repeated = frame.duplicated(keys)
    if repeated.any():
        first = frame[repeated].iloc[0]
        raise RunValidationError(f"{label} has clip {first['clip_id']!r} {first['metric']} twice"
                                 + (f" for sample {int(first[SAMPLE_COLUMN])}" if SAMPLE_COLUMN in keys else ""))


@functools.lru_cache(maxsize=1)
def _grid_ids() -> frozenset:
    """The grid's clip ids as the toolkit writes them (a set lookup per clip; another spelling is parsed)."""
    from ..datamodel.grid import full_grid

    return frozenset(str(c) for c in full_grid())


def _read_table(folder: Path, name: str, required: bool):
    from ..readers import InputFileError
    from .store import FRAME_SCHEMA, ROW_SCHEMA, read_stored

    path = folder / name
    if not path.is_file():
        _need(not required, f"{name} is missing")
        return None
    try:  # checked against the declared schema: a mistyped value column is named, not compared as text
        return read_stored(path, FRAME_SCHEMA if name.startswith("frames") else ROW_SCHEMA)
    except InputFileError as err:
        if not err.where:  # truncated, not Parquet
            raise RunValidationError(f"{name} cannot be read: {err.problem.removeprefix('is ')}") from None
        raise RunValidationError(f"{name}: {err.where} {err.problem}") from None


def _read_frame_sums(folder: Path, model: str, allowed: Iterable[str], rows):
    """``frames.parquet`` (when there is one) checked and reduced to the sums of the counted clips
    (:class:`~hug_vis_dataset.statistics.sums.FrameSums`), its text columns read as codes: a full-grid run's millions
    of per-frame rows are never held as rows (None: no file or no rows)."""
    import numpy as np

    from .. import catalog
    from ..datamodel.results import SAMPLE_COLUMN
    from ..statistics.sums import FrameSums
    from .aggregate import _counted_keys
    from .store import read_stored_frame_codes

    path = folder / "frames.parquet"
    if not path.is_file():
        return None
    try:
        columns = read_stored_frame_codes(path)
    except InputFileError as err:
        if not err.where:  # truncated, not Parquet
            raise RunValidationError(f"frames.parquet cannot be read: {err.problem.removeprefix('is ')}") from None
        raise RunValidationError(f"frames.parquet: {err.where} {err.problem}") from None
    value = np.asarray(columns["value"], dtype=np.float64)
    if not len(value):
        return None
    used = {name: [columns[name][1][i] for i in np.flatnonzero(np.bincount(columns[name][0],
                                                                         minlength=len(columns[name][1])))]
            for name in ("model", "metric")}
    _need(used["model"] == [model], f"frames.parquet names model(s) {sorted(used['model'])}, but the run's folder is "
                                    f"{model!r}")
    unknown = sorted(set(used["metric"]) - set(allowed))
    _need(not unknown, f"frames.parquet has metric(s) {unknown} that the task does not compute")
    codes, names = columns["metric"]
    for k, name in enumerate(names):  # per metric, vectorised: the catalog's range (module docstring)
        _check_range(value[codes == k], name, "frames.parquet")
    return FrameSums.from_codes(columns["model"], columns["metric"], columns["clip_id"],
                                np.asarray(columns["frame"], dtype=np.int64), value,
                                _counted_keys(rows) if rows is not None and len(rows) else None,
                                columns.get(SAMPLE_COLUMN))


def documented_protocol(task: str, frames) -> str:
    """The protocol a board aggregates ``task`` with: the catalog's (``rvm`` needs per-frame rows)."""
    from .. import catalog

    protocol = catalog.task_protocol(task)
    return protocol if protocol != "rvm" or (frames is not None and len(frames)) else "clip"


def _close(a: Any, b: Any) -> bool:
    a_missing = a is None or (isinstance(a, float) and math.isnan(a))
    b_missing = b is None or (isinstance(b, float) and math.isnan(b))
    if a_missing or b_missing:
        return a_missing and b_missing
    return math.isclose(float(a), float(b), rel_tol=AGGREGATE_RTOL, abs_tol=1e-12)


def _compare_aggregate(cached: "dict | None", table, task: str) -> None:
    from .. import catalog

    computed = {} if table is None else {str(label): dict(table.loc[label].items()) for label in table.index}
    cached = cached or {}
    _need(set(cached) == set(computed), f"summary.json's aggregate lists {sorted(cached)}, but rows.parquet gives "
                                        f"{sorted(computed)}")
    for label, values in computed.items():
        if "n_missing" not in cached[label] and "n_missing" in values:
            # Written before missing clips were counted apart: its n_failed counted them as failed.
            values = {**values, "n_failed": int(values["n_failed"]) + int(values["n_missing"])}
            values.pop("n_missing")
        for key, value in values.items():
            stored = cached[label].get(key)
            if not _close(stored, value if key not in COUNT_COLUMNS else int(value)):
                shown = catalog.label_of(key)
                raise RunValidationError(f"summary.json's aggregate disagrees with its rows: {shown} of {label} is "
                                         f"{stored!r} in the summary but {value:.6g} from rows.parquet")


def _origin(summary: dict, rows) -> str:
    from ..datamodel.grid import full_grid

    if summary.get("provenance", {}).get("dataset", {}).get("synthetic") is True:
        return "synthetic"
    clips = {str(c) for c in rows["clip_id"].unique()} if rows is not None and len(rows) else set()
    return "submitted" if clips == {str(c) for c in full_grid()} else "subset"


def read_run(folder: "str | Path", link: str = "") -> "StoredRun | DamagedRun":
    """One stored run, validated (see the module docstring); never raises for a bad run.

    The run's rows come back with the one rule for partial failures applied
    (:func:`hug_vis_dataset.scoring.aggregate.counted_rows`: a clip with a failed metric is failed for every
    metric), and its per-frame rows reduced to the sums of the counted clips, so every reader counts the same
    clips.
    """
    from .. import catalog
    from ..datamodel.results import name_problem
    from ..datamodel.results import SAMPLE_COLUMN
    from .aggregate import counted_rows, sample_means, task_table

    folder = Path(folder)
    task, model = folder.parent.name, folder.name
    try:
        _need(task in catalog.task_names(), f"{task!r} is not a task of the benchmark")
        problem = name_problem("model", model)
        _need(problem is None, problem or "")
        if not (folder / "summary.json").is_file():
            raise RunValidationError("summary.json is missing")
        try:  # strict JSON: a duplicated key (which "metrics"?), NaN or a second object is refused with its line
            summary = read_json(folder / "summary.json", expect=None)
        except InputFileError as err:
            place = f"{err.where}: " if err.where else ""
            raise RunValidationError(f"summary.json cannot be read ({place}{err.problem[:160]})") from None
        summary = _check_summary(summary, task, model)
        rows = _read_table(folder, "rows.parquet", required=True)
        set_rows = _read_table(folder, "set_rows.parquet", required=False)
        _check_rows(rows, task, model, catalog.clip_metrics(task), "rows.parquet")
        if set_rows is not None:
            _check_rows(set_rows, task, model, catalog.set_metrics(task), "set_rows.parquet", clip_required=False)
        counted = counted_rows(rows)  # the rules every table applies, once: failed clips, then samples
        sample_rows = counted if SAMPLE_COLUMN in counted.columns else None
        rows, set_rows = sample_means(counted), sample_means(set_rows)
        sums = _read_frame_sums(folder, model, catalog.clip_metrics(task), counted)
        protocol = documented_protocol(task, sums)
        table = task_table(rows, sums, set_rows, protocol=protocol) if len(rows) else None
        declared = summary.get("protocol", {}).get("aggregation", protocol)
        cache_table = table
        if declared != protocol and declared in ("clip", "rvm") and len(rows):
            cache_table = task_table(rows, sums, set_rows, protocol=declared)
        _compare_aggregate(summary.get("aggregate"), cache_table, task)
    except RunValidationError as err:
        return DamagedRun(task, model, folder, err.problem, err.fix)
    except Exception as err:  # noqa: BLE001 - whatever else a stored run does, it must not take a view down
        return DamagedRun(task, model, folder, f"cannot be read or aggregated ({type(err).__name__}: "
                          f"{' '.join(str(err).split())[:200]})")
    return StoredRun(task, model, folder, summary, link, rows, sums, set_rows, table, _origin(summary, rows),
                     scored_by(folder), sample_rows)


def _signature_of(folder: Path) -> tuple:
    out = []
    for name in RUN_FILES + (VERIFICATION_FILE,):
        try:
            st = (folder / name).stat()
            out.append((name, st.st_size, st.st_mtime_ns, st.st_ino))
        except OSError:
            out.append((name, None))
    return tuple(out) + (os.environ.get(KEY_ENV, ""),)


_CACHE: dict[str, tuple[tuple, Any]] = {}


def run_folders(root: "str | Path") -> list[Path]:
    """Candidate run folders ``root/<task>/<model>/`` (transient and hidden folders excluded), in
    (task, model) order. A folder counts when it holds any file a run has."""
    root = Path(root)
    if not root.is_dir():
        return []
    out = []
    for task in sorted(p for p in root.iterdir() if p.is_dir() and is_run_folder_name(p.name)):
        for folder in sorted(p for p in task.iterdir() if p.is_dir() and is_run_folder_name(p.name)):
            if any((folder / name).exists() for name in RUN_FILES):
                out.append(folder)
    return out


def scan_runs(root: "str | Path", link: "Callable[[str, str], str] | None" = None
              ) -> tuple[list[StoredRun], list[DamagedRun]]:
    """Every run under ``root``: (valid runs, damaged runs), each in (task, model) order.

    Results are remembered per folder by the size, mtime and inode of its files, so a board
    redrawn without a change does not re-read the rows.
    """
    valid: list[StoredRun] = []
    damaged: list[DamagedRun] = []
    folders = run_folders(root)
    keys = [str(folder.resolve()) for folder in folders]
    signatures = [_signature_of(folder) for folder in folders]
    stale = [i for i, (key, signature) in enumerate(zip(keys, signatures))
             if _CACHE.get(key) is None or _CACHE[key][0] != signature]
    for i, result in zip(stale, _read_all([folders[i] for i in stale])):
        _CACHE[keys[i]] = (signatures[i], result)
    for key in keys:
        result = _CACHE[key][1]
        if isinstance(result, StoredRun) and link is not None:
            result = StoredRun(**{**result.__dict__, "link": link(result.task, result.model)})
        (valid if isinstance(result, StoredRun) else damaged).append(result)
    return valid, damaged


#: Runs read at once: their Parquet decoding and the per-frame kernel release the GIL, so two cores read two runs.
READ_THREADS = 2


def _read_all(folders: list) -> list:
    """:func:`read_run` of each folder, in order, on :data:`READ_THREADS` threads (each run on its own)."""
    if len(folders) < 2 or (os.cpu_count() or 1) < 2:
        return [read_run(folder) for folder in folders]
    from concurrent.futures import ThreadPoolExecutor

    from ..statistics.sums import grid_rank

    grid_rank([])  # the grid's shared lookup built once, before the threads read it
    with ThreadPoolExecutor(max_workers=READ_THREADS, thread_name_prefix="hugvis-read") as pool:
        return list(pool.map(read_run, folders))


@dataclass
class RunScan:
    """What a store holds: the valid runs and the damaged ones."""

    runs: list = field(default_factory=list)
    damaged: list = field(default_factory=list)


__all__ = ["DamagedRun", "RUN_FILES", "RunScan", "RunValidationError", "SELF_REPORTED", "StoredRun", "VERIFIED",
           "VERIFICATION_FILE", "documented_protocol", "read_run", "run_folders", "scan_runs", "scored_by",
           "write_verification"]

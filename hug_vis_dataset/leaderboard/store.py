"""The results store: every scored run, kept with its provenance, is what the leaderboard shows.

A store holds one folder per run, ``<task>/<model>/``, as ``hugvis evaluate --out`` writes it:
``rows.parquet`` (per-clip rows, the primary result), ``frames.parquet`` (per-frame values, RVM
protocol), ``set_rows.parquet`` (FID), ``summary.json`` (aggregate, coverage and provenance:
dataset fingerprint, package versions, weights hashes, command line) and ``coverage.json``; the
MOS study's ratings live in ``ratings/ratings.jsonl``.

* :class:`LocalResultsStore` is a folder (the CLI's ``--out``, the Space's ``--results``).
* :class:`HubResultsStore` is a Hub dataset repo read through a local mirror
  (``snapshot_download``) and appended to with one ``create_commit`` per run, the way the large
  public leaderboards keep their results; the commit names the revision it was based on, so
  two Spaces appending at once cannot overwrite each other.

A run is added from a staging folder (scored there, so a half-scored upload is never visible)
and refused when its ``(task, model)`` already exists: a submission never resumes into, or
replaces, somebody else's rows. Runs are read through one validated schema
(:mod:`hug_vis_dataset.scoring.runs`): :meth:`LocalResultsStore.scan` gives the valid runs and the
damaged ones; a run added by the leaderboard's own scorer (the Space) carries a verification
record, a pushed one does not. Reading a store writes nothing (a read-only store is read); the
first write (:meth:`LocalResultsStore.staging`, :meth:`LocalResultsStore.add`) removes the leftover
transient folders of a crash (:func:`hug_vis_dataset.outputs.clean_transients`; only ours,
by their marker).

Example:
    >>> import tempfile, json, pathlib
    >>> store = LocalResultsStore(tempfile.mkdtemp())
    >>> with store.staging() as stage:    # a run is validated before it is added: a bare summary is not one
    ...     run = stage / "matting" / "m"; run.mkdir(parents=True)
    ...     _ = (run / "summary.json").write_text(json.dumps({"task": "matting", "model": "m"}))
    ...     store.add(stage, "matting", "m")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    hug_vis_dataset.leaderboard.store.StoreError: .../matting/m: summary.json has no 'metrics' object; re-score it (hugvis evaluate ... --overwrite) or delete the folder
    >>> store.runs(), store.check_new_model("matting", "m")
    ([], 'm')
    >>> store.check_new_model("matting", "audit@h264_crf18")
    Traceback (most recent call last):
    ...
    hug_vis_dataset.leaderboard.store.ModelNameError: model name 'audit@h264_crf18' is reserved for the robustness audit's pseudo-systems (audit@...), never ranked; choose another name
"""

from __future__ import annotations

import contextlib
import shutil
import time
from pathlib import Path
from typing import Any, Iterator

from ..errors import HugvisError
from ..outputs import Output, claim, clean_transients, discard, mark_scratch, scratch_folder, transient_folder
from ..scoring.runs import RUN_FILES, VERIFICATION_FILE, DamagedRun, RunScan, StoredRun, scan_runs, write_verification
from ..studies.ratings import RATINGS_FILE  # the study's log, kept with the results

#: Who computed a run the store adds from its own scoring (the verification record names it).
LEADERBOARD_SCORER = "hugvis leaderboard scorer"
LOCAL_ALTERNATIVE = "use a local results folder instead (hugvis space --results RESULTS; hugvis evaluate --out RESULTS)"


class ModelNameError(HugvisError, ValueError):
    """A model name that cannot be stored (bad characters, reserved, or already taken)."""


class StoreError(HugvisError, RuntimeError):
    """The store cannot be read or appended to; the message names the run or repo and the fix."""


def check_model_name(name: str) -> str:
    """The model name, stripped, or :class:`ModelNameError` saying what to change.

    Example:
        >>> check_model_name(" my_model ")
        'my_model'
        >>> check_model_name("my model")
        Traceback (most recent call last):
        ...
        hug_vis_dataset.leaderboard.store.ModelNameError: model name 'my model' must be 1-64 letters, digits, '.', '_', '-', '+', '@' or '=' (no spaces or slashes), starting with a letter or digit
    """
    from ..datamodel.results import model_name_problem

    name = (name or "").strip()
    problem = model_name_problem(name)  # the one rule: the characters, and no spelling of a reserved name
    if problem:
        raise ModelNameError(problem)
    return name


class LocalResultsStore:
    """A results folder (``RESULTS/<task>/<model>/``) read and appended to on this machine."""

    def __init__(self, root: "str | Path", command: str = "hugvis space", into_existing: bool = False):
        self.root = Path(root)
        self.command, self.into_existing = command, into_existing
        self._cleaned = False  # leftovers are removed by the first write, never by a reader
        self._output: "Output | None" = None

    def output(self) -> Output:
        """The store as the output of this process's writes (claimed at the first write, never by a reader)."""
        if self._output is None:
            self._output = claim(self.command, self.root, "results", label="results store",
                                 into_existing=self.into_existing)
        return self._output

    def _clean_once(self) -> None:
        if not self._cleaned:
            self.output().ensure()
            clean_transients(self.root)
            self._cleaned = True

    def __repr__(self) -> str:
        return f"LocalResultsStore({str(self.root)!r})"

    @property
    def ratings_path(self) -> Path:
        return self.root / RATINGS_FILE

    def link(self, task: str, model: str) -> str:
        """Where the run's provenance is: an absolute path (the Space serves it from there)."""
        return str((self.root / task / model / "summary.json").resolve())

    def scan(self) -> RunScan:
        """Every stored run, validated: the valid ones and the damaged ones (each listed once with
        its path, what is wrong and the fix), in (task, model) order."""
        runs, damaged = scan_runs(self.root, self.link)
        return RunScan(runs, damaged)

    def runs(self) -> list[StoredRun]:
        """The valid stored runs (:meth:`scan` also says which are damaged)."""
        return self.scan().runs

    def rows(self):
        """The per-clip rows of every valid stored run (an empty frame with the columns when none)."""
        import pandas as pd

        from ..scoring.store import STORED_COLUMNS

        parts = [run.rows for run in self.runs() if run.rows is not None and len(run.rows)]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(STORED_COLUMNS))

    def has(self, task: str, model: str) -> bool:
        """Whether the name is taken for the task (a damaged run takes it too)."""
        return (self.root / task / model).exists()

    def check_new_model(self, task: str, model: str) -> str:
        """A valid name not yet used for ``task`` (what the upload form checks before the upload)."""
        name = check_model_name(model)
        if self.has(task, name):
            raise _taken(task, name)
        return name

    @contextlib.contextmanager
    def staging(self) -> Iterator[Path]:
        """A fresh transient folder to score into (``out=`` of the runner), deleted afterwards."""
        self._clean_once()
        with transient_folder(self.root, "staging") as stage:
            yield stage

    def add(self, stage: "str | Path", task: str, model: str, verified: bool = False) -> StoredRun:
        """Move the run ``stage/<task>/<model>/`` into the store (atomic rename of the folder).

        Args:
            verified: the run was scored by the leaderboard's own scorer from uploaded predictions
                (the Space); it gets a verification record. Runs computed elsewhere never do.

        Raises:
            StoreError: the staged run is damaged (named, with what is wrong).
            ModelNameError: the name is taken.
        """
        source = _run_folder(stage, task, model)
        self._clean_once()
        target = self.root / task / model
        target.parent.mkdir(parents=True, exist_ok=True)
        with transient_folder(target.parent, "incoming", str(target), keep=True) as final:
            for name in RUN_FILES:
                if (source / name).is_file():
                    shutil.copy2(source / name, final / name)
            if verified:
                write_verification(final, LEADERBOARD_SCORER)
            try:  # a unit of its own, never replacing one: a taken name is refused
                self.output().replace_unit(final, f"{task}/{model}", kind="run", attrs={"task": task, "model": model},
                                           refuse_existing=True)
            except FileExistsError:
                raise _taken(task, model) from None
            finally:
                if final.exists():
                    discard(final)
        return self._stored(task, model)

    def _stored(self, task: str, model: str) -> StoredRun:
        """The run just added, read back through validation (that folder alone, not the whole store)."""
        from ..scoring.runs import read_run

        run = read_run(self.root / task / model, self.link(task, model))
        if isinstance(run, DamagedRun):
            raise StoreError(run.message())
        return run

    def save_ratings(self) -> None:
        """Ratings are written in place by the rating store; nothing to push for a folder."""


def _taken(task: str, model: str) -> ModelNameError:
    from .. import catalog

    return ModelNameError(f"model name {model!r} is already on the {catalog.task(task).label} leaderboard; "
                          "choose another name")


def _run_folder(stage: "str | Path", task: str, model: str) -> Path:
    """The staged run, validated before it is copied anywhere."""
    from ..scoring.runs import read_run

    source = Path(stage) / task / model
    if not (source / "summary.json").is_file():
        raise StoreError(f"{source}: no summary.json; score the run before adding it")
    checked = read_run(source)
    if isinstance(checked, DamagedRun):
        raise StoreError(checked.message())
    return source


class HubResultsStore(LocalResultsStore):
    """A results dataset repo on the Hub, read through a local mirror and appended to by commits.

    Args:
        repo_id: the results repo (``hugvis/hug-vis-results``).
        mirror: local folder of the snapshot (also where scoring stages its runs).
        api: an ``huggingface_hub.HfApi`` (or an object with the same methods: ``snapshot_download``,
            ``create_commit``, ``repo_info``); default ``HfApi()``.
        revision: the branch appended to.
        refresh_s: :meth:`scan` pulls again when the mirror is older than this, so runs that the
            leaderboard's workers add elsewhere appear on a running Space's board (None: never).
    """

    def __init__(self, repo_id: str, mirror: "str | Path", api: Any = None, revision: str = "main",
                 refresh_s: "float | None" = 30.0):
        super().__init__(mark_scratch(mirror))  # the mirror is the toolkit's scratch copy of the repo
        self.refresh_s = refresh_s
        self.pulled_at: "float | None" = None
        self.refresh_error: "str | None" = None  # why the last refresh failed (the board shows the mirror)
        self.repo_id = repo_id
        self.revision = revision
        # The real Hub is probed first (fail fast offline, naming the local alternative); an
        # injected API (a stand-in of the Hub) is used as it is.
        self.probe_hub = api is None
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi()
        self.api = api
        self.base_commit: "str | None" = None

    def __repr__(self) -> str:
        return f"HubResultsStore({self.repo_id!r}, mirror={str(self.root)!r})"

    def link(self, task: str, model: str) -> str:
        return f"https://huggingface.co/datasets/{self.repo_id}/blob/{self.revision}/{task}/{model}/summary.json"

    def pull(self) -> None:
        """Refresh the mirror from the repo (the revision read becomes the base of the next commit)."""
        if self.probe_hub:
            from ..readers.hub_access import require_reachable

            require_reachable(self.repo_id, LOCAL_ALTERNATIVE)
        try:
            info = self.api.repo_info(self.repo_id, repo_type="dataset", revision=self.revision)
            self.api.snapshot_download(repo_id=self.repo_id, repo_type="dataset", revision=info.sha,
                                       local_dir=str(self.root))
        except Exception as err:  # noqa: BLE001 - network, auth and missing-repo errors all end here
            raise StoreError(f"results repo {self.repo_id} cannot be read ({type(err).__name__}: {err}); check the "
                             f"repo id and HF_TOKEN, or {LOCAL_ALTERNATIVE}") from None
        self.base_commit = info.sha
        self.pulled_at = time.monotonic()

    def scan(self) -> RunScan:
        """The runs of the mirror, pulled again first when it is older than ``refresh_s``; a failed
        refresh keeps the mirror (``refresh_error`` says why) rather than an empty board."""
        stale = self.pulled_at is None or (self.refresh_s is not None
                                           and time.monotonic() - self.pulled_at >= self.refresh_s)
        if stale and self.pulled_at is not None:
            try:
                self.pull()
                self.refresh_error = None
            except (StoreError, HugvisError) as err:
                self.refresh_error = str(err)
                self.pulled_at = time.monotonic()  # retried after the next interval, not on every read
        return super().scan()

    def add(self, stage: "str | Path", task: str, model: str, verified: bool = False) -> StoredRun:
        """Commit the run's files to the repo (based on the last pulled revision), then pull.

        ``verified`` (the Space scored it): a verification record is committed with the run; a
        pushed run (``hugvis leaderboard push``) never carries one, even if its folder had one.
        """
        from huggingface_hub import CommitOperationAdd

        source = _run_folder(stage, task, model)
        self.pull()
        if self.has(task, model):
            raise _taken(task, model)
        from ..outputs import scratch

        with scratch(prefix="hugvis-run-") as tmp:
            upload = Path(tmp)
            for name in RUN_FILES:
                if (source / name).is_file():
                    shutil.copy2(source / name, upload / name)
            if verified:
                write_verification(upload, LEADERBOARD_SCORER)
            operations = [CommitOperationAdd(path_in_repo=f"{task}/{model}/{name}", path_or_fileobj=str(upload / name))
                          for name in RUN_FILES + (VERIFICATION_FILE,) if (upload / name).is_file()]
            self._commit(operations, f"Add {task}/{model}")
        self.pull()
        return self._stored(task, model)

    def save_ratings(self) -> None:
        """Push the ratings file (the MOS study writes it in the mirror) as one commit."""
        from huggingface_hub import CommitOperationAdd

        if self.ratings_path.is_file():
            self._commit([CommitOperationAdd(path_in_repo=RATINGS_FILE, path_or_fileobj=str(self.ratings_path))],
                         "Update MOS ratings")

    def _commit(self, operations: list, message: str) -> None:
        try:
            info = self.api.create_commit(repo_id=self.repo_id, operations=operations, commit_message=message,
                                          repo_type="dataset", revision=self.revision, parent_commit=self.base_commit)
        except Exception as err:  # noqa: BLE001 - a conflict or a network error: nothing was written
            raise StoreError(f"results repo {self.repo_id}: commit '{message}' failed ({type(err).__name__}: {err}); "
                             f"nothing was stored, try again") from None
        self.base_commit = getattr(info, "oid", None) or self.base_commit


def open_store(results: "str | Path | None" = None, repo_id: "str | None" = None,
               mirror: "str | Path | None" = None, api: Any = None) -> LocalResultsStore:
    """The store a door asked for: a Hub repo (mirrored to ``mirror``), else a local folder.

    Example:
        >>> import tempfile
        >>> open_store(tempfile.gettempdir()).__class__.__name__
        'LocalResultsStore'
    """
    if repo_id:
        store = HubResultsStore(repo_id, mirror or scratch_folder(prefix="hugvis-results-"), api=api)
        store.pull()
        return store
    return LocalResultsStore(results or scratch_folder(prefix="hugvis-results-"))

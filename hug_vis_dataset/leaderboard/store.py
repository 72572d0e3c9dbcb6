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
replaces, somebody else's rows.

Example:
    >>> import tempfile, json, pathlib
    >>> store = LocalResultsStore(tempfile.mkdtemp())
    >>> with store.staging() as stage:
    ...     run = stage / "matting" / "m"; run.mkdir(parents=True)
    ...     _ = (run / "summary.json").write_text(json.dumps({"task": "matting", "model": "m"}))
    ...     _ = store.add(stage, "matting", "m")
    >>> [(r.task, r.model) for r in store.runs()]
    [('matting', 'm')]
    >>> store.check_new_model("matting", "m")
    Traceback (most recent call last):
    ...
    hug_vis_dataset.leaderboard.store.ModelNameError: model name 'm' is already on the matting leaderboard; choose another name
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..errors import HugvisError

#: The files of one run that the store keeps (the runner's parts and locks stay behind).
RUN_FILES: tuple[str, ...] = ("rows.parquet", "frames.parquet", "set_rows.parquet", "summary.json", "coverage.json")
RATINGS_FILE = "ratings/ratings.jsonl"
LOCAL_ALTERNATIVE = "use a local results folder instead (hugvis space --results RESULTS; hugvis evaluate --out RESULTS)"


class ModelNameError(HugvisError, ValueError):
    """A model name that cannot be stored (bad characters, reserved, or already taken)."""


class StoreError(HugvisError, RuntimeError):
    """The store cannot be read or appended to; the message names the run or repo and the fix."""


@dataclass(frozen=True)
class StoredRun:
    """One stored run: where it is, its summary and a link to its provenance."""

    task: str
    model: str
    folder: Path
    summary: dict
    link: str  # where a reader finds summary.json (a path, or the Hub URL)


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
    from ..results import REFERENCE_MODELS, name_problem

    name = (name or "").strip()
    problem = name_problem("model", name)
    if problem:
        raise ModelNameError(problem)
    if name in REFERENCE_MODELS:
        raise ModelNameError(f"model name {name!r} is reserved for the toolkit's reference rows; choose another name")
    return name


class LocalResultsStore:
    """A results folder (``RESULTS/<task>/<model>/``) read and appended to on this machine."""

    def __init__(self, root: "str | Path"):
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"LocalResultsStore({str(self.root)!r})"

    @property
    def ratings_path(self) -> Path:
        return self.root / RATINGS_FILE

    def link(self, task: str, model: str) -> str:
        """Where the run's provenance is: an absolute path (the Space serves it from there)."""
        return str((self.root / task / model / "summary.json").resolve())

    def runs(self) -> list[StoredRun]:
        """Every run with a readable ``summary.json``, in (task, model) order.

        Raises:
            StoreError: a summary that is not JSON (named, with the fix); a run is never skipped
                silently, since its absence would change the leaderboard.
        """
        out = []
        if not self.root.is_dir():
            return out
        for path in sorted(self.root.glob("*/*/summary.json")):
            try:
                summary = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
                raise StoreError(f"{path}: unreadable run summary ({err}); delete or re-score that run") from None
            task, model = path.parent.parent.name, path.parent.name
            out.append(StoredRun(task, model, path.parent, summary, self.link(task, model)))
        return out

    def rows(self):
        """The per-clip rows of every stored run (an empty frame with the columns when none)."""
        import pandas as pd

        from ..results import RESULT_COLUMNS
        from ..scoring.store import read_stored

        # A damaged file is one error naming it and the fix, as when the runner reads it.
        parts = [read_stored(run.folder / "rows.parquet") for run in self.runs()
                 if (run.folder / "rows.parquet").is_file()]
        parts = [p for p in parts if len(p)]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(RESULT_COLUMNS))

    def has(self, task: str, model: str) -> bool:
        return (self.root / task / model / "summary.json").is_file()

    def check_new_model(self, task: str, model: str) -> str:
        """A valid name not yet used for ``task`` (what the upload form checks before the upload)."""
        name = check_model_name(model)
        if self.has(task, name):
            raise _taken(task, name)
        return name

    @contextlib.contextmanager
    def staging(self) -> Iterator[Path]:
        """A fresh folder to score into (``out=`` of the runner), deleted afterwards."""
        self.root.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.root))
        try:
            yield stage
        finally:
            shutil.rmtree(stage, ignore_errors=True)

    def add(self, stage: "str | Path", task: str, model: str) -> StoredRun:
        """Move the run ``stage/<task>/<model>/`` into the store (atomic rename of the folder)."""
        source = _run_folder(stage, task, model)
        target = self.root / task / model
        target.parent.mkdir(parents=True, exist_ok=True)
        final = self.root / task / f".incoming-{uuid.uuid4().hex}"
        final.mkdir()
        for name in RUN_FILES:
            if (source / name).is_file():
                shutil.copy2(source / name, final / name)
        try:
            os.rename(final, target)  # fails when the target exists: a run is never replaced
        except OSError:
            shutil.rmtree(final, ignore_errors=True)
            raise _taken(task, model) from None
        return StoredRun(task, model, target, _read_summary(target), self.link(task, model))

    def save_ratings(self) -> None:
        """Ratings are written in place by the rating store; nothing to push for a folder."""


def _taken(task: str, model: str) -> ModelNameError:
    return ModelNameError(f"model name {model!r} is already on the {task} leaderboard; choose another name")


def _run_folder(stage: "str | Path", task: str, model: str) -> Path:
    source = Path(stage) / task / model
    if not (source / "summary.json").is_file():
        raise StoreError(f"{source}: no summary.json; score the run before adding it")
    return source


def _read_summary(folder: Path) -> dict:
    return json.loads((folder / "summary.json").read_text(encoding="utf-8"))


class HubResultsStore(LocalResultsStore):
    """A results dataset repo on the Hub, read through a local mirror and appended to by commits.

    Args:
        repo_id: the results repo (``hugvis/hug-vis-results``).
        mirror: local folder of the snapshot (also where scoring stages its runs).
        api: an ``huggingface_hub.HfApi`` (or an object with the same methods: ``snapshot_download``,
            ``create_commit``, ``repo_info``); default ``HfApi()``.
        revision: the branch appended to.
    """

    def __init__(self, repo_id: str, mirror: "str | Path", api: Any = None, revision: str = "main"):
        super().__init__(mirror)
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
            from ..hub_access import require_reachable

            require_reachable(self.repo_id, LOCAL_ALTERNATIVE)
        try:
            info = self.api.repo_info(self.repo_id, repo_type="dataset", revision=self.revision)
            self.api.snapshot_download(repo_id=self.repo_id, repo_type="dataset", revision=info.sha,
                                       local_dir=str(self.root))
        except Exception as err:  # noqa: BLE001 - network, auth and missing-repo errors all end here
            raise StoreError(f"results repo {self.repo_id} cannot be read ({type(err).__name__}: {err}); check the "
                             f"repo id and HF_TOKEN, or {LOCAL_ALTERNATIVE}") from None
        self.base_commit = info.sha

    def add(self, stage: "str | Path", task: str, model: str) -> StoredRun:
        """Commit the run's files to the repo (based on the last pulled revision), then pull."""
        from huggingface_hub import CommitOperationAdd

        source = _run_folder(stage, task, model)
        self.pull()
        if self.has(task, model):
            raise _taken(task, model)
        operations = [CommitOperationAdd(path_in_repo=f"{task}/{model}/{name}", path_or_fileobj=str(source / name))
                      for name in RUN_FILES if (source / name).is_file()]
        self._commit(operations, f"Add {task}/{model}")
        self.pull()
        return StoredRun(task, model, self.root / task / model, _read_summary(self.root / task / model),
                         self.link(task, model))

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
        store = HubResultsStore(repo_id, mirror or tempfile.mkdtemp(prefix="hugvis-results-"), api=api)
        store.pull()
        return store
    return LocalResultsStore(results or tempfile.mkdtemp(prefix="hugvis-results-"))

"""Submitting to the leaderboard: a request validated from the predictions repo's file list alone.

:func:`submit_request` is what ``hugvis leaderboard submit`` and the Space's Submit tab call. It
pins the revision to a commit, lists the repo's files at that commit (no media is downloaded),
checks names and layout with the task scorer's own rules
(:meth:`hug_vis_dataset.tasks.base.TaskScorer.match_names`), sizes against
:class:`~hug_vis_dataset.leaderboard.requests.QueueLimits`, the model-name rules of the results
store, the submitter's pending limit, and that the request duplicates no pending, running or
finished one (same name, or same predictions at the same commit) and no run on the board; then it
writes the request ``PENDING``. A FAILED request frees its name: submitting again replaces it.

:func:`predictions_listing` is the same check the worker repeats before it downloads anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from .requests import (ACTIVE, FAILED, PENDING, QueueLimits, QueueState, RequestError, RequestsRepo,
                       ScoringRequest, request_path, utc_now)


@dataclass(frozen=True)
class PredictionsListing:
    """A predictions repo at one commit, from its file list: what the worker will download."""

    repo: str
    repo_type: str
    revision: str  # the commit
    files: int
    total_bytes: int
    clips: int


def _repo_files(api: Any, repo: str, repo_type: str, revision: str, subfolder: str) -> list[tuple[str, int]]:
    """``(path relative to subfolder, size)`` of every file under ``subfolder`` at ``revision``."""
    prefix = subfolder.strip("/")
    entries = api.list_repo_tree(repo, path_in_repo=prefix or None, recursive=True, revision=revision,
                                 repo_type=repo_type)
    out = []
    for entry in entries:
        size = getattr(entry, "size", None)
        if size is None:  # a folder
            continue
        path = entry.path[len(prefix) + 1:] if prefix else entry.path
        out.append((path, int(size)))
    return out


def predictions_listing(api: Any, task: str, repo: str, revision: str, repo_type: str = "dataset",
                        subfolder: str = "", limits: QueueLimits = QueueLimits()) -> PredictionsListing:
    """Pin ``revision`` and check the predictions from their names and sizes (nothing downloaded).

    Raises:
        RequestError: the repo or revision cannot be read, or the files break a rule (named).
    """
    from ..tasks import get_task
    from ..tasks.submission import sample_folders

    if repo_type not in ("dataset", "model"):
        raise RequestError(f"repo type {repo_type!r}: use dataset or model")
    inner = subfolder.strip("/")
    if inner and ("\\" in inner or any(part in ("", ".", "..") for part in inner.split("/"))):
        raise RequestError(f"subfolder {subfolder!r} is not a plain path inside the repo")
    try:
        info = api.repo_info(repo, repo_type=repo_type, revision=revision or None)
        files = _repo_files(api, repo, repo_type, info.sha, subfolder)
    except Exception as err:  # noqa: BLE001 - missing repo, revision or access all end here
        raise RequestError(f"predictions repo {repo} ({repo_type}) at {revision or 'main'} cannot be listed "
                           f"({type(err).__name__}: {' '.join(str(err).split())[:200]}); check the id, the "
                           "revision and that the repo is public or your token can read it") from None
    where = f"{repo}@{info.sha[:12]}" + (f"/{subfolder.strip('/')}" if subfolder.strip("/") else "")
    if not files:
        raise RequestError(f"{where}: no files; push the predictions first (layout: docs/SCORING.md)")
    if len(files) > limits.max_files:
        raise RequestError(f"{where}: {len(files):,} files, over the limit of {limits.max_files:,}")
    total = sum(size for _, size in files)
    if total > limits.max_total_bytes:
        raise RequestError(f"{where}: {total / 1024**3:.1f} GiB, over the limit of "
                           f"{limits.max_total_bytes / 1024**3:.0f} GiB")
    big = next(((p, s) for p, s in files if s > limits.max_file_bytes), None)
    if big:
        raise RequestError(f"{where}: {big[0]} is {big[1] / 1024**3:.1f} GiB, over the per-file limit of "
                           f"{limits.max_file_bytes / 1024**3:.0f} GiB")
    entries: dict[str, bool] = {}
    for path, _ in files:
        parts = PurePosixPath(path).parts
        entries[parts[0]] = entries.get(parts[0], False) or len(parts) > 1
    matched, unmatched = get_task(task).match_names(entries, sample_folders(path for path, _ in files))
    if unmatched:
        shown = "; ".join(f"{name}: {why}" for name, why in unmatched[:3])
        raise RequestError(f"{where}: {len(unmatched)} entr(y/ies) do not follow the {task} layout ({shown}"
                           f"{' ...' if len(unmatched) > 3 else ''}); see docs/SCORING.md")
    if not matched:
        raise RequestError(f"{where}: no file follows the {task} layout; see docs/SCORING.md")
    return PredictionsListing(repo, repo_type, info.sha, len(files), total, matched)


def _duplicate(state: QueueState, task: str, model: str, listing: PredictionsListing,
               subfolder: str) -> "str | None":
    for request in state.requests:
        if request.status == FAILED:
            continue
        if request.task == task and request.model == model:
            return f"{task}/{model} is already requested ({request.status}); choose another model name"
        if (request.task, request.predictions_repo, request.repo_type, request.subfolder, request.revision) == (
                task, listing.repo, listing.repo_type, subfolder, listing.revision):
            return (f"these predictions ({listing.repo}@{listing.revision[:12]}) are already requested for {task} "
                    f"as {request.model} ({request.status})")
    return None


def submit_request(queue: RequestsRepo, task: str, predictions_repo: str, revision: str, model: str,
                   submitter: str, repo_type: str = "dataset", subfolder: str = "",
                   limits: QueueLimits = QueueLimits(), results: Any = None) -> ScoringRequest:
    """Validate a request and write it PENDING (see the module docstring for every check).

    Args:
        queue: the requests repo.
        results: the results store (a :class:`~hug_vis_dataset.leaderboard.store.LocalResultsStore`
            or ``HubResultsStore``); a name on its board is refused. None skips that check.

    Returns:
        The request as written.

    Raises:
        RequestError: the request breaks a rule; the message names it and the fix.
        ModelNameError: the model name breaks the results store's rules.
    """
    from .. import catalog
    from .store import check_model_name

    if task not in catalog.task_names(with_paper_table=True):
        raise RequestError(f"unknown task {task!r}; choose one of {', '.join(catalog.task_names(with_paper_table=True))}")
    model = check_model_name(model)
    submitter = (submitter or "").strip()
    if not submitter:
        raise RequestError("no submitter: sign in (the Space) or set HF_TOKEN (the command line)")
    subfolder = subfolder.strip("/")
    if results is not None and results.has(task, model):
        raise RequestError(f"{task}/{model} is already on the leaderboard; choose another model name")
    listing = predictions_listing(queue.api, task, predictions_repo, revision, repo_type, subfolder, limits)

    def decide(state: QueueState):
        problem = _duplicate(state, task, model, listing, subfolder)
        if problem:
            raise RequestError(problem)
        active = [r for r in state.requests if r.submitter == submitter and r.status in ACTIVE]
        if len(active) >= limits.max_pending_per_submitter:
            raise RequestError(f"{submitter} has {len(active)} request(s) waiting or running (limit "
                               f"{limits.max_pending_per_submitter}); wait until one finishes")
        now = utc_now()
        request = ScoringRequest(task=task, model=model, predictions_repo=listing.repo, revision=listing.revision,
                                 submitter=submitter, submitted_at=now, repo_type=listing.repo_type,
                                 subfolder=subfolder, requested_revision=revision or "main", files=listing.files,
                                 total_bytes=listing.total_bytes, clips=listing.clips,
                                 history=({"status": PENDING, "at": now},))
        return request, f"Request {request_path(task, model)} ({listing.repo}@{listing.revision[:12]})"

    return queue.update(decide)


def whoami(api: Any) -> str:
    """The Hub user of the token in use (the submitter on the command line)."""
    try:
        return str(api.whoami()["name"])
    except Exception as err:  # noqa: BLE001 - no token, a bad one or no network
        raise RequestError(f"cannot tell who is submitting ({type(err).__name__}); log in with `hf auth login` "
                           "or set HF_TOKEN") from None


__all__ = ["PredictionsListing", "predictions_listing", "submit_request", "whoami"]

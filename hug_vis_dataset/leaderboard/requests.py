"""The leaderboard's request queue: one JSON file per scoring request in a Hub dataset repo.

A submitter's predictions live in their own Hub repo; a request names that repo at a pinned
commit, the task and the model name, and is written to the *requests repo* as
``requests/<task>/<model>.json`` with status ``PENDING``. Workers
(:mod:`hug_vis_dataset.leaderboard.worker`) move it to ``RUNNING`` (with a heartbeat and the
clips scored so far), then ``FINISHED`` (with the run's link in the results repo) or ``FAILED``
(with the reason in one line). ``docs/LEADERBOARD.md`` has the format and the life of a request.

Every state change is one ``create_commit`` whose ``parent_commit`` is the revision the change
was decided on; the Hub refuses a commit whose parent is no longer the branch head (HTTP 412),
so two workers deciding on the same revision cannot both claim a request: the loser re-reads
and decides again (:meth:`RequestsRepo.update`). That compare-and-swap is the only lock.

Request files are untrusted text (anyone with write access, a hand edit): each is validated
(:func:`parse_request`); a malformed one is listed with why and never claimed.

Example:
    >>> request = ScoringRequest(task="matting", model="MyNet", predictions_repo="me/mynet-matting",
    ...                          revision="0" * 40, submitter="me", submitted_at="2026-12-01T00:00:00+00:00")
    >>> request.path, request.status
    ('requests/matting/MyNet.json', 'PENDING')
    >>> parse_request(json.loads(request.to_json()), request.path) == request
    True
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import random
import re
import time
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Callable, Iterable

from ..errors import HugvisError
from ..readers import InputFileError
from ..readers.json_files import read_json
from ..readers.values import format_utc, parse_utc, utc_timestamp

REQUESTS_DIR = "requests"
PENDING, RUNNING, FINISHED, FAILED = "PENDING", "RUNNING", "FINISHED", "FAILED"
STATUSES = (PENDING, RUNNING, FINISHED, FAILED)
#: States that hold a model name and count against the submitter's limit (FAILED frees both).
ACTIVE = (PENDING, RUNNING)
REPO_TYPES = ("dataset", "model")
SCHEMA_VERSION = 1
_COMMIT_RE = re.compile(r"[0-9a-f]{40}")
_REPO_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}")


class RequestError(HugvisError, ValueError):
    """A request that cannot be queued; the message names what to change."""


class QueueConflictError(HugvisError, RuntimeError):
    """The requests repo moved while a change was being written, and retries ran out."""


#: The request fields that hold a time (each read by the one timestamp reader, readers/values.py).
TIME_FIELDS = ("submitted_at", "claimed_at", "heartbeat_at", "finished_at")


def utc_now() -> str:
    """The current UTC time as ISO 8601 (seconds), the format of every timestamp in a request."""
    return format_utc(_dt.datetime.now(_dt.timezone.utc).replace(microsecond=0))


def seconds_since(stamp: "str | None", now: "str | None" = None) -> float:
    """Seconds between an ISO timestamp and ``now`` (infinity when ``stamp`` is missing or unreadable).

    Both are read by the one timestamp reader: a time without a zone is UTC, any offset is converted.

    Example:
        >>> seconds_since("2026-12-01T00:00:00+00:00", "2026-12-01T00:01:30+00:00")
        90.0
        >>> seconds_since("2026-12-01T00:00:00", "2026-12-01T01:01:30+01:00")   # naive = UTC
        90.0
    """
    then = parse_utc(stamp)
    current = parse_utc(now) if now else _dt.datetime.now(_dt.timezone.utc)
    if then is None or current is None:
        return float("inf")
    return (current - then).total_seconds()


@dataclass(frozen=True)
class QueueLimits:
    """What one request may be; checked at submission from the repo's file list and again by the worker.

    The size defaults fit a full-grid vision-driven submission (8,400 1080p clips, tens of GB)
    with margin; a Space can lower them.
    """

    max_pending_per_submitter: int = 2
    max_total_bytes: int = 400 * 1024**3
    max_file_bytes: int = 4 * 1024**3
    max_files: int = 9_000_000  # matting: one PNG per frame


@dataclass(frozen=True)
class ScoringRequest:
    """One request file. Timestamps are UTC ISO 8601; ``history`` lists every state change."""

    task: str
    model: str
    predictions_repo: str
    revision: str  # the commit the predictions were pinned to at submission
    submitter: str
    submitted_at: str
    repo_type: str = "dataset"
    subfolder: str = ""
    requested_revision: str = ""  # what the submitter typed (branch, tag or commit)
    status: str = PENDING
    files: int = 0
    total_bytes: int = 0
    clips: int = 0
    worker: "str | None" = None
    claimed_at: "str | None" = None
    heartbeat_at: "str | None" = None
    scored: int = 0
    total: int = 0
    finished_at: "str | None" = None
    run_link: "str | None" = None
    failure: "str | None" = None
    attempts: int = 0
    history: tuple = ()
    schema: int = SCHEMA_VERSION

    @property
    def path(self) -> str:
        """Where the request lives in the requests repo."""
        return request_path(self.task, self.model)

    @property
    def request_id(self) -> str:
        """A short stable id: the same task, model, repo and commit give the same id."""
        key = "\n".join((self.task, self.model, self.predictions_repo, self.repo_type, self.subfolder, self.revision,
                         self.submitted_at))
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    def moved(self, status: str, now: str, worker: "str | None" = None, **changes: Any) -> "ScoringRequest":
        """A copy in ``status`` with the change appended to the history."""
        entry = {"status": status, "at": now, **({"worker": worker} if worker else {})}
        if worker:
            changes["worker"] = worker
        return replace(self, status=status, history=tuple(self.history) + (entry,), **changes)

    def to_json(self) -> str:
        return json.dumps({**asdict(self), "history": list(self.history)}, indent=2, ensure_ascii=False) + "\n"


def request_path(task: str, model: str) -> str:
    """``requests/<task>/<model>.json``: one request per name on a task's board."""
    return f"{REQUESTS_DIR}/{task}/{model}.json"


def parse_request(data: Any, path: str) -> ScoringRequest:
    """A request read from the repo, validated field by field (:class:`RequestError` names the problem).

    Example:
        >>> parse_request({"task": "matting"}, "requests/matting/x.json")
        Traceback (most recent call last):
        ...
        hug_vis_dataset.leaderboard.requests.RequestError: requests/matting/x.json: missing field 'model'
    """
    from .. import catalog
    from .store import ModelNameError, check_model_name

    if not isinstance(data, dict):
        raise RequestError(f"{path}: not a JSON object")
    known = {f.name: f for f in fields(ScoringRequest)}
    values: dict[str, Any] = {}
    for name in ("task", "model", "predictions_repo", "revision", "submitter", "submitted_at"):
        if not isinstance(data.get(name), str) or not data[name]:
            raise RequestError(f"{path}: missing field {name!r}")
    for name, value in data.items():
        if name not in known:
            raise RequestError(f"{path}: unknown field {name!r}")
        values[name] = tuple(value) if name == "history" and isinstance(value, list) else value
    problems = []
    # Times in their one form (UTC, any offset converted, none = UTC): the queue orders and compares them.
    for name in TIME_FIELDS:
        if isinstance(values.get(name), str):  # another type is the type check's to name
            try:
                values[name] = utc_timestamp(values[name], path, name)
            except InputFileError as err:
                problems.append(f"{name}: {err.problem}")
    history = values.get("history", ())
    if isinstance(history, tuple) and all(isinstance(entry, dict) for entry in history):
        entries = []
        for number, entry in enumerate(history, start=1):
            if "at" in entry:
                try:
                    entry = {**entry, "at": utc_timestamp(entry["at"], path, "at")}
                except InputFileError as err:
                    problems.append(f"history entry {number}: at: {err.problem}")
            entries.append(entry)
        values["history"] = tuple(entries)
    request = ScoringRequest(**values)
    if not isinstance(request.history, tuple) or not all(isinstance(entry, dict) for entry in request.history):
        problems.append("history must be a list of objects")
    if request.task not in catalog.task_names(with_paper_table=True):
        problems.append(f"unknown task {request.task!r}")
    try:
        check_model_name(request.model)
    except ModelNameError as err:
        problems.append(str(err))
    if request.status not in STATUSES:
        problems.append(f"status {request.status!r} is not one of {', '.join(STATUSES)}")
    if not _COMMIT_RE.fullmatch(request.revision):
        problems.append("revision is not a 40-hex commit")
    if request.repo_type not in REPO_TYPES or not _REPO_RE.fullmatch(request.predictions_repo):
        problems.append(f"predictions repo {request.predictions_repo!r} ({request.repo_type}) is not a Hub repo id")
    for name, field_ in known.items():  # the declared types: a worker 0 or a status [] is not a request
        value = getattr(request, name)
        declared = str(field_.type).strip("'\"")
        if declared == "str" and not isinstance(value, str) or \
                declared == "str | None" and not (value is None or isinstance(value, str)):
            problems.append(f"{name} must be a string{' or null' if 'None' in declared else ''}")
    for name in ("files", "total_bytes", "clips", "scored", "total", "attempts", "schema"):
        value = getattr(request, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            problems.append(f"{name} must be an integer >= 0")
    if path != request.path:
        problems.append(f"its task/model say it belongs at {request.path}")
    if problems:
        raise RequestError(f"{path}: {'; '.join(problems)}")
    return request


def read_request_file(path: "str | Path", name: str) -> ScoringRequest:
    """The request stored in ``path`` (its repo path ``name``), read strictly and checked.

    Raises:
        InputFileError: not strict JSON (a key given twice, NaN, a second value, not UTF-8).
        RequestError: JSON that is not a valid request (the message starts with ``name``).
    """
    return parse_request(read_json(path, expect=None), name)


@dataclass
class QueueState:
    """The requests repo at one revision: valid requests oldest first, and the files that are not."""

    head: str
    requests: list[ScoringRequest] = field(default_factory=list)
    damaged: dict[str, str] = field(default_factory=dict)  # path -> why

    def find(self, task: str, model: str) -> "ScoringRequest | None":
        return next((r for r in self.requests if r.task == task and r.model == model), None)

    def position(self, request: ScoringRequest) -> "int | None":
        """1-based place in the queue of a PENDING request (None for any other state)."""
        if request.status != PENDING:
            return None
        pending = [r for r in self.requests if r.status == PENDING]
        return next(i for i, r in enumerate(pending, start=1) if r.path == request.path)


def _order(request: ScoringRequest) -> tuple:
    # by the instant, not the text: every stamp of a parsed request is in its one UTC form
    return (parse_utc(request.submitted_at), request.task, request.model)


def is_conflict(err: BaseException) -> bool:
    """Whether a commit failed because its parent is no longer the head (the Hub's 412)."""
    response = getattr(err, "response", None)
    return getattr(response, "status_code", None) == 412 or type(err).__name__ == "ConflictError"


class RequestsRepo:
    """The requests dataset repo, read at its head and changed by compare-and-swap commits.

    Args:
        repo_id: the requests repo (``hugvis/hug-vis-requests``).
        api: an ``huggingface_hub.HfApi`` (the default honours ``HF_ENDPOINT`` and ``HF_TOKEN``).
        mirror: local folder the request files are downloaded to.
        retries: attempts of one change when the repo keeps moving under it.
    """

    def __init__(self, repo_id: str, api: Any = None, mirror: "str | Path | None" = None, retries: int = 20):
        from ..outputs import mark_scratch, scratch_folder

        self.probe_hub = api is None  # an injected client (a stand-in of the Hub) is used as it is
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi()
        self.repo_id = repo_id
        self.api = api
        # A scratch folder of the toolkit's (snapshots are downloaded into it, and it goes when its worker does).
        self.mirror = mark_scratch(mirror) if mirror else scratch_folder(prefix="hugvis-requests-")
        self.retries = retries

    def __repr__(self) -> str:
        return f"RequestsRepo({self.repo_id!r})"

    def for_thread(self) -> "RequestsRepo":
        """The same repo and client with a mirror of its own (a heartbeat thread reads while the
        worker's thread does: two downloads never share a folder)."""
        clone = RequestsRepo(self.repo_id, api=self.api, mirror=self.mirror.with_name(self.mirror.name + "-thread"),
                             retries=self.retries)
        clone.probe_hub = self.probe_hub
        return clone

    def read(self) -> QueueState:
        """Every request at the current head, validated, oldest first."""
        if self.probe_hub:
            from ..readers.hub_access import require_reachable

            require_reachable(self.repo_id, "check HF_ENDPOINT and the requests repo id")
        try:
            info = self.api.repo_info(self.repo_id, repo_type="dataset", files_metadata=False)
            names = [s.rfilename for s in (info.siblings or [])]
            wanted = [n for n in names if n.startswith(REQUESTS_DIR + "/") and n.endswith(".json")]
            if wanted:
                self.api.snapshot_download(repo_id=self.repo_id, repo_type="dataset", revision=info.sha,
                                           local_dir=str(self.mirror), allow_patterns=[f"{REQUESTS_DIR}/**"])
        except Exception as err:  # noqa: BLE001 - network, auth and missing-repo errors end here
            raise RequestError(f"requests repo {self.repo_id} cannot be read ({type(err).__name__}: "
                               f"{_short(err)}); check the repo id, HF_ENDPOINT and HF_TOKEN") from None
        state = QueueState(info.sha)
        for name in wanted:
            try:
                # strict: a request naming "revision" twice is damaged, not "the last one wins"
                state.requests.append(read_request_file(self.mirror / name, name))
            except InputFileError as err:
                state.damaged[name] = f"unreadable ({err.where + ': ' if err.where else ''}{err.problem})"
            except OSError as err:
                state.damaged[name] = f"unreadable ({type(err).__name__})"
            except RequestError as err:
                state.damaged[name] = str(err).removeprefix(f"{name}: ")
        state.requests.sort(key=_order)
        return state

    def write(self, request: ScoringRequest, parent: str, message: str) -> None:
        """Commit one request file on top of ``parent`` (raises the client's error on a conflict)."""
        from huggingface_hub import CommitOperationAdd

        operation = CommitOperationAdd(path_in_repo=request.path, path_or_fileobj=request.to_json().encode())
        self.api.create_commit(repo_id=self.repo_id, repo_type="dataset", operations=[operation],
                               commit_message=message, parent_commit=parent)

    def update(self, decide: Callable[[QueueState], "tuple[ScoringRequest, str] | None"]) -> "ScoringRequest | None":
        """Read the head, let ``decide`` pick a change (``(request, message)`` or None), commit it on
        that head; on a conflict read again and decide again.

        Returns:
            The request as written, or None when ``decide`` found nothing to change.

        Raises:
            QueueConflictError: the repo moved under every one of ``retries`` attempts.
        """
        for attempt in range(self.retries):
            state = self.read()
            change = decide(state)
            if change is None:
                return None
            request, message = change
            try:
                self.write(request, state.head, message)
                return request
            except Exception as err:  # noqa: BLE001 - a conflict is retried, anything else is reported
                if not is_conflict(err):
                    raise RequestError(f"requests repo {self.repo_id}: '{message}' was not written "
                                       f"({type(err).__name__}: {_short(err)})") from None
            time.sleep(random.uniform(0.05, 0.3) * (1 + attempt))  # several workers: spread the retries
        raise QueueConflictError(f"requests repo {self.repo_id} kept moving; {self.retries} attempts to write "
                                 "failed, try again")


def _short(err: BaseException) -> str:
    return " ".join(str(err).split())[:300]


def claimable(state: QueueState, now: str, stale_after_s: float) -> "ScoringRequest | None":
    """The request a worker should take: the oldest PENDING one, or a RUNNING one whose worker
    stopped sending heartbeats ``stale_after_s`` ago (its worker died: resumed, not restarted).

    Example:
        >>> a = ScoringRequest("matting", "a", "me/a", "0" * 40, "me", "2026-12-01T00:00:00+00:00",
        ...                    status="RUNNING", heartbeat_at="2026-12-01T00:00:00+00:00")
        >>> b = ScoringRequest("matting", "b", "me/b", "1" * 40, "me", "2026-12-01T00:00:05+00:00")
        >>> state = QueueState("h", [a, b])
        >>> claimable(state, "2026-12-01T00:00:30+00:00", 60).model   # a is alive: b is next
        'b'
        >>> claimable(state, "2026-12-01T00:05:00+00:00", 60).model   # a's worker is gone
        'a'
    """
    for request in state.requests:
        if request.status == PENDING:
            return request
        if request.status == RUNNING and seconds_since(request.heartbeat_at, now) > stale_after_s:
            return request
    return None


def summarise(requests: Iterable[ScoringRequest]) -> dict[str, int]:
    """Requests per state, every state listed."""
    counts = dict.fromkeys(STATUSES, 0)
    for request in requests:
        counts[request.status] += 1
    return counts


__all__ = ["ACTIVE", "FAILED", "FINISHED", "PENDING", "QueueConflictError", "QueueLimits", "QueueState",
           "RUNNING", "RequestError", "RequestsRepo", "ScoringRequest", "claimable", "parse_request",
           "request_path", "seconds_since", "utc_now"]

"""The scoring backend of the leaderboard: a worker that takes requests from the queue and scores them.

One request's life in a worker (:meth:`QueueWorker.process`):

1. **claim** the oldest PENDING request, or a RUNNING one whose heartbeat is older than
   ``stale_after_s`` (its worker died), by a compare-and-swap commit
   (:meth:`~hug_vis_dataset.leaderboard.requests.RequestsRepo.update`): two workers never hold
   one request;
2. a **heartbeat** thread commits the time and the clips scored so far every ``heartbeat_s``;
   when it finds the request taken over (this worker was presumed dead) the run stops without
   writing anything;
3. the file list at the pinned commit is checked again (:func:`~hug_vis_dataset.leaderboard.submit.predictions_listing`),
   the predictions are **downloaded** at that commit into ``work_dir/<request id>/`` and compared
   with the listing (files and bytes);
4. the **check-only pass** (:func:`hug_vis_dataset.scoring.check.check_submission`): any problem
   fails the request with the coverage in one line, before a metric is computed;
5. **scoring** by the runner (:func:`hug_vis_dataset.scoring.runner.run` of
   :meth:`QueueWorker.evaluation_request`, Ray actors with GPUs where present, every metric required). The run folder is
   ``work_dir/<request id>/results``: a worker that resumes a dead worker's request on the same
   ``work_dir`` (one machine, or a shared file system) keeps every clip already scored, through the
   runner's resume, bound to the same predictions;
6. the run is **added to the results store** with a verification record
   (:data:`hug_vis_dataset.leaderboard.store.LEADERBOARD_SCORER`, signed with
   ``$HUGVIS_LEADERBOARD_KEY``), and the request becomes FINISHED with the run's link, or FAILED
   with the reason in one line.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .. import stopping
from ..errors import HugvisError, one_line
from .requests import (FAILED, FINISHED, PENDING, RUNNING, QueueLimits, QueueState, RequestsRepo, ScoringRequest,
                       claimable, utc_now)

if TYPE_CHECKING:  # built in evaluation_request only: the queue's own commands load no scorer
    from ..scoring.request import EvaluationRequest


class LeaseLostError(HugvisError, RuntimeError):
    """Another worker took the request over (this one was presumed dead); stop without writing."""


def default_worker_id() -> str:
    """``host:pid``, unique among live workers."""
    return f"{socket.gethostname()}:{os.getpid()}"


class Lease:
    """A worker's hold on one request: heartbeats with progress, and the news that it was lost."""

    def __init__(self, queue: RequestsRepo, request: ScoringRequest, worker_id: str, interval_s: float):
        self.queue, self.request, self.worker_id, self.interval_s = queue.for_thread(), request, worker_id, interval_s
        self.lost = threading.Event()
        self.scored, self.total = request.scored, request.total
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"heartbeat {request.path}", daemon=True)
        self.errors = 0

    def __enter__(self) -> "Lease":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def progress(self, scored: int, total: int) -> None:
        """Record progress (sent with the next heartbeat); raises :class:`LeaseLostError` when lost."""
        self.scored, self.total = scored, total
        self.check()

    def check(self) -> None:
        if self.lost.is_set():
            raise LeaseLostError(f"{self.request.path} was taken over by another worker; stopped")

    def owned(self, state: QueueState) -> "ScoringRequest | None":
        """The request as stored, when this worker still holds it."""
        current = state.find(self.request.task, self.request.model)
        if (current is None or current.status != RUNNING or current.worker != self.worker_id
                or current.request_id != self.request.request_id):
            self.lost.set()
            return None
        return current

    def beat(self) -> None:
        """One heartbeat commit (time and progress), if the request is still ours."""
        from dataclasses import replace

        def decide(state: QueueState):
            current = self.owned(state)
            if current is None:
                return None
            beat = replace(current, heartbeat_at=utc_now(), scored=self.scored, total=self.total)
            if beat == current:  # within the same second and no new clip: nothing to tell
                return None
            return beat, f"Heartbeat {current.path}: {self.scored}/{self.total}"

        self.queue.update(decide)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.beat()
            except HugvisError:
                # A missed heartbeat is retried at the next interval; a worker cut off from the
                # Hub for longer than the stale time loses the request, which is what it should.
                self.errors += 1
            if self.lost.is_set():
                return


class QueueWorker:
    """Takes requests from a requests repo, scores them, and stores the runs (see the module docstring).

    Args:
        queue: the requests repo.
        results: the results store runs are added to (``HubResultsStore`` or a local folder).
        dataset: the reference release (a release tree, a built repo or a Hub id), as ``hugvis evaluate``.
        work_dir: downloads and run folders, one per request; workers sharing it resume each other.
        dataset_revision: Hub revision of ``dataset``.
        heartbeat_s: seconds between heartbeats.
        stale_after_s: a RUNNING request whose last heartbeat is older is taken over.
        poll_s: seconds between looks at an empty queue.
        limits: the size and count limits re-checked before download.
        evaluate_options: passed to the runner (``backend``, ``ray_address``, ``num_proc``, ``device``, ...).
        log: where progress lines go.
    """

    def __init__(self, queue: RequestsRepo, results: Any, dataset: "str | Path", work_dir: "str | Path",
                 worker_id: "str | None" = None, dataset_revision: "str | None" = None, heartbeat_s: float = 60.0,
                 stale_after_s: float = 600.0, poll_s: float = 30.0, limits: QueueLimits = QueueLimits(),
                 evaluate_options: "dict | None" = None, log: Callable[[str], None] = print):
        if stale_after_s <= 2 * heartbeat_s:
            raise ValueError(f"stale_after_s ({stale_after_s:g}) must exceed two heartbeats ({heartbeat_s:g} s each), "
                             "or a live worker's request could be taken over")
        self.queue, self.results, self.dataset = queue, results, dataset
        self.work_dir = Path(work_dir)
        self.worker_id = worker_id or default_worker_id()
        self.dataset_revision = dataset_revision
        self.heartbeat_s, self.stale_after_s, self.poll_s = heartbeat_s, stale_after_s, poll_s
        self.limits = limits
        self.evaluate_options = dict(evaluate_options or {})
        self.log = log

    # -- the loop ------------------------------------------------------------------------------
    def run(self, exit_when_idle: bool = False, max_requests: "int | None" = None) -> int:
        """Process requests until stopped; returns how many this worker took.

        Args:
            exit_when_idle: return once nothing is PENDING or RUNNING anywhere (a RUNNING request of
                another worker is waited for: it may go stale and need resuming).
            max_requests: return after this many requests.
        """
        taken = 0
        with stopping.resume_note(lambda: f"{self.worker_id} held no request ({taken} taken before); "
                                          "start the worker again"):
            while max_requests is None or taken < max_requests:
                request, active = self._claim()
                if request is None:
                    if exit_when_idle and not active:
                        break
                    time.sleep(self.poll_s)
                    continue
                taken += 1
                self.process(request)
        return taken

    def claim(self) -> "ScoringRequest | None":
        """Take the next request (compare-and-swap); None when there is none to take."""
        return self._claim()[0]

    def _claim(self) -> "tuple[ScoringRequest | None, bool]":
        """The claimed request, and whether the revision it was decided on had any request PENDING or
        RUNNING (an idle worker's exit test, read from the same revision, not a second read)."""
        active = False

        def decide(state: QueueState):
            nonlocal active
            now = utc_now()
            active = any(r.status in (PENDING, RUNNING) for r in state.requests)
            candidate = claimable(state, now, self.stale_after_s)
            if candidate is None:
                return None
            taken_over = candidate.status == RUNNING
            claimed = candidate.moved(RUNNING, now, worker=self.worker_id, claimed_at=now, heartbeat_at=now,
                                      attempts=candidate.attempts + 1)
            verb = f"Resume (after {candidate.worker} went silent)" if taken_over else "Claim"
            return claimed, f"{verb} {candidate.path} by {self.worker_id}"

        request = self.queue.update(decide)
        return request, active

    # -- one request ---------------------------------------------------------------------------
    def process(self, request: ScoringRequest) -> str:
        """Score one claimed request; returns its final state (FINISHED, FAILED, or ``lost``)."""
        self.log(f"{self.worker_id}: {request.path} ({request.predictions_repo}@{request.revision[:12]}), "
                 f"attempt {request.attempts}")
        released: list[str] = []
        with stopping.resume_note(lambda: self._stop_note(request, released), overrides=True), \
                Lease(self.queue, request, self.worker_id, self.heartbeat_s) as lease:
            try:
                link = self._score(request, lease)
            except KeyboardInterrupt:  # stopped (stopping.Stopped): hand the request back at once
                released.append(self._release(lease))
                raise
            except LeaseLostError as err:
                self.log(f"{self.worker_id}: {err}")
                return "lost"
            except (HugvisError, ValueError, FileNotFoundError, OSError) as err:
                return self._end(lease, FAILED, failure=one_line(err))
            except Exception as err:  # noqa: BLE001 - one request's crash must not stop the queue
                return self._end(lease, FAILED, failure=f"internal error of the scorer ({type(err).__name__}: "
                                                        f"{one_line(err)}); report it to the leaderboard maintainers")
        return self._end(lease, FINISHED, run_link=link)

    def _release(self, lease: Lease) -> str:
        """Put a stopped worker's request back to PENDING, so the next worker takes it without waiting
        for the heartbeat to go stale; returns what became of it (``released``, ``taken over``, or the
        reason the commit failed: the request then goes stale and is taken over as a dead worker's)."""

        def decide(state: QueueState):
            current = lease.owned(state)
            if current is None:
                return None
            now = utc_now()
            back = current.moved(PENDING, now, heartbeat_at=now, scored=lease.scored, total=lease.total)
            return back, f"Release {current.path} by {self.worker_id} (stopped)"

        try:
            return "released" if self.queue.update(decide) is not None else "taken over"
        except Exception as err:  # noqa: BLE001 - a stop must end even when the Hub cannot be reached
            return f"not released ({type(err).__name__}); it is taken over once its heartbeat is stale"

    def _stop_note(self, request: ScoringRequest, released: list[str]) -> str:
        work = self.work_dir / request.request_id / "results"
        state = released[0] if released else "not released; it is taken over once its heartbeat is stale"
        if state == "released":
            state = "released (PENDING again) for the next worker"
        return (f"request {request.path} {state}; the clips scored so far are kept in {work}, which a worker "
                f"on the same --work-dir resumes")

    def _end(self, lease: Lease, status: str, **changes: Any) -> str:
        """Write the final state if the request is still ours."""

        def decide(state: QueueState):
            current = lease.owned(state)
            if current is None:
                return None
            now = utc_now()
            final = current.moved(status, now, finished_at=now, scored=lease.scored, total=lease.total, **changes)
            return final, f"{status.capitalize()} {current.path}"

        written = self.queue.update(decide)
        if written is None:
            self.log(f"{self.worker_id}: {lease.request.path} was taken over; its final state is the other worker's")
            return "lost"
        self.log(f"{self.worker_id}: {written.path} {status}" + (f": {written.failure}" if written.failure else ""))
        return status

    def _score(self, request: ScoringRequest, lease: Lease) -> str:
        from ..scoring.check import check_submission
        from ..scoring.runner import run
        from .submit import predictions_listing

        listing = predictions_listing(self.queue.api, request.task, request.predictions_repo, request.revision,
                                      request.repo_type, request.subfolder, self.limits)
        folder = self.work_dir / request.request_id
        predictions = self._download(request, folder / "predictions", listing)
        lease.check()
        coverage = check_submission(request.task, predictions, self.dataset, model=request.model,
                                    revision=self.dataset_revision)
        if coverage.problems():
            raise _CheckFailed(coverage)
        lease.progress(0, coverage.grid_size)
        lease.check()

        def on_scored(done: int, todo: int) -> None:
            lease.progress(coverage.grid_size - todo + done, coverage.grid_size)

        out = folder / "results"
        run(self.evaluation_request(request, predictions, out, on_scored))
        lease.check()
        return self._store(request, out)

    def evaluation_request(self, request: ScoringRequest, predictions: "str | Path", out: "str | Path",
                           on_scored: "Callable[[int, int], None] | None" = None) -> "EvaluationRequest":
        """What the runner is asked for a queued request: its downloaded predictions against this worker's
        dataset (at its revision) into ``out``, every metric required (a board row is never partial in its
        metrics), the worker's ``evaluate_options``, recorded as the worker's command line.

        Example:
            >>> from hug_vis_dataset.leaderboard.requests import ScoringRequest
            >>> queued = ScoringRequest("matting", "MyNet", "me/mynet", "0" * 40, "me", "2026-12-01T00:00:00+00:00")
            >>> worker = QueueWorker(None, None, "hugvis/hug-vis", "work", worker_id="w", evaluate_options={"num_proc": 2})
            >>> request = worker.evaluation_request(queued, "work/r1/predictions", "work/r1/results")
            >>> request.require_all_metrics, request.num_proc, request.command_line[:3]
            (True, 2, ('hugvis', 'leaderboard', 'worker'))
        """
        from ..scoring.request import EvaluationRequest

        return EvaluationRequest(
            request.task, predictions, request.model, self.dataset, out, progress=False,
            revision=self.dataset_revision, require_all_metrics=True, on_scored=on_scored,
            command_line=["hugvis", "leaderboard", "worker", "--request", request.request_id,
                          "--predictions-repo", f"{request.predictions_repo}@{request.revision}"],
            **self.evaluate_options)

    def _download(self, request: ScoringRequest, target: Path, listing: Any) -> Path:
        """The predictions at the pinned commit, checked against the listing (files and bytes)."""
        inner = request.subfolder.strip("/")
        try:
            self.queue.api.snapshot_download(repo_id=request.predictions_repo, repo_type=request.repo_type,
                                             revision=request.revision, local_dir=str(target),
                                             allow_patterns=[f"{inner}/**"] if inner else None)
        except Exception as err:  # noqa: BLE001 - network or access errors
            raise DownloadError(f"{request.predictions_repo}@{request.revision[:12]} could not be downloaded "
                                f"({type(err).__name__}: {one_line(err)[:200]})") from None
        root = target / inner if inner else target
        files = [p for p in root.rglob("*") if p.is_file() and ".cache" not in p.relative_to(target).parts[:1]]
        size = sum(p.stat().st_size for p in files)
        if (len(files), size) != (listing.files, listing.total_bytes):
            raise DownloadError(f"{request.predictions_repo}@{request.revision[:12]}: downloaded {len(files)} files, "
                                f"{size} bytes; the repo lists {listing.files} files, {listing.total_bytes} bytes")
        return root

    def _store(self, request: ScoringRequest, out: Path) -> str:
        """Add the run to the results store; a run this request already stored (a worker died after
        adding it) counts as its own."""
        from .store import ModelNameError

        try:
            stored = self.results.add(out, request.task, request.model, verified=True)
            return stored.link
        except ModelNameError:
            if _stored_by(self.results, request):
                return self.results.link(request.task, request.model)
            raise


def _stored_by(results: Any, request: ScoringRequest) -> bool:
    from ..readers.json_files import read_json

    if hasattr(results, "pull"):
        results.pull()
    summary = Path(results.root) / request.task / request.model / "summary.json"
    try:
        line = read_json(summary)["provenance"]["command_line"]  # strict; an InputFileError is a ValueError
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return request.request_id in line


class DownloadError(HugvisError, RuntimeError):
    """The predictions could not be downloaded, or differ from the listed files."""


class _CheckFailed(HugvisError, ValueError):
    """The check-only pass found problems; the message is the coverage in one line."""

    def __init__(self, coverage: Any):
        kinds = [(len(coverage.missing), "missing"), (len(coverage.extra), "extra"),
                 (len(coverage.unmatched), "unmatched"), (len(coverage.duplicates), "duplicate"),
                 (len(coverage.failed), "failing")]
        counts = ", ".join(f"{n} {what}" for n, what in kinds if n)
        first = next(iter(coverage.failed.items()), None)
        example = (f"; first failing clip {first[0]}: {one_line(Exception(first[1]))}" if first else
                   f"; first missing clip {coverage.missing[0]}" if coverage.missing else "")
        super().__init__(f"check-only pass: {coverage.problems()} problem(s) of {coverage.grid_size} clips "
                         f"({counts}){example}; fix the predictions, push them and submit again")


__all__ = ["DownloadError", "Lease", "LeaseLostError", "QueueWorker", "default_worker_id"]

"""``hugvis leaderboard show|push|submit|status|worker``: the leaderboard from the command line.

``show`` prints one paper table beside the stored runs of a results folder (the Space's board,
as Markdown); ``push`` appends the runs of a local results folder to a Hub results repo (one
commit per run, refused when the name is taken), so CLI runs reach the Space's leaderboard.
``submit`` queues a predictions repo for scoring, ``status`` shows the queue and ``worker`` scores
it (``docs/LEADERBOARD.md``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..readers.hub_access import HUB_REQUESTS_ID as DEFAULT_REQUESTS_REPO, HUB_RESULTS_ID as DEFAULT_RESULTS_REPO


def _show(args: argparse.Namespace) -> int:
    from .. import catalog
    from ..presentation.escaping import terminal_markdown
    from ..presentation.tables import markdown_table
    from .board import CLI_REVEAL, DEFAULT_ORIGINS, SYNTHETIC, board, board_rows, clip_rows_of
    from .human_rows import human_rows, simulated_ratings, store_ratings
    from .store import LocalResultsStore

    store = LocalResultsStore(args.results)
    scan = store.scan()
    # Tables 6, 8 and 10 as the Space draws them (leaderboard/human_rows.py): the store's ratings log (or --mos, a
    # ratings CSV, as hugvis report --mos), a synthetic release's simulated raters with --release.
    simulated = simulated_ratings(args.release) if args.release else None
    synthetic = simulated is not None or bool(scan.runs) and all(r.origin == SYNTHETIC for r in scan.runs)
    human = human_rows(str(args.mos) if args.mos else store_ratings(store), simulated, synthetic,
                       all_raters=args.all_raters)
    is_mos = args.table in {t.mos_table for t in catalog.TASKS}
    view = board(board_rows(scan.runs, *human.board_rows()), args.table,
                 tuple(DEFAULT_ORIGINS) + tuple(args.show or ()), reveal=CLI_REVEAL, damaged=scan.damaged,
                 clip_rows=clip_rows_of(scan.runs, *(human.clip_rows() if is_mos else ())),
                 extra_notes=human.notes("pass --all-raters") if is_mos else ())
    print(terminal_markdown(markdown_table(view.frame)))  # a terminal's text, the table's bars kept
    for note in view.notes:
        print(f"- {terminal_markdown(note)}")
    return 0


def _push(args: argparse.Namespace) -> int:
    from .store import HubResultsStore, LocalResultsStore, ModelNameError

    local = LocalResultsStore(args.results)
    from ..outputs import scratch_folder

    hub = HubResultsStore(args.repo, scratch_folder(prefix="hugvis-results-"))
    hub.pull()
    pushed = refused = 0
    scan = local.scan()
    for run in scan.damaged:
        refused += 1
        print(f"skipped {run.task}/{run.model}: damaged run: {run.message()}")
    for run in scan.runs:
        if (args.task and run.task != args.task) or (args.model and run.model != args.model):
            continue
        try:
            stored = hub.add(local.root, run.task, run.model)
        except ModelNameError as err:
            refused += 1
            print(f"skipped {run.task}/{run.model}: {err}")
            continue
        pushed += 1
        print(f"pushed {run.task}/{run.model}: {stored.link}")
    print(f"{pushed} run(s) pushed, {refused} refused")
    return 1 if refused and not pushed else 0


def _submit(args: argparse.Namespace) -> int:
    from .requests import QueueLimits, RequestsRepo
    from .store import open_store
    from .submit import submit_request, whoami

    queue = RequestsRepo(args.requests_repo)
    results = open_store(repo_id=args.results_repo) if args.results_repo else None
    request = submit_request(queue, args.task, args.predictions_repo, args.revision, args.model, whoami(queue.api),
                             repo_type=args.repo_type, subfolder=args.subfolder or "", limits=QueueLimits(),
                             results=results)
    print(f"queued {request.task}/{request.model}: {request.predictions_repo}@{request.revision} "
          f"({request.clips} clip(s), {request.files} file(s), {_size(request.total_bytes)}); "
          f"follow it with: hugvis leaderboard status {request.model} --requests-repo {args.requests_repo}")
    return 0


def _size(n: int) -> str:
    """Bytes in the largest unit that keeps a digit before the point.

    Example:
        >>> _size(500), _size(33_000), _size(5 * 1024**3)
        ('500 B', '32.2 KiB', '5.0 GiB')
    """
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _status(args: argparse.Namespace) -> int:
    from .queue_view import status_lines
    from .requests import RequestsRepo

    state = RequestsRepo(args.requests_repo).read()
    for line in status_lines(state, model=args.model, task=args.task):
        print(line)
    return 0


def _worker(args: argparse.Namespace) -> int:
    from .requests import RequestsRepo
    from .store import open_store
    from .worker import QueueWorker

    import os
    from pathlib import Path

    from ..outputs import claim, discard

    options = {"backend": args.backend, "ray_address": args.ray_address, "num_proc": args.num_proc,
               "device": args.device, "gpus_per_worker": args.gpus_per_worker, "flush_every": args.flush_every}
    # The queue's mirror lives under --work-dir (what the user named), one per process, and goes
    # when the worker ends, stopped or not: never a stray temporary folder.
    claim("hugvis leaderboard worker", args.work_dir, "worker", label="--work-dir",
          inputs=[("--dataset", args.dataset), ("--results", args.results)]).ensure()
    mirror = Path(args.work_dir) / f".requests-{os.getpid()}"
    worker = QueueWorker(RequestsRepo(args.requests_repo, mirror=mirror), open_store(args.results, args.results_repo),
                         args.dataset, args.work_dir, worker_id=args.worker_id, dataset_revision=args.dataset_revision,
                         heartbeat_s=args.heartbeat, stale_after_s=args.stale_after, poll_s=args.poll,
                         evaluate_options={k: v for k, v in options.items() if v is not None})
    try:
        taken = worker.run(exit_when_idle=args.exit_when_idle, max_requests=args.max_requests)
    finally:
        for folder in (mirror, mirror.with_name(mirror.name + "-thread")):
            discard(folder)
    print(f"{worker.worker_id}: {taken} request(s) taken")
    return 0


def _register_queue(sub: Any) -> None:
    from ..cli import positive_int
    from .. import catalog

    submit = sub.add_parser("submit", help="queue a predictions repo on the Hub for scoring by the leaderboard")
    submit.add_argument("task", choices=catalog.task_names(with_paper_table=True))
    submit.add_argument("--predictions-repo", required=True, help="Hub repo holding the predictions (docs/SCORING.md layout)")
    submit.add_argument("--revision", required=True, help="branch, tag or commit; pinned to its commit now")
    submit.add_argument("--model", required=True, help="model name on the board")
    submit.add_argument("--repo-type", choices=("dataset", "model"), default="dataset")
    submit.add_argument("--subfolder", default="", help="folder of the predictions inside the repo (default: its root)")
    submit.add_argument("--requests-repo", default=DEFAULT_REQUESTS_REPO, help=f"default {DEFAULT_REQUESTS_REPO}")
    submit.add_argument("--results-repo", default=DEFAULT_RESULTS_REPO,
                        help=f"results repo whose board names are taken (default {DEFAULT_RESULTS_REPO})")
    submit.set_defaults(func=_submit)
    status = sub.add_parser("status", help="the request queue: states, queue positions, progress, failures")
    status.add_argument("model", nargs="?", help="only this model's requests")
    status.add_argument("--task", help="only this task's requests")
    status.add_argument("--requests-repo", default=DEFAULT_REQUESTS_REPO, help=f"default {DEFAULT_REQUESTS_REPO}")
    status.set_defaults(func=_status)
    worker = sub.add_parser("worker", help="score queued requests (on a GPU machine or a Ray cluster)")
    worker.add_argument("--requests-repo", default=DEFAULT_REQUESTS_REPO, help=f"default {DEFAULT_REQUESTS_REPO}")
    target = worker.add_mutually_exclusive_group(required=True)
    target.add_argument("--results-repo", help="Hub results repo the runs are added to")
    target.add_argument("--results", help="local results folder the runs are added to")
    worker.add_argument("--dataset", required=True, help="the reference release (folder, built repo or Hub id)")
    worker.add_argument("--dataset-revision", default=None, help="Hub revision of --dataset")
    worker.add_argument("--work-dir", required=True,
                        help="downloads and partial runs; workers sharing it resume each other's requests")
    worker.add_argument("--worker-id", default=None, help="name in heartbeats (default host:pid)")
    worker.add_argument("--backend", choices=("local", "ray"), default="ray")
    worker.add_argument("--ray-address", default=None, help="join this Ray cluster (else a local Ray per request)")
    worker.add_argument("--num-proc", type=positive_int, default=1, help="Ray workers (or local processes)")
    worker.add_argument("--device", choices=("cpu", "cuda", "auto"), default="auto")
    worker.add_argument("--gpus-per-worker", type=float, default=None)
    worker.add_argument("--flush-every", type=positive_int, default=None, help="clips per persisted part")
    worker.add_argument("--heartbeat", type=float, default=60.0, help="seconds between heartbeats (default 60)")
    worker.add_argument("--stale-after", type=float, default=600.0,
                        help="take over a RUNNING request silent this many seconds (default 600)")
    worker.add_argument("--poll", type=float, default=30.0, help="seconds between looks at an empty queue")
    worker.add_argument("--exit-when-idle", action="store_true", help="stop once nothing is pending or running")
    worker.add_argument("--max-requests", type=positive_int, default=None, help="stop after this many requests")
    worker.set_defaults(func=_worker)


def register(subparsers: Any) -> None:
    """Add ``hugvis leaderboard show|push|submit|status|worker``."""
    parser = subparsers.add_parser("leaderboard", help="show a paper table beside stored runs, push runs to the Hub, "
                                                       "or submit predictions to the scoring queue")
    sub = parser.add_subparsers(dest="action", required=True)
    show = sub.add_parser("show", help="print a paper table beside the runs of a results folder (Markdown)")
    show.add_argument("results", help="results folder (hugvis evaluate --out)")
    show.add_argument("--table", type=int, required=True, choices=range(4, 12), metavar="4..11")
    show.add_argument("--show", action="append", choices=("synthetic", "subset"),
                      help="also show synthetic-demo or grid-subset runs (never ranked with the paper)")
    show.add_argument("--mos", type=Path, default=None,
                      help="Tables 6, 8, 10: a ratings CSV (as hugvis report --mos) instead of the store's ratings log")
    show.add_argument("--release", type=Path, default=None,
                      help="Tables 6, 8, 10: a synthetic release whose simulated raters a task shows until the study's "
                      "ratings cover it (as the Space)")
    show.add_argument("--all-raters", action="store_true",
                      help="Tables 6, 8, 10: count the raters the study's quality control flags")
    show.set_defaults(func=_show)
    push = sub.add_parser("push", help="append a results folder's runs to a Hub results repo")
    push.add_argument("results", help="results folder (hugvis evaluate --out)")
    push.add_argument("--repo", required=True, help="Hub dataset repo of results, e.g. hugvis/hug-vis-results")
    push.add_argument("--task", help="only this task's runs")
    push.add_argument("--model", help="only this model's runs")
    push.set_defaults(func=_push)
    _register_queue(sub)

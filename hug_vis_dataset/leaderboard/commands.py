"""``hugvis leaderboard show|push``: the leaderboard from the command line.

``show`` prints one paper table beside the stored runs of a results folder (the Space's board,
as Markdown); ``push`` appends the runs of a local results folder to a Hub results repo (one
commit per run, refused when the name is taken), so CLI runs reach the Space's leaderboard.
"""

from __future__ import annotations

import argparse
import tempfile
from typing import Any


def _show(args: argparse.Namespace) -> int:
    from ..report_findings import markdown_table
    from .board import CLI_REVEAL, DEFAULT_ORIGINS, board, board_rows, clip_rows_of
    from .store import LocalResultsStore

    scan = LocalResultsStore(args.results).scan()
    view = board(board_rows(scan.runs), args.table, tuple(DEFAULT_ORIGINS) + tuple(args.show or ()),
                 reveal=CLI_REVEAL, damaged=scan.damaged, clip_rows=clip_rows_of(scan.runs))
    print(markdown_table(view.frame))
    for note in view.notes:
        print(f"- {note}")
    return 0


def _push(args: argparse.Namespace) -> int:
    from .store import HubResultsStore, LocalResultsStore, ModelNameError

    local = LocalResultsStore(args.results)
    hub = HubResultsStore(args.repo, tempfile.mkdtemp(prefix="hugvis-results-"))
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


def register(subparsers: Any) -> None:
    """Add ``hugvis leaderboard show`` and ``hugvis leaderboard push``."""
    parser = subparsers.add_parser("leaderboard", help="show a paper table beside stored runs, or push runs to the Hub")
    sub = parser.add_subparsers(dest="action", required=True)
    show = sub.add_parser("show", help="print a paper table beside the runs of a results folder (Markdown)")
    show.add_argument("results", help="results folder (hugvis evaluate --out)")
    show.add_argument("--table", type=int, required=True, choices=range(4, 12), metavar="4..11")
    show.add_argument("--show", action="append", choices=("synthetic", "subset"),
                      help="also show synthetic-demo or grid-subset runs (never ranked with the paper)")
    show.set_defaults(func=_show)
    push = sub.add_parser("push", help="append a results folder's runs to a Hub results repo")
    push.add_argument("results", help="results folder (hugvis evaluate --out)")
    push.add_argument("--repo", required=True, help="Hub dataset repo of results, e.g. hugvis/hug-vis-results")
    push.add_argument("--task", help="only this task's runs")
    push.add_argument("--model", help="only this model's runs")
    push.set_defaults(func=_push)

"""``hugvis space``: launch the explorer locally (synthetic release by default), or with
``--rater`` the rater app of a blind study (``--study STUDY.json``)."""

from __future__ import annotations

import argparse
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from .app import launch

    launch(args.release, args.results, port=args.port, work_dir=args.work_dir, block=True,
           results_repo=args.results_repo, rater=args.rater, study=args.study, requests_repo=args.requests_repo)
    return 0


def register(subparsers: Any) -> None:
    """Add ``hugvis space``."""
    parser = subparsers.add_parser("space", help="launch the Gradio explorer on 127.0.0.1")
    parser.add_argument("--release", help="release tree (default: a tiny synthetic one)")
    parser.add_argument("--results", help="results folder: the leaderboard's store (hugvis evaluate --out writes it; "
                        "uploads and MOS ratings are stored there too)")
    parser.add_argument("--results-repo", help="a Hub dataset repo as the store instead (mirrored into --results)")
    parser.add_argument("--requests-repo", help="a Hub dataset repo of scoring requests: adds the Submit tab "
                        "(docs/LEADERBOARD.md)")
    parser.add_argument("--port", type=int, default=None, help="port (default: Gradio's, 7860 or the next free)")
    parser.add_argument("--work-dir", help="folder for uploads, figures and MOS ratings (default: a temp folder)")
    parser.add_argument("--rater", action="store_true",
                        help="launch the rater app instead: the blind study alone (no leaderboard, no system names), "
                        "answers stored in --results; see docs/MOS.md")
    parser.add_argument("--study", help="the study file the MOS tab / rater app runs (default: $HUGVIS_STUDY, else "
                        "every simulated system on every clip)")
    parser.set_defaults(func=_run)

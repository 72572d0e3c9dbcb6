"""``hugvis space``: launch the explorer locally (synthetic release by default)."""

from __future__ import annotations

import argparse
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from .app import launch

    launch(args.release, args.results, port=args.port, work_dir=args.work_dir, block=True,
           results_repo=args.results_repo)
    return 0


def register(subparsers: Any) -> None:
    """Add ``hugvis space``."""
    parser = subparsers.add_parser("space", help="launch the Gradio explorer on 127.0.0.1")
    parser.add_argument("--release", help="release tree (default: a tiny synthetic one)")
    parser.add_argument("--results", help="results folder: the leaderboard's store (hugvis evaluate --out writes it; "
                        "uploads and MOS ratings are stored there too)")
    parser.add_argument("--results-repo", help="a Hub dataset repo as the store instead (mirrored into --results)")
    parser.add_argument("--port", type=int, default=None, help="port (default: Gradio's, 7860 or the next free)")
    parser.add_argument("--work-dir", help="folder for uploads, figures and MOS ratings (default: a temp folder)")
    parser.set_defaults(func=_run)

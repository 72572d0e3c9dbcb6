"""``hugvis demo``: the whole pipeline on the synthetic mini-grid (:mod:`hug_vis_dataset.demo.pipeline`).

Synthesizes the mini-grid, validates it, builds the Hub dataset repo and loads a config,
scores every simulated system of every task, and writes the paper-style report.
"""

from __future__ import annotations

from pathlib import Path


def run(out_dir: "str | Path", seed: int = 0, quick: bool = False, num_proc: int = 1, audit: bool = False,
        into_existing: bool = False, people: bool = False) -> int:
    """Run the demo into ``out_dir`` (with ``audit``: the robustness audit's noise floors too; with ``people``:
    the grid of real photographs, :mod:`hug_vis_dataset.synth.people`); returns the exit status."""
    from .pipeline import run_demo

    run_demo(out_dir, quick=quick, seed=seed, num_proc=num_proc, audit=audit, into_existing=into_existing,
             people=people)
    return 0


def register(subparsers) -> None:
    """Add ``hugvis demo``."""
    parser = subparsers.add_parser("demo", help="run the whole pipeline on the synthetic mini-grid")
    from ..readers.hub_access import DEMO_OUT

    parser.add_argument("--out", type=Path, default=DEMO_OUT)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--num-proc", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="a smaller grid (1 actor, 3 emotions, 1 s clips)")
    parser.add_argument("--audit", action="store_true",
                        help="also measure noise floors (hugvis audit robustness) into OUT/audit, shown in the report")
    parser.add_argument("--people", action="store_true",
                        help="actors made of real photographs with planted human-motion defects (hugvis synth --people)")
    from ..outputs import output_option

    output_option(parser)
    parser.set_defaults(func=lambda args: run(args.out, args.seed, args.quick, args.num_proc, args.audit,
                                              args.into_existing, args.people))

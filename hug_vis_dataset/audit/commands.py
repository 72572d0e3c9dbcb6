"""``hugvis audit robustness TASK --dataset D [--out R] [--predictions DIR]``: each metric's noise floor
under ordinary processing (:mod:`hug_vis_dataset.audit.robustness`)."""

from __future__ import annotations

from pathlib import Path


def _robustness(args) -> int:
    from .robustness import audit_robustness, robustness_markdown

    result = audit_robustness(args.task, args.dataset, args.out, predictions=args.predictions,
                              transforms=args.transforms.split(",") if args.transforms else None,
                              num_proc=args.num_proc, n_boot=args.n_boot, device=args.device,
                              progress=not args.no_progress)
    print(robustness_markdown([result.to_json()]))
    print(f"\nrows of the pseudo-systems (reserved names audit@..., never ranked): {result.results_root}")
    return 0


def register(subparsers) -> None:
    """Add ``hugvis audit robustness``."""
    from ..cli import positive_int

    parser = subparsers.add_parser("audit", help="noise floors of the metrics under ordinary processing")
    sub = parser.add_subparsers(dest="audit_command", metavar="AUDIT")
    sub.required = True
    rob = sub.add_parser("robustness", help="score processed copies of the reference (or a submission) as "
                                            "pseudo-systems and report each metric's shift per transform")
    rob.add_argument("task", choices=["matting", "vision_driven", "audio_driven", "voice_cloning"])
    rob.add_argument("--dataset", required=True, help="release tree or built dataset repo")
    rob.add_argument("--out", type=Path, default=Path("audit"),
                     help="the audit's own folder (variants, rows, tables); not a leaderboard results folder")
    rob.add_argument("--predictions", type=Path, default=None,
                     help="apply the transforms to this submission instead of the reference")
    rob.add_argument("--transforms", default="", help="comma-separated subset (default: all of the medium)")
    rob.add_argument("--num-proc", type=positive_int, default=1)
    rob.add_argument("--n-boot", type=positive_int, default=1000)
    rob.add_argument("--device", default="cpu")
    rob.add_argument("--no-progress", action="store_true")
    rob.set_defaults(func=_robustness)

"""``hugvis audit robustness TASK --dataset D [--out R] [--predictions DIR]``: each metric's noise floor
under ordinary processing (:mod:`hug_vis_dataset.audit.robustness`)."""

from __future__ import annotations

import argparse
from pathlib import Path


def _robustness(args) -> int:
    from .robustness import audit_robustness, robustness_markdown

    result = audit_robustness(args.task, args.dataset, args.out, predictions=args.predictions,
                              transforms=[t.strip() for t in args.transforms.split(",") if t.strip()]
                              if args.transforms else None,
                              num_proc=args.num_proc, n_boot=args.n_boot, device=args.device,
                              progress=not args.no_progress)
    print(robustness_markdown([result.to_json()]))
    print(f"\nrows of the pseudo-systems (reserved names audit@..., never ranked): {result.results_root}")
    return 0


def robustness_description() -> str:
    """``hugvis audit robustness --help``'s text: what the audit does and every transform per medium."""
    from .transforms import TRANSFORMS

    lines = ["Noise floors: score processed copies of the reference (or of --predictions) through the normal",
             "scorer as pseudo-systems (reserved names audit@<transform>, never ranked) and report each metric's",
             "shift per transform against the untouched media, beside the paper's gaps between systems.", ""]
    for medium, tasks in (("video", "matting, vision_driven, audio_driven"), ("audio", "voice_cloning")):
        lines.append(f"{medium} transforms ({tasks}):")
        lines += [f"  {t.name:<22} {t.description}" for t in TRANSFORMS if t.medium == medium]
    return "\n".join(lines)


def register(subparsers) -> None:
    """Add ``hugvis audit robustness``."""
    from ..cli import positive_int

    parser = subparsers.add_parser("audit", help="noise floors of the metrics under ordinary processing")
    sub = parser.add_subparsers(dest="audit_command", metavar="AUDIT")
    sub.required = True
    rob = sub.add_parser("robustness", help="score processed copies of the reference (or a submission) as "
                                            "pseudo-systems and report each metric's shift per transform",
                         description=robustness_description(), formatter_class=argparse.RawDescriptionHelpFormatter)
    rob.add_argument("task", choices=["matting", "vision_driven", "audio_driven", "voice_cloning"],
                     help="the task whose metrics are audited (matting and video tasks: video transforms; "
                          "voice_cloning: audio transforms)")
    rob.add_argument("--dataset", required=True, help="release tree or built dataset repo")
    rob.add_argument("--out", type=Path, default=Path("audit"),
                     help="the audit's own folder (variants, rows, tables); not a leaderboard results folder")
    rob.add_argument("--predictions", type=Path, default=None,
                     help="apply the transforms to this submission instead of the reference")
    rob.add_argument("--transforms", default="",
                     help="comma-separated subset of the transforms listed above (default: all of the task's medium)")
    rob.add_argument("--num-proc", type=positive_int, default=1, help="worker processes scoring the variants (default 1)")
    rob.add_argument("--n-boot", type=positive_int, default=1000,
                     help="bootstrap replicates of each shift's actor-clustered interval (default 1000)")
    rob.add_argument("--device", default="cpu", help="device of the network metrics: cpu (default), cuda or auto")
    rob.add_argument("--no-progress", action="store_true", help="no progress bars")
    rob.set_defaults(func=_robustness)

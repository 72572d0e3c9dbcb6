"""``hugvis synth OUT_DIR``: write the synthetic mini-grid (see :func:`hug_vis_dataset.synth.synthesize`).

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(); sub = parser.add_subparsers()
    >>> register(sub)
    >>> args = parser.parse_args(["synth", "out", "--size", "64x36", "--emotions", "Happy", "Sad"])
    >>> args.size, args.emotions, args.actors, args.people
    ((64, 36), ['Happy', 'Sad'], 2, False)
"""

from __future__ import annotations

import argparse
import sys


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = text.lower().split("x")
        return int(w), int(h)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad size {text!r}, expected WIDTHxHEIGHT like 320x180") from None


def register(subparsers) -> None:
    """Add the ``synth`` sub-command."""
    p = subparsers.add_parser("synth", help="write a deterministic synthetic mini-grid release",
                              description="Write a synthetic HUG-VIS release tree plus simulated system outputs.")
    p.add_argument("out_dir", metavar="OUT_DIR")
    p.add_argument("--actors", type=int, default=2, help="actor ids 1..N (default 2)")
    p.add_argument("--scripts", type=int, default=2, help="script ids 1..M (default 2)")
    p.add_argument("--actions", type=int, default=4, help="action ids 1..A (default 4)")
    p.add_argument("--emotions", nargs="+", default=None, help="emotion names (default all seven)")
    p.add_argument("--seconds", type=float, default=2.0, help="clip duration (default 2.0)")
    p.add_argument("--size", type=_size, default=(320, 180), help="WIDTHxHEIGHT (default 320x180)")
    p.add_argument("--fps", type=float, default=30.0)
    p.add_argument("--sample-rate", type=int, default=16000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-systems", action="store_true", help="skip simulated_systems/")
    p.add_argument("--progress", action="store_true", help="show a progress bar")
    p.add_argument("--people", action="store_true",
                   help="actors made of real photographs moved by known motion, speaking with espeak-ng; the "
                        "generation systems plant graded human-motion defects (needs `hugvis weights download "
                        "mediapipe` and espeak-ng)")
    from ..outputs import output_option

    output_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from . import synthesize

    try:
        summary = synthesize(
            args.out_dir, actors=args.actors, emotions=args.emotions, actions=args.actions, scripts=args.scripts,
            seconds=args.seconds, size=args.size, fps=args.fps, sample_rate=args.sample_rate, seed=args.seed,
            systems=not args.no_systems, progress=args.progress, into_existing=args.into_existing,
            people=args.people,
        )
    except ValueError as err:
        from ..errors import one_line
        from ..outputs import OutputError

        if isinstance(err, OutputError):
            raise  # one line on stderr, exit 2, like every command's guard refusal
        print(f"hugvis synth: error: {one_line(err)}", file=sys.stderr)
        return 2
    print(summary)
    return 0

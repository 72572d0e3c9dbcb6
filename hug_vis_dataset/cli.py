"""The ``hugvis`` command line.

Each feature module owns its sub-commands through a ``register(subparsers)`` function that
adds its parser and sets ``func``; this file only lists those modules, so features stay
independent and importing the CLI stays cheap (modules import heavy dependencies lazily).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Sequence

# Modules that contribute sub-commands, in help order. A module missing here is simply
# not offered; a module that fails to import is a bug and raises.
COMMAND_MODULES: tuple[str, ...] = (
    "hug_vis_dataset.synth.commands",
    "hug_vis_dataset.validate",
    "hug_vis_dataset.hub.commands",
    "hug_vis_dataset.demo",
    "hug_vis_dataset.weights_commands",
    "hug_vis_dataset.scoring.commands",
    "hug_vis_dataset.predict.commands",
    "hug_vis_dataset.space.commands",
    "hug_vis_dataset.publish",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hugvis", description="HUG-VIS benchmark toolkit")
    from . import __version__

    parser.add_argument("--version", action="version", version=f"hug-vis {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: "Sequence[str] | None" = None) -> int:
    """Entry point of the ``hugvis`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    status = args.func(args)
    return int(status or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The ``hugvis`` command line.

Each feature module owns its sub-commands through a ``register(subparsers)`` function that
adds its parser and sets ``func``; this file only lists those modules, so features stay
independent and importing the CLI stays cheap (modules import heavy dependencies lazily).

Errors a user can cause (:class:`hug_vis_dataset.errors.HugvisError` and its subclasses, plus
``OSError``/``ValueError`` from the libraries underneath) are printed as one line,
``error: <what> (<file or clip>): <how to fix>``, with exit status 1 (bad data) or 2 (bad
invocation); ``hugvis --debug COMMAND ...`` shows the traceback instead. Options are checked
when parsed (:func:`positive_int`, :func:`positive_float`, :func:`nonnegative_int`), so a bad
value never reaches a command, let alone a result file. SIGINT and SIGTERM stop every command the
same way (:mod:`hug_vis_dataset.stopping`): cleanup runs, one line ``stopped by SIGTERM: <what was
kept>; <how to resume>`` on stderr, exit 130 or 143.

Example:
    >>> positive_int("3")
    3
    >>> try:
    ...     positive_int("0")
    ... except argparse.ArgumentTypeError as err:
    ...     print(err)
    must be a positive integer, got '0'
"""

from __future__ import annotations

import argparse
import importlib
import math
import re
import sys
from typing import Sequence

from .errors import exit_code, one_line

# Modules that contribute sub-commands, in help order, with the sub-commands each registers (a
# test checks the names against what ``register`` adds). The names let a command build only its own
# module's parser: importing all thirteen costs about 0.2 s of CPU, paid by every run of every command.
# A module missing here is simply not offered; a module that fails to import is a bug and raises.
COMMAND_OWNERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hug_vis_dataset.synth.commands", ("synth",)),
    ("hug_vis_dataset.validate.commands", ("validate",)),
    ("hug_vis_dataset.hub.commands", ("build", "storage-report")),
    ("hug_vis_dataset.demo.commands", ("demo",)),
    ("hug_vis_dataset.weights.commands", ("weights",)),
    ("hug_vis_dataset.scoring.commands", ("evaluate",)),
    ("hug_vis_dataset.cache.commands", ("cache",)),
    ("hug_vis_dataset.reporting.commands", ("report", "mos")),
    ("hug_vis_dataset.audit.commands", ("audit",)),
    ("hug_vis_dataset.predict.commands", ("predict",)),
    ("hug_vis_dataset.leaderboard.commands", ("leaderboard",)),
    ("hug_vis_dataset.space.commands", ("space",)),
    ("hug_vis_dataset.publish.commands", ("publish",)),
)
COMMAND_MODULES: tuple[str, ...] = tuple(module for module, _ in COMMAND_OWNERS)


# ----------------------------------------------------------------------------- option types
def _option_int(text: str, invalid: int) -> int:
    # The typed reader (readers/values.py): ASCII digits only, where int() also takes "\u0661\u0662" and "1_2".
    from .readers.values import ascii_int

    try:
        return ascii_int(text, "", "")
    except ValueError:
        return invalid


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (written with the digits 0-9).

    >>> positive_int(" 12 ")
    12
    """
    value = _option_int(text, 0)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return value


def nonnegative_int(text: str) -> int:
    """argparse type: an integer >= 0.

    >>> nonnegative_int("0")
    0
    """
    value = _option_int(text, -1)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0.

    >>> positive_float("0.5")
    0.5
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


# ----------------------------------------------------------------------------- suggestions
def did_you_mean(word: str, choices: "Sequence[str]") -> str:
    """`` (did you mean X?)``: the one name rule's suggestion (:func:`hug_vis_dataset.names.did_you_mean`), imported
    when a suggestion is made (a command's start, before the stop handlers, imports nothing it does not need).

    >>> did_you_mean("evalute", ["evaluate", "report"])
    ' (did you mean evaluate?)'
    """
    from .names import did_you_mean as suggest

    return suggest(word, choices)


class HugvisParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors suggest the closest command or option (sub-parsers made by
    ``add_subparsers`` are of this class too: argparse uses the parent's class)."""

    def error(self, message: str):  # noqa: D102 - argparse's hook
        choice = re.search(r"invalid choice: '([^']*)'", message)
        if choice:
            message += did_you_mean(choice.group(1), [c for a in self._actions for c in (a.choices or ())
                                                      if isinstance(c, str)])
        super().error(message)

    def option_strings(self) -> list[str]:
        """Every option this parser takes (``--out``, ``-h`` ...)."""
        return [o for action in self._actions for o in action.option_strings]


def _chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The deepest sub-command parser the parsed ``args`` went through (``hugvis leaderboard show``)."""
    while True:
        sub = next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)
        name = getattr(args, sub.dest, None) if sub is not None else None
        if name is None or name not in sub.choices:
            return parser
        parser = sub.choices[name]


def _mark_required(parser: argparse.ArgumentParser) -> None:
    """Append ``(required)`` to the help of every required option, in every sub-command."""
    for action in parser._actions:
        if action.option_strings and action.required and "(required)" not in (action.help or ""):
            action.help = f"{action.help} (required)" if action.help else "(required)"
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                _mark_required(child)


def parse_args(parser: argparse.ArgumentParser, argv: "Sequence[str] | None" = None) -> argparse.Namespace:
    """Parse like ``parser.parse_args``, but an unknown option is reported by the sub-command that
    got it (its usage, and the closest option it takes)."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        chosen = _chosen_parser(parser, args)
        options = chosen.option_strings() if isinstance(chosen, HugvisParser) else []
        hint = did_you_mean(extras[0].split("=")[0], options) if extras[0].startswith("-") else ""
        chosen.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
    return args


# ----------------------------------------------------------------------------- entry point
def command_of(argv: "Sequence[str] | None") -> "str | None":
    """The sub-command ``argv`` names (its first token that is not an option), or None.

    >>> command_of(["--debug", "evaluate", "matting"]), command_of(["--help"]), command_of(None)
    ('evaluate', None, None)
    """
    return next((token for token in argv if not token.startswith("-")), None) if argv else None


def build_parser(command: "str | None" = None) -> argparse.ArgumentParser:
    """The ``hugvis`` parser: every sub-command, or only ``command``'s module when it names one.

    The parser of one command parses that command's arguments exactly as the full parser does;
    anything else (no command, a misspelt one, ``--help``) gets the full parser, whose errors list
    and suggest every command.
    """
    parser = HugvisParser(prog="hugvis", description="HUG-VIS benchmark toolkit")
    from . import __version__

    parser.add_argument("--version", action="version", version=f"hug-vis {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    owners = [module for module, commands in COMMAND_OWNERS if command in commands] or list(COMMAND_MODULES)
    for name in owners:
        importlib.import_module(name).register(sub)
    _mark_required(parser)
    return parser


def main(argv: "Sequence[str] | None" = None) -> int:
    """Entry point of the ``hugvis`` console script; returns the exit status.

    Everything the command writes to stdout and stderr goes through the one output rule
    (:func:`hug_vis_dataset.presentation.escaping.safe_output`): control and bidirectional characters shown as escapes,
    and a stream that cannot encode a character (``PYTHONIOENCODING=ascii``) given its escape, never a crash.
    """
    from . import stopping

    # SIGTERM becomes an exception like SIGINT's, so every finally and context manager cleans up
    # (docs/ARCHITECTURE.md, "Stop signals"); installed first, before anything else is imported.
    stopping.install()
    from .presentation.escaping import safe_output

    with safe_output():
        return _main(argv)


def _main(argv: "Sequence[str] | None") -> int:
    from . import stopping

    argv = sys.argv[1:] if argv is None else list(argv)
    args = None
    try:
        parser = build_parser(command_of(argv))
        args = parse_args(parser, argv)
        status = args.func(args)
    except KeyboardInterrupt as err:  # stopping.Stopped included: the one stop line, 130 or 143
        return stopping.finish(err)
    except Exception as err:  # noqa: BLE001 - sorted below: expected errors get one line
        from .errors import HugvisError

        if stopping.requested() is not None:  # an error on the way out of a stop is the stop's
            return stopping.finish(err)
        if getattr(args, "debug", False) or not isinstance(err, (HugvisError, OSError, ValueError)):
            raise
        print(f"error: {one_line(err)}", file=sys.stderr)
        return exit_code(err)
    if stopping.requested() is not None:  # a library caught the stop (Gradio's server loop does)
        return stopping.finish()
    return int(status or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

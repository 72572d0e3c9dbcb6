"""``hugvis validate RELEASE_DIR [--json] [--grid SPEC] [--layout JSON] [--num-proc N] [--strict]``."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import ToolUsageError
from ..datamodel.layout import ReleaseLayout
from .checks import validate_release
from .gridspec import grid_option


def register(subparsers) -> None:
    """Add ``hugvis validate``."""
    parser = subparsers.add_parser("validate", help="check a release tree against the grid and its metadata")
    from ..cli import positive_int

    parser.add_argument("release_dir", type=Path)
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--grid", default=None, type=grid_option,
                        help="expected grid subset, e.g. 'actors=2,actions=4,scripts=2' or 'full' "
                             "(default: metadata/grid.json if present, else the full 8,400-clip grid)")
    parser.add_argument("--layout", type=Path, default=None, help="layout JSON overriding layout.py's default")
    parser.add_argument("--num-proc", type=positive_int, default=1)
    parser.add_argument("--strict", action="store_true",
                        help="exit 1 on warnings too (files no CSV row or layout path accounts for, e.g. an "
                             "unknown file at the top level); without it warnings are printed and exit is 0")
    parser.set_defaults(func=_run)


def _run(args) -> int:
    if not args.release_dir.is_dir():
        raise ToolUsageError(f"release folder {args.release_dir} does not exist; pass the folder holding metadata/")
    layout = ReleaseLayout.from_json(args.layout) if args.layout else None
    report = validate_release(args.release_dir, args.grid, layout, args.num_proc, progress=sys.stderr.isatty())
    print(report.to_json() if args.json else report.to_text())
    if report.ok and args.strict and report.warnings:
        print(f"--strict: {len(report.warnings)} warning(s), see the lines above", file=sys.stderr)
        return 1
    return 0 if report.ok else 1

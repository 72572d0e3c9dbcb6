"""``hugvis build RELEASE_DIR REPO_DIR [--num-proc N] [--allow-invalid] [--resume]``."""

from __future__ import annotations

import sys
from pathlib import Path


def register(subparsers) -> None:
    from ..cli import positive_float, positive_int

    parser = subparsers.add_parser("build", help="build the Hub dataset repo (Parquet + card) from a release tree")
    parser.add_argument("release_dir", type=Path)
    parser.add_argument("repo_dir", type=Path)
    parser.add_argument("--num-proc", type=positive_int, default=1, help="processes (one config each); output is identical")
    parser.add_argument("--allow-invalid", action="store_true",
                        help="build the clips that pass validation and list the ones left out")
    parser.add_argument("--resume", action="store_true",
                        help="keep the checksummed shards of an earlier run in REPO_DIR and finish the build")
    parser.add_argument("--configs", default=None, help="comma-separated subset of configs (default: all)")
    parser.add_argument("--shard-mb", type=positive_float, default=None, help="shard size bound in MiB (default 500)")
    parser.add_argument("--row-group-mb", type=positive_float, default=None, help="row-group size bound in MiB (default 64)")
    parser.set_defaults(func=_run)


def _run(args) -> int:
    from dataclasses import replace

    from .builder import BuildError, BuildOptions, build_repo

    options = BuildOptions()
    if args.shard_mb is not None:
        options = replace(options, shard_bytes=int(args.shard_mb * 2**20))
    if args.row_group_mb is not None:
        options = replace(options, row_group_bytes=int(args.row_group_mb * 2**20))
    configs = [c.strip() for c in args.configs.split(",")] if args.configs else None
    try:
        report = build_repo(args.release_dir, args.repo_dir, num_proc=args.num_proc,
                            allow_invalid=args.allow_invalid, resume=args.resume, options=options, configs=configs)
    except (BuildError, ValueError) as err:
        from ..errors import exit_code, one_line

        print(f"error: {one_line(err)}", file=sys.stderr)
        return exit_code(err)
    print(report.to_text())
    return 0

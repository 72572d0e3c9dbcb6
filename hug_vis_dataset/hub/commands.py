"""``hugvis build RELEASE_DIR REPO_DIR [--num-proc N] [--allow-invalid] [--resume]`` and
``hugvis storage-report REPO_DIR [--release RELEASE_DIR] [--json OUT]``."""

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
    parser.add_argument("--no-storage-report", action="store_true",
                        help="skip measuring media repeated across configs and the size after chunk-level dedup")
    parser.set_defaults(func=_run)

    report = subparsers.add_parser(
        "storage-report", help="bytes per config of a built repo, media repeated across configs, size after chunk dedup")
    report.add_argument("repo_dir", type=Path)
    report.add_argument("--release", type=Path, default=None, help="release tree it was built from (adds its media size, for comparison)")
    report.add_argument("--json", type=Path, default=None, help="also write the numbers to this JSON file")
    report.set_defaults(func=_storage_report)


def _run(args) -> int:
    from dataclasses import replace

    from .builder import BuildError, BuildOptions, build_repo

    options = BuildOptions()
    if args.shard_mb is not None:
        options = replace(options, shard_bytes=int(args.shard_mb * 2**20))
    if args.row_group_mb is not None:
        options = replace(options, row_group_bytes=int(args.row_group_mb * 2**20))
    configs = [c.strip() for c in args.configs.split(",")] if args.configs else None
    from .. import stopping
    from .builder import stop_note

    try:
        with stopping.resume_note(lambda: stop_note(args.repo_dir, args.resume)):
            report = build_repo(args.release_dir, args.repo_dir, num_proc=args.num_proc,
                                allow_invalid=args.allow_invalid, resume=args.resume, options=options,
                                configs=configs, measure_storage=not args.no_storage_report)
    except (BuildError, ValueError) as err:
        from ..errors import exit_code, one_line

        print(f"error: {one_line(err)}", file=sys.stderr)
        return exit_code(err)
    print(report.to_text())
    return 0


def _storage_report(args) -> int:
    import json

    from ..errors import exit_code, one_line
    from .build_info import MANIFEST, BuildError
    from .builder import release_media_bytes
    from .dedup import storage_report

    try:
        if not (args.repo_dir / MANIFEST).is_file():
            raise BuildError(f"{args.repo_dir} has no {MANIFEST}: pass a repo folder written by `hugvis build`")
        release_bytes = None
        if args.release is not None:
            from ..datamodel.release import Release

            release_bytes = release_media_bytes(list(Release(args.release)))
        storage = storage_report(args.repo_dir, release_bytes)
    except (BuildError, OSError, ValueError) as err:
        print(f"error: {one_line(err)}", file=sys.stderr)
        return exit_code(err)
    print(storage.to_text())
    if args.json is not None:
        args.json.write_text(json.dumps(storage.to_dict(), indent=2) + "\n", encoding="utf-8")
    return 0

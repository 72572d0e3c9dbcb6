"""``hugvis publish [--dry-run OUT_DIR] [--org ORG] [--no-dataset] [--wheel WHEEL] ...``.

The command calls the package's functions through the package (``api.materialise``,
``api.publish``, ``api.pypi_versions``), so replacing one of them on :mod:`hug_vis_dataset.publish`
(what the tests do to avoid the network) replaces it for the command too.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .. import publish as api
from . import release_info


def _run(args: argparse.Namespace) -> int:
    common = dict(org=args.org, dataset_repo=args.dataset_repo, dataset_dir=args.dataset_dir, release=args.release,
                  include_dataset=not args.no_dataset, wheel=args.wheel, wheel_url=args.wheel_url)
    try:
        if args.dry_run:
            targets = api.materialise(args.dry_run, **common)
            for target in targets:
                print(f"{target.repo_type} {target.repo_id}: {len(api.local_files(target.folder))} file(s) at "
                      f"{target.folder}")
            print("dry run: the package index was not asked; an upload checks that each Space can install "
                  + release_info.DISTRIBUTION)
            return 0
        # Before materialising (minutes): an offline machine learns at once that it cannot upload.
        api.require_reachable(f"{args.dataset_repo}, {args.org}/*", api.OFFLINE_ALTERNATIVE)
        from ..outputs import scratch

        with scratch(prefix="hugvis-publish-") as tmp:
            targets = api.materialise(Path(tmp) / "out", **common)
            problems = api.check_installable(targets, index_versions=api.pypi_versions, private=args.private)
            if problems:
                raise api.PublishProblems(problems)  # each line names its Spaces
            api.publish(targets, private=args.private)
    except api.PublishError as err:  # one line per problem (PublishProblems: then the count line)
        for line in str(err).splitlines():
            print(f"hugvis publish: {line}", file=sys.stderr)
        return 2
    return 0


def register(subparsers: Any) -> None:
    """Add ``hugvis publish``."""
    parser = subparsers.add_parser(
        "publish", help="materialise (--dry-run) or upload the dataset, the metric Spaces and the explorer Space")
    parser.add_argument("--dry-run", metavar="OUT_DIR", help="write the repos to OUT_DIR and upload nothing")
    parser.add_argument("--org", default=api.DEFAULT_ORG, help="Hub organisation of the Spaces (default: hugvis)")
    parser.add_argument("--dataset-repo", default=api.DEFAULT_DATASET_REPO, help="Hub id of the dataset")
    parser.add_argument("--dataset-dir", help="an already built dataset repo folder (hugvis build)")
    parser.add_argument("--release", help="release tree to build the dataset from (default: a synthetic one)")
    parser.add_argument("--no-dataset", action="store_true", help="publish the Spaces only")
    parser.add_argument("--private", action="store_true", help="create new repos private")
    parser.add_argument("--wheel", metavar="WHEEL",
                        help="bundle this wheel of hug-vis (python -m build) into every Space instead of pinning "
                             "the released version")
    parser.add_argument("--wheel-url", default=release_info.HUB_WHEEL_URL,
                        help="where a Space's build fetches the bundled wheel ({repo_id}, {wheel}, {folder}); "
                             "default: the file in the Space repo on the Hub")
    parser.set_defaults(func=_run)

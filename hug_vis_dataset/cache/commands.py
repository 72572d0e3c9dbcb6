"""``hugvis cache list|clear``: the reference features kept on disk (:mod:`hug_vis_dataset.cache.features`).

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(); sub = parser.add_subparsers()
    >>> register(sub)
    >>> parser.parse_args(["cache", "clear", "--kind", "fid_reference"]).kind
    'fid_reference'
"""

from __future__ import annotations


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _list(args) -> int:
    from .features import FeatureCache

    cache = FeatureCache()
    entries = cache.entries()
    by_kind: dict[str, list[int]] = {}
    for entry in entries:
        by_kind.setdefault(entry["kind"], []).append(entry["bytes"])
    print(f"feature cache {cache.folder}: {len(entries)} entries, {_size(sum(e['bytes'] for e in entries))}")
    for kind, sizes in sorted(by_kind.items()):
        print(f"  {kind}: {len(sizes)} entries, {_size(sum(sizes))}")
    return 0


def _clear(args) -> int:
    from .features import FeatureCache

    cache = FeatureCache()
    count, size = cache.clear(args.kind)
    print(f"removed {count} entries ({_size(size)}) from {cache.folder}")
    return 0


def register(subparsers) -> None:
    """Add ``cache list`` and ``cache clear`` to the ``hugvis`` command line."""
    p = subparsers.add_parser("cache", help="list or clear the cached reference features (FID, CSIM portraits)")
    sub = p.add_subparsers(dest="cache_command", required=True)
    sub.add_parser("list", help="entries and size per feature kind").set_defaults(func=_list)
    clear = sub.add_parser("clear", help="delete cached features (recomputed when next needed)")
    clear.add_argument("--kind", default=None, help="only this kind (fid_reference, portrait_embedding)")
    clear.set_defaults(func=_clear)

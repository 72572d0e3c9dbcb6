"""Measure the built repo's storage: media repeated across configs and the size after chunk-level dedup.

Synthesizes a release (the demo's grid by default), builds the Hub repo with each layout asked for
(pyarrow content-defined pages off/on, row-group sizes), and prints one line per layout: shard
bytes, bytes after chunk-level dedup with Xet-like content-defined chunks (8/64/128 KiB) and with
fixed 64 KiB blocks, each against the release media. The per-config table of the first layout
follows. Sizes are bytes on disk, so the figures do not depend on the machine.

    .venv/bin/python scripts/measure_repo_dedup.py                       # demo grid (28 clips)
    .venv/bin/python scripts/measure_repo_dedup.py --grid quick --row-group-mb 64,1
    .venv/bin/python scripts/measure_repo_dedup.py --release OUT/release  # an existing release tree
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hug_vis_dataset.hub import BuildOptions, build_repo  # noqa: E402
from hug_vis_dataset.hub.cdc import FixedSizeChunker, dedup_size  # noqa: E402
from hug_vis_dataset.hub.dedup import storage_report  # noqa: E402

MiB = 1 << 20
GRIDS = {
    "demo": dict(actors=2, emotions=None, actions=1, scripts=2, seconds=1.5),  # hugvis demo's grid
    "quick": dict(actors=1, emotions=["Happy", "Sad", "Angry"], actions=1, scripts=2, seconds=1.0),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", choices=sorted(GRIDS), default="demo")
    parser.add_argument("--size", default="320x180", help="frame size WxH of the synthetic clips")
    parser.add_argument("--seconds", type=float, default=None, help="clip duration (default: the grid's)")
    parser.add_argument("--release", type=Path, default=None, help="use this release tree instead of synthesizing")
    parser.add_argument("--row-group-mb", default="64", help="comma-separated row-group sizes to compare")
    parser.add_argument("--work", type=Path, default=None, help="keep the release and repos here")
    args = parser.parse_args(argv)

    work = args.work or Path(tempfile.mkdtemp(prefix="hugvis-dedup-"))
    work.mkdir(parents=True, exist_ok=True)
    release = args.release
    if release is None:
        from hug_vis_dataset.synth import synthesize

        grid = dict(GRIDS[args.grid])
        if args.seconds is not None:
            grid["seconds"] = args.seconds
        width, height = (int(v) for v in args.size.lower().split("x"))
        release = work / "release"
        start = time.perf_counter()
        synthesize(release, size=(width, height), systems=False, **grid)
        print(f"synthesized {args.grid} grid {grid} at {width}x{height} in {time.perf_counter() - start:.0f} s")

    first = None
    print(f"{'layout':<28} {'shards MiB':>10} {'CDC dedup MiB':>13} {'fixed-64K MiB':>13} {'x release':>9} "
          f"{'dedup x release':>15}")
    for row_group_mb in (float(v) for v in args.row_group_mb.split(",")):
        for pages in (False, True):
            name = f"rg {row_group_mb:g} MiB, {'CDC' if pages else 'plain'} pages"
            repo = work / f"repo-{row_group_mb:g}-{'cdc' if pages else 'plain'}"
            shutil.rmtree(repo, ignore_errors=True)
            options = BuildOptions(row_group_bytes=int(row_group_mb * MiB), content_defined_chunking=pages)
            report = build_repo(release, repo, options=options)
            storage = report.storage
            shards = [repo / s.file for c in report.shards for s in report.shards[c]]
            fixed = dedup_size(shards, FixedSizeChunker(64 << 10))
            release_bytes = report.release_bytes
            print(f"{name:<28} {storage.shard_bytes / MiB:>10.2f} {storage.shards_dedup.unique_bytes / MiB:>13.2f} "
                  f"{fixed.unique_bytes / MiB:>13.2f} {storage.shard_bytes / release_bytes:>9.2f} "
                  f"{storage.shards_dedup.unique_bytes / release_bytes:>15.2f}")
            first = first or storage_report(repo, release_bytes)
    print(f"\nrelease media {first.release_bytes / MiB:.2f} MiB; distinct media in the repo "
          f"{first.unique_media_bytes / MiB:.2f} MiB (FFV1 alpha and PNG portraits instead of PNG sequences)\n")
    print(first.to_text())
    print(f"\nrelease, repos: {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

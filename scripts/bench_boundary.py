"""Benchmark: boundary-aware matting errors vs Table 11's five metrics, same frames, same process.

Frames: the ``realistic`` set of ``scripts/bench_matting.py`` (the synthetic HUG-VIS figure rendered
at full size, predictions degraded like the simulated matting systems). Prints wall-clock ms per
frame of :func:`hug_vis_dataset.metrics.boundary.score_boundary_clip` and of
:func:`hug_vis_dataset.metrics.matting.score_matting_clip` (all five metrics), their ratio, and the
mean size of each region at this resolution (so the default thin-structure radius can be checked
against the figure: the thin region should hold the fingers and hair strands, not the arms).

Each timing is the fastest of ``--repeat`` runs.

Usage: ``python scripts/bench_boundary.py [--frames 6] [--width 1920] [--height 1080] [--repeat 2]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_matting import realistic_mattes  # noqa: E402


def best_of(repeat: int, run) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    from hug_vis_dataset.metrics.boundary import score_boundary_clip
    from hug_vis_dataset.metrics.matting import score_matting_clip

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=6)
    parser.add_argument("--width", type=int, default=1920)
    parser.add_argument("--height", type=int, default=1080)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    pred, ref = realistic_mattes(args.frames, args.height, args.width)
    score_matting_clip(pred[:2], ref[:2])  # compile the numba kernels outside the timing
    scored = score_boundary_clip(pred, ref)
    boundary = best_of(args.repeat, lambda: score_boundary_clip(pred, ref))
    table11 = best_of(args.repeat, lambda: score_matting_clip(pred, ref))
    T = args.frames
    print(f"{args.width}x{args.height}, {T} frames")
    print(f"boundary regions (6 regions x 4 errors): {boundary / T * 1e3:8.1f} ms/frame")
    print(f"Table 11 metrics (all five):              {table11 / T * 1e3:8.1f} ms/frame")
    print(f"ratio boundary / Table 11:                {boundary / table11:8.2f}")
    print("region sizes (mean pixels per frame) and MAD x1e3:")
    for region in scored["regions"]:
        clip = scored["clip"][region]
        print(f"  {region:8s} {clip['mean_size']:10.0f}  MAD {clip['mad']:8.2f}  empty frames {clip['empty_frames']}")
    print("pixel sizes at this height:", {k: round(v, 2) for k, v in scored["pixel_sizes"].items()})


if __name__ == "__main__":
    main()

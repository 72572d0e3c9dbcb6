#!/usr/bin/env python
"""Benchmark the Hub dataset builder on a synthetic grid.

Prints:
  * build throughput (clips/s, MB/s of release media) and peak memory of the build process;
  * repo size vs release size;
  * iteration time of the ``matting`` config through ``datasets`` (decode every video frame and
    every alpha frame) as a ratio to decoding the same raw release files directly (PyAV on the
    MP4, cv2 on the PNGs); target <= 1.25x;
  * peak memory (VmHWM, else ru_maxrss, of a fresh build process) for clips ``--long-factor`` times longer
    than the default; target: flat (within 15% or 50 MiB);
  * with ``--alpha-codecs``: size and torchcodec decode time of each lossless alpha codec on the
    grid's own mattes (the numbers behind the card's "Alpha storage" table).

Usage:
    .venv/bin/python scripts/bench_dataset.py [--actors 1] [--emotions Happy,Sad] [--actions 1]
        [--scripts 2] [--seconds 2] [--size 320x180] [--long-factor 10] [--alpha-codecs]
        [--workdir DIR] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MiB = 1 << 20

_BUILD_CHILD = r"""
import json, resource, sys, time
from hug_vis_dataset.hub import build_repo
from hug_vis_dataset.validate import GridSpec
t0 = time.perf_counter()
report = build_repo(sys.argv[1], sys.argv[2], grid=GridSpec.from_dict(json.loads(sys.argv[3])))
seconds = time.perf_counter() - t0
# Linux keeps ru_maxrss across exec, so a child forked from a big parent reports the parent's
# size; VmHWM is the peak of this process's own address space.
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
except (OSError, StopIteration):
    pass
print(json.dumps({"seconds": seconds, "clips": report.clips, "release_bytes": report.release_bytes,
                  "repo_bytes": report.repo_bytes, "maxrss_kib": peak}))
"""


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def synth(out: Path, args, seconds: float) -> dict:
    from hug_vis_dataset.synth import synthesize

    w, h = (int(v) for v in args.size.lower().split("x"))
    emotions = args.emotions.split(",") if args.emotions else None
    t0 = time.perf_counter()
    synthesize(out, actors=args.actors, emotions=emotions, actions=args.actions, scripts=args.scripts,
               seconds=seconds, size=(w, h), seed=0, systems=False)
    print(f"synthesized {out} ({seconds:g} s clips) in {time.perf_counter() - t0:.1f} s")
    from hug_vis_dataset.datamodel.grid import EMOTION_NAMES

    return {"actors": args.actors, "emotions": emotions or list(EMOTION_NAMES), "actions": args.actions,
            "scripts": args.scripts}


def build_in_subprocess(release: Path, repo: Path, grid: dict) -> dict:
    shutil.rmtree(repo, ignore_errors=True)
    done = subprocess.run([sys.executable, "-c", _BUILD_CHILD, str(release), str(repo), json.dumps(grid)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"build failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def iterate_datasets(repo: Path, cache_dir: str) -> tuple[float, int]:
    from hug_vis_dataset.hub import load_config

    ds = load_config(repo, "matting", cache_dir=cache_dir)  # preparation is not timed
    t0 = time.perf_counter()
    frames = 0
    for row in ds:
        video, alpha = row["video"], row["alpha_matte"]
        rgb = video.get_frames_in_range(0, len(video)).data
        matte = alpha.get_frames_in_range(0, len(alpha)).data[:, 0]
        frames += rgb.shape[0] + matte.shape[0]
    return time.perf_counter() - t0, frames


def iterate_raw(release: Path) -> tuple[float, int]:
    import cv2

    from hug_vis_dataset.readers.media import alpha_frame_files, iter_video_frames
    from hug_vis_dataset.datamodel.release import Release

    records = list(Release(release))
    t0 = time.perf_counter()
    frames = 0
    for record in records:
        for chunk in iter_video_frames(record.video_path, chunk_frames=64):
            frames += len(chunk)
        files = alpha_frame_files(record.alpha_matte_path)
        frames += len(np.stack([cv2.imread(str(files[i]), cv2.IMREAD_UNCHANGED) for i in sorted(files)]))
    return time.perf_counter() - t0, frames


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--actors", type=int, default=1)
    parser.add_argument("--emotions", default="Happy,Sad")
    parser.add_argument("--actions", type=int, default=1)
    parser.add_argument("--scripts", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--size", default="320x180")
    parser.add_argument("--long-factor", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--alpha-codecs", action="store_true")
    parser.add_argument("--skip-long", action="store_true")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args(argv)

    work = args.workdir or Path(tempfile.mkdtemp(prefix="hugvis-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    release, repo = work / "release", work / "repo"
    shutil.rmtree(release, ignore_errors=True)
    grid = synth(release, args, args.seconds)

    base = build_in_subprocess(release, repo, grid)
    mb = base["release_bytes"] / MiB
    print(f"\nbuild: {base['clips']} clips in {base['seconds']:.2f} s -> {base['clips'] / base['seconds']:.2f} clips/s, "
          f"{mb / base['seconds']:.2f} MB/s of release media (incl. validation)")
    release_total = tree_bytes(release)
    print(f"sizes: release tree {release_total / MiB:.2f} MiB (media {mb:.2f} MiB), repo {tree_bytes(repo) / MiB:.2f} MiB "
          f"-> repo/release = {tree_bytes(repo) / release_total:.2f}x (6 configs, each self-contained)")
    matting = sum(p.stat().st_size for p in (repo / "data" / "matting").glob("*.parquet"))
    print(f"        matting config alone {matting / MiB:.2f} MiB")

    os.environ["HF_HUB_OFFLINE"] = "1"
    cache = tempfile.mkdtemp(prefix="hugvis-bench-cache-")
    iterate_datasets(repo, cache)  # warm-up: page cache, codec init
    iterate_raw(release)
    ds_best = min(iterate_datasets(repo, cache)[0] for _ in range(args.repeats))
    raw_best, frames = min(iterate_raw(release) for _ in range(args.repeats))
    ratio = ds_best / raw_best
    print(f"\nmatting iteration ({frames} video+alpha frames, best of {args.repeats}): datasets {ds_best * 1e3:.0f} ms, "
          f"raw PyAV+cv2 {raw_best * 1e3:.0f} ms -> ratio {ratio:.2f}x  [target <= 1.25x: "
          f"{'PASS' if ratio <= 1.25 else 'FAIL'}]")

    if args.alpha_codecs:
        from hug_vis_dataset.hub.alpha import measure_alpha_codecs
        from hug_vis_dataset.readers.media import iter_alpha_frames
        from hug_vis_dataset.datamodel.release import Release

        first = next(iter(Release(release)))
        frames_a = np.concatenate(list(iter_alpha_frames(first.alpha_matte_path)))
        print(f"\nalpha codecs on {first.clip_id} ({frames_a.shape[0]} frames {frames_a.shape[2]}x{frames_a.shape[1]}):")
        for m in measure_alpha_codecs(frames_a, repeats=args.repeats):
            print(f"  {m.codec:18s} {m.bytes / 1024:8.1f} KiB  {m.size_vs_png:5.2f}x PNGs  "
                  f"decode {m.decode_seconds * 1e3:6.1f} ms  bit-exact {m.exact}")

    if not args.skip_long:
        long_release = work / "release_long"
        shutil.rmtree(long_release, ignore_errors=True)
        synth(long_release, args, args.seconds * args.long_factor)
        long = build_in_subprocess(long_release, work / "repo_long", grid)
        a, b = base["maxrss_kib"] / 1024, long["maxrss_kib"] / 1024
        flat = b <= a * 1.15 or b - a <= 50
        print(f"\npeak RSS of the build: {a:.0f} MiB ({args.seconds:g} s clips) vs {b:.0f} MiB "
              f"({args.seconds * args.long_factor:g} s clips, media {long['release_bytes'] / MiB:.1f} MiB) -> "
              f"{b / a:.2f}x  [target flat: {'PASS' if flat else 'FAIL'}]")
        print(f"long build: {long['clips'] / long['seconds']:.2f} clips/s, "
              f"{long['release_bytes'] / MiB / long['seconds']:.2f} MB/s")
    if args.workdir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: a store whose runs hold several samples per clip, against the same store with one, on the full grid.

Two simulated stores of the same seed (:func:`hug_vis_dataset.synth.fullgrid.simulated_store`: 30 actors x 280
clips, ``--models`` systems of ``vision_driven`` and ``matting``, matting with its per-frame rows), one with one
sample per clip and one with ``--samples`` K, each measured at the doors a user calls:

* every run read and validated (:func:`hug_vis_dataset.scoring.runs.scan_runs`, in this process: what the board
  and the Space do; the per-clip means over the samples and the per-frame sums are computed here);
* ``hugvis report`` of the store (a subprocess: wall clock and CPU seconds), whose Findings hold the Seeds block for
  the K-sample store;
* the Seeds block alone (:func:`hug_vis_dataset.reporting.findings.seeds_frames` of each task: the seed spread and
  every neighbour pair's rank stability over 1,000 one-seed draws).

The ratio K-sample / one-sample is printed for each. What to expect: reading grows with the stored rows (about K
times the per-clip rows and per-frame rows), while every interval and verdict runs on the per-clip means, so the
rest of the report costs what the one-sample report costs, plus the Seeds block.

Usage: ``python scripts/bench_samples.py [--samples 3] [--models 10] [--actors 30] [--seconds 6] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_report import run_door, timed  # noqa: E402

TASKS = ("vision_driven", "matting")


def make_store(root: Path, samples: int, models: int, actors: int, seconds: float) -> Path:
    from hug_vis_dataset.synth.fullgrid import simulated_store

    store = root / f"store_k{samples}"
    if not (store / "results").is_dir():
        simulated_store(store, models=models, actors=actors, tasks=TASKS, seconds=seconds, samples=samples,
                        progress=lambda text: print(f"  [K={samples}] {text}", flush=True))
    return store


def measure(store: Path, out: Path) -> dict:
    import pandas as pd

    from hug_vis_dataset.reporting.findings import seeds_frames
    from hug_vis_dataset.scoring import runs as runs_module
    from hug_vis_dataset.statistics.evidence import comparisons_of

    runs_module._CACHE.clear()
    wall, cpu, (runs, damaged) = timed(lambda: runs_module.scan_runs(store / "results"))
    if damaged:
        raise SystemExit(f"damaged runs in {store}: {damaged[0].message()}")
    out_of = {"read every run": (wall, cpu)}
    rows = pd.concat([r.rows for r in runs], ignore_index=True)
    samples = {(r.task, r.model): r.sample_rows for r in runs if r.sample_rows is not None}
    stored = sum(len(r.sample_rows) if r.sample_rows is not None else len(r.rows) for r in runs)
    comparisons = comparisons_of(rows)

    def seeds() -> None:
        for task in TASKS:
            seeds_frames(rows[rows["task"] == task], task, samples, comparisons)

    out_of["Seeds block"] = timed(seeds)[:2] if samples else (0.0, 0.0)
    out_of["hugvis report"] = run_door(["report", str(store / "results"), "--out", str(out), "--format", "md"])[:2]
    return {"times": out_of, "stored rows": stored, "per-clip rows": len(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--actors", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--keep", type=Path, default=None, help="where the two stores are kept (made when absent)")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench_samples_"))
    root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    stores = {k: make_store(root, k, args.models, args.actors, args.seconds) for k in (1, args.samples)}
    print(f"stores made in {time.perf_counter() - started:.0f} s under {root}", flush=True)
    results = {k: measure(store, root / f"report_k{k}") for k, store in stores.items()}
    one, many = results[1], results[args.samples]
    print(f"\n{args.models} systems x {TASKS} on {args.actors} actors; stored rows: K=1 {one['stored rows']:,}, "
          f"K={args.samples} {many['stored rows']:,} (per-clip rows {many['per-clip rows']:,} in both)")
    print(f"{'door':<18} {'K=1 wall':>9} {'CPU':>7} {f'K={args.samples} wall':>10} {'CPU':>7} {'ratio':>6}")
    for door in one["times"]:
        (w1, c1), (wk, ck) = one["times"][door], many["times"][door]
        ratio = f"{wk / w1:.2f}" if w1 > 0 else "-"
        print(f"{door:<18} {w1:9.2f} {c1:7.2f} {wk:10.2f} {ck:7.2f} {ratio:>6}")


if __name__ == "__main__":
    main()

"""Benchmark: the report, the board and the Findings on a simulated store of the full grid, against today's goals.

The store (:func:`hug_vis_dataset.synth.fullgrid.simulated_store`: 30 actors x 280 clips, 10 systems per task, every
task, matting with its per-frame rows, tens of thousands of MOS ratings and pairwise answers) is made once and kept
(``--store``). Then, each at the door a user calls:

* ``hugvis report`` of the store with its ratings and answers (a subprocess: wall clock and CPU seconds);
* the board: ``hugvis leaderboard show`` of Table 11 (a subprocess, reading the store cold), and in one process with
  the store read (what the Space does per redraw) every table's board, the first and the slowest;
* the Findings tab's joint table of each generation task (the Space's function, counted ratings);
* the demo's report (``--demo-results``, default ``demo_out/results`` when it exists);
* ratios against the generic path in the same process: one task table's intervals by re-evaluating the pandas
  table on rebuilt replicate frames (:func:`hug_vis_dataset.statistics.generic.bootstrap_ci`, a few replicates,
  scaled to ``--n-boot``) vs the engine's vectorised replicates; one board column's verdicts by the pandas path of
  :func:`hug_vis_dataset.metrics.significance.neighbour_tests` vs the engine's.

Goals (issue 50, on 2 cores): the full grid's report under 60 s wall, the demo's under 10 s, the board's first table
and the Findings joint table under 3 s.

Usage: ``python scripts/bench_report.py [--store DIR] [--models 10] [--actors 30] [--n-boot 1000]
[--demo-results demo_out/results] [--reference-replicates 2]``
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOALS = {"report (full grid)": 60.0, "report (demo)": 10.0, "board, first table": 3.0,
         "Findings joint table (slowest task)": 3.0}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_door(args: list[str]) -> tuple[float, float, str]:
    """(wall s, CPU s, last output line) of one ``hugvis`` command in a fresh process."""
    before = _children_cpu()
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", *args], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    wall = time.perf_counter() - start
    if out.returncode:
        raise SystemExit(f"hugvis {' '.join(args)} failed ({out.returncode}): {out.stderr.strip()[-400:]}")
    return wall, _children_cpu() - before, (out.stdout.strip().splitlines() or [""])[-1]


def timed(fn):
    start, cpu = time.perf_counter(), time.process_time()
    value = fn()
    return time.perf_counter() - start, time.process_time() - cpu, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=None, help="where the simulated store is (made when absent)")
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--actors", type=int, default=30)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--demo-results", type=Path, default=REPO / "demo_out" / "results")
    parser.add_argument("--reference-replicates", type=int, default=2,
                        help="replicates of the generic path to time (its cost per replicate is scaled to --n-boot)")
    args = parser.parse_args()

    from hug_vis_dataset.synth.fullgrid import simulated_store

    store = args.store or Path(tempfile.gettempdir()) / f"hugvis-bench-store-{args.models}x{args.actors}"
    if not (store / "results").is_dir():
        wall, cpu, _ = timed(lambda: simulated_store(store, models=args.models, actors=args.actors,
                                                     progress=lambda s: print(f"  store: {s}", flush=True)))
        print(f"simulated store made in {wall:.1f} s ({cpu:.1f} s CPU): {store}")
    results, ratings, answers = store / "results", store / "mos_ratings.csv", store / "pairwise_ratings.csv"
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    rows_out: list[tuple[str, float, float, str]] = []

    with tempfile.TemporaryDirectory() as tmp:
        wall, cpu, _ = run_door(["report", str(results), "--out", str(Path(tmp) / "report"), "--mos", str(ratings),
                                 "--preferences", str(answers), "--n-boot", str(args.n_boot), "--quiet"])
        rows_out.append(("report (full grid)", wall, cpu, "hugvis report RESULTS --mos --preferences"))
        demo = args.demo_results
        if demo.is_dir():
            systems = demo.parent / "release" / "simulated_systems"
            extra = [f for flag, name in (("--mos", "mos_ratings.csv"), ("--preferences", "pairwise_ratings.csv"))
                     if (systems / name).is_file() for f in (flag, str(systems / name))]
            wall, cpu, _ = run_door(["report", str(demo), "--out", str(Path(tmp) / "demo-report"), "--quiet", *extra])
            rows_out.append(("report (demo)", wall, cpu, f"hugvis report {demo}"))
        else:
            print(f"(no demo results at {demo}: run `make demo` first to time the demo's report)")
        wall, cpu, _ = run_door(["leaderboard", "show", str(results), "--table", "11", "--show", "synthetic"])
        rows_out.append(("leaderboard show --table 11 (reads the store)", wall, cpu, "a fresh process"))

    _in_process(results, ratings, rows_out)
    _reference_ratios(results, args.n_boot, args.reference_replicates)
    print()
    print("| step | wall s | CPU s | goal | |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, wall, cpu, what in rows_out:
        goal = GOALS.get(name)
        verdict = "" if goal is None else ("met" if wall < goal else "NOT met")
        print(f"| {name} ({what}) | {wall:.2f} | {cpu:.2f} | {'' if goal is None else f'< {goal:g}'} | {verdict} |")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


def _in_process(results: Path, ratings: Path, rows_out: list) -> None:
    """The store read once (the Space's start), then what the Space computes per view."""
    from hug_vis_dataset import catalog
    from hug_vis_dataset.leaderboard.board import board, board_rows, clip_rows_of
    from hug_vis_dataset.datamodel.paper_tables import paper_data
    from hug_vis_dataset.reporting.findings import pooled_rows
    from hug_vis_dataset.scoring.runs import scan_runs
    from hug_vis_dataset.space.findings_view import joint_finding
    from hug_vis_dataset.statistics.evidence import Comparisons
    from hug_vis_dataset.studies.judgments import counted_ratings

    wall, cpu, (runs, _) = timed(lambda: scan_runs(results))
    rows_out.append(("store read (the Space's start)", wall, cpu, f"{len(runs)} runs"))
    tables = [int(t["table"]) for t in paper_data()["tables"]]
    times = []
    for table in tables:
        wall, cpu, _ = timed(lambda: board(board_rows(runs), table, ("paper", "synthetic"),
                                           clip_rows=clip_rows_of(runs)))
        times.append((wall, cpu, table))
    rows_out.append(("board, first table", times[0][0], times[0][1], f"Table {times[0][2]}, store read"))
    slowest = max(times)
    rows_out.append(("board, slowest table", slowest[0], slowest[1], f"Table {slowest[2]}"))
    rows = __import__("pandas").concat([r.rows for r in runs], ignore_index=True)
    pooled = pooled_rows(rows, Comparisons.from_runs(runs))
    counted = counted_ratings(ratings)[0]
    worst = (0.0, 0.0, "")
    for task in [t.name for t in catalog.TASKS if t.mos_table]:
        wall, cpu, (table, _, _) = timed(lambda: joint_finding(pooled, task, counted, "the study's ratings",
                                                               counted=True))
        worst = max(worst, (wall, cpu, f"{catalog.task(task).label}, {len(table)} rows"))
    rows_out.append(("Findings joint table (slowest task)", *worst))


def _reference_ratios(results: Path, n_boot: int, replicates: int) -> None:
    """The generic path against the engine on the same rows, in this process."""
    from hug_vis_dataset import catalog
    from hug_vis_dataset.metrics.significance import neighbour_tests
    from hug_vis_dataset.scoring.aggregate import task_table
    from hug_vis_dataset.scoring.runs import scan_runs
    from hug_vis_dataset.statistics.generic import bootstrap_ci
    from hug_vis_dataset.statistics.intervals import table_intervals
    from hug_vis_dataset.statistics.sums import RowsIndex
    from hug_vis_dataset.statistics.verdicts import neighbour_verdicts, ranking

    import pandas as pd

    runs = [r for r in scan_runs(results)[0] if r.task == "vision_driven"]
    rows = pd.concat([r.rows for r in runs], ignore_index=True)
    metrics = list(catalog.table_metrics("vision_driven"))
    ok = rows[rows["status"] == "ok"]
    old_wall, _, _ = timed(lambda: bootstrap_ci(ok, lambda f: task_table(f, metrics=metrics).drop(
        columns=["n_ok", "n_failed", "n_missing"]), n_boot=replicates, seed=0))
    new_wall, _, _ = timed(lambda: table_intervals(rows, metrics, n_boot, seed=0))
    per_old = old_wall / replicates
    print(f"\nvision-driven table intervals, {len(rows):,} rows, {n_boot} replicates: generic path "
          f"{per_old:.2f} s a replicate (~{per_old * n_boot:.0f} s for {n_boot}), engine {new_wall:.2f} s for all: "
          f"ratio ~{per_old * n_boot / new_wall:.0f}x")
    table = task_table(rows, metrics=["psnr"])
    order = ranking(table, "psnr")
    psnr = rows[rows["metric"] == "psnr"]
    old_wall, _, _ = timed(lambda: neighbour_tests(psnr, True, order))
    index = RowsIndex(rows)
    new_wall, _, _ = timed(lambda: neighbour_verdicts(index, "vision_driven", "psnr", order))
    print(f"PSNR neighbour verdicts, {len(order) - 1} pairs: pandas path {old_wall:.2f} s, engine {new_wall:.2f} s "
          f"(arranging the rows included): ratio {old_wall / new_wall:.1f}x")


if __name__ == "__main__":
    main()

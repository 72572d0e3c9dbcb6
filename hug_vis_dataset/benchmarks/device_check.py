"""The device check (issue 47): every network metric scored on the CPU and on the GPU by one command.

A GPU is lent only now and then, for minutes, so this check is prepared to run there once, from a fresh copy of
the tree, without a second try. On the same synthetic clips it scores each network metric through its door on the
CPU and on the GPU in one process (:mod:`~hug_vis_dataset.benchmarks.device_measure`), then ``hugvis evaluate``
end to end and its workers (:mod:`~hug_vis_dataset.benchmarks.device_runs`), and writes what it measured after
every part (:mod:`~hug_vis_dataset.benchmarks.device_summary`), so a run stopped by the device's time limit still
leaves its figures. On a machine without a GPU the CPU half runs and every GPU part says ``no GPU: skipped``;
``rehearse`` runs the GPU half on the CPU to try its plumbing.

The command line is ``scripts/device_check.py`` (docs/PERFORMANCE.md, "GPU: the device check"): it parses the
options into :class:`DeviceCheckOptions` and hands :func:`run_device_check` the two stand-ins it builds from the
checkout's tests and benchmark scripts (the synthetic clips, the random-weight network files), which the library
does not import.

Example:
    >>> options = DeviceCheckOptions(out=Path("out"), size="320x180", clips=1, cpu_only=True)
    >>> options.size_wh, options.utmos, options.budget_s
    ((320, 180), 'full', 420.0)
    >>> options.settings()["size"], options.settings()["rehearse"]
    ('320x180', False)
    >>> sorted(options.parts())[:3]
    ['csim', 'dnsmos', 'evaluate']
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..outputs import discard, scratch_folder
from .device_doors import CHECKS, INJECT_ENV, Check, Clip, build_models, install_injected_models
from .device_measure import (BATCH_TOLERANCE, GRID, NO_GPU, NOT_STARTED, VALUE_TOLERANCE, Context, difference,
                             grid_hours, run_check)
from .device_runs import evaluate_part, workers_part
from .device_summary import environment, fmt, markdown, write_summary
from .device_wheels import CARRIED, DNSMOS_FILES, NOT_CARRIED, canonical, install_carried, prepare_wheels, read_pins

#: The parts besides the metrics' checks, in the order they run.
END_TO_END_PARTS = ("evaluate", "workers")


@dataclass(frozen=True)
class DeviceCheckOptions:
    """What one device check runs (the command line's options; defaults are its defaults)."""

    out: Path  # folder for device_check.json and device_check.md
    wheels: Path = Path(".whl")  # the carried wheels' folder
    size: str = "1920x1080"  # frame size WxH of the synthetic clips
    seconds: float = 2.5  # clip length (Sync-C/D need a face track of more than 50 frames at 25 fps)
    fps: float = 30.0
    clips: int = 2
    utmos: str = "full"  # UTMOS22's official size (random weights) or the tests' tiny one
    only: "Sequence[str] | None" = None  # parts to run (default: all)
    kernel_batch: "int | None" = None  # cap of the larger batch of the batch-size checks
    cpu_only: bool = False  # ignore a GPU (the CPU half alone)
    rehearse: bool = False  # without a GPU, run the GPU half on the CPU (no GPU figures)
    budget_s: float = 420.0  # parts not started by then are skipped (a device call ends at 600 s)
    work: "Path | None" = None  # folder for the clips and runs (default: a temporary one, removed)
    #: What worker processes need on PYTHONPATH (the checkout's root, its scripts and tests, for Ray's workers).
    worker_paths: tuple[Path, ...] = ()

    @property
    def size_wh(self) -> tuple[int, int]:
        """``size`` as (width, height)."""
        width, height = (int(v) for v in self.size.lower().split("x"))
        return width, height

    def parts(self) -> set[str]:
        """The parts this run does: the chosen ones, or every metric's check and the end-to-end parts."""
        return set(self.only or [c.name for c in CHECKS] + list(END_TO_END_PARTS))

    def settings(self) -> dict[str, Any]:
        """The options the summary records."""
        return {"size": self.size, "seconds": self.seconds, "fps": self.fps, "clips": self.clips, "utmos": self.utmos,
                "kernel_batch": self.kernel_batch, "rehearse": self.rehearse, "only": self.only}


#: Writes the synthetic clips: ``(folder, (width, height), seconds, clips, fps) -> clips``.
MakeClips = Callable[[Path, "tuple[int, int]", float, int, float], "list[Clip]"]
#: Writes the networks' files: ``(folder, utmos size) -> {kind: path}`` (what :func:`build_models` loads).
WriteModelFiles = Callable[[Path, str], "dict[str, str]"]


def run_device_check(options: DeviceCheckOptions, make_clips: MakeClips, write_model_files: WriteModelFiles) -> int:
    """The check: install the carried wheels, write the clips and the networks' files, run every chosen part,
    write ``device_check.json`` and ``.md`` after each, print the Markdown; 0 when every check that ran passed.

    Nothing is written outside the work folder and ``options.out`` (the library's caches go under the work folder).
    """
    t0 = time.monotonic()
    try:
        install = install_carried(options.wheels)  # before anything imports the carried packages
    except (OSError, subprocess.CalledProcessError) as err:  # the parts needing them fail, each naming the module
        install = {"folder": str(options.wheels), "installed": [], "missing": ["(pip failed)"], "error": str(err)}
    import torch

    gpu = "cuda" if torch.cuda.is_available() and not options.cpu_only else None
    work = options.work or scratch_folder(prefix="device_check_")  # the guard's scratch: removed through it
    work.mkdir(parents=True, exist_ok=True)
    os.environ["HUGVIS_CACHE_DIR"] = str(work / "cache")  # nothing written outside the work folder and --out
    summary: dict[str, Any] = {"_t0": t0, "settings": options.settings(), "environment": environment(gpu, install),
                               "metrics": [], "not_carried": NOT_CARRIED}
    wanted = options.parts()
    try:
        print(f"device check: GPU {summary['environment']['gpu'] or 'none'}, torch {torch.__version__}; "
              f"carried: installed {len(install['installed'])}, missing {install['missing'] or 'none'}", flush=True)
        clips = make_clips(work / "release", options.size_wh, options.seconds, options.clips, options.fps)
        files = write_model_files(work / "models", options.utmos)
        print(f"  [{time.monotonic() - t0:5.0f} s] clips and model files written", flush=True)
        summary["frames"] = sum(c.frames for c in clips)
        summary["audio_seconds"] = sum(c.audio_seconds for c in clips)
        ctx = Context(options, work, clips, files, gpu, t0)
        for check in CHECKS:
            if check.name not in wanted:
                continue
            if ctx.over_budget():
                summary["metrics"].append({"metric": check.name, "error": NOT_STARTED})
                continue
            try:
                summary["metrics"].append(run_check(check, ctx))
            except Exception as err:  # noqa: BLE001 - one metric's failure is reported, the others still run
                summary["metrics"].append({"metric": check.name, "error": f"{type(err).__name__}: {err}"})
            r = summary["metrics"][-1]
            print(f"  [{time.monotonic() - t0:5.0f} s] {check.name}: " + (r["error"] if "error" in r else
                  f"CPU {fmt(r['cpu']['per_s'], '.1f')} {check.unit}/s, GPU "
                  + (fmt(r['gpu']['per_s'], '.1f') if isinstance(r['gpu'], dict) else r['gpu'])
                  + (f", |GPU-CPU| {r['gpu_vs_cpu']['max_abs']:.1e}" if "gpu_vs_cpu" in r else "")), flush=True)
            write_summary(summary, options.out)
        if "evaluate" in wanted:
            try:
                summary["evaluate"] = (evaluate_part(ctx) if not ctx.over_budget()
                                       else {"error": NOT_STARTED})
            except Exception as err:  # noqa: BLE001 - reported, never dropped
                summary["evaluate"] = {"error": f"{type(err).__name__}: {err}"}
            print(f"  [{time.monotonic() - t0:5.0f} s] hugvis evaluate: "
                  f"{summary['evaluate'].get('status') or summary['evaluate'].get('error') or 'done'}", flush=True)
            write_summary(summary, options.out)
        if "workers" in wanted:
            reference = summary.get("evaluate", {}).get("gpu")
            if reference is not None and "values" not in reference:
                reference = None
            summary["workers"] = (workers_part(ctx, reference) if not ctx.over_budget()
                                  else {"ray": {"error": NOT_STARTED}, "pool": {"error": NOT_STARTED}})
            print(f"  [{time.monotonic() - t0:5.0f} s] workers: done", flush=True)
        if isinstance(summary.get("evaluate", {}).get("gpu"), dict):
            summary["evaluate"]["gpu"].pop("values", None)
    except Exception as err:  # noqa: BLE001 - whatever broke is in the summary, which is still written
        summary["error"] = f"{type(err).__name__}: {err}"
        summary.setdefault("frames", 0), summary.setdefault("audio_seconds", 0.0)
    finally:
        if options.work is None:
            discard(work)
    text = write_summary(summary, options.out)
    print(text)
    if "error" in summary:
        print(f"error: {summary['error']}", file=sys.stderr)
        return 1
    return 0 if summary["ok"] else 1


__all__ = ["BATCH_TOLERANCE", "CARRIED", "CHECKS", "DNSMOS_FILES", "END_TO_END_PARTS", "GRID", "INJECT_ENV",
           "NOT_CARRIED", "NOT_STARTED", "NO_GPU", "VALUE_TOLERANCE", "Check", "Clip", "Context",
           "DeviceCheckOptions", "MakeClips", "WriteModelFiles", "build_models", "canonical", "difference",
           "grid_hours", "install_injected_models", "markdown", "prepare_wheels", "read_pins", "run_device_check"]

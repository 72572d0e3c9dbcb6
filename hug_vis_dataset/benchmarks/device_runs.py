"""The device check's end-to-end parts: ``hugvis evaluate vision_driven`` on each device, and its workers.

``hugvis evaluate vision_driven --device cuda`` runs through ``hug_vis_dataset.cli.main`` in this process, with
the check's networks injected and the weights check bypassed (:class:`injected_weights`, as ``tests/test_doors.py``
does), and the same with ``--device cpu`` for the rows' difference (:func:`evaluate_part`); then the workers
(:func:`workers_part`): the Ray backend with one GPU worker where ray is installed, and the local process pool
(``--num-proc 2``) on the GPU, each worker loading the same networks
(:func:`~hug_vis_dataset.benchmarks.device_doors.install_injected_models`).

Example:
    >>> compare_rows({"rc": 1}, {"rc": 0})
    {'ok': False, 'note': 'a run failed'}
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .device_doors import INJECT_ENV
from .device_measure import NO_GPU, VALUE_TOLERANCE, Context, difference, grid_hours, timed
from .device_wheels import NOT_CARRIED

#: Ray's workers load the check's networks through this set-up hook (a module path Ray imports in each worker).
RAY_SETUP_HOOK = "hug_vis_dataset.benchmarks.device_doors.install_injected_models"

def stored_rows(results: Path, model: str) -> dict[str, Any]:
    """The ok/failed counts and values of a stored vision_driven run (per-clip rows and the FID row)."""
    import pandas as pd

    folder = results / "vision_driven" / model
    rows = pd.read_parquet(folder / "rows.parquet")
    if (folder / "set_rows.parquet").is_file():
        rows = pd.concat([rows, pd.read_parquet(folder / "set_rows.parquet")], ignore_index=True)
    failed = rows[rows["status"] != "ok"]
    return {"rows": len(rows), "failed": len(failed), "metrics": sorted(set(rows["metric"])),
            "errors": sorted(set(failed["error"].astype(str)))[:5],
            "values": {f"{r.metric}|{r.clip_id}": float(r.value) for r in rows.itertuples()}}


def evaluate_command(ctx: Context, device: str, model: str, extra: "list[str]") -> dict[str, Any]:
    """``hugvis evaluate vision_driven`` through ``cli.main`` in this process, its rows read back."""
    from ..cli import main as hugvis

    results = ctx.work / "results"
    argv = ["evaluate", "vision_driven", "--predictions", str(ctx.work / "release" / "pred_vision"), "--model", model,
            "--dataset", str(ctx.work / "release"), "--out", str(results), "--device", device, "--no-progress", *extra]
    rc, wall, cpu = timed(lambda: hugvis(argv), device)
    out: dict[str, Any] = {"command": " ".join(["hugvis evaluate vision_driven --device", device, *extra]), "rc": rc,
                           "wall_s": wall, "cpu_s": cpu}
    if rc == 0:
        out.update(stored_rows(results, model))
        frames = sum(c.frames for c in ctx.clips)
        out["frames_per_s"] = frames / wall
        out["full_grid_hours"] = grid_hours("frame", out["frames_per_s"])
    return out


class injected_weights:
    """The evaluate door with the check's networks: this process's model cache on ``device`` and the
    weights check bypassed (``tests/test_doors.py`` does the same); both restored on exit."""

    def __init__(self, ctx: Context, device: str) -> None:
        self.ctx, self.device = ctx, device

    def __enter__(self):
        from .. import weights
        from ..tasks import models as model_cache

        self.saved = model_cache._PROCESS_CACHE, weights.missing_note
        model_cache._PROCESS_CACHE = self.ctx.models(self.device)
        weights.missing_note = lambda names: None
        return self

    def __exit__(self, *exc):
        from .. import weights
        from ..tasks import models as model_cache

        model_cache._PROCESS_CACHE, weights.missing_note = self.saved


def compare_rows(run: dict, reference: dict) -> dict[str, Any]:
    """Rows of two runs: the largest difference per metric, scaled as :func:`difference` does (floor 1)."""
    if run.get("rc") != 0 or reference.get("rc") != 0:
        return {"ok": False, "note": "a run failed"}
    keys = sorted(set(run["values"]) & set(reference["values"]))
    worst: dict[str, dict[str, float]] = {}
    for key in keys:
        metric = key.split("|", 1)[0]
        d = difference(np.array([run["values"][key]]), np.array([reference["values"][key]]), 1.0)
        if metric not in worst or d["scaled"] > worst[metric]["scaled"]:
            worst[metric] = d
    ok = (len(keys) == len(reference["values"]) == len(run["values"]) and run["failed"] == 0
          and all(d["scaled"] <= VALUE_TOLERANCE for d in worst.values()))
    return {"per_metric": worst, "ok": ok, "rows_compared": len(keys)}


def evaluate_part(ctx: Context) -> dict[str, Any]:
    """``hugvis evaluate vision_driven --device cuda`` end to end, and ``--device cpu`` for the rows' difference."""
    device = ctx.second_device
    if device is None:
        return {"status": NO_GPU}
    part: dict[str, Any] = {"device": device, "rehearsal": ctx.gpu is None}
    with injected_weights(ctx, device):
        part["gpu"] = evaluate_command(ctx, device, "check-gpu", [])
    with injected_weights(ctx, "cpu"):
        part["cpu"] = evaluate_command(ctx, "cpu", "check-cpu", [])
    part["gpu_vs_cpu"] = compare_rows(part["gpu"], part["cpu"])
    part["cpu"].pop("values", None)  # the GPU run's values stay until the workers are compared with them
    return part


def worker_reports(folder: Path) -> list[dict]:
    """What each worker process said of itself (:func:`~.device_doors.install_injected_models`)."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("worker-*.json"))]


def workers_part(ctx: Context, reference: "dict | None") -> dict[str, Any]:
    """The Ray backend with one GPU worker (where ray is installed) and the local pool of two GPU workers;
    each run's rows against the in-process run's on the same device."""
    device = ctx.second_device
    if device is None:
        return {"ray": {"status": NO_GPU}, "pool": {"status": NO_GPU}}
    part: dict[str, Any] = {"device": device, "rehearsal": ctx.gpu is None}
    base = reference if reference and reference.get("rc") == 0 else None
    for engine in ("ray", "pool"):
        reports = ctx.work / f"reports-{engine}"
        reports.mkdir(exist_ok=True)
        saved = {k: os.environ.get(k) for k in (INJECT_ENV, "PYTHONPATH")}
        os.environ[INJECT_ENV] = json.dumps({"files": ctx.files, "device": device, "reports": str(reports)})
        os.environ["PYTHONPATH"] = os.pathsep.join([*map(str, ctx.options.worker_paths),
                                                    *filter(None, [saved["PYTHONPATH"]])])
        try:
            if engine == "ray":
                if importlib.util.find_spec("ray") is None:
                    part["ray"] = {"status": f"skipped: ray is not installed here ({NOT_CARRIED['ray']})"}
                    continue
                part["ray"] = ray_run(ctx, device)
            else:
                with injected_weights(ctx, device):
                    part["pool"] = evaluate_command(ctx, device, "check-pool", ["--num-proc", "2"])
        except Exception as err:  # noqa: BLE001 - reported in the summary, never dropped
            part[engine] = {"error": f"{type(err).__name__}: {err}"}
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        part[engine]["workers"] = worker_reports(reports)
        if base is not None and "values" in part[engine]:
            part[engine]["vs_in_process"] = compare_rows(part[engine], base)
        part[engine].pop("values", None)
    return part


def ray_run(ctx: Context, device: str) -> dict[str, Any]:
    """A local Ray with this machine's GPU; its workers load the check's networks through a set-up hook."""
    import ray

    gpus = 1 if device.startswith("cuda") else 0
    ray.init(num_cpus=2, num_gpus=gpus, include_dashboard=False, log_to_driver=False,
             runtime_env={"worker_process_setup_hook": RAY_SETUP_HOOK,
                          "env_vars": {INJECT_ENV: os.environ[INJECT_ENV], "PYTHONPATH": os.environ["PYTHONPATH"]}})
    try:
        with injected_weights(ctx, device):  # the driver's FID step and availability check
            out = evaluate_command(ctx, device, "check-ray", ["--backend", "ray", "--num-proc", "1"])
        out["cluster"] = {k: v for k, v in ray.cluster_resources().items() if k in ("CPU", "GPU")}
        out["ray"] = ray.__version__
    finally:
        ray.shutdown()
    return out


__all__ = ["RAY_SETUP_HOOK", "compare_rows", "evaluate_command", "evaluate_part", "injected_weights", "ray_run",
           "stored_rows", "worker_reports", "workers_part"]

"""Measuring one network metric of the device check on the CPU and on the GPU: times, memory, differences.

Per metric (:func:`run_check`): the largest difference of the values, GPU against CPU, against a stated tolerance
(:data:`VALUE_TOLERANCE`: float32 networks sum in other orders on a GPU, and torch lets cuDNN convolutions use TF32
by default, so the devices are not bit-equal; the difference with TF32 off is reported beside it); door throughput
(frames or audio seconds per second, wall clock; CPU seconds beside it), CPU and GPU measured in the same run, and
the full-grid hours they imply (:func:`grid_hours`); peak GPU memory; batch-size invariance
(:data:`BATCH_TOLERANCE`) on each device.

Example:
    >>> difference(np.array([0.30, 0.50]), np.array([0.30, 0.52]), 1.0)["max_abs"] == 0.52 - 0.50
    True
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .device_doors import Check, Clip, build_models, first_frames

#: |GPU - CPU| <= VALUE_TOLERANCE x max(floor, largest |CPU value|), per value kind. Float32 networks sum
#: in other orders on a GPU (cuDNN/cuBLAS algorithms), about 1e-6 to 1e-5 of the scale; 1e-4 leaves ten
#: times that, and stays five times below the half unit (5e-4) of the three decimals the paper tables
#: print for a value below 1 (two above 1: 5e-3), so a pass means both devices print the same tables.
VALUE_TOLERANCE = 1e-4


#: Batch 1 against a larger batch: the bound of tests/test_model_devices.py (relative 1e-5).
BATCH_TOLERANCE = 1e-5


#: Full grid: 8,400 clips of about 6 s at 30 fps (docs/PERFORMANCE.md, "Full-grid projection").
GRID = {"clips": 8400, "seconds": 6.0, "fps": 30.0}


NO_GPU = "no GPU: skipped"


NOT_STARTED = "not run: --budget-s was spent before this part (the run is incomplete)"


# ----------------------------------------------------------------------------- measuring
def synchronize(device: str) -> None:
    """Wait for the GPU's queued work (no-op on the CPU), so a clock read after it counts that work."""
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def timed(fn: Callable[[], Any], device: str) -> tuple[Any, float, float]:
    """``(result, wall s, CPU s)``; on a GPU the clocks are read after ``torch.cuda.synchronize()``."""
    synchronize(device)
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    synchronize(device)
    return out, time.perf_counter() - wall, time.process_time() - cpu


def difference(values: "dict[str, np.ndarray] | np.ndarray", reference: "dict[str, np.ndarray] | np.ndarray",
               floor: float) -> dict[str, float]:
    """Largest ``|values - reference|``, the same over ``max(floor, largest |reference|)`` (the tolerance's
    scale) and over the largest ``|reference|`` alone (relative), the worst over the value kinds.

    Example:
        >>> difference({"a": np.array([1.0, 2.0])}, {"a": np.array([1.0, 2.5])}, 1.0)
        {'max_abs': 0.5, 'scaled': 0.2, 'rel': 0.2}
        >>> difference(np.array([1e-3]), np.array([2e-3]), 1.0)
        {'max_abs': 0.001, 'scaled': 0.001, 'rel': 0.5}
    """
    if not isinstance(values, dict):
        values, reference = {"": values}, {"": reference}
    worst_abs = worst_scaled = worst_rel = 0.0
    for key, ref in reference.items():
        a, b = np.asarray(values[key], np.float64), np.asarray(ref, np.float64)
        if a.shape != b.shape:
            raise ValueError(f"{key}: shapes {a.shape} and {b.shape} differ")
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            return {"max_abs": math.inf, "scaled": math.inf, "rel": math.inf}
        gap = float(np.max(np.abs(a - b))) if a.size else 0.0
        largest = float(np.max(np.abs(b))) if b.size else 0.0
        worst_abs, worst_scaled = max(worst_abs, gap), max(worst_scaled, gap / (max(floor, largest) or 1.0))
        worst_rel = max(worst_rel, gap / largest if largest else (0.0 if gap == 0 else math.inf))
    return {"max_abs": worst_abs, "scaled": worst_scaled, "rel": worst_rel}


def grid_hours(unit: str, per_s: "float | None") -> "float | None":
    """Hours for one system's full grid at ``per_s`` units a second (frames: 1.51 M; audio: 14.0 h).

    Example:
        >>> round(grid_hours("frame", 420.0), 2), round(grid_hours("audio s", 14.0), 2)
        (1.0, 1.0)
    """
    if not per_s:
        return None
    units = GRID["clips"] * GRID["seconds"] * (GRID["fps"] if unit == "frame" else 1.0)
    return units / per_s / 3600.0


class Context:
    """What the parts share: options (:class:`~hug_vis_dataset.benchmarks.device_check.DeviceCheckOptions`), the
    clips, the model files, models per device, decoded frames."""

    def __init__(self, options: Any, work: Path, clips: list[Clip], files: dict[str, str], gpu: "str | None",
                 started: float) -> None:
        self.options, self.work, self.clips, self.files, self.gpu = options, work, clips, files, gpu
        self._models: dict[str, Any] = {}
        self._frames: dict[tuple[str, int], np.ndarray] = {}
        self.deadline = started + options.budget_s  # counted from the start of the run, clips and installs included

    @property
    def second_device(self) -> "str | None":
        """Where the GPU half runs: the GPU, the CPU in a rehearsal (``--rehearse``), else nowhere (None)."""
        return self.gpu or ("cpu" if self.options.rehearse else None)

    def models(self, device: str):
        """The scorers' model cache on ``device`` with the check's networks (built once per device)."""
        from ..tasks import ModelCache

        if device not in self._models:
            self._models[device] = ModelCache(device, overrides=build_models(self.files, device))
        return self._models[device]

    def frames(self, path: str, n: int) -> np.ndarray:
        """The first ``n`` frames of a video, decoded once."""
        if (path, n) not in self._frames:
            self._frames[(path, n)] = first_frames(path, n)
        return self._frames[(path, n)]

    def batches(self, check: Check) -> tuple[int, int]:
        """Batch 1 and the check's larger batch, capped by ``--kernel-batch``."""
        small, large = check.batches
        return small, min(large, self.options.kernel_batch or large)

    def over_budget(self) -> bool:
        """Whether ``--budget-s`` is spent (a part not started by then is skipped and said so)."""
        return time.monotonic() > self.deadline


def gpu_memory_mark(device: str) -> "int | None":
    """Device memory in use (bytes) by any allocator, onnxruntime's too; None on the CPU."""
    if not device.startswith("cuda"):
        return None
    import torch

    free, total = torch.cuda.mem_get_info()
    return int(total - free)


def tf32_off():
    """A context in which cuDNN convolutions and cuBLAS matrix products use full float32 (torch's default lets
    cuDNN use TF32)."""
    import contextlib

    import torch

    @contextlib.contextmanager
    def context():
        saved = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
        torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
        try:
            yield
        finally:
            torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = saved
    return context()


def device_side(check: Check, ctx: Context, device: str, cpu_kernel: "np.ndarray | None") -> dict[str, Any]:
    """One device's figures for one metric: batch invariance (also the warm-up), the timed door; on the GPU
    side (``cpu_kernel`` given: the CPU side ran first) also the values with TF32 off (torch lets cuDNN
    use it by default), to tell its share of a difference. A rehearsal runs the GPU side's steps on the CPU."""
    import torch

    models = ctx.models(device)
    side: dict[str, Any] = {"device": device}
    strict = cpu_kernel is not None and not check.onnx  # a torch network on the GPU side: TF32 applies
    kernel_values = strict_kernel = None

    def invariance(large_values, small_values) -> dict[str, Any]:
        inv = difference(large_values, small_values, check.floor)
        return {"batches": list(ctx.batches(check)), **inv, "tolerance": BATCH_TOLERANCE,
                "ok": inv["scaled"] <= BATCH_TOLERANCE}

    if check.kernel is not None:
        small, large = ctx.batches(check)
        items = large + 1
        one = check.kernel(models, ctx.clips, small, ctx, items)
        kernel_values = check.kernel(models, ctx.clips, large, ctx, items)
        side["batch_invariance"] = invariance(kernel_values, one)
        if strict:
            with tf32_off():
                strict_one = check.kernel(models, ctx.clips, small, ctx, items)
                strict_kernel = check.kernel(models, ctx.clips, large, ctx, items)
            side["batch_invariance_tf32_off"] = invariance(strict_kernel, strict_one)
        if cpu_kernel is not None:
            side["kernel_vs_cpu"] = {**difference(kernel_values, cpu_kernel, check.floor), "batch": large}
            if strict_kernel is not None:
                side["kernel_vs_cpu_tf32_off"] = {**difference(strict_kernel, cpu_kernel, check.floor), "batch": large}
    else:
        side["batch_invariance"] = {"note": "no batch: one 9.01 s window per onnxruntime run"}
        check.warmup(models)
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    before = gpu_memory_mark(device)
    (values, units), wall, cpu = timed(lambda: check.door(models, ctx.clips), device)
    after = gpu_memory_mark(device)
    side.update(units=units, wall_s=wall, cpu_s=cpu, per_s=units / wall if wall > 0 else None,
                values={k: (v.tolist() if v.size <= 64 else {"shape": list(v.shape), "max_abs": float(np.abs(v).max())})
                        for k, v in values.items()})
    if device.startswith("cuda"):
        side["peak_torch_mib"] = torch.cuda.max_memory_allocated() / 2**20
        side["device_memory_rise_mib"] = (after - before) / 2**20
    side["_values"], side["_kernel"], side["_values_tf32_off"] = values, kernel_values, None
    if strict:
        with tf32_off():
            side["_values_tf32_off"] = check.door(models, ctx.clips)[0]
    return side


def onnx_providers_used(check: Check, ctx: Context, device: str) -> "list[str] | None":
    """The onnxruntime provider the check's ONNX sessions used on ``device`` (None: no ONNX model)."""
    if check.name == "dnsmos":
        from ..metrics.voice import _onnx_session, dnsmos_model_path

        return _onnx_session(str(dnsmos_model_path("primary")), device).get_providers()[:1]
    if check.onnx or check.name == "sync":
        return ctx.models(device).get("face_detector").session.get_providers()[:1]
    return None


def run_check(check: Check, ctx: Context) -> dict[str, Any]:
    """CPU, then GPU (or the rehearsal's second CPU pass), then their difference against the tolerance."""
    result: dict[str, Any] = {"metric": check.name, "unit": check.unit, "networks": check.what,
                              "door": check.door_name,
                              "tolerance": {"value": VALUE_TOLERANCE, "floor": check.floor,
                                            "rule": "|GPU - CPU| <= value x max(floor, largest |CPU value|)"}}
    cpu = device_side(check, ctx, "cpu", None)
    cpu["onnx_provider"] = onnx_providers_used(check, ctx, "cpu")
    result["cpu"] = cpu
    second = ctx.second_device
    if second is None:
        result["gpu"] = NO_GPU
    else:
        gpu = device_side(check, ctx, second, cpu["_kernel"])
        gpu["onnx_provider"] = onnx_providers_used(check, ctx, second)
        gpu["rehearsal"] = ctx.gpu is None
        result["gpu"] = gpu
        diff = difference(gpu["_values"], cpu["_values"], check.floor)
        result["gpu_vs_cpu"] = {**diff, "ok": diff["scaled"] <= VALUE_TOLERANCE}
        if gpu["_values_tf32_off"] is not None:  # for the reader: how much of the difference TF32 makes
            strict = difference(gpu["_values_tf32_off"], cpu["_values"], check.floor)
            result["gpu_vs_cpu_tf32_off"] = {**strict, "ok": strict["scaled"] <= VALUE_TOLERANCE}
        if cpu["per_s"] and gpu["per_s"]:
            result["gpu_speedup"] = gpu["per_s"] / cpu["per_s"]
    for side in (cpu, result["gpu"]):
        if isinstance(side, dict):
            side.pop("_values"), side.pop("_kernel"), side.pop("_values_tf32_off")
    gpu_side = result["gpu"] if isinstance(result["gpu"], dict) else {}
    result["full_grid_hours"] = {  # one system: wall hours at the door's throughput; CPU-hours from CPU seconds
        "cpu_wall": grid_hours(check.unit, cpu["per_s"]),
        "cpu_cpu_hours": grid_hours(check.unit, cpu["units"] / cpu["cpu_s"] if cpu["cpu_s"] else None),
        "gpu_wall": grid_hours(check.unit, gpu_side.get("per_s"))}
    return result


__all__ = ["BATCH_TOLERANCE", "GRID", "NOT_STARTED", "NO_GPU", "VALUE_TOLERANCE", "Context", "device_side", "difference",
           "gpu_memory_mark", "grid_hours", "onnx_providers_used", "run_check", "synchronize", "tf32_off", "timed"]

"""What the device check writes: ``device_check.json`` and ``device_check.md``, and the failures that set its exit status.

Example:
    >>> fmt(None), fmt(float("inf")), fmt(2.0, ".1f"), verdict(True), verdict(None)
    ('-', 'inf', '2.0', 'pass', '-')
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import time
from pathlib import Path
from typing import Any

from .device_measure import BATCH_TOLERANCE, NO_GPU, VALUE_TOLERANCE
from .device_wheels import CARRIED, NOT_CARRIED

def cpu_model() -> str:
    """The processor's name as ``/proc/cpuinfo`` gives it (``platform.processor()`` is often empty on Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment(gpu: "str | None", install: dict) -> dict[str, Any]:
    """The machine, the packages that can change a value or a time, and the carried wheels' install report."""
    import numba
    import onnxruntime
    import torch

    from ..scoring.binding import package_versions

    env = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "python": platform.python_version(), "machine": platform.machine(), "processor": cpu_model(),
           "cpus": os.cpu_count(), "torch": torch.__version__, "torch_threads": torch.get_num_threads(),
           "numba": numba.__version__, "onnxruntime": onnxruntime.__version__,
           "onnxruntime_providers": onnxruntime.get_available_providers(), "carried": install,
           "packages": package_versions([*CARRIED, "numpy", "scipy", "pandas", "pyarrow", "torchvision", "transformers",
                                         "onnxruntime", "ray"]),
           "cudnn_allow_tf32": bool(torch.backends.cudnn.allow_tf32),
           "matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32)}
    if gpu:
        props = torch.cuda.get_device_properties(0)
        env.update(gpu=torch.cuda.get_device_name(0), gpu_memory_gib=props.total_memory / 2**30,
                   cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version())
    else:
        env["gpu"] = None
    return env


def fmt(value: Any, spec: str = ".3g") -> str:
    """A figure as the Markdown prints it (None: ``-``)."""
    if value is None:
        return "-"
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return format(value, spec) if isinstance(value, (int, float)) else str(value)


def verdict(ok: "bool | None") -> str:
    """``pass``, ``FAIL`` or ``-`` (not checked)."""
    return "-" if ok is None else ("pass" if ok else "FAIL")


def markdown(summary: dict[str, Any]) -> str:
    """``device_check.md``: the machine, per metric the figures and verdicts, the end-to-end parts, the verdict."""
    env, settings = summary["environment"], summary["settings"]
    gpu = env.get("gpu") or ("none: rehearsal of the GPU half on the CPU" if settings["rehearse"] else "none")
    lines = [f"# Device check ({env['date']})", "",
             f"- Machine: {env['cpus']} CPUs ({env['processor'] or env['machine']}), GPU: {gpu}"
             + (f" ({env['gpu_memory_gib']:.0f} GiB, CUDA {env['cuda']}, cuDNN {env['cudnn']})" if env.get("gpu") else ""),
             f"- Python {env['python']}, torch {env['torch']} ({env['torch_threads']} CPU threads), onnxruntime "
             f"{env['onnxruntime']} (providers: {', '.join(env['onnxruntime_providers'])}), numba {env['numba']}; "
             f"torch's TF32 defaults: cuDNN {env['cudnn_allow_tf32']}, matmul {env['matmul_allow_tf32']}",
             f"- Inputs: {settings['clips']} synthetic clip(s) of {settings['seconds']:g} s at {settings['size']}, "
             f"{settings['fps']:g} fps ({summary['frames']} frames, {summary['audio_seconds']:.1f} s of audio); "
             f"UTMOS {settings['utmos']} size",
             f"- Wheels: installed {len(env['carried'].get('installed', []))} from .whl; still missing: "
             f"{', '.join(env['carried'].get('missing', [])) or 'none'}",
             f"- Tolerances: GPU vs CPU |diff| <= {VALUE_TOLERANCE:g} x max(floor, largest |CPU value|) (float32 sums "
             f"in other orders on a GPU, and cuDNN's TF32 by torch's default; a pass prints the same paper tables); "
             f"batch 1 vs a larger batch <= {BATCH_TOLERANCE:g} x the same scale", "",
             "| metric | per | CPU door /s | GPU door /s | GPU/CPU | peak GPU MiB (torch; device) | GPU - CPU: max abs "
             "(scaled; rel) | verdict | same, TF32 off | batch inv. CPU | batch inv. GPU (TF32 off) | ONNX provider |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |"]

    def gap(d: "dict | None") -> str:
        return "-" if not d else f"{fmt(d['max_abs'], '.1e')} ({fmt(d['scaled'], '.1e')}; {fmt(d['rel'], '.1e')})"

    def invariance(side: dict, key: str = "batch_invariance") -> str:
        inv = side.get(key)
        if not inv:
            return "-"
        return "n/a" if "note" in inv else f"{fmt(inv['scaled'], '.1e')} {verdict(inv['ok'])}"

    for r in summary["metrics"]:
        if "error" in r:
            lines.append(f"| {r['metric']} | | | | | | | ERROR: {r['error']} | | | | |")
            continue
        cpu, gpu = r["cpu"], r["gpu"]
        g = gpu if isinstance(gpu, dict) else {}
        diff, strict = r.get("gpu_vs_cpu"), r.get("gpu_vs_cpu_tf32_off")
        gpu_inv = invariance(g) + (f" ({invariance(g, 'batch_invariance_tf32_off')})"
                                   if g.get("batch_invariance_tf32_off") else "")
        providers = " / ".join(", ".join(side.get("onnx_provider") or ["-"]) for side in (cpu, g) if side)
        lines.append(
            f"| {r['metric']} | {r['unit']} | {fmt(cpu['per_s'], '.1f')} | "
            f"{fmt(g.get('per_s'), '.1f') if g else gpu} | {fmt(r.get('gpu_speedup'), '.1f')} | "
            f"{fmt(g.get('peak_torch_mib'), '.0f')}; {fmt(g.get('device_memory_rise_mib'), '.0f')} | "
            f"{gap(diff)} | {verdict(diff['ok']) if diff else '-'} | "
            f"{gap(strict) + ' ' + verdict(strict['ok']) if strict else '-'} | "
            f"{invariance(cpu)} | {gpu_inv if g else '-'} | {providers} |")
    lines += ["", "Full grid, one system (8,400 clips x 6 s at 30 fps: 1.51 M frames, 14.0 h of audio), at the door "
              "throughput above (each door decodes its clip; the scorers' one decode shares it): hours per metric", ""]
    for r in summary["metrics"]:
        if "error" in r:
            continue
        hours = r["full_grid_hours"]
        gpu_hours = f"{fmt(hours['gpu_wall'], '.2f')} h" if isinstance(r["gpu"], dict) else NO_GPU
        lines.append(f"- {r['metric']}: CPU {fmt(hours['cpu_wall'], '.1f')} h wall on {env['torch_threads']} threads "
                     f"({fmt(hours['cpu_cpu_hours'], '.1f')} CPU-hours); GPU {gpu_hours}")
    ev = summary.get("evaluate", {"status": "not run"})
    lines += ["", "## hugvis evaluate vision_driven, end to end", ""]
    if "status" in ev or "error" in ev:
        lines.append(f"- {ev.get('status') or 'ERROR: ' + ev['error']}")
    else:
        for side in ("gpu", "cpu"):
            run = ev[side]
            errors = f"; errors: {run['errors']}" if run.get("errors") else ""
            lines.append(f"- `{run['command']}`: rc {run['rc']}, {fmt(run['wall_s'], '.1f')} s wall, "
                         f"{fmt(run.get('frames_per_s'), '.1f')} frames/s ({fmt(run.get('full_grid_hours'), '.1f')} h "
                         f"per system), {run.get('rows', 0)} rows, {run.get('failed', '-')} failed, metrics "
                         f"{', '.join(run.get('metrics', []))}{errors}")
        cmp = ev["gpu_vs_cpu"]
        lines.append(f"- rows, {ev['device']} vs cpu: {verdict(cmp['ok'])}; " + ", ".join(
            f"{m} {fmt(d['max_abs'], '.1e')}" for m, d in cmp.get("per_metric", {}).items()))
    wk = summary.get("workers", {})
    lines += ["", "## Workers", ""]
    for engine, label in (("ray", "Ray backend, one GPU worker"), ("pool", "local pool, --num-proc 2")):
        run = wk.get(engine, {"status": "not run"})
        if "status" in run or "error" in run:
            lines.append(f"- {label}: {run.get('status') or 'ERROR: ' + run['error']}")
            continue
        vs = run.get("vs_in_process", {})
        lines.append(f"- {label}: `{run.get('command')}` rc {run.get('rc')}, {fmt(run.get('wall_s'), '.1f')} s; rows "
                     f"vs the in-process run: {verdict(vs.get('ok'))}; workers: "
                     + "; ".join(f"pid {w['pid']} on {w['lpips_parameters_on']} (CUDA_VISIBLE_DEVICES "
                                 f"{w['CUDA_VISIBLE_DEVICES']})" for w in run.get("workers", [])))
    lines += ["", "## Not carried to the GPU machine", ""]
    lines += [f"- {name}: {why}" for name, why in NOT_CARRIED.items()]
    outcome = "every check that ran passed" if summary["ok"] else "FAILED: " + "; ".join(summary["failures"])
    lines += ["", f"Verdict: {outcome} ({summary['elapsed_s']:.0f} s)."]
    return "\n".join(lines) + "\n"


def failures(summary: dict[str, Any]) -> list[str]:
    """Every check that ran and did not pass, and every part that raised."""
    bad = [f"run: {summary['error']}"] if "error" in summary else []
    for r in summary["metrics"]:
        if "error" in r:
            bad.append(f"{r['metric']}: {r['error']}")
            continue
        for side in ("cpu", "gpu"):
            inv = r[side].get("batch_invariance", {}) if isinstance(r[side], dict) else {}
            if inv.get("ok") is False:
                bad.append(f"{r['metric']}: batch invariance on {side}")
        if r.get("gpu_vs_cpu", {}).get("ok") is False:
            bad.append(f"{r['metric']}: GPU vs CPU over the tolerance")
    ev = summary.get("evaluate", {})
    if "error" in ev or ("gpu_vs_cpu" in ev and not ev["gpu_vs_cpu"]["ok"]):
        bad.append(f"hugvis evaluate: {ev.get('error') or 'rows differ or a run failed'}")
    workers = summary.get("workers", {})
    for engine in ("ray", "pool"):
        run = workers.get(engine)
        if not isinstance(run, dict) or "status" in run:
            continue
        if "error" in run or run.get("rc") != 0 or run.get("vs_in_process", {}).get("ok") is not True:
            bad.append(f"workers: {engine}: {run.get('error') or 'failed, or rows differ from the in-process run'}")
        elif not run.get("workers") or any(not w["lpips_parameters_on"].startswith(workers["device"])
                                           for w in run["workers"]):
            bad.append(f"workers: {engine}: no worker reported its networks on {workers['device']}")
    return bad


def write_summary(summary: dict[str, Any], out: Path) -> str:
    """``out/device_check.json`` and ``out/device_check.md`` as they stand (written after every part, so a
    run stopped by the device's time limit still leaves what it measured); returns the Markdown."""
    summary["elapsed_s"] = time.monotonic() - summary["_t0"]
    summary["failures"] = failures(summary)
    summary["ok"] = not summary["failures"]
    text = markdown(summary)
    public = {k: v for k, v in summary.items() if not k.startswith("_")}
    out.mkdir(parents=True, exist_ok=True)
    (out / "device_check.json").write_text(json.dumps(public, indent=1, default=str) + "\n", encoding="utf-8")
    (out / "device_check.md").write_text(text, encoding="utf-8")
    return text


__all__ = ["cpu_model", "environment", "failures", "fmt", "markdown", "verdict", "write_summary"]

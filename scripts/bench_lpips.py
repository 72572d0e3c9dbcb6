"""LPIPS per 1080p frame pair: the ``lpips`` package against ours, in one run (issue 37).

Both sides run the same ``lpips.LPIPS(net='alex', version='0.1')`` module (AlexNet with random
weights in torchvision's layout: no pretrained file can be downloaded here, and a forward pass costs
the same whatever the weights are). The package side is its documented use, ``im2tensor`` and
``LPIPS.forward`` one pair per call under ``torch.no_grad``; ours is
:func:`hug_vis_dataset.metrics.frames.lpips_frames` (on the CPU: :mod:`hug_vis_dataset.models.lpips_cpu`).

The two are interleaved ``--repeat`` times on the same frames (photographs scaled to the size, the
prediction blurred, noisy and shifted; the last pair identical), each run's CPU time (summed over
threads) is divided by the pairs (the wall time per pair is printed beside it), and the ratio
reported is the median of each repetition's package/ours ratio, so a change of the machine's load
between repetitions cancels. It prints the
load average before and after, the thread counts and the largest absolute difference of the values.

``--door-seconds S`` (default 1; 0 skips it) also times the door every scorer goes through: the
vision-driven task's one-decode pass (:func:`hug_vis_dataset.tasks.generation.video_pass`, which
``hugvis evaluate``, the evaluate modules and the Space call) on an H.264 1080p clip pair of ``S``
seconds, scoring PSNR, SSIM and LPIPS with the module injected into the model cache; once as the
library runs it and once with the module behind a plain callable, so LPIPS takes the package's own
forward (``model(x, y)`` on ``x / 127.5 - 1``, one pair per call) as before issue 37. CPU ms per frame of
each and their ratio, interleaved as above.

Usage: ``python scripts/bench_lpips.py [--pairs 3] [--repeat 3] [--size 1920x1080] [--threads 1] [--door-seconds 1]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="frame pairs per run (the last one identical)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs of each side")
    parser.add_argument("--size", default="1920x1080")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads (default torch's; the runner's worker processes use 1)")
    parser.add_argument("--door-seconds", type=float, default=1.0,
                        help="clip length for the scorer's one-decode pass with LPIPS (0: skip it)")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    print(f"cores: {os.cpu_count()} (may use {len(os.sched_getaffinity(0))}), load before: {os.getloadavg()}",
          flush=True)

    import lpips
    import numba
    import torch
    import torchvision
    from bench_scale import photo_frames

    from hug_vis_dataset.metrics.frames import lpips_frames
    from hug_vis_dataset.models.lpips import load_lpips

    # numba's thread layer first: starting it resets the process's OpenMP thread count (torch's) to
    # numba's, so a --threads set before it did not hold (runs M's "1 thread" rows ran torch on 2)
    numba.get_num_threads()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; numba {numba.get_num_threads()} threads")
    torch.manual_seed(0)
    path = os.path.join(tempfile.mkdtemp(prefix="bench_lpips_"), "alexnet.pth")
    torch.save(torchvision.models.alexnet(weights=None).state_dict(), path)
    model = load_lpips(alexnet_path=path, verify=False)
    pred, ref = photo_frames(args.pairs, height, width, seed=1)

    def package() -> np.ndarray:
        with torch.no_grad():
            return np.array([float(model.forward(lpips.im2tensor(p), lpips.im2tensor(r))) for p, r in zip(pred, ref)])

    def ours() -> np.ndarray:
        return lpips_frames(model, pred, ref)

    package(), ours()  # warm: oneDNN's kernels for these shapes, numba's cached kernel
    times = {"lpips package": [], "ours": []}
    walls = {"lpips package": [], "ours": []}
    values = {}
    for _ in range(args.repeat):
        for name, fn in (("lpips package", package), ("ours", ours)):
            t0, w0 = time.process_time(), time.perf_counter()
            values[name] = fn()
            times[name].append((time.process_time() - t0) / len(pred))
            walls[name].append((time.perf_counter() - w0) / len(pred))
    ratios = [p / o for p, o in zip(times["lpips package"], times["ours"])]
    diff = float(np.abs(values["ours"] - values["lpips package"]).max())
    print(f"\n{len(pred)} pairs of {width}x{height} per run, {args.repeat} interleaved runs (CPU ms per pair)")
    for name, t in times.items():
        print(f"{name:14s} median {1e3 * np.median(t):8.1f}  runs " + ", ".join(f"{1e3 * v:.1f}" for v in t)
              + f"  (wall ms per pair: median {1e3 * np.median(walls[name]):.1f})")
    print(f"ratio package/ours: median {np.median(ratios):.2f} (runs " + ", ".join(f"{r:.2f}" for r in ratios) + ")")
    print(f"values: max abs difference {diff:.2e} (largest value {float(np.abs(values['lpips package']).max()):.4f}); "
          f"identical pair: ours {values['ours'][-1]!r}")
    door_ok = True
    if args.door_seconds > 0:
        door_ok = door(model, width, height, args.door_seconds, args.repeat)
    print(f"load after: {os.getloadavg()}")
    return 0 if diff <= 1e-5 and door_ok else 1


class PackageForward:
    """The LPIPS module behind a plain callable: :func:`~hug_vis_dataset.models.lpips.lpips_distances`
    does not recognise it as the AlexNet v0.1 metric, so it calls the package's forward, as before."""

    def __init__(self, model) -> None:
        self.model = model

    def __call__(self, x, y):
        return self.model(x, y)

    def parameters(self):
        return self.model.parameters()


def door(model, width: int, height: int, seconds: float, repeat: int) -> bool:
    """The vision-driven one-decode pass with PSNR, SSIM and LPIPS, ours against the package's forward."""
    from bench_scale import photo_frames

    from hug_vis_dataset.readers import media
    from hug_vis_dataset.tasks.generation import video_pass
    from hug_vis_dataset.tasks.models import ModelCache

    frames = max(2, round(30 * seconds))
    work = Path(tempfile.mkdtemp(prefix="bench_lpips_door_"))
    pred, ref = photo_frames(4, height, width, seed=2)
    pick = np.arange(frames) % 4
    media.write_video(work / "ref.mp4", (ref[[k]] for k in pick), fps=30, preset="ultrafast")
    media.write_video(work / "pred.mp4", (pred[[k]] for k in pick), fps=30, preset="ultrafast")
    metrics = ("psnr", "ssim", "lpips")
    caches = {"package forward": ModelCache(overrides={"lpips": PackageForward(model)}),
              "ours": ModelCache(overrides={"lpips": model})}

    def run(cache):
        return video_pass(str(work / "pred.mp4"), {"video": str(work / "ref.mp4")}, metrics, cache, {})

    times, values = {name: [] for name in caches}, {}
    for _ in range(repeat):
        for name, cache in caches.items():
            t0 = time.process_time()
            values[name] = run(cache).values
            times[name].append((time.process_time() - t0) / frames)
    ratios = [p / o for p, o in zip(times["package forward"], times["ours"])]
    print(f"\ndoor: tasks.generation.video_pass (decode both, PSNR + SSIM + LPIPS), {frames} frames of "
          f"{width}x{height} H.264, {repeat} interleaved runs (CPU ms per frame)")
    for name, t in times.items():
        print(f"{name:16s} median {1e3 * np.median(t):8.1f}  runs " + ", ".join(f"{1e3 * v:.1f}" for v in t))
    print(f"ratio package forward/ours at the door: median {np.median(ratios):.2f} (runs "
          + ", ".join(f"{r:.2f}" for r in ratios) + ")")
    diffs = {m: abs(values["ours"][m] - values["package forward"][m]) for m in metrics}
    print("clip values, ours: " + ", ".join(f"{m} {values['ours'][m]:.6f}" for m in metrics)
          + "; |ours - package forward|: " + ", ".join(f"{m} {d:.1e}" for m, d in diffs.items()))
    shutil.rmtree(work, ignore_errors=True)
    return diffs["lpips"] <= 1e-5 and diffs["psnr"] == 0 and diffs["ssim"] == 0


if __name__ == "__main__":
    sys.exit(main())

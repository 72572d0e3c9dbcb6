"""Benchmark at the doors a user comes in by, against the ideal for the same clips (issue 25).

For full-resolution clips (default 1920x1080, 30 fps, H.264 as the release ships; mattes as 8-bit
PNG folders) this times, in one run and on the same files:

* ``ideal``: in this process, each video decoded once (PyAV, as the library decodes) and the metric
  kernels (PSNR+SSIM numba kernels; the matting kernels) -- the least any door can cost;
* ``evaluate (process)``: ``hugvis evaluate TASK`` as a child process (CPU of the child: imports,
  numba's cached kernels, checks, hashing, rows, summary);
* ``evaluate_submission``: the runner in this process, what the Space's scoring callback calls;
* ``module``: the evaluate module's ``compute`` (:func:`hug_vis_dataset.modules.compute_metric`);
* ``reference``: decode + scikit-image (PSNR+SSIM) on ``--ref-frames`` frames per clip (scaled per frame).

It reports CPU ms per frame, door/ideal, and the peak RSS of ``hugvis evaluate`` on a clip of
``--short`` and of ``--long`` seconds (it must not grow with the clip's length).

Usage: ``python scripts/bench_door.py [--size 1920x1080] [--seconds 3] [--clips 2] [--tasks vision_driven matting]``
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

METRICS = {"vision_driven": ("psnr", "ssim"), "matting": ("mad", "mse", "dtssd", "grad", "conn")}
RSS_SCRIPT = ("import resource, sys; from hug_vis_dataset.cli import main; rc = main(sys.argv[1:]); "
              "print('MAXRSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); "
              "sys.exit(rc)")


def make_release(root: Path, size: tuple[int, int], seconds: float, clips: int) -> None:
    """A synthetic release at full resolution, and one degraded prediction per clip and task."""
    from hug_vis_dataset import media
    from hug_vis_dataset.release import Release
    from hug_vis_dataset.synth import synthesize

    synthesize(root, actors=1, emotions=["Happy"], actions=1, scripts=clips, seconds=seconds, size=size,
               systems=False, seed=7)
    rng = np.random.default_rng(0)
    for record in Release(root).records.values():
        def noisy(chunks):
            for chunk in chunks:
                yield np.clip(chunk.astype(np.int16) + rng.integers(-6, 7, chunk.shape), 0, 255).astype(np.uint8)

        media.write_video(root / "pred_vision" / f"{record.clip_id}.mp4", noisy(media.iter_video_frames(record.video_path)),
                          fps=record.fps, preset="ultrafast")
        media.write_alpha_pngs(root / "pred_matting" / record.clip_id, noisy(media.iter_alpha_frames(record.alpha_matte_path)))


def cpu() -> float:
    return time.process_time()


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pairs(root: Path, task: str) -> list[tuple[str, str]]:
    from hug_vis_dataset.release import Release

    out = []
    for record in sorted(Release(root).records.values(), key=lambda r: r.clip_id):
        if task == "vision_driven":
            out.append((str(root / "pred_vision" / f"{record.clip_id}.mp4"), str(record.video_path)))
        else:
            out.append((str(root / "pred_matting" / record.clip_id), str(record.alpha_matte_path)))
    return out


def ideal(task: str, clips) -> float:
    """Each video decoded once + the kernels, nothing else."""
    from hug_vis_dataset.media import iter_alpha_frames, paired_video_chunks
    from hug_vis_dataset.metrics._frame_kernels import psnr_batch, ssim_batch
    from hug_vis_dataset.metrics.matting import score_matting_clip

    for pred, ref in clips:
        if task == "vision_driven":
            for p, r in paired_video_chunks(pred, ref, 32):
                psnr_batch(p, r, 100.0), ssim_batch(p, r)
        else:
            score_matting_clip(iter_alpha_frames(pred), iter_alpha_frames(ref), chunk_frames=32)
    return 0.0


def reference_impl(clips, frames_per_clip: int) -> tuple[float, int]:
    """Decode + scikit-image PSNR and SSIM on the first frames of each clip: CPU seconds, frames."""
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity

    from hug_vis_dataset.media import paired_video_chunks
    from hug_vis_dataset.metrics.frames import SSIM_PARAMS

    n, t0 = 0, cpu()
    for pred, ref in clips:
        done = 0
        for p, r in paired_video_chunks(pred, ref, 32):
            for a, b in zip(p, r):
                if done < frames_per_clip:
                    peak_signal_noise_ratio(b, a, data_range=255), structural_similarity(b, a, **SSIM_PARAMS)
                    done += 1
            if done >= frames_per_clip:
                break
        n += done
    # the decode of the skipped frames is not counted: per frame, decode + reference metrics
    return cpu() - t0, n


def timed(fn) -> float:
    t0 = cpu()
    fn()
    return cpu() - t0


def run_process(argv: list[str]) -> tuple[float, int]:
    """CPU seconds and peak RSS (KiB) of ``hugvis ARGV`` as a child process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = child_cpu()
    proc = subprocess.run([sys.executable, "-c", RSS_SCRIPT, *argv], capture_output=True, text=True, env=env)
    if proc.returncode:
        raise RuntimeError(proc.stderr[-2000:])
    rss = int([line for line in proc.stderr.splitlines() if line.startswith("MAXRSS_KB")][-1].split()[1])
    return child_cpu() - before, rss


def door_rows(task: str, root: Path, work: Path, ref_frames: int) -> list[dict]:
    from hug_vis_dataset import modules
    from hug_vis_dataset.scoring.runner import evaluate_submission

    clips = pairs(root, task)
    frames = sum(len(os.listdir(r)) if os.path.isdir(r) else __import__("hug_vis_dataset.media").media.video_info(r).frames
                 for _, r in clips)
    metrics = METRICS[task]
    preds = root / ("pred_vision" if task == "vision_driven" else "pred_matting")
    ideal(task, clips[:1])  # warm: numba kernels loaded, files in the page cache
    rows = {"ideal": timed(lambda: ideal(task, clips))}
    rows["evaluate_submission (Space callback)"] = timed(lambda: evaluate_submission(
        task, preds, "bench", root, work / "inproc", progress=False, metrics=metrics, overwrite=True,
        verify_dataset=False))
    shutil.rmtree(work / "inproc", ignore_errors=True)
    suite = "psnr" if task == "vision_driven" else "matting"
    rows["module compute"] = timed(lambda: [modules.compute_metric(m, [p for p, _ in clips], [r for _, r in clips])
                                            for m in (("psnr", "ssim") if task == "vision_driven" else (suite,))])
    argv = ["evaluate", task, "--predictions", str(preds), "--model", "bench", "--dataset", str(root), "--out",
            str(work / "proc"), "--no-progress", "--metrics", ",".join(metrics)]
    rows["hugvis evaluate (process)"], _ = run_process(argv)
    out = [{"task": task, "door": k, "cpu_ms_per_frame": 1e3 * v / frames, "ratio": v / rows["ideal"]}
           for k, v in rows.items()]
    if task == "vision_driven":
        seconds, n = reference_impl(clips, ref_frames)
        out.append({"task": task, "door": "reference: decode + scikit-image", "cpu_ms_per_frame": 1e3 * seconds / n,
                    "ratio": (seconds / n) / (rows["ideal"] / frames)})
    return out


def rss_growth(task: str, size, short: float, long: float, work: Path) -> dict:
    """Peak RSS of ``hugvis evaluate`` on one clip of ``short`` and one of ``long`` seconds."""
    out = {}
    for seconds in (short, long):
        root = work / f"rss_{seconds}"
        if not root.exists():  # one release per length serves every task (it holds both predictions)
            make_release(root, size, seconds, 1)
        preds = root / ("pred_vision" if task == "vision_driven" else "pred_matting")
        _, rss = run_process(["evaluate", task, "--predictions", str(preds), "--model", "bench", "--dataset",
                              str(root), "--out", str(root / "out"), "--no-progress", "--metrics",
                              ",".join(METRICS[task])])
        out[seconds] = rss / 1024
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1920x1080")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--clips", type=int, default=2)
    parser.add_argument("--ref-frames", type=int, default=4, help="frames per clip for scikit-image")
    parser.add_argument("--short", type=float, default=2.0)
    parser.add_argument("--long", type=float, default=8.0)
    parser.add_argument("--tasks", nargs="+", default=["vision_driven", "matting"])
    parser.add_argument("--no-rss", action="store_true")
    parser.add_argument("--json", default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    size = tuple(int(x) for x in args.size.split("x"))
    print(f"cores: {os.cpu_count()}, load before: {os.getloadavg()}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="bench_door_"))
    try:
        root = work / "release"
        make_release(root, size, args.seconds, args.clips)
        rows = [r for task in args.tasks for r in door_rows(task, root, work, args.ref_frames)]
        print(f"\n| task | door | CPU ms / frame | door / ideal |\n| --- | --- | ---: | ---: |")
        for r in rows:
            print(f"| {r['task']} | {r['door']} | {r['cpu_ms_per_frame']:.1f} | {r['ratio']:.2f} |")
        rss = {} if args.no_rss else {t: rss_growth(t, size, args.short, args.long, work) for t in args.tasks}
        for task, values in rss.items():
            print(f"peak RSS of hugvis evaluate {task}: " + ", ".join(f"{s:g} s clip {v:.0f} MiB" for s, v in values.items()))
        print(f"load after: {os.getloadavg()}")
        if args.json:
            Path(args.json).write_text(json.dumps({"rows": rows, "rss_mib": rss}, indent=2))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

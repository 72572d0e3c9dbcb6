"""Benchmark at the doors a user comes in by, against the ideal for the same clips (issue 25).

For full-resolution clips (default 1920x1080, 30 fps, H.264 as the release ships; mattes as 8-bit
PNG folders) this times, in one run and on the same files:

* ``ideal``: in this process, each video decoded once (PyAV, as the library decodes) and the metric
  kernels (PSNR+SSIM numba kernels; the matting kernels) -- the least any door can cost;
* ``evaluate (process)``: ``hugvis evaluate TASK`` as a child process (CPU of the child: imports,
  numba's cached kernels, checks, hashing, rows, summary);
* ``evaluate_submission``: the runner in this process (what the Space's callback and the queue's worker call);
* ``Space score callback``: :meth:`hug_vis_dataset.space.explorer.Explorer.score` on a zip of the
  predictions (extraction, the run, adding it to the Space's store; the zip is made untimed, and the
  Space scores every metric of the task that its weights allow: with ``$HUGVIS_WEIGHTS_DIR`` empty,
  as here, PSNR+SSIM for vision_driven and all five matting metrics);
* ``module``: the evaluate module's ``compute`` (:func:`hug_vis_dataset.modules.compute_metric`);
* ``reference``: decode + scikit-image (PSNR+SSIM) on ``--ref-frames`` frames per clip (scaled per frame);
* the evaluate modules as a user loads them (``evaluate.load`` of ``metrics/psnr`` and ``metrics/ssim``, then
  ``compute``) on one lossless FFV1 pair of each ``--module-frames`` count (default 4 and 90), against the
  ideal of those two calls: each module's decode of the pair + its kernel (``--modules-only``: this door alone).

It reports CPU ms per frame (voice cloning: per second of audio; DNSMOS's ONNX files and
Resemblyzer's encoder ship with their pip packages, so its five metrics run here), door/ideal, and the peak RSS of ``hugvis evaluate`` on a clip of
``--short`` and of ``--long`` seconds (it must not grow with the clip's length).

Each door runs ``--repeat`` times (default 3), interleaved with the others, and the median is reported beside
every run's CPU seconds. door/ideal is the median over repetitions of each run's ratio to the ideal run of the
same repetition (a change of load between repetitions cancels); the ratio of the medians is printed beside it.
The default clip is 6 s, the release's mean (1.51 M frames / 8,400 clips = 180 frames).

Usage: ``python scripts/bench_door.py [--size 1920x1080] [--seconds 6] [--clips 2] [--repeat 3] [--tasks vision_driven matting voice_cloning] [--module-frames 4 90] [--modules-only]``
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

METRICS = {"vision_driven": ("psnr", "ssim"), "matting": ("mad", "mse", "dtssd", "grad", "conn"),
           "voice_cloning": ("dnsmos", "dnsmos_sig", "dnsmos_bak", "dnsmos_p808", "speaker_similarity")}
#: The prediction folder of each task in the benchmark's release.
PREDICTIONS = {"vision_driven": "pred_vision", "matting": "pred_matting", "voice_cloning": "pred_voice"}
# The child's own peak (VmHWM of its address space). Not getrusage's ru_maxrss: Linux carries the
# parent's high-water mark across the fork + exec, so the child would report this benchmark's peak.
RSS_SCRIPT = ("import re, sys; from hug_vis_dataset.cli import main; rc = main(sys.argv[1:]); "
              "status = open('/proc/self/status').read(); "
              "print('MAXRSS_KB', re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1), file=sys.stderr); "
              "sys.exit(rc)")


def make_release(root: Path, size: tuple[int, int], seconds: float, clips: int, fps: float = 30.0,
                 mattes: bool = True) -> None:
    """A synthetic release at full resolution, and one degraded prediction per clip and task
    (``mattes=False``: no matting predictions, for callers that score no matting)."""
    from hug_vis_dataset.readers import media
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.synth import synthesize

    synthesize(root, actors=1, emotions=["Happy"], actions=1, scripts=clips, seconds=seconds, size=size,
               fps=fps, systems=False, seed=7)
    rng = np.random.default_rng(0)
    for record in Release(root).records.values():
        def noisy(chunks):
            for chunk in chunks:
                yield np.clip(chunk.astype(np.int16) + rng.integers(-6, 7, chunk.shape), 0, 255).astype(np.uint8)

        media.write_video(root / "pred_vision" / f"{record.clip_id}.mp4", noisy(media.iter_video_frames(record.video_path)),
                          fps=record.fps, preset="ultrafast")
        if mattes:
            media.write_alpha_pngs(root / "pred_matting" / record.clip_id,
                                   noisy(media.iter_alpha_frames(record.alpha_matte_path)))
        audio, rate = media.read_audio(record.audio_path)
        hiss = rng.normal(0.0, 0.01, audio.shape).astype(np.float32)
        media.write_wav(root / "pred_voice" / f"{record.clip_id}.wav", np.clip(audio + hiss, -1, 1), rate)


def cpu() -> float:
    return time.process_time()


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pairs(root: Path, task: str) -> list[tuple[str, str]]:
    from hug_vis_dataset.datamodel.release import Release

    out = []
    for record in sorted(Release(root).records.values(), key=lambda r: r.clip_id):
        if task == "vision_driven":
            out.append((str(root / "pred_vision" / f"{record.clip_id}.mp4"), str(record.video_path)))
        elif task == "voice_cloning":
            out.append((str(root / "pred_voice" / f"{record.clip_id}.wav"), str(record.audio_path)))
        else:
            out.append((str(root / "pred_matting" / record.clip_id), str(record.alpha_matte_path)))
    return out


def ideal(task: str, clips) -> float:
    """Each video decoded once + the kernels (voice: the library's DNSMOS and Resemblyzer calls), nothing else."""
    from hug_vis_dataset.readers.media import iter_alpha_frames, paired_video_chunks
    from hug_vis_dataset.metrics._frame_kernels import psnr_batch, ssim_batch
    from hug_vis_dataset.metrics.matting import score_matting_clip
    from hug_vis_dataset.metrics.voice import dnsmos, speaker_similarity

    for pred, ref in clips:
        if task == "voice_cloning":
            dnsmos(pred), speaker_similarity(pred, ref)
        elif task == "vision_driven":
            for p, r in paired_video_chunks(pred, ref, 32):
                psnr_batch(p, r, 100.0), ssim_batch(p, r)
        else:
            score_matting_clip(iter_alpha_frames(pred), iter_alpha_frames(ref), chunk_frames=32)
    return 0.0


def reference_impl(clips, frames_per_clip: int) -> tuple[float, int]:
    """Decode + scikit-image PSNR and SSIM on the first frames of each clip: CPU seconds, frames."""
    from skimage.metrics import peak_signal_noise_ratio, structural_similarity

    from hug_vis_dataset.readers.media import paired_video_chunks
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


def space_callback(task: str, preds: Path, root: Path, work: Path):
    """The Space's Score button as a door: a function ``(repetition) -> CPU seconds`` of ``Explorer.score``
    on a zip of ``preds`` (the zip, once, and the Explorer, i.e. the running Space, per run, are made untimed)."""
    import zipfile

    from hug_vis_dataset.space.explorer import Explorer

    upload = work / f"{task}_upload.zip"
    with zipfile.ZipFile(upload, "w", zipfile.ZIP_STORED) as archive:  # media are compressed already
        for path in sorted(preds.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(preds).as_posix())
    def score(repetition: int) -> float:
        # A fresh Space (results folder) per run, made untimed: the scoring queue refuses the same
        # predictions under a second name, so each run must be the first upload of them.
        explorer = Explorer(root, work / f"space_results_{repetition}", work_dir=work / f"space_work_{repetition}")
        t0 = cpu()
        message, table, _ = explorer.score(task, f"bench-{task}-{repetition}", str(upload))  # a free name each time
        seconds = cpu() - t0
        if not len(table) or "Scored" not in message:
            raise RuntimeError(f"the Space did not score the {task} upload: {message}")
        return seconds

    return score


def door_rows(task: str, root: Path, work: Path, ref_frames: int, repeat: int) -> list[dict]:
    """CPU per unit and door/ideal of every door of ``task``: the median of ``repeat`` runs of each,
    interleaved (ideal, runner, Space, module, process; then again), so a change of load reaches every door."""
    from hug_vis_dataset.readers import media
    from hug_vis_dataset import modules
    from hug_vis_dataset.scoring.runner import evaluate_submission

    clips = pairs(root, task)
    if task == "voice_cloning":  # per second of audio
        frames = sum(media.audio_info(r)[0] / media.audio_info(r)[1] for _, r in clips)
    else:
        frames = sum(len(os.listdir(r)) if os.path.isdir(r) else media.video_info(r).frames for _, r in clips)
    metrics = METRICS[task]
    preds = root / PREDICTIONS[task]
    ideal(task, clips[:1])  # warm: numba kernels / ONNX sessions / Resemblyzer loaded, files in the page cache
    import pandas, pyarrow.parquet  # noqa: F401,E401 - imported by a running Space or worker already

    def runner() -> None:
        shutil.rmtree(work / "inproc", ignore_errors=True)
        result = evaluate_submission(task, preds, "bench", root, work / "inproc", progress=False, metrics=metrics,
                                     verify_dataset=False)
        if result.coverage.ok != len(clips):
            raise RuntimeError(f"the runner scored {result.coverage.ok} of {len(clips)} {task} clips")

    module_names = {"vision_driven": ("psnr", "ssim"), "matting": ("matting",),
                    "voice_cloning": ("dnsmos", "speaker_similarity")}[task]

    def module() -> None:
        for name in module_names:
            result = modules.compute_metric(name, [p for p, _ in clips], [r for _, r in clips])
            if result["n_failed"] or result["n_ok"] != len(clips):
                raise RuntimeError(f"the {name} module failed: {result['errors'][:1]}")

    argv = ["evaluate", task, "--predictions", str(preds), "--model", "bench", "--dataset", str(root), "--out",
            str(work / "proc"), "--no-progress", "--metrics", ",".join(metrics)]

    def process() -> float:
        shutil.rmtree(work / "proc", ignore_errors=True)  # a fresh run each time, nothing kept from the last
        return run_process(argv)[0]

    space = space_callback(task, preds, root, work)
    doors = {"ideal": lambda i: timed(lambda: ideal(task, clips)),
             "evaluate_submission (in-process runner)": lambda i: timed(runner),
             "Space score callback": space,
             "module compute": lambda i: timed(module),
             "hugvis evaluate (process)": lambda i: process()}
    times: dict[str, list[float]] = {door: [] for door in doors}
    for repetition in range(repeat):
        for door, run in doors.items():
            times[door].append(run(repetition))
    median = {door: float(np.median(values)) for door, values in times.items()}
    unit = "s of audio" if task == "voice_cloning" else "frame"
    # Paired: each run of a door against the ideal run just before it, so a change of the machine's load
    # between repetitions cancels; the median of those ratios is the figure reported.
    out = [{"task": task, "door": k, "cpu_ms_per_frame": 1e3 * v / frames, "unit": unit,
            "ratio_of_medians": v / median["ideal"],
            "ratio": float(np.median([t / i for t, i in zip(times[k], times["ideal"])])),
            "runs_s": [round(t, 3) for t in times[k]]} for k, v in median.items()]
    if task == "vision_driven":
        seconds, n = reference_impl(clips, ref_frames)
        ratio = (seconds / n) / (median["ideal"] / frames)  # one run: paired and of medians are the same
        out.append({"task": task, "door": "reference: decode + scikit-image", "cpu_ms_per_frame": 1e3 * seconds / n,
                    "unit": unit, "ratio": ratio, "ratio_of_medians": ratio, "runs_s": [round(seconds, 3)]})
    return out


def write_ffv1(path: Path, frames: np.ndarray, fps: int = 30) -> None:
    """Lossless RGB FFV1 in Matroska (as the audit's transformed videos are written): decode-heavy, exact."""
    from fractions import Fraction

    import av

    with av.open(str(path), "w") as container:
        stream = container.add_stream("ffv1", rate=Fraction(fps))
        stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], "bgr0"
        stream.options = {"slices": "4", "level": "3"}
        for frame in frames:
            for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)


def ffv1_pair(work: Path, size, frames: int) -> tuple[str, str]:
    """A reference (moving gradients) and a noisy prediction of ``frames`` frames, both FFV1."""
    width, height = size
    yy, xx = np.mgrid[0:height, 0:width]
    rng = np.random.default_rng(frames)
    ref = ((xx[None, :, :, None] * 0.1 + yy[None, :, :, None] * 0.05 + 3 * np.arange(frames)[:, None, None, None]
            + 40 * np.arange(3)) % 256).astype(np.uint8)
    pred = np.clip(ref.astype(np.int16) + rng.integers(-6, 7, ref.shape, dtype=np.int16), 0, 255).astype(np.uint8)
    folder = work / f"ffv1_{frames}"
    folder.mkdir(exist_ok=True)
    write_ffv1(folder / "pred.mkv", pred)
    write_ffv1(folder / "ref.mkv", ref)
    return str(folder / "pred.mkv"), str(folder / "ref.mkv")


def module_door_rows(work: Path, size, frame_counts, repeat: int) -> list[dict]:
    """The evaluate modules as a user calls them, on one 1080p FFV1 pair per frame count (issue 37):
    ``evaluate.load`` of ``metrics/psnr`` and of ``metrics/ssim`` and each ``compute``, each module
    decoding the pair, against the ideal of the same two calls: each module's decode of the pair
    (as the library decodes) + its kernel. Interleaved ``repeat`` times; paired ratios."""
    import evaluate

    from hug_vis_dataset.readers.media import paired_video_chunks
    from hug_vis_dataset.metrics._frame_kernels import psnr_batch, ssim_batch

    out = []
    for frames in frame_counts:
        pred, ref = ffv1_pair(work, size, frames)

        def ideal() -> None:
            for p, r in paired_video_chunks(pred, ref, 32):
                psnr_batch(p, r, 100.0)
            for p, r in paired_video_chunks(pred, ref, 32):
                ssim_batch(p, r)

        def modules() -> None:
            for name in ("psnr", "ssim"):
                module = evaluate.load(str(ROOT / "metrics" / name))
                result = module.compute(predictions=[pred], references=[ref])
                if result["n_ok"] != 1:
                    raise RuntimeError(f"the {name} module failed: {result['errors'][:1]}")

        ideal(), modules()  # warm: kernels, the module folders' copies in evaluate's cache, the page cache
        times: dict[str, list[float]] = {"ideal": [], "modules": []}
        for _ in range(repeat):
            times["ideal"].append(timed(ideal))
            times["modules"].append(timed(modules))
        median = {k: float(np.median(v)) for k, v in times.items()}
        for door, label in (("ideal", "ideal: each module's decode of the pair + its kernel"),
                            ("modules", "evaluate.load + compute of psnr, then ssim")):
            out.append({"task": f"vision_driven, FFV1 {size[0]}x{size[1]}, {frames} frames", "door": label,
                        "cpu_ms_per_frame": 1e3 * median[door] / frames, "unit": "frame",
                        "ratio_of_medians": median[door] / median["ideal"],
                        "ratio": float(np.median([t / i for t, i in zip(times[door], times["ideal"])])),
                        "runs_s": [round(t, 3) for t in times[door]]})
    return out


def rss_growth(task: str, size, short: float, long: float, work: Path) -> dict:
    """Peak RSS of ``hugvis evaluate`` on one clip of ``short`` and one of ``long`` seconds."""
    out = {}
    for seconds in (short, long):
        root = work / f"rss_{seconds}"
        if not root.exists():  # one release per length serves every task (it holds both predictions)
            make_release(root, size, seconds, 1)
        preds = root / PREDICTIONS[task]
        _, rss = run_process(["evaluate", task, "--predictions", str(preds), "--model", "bench", "--dataset",
                              str(root), "--out", str(root / "out"), "--no-progress", "--metrics",
                              ",".join(METRICS[task])])
        out[seconds] = rss / 1024
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1920x1080")
    # The release's mean clip: 1.51 M frames over 8,400 clips is 180 frames, 6 s at 30 fps.
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--clips", type=int, default=2)
    parser.add_argument("--ref-frames", type=int, default=4, help="frames per clip for scikit-image")
    parser.add_argument("--short", type=float, default=2.0)
    parser.add_argument("--long", type=float, default=8.0)
    parser.add_argument("--tasks", nargs="+", default=["vision_driven", "matting", "voice_cloning"], choices=sorted(METRICS))
    parser.add_argument("--repeat", type=int, default=3, help="runs of each door; the median is reported")
    parser.add_argument("--no-rss", action="store_true")
    parser.add_argument("--json", default=None, help="also write the rows here")
    parser.add_argument("--module-frames", type=int, nargs="*", default=[4, 90],
                        help="frame counts of the FFV1 pairs the evaluate modules' door is timed on (none: skip it)")
    parser.add_argument("--modules-only", action="store_true", help="time the evaluate modules' door alone")
    args = parser.parse_args(argv)
    size = tuple(int(x) for x in args.size.split("x"))
    print(f"cores: {os.cpu_count()}, load before: {os.getloadavg()}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="bench_door_"))
    # No network weights (only the kernels are timed) and a cache of this run's own, so the doors
    # see what a user's machine sees and nothing from earlier runs.
    (work / "no_weights").mkdir()
    os.environ.update(HUGVIS_WEIGHTS_DIR=str(work / "no_weights"), HUGVIS_CACHE_DIR=str(work / "cache"))
    try:
        root = work / "release"
        if not args.modules_only:
            make_release(root, size, args.seconds, args.clips)
        # The dataset's sha256 check runs once per dataset and is then served by the digest cache
        # (size + mtime): warmed here so no door pays it for the others.
        from hug_vis_dataset.references import open_reference_source

        tasks = [] if args.modules_only else args.tasks
        for task in tasks:
            open_reference_source(root, task, None, verify=True)
        rows = [r for task in tasks for r in door_rows(task, root, work, args.ref_frames, args.repeat)]
        rows += module_door_rows(work, size, args.module_frames, args.repeat)
        clips = "" if args.modules_only else f"{args.clips} clips of {args.seconds:g} s at {args.size}; "
        print(f"\n{clips}median of {args.repeat} interleaved runs per door")
        print("\n| task | door | CPU ms | per | door / ideal (median of paired runs) | ratio of medians | runs (CPU s) |"
              "\n| --- | --- | ---: | --- | ---: | ---: | --- |")
        for r in rows:
            print(f"| {r['task']} | {r['door']} | {r['cpu_ms_per_frame']:.1f} | {r['unit']} | {r['ratio']:.2f} | "
                  f"{r['ratio_of_medians']:.2f} | " + ", ".join(f"{t:.2f}" for t in r["runs_s"]) + " |")
        rss = {} if args.no_rss else {t: rss_growth(t, size, args.short, args.long, work) for t in tasks}
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

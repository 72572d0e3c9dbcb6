"""Device check: every network metric scored on the CPU and on the GPU by one command (issue 47).

A GPU is lent only now and then, for minutes, so this check is prepared to run there once, from a fresh
copy of the tree, without a second try. On the same synthetic clips (``--size``, default 1920x1080) it
scores each network metric through the door every user door goes through (the task scorer:
``TaskScorer.score_clip``, or the one-decode pass ``tasks.generation.video_pass`` for FID's features),
on the CPU and on the GPU in this one process, and reports per metric:

* the largest difference of the values, GPU against CPU, against a stated tolerance
  (:data:`VALUE_TOLERANCE`: float32 networks sum in other orders on a GPU, and torch lets cuDNN
  convolutions use TF32 by default, so the devices are not bit-equal; the check also reports the
  difference with TF32 off, on the first frames);
* door throughput (frames or audio seconds per second, wall clock; CPU seconds beside it), CPU and GPU
  measured in the same run, and the full-grid hours per system they imply;
* peak GPU memory (``torch.cuda.max_memory_allocated``; for onnxruntime sessions, which torch does not
  see, the rise of the device's used memory);
* batch-size invariance (the network function at batch 1 and at a larger batch that splits the frames
  unevenly; :data:`BATCH_TOLERANCE`), on the CPU and on the GPU.

Then ``hugvis evaluate vision_driven --device cuda`` end to end (``hug_vis_dataset.cli.main`` in this
process, and the same with ``--device cpu`` for the rows' difference), and the workers: the Ray backend
with one GPU worker where ray is installed, and the local process pool (``--num-proc 2``) on the GPU.

The networks: no pretrained weights can be downloaded (see README), so LPIPS's AlexNet, the FID
Inception-v3, SyncNet and UTMOS22 carry random weights in the official layouts (the builders the tests
use: ``tests/test_model_devices.py``, ``tests/test_utmos.py``); a forward pass costs the same whatever
the weights, so the times are the real networks'. SCRFD and ArcFace are the tests' tiny ONNX stand-ins
(``tests/test_arcface_onnx.py``; a planted face), so their rows time our pre- and post-processing and
the onnxruntime path, not ``det_10g``/``w600k_r50``. DNSMOS (speechmos's ONNX files) and Resemblyzer
(its packaged encoder) are the real networks. The networks go into the scorers' model cache
(``tasks.models.ModelCache`` overrides) as the tests inject them; for ``hugvis evaluate`` the weights
check is bypassed the way ``tests/test_doors.py`` does, and the worker processes get the same models
(the pool's children through this file's ``__mp_main__`` import, Ray's through a worker set-up hook:
``hug_vis_dataset.benchmarks.device_doors.install_injected_models``).

On a machine without a GPU the CPU half runs, every GPU part says ``no GPU: skipped``, and the exit
status is 0 when every check that ran passed (``tests/test_device_check.py`` runs it so, small).

This file keeps the command line, and the two stand-ins it builds from the checkout's tests and benchmark scripts
(the synthetic clips: ``bench_door.make_release``; the random-weight network files: the tests' builders), which the
library does not import. What the check measures and writes is :mod:`hug_vis_dataset.benchmarks.device_check`.
``--rehearse`` runs the GPU half on the CPU (labelled a rehearsal: no GPU figures) to try the
plumbing of the GPU parts on a machine without one.

Packages the GPU machine lacks travel as wheels in ``.whl`` (``--prepare-wheels``, run where PyPI is
reachable: the exact pins of ``constraints.txt``, cp312 manylinux; speechmos as its two DNSMOS files);
at start the check installs those whose module is missing into a temporary folder. What cannot travel
(:data:`NOT_CARRIED`) is said in the summary, with what the check does instead.

Usage::

    python scripts/device_check.py --prepare-wheels          # here, once: .whl/ (about 55 MB)
    python scripts/device_check.py --out DIR                 # the check: DIR/device_check.json and .md
    python scripts/device_check.py --out DIR --size 320x180 --seconds 2.2 --fps 25 --clips 1 --utmos tiny

The one command of a GPU session (docs/PERFORMANCE.md, "GPU: the device check"): ``run`` with
``carry=[".whl"]``, ``timeout_s=540`` and ``PYTHONUNBUFFERED=1 python3 scripts/device_check.py --out $OUT``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT / "tests", ROOT / "scripts", ROOT):  # the library, the bench scripts, the tests' builders
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

# The names the check is read by (tests/test_device_check.py, a reader of this file) are the library's.
from hug_vis_dataset.benchmarks.device_check import (BATCH_TOLERANCE, CARRIED, CHECKS, DNSMOS_FILES,  # noqa: E402,F401
                                                     NOT_CARRIED, VALUE_TOLERANCE, Clip, DeviceCheckOptions,
                                                     canonical, difference, grid_hours, install_injected_models,
                                                     prepare_wheels, read_pins, run_device_check)

if __name__ == "__mp_main__":  # a spawned worker of the local pool re-imports this file under that name
    install_injected_models()


# ----------------------------------------------------------------------------- the stand-ins (tests' and scripts' code)
def planted_face_maps():
    """SCRFD stand-in outputs with one face: a stride-32 anchor at (320, 160) of the 640 letterbox, a box
    8 x 10 strides (one third of the frame's height and more at 1080p: a track for SyncNet), landmarks
    where a face has them (for ArcFace's alignment)."""
    from test_arcface_onnx import KPS_A, empty_maps, plant

    maps = empty_maps()
    plant(maps, 32, 5, 10, 0, 0.9, (4.0, 5.0, 4.0, 5.0), KPS_A)
    return maps


def write_model_files(folder: Path, utmos_size: str) -> dict[str, str]:
    """Random-weight files in the official layouts (the tests' builders) and the ONNX stand-ins."""
    import pytest
    import torch
    import torchvision
    from test_arcface_onnx import build_arcface, build_scrfd
    from test_model_devices import random_inception_file, random_syncnet
    from test_utmos import random_official_state

    from hug_vis_dataset.models.utmos import UTMOSConfig

    folder.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    files = {"alexnet": folder / "alexnet.pth", "syncnet": folder / "syncnet_v2.model",
             "face_detector": folder / "det_10g.onnx", "face_embedder": folder / "w600k_r50.onnx",
             "utmos": folder / "utmos22_strong_random.pt"}
    torch.save(torchvision.models.alexnet(weights=None).state_dict(), files["alexnet"])
    random_syncnet(folder)  # writes syncnet_v2.model
    patch = pytest.MonkeyPatch()
    try:
        files["inception"] = random_inception_file(folder, patch)
    finally:
        patch.undo()
    build_scrfd(files["face_detector"], planted_face_maps())
    build_arcface(files["face_embedder"])
    config = UTMOSConfig() if utmos_size == "full" else UTMOSConfig.tiny()
    torch.save(random_official_state(config, seed=0), files["utmos"])
    out = {kind: str(path) for kind, path in files.items()}
    out["utmos_size"] = utmos_size
    return out


def make_clips(root: Path, size: tuple[int, int], seconds: float, clips: int, fps: float) -> list[Clip]:
    """The synthetic release (``bench_door.make_release``, no mattes) and an audio-driven prediction per clip."""
    from bench_door import make_release

    from hug_vis_dataset.readers import media
    from hug_vis_dataset.datamodel.release import Release

    make_release(root, size, seconds, clips, fps=fps, mattes=False)
    out = []
    for record in sorted(Release(root).records.values(), key=lambda r: r.clip_id):
        vision = root / "pred_vision" / f"{record.clip_id}.mp4"
        talking = root / "pred_talking" / f"{record.clip_id}.mp4"
        audio, rate = media.read_audio(record.audio_path)
        frames = media.write_video(talking, media.iter_video_frames(vision), fps=record.fps, audio=audio,
                                   sample_rate=rate, preset="ultrafast")
        out.append(Clip(record.clip_id, str(record.video_path), str(record.audio_path), str(vision), str(talking),
                        str(root / "pred_voice" / f"{record.clip_id}.wav"), frames, len(audio) / rate))
    return out


# ----------------------------------------------------------------------------- the command line
def parse_args(argv: "list[str] | None" = None) -> argparse.Namespace:
    """The command line (``--help`` lists it); ``--out`` is required unless ``--prepare-wheels``.

    Example:
        >>> args = parse_args(["--out", "out"])
        >>> args.size_wh, args.clips, args.utmos, args.budget_s
        ((1920, 1080), 2, 'full', 420.0)
        >>> parse_args(["--out", "o", "--size", "320x180", "--only", "lpips", "evaluate"]).only
        ['lpips', 'evaluate']
        >>> parse_args(["--prepare-wheels"]).wheels == ROOT / ".whl"
        True
        >>> options(parse_args(["--out", "o", "--rehearse"])).rehearse
        True
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="folder for device_check.json and device_check.md")
    parser.add_argument("--prepare-wheels", action="store_true",
                        help="download the carried wheels into .whl (where PyPI is reachable) and stop")
    parser.add_argument("--wheels", type=Path, default=ROOT / ".whl", help="the carried wheels' folder")
    parser.add_argument("--size", default="1920x1080", help="frame size WxH of the synthetic clips")
    parser.add_argument("--seconds", type=float, default=2.5,
                        help="clip length (Sync-C/D need a face track of more than 50 frames at 25 fps)")
    parser.add_argument("--fps", type=float, default=30.0)
    parser.add_argument("--clips", type=int, default=2)
    parser.add_argument("--utmos", choices=("full", "tiny"), default="full",
                        help="UTMOS22's official size (random weights) or the tests' tiny one")
    parser.add_argument("--only", nargs="*", choices=[c.name for c in CHECKS] + ["evaluate", "workers"],
                        help="parts to run (default: all)")
    parser.add_argument("--kernel-batch", type=int, default=None,
                        help="cap the larger batch of the batch-size checks (default: each scorer's batch)")
    parser.add_argument("--cpu-only", action="store_true", help="ignore a GPU (the CPU half alone)")
    parser.add_argument("--rehearse", action="store_true",
                        help="without a GPU, run the GPU half on the CPU to try its plumbing (no GPU figures)")
    parser.add_argument("--budget-s", type=float, default=420.0,
                        help="parts not started by then are skipped (a device call ends at 600 s)")
    parser.add_argument("--work", type=Path, help="folder for the clips and runs (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    if not args.prepare_wheels and args.out is None:
        parser.error("--out DIR is required")
    width, height = (int(v) for v in args.size.lower().split("x"))
    args.size_wh = (width, height)
    return args


def options(args: argparse.Namespace) -> DeviceCheckOptions:
    """The parsed command line as the library's options (workers get this checkout on their PYTHONPATH)."""
    return DeviceCheckOptions(out=args.out, wheels=args.wheels, size=args.size, seconds=args.seconds, fps=args.fps,
                              clips=args.clips, utmos=args.utmos, only=args.only, kernel_batch=args.kernel_batch,
                              cpu_only=args.cpu_only, rehearse=args.rehearse, budget_s=args.budget_s, work=args.work,
                              worker_paths=(ROOT, ROOT / "scripts", ROOT / "tests"))


def main(argv: "list[str] | None" = None) -> int:
    """``--prepare-wheels``: the carried wheels into ``--wheels``; else the check into ``--out``."""
    args = parse_args(argv)
    if args.prepare_wheels:
        # --wheels is this command's own folder of carried wheels: the old versions go, so one version each stays.
        for old in Path(args.wheels).glob("*.whl"):
            old.unlink()
        return prepare_wheels(args.wheels, ROOT / "constraints.txt")
    return run_device_check(options(args), make_clips, write_model_files)


if __name__ == "__main__":
    sys.exit(main())

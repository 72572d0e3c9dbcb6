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
(the pool's children through this file's ``__mp_main__`` import, Ray's through a worker set-up hook).

On a machine without a GPU the CPU half runs, every GPU part says ``no GPU: skipped``, and the exit
status is 0 when every check that ran passed (``tests/test_device_check.py`` runs it so, small).
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
import datetime
import importlib.util
import json
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT / "tests", ROOT / "scripts", ROOT):  # the library, the bench scripts, the tests' builders
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

#: |GPU - CPU| <= VALUE_TOLERANCE x max(floor, largest |CPU value|), per value kind. Float32 networks sum
#: in other orders on a GPU (cuDNN/cuBLAS algorithms), about 1e-6 to 1e-5 of the scale; 1e-4 leaves ten
#: times that, and stays five times below the half unit (5e-4) of the three decimals the paper tables
#: print for a value below 1 (two above 1: 5e-3), so a pass means both devices print the same tables.
VALUE_TOLERANCE = 1e-4
#: Batch 1 against a larger batch: the bound of tests/test_model_devices.py (relative 1e-5).
BATCH_TOLERANCE = 1e-5

#: Distributions the GPU machine's image lacks (/work/.library/device/KINDS.md) that the check imports,
#: with the module that shows each is installed; versions come from constraints.txt.
CARRIED = {"av": "av", "lpips": "lpips", "torch_fidelity": "torch_fidelity", "Resemblyzer": "resemblyzer",
           "webrtcvad-wheels": "webrtcvad", "librosa": "librosa", "audioread": "audioread", "decorator": "decorator",
           "soundfile": "soundfile", "soxr": "soxr", "pooch": "pooch", "platformdirs": "platformdirs",
           "cffi": "_cffi_backend", "pycparser": "pycparser"}
#: speechmos travels as the two files the library reads (registry name -> path in its wheel): its wheel is
#: 9.4 MB, mostly other models (AECMOS, PLCMOS), and would not fit beside av and Resemblyzer.
DNSMOS_FILES = {"dnsmos_sig_bak_ovr": "speechmos/dnsmos_models/sig_bak_ovr.onnx",
                "dnsmos_p808": "speechmos/dnsmos_models/model_v8.onnx"}
#: What does not travel, measured with ``pip download`` on 2026-12-04, and what the check does instead.
NOT_CARRIED = {
    "ray": "ray 2.60.0's cp312 wheel is 79.3 MB, over the 64 MiB a device call carries: the Ray part runs "
           "where ray is installed; otherwise the local process pool (--num-proc 2) on the GPU stands in",
    "onnxruntime-gpu": "PyPI has no onnxruntime-gpu 1.32.0 wheel (1.31.1 is 255.6 MB): the ONNX models (SCRFD/ArcFace "
                       "stand-ins, DNSMOS) run on the machine's CPU onnxruntime, and each row names the provider used",
    "datasets, evaluate": "imported only by the evaluate modules' door and dataset repos; the check uses neither",
    "torchcodec": "reads dataset-repo references only; the check reads a release tree",
}
#: The wheels' budget: a device call carries 64 MiB in all, the tree itself about 4.5 MB.
WHEEL_BUDGET_MIB = 58.0
WHEEL_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_27_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64",
                   "manylinux1_x86_64")
#: Full grid: 8,400 clips of about 6 s at 30 fps (docs/PERFORMANCE.md, "Full-grid projection").
GRID = {"clips": 8400, "seconds": 6.0, "fps": 30.0}
NO_GPU = "no GPU: skipped"
NOT_STARTED = "not run: --budget-s was spent before this part (the run is incomplete)"
INJECT_ENV = "DEVICE_CHECK_INJECT"  # JSON {"files": ..., "device": ..., "reports": ...} for worker processes


# ----------------------------------------------------------------------------- wheels
def canonical(name: str) -> str:
    """PEP 503 name: ``Resemblyzer`` and ``torch_fidelity`` as pip compares them.

    Example:
        >>> canonical("torch_fidelity"), canonical("Resemblyzer"), canonical("webrtcvad.wheels")
        ('torch-fidelity', 'resemblyzer', 'webrtcvad-wheels')
    """
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(path: Path) -> dict[str, str]:
    """``name==version`` lines of a constraints file, by canonical name."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==", 1)
            pins[canonical(name)] = version.strip()
    return pins


def pip_download(requirement: str, dest: Path) -> None:
    """One cp312 manylinux wheel, no dependencies (the README's recipe for the GPU machine)."""
    platforms = [arg for tag in WHEEL_PLATFORMS for arg in ("--platform", tag)]
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version",
                    "3.12", "--implementation", "cp", *platforms, "-d", str(dest), requirement], check=True)


def prepare_wheels(folder: Path) -> int:
    """Download the carried wheels at their pins into ``folder`` (emptied of wheels first: one version
    each), extract the DNSMOS files, print each size and the total; 1 when over :data:`WHEEL_BUDGET_MIB`."""
    pins = read_pins(ROOT / "constraints.txt")
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.whl"):
        old.unlink()
    unpinned = [d for d in [*CARRIED, "speechmos"] if canonical(d) not in pins]
    if unpinned:
        print(f"error: constraints.txt pins none of {unpinned}", file=sys.stderr)
        return 1
    for dist in CARRIED:
        pip_download(f"{dist}=={pins[canonical(dist)]}", folder)
    with tempfile.TemporaryDirectory(prefix="speechmos_") as scratch:
        pip_download(f"speechmos=={pins['speechmos']}", Path(scratch))
        wheel = next(Path(scratch).glob("*.whl"))
        (folder / "dnsmos").mkdir(exist_ok=True)
        with zipfile.ZipFile(wheel) as archive:
            for member in DNSMOS_FILES.values():
                (folder / "dnsmos" / Path(member).name).write_bytes(archive.read(member))
        speechmos_size = wheel.stat().st_size
    files = sorted(folder.glob("*.whl")) + sorted((folder / "dnsmos").glob("*.onnx"))
    total = sum(f.stat().st_size for f in files)
    for f in files:
        print(f"{f.stat().st_size / 1e6:8.2f} MB  {f.relative_to(folder)}")
    print(f"{total / 1e6:8.2f} MB  in all ({total / 2**20:.1f} MiB; budget {WHEEL_BUDGET_MIB:g} MiB); the speechmos "
          f"wheel ({speechmos_size / 1e6:.1f} MB) is carried as its two DNSMOS files")
    for name, why in NOT_CARRIED.items():
        print(f"not carried: {name}: {why}")
    return 0 if total <= WHEEL_BUDGET_MIB * 2**20 else 1


def install_carried(folder: Path) -> dict[str, Any]:
    """Install the carried wheels whose module is missing into a temporary folder on ``sys.path`` (and on
    ``PYTHONPATH`` for child processes); point the DNSMOS weights at the carried files if speechmos is absent."""
    report: dict[str, Any] = {"folder": str(folder), "installed": [], "missing": []}
    wheels = {canonical(w.name.split("-", 1)[0]): w for w in sorted(folder.glob("*.whl"))} if folder.is_dir() else {}
    needed = [dist for dist, module in CARRIED.items() if importlib.util.find_spec(module) is None]
    carried = [wheels[canonical(d)] for d in needed if canonical(d) in wheels]
    report["missing"] = [d for d in needed if canonical(d) not in wheels]
    if carried:
        site = Path(tempfile.gettempdir()) / "device_check_site"
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                        "--no-cache-dir", "--upgrade", "--target", str(site), *map(str, carried)], check=True)
        sys.path.insert(0, str(site))
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
        importlib.invalidate_caches()
        report["installed"] = [w.name for w in carried]
        report["site"] = str(site)
    if importlib.util.find_spec("speechmos") is None:
        from hug_vis_dataset.weights.registry import env_var

        for name, member in DNSMOS_FILES.items():
            path = folder / "dnsmos" / Path(member).name
            if path.is_file():
                os.environ[env_var(name)] = str(path.resolve())
                report.setdefault("dnsmos_files", []).append(str(path))
    return report


# ----------------------------------------------------------------------------- models
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


def build_models(files: dict[str, str], device: str) -> dict[str, Any]:
    """The scorers' networks on ``device``, loaded by the library's own loaders from ``files``."""
    from hug_vis_dataset.models.arcface import ArcFaceEmbedder, SCRFDDetector
    from hug_vis_dataset.models.inception import load_inception
    from hug_vis_dataset.models.lpips import load_lpips
    from hug_vis_dataset.models.syncnet import load_syncnet
    from hug_vis_dataset.models.utmos import UTMOS22Strong, UTMOSConfig, load_state_dict_official

    config = UTMOSConfig() if files["utmos_size"] == "full" else UTMOSConfig.tiny()
    return {"lpips": load_lpips(alexnet_path=files["alexnet"], verify=False, device=device),
            "inception": load_inception(path=files["inception"], device=device, verify=False),
            "syncnet": load_syncnet(path=files["syncnet"], device=device),
            "face_detector": SCRFDDetector(path=files["face_detector"], device=device),
            "face_embedder": ArcFaceEmbedder(path=files["face_embedder"], device=device),
            "utmos": load_state_dict_official(UTMOS22Strong(config), files["utmos"]).to(device)}


def install_injected_models() -> None:
    """In a worker process (the pool's children, Ray's workers): the check's networks as this process's
    model cache, as the driver injects its own; says where it ran in a small JSON file."""
    spec = os.environ.get(INJECT_ENV)
    if not spec:
        return
    settings = json.loads(spec)
    import torch

    from hug_vis_dataset.tasks import models as model_cache

    model_cache._PROCESS_CACHE = model_cache.ModelCache(settings["device"],
                                                        overrides=build_models(settings["files"], settings["device"]))
    lpips_device = str(next(model_cache._PROCESS_CACHE.get("lpips").parameters()).device)
    record = {"pid": os.getpid(), "device": settings["device"], "lpips_parameters_on": lpips_device,
              "cuda_available": bool(torch.cuda.is_available()),
              "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES")}
    Path(settings["reports"], f"worker-{os.getpid()}.json").write_text(json.dumps(record), encoding="utf-8")


if __name__ == "__mp_main__":  # a spawned worker of the local pool re-imports this file under that name
    install_injected_models()


# ----------------------------------------------------------------------------- inputs
@dataclass
class Clip:
    clip_id: str
    reference_video: str
    reference_audio: str
    vision: str  # degraded prediction (H.264, no audio)
    talking: str  # the same frames with the reference audio (audio-driven: Sync-C/D read the clip's track)
    voice: str  # the reference audio with hiss (WAV)
    frames: int
    audio_seconds: float


def make_clips(root: Path, size: tuple[int, int], seconds: float, clips: int, fps: float) -> list[Clip]:
    """The synthetic release (``bench_door.make_release``, no mattes) and an audio-driven prediction per clip."""
    from bench_door import make_release

    from hug_vis_dataset import media
    from hug_vis_dataset.release import Release

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


def first_frames(path: str, n: int) -> np.ndarray:
    """The first ``n`` decoded frames of a video, uint8 (n, H, W, 3)."""
    from hug_vis_dataset.media import iter_video_frames

    got = []
    for chunk in iter_video_frames(path, n):
        got.append(chunk[:n - sum(len(g) for g in got)].copy())
        if sum(len(g) for g in got) >= n:
            break
    return np.concatenate(got)


# ----------------------------------------------------------------------------- the doors
def vision_reference(clip: Clip) -> dict[str, str]:
    return {"video": clip.reference_video, "audio": clip.reference_audio, "portrait": clip.reference_video}


def door_per_clip(task: str, metrics: tuple[str, ...], which: str) -> Callable:
    """``TaskScorer.score_clip`` of ``task`` on each clip's ``which`` prediction: {metric: per-clip values}."""
    def run(models, clips: list[Clip]) -> tuple[dict[str, np.ndarray], float]:
        from hug_vis_dataset.tasks import get_task

        scorer = get_task(task)
        values = {m: [] for m in metrics}
        for clip in clips:
            reference = {"audio": clip.reference_audio} if task == "voice_cloning" else vision_reference(clip)
            scores = scorer.score_clip(getattr(clip, which), reference, metrics, models, {"chunk_frames": 32})
            if scores.errors:
                raise RuntimeError(f"{clip.clip_id}: {scores.errors}")
            for m in metrics:
                values[m].append(scores.values[m])
        units = sum(c.audio_seconds if task == "voice_cloning" else c.frames for c in clips)
        return {m: np.array(v, np.float64) for m, v in values.items()}, float(units)
    return run


def door_fid_features(models, clips: list[Clip]) -> tuple[dict[str, np.ndarray], float]:
    """FID's per-clip step as ``hugvis evaluate`` runs it: the one-decode pass with ``set_features``."""
    from hug_vis_dataset.tasks.generation import video_pass

    feats = [video_pass(c.vision, {"video": c.reference_video}, (), models,
                        {"chunk_frames": 32, "set_features": ("fid",)}).set_features["fid"] for c in clips]
    return {"features": np.concatenate(feats).astype(np.float64)}, float(sum(c.frames for c in clips))


# -- the network functions at two batch sizes (batch-size invariance), on the first frames of clip 0: batch 1
#    and the scorer's default batch (``--kernel-batch`` caps it), on ``items`` = that batch + 1 items (an uneven
#    split; the door's shapes, so these calls also warm the door up)
def kernel_lpips(models: Any, clips: "list[Clip]", batch: int, cache: "Context", items: int) -> np.ndarray:
    from hug_vis_dataset.metrics.frames import lpips_frames

    pred, ref = cache.frames(clips[0].vision, items), cache.frames(clips[0].reference_video, items)
    return lpips_frames(models.get("lpips"), pred, ref, batch=batch)


def kernel_inception(models: Any, clips: "list[Clip]", batch: int, cache: "Context", items: int) -> np.ndarray:
    from hug_vis_dataset.models.inception import inception_features

    return inception_features(models.get("inception"), cache.frames(clips[0].vision, items), batch=batch)


def kernel_arcface(models: Any, clips: "list[Clip]", batch: int, cache: "Context", items: int) -> np.ndarray:
    from hug_vis_dataset.metrics.identity import aligned_face_of
    from hug_vis_dataset.models.arcface import ArcFaceEmbedder

    faces = np.stack([aligned_face_of(f, models.get("face_detector")) for f in cache.frames(clips[0].vision, items)])
    embedder = ArcFaceEmbedder(path=cache.files["face_embedder"], device=models.device, batch_size=batch)
    return embedder(faces)


def kernel_syncnet(models: Any, clips: "list[Clip]", batch: int, cache: "Context", items: int) -> np.ndarray:
    from hug_vis_dataset.metrics.sync_timeline import video_audio_16k
    from hug_vis_dataset.models.facetrack import crop_face
    from hug_vis_dataset.models.syncnet import SYNC_SAMPLE_RATE, audio_embeddings, lip_embeddings, sync_windows

    frames = cache.frames(clips[0].talking, items + 4)  # a window is 5 frames: ``items`` windows
    (x0, y0, x1, y1), _, _ = models.get("face_detector").detect(frames[0])[0]
    crops = np.stack([crop_face(f, (x1 - x0) / 2, (x0 + x1) / 2, (y0 + y1) / 2) for f in frames])
    audio = video_audio_16k(clips[0].talking)[:len(frames) * SYNC_SAMPLE_RATE // 25]
    windows = sync_windows(len(crops), len(audio))
    net = models.get("syncnet")
    return np.concatenate([lip_embeddings(net, [crops], windows, batch), audio_embeddings(net, audio, windows, batch)], 1)


def kernel_utmos(models: Any, clips: "list[Clip]", batch: int, cache: "Context", items: int) -> np.ndarray:
    from hug_vis_dataset.metrics.voice import prepare_audio
    from hug_vis_dataset.models.utmos import utmos_scores

    audio = prepare_audio(clips[0].voice)
    # utterances of the clip's length (the door's shapes, so this warms it up): 3 by default, batch 2 splits them
    utterances = [audio, 0.8 * audio, audio[::-1].copy(), 0.5 * audio[::-1]][:items]
    return np.array(utmos_scores(models.get("utmos"), utterances, batch))


def warm_dnsmos(models: Any) -> None:
    """DNSMOS's two sessions loaded and run once, on one 9.01 s window of silence."""
    from hug_vis_dataset.metrics.voice import dnsmos

    dnsmos(np.zeros(int(9.01 * 16000) + 1, np.float32), 16000, device=models.device)


def kernel_speaker(models: Any, clips: "list[Clip]", batch: int, cache: "Context", items: int) -> np.ndarray:
    # the partials of the clip (1.3 a second), ``batch`` at a time: ``items`` does not apply
    from hug_vis_dataset.metrics.voice import speaker_embedding

    return speaker_embedding(clips[0].voice, batch_partials=batch, device=models.device)


@dataclass(frozen=True)
class Check:
    """One network metric: its door, its network function at two batch sizes, how values are compared."""

    name: str
    unit: str  # what the door's throughput counts: "frame" or "audio s"
    what: str  # the networks behind it, in words
    door: Callable
    door_name: str
    kernel: "Callable | None" = None
    batches: "tuple[int, int] | None" = None
    floor: float = 1.0  # tolerance scale: max(floor, largest |CPU value|)
    onnx: bool = False  # runs in onnxruntime (no torch memory counters, no TF32)
    warmup: "Callable | None" = None  # for a check without a kernel: loads its networks before the door is timed


CHECKS = (
    Check("lpips", "frame", "LPIPS v0.1 AlexNet (random backbone, the package's heads): torch",
          door_per_clip("vision_driven", ("lpips",), "vision"), "VisionDrivenTask.score_clip (video_pass)",
          kernel_lpips, (1, 8)),
    Check("fid_features", "frame", "FID Inception-v3 pool3 (torch-fidelity layout, random weights): torch",
          door_fid_features, "video_pass(set_features=('fid',)): the runner's FID features",
          kernel_inception, (1, 16), floor=0.0),
    Check("csim", "frame", "SCRFD + ArcFace, the tests' tiny ONNX stand-ins (a planted face): onnxruntime",
          door_per_clip("vision_driven", ("csim",), "vision"), "VisionDrivenTask.score_clip (video_pass)",
          kernel_arcface, (1, 32), onnx=True),
    Check("sync", "frame", "SyncNet S (random weights): torch; faces from the SCRFD stand-in (onnxruntime)",
          door_per_clip("audio_driven", ("sync_c", "sync_d"), "talking"), "AudioDrivenTask.score_clip (video_pass)",
          kernel_syncnet, (1, 20)),
    Check("utmos", "audio s", "UTMOS22 strong (wav2vec 2.0 base + heads, random weights): torch",
          door_per_clip("voice_cloning", ("utmos",), "voice"), "VoiceCloningTask.score_clip",
          kernel_utmos, (1, 2)),
    Check("dnsmos", "audio s", "DNSMOS P.835 + P.808 (speechmos's ONNX files, real weights): onnxruntime",
          door_per_clip("voice_cloning", ("dnsmos", "dnsmos_sig", "dnsmos_bak", "dnsmos_p808"), "voice"),
          "VoiceCloningTask.score_clip", onnx=True, warmup=warm_dnsmos),
    Check("speaker_similarity", "audio s", "Resemblyzer's packaged encoder (real weights): torch",
          door_per_clip("voice_cloning", ("speaker_similarity",), "voice"), "VoiceCloningTask.score_clip",
          kernel_speaker, (1, 16)),
)


# ----------------------------------------------------------------------------- measuring
def synchronize(device: str) -> None:
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


class Context:
    """What the parts share: options, the clips, the model files, models per device, decoded frames."""

    def __init__(self, args, work: Path, clips: list[Clip], files: dict[str, str], gpu: "str | None",
                 started: float) -> None:
        self.args, self.work, self.clips, self.files, self.gpu = args, work, clips, files, gpu
        self._models: dict[str, Any] = {}
        self._frames: dict[tuple[str, int], np.ndarray] = {}
        self.deadline = started + args.budget_s  # counted from the start of the run, clips and installs included

    def models(self, device: str):
        from hug_vis_dataset.tasks import ModelCache

        if device not in self._models:
            self._models[device] = ModelCache(device, overrides=build_models(self.files, device))
        return self._models[device]

    def frames(self, path: str, n: int) -> np.ndarray:
        if (path, n) not in self._frames:
            self._frames[(path, n)] = first_frames(path, n)
        return self._frames[(path, n)]

    def batches(self, check: Check) -> tuple[int, int]:
        """Batch 1 and the check's larger batch, capped by ``--kernel-batch``."""
        small, large = check.batches
        return small, min(large, self.args.kernel_batch or large)

    def over_budget(self) -> bool:
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
    if check.name == "dnsmos":
        from hug_vis_dataset.metrics.voice import _onnx_session, dnsmos_model_path

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
    second = ctx.gpu or ("cpu" if ctx.args.rehearse else None)
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


# ----------------------------------------------------------------------------- hugvis evaluate and workers
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
    from hug_vis_dataset.cli import main as hugvis

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
        from hug_vis_dataset import weights
        from hug_vis_dataset.tasks import models as model_cache

        self.saved = model_cache._PROCESS_CACHE, weights.missing_note
        model_cache._PROCESS_CACHE = self.ctx.models(self.device)
        weights.missing_note = lambda names: None
        return self

    def __exit__(self, *exc):
        from hug_vis_dataset import weights
        from hug_vis_dataset.tasks import models as model_cache

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
    device = ctx.gpu or ("cpu" if ctx.args.rehearse else None)
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
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("worker-*.json"))]


def workers_part(ctx: Context, reference: "dict | None") -> dict[str, Any]:
    """The Ray backend with one GPU worker (where ray is installed) and the local pool of two GPU workers;
    each run's rows against the in-process run's on the same device."""
    device = ctx.gpu or ("cpu" if ctx.args.rehearse else None)
    if device is None:
        return {"ray": {"status": NO_GPU}, "pool": {"status": NO_GPU}}
    part: dict[str, Any] = {"device": device, "rehearsal": ctx.gpu is None}
    base = reference if reference and reference.get("rc") == 0 else None
    for engine in ("ray", "pool"):
        reports = ctx.work / f"reports-{engine}"
        reports.mkdir(exist_ok=True)
        saved = {k: os.environ.get(k) for k in (INJECT_ENV, "PYTHONPATH")}
        os.environ[INJECT_ENV] = json.dumps({"files": ctx.files, "device": device, "reports": str(reports)})
        os.environ["PYTHONPATH"] = os.pathsep.join([*map(str, (ROOT, ROOT / "scripts", ROOT / "tests")),
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
             runtime_env={"worker_process_setup_hook": "device_check.install_injected_models",
                          "env_vars": {INJECT_ENV: os.environ[INJECT_ENV], "PYTHONPATH": os.environ["PYTHONPATH"]}})
    try:
        with injected_weights(ctx, device):  # the driver's FID step and availability check
            out = evaluate_command(ctx, device, "check-ray", ["--backend", "ray", "--num-proc", "1"])
        out["cluster"] = {k: v for k, v in ray.cluster_resources().items() if k in ("CPU", "GPU")}
        out["ray"] = ray.__version__
    finally:
        ray.shutdown()
    return out


# ----------------------------------------------------------------------------- summary
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
    import numba
    import onnxruntime
    import torch

    from hug_vis_dataset.scoring.runner import package_versions

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


def fmt(value: Any, spec: str = ".3g") -> str:
    if value is None:
        return "-"
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return format(value, spec) if isinstance(value, (int, float)) else str(value)


def verdict(ok: "bool | None") -> str:
    return "-" if ok is None else ("pass" if ok else "FAIL")


def markdown(summary: dict[str, Any]) -> str:
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


# ----------------------------------------------------------------------------- main
def parse_args(argv=None) -> argparse.Namespace:
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


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.prepare_wheels:
        return prepare_wheels(args.wheels)
    t0 = time.monotonic()
    try:
        install = install_carried(args.wheels)  # before anything imports the carried packages
    except (OSError, subprocess.CalledProcessError) as err:  # the parts needing them fail, each naming the module
        install = {"folder": str(args.wheels), "installed": [], "missing": ["(pip failed)"], "error": str(err)}
    import torch

    gpu = "cuda" if torch.cuda.is_available() and not args.cpu_only else None
    work = args.work or Path(tempfile.mkdtemp(prefix="device_check_"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ["HUGVIS_CACHE_DIR"] = str(work / "cache")  # nothing written outside the work folder and --out
    summary: dict[str, Any] = {"_t0": t0, "settings": {"size": args.size, "seconds": args.seconds, "fps": args.fps,
                                                       "clips": args.clips, "utmos": args.utmos,
                                                       "kernel_batch": args.kernel_batch, "rehearse": args.rehearse,
                                                       "only": args.only},
                               "environment": environment(gpu, install), "metrics": [], "not_carried": NOT_CARRIED}
    wanted = set(args.only or [c.name for c in CHECKS] + ["evaluate", "workers"])
    try:
        print(f"device check: GPU {summary['environment']['gpu'] or 'none'}, torch {torch.__version__}; "
              f"carried: installed {len(install['installed'])}, missing {install['missing'] or 'none'}", flush=True)
        clips = make_clips(work / "release", args.size_wh, args.seconds, args.clips, args.fps)
        files = write_model_files(work / "models", args.utmos)
        print(f"  [{time.monotonic() - t0:5.0f} s] clips and model files written", flush=True)
        summary["frames"] = sum(c.frames for c in clips)
        summary["audio_seconds"] = sum(c.audio_seconds for c in clips)
        ctx = Context(args, work, clips, files, gpu, t0)
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
            write_summary(summary, args.out)
        if "evaluate" in wanted:
            try:
                summary["evaluate"] = (evaluate_part(ctx) if not ctx.over_budget()
                                       else {"error": NOT_STARTED})
            except Exception as err:  # noqa: BLE001 - reported, never dropped
                summary["evaluate"] = {"error": f"{type(err).__name__}: {err}"}
            print(f"  [{time.monotonic() - t0:5.0f} s] hugvis evaluate: "
                  f"{summary['evaluate'].get('status') or summary['evaluate'].get('error') or 'done'}", flush=True)
            write_summary(summary, args.out)
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
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    text = write_summary(summary, args.out)
    print(text)
    if "error" in summary:
        print(f"error: {summary['error']}", file=sys.stderr)
        return 1
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())

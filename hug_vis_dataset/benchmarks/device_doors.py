"""What the device check scores: its clips, its networks, and per network metric the door and the network function.

The networks: no pretrained weights can be downloaded, so LPIPS's AlexNet, the FID Inception-v3, SyncNet and
UTMOS22 carry random weights in the official layouts (the tests' builders write the files: the command line,
``scripts/device_check.py``, hands them in); a forward pass costs the same whatever the weights, so the times are
the real networks'. SCRFD and ArcFace are the tests' tiny ONNX stand-ins (a planted face), so their rows time our
pre- and post-processing and the onnxruntime path. DNSMOS (speechmos's ONNX files) and Resemblyzer (its packaged
encoder) are the real networks. The networks go into the scorers' model cache (``tasks.models.ModelCache``
overrides) as the tests inject them, in this process and in worker processes (:func:`install_injected_models`).

Each :class:`Check` of :data:`CHECKS` names a metric's door (what every user door goes through: the task scorer's
``score_clip``, or the one-decode pass ``tasks.generation.video_pass`` for FID's features) and its network
function at two batch sizes (batch-size invariance).

Example:
    >>> [check.name for check in CHECKS]
    ['lpips', 'fid_features', 'csim', 'sync', 'utmos', 'dnsmos', 'speaker_similarity']
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

INJECT_ENV = "DEVICE_CHECK_INJECT"  # JSON {"files": ..., "device": ..., "reports": ...} for worker processes


# ----------------------------------------------------------------------------- models
def build_models(files: dict[str, str], device: str) -> dict[str, Any]:
    """The scorers' networks on ``device``, loaded by the library's own loaders from ``files``."""
    from ..models.arcface import ArcFaceEmbedder, SCRFDDetector
    from ..models.inception import load_inception
    from ..models.lpips import load_lpips
    from ..models.syncnet import load_syncnet
    from ..models.utmos import UTMOS22Strong, UTMOSConfig, load_state_dict_official

    config = UTMOSConfig() if files["utmos_size"] == "full" else UTMOSConfig.tiny()
    return {"lpips": load_lpips(alexnet_path=files["alexnet"], verify=False, device=device),
            "inception": load_inception(path=files["inception"], device=device, verify=False),
            "syncnet": load_syncnet(path=files["syncnet"], device=device),
            "face_detector": SCRFDDetector(path=files["face_detector"], device=device),
            "face_embedder": ArcFaceEmbedder(path=files["face_embedder"], device=device),
            "utmos": load_state_dict_official(UTMOS22Strong(config), files["utmos"]).to(device)}


def install_injected_models() -> None:
    """In a worker process (the pool's children, Ray's workers): the check's networks as this process's
    model cache, as the driver injects its own; says where it ran in a small JSON file.

    Does nothing without :data:`INJECT_ENV` (set by :func:`hug_vis_dataset.benchmarks.device_runs.workers_part`
    for its runs only)."""
    spec = os.environ.get(INJECT_ENV)
    if not spec:
        return
    settings = json.loads(spec)
    import torch

    from ..tasks import models as model_cache

    model_cache._PROCESS_CACHE = model_cache.ModelCache(settings["device"],
                                                        overrides=build_models(settings["files"], settings["device"]))
    lpips_device = str(next(model_cache._PROCESS_CACHE.get("lpips").parameters()).device)
    record = {"pid": os.getpid(), "device": settings["device"], "lpips_parameters_on": lpips_device,
              "cuda_available": bool(torch.cuda.is_available()),
              "CUDA_VISIBLE_DEVICES": os.environ.get("CUDA_VISIBLE_DEVICES")}
    Path(settings["reports"], f"worker-{os.getpid()}.json").write_text(json.dumps(record), encoding="utf-8")


# ----------------------------------------------------------------------------- inputs
@dataclass
class Clip:
    """One synthetic clip and the predictions scored on it (files), with its length."""

    clip_id: str
    reference_video: str
    reference_audio: str
    vision: str  # degraded prediction (H.264, no audio)
    talking: str  # the same frames with the reference audio (audio-driven: Sync-C/D read the clip's track)
    voice: str  # the reference audio with hiss (WAV)
    frames: int
    audio_seconds: float


def first_frames(path: str, n: int) -> np.ndarray:
    """The first ``n`` decoded frames of a video, uint8 (n, H, W, 3)."""
    from ..readers.media import iter_video_frames

    got = []
    for chunk in iter_video_frames(path, n):
        got.append(chunk[:n - sum(len(g) for g in got)].copy())
        if sum(len(g) for g in got) >= n:
            break
    return np.concatenate(got)


# ----------------------------------------------------------------------------- the doors
def vision_reference(clip: Clip) -> dict[str, str]:
    """The references a vision-driven clip is scored against (video, audio, the portrait from the video)."""
    return {"video": clip.reference_video, "audio": clip.reference_audio, "portrait": clip.reference_video}


def door_per_clip(task: str, metrics: tuple[str, ...], which: str) -> Callable:
    """``TaskScorer.score_clip`` of ``task`` on each clip's ``which`` prediction: {metric: per-clip values}."""
    def run(models, clips: list[Clip]) -> tuple[dict[str, np.ndarray], float]:
        from ..tasks import get_task

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
    from ..tasks.generation import video_pass

    feats = [video_pass(c.vision, {"video": c.reference_video}, (), models,
                        {"chunk_frames": 32, "set_features": ("fid",)}).set_features["fid"] for c in clips]
    return {"features": np.concatenate(feats).astype(np.float64)}, float(sum(c.frames for c in clips))


# -- the network functions at two batch sizes (batch-size invariance), on the first frames of clip 0: batch 1
#    and the scorer's default batch (``--kernel-batch`` caps it), on ``items`` = that batch + 1 items (an uneven
#    split; the door's shapes, so these calls also warm the door up)
def kernel_lpips(models: Any, clips: "list[Clip]", batch: int, cache: "Context", items: int) -> np.ndarray:
    from ..metrics.frames import lpips_frames

    pred, ref = cache.frames(clips[0].vision, items), cache.frames(clips[0].reference_video, items)
    return lpips_frames(models.get("lpips"), pred, ref, batch=batch)


def kernel_inception(models: Any, clips: "list[Clip]", batch: int, cache: "Context", items: int) -> np.ndarray:
    from ..models.inception import inception_features

    return inception_features(models.get("inception"), cache.frames(clips[0].vision, items), batch=batch)


def kernel_arcface(models: Any, clips: "list[Clip]", batch: int, cache: "Context", items: int) -> np.ndarray:
    from ..metrics.identity import aligned_face_of
    from ..models.arcface import ArcFaceEmbedder

    faces = np.stack([aligned_face_of(f, models.get("face_detector")) for f in cache.frames(clips[0].vision, items)])
    embedder = ArcFaceEmbedder(path=cache.files["face_embedder"], device=models.device, batch_size=batch)
    return embedder(faces)


def kernel_syncnet(models: Any, clips: "list[Clip]", batch: int, cache: "Context", items: int) -> np.ndarray:
    from ..metrics.sync_timeline import video_audio_16k
    from ..models.facetrack import crop_face
    from ..models.syncnet import SYNC_SAMPLE_RATE, audio_embeddings, lip_embeddings, sync_windows

    frames = cache.frames(clips[0].talking, items + 4)  # a window is 5 frames: ``items`` windows
    (x0, y0, x1, y1), _, _ = models.get("face_detector").detect(frames[0])[0]
    crops = np.stack([crop_face(f, (x1 - x0) / 2, (x0 + x1) / 2, (y0 + y1) / 2) for f in frames])
    audio = video_audio_16k(clips[0].talking)[:len(frames) * SYNC_SAMPLE_RATE // 25]
    windows = sync_windows(len(crops), len(audio))
    net = models.get("syncnet")
    return np.concatenate([lip_embeddings(net, [crops], windows, batch), audio_embeddings(net, audio, windows, batch)], 1)


def kernel_utmos(models: Any, clips: "list[Clip]", batch: int, cache: "Context", items: int) -> np.ndarray:
    from ..metrics.voice import prepare_audio
    from ..models.utmos import utmos_scores

    audio = prepare_audio(clips[0].voice)
    # utterances of the clip's length (the door's shapes, so this warms it up): 3 by default, batch 2 splits them
    utterances = [audio, 0.8 * audio, audio[::-1].copy(), 0.5 * audio[::-1]][:items]
    return np.array(utmos_scores(models.get("utmos"), utterances, batch))


def warm_dnsmos(models: Any) -> None:
    """DNSMOS's two sessions loaded and run once, on one 9.01 s window of silence."""
    from ..metrics.voice import dnsmos

    dnsmos(np.zeros(int(9.01 * 16000) + 1, np.float32), 16000, device=models.device)


def kernel_speaker(models: Any, clips: "list[Clip]", batch: int, cache: "Context", items: int) -> np.ndarray:
    # the partials of the clip (1.3 a second), ``batch`` at a time: ``items`` does not apply
    from ..metrics.voice import speaker_embedding

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


__all__ = ["CHECKS", "INJECT_ENV", "Check", "Clip", "build_models", "door_fid_features", "door_per_clip",
           "first_frames", "install_injected_models", "vision_reference"]

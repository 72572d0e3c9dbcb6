"""Video generation metrics (paper Tables 5 and 7): PSNR, SSIM, LPIPS, FID, CSIM, Sync-C, Sync-D.

Pure functions on uint8 RGB frames, plus streaming clip scorers that read videos in chunks
(:func:`hug_vis_dataset.media.iter_video_frames`) so memory does not grow with clip length.
Per-frame values are averaged per clip; the paper's table value is the mean over clips.

Pinned parameters:
- PSNR (:func:`psnr_frames`): ``skimage.metrics.peak_signal_noise_ratio`` with ``data_range=255``
  over all three RGB channels jointly (one MSE per frame). Identical frames have infinite PSNR;
  each frame is capped at :data:`PSNR_CAP_DB` (100 dB) so a clip mean stays finite.
- SSIM (:func:`ssim_frames`): ``skimage.metrics.structural_similarity`` with ``data_range=255``,
  ``channel_axis=-1`` (per RGB channel, then averaged), ``gaussian_weights=True``, ``sigma=1.5``
  (an 11x11 window), ``use_sample_covariance=False``, K1=0.01, K2=0.03: Wang et al. 2004.
- LPIPS: ``lpips`` 0.1.4, AlexNet, v0.1 linear heads, inputs ``x / 127.5 - 1`` in [-1, 1],
  spatially averaged per frame.
- FID: torch-fidelity Inception-v3 pool3 features of all frames of all clips of a system
  vs all reference frames; Frechet distance in float64 (:func:`frechet_distance`).
- CSIM: ArcFace cosine between each generated frame's aligned face and the source face.
- Sync-C / Sync-D: :mod:`hug_vis_dataset.models.syncnet`.

Frame pairing: prediction frame ``i`` is compared with reference frame ``i``; when the counts
differ, the common prefix is scored and the surplus is reported (``frames_dropped``).

Example:
    >>> import numpy as np
    >>> a = np.full((1, 16, 16, 3), 100, np.uint8); b = a.copy(); b[..., 0] = 110
    >>> round(float(psnr_frames(a, b)[0]), 4)  # MSE = 100/3
    32.902
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from . import MetricInfo

PSNR_CAP_DB = 100.0
SSIM_PARAMS = dict(data_range=255, channel_axis=-1, gaussian_weights=True, sigma=1.5,
                   use_sample_covariance=False, K1=0.01, K2=0.03)
FID_EPS = 1e-6

METRIC_INFO: dict[str, MetricInfo] = {
    "psnr": MetricInfo("psnr", "PSNR", "vision_driven", True, 1.0, "Table 7",
                       description="Peak signal-to-noise ratio (dB) per frame, RGB, data range 255."),
    "ssim": MetricInfo("ssim", "SSIM", "vision_driven", True, 1.0, "Table 7",
                       description="Gaussian-window SSIM per RGB channel, averaged, per frame."),
    "lpips": MetricInfo("lpips", "LPIPS", "vision_driven", False, 1.0, "Table 7",
                        ("alexnet", "lpips_alex_linear"), "LPIPS v0.1 AlexNet, inputs in [-1, 1]."),
    "fid": MetricInfo("fid", "FID", "vision_driven", False, 1.0, "Table 7", ("inception_fid",),
                      "Frechet Inception distance over all frames of a system vs the reference."),
    "csim": MetricInfo("csim", "CSIM", "audio_driven", True, 1.0, "Tables 5, 7",
                       ("arcface_det_10g", "arcface_w600k_r50"),
                       "ArcFace cosine similarity of generated faces to the source identity."),
    "sync_c": MetricInfo("sync_c", "Sync-C", "audio_driven", True, 1.0, "Table 5",
                         ("syncnet_v2", "arcface_det_10g"), "SyncNet confidence: median - min distance."),
    "sync_d": MetricInfo("sync_d", "Sync-D", "audio_driven", False, 1.0, "Table 5",
                         ("syncnet_v2", "arcface_det_10g"), "SyncNet minimum mean distance over offsets."),
}


# ----------------------------------------------------------------------------- checks
def _check_frames(pred: np.ndarray, ref: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pred, ref = np.asarray(pred), np.asarray(ref)
    for name, arr in (("prediction", pred), ("reference", ref)):
        if arr.dtype != np.uint8:
            raise ValueError(f"{name} frames must be uint8, got {arr.dtype}")
        if arr.ndim != 4 or arr.shape[-1] != 3:
            raise ValueError(f"{name} frames must be (n, H, W, 3), got {arr.shape}")
    if pred.shape != ref.shape:
        raise ValueError(f"prediction {pred.shape} and reference {ref.shape} frames differ in shape")
    if len(pred) == 0:
        raise ValueError("no frames")
    return pred, ref


# ----------------------------------------------------------------------------- PSNR / SSIM
def psnr_frames(pred: np.ndarray, ref: np.ndarray, cap_db: float = PSNR_CAP_DB) -> np.ndarray:
    """Per-frame PSNR (dB) of uint8 RGB frames, capped at ``cap_db`` (identical frames -> cap).

    Example:
        >>> import numpy as np
        >>> x = np.zeros((2, 8, 8, 3), np.uint8)
        >>> psnr_frames(x, x).tolist()
        [100.0, 100.0]
    """
    from skimage.metrics import peak_signal_noise_ratio

    pred, ref = _check_frames(pred, ref)
    out = np.empty(len(pred))
    for i in range(len(pred)):
        if np.array_equal(pred[i], ref[i]):
            out[i] = cap_db  # skimage would divide by zero (inf)
        else:
            out[i] = min(cap_db, peak_signal_noise_ratio(ref[i], pred[i], data_range=255))
    return out


def ssim_frames(pred: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per-frame SSIM of uint8 RGB frames with :data:`SSIM_PARAMS` (frames must be >= 11 px).

    Example:
        >>> import numpy as np
        >>> x = np.random.default_rng(0).integers(0, 255, (1, 16, 16, 3)).astype(np.uint8)
        >>> float(ssim_frames(x, x)[0])
        1.0
    """
    from skimage.metrics import structural_similarity

    pred, ref = _check_frames(pred, ref)
    if min(pred.shape[1:3]) < 11:
        raise ValueError(f"SSIM needs frames of at least 11x11 pixels, got {pred.shape[1:3]}")
    return np.array([structural_similarity(ref[i], pred[i], **SSIM_PARAMS) for i in range(len(pred))])


# ----------------------------------------------------------------------------- LPIPS
def load_lpips(alexnet_path: "str | None" = None, linear_path: "str | None" = None, verify: bool = True):
    """``lpips.LPIPS(net='alex', version='0.1')`` with both files from the weights layer.

    The AlexNet backbone is loaded into a torchvision ``alexnet(weights=None)`` from the
    resolved file and copied into lpips' slices, so no implicit torchvision download happens.

    ``verify=False`` skips the sha256 check of an explicit backbone file (tests with random
    weights); paper numbers need the pinned file.

    Raises:
        WeightsMissingError: ``alexnet-owt-7be5be79.pth`` (or the linear heads) are absent.
        WeightsHashError: the backbone file is not the pinned torchvision file.
    """
    import lpips
    import torch
    import torchvision

    from ..weights import resolve

    backbone_file = resolve("alexnet", path=alexnet_path, verify=verify)
    linear_file = resolve("lpips_alex_linear", path=linear_path)
    tv = torchvision.models.alexnet(weights=None)
    tv.load_state_dict(torch.load(str(backbone_file), map_location="cpu", weights_only=True))
    model = lpips.LPIPS(net="alex", version="0.1", pretrained=True, pnet_rand=True,
                        model_path=str(linear_file), verbose=False)
    features = tv.features.state_dict()
    state = {}
    for k in range(1, 6):
        for idx in getattr(model.net, f"slice{k}")._modules:
            for p in ("weight", "bias"):
                if f"{idx}.{p}" in features:
                    state[f"slice{k}.{idx}.{p}"] = features[f"{idx}.{p}"]
    model.net.load_state_dict(state, strict=True)
    return model.eval()


def lpips_frames(model, pred: np.ndarray, ref: np.ndarray, batch: int = 8) -> np.ndarray:
    """Per-frame LPIPS distance with a loaded model (:func:`load_lpips`); inputs scaled to [-1, 1]."""
    import torch

    pred, ref = _check_frames(pred, ref)
    out = []
    with torch.no_grad():
        for s in range(0, len(pred), batch):
            to_t = lambda a: torch.from_numpy(a[s:s + batch].transpose(0, 3, 1, 2).astype(np.float32) / 127.5 - 1.0)  # noqa: E731
            out.append(model(to_t(pred), to_t(ref)).reshape(-1).double().numpy())
    return np.concatenate(out)


# ----------------------------------------------------------------------------- FID
@dataclass
class GaussianStats:
    """Streaming first and second moments of feature vectors (float64 sums: batch-independent).

    Example:
        >>> import numpy as np
        >>> x = np.random.default_rng(0).normal(size=(50, 3))
        >>> s = GaussianStats(3); s.update(x[:7]); s.update(x[7:])
        >>> np.allclose(s.covariance(), np.cov(x, rowvar=False))
        True
    """

    dim: int
    n: int = 0
    sum_x: np.ndarray = field(default=None)  # type: ignore[assignment]
    sum_xx: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self):
        if self.sum_x is None:
            self.sum_x = np.zeros(self.dim)
        if self.sum_xx is None:
            self.sum_xx = np.zeros((self.dim, self.dim))

    def update(self, features: np.ndarray) -> None:
        f = np.asarray(features, dtype=np.float64)
        if f.ndim != 2 or f.shape[1] != self.dim:
            raise ValueError(f"features must be (n, {self.dim}), got {f.shape}")
        if not np.all(np.isfinite(f)):
            raise ValueError("features contain NaN or inf")
        self.n += len(f)
        self.sum_x += f.sum(0)
        self.sum_xx += f.T @ f

    def mean(self) -> np.ndarray:
        if self.n == 0:
            raise ValueError("no features accumulated")
        return self.sum_x / self.n

    def covariance(self) -> np.ndarray:
        """Unbiased covariance (ddof=1, as ``np.cov`` in the FID reference code)."""
        if self.n < 2:
            raise ValueError(f"covariance needs at least 2 samples, got {self.n}")
        mu = self.mean()
        return (self.sum_xx - self.n * np.outer(mu, mu)) / (self.n - 1)

    def save(self, path: "str | Path") -> None:
        np.savez(path, n=self.n, sum_x=self.sum_x, sum_xx=self.sum_xx)

    @classmethod
    def load(cls, path: "str | Path") -> "GaussianStats":
        with np.load(path) as z:
            return cls(int(z["sum_x"].shape[0]), int(z["n"]), z["sum_x"].copy(), z["sum_xx"].copy())


def frechet_distance(mu1: np.ndarray, sigma1: np.ndarray, mu2: np.ndarray, sigma2: np.ndarray,
                     eps: float = FID_EPS) -> float:
    """``||mu1 - mu2||^2 + tr(S1 + S2 - 2 sqrt(S1 S2))`` in float64.

    When ``sqrtm(S1 S2)`` is not finite (singular product), ``eps * I`` is added to both
    covariances (the usual fallback of the FID reference code). A small imaginary part from
    numerical error is dropped; a large one (> 1e-3) raises.

    Example:
        >>> import numpy as np
        >>> round(frechet_distance(np.zeros(2), np.eye(2), np.ones(2), 4 * np.eye(2)), 6)
        4.0
    """
    from scipy import linalg

    mu1, mu2 = np.atleast_1d(np.asarray(mu1, np.float64)), np.atleast_1d(np.asarray(mu2, np.float64))
    s1, s2 = np.atleast_2d(np.asarray(sigma1, np.float64)), np.atleast_2d(np.asarray(sigma2, np.float64))
    if mu1.shape != mu2.shape or s1.shape != s2.shape or s1.shape != (mu1.size, mu1.size):
        raise ValueError(f"shape mismatch: mu {mu1.shape}/{mu2.shape}, sigma {s1.shape}/{s2.shape}")
    for arr in (mu1, mu2, s1, s2):
        if not np.all(np.isfinite(arr)):
            raise ValueError("statistics contain NaN or inf")

    def _sqrtm(a):
        r = linalg.sqrtm(a)
        return r[0] if isinstance(r, tuple) else r

    diff = mu1 - mu2
    covmean = _sqrtm(s1 @ s2)
    if not np.all(np.isfinite(covmean)):
        offset = np.eye(s1.shape[0]) * eps
        covmean = _sqrtm((s1 + offset) @ (s2 + offset))
    if np.iscomplexobj(covmean):
        if not np.allclose(np.diagonal(covmean).imag, 0, atol=1e-3):
            raise ValueError(f"sqrtm has a large imaginary component {np.max(np.abs(covmean.imag))}")
        covmean = covmean.real
    return float(diff @ diff + np.trace(s1) + np.trace(s2) - 2 * np.trace(covmean))


def fid_from_stats(a: GaussianStats, b: GaussianStats) -> float:
    """FID between two accumulated feature sets; warns when either is rank-deficient."""
    for label, s in (("generated", a), ("reference", b)):
        if s.n < s.dim:
            warnings.warn(f"FID {label} set has {s.n} frames < {s.dim} feature dimensions: "
                          "the covariance is singular and the value is unstable", stacklevel=2)
    return frechet_distance(a.mean(), a.covariance(), b.mean(), b.covariance())


def stats_cache_key(dataset: str, config: "dict | str", extractor: str) -> str:
    """Stable key of cached reference statistics: dataset id, config and extractor id."""
    text = json.dumps({"dataset": dataset, "config": config, "extractor": extractor}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def cached_reference_stats(key: str, compute: Callable[[], GaussianStats],
                           cache_dir: "str | Path | None" = None) -> GaussianStats:
    """Load ``<cache>/fid_stats/<key>.npz`` or compute and store it."""
    base = Path(cache_dir or os.environ.get("HUGVIS_CACHE_DIR") or Path.home() / ".cache" / "hugvis")
    path = base / "fid_stats" / f"{key}.npz"
    if path.is_file():
        return GaussianStats.load(path)
    stats = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    stats.save(path)
    return stats


def video_inception_stats(paths: Iterable["str | Path"], net=None, chunk_frames: int = 32) -> GaussianStats:
    """Inception statistics of all frames of all videos (streamed)."""
    from ..media import iter_video_frames
    from ..models.inception import FEATURE_DIM, inception_features, load_inception

    net = net if net is not None else load_inception()
    stats = GaussianStats(FEATURE_DIM)
    for p in paths:
        for chunk in iter_video_frames(p, chunk_frames):
            stats.update(inception_features(net, chunk))
    return stats


# ----------------------------------------------------------------------------- CSIM
def cosine_similarity(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of (n, d) and (n, d) or (1, d) embeddings."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    na, nb = np.linalg.norm(a, axis=-1), np.linalg.norm(b, axis=-1)
    if np.any(na == 0) or np.any(nb == 0):
        raise ValueError("zero embedding: cosine undefined")
    return (a * b).sum(-1) / (na * nb)


@dataclass(frozen=True)
class CsimResult:
    csim: float
    frames_scored: int
    frames_no_face: int


def csim_clip(frames: Iterable[np.ndarray], source_face: np.ndarray, detector, embedder) -> CsimResult:
    """Mean cosine of each frame's largest aligned face to the aligned ``source_face`` (112x112).

    Frames without a detected face are counted (``frames_no_face``), not scored.

    Args:
        frames: iterable of uint8 (n, H, W, 3) chunks.
        source_face: aligned uint8 (112, 112, 3) source face.
        detector: object with ``detect(image) -> [(box, landmarks5, score), ...]`` (largest first).
        embedder: callable (n, 112, 112, 3) uint8 -> (n, d) embeddings.
    """
    from ..models.arcface import align_face

    src = embedder(np.asarray(source_face)[None])
    total, scored, missing = 0.0, 0, 0
    for chunk in frames:
        faces = []
        for frame in chunk:
            found = detector.detect(frame)
            if found:
                faces.append(align_face(frame, found[0][1]))
            else:
                missing += 1
        if faces:
            sims = cosine_similarity(embedder(np.stack(faces)), src)
            total += float(sims.sum())
            scored += len(faces)
    if scored == 0:
        raise ValueError(f"no face detected in any of {missing} frames")
    return CsimResult(total / scored, scored, missing)


def aligned_face_of(image: np.ndarray, detector) -> np.ndarray:
    """Largest detected face of an image, aligned to 112x112; raises if none."""
    from ..models.arcface import align_face

    found = detector.detect(np.asarray(image))
    if not found:
        raise ValueError("no face detected in the source image")
    return align_face(image, found[0][1])


# ----------------------------------------------------------------------------- streaming scorers
def paired_chunks(pred_path, ref_path, chunk_frames: int = 32) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Aligned (pred, ref) chunks over the common frame prefix of two videos (any chunk sizes)."""
    from ..media import iter_video_frames

    pit, rit = iter_video_frames(pred_path, chunk_frames), iter_video_frames(ref_path, chunk_frames)
    pbuf = rbuf = None
    while True:
        if pbuf is None or len(pbuf) == 0:
            pbuf = next(pit, None)
        if rbuf is None or len(rbuf) == 0:
            rbuf = next(rit, None)
        if pbuf is None or rbuf is None:
            return
        n = min(len(pbuf), len(rbuf))
        yield pbuf[:n], rbuf[:n]
        pbuf, rbuf = pbuf[n:], rbuf[n:]


def score_video_pair(pred_path, ref_path, metrics: "Iterable[str]" = ("psnr", "ssim"), lpips_model=None,
                     chunk_frames: int = 32) -> dict[str, float]:
    """Per-clip means of frame metrics of a generated video against its reference video.

    Returns a dict with each metric plus ``frames`` (scored) and ``frames_dropped`` (the
    surplus of the longer video, reported rather than hidden).
    """
    from ..media import video_info

    metrics = list(metrics)
    unknown = set(metrics) - {"psnr", "ssim", "lpips"}
    if unknown:
        raise ValueError(f"frame metrics are psnr, ssim, lpips; got {sorted(unknown)}")
    if "lpips" in metrics and lpips_model is None:
        lpips_model = load_lpips()
    sums = {m: 0.0 for m in metrics}
    n = 0
    for p, r in paired_chunks(pred_path, ref_path, chunk_frames):
        if p.shape != r.shape:
            raise ValueError(f"{pred_path} frames {p.shape[1:]} differ from reference {r.shape[1:]}")
        if "psnr" in sums:
            sums["psnr"] += float(psnr_frames(p, r).sum())
        if "ssim" in sums:
            sums["ssim"] += float(ssim_frames(p, r).sum())
        if "lpips" in sums:
            sums["lpips"] += float(lpips_frames(lpips_model, p, r).sum())
        n += len(p)
    if n == 0:
        raise ValueError(f"no frames to compare between {pred_path} and {ref_path}")
    total = max(video_info(pred_path).frames, video_info(ref_path).frames)
    return {**{m: v / n for m, v in sums.items()}, "frames": float(n), "frames_dropped": float(total - n)}


# ----------------------------------------------------------------------------- Sync
def resample_indices(n_frames: int, fps_in: float, fps_out: float = 25.0) -> np.ndarray:
    """Source frame for each output frame at ``fps_out`` (nearest in time, like ffmpeg's fps filter).

    Example:
        >>> resample_indices(6, 30.0, 25.0).tolist()
        [0, 1, 2, 4, 5]
    """
    if fps_in <= 0 or fps_out <= 0:
        raise ValueError("frame rates must be positive")
    n_out = int(math.floor(n_frames * fps_out / fps_in + 1e-9))
    idx = np.floor(np.arange(n_out) * fps_in / fps_out + 0.5).astype(int)
    return np.minimum(idx, n_frames - 1)


def read_video_audio(path: "str | Path", rate: int = 16000) -> np.ndarray:
    """Mono float32 audio track of a video, resampled to ``rate``."""
    import av

    from ..media import MediaError, resample

    parts, src_rate = [], None
    try:
        with av.open(str(path)) as container:
            if not container.streams.audio:
                raise MediaError(f"{path} has no audio track")
            stream = container.streams.audio[0]
            for frame in container.decode(stream):
                src_rate = frame.sample_rate
                arr = frame.to_ndarray().astype(np.float32)
                if arr.dtype.kind == "i":
                    arr = arr / 32768.0
                if not frame.format.is_planar:
                    arr = arr.reshape(-1, len(frame.layout.channels)).T
                parts.append(arr.mean(axis=0))
    except av.error.FFmpegError as err:
        raise MediaError(f"cannot decode audio of {path}: {err}") from err
    if not parts:
        raise MediaError(f"{path} has an empty audio track")
    return resample(np.concatenate(parts), int(src_rate), rate)


class SyncFailure(ValueError):
    """A video that cannot be scored by SyncNet (no valid face track, too short): no number is made up."""


def _boxes_of(detector, frame: np.ndarray) -> list:
    """Boxes from a detector object (``.detect`` -> ``[(box, landmarks, score)]``) or a callable -> boxes."""
    if hasattr(detector, "detect"):
        return [d[0] for d in detector.detect(frame)]
    return list(detector(frame))


def _frames_at(video_path, keep: np.ndarray, chunk_frames: int, start: int = 0, stop: "int | None" = None
               ) -> Iterator[tuple[int, np.ndarray]]:
    """(output index, frame) of output frames ``start..stop-1`` of the resampled timeline ``keep``."""
    from ..media import iter_video_frames

    stop = len(keep) if stop is None else stop
    o, i = start, 0
    for chunk in iter_video_frames(video_path, chunk_frames):
        for frame in chunk:
            while o < stop and keep[o] == i:  # a source frame may serve several output frames
                yield o, frame
                o += 1
            if o >= stop:
                return
            i += 1


def syncnet_clip(video_path: "str | Path", net=None, detector=None, vshift: int = 15,
                 min_track: int = 50, min_face_size: float = 100, num_failed_det: int = 25,
                 iou_threshold: float = 0.5, crop_scale: float = 0.4, batch: int = 20,
                 chunk_frames: int = 32) -> dict:
    """Sync-C, Sync-D and offset of one talking-head video (its own audio track).

    The syncnet_python / LatentSync protocol: the video on a 25 fps timeline
    (:func:`resample_indices`), audio at 16 kHz mono; faces detected on every frame and linked into
    tracks (:func:`hug_vis_dataset.models.facetrack.track_faces`: IoU > ``iou_threshold``, gaps up
    to ``num_failed_det`` frames interpolated, more than ``min_track`` detections, mean box side
    above ``min_face_size`` px); each track median-filtered, cropped with ``crop_scale`` padding to
    224x224 and scored with the audio of its own time span. The clip's Sync-C, Sync-D and offset
    are means over tracks (LatentSync averages confidences and offsets over its crop videos).

    Difference from the reference: the default detector is SCRFD (``det_10g``), not S3FD, and
    the clip is one shot (no scene detection). ``min_track`` defaults to LatentSync's 50 frames
    (run_pipeline uses 100); the clip must be longer than that at 25 fps.

    Args:
        video_path: video with its audio track.
        net: loaded SyncNet ``S`` (default :func:`~hug_vis_dataset.models.syncnet.load_syncnet`).
        detector: ``.detect(frame) -> [(box, landmarks, score)]`` or a callable
            ``frame -> [(x0, y0, x1, y1), ...]`` (default SCRFD).
        vshift: offsets searched, in frames.
        batch, chunk_frames: windows per forward pass and frames per decoded chunk (the result
            does not depend on them).

    Returns:
        ``sync_c``, ``sync_d``, ``offset`` (means over scored tracks), ``frames`` (frames at
        25 fps), ``frames_untracked`` (frames in no kept track), ``tracks_failed`` and ``tracks``:
        per track ``start``, ``end`` (inclusive, 25 fps frames), ``detected`` (frames with a
        detection), ``windows``, ``sync_c``, ``sync_d``, ``offset``, ``mdist`` (mean distance per
        shift ``-vshift..vshift`` of the search, see
        :func:`~hug_vis_dataset.models.syncnet.sync_offset_search`), or ``error``.

    Raises:
        SyncFailure: no face track passes the filters, or no track is long enough to score.
    """
    from ..media import video_info
    from ..models.facetrack import smooth_track, crop_face, track_faces
    from ..models.syncnet import (SYNC_FPS, SYNC_SAMPLE_RATE, audio_embeddings, lip_embeddings,
                                  load_syncnet, sync_offset_search, sync_windows)

    if detector is None:
        from ..models.arcface import SCRFDDetector

        detector = SCRFDDetector()
    net = net if net is not None else load_syncnet()
    info = video_info(video_path)
    keep = resample_indices(info.frames, info.fps, SYNC_FPS)  # output frame -> source frame
    n_out = len(keep)
    # pass 1: boxes only (frames are not kept)
    detections: list[list] = [_boxes_of(detector, frame) for _, frame in _frames_at(video_path, keep, chunk_frames)]
    tracks = track_faces(detections, iou_threshold, num_failed_det, min_track, min_face_size)
    if not tracks:
        n_det = sum(1 for d in detections if d)
        raise SyncFailure(f"{video_path}: no face track (faces in {n_det} of {n_out} frames at 25 fps; a track "
                          f"needs more than {min_track} linked detections with mean side > {min_face_size} px)")
    audio = read_video_audio(video_path, SYNC_SAMPLE_RATE)
    per_frame = SYNC_SAMPLE_RATE // SYNC_FPS
    covered = np.zeros(n_out, bool)
    results = []
    for track in tracks:
        covered[track.start:track.end + 1] = True
        row = {"start": track.start, "end": track.end, "detected": int(track.detected.sum())}
        segment = audio[track.start * per_frame:(track.end + 1) * per_frame]
        n_win = sync_windows(len(track.frames), len(segment))
        if n_win <= 0:
            results.append(row | {"error": f"track of {len(track.frames)} frames with {len(segment)} audio "
                                           "samples is too short for SyncNet"})
            continue
        size, cx, cy = smooth_track(track.boxes)

        def crops(track=track, size=size, cx=cx, cy=cy):
            buf = []
            for o, frame in _frames_at(video_path, keep, chunk_frames, track.start, track.end + 1):
                k = o - track.start
                buf.append(crop_face(frame, size[k], cx[k], cy[k], crop_scale))
                if len(buf) == chunk_frames:
                    yield np.stack(buf)
                    buf = []
            if buf:
                yield np.stack(buf)

        v = lip_embeddings(net, crops(), n_win, batch)
        a = audio_embeddings(net, segment, n_win, batch)
        c, d, off, mdist = sync_offset_search(v, a, vshift)
        results.append(row | {"windows": n_win, "sync_c": c, "sync_d": d, "offset": int(off),
                              "mdist": mdist.tolist()})
    scored = [r for r in results if "error" not in r]
    if not scored:
        raise SyncFailure(f"{video_path}: no face track long enough for SyncNet: {results}")
    return {"sync_c": float(np.mean([r["sync_c"] for r in scored])),
            "sync_d": float(np.mean([r["sync_d"] for r in scored])),
            "offset": float(np.mean([r["offset"] for r in scored])),
            "frames": n_out, "frames_untracked": int(n_out - covered.sum()),
            "tracks_failed": len(results) - len(scored), "tracks": results}


# ----------------------------------------------------------------------------- availability
def metric_availability() -> dict[str, "str | None"]:
    """Per metric: None if it can run here, else why not (``needs weights: run ...``).

    Example:
        >>> metric_availability()["psnr"] is None
        True
    """
    from ..weights import missing_note

    return {name: missing_note(info.needs_weights) for name, info in METRIC_INFO.items()}


# ----------------------------------------------------------------------------- dataset-level entry points
def _check_pairs(predictions, references) -> None:
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    if not predictions:
        raise ValueError("no clips")


def evaluate_frame_metric(predictions: "list[str]", references: "list[str]", metric: str,
                          chunk_frames: int = 32) -> dict:
    """Mean over clips of the per-clip frame mean of ``psnr``, ``ssim`` or ``lpips`` (video paths)."""
    _check_pairs(predictions, references)
    model = load_lpips() if metric == "lpips" else None
    per_clip = [score_video_pair(p, r, [metric], lpips_model=model, chunk_frames=chunk_frames)
                for p, r in zip(predictions, references)]
    return {metric: float(np.mean([c[metric] for c in per_clip])), "per_clip": [c[metric] for c in per_clip],
            "frames_dropped": int(sum(c["frames_dropped"] for c in per_clip))}


def evaluate_fid(predictions: "list[str]", references: "list[str]") -> dict:
    """FID of all frames of the predicted videos vs all frames of the reference videos."""
    _check_pairs(predictions, references)
    from ..models.inception import load_inception

    net = load_inception()
    gen, ref = video_inception_stats(predictions, net), video_inception_stats(references, net)
    return {"fid": fid_from_stats(gen, ref), "frames_generated": gen.n, "frames_reference": ref.n}


_IMAGE_EXT = (".png", ".jpg", ".jpeg", ".bmp", ".webp")


def csim_video(pred_path, ref_path, detector=None, embedder=None) -> CsimResult:
    """CSIM of one generated video: to a source portrait (image file) or, for a reference video,
    to the aligned reference frame of the same index (frames without a face on either side are
    counted in ``frames_no_face``)."""
    import cv2

    from ..media import iter_video_frames
    from ..models.arcface import ArcFaceEmbedder, SCRFDDetector, align_face

    detector = detector if detector is not None else SCRFDDetector()
    embedder = embedder if embedder is not None else ArcFaceEmbedder()
    if str(ref_path).lower().endswith(_IMAGE_EXT):
        bgr = cv2.imread(str(ref_path), cv2.IMREAD_COLOR)
        if bgr is None:
            raise ValueError(f"cannot read source portrait {ref_path}")
        return csim_clip(iter_video_frames(pred_path), aligned_face_of(bgr[..., ::-1].copy(), detector),
                         detector, embedder)
    total, scored, missing = 0.0, 0, 0
    for p, r in paired_chunks(pred_path, ref_path):
        faces_p, faces_r = [], []
        for fp, fr in zip(p, r):
            dp, dr = detector.detect(fp), detector.detect(fr)
            if dp and dr:
                faces_p.append(align_face(fp, dp[0][1]))
                faces_r.append(align_face(fr, dr[0][1]))
            else:
                missing += 1
        if faces_p:
            total += float(cosine_similarity(embedder(np.stack(faces_p)), embedder(np.stack(faces_r))).sum())
            scored += len(faces_p)
    if scored == 0:
        raise ValueError(f"no face pair detected in {pred_path}")
    return CsimResult(total / scored, scored, missing)


def evaluate_csim(predictions: "list[str]", references: "list[str]", detector=None, embedder=None) -> dict:
    """Mean over clips of per-clip CSIM; reports frames without a face.

    Args:
        predictions: generated video paths.
        references: per prediction, a source portrait image or the reference video.
        detector, embedder: injected models (default: SCRFD and ArcFace from the weights layer).
    """
    _check_pairs(predictions, references)
    from ..models.arcface import ArcFaceEmbedder, SCRFDDetector

    det = detector if detector is not None else SCRFDDetector()
    emb = embedder if embedder is not None else ArcFaceEmbedder()
    res = [csim_video(p, r, det, emb) for p, r in zip(predictions, references)]
    return {"csim": float(np.mean([r.csim for r in res])), "per_clip": [r.csim for r in res],
            "frames_no_face": int(sum(r.frames_no_face for r in res))}


def evaluate_syncnet(predictions: "list[str]", net=None, detector=None, **options) -> dict:
    """Mean over videos of Sync-C, Sync-D and the offset (each video with its own audio track).

    A video without a usable face track is a per-clip failure (:class:`SyncFailure`): it is listed
    in ``failures`` with its reason and left out of the means (``clips_scored`` says how many
    entered them). When no video can be scored, :class:`SyncFailure` is raised.

    Args:
        predictions: video paths.
        net, detector: injected models (default: the weights layer's SyncNet and SCRFD).
        **options: passed to :func:`syncnet_clip` (``min_track``, ``min_face_size`` ...).
    """
    if not predictions:
        raise ValueError("no clips")
    from ..models.syncnet import load_syncnet

    if detector is None:
        from ..models.arcface import SCRFDDetector

        detector = SCRFDDetector()
    net = net if net is not None else load_syncnet()
    per_clip, failures = [], []
    for p in predictions:
        try:
            per_clip.append(syncnet_clip(p, net, detector, **options))
        except SyncFailure as err:
            per_clip.append(None)
            failures.append({"path": str(p), "error": str(err)})
    scored = [r for r in per_clip if r is not None]
    if not scored:
        raise SyncFailure(f"no video could be scored: {failures}")
    return {k: float(np.mean([r[k] for r in scored])) for k in ("sync_c", "sync_d", "offset")} | {
        "clips_scored": len(scored), "failures": failures, "per_clip": per_clip}

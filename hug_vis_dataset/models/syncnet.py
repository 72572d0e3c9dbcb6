"""SyncNet (Chung & Zisserman 2016) as used for Sync-C / Sync-D, plus its MFCC front end.

The network is the ``S`` model of joonson/syncnet_python (also used by LatentSync's eval):
an audio 2D-CNN on 13 x 20 MFCC blocks and a lip 3D-CNN on 5 x 224 x 224 RGB windows,
both ending in 1024-d embeddings. Parameter names follow that code, so the official
``syncnet_v2.model`` state dict loads key for key (:func:`load_syncnet`).

Protocol details kept from syncnet_python (``SyncNetInstance.evaluate``):
- frames are fed as raw 0..255 values in **BGR** order (it reads JPEGs with ``cv2.imread``);
- the audio is 16 kHz mono int16 PCM, MFCC computed on the int16 sample values;
- window ``i`` takes frames ``i..i+4`` and MFCC frames ``4i..4i+19``; windows ``0..L-6`` where
  ``L = min(n_frames, floor(n_samples / 640))`` (the reference drops the last full window).

Example:
    >>> import numpy as np
    >>> mfcc(np.zeros(16000), 16000).shape
    (99, 13)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import torch

SYNC_FPS = 25
SYNC_SAMPLE_RATE = 16000
SYNC_CROP = 224
WINDOW_FRAMES = 5
MFCC_PER_FRAME = 4  # 100 Hz MFCC / 25 fps
EMBED_DIM = 1024


# ----------------------------------------------------------------------------- MFCC
def _hz_to_mel(hz):
    return 2595.0 * np.log10(1.0 + np.asarray(hz, dtype=np.float64) / 700.0)


def _mel_to_hz(mel):
    return 700.0 * (10.0 ** (np.asarray(mel, dtype=np.float64) / 2595.0) - 1.0)


def mel_filterbank(nfilt: int = 26, nfft: int = 512, sample_rate: int = 16000,
                   lowfreq: float = 0.0, highfreq: "float | None" = None) -> np.ndarray:
    """Triangular mel filters (nfilt, nfft//2+1) on FFT-bin edges ``floor((nfft+1) * f / sr)``.

    The integer bin edges (not continuous frequencies) are what python_speech_features uses, and
    they change the features noticeably, so they are kept.
    """
    highfreq = highfreq or sample_rate / 2
    mel_points = np.linspace(_hz_to_mel(lowfreq), _hz_to_mel(highfreq), nfilt + 2)
    bins = np.floor((nfft + 1) * _mel_to_hz(mel_points) / sample_rate).astype(int)
    bank = np.zeros((nfilt, nfft // 2 + 1))
    for j in range(nfilt):
        left, centre, right = bins[j], bins[j + 1], bins[j + 2]
        for i in range(left, centre):
            bank[j, i] = (i - left) / (centre - left)
        for i in range(centre, right):
            bank[j, i] = (right - i) / (right - centre)
    return bank


def mfcc(signal: np.ndarray, sample_rate: int = 16000, winlen: float = 0.025, winstep: float = 0.01,
         numcep: int = 13, nfilt: int = 26, nfft: int = 512, preemph: float = 0.97,
         ceplifter: int = 22, append_energy: bool = True) -> np.ndarray:
    """MFCC with python_speech_features' defaults (rectangular window, zero-padded last frame).

    Args:
        signal: 1-D samples (SyncNet passes int16 values, not [-1, 1] floats).
        sample_rate: Hz.

    Returns:
        float64 array (n_frames, numcep), ``n_frames = 1 + ceil((len - win) / step)``.

    Example:
        >>> import numpy as np
        >>> mfcc(np.ones(400) * 100.0).shape
        (1, 13)
    """
    from scipy.fft import dct

    x = np.asarray(signal, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"mfcc expects a 1-D signal, got shape {x.shape}")
    if x.size == 0:
        raise ValueError("mfcc of an empty signal")
    if not np.all(np.isfinite(x)):
        raise ValueError("signal contains NaN or inf")
    x = np.append(x[0], x[1:] - preemph * x[:-1])
    # round half up, as python_speech_features does (decimal.ROUND_HALF_UP)
    frame_len = int(np.floor(winlen * sample_rate + 0.5))
    frame_step = int(np.floor(winstep * sample_rate + 0.5))
    n_frames = 1 if x.size <= frame_len else 1 + int(np.ceil((x.size - frame_len) / frame_step))
    padded = np.concatenate([x, np.zeros((n_frames - 1) * frame_step + frame_len - x.size)])
    index = np.arange(frame_len)[None, :] + frame_step * np.arange(n_frames)[:, None]
    frames = padded[index]
    if frame_len > nfft:
        raise ValueError(f"window of {frame_len} samples exceeds nfft {nfft}")
    power = np.abs(np.fft.rfft(frames, nfft)) ** 2 / nfft
    energy = power.sum(axis=1)
    energy = np.where(energy == 0, np.finfo(float).eps, energy)
    feat = power @ mel_filterbank(nfilt, nfft, sample_rate).T
    feat = np.where(feat == 0, np.finfo(float).eps, feat)
    cep = dct(np.log(feat), type=2, axis=1, norm="ortho")[:, :numcep]
    if ceplifter > 0:
        cep = cep * (1 + (ceplifter / 2.0) * np.sin(np.pi * np.arange(numcep) / ceplifter))
    if append_energy:
        cep[:, 0] = np.log(energy)
    return cep


def audio_to_int16_scale(audio: np.ndarray) -> np.ndarray:
    """Float [-1, 1] audio -> the int16 values ffmpeg's ``pcm_s16le`` would write (as float64)."""
    a = np.asarray(audio, dtype=np.float64)
    return np.clip(np.round(a * 32768.0), -32768, 32767)


# ----------------------------------------------------------------------------- offset search
def sync_offset_search(video_emb: np.ndarray, audio_emb: np.ndarray, vshift: int = 15
                       ) -> tuple[float, float, int, np.ndarray]:
    """The SyncNet offset search over per-window embeddings.

    For each video window ``i`` and shift ``k in 0..2*vshift``, the L2 distance to audio window
    ``i + k - vshift``; audio outside the clip counts as a zero embedding (the reference pads
    with zeros, so those distances are the video embedding's norm). ``mdist[k]`` = mean over
    windows. Sync-D = min(mdist), Sync-C = median(mdist) - min(mdist), offset = vshift - argmin.

    Args:
        video_emb: (n, d) lip embeddings.
        audio_emb: (n, d) audio embeddings of the same windows.
        vshift: largest shift searched, in video frames (15 in LatentSync / run_syncnet).

    Returns:
        (sync_c, sync_d, offset, mdist) with ``mdist`` of shape (2 * vshift + 1,).

    Example:
        >>> import numpy as np
        >>> v = np.eye(4)[[0, 1, 2, 3, 0, 1]]
        >>> c, d, off, _ = sync_offset_search(v, v, vshift=2)
        >>> off, round(d, 4)
        (0, 0.0)
    """
    v = np.asarray(video_emb, dtype=np.float64)
    a = np.asarray(audio_emb, dtype=np.float64)
    if v.ndim != 2 or v.shape != a.shape:
        raise ValueError(f"embeddings must be equal (n, d) arrays, got {v.shape} and {a.shape}")
    if v.shape[0] == 0:
        raise ValueError("no windows: the clip is shorter than 5 frames at 25 fps")
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(a))):
        raise ValueError("embeddings contain NaN or inf")
    n = v.shape[0]
    padded = np.concatenate([np.zeros((vshift, a.shape[1])), a, np.zeros((vshift, a.shape[1]))])
    # torch.pairwise_distance adds eps=1e-6 to the difference; kept for parity with the reference
    dists = np.stack([np.linalg.norm(v - padded[k:k + n] + 1e-6, axis=1) for k in range(2 * vshift + 1)])
    mdist = dists.mean(axis=1)
    k_min = int(np.argmin(mdist))
    sync_d = float(mdist[k_min])
    sync_c = float(np.median(mdist) - sync_d)
    return sync_c, sync_d, vshift - k_min, mdist


# ----------------------------------------------------------------------------- network
def build_syncnet(embed_dim: int = EMBED_DIM):
    """The ``S`` network with syncnet_python's module names (``netcnnaud``, ``netfcaud``, ...)."""
    import torch.nn as nn

    class S(nn.Module):
        def __init__(self):
            super().__init__()
            bn2, bn3 = nn.BatchNorm2d, nn.BatchNorm3d
            self.netcnnaud = nn.Sequential(
                nn.Conv2d(1, 64, 3, 1, 1), bn2(64), nn.ReLU(inplace=True), nn.MaxPool2d(1, 1),
                nn.Conv2d(64, 192, 3, 1, 1), bn2(192), nn.ReLU(inplace=True), nn.MaxPool2d(3, (1, 2)),
                nn.Conv2d(192, 384, 3, padding=1), bn2(384), nn.ReLU(inplace=True),
                nn.Conv2d(384, 256, 3, padding=1), bn2(256), nn.ReLU(inplace=True),
                nn.Conv2d(256, 256, 3, padding=1), bn2(256), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2),
                nn.Conv2d(256, 512, (5, 4)), bn2(512), nn.ReLU(),
            )
            self.netfcaud = nn.Sequential(nn.Linear(512, 512), nn.BatchNorm1d(512), nn.ReLU(),
                                          nn.Linear(512, embed_dim))
            self.netfclip = nn.Sequential(nn.Linear(512, 512), nn.BatchNorm1d(512), nn.ReLU(),
                                          nn.Linear(512, embed_dim))
            self.netcnnlip = nn.Sequential(
                nn.Conv3d(3, 96, (5, 7, 7), (1, 2, 2)), bn3(96), nn.ReLU(inplace=True),
                nn.MaxPool3d((1, 3, 3), (1, 2, 2)),
                nn.Conv3d(96, 256, (1, 5, 5), (1, 2, 2), (0, 1, 1)), bn3(256), nn.ReLU(inplace=True),
                nn.MaxPool3d((1, 3, 3), (1, 2, 2), (0, 1, 1)),
                nn.Conv3d(256, 256, (1, 3, 3), padding=(0, 1, 1)), bn3(256), nn.ReLU(inplace=True),
                nn.Conv3d(256, 256, (1, 3, 3), padding=(0, 1, 1)), bn3(256), nn.ReLU(inplace=True),
                nn.Conv3d(256, 256, (1, 3, 3), padding=(0, 1, 1)), bn3(256), nn.ReLU(inplace=True),
                nn.MaxPool3d((1, 3, 3), (1, 2, 2)),
                nn.Conv3d(256, 512, (1, 6, 6)), bn3(512), nn.ReLU(inplace=True),
            )

        def forward_aud(self, x):
            """(N, 1, 13, 20) MFCC blocks -> (N, embed_dim)."""
            return self.netfcaud(self.netcnnaud(x).flatten(1))

        def forward_lip(self, x):
            """(N, 3, 5, 224, 224) BGR 0..255 windows -> (N, embed_dim)."""
            return self.netfclip(self.netcnnlip(x).flatten(1))

    return S()


def load_syncnet(path: "str | None" = None, download: bool = False, device: str = "cpu"):
    """The ``S`` network in eval mode with the ``syncnet_v2`` weights (through the weights layer).

    The official file is a plain state dict whose keys are ``S``'s own (``netcnnaud.0.weight``
    ...); a ``__S__.`` prefix (a saved ``SyncNetInstance``) is stripped. Every key must match.

    Args:
        path: explicit weights file (else the registry's resolution order).
        download: fetch the file when it is missing.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``
            (:func:`hug_vis_dataset.models.device.resolve_device`); the embedding functions
            feed their inputs to this device.

    Raises:
        WeightsMissingError: the file is absent (see ``hugvis weights download syncnet_v2``).
    """
    import torch

    from ..weights import resolve
    from .device import resolve_device

    file = resolve("syncnet_v2", path=path, download=download)
    state = torch.load(str(file), map_location="cpu", weights_only=True)
    if isinstance(state, dict) and "state_dict" in state:
        state = state["state_dict"]
    state = {k.removeprefix("__S__."): v for k, v in state.items()}
    net = build_syncnet()
    missing, unexpected = net.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise ValueError(f"{file} is not a SyncNet S state dict: missing {missing[:5]}, unexpected {unexpected[:5]}")
    return net.to(resolve_device(device)).eval()


def sync_windows(n_frames: int, n_samples: int, sample_rate: int = SYNC_SAMPLE_RATE) -> int:
    """Number of 5-frame windows the reference evaluates: ``min(frames, samples // 640) - 5``."""
    per_frame = sample_rate // SYNC_FPS
    return max(0, min(n_frames, n_samples // per_frame) - WINDOW_FRAMES)


def _check_crops(crops: np.ndarray) -> np.ndarray:
    crops = np.asarray(crops)
    if crops.ndim != 4 or crops.shape[1:] != (SYNC_CROP, SYNC_CROP, 3) or crops.dtype != np.uint8:
        raise ValueError(f"crops must be uint8 (T, 224, 224, 3), got {crops.dtype} {crops.shape}")
    return crops


def lip_embeddings(net, crop_chunks: "Iterable[np.ndarray]", n_windows: int, batch: int = 20) -> np.ndarray:
    """Lip embeddings of windows ``0..n_windows-1`` from crops that arrive in chunks.

    Only the last 4 frames of a chunk are carried over, so memory stays bounded by the chunk
    and batch sizes whatever the track length; results do not depend on either (eval-mode
    BatchNorm, one embedding per window) beyond float rounding. Windows go to the device of
    ``net`` as uint8 and are converted there (BGR flip, float), which is exact.

    Args:
        net: a loaded ``S`` on any device (:func:`load_syncnet`).
        crop_chunks: uint8 (t, 224, 224, 3) RGB crops at 25 fps, in order, any chunk sizes.
        n_windows: windows to embed (:func:`sync_windows`); frames beyond are not needed.
        batch: windows per forward pass.

    Returns:
        float32 (n_windows, d).
    """
    import torch

    from .device import check_batch_size, module_device

    if n_windows <= 0:
        raise ValueError("clip too short for SyncNet (needs more than 5 frames at 25 fps)")
    batch = check_batch_size(batch)
    device = module_device(net)
    buf = np.empty((0, SYNC_CROP, SYNC_CROP, 3), np.uint8)
    start, feats = 0, []  # start = index of the window whose first frame is buf[0]

    def run(windows: np.ndarray) -> None:
        # BGR, raw 0..255, (N, 3, 5, H, W), as syncnet_python feeds cv2-read frames
        with torch.no_grad():
            lip = torch.from_numpy(np.ascontiguousarray(windows)).to(device)
            lip = lip.flip(-1).float().permute(0, 4, 1, 2, 3)
            feats.append(net.forward_lip(lip).cpu().numpy())

    for chunk in crop_chunks:
        buf = np.concatenate([buf, _check_crops(chunk)])
        while start < n_windows and len(buf) >= WINDOW_FRAMES + min(batch, n_windows - start) - 1:
            k = min(batch, n_windows - start)
            run(np.stack([buf[i:i + WINDOW_FRAMES] for i in range(k)]))
            buf, start = buf[k:], start + k
        if start >= n_windows:
            break
    if start < n_windows:
        k = len(buf) - WINDOW_FRAMES + 1
        if start + max(k, 0) < n_windows:
            raise ValueError(f"crops end after {start + max(k, 0)} windows, {n_windows} needed")
        run(np.stack([buf[i:i + WINDOW_FRAMES] for i in range(n_windows - start)]))
    return np.concatenate(feats)


def audio_embeddings(net, audio_16k: np.ndarray, n_windows: int, batch: int = 20) -> np.ndarray:
    """Audio embeddings of windows ``0..n_windows-1``: MFCC frames ``4i..4i+19`` of the int16-scaled audio.

    The MFCC is computed on CPU in float64 (as python_speech_features); blocks of ``batch``
    windows go to the device of ``net``. Results do not depend on ``batch`` beyond float rounding.
    """
    import torch

    from .device import check_batch_size, module_device

    batch = check_batch_size(batch)
    device = module_device(net)
    if n_windows <= 0:
        raise ValueError("clip too short for SyncNet (needs more than 5 frames at 25 fps)")
    cc = mfcc(audio_to_int16_scale(audio_16k), SYNC_SAMPLE_RATE).T  # (13, M)
    if cc.shape[1] < (n_windows - 1) * MFCC_PER_FRAME + 20:
        raise ValueError(f"audio of {cc.shape[1]} MFCC frames is too short for {n_windows} windows")
    feats = []
    with torch.no_grad():
        for s in range(0, n_windows, batch):
            idx = range(s, min(n_windows, s + batch))
            aud = np.stack([cc[:, i * MFCC_PER_FRAME:i * MFCC_PER_FRAME + 20] for i in idx]).astype(np.float32)
            feats.append(net.forward_aud(torch.from_numpy(aud[:, None]).to(device)).cpu().numpy())
    return np.concatenate(feats)


def syncnet_embeddings(net, crops_rgb: np.ndarray, audio_16k: np.ndarray, batch: int = 20
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Lip and audio embeddings of every window of one face track (all crops in memory).

    Args:
        net: a loaded ``S`` on any device (:func:`load_syncnet`).
        crops_rgb: uint8 (T, 224, 224, 3) RGB face crops at 25 fps.
        audio_16k: float mono audio at 16 kHz in [-1, 1], starting at the first crop.
        batch: windows per forward pass (results do not depend on it: eval-mode BatchNorm).
    """
    crops = _check_crops(crops_rgb)
    n = sync_windows(len(crops), len(audio_16k))
    if n <= 0:
        raise ValueError("clip too short for SyncNet (needs more than 5 frames at 25 fps)")
    return lip_embeddings(net, [crops], n, batch), audio_embeddings(net, audio_16k, n, batch)

"""Frame metrics of video generation (paper Table 7): PSNR, SSIM and LPIPS on uint8 RGB frames.

Pure functions on ``(n, H, W, 3)`` uint8 batches; a clip's value is the mean over its frames
(:mod:`hug_vis_dataset.tasks.generation` streams the clip). Definitions (also in each module card,
from :mod:`hug_vis_dataset.catalog`):

- PSNR (:func:`psnr_frames`): ``skimage.metrics.peak_signal_noise_ratio`` with ``data_range=255``
  over all three RGB channels jointly (one MSE per frame). Identical frames have infinite PSNR;
  each frame is capped at :data:`PSNR_CAP_DB` (100 dB) so a clip mean stays finite.
- SSIM (:func:`ssim_frames`): ``skimage.metrics.structural_similarity`` with ``data_range=255``,
  ``channel_axis=-1`` (per RGB channel, then averaged), ``gaussian_weights=True``, ``sigma=1.5``
  (an 11x11 window), ``use_sample_covariance=False``, K1=0.01, K2=0.03: Wang et al. 2004.
- LPIPS (:func:`lpips_frames`): ``lpips`` 0.1.4, AlexNet, v0.1 linear heads, inputs
  ``x / 127.5 - 1`` in [-1, 1], spatially averaged per frame; the model comes from
  :func:`hug_vis_dataset.models.lpips.load_lpips`.

Example:
    >>> import numpy as np
    >>> a = np.full((1, 16, 16, 3), 100, np.uint8); b = a.copy(); b[..., 0] = 110
    >>> round(float(psnr_frames(a, b)[0]), 4)  # MSE = 100/3
    32.902
"""

from __future__ import annotations

import numpy as np

PSNR_CAP_DB = 100.0
SSIM_PARAMS = dict(data_range=255, channel_axis=-1, gaussian_weights=True, sigma=1.5,
                   use_sample_covariance=False, K1=0.01, K2=0.03)
FRAME_METRICS = ("psnr", "ssim", "lpips")


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

"""Frame metrics of video generation (paper Table 7): PSNR, SSIM and LPIPS on uint8 RGB frames.

Pure functions on ``(n, H, W, 3)`` uint8 batches; a clip's value is the mean over its frames
(:mod:`hug_vis_dataset.tasks.generation` streams the clip). Definitions (also in each module card,
from :mod:`hug_vis_dataset.catalog`):

- PSNR (:func:`psnr_frames`): ``skimage.metrics.peak_signal_noise_ratio`` with ``data_range=255``
  over all three RGB channels jointly (one MSE per frame). Identical frames have infinite PSNR;
  each frame is capped at :data:`PSNR_CAP_DB` (100 dB) so a clip mean stays finite.
- SSIM (:func:`ssim_frames`): ``skimage.metrics.structural_similarity`` with :data:`SSIM_PARAMS`
  (``data_range=255``, per RGB channel then averaged, Gaussian sigma 1.5 truncated at 3.5 sigma =
  11 taps, population covariances, K1=0.01, K2=0.03: Wang et al. 2004), mean over the valid
  interior. Both are computed by the fused kernels of :mod:`._frame_kernels` (equal to
  scikit-image within 1e-9 relative, about 20x faster per 1080p frame: ``scripts/bench_scale.py``).
- LPIPS (:func:`lpips_frames`): ``lpips`` 0.1.4, AlexNet, v0.1 linear heads, inputs
  ``x / 127.5 - 1`` in [-1, 1], spatially averaged per frame; the model comes from
  :func:`hug_vis_dataset.models.lpips.load_lpips`. On the CPU the same function runs through
  :mod:`hug_vis_dataset.models.lpips_cpu` (Winograd convolutions, the package's input scaling as a
  table, a fused distance: the package's values to about 1e-10, about 3x cheaper per 1080p pair:
  ``scripts/bench_lpips.py``).

Example:
    >>> import numpy as np
    >>> a = np.full((1, 16, 16, 3), 100, np.uint8); b = a.copy(); b[..., 0] = 110
    >>> round(float(psnr_frames(a, b)[0]), 4)  # MSE = 100/3
    32.902
"""

from __future__ import annotations

import numpy as np

from ._frame_kernels import DATA_RANGE, SSIM_K1, SSIM_K2, SSIM_SIGMA, psnr_batch, ssim_batch

PSNR_CAP_DB = 100.0
#: The scikit-image call the kernels reproduce (the reference of the tests and the benchmark).
SSIM_PARAMS = dict(data_range=DATA_RANGE, channel_axis=-1, gaussian_weights=True, sigma=SSIM_SIGMA,
                   use_sample_covariance=False, K1=SSIM_K1, K2=SSIM_K2)
FRAME_METRICS = ("psnr", "ssim", "lpips")


def psnr_frames(pred: np.ndarray, ref: np.ndarray, cap_db: float = PSNR_CAP_DB) -> np.ndarray:
    """Per-frame PSNR (dB) of uint8 RGB frames, capped at ``cap_db`` (identical frames -> cap).

    Example:
        >>> import numpy as np
        >>> x = np.zeros((2, 8, 8, 3), np.uint8)
        >>> psnr_frames(x, x).tolist()
        [100.0, 100.0]
    """
    return psnr_batch(pred, ref, cap_db)


def ssim_frames(pred: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per-frame SSIM of uint8 RGB frames with :data:`SSIM_PARAMS` (frames must be >= 11 px).

    Example:
        >>> import numpy as np
        >>> x = np.random.default_rng(0).integers(0, 255, (1, 16, 16, 3)).astype(np.uint8)
        >>> float(ssim_frames(x, x)[0])
        1.0
    """
    return ssim_batch(pred, ref)


def lpips_frames(model, pred: np.ndarray, ref: np.ndarray, batch: int = 8) -> np.ndarray:
    """Per-frame LPIPS distance with a loaded model (:func:`hug_vis_dataset.models.lpips.load_lpips`)."""
    from ..models.lpips import lpips_distances

    return lpips_distances(model, pred, ref, batch)

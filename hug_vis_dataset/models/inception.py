"""FID feature extractor: Inception-v3 pool3 (2048-d) through torch-fidelity.

torch-fidelity's ``FeatureExtractorInceptionV3`` reproduces the TensorFlow FID graph
(``pt_inception-2015-12-05``) including its TF1-style bilinear resize to 299x299 and the
``(x - 128) / 128`` input scaling; it takes uint8 NCHW RGB. Its weights file is taken from the
weights layer (``inception_fid``), never downloaded implicitly.
"""

from __future__ import annotations

import numpy as np

EXTRACTOR_ID = "torch-fidelity-0.4.0/inception-v3-compat/2048"
FEATURE_DIM = 2048


def load_inception(path: "str | None" = None, download: bool = False, device: str = "cpu", verify: bool = True):
    """The extractor in eval mode on ``device``; raises WeightsMissingError when the file is absent.

    Args:
        path: explicit weights file (else the registry's resolution order).
        download: fetch the file when it is missing.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``
            (:func:`hug_vis_dataset.models.device.resolve_device`).
        verify: ``False`` skips the sha256 check of an explicit file (tests with random weights);
            FID values need the pinned file.
    """
    from torch_fidelity.feature_extractor_inceptionv3 import FeatureExtractorInceptionV3

    from ..weights import resolve
    from .device import resolve_device

    file = resolve("inception_fid", path=path, download=download, verify=verify)
    net = FeatureExtractorInceptionV3("inception-v3-compat", ["2048"], feature_extractor_weights_path=str(file))
    return net.to(resolve_device(device)).eval()


def inception_features(net, frames_rgb: np.ndarray, batch: int = 16) -> np.ndarray:
    """(n, H, W, 3) uint8 RGB -> (n, 2048) float64 pool3 features.

    Frames go to the device of ``net`` ``batch`` at a time, as uint8 (the extractor scales them
    itself). Each frame's features do not depend on ``batch`` beyond float rounding.
    """
    import torch

    from .device import check_batch_size, module_device

    batch = check_batch_size(batch)
    frames = np.asarray(frames_rgb)
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise ValueError(f"frames must be uint8 (n, H, W, 3), got {frames.dtype} {frames.shape}")
    device = module_device(net)
    out = []
    with torch.no_grad():
        for s in range(0, len(frames), batch):
            x = torch.from_numpy(np.ascontiguousarray(frames[s:s + batch])).to(device).permute(0, 3, 1, 2).contiguous()
            out.append(net(x)[0].double().cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, FEATURE_DIM))

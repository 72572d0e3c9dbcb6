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


def load_inception(path: "str | None" = None, download: bool = False):
    """The extractor in eval mode; raises WeightsMissingError when the file is absent."""
    from torch_fidelity.feature_extractor_inceptionv3 import FeatureExtractorInceptionV3

    from ..weights import resolve

    file = resolve("inception_fid", path=path, download=download)
    net = FeatureExtractorInceptionV3("inception-v3-compat", ["2048"], feature_extractor_weights_path=str(file))
    return net.eval()


def inception_features(net, frames_rgb: np.ndarray, batch: int = 16) -> np.ndarray:
    """(n, H, W, 3) uint8 RGB -> (n, 2048) float64 pool3 features."""
    import torch

    frames = np.asarray(frames_rgb)
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise ValueError(f"frames must be uint8 (n, H, W, 3), got {frames.dtype} {frames.shape}")
    out = []
    with torch.no_grad():
        for s in range(0, len(frames), batch):
            x = torch.from_numpy(np.ascontiguousarray(frames[s:s + batch].transpose(0, 3, 1, 2)))
            out.append(net(x)[0].double().numpy())
    return np.concatenate(out) if out else np.zeros((0, FEATURE_DIM))

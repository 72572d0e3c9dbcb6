"""LPIPS (Zhang et al. 2018) v0.1 AlexNet with its weights taken from the weights layer, on any device.

The ``lpips`` package (0.1.4) builds the network; both files come through
:mod:`hug_vis_dataset.weights` so nothing is downloaded implicitly: the torchvision AlexNet
backbone (``alexnet-owt-7be5be79.pth``, registry name ``alexnet``) and the linear heads shipped
in the package (``lpips_alex_linear``).

Example:
    >>> import numpy as np
    >>> class Constant:  # any callable (pred, ref) -> (n, 1, 1, 1) tensor
    ...     def __call__(self, a, b):
    ...         return (a - b).abs().mean((1, 2, 3), keepdim=True)
    ...     def parameters(self):
    ...         return iter(())
    >>> a = np.zeros((3, 8, 8, 3), np.uint8); b = np.full_like(a, 255)
    >>> lpips_distances(Constant(), a, b, batch=2).tolist()
    [2.0, 2.0, 2.0]
"""

from __future__ import annotations

import numpy as np


def load_lpips(alexnet_path: "str | None" = None, linear_path: "str | None" = None, verify: bool = True,
               device: str = "cpu"):
    """``lpips.LPIPS(net='alex', version='0.1')`` with both files from the weights layer, on ``device``.

    The AlexNet backbone is loaded into a torchvision ``alexnet(weights=None)`` from the
    resolved file and copied into lpips' slices, so no implicit torchvision download happens.

    Args:
        alexnet_path, linear_path: explicit files (else the registry's resolution order).
        verify: ``False`` skips the sha256 check of an explicit backbone file (tests with random
            weights); paper numbers need the pinned file.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``
            (:func:`hug_vis_dataset.models.device.resolve_device`).

    Raises:
        WeightsMissingError: ``alexnet-owt-7be5be79.pth`` (or the linear heads) are absent.
        WeightsHashError: the backbone file is not the pinned torchvision file.
    """
    import lpips
    import torch
    import torchvision

    from ..weights import resolve
    from .device import resolve_device

    backbone_file = resolve("alexnet", path=alexnet_path, verify=verify)
    linear_file = resolve("lpips_alex_linear", path=linear_path)
    tv = torchvision.models.alexnet(weights=None)
    tv.load_state_dict(torch.load(str(backbone_file), map_location="cpu", weights_only=True))
    model = lpips.LPIPS(net="alex", version="0.1", pretrained=True, pnet_rand=True,
                        model_path=str(linear_file), verbose=False)
    features = tv.features.state_dict()
    # lpips splits AlexNet's feature stack into five slices that keep torchvision's layer indices
    state = {}
    for k in range(1, 6):
        for idx in getattr(model.net, f"slice{k}")._modules:
            for p in ("weight", "bias"):
                if f"{idx}.{p}" in features:
                    state[f"slice{k}.{idx}.{p}"] = features[f"{idx}.{p}"]
    model.net.load_state_dict(state, strict=True)
    return model.to(resolve_device(device)).eval()


def lpips_distances(model, pred: np.ndarray, ref: np.ndarray, batch: int = 8) -> np.ndarray:
    """Per-frame LPIPS of uint8 RGB frames ``(n, H, W, 3)``, ``batch`` pairs per forward pass.

    On a GPU, frames go to the model's device as uint8 and are scaled there to ``x / 127.5 - 1``
    (exact in float32) and ``batch`` pairs run per forward pass; each distance does not depend on
    ``batch`` beyond float rounding. On the CPU the package's AlexNet v0.1 module runs through
    :class:`hug_vis_dataset.models.lpips_cpu.AlexLPIPS` (Winograd convolutions: the package's values
    to about 1e-10, about 3.3x cheaper), one pair per forward whatever ``batch`` is, so values do not
    depend on it at all.

    Raises:
        ValueError: frames that are not uint8 ``(n, H, W, 3)`` of equal shape, or ``batch < 1``.
    """
    import torch

    from .device import check_batch_size, module_device
    from .lpips_cpu import AlexLPIPS, is_alex_v01

    batch = check_batch_size(batch)
    pred, ref = np.asarray(pred), np.asarray(ref)
    if pred.shape != ref.shape or pred.ndim != 4 or pred.shape[-1] != 3 or len(pred) == 0:
        raise ValueError(f"prediction {pred.shape} and reference {ref.shape} must be equal (n>=1, H, W, 3) frames")
    if pred.dtype != np.uint8 or ref.dtype != np.uint8:
        raise ValueError(f"frames must be uint8, got {pred.dtype} and {ref.dtype}")
    device = module_device(model)
    if device.type == "cpu" and is_alex_v01(model):
        # the CPU path (models/lpips_cpu.py): the same values with fewer multiplications, one pair per forward
        fast = getattr(model, "_hugvis_cpu_forward", None)
        if fast is None:
            fast = model._hugvis_cpu_forward = AlexLPIPS(model)
        return fast(pred, ref)

    def to_model(frames: np.ndarray) -> "torch.Tensor":
        x = torch.from_numpy(np.ascontiguousarray(frames)).to(device).permute(0, 3, 1, 2)
        return x.float() / 127.5 - 1.0

    out = []
    with torch.inference_mode():
        for start in range(0, len(pred), batch):
            stop = start + batch
            out.append(model(to_model(pred[start:stop]), to_model(ref[start:stop])).reshape(-1).double().cpu().numpy())
    return np.concatenate(out)

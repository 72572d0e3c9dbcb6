"""LPIPS v0.1 AlexNet loaded from the weights layer (no implicit torchvision download)."""

from __future__ import annotations


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

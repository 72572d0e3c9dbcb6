"""LPIPS through the weights layer: random backbone file, formula re-derived by hand."""

from __future__ import annotations

import numpy as np
import pytest


def test_lpips_random_backbone_matches_rederivation(tmp_path):
    import torch
    import torchvision

    from hug_vis_dataset.metrics import frames as G
    from hug_vis_dataset.models import lpips as L
    from hug_vis_dataset.weights import resolve

    torch.manual_seed(0)
    tv = torchvision.models.alexnet(weights=None)
    torch.save(tv.state_dict(), tmp_path / "alexnet.pth")
    from hug_vis_dataset.weights import WeightsHashError

    with pytest.raises(WeightsHashError):  # a random backbone is not the pinned file
        L.load_lpips(alexnet_path=str(tmp_path / "alexnet.pth"))
    model = L.load_lpips(alexnet_path=str(tmp_path / "alexnet.pth"), verify=False)
    rng = np.random.default_rng(0)
    a = rng.integers(0, 255, (2, 64, 64, 3)).astype(np.uint8)
    b = np.clip(a + rng.normal(0, 30, a.shape), 0, 255).astype(np.uint8)
    ours = G.lpips_frames(model, a, b)

    lin = torch.load(str(resolve("lpips_alex_linear")), map_location="cpu")
    shift = torch.tensor([-0.030, -0.088, -0.188]).view(1, 3, 1, 1)
    scale = torch.tensor([0.458, 0.448, 0.450]).view(1, 3, 1, 1)

    def feats(x):
        x = (torch.from_numpy(x.transpose(0, 3, 1, 2)).float() / 127.5 - 1 - shift) / scale
        out = []
        for i, layer in enumerate(tv.features):
            x = layer(x)
            if i in (1, 4, 7, 9, 11):  # the five ReLU outputs
                out.append(x)
        return out

    with torch.no_grad():
        total = 0
        for k, (fa, fb) in enumerate(zip(feats(a), feats(b))):
            na = fa / (fa.pow(2).sum(1, keepdim=True).sqrt() + 1e-10)
            nb = fb / (fb.pow(2).sum(1, keepdim=True).sqrt() + 1e-10)
            w = lin[f"lin{k}.model.1.weight"]
            total = total + ((na - nb) ** 2 * w.view(1, -1, 1, 1)).sum(1).mean((1, 2))
    np.testing.assert_allclose(ours, total.numpy(), rtol=1e-4, atol=1e-6)
    assert np.all(G.lpips_frames(model, a, a) == 0)
    # batch size does not change per-frame values
    np.testing.assert_allclose(G.lpips_frames(model, a, b, batch=1), ours, rtol=1e-5)


def test_lpips_missing_backbone_error(tmp_path, monkeypatch):
    from hug_vis_dataset.metrics import frames as G
    from hug_vis_dataset.models import lpips as L
    from hug_vis_dataset.weights import WeightsMissingError

    monkeypatch.setenv("HUGVIS_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("HUGVIS_WEIGHTS_DIR", raising=False)
    with pytest.raises(WeightsMissingError, match="alexnet-owt-7be5be79.pth"):
        L.load_lpips()

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


@pytest.fixture(scope="module")
def random_lpips(tmp_path_factory):
    """The package's LPIPS(alex, v0.1) module with a random AlexNet backbone (no weights can be downloaded)."""
    import torch
    import torchvision

    from hug_vis_dataset.models import lpips as L

    torch.manual_seed(1)
    path = tmp_path_factory.mktemp("alex") / "alexnet.pth"
    torch.save(torchvision.models.alexnet(weights=None).state_dict(), path)
    return L.load_lpips(alexnet_path=str(path), verify=False)


def _package_lpips(model, a, b):
    """The ``lpips`` package's own documented call: im2tensor and LPIPS.forward, one pair at a time."""
    import lpips
    import torch

    with torch.no_grad():
        return np.array([float(model.forward(lpips.im2tensor(p), lpips.im2tensor(r))) for p, r in zip(a, b)])


def _smooth(n, height, width, seed):
    """Synthetic frames like a video's: gradients and slow waves, the second a shifted, noisier copy."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float64)
    out = []
    for k in range(n):
        phase = rng.uniform(0, 6.3, 3)
        img = np.stack([127 + 100 * np.sin(xx / (9 + 3 * c) + yy / (13 + k) + phase[c]) for c in range(3)], -1)
        out.append(img)
    a = np.clip(np.array(out), 0, 255).astype(np.uint8)
    b = np.clip(np.roll(a, 1, axis=2) + rng.normal(0, 6, a.shape), 0, 255).astype(np.uint8)
    return a, b


@pytest.mark.parametrize("kind, shape", [("random", (3, 64, 64)), ("smooth", (2, 96, 160)), ("random", (2, 37, 53)),
                                         ("smooth", (1, 31, 33)), ("smooth", (1, 1080, 1920))])
def test_lpips_cpu_path_equals_package(random_lpips, kind, shape):
    """The CPU path (Winograd convolutions, the package's scaling as a table, fused distance) gives the
    package's values within 1e-5 on random, smooth, odd-sized, minimal (31 px) and 1080p frames;
    identical frames give 0."""
    from hug_vis_dataset.metrics import frames as G
    from hug_vis_dataset.models.lpips_cpu import AlexLPIPS

    n, height, width = shape
    rng = np.random.default_rng(height * width)
    if kind == "random":
        a = rng.integers(0, 256, (n, height, width, 3), dtype=np.uint8)
        b = np.clip(a + rng.normal(0, 40, a.shape), 0, 255).astype(np.uint8)
    else:
        a, b = _smooth(n, height, width, seed=height)
    expected = _package_lpips(random_lpips, a, b)
    ours = G.lpips_frames(random_lpips, a, b)
    assert isinstance(random_lpips._hugvis_cpu_forward, AlexLPIPS)  # the metric's CPU call took the new path
    assert np.all(expected > 0)
    np.testing.assert_allclose(ours, expected, rtol=0, atol=1e-5)
    np.testing.assert_allclose(ours, expected, rtol=1e-5)  # far tighter than 1e-5 in practice: about 1e-7
    assert np.all(G.lpips_frames(random_lpips, a, a) == 0)


def test_lpips_cpu_path_features_equal_the_packages(random_lpips):
    """The five feature maps (conv1 through its stride phases, every layer through Winograd, the
    padding as zeros in the work buffers) equal the package's at the border as well as inside."""
    import lpips
    import torch

    from hug_vis_dataset.models.lpips_cpu import AlexLPIPS

    rng = np.random.default_rng(3)
    frames = rng.integers(0, 256, (2, 45, 67, 3), dtype=np.uint8)
    ours = AlexLPIPS(random_lpips).features(frames)
    with torch.no_grad():
        x = torch.cat([lpips.im2tensor(f) for f in frames])
        theirs = random_lpips.net.forward(random_lpips.scaling_layer(x))
    for mine, pkg in zip(ours, theirs):
        assert mine.shape == pkg.shape
        scale = float(pkg.abs().max())
        assert float((mine - pkg).abs().max()) <= 1e-5 * scale
        # the outermost ring (padding) is as exact as the interior
        assert float((mine - pkg)[..., 0, :].abs().max()) <= 1e-5 * scale


def test_lpips_cpu_path_does_not_depend_on_batch(random_lpips):
    """Each pair is its own forward on the CPU: every batch size gives bit-identical values."""
    from hug_vis_dataset.metrics import frames as G

    a, b = _smooth(5, 48, 64, seed=9)
    values = [G.lpips_frames(random_lpips, a, b, batch=k) for k in (1, 2, 3, 8)]
    for v in values[1:]:
        assert np.array_equal(v, values[0])
    single = np.concatenate([G.lpips_frames(random_lpips, a[i:i + 1], b[i:i + 1]) for i in range(5)])
    assert np.array_equal(single, values[0])


def test_lpips_cpu_path_refuses_other_networks(random_lpips):
    import copy

    from hug_vis_dataset.models.lpips_cpu import AlexLPIPS, is_alex_v01

    assert is_alex_v01(random_lpips)
    spatial = copy.copy(random_lpips)
    spatial.spatial = True
    assert not is_alex_v01(spatial)
    with pytest.raises(ValueError, match="alex"):
        AlexLPIPS(spatial)

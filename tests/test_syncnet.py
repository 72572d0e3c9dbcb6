"""SyncNet: MFCC vs python_speech_features, offset search, official key layout."""

from __future__ import annotations

import numpy as np
import pytest

from hug_vis_dataset.models import syncnet as SN


@pytest.mark.parametrize("n", [1, 399, 400, 401, 16000, 23457])
def test_mfcc_matches_python_speech_features(n):
    psf = pytest.importorskip("python_speech_features")
    rng = np.random.default_rng(n)
    x = rng.integers(-20000, 20000, n).astype(np.float64)
    ours, ref = SN.mfcc(x, 16000), psf.mfcc(x, 16000)
    assert ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-8)


def test_mfcc_rate_and_errors():
    assert SN.mfcc(np.ones(16000 * 2)).shape == (199, 13)  # 100 Hz
    with pytest.raises(ValueError):
        SN.mfcc(np.zeros((2, 10)))
    with pytest.raises(ValueError):
        SN.mfcc(np.array([]))
    with pytest.raises(ValueError):
        SN.mfcc(np.array([1.0, np.nan]))


def test_offset_search_recovers_planted_offset():
    rng = np.random.default_rng(0)
    n, d = 60, 32
    base = rng.normal(size=(n + 40, d))
    for planted in (-7, 0, 4, 15):
        video = base[20:20 + n]
        # audio window j carries the content of video window j + planted (syncnet's sign:
        # offset = vshift - argmin over shifts of video i vs audio i + shift)
        audio = base[20 + planted:20 + planted + n] + rng.normal(0, 0.01, (n, d))
        c, dmin, off, mdist = SN.sync_offset_search(video, audio, vshift=15)
        assert off == planted
        # confidence = median - min, by hand; Sync-D = min of the per-shift means
        assert c == pytest.approx(np.median(mdist) - mdist.min()) and dmin == pytest.approx(mdist.min())


def test_offset_search_distances_by_hand():
    v = np.array([[1.0, 0], [0, 1], [1, 1]])
    a = np.array([[0.0, 1], [1, 0], [2, 2]])
    c, d, off, mdist = SN.sync_offset_search(v, a, vshift=1)
    zero = np.zeros(2)
    def dist(x, y):
        return np.linalg.norm(x - y + 1e-6)
    # shift k compares video i with audio i + k - 1 (zero outside)
    expected = [np.mean([dist(v[i], a[i + k - 1] if 0 <= i + k - 1 < 3 else zero) for i in range(3)])
                for k in range(3)]
    np.testing.assert_allclose(mdist, expected)
    assert d == pytest.approx(min(expected)) and c == pytest.approx(np.median(expected) - min(expected))
    assert off == 1 - int(np.argmin(expected))
    with pytest.raises(ValueError):
        SN.sync_offset_search(v, a[:2])
    with pytest.raises(ValueError):
        SN.sync_offset_search(v[:0], a[:0])


def test_sync_windows():
    assert SN.sync_windows(100, 64000) == 95
    assert SN.sync_windows(100, 640 * 50) == 45
    assert SN.sync_windows(4, 64000) == 0


def test_loader_official_key_layout(tmp_path):
    import torch

    net = SN.build_syncnet()
    keys = list(net.state_dict())
    assert "netcnnaud.0.weight" in keys and "netcnnlip.0.weight" in keys and "netfclip.3.weight" in keys
    torch.manual_seed(0)
    state = {k: (torch.randn_like(v) if v.is_floating_point() else v) for k, v in net.state_dict().items()}
    for k in state:
        if k.endswith("running_var"):
            state[k] = state[k].abs() + 0.5
    torch.save(state, tmp_path / "syncnet_v2.model")
    loaded = SN.load_syncnet(path=str(tmp_path / "syncnet_v2.model"))
    for k, v in loaded.state_dict().items():
        assert torch.equal(v, state[k])
    with torch.no_grad():
        assert loaded.forward_aud(torch.zeros(2, 1, 13, 20)).shape == (2, 1024)
        assert loaded.forward_lip(torch.zeros(1, 3, 5, 224, 224)).shape == (1, 1024)
    # a SyncNetInstance-style "__S__." prefix also loads; a foreign dict is rejected
    torch.save({"__S__." + k: v for k, v in state.items()}, tmp_path / "prefixed.model")
    SN.load_syncnet(path=str(tmp_path / "prefixed.model"))
    torch.save({"foo.weight": torch.zeros(1)}, tmp_path / "bad.model")
    with pytest.raises(ValueError, match="not a SyncNet"):
        SN.load_syncnet(path=str(tmp_path / "bad.model"))


@pytest.mark.slow
def test_embeddings_batch_independent(tmp_path):
    import torch

    torch.manual_seed(1)
    net = SN.build_syncnet().eval()
    rng = np.random.default_rng(0)
    crops = rng.integers(0, 255, (9, 224, 224, 3)).astype(np.uint8)
    audio = rng.normal(0, 0.1, 640 * 9).astype(np.float32)
    v1, a1 = SN.syncnet_embeddings(net, crops, audio, batch=1)
    v2, a2 = SN.syncnet_embeddings(net, crops, audio, batch=4)
    assert v1.shape == (4, 1024) and a1.shape == (4, 1024)
    np.testing.assert_allclose(v1, v2, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(a1, a2, rtol=1e-4, atol=1e-4)

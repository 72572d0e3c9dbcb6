"""Device and batch size of every network model: one device rule; per-clip values independent of batch size.

The networks are random-weight models in the official layouts (the same builders the model tests
use: SyncNet ``S`` state dicts, ONNX ArcFace, torch-fidelity's Inception, tiny UTMOS22, AlexNet
LPIPS). Batch size 1 and 16 must give the same per-clip values up to float32 rounding: the
tolerances below (relative 1e-5 on embeddings and scores) are far below any difference between
systems and far above what a wrong window/frame alignment would give (the checks fail by orders
of magnitude when one frame is shifted).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hug_vis_dataset.models import device as D

RTOL, ATOL = 1e-5, 1e-6


# ----------------------------------------------------------------------------- device rule
@pytest.fixture
def cuda(monkeypatch):
    """Pretend torch sees (True) or does not see (False) a GPU."""
    def set_cuda(available: bool):
        monkeypatch.setattr(D, "_cuda_available", lambda: available)
    return set_cuda


def test_resolve_device(cuda):
    cuda(False)
    assert D.resolve_device("auto") == "cpu" and D.resolve_device("cpu") == "cpu" and D.resolve_device(" CPU ") == "cpu"
    with pytest.raises(D.DeviceError, match="no CUDA GPU.*--device cpu"):
        D.resolve_device("cuda")
    cuda(True)
    assert D.resolve_device("auto") == "cuda" and D.resolve_device("cuda") == "cuda"
    assert D.resolve_device("cuda:1") == "cuda:1" and D.resolve_device("cpu") == "cpu"
    for bad in ("gpu", "cuda:x", "tpu", ""):
        with pytest.raises(D.DeviceError, match="unknown device"):
            D.resolve_device(bad)


def test_onnx_providers_put_cuda_first_only_when_available(cuda, monkeypatch):
    import onnxruntime as ort

    cuda(True)
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert D.onnx_providers("cuda") == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    assert D.onnx_providers("auto") == ["CUDAExecutionProvider", "CPUExecutionProvider"]
    assert D.onnx_providers("cpu") == ["CPUExecutionProvider"]
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CPUExecutionProvider"])
    with pytest.warns(RuntimeWarning, match="onnxruntime-gpu"):
        assert D.onnx_providers("cuda") == ["CPUExecutionProvider"]
    cuda(False)
    assert D.onnx_providers("auto") == ["CPUExecutionProvider"]


def test_check_batch_size():
    assert D.check_batch_size(1) == 1 and D.check_batch_size(16) == 16
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="batch_size"):
            D.check_batch_size(bad)


# ----------------------------------------------------------------------------- SyncNet
def random_syncnet(tmp_path):
    from hug_vis_dataset.models import syncnet as SN

    net = SN.build_syncnet()
    gen = torch.Generator().manual_seed(0)
    state = {k: (torch.randn(v.shape, generator=gen) * 0.05 if v.is_floating_point() else v)
             for k, v in net.state_dict().items()}
    for k in state:
        if k.endswith("running_var"):
            state[k] = state[k].abs() + 0.5
    torch.save(state, tmp_path / "syncnet_v2.model")
    return SN.load_syncnet(path=str(tmp_path / "syncnet_v2.model"), device="cpu")


@pytest.mark.slow  # 35 lip windows of 5 x 224 x 224 on CPU: ~35 s on 2 busy cores
def test_syncnet_clip_values_independent_of_batch_size(tmp_path):
    from hug_vis_dataset.models import syncnet as SN

    net = random_syncnet(tmp_path)
    assert D.module_device(net).type == "cpu"
    rng = np.random.default_rng(0)
    n_frames = 22  # 17 windows: batch 16 splits them 16 + 1
    crops = rng.integers(0, 256, (n_frames, 112, 112, 3)).astype(np.uint8).repeat(2, 1).repeat(2, 2)
    audio = rng.normal(0, 0.1, 640 * n_frames).astype(np.float32)
    n_win = SN.sync_windows(n_frames, len(audio))
    assert n_win == 17
    chunks = [crops[:7], crops[7:15], crops[15:]]  # crops arrive in uneven chunks
    per_batch = {}
    for batch in (1, 16):
        video = SN.lip_embeddings(net, iter(chunks), n_win, batch)
        sound = SN.audio_embeddings(net, audio, n_win, batch)
        per_batch[batch] = (video, sound, SN.sync_offset_search(video, sound, vshift=5))
    (v1, a1, (c1, d1, o1, m1)), (v16, a16, (c16, d16, o16, m16)) = per_batch[1], per_batch[16]
    np.testing.assert_allclose(v16, v1, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(a16, a1, rtol=RTOL, atol=ATOL)
    assert o1 == o16
    np.testing.assert_allclose([c16, d16], [c1, d1], rtol=RTOL, atol=ATOL)
    # independent check of the window layout: window 3 is frames 3..7, BGR, raw 0..255
    with torch.no_grad():
        window = torch.from_numpy(crops[3:8, :, :, ::-1].astype(np.float32).transpose(3, 0, 1, 2).copy())[None]
        np.testing.assert_allclose(v1[3], net.forward_lip(window)[0].numpy(), rtol=RTOL, atol=ATOL)


# ----------------------------------------------------------------------------- ArcFace / SCRFD (onnxruntime)
def test_arcface_batches_and_device(tmp_path):
    pytest.importorskip("onnx")
    from test_arcface_onnx import arcface_reference, build_arcface, build_scrfd, empty_maps

    from hug_vis_dataset.models import arcface as AF

    model = build_arcface(tmp_path / "w600k_r50.onnx")
    rng = np.random.default_rng(3)
    faces = rng.integers(0, 256, (20, 112, 112, 3), dtype=np.uint8)
    source = rng.integers(0, 256, (1, 112, 112, 3), dtype=np.uint8)
    csim = {}
    for batch_size in (1, 16):
        embedder = AF.ArcFaceEmbedder(path=model, device="cpu", batch_size=batch_size)
        assert embedder.session.get_providers() == ["CPUExecutionProvider"]
        emb = embedder(faces)
        np.testing.assert_allclose(emb, arcface_reference(faces), rtol=0, atol=1e-5)
        csim[batch_size] = float((emb @ embedder(source)[0]).mean())
    assert csim[16] == pytest.approx(csim[1], rel=RTOL, abs=ATOL)
    expected = arcface_reference(faces) @ arcface_reference(source)[0]
    assert csim[1] == pytest.approx(float(expected.mean()), abs=1e-5)
    with pytest.raises(ValueError, match="batch_size"):
        AF.ArcFaceEmbedder(path=model, batch_size=0)
    detector = AF.SCRFDDetector(path=str(build_scrfd(tmp_path / "det_10g.onnx", empty_maps())), device="cpu")
    assert detector.session.get_providers() == ["CPUExecutionProvider"]
    assert detector.detect(np.zeros((48, 64, 3), np.uint8)) == []


# ----------------------------------------------------------------------------- Inception (FID features)
def random_inception_file(tmp_path, monkeypatch):
    from torch_fidelity.feature_extractor_inceptionv3 import FeatureExtractorInceptionV3

    torch.manual_seed(0)
    with monkeypatch.context() as patch:  # build once without any weights file to get the layout
        patch.setattr(torch, "load", lambda *a, **k: {})
        patch.setattr(FeatureExtractorInceptionV3, "load_state_dict", lambda self, state: None)
        net = FeatureExtractorInceptionV3("inception-v3-compat", ["2048"], feature_extractor_weights_path="unused")
    path = tmp_path / "weights-inception-2015-12-05-6726825d.pth"
    torch.save(net.state_dict(), path)
    return path


@pytest.mark.slow  # full Inception-v3 at 299 x 299 on CPU: ~3 s a frame on 2 busy cores
def test_inception_features_independent_of_batch_size(tmp_path, monkeypatch):
    from hug_vis_dataset.metrics.fid import GaussianStats
    from hug_vis_dataset.models.inception import FEATURE_DIM, inception_features, load_inception
    from hug_vis_dataset.weights import WeightsHashError

    path = random_inception_file(tmp_path, monkeypatch)
    with pytest.raises(WeightsHashError):  # random weights are not the pinned file
        load_inception(path=str(path))
    net = load_inception(path=str(path), device="cpu", verify=False)
    frames = np.random.default_rng(1).integers(0, 256, (5, 40, 56, 3), dtype=np.uint8)
    f1, f16 = inception_features(net, frames, batch=1), inception_features(net, frames, batch=16)
    assert f1.shape == (5, FEATURE_DIM) and np.all(np.isfinite(f1)) and f1.std() > 0
    np.testing.assert_allclose(f16, f1, rtol=RTOL, atol=ATOL * max(1.0, float(np.abs(f1).max())))
    stats = {}
    for feats in (f1, f16):
        s = GaussianStats(FEATURE_DIM)
        s.update(feats)
        stats[len(stats)] = s.mean()
    np.testing.assert_allclose(stats[1], stats[0], rtol=RTOL, atol=ATOL * max(1.0, float(np.abs(f1).max())))
    # independent: the extractor called directly on one NCHW uint8 frame
    with torch.no_grad():
        direct = net(torch.from_numpy(frames[4:5].transpose(0, 3, 1, 2).copy()))[0][0].double().numpy()
    np.testing.assert_allclose(f16[4], direct, rtol=RTOL, atol=ATOL * max(1.0, float(np.abs(f1).max())))


# ----------------------------------------------------------------------------- UTMOS
def test_utmos_scores_independent_of_batch_size(tmp_path):
    from test_utmos import random_official_state, reference_forward

    from hug_vis_dataset.models import utmos as U

    cfg = U.UTMOSConfig.tiny()
    state = random_official_state(cfg, seed=4)
    torch.save(state, tmp_path / "utmos_tiny.pt")
    model = U.load_state_dict_official(U.UTMOS22Strong(cfg), tmp_path / "utmos_tiny.pt")
    rng = np.random.default_rng(5)
    # 17 clips of one length (batched 16 + 1) and 2 of other lengths, interleaved
    clips = [rng.uniform(-0.5, 0.5, 3200).astype(np.float32) for _ in range(17)]
    clips.insert(4, rng.uniform(-0.5, 0.5, 2400).astype(np.float32))
    clips.insert(11, rng.uniform(-0.5, 0.5, 4000).astype(np.float32))
    one, sixteen = U.utmos_scores(model, clips, batch_size=1), U.utmos_scores(model, clips, batch_size=16)
    np.testing.assert_allclose(sixteen, one, rtol=RTOL, atol=ATOL)
    assert len(set(np.round(one, 6))) == len(clips)  # distinct clips, distinct scores: order is kept
    for i in (0, 4, 11, 18):  # against the functional re-derivation of the official computation
        assert sixteen[i] == pytest.approx(reference_forward(state, cfg, torch.from_numpy(clips[i])), abs=1e-4)
    assert U.utmos_score(model, clips[7]) == pytest.approx(one[7], rel=RTOL)
    with pytest.raises(ValueError, match="at least 400"):
        U.utmos_scores(model, [clips[0], np.zeros(10, np.float32)])


# ----------------------------------------------------------------------------- LPIPS
def test_lpips_loader_moved_with_same_behaviour(tmp_path, monkeypatch):
    import torchvision

    from hug_vis_dataset.metrics import frames as G
    from hug_vis_dataset.models.lpips import load_lpips, lpips_distances
    from hug_vis_dataset.weights import WeightsHashError, WeightsMissingError

    torch.manual_seed(0)
    torch.save(torchvision.models.alexnet(weights=None).state_dict(), tmp_path / "alexnet.pth")
    with pytest.raises(WeightsHashError):
        load_lpips(alexnet_path=str(tmp_path / "alexnet.pth"))
    model = load_lpips(alexnet_path=str(tmp_path / "alexnet.pth"), verify=False, device="cpu")
    backbone = torchvision.models.alexnet(weights=None)
    backbone.load_state_dict(torch.load(tmp_path / "alexnet.pth", weights_only=True))
    for k, (slice_name, layer) in enumerate(((1, 0), (2, 3), (3, 6), (4, 8), (5, 10))):  # lpips' AlexNet slices
        assert torch.equal(getattr(model.net, f"slice{slice_name}")._modules[str(layer)].weight,
                           backbone.features[layer].weight), k
    rng = np.random.default_rng(0)
    pred = rng.integers(0, 256, (17, 40, 40, 3), dtype=np.uint8)
    ref = np.clip(pred + rng.normal(0, 25, pred.shape), 0, 255).astype(np.uint8)
    d1, d16 = lpips_distances(model, pred, ref, batch=1), lpips_distances(model, pred, ref, batch=16)
    np.testing.assert_allclose(d16, d1, rtol=RTOL, atol=ATOL)
    assert float(d16.mean()) == pytest.approx(float(d1.mean()), rel=RTOL)
    np.testing.assert_allclose(d16, G.lpips_frames(model, pred, ref), rtol=RTOL, atol=ATOL)  # the metric's path
    assert np.all(lpips_distances(model, pred, pred) == 0)
    with pytest.raises(ValueError, match="uint8"):
        lpips_distances(model, pred.astype(np.float32), ref.astype(np.float32))
    monkeypatch.setenv("HUGVIS_CACHE_DIR", str(tmp_path / "empty"))
    monkeypatch.delenv("HUGVIS_WEIGHTS_DIR", raising=False)
    monkeypatch.delenv("HUGVIS_WEIGHT_ALEXNET", raising=False)
    with pytest.raises(WeightsMissingError, match="alexnet-owt-7be5be79.pth"):
        load_lpips()


def test_batch_size_does_not_change_a_door_value(tmp_path):
    """The evaluate door and the runner pass --batch-size to the network: LPIPS per clip, batch 1 vs 16."""
    import torchvision

    from hug_vis_dataset.readers.media import write_video
    from hug_vis_dataset.models.lpips import load_lpips
    from hug_vis_dataset.modules import compute

    torch.manual_seed(0)
    torch.save(torchvision.models.alexnet(weights=None).state_dict(), tmp_path / "alexnet.pth")
    model = load_lpips(alexnet_path=str(tmp_path / "alexnet.pth"), verify=False)
    rng = np.random.default_rng(1)
    ref = rng.integers(0, 256, (20, 48, 64, 3), dtype=np.uint8)
    pred = np.clip(ref + rng.normal(0, 20, ref.shape), 0, 255).astype(np.uint8)
    write_video(tmp_path / "r.mp4", [ref], fps=25.0, crf=0)
    write_video(tmp_path / "p.mp4", [pred], fps=25.0, crf=0)
    out = {b: compute("lpips", predictions=[str(tmp_path / "p.mp4")], references=[str(tmp_path / "r.mp4")],
                      models={"lpips": model}, batch_size=b, chunk_frames=7) for b in (1, 16)}
    assert out[1]["n_ok"] == out[16]["n_ok"] == 1
    assert out[16]["lpips"] == pytest.approx(out[1]["lpips"], rel=RTOL, abs=ATOL)

"""The content-addressed feature cache: a second system recomputes no reference feature (extractor
calls counted through the real scorer and the real cache), a changed extractor is another key, a
corrupt entry is named in one line and recomputed, and ``hugvis cache list|clear``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from test_csim_pipeline import HeadDetector, ProjectionEmbedder

from hug_vis_dataset.cli import main
from hug_vis_dataset.cache.features import FeatureCache
from hug_vis_dataset.tasks import ModelCache, get_task
from hug_vis_dataset.tasks.generation import video_features


class CountingInception(torch.nn.Module):
    """A tiny stand-in with the extractor's interface: uint8 (n, 3, H, W) -> [(n, 2048)]."""

    def __init__(self, key="toy-inception-v1", seed=0):
        super().__init__()
        torch.manual_seed(seed)
        self.proj = torch.nn.Linear(12, 2048)
        self.cache_key, self.frames = key, 0

    def forward(self, x):
        self.frames += len(x)
        pooled = torch.nn.functional.adaptive_avg_pool2d(x.float() / 255, 2).flatten(1)
        return [self.proj(pooled)]


class CountingEmbedder(ProjectionEmbedder):
    cache_key = "toy-arcface-v1"

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __call__(self, faces):
        self.calls += len(faces)
        return super().__call__(faces)


class KeyedDetector(HeadDetector):
    cache_key = "toy-scrfd-v1"


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("featcache")
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.5, size=(96, 54), seed=4)
    return root


@pytest.fixture(autouse=True)
def cheap_distance(monkeypatch):
    """The Frechet distance of 2048-d stats costs minutes of sqrtm on this machine; these tests are about
    which features are computed, so the distance is a cheap exact function of both sets' moments."""
    def moments(a, b):
        return float(np.sum((a.mean() - b.mean()) ** 2) + np.sum(np.abs(a.sum_xx - b.sum_xx))) + a.n + 1e-3 * b.n

    monkeypatch.setattr("hug_vis_dataset.metrics.fid.fid_from_stats", moments)


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HUGVIS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HUGVIS_NO_FEATURE_CACHE", raising=False)
    return tmp_path / "cache" / "features"


def inputs(grid, system):
    from hug_vis_dataset.datamodel.release import Release

    records = sorted(Release(grid).records.values(), key=lambda r: r.clip_id)
    preds = [str(grid / "simulated_systems" / "vision_driven" / system / f"{r.clip_id}.mp4") for r in records]
    return preds, [{"video": str(r.video_path)} for r in records]


def test_a_second_system_recomputes_no_reference_feature(grid, cache_dir):
    scorer = get_task("vision_driven")
    net = CountingInception()
    models = ModelCache(overrides={"inception": net})
    preds, refs = inputs(grid, "vis_good")
    n_frames = sum(len(video_features(r["video"], CountingInception(), 32, 16)) for r in refs)
    first = scorer.score_set(preds, refs, ("fid",), models, {"chunk_frames": 8})
    assert net.frames == 2 * n_frames  # the system's frames and the reference frames
    net.frames = 0
    other, _ = inputs(grid, "vis_poor")
    second = scorer.score_set(other, refs, ("fid",), models, {"chunk_frames": 8})
    assert net.frames == n_frames  # only the second system's own frames
    # values equal the uncached computation, in another process's words: no cache at all
    import os

    os.environ["HUGVIS_NO_FEATURE_CACHE"] = "1"
    try:
        fresh = CountingInception()
        assert scorer.score_set(other, refs, ("fid",), ModelCache(overrides={"inception": fresh}),
                                {"chunk_frames": 8})["fid"] == second["fid"]
        assert fresh.frames == 2 * n_frames
    finally:
        del os.environ["HUGVIS_NO_FEATURE_CACHE"]
    assert first["fid"] != second["fid"]
    assert len(list((cache_dir / "fid_reference").glob("*.npz"))) == len(refs)
    # another extractor (weights) is another key: recomputed
    changed = CountingInception(key="toy-inception-v2", seed=1)
    scorer.score_set(preds, refs, ("fid",), ModelCache(overrides={"inception": changed}), {"chunk_frames": 8})
    assert changed.frames == 2 * n_frames


def test_portrait_embedding_once_per_reference(grid):
    scorer = get_task("vision_driven")
    embedder = CountingEmbedder()
    models = ModelCache(overrides={"face_detector": KeyedDetector(), "face_embedder": embedder})
    preds, refs = inputs(grid, "vis_good")
    for system in ("vis_good", "vis_fair"):
        preds, _ = inputs(grid, system)
        for pred, ref in zip(preds, refs):
            scores, errors = scorer.score_groups(pred, {**ref, "portrait": ref["video"]}, ("csim",), models,
                                                 {"chunk_frames": 8})
            assert errors == {} and -1 <= scores.values["csim"] <= 1
    frames = 15 * len(refs) * 2  # every generated frame has a face
    assert embedder.calls == frames + len(refs)  # one portrait embedding per reference, not per clip and system


def test_a_corrupt_entry_is_named_and_recomputed(grid, cache_dir, capsys):
    scorer = get_task("vision_driven")
    preds, refs = inputs(grid, "vis_good")
    refs = refs[:1]
    net = CountingInception()
    models = ModelCache(overrides={"inception": net})
    value = scorer.score_set(preds[:1], refs, ("fid",), models, {"chunk_frames": 8})["fid"]
    entry = next((cache_dir / "fid_reference").glob("*.npz"))
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF
    entry.write_bytes(bytes(data))
    net.frames = 0
    assert scorer.score_set(preds[:1], refs, ("fid",), models, {"chunk_frames": 8})["fid"] == value
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is corrupt (sha256 mismatch); recomputing it" in err[0] and entry.name in err[0]
    assert net.frames == 2 * 15
    assert FeatureCache(cache_dir).load("fid_reference", {"x": 1}) is None  # absent: no line


def test_cache_list_and_clear(grid, cache_dir, capsys):
    cache = FeatureCache(cache_dir)
    cache.store("fid_reference", {"a": 1}, {"features": np.zeros((4, 8), np.float32)})
    cache.store("portrait_embedding", {"a": 1}, {"embedding": np.ones((1, 8))})
    assert main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    assert "2 entries" in out and "fid_reference: 1 entries" in out and "portrait_embedding: 1 entries" in out
    assert main(["cache", "clear", "--kind", "fid_reference"]) == 0
    assert "removed 1 entries" in capsys.readouterr().out
    assert [e["kind"] for e in cache.entries()] == ["portrait_embedding"]
    assert main(["cache", "clear"]) == 0 and cache.entries() == []


def test_presence_needs_arrays_and_a_side_file_naming_their_sha256(cache_dir):
    cache = FeatureCache(cache_dir)
    assert not cache.has("fid_reference", {"a": 1})
    cache.store("fid_reference", {"a": 1}, {"features": np.zeros((4, 8), np.float32)})
    assert cache.has("fid_reference", {"a": 1}) and not cache.has("fid_reference", {"a": 2})
    meta = next((cache_dir / "fid_reference").glob("*.json"))
    meta.write_text("{not json")
    assert not cache.has("fid_reference", {"a": 1})
    meta.unlink()
    assert not cache.has("fid_reference", {"a": 1})

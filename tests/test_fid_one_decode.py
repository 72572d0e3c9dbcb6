"""FID from the one-decode pass (issue 25): a clip's prediction and reference are decoded once, and
the pass's Inception features feed FID with the values of the decoding path bit for bit.

The runner's FID (``evaluate_submission``, features kept with the rows in ``.set-features/``) is
compared with ``score_set`` decoding everything (no stored features, no feature cache): the Gaussian
statistics handed to the Frechet distance are equal array for array. Decodes are counted through
``media.iter_video_frames``; a damaged stored file is named and recomputed; 1 vs 2 processes agree.

The Frechet distance of 2048-d statistics costs minutes of ``sqrtm`` here, so it is replaced by a
recorder returning a cheap exact function of both sets' moments: equal statistics are equal FIDs.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from test_csim_pipeline import HeadDetector, ProjectionEmbedder
from test_feature_cache import CountingInception

from hug_vis_dataset.readers import media
from hug_vis_dataset.datamodel.release import Release
from hug_vis_dataset.scoring import engines
from hug_vis_dataset.scoring.runner import evaluate_submission
from hug_vis_dataset.tasks import ModelCache, get_task
from hug_vis_dataset.tasks import models as model_cache
from hug_vis_dataset.tasks.generation import video_features, video_pass

FRAMES = 15  # 0.5 s at 30 fps
OPTIONS = {"chunk_frames": 4, "batch_size": 3}  # chunks 4, 4, 4, 3; batches 3, 1 within a chunk
METRICS = ["psnr", "ssim", "fid"]


class BatchInception(CountingInception):
    """The feature cache tests' stand-in, also recording every batch it is given."""

    def __init__(self):
        super().__init__()
        self.batches: list[int] = []

    def forward(self, x):
        self.batches.append(len(x))
        return super().forward(x)


def toy_worker_init() -> None:
    """A spawned worker's models: the same stand-in (same seed, so the same weights)."""
    from hug_vis_dataset.scoring.engines import _worker_init
    from hug_vis_dataset.tasks import models

    _worker_init()
    models._PROCESS_CACHE = ModelCache("cpu", overrides={"inception": BatchInception()})


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("fidonedecode")
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=2, seconds=0.5, size=(64, 36), seed=4)
    return root


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HUGVIS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("HUGVIS_NO_FEATURE_CACHE", raising=False)
    return tmp_path / "cache" / "features"


@pytest.fixture(autouse=True)
def net(monkeypatch):
    """The stand-in Inception in this process's model cache; the injected model needs no weights file."""
    from hug_vis_dataset import weights

    model = BatchInception()
    monkeypatch.setattr(model_cache, "_PROCESS_CACHE", ModelCache("cpu", overrides={"inception": model}))
    monkeypatch.setattr(weights, "missing_note", lambda names: None)
    return model


@pytest.fixture(autouse=True)
def stats(monkeypatch):
    """Every (generated, reference) pair of statistics FID is computed from, as copied arrays."""
    seen: list[tuple] = []

    def record(a, b):
        seen.append(tuple(np.array(x, copy=True) for s in (a, b) for x in (s.n, s.sum_x, s.sum_xx)))
        return float(np.sum((a.mean() - b.mean()) ** 2) + np.sum(np.abs(a.sum_xx - b.sum_xx))) + a.n + 1e-3 * b.n

    monkeypatch.setattr("hug_vis_dataset.metrics.fid.fid_from_stats", record)
    return seen


@pytest.fixture
def decoded(monkeypatch):
    """Frames decoded per path, through every ``media.iter_video_frames`` call of this process."""
    counts: dict[str, int] = {}
    real = media.iter_video_frames

    def counting(path, chunk_frames=32, gray=False):
        for chunk in real(path, chunk_frames, gray):
            counts[str(path)] = counts.get(str(path), 0) + len(chunk)
            yield chunk

    monkeypatch.setattr(media, "iter_video_frames", counting)
    return counts


def system(grid, name="vis_good"):
    return grid / "simulated_systems" / "vision_driven" / name


def clips(grid, folder):
    records = sorted(Release(grid).records.values(), key=lambda r: r.clip_id)
    return [(r.clip_id, str(folder / f"{r.clip_id}.mp4"), str(r.video_path)) for r in records]


def evaluate(grid, folder, out, model="m", **kw):
    return evaluate_submission("vision_driven", folder, model, grid, out, progress=False, metrics=METRICS,
                               chunk_frames=OPTIONS["chunk_frames"], batch_size=OPTIONS["batch_size"], **kw)


def decoding_path(grid, folder, monkeypatch):
    """FID as before the pass: every prediction and reference decoded by ``score_set``, no cache."""
    monkeypatch.setenv("HUGVIS_NO_FEATURE_CACHE", "1")
    try:
        triples = clips(grid, folder)
        return get_task("vision_driven").score_set([p for _, p, _ in triples], [{"video": r} for _, _, r in triples],
                                                   ("fid",), ModelCache("cpu", overrides={"inception": BatchInception()}),
                                                   OPTIONS)["fid"]
    finally:
        monkeypatch.delenv("HUGVIS_NO_FEATURE_CACHE")


def assert_same_stats(a, b):
    assert len(a) == len(b) == 6
    for x, y in zip(a, b):
        assert x.shape == y.shape and np.array_equal(x, y)


def fid_of(result):
    return result.summary["aggregate"]["m"]["fid"] if "m" in result.summary["aggregate"] else None


# ----------------------------------------------------------------------------- the pass itself
def test_pass_features_equal_video_features_whatever_the_pieces(grid, tmp_path, monkeypatch, cache_dir):
    """The pass regroups pieces into the decoder's chunks: the same batches reach the network and the
    features equal ``video_features`` exactly, even where a shorter reference splits a chunk."""
    _, pred, ref = clips(grid, system(grid))[0]
    frames = np.concatenate(list(media.iter_video_frames(ref)))
    short = tmp_path / "short.mp4"  # 10 frames: the pass pairs 4, 4, 2 and then 2 frames alone
    media.write_video(short, [frames[:10]])
    options = {**OPTIONS, "set_features": ("fid",)}
    monkeypatch.setenv("HUGVIS_NO_FEATURE_CACHE", "1")
    fused = BatchInception()
    out = video_pass(pred, {"video": str(short), "portrait": ref}, ("psnr",), ModelCache(overrides={"inception": fused}),
                     options)
    direct = BatchInception()
    expected = video_features(pred, direct, OPTIONS["chunk_frames"], OPTIONS["batch_size"])
    assert fused.batches == direct.batches == [3, 1] * 3 + [3]
    got = out.set_features["fid"]
    assert got.dtype == np.float32 and got.shape == (FRAMES, 2048)
    assert np.array_equal(got.astype(np.float64), expected)
    assert out.notes["frames"] == 10 and "psnr" in out.values  # the frame metric is unchanged
    monkeypatch.delenv("HUGVIS_NO_FEATURE_CACHE")

    # With the cache: a reference decoded to its end is cached under reference_features' key ...
    from hug_vis_dataset.tasks.generation import reference_features

    models = ModelCache(overrides={"inception": BatchInception()})
    video_pass(pred, {"video": str(short), "portrait": ref}, ("psnr",), models, options)
    assert len(list((cache_dir / "fid_reference").glob("*.npz"))) == 1
    models.get("inception").frames = 0
    cached = reference_features(str(short), models, OPTIONS["chunk_frames"], OPTIONS["batch_size"])
    assert models.get("inception").frames == 0  # read back, not computed
    assert np.array_equal(cached, video_features(str(short), BatchInception(), 4, 3))
    # ... one the prediction stops short of is not (it was not decoded to its end)
    short_pred = tmp_path / "short_pred.mp4"
    media.write_video(short_pred, [np.concatenate(list(media.iter_video_frames(pred)))[:10]])
    out = video_pass(str(short_pred), {"video": ref, "portrait": ref}, ("psnr",), models, options)
    assert out.set_features["fid"].shape == (10, 2048)
    assert len(list((cache_dir / "fid_reference").glob("*.npz"))) == 1


def test_the_pass_decodes_the_reference_for_fid_without_frame_metrics(grid, decoded, cache_dir):
    """CSIM alone pairs no frames; with FID in the run the reference is still decoded once, in the pass."""
    _, pred, ref = clips(grid, system(grid))[0]
    models = ModelCache(overrides={"inception": BatchInception(), "face_detector": HeadDetector(),
                                   "face_embedder": ProjectionEmbedder()})
    out = video_pass(pred, {"video": ref, "portrait": ref}, ("csim",), models, {**OPTIONS, "set_features": ("fid",)})
    assert "csim" in out.values and out.set_features["fid"].shape == (FRAMES, 2048)
    assert decoded == {pred: FRAMES, ref: FRAMES + 1}  # + the portrait (the reference's first frame)
    assert len(list((cache_dir / "fid_reference").glob("*.npz"))) == 1
    # without FID in the run nothing changes: no features, no reference decode
    decoded.clear()
    out = video_pass(pred, {"video": ref, "portrait": ref}, ("csim",), models, OPTIONS)
    assert out.set_features == {} and decoded == {pred: FRAMES, ref: 1}


# ----------------------------------------------------------------------------- through the runner
def test_runner_fid_equals_the_decoding_path_and_decodes_each_video_once(grid, tmp_path, monkeypatch, net, stats,
                                                                          decoded):
    folder = system(grid)
    triples = clips(grid, folder)
    res = evaluate(grid, folder, tmp_path / "res")
    assert res.computed == len(triples) and res.summary["coverage"]["failed"] == {}
    # (b) one decode of each video per clip, in the clip's pass; the FID step decodes nothing
    assert decoded == {path: FRAMES for _, pred, ref in triples for path in (pred, ref)}
    assert net.frames == 2 * FRAMES * len(triples)
    # the features (and the cache marker of the folder: a damaged file is recomputed, never an error)
    stored = sorted(p.name for p in (res.rows_path.parent / ".set-features").iterdir() if p.name != ".hugvis-transient")
    assert stored == sorted(f"{c}.fid.{ext}" for c, _, _ in triples for ext in ("json", "npy"))
    # (a) the same statistics, so the same FID, as score_set decoding every video
    value = decoding_path(grid, folder, monkeypatch)
    assert_same_stats(stats[0], stats[1])
    assert fid_of(res) == value

    # a second system against the same dataset: its references' features come from the cache
    decoded.clear()
    net.frames = 0
    other = evaluate(grid, system(grid, "vis_poor"), tmp_path / "res", model="m2")
    others = clips(grid, system(grid, "vis_poor"))
    assert decoded == {path: FRAMES for _, pred, ref in others for path in (pred, ref)}  # refs: PSNR/SSIM only
    assert net.frames == FRAMES * len(others)  # its own frames only
    assert other.summary["aggregate"]["m2"]["fid"] == decoding_path(grid, system(grid, "vis_poor"), monkeypatch)
    assert_same_stats(stats[2], stats[3])


def test_several_samples_give_fid_per_sample_draw_from_each_samples_one_decode(grid, tmp_path, monkeypatch, net,
                                                                               stats, decoded):
    """A clip given as two samples (vis_good's video and vis_fair's): each sample decoded once, in its pass; FID per
    sample draw equals the decoding path's FID of that system's videos (the same statistics, array for array); the
    table's FID is the mean of the two draws'."""
    folder = tmp_path / "samples"
    for clip_id, _, _ in clips(grid, system(grid)):
        for k, name in enumerate(("vis_good", "vis_fair")):
            target = folder / clip_id / f"sample_{k}.mp4"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(system(grid, name) / f"{clip_id}.mp4", target)
    res = evaluate(grid, folder, tmp_path / "res")
    assert res.summary["coverage"]["failed"] == {} and res.summary["coverage"]["samples"]["max"] == 2
    triples = clips(grid, folder)
    samples = [str(folder / c / f"sample_{k}.mp4") for c, _, _ in triples for k in (0, 1)]
    assert {p: n for p, n in decoded.items() if p in samples} == dict.fromkeys(samples, FRAMES)  # once each
    stored = sorted(p.name for p in (res.rows_path.parent / ".set-features").iterdir() if p.name.endswith(".npy"))
    assert stored == sorted(f"{c}.sample_{k}.fid.npy" for c, _, _ in triples for k in (0, 1))
    draws = stats[:]  # the runner's two draws: (generated, reference) statistics of sample 0's videos, then 1's
    good, fair = decoding_path(grid, system(grid), monkeypatch), decoding_path(grid, system(grid, "vis_fair"), monkeypatch)
    assert_same_stats(draws[0], stats[len(draws)])
    assert_same_stats(draws[1], stats[len(draws) + 1])
    assert fid_of(res) == pytest.approx((good + fair) / 2, rel=1e-12)
    import pandas as pd

    set_rows = pd.read_parquet(res.rows_path.parent / "set_rows.parquet")
    assert set_rows.sort_values("sample")["value"].tolist() == [good, fair]


def test_before_the_pass_fed_fid_every_video_was_decoded_twice(grid, tmp_path, monkeypatch, stats, decoded):
    """The old path (the pass computing no feature): each prediction and reference decoded twice, same FID."""
    from hug_vis_dataset.tasks.fid_features import PassFeatures

    monkeypatch.setattr(PassFeatures, "start", classmethod(lambda cls, *a: None))
    folder = system(grid)
    res = evaluate(grid, folder, tmp_path / "res")
    assert decoded == {path: 2 * FRAMES for _, pred, ref in clips(grid, folder) for path in (pred, ref)}
    assert fid_of(res) == decoding_path(grid, folder, monkeypatch)
    assert_same_stats(stats[0], stats[1])


class Killed(Exception):
    pass


def warnings_in(err: str) -> list[str]:
    return [line for line in err.splitlines() if "stored fid features" in line]


def test_damaged_stored_features_are_named_and_recomputed(grid, tmp_path, monkeypatch, stats, decoded, capsys):
    triples = clips(grid, system(grid))
    sub = tmp_path / "sub"
    shutil.copytree(system(grid), sub)
    out = tmp_path / "res"

    # an interrupted run leaves its first clip's rows and features in the work folder
    def stop(n):
        raise Killed(n)

    with pytest.raises(Killed):
        evaluate(grid, sub, out, flush_every=1, on_persisted=stop)
    work = out / "vision_driven" / ".work-m" / ".set-features"
    first = triples[0][0]
    damage(work / f"{first}.fid.npy")
    decoded.clear()
    capsys.readouterr()
    res = evaluate(grid, sub, out)  # resumes: the first clip is kept, its features are damaged
    lines = warnings_in(capsys.readouterr().err)
    assert len(lines) == 1 and f"{first}.fid.npy" in lines[0] and "damaged (sha256 mismatch)" in lines[0]
    assert res.computed == len(triples) - 1
    # the first clip's prediction decoded once, by the FID step (its reference's features are cached);
    # every other clip's videos once, in their passes
    assert decoded == {str(sub / f"{first}.mp4"): FRAMES,
                       **{path: FRAMES for c, _, r in triples[1:] for path in (str(sub / f"{c}.mp4"), r)}}
    value = decoding_path(grid, sub, monkeypatch)
    assert fid_of(res) == value
    assert_same_stats(stats[0], stats[1])
    assert not (res.rows_path.parent / ".set-features" / f"{first}.fid.npy").exists()  # named once, then dropped

    # a re-run with one prediction changed keeps the other clips and their features (a damaged one recomputed)
    changed, kept_damaged = triples[1][0], triples[2][0]
    shutil.copy2(system(grid, "vis_poor") / f"{changed}.mp4", sub / f"{changed}.mp4")
    damage(res.rows_path.parent / ".set-features" / f"{kept_damaged}.fid.npy")
    decoded.clear()
    res = evaluate(grid, sub, out)
    lines = warnings_in(capsys.readouterr().err)
    assert len(lines) == 1 and f"{kept_damaged}.fid.npy" in lines[0]
    assert res.computed == 1
    refs = {c: r for c, _, r in triples}
    assert decoded == {str(sub / f"{changed}.mp4"): FRAMES, refs[changed]: FRAMES,  # the changed clip's pass
                       str(sub / f"{first}.mp4"): FRAMES,  # no features since its damaged file was dropped
                       str(sub / f"{kept_damaged}.mp4"): FRAMES}  # its damaged features recomputed
    assert fid_of(res) == decoding_path(grid, sub, monkeypatch)
    assert_same_stats(stats[2], stats[3])
    # features of a clip's earlier prediction are never used for its new one
    from hug_vis_dataset.scoring.store import SetFeatures

    features = np.load(res.rows_path.parent / ".set-features" / f"{changed}.fid.npy")
    assert np.array_equal(features.astype(np.float64), video_features(str(sub / f"{changed}.mp4"), BatchInception(),
                                                                      4, 3))
    assert SetFeatures(tmp_path / "nothing", {}, {}).read(changed, "fid") is None


def damage(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    os.unlink(path)  # a new file: a hard-linked copy in another run folder stays intact
    path.write_bytes(bytes(data))


def test_one_and_two_processes_give_the_same_fid(grid, tmp_path, monkeypatch, stats):
    """The features travel back with each outcome from spawned workers. (The stand-in's values do not
    depend on torch's thread count; Inception-v3's convolutions do, in float32 rounding: docs/SCORING.md.)"""
    folder = system(grid)
    monkeypatch.setattr(engines, "_worker_init", toy_worker_init)  # spawned workers get the stand-in too
    two = evaluate(grid, folder, tmp_path / "two", num_proc=2)  # the workers fill the (empty) cache
    assert len(list((tmp_path / "cache" / "features" / "fid_reference").glob("*.npz"))) == 4
    assert len(list((two.rows_path.parent / ".set-features").glob("*.fid.npy"))) == 4  # from the workers' passes
    monkeypatch.setenv("HUGVIS_CACHE_DIR", str(tmp_path / "cache-one"))
    one = evaluate(grid, folder, tmp_path / "one", num_proc=1)
    assert fid_of(one) == fid_of(two) == decoding_path(grid, folder, monkeypatch)
    assert_same_stats(stats[0], stats[1])
    assert_same_stats(stats[1], stats[2])


@pytest.mark.slow  # torch-fidelity's Inception-v3 at 299 x 299 on CPU: ~0.2-1.5 s a frame, 24 frames
def test_the_real_inception_layout_gives_the_same_fid(tmp_path, monkeypatch, stats):
    """torch-fidelity's extractor with random weights in the official layout: the pass's batches and
    features are the decoding path's, so the statistics are equal bit for bit."""
    from test_model_devices import random_inception_file

    from hug_vis_dataset.models.inception import load_inception
    from hug_vis_dataset.synth import synthesize

    synthesize(tmp_path / "rel", actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.2, size=(64, 36),
               seed=5)  # one clip of 6 frames: chunks 4, 2; batches 3, 1, 2
    path = random_inception_file(tmp_path, monkeypatch)
    inception = load_inception(path=str(path), device="cpu", verify=False)
    inception.cache_key = "random-inception-official-layout"
    monkeypatch.setattr(model_cache, "_PROCESS_CACHE", ModelCache("cpu", overrides={"inception": inception}))
    folder = system(tmp_path / "rel")
    res = evaluate_submission("vision_driven", folder, "m", tmp_path / "rel", tmp_path / "res", progress=False,
                              metrics=["psnr", "fid"], chunk_frames=4, batch_size=3)
    assert len(list((res.rows_path.parent / ".set-features").glob("*.fid.npy"))) == 1  # from the pass
    assert len(list((tmp_path / "cache" / "features" / "fid_reference").glob("*.npz"))) == 1
    monkeypatch.setenv("HUGVIS_NO_FEATURE_CACHE", "1")
    triples = clips(tmp_path / "rel", folder)
    value = get_task("vision_driven").score_set([p for _, p, _ in triples], [{"video": r} for _, _, r in triples],
                                                ("fid",), ModelCache("cpu", overrides={"inception": inception}),
                                                {"chunk_frames": 4, "batch_size": 3})["fid"]
    assert fid_of(res) == value
    assert_same_stats(stats[0], stats[1])

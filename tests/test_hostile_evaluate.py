"""Hostile input to ``hugvis evaluate`` and the weights layer: bad options, corrupted dataset
repos, colour mattes, broken weight files. Each must give a one-line error naming the file or
clip (or a failed row naming the clip), no traceback, and leave earlier results unchanged."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from hostile_cli import assert_one_line_error, run_cli, snapshot
from test_scoring_repo import built, systems  # noqa: F401 - fixture

from hug_vis_dataset import weights as W
from hug_vis_dataset import references as R
from hug_vis_dataset.scoring.runner import RunOptionError, evaluate_submission


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Verification cache and weights overrides of this test only."""
    monkeypatch.setenv(W.ENV_CACHE, str(tmp_path / "cache"))
    monkeypatch.delenv(W.ENV_DIR, raising=False)
    for name in W.REGISTRY:
        monkeypatch.delenv(W.env_var(name), raising=False)


def evaluate(capsys, task, predictions, dataset, out, *extra):
    return run_cli(capsys, "evaluate", task, "--predictions", predictions, "--model", "m", "--dataset", dataset,
                   "--out", out, "--no-progress", *extra)


# ----------------------------------------------------------------------------- options
@pytest.fixture(scope="module")
def scored(built, tmp_path_factory):
    """A finished matting run whose files must survive every refused rerun."""
    release, _ = built
    out = tmp_path_factory.mktemp("scored")
    evaluate_submission("matting", systems(release, "matting")[0], "m", release, out, progress=False)
    return out


@pytest.mark.parametrize("option,value", [("--chunk-frames", "0"), ("--chunk-frames", "-3"), ("--chunk-frames", "x"),
                                          ("--chunk-frames", "1.5"), ("--flush-every", "0"), ("--num-proc", "0"),
                                          ("--num-proc", "-2")])
def test_bad_evaluate_options_never_become_clip_failures(built, scored, capsys, option, value):
    release, _ = built
    before = snapshot(scored)
    assert before  # rows.parquet, summary.json ... of the earlier run
    result = evaluate(capsys, "matting", systems(release, "matting")[0], release, scored, option, value)
    assert_one_line_error(result, 2, option, value)
    assert snapshot(scored) == before


@pytest.mark.parametrize("kwargs,needle", [({"chunk_frames": 0}, "chunk_frames"), ({"flush_every": 0}, "flush_every"),
                                           ({"num_proc": 0}, "num_proc"), ({"backend": "spark"}, "spark"),
                                           ({"chunk_frames": 2.5}, "chunk_frames")])
def test_run_options_are_refused_before_any_clip(built, tmp_path, kwargs, needle):
    release, _ = built
    with pytest.raises(RunOptionError, match=needle):
        evaluate_submission("matting", systems(release, "matting")[0], "m", release, tmp_path / "out",
                            progress=False, **kwargs)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("what", ["missing", "file", "empty folder"])
def test_bad_dataset_argument(built, tmp_path, capsys, what):
    release, _ = built
    dataset = {"missing": tmp_path / "no" / "such", "file": tmp_path / "f.txt", "empty folder": tmp_path / "e"}[what]
    if what == "file":
        dataset.write_text("x", encoding="utf-8")
    elif what == "empty folder":
        dataset.mkdir()
    result = evaluate(capsys, "matting", systems(release, "matting")[0], dataset, tmp_path / "out")
    assert_one_line_error(result, 2, str(dataset))
    assert not (tmp_path / "out").exists()


def test_missing_predictions_folder(built, tmp_path, capsys):
    release, _ = built
    result = evaluate(capsys, "matting", tmp_path / "nothing", release, tmp_path / "out")
    assert_one_line_error(result, 2, "nothing", "does not exist")


@pytest.mark.parametrize("damage", ["truncated rows", "garbage part", "truncated set rows"])
def test_damaged_results_of_an_earlier_run_are_named(built, scored, tmp_path, capsys, damage):
    release, _ = built
    out = tmp_path / "out"
    shutil.copytree(scored, out)
    folder = out / "matting" / "m"
    if damage == "truncated rows":
        victim = folder / "rows.parquet"
        victim.write_bytes(victim.read_bytes()[:100])
    elif damage == "garbage part":
        victim = folder / "rows" / "part-0-0.parquet"
        victim.parent.mkdir(exist_ok=True)
        victim.write_bytes(b"not parquet")
    else:
        victim = folder / "set_rows.parquet"
        victim.write_bytes(b"PAR1")
    before = snapshot(out)
    result = evaluate(capsys, "matting", systems(release, "matting")[0], release, out)
    # A stored run changed since hugvis wrote it is never replaced: named, with the fix, before anything is written.
    assert_one_line_error(result, 2, str(victim), "move it out of")
    assert snapshot(out) == before


@pytest.mark.parametrize("model", ["a/b", "..", "", "two words"])
def test_model_name_that_is_not_a_folder_name(built, tmp_path, capsys, model):
    release, _ = built
    result = run_cli(capsys, "evaluate", "matting", "--predictions", systems(release, "matting")[0], "--model", model,
                     "--dataset", release, "--out", tmp_path / "out", "--no-progress")
    assert_one_line_error(result, 2, f"model name {model!r}")
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------- corrupted dataset repos
def _corrupt(path: Path) -> None:
    """Overwrite 4 bytes in the middle: same size, so only a checksum can notice."""
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 4] = bytes(255 - b for b in data[middle:middle + 4])
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("task,config", [("matting", "matting"), ("matting", "clips"), ("voice_cloning", "voice_cloning"),
                                         ("vision_driven", "vision_driven"), ("emotion", "emotion")])
def test_corrupted_shard_is_refused_naming_shard_and_fix(built, tmp_path, capsys, task, config):
    release, repo = built
    copy = tmp_path / "repo"
    shutil.copytree(repo, copy)
    shard = copy / "data" / config / "test-00000.parquet"
    size = shard.stat().st_size
    _corrupt(shard)
    assert shard.stat().st_size == size
    predictions = systems(release, task)[0]
    result = evaluate(capsys, task, predictions, copy, tmp_path / "out")
    assert_one_line_error(result, 2, f"data/{config}/test-00000.parquet", "corrupted", "--no-verify-dataset")
    assert not (tmp_path / "out").exists()


def test_no_verify_dataset_is_recorded_in_provenance(built, tmp_path, capsys):
    release, repo = built
    result = evaluate(capsys, "emotion", systems(release, "emotion")[0], repo, tmp_path / "a")
    assert result[0] == 0, result[2]
    checked = json.loads((tmp_path / "a" / "emotion" / "m" / "summary.json").read_text())
    assert checked["provenance"]["dataset"]["shards_verified"].startswith("sha256 of every shard read checked")
    result = evaluate(capsys, "emotion", systems(release, "emotion")[0], repo, tmp_path / "b", "--no-verify-dataset")
    assert result[0] == 0, result[2]
    unchecked = json.loads((tmp_path / "b" / "emotion" / "m" / "summary.json").read_text())
    assert unchecked["provenance"]["dataset"]["shards_verified"].startswith("not checked (--no-verify-dataset")


def test_verification_is_cached_by_size_and_mtime(built, tmp_path):
    _, repo = built
    copy = tmp_path / "repo"
    shutil.copytree(repo, copy)
    entries = json.loads((copy / "manifest.json").read_text())["configs"]["matting"]["shards"]
    from hug_vis_dataset.outputs import claim

    cache = claim("hugvis evaluate", tmp_path / "results", "results").ensure() / "verified.json"
    assert R.verify_manifest_shards(copy, entries, cache) == len(entries)
    assert R.verify_manifest_shards(copy, entries, cache) == 0  # cached: not read again
    shard = copy / entries[0]["file"]
    _corrupt(shard)
    os.utime(shard, ns=(shard.stat().st_atime_ns, shard.stat().st_mtime_ns + 10**9))
    with pytest.raises(R.DatasetSourceError, match=entries[0]["file"]):
        R.verify_manifest_shards(copy, entries, cache)


def test_shard_listed_in_manifest_but_missing(built, tmp_path, capsys):
    release, repo = built
    copy = tmp_path / "repo"
    shutil.copytree(repo, copy)
    (copy / "data" / "matting" / "test-00000.parquet").unlink()
    result = evaluate(capsys, "matting", systems(release, "matting")[0], copy, tmp_path / "out")
    assert_one_line_error(result, 2, "data/matting/test-00000.parquet", "does not exist")


# ----------------------------------------------------------------------------- mattes must be single-channel
def test_colour_video_matte_fails_its_clip_with_a_clear_error(built, tmp_path):
    import numpy as np

    from hug_vis_dataset.readers.media import write_video

    release, _ = built
    sub = tmp_path / "sub"
    shutil.copytree(systems(release, "matting")[0], sub)
    victim = sorted(p for p in sub.iterdir() if p.is_dir())[0]
    frames = len(list(victim.glob("*.png")))
    shutil.rmtree(victim)
    rng = np.random.default_rng(0)
    write_video(sub / f"{victim.name}.mp4", [rng.integers(0, 256, (frames, 36, 64, 3), dtype=np.uint8)])
    result = evaluate_submission("matting", sub, "m", release, tmp_path / "out", progress=False)
    rows = pd.read_parquet(result.rows_path)
    bad = rows[rows["clip_id"] == victim.name]
    assert (bad["status"] == "failed").all() and len(bad)
    assert bad["error"].str.contains(f"{victim.name}.mp4 is not single-channel").all()
    assert (rows.loc[rows["clip_id"] != victim.name, "status"] == "ok").all()


# ----------------------------------------------------------------------------- weights
def _garbage(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"this is not a model at all\x00\x01")
    return path


def test_broken_unpinned_checkpoint_disables_only_its_metric(built, tmp_path, capsys, monkeypatch):
    release, _ = built
    bad = _garbage(tmp_path / "w" / "utmos22_strong_step7459_v1.pt")
    monkeypatch.setenv(W.env_var("utmos22_strong"), str(bad))
    predictions = systems(release, "voice_cloning")[0]
    status, out, err = evaluate(capsys, "voice_cloning", predictions, release, tmp_path / "out")
    assert status == 0 and "Traceback" not in out + err
    warning = [line for line in err.splitlines() if line.startswith("WARNING:")]
    assert len(warning) == 1 and "utmos" in warning[0] and str(bad) in warning[0]
    assert "not a loadable torch checkpoint" in warning[0]
    rows = pd.read_parquet(tmp_path / "out" / "voice_cloning" / "m" / "rows.parquet")
    # every other voice metric still scores (Distill-MOS runs on the weights its wheel ships; CER needs weights)
    assert set(rows["metric"]) == {"dnsmos", "dnsmos_sig", "dnsmos_bak", "dnsmos_p808", "speaker_similarity", "distill_mos"}
    assert (rows["status"] == "ok").all()
    result = evaluate(capsys, "voice_cloning", predictions, release, tmp_path / "strict", "--require-all-metrics")
    assert_one_line_error(result, 2, "utmos", str(bad))
    assert not (tmp_path / "strict").exists()


def test_broken_onnx_detector_disables_csim_but_not_psnr(built, tmp_path, capsys, monkeypatch):
    release, _ = built
    bad = _garbage(tmp_path / "w" / "det_10g.onnx")
    monkeypatch.setenv(W.env_var("arcface_det_10g"), str(bad))
    status, out, err = evaluate(capsys, "vision_driven", systems(release, "vision_driven")[0], release,
                                tmp_path / "out")
    assert status == 0 and "Traceback" not in out + err
    summary = json.loads((tmp_path / "out" / "vision_driven" / "m" / "summary.json").read_text())
    assert "not a valid ONNX model" in summary["metrics"]["skipped"]["csim"]
    assert str(bad) in summary["metrics"]["skipped"]["csim"]
    assert {"psnr", "ssim"} <= set(summary["metrics"]["computed"])


@pytest.mark.parametrize("content,needle", [
    (b"garbage", "not a loadable torch checkpoint"),
    (b"", "not a loadable torch checkpoint"),
    (b"PK\x03\x04truncated zip", "not a loadable torch checkpoint"),
])
def test_check_loadable_unpinned_torch_file(tmp_path, monkeypatch, content, needle):
    path = tmp_path / "syncnet_v2.model"
    path.write_bytes(content)
    monkeypatch.setenv(W.env_var("syncnet_v2"), str(path))
    problem = W.check_loadable("syncnet_v2")
    assert needle in problem and str(path) in problem and "hugvis weights download syncnet_v2" in problem


def test_check_loadable_accepts_a_real_state_dict_and_onnx(tmp_path, monkeypatch):
    import torch

    good = tmp_path / "syncnet_v2.model"
    torch.save({"w": torch.zeros(2)}, good)
    monkeypatch.setenv(W.env_var("syncnet_v2"), str(good))
    assert W.check_loadable("syncnet_v2") is None
    real_onnx = W.resolve("dnsmos_p808")  # a real ONNX model shipped in a wheel
    copy = tmp_path / "det_10g.onnx"
    shutil.copy(real_onnx, copy)
    monkeypatch.setenv(W.env_var("arcface_det_10g"), str(copy))
    assert W.check_loadable("arcface_det_10g") is None
    copy.write_bytes(real_onnx.read_bytes()[: real_onnx.stat().st_size // 2])  # truncated
    assert "not a valid ONNX model" in W.check_loadable("arcface_det_10g")


def test_override_pointing_at_a_missing_file(tmp_path, capsys, monkeypatch):
    missing = tmp_path / "nowhere" / "pretrained.pt"
    monkeypatch.setenv(W.env_var("resemblyzer_encoder"), str(missing))
    problem = W.check_loadable("resemblyzer_encoder")
    assert W.env_var("resemblyzer_encoder") in problem and str(missing) in problem and "is not a file" in problem
    status, out, err = run_cli(capsys, "weights", "verify", "resemblyzer_encoder")
    assert status == 1 and "Traceback" not in out + err
    assert "resemblyzer_encoder: bad override" in out and str(missing) in out


def test_lpips_head_failing_its_hash_is_reported_as_a_hash_mismatch(tmp_path, monkeypatch):
    real = W.resolve("lpips_alex_linear")
    bad = tmp_path / "alex.pth"
    bad.write_bytes(real.read_bytes()[:-10])
    monkeypatch.setenv(W.env_var("lpips_alex_linear"), str(bad))
    note = W.missing_note(["lpips_alex_linear"])
    assert note.startswith("weights 'lpips_alex_linear': hash mismatch") and str(bad) in note
    assert "needs weights" not in note


@pytest.mark.parametrize("action", ["verify", "download", "list"])
def test_unknown_weights_name(capsys, action):
    assert_one_line_error(run_cli(capsys, "weights", action, "no_such_weights"), 2, "no_such_weights",
                          "lpips_alex_linear")


def test_weights_verify_fails_on_a_garbage_unpinned_file(tmp_path, capsys, monkeypatch):
    bad = _garbage(tmp_path / "utmos.pt")
    monkeypatch.setenv(W.env_var("utmos22_strong"), str(bad))
    status, out, err = run_cli(capsys, "weights", "verify", "utmos22_strong")
    assert status == 1 and "Traceback" not in out + err
    assert "utmos22_strong: unloadable" in out and str(bad) in out

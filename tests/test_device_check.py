"""scripts/device_check.py without a GPU: the CPU half on a small setting, and what its JSON and Markdown say.

The check is the one command a GPU session runs (docs/PERFORMANCE.md, "GPU"). Here it runs as a user would
run it on a machine without a GPU (``--cpu-only`` makes that so on any machine): one 320x180 clip of 2.2 s at
25 fps (55 frames: Sync-C/D need a face track of more than 50), the tiny UTMOS, batch-size checks at batch 1
and 4 (``--kernel-batch 4``). Every GPU part must say
"no GPU: skipped", the exit status must be 0, and the CPU figures must be real: batch-size invariance of each
network function (LPIPS's CPU path runs one pair per forward, so exactly 0), door throughput from the frames
and seconds the clip has, and the values the doors gave, checked against the packages' own calls
(speechmos for DNSMOS, Resemblyzer's ``embed_utterance`` for speaker similarity) on the clip the check kept.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "device_check.py"
FRAMES, SECONDS = 55, 2.2


@pytest.fixture(scope="module")
def check():
    spec = importlib.util.spec_from_file_location("device_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("device_check", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory):
    """The CPU half, run once for the module: (completed process, JSON, Markdown, the kept work folder)."""
    tmp = tmp_path_factory.mktemp("device_check")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUGVIS_")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-W", "ignore::UserWarning", str(SCRIPT), "--cpu-only", "--out",
                           str(tmp / "out"), "--work", str(tmp / "work"), "--size", "320x180", "--seconds", str(SECONDS),
                           "--fps", "25", "--clips", "1", "--utmos", "tiny", "--kernel-batch", "4"],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    summary = json.loads((tmp / "out" / "device_check.json").read_text(encoding="utf-8"))
    return proc, summary, (tmp / "out" / "device_check.md").read_text(encoding="utf-8"), tmp / "work"


def metric(summary, name):
    return next(r for r in summary["metrics"] if r["metric"] == name)


@pytest.mark.slow  # the CPU half of every metric on one small clip: about 40 s on 2 busy cores
def test_without_a_gpu_the_cpu_half_runs_and_every_gpu_part_is_skipped(cpu_run, check):
    proc, summary, text, _ = cpu_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert summary["ok"] and summary["failures"] == []
    assert [r["metric"] for r in summary["metrics"]] == [c.name for c in check.CHECKS]
    assert all("error" not in r and r["gpu"] == "no GPU: skipped" for r in summary["metrics"])
    assert summary["evaluate"] == {"status": "no GPU: skipped"}
    assert summary["workers"] == {"ray": {"status": "no GPU: skipped"}, "pool": {"status": "no GPU: skipped"}}
    assert (summary["frames"], summary["audio_seconds"]) == (FRAMES, pytest.approx(SECONDS))
    assert text.count("no GPU: skipped") >= len(check.CHECKS) + 3  # each metric's row, evaluate, Ray, pool
    assert "Verdict: every check that ran passed" in text and proc.stdout.strip().endswith(text.strip()[-40:])


@pytest.mark.slow
def test_cpu_figures_are_measured_on_the_clip(cpu_run):
    _, summary, text, _ = cpu_run
    for r in summary["metrics"]:
        cpu = r["cpu"]
        assert cpu["units"] == (FRAMES if r["unit"] == "frame" else pytest.approx(SECONDS)), r["metric"]
        assert cpu["wall_s"] > 0 and cpu["cpu_s"] > 0 and cpu["per_s"] == pytest.approx(cpu["units"] / cpu["wall_s"])
        # the Markdown row prints the same throughput
        assert f"| {r['metric']} | {r['unit']} | {cpu['per_s']:.1f} | no GPU: skipped |" in text
        # one system's grid: 8,400 x 6 s = 1,512,000 frames at 30 fps, or 50,400 s of audio
        grid = 1_512_000 if r["unit"] == "frame" else 50_400
        assert r["full_grid_hours"]["cpu_wall"] == pytest.approx(grid / cpu["per_s"] / 3600)
        assert r["full_grid_hours"]["cpu_cpu_hours"] == pytest.approx(grid * cpu["cpu_s"] / cpu["units"] / 3600)
        assert r["full_grid_hours"]["gpu_wall"] is None
    values = {r["metric"]: r["cpu"]["values"] for r in summary["metrics"]}
    assert -1 <= values["csim"]["csim"][0] <= 1 and 0 <= values["speaker_similarity"]["speaker_similarity"][0] <= 1
    assert values["sync"]["sync_d"][0] > 0 and math.isfinite(values["sync"]["sync_c"][0])
    assert 0 < values["lpips"]["lpips"][0] < 1 and math.isfinite(values["utmos"]["utmos"][0])
    assert values["fid_features"]["features"]["shape"] == [FRAMES, 2048]


@pytest.mark.slow
def test_batch_invariance_figures(cpu_run, check):
    _, summary, text, _ = cpu_run
    lpips = metric(summary, "lpips")["cpu"]["batch_invariance"]
    assert lpips["batches"] == [1, 4] and lpips["max_abs"] == 0.0  # the CPU path: one pair per forward, by design
    for r in summary["metrics"]:
        inv = r["cpu"]["batch_invariance"]
        if r["metric"] == "dnsmos":
            assert "note" in inv  # one window per onnxruntime run: no batch
            continue
        assert inv["ok"] and inv["scaled"] <= check.BATCH_TOLERANCE and inv["batches"][0] == 1
        assert f"{inv['scaled']:.1e} pass" in text.split(f"| {r['metric']} |")[1].split("\n")[0]


@pytest.mark.slow
def test_voice_values_equal_the_packages_own_calls(cpu_run):
    """The doors' DNSMOS and speaker similarity against speechmos and Resemblyzer on the clip the check scored."""
    import soundfile as sf
    from resemblyzer import VoiceEncoder, preprocess_wav
    from speechmos import dnsmos as reference_dnsmos

    _, summary, _, work = cpu_run
    (pred,) = sorted((work / "release" / "pred_voice").glob("*.wav"))
    (ref,) = sorted((work / "release" / "audio").rglob("*.wav"))
    audio, rate = sf.read(pred, dtype="float32")
    expected = reference_dnsmos.run(audio, rate)
    got = metric(summary, "dnsmos")["cpu"]["values"]
    for ours, theirs in (("dnsmos", "ovrl_mos"), ("dnsmos_sig", "sig_mos"), ("dnsmos_bak", "bak_mos"),
                         ("dnsmos_p808", "p808_mos")):
        assert got[ours][0] == pytest.approx(expected[theirs], abs=1e-6), ours
    encoder = VoiceEncoder(device="cpu", verbose=False)
    a, b = (encoder.embed_utterance(preprocess_wav(sf.read(p, dtype="float32")[0], source_sr=16000)) for p in (pred, ref))
    similarity = float(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b))
    assert metric(summary, "speaker_similarity")["cpu"]["values"]["speaker_similarity"][0] == pytest.approx(
        similarity, abs=1e-5)


def test_differences_against_the_tolerance(check):
    assert check.difference(np.array([0.30, 0.50]), np.array([0.30, 0.52]), 1.0) == pytest.approx(
        {"max_abs": 0.02, "scaled": 0.02, "rel": 0.02 / 0.52})
    # per value kind, the worst; a scale above the floor is the largest |value|
    got = check.difference({"a": np.array([3.0]), "b": np.array([1e-6])}, {"a": np.array([2.0]), "b": np.array([2e-6])},
                           0.0)
    assert got == pytest.approx({"max_abs": 1.0, "scaled": 0.5, "rel": 0.5})
    assert check.difference(np.array([np.nan]), np.array([1.0]), 1.0)["scaled"] == math.inf
    with pytest.raises(ValueError, match="shapes"):
        check.difference(np.zeros(2), np.zeros(3), 1.0)


def test_full_grid_hours(check):
    # 8,400 clips x 6 s: 1,512,000 frames at 30 fps and 50,400 s of audio (worked by hand)
    assert check.grid_hours("frame", 1_512_000 / 3600) == pytest.approx(1.0)
    assert check.grid_hours("audio s", 50_400 / 7200) == pytest.approx(2.0)
    assert check.grid_hours("frame", None) is None


def test_every_carried_wheel_is_pinned_and_names_a_module_installed_here(check):
    pins = check.read_pins(ROOT / "constraints.txt")
    for dist, module in check.CARRIED.items():
        assert check.canonical(dist) in pins, dist
        assert importlib.util.find_spec(module) is not None, module
    assert "speechmos" in pins and set(check.DNSMOS_FILES) == {"dnsmos_sig_bak_ovr", "dnsmos_p808"}
    from hug_vis_dataset.weights import get_spec

    for name, member in check.DNSMOS_FILES.items():  # the files the registry reads from the speechmos package
        assert member == f"{get_spec(name).package}/{get_spec(name).package_path}"


def test_the_scripts_doctests(check):
    import doctest

    result = doctest.testmod(check, verbose=False)
    assert result.failed == 0 and result.attempted >= 4

"""Voice evaluate modules (offline loading, thin wrappers) and the Table 9 demo on the synthetic grid."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hug_vis_dataset.catalog import extras_of
from hug_vis_dataset.publish.release_info import requirements_lines
import soundfile as sf

from hug_vis_dataset.metrics import voice

REPO = Path(__file__).resolve().parents[1]
ESPEAK = shutil.which("espeak-ng")


def write_tone(path: Path, seconds: float, freq: float, noise: float, seed: int, rate: int = 16000) -> Path:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    x = 0.3 * np.sin(2 * np.pi * freq * t) * (1 + 0.5 * np.sin(2 * np.pi * 4 * t)) + noise * rng.standard_normal(t.size)
    sf.write(path, np.clip(x, -1, 1), rate, subtype="PCM_16")
    return path


def test_dnsmos_module_loads_offline_and_equals_speechmos(tmp_path):
    files = [write_tone(tmp_path / "a.wav", 4.6, 200, 0.01, 0), write_tone(tmp_path / "b.wav", 4.6, 320, 0.1, 1)]
    script = (
        "import json, sys, evaluate\n"
        f"m = evaluate.load({str(REPO / 'metrics' / 'dnsmos')!r})\n"
        f"s = evaluate.load({str(REPO / 'metrics' / 'dnsmos_sig')!r})\n"
        "out = m.compute(predictions=sys.argv[1:])\n"
        "out['dnsmos_sig'] = s.compute(predictions=sys.argv[1:])['dnsmos_sig']\n"
        "print(json.dumps({k: out[k] for k in ('dnsmos', 'dnsmos_sig', 'n_failed', 'per_clip')}))\n"
    )
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", HF_EVALUATE_OFFLINE="1")
    proc = subprocess.run([sys.executable, "-c", script, *map(str, files)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    import speechmos.dnsmos

    expected = [speechmos.dnsmos.run(str(f), sr=16000) for f in files]
    assert out["n_failed"] == 0
    for clip, ref in zip(out["per_clip"], expected):
        assert clip == pytest.approx(float(ref["ovrl_mos"]), abs=1e-5)
    assert out["dnsmos"] == pytest.approx(np.mean([float(r["ovrl_mos"]) for r in expected]), abs=1e-5)
    assert out["dnsmos_sig"] == pytest.approx(np.mean([float(r["sig_mos"]) for r in expected]), abs=1e-5)


def test_reference_free_modules_declare_one_column(tmp_path):
    import evaluate

    for name in ("dnsmos", "dnsmos_sig", "dnsmos_bak", "dnsmos_p808", "utmos"):
        module = evaluate.load(str(REPO / "metrics" / name))
        assert list(module.features) == ["predictions"]
    module = evaluate.load(str(REPO / "metrics" / "speaker_similarity"))
    assert sorted(module.features) == ["predictions", "references"]


def test_module_folders_are_complete():
    for name in ("dnsmos", "utmos", "speaker_similarity"):
        folder = REPO / "metrics" / name
        readme = (folder / "README.md").read_text(encoding="utf-8")
        front = readme.split("---")[1]
        for field in ("title:", "emoji:", "colorFrom:", "colorTo:", "sdk: gradio", "sdk_version: 6.31.0",
                      "app_file: app.py", "pinned: false", "- evaluate", "- metric", "description:"):
            assert field in front, (name, field)
        assert (folder / "requirements.txt").read_text().split() == requirements_lines("metric", extras_of([name]))
        # the shared Gradio 6 app (launched for real in tests/test_cleanroom.py), not evaluate's Gradio 3 widget
        assert (folder / "app.py").read_text() == "from hug_vis_dataset.space.metric_app import launch\n\nlaunch(__file__)\n"
        source = (folder / f"{name}.py").read_text()
        assert not re.search(r"^import \w+, ", source, re.M)  # evaluate scans one import per line


def test_speaker_similarity_module_counts_failures(tmp_path):
    import evaluate

    if ESPEAK is None:
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")
    a, b = tmp_path / "a.wav", tmp_path / "b.wav"
    subprocess.run([ESPEAK, "-v", "en+m3", "-p", "30", "-w", str(a), "Good morning to all of you."], check=True)
    subprocess.run([ESPEAK, "-v", "en+m3", "-p", "30", "-w", str(b), "I will see you all tomorrow."], check=True)
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros(16000), 16000)
    module = evaluate.load(str(REPO / "metrics" / "speaker_similarity"))
    out = module.compute(predictions=[str(a), str(silent)], references=[str(b), str(b)])
    expected = voice.speaker_similarity(a, b)
    assert out["per_clip"][0] == pytest.approx(expected, abs=1e-6)
    assert out["per_clip"][1] is None and out["n_failed"] == 1
    assert "NoSpeechError" in out["errors"][0]["error"] and out["errors"][0]["index"] == 1
    assert out["speaker_similarity"] == pytest.approx(expected, abs=1e-6)
    from hug_vis_dataset.modules import compute

    with pytest.raises(ValueError, match="2 predictions but 1 references"):
        compute("speaker_similarity", predictions=[str(a), str(b)], references=[str(b)])


def test_utmos_module_without_weights_raises(tmp_path, monkeypatch):
    import evaluate

    from hug_vis_dataset.weights import WeightsMissingError

    monkeypatch.delenv("HUGVIS_WEIGHT_UTMOS22_STRONG", raising=False)
    monkeypatch.delenv("HUGVIS_WEIGHTS_DIR", raising=False)
    monkeypatch.setenv("HUGVIS_CACHE_DIR", str(tmp_path / "cache"))
    module = evaluate.load(str(REPO / "metrics" / "utmos"))
    wav = write_tone(tmp_path / "a.wav", 1.0, 200, 0.0, 0)
    with pytest.raises(WeightsMissingError, match="hugvis weights download utmos22_strong"):
        module.compute(predictions=[str(wav)])


def test_dnsmos_door_keeps_input_order_and_counts_bad_files(tmp_path):
    from hug_vis_dataset.modules import compute

    good = write_tone(tmp_path / "good.wav", 4.6, 250, 0.02, 3)
    loud = tmp_path / "loud.wav"
    sf.write(loud, np.full(16000, 1.5), 16000, subtype="FLOAT")  # float WAV beyond full scale
    out = compute("dnsmos", predictions=[str(loud), str(good), str(tmp_path / "missing.wav")])
    assert out["n_failed"] == 2 and out["per_clip"][0] is None and out["per_clip"][2] is None
    assert "outside [-1, 1]" in out["errors"][0]["error"] and "missing.wav" in out["errors"][1]["error"]
    assert out["dnsmos"] == pytest.approx(voice.dnsmos(good)["dnsmos"])
    swapped = compute("dnsmos", predictions=[str(good), str(loud)])
    assert swapped["dnsmos"] == pytest.approx(out["dnsmos"]) and swapped["per_clip"][1] is None
    with pytest.raises(ValueError, match="no predictions"):
        compute("dnsmos", predictions=[])

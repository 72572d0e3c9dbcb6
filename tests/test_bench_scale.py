"""scripts/bench_scale.py: its helpers, its section choice and one cheap section end to end (no timing asserted)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench_scale.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_scale", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_scale"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_grid_units_of_the_full_grid(bench):
    # 8,400 clips x 6 s: 30 fps frames, 25 fps SyncNet windows, seconds of audio (worked by hand)
    assert bench.grid_units(8400, 6.0, 30.0) == {"frame": 1_512_000.0, "window": 1_260_000.0, "audio s": 50_400.0,
                                                 "clip": 8400.0}
    assert bench.grid_units(10, 2.5, 24.0) == {"frame": 600.0, "window": 625.0, "audio s": 25.0, "clip": 10.0}


def test_differences(bench):
    assert bench.max_abs([1.0, 2.0, 3.0], [1.0, 2.5, 2.0]) == 1.0
    assert bench.max_rel([1.0, 2.0, 3.0], [1.0, 2.5, 2.0]) == pytest.approx(0.5)
    assert bench.max_rel([0.0], [0.0]) == 0.0
    assert bench.value_check([1.0, 2.0], [1.0, 4.0]) == "max abs diff 2.0e+00, max rel diff 5.0e-01"


def test_rows_without_a_reference_have_no_ratio(bench):
    timing = bench.Timing(2.0, 4.0, None)
    with_ref = bench.Row("s", "m", "frame", "ref", bench.Timing(6.0, 12.0, None), "ours", timing, 0.0)
    assert (with_ref.wall_ratio, with_ref.cpu_ratio) == (3.0, 3.0)
    alone = bench.Row("s", "m", "frame", "", None, "ours", timing, float("nan"))
    assert np.isnan(alone.wall_ratio) and np.isnan(alone.cpu_ratio) and bench.ratio(alone.cpu_ratio).strip() == "-"


def test_every_network_metric_has_a_section(bench):
    assert [s.name for s in bench.SECTIONS] == ["frame_metrics", "lpips", "inception", "syncnet", "arcface", "utmos",
                                                "dnsmos", "speaker", "distill_mos", "cer"]


def test_speechlike_audio(bench):
    audio = bench.speechlike(1.5, seed=2)
    assert audio.dtype == np.float32 and audio.shape == (24000,) and np.abs(audio).max() <= 1.0
    spectrum = np.abs(np.fft.rfft(audio))
    peak_hz = np.argmax(spectrum[50:]) + 50  # 1.5 s: bins are 2/3 Hz; pitch wanders 130..170 Hz
    assert 130 / (2 / 3) <= peak_hz <= 170 / (2 / 3) + 1


def test_only_runs_the_chosen_section(tmp_path):
    repo = SCRIPT.parents[1]
    out = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--only", "arcface"], capture_output=True,
                         text=True, cwd=repo, timeout=300, env={"PYTHONPATH": str(repo), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr[-2000:]
    rows = [line.split()[0] for line in out.stdout.splitlines() if line.startswith(("arcface ", "lpips ", "frame_"))]
    assert rows == ["arcface", "arcface"]
    assert "GPU-hours: not measured (no GPU lent)" in out.stdout and "[arcface]" in out.stdout
    assert "[lpips]" not in out.stdout

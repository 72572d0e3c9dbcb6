"""The README's Python snippets, run as written, offline, against a small demo output.

The README says to run them from ``demo_out/`` after ``make demo``; here a small demo output is
built with the demo's own first steps (:func:`hug_vis_dataset.demo.build_front_doors`, one clip)
in a temporary ``demo_out/``, and the snippets run in a fresh interpreter there. Their printed
values are checked against an independent computation: the clip count from ``metadata/clips.csv``,
dtSSD worked from the PNG frames with the formula of RVM's script (x1e2, frame 0 recorded as 0,
averaged over frames), and the README's toy input by hand.
"""

from __future__ import annotations

import csv
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
TINY_GRID = dict(actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.4, size=(64, 36))


def python_section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Python\n")
    return text[start: text.index("\n## ", start + 1)]


def readme_snippets() -> str:
    """Every ```python block of the README's Python section, in order, as one program."""
    blocks = re.findall(r"```python\n(.*?)```", python_section(), re.S)
    assert blocks, "the README's Python section has no ```python block"
    return "\n".join(blocks)


def readme_folder() -> str:
    """The folder the README says to run the snippets from (``from `demo_out/```)."""
    match = re.search(r"from `([^`/]+)/`", python_section())
    assert match, "the README's Python section does not say which folder to run from"
    return match.group(1)


class CountingEndpoint:
    """A local 'Hub' that accepts connections, counts them and closes them: any network use shows."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self):
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory):
    from hug_vis_dataset.demo import build_front_doors

    root = tmp_path_factory.mktemp("readme") / readme_folder()
    build_front_doors(root, grid=TINY_GRID, progress=False)
    return root


def run_snippets(root: Path, tmp_path: Path, **env_extra: str) -> "tuple[subprocess.CompletedProcess, float]":
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HUGVIS_DATASET")}
    env.update(PYTHONPATH=str(REPO) + os.pathsep + env.get("PYTHONPATH", ""),
               HF_HOME=str(tmp_path / "hf_home"),  # an empty cache: nothing may come from an earlier run
               **env_extra)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", readme_snippets()], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)
    return proc, time.perf_counter() - start


def alpha_frames(folder: Path) -> np.ndarray:
    return np.stack([np.asarray(Image.open(f), dtype=np.float64) / 255.0 for f in sorted(folder.glob("*.png"))])


def expected_lines(root: Path) -> list[str]:
    """What the snippets print, computed without the evaluate module or the dataset repo."""
    with open(root / "release" / "metadata" / "clips.csv", newline="", encoding="utf-8") as handle:
        n_clips = sum(1 for _ in csv.DictReader(handle))
    clip = "actor_0001_happy_action_01_script_001"
    pred = alpha_frames(root / "release" / "simulated_systems" / "matting" / "matte_good" / clip)
    ref = alpha_frames(root / "release" / "alpha_matte" / "actor_0001" / "happy" / "action_01" / "script_001")
    # RVM's dtSSD: RMS of the temporal-derivative error x1e2; frame 0 counts as 0 in the frame average.
    per_frame = 100 * np.sqrt(((np.diff(pred, axis=0) - np.diff(ref, axis=0)) ** 2).mean(axis=(1, 2)))
    clip_dtssd = per_frame.sum() / len(pred)
    # The toy input: ref rises by 64/191 per frame everywhere, pred by half that.
    toy = [100 * 0.5 * 64 / 191] * 2
    return [n_clips, (clip_dtssd, 1), toy, n_clips]


def check_output(proc: subprocess.CompletedProcess, root: Path) -> None:
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    n_clips, (clip_dtssd, n_ok), toy, n_loaded = expected_lines(root)
    assert len(lines) == 4, proc.stdout
    assert int(lines[0]) == n_clips == 1
    value, ok = lines[1].split()
    assert float(value) == pytest.approx(clip_dtssd, rel=1e-9) and int(ok) == n_ok
    printed = [float(x) for x in re.findall(r"[-+0-9.e]+", lines[2])]
    assert printed == pytest.approx(toy, rel=1e-6)
    assert int(lines[3]) == n_loaded


def test_readme_names_the_demo_output_it_reads(demo_root):
    # The snippet's ids resolve to these folders, which the demo's first steps wrote.
    code = readme_snippets()
    assert 'load_dataset("hug-vis", "matting"' in code and (demo_root / "hug-vis" / "manifest.json").is_file()
    assert 'evaluate.load("hugvis/dtssd")' in code and (demo_root / "hugvis" / "dtssd" / "dtssd.py").is_file()


def test_readme_snippets_run_with_the_offline_flags(demo_root, tmp_path):
    proc, seconds = run_snippets(demo_root, tmp_path, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    print(f"README snippets with offline flags: {seconds:.1f} s")
    check_output(proc, demo_root)


def test_readme_snippets_run_without_flags_and_never_touch_the_network(demo_root, tmp_path):
    # No offline flag, and a 'Hub' that counts every connection: a library that asked the Hub
    # (and, on a machine without network, retried for ~23 s) would show up here.
    endpoint = CountingEndpoint()
    try:
        proc, seconds = run_snippets(demo_root, tmp_path, HF_ENDPOINT=endpoint.url)
    finally:
        endpoint.close()
    print(f"README snippets without offline flags: {seconds:.1f} s")
    check_output(proc, demo_root)
    assert endpoint.connections == 0
    assert "Retrying" not in proc.stderr and "thrown while requesting" not in proc.stderr


def test_readme_pictures_exist_and_are_made_from_the_demo_only(tmp_path):
    """The README's pictures are PNGs in docs/, and their script takes the demo's output or nothing
    (no stand-in grid that would make them show something else than ``make demo``)."""
    import importlib.util

    pictures = re.findall(r"!\[[^\]]*\]\((docs/[^)]+\.png)\)", README.read_text(encoding="utf-8"))
    assert sorted(pictures) == ["docs/leaderboard.png", "docs/viewer.png"]
    for picture in pictures:
        with Image.open(REPO / picture) as image:
            assert image.format == "PNG" and image.width >= 800 and image.height >= 200
    spec = importlib.util.spec_from_file_location("make_readme_pictures", REPO / "scripts" / "make_readme_pictures.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    why = script.demo_inputs(tmp_path)
    assert isinstance(why, str) and "run `make demo`" in why
    (tmp_path / "release" / "metadata").mkdir(parents=True)
    (tmp_path / "release" / "metadata" / "clips.csv").write_text("clip_id\n")
    assert "holds no matting results" in script.demo_inputs(tmp_path)
    (tmp_path / "results" / "matting").mkdir(parents=True)
    assert script.demo_inputs(tmp_path) == (tmp_path / "release", tmp_path / "results")

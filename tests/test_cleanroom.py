"""Clean room: build the release artifacts, publish the Spaces (dry run, wheel bundled) and install
each of two Spaces into its own fresh virtual environment from its requirements.txt alone, as the
Hub's build does: the metric Space `mad` and the explorer. Neither needs torch. Dependencies come
from the package index (pip as configured on the machine), with no constraints file: the Hub's
build has none either, so a new upstream release that breaks our ranges shows up here first.
Measured on this 2-core machine: 85 s when quiet (each install about 20 s: the pip cache and the
machine's local package index serve most wheels), up to about 3 minutes with other tests running.
"""

from __future__ import annotations

import email.parser
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest
from packaging.requirements import Requirement

from hug_vis_dataset import __version__, cli
from hug_vis_dataset import publish as pub
from hug_vis_dataset.media import write_alpha_pngs

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
METRIC_SPACE = "mad"

METRIC_DRIVER = """
import json, runpy, sys
import evaluate.utils
launched = []
evaluate.utils.launch_gradio_widget = launched.append  # the Space's app.py launches at import; record it
space, predictions, references = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
runpy.run_path(space + "/app.py", run_name="__main__")  # as the Space runs it: evaluate.load(<Space folder>)
(module,) = launched
import hug_vis_dataset
out = module.compute(predictions=predictions, references=references, protocol="clip")
print(json.dumps({"name": module.name, "library": hug_vis_dataset.__file__, "mad": out["mad"],
                  "per_clip": out["per_clip"]}))
"""

EXPLORER_DRIVER = """
import json, runpy, sys, tempfile
space = sys.argv[1]
namespace = runpy.run_path(space + "/app.py", run_name="app")  # imported, not run: it launches only as __main__
import gradio
import hug_vis_dataset
from hug_vis_dataset.space.app import Explorer, build_app
from hug_vis_dataset.synth import synthesize
work = tempfile.mkdtemp()
# A smaller synthetic release than the Space's default (no simulated systems): the Blocks are the same.
synthesize(work + "/release", actors=1, actions=1, scripts=1, seconds=0.2, size=(32, 18), systems=False)
explorer = Explorer(work + "/release", work_dir=work)
demo = build_app(explorer)
print(json.dumps({"launch": callable(namespace.get("launch")), "blocks": isinstance(demo, gradio.Blocks),
                  "tables": explorer.table_labels(), "library": hug_vis_dataset.__file__}))
"""


def _run(cmd, timings=None, label=None, **kwargs):
    start = time.perf_counter()
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    if timings is not None:
        timings[label] = round(time.perf_counter() - start, 1)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def timings():
    found: dict[str, float] = {}
    yield found
    print(f"\nclean-room timings (s): {found}")


@pytest.fixture(scope="module")
def dist(tmp_path_factory, timings):
    out = tmp_path_factory.mktemp("dist")
    # The sdist first, then the wheel built from the unpacked sdist: what the release workflow does.
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", out, REPO], timings, "build")
    wheel = out / f"hug_vis-{__version__}-py3-none-any.whl"
    sdist = out / f"hug_vis-{__version__}.tar.gz"
    assert sorted(p.name for p in out.iterdir()) == sorted([wheel.name, sdist.name])
    return wheel, sdist


def test_artifacts_are_complete_and_pass_twine(dist):
    wheel, sdist = dist
    _run([sys.executable, "-m", "twine", "check", "--strict", wheel, sdist])
    # Every file of the library's folder is in the wheel, byte for byte (paper tables data included).
    assert pub.wheel_mismatches(wheel) == []
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        meta = email.parser.Parser().parsestr(archive.read(f"hug_vis-{__version__}.dist-info/METADATA").decode())
        entry_points = archive.read(f"hug_vis-{__version__}.dist-info/entry_points.txt").decode()
    assert "hug_vis_dataset/data/paper_tables.json" in names
    assert not any(n.startswith(("tests/", "metrics/", "spaces/")) or "__pycache__" in n for n in names)
    assert (meta["Name"], meta["Version"]) == ("hug-vis", __version__)
    assert meta["Description-Content-Type"] == "text/markdown" and "# HUG-VIS toolkit" in meta.get_payload()
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    assert set(meta.get_all("Provides-Extra")) == set(cfg["options.extras_require"])
    requires = [Requirement(r) for r in meta.get_all("Requires-Dist")]
    hub = {r.name: str(r.specifier) for r in requires if r.marker and r.marker.evaluate({"extra": "hub"})}
    assert hub["evaluate"] == "==0.4.6"
    assert "hugvis = hug_vis_dataset.cli:main" in entry_points


def _fresh_venv(root: Path, requirements: Path, env: dict, timings: dict, label: str) -> tuple[Path, Path]:
    """A new venv (no system site-packages) with exactly ``requirements`` installed; ``(python, site-packages)``.

    No pip inside the venv: this checkout's pip installs into it (``--python``), which skips
    ensurepip and uses a current pip, as the Hub's build does. ``--no-compile`` only skips
    compiling the whole stack to .pyc up front.
    """
    _run([sys.executable, "-m", "venv", "--without-pip", root])
    python = root / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-compile", "-r", requirements],
         timings, f"install {label}", env=env, cwd=requirements.parent)
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env=env).strip())
    return python, site


def test_published_spaces_install_and_run_in_a_fresh_venv(dist, tmp_path, timings):
    wheel, _ = dist
    out = tmp_path / "publish"
    # The dry run as a maintainer runs it, except that the wheel URL is the Space folder on disk
    # instead of the Space repo on the Hub (no Hub here): the same bundled file either way.
    assert cli.main(["publish", "--dry-run", str(out), "--no-dataset", "--wheel", str(wheel),
                     "--wheel-url", "{folder}/{wheel}"]) == 0
    metric, explorer = out / "spaces" / METRIC_SPACE, out / "spaces" / "hug-vis-explorer"
    for space in (metric, explorer):
        assert _requirements(space / "requirements.txt")["hug-vis"].url == (space / wheel.name).as_uri()
        assert (space / wheel.name).read_bytes() == wheel.read_bytes()

    # .pyc files are written on first import; nothing of this checkout is on the path.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE")}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False",
               HF_HOME=str(tmp_path / "hf"), MPLCONFIGDIR=str(tmp_path / "mpl"))

    # --- metric Space: install from its requirements, load it through app.py, compute MAD.
    python, site = _fresh_venv(tmp_path / "venv-metric", metric / "requirements.txt", env, timings, "metric Space")
    rng = np.random.default_rng(7)
    clips = [(rng.integers(0, 256, (3, 6, 8)).astype(np.uint8), rng.integers(0, 256, (3, 6, 8)).astype(np.uint8)),
             (np.zeros((2, 6, 8), np.uint8), np.full((2, 6, 8), 255, np.uint8))]
    preds, refs = [], []
    for i, (pred, ref) in enumerate(clips):
        for paths, frames, name in ((preds, pred, f"p{i}"), (refs, ref, f"r{i}")):
            write_alpha_pngs(tmp_path / "clips" / name, [frames])
            paths.append(str(tmp_path / "clips" / name))
    driver = tmp_path / "metric_driver.py"
    driver.write_text(METRIC_DRIVER)
    result = json.loads(_run([python, driver, metric, json.dumps(preds), json.dumps(refs)], timings,
                             "metric Space run", env=env, cwd=tmp_path).strip().splitlines()[-1])
    # MAD x1e3 by hand: per frame the mean |p - r| of alphas k/255, per clip the mean over frames,
    # protocol "clip" the mean over clips. The second clip is all 0 vs all 1: exactly 1000.
    per_clip = [float(np.mean(np.abs(p.astype(np.float64) - r) / 255.0) * 1e3) for p, r in clips]
    assert per_clip[1] == 1000.0
    assert result["name"] == METRIC_SPACE
    assert result["library"].startswith(str(site))  # the installed wheel, not this checkout
    assert result["per_clip"] == pytest.approx(per_clip, rel=1e-6)
    assert result["mad"] == pytest.approx(np.mean(per_clip), rel=1e-6)
    assert _run([sys.executable, "-m", "pip", "--python", python, "check"], env=env).strip() == \
        "No broken requirements found."
    shutil.rmtree(tmp_path / "venv-metric")  # about 1 GB

    # --- explorer Space: a second fresh venv from its requirements; import app.py, build the Gradio Blocks.
    python, site = _fresh_venv(tmp_path / "venv-explorer", explorer / "requirements.txt", env, timings,
                               "explorer Space")
    driver = tmp_path / "explorer_driver.py"
    driver.write_text(EXPLORER_DRIVER)
    result = json.loads(_run([python, driver, explorer], timings, "explorer Space run", env=env,
                             cwd=tmp_path).strip().splitlines()[-1])
    paper = json.loads((REPO / "hug_vis_dataset" / "data" / "paper_tables.json").read_text())
    assert result["launch"] and result["blocks"]
    assert result["tables"] == [f"Table {t['table']}: {t['title']}" for t in paper["tables"]]  # package data shipped
    assert result["library"].startswith(str(site))
    assert _run([python.parent / "hugvis", "--version"], env=env).strip() == f"hug-vis {__version__}"
    assert _run([sys.executable, "-m", "pip", "--python", python, "check"], env=env).strip() == \
        "No broken requirements found."
    shutil.rmtree(tmp_path / "venv-explorer")


def _requirements(path: Path) -> dict[str, Requirement]:
    lines = [line.strip() for line in path.read_text().splitlines()]
    return {r.name: r for r in (Requirement(line) for line in lines if line and not line.startswith("#"))}

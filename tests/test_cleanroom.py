"""Clean room: build the release artifacts, publish the Spaces (dry run, wheel bundled) and run them
as the Hub does, from each Space's own files alone, in fresh virtual environments (no stub anywhere):

* three metric Spaces, a frame metric (`mad`, PNG-sequence zips), a voice metric (`dnsmos`, WAV) and an
  analysis (`variance_decomposition`, result rows), each installed as the Hub builds it (`gradio` at the
  card's `sdk_version`, then `requirements.txt`), started with `python app.py` on 127.0.0.1 and driven
  in headless Chromium: upload the bundled example, Compute, read the result table, compare with
  `evaluate.load(<folder>).compute(...)` on the same files;
* the explorer, installed the same way, its Gradio Blocks built.

Dependencies come from the package index (pip as configured on the machine), with no constraints file
(the Hub's build has none either, so a new upstream release that breaks our ranges shows up here first),
except the CPU torch wheel standing in for PyPI's CUDA build (see TORCH_STAND_IN).
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

import pytest
from packaging.requirements import Requirement

from hug_vis_dataset import __version__, cli
from hug_vis_dataset import publish as pub

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
# One Space per kind of upload: a frame metric (PNG-sequence zips), a voice metric (WAV), an analysis (rows CSV).
BROWSER_SPACES = ("mad", "dnsmos", "variance_decomposition")
# The voice Space's `audio` extra pulls torch (resemblyzer needs it). The Hub installs the CUDA build from PyPI;
# here the machine's local CPU wheel of the same major version stands in (192 MB instead of ~5 GB): no code of
# this Space calls torch on the DNSMOS path (onnxruntime).
TORCH_STAND_IN = "torch==2.13.0"

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


@pytest.fixture(scope="module")
def published(dist, tmp_path_factory):
    """``hugvis publish --dry-run OUT --wheel`` as a maintainer runs it, except that the wheel URL is
    the Space folder on disk instead of the Space repo on the Hub (no Hub here): the same file."""
    wheel, _ = dist
    out = tmp_path_factory.mktemp("publish") / "out"
    assert cli.main(["publish", "--dry-run", str(out), "--no-dataset", "--wheel", str(wheel),
                     "--wheel-url", "{folder}/{wheel}"]) == 0
    for space in (out / "spaces").iterdir():
        assert _requirements(space / "requirements.txt")["hug-vis"].url == (space / wheel.name).as_uri()
        assert (space / wheel.name).read_bytes() == wheel.read_bytes()
    return out


def _clean_env(tmp_path: Path) -> dict:
    # .pyc files are written on first import; nothing of this checkout is on the path.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE")}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", GRADIO_ANALYTICS_ENABLED="False",
               HF_HOME=str(tmp_path / "hf"), MPLCONFIGDIR=str(tmp_path / "mpl"))
    return env


def test_published_explorer_installs_and_builds_in_a_fresh_venv(published, tmp_path, timings):
    explorer = published / "spaces" / "hug-vis-explorer"
    env = _clean_env(tmp_path)
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


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _front_matter(readme: Path) -> dict:
    import yaml

    text = readme.read_text(encoding="utf-8")
    return yaml.safe_load(text[4:text.index("\n---", 4)])


def _wait_for(url: str, proc: subprocess.Popen, seconds: float = 120) -> None:
    import urllib.request

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"the Space exited with {proc.returncode}:\n{proc.stdout.read()[-4000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"the Space did not answer {url} within {seconds} s")


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason=f"Chromium is not installed at {CHROMIUM}")
def test_published_metric_spaces_launch_and_compute_on_uploads_in_a_browser(published, tmp_path, timings):
    """Each Space installed as the Hub builds it (gradio at the card's sdk_version, then its
    requirements.txt), started as the Hub starts it (`python app.py` with GRADIO_SERVER_NAME/PORT),
    driven in headless Chromium: upload the bundled example, press Compute, read the result table,
    compare it with `evaluate.load(<folder>).compute(...)` of this checkout on the same files."""
    import evaluate
    from playwright.sync_api import expect, sync_playwright

    from hug_vis_dataset.space.example_data import headline
    from hug_vis_dataset.space.metric_examples import example_inputs, example_names, needs_reference

    env = _clean_env(tmp_path)
    (tmp_path / "torch.txt").write_text(TORCH_STAND_IN + "\n")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        for name in BROWSER_SPACES:
            space = published / "spaces" / name
            front = _front_matter(space / "README.md")
            assert (front["sdk"], front["app_file"], front["python_version"]) == ("gradio", "app.py", "3.11")
            assert f"{sys.version_info.major}.{sys.version_info.minor}" == front["python_version"]
            venv = tmp_path / f"venv-{name}"
            _run([sys.executable, "-m", "venv", "--without-pip", venv])
            python = venv / "bin" / "python"
            _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-compile",
                  "-c", tmp_path / "torch.txt", f"gradio=={front['sdk_version']}", "-r", space / "requirements.txt"],
                 timings, f"install {name}", env=env, cwd=space)
            port = _free_port()
            start = time.perf_counter()
            proc = subprocess.Popen([python, "app.py"], cwd=space, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, env={**env, "GRADIO_SERVER_NAME": "127.0.0.1",
                                                    "GRADIO_SERVER_PORT": str(port)})
            try:
                url = f"http://127.0.0.1:{port}/"
                _wait_for(url, proc)
                timings[f"start {name}"] = round(time.perf_counter() - start, 1)
                page = browser.new_page()
                page.set_default_timeout(90_000)
                expect.set_options(timeout=90_000)
                page.goto(url)
                files = [space / "examples" / f for f in example_names(name)]
                page.locator("#prediction input[type=file]").set_input_files(str(files[0]))
                # uploaded: the field links the file it holds
                page.locator(f'#prediction a[href$="/{files[0].name}"]').wait_for()
                if needs_reference(name):
                    page.locator("#reference input[type=file]").set_input_files(str(files[1]))
                    page.locator(f'#reference a[href$="/{files[1].name}"]').wait_for()
                page.locator("#compute").click()
                cells = page.locator("#result tr[data-key] td.value")
                cells.first.wait_for()
                shown = dict(zip(page.locator("#result tr[data-key]").evaluate_all(
                    "rows => rows.map(r => r.dataset.key)"), cells.all_inner_texts()))
                page.close()
            finally:
                proc.terminate()
                log = proc.communicate(timeout=30)[0]
            assert "Traceback" not in log, log[-4000:]
            expected = evaluate.load(str(space)).compute(**example_inputs(space))
            if name == "variance_decomposition":
                assert (shown["metric"], shown["method"]) == ("mad", expected["method"])
                assert int(shown["n_rows"]) == expected["n_rows"] > 0
            else:
                assert float(shown[name]) == pytest.approx(expected[name], rel=1e-5)
                assert int(shown["n_ok"]) == expected["n_ok"] == 1
            # the card's recorded example output is this very computation
            assert json.loads((space / "examples" / "output.json").read_text()) == headline(name, expected)
            shutil.rmtree(venv)
        browser.close()

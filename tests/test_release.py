"""Release plumbing without building anything: the one version, the install texts of release_info,
the evaluate-module import guard, bundled wheels and the package-index check of `hugvis publish`
(the index is faked: an injected lookup or a local HTTP server)."""

from __future__ import annotations

import configparser
import http.server
import json
import sys
import threading
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from hug_vis_dataset import __version__, cli
from hug_vis_dataset.publish import release_info
from hug_vis_dataset import publish as pub

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "hug_vis_dataset"
WHEEL = f"hug_vis-{__version__}-py3-none-any.whl"


# --------------------------------------------------------------------------- one version
def test_version_is_written_once():
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    assert cfg["metadata"]["version"].strip() == "attr: hug_vis_dataset.__version__"
    # setuptools reads the attribute statically: it must stay a plain string literal.
    init = (PACKAGE / "__init__.py").read_text()
    assert f'__version__ = "{__version__}"' in init.splitlines()
    # The explorer's source requirements name the library unversioned; publish pins it.
    explorer = (REPO / "spaces" / "hug-vis-explorer" / "requirements.txt").read_text()
    assert __version__ not in explorer


# --------------------------------------------------------------------------- install texts
@pytest.mark.parametrize("extras,url,expected", [
    ((), None, "hug-vis=={v}"),
    (("space", "hub", "hub", " analysis "), None, "hug-vis[analysis,hub,space]=={v}"),
    (("hub",), "https://huggingface.co/spaces/o/m/resolve/main/" + WHEEL,
     "hug-vis[hub] @ https://huggingface.co/spaces/o/m/resolve/main/" + WHEEL),
])
def test_requirement_and_install_command(extras, url, expected):
    expected = expected.format(v=__version__)
    line = release_info.requirement(extras, url)
    assert line == expected
    parsed = Requirement(line)  # what pip will read
    assert parsed.name == "hug-vis"
    assert parsed.extras == {e.strip() for e in extras}
    assert (parsed.url, str(parsed.specifier)) == ((url, "") if url else (None, f"=={__version__}"))
    assert release_info.install_command(extras, url) == f'pip install "{expected}"'


def test_requirements_lines_per_space_kind():
    assert release_info.requirements_lines("metric") == [f"hug-vis[hub]=={__version__}"]
    assert release_info.requirements_lines("metric", ("torch", "video")) == [f"hug-vis[hub,torch,video]=={__version__}"]
    assert release_info.requirements_lines("explorer") == [f"hug-vis[analysis,hub,space]=={__version__}"]
    # Every extra a Space kind names exists in setup.cfg.
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    declared = set(cfg["options.extras_require"])
    assert {e for kind in release_info.SPACE_EXTRAS.values() for e in kind} <= declared
    with pytest.raises(ValueError, match="unknown Space kind"):
        release_info.requirements_lines("dataset")
    assert release_info.wheel_filename() == WHEEL


# --------------------------------------------------------------------------- import guard
def _guarded_module(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True)
    guard = release_info.import_guard(name, ["from hug_vis_dataset.publish.release_info import package_version"])
    (folder / f"{name}.py").write_text(f'''"""A module written the way the evaluate modules are."""

import datasets
import evaluate

{guard}


class {name.title()}(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(description="d", citation="c", inputs_description="i",
                                   features=datasets.Features({{"predictions": datasets.Value("int64"),
                                                               "references": datasets.Value("int64")}}))

    def _compute(self, predictions, references):
        return {{"version": package_version(), "equal": sum(p == r for p, r in zip(predictions, references))}}
''')
    return folder


def test_import_guard_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_MODULES_CACHE", str(tmp_path / "modules"))
    import evaluate

    folder = _guarded_module(tmp_path / "guarded", "guarded")
    # Without the library (None in sys.modules makes an import fail), the module says what to run.
    for name in [n for n in sys.modules if n.split(".")[0] == "hug_vis_dataset"]:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError) as caught:
        evaluate.load(str(folder))
    message = str(caught.value)
    assert message == (f"the HUG-VIS module 'guarded' needs the hug-vis library; install it with: "
                       f'pip install "hug-vis[hub]=={__version__}"')
    assert "\n" not in message
    monkeypatch.undo()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # With the library, the same folder loads and computes.
    module = evaluate.load(str(folder))
    assert module.compute(predictions=[1, 2, 3], references=[1, 0, 3]) == {"version": __version__, "equal": 2}


@pytest.mark.parametrize("bad", ["import a, b", "from hug_vis_dataset import a, b", "x = 1", ""])
def test_import_guard_wants_one_import_per_line(bad):
    with pytest.raises(ValueError):
        release_info.import_guard("m", [bad] if bad else [])


# --------------------------------------------------------------------------- wheels
def _zip_package(wheel: Path, package: Path, change: "dict[str, bytes | None]" = {}) -> Path:
    """A stand-in wheel: the package's files (as a wheel holds them), with some changed or dropped."""
    with zipfile.ZipFile(wheel, "w") as archive:
        for path in sorted(package.rglob("*")):
            rel = path.relative_to(package.parent).as_posix()
            if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
                continue
            data = change.get(rel, path.read_bytes())
            if data is not None:
                archive.writestr(rel, data)
        for rel, data in change.items():
            if data is not None and not (package.parent / rel).exists():
                archive.writestr(rel, data)
        archive.writestr(f"hug_vis-{__version__}.dist-info/METADATA", "Name: hug-vis\n")
    return wheel


def test_wheel_mismatches_against_the_source(tmp_path):
    package = tmp_path / "src" / "hug_vis_dataset"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("x = 1\n")
    (package / "data" / "t.json").write_text("{}")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "x.pyc").write_bytes(b"\0")  # never compared
    same = _zip_package(tmp_path / "a.whl", package)
    assert pub.wheel_mismatches(same, package) == []
    changed = _zip_package(tmp_path / "b.whl", package, {"hug_vis_dataset/__init__.py": b"x = 2\n",
                                                          "hug_vis_dataset/data/t.json": None,
                                                          "hug_vis_dataset/old.py": b""})
    assert pub.wheel_mismatches(changed, package) == [
        "hug_vis_dataset/__init__.py differs",
        "hug_vis_dataset/data/t.json is not in the wheel",
        "hug_vis_dataset/old.py is in the wheel only",
    ]


def test_check_wheel_refuses_foreign_or_stale_wheels(tmp_path):
    good = _zip_package(tmp_path / WHEEL, PACKAGE)
    assert pub.check_wheel(good) == good
    with pytest.raises(pub.PublishError, match="does not exist"):
        pub.check_wheel(tmp_path / "none" / WHEEL)
    other = tmp_path / "v" / f"hug_vis-{__version__}.1-py3-none-any.whl"
    other.parent.mkdir()
    _zip_package(other, PACKAGE)
    with pytest.raises(pub.PublishError, match=f"not hug-vis {__version__}"):
        pub.check_wheel(other)
    stale = tmp_path / "s" / WHEEL
    stale.parent.mkdir()
    _zip_package(stale, PACKAGE, {"hug_vis_dataset/datamodel/grid.py": b"# older\n"})
    with pytest.raises(pub.PublishError, match=r"not built from this code \(hug_vis_dataset/datamodel/grid.py differs\)"):
        pub.check_wheel(stale)


def _metric_source(root: Path, name: str, requirement: str, card_extra: str = "") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / f"{name}.py").write_text("x = 1\n")
    (folder / "app.py").write_text("x = 1\n")
    (folder / "README.md").write_text(f"---\ntitle: {name}\nsdk: gradio\nsdk_version: 6.31.0\n"
                                      f"python_version: \"3.11\"\napp_file: app.py\n---\n\n# {name}\n"
                                      f"{card_extra}")
    (folder / "requirements.txt").write_text(f"{requirement}\nevaluate==0.4.6\n")
    return folder


def test_materialise_bundles_the_wheel_and_points_every_text_at_it(tmp_path):
    wheel = _zip_package(tmp_path / WHEEL, PACKAGE)
    command = release_info.install_command(("hub", "video"))
    _metric_source(tmp_path / "metrics", "m1", "hug-vis[video]", f"\nInstall: `{command}`\n")
    _metric_source(tmp_path / "metrics", "m2", f"hug-vis=={__version__}")
    targets = pub.materialise(tmp_path / "out", metrics_root=tmp_path / "metrics", explorer_dir=tmp_path / "none",
                              include_dataset=False, wheel=wheel)
    assert [t.repo_id for t in targets] == ["hugvis/m1", "hugvis/m2"]
    url = f"https://huggingface.co/spaces/hugvis/m1/resolve/main/{WHEEL}"
    m1 = targets[0].folder
    assert (m1 / "requirements.txt").read_text() == f"hug-vis[hub,video] @ {url}\nevaluate==0.4.6\n"
    assert (m1 / WHEEL).read_bytes() == wheel.read_bytes()
    assert f'Install: `pip install "hug-vis[hub,video] @ {url}"`' in (m1 / "README.md").read_text()
    m2 = targets[1].folder
    assert (m2 / "requirements.txt").read_text().splitlines()[0] == \
        f"hug-vis[hub] @ https://huggingface.co/spaces/hugvis/m2/resolve/main/{WHEEL}"

    def no_lookup(name):
        raise AssertionError("a Space that carries its wheel needs no index")

    assert pub.check_installable(targets, index_versions=no_lookup) == []
    # A private Space's build cannot fetch the wheel from its own repo.
    problems = pub.check_installable(targets, index_versions=no_lookup, private=True)
    assert len(problems) == 1 and problems[0].startswith("a private Space cannot fetch its bundled wheel")
    assert problems[0].endswith("[2 Space(s): hugvis/m1, hugvis/m2]")
    # The wheel named by requirements.txt must be there.
    (m2 / WHEEL).unlink()
    assert pub.check_installable(targets[1:], index_versions=no_lookup) == [
        f"{m2 / 'requirements.txt'} names the wheel {WHEEL}, which is not in the Space folder [1 Space(s): hugvis/m2]"]


def test_materialise_pins_the_version_without_a_wheel(tmp_path):
    _metric_source(tmp_path / "metrics", "m1", "hug-vis[video]")
    _metric_source(tmp_path / "metrics", "m2", "hug-vis==0.0.1")  # stale: generated for another version
    with pytest.raises(pub.PublishError, match="m2/requirements.txt does not pin"):
        pub.materialise(tmp_path / "out", metrics_root=tmp_path / "metrics", explorer_dir=tmp_path / "none",
                        include_dataset=False)
    (tmp_path / "metrics" / "m2" / "requirements.txt").write_text("hug-vis\n")
    targets = pub.materialise(tmp_path / "out2", metrics_root=tmp_path / "metrics", explorer_dir=tmp_path / "none",
                              include_dataset=False)
    assert [(t.folder / "requirements.txt").read_text() for t in targets] == [
        f"hug-vis[hub,video]=={__version__}\nevaluate==0.4.6\n", f"hug-vis[hub]=={__version__}\n"]


# --------------------------------------------------------------------------- package index
def _pinned_targets(tmp_path, names=("a", "b", "c", "d")):
    targets = []
    for name in names:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "requirements.txt").write_text(f"hug-vis[hub]=={__version__}\n")
        targets.append(pub.RepoTarget(f"o/{name}", "space", folder, "gradio"))
    targets.append(pub.RepoTarget("o/data", "dataset", tmp_path / "no-such-folder"))  # datasets are not checked
    return targets


def test_check_installable_asks_the_index_once_and_fails_closed(tmp_path):
    targets = _pinned_targets(tmp_path)
    calls = []

    def released(name):
        calls.append(name)
        return {"0.0.1", __version__}

    assert pub.check_installable(targets, index_versions=released) == []
    assert calls == ["hug-vis"]
    problems = pub.check_installable(targets, index_versions=lambda name: {"0.0.1"})
    assert problems == [
        f"hug-vis=={__version__} is not on the package index, so these Spaces could not build; release it first "
        f"(docs/RELEASING.md) or bundle the wheel: hugvis publish --wheel dist/{WHEEL} "
        "[4 Space(s): o/a, o/b, o/c, ...]"]

    def offline(name):
        raise pub.IndexLookupError("cannot read https://pypi.org/pypi/hug-vis/json: timed out")

    (problem,) = pub.check_installable(targets, index_versions=offline)
    assert problem.startswith(f"cannot confirm that hug-vis=={__version__} is on the package index "
                              "(cannot read https://pypi.org/pypi/hug-vis/json: timed out); refusing")


class _Index(http.server.BaseHTTPRequestHandler):
    """A package index's JSON API: hug-vis has one live and one yanked release; 'gone' does not exist."""

    def do_GET(self):  # noqa: N802 (http.server's name)
        if self.path == "/hug-vis/json":
            body = {"releases": {"0.1.0": [{"yanked": False}], "0.0.9": [{"yanked": True}], "0.0.1": []}}
        elif self.path == "/broken/json":
            body = {"info": {}}
        elif self.path == "/slow/json":
            threading.Event().wait(1.0)  # longer than the client's timeout; then hang up without answering
            return
        else:
            self.send_error(404 if self.path == "/gone/json" else 503)
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture()
def index_url():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/{{name}}/json"
    server.shutdown()
    server.server_close()


def test_pypi_versions_reads_the_json_api(index_url):
    assert pub.pypi_versions("hug-vis", url_template=index_url) == {"0.1.0"}  # yanked and empty releases dropped
    assert pub.pypi_versions("gone", url_template=index_url) == set()  # unknown distribution: not released
    with pytest.raises(pub.IndexLookupError, match="answered HTTP 503"):
        pub.pypi_versions("down", url_template=index_url)
    with pytest.raises(pub.IndexLookupError, match="did not list releases"):
        pub.pypi_versions("broken", url_template=index_url)
    with pytest.raises(pub.IndexLookupError, match="cannot read"):
        pub.pypi_versions("slow", url_template=index_url, timeout=0.3)


def test_cli_refuses_in_one_line_and_uploads_nothing(tmp_path, monkeypatch, capsys):
    _metric_source(tmp_path / "metrics", "m1", "hug-vis")
    monkeypatch.setattr(pub, "metric_module_dirs", lambda root: sorted((tmp_path / "metrics").iterdir()))
    uploads = []
    monkeypatch.setattr(pub, "publish", lambda targets, **kw: uploads.append([t.repo_id for t in targets]))
    monkeypatch.setattr(pub, "require_reachable", lambda hub_id, alternative: None)  # the faked Hub answers
    monkeypatch.setattr(pub, "pypi_versions", lambda name: set())
    assert cli.main(["publish", "--no-dataset"]) == 2
    err = capsys.readouterr().err
    # One line per problem, then the count line (issue 35: every problem in one pass).
    assert err.count("\n") == 2 and err.startswith(f"hugvis publish: hug-vis=={__version__} is not on the package index")
    assert err.splitlines()[1] == "hugvis publish: not fit to publish: 1 problem(s); fix each one above and run again"
    assert uploads == []

    monkeypatch.setattr(pub, "pypi_versions", lambda name: {__version__})
    assert cli.main(["publish", "--no-dataset"]) == 0
    assert uploads == [["hugvis/m1", "hugvis/hug-vis-explorer"]]

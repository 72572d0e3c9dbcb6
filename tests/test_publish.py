"""hugvis publish: the dry-run materialisation loads offline as users will load it, cards validate,
and uploads are idempotent (tested against a fake HfApi)."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from hug_vis_dataset import __version__
from hug_vis_dataset import publish as pub

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def materialised(tmp_path_factory):
    out = tmp_path_factory.mktemp("publish") / "out"
    return out, pub.materialise(out)


def test_targets_cover_dataset_metric_spaces_and_explorer(materialised):
    out, targets = materialised
    ids = {t.repo_id: t for t in targets}
    assert ids["hugvis/hug-vis"].repo_type == "dataset"
    assert ids["hugvis/hug-vis-explorer"].repo_type == "space"
    modules = [p.name for p in pub.metric_module_dirs()]
    assert modules and all(ids[f"hugvis/{m}"].repo_type == "space" for m in modules)
    assert len(targets) == len(modules) + 2
    for target in targets:
        assert pub.validate_card(target.folder, target.repo_type) == []
        if target.repo_type == "space":
            assert pub.check_requirements(target.folder) == []
    # The dataset card is gated, and the Space folders are byte copies of the sources, except the library
    # line of requirements.txt, written from the version with the Space kind's extras.
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(ids["hugvis/hug-vis"].folder / "README.md")
    assert card.data.to_dict()["extra_gated_prompt"]
    for name in modules:
        for rel in pub.local_files(REPO / "metrics" / name):
            published = (out / "spaces" / name / rel).read_bytes().decode("utf-8", "surrogateescape")
            source = (REPO / "metrics" / name / rel).read_bytes().decode("utf-8", "surrogateescape")
            if rel == "requirements.txt":
                # the library line carries the metric's own extras from the catalog, plus the kind's (hub)
                from hug_vis_dataset.catalog import extras_of
                from hug_vis_dataset.publish.release_info import requirements_lines

                first, *rest = source.splitlines()
                assert published.splitlines() == [*requirements_lines("metric", extras_of([name])), *rest]
                assert first == published.splitlines()[0] and f"=={__version__}" in first
            else:
                assert published == source
    explorer = (out / "spaces" / "hug-vis-explorer" / "requirements.txt").read_text().splitlines()
    assert explorer[0] == f"hug-vis[analysis,hub,space]=={__version__}"


def test_dataset_loads_offline_for_every_config(materialised, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    import datasets
    from huggingface_hub import DatasetCard

    out, targets = materialised
    folder = next(t.folder for t in targets if t.repo_type == "dataset")
    configs = [c["config_name"] for c in DatasetCard.load(folder / "README.md").data.to_dict()["configs"]]
    assert configs
    for config in configs:
        ds = datasets.load_dataset(str(folder), config, split="test", cache_dir=str(tmp_path / "cache"))
        assert len(ds) == 7  # one clip per emotion in the dry-run release
        assert "clip_id" in ds.column_names


def test_every_metric_space_loads_offline_with_evaluate(materialised, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import evaluate

    out, targets = materialised
    for target in targets:
        if target.repo_type == "space" and target.repo_id != "hugvis/hug-vis-explorer":
            module = evaluate.load(str(target.folder))
            assert module.name == target.folder.name
            assert module.info.features is not None


GRADIO_FRONT = '---\ntitle: {title}\nsdk: gradio\nsdk_version: 6.31.0\npython_version: "3.11"\napp_file: app.py\n---\n'


def test_card_validation_reports_problems(tmp_path):
    space = tmp_path / "space"
    space.mkdir()
    (space / "README.md").write_text("---\ntitle: x\nsdk: gradio\napp_file: app.py\n---\n\n# x\n")
    problems = pub.validate_card(space, "space")
    assert any("app_file 'app.py' does not exist" in p for p in problems)
    # what the Hub builds from the front matter: the Gradio the apps are written for, on the measured Python
    assert any("sdk_version None is not the Gradio the apps are written for (6.31.0)" in p for p in problems)
    assert any("python_version None is not '3.11'" in p for p in problems)
    (space / "README.md").write_text(GRADIO_FRONT.format(title="x") + "\n# x\n")
    (space / "app.py").write_text("print(1)\n")
    assert pub.validate_card(space, "space") == []
    (space / "README.md").write_text("---\ntitle: x\nsdk: flask\n---\n\n# x\n")
    assert any("sdk 'flask'" in p for p in pub.validate_card(space, "space"))
    (space / "README.md").write_text("---\ntitle: [unclosed\n---\n\n# x\n")
    assert any("does not parse" in p for p in pub.validate_card(space, "space"))
    data = tmp_path / "data"
    data.mkdir()
    (data / "README.md").write_text(
        "---\nconfigs:\n- config_name: a\n  data_files:\n  - split: test\n    path: a/*.parquet\n---\n\n# d\n")
    problems = pub.validate_card(data, "dataset")
    assert any("matches no file" in p for p in problems) and any("not gated" in p for p in problems)
    (data / "a").mkdir()
    (data / "a" / "x.parquet").write_bytes(b"")
    assert pub.ensure_gated(data / "README.md") is True
    assert pub.ensure_gated(data / "README.md") is False  # idempotent
    assert pub.validate_card(data, "dataset") == []


@pytest.mark.parametrize("text,ok", [
    ("hug-vis=={v}\n", True), ("hug_vis[space]=={v}  # pinned\n", True), ("Hug-Vis == {v}\n", True),
    ("# comment\nevaluate==0.4.6\nhug-vis=={v}\n", True),
    ("hug-vis>={v}\n", False), ("hug-vis=={v}.1\n", False), ("evaluate==0.4.6\n", False), ("hug-vis\n", False),
    ("hug-vis ==\n", False),
])
def test_requirements_pin(tmp_path, text, ok):
    # The pin is whatever hug_vis_dataset.__version__ says (the one place the version is written).
    (tmp_path / "requirements.txt").write_text(text.format(v=__version__))
    assert (pub.check_requirements(tmp_path) == []) is ok


def test_git_blob_id_matches_git(tmp_path):
    for data in (b"", b"hello\n", bytes(range(256)) * 4000):
        path = tmp_path / "f.bin"
        path.write_bytes(data)
        expected = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True,
                                  check=True).stdout.strip()
        assert pub.git_blob_id(data) == expected
        assert pub.file_digests(path, chunk=1000) == (expected, hashlib.sha256(data).hexdigest())


class FakeHfApi:
    """Enough of HfApi for publish: repos as dicts of path -> bytes; big files reported as LFS."""

    LFS_OVER = 1000

    def __init__(self):
        self.repos: dict[tuple[str, str], dict[str, bytes]] = {}
        self.commits: list[tuple[str, list[str]]] = []
        self.tokens: set = set()

    def create_repo(self, repo_id, repo_type=None, exist_ok=False, private=None, token=None, space_sdk=None):
        key = (repo_type, repo_id)
        if key in self.repos and not exist_ok:
            raise RuntimeError("exists")
        if repo_type == "space":
            assert space_sdk == "gradio"
        self.tokens.add(token)
        self.repos.setdefault(key, {".gitattributes": b"*.parquet filter=lfs\n"})

    def list_repo_tree(self, repo_id, recursive=False, repo_type=None, token=None):
        from huggingface_hub.hf_api import RepoFile

        for path, data in sorted(self.repos[(repo_type, repo_id)].items()):
            lfs = None
            if len(data) > self.LFS_OVER:
                lfs = {"size": len(data), "oid": hashlib.sha256(data).hexdigest(), "pointerSize": 130}
            # An LFS file's blob id is the pointer's, never the content's: comparison must use sha256.
            oid = pub.git_blob_id(b"pointer " + data[:10]) if lfs else pub.git_blob_id(data)
            yield RepoFile(path=path, size=len(data), oid=oid, lfs=lfs)

    def create_commit(self, repo_id, operations, repo_type=None, token=None, commit_message=""):
        files = self.repos[(repo_type, repo_id)]
        for op in operations:
            files[op.path_in_repo] = Path(op.path_or_fileobj).read_bytes()
        self.commits.append((repo_id, sorted(op.path_in_repo for op in operations)))


def _targets(tmp_path):
    space = tmp_path / "space"
    (space / "sub").mkdir(parents=True)
    (space / "app.py").write_text("print('hi')\n")
    (space / "sub" / "big.parquet").write_bytes(bytes(range(256)) * 20)
    data = tmp_path / "data"
    data.mkdir()
    (data / "README.md").write_text("card\n")
    return [pub.RepoTarget("org/space", "space", space, "gradio"), pub.RepoTarget("org/data", "dataset", data)]


def test_publish_is_idempotent_and_sends_only_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token_value")
    api = FakeHfApi()
    lines: list[str] = []
    targets = _targets(tmp_path)
    plans = pub.publish(targets, api=api, log=lines.append)
    assert api.commits == [("org/space", ["app.py", "sub/big.parquet"]), ("org/data", ["README.md"])]
    assert [p.changed for p in plans] == [["app.py", "sub/big.parquet"], ["README.md"]]
    assert api.tokens == {"hf_secret_token_value"}  # the token reaches the API ...
    assert not any("hf_secret" in line for line in lines)  # ... and is never printed

    # Second publish: nothing changed, nothing sent.
    plans = pub.publish(targets, api=api, log=lines.append)
    assert len(api.commits) == 2
    assert [p.changed for p in plans] == [[], []]
    assert [sorted(p.unchanged) for p in plans] == [["app.py", "sub/big.parquet"], ["README.md"]]

    # Change one byte of the LFS file and add a file: exactly those two go.
    big = targets[0].folder / "sub" / "big.parquet"
    data = bytearray(big.read_bytes())
    data[-1] ^= 1
    big.write_bytes(bytes(data))
    (targets[0].folder / "new.txt").write_text("n\n")
    pub.publish(targets, api=api, log=lines.append)
    assert api.commits[2:] == [("org/space", ["new.txt", "sub/big.parquet"])]
    # A file that exists only on the Hub is reported, never deleted.
    api.repos[("dataset", "org/data")]["old.csv"] = b"x"
    plans = pub.publish(targets, api=api, log=lines.append)
    assert plans[1].remote_only == ["old.csv"] and len(api.commits) == 3


def test_materialise_refuses_unfit_folders(tmp_path):
    metrics = tmp_path / "metrics" / "m1"
    metrics.mkdir(parents=True)
    (metrics / "m1.py").write_text("x = 1\n")
    (metrics / "app.py").write_text("x = 1\n")
    (metrics / "README.md").write_text(GRADIO_FRONT.format(title="m1") + "\n# m1\n")
    (metrics / "requirements.txt").write_text("hug-vis>=0.1\n")
    with pytest.raises(pub.PublishError, match=f"does not pin hug-vis=={__version__}"):
        pub.materialise(tmp_path / "out", metrics_root=tmp_path / "metrics", explorer_dir=tmp_path / "none",
                        include_dataset=False)
    (metrics / "requirements.txt").write_text(f"hug-vis=={__version__}\n")
    targets = pub.materialise(tmp_path / "out2", metrics_root=tmp_path / "metrics", explorer_dir=tmp_path / "none",
                              include_dataset=False)
    assert [t.repo_id for t in targets] == ["hugvis/m1"]
    with pytest.raises(pub.PublishError, match="not empty"):
        pub.materialise(tmp_path / "out2", metrics_root=tmp_path / "metrics", include_dataset=False)

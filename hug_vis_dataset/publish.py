"""Publish everything to the Hugging Face Hub: the dataset repo, one Space per evaluate module
and the explorer Space.

:func:`materialise` writes each repository exactly as it will be uploaded into one folder per
repo (``OUT/datasets/<name>``, ``OUT/spaces/<name>``); :func:`publish` uploads them. Uploads are
idempotent: each local file's git blob id (and, for LFS files, its sha256) is compared with what
:meth:`HfApi.list_repo_tree` reports, and only new or changed files are committed, as explicit
``CommitOperationAdd`` operations (no glob patterns, so odd file names cannot widen a commit).

The token comes from ``HF_TOKEN`` or the stored Hugging Face login; it is passed to
``huggingface_hub`` and never printed or written.

Example:
    >>> git_blob_id(b"hello\\n")  # same as `printf 'hello\\n' | git hash-object --stdin`
    'ce013625030ba8dba906f756967f9e9ca394464a'
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

PACKAGE_PIN = "hug-vis==0.1.0"
REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ORG = "hugvis"
DEFAULT_DATASET_REPO = "hugvis/hug-vis"
EXPLORER_NAME = "hug-vis-explorer"
SPACE_SDKS = ("gradio", "streamlit", "docker", "static")
# Written by git/the Hub itself; never uploaded from a local folder.
SKIP_NAMES = frozenset({".git", "__pycache__", ".cache", ".gitattributes", ".build_state"})
GATED_FIELDS = {
    "extra_gated_prompt": (
        "HUG-VIS contains recordings of real actors. You agree to use it for non-commercial research only, "
        "not to identify, contact or impersonate the actors, and not to redistribute the media."),
    "extra_gated_fields": {"Name": "text", "Affiliation": "text", "I agree to the terms above": "checkbox"},
}


@dataclass(frozen=True)
class RepoTarget:
    """One repository to publish: its Hub id, type and the local folder holding its files."""

    repo_id: str
    repo_type: str  # "dataset" or "space"
    folder: Path
    space_sdk: "str | None" = None


@dataclass
class UploadPlan:
    """Files of one target split by whether the Hub already holds identical bytes."""

    target: RepoTarget
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    remote_only: list[str] = field(default_factory=list)


class PublishError(RuntimeError):
    """A folder is not fit to publish (bad card, missing file, unpinned requirements)."""


# --------------------------------------------------------------------------- hashing
def git_blob_id(data: bytes) -> str:
    """The git object id of a blob, which the Hub reports as ``RepoFile.blob_id`` for every file."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def file_digests(path: "str | Path", chunk: int = 1 << 20) -> tuple[str, str]:
    """``(git blob id, sha256)`` of a file, read in chunks (Parquet shards can be large).

    Example:
        >>> import tempfile
        >>> p = tempfile.mktemp(); _ = open(p, "wb").write(b"")
        >>> file_digests(p)[0]
        'e69de29bb2d1d6434b8b29ae775ad8c2e48c5391'
    """
    path = Path(path)
    sha1 = hashlib.sha1(b"blob %d\0" % path.stat().st_size)
    sha256 = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            sha1.update(block)
            sha256.update(block)
    return sha1.hexdigest(), sha256.hexdigest()


def local_files(folder: "str | Path") -> list[str]:
    """Every uploadable file of a folder, POSIX-relative, sorted; symlinks are refused."""
    folder = Path(folder)
    out = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part in SKIP_NAMES for part in rel.parts):
            continue
        if path.is_symlink():
            raise PublishError(f"{path} is a symbolic link; materialise real files only")
        if path.is_file():
            out.append(rel.as_posix())
    return out


# --------------------------------------------------------------------------- cards
def _split_front_matter(text: str) -> tuple[dict, str]:
    import yaml

    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 4)
    if end < 0:
        raise PublishError("README front matter is not closed by '---'")
    data = yaml.safe_load(text[4:end]) or {}
    return data, text[end + 4:].lstrip("\n")


def validate_card(folder: "str | Path", repo_type: str) -> list[str]:
    """Offline checks of a repo card with huggingface_hub's card classes; returns the problems found.

    ``RepoCard.validate`` posts to the Hub, so offline we parse the card with the class of its repo
    type (``DatasetCard`` / ``SpaceCard``), which raises on malformed YAML, and check what the Hub
    would reject: a Space needs a known ``sdk`` and an existing ``app_file``; a dataset's
    ``configs`` must point at files that exist; the dataset card must be gated.
    """
    from huggingface_hub import DatasetCard, SpaceCard

    folder = Path(folder)
    readme = folder / "README.md"
    if not readme.is_file():
        return [f"{folder}: no README.md card"]
    cls = {"dataset": DatasetCard, "space": SpaceCard}[repo_type]
    try:
        card = cls.load(readme)
    except Exception as err:  # malformed YAML or metadata: report, do not crash the whole publish
        return [f"{readme}: card does not parse: {err}"]
    data = card.data.to_dict()
    problems = []
    if not card.text.strip():
        problems.append(f"{readme}: card has no text below the YAML")
    if repo_type == "space":
        if data.get("sdk") not in SPACE_SDKS:
            problems.append(f"{readme}: sdk {data.get('sdk')!r} is not one of {SPACE_SDKS}")
        app_file = data.get("app_file") or "app.py"
        if data.get("sdk") in ("gradio", "streamlit") and not (folder / app_file).is_file():
            problems.append(f"{readme}: app_file {app_file!r} does not exist")
        if not data.get("title"):
            problems.append(f"{readme}: no title")
    else:
        configs = data.get("configs") or []
        if not configs:
            problems.append(f"{readme}: no configs listed")
        for config in configs:
            files = config.get("data_files") or []
            files = files if isinstance(files, list) else [files]
            for spec in files:
                paths = spec.get("path") if isinstance(spec, dict) else spec
                for pattern in (paths if isinstance(paths, list) else [paths]):
                    if not list(folder.glob(str(pattern))):
                        problems.append(f"{readme}: config {config.get('config_name')!r} data_files "
                                        f"{pattern!r} matches no file")
        if not data.get("extra_gated_prompt"):
            problems.append(f"{readme}: the dataset card is not gated (no extra_gated_prompt)")
    return problems


def ensure_gated(readme: "str | Path") -> bool:
    """Add the gating fields to a dataset card that lacks them; returns whether the card changed."""
    import yaml

    readme = Path(readme)
    data, body = _split_front_matter(readme.read_text(encoding="utf-8"))
    if data.get("extra_gated_prompt"):
        return False
    data.update(GATED_FIELDS)
    front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    readme.write_text(f"---\n{front}---\n\n{body}", encoding="utf-8")
    return True


def check_requirements(folder: "str | Path") -> list[str]:
    """A Space's ``requirements.txt`` must pin our released package exactly (``hug-vis==0.1.0``, extras allowed).

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "requirements.txt").write_text("hug_vis[space]==0.1.0\\n")
        >>> check_requirements(d)
        []
        >>> _ = (d / "requirements.txt").write_text("hug-vis>=0.1\\n"); len(check_requirements(d))
        1
    """
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    req = Path(folder) / "requirements.txt"
    if not req.is_file():
        return [f"{req} is missing"]
    name, version = PACKAGE_PIN.split("==")
    for line in req.read_text(encoding="utf-8").splitlines():
        line = line.split("#")[0].strip()
        if not line or line.startswith("-"):
            continue
        try:
            parsed = Requirement(line)
        except InvalidRequirement as err:
            return [f"{req}: bad line {line!r}: {err}"]
        if canonicalize_name(parsed.name) == name and str(parsed.specifier) == f"=={version}":
            return []
    return [f"{req} does not pin {PACKAGE_PIN}"]


# --------------------------------------------------------------------------- materialise
def metric_module_dirs(metrics_root: "str | Path" = REPO_ROOT / "metrics") -> list[Path]:
    """``metrics/<name>/`` folders that hold an evaluate module ``<name>.py``."""
    root = Path(metrics_root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and (p / f"{p.name}.py").is_file())


def _copy_tree(source: Path, dest: Path) -> None:
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(*SKIP_NAMES, "*.pyc"), symlinks=False)


def materialise(
    out_dir: "str | Path",
    org: str = DEFAULT_ORG,
    dataset_repo: str = DEFAULT_DATASET_REPO,
    dataset_dir: "str | Path | None" = None,
    release: "str | Path | None" = None,
    metrics_root: "str | Path" = REPO_ROOT / "metrics",
    explorer_dir: "str | Path" = REPO_ROOT / "spaces" / EXPLORER_NAME,
    include_dataset: bool = True,
) -> list[RepoTarget]:
    """Write every repository to publish under ``out_dir``; returns the targets, checked.

    Args:
        out_dir: output folder (must be empty or absent).
        org: Hub organisation of the Spaces.
        dataset_repo: Hub id of the dataset.
        dataset_dir: an already built dataset repo folder to copy; otherwise it is built from
            ``release`` with :func:`hug_vis_dataset.hub.builder.build_repo`, and with neither,
            from a small synthetic release (what a dry run shows without the gated data).
        metrics_root: folder of the evaluate modules.
        explorer_dir: the explorer Space's folder.
        include_dataset: skip the dataset (publish Spaces only).

    Raises:
        PublishError: listing every problem (cards, missing files, unpinned requirements).
    """
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise PublishError(f"{out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    targets: list[RepoTarget] = []
    if include_dataset:
        dest = out / "datasets" / dataset_repo.split("/")[-1]
        if dataset_dir is not None:
            _copy_tree(Path(dataset_dir), dest)
        else:
            _build_dataset(dest, release)
        ensure_gated(dest / "README.md")
        targets.append(RepoTarget(dataset_repo, "dataset", dest))
    for module in metric_module_dirs(metrics_root):
        dest = out / "spaces" / module.name
        _copy_tree(module, dest)
        targets.append(RepoTarget(f"{org}/{module.name}", "space", dest, "gradio"))
    explorer = Path(explorer_dir)
    if explorer.is_dir():
        dest = out / "spaces" / EXPLORER_NAME
        _copy_tree(explorer, dest)
        targets.append(RepoTarget(f"{org}/{EXPLORER_NAME}", "space", dest, "gradio"))
    problems = []
    for target in targets:
        problems += validate_card(target.folder, target.repo_type)
        if target.repo_type == "space":
            problems += check_requirements(target.folder)
    if problems:
        raise PublishError("not fit to publish:\n  " + "\n  ".join(problems))
    return targets


def _build_dataset(dest: Path, release: "str | Path | None") -> None:
    from .hub.builder import build_repo

    if release is not None:
        build_repo(release, dest)
        return
    from .synth import synthesize
    from .validate import GridSpec

    with tempfile.TemporaryDirectory(prefix="hugvis-publish-") as tmp:
        # One clip per emotion: enough for every config to load, small enough for a dry run.
        synthesize(Path(tmp) / "release", actors=1, emotions=None, actions=1, scripts=1, seconds=0.5,
                   size=(64, 36), systems=False)
        build_repo(Path(tmp) / "release", dest, grid=GridSpec(actors=(1,), actions=(1,), scripts=(1,)))


# --------------------------------------------------------------------------- upload
def plan_upload(api: Any, target: RepoTarget, token: "str | bool | None" = None) -> UploadPlan:
    """Compare local files with the remote tree; the remote tree of a new repo is empty."""
    remote: dict[str, Any] = {}
    for entry in api.list_repo_tree(target.repo_id, recursive=True, repo_type=target.repo_type, token=token):
        if hasattr(entry, "blob_id"):  # RepoFile (folders have no blob id)
            remote[entry.path] = entry
    plan = UploadPlan(target)
    files = local_files(target.folder)
    for rel in files:
        entry = remote.get(rel)
        if entry is None:
            plan.changed.append(rel)
            continue
        blob, sha256 = file_digests(target.folder / rel)
        lfs = getattr(entry, "lfs", None)
        same = (lfs is not None and lfs.sha256 == sha256) or (lfs is None and entry.blob_id == blob)
        (plan.unchanged if same else plan.changed).append(rel)
    plan.remote_only = sorted(set(remote) - set(files) - {".gitattributes"})
    return plan


def publish(targets: Iterable[RepoTarget], api: Any = None, token: "str | None" = None,
            private: bool = False, log=print) -> list[UploadPlan]:
    """Create the repos (if needed) and commit only the files whose bytes differ from the Hub's.

    Args:
        targets: from :func:`materialise`.
        api: an ``HfApi`` (tests pass a fake); default ``HfApi()``.
        token: default ``HF_TOKEN`` from the environment, else the stored login (``None``).
        private: create new repos private.
        log: where progress lines go (never the token).
    """
    from huggingface_hub import CommitOperationAdd, HfApi

    api = api or HfApi()
    token = token or os.environ.get("HF_TOKEN") or None
    plans = []
    for target in targets:
        kwargs = {"space_sdk": target.space_sdk} if target.repo_type == "space" else {}
        api.create_repo(target.repo_id, repo_type=target.repo_type, exist_ok=True, private=private, token=token,
                        **kwargs)
        plan = plan_upload(api, target, token)
        if plan.changed:
            operations = [CommitOperationAdd(path_in_repo=rel, path_or_fileobj=str(target.folder / rel))
                          for rel in plan.changed]
            api.create_commit(target.repo_id, operations=operations, repo_type=target.repo_type, token=token,
                              commit_message=f"hugvis publish: {len(plan.changed)} changed file(s)")
        log(f"{target.repo_type} {target.repo_id}: {len(plan.changed)} uploaded, {len(plan.unchanged)} unchanged"
            + (f", {len(plan.remote_only)} only on the Hub (left in place)" if plan.remote_only else ""))
        plans.append(plan)
    return plans


# --------------------------------------------------------------------------- CLI
def _run(args: argparse.Namespace) -> int:
    common = dict(org=args.org, dataset_repo=args.dataset_repo, dataset_dir=args.dataset_dir, release=args.release,
                  include_dataset=not args.no_dataset)
    if args.dry_run:
        targets = materialise(args.dry_run, **common)
        for target in targets:
            print(f"{target.repo_type} {target.repo_id}: {len(local_files(target.folder))} file(s) at {target.folder}")
        return 0
    with tempfile.TemporaryDirectory(prefix="hugvis-publish-") as tmp:
        targets = materialise(Path(tmp) / "out", **common)
        publish(targets, private=args.private)
    return 0


def register(subparsers: Any) -> None:
    """Add ``hugvis publish``."""
    parser = subparsers.add_parser(
        "publish", help="materialise (--dry-run) or upload the dataset, the metric Spaces and the explorer Space")
    parser.add_argument("--dry-run", metavar="OUT_DIR", help="write the repos to OUT_DIR and upload nothing")
    parser.add_argument("--org", default=DEFAULT_ORG, help="Hub organisation of the Spaces (default: hugvis)")
    parser.add_argument("--dataset-repo", default=DEFAULT_DATASET_REPO, help="Hub id of the dataset")
    parser.add_argument("--dataset-dir", help="an already built dataset repo folder (hugvis build)")
    parser.add_argument("--release", help="release tree to build the dataset from (default: a synthetic one)")
    parser.add_argument("--no-dataset", action="store_true", help="publish the Spaces only")
    parser.add_argument("--private", action="store_true", help="create new repos private")
    parser.set_defaults(func=_run)

"""Publish everything to the Hugging Face Hub: the dataset repo, one Space per evaluate module
and the explorer Space.

:func:`materialise` writes each repository exactly as it will be uploaded into one folder per
repo (``OUT/datasets/<name>``, ``OUT/spaces/<name>``); :func:`publish` uploads them. Uploads are
idempotent: each local file's git blob id (and, for LFS files, its sha256) is compared with what
:meth:`HfApi.list_repo_tree` reports, and only new or changed files are committed, as explicit
``CommitOperationAdd`` operations (no glob patterns, so odd file names cannot widen a commit).

Every Space must install without this repository: its ``requirements.txt`` names the library
either as a released version (:func:`check_installable` asks the package index before upload) or
as the wheel it was built with, copied into the Space and fetched from the Space repo during its
build (``--wheel``); those checks are in :mod:`~hug_vis_dataset.publish.checks`, the command in
:mod:`~hug_vis_dataset.publish.commands`. This module holds the publishing itself.

The token comes from ``HF_TOKEN`` or the stored Hugging Face login; it is passed to
``huggingface_hub`` and never printed or written.

Example:
    >>> git_blob_id(b"hello\\n")  # same as `printf 'hello\\n' | git hash-object --stdin`
    'ce013625030ba8dba906f756967f9e9ca394464a'
"""

from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..outputs import GUARD_FILES, claim, scratch
from . import release_info
from ..hashing import digest_file
from ..readers.hub_access import HUB_DATASET_ID, require_reachable
from .checks import (GATED_FIELDS, PYPI_JSON_URL, SPACE_SDKS, IndexLookup, IndexLookupError, PublishError,
                     PublishProblems, RepoTarget, check_installable, check_requirements, check_source_requirements, check_wheel, ensure_gated,
                     library_requirement, pypi_versions, validate_card, wheel_mismatches, write_space_requirements)

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_ORG = "hugvis"
DEFAULT_DATASET_REPO = HUB_DATASET_ID
EXPLORER_NAME = "hug-vis-explorer"
# Written by git/the Hub itself; never uploaded from a local folder.
#: What to do instead of uploading when the Hub cannot be reached.
OFFLINE_ALTERNATIVE = ("`hugvis publish --dry-run OUT_DIR` builds and checks every repo locally; "
                       "upload from a machine with internet")
# The output guard's marker and ledger (hug_vis_dataset.outputs) are local bookkeeping, never published.
SKIP_NAMES = frozenset({".git", "__pycache__", ".cache", ".gitattributes", ".build_state", *GUARD_FILES})
#: The fix of a generated ``metrics/<name>/`` folder: generate it again from the catalog.
MODULE_FIX = "regenerate the module folders with `python -m hug_vis_dataset.publish.module_folders metrics`, or remove the folder"

__all__ = [
    "DEFAULT_DATASET_REPO", "DEFAULT_ORG", "EXPLORER_NAME", "GATED_FIELDS", "IndexLookup", "IndexLookupError",
    "PYPI_JSON_URL", "PublishError", "PublishProblems", "REPO_ROOT", "RepoTarget", "SKIP_NAMES", "SPACE_SDKS", "UploadPlan",
    "check_installable", "check_requirements", "check_source_requirements", "check_wheel", "ensure_gated",
    "file_digests", "git_blob_id", "library_requirement", "local_files", "materialise", "metric_module_dirs",
    "plan_upload", "publish", "pypi_versions", "source_problems", "refuse_symlinks", "symlinks_in", "validate_card", "wheel_mismatches",
    "write_space_requirements",
]


@dataclass
class UploadPlan:
    """Files of one target split by whether the Hub already holds identical bytes."""

    target: RepoTarget
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    remote_only: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- digests
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
    digest_file(path, sha1, sha256, block=chunk)
    return sha1.hexdigest(), sha256.hexdigest()


def symlinks_in(folder: "str | Path") -> list[Path]:
    """Every symbolic link under ``folder`` (files and folders alike), sorted, links not followed;
    what :data:`SKIP_NAMES` leaves out is not looked into.

    Example:
        >>> import os, tempfile
        >>> root = Path(tempfile.mkdtemp()); (root / "a.txt").write_text("a")
        1
        >>> os.symlink(root / "a.txt", root / "b.txt"); [p.name for p in symlinks_in(root)]
        ['b.txt']
    """
    folder = Path(folder)
    links = []
    for here, dirs, files in os.walk(folder):  # os.walk never descends into a linked folder
        dirs[:] = sorted(d for d in dirs if d not in SKIP_NAMES)
        links += [Path(here) / name for name in dirs + sorted(files)
                  if name not in SKIP_NAMES and os.path.islink(os.path.join(here, name))]
    return sorted(links)


def symlink_problem(folder: "str | Path") -> "str | None":
    """One line naming every symbolic link under ``folder`` and the fix, or None when there is none."""
    links = symlinks_in(folder)
    if not links:
        return None
    named = ", ".join(f"{link} -> {os.readlink(link)}" for link in links)
    return (f"symbolic link(s) in {folder}: {named}; publishing never follows a link: replace each link by the file "
            f"it points to")


def refuse_symlinks(folder: "str | Path") -> None:
    """Raise :class:`PublishError` naming every symbolic link under ``folder``: publishing copies
    and uploads files only, never what a link points at (it may lie outside the repo)."""
    problem = symlink_problem(folder)
    if problem:
        raise PublishError(problem)


def local_files(folder: "str | Path") -> list[str]:
    """Every uploadable file of a folder, POSIX-relative, sorted; symlinks are refused."""
    folder = Path(folder)
    refuse_symlinks(folder)
    out = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if any(part in SKIP_NAMES for part in rel.parts):
            continue
        if path.is_file():
            out.append(rel.as_posix())
    return out


# --------------------------------------------------------------------------- materialise
def _module_folders(metrics_root: "str | Path") -> list[Path]:
    root = Path(metrics_root)
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and p.name not in SKIP_NAMES and not p.name.startswith("."))


def _missing_module(folder: Path) -> "str | None":
    if (folder / f"{folder.name}.py").is_file():
        return None
    return f"{folder} has no module file {folder.name}.py; {MODULE_FIX}"


def metric_module_dirs(metrics_root: "str | Path" = REPO_ROOT / "metrics") -> list[Path]:
    """``metrics/<name>/`` folders, each holding its evaluate module ``<name>.py``.

    Raises:
        PublishProblems: every folder without its module file, one line each (a half-generated
            or stale folder would otherwise be left out of publishing without a word).
    """
    folders = _module_folders(metrics_root)
    problems = [p for p in map(_missing_module, folders) if p]
    if problems:
        raise PublishProblems(problems, len(problems))
    return folders


def _with_fix(problem: str, fix: str) -> str:
    # Card and requirement checks say what is wrong; a problem that does not say what to do gets its folder's fix.
    return problem if "; " in problem or "(write it" in problem else f"{problem}; {fix}"


def source_problems(metrics_root: "str | Path" = REPO_ROOT / "metrics",
                    explorer_dir: "str | Path" = REPO_ROOT / "spaces" / EXPLORER_NAME,
                    dataset_dir: "str | Path | None" = None) -> "tuple[list[str], int]":
    """Every problem of every source folder, read only (nothing is written): ``(lines, folders with one)``.

    A module folder is checked whole even when its module file is missing: its links, its card
    (as a Space's) and its requirements (unversioned or this version); so is the explorer's
    folder; a dataset folder is checked for links (its card is checked once it is gated).

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> (root / "a").mkdir(); (root / "b").mkdir()
        >>> lines, folders = source_problems(root, root / "none")
        >>> folders, sum(line.startswith(str(root / "a")) for line in lines) > 1, any("b.py" in line for line in lines)
        (2, True, True)
    """
    found: list[str] = []
    folders = 0
    explorer = Path(explorer_dir)
    spaces = [(m, MODULE_FIX) for m in _module_folders(metrics_root)]
    if explorer.is_dir():
        spaces.append((explorer, f"correct it in {explorer} (the explorer Space's source)"))
    for folder, fix in spaces:
        here = [p for p in (_missing_module(folder) if fix is MODULE_FIX else None, symlink_problem(folder)) if p]
        here += [_with_fix(p, fix) for p in validate_card(folder, "space") + check_source_requirements(folder)]
        found += here
        folders += bool(here)
    if dataset_dir is not None:
        link = symlink_problem(dataset_dir)
        if link:
            found.append(link)
            folders += 1
    return found, folders


def _copy_tree(source: Path, dest: Path) -> None:
    # materialise refused every link before copying; symlinks=True copies one made meanwhile as a link (which
    # local_files then refuses) instead of following it.
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(*SKIP_NAMES, "*.pyc"), symlinks=True)


def materialise(
    out_dir: "str | Path",
    org: str = DEFAULT_ORG,
    dataset_repo: str = DEFAULT_DATASET_REPO,
    dataset_dir: "str | Path | None" = None,
    release: "str | Path | None" = None,
    metrics_root: "str | Path" = REPO_ROOT / "metrics",
    explorer_dir: "str | Path" = REPO_ROOT / "spaces" / EXPLORER_NAME,
    include_dataset: bool = True,
    wheel: "str | Path | None" = None,
    wheel_url: str = release_info.HUB_WHEEL_URL,
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
        wheel: a wheel of this library to bundle into every Space (see :func:`check_wheel`);
            without it each Space pins the released version.
        wheel_url: where a Space's build fetches the bundled wheel; ``{repo_id}``, ``{wheel}`` and
            ``{folder}`` (the materialised folder as a ``file://`` URI, for offline tests) are filled in.

    Raises:
        PublishProblems: every problem of every folder in one pass, one line each (before anything
            is written: a module folder without its module file, a symbolic link, a card, a source
            requirement; then, in the written repos, a pin or the dataset's card).
    """
    bundled = check_wheel(wheel) if wheel is not None else None
    out = Path(out_dir)
    # The one output (hug_vis_dataset.outputs): never a folder it copies from, nor inside one.
    output = claim("hugvis publish", out, "publish", label="--dry-run",
                   inputs=[("--dataset-dir", dataset_dir if include_dataset else None), ("--release", release),
                           ("metrics", metrics_root), ("explorer", explorer_dir)])
    if out.exists() and any(p.name not in GUARD_FILES for p in out.iterdir()):
        raise PublishError(f"{out} is not empty")
    # Before anything is written: a refused run leaves no half-made OUT_DIR, and names every problem at once.
    found, folders = source_problems(metrics_root, explorer_dir, dataset_dir if include_dataset else None)
    if found:
        raise PublishProblems(found, folders)
    modules = metric_module_dirs(metrics_root)
    explorer = Path(explorer_dir)
    output.ensure()
    targets: list[RepoTarget] = []
    if include_dataset:
        dest = out / "datasets" / dataset_repo.split("/")[-1]
        if dataset_dir is not None:
            _copy_tree(Path(dataset_dir), dest)
        else:
            _build_dataset(dest, release)
        ensure_gated(dest / "README.md")
        targets.append(RepoTarget(dataset_repo, "dataset", dest))
    for module in modules:
        dest = out / "spaces" / module.name
        _copy_tree(module, dest)
        targets.append(RepoTarget(f"{org}/{module.name}", "space", dest, "gradio"))
    if explorer.is_dir():
        dest = out / "spaces" / EXPLORER_NAME
        _copy_tree(explorer, dest)
        targets.append(RepoTarget(f"{org}/{EXPLORER_NAME}", "space", dest, "gradio"))
    problems = []
    unfit = 0
    for target in targets:
        before = len(problems)
        if target.repo_type != "space":  # a Space's card was checked in its source folder
            problems += validate_card(target.folder, target.repo_type)
            unfit += len(problems) > before
            continue
        # The source names the library unversioned or at this version (its texts were generated for it);
        # the published line is written from release_info: the pin, or the bundled wheel.
        found = check_source_requirements(target.folder)
        if not found:
            url = None
            if bundled is not None:
                shutil.copy2(bundled, target.folder / bundled.name)
                url = wheel_url.format(repo_id=target.repo_id, wheel=bundled.name,
                                       folder=target.folder.resolve().as_uri())
            kind = "explorer" if target.folder.name == EXPLORER_NAME else "metric"
            write_space_requirements(target.folder, kind, url)
            found = check_requirements(target.folder)
        problems += found
        unfit += len(problems) > before
    if problems:
        raise PublishProblems(problems, unfit)
    return targets


def _build_dataset(dest: Path, release: "str | Path | None") -> None:
    from ..hub.builder import build_repo

    if release is not None:
        build_repo(release, dest)
        return
    from ..synth import synthesize
    from ..validate import GridSpec

    with scratch(prefix="hugvis-publish-") as tmp:
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

    Raises:
        HubUnreachableError: the Hub cannot be reached (offline); raised before any request, so
            nothing waits on retries.
    """
    from huggingface_hub import CommitOperationAdd, HfApi

    targets = list(targets)
    if api is None:
        require_reachable(", ".join(t.repo_id for t in targets), OFFLINE_ALTERNATIVE)
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

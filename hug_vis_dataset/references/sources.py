"""Where the references of a scoring run come from: a release tree or a built dataset repo.

``hugvis evaluate --dataset X`` accepts three kinds of ``X`` (:func:`open_reference_source`):

* a **release tree** (``metadata/clips.csv`` + media files): :class:`ReleaseSource`;
* a **dataset repo** folder written by :func:`hug_vis_dataset.hub.build_repo` (a ``README.md``
  card whose YAML front matter has ``configs:``, and/or the builder's ``manifest.json``):
  :class:`RepoSource`, read with pyarrow straight from the Parquet shards;
* a **Hub id** (``hugvis/hug-vis``) when ``X`` is not a local path: the repo is fetched
  (:mod:`hug_vis_dataset.references.hub_download`) and read as a repo folder.

Both sources expose the same small interface, which is all the task scorers need:

* :meth:`clip_ids` -- the clips of the task, in grid order;
* :meth:`record` -- per-clip properties the submission checks use (``clip_id``, ``width``,
  ``height``, ``fps``, ``sample_rate``, ``num_frames``);
* :meth:`reference` -- the clip's reference media as plain strings, by kind (``alpha``,
  ``video``, ``audio``, ``portrait``): file paths or row locators
  (:mod:`hug_vis_dataset.references.locators`), so a :class:`~hug_vis_dataset.tasks.base.ClipJob`
  still pickles to any worker; :mod:`hug_vis_dataset.references.readers` turns them into media.
  Text references (:data:`TASK_TEXTS`: voice cloning's ``text``, the clip's target text) are the
  text itself, read when the source opens;
* :meth:`fingerprint` -- what the summary's provenance records about the dataset.

Listing a repo streams: the clip list comes from ``iter_batches`` over the small key columns only.

Example:
    >>> TASK_COLUMNS["matting"]
    {'alpha': 'alpha_matte', 'video': 'video'}
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..datamodel.grid import ClipId, ClipIdError
from ..hashing import DigestCache, sha256_file
from .hub_download import HUB_CARD, HUB_MANIFEST, download_repo, looks_like_hub_id
from .locators import DatasetSourceError, RowLocator, open_parquet

#: Clips read per Arrow batch while listing a repo (key columns only, so batches are tiny).
LIST_BATCH_ROWS = 256

#: Per task: reference kind -> the column of the task's config that holds it.
TASK_COLUMNS: dict[str, dict[str, str]] = {
    "matting": {"alpha": "alpha_matte", "video": "video"},
    "vision_driven": {"video": "reference_video", "portrait": "source_frame"},
    "audio_driven": {"video": "reference_video", "audio": "driving_audio", "portrait": "source_frame"},
    "voice_cloning": {"audio": "reference_audio"},
    "emotion": {},
    "motion": {"alpha": "alpha_matte"},
    "matting_boundary": {"alpha": "alpha_matte"},
}
#: Per task: text reference kind -> the column of the task's config that holds it. A text is the
#: reference value itself (a sentence per clip: read with the clip list, never through a locator).
TASK_TEXTS: dict[str, dict[str, str]] = {"voice_cloning": {"text": "target_text"}}
#: Dataset config a task reads when it is not named after one (reference-only tasks).
TASK_CONFIG: dict[str, str] = {"motion": "matting", "matting_boundary": "matting"}
#: Columns of the ``clips`` config that describe a clip (read for the submission checks).
METADATA_COLUMNS = ("num_frames", "fps", "sample_rate", "width", "height")


@dataclass(frozen=True)
class ReferenceClip:
    """What the submission checks need to know about one reference clip (None: not recorded)."""

    cid: ClipId
    clip_id: str
    width: "int | None" = None
    height: "int | None" = None
    fps: "float | None" = None
    sample_rate: "int | None" = None
    num_frames: "int | None" = None


class ReferenceSource:
    """Interface of a reference dataset; see the module docstring."""

    kind: str = ""

    def clip_ids(self) -> list[ClipId]:
        """Clips of the task in grid order."""
        raise NotImplementedError

    def record(self, cid: ClipId) -> Any:
        """Per-clip properties (``clip_id``, ``width``, ``height``, ``fps``, ``sample_rate``)."""
        raise NotImplementedError

    def reference(self, cid: ClipId) -> dict[str, str]:
        """Reference media of a clip by kind: file paths or row locators."""
        raise NotImplementedError

    def fingerprint(self) -> dict:
        """Provenance of the dataset (kind, path, checksums, revision)."""
        raise NotImplementedError


class ReleaseSource(ReferenceSource):
    """References from a release tree (``metadata/clips.csv`` + media).

    Args:
        root: the release folder.
        task: the task whose reference kinds :meth:`reference` returns (None: all kinds).
    """

    kind = "release"

    def __init__(self, root: "str | Path", task: "str | None" = None):
        from ..datamodel.release import Release

        self.root = Path(root)
        self.task = task
        self.release = Release(self.root)

    def clip_ids(self) -> list[ClipId]:
        return self.release.clip_ids()

    def record(self, cid: ClipId):
        return self.release.records[cid]

    def reference(self, cid: ClipId) -> dict[str, str]:
        record = self.release.records[cid]
        paths = {"alpha": record.alpha_matte_path, "video": record.video_path, "audio": record.audio_path,
                 "portrait": record.video_path}
        kinds = TASK_COLUMNS[self.task] if self.task else paths
        texts = {"target_text": record.transcript}  # the release's transcript is the repo's target_text
        return {**{kind: str(paths[kind]) for kind in kinds},
                **{kind: texts[column] for kind, column in TASK_TEXTS.get(self.task, {}).items()}}

    def fingerprint(self) -> dict:
        csv_path = self.release.root / self.release.layout.metadata_csv
        return {"kind": "release", "path": str(self.root.resolve()), "clips": len(self.release),
                "metadata_sha256": sha256_file(csv_path), "synthetic": self.release.synthetic,
                "revision": git_revision(self.root)}


class RepoSource(ReferenceSource):
    """References from a dataset repo built by :func:`hug_vis_dataset.hub.build_repo`.

    The clip list is the rows of the task's config; the submission checks' properties come from
    the ``clips`` config when the repo has it (only its small columns are read).

    Before anything is read, every shard of the task's config and of the ``clips`` config is
    checked against the sha256 the builder recorded in ``manifest.json``
    (:func:`verify_manifest_shards`; cached by path, size and mtime, so a repo is hashed once).

    Args:
        root: the repo folder.
        task: the task (its config is read).
        repo_id, revision: recorded in the fingerprint when the repo came from the Hub.
        verify: check the shards' sha256 (``--no-verify-dataset`` turns it off; the fingerprint
            records which).
        digests_file: the file remembering the shards' digests (under ``--out``); None: memory only.

    Raises:
        DatasetSourceError: the repo lacks the task's config, a shard differs from the manifest,
            a row has a bad or repeated clip id.
        InputFileError: a shard is truncated, not Parquet, or its columns are not its config's
            (checked on every shard when it is opened, naming the shard, the column and the fix).
    """

    kind = "repo"

    def __init__(self, root: "str | Path", task: str, repo_id: "str | None" = None,
                 revision: "str | None" = None, verify: bool = True, digests_file: "str | Path | None" = None):
        if task not in TASK_COLUMNS:
            raise DatasetSourceError(f"unknown task {task!r}; expected one of {', '.join(TASK_COLUMNS)}")
        self.root = Path(root)
        self.task = task
        self.config = TASK_CONFIG.get(task, task)
        self.repo_id, self.revision = repo_id, revision
        self.manifest = _read_manifest(self.root)
        shards = self.shards(self.config)
        self._check_sizes()
        self.verified = False
        if verify and self.manifest is not None:
            verify_manifest_shards(self.root, self._manifest_entries(self.config) + self._manifest_entries("clips"),
                                   digests_file)
            self.verified = True
        if not shards:
            raise DatasetSourceError(f"the dataset repo {self.root} has no {self.config!r} config (no data/{self.config}/*.parquet)")
        self._rows: dict[ClipId, tuple[str, int, str]] = {}
        for shard, row, clip in _iter_keys(shards, self.config):
            try:
                cid = ClipId.parse(clip)
            except ClipIdError as err:
                raise DatasetSourceError(f"row {row} of {shard} has a bad clip id: {err}") from None
            if cid in self._rows:
                raise DatasetSourceError(f"clip {clip} appears twice in the {task} config of {self.root}")
            self._rows[cid] = (shard, row, clip)
        self._meta: dict[ClipId, dict] = {}
        for values in iter_columns(self.shards("clips"), ("clip_id",) + METADATA_COLUMNS):
            with contextlib.suppress(ClipIdError):
                self._meta[ClipId.parse(values["clip_id"])] = values
        self._texts: dict[ClipId, dict[str, str]] = {}
        texts = TASK_TEXTS.get(task, {})
        for values in iter_columns(shards, ("clip_id", *texts.values())) if texts else ():
            with contextlib.suppress(ClipIdError):
                self._texts[ClipId.parse(values["clip_id"])] = {kind: values[column] for kind, column in texts.items()
                                                                 if values.get(column) is not None}

    def shards(self, config: str) -> list[Path]:
        """Shards of a config: the manifest's list when there is one, else ``data/<config>/*.parquet``."""
        if self.manifest is not None:
            return [self.root / e["file"] for e in self._manifest_entries(config)]
        return sorted((self.root / "data" / config).glob("*.parquet"))

    def clip_ids(self) -> list[ClipId]:
        return sorted(self._rows)

    def record(self, cid: ClipId) -> ReferenceClip:
        _, _, clip = self._rows[cid]
        meta = self._meta.get(cid, {})
        return ReferenceClip(cid, clip, **{k: meta.get(k) for k in METADATA_COLUMNS})

    def reference(self, cid: ClipId) -> dict[str, str]:
        shard, row, clip = self._rows[cid]
        return {**{kind: RowLocator(str(Path(shard).resolve()), row, column, clip).to_ref()
                   for kind, column in TASK_COLUMNS[self.task].items()}, **self._texts.get(cid, {})}

    def fingerprint(self) -> dict:
        """Kind, path, Hub id and revision, the manifest's sha256 and the task shards' sha256s.

        Shard checksums are the manifest's (hashing every shard on each run would read the whole
        config); the shards' sizes were checked against it when the source was opened, and
        ``hugvis verify``-style full checks stay with :func:`hug_vis_dataset.hub.verify_repo`.
        Without a manifest the shards are hashed here.
        """
        manifest = self.root / HUB_MANIFEST
        listed = {e["file"]: e["sha256"] for e in self._manifest_entries(self.config)}
        shards = {p.relative_to(self.root).as_posix(): listed.get(p.relative_to(self.root).as_posix())
                  or sha256_file(p) for p in self.shards(self.config)}
        return {"kind": "repo", "path": str(self.root.resolve()), "config": self.config, "clips": len(self._rows),
                "manifest_sha256": sha256_file(manifest) if manifest.is_file() else None,
                "shards_sha256": shards, "repo_id": self.repo_id,
                "synthetic": bool((self.manifest or {}).get("synthetic")),
                "shards_verified": ("sha256 of every shard read checked against manifest.json" if self.verified
                                    else "not checked (--no-verify-dataset, or no manifest.json)"),
                "revision": self.revision or git_revision(self.root)}

    def _manifest_entries(self, config: str) -> list[dict]:
        if self.manifest is None:
            return []
        return list(self.manifest.get("configs", {}).get(config, {}).get("shards", []))

    def _check_sizes(self) -> None:
        """Shards whose size differs from the manifest were changed after the build: refuse them."""
        for entry in self._manifest_entries(self.config):
            path = self.root / entry["file"]
            if not path.is_file():
                raise DatasetSourceError(f"{entry['file']}, listed in the repo's manifest, does not exist")
            size = path.stat().st_size
            if size != entry.get("bytes", size):
                raise DatasetSourceError(
                    f"{entry['file']} is {size} bytes but the repo's manifest says {entry['bytes']}: the repo was "
                    f"modified after it was built (rebuild it, or re-download it)")


VERIFY_CACHE_FILE = ".verified-shards.json"  # under a run's --out: what the user named, never the dataset
_VERIFIED = DigestCache()  # this process's shard digests: a reading command (check-only, predict) writes nothing


def verify_manifest_shards(root: "str | Path", entries: "list[dict]", cache_file: "str | Path | None" = None) -> int:
    """Check each listed shard's sha256 against the manifest; returns how many were hashed now.

    A digest once computed is remembered by the shard's absolute path, size and mtime (any change
    hashes it again): in this process's memory, and also in ``cache_file`` when one is given --
    ``hugvis evaluate`` gives ``<out>/.verified-shards.json``, under the folder the user named, so
    scoring a repo again into the same results does not reread it. Nothing is ever written next to
    the dataset or in a cache folder nobody named.

    Raises:
        DatasetSourceError: a shard is missing or its content differs from the manifest.

    Example:
        >>> import tempfile, pathlib, hashlib
        >>> repo = pathlib.Path(tempfile.mkdtemp()); _ = (repo / "s.parquet").write_bytes(b"abc")
        >>> entry = {"file": "s.parquet", "sha256": hashlib.sha256(b"abc").hexdigest()}
        >>> from hug_vis_dataset.outputs import claim
        >>> results = claim("hugvis evaluate", pathlib.Path(tempfile.mkdtemp()) / "results", "results")
        >>> out = results.ensure() / "cache.json"  # under the --out the user named
        >>> verify_manifest_shards(repo, [entry], out), verify_manifest_shards(repo, [entry], out)
        (1, 0)
        >>> verify_manifest_shards(repo, [entry]), verify_manifest_shards(repo, [entry]), sorted(p.name for p in repo.iterdir())
        (1, 0, ['s.parquet'])
    """
    root = Path(root)
    cache = DigestCache(cache_file) if cache_file is not None else _VERIFIED
    before = cache.hashed
    for entry in entries:
        path = root / entry["file"]
        if not path.is_file():
            raise DatasetSourceError(f"{entry['file']}, listed in {root / HUB_MANIFEST}, does not exist; "
                                     f"re-download or rebuild the repo")
        actual = cache.sha256(path)
        expected = entry.get("sha256")
        if expected and actual != expected:
            raise DatasetSourceError(
                f"{entry['file']} in {root} has sha256 {str(actual)[:12]}... but {HUB_MANIFEST} records "
                f"{expected[:12]}...: the shard is corrupted or was changed after the build; re-download or rebuild "
                f"the repo (or pass --no-verify-dataset to score against it anyway)")
    if cache.hashed > before:
        cache.save()  # only a cache with a file (under --out) writes
    return cache.hashed - before


def _read_manifest(root: Path) -> "dict | None":
    path = root / HUB_MANIFEST
    if not path.is_file():
        return None
    from ..readers.json_files import read_json

    try:  # strict: a duplicated "configs" is refused naming the line, not "the last one wins"
        manifest = read_json(path, expect=None)
    except ValueError as err:  # an InputFileError: one line naming file and line
        raise DatasetSourceError(f"{path} is not valid JSON: {str(err).removeprefix(f'{path}: ')}") from None
    return manifest if isinstance(manifest, dict) and isinstance(manifest.get("configs"), dict) else None


def iter_columns(shards: Iterable[Path], columns: tuple[str, ...]) -> Iterator[dict]:
    """Rows of the given (small) columns, streamed batch by batch; columns absent are skipped.

    Each shard's footer is checked against its config's schema when it is opened
    (:func:`~hug_vis_dataset.references.locators.open_parquet`): InputFileError naming shard and column.
    """
    for shard in shards:
        handle = open_parquet(shard)
        present = [c for c in columns if c in handle.schema_arrow.names]
        for batch in handle.iter_batches(batch_size=LIST_BATCH_ROWS, columns=present):
            yield from batch.to_pylist()


def _iter_keys(shards: Iterable[Path], config: str) -> Iterator[tuple[str, int, str]]:
    """(shard, row in shard, clip_id) of every row, reading the ``clip_id`` column only."""
    for shard in shards:
        if not shard.is_file():
            raise DatasetSourceError(f"shard {shard} listed by the repo does not exist")
        handle = open_parquet(shard, config)
        if "clip_id" not in handle.schema_arrow.names:
            raise DatasetSourceError(f"{shard} has no clip_id column; is it a HUG-VIS {config} shard?")
        row = 0
        for batch in handle.iter_batches(batch_size=LIST_BATCH_ROWS, columns=["clip_id"]):
            for clip in batch.column("clip_id").to_pylist():
                yield str(shard), row, clip
                row += 1


def git_revision(path: "str | Path") -> "str | None":
    """The commit checked out in ``path`` when it is a git work tree (None otherwise)."""
    head = Path(path) / ".git" / "HEAD"
    if not head.is_file():
        return None
    text = head.read_text().strip()
    if text.startswith("ref: "):
        ref = Path(path) / ".git" / text[5:]
        return ref.read_text().strip() if ref.is_file() else None
    return text


# ----------------------------------------------------------------------------- detection
def is_release_tree(path: "str | Path") -> bool:
    """True for a folder holding ``metadata/clips.csv``."""
    return (Path(path) / "metadata" / "clips.csv").is_file()


def is_dataset_repo(path: "str | Path") -> bool:
    """True for a built repo: the builder's manifest, or a card whose YAML declares ``configs:``.

    Example:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> is_dataset_repo(folder)
        False
        >>> _ = (folder / "README.md").write_text("---\\nconfigs:\\n- config_name: matting\\n---\\n# card\\n")
        >>> is_dataset_repo(folder)
        True
    """
    path = Path(path)
    if _read_manifest(path) is not None:
        return True
    card = path / HUB_CARD
    if not card.is_file():
        return False
    text = card.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---"):
        return False
    front = text[3:].split("\n---", 1)[0]
    try:
        import yaml

        meta = yaml.safe_load(front)
    except Exception:  # noqa: BLE001 - a card we cannot parse is simply not a dataset card
        return False
    return isinstance(meta, dict) and isinstance(meta.get("configs"), list)


def open_reference_source(dataset: "str | Path", task: "str | None" = None,
                          revision: "str | None" = None, verify: bool = True,
                          digests_file: "str | Path | None" = None) -> ReferenceSource:
    """The reference source ``--dataset`` names: a release tree, a repo folder or a Hub id.

    Args:
        dataset: a release folder, a built repo folder, or a Hub id (``owner/name``).
        task: the task to score (a repo needs it to pick its config; a release ignores it
            except to choose which reference kinds :meth:`ReferenceSource.reference` returns).
        revision: Hub revision (branch, tag or commit) to fetch; only for Hub ids.
        verify: check a repo's shards against the sha256 of its manifest (see :class:`RepoSource`).
        digests_file: where the shards' digests are remembered between runs (under the run's
            ``--out``); None keeps them in this process's memory (see :func:`verify_manifest_shards`).

    Raises:
        DatasetSourceError: none of the three, a corrupted repo, or the Hub cannot be reached.

    Example:
        >>> import tempfile
        >>> try:
        ...     open_reference_source(tempfile.mkdtemp(), "matting")
        ... except DatasetSourceError as err:
        ...     print("neither a release tree" in str(err))
        True
    """
    text = str(dataset)
    path = Path(dataset)
    if path.is_dir():
        if revision is not None:
            raise DatasetSourceError(f"--revision applies to Hub ids only; {path} is a local folder")
        if is_release_tree(path):
            return ReleaseSource(path, task)
        for sub in ("release", "source"):  # a repo folder that also carries its release tree
            if is_release_tree(path / sub) and not is_dataset_repo(path):
                return ReleaseSource(path / sub, task)
        if is_dataset_repo(path):
            if task is None:
                raise DatasetSourceError("reading a dataset repo needs the task (its config)")
            return RepoSource(path, task, verify=verify, digests_file=digests_file)
        raise DatasetSourceError(
            f"{path} is neither a release tree (no metadata/clips.csv) nor a HUG-VIS dataset repo "
            f"(no {HUB_MANIFEST} and no {HUB_CARD} with `configs:`)")
    if path.exists():
        raise DatasetSourceError(f"{path} is a file; --dataset takes a release folder, a repo folder or a Hub id")
    if looks_like_hub_id(text):
        if task is None:
            raise DatasetSourceError("reading a dataset repo needs the task (its config)")
        folder, commit = download_repo(text, revision, task)
        if not is_dataset_repo(folder):
            raise DatasetSourceError(f"the Hub repo {text} at {commit} is not a HUG-VIS dataset repo")
        return RepoSource(folder, task, repo_id=text, revision=commit, verify=verify, digests_file=digests_file)
    raise DatasetSourceError(f"{text} does not exist (and is not a Hub id like hugvis/hug-vis)")

"""Where the references of a scoring run come from: a release tree or a built dataset repo.

``hugvis evaluate --dataset X`` accepts three kinds of ``X`` (:func:`open_reference_source`):

* a **release tree** (``metadata/clips.csv`` + media files): :class:`ReleaseSource`;
* a **dataset repo** folder written by :func:`hug_vis_dataset.hub.build_repo` (a ``README.md``
  card whose YAML front matter has ``configs:``, and/or the builder's ``manifest.json``):
  :class:`RepoSource`, read with pyarrow straight from the Parquet shards;
* a **Hub id** (``hugvis/hug-vis``) when ``X`` is not a local path: the repo is fetched with
  ``huggingface_hub.snapshot_download`` at ``revision`` and read as a repo folder.

Both sources expose the same small interface, which is all the task scorers need:

* :meth:`clip_ids` -- the clips of the task, in grid order;
* :meth:`record` -- per-clip properties the submission checks use (``clip_id``, ``width``,
  ``height``, ``fps``, ``sample_rate``, ``num_frames``);
* :meth:`reference` -- the clip's reference media as plain strings, by kind (``alpha``,
  ``video``, ``audio``, ``portrait``), so a :class:`~hug_vis_dataset.tasks.base.ClipJob`
  still pickles to any worker;
* :meth:`fingerprint` -- what the summary's provenance records about the dataset.

A reference string is either a file path (release) or a *row locator* (repo): ``parquet-row:``
followed by JSON naming the shard, the row in it, the column and the clip id. Workers turn a
reference into media with the functions below, which accept either form:

* :func:`iter_reference_alpha` -- uint8 (n, H, W) chunks (repo: the FFV1 blob decoded chunk by
  chunk with :func:`hug_vis_dataset.hub.alpha.alpha_from_decoder`, never the whole clip);
* :func:`reference_alpha_info` -- (frames, width, height) without decoding pixels;
* :func:`reference_file` / :func:`iter_reference_files` -- a path PyAV can open (repo: the
  released bytes written to a temporary file, deleted afterwards);
* :func:`read_reference_audio` -- float32 mono samples and rate (repo: soundfile on the bytes);
* :func:`read_reference_portrait` -- the source portrait, uint8 RGB (H, W, 3).

Reading a repo streams: the clip list comes from ``iter_batches`` over the small key columns
only, and one clip's media is one row read with ``batch_size=1`` from one row group, so memory
does not grow with the number of clips (nor, for alpha, with the clip's length).

Example:
    >>> loc = RowLocator("/r/data/matting/test-00000.parquet", 3, "alpha_matte", "actor_0001_sad_action_01_script_001")
    >>> ref = loc.to_ref()
    >>> ref.startswith(LOCATOR_PREFIX), is_row_locator(ref), is_row_locator("/r/clip/alpha")
    (True, True, False)
    >>> RowLocator.parse(ref) == loc
    True
    >>> TASK_COLUMNS["matting"]
    {'alpha': 'alpha_matte', 'video': 'video'}
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np

from ..errors import HugvisError
from ..grid import ClipId, ClipIdError

LOCATOR_PREFIX = "parquet-row:"
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")
HUB_MANIFEST = "manifest.json"
HUB_CARD = "README.md"
#: Clips read per Arrow batch while listing a repo (key columns only, so batches are tiny).
LIST_BATCH_ROWS = 256
#: Read buffer of the Parquet reader: pages stream through it instead of a whole column chunk.
READ_BUFFER_BYTES = 1 << 20

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
#: Dataset config a task reads when it is not named after one (reference-only tasks).
TASK_CONFIG: dict[str, str] = {"motion": "matting", "matting_boundary": "matting"}
#: Columns of the ``clips`` config that describe a clip (read for the submission checks).
METADATA_COLUMNS = ("num_frames", "fps", "sample_rate", "width", "height")

_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


class DatasetSourceError(HugvisError, ValueError):
    """``--dataset`` names no usable reference source (not a release, not a repo, Hub unreachable)."""


# ----------------------------------------------------------------------------- locators
@dataclass(frozen=True)
class RowLocator:
    """One cell of a Parquet shard: the media of one clip in a built repo.

    Attributes:
        shard: absolute path of the Parquet file.
        row: row index within the file (0-based, across row groups).
        column: the media column (a struct of ``bytes`` and ``path``).
        clip_id: the clip the row must hold; checked on reading, so a rebuilt shard with other
            row positions fails loudly instead of scoring the wrong clip.
    """

    shard: str
    row: int
    column: str
    clip_id: str

    def to_ref(self) -> str:
        """The reference string carried by a clip job."""
        return LOCATOR_PREFIX + json.dumps([self.shard, self.row, self.column, self.clip_id])

    @classmethod
    def parse(cls, ref: str) -> "RowLocator":
        """Inverse of :meth:`to_ref`; ValueError for anything else."""
        if not is_row_locator(ref):
            raise ValueError(f"not a row locator: {ref!r}")
        shard, row, column, clip_id = json.loads(ref[len(LOCATOR_PREFIX):])
        return cls(str(shard), int(row), str(column), str(clip_id))


def is_row_locator(ref: "str | Path") -> bool:
    """True when ``ref`` points into a Parquet shard rather than at a file."""
    return isinstance(ref, str) and ref.startswith(LOCATOR_PREFIX)


def _open_parquet(path: "str | Path"):
    import pyarrow.parquet as pq

    # pre_buffer=False + a read buffer: pages stream instead of whole column chunks being loaded.
    return pq.ParquetFile(str(path), buffer_size=READ_BUFFER_BYTES, pre_buffer=False)


def read_cell_bytes(locator: RowLocator) -> bytes:
    """The ``bytes`` of one media cell, reading one row at a time from its row group only.

    Raises:
        DatasetSourceError: the shard is missing, the row is out of range, the column is absent,
            the row holds another clip, or the cell is empty.
    """
    if not Path(locator.shard).is_file():
        raise DatasetSourceError(f"shard {locator.shard} does not exist (the repo moved or changed)")
    handle = _open_parquet(locator.shard)
    if locator.column not in handle.schema_arrow.names:
        raise DatasetSourceError(f"{Path(locator.shard).name} has no column {locator.column!r}")
    start = 0
    for group in range(handle.num_row_groups):
        rows = handle.metadata.row_group(group).num_rows
        if locator.row < start + rows:
            offset = locator.row - start
            batches = handle.iter_batches(batch_size=1, row_groups=[group], columns=["clip_id", locator.column])
            for index, batch in enumerate(batches):
                if index < offset:
                    continue
                clip = batch.column("clip_id")[0].as_py()
                if clip != locator.clip_id:
                    raise DatasetSourceError(f"row {locator.row} of {locator.shard} holds {clip}, expected "
                                             f"{locator.clip_id} (the repo changed since the run started)")
                cell = batch.column(locator.column)[0].as_py()
                if not cell or cell.get("bytes") is None:
                    raise DatasetSourceError(f"{locator.column} of {locator.clip_id} is empty in {locator.shard}")
                return cell["bytes"]
        start += rows
    raise DatasetSourceError(f"row {locator.row} is beyond the {start} rows of {locator.shard}")


# ----------------------------------------------------------------------------- media access
def iter_reference_alpha(ref: "str | Path", chunk_frames: int = 32) -> Iterator[np.ndarray]:
    """uint8 (n, H, W) chunks of a reference alpha: a PNG folder / video path, or a repo cell.

    A repo cell holds the matte as one lossless video blob; it is decoded ``chunk_frames`` at a
    time through :func:`hug_vis_dataset.hub.alpha.alpha_from_decoder` (the ``datasets.Video``
    path), so only the compressed blob and one chunk are in memory.
    """
    if chunk_frames < 1:
        raise ValueError(f"chunk_frames must be >= 1, got {chunk_frames}")
    if not is_row_locator(ref):
        from ..media import iter_alpha_frames

        yield from iter_alpha_frames(ref, chunk_frames)
        return
    from torchcodec.decoders import VideoDecoder

    from ..hub.alpha import alpha_from_decoder

    decoder = VideoDecoder(read_cell_bytes(RowLocator.parse(ref)), dimension_order="NHWC")
    yield from alpha_from_decoder(decoder, chunk_frames)


def reference_alpha_info(ref: "str | Path") -> tuple[int, int, int]:
    """(frames, width, height) of a reference alpha without decoding its pixels (repo cells).

    Example:
        >>> import tempfile, numpy as np
        >>> from hug_vis_dataset.media import write_alpha_pngs
        >>> folder = tempfile.mkdtemp()
        >>> write_alpha_pngs(folder, [np.zeros((3, 4, 5), np.uint8)])
        3
        >>> reference_alpha_info(folder)
        (3, 5, 4)
    """
    if is_row_locator(ref):
        from torchcodec.decoders import VideoDecoder

        # The default "exact" seek mode scans every packet, so the count is the real one.
        decoder = VideoDecoder(read_cell_bytes(RowLocator.parse(ref)))
        return len(decoder), int(decoder.metadata.width), int(decoder.metadata.height)
    from .. import media

    path = Path(ref)
    if path.is_dir():
        files = media.alpha_frame_files(path)
        if not files:
            raise media.MediaError(f"no alpha PNG frames in {path.name}/")
        missing = sorted(set(range(max(files) + 1)) - set(files))
        if missing:
            raise media.MediaError(f"{path.name}/ lacks frames {missing[:10]}")
        first = media.read_png_gray(files[min(files)])
        return len(files), int(first.shape[1]), int(first.shape[0])
    info = media.video_info(path)
    return info.frames, info.width, info.height


@contextlib.contextmanager
def reference_file(ref: "str | Path", suffix: str = "") -> Iterator[str]:
    """A path to the reference media: the file itself, or a repo cell's bytes in a temp file.

    The temporary file (deleted on exit) holds the released bytes unchanged, so decoding it
    gives exactly what decoding the release file gives.

    Example:
        >>> with reference_file("/data/clip.mp4") as path:
        ...     path
        '/data/clip.mp4'
    """
    if not is_row_locator(ref):
        yield str(ref)
        return
    locator = RowLocator.parse(ref)
    data = read_cell_bytes(locator)
    handle, path = tempfile.mkstemp(prefix=f"hugvis-{locator.clip_id}-", suffix=suffix or ".bin")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        del data
        yield path
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


@contextlib.contextmanager
def reference_files(reference: "dict[str, str] | Any", kinds: "tuple[str, ...]") -> Iterator[dict[str, str]]:
    """``reference`` with its repo cells of ``kinds`` turned into temporary files for the block's life."""
    wanted = [k for k in kinds if is_row_locator(reference.get(k, ""))]
    if not wanted:
        yield dict(reference)
        return
    with contextlib.ExitStack() as stack:
        files = {k: stack.enter_context(reference_file(reference[k], ".mp4")) for k in wanted}
        yield {**reference, **files}


def iter_reference_files(refs: Iterable["str | Path"], suffix: str = "") -> Iterator[str]:
    """Paths of several references, one temporary file alive at a time (for set metrics, FID)."""
    for ref in refs:
        with reference_file(ref, suffix) as path:
            yield path


def read_reference_audio(ref: "str | Path") -> tuple[np.ndarray, int]:
    """float32 mono samples (channel mean) and rate, decoded exactly as ``media.read_audio`` does.

    Example:
        >>> import tempfile, os, numpy as np
        >>> from hug_vis_dataset.media import write_wav
        >>> path = os.path.join(tempfile.mkdtemp(), "a.wav")
        >>> write_wav(path, np.array([0.0, 0.5, -0.5]), 16000)
        >>> audio, rate = read_reference_audio(path)
        >>> audio.dtype, rate, audio.round(3).tolist()
        (dtype('float32'), 16000, [0.0, 0.5, -0.5])
    """
    if not is_row_locator(ref):
        from ..media import read_audio

        return read_audio(ref, mono=True)
    import soundfile as sf

    from ..media import MediaError

    locator = RowLocator.parse(ref)
    try:
        data, rate = sf.read(io.BytesIO(read_cell_bytes(locator)), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError) as err:
        raise MediaError(f"cannot read the {locator.column} of {locator.clip_id}: {err}") from err
    return data.mean(axis=1), int(rate)


def read_reference_portrait(ref: "str | Path") -> np.ndarray:
    """The source portrait as uint8 RGB (H, W, 3).

    A repo cell holds it as a lossless PNG (the ``source_frame`` column); a path is an image file
    or a video whose first frame is the portrait (the builder stores exactly that frame).
    """
    if is_row_locator(ref):
        import cv2

        locator = RowLocator.parse(ref)
        image = cv2.imdecode(np.frombuffer(read_cell_bytes(locator), np.uint8), cv2.IMREAD_COLOR)
        if image is None:
            raise DatasetSourceError(f"the {locator.column} of {locator.clip_id} is not a readable image")
        return np.ascontiguousarray(image[..., ::-1])
    from ..media import MediaError, iter_video_frames

    if Path(ref).suffix.lower() in IMAGE_SUFFIXES:
        import cv2

        image = cv2.imread(str(ref), cv2.IMREAD_COLOR)
        if image is None:
            raise MediaError(f"cannot read the source portrait {ref}: not a readable image")
        return np.ascontiguousarray(image[..., ::-1])
    return next(iter_video_frames(ref, chunk_frames=1))[0]


# ----------------------------------------------------------------------------- sources
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
        from ..release import Release

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
        return {kind: str(paths[kind]) for kind in kinds}

    def fingerprint(self) -> dict:
        csv_path = self.release.root / self.release.layout.metadata_csv
        return {"kind": "release", "path": str(self.root.resolve()), "clips": len(self.release),
                "metadata_sha256": hashlib.sha256(csv_path.read_bytes()).hexdigest(),
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

    Raises:
        DatasetSourceError: the repo lacks the task's config, a shard differs from the manifest,
            a row has a bad or repeated clip id.
    """

    kind = "repo"

    def __init__(self, root: "str | Path", task: str, repo_id: "str | None" = None,
                 revision: "str | None" = None, verify: bool = True):
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
            verify_manifest_shards(self.root, self._manifest_entries(self.config) + self._manifest_entries("clips"))
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
        for values in _iter_columns(self.shards("clips"), ("clip_id",) + METADATA_COLUMNS):
            with contextlib.suppress(ClipIdError):
                self._meta[ClipId.parse(values["clip_id"])] = values

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
        return {kind: RowLocator(str(Path(shard).resolve()), row, column, clip).to_ref()
                for kind, column in TASK_COLUMNS[self.task].items()}

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
                  or _sha256_file(p) for p in self.shards(self.config)}
        return {"kind": "repo", "path": str(self.root.resolve()), "config": self.config, "clips": len(self._rows),
                "manifest_sha256": hashlib.sha256(manifest.read_bytes()).hexdigest() if manifest.is_file() else None,
                "shards_sha256": shards, "repo_id": self.repo_id,
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


VERIFY_CACHE_FILE = "verified_shards.json"


def _verify_cache_path() -> Path:
    from ..weights import ENV_CACHE

    base = os.environ.get(ENV_CACHE) or os.path.join(os.path.expanduser("~"), ".cache", "hugvis")
    return Path(base) / VERIFY_CACHE_FILE


def _load_verify_cache(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # no cache, or a damaged one: hash again
    return data if isinstance(data, dict) else {}


def verify_manifest_shards(root: "str | Path", entries: "list[dict]", cache_file: "str | Path | None" = None) -> int:
    """Check each listed shard's sha256 against the manifest; returns how many were hashed now.

    A digest once computed is cached (``$HUGVIS_CACHE_DIR/verified_shards.json``, keyed by the
    shard's absolute path, size and mtime; ``cache_file`` overrides the location), so scoring a
    repo again does not reread it; any change of size or mtime hashes it again.

    Raises:
        DatasetSourceError: a shard is missing or its content differs from the manifest.

    Example:
        >>> import tempfile, pathlib, hashlib
        >>> repo = pathlib.Path(tempfile.mkdtemp()); _ = (repo / "s.parquet").write_bytes(b"abc")
        >>> entry = {"file": "s.parquet", "sha256": hashlib.sha256(b"abc").hexdigest()}
        >>> cache = repo / "cache.json"
        >>> verify_manifest_shards(repo, [entry], cache), verify_manifest_shards(repo, [entry], cache)
        (1, 0)
    """
    root = Path(root)
    cache_path = Path(cache_file) if cache_file is not None else _verify_cache_path()
    cache = _load_verify_cache(cache_path)
    hashed = 0
    for entry in entries:
        path = root / entry["file"]
        if not path.is_file():
            raise DatasetSourceError(f"{entry['file']}, listed in {root / HUB_MANIFEST}, does not exist; "
                                     f"re-download or rebuild the repo")
        st = path.stat()
        key = str(path.resolve())
        known = cache.get(key)
        if isinstance(known, dict) and known.get("size") == st.st_size and known.get("mtime_ns") == st.st_mtime_ns:
            actual = known.get("sha256")
        else:
            actual = _sha256_file(path)
            hashed += 1
            cache[key] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": actual}
        expected = entry.get("sha256")
        if expected and actual != expected:
            raise DatasetSourceError(
                f"{entry['file']} in {root} has sha256 {str(actual)[:12]}... but {HUB_MANIFEST} records "
                f"{expected[:12]}...: the shard is corrupted or was changed after the build; re-download or rebuild "
                f"the repo (or pass --no-verify-dataset to score against it anyway)")
    if hashed:
        try:
            cache_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_path.with_name(f".{cache_path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(cache, indent=0, sort_keys=True), encoding="utf-8")
            os.replace(tmp, cache_path)
        except OSError:
            pass  # a read-only cache only costs hashing again next time
    return hashed


def _read_manifest(root: Path) -> "dict | None":
    path = root / HUB_MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise DatasetSourceError(f"{path} is not valid JSON: {err}") from None
    return manifest if isinstance(manifest, dict) and isinstance(manifest.get("configs"), dict) else None


def _iter_columns(shards: Iterable[Path], columns: tuple[str, ...]) -> Iterator[dict]:
    """Rows of the given (small) columns, streamed batch by batch; columns absent are skipped."""
    for shard in shards:
        handle = _open_parquet(shard)
        present = [c for c in columns if c in handle.schema_arrow.names]
        for batch in handle.iter_batches(batch_size=LIST_BATCH_ROWS, columns=present):
            yield from batch.to_pylist()


def _iter_keys(shards: Iterable[Path], config: str) -> Iterator[tuple[str, int, str]]:
    """(shard, row in shard, clip_id) of every row, reading the ``clip_id`` column only."""
    for shard in shards:
        if not shard.is_file():
            raise DatasetSourceError(f"shard {shard} listed by the repo does not exist")
        handle = _open_parquet(shard)
        if "clip_id" not in handle.schema_arrow.names:
            raise DatasetSourceError(f"{shard} has no clip_id column; is it a HUG-VIS {config} shard?")
        row = 0
        for batch in handle.iter_batches(batch_size=LIST_BATCH_ROWS, columns=["clip_id"]):
            for clip in batch.column("clip_id").to_pylist():
                yield str(shard), row, clip
                row += 1


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


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


def looks_like_hub_id(text: str) -> bool:
    """``owner/name`` with Hub-legal characters (and not an existing local path).

    Example:
        >>> looks_like_hub_id("hugvis/hug-vis"), looks_like_hub_id("./release"), looks_like_hub_id("a/b/c")
        (True, False, False)
    """
    return bool(_HUB_ID.match(text)) and not Path(text).exists()


def download_repo(repo_id: str, revision: "str | None" = None, task: "str | None" = None) -> tuple[Path, str]:
    """Fetch a dataset repo from the Hub (card, manifest and the task's shards); (folder, commit).

    Raises:
        DatasetSourceError: offline, unknown repo or revision, gated without access.
    """
    try:
        from huggingface_hub import snapshot_download
    except ImportError as err:  # pragma: no cover - huggingface_hub ships with datasets
        raise DatasetSourceError(f"huggingface_hub is needed to read {repo_id} from the Hub: {err}") from None
    patterns = [HUB_CARD, HUB_MANIFEST, "checksums.sha256"]
    patterns += [f"data/{task}/*", "data/clips/*"] if task else ["data/*"]
    try:
        folder = Path(snapshot_download(repo_id, repo_type="dataset", revision=revision, allow_patterns=patterns))
    except Exception as err:  # noqa: BLE001 - offline, 401/404 and network errors all mean "cannot use it"
        raise DatasetSourceError(
            f"cannot fetch the dataset {repo_id!r} (revision {revision or 'main'}) from the Hugging Face Hub: "
            f"{type(err).__name__}: {err}. Without internet access, pass --dataset a local release tree or a "
            f"downloaded repo folder.") from None
    # Snapshot folders are named by the commit they hold: the exact revision scored.
    return folder, folder.name


def open_reference_source(dataset: "str | Path", task: "str | None" = None,
                          revision: "str | None" = None, verify: bool = True) -> ReferenceSource:
    """The reference source ``--dataset`` names: a release tree, a repo folder or a Hub id.

    Args:
        dataset: a release folder, a built repo folder, or a Hub id (``owner/name``).
        task: the task to score (a repo needs it to pick its config; a release ignores it
            except to choose which reference kinds :meth:`ReferenceSource.reference` returns).
        revision: Hub revision (branch, tag or commit) to fetch; only for Hub ids.
        verify: check a repo's shards against the sha256 of its manifest (see :class:`RepoSource`).

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
            return RepoSource(path, task, verify=verify)
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
        return RepoSource(folder, task, repo_id=text, revision=commit, verify=verify)
    raise DatasetSourceError(f"{text} does not exist (and is not a Hub id like hugvis/hug-vis)")

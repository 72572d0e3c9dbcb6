"""Build a Hub dataset repo (Parquet shards + dataset card) from a release tree.

``build_repo(RELEASE_DIR, REPO_DIR)`` writes::

    README.md                                dataset card; YAML `configs:` + `dataset_info`
    data/<config>/test-00000.parquet ...     one folder per config (schema.py), split `test`
    manifest.json                            shards with rows, bytes and sha256; build plan
    checksums.sha256                         `sha256sum -c` format, every file above

Design:

* Streaming: clips are read one at a time in grid order; rows are buffered only up to one row
  group (``row_group_bytes``) and shards roll over at ``shard_bytes``, so memory does not grow
  with the number of clips, and alpha mattes are encoded chunk by chunk.
* Self-contained: media bytes are embedded (video and audio exactly as released, alpha as a
  lossless video, see alpha.py), and every shard carries the ``datasets`` features in its Arrow
  schema metadata, so ``load_dataset`` sees Audio/Video/Image/ClassLabel without a script.
* Atomic and resumable: a shard is written to a ``.tmp`` name, closed, fsynced and renamed;
  only then is it recorded, with its sha256, in ``.hugvis-build/<config>.json``. A rerun with
  ``resume=True`` keeps recorded shards whose checksum still matches, deletes everything else in
  the config folder, and continues from the next clip. Shard boundaries depend only on the
  input and the options, so a resumed build is byte-identical to a clean one.
* Validated: the release must pass :func:`hug_vis_dataset.validate.validate_release`; with
  ``allow_invalid=True`` the clips with problems are left out and listed.

Example:
    >>> import tempfile, os
    >>> from hug_vis_dataset.synth import synthesize
    >>> root, repo = tempfile.mkdtemp(), os.path.join(tempfile.mkdtemp(), "repo")
    >>> _ = synthesize(root, actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.2,
    ...                size=(64, 36), systems=False)
    >>> from hug_vis_dataset.validate import GridSpec
    >>> report = build_repo(root, repo, grid=GridSpec.parse("actors=1,emotions=Happy,actions=1,scripts=1"))
    >>> report.rows["matting"], sorted(os.listdir(repo))
    (1, ['README.md', 'checksums.sha256', 'data', 'manifest.json'])
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from .. import __version__
from ..errors import HugvisError
from ..release import ClipRecord, Release
from .alpha import ALPHA_CODECS, DEFAULT_ALPHA_CODEC, encode_alpha
from .schema import CONFIG_COLUMNS, CONFIG_NAMES, check_config, features, media_columns

MANIFEST = "manifest.json"
CHECKSUMS = "checksums.sha256"
STATE_DIR = ".hugvis-build"
FORMAT_VERSION = 1
MiB = 1 << 20


class BuildError(HugvisError, RuntimeError):
    """The repo cannot be built (invalid release, foreign repo folder, nothing to build)."""


class BuildInterrupted(RuntimeError):
    """Raised by test hooks to simulate a crash; never raised by the builder itself."""


@dataclass(frozen=True)
class BuildOptions:
    """Knobs that change the bytes of the output (all are recorded in the manifest).

    Attributes:
        shard_bytes: a shard is closed once it reaches this size (the Hub recommends < 1 GB
            per Parquet file; large media rows make shards overshoot by at most one row group).
        row_group_bytes: a row group is flushed once its rows hold this many bytes. Streaming
            readers fetch one row group at a time, so this bounds their memory too.
        max_rows_per_group: flush after this many rows even when they are small.
        alpha_codec: key of :data:`hug_vis_dataset.hub.alpha.ALPHA_CODECS`.
    """

    shard_bytes: int = 500 * MiB
    row_group_bytes: int = 64 * MiB
    max_rows_per_group: int = 100
    alpha_codec: str = DEFAULT_ALPHA_CODEC

    def __post_init__(self) -> None:
        if self.shard_bytes <= 0 or self.row_group_bytes <= 0 or self.max_rows_per_group <= 0:
            raise BuildOptionsError(f"shard_bytes, row_group_bytes and max_rows_per_group must be positive: {self}")
        if self.alpha_codec not in ALPHA_CODECS:
            raise BuildOptionsError(f"unknown alpha codec {self.alpha_codec!r}; expected one of "
                                    f"{', '.join(ALPHA_CODECS)}")


class BuildOptionsError(HugvisError, ValueError):
    """A build option is out of range (a size that is not positive, an unknown codec)."""

    exit_code = 2


@dataclass(frozen=True)
class ShardEntry:
    """One committed shard, as recorded in the manifest."""

    file: str  # relative to the repo root, POSIX separators
    sha256: str
    bytes: int
    rows: int
    row_groups: int
    first_clip: str
    last_clip: str
    alpha_bytes: int = 0  # total size of the embedded alpha blobs (configs with alpha)


@dataclass
class BuildReport:
    """What a build produced (rows and shards per config) and what it left out."""

    repo_dir: str
    clips: int
    rows: dict[str, int] = field(default_factory=dict)
    shards: dict[str, list[ShardEntry]] = field(default_factory=dict)
    excluded: dict[str, list[str]] = field(default_factory=dict)
    reused_shards: int = 0
    written_shards: int = 0
    release_bytes: int = 0
    repo_bytes: int = 0

    def to_text(self) -> str:
        lines = [f"repo: {self.repo_dir}", f"clips: {self.clips}"]
        for config, count in self.rows.items():
            shards = self.shards.get(config, [])
            size = sum(s.bytes for s in shards)
            lines.append(f"  {config}: {count} rows in {len(shards)} shard(s), {size / MiB:.1f} MiB")
        lines.append(f"shards written: {self.written_shards}, reused from an earlier run: {self.reused_shards}")
        lines.append(f"release media: {self.release_bytes / MiB:.1f} MiB, repo: {self.repo_bytes / MiB:.1f} MiB")
        if self.excluded:
            lines.append(f"left out {len(self.excluded)} clip(s) that failed validation:")
            for clip, messages in self.excluded.items():
                lines.append(f"  {clip or '(release)'}: " + "; ".join(messages))
        return "\n".join(lines)


# ----------------------------------------------------------------------------- row making
def _read_bytes(path: Path) -> bytes:
    return Path(path).read_bytes()


def first_frame_png(video_path: "str | Path") -> bytes:
    """The first frame of a video as lossless RGB PNG bytes (deterministic)."""
    import cv2

    from ..media import iter_video_frames

    frame = next(iter_video_frames(video_path, chunk_frames=1))[0]
    ok, buf = cv2.imencode(".png", np.ascontiguousarray(frame[..., ::-1]), [cv2.IMWRITE_PNG_COMPRESSION, 6])
    if not ok:  # pragma: no cover - cv2 cannot fail on a uint8 RGB frame
        raise RuntimeError(f"PNG encoding of the first frame of {video_path} failed")
    return buf.tobytes()


def clip_row(config: str, record: ClipRecord, alpha_codec: str = DEFAULT_ALPHA_CODEC) -> dict:
    """The row of ``config`` for one clip, with media bytes embedded (Arrow-ready values).

    Example:
        >>> import tempfile
        >>> from hug_vis_dataset.synth import synthesize
        >>> from hug_vis_dataset.release import Release
        >>> root = tempfile.mkdtemp()
        >>> _ = synthesize(root, actors=1, emotions=["Sad"], actions=1, scripts=1, seconds=0.2,
        ...                size=(64, 36), systems=False)
        >>> row = clip_row("voice_cloning", next(iter(Release(root))))
        >>> row["speaker_id"], row["emotion"], row["reference_audio"]["path"]
        ('actor_0001', 'Sad', 'actor_0001_sad_action_01_script_001.wav')
    """
    from ..media import iter_alpha_frames

    columns = CONFIG_COLUMNS[check_config(config)]
    cid = record.cid
    clip = record.clip_id
    cache: dict[str, object] = {}

    def video() -> dict:
        if "video" not in cache:
            cache["video"] = {"bytes": _read_bytes(record.video_path), "path": f"{clip}.mp4"}
        return cache["video"]  # type: ignore[return-value]

    def audio() -> dict:
        if "audio" not in cache:
            cache["audio"] = {"bytes": _read_bytes(record.audio_path), "path": f"{clip}.wav"}
        return cache["audio"]  # type: ignore[return-value]

    def alpha() -> tuple[dict, int]:
        if "alpha" not in cache:
            blob, count = encode_alpha(iter_alpha_frames(record.alpha_matte_path), record.fps, alpha_codec)
            ext = ALPHA_CODECS[alpha_codec].extension
            cache["alpha"] = ({"bytes": blob, "path": f"{clip}.alpha.{ext}"}, count)
        return cache["alpha"]  # type: ignore[return-value]

    makers: dict[str, Callable[[], object]] = {
        "clip_id": lambda: clip,
        "actor_id": lambda: cid.actor_id,
        "emotion": lambda: cid.emotion.value,
        "action_id": lambda: cid.action_id,
        "script_id": lambda: cid.script_id,
        "label": lambda: cid.emotion.index,
        "transcript": lambda: record.transcript,
        "asr_transcript": lambda: record.asr_transcript,
        "target_text": lambda: record.transcript,
        "speaker_id": lambda: cid.actor,
        "video": video,
        "driving_video": video,
        "reference_video": video,
        "audio": audio,
        "driving_audio": audio,
        "reference_audio": audio,
        "alpha_matte": lambda: alpha()[0],
        "num_frames": lambda: alpha()[1],
        "source_frame": lambda: {"bytes": first_frame_png(record.video_path), "path": f"{clip}.png"},
        "fps": lambda: record.fps,
        "duration": lambda: record.duration,
        "sample_rate": lambda: record.sample_rate,
        "width": lambda: record.width,
        "height": lambda: record.height,
    }
    return {name: makers[name]() for name in columns}


def _row_bytes(row: dict, media: Sequence[str]) -> int:
    return sum(len(row[c]["bytes"]) for c in media if row.get(c) is not None) + 256


# ----------------------------------------------------------------------------- shard writing
def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


# What the builder writes inside data/<config>/: shards and their in-progress temporaries.
_OWN_SHARD = re.compile(r"^test-\d{5}\.parquet(\.tmp)?$")


def shard_name(config: str, index: int) -> str:
    """Repo-relative path of shard ``index`` of a config (matches ``data/<config>/test-*.parquet``)."""
    return f"data/{config}/test-{index:05d}.parquet"


class _ShardWriter:
    """Streams rows into size-bounded Parquet shards; calls ``commit`` for each finished shard."""

    def __init__(self, repo: Path, config: str, options: BuildOptions, start_index: int,
                 commit: Callable[[ShardEntry], None]):
        self.repo, self.config, self.options = repo, config, options
        self.index = start_index
        self.commit = commit
        self.features = features(config)
        self.schema = self.features.arrow_schema
        self.media = media_columns(config)
        self.rows: list[dict] = []
        self.buffered = 0
        self.writer = None
        self.tmp: "Path | None" = None
        self.shard_rows = 0
        self.shard_groups = 0
        self.first = self.last = ""
        self.alpha_bytes = 0

    def _open(self) -> None:
        import pyarrow.parquet as pq

        final = self.repo / shard_name(self.config, self.index)
        final.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = final.with_name(final.name + ".tmp")
        media_leaves = [f"{c}.bytes" for c in self.media]
        plain = [name for name in self.schema.names if name not in self.media]
        self.writer = pq.ParquetWriter(
            str(self.tmp),
            self.schema,
            # Media bytes are already compressed: compressing them again costs CPU for nothing.
            compression={**{c: "zstd" for c in plain}, **{leaf: "none" for leaf in media_leaves},
                         **{f"{c}.path": "zstd" for c in self.media}},
            use_dictionary=plain,
            write_statistics=plain,
        )
        self.shard_rows = self.shard_groups = self.alpha_bytes = 0

    def add(self, row: dict) -> None:
        self.rows.append(row)
        self.buffered += _row_bytes(row, self.media)
        if self.buffered >= self.options.row_group_bytes or len(self.rows) >= self.options.max_rows_per_group:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa

        if not self.rows:
            return
        if self.writer is None:
            self._open()
            self.first = self.rows[0]["clip_id"]
        table = pa.Table.from_pylist(self.rows, schema=self.schema)
        self.writer.write_table(table, row_group_size=len(self.rows))
        self.shard_rows += len(self.rows)
        self.shard_groups += 1
        self.last = self.rows[-1]["clip_id"]
        if "alpha_matte" in self.schema.names:
            self.alpha_bytes += sum(len(r["alpha_matte"]["bytes"]) for r in self.rows)
        self.rows, self.buffered = [], 0
        if self.tmp.stat().st_size >= self.options.shard_bytes:
            self._finish()

    def _finish(self) -> None:
        self.writer.close()
        self.writer = None
        with open(self.tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        final = self.repo / shard_name(self.config, self.index)
        entry = ShardEntry(
            file=shard_name(self.config, self.index),
            sha256=_sha256(self.tmp),
            bytes=self.tmp.stat().st_size,
            rows=self.shard_rows,
            row_groups=self.shard_groups,
            first_clip=self.first,
            last_clip=self.last,
            alpha_bytes=self.alpha_bytes,
        )
        os.replace(self.tmp, final)
        self.tmp = None
        self.index += 1
        self.commit(entry)

    def close(self) -> None:
        self._flush()
        if self.writer is not None:
            self._finish()


# ----------------------------------------------------------------------------- state
def _plan_hash(records: Sequence[ClipRecord], options: BuildOptions) -> str:
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


def _state_path(repo: Path, config: str) -> Path:
    return repo / STATE_DIR / f"{config}.json"


def _load_state(repo: Path, config: str, plan: str) -> list[ShardEntry]:
    """Shards of an earlier run that can be trusted: recorded, same plan, checksum intact, in order."""
    path = _state_path(repo, config)
    entries: list[dict] = []
    if path.is_file():
        state = json.loads(path.read_text(encoding="utf-8"))
        if state.get("plan") != plan:
            raise BuildError(f"{repo} holds a partial build of different input or options (plan "
                             f"{state.get('plan', '?')[:12]} vs {plan[:12]}); build into an empty folder")
        entries = state["shards"]
    elif (repo / MANIFEST).is_file():
        manifest = json.loads((repo / MANIFEST).read_text(encoding="utf-8"))
        if manifest.get("plan") != plan:
            raise BuildError(f"{repo} holds a build of different input or options; build into an empty folder")
        entries = manifest["configs"].get(config, {}).get("shards", [])
    trusted: list[ShardEntry] = []
    for index, raw in enumerate(entries):
        entry = ShardEntry(**raw)
        file = repo / entry.file
        # Shards are consecutive: one bad shard invalidates all later ones (their clip offsets).
        if entry.file != shard_name(config, index) or not file.is_file() or _sha256(file) != entry.sha256:
            break
        trusted.append(entry)
    return trusted


def _save_state(repo: Path, config: str, plan: str, shards: list[ShardEntry], release_sha: "str | None" = None) -> None:
    path = _state_path(repo, config)
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write_text(path, json.dumps({"plan": plan, "release_metadata_sha256": release_sha,
                                         "shards": [asdict(s) for s in shards]}, indent=1))


# ----------------------------------------------------------------------------- config job
@dataclass(frozen=True)
class _ConfigJob:
    config: str
    repo: str
    records: tuple[ClipRecord, ...]
    options: BuildOptions
    plan: str
    resume: bool
    on_shard: "Callable[[str, ShardEntry], None] | None" = None
    release_sha: "str | None" = None


def _build_config(job: _ConfigJob) -> tuple[str, list[ShardEntry], int]:
    """Write (or finish) every shard of one config; returns (config, shards, number reused)."""
    repo = Path(job.repo)
    folder = repo / "data" / job.config
    trusted = _load_state(repo, job.config, job.plan) if job.resume else []
    keep = {repo / s.file for s in trusted}
    if folder.is_dir():
        check_no_foreign_files(folder)  # never delete what the builder did not write
        for path in folder.iterdir():  # half-written .tmp files and unrecorded shards go
            if path not in keep:
                path.unlink()
    shards = list(trusted)
    done_rows = sum(s.rows for s in trusted)
    expected_last = job.records[done_rows - 1].clip_id if done_rows else ""
    if trusted and trusted[-1].last_clip != expected_last:
        raise BuildError(f"recorded shards of {job.config} do not line up with the release; build into an empty folder")
    _save_state(repo, job.config, job.plan, shards, job.release_sha)

    def commit(entry: ShardEntry) -> None:
        shards.append(entry)
        _save_state(repo, job.config, job.plan, shards, job.release_sha)
        if job.on_shard is not None:
            job.on_shard(job.config, entry)

    writer = _ShardWriter(repo, job.config, job.options, len(trusted), commit)
    for record in job.records[done_rows:]:
        writer.add(clip_row(job.config, record, job.options.alpha_codec))
    writer.close()
    return job.config, shards, len(trusted)


# ----------------------------------------------------------------------------- build
def select_clips(release_dir: "str | Path", allow_invalid: bool = False, num_proc: int = 1,
                 grid=None) -> tuple[Release, list[ClipRecord], dict[str, list[str]]]:
    """Validate a release and return (release, clips to build in grid order, left-out clips).

    Raises:
        BuildError: the release fails validation (and ``allow_invalid`` is False), has a
            release-level problem (unreadable metadata), or no clip is valid.
    """
    from ..validate import validate_release

    report = validate_release(release_dir, grid, num_proc=num_proc)
    excluded: dict[str, list[str]] = {}
    for problem in report.errors:  # warnings (e.g. unlisted files) do not exclude a clip
        excluded.setdefault(problem.clip_id, []).append(f"[{problem.check}] {problem.message}")
    if excluded and not allow_invalid:
        raise BuildError(f"release {release_dir} fails validation ({len(report.errors)} problem(s)); fix it or "
                         f"pass allow_invalid=True / --allow-invalid to build the valid subset\n" + _head(report.to_text()))
    if "" in excluded:
        raise BuildError(f"release {release_dir} has release-level problems: " + "; ".join(excluded[""]))
    release = Release(release_dir)
    records = [r for r in release if r.clip_id not in excluded]
    if not records:
        raise BuildError(f"release {release_dir} has no valid clip to build")
    return release, records, excluded


def _head(text: str, lines: int = 25) -> str:
    parts = text.splitlines()
    if len(parts) <= lines:
        return text
    return "\n".join(parts[:lines] + [f"... ({len(parts) - lines} more lines; run `hugvis validate`)"])


def build_repo(
    release_dir: "str | Path",
    repo_dir: "str | Path",
    num_proc: int = 1,
    allow_invalid: bool = False,
    resume: bool = False,
    options: "BuildOptions | None" = None,
    configs: "Sequence[str] | None" = None,
    on_shard: "Callable[[str, ShardEntry], None] | None" = None,
    grid=None,
) -> BuildReport:
    """Build (or, with ``resume``, finish) the Hub repo of a release tree.

    Args:
        release_dir: release tree (validated first).
        repo_dir: output folder; must be empty or absent unless ``resume``.
        num_proc: configs are written by this many processes; output is identical for any value.
        allow_invalid: build the clips without validation problems and report the rest.
        resume: keep the checksummed shards of an earlier (interrupted or finished) run.
        options: shard and row-group sizes, alpha codec.
        configs: subset of configs (default: all). The card lists only these.
        on_shard: called as ``on_shard(config, entry)`` after each committed shard (tests use it
            to simulate a crash); only honoured with ``num_proc=1``.
        grid: expected grid subset (:class:`hug_vis_dataset.validate.GridSpec`); default: the
            release's ``metadata/grid.json``, else the full grid.

    Returns:
        A :class:`BuildReport`.

    Raises:
        BuildError: invalid release (see :func:`select_clips`), or a non-empty ``repo_dir``
            without ``resume``, or a partial build of different input.
    """
    from .card import render_card

    options = options or BuildOptions()
    chosen = tuple(check_config(c) for c in (configs or CONFIG_NAMES))
    repo = Path(repo_dir)
    if repo.exists() and not repo.is_dir():
        raise BuildError(f"{repo} is a file; the repo folder must be a new or empty folder")
    release_sha = metadata_sha256(release_dir)
    if repo.exists() and any(repo.iterdir()):
        if not resume:
            raise BuildError(f"{repo} is not empty; pass resume=True / --resume to finish or refresh an earlier build")
        check_own_build(repo, release_sha)
        for config in chosen:  # before anything is written, so a refusal changes nothing
            if (repo / "data" / config).is_dir():
                check_no_foreign_files(repo / "data" / config)
    if num_proc > 1 and on_shard is not None:
        raise ValueError("on_shard hooks run only with num_proc=1")
    release, records, excluded = select_clips(release_dir, allow_invalid, num_proc, grid)
    repo.mkdir(parents=True, exist_ok=True)
    plan = _plan_hash(records, options)
    jobs = [_ConfigJob(c, str(repo), tuple(records), options, plan, resume, on_shard, release_sha) for c in chosen]
    if num_proc <= 1 or len(jobs) == 1:
        results = [_build_config(job) for job in jobs]
    else:
        from multiprocessing import get_context

        with get_context("spawn").Pool(min(num_proc, len(jobs))) as pool:
            results = pool.map(_build_config, jobs, chunksize=1)

    report = BuildReport(str(repo), len(records), excluded=excluded)
    for config, shards, reused in results:
        report.shards[config] = shards
        report.rows[config] = sum(s.rows for s in shards)
        report.reused_shards += reused
        report.written_shards += len(shards) - reused
        if report.rows[config] != len(records):  # pragma: no cover - guards the writer
            raise BuildError(f"{config} holds {report.rows[config]} rows, expected {len(records)}")
    report.release_bytes = release_media_bytes(records)

    card = render_card(records, report, options)
    _atomic_write_text(repo / "README.md", card)
    manifest = {
        "format": FORMAT_VERSION,
        "builder": f"hug-vis {__version__}",
        "release_metadata_sha256": release_sha,
        "plan": plan,
        "options": asdict(options),
        "clips": len(records),
        "excluded": excluded,
        "configs": {c: {"rows": report.rows[c], "shards": [asdict(s) for s in report.shards[c]]} for c in chosen},
    }
    _atomic_write_text(repo / MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    files = ["README.md", MANIFEST] + [s.file for c in chosen for s in report.shards[c]]
    lines = [f"{_sha256(repo / f)}  {f}" for f in files]
    _atomic_write_text(repo / CHECKSUMS, "\n".join(lines) + "\n")
    shutil.rmtree(repo / STATE_DIR, ignore_errors=True)
    report.repo_bytes = sum((repo / f).stat().st_size for f in files) + (repo / CHECKSUMS).stat().st_size
    return report


BUILDER_PREFIX = "hug-vis "


def metadata_sha256(release_dir: "str | Path") -> "str | None":
    """sha256 of the release's metadata CSV: which release a build was made from (None: no CSV)."""
    from ..layout import layout_for

    path = Path(release_dir) / layout_for(Path(release_dir)).metadata_csv
    return _sha256(path) if path.is_file() else None


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
            data = json.loads(path.read_text(encoding="utf-8"))
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


def check_no_foreign_files(folder: Path) -> None:
    """Refuse a config folder holding anything but our shards (and their temporaries)."""
    foreign = sorted(p.name for p in folder.iterdir() if not (p.is_file() and _OWN_SHARD.match(p.name)))
    if foreign:
        raise BuildError(f"{folder} holds {', '.join(foreign[:5])}{' ...' if len(foreign) > 5 else ''}, not "
                         f"written by hugvis build; move it out of the repo folder and rerun")


def release_media_bytes(records: Sequence[ClipRecord]) -> int:
    """Bytes of the media files (video, audio, alpha PNGs, transcript) of the given clips."""
    total = 0
    for r in records:
        total += r.video_path.stat().st_size + r.audio_path.stat().st_size
        total += sum(p.stat().st_size for p in r.alpha_matte_path.iterdir() if p.is_file())
    return total


def verify_repo(repo_dir: "str | Path") -> list[str]:
    """Check every file listed in ``checksums.sha256``; return the mismatching or missing files.

    Example:
        >>> verify_repo("/nonexistent")
        ['checksums.sha256']
    """
    repo = Path(repo_dir)
    listing = repo / CHECKSUMS
    if not listing.is_file():
        return [CHECKSUMS]
    bad = []
    for line in listing.read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        if not (repo / name).is_file() or _sha256(repo / name) != digest:
            bad.append(name)
    return bad


def iter_rows(repo_dir: "str | Path", config: str) -> Iterator[dict]:
    """Raw rows of a built config straight from its shards with pyarrow (media as bytes).

    Useful to inspect a repo without ``datasets``; memory holds one row group.
    """
    import pyarrow.parquet as pq

    check_config(config)
    for path in sorted((Path(repo_dir) / "data" / config).glob("test-*.parquet")):
        handle = pq.ParquetFile(path)
        for group in range(handle.num_row_groups):
            yield from handle.read_row_group(group).to_pylist()

"""Build a Hub dataset repo (Parquet shards + dataset card) from a release tree.

``build_repo(RELEASE_DIR, REPO_DIR)`` writes::

    README.md                                dataset card; YAML `configs:` + `dataset_info`
    data/<config>/test-00000.parquet ...     one folder per config (schema.py), split `test`
    manifest.json                            shards with rows, bytes and sha256; build plan; storage
    checksums.sha256                         `sha256sum -c` format, every file above

Design:

* Streaming: clips are read one at a time in grid order; rows are buffered only up to one row
  group (``row_group_bytes``) and shards roll over at ``shard_bytes``, so memory does not grow
  with the number of clips, and alpha mattes are encoded chunk by chunk.
* Self-contained: media bytes are embedded (video and audio exactly as released, alpha as a
  lossless video, see alpha.py), and every shard carries the ``datasets`` features in its Arrow
  schema metadata, so ``load_dataset`` sees Audio/Video/Image/ClassLabel without a script.
* Atomic and resumable: a shard is written to a ``.tmp`` name in a staging folder, closed, fsynced
  and put in place; only then is it recorded, with its sha256, in ``.hugvis-build/<config>.json``.
  A rerun with ``resume=True`` keeps recorded shards whose checksum still matches, deletes the
  other shards it wrote in the config folder, and continues from the next clip.
* Guarded: the repo folder is the build's one output (:func:`hug_vis_dataset.outputs.claim`): never
  the release or inside it, a new or empty folder or an earlier build's, and the build replaces or
  deletes only files it wrote (the output's ledger), unchanged since. Shard boundaries depend only on the
  input and the options, so a resumed build is byte-identical to a clean one.
* Measured: media shared between configs and the shards' size after chunk-level dedup (what
  the Hub's Xet storage keeps) go into the report, the manifest and the card (:mod:`.dedup`).
* Validated: the release must pass :func:`hug_vis_dataset.validate.validate_release`; with
  ``allow_invalid=True`` the clips with problems are left out and listed.

This module plans and runs a build; the rows come from :mod:`~hug_vis_dataset.hub.rows`, the shards
are written by :mod:`~hug_vis_dataset.hub.shards`, the resume state lives in
:mod:`~hug_vis_dataset.hub.state`, the card is :mod:`~hug_vis_dataset.hub.card`.

Example:
    >>> import tempfile, os
    >>> from hug_vis_dataset.synth import synthesize
    >>> root, repo = tempfile.mkdtemp(), os.path.join(tempfile.mkdtemp(), "repo")
    >>> _ = synthesize(root, actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.2,
    ...                size=(64, 36), systems=False)
    >>> from hug_vis_dataset.validate import GridSpec
    >>> report = build_repo(root, repo, grid=GridSpec.parse("actors=1,emotions=Happy,actions=1,scripts=1"))
    >>> report.rows["matting"], sorted(os.listdir(repo))
    (1, ['.hugvis-files.jsonl', '.hugvis-output.json', 'README.md', 'checksums.sha256', 'data', 'manifest.json'])
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

from .. import __version__, stopping
from ..hashing import sha256_file
from ..outputs import GUARD_FILES, Output, claim, clean_transients, discard, read_marker, transient_folder
from ..datamodel.release import ClipRecord, Release
from .build_info import (CHECKSUMS, FORMAT_VERSION, MANIFEST, STATE_DIR, BuildError, BuildOptions, BuildReport,
                         ShardEntry)
from .card import render_card
from .rows import clip_row
from .schema import CONFIG_NAMES, check_config
from .shards import ShardWriter, check_no_foreign_files
from .state import check_own_build, load_state, metadata_sha256, plan_hash, save_state


# ----------------------------------------------------------------------------- config job
@dataclass(frozen=True)
class _ConfigJob:
    config: str
    output: Output
    staging: str
    records: tuple[ClipRecord, ...]
    options: BuildOptions
    plan: str
    resume: bool
    on_shard: "Callable[[str, ShardEntry], None] | None" = None
    release_sha: "str | None" = None


def _build_config(job: _ConfigJob) -> tuple[str, list[ShardEntry], int]:
    """Write (or finish) every shard of one config; returns (config, shards, number reused)."""
    repo = job.output.root
    folder = repo / "data" / job.config
    trusted = load_state(repo, job.config, job.plan) if job.resume else []
    keep = {repo / s.file for s in trusted}
    if folder.is_dir():
        check_no_foreign_files(folder)  # never delete what the builder did not write
        for path in sorted(folder.iterdir()):  # unrecorded shards go (the guard: only ours, unchanged)
            if path not in keep:
                job.output.remove(path.relative_to(repo).as_posix())
    shards = list(trusted)
    done_rows = sum(s.rows for s in trusted)
    expected_last = job.records[done_rows - 1].clip_id if done_rows else ""
    if trusted and trusted[-1].last_clip != expected_last:
        raise BuildError(f"recorded shards of {job.config} do not line up with the release; build into an empty folder")
    save_state(repo, job.config, job.plan, shards, job.release_sha)

    def commit(entry: ShardEntry) -> None:
        shards.append(entry)
        save_state(repo, job.config, job.plan, shards, job.release_sha)
        if job.on_shard is not None:
            job.on_shard(job.config, entry)

    writer = ShardWriter(job.output, Path(job.staging), job.config, job.options, len(trusted), commit)
    try:
        for record in job.records[done_rows:]:
            writer.add(clip_row(job.config, record, job.options.alpha_codec))
        writer.close()
    except BaseException:
        writer.abort()  # the half-written shard goes; the recorded ones are the resume state
        raise
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
    measure_storage: bool = True,
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
        measure_storage: measure media repeated across configs and the size after chunk-level
            dedup (:func:`hug_vis_dataset.hub.dedup.storage_report`; reads the shards once more).

    Returns:
        A :class:`BuildReport`.

    Raises:
        BuildError: invalid release (see :func:`select_clips`), or a non-empty ``repo_dir``
            without ``resume``, or a partial build of different input.
    """
    options = options or BuildOptions()
    chosen = tuple(check_config(c) for c in (configs or CONFIG_NAMES))
    repo = Path(repo_dir)
    if repo.exists() and not repo.is_dir():
        raise BuildError(f"{repo} is a file; the repo folder must be a new or empty folder")
    # A non-empty folder is refused below unless it is an earlier build being resumed, so no --into-existing.
    output = claim("hugvis build", repo, "dataset-repo", label="REPO_DIR", inputs=[("RELEASE_DIR", release_dir)],
                   into_existing=True)
    if output.root.is_dir() and read_marker(output.root) is not None:
        clean_transients(output.root)  # the staging folder a killed build left
    release_sha = metadata_sha256(release_dir)
    if repo.exists() and any(p.name not in GUARD_FILES for p in repo.iterdir()):
        if not resume:
            raise BuildError(f"{repo} is not empty; pass resume=True / --resume to finish or refresh an earlier build")
        check_own_build(repo, release_sha)
        for config in chosen:  # before anything is written, so a refusal changes nothing
            if (repo / "data" / config).is_dir():
                check_no_foreign_files(repo / "data" / config)
                # A resume may delete or rewrite any shard of the config: each must be one the build
                # wrote, unchanged since (a damaged shard is named: delete it to have it rebuilt).
                output.check_replaceable(sorted(f"data/{config}/{p.name}" for p in (repo / "data" / config).iterdir()),
                                         doing="rewrite")
    if num_proc > 1 and on_shard is not None:
        raise ValueError("on_shard hooks run only with num_proc=1")
    release, records, excluded = select_clips(release_dir, allow_invalid, num_proc, grid)
    output.ensure()
    plan = plan_hash(records, options)
    # Shards are written in a staging folder of the repo and put in place whole; a stop or an error
    # removes it with what a killed worker was writing (recorded shards stay: the resume state).
    try:
        with transient_folder(output.root, "staging", str(output.root)) as staging:
            jobs = [_ConfigJob(c, output, str(staging), tuple(records), options, plan, resume, on_shard, release_sha)
                    for c in chosen]
            results = _run_config_jobs(jobs, num_proc)
    except BaseException:
        # A worker killed while it saved the resume state leaves that state file's temporary behind.
        for leftover in sorted((output.root / STATE_DIR).glob(".partial-*")):
            discard(leftover)
        raise

    report = BuildReport(str(repo), len(records), excluded=excluded, synthetic=release.synthetic)
    for config, shards, reused in results:
        report.shards[config] = shards
        report.rows[config] = sum(s.rows for s in shards)
        report.reused_shards += reused
        report.written_shards += len(shards) - reused
        if report.rows[config] != len(records):  # pragma: no cover - guards the writer
            raise BuildError(f"{config} holds {report.rows[config]} rows, expected {len(records)}")
    report.release_bytes = release_media_bytes(records)
    if measure_storage:
        from .dedup import storage_report  # numba-compiled chunker: imported only when measuring

        report.storage = storage_report(repo, report.release_bytes)

    card = render_card(records, report, options)
    output.write_text("README.md", card)
    manifest = {
        "format": FORMAT_VERSION,
        "builder": f"hug-vis {__version__}",
        "release_metadata_sha256": release_sha,
        # Runs scored against this repo inherit it, so the leaderboard keeps them out of the paper's pool.
        "synthetic": report.synthetic,
        "plan": plan,
        "options": asdict(options),
        "clips": len(records),
        "excluded": excluded,
        "configs": {c: {"rows": report.rows[c], "shards": [asdict(s) for s in report.shards[c]]} for c in chosen},
        "storage": report.storage.to_dict() if report.storage is not None else None,
    }
    output.write_text(MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    files = ["README.md", MANIFEST] + [s.file for c in chosen for s in report.shards[c]]
    # Each shard's sha256 was taken when it was written (or checked when it was reused): not read again.
    digests = {s.file: s.sha256 for c in chosen for s in report.shards[c]}
    lines = [f"{digests.get(f) or sha256_file(repo / f)}  {f}" for f in files]
    output.write_text(CHECKSUMS, "\n".join(lines) + "\n")
    discard(output.root / STATE_DIR)
    report.repo_bytes = sum((repo / f).stat().st_size for f in files) + (repo / CHECKSUMS).stat().st_size
    return report


def _run_config_jobs(jobs: "list[_ConfigJob]", num_proc: int) -> list:
    if num_proc <= 1 or len(jobs) == 1:
        return [_build_config(job) for job in jobs]
    # The one rule for workers (stopping.worker_pool): on a stop, leaving the block terminates and joins them,
    # and the caller removes the shard each was writing.
    with stopping.worker_pool(num_proc, len(jobs)) as pool:
        return list(stopping.pool_results(pool.imap(_build_config, jobs, chunksize=1)))  # a stop raised at once


def stop_note(repo: "str | Path", resume: bool) -> str:
    """What a stopped build keeps (its checksummed shards) and how to finish it (the stop line's note).

    Example:
        >>> stop_note("/nonexistent/repo", resume=False)
        '0 shard(s) kept in /nonexistent/repo; run the same command with --resume to finish the build'
    """
    repo = Path(repo)
    shards = len(list(repo.glob("data/*/test-*.parquet"))) if repo.is_dir() else 0
    again = "run the same command again" if resume else "run the same command with --resume"
    return f"{shards} shard(s) kept in {repo}; {again} to finish the build"


def release_media_bytes(records: Sequence[ClipRecord]) -> int:
    """Bytes of the media files (video, audio, alpha PNGs) of the given clips."""
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
        if not (repo / name).is_file() or sha256_file(repo / name) != digest:
            bad.append(name)
    return bad


def iter_rows(repo_dir: "str | Path", config: str) -> Iterator[dict]:
    """Raw rows of a built config straight from its shards with pyarrow (media as bytes).

    Useful to inspect a repo without ``datasets``; memory holds one row group.
    """
    from .loading import config_shards, open_shard

    check_config(config)
    for path in config_shards(repo_dir, config):
        handle = open_shard(path, config)  # footer checked: a foreign shard is named, not read
        for group in range(handle.num_row_groups):
            yield from handle.read_row_group(group).to_pylist()

"""The checks of a release tree: metadata rows, every clip's media, completeness against the grid.

:func:`validate_release` is the entry point (see :mod:`hug_vis_dataset.validate`); each clip is
checked by :func:`check_clip`, in worker processes with ``num_proc > 1`` (results keep grid order).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from ..outputs import GUARD_FILES
from ..datamodel.grid import parse_emotion
from ..datamodel.layout import SIMULATED_SYSTEMS_DIR, SYNTHETIC_MARKER, ReleaseLayout, layout_for
from ..readers.media import MediaError, alpha_frame_files, audio_info, read_png_gray, video_info
from ..datamodel.release import ClipRecord, Release, ReleaseError
from ..readers.textio import TextEncodingError
from .gridspec import GRID_DECLARATION, GridSpec, expected_grid
from .report import WARNING, Problem, ValidationReport


def _check_row_fields(record: ClipRecord, row: dict, layout: ReleaseLayout) -> list[str]:
    """Disagreements between the id, the grid columns and the paths of one CSV row."""
    cid = record.cid
    issues: list[str] = []
    try:
        if int(row["actor_id"].removeprefix("actor_")) != cid.actor_id:
            issues.append(f"actor_id column {row['actor_id']!r} disagrees with the id")
        if parse_emotion(row["emotion"]) is not cid.emotion:
            issues.append(f"emotion column {row['emotion']!r} disagrees with the id")
        if int(str(row["action_id"]).removeprefix("action_")) != cid.action_id:
            issues.append(f"action_id column {row['action_id']!r} disagrees with the id")
        if int(str(row["script_id"]).removeprefix("script_")) != cid.script_id:
            issues.append(f"script_id column {row['script_id']!r} disagrees with the id")
    except ValueError as err:
        issues.append(f"bad grid column: {err}")
    for column, expected in (
        ("audio_path", layout.audio_path(cid)),
        ("video_path", layout.video_path(cid)),
        ("alpha_matte_path", layout.alpha_dir_path(cid)),
    ):
        if row[column].rstrip("/") != expected:
            issues.append(f"{column} is {row[column]!r}, the layout puts this clip at {expected!r}")
    return issues


def check_clip(record: ClipRecord, layout: ReleaseLayout) -> list[Problem]:
    """Read every file of one clip; return its problems (never raises for bad media)."""
    clip = record.clip_id
    problems: list[Problem] = []

    def add(check: str, message: str) -> None:
        problems.append(Problem(clip, check, message))

    frame_duration = 1.0 / record.fps if record.fps > 0 else 0.0
    if record.fps <= 0:
        add("metadata", f"fps {record.fps} is not positive")
    if abs(record.fps - layout.expected_fps) > 1e-6:
        add("metadata", f"fps {record.fps} differs from the release's {layout.expected_fps}")

    # video
    video = None
    if not record.video_path.is_file():
        add("video", f"missing video file {record.video_path}")
    else:
        try:
            video = video_info(record.video_path)
        except MediaError as err:
            add("video", f"unreadable video: {err}")
    if video is not None:
        if (video.width, video.height) != (record.width, record.height):
            add("resolution", f"video is {video.width}x{video.height}, CSV says {record.resolution}")
        if abs(video.fps - record.fps) > 1e-3:
            add("video", f"video is {video.fps:g} fps, CSV says {record.fps:g}")
        if frame_duration and abs(video.frames / record.fps - record.duration) > frame_duration + 1e-9:
            add("duration", f"video lasts {video.frames / record.fps:.3f} s, CSV says {record.duration:.3f} s")
        if video.frames == 0:
            add("video", "video has no frames")

    # alpha
    alpha_frames = None
    if not record.alpha_matte_path.is_dir():
        add("alpha", f"missing alpha matte folder {record.alpha_matte_path}")
    else:
        try:
            files = alpha_frame_files(record.alpha_matte_path)
        except MediaError as err:
            add("alpha", str(err))
            files = {}
        if files:
            alpha_frames = len(files)
            gaps = sorted(set(range(max(files) + 1)) - set(files))
            if gaps:
                add("alpha", f"alpha frames missing: {_short(gaps)}")
            bad_shape = 0
            for index in sorted(files):
                try:
                    frame = read_png_gray(files[index])
                except MediaError as err:
                    add("alpha", f"frame {index}: {err}")
                    continue
                if frame.shape != (record.height, record.width):
                    bad_shape += 1
                    if bad_shape == 1:
                        add("resolution", f"alpha frame {index} is {frame.shape[1]}x{frame.shape[0]}, "
                                          f"CSV says {record.resolution}")
            if bad_shape > 1:
                add("resolution", f"{bad_shape} alpha frames in all have the wrong size")
        elif record.alpha_matte_path.is_dir():
            add("alpha", "alpha matte folder holds no frames")
    if video is not None and alpha_frames is not None and video.frames != alpha_frames:
        add("frame_count", f"video has {video.frames} frames, alpha matte has {alpha_frames}")

    # audio
    if not record.audio_path.is_file():
        add("audio", f"missing audio file {record.audio_path}")
    else:
        try:
            samples, rate, _channels = audio_info(record.audio_path)
            if rate != record.sample_rate:
                add("audio", f"audio is {rate} Hz, CSV says {record.sample_rate} Hz")
            if layout.expected_sample_rate and rate != layout.expected_sample_rate:
                add("audio", f"audio is {rate} Hz, the release uses {layout.expected_sample_rate} Hz")
            audio_seconds = samples / rate if rate else 0.0
            reference = video.frames / record.fps if video is not None and record.fps > 0 else record.duration
            if frame_duration and abs(audio_seconds - reference) > frame_duration:
                add("duration", f"audio lasts {audio_seconds:.3f} s, video {reference:.3f} s (more than one frame apart)")
            _read_all_audio(record.audio_path)
        except MediaError as err:
            add("audio", f"unreadable audio: {err}")

    rgba = record.rgba_foreground_path
    if rgba is not None and not rgba.exists():
        add("rgba_foreground", f"rgba_foreground_path {rgba} does not exist")
    return problems


def _read_all_audio(path: Path) -> None:
    """Decode the whole file: a truncated data chunk fails here even when the header is fine."""
    import soundfile as sf

    try:
        with sf.SoundFile(str(path)) as handle:
            declared = handle.frames
            read = 0
            for block in handle.blocks(blocksize=65536, dtype="float32"):
                read += len(block)
    except (sf.LibsndfileError, RuntimeError, OSError) as err:
        raise MediaError(f"cannot decode {path}: {err}") from err
    if read != declared:
        raise MediaError(f"{path} declares {declared} samples but holds {read}")


def _short(values: Sequence[int], limit: int = 8) -> str:
    shown = ", ".join(str(v) for v in values[:limit])
    return shown + (f" ... ({len(values)} in all)" if len(values) > limit else "")


def _outside_links(record: ClipRecord, root: Path, transcript: Path) -> list[Problem]:
    """Media of the clip that resolve outside the release (a symlink leaving the tree): a build
    would embed a file that is not part of the release."""
    base = root.resolve()
    paths = [record.audio_path, record.video_path, record.alpha_matte_path, transcript]
    if record.rgba_foreground_path is not None:
        paths.append(record.rgba_foreground_path)
    if record.alpha_matte_path.is_dir():
        paths += sorted(record.alpha_matte_path.iterdir())
    problems = []
    for path in paths:
        if not os.path.lexists(path):
            continue
        target = Path(os.path.realpath(path))
        if target != base and base not in target.parents:
            rel = _relative(path, root)
            problems.append(Problem(record.clip_id, "symlink",
                                    f"{rel} is a link to {target}, outside the release; copy the file into the "
                                    f"release instead of linking it"))
    return problems


def _relative(path: Path, root: Path) -> str:
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return str(path)


#: The release's metadata files besides the CSV, each read by some part of the toolkit (the layout
#: file by :func:`~hug_vis_dataset.datamodel.layout.layout_for`, which spells its path in place).
METADATA_FILES: tuple[str, ...] = ("metadata/layout.json", GRID_DECLARATION, SYNTHETIC_MARKER)


def unlisted_media(release: Release, layout: ReleaseLayout, limit: int = 50) -> list[Problem]:
    """Warnings for every path of the release tree that neither a CSV row nor the layout accounts
    for: a stray clip's MP4, junk in an alpha folder, a file or folder at the top level or in
    the metadata folder that the release does not have. Not errors, but a build leaves them out,
    so they are worth a look.

    The whole tree is walked, links not followed. Known at the top level: the top folders of the
    layout's media templates (``audio/``, ``video_processed/`` ...) and of its metadata CSV
    (walked), a synthetic tree's ``simulated_systems/`` and the first folder of templated paths
    (not walked: their contents are not the release's files to list). Any other top-level entry
    is one warning, a folder as a whole.
    """
    root = release.root
    listed: set[Path] = {root / layout.metadata_csv} | {root / name for name in METADATA_FILES}
    alpha_dirs: set[Path] = set()
    for record in release.records.values():
        listed.update({record.audio_path, record.video_path, root / layout.transcript_path(record.cid)})
        if record.rgba_foreground_path is not None:
            listed.add(record.rgba_foreground_path)
        alpha_dirs.add(record.alpha_matte_path)
    media_tops = {t.split("/", 1)[0] for t in (layout.audio, layout.video, layout.alpha_dir, layout.transcript,
                                                layout.rgba_foreground) if "{" not in t.split("/", 1)[0]}
    walked = media_tops | {layout.metadata_csv.split("/", 1)[0]}
    # A templated top folder (``{actor}/...``) holds listed files the walk of media_tops never reaches.
    opaque = {SIMULATED_SYSTEMS_DIR} | {_relative(p, root).split("/", 1)[0] for p in listed} - walked
    alpha_top = layout.alpha_dir.split("/", 1)[0]
    found: list[Problem] = []
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        top = "" if here == root else _relative(here, root).split("/", 1)[0]
        if here == root:  # an unknown top-level folder is one finding, its contents are not walked
            for name in sorted(set(dirs) - walked - opaque):
                found.append(Problem("", "unlisted", f"{name}/ is not a folder of the release layout; remove it or "
                                                     f"move it out of the release", WARNING))
            dirs[:] = set(dirs) & walked
        dirs.sort()
        frames = [n for n in files if _is_frame_name(layout, n)]
        if files and here not in alpha_dirs and top == alpha_top and len(frames) == len(files):
            # A whole alpha folder no row lists: one finding, not one per frame.
            found.append(Problem("", "unlisted", f"{_relative(here, root)}/ ({len(files)} frames) is not listed "
                                                 f"in {layout.metadata_csv}; remove it or add its clip", WARNING))
            continue
        for name in sorted(files):
            path = here / name
            if path in listed or (here == root and name in GUARD_FILES):  # the output guard's marker and ledger
                continue
            if here in alpha_dirs:
                if _is_frame_name(layout, name):
                    continue
                message = f"{_relative(path, root)} in an alpha folder is not a frame PNG; remove it or add its clip"
            elif top in media_tops:
                message = f"{_relative(path, root)} is not listed in {layout.metadata_csv}; remove it or add its clip"
            else:
                message = (f"{_relative(path, root)} is not a file of the release layout; remove it or move it out "
                           f"of the release")
            found.append(Problem("", "unlisted", message, WARNING))
    if len(found) > limit:
        more = len(found) - limit
        found = found[:limit] + [Problem("", "unlisted", f"... and {more} more unlisted file(s)", WARNING)]
    return found


def _is_frame_name(layout: ReleaseLayout, name: str) -> bool:
    try:
        layout.alpha_frame_index(name)
    except ValueError:
        return False
    return True


def _check_clip_job(job: tuple[ClipRecord, ReleaseLayout, Path]) -> list[Problem]:
    record, layout, root = job
    problems = check_clip(record, layout)
    problems += _outside_links(record, root, root / layout.transcript_path(record.cid))
    transcript = root / layout.transcript_path(record.cid)
    if not transcript.is_file():
        problems.append(Problem(record.clip_id, "transcript", f"missing transcript file {transcript}"))
    else:
        try:
            text = transcript.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as err:
            problems.append(Problem(record.clip_id, "transcript", f"unreadable transcript {transcript}: {err}"))
        else:
            if text != record.transcript.strip():
                problems.append(Problem(record.clip_id, "transcript", "transcript file differs from the CSV transcript"))
    return problems


def validate_release(
    root: "str | Path",
    grid: "GridSpec | None" = None,
    layout: "ReleaseLayout | None" = None,
    num_proc: int = 1,
    progress: bool = False,
) -> ValidationReport:
    """Validate a release tree; see the module docstring for the checks."""
    root = Path(root)
    layout = layout_for(root, layout)
    spec = expected_grid(root, grid)
    expected = spec.clip_ids()
    report = ValidationReport(str(root), len(expected), 0)
    try:
        release = Release(root, layout)
    except (ReleaseError, TextEncodingError) as err:
        report.problems.append(Problem("", "metadata", str(err)))
        return report

    for line, clip_id, message in release.row_errors:
        report.problems.append(Problem(clip_id, "metadata", f"CSV line {line}: {message}"))
    for line, clip_id in release.duplicates:
        report.problems.append(Problem(clip_id, "duplicate", f"CSV line {line} repeats clip id {clip_id}"))
    rows_by_id = {}
    for number, row in zip(release.row_lines, release.rows):
        rows_by_id.setdefault(row.get("clip_id", ""), (number, row))
    for record in release:
        _number, row = rows_by_id[record.clip_id]
        for message in _check_row_fields(record, row, layout):
            report.problems.append(Problem(record.clip_id, "metadata", message))
        if record.clip_id != layout.clip_id(record.cid):
            report.problems.append(Problem(record.clip_id, "metadata",
                                           f"id spelled {record.clip_id!r}; this release spells it "
                                           f"{layout.clip_id(record.cid)!r}"))

    expected_set = set(expected)
    present = set(release.records)
    for cid in expected:
        if cid not in present:
            report.problems.append(Problem(layout.clip_id(cid), "missing", "clip of the grid has no CSV row"))
    for cid in sorted(present - expected_set):
        report.problems.append(Problem(layout.clip_id(cid), "extra", "CSV row for a clip outside the expected grid"))

    jobs = [(record, layout, root) for record in release]
    results = _map(_check_clip_job, jobs, num_proc, progress)
    for problems in results:
        report.problems.extend(problems)
    report.problems += unlisted_media(release, layout)
    report.checked_clips = len(jobs)
    return report


def _map(func, jobs: list, num_proc: int, progress: bool) -> list:
    """Ordered map, optionally over processes (results keep the input order)."""
    from tqdm.auto import tqdm

    if num_proc <= 1:
        return [func(job) for job in tqdm(jobs, desc="validate", disable=not progress, unit="clip")]
    from .. import stopping

    # The one rule for workers (stopping.worker_pool): no more than the clips, ended however the block is left.
    with stopping.worker_pool(num_proc, len(jobs)) as pool:
        return list(tqdm(stopping.pool_results(pool.imap(func, jobs, chunksize=1)), total=len(jobs), desc="validate",
                         disable=not progress, unit="clip"))

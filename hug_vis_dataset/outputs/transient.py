"""Transient folders: where work happens before it is put in place, each with a locked marker.

A results store (``RESULTS/<task>/<model>/``) only ever changes by a rename: a run is scored in a
folder of its own beside the run it adds or replaces, and moved into place when it is complete
(:meth:`hug_vis_dataset.outputs.guard.Output.replace_unit`); a tree output (a report, a synthetic
release) is written in a staging folder and merged in (:meth:`~hug_vis_dataset.outputs.guard.Output.staged`).
Those folders are *transient*: their names start with a dot (so no reader takes them for a run,
:func:`is_run_folder_name`) and they hold a marker file, :data:`MARKER`, locked (``flock``) by
the process working in them. A store that opens removes the transient folders whose marker no
live process holds (:func:`clean_transients`): leftovers of a crash, and only ours, so a folder
without our marker is never deleted.

Kinds: ``staging`` (an upload scored before it is added, a tree output before its merge), ``incoming``
(a run being copied into a store), ``retired`` (a replaced run or prediction on its way out) and ``work`` (``.work-<model>``, the
runner's folder of a run in progress; it is kept after a crash, because it is what the next run
resumes from, and removed once its run is in place); ``scratch`` is a folder of the system's temporary
space the toolkit made for itself (:func:`scratch_folder`: the Space's work folder, extracted uploads);
``cache`` is a cache folder of the toolkit's (the feature cache: :func:`mark_cache`), kept.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> with transient_folder(root, "staging") as stage:
    ...     stage.name.startswith(".staging-"), is_run_folder_name(stage.name)
    (True, False)
    >>> sorted(p.name for p in root.iterdir())
    []
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import uuid
from pathlib import Path
from typing import Iterator

from ..readers.json_files import read_json
from .files import make_folder, remove_path

MARKER = ".hugvis-transient"
KINDS: tuple[str, ...] = ("staging", "incoming", "retired", "work", "scratch", "cache")
#: Kinds that are removed when no process holds them (``work`` is a resume point: kept).
CLEANED_KINDS: tuple[str, ...] = ("staging", "incoming", "retired")


class FolderBusyError(OSError):
    """Another live process holds this transient folder."""


def is_run_folder_name(name: str) -> bool:
    """Whether a folder name can be a task or a run (transient and hidden folders cannot).

    Example:
        >>> is_run_folder_name("matting"), is_run_folder_name(".incoming-3f2a"), is_run_folder_name(".work-m")
        (True, False, False)
    """
    return bool(name) and not name.startswith(".")


def _lock(handle) -> bool:
    import fcntl

    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        if err.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        raise
    return True


@contextlib.contextmanager
def hold(folder: "str | Path", kind: str, target: str = "") -> Iterator[Path]:
    """Mark ``folder`` as a transient folder of ``kind`` and hold its lock while the block runs.

    The folder is created if needed. ``target`` (what the folder becomes or came from) is
    recorded in the marker for whoever inspects a leftover.

    Raises:
        FolderBusyError: another live process holds the folder.
    """
    if kind not in KINDS:
        raise ValueError(f"unknown transient kind {kind!r}")
    folder = make_folder(folder)
    marker = folder / MARKER
    handle = open(marker, "a+", encoding="utf-8")
    try:
        if not _lock(handle):
            raise FolderBusyError(errno.EBUSY, f"{folder} is in use by another process", str(folder))
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"kind": kind, "pid": os.getpid(), "target": target}))
        handle.flush()
        yield folder
    finally:
        handle.close()  # releases the lock


@contextlib.contextmanager
def transient_folder(parent: "str | Path", kind: str, target: str = "", keep: bool = False) -> Iterator[Path]:
    """A new folder ``parent/.<kind>-<uuid>``, held while the block runs, then removed.

    With ``keep`` the folder is left in place (its caller renamed it or moved its contents).
    """
    parent = make_folder(parent)
    folder = parent / f".{kind}-{uuid.uuid4().hex}"
    folder.mkdir()
    try:
        with hold(folder, kind, target):
            yield folder
    finally:
        if not keep and folder.exists():
            remove_path(folder)


def _marker_kind(folder: Path) -> "str | None":
    try:
        data = read_json(folder / MARKER, expect=None)
    except (OSError, ValueError):
        # A marker file that exists but is empty or half-written is still ours (written by hold()).
        return "unknown" if (folder / MARKER).is_file() else None
    return data.get("kind", "unknown") if isinstance(data, dict) else "unknown"


def clean_transients(root: "str | Path") -> list[Path]:
    """Remove the leftover transient folders of a store (``root`` and ``root/<task>/``).

    Only folders that carry :data:`MARKER`, are of a :data:`CLEANED_KINDS` kind (or a marker
    that cannot be read) and are held by no live process are removed. Returns what was removed.
    """
    root = Path(root)
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    candidates = [p for p in root.iterdir() if p.is_dir() and p.name.startswith(".")]
    for task in root.iterdir():
        if task.is_dir() and is_run_folder_name(task.name):
            candidates += [p for p in task.iterdir() if p.is_dir() and p.name.startswith(".")]
    for folder in candidates:
        kind = _marker_kind(folder)
        if kind is None or (kind not in CLEANED_KINDS and kind != "unknown"):
            continue
        try:
            with open(folder / MARKER, "a+", encoding="utf-8") as handle:
                if not _lock(handle):
                    continue  # somebody is working in it
                remove_path(folder)
        except OSError:
            continue
        removed.append(folder)
    return removed


def scratch_folder(prefix: str = "hugvis-", parent: "str | Path | None" = None) -> Path:
    """A new folder in the temporary space (or in ``parent``) that carries the transient marker of kind
    ``scratch``, so the guard knows what is in it is the toolkit's. The caller removes it (or
    :func:`scratch` does).

    >>> folder = scratch_folder(); is_transient(folder)
    True
    """
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=None if parent is None else str(make_folder(parent))))
    (folder / MARKER).write_text(json.dumps({"kind": "scratch", "pid": os.getpid()}), encoding="utf-8")
    return folder


@contextlib.contextmanager
def scratch(prefix: str = "hugvis-", parent: "str | Path | None" = None) -> Iterator[Path]:
    """A :func:`scratch_folder` for the block, removed afterwards (also on a stop).

    >>> with scratch() as folder:
    ...     is_transient(folder)
    True
    >>> folder.exists()
    False
    """
    from .. import stopping

    folder = scratch_folder(prefix, parent)
    key = stopping.register_removal(folder)
    try:
        yield folder
    finally:
        remove_path(folder)
        stopping.unregister_removal(key)


def mark_scratch(folder: "str | Path") -> Path:
    """Make ``folder`` (created if needed) a scratch folder of the toolkit's, like :func:`scratch_folder`
    but at a name the caller chose (a queue mirror under the worker's ``--work-dir``).

    >>> import tempfile
    >>> is_transient(mark_scratch(Path(tempfile.mkdtemp()) / ".requests-1"))
    True
    """
    return _marked(folder, {"kind": "scratch", "pid": os.getpid()})


def mark_work(folder: "str | Path") -> Path:
    """Make ``folder`` (created if needed) a work folder of the toolkit's that holds resume state (a build's
    ``.hugvis-build/``): kept after a stop, never cleaned as a leftover, removed by its command when done.

    >>> import tempfile
    >>> is_transient(mark_work(Path(tempfile.mkdtemp()) / ".hugvis-build"))
    True
    """
    return _marked(folder, {"kind": "work"})


def mark_cache(folder: "str | Path") -> Path:
    """Make ``folder`` (created if needed) a cache of the toolkit's: its content is the toolkit's to replace
    and remove (entries it names itself), and no command ever cleans it as a leftover.

    >>> import tempfile
    >>> is_transient(mark_cache(Path(tempfile.mkdtemp()) / "features"))
    True
    """
    return _marked(folder, {"kind": "cache"})


def _marked(folder: "str | Path", record: dict) -> Path:
    """``folder``, created if needed, carrying :data:`MARKER` with ``record`` (a marker already there is kept)."""
    folder = make_folder(folder)
    if not (folder / MARKER).is_file():
        (folder / MARKER).write_text(json.dumps(record), encoding="utf-8")
    return folder


def is_transient(folder: "str | Path") -> bool:
    """Whether ``folder`` is a transient folder (it carries :data:`MARKER`).

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> with transient_folder(root, "work") as held:
    ...     is_transient(held), is_transient(root)
    (True, False)
    """
    return (Path(folder) / MARKER).is_file()


__all__ = ["CLEANED_KINDS", "FolderBusyError", "KINDS", "MARKER", "clean_transients", "hold", "is_run_folder_name",
           "is_transient", "mark_cache", "mark_scratch", "mark_work", "scratch", "scratch_folder", "transient_folder"]

"""Run folders that appear whole or not at all: transient folders with a marker, atomic replace.

A results store (``RESULTS/<task>/<model>/``) only ever changes by a rename: a run is scored in a
folder of its own beside the run it adds or replaces, and moved into place when it is complete.
Those folders are *transient*: their names start with a dot (so no reader takes them for a run,
:func:`is_run_folder_name`) and they hold a marker file, :data:`MARKER`, locked (``flock``) by
the process working in them. A store that opens removes the transient folders whose marker no
live process holds (:func:`clean_transients`): leftovers of a crash, and only ours, so a folder
without our marker is never deleted.

Kinds: ``staging`` (an upload scored before it is added), ``incoming`` (a run being copied into
a store), ``retired`` (a replaced run on its way out) and ``work`` (``.work-<model>``, the
runner's folder of a run in progress; it is kept after a crash, because it is what the next run
resumes from, and removed once its run is in place).

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
import ctypes
import ctypes.util
import errno
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Iterator

from ..readers.json_files import read_json

MARKER = ".hugvis-transient"
KINDS: tuple[str, ...] = ("staging", "incoming", "retired", "work")
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
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
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
    parent = Path(parent)
    parent.mkdir(parents=True, exist_ok=True)
    folder = parent / f".{kind}-{uuid.uuid4().hex}"
    folder.mkdir()
    try:
        with hold(folder, kind, target):
            yield folder
    finally:
        if not keep and folder.exists():
            shutil.rmtree(folder, ignore_errors=True)


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
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue
        removed.append(folder)
    return removed


_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(a))


def replace_folder(new: "str | Path", target: "str | Path") -> None:
    """Put the folder ``new`` at ``target``, replacing what is there, so a reader sees one or the other.

    Where the kernel can exchange two folders in one step, it does; elsewhere the old run is
    renamed aside first (a crash between the two renames leaves it in a ``.retired-`` folder,
    named in the marker, and the new one in place of nothing: nothing is lost). The replaced run
    is removed afterwards.
    """
    new, target = Path(new), Path(target)
    if not target.exists():
        os.rename(new, target)
        return
    retired = target.parent / f".retired-{uuid.uuid4().hex}"
    if _exchange(new, target):
        os.rename(new, retired)  # ``new`` now holds the old run
    else:
        os.rename(target, retired)
        os.rename(new, target)
    try:
        with hold(retired, "retired", str(target)):
            pass
    finally:
        shutil.rmtree(retired, ignore_errors=True)


__all__ = ["CLEANED_KINDS", "FolderBusyError", "KINDS", "MARKER", "clean_transients", "hold", "is_run_folder_name",
           "replace_folder", "transient_folder"]

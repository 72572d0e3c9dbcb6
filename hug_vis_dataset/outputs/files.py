"""The primitives of writing: files that appear whole, with the user's umask, and leave nothing on a stop.

This module and :mod:`hug_vis_dataset.outputs.guard` are the only places in the library that rename,
replace or delete a file or folder (``tests/test_architecture.py`` checks it); everything else asks
them. Three rules hold for every file written here:

* **Whole or absent.** The bytes go to a temporary file in the target's folder, are flushed to disk
  and renamed over the target, so a reader (or a crash) sees the old file or the new one.
* **The user's umask.** A temporary file is created private (``mkstemp``: mode 600); the file put in
  place gets ``0o666 & ~umask``, the mode ``open`` would have given it, so a colleague can read a
  repo or a store written under umask 022.
* **Nothing left by a stop.** The temporary name is registered with :mod:`hug_vis_dataset.stopping`
  *before* the file is created, so a stop at any instruction (even inside ``mkstemp``) ends with the
  name removed by ``hugvis``'s exit path (:func:`hug_vis_dataset.stopping.drain`).

Example:
    >>> import tempfile, os, stat
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "a.json")
    >>> old = os.umask(0o022)
    >>> atomic_write_text(path, "{}\\n")
    >>> _ = os.umask(old)
    >>> open(path).read(), oct(stat.S_IMODE(os.stat(path).st_mode)), sorted(os.listdir(folder))
    ('{}\\n', '0o644', ['a.json'])
"""

from __future__ import annotations

import contextlib
import os
import uuid
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from .. import stopping


def current_umask() -> int:
    """The process's umask, read without changing it (``/proc/self/status``; elsewhere set and restored).

    Example:
        >>> old = os.umask(0o077); value = current_umask(); _ = os.umask(old)
        >>> oct(value)
        '0o77'
    """
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    old = os.umask(0o022)  # not thread-safe, hence only where /proc has no Umask line
    os.umask(old)
    return old


def file_mode() -> int:
    """The mode ``open(path, "w")`` gives a new file under the current umask.

    >>> old = os.umask(0o027); mode = file_mode(); _ = os.umask(old); oct(mode)
    '0o640'
    """
    return 0o666 & ~current_umask()


def folder_mode() -> int:
    """The mode ``mkdir`` gives a new folder under the current umask.

    >>> old = os.umask(0o022); mode = folder_mode(); _ = os.umask(old); oct(mode)
    '0o755'
    """
    return 0o777 & ~current_umask()


def temporary_path(target: "str | Path", tag: str = "partial") -> Path:
    """A hidden name beside ``target`` that no other writer uses: ``.<tag>-<pid>-<random>-<name>``. It keeps the
    target's suffix, from which writers choose a format (``.mp4``, ``.wav``), and starts with a dot, so no
    reader of the folder takes it for a result or a prediction.

    >>> p = temporary_path("/x/clip.wav"); p.parent, p.name.startswith(".partial-"), p.suffix
    (PosixPath('/x'), True, '.wav')
    """
    target = Path(target)
    return target.with_name(f".{tag}-{os.getpid()}-{uuid.uuid4().hex[:12]}-{target.name}")


@contextlib.contextmanager
def temporary_file(target: "str | Path", tag: str = "partial") -> Iterator[Path]:
    """A temporary path beside ``target``, registered for removal on a stop before anything exists at it,
    and removed when the block ends (unless the block renamed it into place).

    >>> import tempfile
    >>> with temporary_file(os.path.join(tempfile.mkdtemp(), "x.bin")) as tmp:
    ...     _ = tmp.write_bytes(b"1"); tmp.exists()
    True
    >>> tmp.exists()
    False
    """
    tmp = temporary_path(target, tag)
    key = stopping.register_removal(tmp)  # before the file exists: a stop from here on removes it
    try:
        yield tmp
    finally:
        remove_path(tmp)
        stopping.unregister_removal(key)  # only once it is gone (a stop inside remove_path leaves it registered)


def atomic_write(path: "str | Path", write: "Callable[[BinaryIO], object]") -> None:
    """Replace ``path`` with what ``write(handle)`` puts in a binary handle (whole or absent, umask mode,
    nothing left by a stop: the module docstring). The caller has checked that ``path`` may be replaced
    (:meth:`hug_vis_dataset.outputs.Output.check_replaceable`, or a folder that is ours by construction)."""
    path = Path(path)
    with temporary_file(path) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with open(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fchmod(handle.fileno(), file_mode())
            os.fsync(handle.fileno())
        os.replace(tmp, path)


def atomic_write_text(path: "str | Path", text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8, LF, no newline translation) as :func:`atomic_write` does.

    Example:
        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
        >>> atomic_write_text(path, "x\\n"); open(path, "rb").read()
        b'x\\n'
    """
    atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))


def give_umask_modes(path: "str | Path") -> None:
    """Give a file, or a folder and everything in it, the modes ``open`` and ``mkdir`` would have given
    them under the umask (a temporary folder is made private: ``mkdtemp``, mode 700).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()); _ = (folder / "a").write_text("x")
    >>> old = os.umask(0o022); give_umask_modes(folder); _ = os.umask(old)
    >>> oct(folder.stat().st_mode & 0o777), oct((folder / "a").stat().st_mode & 0o777)
    ('0o755', '0o644')
    """
    path = Path(path)
    if path.is_symlink():
        return
    if path.is_file():
        os.chmod(path, file_mode())
        return
    folder, plain = folder_mode(), file_mode()
    os.chmod(path, folder)
    for base, dirs, names in os.walk(path):
        for name in dirs:
            if not os.path.islink(os.path.join(base, name)):
                os.chmod(os.path.join(base, name), folder)
        for name in names:
            if not os.path.islink(os.path.join(base, name)):
                os.chmod(os.path.join(base, name), plain)


def place(source: "str | Path", target: "str | Path") -> None:
    """Rename ``source`` onto ``target`` (same file system), giving it the umask's modes first.

    Only :mod:`hug_vis_dataset.outputs.guard` calls this, after its ownership checks."""
    give_umask_modes(source)
    os.replace(source, target)


def rename(source: "str | Path", target: "str | Path") -> None:
    """A plain rename (fails where ``target`` exists and is a non-empty folder); the guard's checks come first."""
    os.rename(source, target)


def remove_path(path: "str | Path") -> None:
    """Remove a file, a link or a folder tree if it is there (the guard decided it is ours).

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "t"; (folder / "a").mkdir(parents=True)
    >>> remove_path(folder); remove_path(folder); folder.exists()
    False
    """
    stopping.remove(path)  # the one removal (a stop's clean-up removes what it registered the same way)


def remove_empty_folder(path: "str | Path") -> bool:
    """Remove ``path`` if it is an empty folder; True when it was removed.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp()) / "e"; folder.mkdir(); remove_empty_folder(folder), folder.exists()
    (True, False)
    """
    try:
        os.rmdir(path)
    except OSError:
        return False
    return True


def make_folder(path: "str | Path") -> Path:
    """``mkdir -p`` (the umask applies, as for any folder).

    >>> import tempfile
    >>> make_folder(Path(tempfile.mkdtemp()) / "a" / "b").is_dir()
    True
    """
    path = Path(path)
    if not path.is_dir():  # not even an attempt where it exists (an audit would record a write)
        path.mkdir(parents=True, exist_ok=True)
    return path


__all__ = ["atomic_write", "atomic_write_text", "current_umask", "file_mode", "folder_mode", "give_umask_modes",
           "make_folder", "place",
           "remove_empty_folder", "remove_path", "rename", "temporary_file", "temporary_path"]

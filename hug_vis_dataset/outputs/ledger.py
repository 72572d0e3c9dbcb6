"""Markers, ledgers and units: how the toolkit knows what it made (the output guard's memory).

A folder the toolkit makes carries a **marker**, :data:`MARKER` (JSON: its kind, the command that made it,
the toolkit's version, attributes such as a submission's task and model). Inside it, the **ledger**,
:data:`LEDGER` (JSON Lines, appended under a lock), records every file the toolkit put there with what identifies its
content: its sha256, and the inode state it had (inode, change time, size, modification time). "Ours,
unchanged since" is judged per file by content: the very inode recorded, untouched since (its change time,
which no copy or move tool can set back, is the same), or else the same sha256. A file someone edited, or a
corrected file moved in with an old timestamp (``mv``, ``cp -p``, ``rsync -a``, ``tar x`` keep timestamps),
is told apart; a ledger written before content identity is judged by size and modification time. A **unit** is a sub-folder with a marker and a ledger of its own (a stored run),
replaced or removed whole. :mod:`hug_vis_dataset.outputs.guard` applies the rules; this module only reads
and writes the bookkeeping.

Example:
    >>> import tempfile, pathlib
    >>> unit = pathlib.Path(tempfile.mkdtemp()) / "m"; unit.mkdir()
    >>> _ = (unit / "rows.parquet").write_bytes(b"x"); seal_unit(unit, "run", "hugvis evaluate")
    >>> read_marker(unit)["kind"], unit_problem(unit, "run") is None
    ('run', True)
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Iterator, Mapping

from ..readers.digests import sha256_file
from ..errors import ToolUsageError
from . import files
from .transient import MARKER as TRANSIENT_MARKER

MARKER = ".hugvis-output.json"
LEDGER = ".hugvis-files.jsonl"
#: The guard's own files in a folder (never listed as an output's content, never a user's).
GUARD_FILES: frozenset = frozenset({MARKER, LEDGER, TRANSIENT_MARKER})
FORMAT = 1

#: Every kind of folder the toolkit makes, as a message names it.
KINDS: dict[str, str] = {
    "release": "a synthetic release (hugvis synth)",
    "dataset-repo": "a dataset repo (hugvis build)",
    "results": "a results store (hugvis evaluate --out)",
    "run": "a stored run",
    "submission": "a submission (hugvis predict --out)",
    "inputs": "exported generation inputs (hugvis predict --export)",
    "report": "a report (hugvis report --out)",
    "mos": "MOS tables (hugvis mos --out)",
    "demo": "a demo folder (hugvis demo --out)",
    "publish": "publish staging (hugvis publish --dry-run)",
    "modules": "evaluate module folders",
    "audit": "a robustness audit (hugvis audit robustness --out)",
    "feature-cache": "the feature cache (hugvis cache)",
    "weights": "a weights folder (hugvis weights download)",
    "pictures": "the README's pictures (scripts/make_readme_pictures.py)",
    "worker": "a scoring worker's work folder (hugvis leaderboard worker --work-dir)",
}
#: Kinds whose folder may hold other outputs (the demo writes each of its steps' outputs inside its own).
# An audit keeps its own results store inside, a worker one per request, publish staging a dataset repo.
NESTING_KINDS: frozenset = frozenset({"demo", "audit", "worker", "publish"})


class OutputError(ToolUsageError):
    """An output the command may not write (exit status 2): the message names the paths and the fix."""


class OverlapError(OutputError):
    """The output and an input are the same folder, or one holds the other."""


class NotOursError(OutputError):
    """The command would replace or delete something the toolkit did not make (or made, and that changed)."""


def resolve(path: "str | os.PathLike") -> Path:
    """The absolute path with every symlink followed (as far as it exists).

    >>> resolve("/tmp/../tmp/x") == Path("/tmp/x").resolve()
    True
    """
    return Path(os.path.abspath(os.path.expanduser(os.fspath(path)))).resolve()


# ----------------------------------------------------------------------------- markers and ledgers
def read_marker(folder: "str | Path") -> "dict | None":
    """The output marker of ``folder`` (None when it has none).

    Raises:
        OutputError: the marker is there but cannot be read (the folder's maker is then unknown).
    """
    from ..readers.json_files import read_json

    path = Path(folder) / MARKER
    if not path.is_file() or path.is_symlink():
        return None
    try:
        data = read_json(path)
    except (OSError, ValueError) as err:
        raise OutputError(f"{path} cannot be read ({err}); which command made {folder} is unknown: choose another "
                          f"folder, or delete that marker and pass --into-existing") from None
    if not isinstance(data.get("kind"), str):
        raise OutputError(f"{path} names no kind; which command made {folder} is unknown: choose another folder, or "
                          f"delete that marker and pass --into-existing")
    return data


def write_marker(folder: Path, kind: str, made_by: str, attrs: Mapping, adopted: bool = False) -> None:
    from .. import __version__

    record = {"format": FORMAT, "kind": kind, "made_by": made_by, "toolkit": f"hug-vis {__version__}",
              "attrs": dict(attrs)}
    if adopted:
        record["adopted"] = True  # it held files of others when first written into: those stay theirs
    files.atomic_write_text(folder / MARKER, json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def _identity(path: Path) -> dict:
    """What identifies one file's content now: its sha256 (a link: its target), with the inode state."""
    st = path.lstat()
    ident = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "ino": st.st_ino, "ctime_ns": st.st_ctime_ns}
    if stat.S_ISLNK(st.st_mode):
        ident["link"] = os.readlink(path)
    else:
        ident["sha256"] = sha256_file(path)
    return ident


def _members(folder: Path) -> Iterator[tuple[str, Path]]:
    for item in sorted(folder.rglob("*")):
        if item.is_symlink() or item.is_file():
            yield item.relative_to(folder).as_posix(), item


def stat_entry(path: Path, rel: str, by: str) -> dict:
    """A ledger entry for what is at ``path`` now: a file's content identity (:func:`_identity`), or, for a
    folder placed whole (e.g. one clip's PNG mattes), the identity of each file in it."""
    if path.is_dir() and not path.is_symlink():
        return {"path": rel, "dir": True, "files": {sub: _identity(item) for sub, item in _members(path)}, "by": by}
    return {"path": rel, **_identity(path), "by": by}


def _same_file(recorded: dict, path: Path) -> bool:
    """Whether the file at ``path`` has the content ``recorded`` (see the module docstring)."""
    st = path.lstat()
    if "sha256" not in recorded and "link" not in recorded:  # a ledger entry from before content identity
        return recorded.get("size") == st.st_size and recorded.get("mtime_ns") == st.st_mtime_ns
    now = (st.st_ino, st.st_ctime_ns, st.st_size, st.st_mtime_ns)
    if now == tuple(recorded.get(k) for k in ("ino", "ctime_ns", "size", "mtime_ns")):
        return True  # the inode recorded, not written, renamed nor re-permissioned since: the same bytes
    if recorded.get("size") != st.st_size:
        return False
    if "link" in recorded:
        return stat.S_ISLNK(st.st_mode) and os.readlink(path) == recorded["link"]
    return stat.S_ISREG(st.st_mode) and sha256_file(path) == recorded["sha256"]


def placed_entry(intent: dict, path: Path) -> dict:
    """The entry of what ``intent`` (:func:`stat_entry` of a temporary, written ahead) recorded, once renamed to
    ``path``: the same content, the inode state it has now (a rename changes a file's ctime; a folder's rename
    changes none of its files'), so no second hash of what was just hashed."""
    out = {k: v for k, v in intent.items() if k != "was"}
    if not out.get("dir"):
        st = path.lstat()
        out.update(size=st.st_size, mtime_ns=st.st_mtime_ns, ino=st.st_ino, ctime_ns=st.st_ctime_ns)
    return out


def matches(entry: dict, path: Path) -> bool:
    """Whether what is at ``path`` is what the toolkit recorded there (:func:`_matches`), or, for an entry written
    ahead of a replacement (``was``: what it replaces), what was there before it: a stop between the entry and
    the rename leaves either the new content or the old, both the toolkit's."""
    if _matches(entry, path):
        return True
    was = entry.get("was")
    return isinstance(was, dict) and _matches(was, path)


def _matches(entry: dict, path: Path) -> bool:
    """Whether what is at ``path`` is still what the toolkit recorded there (``entry``), judged per file by
    content.

    A file: :func:`_same_file`. A folder placed whole: every file in it is one the toolkit placed there, with
    its content; files deleted from it (a broken prediction) leave it the toolkit's, since replacing it then
    loses nothing of anyone else's.

    >>> import tempfile, os, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp()); mine = folder / "rows.csv"; _ = mine.write_text("a,b")
    >>> entry = stat_entry(mine, "rows.csv", "hugvis evaluate")
    >>> matches(entry, mine)
    True
    >>> old = mine.stat()
    >>> user = folder / "fixed.csv"; _ = user.write_text("a,c"); os.utime(user, ns=(old.st_atime_ns, old.st_mtime_ns))
    >>> os.replace(user, mine)  # the user's corrected file, moved in with the old timestamp
    >>> matches(entry, mine)
    False
    """
    if bool(entry.get("dir")) != (path.is_dir() and not path.is_symlink()):
        return False
    if not entry.get("dir"):
        return _same_file(entry, path)
    recorded = entry.get("files")
    if not isinstance(recorded, dict):  # a ledger entry from before content identity: count and newest mtime
        times = [item.lstat().st_mtime_ns for _, item in _members(path)]
        return len(times) <= (recorded or 0) and max(times, default=0) <= entry.get("mtime_ns", 0)
    return all(sub in recorded and _same_file(recorded[sub], item) for sub, item in _members(path))


def read_ledger(folder: Path) -> dict[str, dict]:
    """rel path -> its latest entry (a removal drops it). A last line cut by a crash is ignored: the
    file it named is then unknown, which only ever stops a replacement, never allows one."""
    path = folder / LEDGER
    entries: dict[str, dict] = {}
    if not path.is_file():
        return entries
    with open(path, "rb") as handle:
        lines = handle.read().split(b"\n")
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw.decode("utf-8"))
            rel = entry["path"]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            if number >= len(lines) - 1:  # the last line (the file may end without its newline)
                continue
            raise OutputError(f"{path}: line {number} cannot be read; which files of {folder} the toolkit wrote is "
                              f"unknown: choose another folder") from None
        if entry.get("removed"):
            entries.pop(rel, None)
        else:
            entries[rel] = entry
    return entries


def append_ledger(folder: Path, entries: "list[dict]") -> None:
    """Append entries in one write under an exclusive lock (several processes may write one output)."""
    if not entries:
        return
    import fcntl

    data = "".join(json.dumps(e, sort_keys=True, ensure_ascii=False) + "\n" for e in entries).encode("utf-8")
    fd = os.open(folder / LEDGER, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, data)
    finally:
        os.close(fd)


def files_below(folder: Path) -> Iterator[tuple[str, Path]]:
    """(relative path, path) of every file or link below ``folder`` but the guard's own, in sorted order."""
    for path in sorted(folder.rglob("*")):
        if path.name in GUARD_FILES and path.parent == folder:
            continue
        if path.is_symlink() or path.is_file():
            yield path.relative_to(folder).as_posix(), path



def seal_unit(folder: "str | os.PathLike", kind: str, made_by: str, attrs: "Mapping | None" = None) -> None:
    """Mark ``folder`` (made by the toolkit, e.g. a finished work folder) as a unit of ``kind`` and record
    every file in it as its own."""
    folder = Path(folder)
    files.give_umask_modes(folder)  # a unit made in a private temporary folder is readable as others expect
    write_marker(folder, kind, made_by, attrs or {})
    entries = [stat_entry(path, rel, made_by) for rel, path in files_below(folder)
               if not (path.parent == folder and path.name == TRANSIENT_MARKER)]
    data = "".join(json.dumps(e, sort_keys=True, ensure_ascii=False) + "\n" for e in entries)
    files.atomic_write_text(folder / LEDGER, data)


def unit_problem(folder: "str | os.PathLike", kind: str) -> "str | None":
    """None when ``folder`` is a unit of ``kind`` holding only its own files, unchanged; else what is wrong.

    Example:
        >>> import tempfile, pathlib
        >>> unit = pathlib.Path(tempfile.mkdtemp()) / "m"; unit.mkdir()
        >>> _ = (unit / "rows.parquet").write_bytes(b"x"); seal_unit(unit, "run", "hugvis evaluate")
        >>> unit_problem(unit, "run") is None
        True
        >>> _ = (unit / "notes.txt").write_text("mine"); unit_problem(unit, "run")  # doctest: +ELLIPSIS
        '.../m/notes.txt was not made by hugvis'
    """
    folder = Path(folder)
    if folder.is_symlink() or not folder.is_dir():
        return f"{folder} is not a folder made by hugvis"
    try:
        marker = read_marker(folder)
    except OutputError as err:
        return str(err)
    if marker is None or marker["kind"] != kind:
        return f"{folder} is not {KINDS[kind]} made by hugvis (no marker {MARKER})"
    ledger = read_ledger(folder)
    transient = {p.parent for p in folder.rglob(TRANSIENT_MARKER)} - {folder}
    for rel, path in files_below(folder):
        if any(t in path.parents for t in transient):
            continue  # a cache or work folder of the toolkit's inside the unit (a run's .set-features/)
        entry = ledger.get(rel)
        if entry is None:
            return f"{path} was not made by hugvis"
        if not matches(entry, path):
            return f"{path} was written by {entry.get('by', 'hugvis')} and changed since"
    return None


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where unsupported."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, renameexchange = -100, 2
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), renameexchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(a))


__all__ = ["FORMAT", "GUARD_FILES", "KINDS", "LEDGER", "MARKER", "NESTING_KINDS", "NotOursError", "OutputError",
           "OverlapError", "append_ledger", "exchange", "files_below", "matches", "read_ledger", "read_marker", "resolve",
           "seal_unit", "stat_entry", "unit_problem", "write_marker"]

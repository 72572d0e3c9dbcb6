"""Writing and deleting the toolkit's own things wherever they lie, without an output object in hand.

Scratch space (a folder carrying the transient marker: a work or staging folder of an output, a
:func:`~hug_vis_dataset.outputs.transient.scratch_folder`, a cache) is the toolkit's by construction: its
files are written and removed directly. A path inside an output (an ancestor carries :data:`MARKER`) goes
through that output's ledger rules. Anything else is refused: there is no third way to write or delete.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import files
from .guard import Output
from .ledger import NotOursError, read_marker, resolve
from .transient import MARKER as TRANSIENT_MARKER


def _scratch(path: Path) -> bool:
    """Whether ``path`` lies in scratch space the toolkit made: a transient folder (a work or staging folder
    of an output, a :func:`~hug_vis_dataset.outputs.transient.scratch_folder`), whose marker is in one of
    the parents. The system's temporary folder as such is not: a user's files can be there too."""
    where = resolve(path.parent) / path.name
    return any((folder / TRANSIENT_MARKER).is_file() for folder in (where, *where.parents))


def owning_output(path: Path) -> "Output | None":
    """The output (an ancestor folder with a marker) that ``path`` lies in, if any."""
    where = resolve(path.parent) / path.name
    for parent in where.parents:
        marker = read_marker(parent) if parent.is_dir() else None
        if marker is not None:
            return Output("hugvis", str(parent), marker["kind"], label="folder")
    return None


def discard(path: "str | os.PathLike") -> None:
    """Delete a file or folder that is the toolkit's: in scratch space (a transient folder, the temporary
    folder), or recorded in its output's ledger and unchanged. Anything else is refused.

    Example:
        >>> from hug_vis_dataset.outputs.transient import scratch_folder
        >>> tmp = scratch_folder() / "x.tmp"; _ = tmp.write_text("1")
        >>> discard(tmp); tmp.exists()
        False
        >>> import tempfile, pathlib
        >>> mine = pathlib.Path(tempfile.mkdtemp()) / "notes.txt"; _ = mine.write_text("1")
        >>> discard(mine)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        hug_vis_dataset.outputs.ledger.NotOursError: refusing to delete .../notes.txt: it is not inside anything hugvis made
    """
    path = Path(path)
    if not os.path.lexists(path):
        return
    if _scratch(path):
        files.remove_path(path)
        return
    output = owning_output(path)
    if output is None:
        raise NotOursError(f"refusing to delete {path}: it is not inside anything hugvis made")
    output.remove(output.rel(resolve(path.parent) / path.name))


def put_scratch(source: "str | os.PathLike", target: "str | os.PathLike") -> None:
    """Rename ``source`` onto ``target`` where both lie in scratch space (a part file of a work folder, a file
    of the Space's temporary folder); anything else goes through an :class:`Output`."""
    source, target = Path(source), Path(target)
    for path in (source, target):
        if not _scratch(path):
            raise NotOursError(f"refusing to write {path} outside scratch space without an output claim")
    files.place(source, target)


def write_file(path: "str | os.PathLike", write) -> None:
    """Write a file of the toolkit's wherever it lies: in scratch space (a work or scratch folder) directly,
    in an output through that output's ledger (replacing only its own file); anywhere else is refused.

    ``write(handle)`` fills a binary handle; the file appears whole (:func:`~hug_vis_dataset.outputs.files.atomic_write`).
    """
    path = Path(path)
    if _scratch(path):
        files.atomic_write(path, write)
        return
    output = owning_output(path)
    if output is None:
        raise NotOursError(f"refusing to write {path}: it is not inside a folder hugvis made (claim an output first)")
    with output.atomic(output.rel(resolve(path.parent) / path.name)) as tmp:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with open(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())


def write_text_file(path: "str | os.PathLike", text: str) -> None:
    """:func:`write_file` of UTF-8 text (no newline translation)."""
    write_file(path, lambda handle: handle.write(text.encode("utf-8")))


__all__ = ["discard", "put_scratch", "write_file", "write_text_file"]

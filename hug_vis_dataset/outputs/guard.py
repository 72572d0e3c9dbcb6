"""The one output guard: what a command may write, replace or delete.

Every command that writes (``evaluate``, ``build``, ``synth``, ``predict``, ``report``, ``mos``, ``demo``,
``cache clear``, ``publish``, ``audit``, ``weights download``, the Space's stores, the queue worker)
declares, before it writes anything, what it reads and the one folder it writes, by :func:`claim`. The
guard then holds these rules (docs/ARCHITECTURE.md, "Outputs"):

1. **No overlap.** The output and every input are compared as resolved paths (symlinks followed,
   relative paths made absolute): equal, or one inside the other, is refused in one line naming both.
2. **Only the toolkit's folders.** An output is a new folder, an empty one, or one carrying the marker
   :data:`MARKER` of the same kind (and, where the kind has them, the same attributes: a submission's
   task and model). A non-empty folder without the marker is written into only with ``into_existing``
   (``--into-existing``), and nothing already in it is then replaced or deleted. An output is never
   placed inside another output (but a demo folder, which holds the demo's outputs).
3. **Only the toolkit's files.** Inside an output the guard replaces or deletes only what the toolkit
   put there, recorded in the ledger :data:`LEDGER` (path, size, modification time), and unchanged
   since; anything else at a path the command would replace or delete stops it *before* it writes,
   naming that path. A sub-folder that is a *unit* (a stored run) carries its own marker and ledger and
   is replaced or removed whole, only when every file in it is one of its own, unchanged.
4. **Readable by others.** Files get the process's umask (:mod:`hug_vis_dataset.outputs.files`).

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> out = claim("hugvis report", root / "report", "report", inputs=[("RESULTS", root)])
    Traceback (most recent call last):
    ...
    hug_vis_dataset.outputs.ledger.OverlapError: hugvis report: --out ... is inside RESULTS ...: an output must lie outside every input; choose another --out
    >>> out = claim("hugvis report", root / "report", "report")
    >>> with out.staged() as stage:
    ...     _ = (stage / "table.md").write_text("| a |\\n")
    >>> sorted(p.name for p in out.root.iterdir())
    ['.hugvis-files.jsonl', '.hugvis-output.json', 'table.md']
    >>> out.state_of("table.md"), out.state_of("notes.md")
    ('ours', 'absent')
    >>> _ = (out.root / "notes.md").write_text("mine"); out.state_of("notes.md")
    'foreign'
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from .. import stopping
from . import files
from .ledger import (GUARD_FILES, KINDS, LEDGER, MARKER, NESTING_KINDS, NotOursError, OutputError, OverlapError,
                     append_ledger, exchange, files_below, matches, read_ledger, read_marker, resolve, seal_unit,
                     placed_entry, stat_entry, unit_problem, write_marker)
from .transient import MARKER as TRANSIENT_MARKER
from .transient import transient_folder

_CLAIMED: list[Path] = []  # every output this process claimed: the write audit of the tests reads it
_CLAIMED_LOCK = threading.Lock()


def claimed() -> list[Path]:
    """The outputs this process claimed so far (resolved), in order."""
    with _CLAIMED_LOCK:
        return list(_CLAIMED)


def _shown(named: "str | os.PathLike", resolved: Path) -> str:
    """``named``, and where it resolves (absolute, links followed) when that is not the same text."""
    text = os.fspath(named)
    return text if os.path.normpath(text) == str(resolved) else f"{text} (= {resolved})"


def _relation(output: Path, source: Path) -> "str | None":
    if output == source:
        return "is"
    if output in source.parents:
        return "holds"
    if source in output.parents:
        return "is inside"
    return None


def check_overlaps(command: str, label: str, output: "str | os.PathLike",
                   inputs: "Iterable[tuple[str, str | os.PathLike | None]]") -> None:
    """Refuse an output that is an input, holds one or lies inside one (resolved paths, symlinks followed).

    Inputs that are not on this machine (a Hub id, ``None``) have nothing to protect and are skipped.

    Example:
        >>> import tempfile, pathlib
        >>> root = pathlib.Path(tempfile.mkdtemp()); (root / "preds").mkdir()
        >>> check_overlaps("hugvis evaluate", "--out", root, [("--predictions", root / "preds")])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        hug_vis_dataset.outputs.ledger.OverlapError: hugvis evaluate: --out ... holds --predictions .../preds: an output must lie outside every input; choose another --out
        >>> check_overlaps("hugvis evaluate", "--out", root / "results", [("--predictions", root / "preds")])
    """
    target = resolve(output)
    for name, source in inputs:
        if source is None or not os.path.lexists(os.fspath(source)):
            continue
        where = resolve(source)
        relation = _relation(target, where)
        if relation is not None:
            raise OverlapError(f"{command}: {label} {_shown(output, target)} {relation} {name} {_shown(source, where)}: "
                               f"an output must lie outside every input; choose another {label}")


# ----------------------------------------------------------------------------- the output
@dataclass
class Output:
    """One claimed output folder (see :func:`claim`); every write into it goes through its methods.

    Attributes:
        command: the command writing it (``hugvis report``), named in every message.
        named: the path as the user gave it; ``root``: resolved.
        kind: one of :data:`KINDS`; ``label``: the option that named it (``--out``, ``OUT_DIR``).
        attrs: what the marker records besides the kind, compared on a later claim (a submission's
            task and model).
        into_existing: the user allowed a non-empty folder the toolkit did not make.
        by: what ledger entries of this command are tagged with (prune replaces only these).
    """

    command: str
    named: str
    kind: str
    label: str = "--out"
    attrs: dict = field(default_factory=dict)
    into_existing: bool = False
    by: str = ""
    root: Path = field(init=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown output kind {self.kind!r}")
        self.named = os.fspath(self.named)
        self.root = resolve(self.named)
        self.by = self.by or self.command

    # -- state -----------------------------------------------------------------------------
    def shown(self) -> str:
        return f"{self.label} {_shown(self.named, self.root)}"

    def check(self) -> None:
        """The folder-state rules (module docstring, rule 2); writes nothing.

        Raises:
            OutputError: the folder is a file, another kind's output, another model's submission, inside
                another output, or a non-empty folder the toolkit did not make (without ``into_existing``).
        """
        if (self.root / TRANSIENT_MARKER).is_file():
            return  # a staging or scratch folder the toolkit made for itself (the Space's staging, a mirror)
        for parent in self.root.parents:
            if (parent / TRANSIENT_MARKER).is_file():
                break  # inside a staging or scratch folder of the toolkit's (the Space scores an upload there)
            marker = read_marker(parent) if parent.is_dir() else None
            if marker is not None and marker["kind"] not in NESTING_KINDS:
                raise OutputError(f"{self.command}: {self.shown()} is inside {parent}, "
                                  f"{KINDS.get(marker['kind'], marker['kind'])}: an output cannot be put inside "
                                  f"another one; choose another {self.label}")
        if self.root.is_symlink() and not self.root.exists():
            raise OutputError(f"{self.command}: {self.shown()} is a broken link; choose another {self.label}")
        if self.root.exists() and not self.root.is_dir():
            raise OutputError(f"{self.command}: {self.shown()} is a file; choose a new or empty folder")
        if not self.root.is_dir():
            return
        marker = read_marker(self.root)
        if marker is None and _marker_being_written(self.root):
            marker = _awaited_marker(self.root)  # another hugvis process is claiming the same folder right now
        if marker is None:
            if self.into_existing or not any(self.root.iterdir()):
                return
            first = sorted(p.name for p in self.root.iterdir())[:3]
            raise OutputError(f"{self.command}: {self.shown()} is not empty ({', '.join(first)} ...) and was not "
                              f"made by hugvis: choose a new or empty folder, or pass --into-existing to add to it "
                              f"(nothing already in it is replaced or deleted)")
        if marker["kind"] != self.kind:
            raise OutputError(f"{self.command}: {self.shown()} is {KINDS.get(marker['kind'], marker['kind'])}, "
                              f"not {KINDS[self.kind]}; choose another {self.label}")
        theirs = marker.get("attrs") or {}
        for key, value in self.attrs.items():
            if key in theirs and theirs[key] != value:
                raise OutputError(f"{self.command}: {self.shown()} holds {KINDS[self.kind]} for {key} "
                                  f"{theirs[key]!r}, not {value!r}; choose another {self.label}")

    def ensure(self) -> Path:
        """Create the folder and its marker when they are not there yet (the first write); returns ``root``."""
        adopted = self.root.is_dir() and any(self.root.iterdir()) and read_marker(self.root) is None
        files.make_folder(self.root)
        if read_marker(self.root) is None:
            write_marker(self.root, self.kind, self.command, self.attrs, adopted)
        return self.root

    # -- paths and ownership ---------------------------------------------------------------
    def path(self, rel: "str | os.PathLike") -> Path:
        """``root / rel``, refused when it would leave the output (``..``, an absolute path, a link out)."""
        rel = Path(rel)
        target = Path(os.path.normpath(self.root / rel))
        where = resolve(target.parent) / target.name
        if rel.is_absolute() or self.root not in target.parents or self.root not in where.parents:
            raise OutputError(f"{self.command}: {rel} would be written outside {self.shown()}")
        return target

    def rel(self, path: "str | os.PathLike") -> str:
        """The output-relative name of a path inside it (given relative, or absolute under ``root`` or the
        name the user gave)."""
        path = Path(path)
        if path.is_absolute():
            for base in (self.root, Path(os.path.abspath(self.named))):
                with contextlib.suppress(ValueError):
                    path = path.relative_to(base)
                    break
        return self.path(path).relative_to(self.root).as_posix()

    def ledger(self) -> dict[str, dict]:
        """What the toolkit wrote here: rel path -> ledger entry."""
        return read_ledger(self.root)

    def state_of(self, rel: "str | os.PathLike", ledger: "dict | None" = None) -> str:
        """``absent``, ``ours`` (recorded and unchanged), ``changed`` (recorded, changed since) or ``foreign``.

        A folder that was not placed whole is ``ours`` when every file in it is.
        """
        rel = self.rel(rel)
        path = self.root / rel
        if not os.path.lexists(path):
            return "absent"
        ledger = self.ledger() if ledger is None else ledger
        entry = ledger.get(rel)
        if entry is not None:
            return "ours" if matches(entry, path) else "changed"
        if path.is_dir() and not path.is_symlink():
            states = {self.state_of(f"{rel}/{sub}", ledger) for sub, _ in files_below(path)}
            return "ours" if states <= {"ours"} else ("changed" if "changed" in states else "foreign")
        return "foreign"

    def _refusal(self, rel: str, state: str, doing: str) -> NotOursError:
        ledger_by = (self.ledger().get(rel) or {}).get("by", "hugvis")
        what = (f"{self.root / rel} was written by {ledger_by} and changed since" if state == "changed"
                else f"{self.root / rel} was not made by hugvis")
        return NotOursError(f"{self.command}: {what}; this command would {doing} it: move it out of "
                            f"{self.named} or choose another {self.label}")

    def check_replaceable(self, rels: "Iterable[str]", doing: str = "replace") -> dict:
        """Refuse (before anything is written) when one of ``rels`` is there and is not the toolkit's, unchanged;
        returns the ledger read (what a placement right after records as replaced)."""
        ledger = self.ledger()
        for rel in rels:
            state = self.state_of(rel, ledger)
            if state in ("changed", "foreign"):
                raise self._refusal(self.rel(rel), state, doing)
        return ledger

    # -- writing ---------------------------------------------------------------------------
    def _place_recorded(self, source: Path, rel: str, by: "str | None", ledger: "dict | None" = None) -> None:
        """Put ``source`` at ``rel`` (replacing what is there, which the caller checked) and record it, as one
        step a stop cannot cut in two.

        The entry is written ahead of the rename (with what it replaces, ``was``), then again with the inode state
        the rename gave it: a process killed in between (a worker's SIGTERM is not deferred when another of its
        threads takes it) leaves the new content or the old one, each recorded as the toolkit's, never a file the
        next run must refuse as foreign. ``ledger``: the ledger as the caller just read it (else read here, and only
        for a replacement)."""
        target = self.root / rel
        files.make_folder(target.parent)
        with stopping.deferred():
            intent = stat_entry(source, rel, by or self.by)
            if os.path.lexists(target):  # a replacement: the old content stays the toolkit's until the rename
                old = (ledger if ledger is not None else self.ledger()).get(rel)
                if old is not None:
                    intent["was"] = {k: v for k, v in old.items() if k != "was"}
            append_ledger(self.root, [intent])
            if target.is_dir() and not target.is_symlink() and source.is_dir():
                with transient_folder(self.root, "retired", str(target), keep=True) as retired:
                    files.rename(target, retired / "old")
                    files.place(source, target)
                files.remove_path(retired)
            else:
                files.place(source, target)
            append_ledger(self.root, [placed_entry(intent, target)])

    def place(self, source: "str | os.PathLike", rel: "str | os.PathLike", by: "str | None" = None) -> Path:
        """Move a finished file or folder (same file system) to ``rel``, replacing only the toolkit's own."""
        self.ensure()
        rel = self.rel(rel)
        ledger = self.check_replaceable([rel])
        self._place_recorded(Path(source), rel, by, ledger)
        return self.root / rel

    @contextlib.contextmanager
    def atomic(self, rel: "str | os.PathLike", by: "str | None" = None, check: bool = True) -> Iterator[Path]:
        """A temporary path beside ``rel`` to write (a file, or a folder the block makes); put in place and
        recorded when the block ends without error, removed otherwise (and on a stop)."""
        self.ensure()
        rel = self.rel(rel)
        ledger = self.check_replaceable([rel]) if check else None
        target = self.root / rel
        files.make_folder(target.parent)
        with files.temporary_file(target) as tmp:
            yield tmp
            if not os.path.lexists(tmp):
                raise OutputError(f"{self.command}: nothing was written for {target}")
            self._place_recorded(tmp, rel, by, ledger)

    def write_bytes(self, rel: "str | os.PathLike", data: bytes, by: "str | None" = None) -> Path:
        """Write ``data`` at ``rel`` whole (replacing only the toolkit's own file)."""
        with self.atomic(rel, by) as tmp:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with open(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        return self.root / self.rel(rel)

    def write_text(self, rel: "str | os.PathLike", text: str, by: "str | None" = None) -> Path:
        """Write UTF-8 ``text`` at ``rel`` whole (no newline translation)."""
        return self.write_bytes(rel, text.encode("utf-8"), by)

    def append_text(self, rel: "str | os.PathLike", text: str, by: "str | None" = None) -> Path:
        """Append UTF-8 ``text`` to the toolkit's log at ``rel`` (made if absent; a file that is not the
        toolkit's, or changed since, is refused), and record it again, under the ledger's lock so that
        concurrent appenders record what is there."""
        import fcntl

        self.ensure()
        rel = self.rel(rel)
        target = self.root / rel
        files.make_folder(target.parent)
        fd = os.open(self.root / LEDGER, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            state = self.state_of(rel)
            if state in ("changed", "foreign"):
                raise self._refusal(rel, state, "append to")
            with stopping.deferred():
                with open(target, "a", encoding="utf-8", newline="") as handle:
                    handle.write(text)
                entry = stat_entry(target, rel, by or self.by)
                os.write(fd, (json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
        return target

    def remove(self, rel: "str | os.PathLike") -> None:
        """Delete a file or folder the toolkit put here and nobody changed since (else :class:`NotOursError`)."""
        rel = self.rel(rel)
        ledger = self.ledger()
        state = self.state_of(rel, ledger)
        if state == "absent":
            return
        if state != "ours":
            raise self._refusal(rel, state, "delete")
        gone = [rel] + [r for r in ledger if r.startswith(rel + "/")]
        with stopping.deferred():
            files.remove_path(self.root / rel)
            append_ledger(self.root, [{"path": r, "removed": True} for r in gone])
        self._prune_folders([rel])

    def _prune_folders(self, rels: "Iterable[str]") -> None:
        """Remove the folders that removing ``rels`` left empty (never the output itself)."""
        parents = sorted({p for rel in rels for p in (self.root / rel).parents if self.root in p.parents},
                         key=lambda p: len(p.parts), reverse=True)
        for folder in parents:
            files.remove_empty_folder(folder)

    # -- whole trees -------------------------------------------------------------------------
    @contextlib.contextmanager
    def staged(self, by: "str | None" = None, prune: bool = True) -> Iterator[Path]:
        """A transient folder inside the output to write a whole tree into; when the block ends without
        error the tree is merged into the output (:meth:`merge`), else it is removed and the output is
        as it was (a folder this call made is removed again: a failed command leaves no output behind)."""
        with self.opened():
            with transient_folder(self.root, "staging", str(self.root)) as stage:
                yield stage
                self.merge(stage, by, prune)

    @contextlib.contextmanager
    def opened(self) -> Iterator[Path]:
        """:meth:`ensure` for the block; when the block fails and this call made the folder, the folder is
        removed again if nothing but the guard's own files is in it: a refused or failed command leaves no
        output behind."""
        made = not os.path.lexists(self.root)
        self.ensure()
        try:
            yield self.root
        except BaseException:
            if made and self.root.is_dir() and all(p.name in GUARD_FILES for p in self.root.iterdir()):
                for name in (MARKER, LEDGER):
                    files.remove_path(self.root / name)
                files.remove_empty_folder(self.root)
            raise

    def merge(self, stage: "str | os.PathLike", by: "str | None" = None, prune: bool = True) -> list[str]:
        """Move every file of ``stage`` to the same place in the output and record it; with ``prune``, delete
        what this command (``by``) wrote here before and did not write now, so the output is this run's.

        Everything is checked before anything moves: a path that is not the toolkit's, or that changed
        since it was written, refuses the whole merge (:class:`NotOursError`). Returns the merged paths.
        """
        stage, by = Path(stage), by or self.by
        staged = [(rel, path) for rel, path in files_below(stage) if not (path.parent == stage and
                                                                          path.name in GUARD_FILES)]
        names = {rel for rel, _ in staged}
        self.check_replaceable(names)
        ledger = self.ledger()
        stale = sorted(r for r, e in ledger.items() if prune and e.get("by") == by and r not in names
                       and not any(n.startswith(r + "/") for n in names))
        self.check_replaceable(stale, doing="delete")
        for rel, path in staged:
            self._place_recorded(path, rel, by, ledger)
        for rel in stale:
            with stopping.deferred():
                files.remove_path(self.root / rel)
                append_ledger(self.root, [{"path": rel, "removed": True}])
        self._prune_folders(stale)
        return sorted(names)

    # -- units: sub-folders replaced whole (stored runs) -------------------------------------
    def replace_unit(self, new: "str | os.PathLike", rel: "str | os.PathLike", kind: str = "run",
                     attrs: "Mapping | None" = None, refuse_existing: bool = False) -> Path:
        """Seal the finished folder ``new`` as a unit of ``kind`` and put it at ``rel``, replacing the unit
        there, if any, in one step (a reader sees the old unit or the new one).

        Raises:
            NotOursError: what is at ``rel`` is not a unit of ``kind`` whose files are all its own, unchanged.
            FileExistsError: ``refuse_existing`` and a unit is there (a store never replaces an added run).
        """
        self.ensure()
        rel = self.rel(rel)
        target, new = self.root / rel, Path(new)
        # Everything that can refuse is checked while ``new`` is still a transient folder (its caller removes it).
        if os.path.lexists(target):
            if refuse_existing:
                raise FileExistsError(errno.EEXIST, f"{target} exists", str(target))
            problem = unit_problem(target, kind)
            if problem is not None:
                raise NotOursError(f"{self.command}: {problem}; it would be replaced: move it out of {self.named} or "
                                   f"choose another {self.label}")
        marker = (new / TRANSIENT_MARKER).read_bytes() if (new / TRANSIENT_MARKER).is_file() else None
        files.remove_path(new / TRANSIENT_MARKER)  # a finished work folder is no longer transient
        seal_unit(new, kind, self.command, attrs or {})
        try:
            with stopping.deferred():
                if not os.path.lexists(target):
                    files.make_folder(target.parent)
                    try:
                        files.rename(new, target)  # refused by the kernel if a unit appeared meanwhile
                    except OSError as err:
                        if err.errno in (errno.EEXIST, errno.ENOTEMPTY):
                            raise FileExistsError(errno.EEXIST, f"{target} exists", str(target)) from None
                        raise
                    return target
            if refuse_existing:
                raise FileExistsError(errno.EEXIST, f"{target} exists", str(target))
        except BaseException:
            if marker is not None and new.is_dir():  # still ours to remove: transient again
                for name in (MARKER, LEDGER):
                    files.remove_path(new / name)
                (new / TRANSIENT_MARKER).write_bytes(marker)
            raise
        with transient_folder(target.parent, "retired", str(target), keep=True) as retired:
            with stopping.deferred():
                if not exchange(new, target):
                    files.rename(target, retired / "old")
                    files.rename(new, target)
                else:
                    files.rename(new, retired / "old")
        files.remove_path(retired)
        return target

    def remove_unit(self, rel: "str | os.PathLike", kind: str = "run") -> None:
        """Delete the unit at ``rel`` when it is a unit of ``kind`` whose files are all its own, unchanged."""
        target = self.root / self.rel(rel)
        if not os.path.lexists(target):
            return
        problem = unit_problem(target, kind)
        if problem is not None:
            raise NotOursError(f"{self.command}: {problem}; it would be deleted: move it out of {self.named}")
        files.remove_path(target)


#: How long :meth:`Output.check` waits for a marker another hugvis process is writing (its temporary is all the
#: folder holds): two workers started together on one ``--work-dir`` both claim it in the same instant.
MARKER_WAIT_S = 10.0


def _marker_being_written(folder: Path) -> bool:
    """Whether all ``folder`` holds is the temporary of a marker being written (``files.temporary_path``'s
    ``.partial-<pid>-<random>-.hugvis-output.json``), not yet renamed into place."""
    entries = [p.name for p in folder.iterdir()]
    return bool(entries) and all(n.startswith(".partial-") and n.endswith(f"-{MARKER}") for n in entries)


def _awaited_marker(folder: Path) -> "dict | None":
    """The marker once its writer has renamed it into place (None if that has not happened within
    :data:`MARKER_WAIT_S`, or the temporary went without a marker: the folder is then judged as it is)."""
    import time

    deadline = time.monotonic() + MARKER_WAIT_S
    while time.monotonic() < deadline and _marker_being_written(folder):
        time.sleep(0.02)
    return read_marker(folder)


def claim(command: str, output: "str | os.PathLike", kind: str, *,
          inputs: "Iterable[tuple[str, str | os.PathLike | None]]" = (), label: str = "--out",
          attrs: "Mapping | None" = None, into_existing: bool = False, by: str = "") -> Output:
    """Declare the one output of ``command`` and what it reads; check both before anything is written.

    Args:
        command: ``hugvis <name>``, named in every message.
        output: the folder the command writes (created, with its marker, at the first write).
        kind: one of :data:`KINDS`.
        inputs: ``(label, path)`` of everything the command reads (paths not on this machine are skipped).
        label: how the user named the output (``--out``, ``OUT_DIR``).
        attrs: recorded in the marker and compared with an existing one (a submission's task and model).
        into_existing: allow a non-empty folder the toolkit did not make (``--into-existing``).
        by: the ledger tag of this command's files (default ``command``).

    Raises:
        OverlapError, OutputError: as in the module docstring (rules 1 and 2), before anything is written.
    """
    check_overlaps(command, label, output, inputs)
    out = Output(command, os.fspath(output), kind, label, dict(attrs or {}), into_existing, by)
    out.check()
    with _CLAIMED_LOCK:
        _CLAIMED.append(out.root)
    return out


def output_option(parser) -> None:
    """Add ``--into-existing`` (rule 2's explicit option) to a writing command's parser."""
    parser.add_argument("--into-existing", action="store_true",
                        help="write into an existing non-empty folder that hugvis did not make (nothing already "
                        "in it is replaced or deleted)")


__all__ = ["GUARD_FILES", "KINDS", "LEDGER", "MARKER", "NotOursError", "Output", "OutputError", "OverlapError",
           "check_overlaps", "claim", "claimed", "output_option", "read_marker", "resolve", "seal_unit", "unit_problem"]

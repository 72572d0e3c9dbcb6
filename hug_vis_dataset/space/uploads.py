"""Safe extraction of untrusted submission zips (the Space's "Score a submission" tab).

Everything a stranger uploads is hostile until checked. :func:`check_zip` inspects the central
directory without writing anything; :func:`safe_extract` then writes only regular files whose
names stay inside the extraction folder, counting the bytes actually decompressed (a zip's
declared sizes can lie), and stops at the first limit crossed.

Rejected, with a message naming the member and the rule:
    - a zip larger than ``max_zip_bytes`` or not a zip at all;
    - more than ``max_members`` members, more than ``max_total_bytes`` uncompressed (zip bombs);
    - absolute names, drive letters, backslashes, ``..`` components, NUL bytes, duplicates;
    - symbolic links and other non-regular entries (Unix mode bits in ``external_attr``);
    - encrypted members;
    - suffixes outside ``allowed_suffixes`` (so ``.pkl``, ``.pt``, ``.npy`` never arrive) and any
      file whose first bytes are a pickle protocol header, whatever its name: nothing uploaded is
      ever unpickled;
    - a name that is both a file and a folder (``X.png`` and ``X.png/000000.png``);
    - an upload that would take the Space's work folder over ``max_work_bytes``.

A refused or failed extraction leaves nothing behind, and :func:`extracted_upload` deletes the
extracted files once the caller is done with them (uploads are temporary). What an extracted upload is
scored by: :func:`upload_request`, the same request every door builds.

Example:
    >>> import io, tempfile, zipfile
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w") as zf:
    ...     zf.writestr("../evil.wav", b"x")
    >>> path = tempfile.mktemp(suffix=".zip"); _ = open(path, "wb").write(buf.getvalue())
    >>> try:
    ...     check_zip(path)
    ... except UnsafeUploadError as err:
    ...     print(err)
    '../evil.wav': member path leaves the extraction folder ('..' component)
"""

from __future__ import annotations

import contextlib
import os
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Callable, Iterator

from ..errors import HugvisError

if TYPE_CHECKING:  # the request is built where it is used: importing the Space's uploads loads no scorer
    from ..scoring.request import EvaluationRequest

# What a prediction folder of any task holds (docs/CONVENTIONS.md), plus small text files.
DEFAULT_SUFFIXES: frozenset[str] = frozenset({
    ".png", ".mp4", ".mkv", ".mov", ".wav", ".flac", ".jsonl", ".json", ".txt", ".csv", ".md", ".yaml", ".yml"})
# Pickle protocol 2+ streams start with PROTO (0x80) then the protocol number.
_PICKLE_MAGICS = tuple(bytes([0x80, n]) for n in range(2, 6))
_CHUNK = 1 << 16


class UnsafeUploadError(HugvisError, ValueError):
    """The upload breaks a safety rule; the message names the member and the rule."""


@dataclass(frozen=True)
class UploadLimits:
    """Limits for one upload; the defaults fit the synthetic grid and a few real clips."""

    max_zip_bytes: int = 512 * 1024**2
    max_total_bytes: int = 2 * 1024**3
    max_members: int = 50_000
    allowed_suffixes: frozenset[str] = DEFAULT_SUFFIXES
    max_work_bytes: int = 8 * 1024**3  # disk quota of the whole work folder (all uploads alive at once)


def _check_name(name: str) -> PurePosixPath:
    if "\x00" in name:
        raise UnsafeUploadError(f"{name!r}: member name contains a NUL byte")
    if "\\" in name:
        raise UnsafeUploadError(f"{name!r}: backslash in member name (Windows path separators are not accepted)")
    path = PurePosixPath(name)
    if path.is_absolute() or (path.parts and len(path.parts[0]) == 2 and path.parts[0][1] == ":"):
        raise UnsafeUploadError(f"{name!r}: absolute member path")
    if ".." in path.parts:
        raise UnsafeUploadError(f"{name!r}: member path leaves the extraction folder ('..' component)")
    if not path.parts:
        raise UnsafeUploadError(f"{name!r}: empty member name")
    return path


def is_ignorable(path: PurePosixPath) -> bool:
    """macOS archive litter (``__MACOSX/``, ``._x``, ``.DS_Store``): skipped, never extracted."""
    return path.parts[0] == "__MACOSX" or path.name.startswith("._") or path.name == ".DS_Store"


def check_zip(zip_path: "str | Path", limits: UploadLimits = UploadLimits()) -> list[zipfile.ZipInfo]:
    """Validate a zip's directory against every rule; returns the members to extract (files only).

    Raises:
        UnsafeUploadError: the first rule broken.
    """
    zip_path = Path(zip_path)
    size = zip_path.stat().st_size
    if size > limits.max_zip_bytes:
        raise UnsafeUploadError(f"upload is {size} bytes; the limit is {limits.max_zip_bytes} bytes")
    if not zipfile.is_zipfile(zip_path):
        raise UnsafeUploadError(f"{zip_path.name} is not a zip archive")
    with zipfile.ZipFile(zip_path) as archive:
        infos = archive.infolist()
    if len(infos) > limits.max_members:
        raise UnsafeUploadError(f"zip has {len(infos)} members; the limit is {limits.max_members}")
    seen: set[str] = set()
    total = 0
    files = []
    for info in infos:
        path = _check_name(info.filename)
        key = str(path)
        if key in seen:
            raise UnsafeUploadError(f"{info.filename!r}: duplicate member name")
        seen.add(key)
        if info.flag_bits & 0x1:
            raise UnsafeUploadError(f"{info.filename!r}: encrypted members are not accepted")
        mode = info.external_attr >> 16
        if mode and stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
            kind = "symbolic link" if stat.S_ISLNK(mode) else "special file"
            raise UnsafeUploadError(f"{info.filename!r}: {kind} members are not accepted")
        if info.is_dir() or is_ignorable(path):
            continue
        if path.suffix.lower() not in limits.allowed_suffixes:
            raise UnsafeUploadError(
                f"{info.filename!r}: file type {path.suffix or '(none)'!r} is not accepted; "
                f"allowed: {', '.join(sorted(limits.allowed_suffixes))}")
        total += info.file_size
        if total > limits.max_total_bytes:
            raise UnsafeUploadError(
                f"zip expands to more than {limits.max_total_bytes} bytes (declared sizes); refusing")
        files.append(info)
    if not files:
        raise UnsafeUploadError("zip contains no files")
    folders = {str(parent) for info in infos for parent in PurePosixPath(info.filename.rstrip("/")).parents}
    for info in files:
        if str(PurePosixPath(info.filename)) in folders:
            raise UnsafeUploadError(f"{info.filename!r}: the name is both a file and a folder in the zip; "
                                    f"rename one of them")
    return files


def declared_size(zip_path: "str | Path", limits: UploadLimits = UploadLimits()) -> int:
    """Uncompressed bytes the zip declares for the members it would extract (after every check)."""
    return sum(info.file_size for info in check_zip(zip_path, limits))


def safe_extract(zip_path: "str | Path", dest: "str | Path", limits: UploadLimits = UploadLimits()) -> Path:
    """Extract an untrusted zip into ``dest`` (created, must be empty, inside a scratch folder of the
    toolkit's: :func:`hug_vis_dataset.outputs.scratch`); returns the submission root.

    The root is ``dest`` itself, or its single top-level folder when the zip wraps everything in
    one folder (``my_system/<clip>.mp4``), so both ways of zipping a prediction folder work.

    Raises:
        UnsafeUploadError: any rule of :func:`check_zip`, or more bytes decompressed than declared
            or allowed (the partial extraction is left in ``dest`` for the caller to delete).
    """
    members = check_zip(zip_path, limits)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise ValueError(f"extraction folder {dest} is not empty")
    root = dest.resolve()
    try:
        _extract_members(zip_path, members, root, limits)
    except (zipfile.BadZipFile, zlib.error, EOFError) as err:
        # Python's zipfile itself stops at the declared size; a mismatch then surfaces as a CRC error.
        _empty(dest)
        raise UnsafeUploadError(f"corrupt zip archive: {err}") from None
    except OSError as err:  # a name clash on disk (file vs folder), a full disk ...
        _empty(dest)
        name = Path(err.filename).name if getattr(err, "filename", None) else "a member"
        raise UnsafeUploadError(f"{name!r}: cannot be extracted ({err.strerror or err}); the partial "
                                f"extraction was removed") from None
    except BaseException:
        _empty(dest)  # nothing half-extracted stays on disk
        raise
    return submission_root(dest)


def _empty(folder: Path) -> None:
    from ..outputs import discard

    for child in list(folder.iterdir()) if folder.is_dir() else []:
        discard(child)


def folder_bytes(folder: "str | Path") -> int:
    """Bytes of the regular files under ``folder`` (links not followed; 0 when absent)."""
    total = 0
    for base, _dirs, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(base, name)).st_size
    return total


@contextlib.contextmanager
def extracted_upload(zip_path: "str | Path", work_dir: "str | Path",
                     limits: UploadLimits = UploadLimits()) -> Iterator[Path]:
    """Extract an upload into a fresh folder of ``work_dir`` for the ``with`` block, then delete it.

    The upload is refused when the work folder (every upload alive at once) would grow past
    ``limits.max_work_bytes``. The extracted files are removed when the block ends, however it
    ends, so uploads never accumulate on the Space's disk.

    Yields:
        The submission root (see :func:`safe_extract`).

    Raises:
        UnsafeUploadError: any rule of :func:`safe_extract`, or the quota.

    Example:
        >>> import io, tempfile, zipfile, pathlib
        >>> work = pathlib.Path(tempfile.mkdtemp()); up = work.parent / (work.name + ".zip")
        >>> with zipfile.ZipFile(up, "w") as zf:
        ...     zf.writestr("sys/actor_0001_happy_action_01_script_001.wav", b"RIFF")
        >>> with extracted_upload(up, work) as root:
        ...     root.name, sorted(p.name for p in root.iterdir())
        ('sys', ['actor_0001_happy_action_01_script_001.wav'])
        >>> list(work.iterdir())
        []
    """
    work_dir = Path(work_dir)
    incoming = declared_size(zip_path, limits)
    used = folder_bytes(work_dir)
    if used + incoming > limits.max_work_bytes:
        raise UnsafeUploadError(f"{Path(zip_path).name}: expands to {incoming} bytes but the work folder already "
                                f"holds {used} of its {limits.max_work_bytes}-byte quota; try again later")
    from ..outputs import scratch

    # A scratch folder of the Space's own (the guard's transient marker): removed when the block ends,
    # and by a stopped Space too (scoring runs in a server thread: stopping.py).
    with scratch(prefix="upload-", parent=work_dir) as holder:
        yield safe_extract(zip_path, holder / "files", limits)


def _extract_members(zip_path: "str | Path", members: list[zipfile.ZipInfo], root: Path, limits: UploadLimits) -> None:
    total = 0
    with zipfile.ZipFile(zip_path) as archive:
        for info in members:
            target = (root / info.filename).resolve()
            # Belt and braces: the name check already forbids this, resolve() proves it.
            if os.path.commonpath([root, target]) != str(root):
                raise UnsafeUploadError(f"{info.filename!r}: member path leaves the extraction folder")
            target.parent.mkdir(parents=True, exist_ok=True)
            written = 0
            head = b""
            with archive.open(info) as source, open(target, "xb") as sink:
                while chunk := source.read(_CHUNK):
                    if len(head) < 2:
                        head += chunk[: 2 - len(head)]
                    written += len(chunk)
                    total += len(chunk)
                    if written > info.file_size or total > limits.max_total_bytes:
                        raise UnsafeUploadError(
                            f"{info.filename!r}: decompresses to more bytes than declared or allowed; refusing")
                    sink.write(chunk)
            if head in _PICKLE_MAGICS:
                from ..outputs import discard

                discard(target)
                raise UnsafeUploadError(f"{info.filename!r}: looks like a pickle stream; pickles are never loaded")


def is_wrapper_folder(name: str) -> bool:
    """Whether a zip's only top-level folder wraps the submission (``my_system/``) rather than being
    part of it: a folder named by a clip id is one matting clip's PNG frames, never a wrapper.

    Example:
        >>> is_wrapper_folder("my_system"), is_wrapper_folder("actor_0001_sad_action_01_script_001")
        (True, False)
    """
    from ..datamodel.grid import ClipId, ClipIdError

    try:
        ClipId.parse(name)
    except ClipIdError:
        return True
    return False


def submission_root(folder: "str | Path") -> Path:
    """``folder``, or its only child when that child is a folder wrapping the submission and nothing
    else is there (:func:`is_wrapper_folder`)."""
    folder = Path(folder)
    children = [c for c in folder.iterdir() if not is_ignorable(PurePosixPath(c.name))]
    if len(children) == 1 and children[0].is_dir() and is_wrapper_folder(children[0].name):
        return children[0]
    return folder


def upload_request(task: str, predictions: "str | Path", model: str, release_dir: "str | Path",
                   stage: "str | Path", on_scored: "Callable[[int, int], None] | None" = None) -> "EvaluationRequest":
    """The request the Space's upload scoring runs: the extracted upload scored against the Space's release into
    a staging folder of its store, no progress bar (``on_scored`` moves the page's), recorded as ``space <task>``.

    Example:
        >>> request = upload_request("matting", "upload", "MyNet", "release", "stage")
        >>> request.progress, request.command_line, request.require_all_metrics
        (False, ('space', 'matting'), False)
    """
    from ..scoring.request import EvaluationRequest

    return EvaluationRequest(task, predictions, model, release_dir, stage, progress=False, on_scored=on_scored,
                             command_line=["space", task])

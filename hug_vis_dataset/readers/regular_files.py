"""What may be read at all: regular files only, each kind within a size limit.

Every file the toolkit reads from a place a user names (a prediction, a release's text or media, a study, a
ratings log, a file it hashes) is opened here first. A name can lead to something that is no file: a FIFO
(``open`` waits forever for a writer), ``/dev/zero`` or ``/dev/urandom`` through a link (reading never
ends), a socket or a block device; or to a file far larger than any of its kind (a sparse file of 64 GB of
nothing). Each is refused in one line naming the file, what it is and the fix, before a byte is read. The
check is made on the opened descriptor (``O_NONBLOCK``, so opening a FIFO returns at once), never on a name
that could be swapped between a check and an open.

Example:
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp(); fifo = os.path.join(folder, "clip.mp4"); os.mkfifo(fifo)
    >>> try:
    ...     open_regular(fifo, "media file")
    ... except InputFileError as err:
    ...     print(err.problem)
    is a FIFO (a named pipe), not a regular file
    >>> path = os.path.join(folder, "a.txt"); _ = open(path, "w").write("hi")
    >>> with open_regular(path, "text file") as handle:
    ...     handle.read()
    b'hi'
"""

from __future__ import annotations

import errno
import os
import stat
from typing import BinaryIO

from ..errors import InputFileError

GIB = 1024**3
#: The largest file of each kind the toolkit reads (a larger one is no file of that kind: refused).
LIMITS: dict[str, "int | None"] = {
    "text file": 1 * GIB,  # clips.csv, predictions.jsonl, ratings and logs: megabytes at the full grid
    "media file": 16 * GIB,  # one clip's video or audio: a 1080p lossless clip is well under
    "image": 256 * 1024**2,  # one PNG frame of a matte
    "file": None,  # a file hashed whole (weights, shards): any size, a regular file still
}
#: The longest line a text file may have (a line of a toolkit file is at most a few kilobytes).
MAX_LINE_BYTES = 64 * 1024**2
FIX = "pass a regular file (a copy of the data, not a pipe, a device or a link to one)"

_KINDS = ((stat.S_ISFIFO, "a FIFO (a named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _what(mode: int) -> str:
    return next((words for test, words in _KINDS if test(mode)), "not a file")


def _size_words(size: int) -> str:
    return f"{size / GIB:.1f} GiB" if size >= GIB else f"{size / 1024**2:.1f} MiB"


def _checked(fd: int, path: "str | os.PathLike", kind: str, error: type) -> os.stat_result:
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", str(path))
    if not stat.S_ISREG(info.st_mode):
        raise error(path, "", f"is {_what(info.st_mode)}, not a regular file", FIX)
    limit = LIMITS.get(kind)
    if limit is not None and info.st_size > limit:
        raise error(path, "", f"is {_size_words(info.st_size)}, more than any {kind} the toolkit reads "
                    f"({_size_words(limit)})", "check that this is the file you meant")
    return info


def open_regular(path: "str | os.PathLike", kind: str = "file", error: type = InputFileError) -> BinaryIO:
    """``path`` opened for binary reading once it is known to be a regular file within ``kind``'s limit.

    Raises:
        InputFileError: (or ``error``, a subclass a caller's callers catch, such as ``MediaError``'s) a FIFO, a
            device, a socket, or larger than :data:`LIMITS` allows for ``kind``.
        FileNotFoundError, IsADirectoryError, PermissionError: as ``open`` does.
    """
    fd = os.open(os.fspath(path), os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        _checked(fd, path, kind, error)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)  # a regular file: reads as usual from here
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def check_regular(path: "str | os.PathLike", kind: str = "file", error: type = InputFileError) -> os.stat_result:
    """The file's ``stat`` once it is known to be a regular file within ``kind``'s limit (for a library that
    opens the path itself: FFmpeg, libsndfile, OpenCV).

    Raises:
        InputFileError: (or ``error``) as :func:`open_regular`.
    """
    with open_regular(path, kind, error) as handle:
        return os.fstat(handle.fileno())


__all__ = ["FIX", "LIMITS", "MAX_LINE_BYTES", "check_regular", "open_regular"]

"""Streaming file digests: the one way a file's bytes are hashed (:mod:`hug_vis_dataset.hashing` re-exports
them with its cache; they live here, importing nothing of the toolkit's but the file-kind rule, so the output
guard can hash what it writes without an import cycle).

Example:
    >>> import hashlib, tempfile
    >>> path = tempfile.mktemp(); _ = open(path, "wb").write(b"abc")
    >>> sha256_file(path) == hashlib.sha256(b"abc").hexdigest()
    True
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .regular_files import open_regular

BLOCK_BYTES = 1 << 20


def digest_file(path: "str | Path", *digests: Any, block: int = BLOCK_BYTES, kind: str = "file") -> None:
    """Feed a file, block by block, to every ``hashlib``-style object given (one read for all).

    Args:
        path: the file.
        *digests: objects with an ``update(bytes)`` method, e.g. ``hashlib.sha256()``.
        block: bytes read at a time (bounds memory).
        kind: the file's kind in :data:`hug_vis_dataset.readers.regular_files.LIMITS` (its size limit; any size by default).

    Example:
        >>> import hashlib, tempfile
        >>> path = tempfile.mktemp(); _ = open(path, "wb").write(b"abc")
        >>> md5, sha1 = hashlib.md5(), hashlib.sha1()
        >>> digest_file(path, md5, sha1, block=2)
        >>> md5.hexdigest() == hashlib.md5(b"abc").hexdigest(), sha1.hexdigest() == hashlib.sha1(b"abc").hexdigest()
        (True, True)
    """
    # A regular file (regular_files.py): hashing a FIFO would wait forever, /dev/zero would never end.
    with open_regular(path, kind) as handle:
        while piece := handle.read(block):
            for digest in digests:
                digest.update(piece)


def sha256_file(path: "str | Path", block: int = BLOCK_BYTES, kind: str = "file") -> str:
    """Hex sha256 of a file, streamed (memory bounded by ``block``).

    Example:
        >>> import tempfile
        >>> p = tempfile.mktemp(); _ = open(p, "wb").write(b"abc")
        >>> sha256_file(p)[:16]
        'ba7816bf8f01cfea'
    """
    digest = hashlib.sha256()
    digest_file(path, digest, block=block, kind=kind)
    return digest.hexdigest()


__all__ = ["BLOCK_BYTES", "digest_file", "sha256_file"]

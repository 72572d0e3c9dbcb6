"""File checksums, in one place: streaming digests and a cache keyed by path, size and mtime.

Every file the toolkit checks (pretrained weights, Parquet shards of a built repo, the release's
metadata CSV, files uploaded to the Hub) is hashed here, so a shard verified by ``hugvis evaluate``
and the same shard written by ``hugvis build`` are hashed the same way. Files are read in blocks,
so memory does not grow with the file.

Example:
    >>> import hashlib, tempfile
    >>> path = tempfile.mktemp(); _ = open(path, "wb").write(b"abc")
    >>> sha256_file(path) == hashlib.sha256(b"abc").hexdigest()
    True
    >>> cache = DigestCache()
    >>> cache.sha256(path) == cache.sha256(path), cache.hashed
    (True, 1)
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

# The streaming digests live in digests.py, below the output guard (which hashes every file it writes); this
# module is where the toolkit takes them from, with the cache.
from .readers.digests import BLOCK_BYTES, digest_file, sha256_file


def _valid_entry(entry: Any) -> bool:
    """Whether a cache file's entry has the shape :meth:`DigestCache.sha256` writes."""
    if not isinstance(entry, dict) or set(entry) != {"size", "mtime_ns", "sha256"}:
        return False
    ints = all(type(entry[k]) is int and entry[k] >= 0 for k in ("size", "mtime_ns"))
    digest = entry["sha256"]
    return ints and isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)


class DigestCache:
    """sha256 of files remembered by (absolute path, size, mtime): a file is hashed again only when it changed.

    In memory only, or also in a JSON file (``cache_file``; :meth:`save` writes it atomically)
    so that another process -- scoring the same repo tomorrow -- does not reread large files. The
    file maps the absolute path to ``{"size", "mtime_ns", "sha256"}``; an unreadable or damaged
    file is treated as empty (hashing again is always safe). A cache file lives only under the
    output the user named (a run's folder, ``<out>/.verified-shards.json``), never beside the
    files it describes: a reading command keeps its cache in memory (docs/ARCHITECTURE.md, "No
    stray writes").

    Attributes:
        hashed: how many files this cache hashed (rather than remembered) since it was created.

    Example:
        >>> import os
        >>> from hug_vis_dataset.outputs import scratch_folder
        >>> folder = scratch_folder(); path = os.path.join(folder, "f")
        >>> _ = open(path, "wb").write(b"abc")
        >>> first = DigestCache(os.path.join(folder, "cache.json"))
        >>> digest = first.sha256(path); first.save()
        >>> again = DigestCache(os.path.join(folder, "cache.json"))
        >>> again.sha256(path) == digest, again.hashed
        (True, 0)
    """

    def __init__(self, cache_file: "str | Path | None" = None) -> None:
        self.cache_file = Path(cache_file) if cache_file is not None else None
        self.entries: dict[str, dict] = self._load() if self.cache_file is not None else {}
        self.hashed = 0

    def _load(self) -> dict[str, dict]:
        # A cache is never trusted beyond its shape: a file that is not strict JSON (cut, a key twice)
        # is treated as empty, and an entry whose fields are not an int size, an int mtime and a
        # 64-digit hex sha256 is dropped, so a damaged cache only costs rehashing, never a digest.
        from .readers import InputFileError
        from .readers.json_files import read_json

        try:
            data = read_json(self.cache_file, expect=dict)
        except (OSError, InputFileError):
            return {}
        return {key: entry for key, entry in data.items() if _valid_entry(entry)}

    def sha256(self, path: "str | Path", kind: str = "file") -> str:
        """The file's sha256, hashed now only if its size or mtime differs from what is remembered (``kind``:
        its kind's size limit, :data:`hug_vis_dataset.readers.regular_files.LIMITS`)."""
        path = Path(path)
        st = path.stat()
        key = str(path.resolve())
        known = self.entries.get(key)
        if isinstance(known, dict) and known.get("size") == st.st_size and known.get("mtime_ns") == st.st_mtime_ns:
            return str(known.get("sha256"))
        digest = sha256_file(path, kind=kind)
        self.hashed += 1
        self.entries[key] = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}
        return digest

    def save(self) -> None:
        """Write the cache file (atomically) if there is one. A read-only location, or an output not made yet
        (a first run's ``--out`` before its first write), only costs rehashing."""
        if self.cache_file is None:
            return
        from .outputs import OutputError, write_text_file

        try:
            write_text_file(self.cache_file, json.dumps(self.entries, indent=0, sort_keys=True))
        except (OSError, OutputError):
            pass

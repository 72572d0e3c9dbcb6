"""Reference features computed once and kept on disk, content-addressed (FID reference features,
source-portrait embeddings for CSIM).

An entry's key is the sha256 of everything its value depends on: the reference's own bytes (so a
changed dataset is another key, wherever it lies), the feature extractor's identity (its weights'
pinned sha256, or an injected model's ``cache_key``), and the preprocessing version of the feature
(:data:`FEATURE_VERSIONS`: bumped when the code that computes it changes). Each entry is an ``.npz``
with a JSON side file holding the key's parts and the sha256 of the ``.npz``. An entry is verified against
the key it is read for: its side file's kind and parts must hash to that key (an entry moved or copied under
another key's name, side file and all, holds another reference's features) and its bytes must match the
sha256; otherwise it is a miss, reported in one line on stderr, recomputed and stored again. Files are written to a temporary
name and renamed, so processes and Ray workers sharing the folder never read half an entry.

The folder is ``$HUGVIS_CACHE_DIR/features`` (default ``~/.cache/hugvis/features``), marked as the
toolkit's cache (:func:`hug_vis_dataset.outputs.mark_cache`); ``hugvis cache list`` and ``hugvis cache
clear`` show and empty it. Clearing removes only entries (``<kind>/<sha256>.npz|.json`` of a known kind),
nothing else a user may have put there, and never anything outside the folder.

Example:
    >>> import tempfile, numpy as np
    >>> cache = FeatureCache(tempfile.mkdtemp())
    >>> calls = []
    >>> def compute():
    ...     calls.append(1)
    ...     return {"x": np.arange(3.0)}
    >>> parts = {"reference": "ab12", "extractor": "toy", "version": 1}
    >>> cache.get_or_compute("toy", parts, compute)["x"].tolist()
    [0.0, 1.0, 2.0]
    >>> cache.get_or_compute("toy", parts, compute)["x"].tolist(), len(calls)
    ([0.0, 1.0, 2.0], 1)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from ..errors import ToolUsageError
from ..hashing import DigestCache, sha256_file
from ..outputs import discard, mark_cache, write_file, write_text_file
from ..readers.json_files import read_json

#: Preprocessing version per feature kind: part of every key, bumped when the computation changes.
FEATURE_VERSIONS = {"fid_reference": 1, "portrait_embedding": 1, "human_landmarks": 1}
ENV_DISABLE = "HUGVIS_NO_FEATURE_CACHE"
_ENTRY = re.compile(r"[0-9a-f]{64}\.json")
_DIGESTS = DigestCache()  # reference file digests by path, size and mtime, per process


def cache_folder() -> Path:
    """``$HUGVIS_CACHE_DIR/features`` (or ``~/.cache/hugvis/features``)."""
    from ..weights.registry import cache_root

    return cache_root() / "features"


def reference_digest(ref: "str | Path") -> str:
    """sha256 of a reference's bytes: a file (remembered by path, size and mtime) or a repo cell."""
    from ..references import is_row_locator
    from ..references.locators import RowLocator, read_cell_bytes

    if is_row_locator(ref):
        return hashlib.sha256(read_cell_bytes(RowLocator.parse(str(ref)))).hexdigest()
    return _DIGESTS.sha256(ref)


class FeatureCache:
    """Content-addressed feature arrays in one folder (see the module docstring).

    Attributes:
        computed: entries computed by this object (a miss, or a corrupt entry).
        reused: entries read back.
    """

    def __init__(self, folder: "str | Path | None" = None) -> None:
        self.folder = Path(folder) if folder is not None else cache_folder()
        self.computed = 0
        self.reused = 0

    @staticmethod
    def key(parts: Mapping[str, Any]) -> str:
        return hashlib.sha256(json.dumps(dict(parts), sort_keys=True, default=str).encode("utf-8")).hexdigest()

    def _paths(self, kind: str, key: str) -> tuple[Path, Path]:
        return self.folder / kind / f"{key}.npz", self.folder / kind / f"{key}.json"

    def has(self, kind: str, parts: Mapping[str, Any]) -> bool:
        """Whether an entry is stored (its arrays and a side file naming their sha256), without reading
        the arrays: a reader that needs them calls :meth:`load`, which checks the sha256 and recomputes a
        corrupt entry.

        Example:
            >>> import tempfile, numpy as np
            >>> cache = FeatureCache(tempfile.mkdtemp())
            >>> cache.has("k", {"a": 1}), cache.store("k", {"a": 1}, {"x": np.zeros(2)}), cache.has("k", {"a": 1})
            (False, None, True)
        """
        key = self.key(parts)
        data, meta = self._paths(kind, key)
        if not data.is_file():
            return False
        try:
            record = read_json(meta)
        except (OSError, ValueError):
            return False
        return bool(record.get("sha256")) and _key_problem(record, kind, key) is None

    def load(self, kind: str, parts: Mapping[str, Any]) -> "dict[str, np.ndarray] | None":
        """The stored arrays, or None when absent or corrupt (a corrupt entry is named on stderr)."""
        key = self.key(parts)
        data, meta = self._paths(kind, key)
        if not data.is_file() or not meta.is_file():
            return None
        try:
            record = read_json(meta)  # strict: a duplicated "sha256" is a corrupt entry, recomputed
            # Verified against the key it is read for: an entry moved or copied under another key's name (its
            # own side file with it) is another reference's features, whatever its sha256 says.
            problem = _key_problem(record, kind, key)
            if problem:
                raise ValueError(problem)
            if record.get("sha256") != sha256_file(data):
                raise ValueError("sha256 mismatch")
            with np.load(data, allow_pickle=False) as z:
                return {name: z[name].copy() for name in z.files}
        except (OSError, ValueError, KeyError, AttributeError) as err:
            print(f"feature cache: entry {data} is corrupt ({err}); recomputing it", file=sys.stderr)
            return None

    def store(self, kind: str, parts: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        """Write an entry atomically (the ``.npz`` first, then its side file naming its sha256)."""
        key = self.key(parts)
        data, meta = self._paths(kind, key)
        mark_cache(self.folder)
        data.parent.mkdir(parents=True, exist_ok=True)
        # write_file removes its temporary file whatever happens (a stop signal mid-write included),
        # so a stopped run leaves the old entry or the new one and no half-written file beside them.
        write_file(data, lambda handle: np.savez(handle, **{k: np.asarray(v) for k, v in arrays.items()}))
        record = {"kind": kind, "parts": dict(parts), "sha256": sha256_file(data), "created": time.time()}
        write_text_file(meta, json.dumps(record, sort_keys=True, default=str))

    def get_or_compute(self, kind: str, parts: Mapping[str, Any],
                       compute: Callable[[], Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
        """The entry of ``parts``: read back when present and intact, else computed and stored."""
        found = self.load(kind, parts)
        if found is not None:
            self.reused += 1
            return found
        arrays = {k: np.asarray(v) for k, v in compute().items()}
        self.computed += 1
        try:
            self.store(kind, parts, arrays)
        except OSError as err:  # a read-only or full cache only costs recomputing next time
            print(f"feature cache: cannot write {self.folder} ({err}); values are unchanged", file=sys.stderr)
        return arrays

    def entries(self) -> list[dict]:
        """Every intact-looking entry: kind, key, bytes, creation time and the key's parts."""
        out = []
        for meta in sorted(self.folder.glob("*/*.json")) if self.folder.is_dir() else []:
            if meta.parent.name not in FEATURE_VERSIONS or not _ENTRY.fullmatch(meta.name):
                continue  # not an entry (a file someone put here): never listed, never cleared
            data = meta.with_suffix(".npz")
            try:
                record = read_json(meta)
            except (OSError, ValueError):
                record = {}
            size = (data.stat().st_size if data.is_file() else 0) + meta.stat().st_size
            out.append({"kind": meta.parent.name, "key": meta.stem, "bytes": size,
                        "created": record.get("created"), "parts": record.get("parts", {})})
        return out

    def clear(self, kind: "str | None" = None) -> tuple[int, int]:
        """Delete every entry (or those of ``kind``, one of :data:`FEATURE_VERSIONS`); returns (entries, bytes).

        Only entries are removed (``<kind>/<64 hex digits>.npz`` and ``.json``): a file of another name is
        left where it is, and an unknown ``kind`` (a path, ``..``) is refused before anything is touched.

        Raises:
            ToolUsageError: ``kind`` is not a feature kind.
        """
        if kind is not None and kind not in FEATURE_VERSIONS:
            raise ToolUsageError(f"unknown feature kind {kind!r}; choose one of {', '.join(sorted(FEATURE_VERSIONS))} "
                                 f"(hugvis cache list shows what is stored)")
        if not self.folder.is_dir():
            return 0, 0
        entries = [e for e in self.entries() if kind is None or e["kind"] == kind]
        for entry in entries:
            for suffix in (".npz", ".json"):
                discard(self.folder / entry["kind"] / f"{entry['key']}{suffix}")
        return len(entries), sum(e["bytes"] for e in entries)


def _key_problem(record: Any, kind: str, key: str) -> "str | None":
    """Why a side file does not describe the entry of ``kind`` and ``key`` it was read as (None when it does):
    its kind and the key its own parts hash to must be those the entry is stored under.

    >>> parts = {"reference": "ab12", "extractor": "toy", "version": 1}
    >>> _key_problem({"kind": "toy", "parts": parts}, "toy", FeatureCache.key(parts)) is None
    True
    >>> _key_problem({"kind": "toy", "parts": {**parts, "reference": "cd34"}}, "toy", FeatureCache.key(parts))[:40]
    "its side file names another key's parts "
    """
    if not isinstance(record, dict) or not isinstance(record.get("parts"), dict):
        return "its side file names no key"
    if record.get("kind") != kind:
        return f"its side file names the kind {record.get('kind')!r}, not {kind!r}"
    if FeatureCache.key(record["parts"]) != key:
        return f"its side file names another key's parts ({FeatureCache.key(record['parts'])[:12]}...)"
    return None


def shared_cache() -> "FeatureCache | None":
    """The process's cache, or None when ``$HUGVIS_NO_FEATURE_CACHE`` is set."""
    if os.environ.get(ENV_DISABLE):
        return None
    return FeatureCache()


__all__ = ["ENV_DISABLE", "FEATURE_VERSIONS", "FeatureCache", "cache_folder", "reference_digest", "shared_cache"]

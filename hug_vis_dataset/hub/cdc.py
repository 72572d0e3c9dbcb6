"""Content-defined chunking (a gear-hash rolling hash, FastCDC style) to measure chunk-level deduplication.

The Hub stores repo files in Xet storage, which cuts every file into content-defined chunks
(about 8 KiB minimum, 64 KiB target, 128 KiB maximum) and keeps one copy of each distinct chunk.
:func:`dedup_size` applies the same idea to a set of files: it cuts them with
:class:`ContentDefinedChunker` and returns the bytes of the distinct chunks, i.e. what a
chunk-deduplicating store holds. It is our own measurement, not Xet's exact algorithm (Xet also
groups chunks and dedups against a sampled global index), so read it as the storage a
chunk-level dedup can reach.

Why content-defined: a cut is placed where the hash of the last 64 bytes matches a mask, so a cut
depends only on nearby content. Bytes inserted at the front of a file move every fixed-size
block boundary (:class:`FixedSizeChunker`), but content-defined cuts re-appear after the
insertion and the rest of the chunks are shared.

The rolling hash is ``h = (h << 1) + GEAR[byte]`` on 64 bits: a byte's contribution leaves the
hash after 64 shifts, so bit ``63 - k`` depends on the last ``64 - k`` bytes only. The cut test
uses the top ``log2(avg_size)`` bits. No cut is tested before ``min_size`` bytes (and hashing
starts 64 bytes before that, so every test sees a full window); a chunk is cut at ``max_size``
at the latest.

Example:
    >>> import numpy as np
    >>> chunker = ContentDefinedChunker(min_size=64, avg_size=256, max_size=1024)
    >>> data = np.random.default_rng(0).integers(0, 256, 10_000, dtype=np.uint8)
    >>> cuts = chunker.cut_points(data)
    >>> int(cuts[-1]), bool(np.all(np.diff(np.r_[0, cuts])[:-1] >= 64))
    (10000, True)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Protocol

import numpy as np
from numba import njit

from .storage_info import DedupSize

KiB = 1 << 10

#: Seed of the gear table. The table is the raw output of a PCG64 bit generator, whose stream
#: numpy keeps stable across versions, so chunk boundaries never change with the numpy version.
GEAR_SEED = 0x4855475649530001
#: Bytes read from a file at a time by :func:`iter_file_chunks` (memory is this plus one chunk).
READ_BYTES = 8 << 20
#: Bytes of history that decide a cut (one bit of the 64-bit hash per byte).
WINDOW = 64


def gear_table(seed: int = GEAR_SEED) -> np.ndarray:
    """256 pseudo-random 64-bit values, one per byte value (deterministic).

    Example:
        >>> t = gear_table()
        >>> t.dtype, t.shape, bool(np.array_equal(t, gear_table()))
        (dtype('uint64'), (256,), True)
    """
    return np.random.PCG64(seed).random_raw(256).astype(np.uint64)


@njit(cache=True)
def _content_cuts(data, gear, mask, min_size, max_size, final):  # pragma: no cover - compiled
    n = data.size
    cuts = np.empty(n // min_size + 2, np.int64)
    count = 0
    start = 0
    one = np.uint64(1)
    while start < n:
        if n - start <= min_size and not final:
            break
        end = min(start + max_size, n)
        first_test = start + min_size
        i = max(start, first_test - WINDOW)
        h = np.uint64(0)
        cut = -1
        while i < end:
            h = (h << one) + gear[data[i]]
            i += 1
            if i >= first_test and (h & mask) == 0:
                cut = i
                break
        if cut < 0:
            if end == start + max_size or final:
                cut = end
            else:  # the chunk may continue in bytes not read yet
                break
        cuts[count] = cut
        count += 1
        start = cut
    return cuts[:count]


class Chunker(Protocol):
    """Cuts a byte array into chunks; ``max_size`` bounds the bytes carried between reads."""

    max_size: int

    def cut_points(self, data: np.ndarray, final: bool = True) -> np.ndarray:
        """Chunk end offsets (exclusive, increasing) in ``data``; see :class:`ContentDefinedChunker`."""
        ...  # pragma: no cover - protocol


@dataclass(frozen=True)
class ContentDefinedChunker:
    """Gear-hash content-defined chunker with min/avg/max sizes (defaults: Xet's 8/64/128 KiB).

    Attributes:
        min_size: no chunk (but the last) is shorter; must be at least 64 (the hash window).
        avg_size: a power of two; the cut test uses its ``log2`` top hash bits, so past
            ``min_size`` a cut comes after ``avg_size`` bytes on average.
        max_size: no chunk is longer.
    """

    min_size: int = 8 * KiB
    avg_size: int = 64 * KiB
    max_size: int = 128 * KiB

    def __post_init__(self) -> None:
        if not WINDOW <= self.min_size <= self.max_size or self.avg_size & (self.avg_size - 1) or self.avg_size < 2:
            raise ValueError(f"need {WINDOW} <= min_size <= max_size and avg_size a power of two >= 2: {self}")

    @property
    def mask(self) -> int:
        """The top ``log2(avg_size)`` bits of the 64-bit hash."""
        bits = self.avg_size.bit_length() - 1
        return ((1 << bits) - 1) << (64 - bits)

    def cut_points(self, data: np.ndarray, final: bool = True) -> np.ndarray:
        """Chunk ends in ``data`` (uint8). With ``final=False`` the tail that could still grow
        (no cut found yet, shorter than ``max_size``) gets no end: the caller carries it over.

        Example:
            >>> c = ContentDefinedChunker(min_size=64, avg_size=64, max_size=128)
            >>> c.cut_points(np.zeros(300, np.uint8)).tolist()  # hash of zeros never hits the mask
            [128, 256, 300]
        """
        return _content_cuts(np.ascontiguousarray(data, dtype=np.uint8), _GEAR, np.uint64(self.mask),
                             self.min_size, self.max_size, final)


@dataclass(frozen=True)
class FixedSizeChunker:
    """Fixed-size blocks: the baseline that an insertion shifts out of alignment.

    Example:
        >>> FixedSizeChunker(4).cut_points(np.zeros(10, np.uint8)).tolist()
        [4, 8, 10]
    """

    max_size: int

    def cut_points(self, data: np.ndarray, final: bool = True) -> np.ndarray:
        """Ends of the blocks of ``data``; without ``final`` a short last block is carried over."""
        n = len(data)
        cuts = np.arange(self.max_size, n + 1, self.max_size, dtype=np.int64)
        if final and n % self.max_size:
            cuts = np.append(cuts, np.int64(n))
        return cuts


_GEAR = gear_table()
#: The chunking the Hub's Xet storage uses (8 KiB min, 64 KiB target, 128 KiB max).
XET_CHUNKER = ContentDefinedChunker()


def _file_blocks(path: "str | Path", chunker: Chunker, read_bytes: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(bytes, chunk ends in them) per read; the tail after the last end is carried into the next read."""
    pending = np.zeros(0, np.uint8)
    with open(path, "rb") as handle:
        while True:
            block = handle.read(read_bytes)
            final = not block
            data = np.concatenate([pending, np.frombuffer(block, np.uint8)]) if block else pending
            cuts = chunker.cut_points(data, final=final)
            yield data, cuts
            pending = data[cuts[-1]:] if len(cuts) else data
            if final:
                return


def iter_file_chunks(path: "str | Path", chunker: Chunker = XET_CHUNKER, read_bytes: int = READ_BYTES) -> Iterator[bytes]:
    """The chunks of a file, read ``read_bytes`` at a time (memory: one read plus one chunk).

    The chunks do not depend on ``read_bytes``: a cut depends only on the bytes since the previous
    cut, and a tail without a cut is carried into the next read.
    """
    for data, cuts in _file_blocks(path, chunker, read_bytes):
        start = 0
        for end in cuts.tolist():
            yield data[start:end].tobytes()
            start = end


def dedup_size(paths: Iterable["str | Path"], chunker: Chunker = XET_CHUNKER,
               read_bytes: int = READ_BYTES) -> DedupSize:
    """Size of ``paths`` after chunk-level dedup: the bytes of their distinct chunks.

    A chunk is identified by a 64-bit BLAKE2b digest, so the index costs 12 bytes per chunk (a
    TB-sized repo has about 16 million chunks: 200 MB). Two different chunks share a key with
    probability about ``chunks**2 / 2**65`` (1e-5 at 16 million), which would undercount one chunk.

    Example:
        >>> import tempfile, os
        >>> folder = tempfile.mkdtemp()
        >>> data = np.random.default_rng(1).integers(0, 256, 300_000, dtype=np.uint8).tobytes()
        >>> for name in ("a", "b"):
        ...     _ = open(os.path.join(folder, name), "wb").write(data)
        >>> size = dedup_size([os.path.join(folder, n) for n in ("a", "b")])
        >>> size.total_bytes, size.unique_bytes
        (600000, 300000)
    """
    keys: list[np.ndarray] = []
    sizes: list[np.ndarray] = []
    for path in paths:
        for data, cuts in _file_blocks(path, chunker, read_bytes):
            if not len(cuts):
                continue
            starts = np.r_[0, cuts[:-1]]
            view = memoryview(data)
            digests = b"".join(hashlib.blake2b(view[a:b], digest_size=8).digest()
                               for a, b in zip(starts.tolist(), cuts.tolist()))
            keys.append(np.frombuffer(digests, np.uint64))
            sizes.append((cuts - starts).astype(np.uint32))
    all_keys = np.concatenate(keys) if keys else np.zeros(0, np.uint64)
    all_sizes = np.concatenate(sizes).astype(np.int64) if sizes else np.zeros(0, np.int64)
    _, first = np.unique(all_keys, return_index=True)
    return DedupSize(int(all_sizes.sum()), int(all_sizes[first].sum()), len(all_keys), len(first))


def folder_files(folder: "str | Path", exclude: Iterable[str] = ()) -> list[Path]:
    """Every file under ``folder`` in sorted order, leaving out top-level entries named in ``exclude``.

    Example:
        >>> folder_files("/nonexistent")
        []
    """
    root = Path(folder)
    skip = set(exclude)
    return sorted(p for p in root.rglob("*") if p.is_file() and p.relative_to(root).parts[0] not in skip)

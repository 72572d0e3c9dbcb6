"""The one file-checksum helper (hashing.py) against hashlib on whole bytes, and its cache's invalidation."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from hug_vis_dataset.hashing import DigestCache, digest_file, sha256_file


@pytest.mark.parametrize("size", [0, 1, 999, 1000, 1001, 4096])
@pytest.mark.parametrize("block", [1, 7, 1000, 1 << 20])
def test_streamed_digests_equal_hashlib_on_the_whole_bytes(tmp_path, size, block):
    data = os.urandom(size)
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    assert sha256_file(path, block=block) == hashlib.sha256(data).hexdigest()
    sha1, md5 = hashlib.sha1(), hashlib.md5()
    digest_file(path, sha1, md5, block=block)
    assert (sha1.hexdigest(), md5.hexdigest()) == (hashlib.sha1(data).hexdigest(), hashlib.md5(data).hexdigest())


def test_cache_rehashes_only_when_size_or_mtime_change(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    cache = DigestCache()
    assert cache.sha256(path) == hashlib.sha256(b"abc").hexdigest()
    assert cache.sha256(path) == hashlib.sha256(b"abc").hexdigest()
    assert cache.hashed == 1

    # Same size, new content and a new mtime: hashed again.
    stat = path.stat()
    path.write_bytes(b"xyz")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert cache.sha256(path) == hashlib.sha256(b"xyz").hexdigest()
    assert cache.hashed == 2

    # New size, mtime forced back to the remembered one: the size alone triggers a rehash.
    remembered = path.stat().st_mtime_ns
    path.write_bytes(b"longer")
    os.utime(path, ns=(remembered, remembered))
    assert cache.sha256(path) == hashlib.sha256(b"longer").hexdigest()
    assert cache.hashed == 3


def test_cache_file_is_shared_between_instances_and_survives_damage(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    from hug_vis_dataset.outputs import claim

    # A cache file lives under the output a command claimed (its ledger makes it the toolkit's to replace).
    cache_file = claim("hugvis evaluate", tmp_path / "cache", "results").ensure() / "digests.json"
    first = DigestCache(cache_file)
    first.sha256(path)
    first.save()
    stored = json.loads(cache_file.read_text(encoding="utf-8"))
    st = path.stat()
    assert stored == {str(path.resolve()): {"size": 3, "mtime_ns": st.st_mtime_ns,
                                            "sha256": hashlib.sha256(b"abc").hexdigest()}}

    second = DigestCache(cache_file)
    assert second.sha256(path) == hashlib.sha256(b"abc").hexdigest()
    assert second.hashed == 0

    cache_file.write_text("{not json", encoding="utf-8")
    damaged = DigestCache(cache_file)
    assert damaged.sha256(path) == hashlib.sha256(b"abc").hexdigest()
    assert damaged.hashed == 1


def test_a_cache_that_cannot_be_written_costs_only_rehashing(tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache folder should be", encoding="utf-8")
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    cache = DigestCache(blocker / "digests.json")
    assert cache.sha256(path) == hashlib.sha256(b"abc").hexdigest()
    cache.save()  # no exception: the parent is a file
    assert blocker.read_text(encoding="utf-8").startswith("a file")

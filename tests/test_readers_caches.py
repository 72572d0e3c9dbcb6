"""The caches' readers (issue 35): a cache file damaged in any way costs recomputation, never a value.

A cache is the one file kind where "refuse with a one-line error" is the wrong answer: the file is the
toolkit's own, and recomputing is always safe. So the property fuzzed here (hypothesis, derandomized) is
stronger than "error or same result": whatever is done to the cache file (cut at any byte, garbage
appended, a key twice, a field of another type, an entry of another shape), the value read through the
cache equals the value computed without it, and no exception escapes.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hug_vis_dataset.cache.features import FeatureCache
from hug_vis_dataset.hashing import DigestCache

FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _digest_cache_file(folder: Path) -> tuple[Path, list[Path], bytes]:
    files = []
    for index in range(3):
        path = folder / f"f{index}.bin"
        path.write_bytes(bytes([index]) * (100 + index))
        files.append(path)
    from hug_vis_dataset.outputs import claim

    # A digest cache lives under the output a command claimed (a run's --out).
    cache_file = claim("hugvis evaluate", folder / "results", "results").ensure() / "digests.json"
    cache = DigestCache(cache_file)
    for path in files:
        cache.sha256(path)
    cache.save()
    return cache_file, files, cache_file.read_bytes()


def _damage(clean: bytes, how: str, cut: int, garbage: bytes) -> bytes:
    text = clean.decode("utf-8")
    if how == "cut":
        return clean[: cut % (len(clean) + 1)]
    if how == "append":
        return clean + garbage
    if how == "duplicate_key":  # the first entry again, with a wrong digest: strict JSON must refuse it
        data = json.loads(text)
        key = sorted(data)[0]
        wrong = dict(data[key], sha256="0" * 64)
        return (text.rstrip().rstrip("}") + f",\n{json.dumps(key)}: {json.dumps(wrong)}}}").encode()
    if how == "retype":  # a size written as a string: the entry's shape is wrong, so it is dropped
        data = json.loads(text)
        key = sorted(data)[cut % len(data)]
        data[key]["size"] = str(data[key]["size"])
        return json.dumps(data).encode()
    if how == "extra_field":
        data = json.loads(text)
        key = sorted(data)[cut % len(data)]
        data[key]["sha256_note"] = "x"
        return json.dumps(data).encode()
    if how == "short_digest":
        data = json.loads(text)
        key = sorted(data)[cut % len(data)]
        data[key]["sha256"] = data[key]["sha256"][:-1]
        return json.dumps(data).encode()
    if how == "bom_crlf":
        return b"\xef\xbb\xbf" + clean.replace(b"\n", b"\r\n")
    raise AssertionError(how)


HOWS = ["cut", "append", "duplicate_key", "retype", "extra_field", "short_digest", "bom_crlf"]


@FUZZ
@given(how=st.sampled_from(HOWS), cut=st.integers(min_value=0, max_value=10_000),
       garbage=st.binary(min_size=1, max_size=40))
def test_a_damaged_digest_cache_file_never_changes_a_digest(tmp_path_factory, how, cut, garbage):
    folder = tmp_path_factory.mktemp("digests")
    cache_file, files, clean = _digest_cache_file(folder)
    cache_file.write_bytes(_damage(clean, how, cut, garbage))
    cache = DigestCache(cache_file)
    for path in files:
        assert cache.sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_duplicated_key_in_the_digest_cache_is_not_read_as_its_last_value(tmp_path):
    # json.loads keeps the last of two equal keys: here that is a wrong digest for an unchanged file
    cache_file, files, clean = _digest_cache_file(tmp_path)
    cache_file.write_bytes(_damage(clean, "duplicate_key", 0, b""))
    first = sorted(json.loads(clean))[0]
    cache = DigestCache(cache_file)
    assert cache.sha256(first) == hashlib.sha256(Path(first).read_bytes()).hexdigest()
    assert [cache.sha256(p) for p in files] == [hashlib.sha256(p.read_bytes()).hexdigest() for p in files]
    assert cache.hashed == 3  # the whole file was set aside, every file hashed again


def test_an_intact_digest_cache_is_used(tmp_path):
    cache_file, files, _ = _digest_cache_file(tmp_path)
    cache = DigestCache(cache_file)
    assert [cache.sha256(p) for p in files] == [hashlib.sha256(p.read_bytes()).hexdigest() for p in files]
    assert cache.hashed == 0


def _entry(folder: Path) -> tuple[FeatureCache, dict, Path, Path]:
    cache = FeatureCache(folder)
    parts = {"reference": "ab12", "extractor": "toy", "version": 1}
    cache.store("toy", parts, {"mu": np.arange(4.0), "sigma": np.eye(2)})
    data, meta = cache._paths("toy", cache.key(parts))
    return cache, parts, data, meta


@FUZZ
@given(which=st.sampled_from(["arrays", "side"]), how=st.sampled_from(["cut", "append", "duplicate_key", "flip"]),
       cut=st.integers(min_value=0, max_value=100_000), garbage=st.binary(min_size=1, max_size=40))
def test_a_damaged_feature_cache_entry_is_recomputed_never_returned(tmp_path_factory, which, how, cut, garbage):
    cache, parts, data, meta = _entry(tmp_path_factory.mktemp("features"))
    target = data if which == "arrays" else meta
    clean = target.read_bytes()
    if how == "cut":
        damaged = clean[: cut % len(clean)]
    elif how == "append":
        damaged = clean + garbage
    elif how == "flip":
        index = cut % len(clean)
        damaged = clean[:index] + bytes([clean[index] ^ 0xFF]) + clean[index + 1:]
    else:
        record = json.loads(meta.read_bytes())
        damaged = (json.dumps(record).rstrip("}") + ', "sha256": "' + "0" * 64 + '"}').encode()
        target = meta
    target.write_bytes(damaged)
    fresh = {"mu": np.arange(4.0), "sigma": np.eye(2)}
    got = cache.get_or_compute("toy", parts, lambda: fresh)
    assert set(got) == {"mu", "sigma"}
    np.testing.assert_array_equal(got["mu"], fresh["mu"])
    np.testing.assert_array_equal(got["sigma"], fresh["sigma"])


def test_a_stopped_store_leaves_no_temporary_file(tmp_path, monkeypatch):
    # a stop signal arrives as an exception in the main thread (stopping.py): raised from inside the
    # array write, it must leave neither a half entry nor a temporary file in the cache folder
    cache = FeatureCache(tmp_path)

    def stopped(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez", stopped)
    try:
        cache.store("toy", {"a": 1}, {"x": np.zeros(3)})
    except KeyboardInterrupt:
        pass
    left = [p.name for p in (tmp_path / "toy").iterdir()] if (tmp_path / "toy").exists() else []
    assert left == []
    # the cache folder's own marker (the toolkit's cache: its entries are the toolkit's to replace) and nothing else
    assert sorted(os.listdir(tmp_path)) in (["toy"], [".hugvis-transient", "toy"], [".hugvis-transient"], [])

"""Trust in a cache (issue 52): a cache entry is verified against the key it is read for; a mismatch is a
miss, recomputed, and said.

The class generated: feature-cache entries permuted on disk, each ``.npz`` moved with its own side file
(so every sha256 still matches its bytes) under the name of another key, any permutation of any number of
entries, also across kinds. Two entries swapped were used silently: the side file's key was not checked
against the entry read. The property: every read gives exactly the features of its own key (recomputed
from an independent function of the key), the moved entries are recomputed, each named on stderr, and the
entries left in place are reused.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
KINDS = ("fid_reference", "portrait_embedding")


def features_of(kind: str, parts: dict) -> dict:
    """What an extractor gives for a key: a pure function of it (the independent reference)."""
    seed = int(hashlib.sha256(f"{kind}{sorted(parts.items())}".encode()).hexdigest()[:8], 16)
    return {"x": np.random.default_rng(seed).normal(size=4)}


@FUZZ
@given(n=st.integers(2, 6), data=st.data())
def test_entries_moved_under_another_key_are_misses_recomputed_and_named(tmp_path, capsys, n, data):
    from hug_vis_dataset.cache.features import FeatureCache

    folder = tmp_path / f"cache{data.draw(st.integers(0, 10**9))}"
    cache = FeatureCache(folder)
    keys = [(data.draw(st.sampled_from(KINDS)), {"reference": f"ref{i}", "extractor": "toy", "version": 1})
            for i in range(n)]
    for kind, parts in keys:
        cache.store(kind, parts, features_of(kind, parts))
    files = [cache._paths(kind, cache.key(parts)) for kind, parts in keys]
    order = data.draw(st.permutations(range(n)))
    staged = [(tmp_path / f"npz{i}", tmp_path / f"json{i}") for i in range(n)]
    for i, (npz, meta) in enumerate(files):  # each entry with its own side file, as mv / cp -p / rsync move them
        os.replace(npz, staged[i][0])
        os.replace(meta, staged[i][1])
    for i, j in enumerate(order):
        files[j][0].parent.mkdir(parents=True, exist_ok=True)
        os.replace(staged[i][0], files[j][0])
        os.replace(staged[i][1], files[j][1])
    capsys.readouterr()
    reader = FeatureCache(folder)
    moved = {j for i, j in enumerate(order) if i != j}
    for j, (kind, parts) in enumerate(keys):
        got = reader.get_or_compute(kind, parts, lambda kind=kind, parts=parts: features_of(kind, parts))
        np.testing.assert_array_equal(got["x"], features_of(kind, parts)["x"])
        assert reader.has(kind, parts)  # stored again, now under its own key
    assert reader.computed == len(moved) and reader.reused == n - len(moved)
    err = capsys.readouterr().err
    for j in moved:
        assert str(files[j][0]) in err
    assert len([line for line in err.splitlines() if line.startswith("feature cache:")]) == len(moved)

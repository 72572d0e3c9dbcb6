"""Every per-clip metric of the catalog through the one harness (tests/metric_tester.py, issue 36):
(a) functional value == an independent reference on several inputs with edge cases, (b) no change
with chunk size / batch size / threads / row order / file vs array, nor through the evaluate door
with chunk size and input order, (c) the evaluate module (or the scorer) pickles and gives the same
values, (d) library == evaluate module == runner rows == report on the synthetic grid.

Ids are the catalog's metric names; a catalog metric the harness has no row for fails
:func:`test_every_catalog_metric_has_a_harness_row`.
"""

from __future__ import annotations

import pytest

import metric_tester as MT
from hug_vis_dataset import catalog

METRICS = sorted(MT.REFERENCES)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return MT.door_world(tmp_path_factory)


def test_every_catalog_metric_has_a_harness_row():
    """Adding a metric to the catalog forces adding its reference (or its reason for having none)."""
    names = {m.name for m in catalog.METRICS}
    listed = [*MT.REFERENCES, *MT.NEEDS_WEIGHTS, *MT.NOT_PER_CLIP]
    assert len(listed) == len(set(listed)), "a metric is listed twice"
    assert set(listed) == names, {"no harness row": sorted(names - set(listed)),
                                  "not in the catalog": sorted(set(listed) - names)}


def test_only_the_weight_needing_metrics_skip_the_harness():
    """The skip list is exactly the catalog's metrics whose weights are not shipped in a package."""
    assert set(MT.NEEDS_WEIGHTS) == MT.weight_needing_metrics()
    assert set(MT.NOT_PER_CLIP) == {m.name for m in catalog.analyses()}
    for name in MT.REFERENCES:  # and everything in the harness is a per-clip value of its family's task
        spec = catalog.spec(name)
        assert spec.mode not in (catalog.ANALYSIS, catalog.SET_LEVEL), name
        assert MT.REFERENCES[name].task in spec.tasks, name


@pytest.mark.parametrize("metric", METRICS)
def test_functional_equals_reference(metric):
    finite, cases = MT.check_reference(metric)
    assert cases >= 3 and finite >= 1  # several inputs, edge cases among them (empty regions: NaN)


@pytest.mark.parametrize("family", MT.FAMILIES, ids=lambda f: f.name)
def test_batch_chunk_thread_and_order_invariance(family):
    labels = MT.check_variants(family)
    assert len(labels) >= 2 * len(MT.cases_of(family))  # at least two variants of every case


@pytest.mark.parametrize("metric", METRICS)
def test_module_door_invariance(world, metric):
    MT.check_module_invariance(world, metric)


@pytest.mark.parametrize("metric", METRICS)
def test_two_worker_processes_store_the_same_rows(world, metric):
    MT.check_workers(world, metric)


@pytest.mark.parametrize("metric", METRICS)
def test_pickled_module_gives_the_same_value(world, metric):
    MT.check_pickle(world, metric)


@pytest.mark.parametrize("metric", METRICS)
def test_every_door_gives_the_same_number(world, metric):
    MT.check_doors(world, metric)


def test_same_rejects_a_changed_value():
    """The harness's comparison can fail: one ulp in a nested array, a NaN against a number."""
    import numpy as np

    a = {"clip": {"mad": 1.0}, "per_frame": np.array([1.0, 2.0])}
    MT.same(a, {"clip": {"mad": 1.0}, "per_frame": np.array([1.0, 2.0])})
    with pytest.raises(AssertionError):
        MT.same(a, {"clip": {"mad": 1.0}, "per_frame": np.array([1.0, np.nextafter(2.0, 3.0)])})
    with pytest.raises(AssertionError):
        MT.same(float("nan"), 0.0)

"""The metric table, the ``metrics/`` folders, the weights registry and the paper's tables agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from hug_vis_dataset import catalog, weights
from hug_vis_dataset.publish.module_folders import module_files
from hug_vis_dataset.datamodel.paper_tables import paper_data
from hug_vis_dataset.tasks import TASKS

ROOT = Path(__file__).resolve().parents[1]


def test_every_module_folder_is_exactly_what_the_catalog_generates():
    folders = {p.name for p in (ROOT / "metrics").iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert folders == set(catalog.module_names()), "run: python -m hug_vis_dataset.publish.module_folders metrics"
    for name in catalog.module_names():
        for filename, text in module_files(name).items():
            assert (ROOT / "metrics" / name / filename).read_text(encoding="utf-8") == text, (name, filename)


def test_module_names_are_the_stored_row_names():
    stored = {m for task in TASKS.values() for m in task.metrics + task.set_metrics}
    modules = set(catalog.module_names())
    for name in stored:
        spec = catalog.spec(name)
        assert spec.module == (name in modules), name  # a stored metric has its own module unless reference-only
    for analysis in catalog.analyses():
        assert analysis.name in modules


def test_weights_registry_and_catalog_agree():
    needed = {w for m in catalog.METRICS for w in m.weights}
    baselines = {name for name, spec in weights.REGISTRY.items() if spec.serves}
    assert needed == set(weights.REGISTRY) - baselines, ("every registered file serves a metric (or says which "
                                                         "baseline it serves) and every needed file is registered")
    for name, spec in weights.REGISTRY.items():
        assert spec.metrics == catalog.metrics_needing(name) and (bool(spec.metrics) != bool(spec.serves))


def test_paper_tables_name_the_catalogs_metrics_with_the_same_direction():
    for table in paper_data()["tables"]:
        task = catalog.task(table["task"])
        keys = [m["key"] for m in table["metrics"]]
        if table["table"] == task.paper_table:  # objective tables (4, 5, 7, 9, 11)
            assert tuple(keys) == catalog.table_metrics(task.name), table["table"]
            for m in table["metrics"]:
                spec = catalog.spec(m["key"])
                assert spec.higher_is_better == m["higher_is_better"] and spec.label == m["display"], m["key"]
        else:
            assert table["table"] == task.mos_table  # subjective tables (6, 8, 10)


@pytest.mark.parametrize("name", [m.name for m in catalog.METRICS])
def test_each_row_is_coherent(name):
    spec = catalog.spec(name)
    low, high = spec.value_range
    assert low < high and spec.paper_scale > 0 and spec.description and spec.unit
    assert spec.protocol == catalog.SET if spec.mode == catalog.SET_LEVEL else spec.protocol != catalog.SET
    assert all(t in catalog.task_names() for t in spec.tasks)
    assert (spec.mode == catalog.ANALYSIS) == (spec.tasks == ())
    assert catalog.to_paper_units(name, 2.0) == 2.0 * spec.paper_scale

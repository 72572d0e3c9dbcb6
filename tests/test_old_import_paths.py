"""The old import paths of the modules grouped into folders (issue 55 part 2) keep working for one release.

Each is a module at the old path that only re-exports its new home (docs/ARCHITECTURE.md, "The package's folders";
docs/CHANGELOG.md): its names are the new home's objects, it imports nothing else, and nothing in the package
imports it (the shims are for users outside).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import hug_vis_dataset

PACKAGE_DIR = Path(hug_vis_dataset.__file__).resolve().parent
#: old module -> its new home (the shims' list in docs/ARCHITECTURE.md).
MOVED = {
    "grid": "datamodel.grid", "layout": "datamodel.layout", "release": "datamodel.release",
    "results": "datamodel.results", "paper_tables": "datamodel.paper_tables",
    "regular_files": "readers.regular_files", "digests": "readers.digests", "textio": "readers.textio",
    "media": "readers.media", "hub_access": "readers.hub_access",
    "features_cache": "cache.features",
    "release_info": "publish.release_info", "module_cards": "publish.module_cards",
    "module_folders": "publish.module_folders",
    "escaping": "presentation.escaping", "labels": "presentation.labels", "tables": "presentation.tables",
    "skipped_lines": "presentation.skipped_lines", "citation": "presentation.citation",
    "analysis_fields": "presentation.analysis_fields",
    "figures": "reporting.figures", "figure_style": "reporting.figure_style",
}


def _imports(path: Path) -> list[tuple[int, "str | None", list[str]]]:
    """(level, module, names) of every ``from ... import`` of a file."""
    return [(node.level, node.module, [alias.name for alias in node.names])
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.ImportFrom)]


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_re_exports_its_new_home(old):
    shim = importlib.import_module(f"hug_vis_dataset.{old}")
    home = importlib.import_module(f"hug_vis_dataset.{MOVED[old]}")
    assert f"hug_vis_dataset.{MOVED[old]}" in shim.__doc__.splitlines()[0]
    names = [name for name in vars(shim) if not name.startswith("_")]
    assert names and all(getattr(shim, name) is getattr(home, name) for name in names)
    assert {m for _, m, _ in _imports(PACKAGE_DIR / f"{old}.py")} == {MOVED[old]}  # the new home only


def test_the_old_maintenance_command_runs_the_new_one():
    tree = ast.parse((PACKAGE_DIR / "module_folders.py").read_text(encoding="utf-8"))
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "run_module"]
    assert [ast.literal_eval(c.args[0]) for c in calls] == ["hug_vis_dataset.publish.module_folders"]


def test_the_package_never_imports_an_old_path():
    old_paths = {f"hug_vis_dataset.{old}" for old in MOVED}
    found = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if path.parent == PACKAGE_DIR and path.stem in MOVED:
            continue
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        package = parts[:-1]
        for level, module, names in _imports(path):
            base = package[: len(package) - (level - 1)] if level else []
            source = ".".join(base + ([module] if module else [])) if level else (module or "")
            found += [f"{path.relative_to(PACKAGE_DIR.parent).as_posix()}: {name}" for name in
                      [source, *(f"{source}.{n}" for n in names)] if name in old_paths]
    assert found == []

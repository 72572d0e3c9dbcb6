"""Architecture rules of the ``hug_vis_dataset`` package, checked from the source text.

**No import cycle.** Every module's imports are read with :mod:`ast`, at any depth (module level,
inside functions, under ``if TYPE_CHECKING:``), so a dependency hidden in a function body or kept
for type hints still counts: hiding an import does not remove the knowledge one module has of the
other, it only postpones the failure. Relative imports are resolved against the importing module's
package (``from ..scoring import store`` in ``hug_vis_dataset/tasks/base.py`` is
``hug_vis_dataset.scoring.store``).

What an edge is:

- ``import a.b.c`` and ``from a.b import c`` where ``a.b.c`` is a module: an edge to ``a.b.c``.
- ``from a.b import name`` where ``name`` is not a submodule: an edge to ``a.b`` itself (its
  ``__init__.py``), because that is where ``name`` is read from.
- Only modules of ``hug_vis_dataset`` are nodes; the standard library and third parties are not.

What is *not* an edge: the parent packages that Python executes implicitly before a submodule
(``import hug_vis_dataset.hub.card`` runs ``hug_vis_dataset/hub/__init__.py`` first). Counting
those would make every package ``__init__`` that re-exports its submodules a cycle with each of
them, which it is not: ``hub/__init__`` -> ``hub.builder`` is a one-way facade. A submodule that
reads a name *from* its own package ``__init__`` while that ``__init__`` imports it (directly or
through others) is a real cycle and is reported.

**Top-level parts layer too** (:func:`package_cycles`): collapsing modules into the package's
top-level parts (``hug_vis_dataset.scoring``, ``hug_vis_dataset.reporting`` ...) must also give no
cycle, or the parts cannot be layered even when the modules are acyclic.

**No oversized module.** No module exceeds :data:`MAX_MODULE_LINES` lines, except the few listed in
:data:`SINGLE_JOB_MODULES` with the reason they are one job (bounded by :data:`SINGLE_JOB_MAX_LINES`);
the largest few are printed by ``pytest -s`` so the margin is visible.

**One home per concept** (:func:`misplaced_modules`): the report's modules live in ``reporting/``, the
human study's in ``studies/`` (the Space keeps only its forms), so a module named ``report*``, ``mos*`` or after
a study part outside them is a second home, unless :data:`CONCEPT_EXCEPTIONS` says why it is another concept;
the Space's study forms keep layout and wiring only (:func:`form_logic`: no class, nothing but constants and
the study object they wire taken from ``studies/``); the function each catalog row names lives in ``metrics/``
(an analysis's in ``analyses.py``) and only ``tasks/base.py`` maps metrics to methods, from the catalog; the
Markdown table renderer is defined once, in ``presentation/tables.py``, and imported from there only.

**A scoring request walks few modules** (:func:`request_walk`): from the runner (``scoring.runner.run``), the
modules of ``scoring/`` it imports are walked and every other module it reaches is visited as the face the request
is handed to; the walk stays at most :data:`MAX_SCORING_WALK` modules (25; 27 before the request and its named stages,
issue 55). The request (``scoring/request.py``) is the bottom floor: it imports no other part of ``scoring/`` and
nothing that loads a scorer, so a door builds and checks one cheaply; and nothing imports back up to the runner
but the doors (:data:`SCORING_DOORS`), which all build one request and run it.

**One CLI convention.** Every sub-command is registered by ``register(subparsers)`` in a module named
``commands`` inside its feature's package; ``cli.COMMAND_MODULES`` lists exactly those modules, and no
other module builds argparse sub-parsers (docs/CONVENTIONS.md).
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

import pytest

import hug_vis_dataset

PACKAGE_DIR = Path(hug_vis_dataset.__file__).resolve().parent
MAX_MODULE_LINES = 600
#: Modules allowed past :data:`MAX_MODULE_LINES` because they do one job that does not split
#: without scattering it; each must stay under :data:`SINGLE_JOB_MAX_LINES`.
SINGLE_JOB_MODULES: dict[str, str] = {
    "hug_vis_dataset/metrics/_matting_kernels.py": "the numba kernels of the matting metrics (one compiled job)",
    "hug_vis_dataset/metrics/matting.py": "the matting metrics' API over those kernels (one job)",
    "hug_vis_dataset/catalog.py": "the one table of every fact about a metric and a task (split, the facts scatter)",
}
SINGLE_JOB_MAX_LINES = 800


# ----------------------------------------------------------------------------- the graph
def module_files(package_dir: Path, package: str) -> dict[str, Path]:
    """Map every module of the package under ``package_dir`` to its file (packages to ``__init__.py``)."""
    modules = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = list(path.relative_to(package_dir).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join([package, *parts])] = path
    return modules


def _package_of(module: str, path: Path) -> str:
    """The package a module's relative imports are resolved against."""
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _resolve_relative(base_package: str, level: int, target: "str | None") -> str:
    parts = base_package.split(".")
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([target] if target else []))


def _nearest_module(name: str, modules: dict[str, Path]) -> "str | None":
    """``name`` if it is a module, else its longest prefix that is (``a.b.func`` -> ``a.b``)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def iter_imports(module: str, path: Path, modules: dict[str, Path]):
    """(line, imported name) of every import statement of a module, at any depth, resolved to absolute names.

    ``from a import b`` yields ``a.b`` when that is a module, else ``a`` (the name is read from ``a``).
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            source = (_resolve_relative(_package_of(module, path), node.level, node.module)
                      if node.level else (node.module or ""))
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                yield node.lineno, submodule if submodule in modules else source


def import_edges(modules: dict[str, Path]) -> dict[str, dict[str, int]]:
    """For each module, the package modules it imports, each with the line of one import that does it."""
    graph: dict[str, dict[str, int]] = {name: {} for name in modules}
    for module, path in modules.items():
        for line, target in iter_imports(module, path, modules):
            resolved = _nearest_module(target, modules)
            if resolved is not None and resolved != module:
                graph[module].setdefault(resolved, line)
    return graph


def strongly_connected(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0

    def visit(root: str) -> None:
        nonlocal counter
        # Iterative, so a deep package cannot hit the recursion limit.
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return sorted(components)


def shortest_cycle(graph: dict[str, dict[str, int]], component: list[str]) -> list[str]:
    """One shortest cycle through the component's first module, as ``[a, b, ..., a]``."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for child in sorted(graph[node]):
            if child not in members:
                continue
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if child not in previous:
                previous[child] = node
                queue.append(child)
    raise AssertionError(f"{component} is not strongly connected")


def describe_cycle(graph: dict[str, dict[str, int]], modules: dict[str, Path], cycle: list[str], root: Path) -> str:
    steps = [f"{a} ({modules[a].relative_to(root).as_posix()}:{graph[a][b]})" for a, b in zip(cycle, cycle[1:])]
    return " -> ".join(steps + [cycle[-1]])


def find_cycles(package_dir: Path, package: str) -> list[str]:
    """One line per import cycle: the modules of a shortest cycle, each with the importing line."""
    modules = module_files(package_dir, package)
    graph = import_edges(modules)
    root = package_dir.parent
    return [describe_cycle(graph, modules, shortest_cycle(graph, c), root) for c in strongly_connected(graph)]


def package_cycles(package_dir: Path, package: str) -> list[str]:
    """Cycles between the package's top-level parts (``pkg.sub`` packages and ``pkg.module`` modules).

    Module-level acyclicity still allows ``a.x -> b.y`` and ``b.z -> a.w``: the two parts then
    cannot be layered. Each line names one import per step of a shortest cycle.
    """
    modules = module_files(package_dir, package)
    depth = len(package.split(".")) + 1
    part = lambda name: ".".join(name.split(".")[:depth])  # noqa: E731 - local shorthand
    graph: dict[str, dict[str, int]] = {}
    witness: dict[tuple[str, str], str] = {}
    for module, targets in import_edges(modules).items():
        graph.setdefault(part(module), {})
        for target, line in targets.items():
            a, b = part(module), part(target)
            graph.setdefault(b, {})
            if a != b and (a, b) not in witness:
                graph[a][b] = line
                witness[(a, b)] = f"{module}:{line} imports {target}"
    out = []
    for component in strongly_connected(graph):
        cycle = shortest_cycle(graph, component)
        steps = "; ".join(witness[(a, b)] for a, b in zip(cycle, cycle[1:]))
        others = sorted(set(component) - set(cycle))
        out.append(" -> ".join(cycle) + f" ({steps})" + (f"; same knot: {', '.join(others)}" if others else ""))
    return out


# ----------------------------------------------------------------------------- the checker on known packages
def _write_package(root: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = root / "pkg" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_checker_finds_a_cycle_hidden_in_a_function(tmp_path):
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "a.py": "from .b import thing\n",
        "b.py": "def thing():\n    from pkg import a\n    return a\n",
    })
    assert find_cycles(package, "pkg") == ["pkg.a (pkg/a.py:1) -> pkg.b (pkg/b.py:2) -> pkg.a"]


def test_checker_resolves_parent_relative_imports_and_type_checking_blocks(tmp_path):
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "sub/__init__.py": "",
        "sub/x.py": "from ..y import value\n",
        "y.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .sub.x import X\nvalue = 1\n",
    })
    assert find_cycles(package, "pkg") == ["pkg.sub.x (pkg/sub/x.py:1) -> pkg.y (pkg/y.py:3) -> pkg.sub.x"]


def test_checker_accepts_a_facade_init_and_stdlib_names(tmp_path):
    # __init__ re-exports its submodules; the submodules import each other one way and read a
    # sibling through `from . import sibling` (a submodule, not the __init__).
    package = _write_package(tmp_path, {
        "__init__.py": "from .a import A\nfrom .b import B\n",
        "a.py": "import json\nfrom . import b\nA = b.B\n",
        "b.py": "import os.path\nB = 1\n",
    })
    assert find_cycles(package, "pkg") == []


def test_checker_reports_a_submodule_reading_its_own_init(tmp_path):
    package = _write_package(tmp_path, {
        "__init__.py": "from .a import A\nDEFAULT = 3\n",
        "a.py": "from . import DEFAULT\nA = DEFAULT\n",
    })
    assert find_cycles(package, "pkg") == ["pkg (pkg/__init__.py:1) -> pkg.a (pkg/a.py:1) -> pkg"]


def test_package_level_cycle_between_acyclic_modules_is_found(tmp_path):
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "a/__init__.py": "", "a/x.py": "from ..b import y\n", "a/w.py": "W = 1\n",
        "b/__init__.py": "", "b/y.py": "Y = 1\n", "b/z.py": "from ..a.w import W\n",
        "c.py": "from .a import x\n",
    })
    assert find_cycles(package, "pkg") == []
    assert package_cycles(package, "pkg") == ["pkg.a -> pkg.b -> pkg.a (pkg.a.x:1 imports pkg.b.y; pkg.b.z:1 imports pkg.a.w)"]


# ----------------------------------------------------------------------------- the rules on hug_vis_dataset
def test_no_cycle_between_top_level_parts():
    cycles = package_cycles(PACKAGE_DIR, "hug_vis_dataset")
    assert cycles == [], "cycles between top-level parts:\n" + "\n".join(cycles)


def unresolved_imports(package_dir: Path, package: str) -> list[str]:
    """Imports of the package's own modules that name no module of it (a module moved, a relative import off by a dot)."""
    modules = module_files(package_dir, package)
    root = package_dir.parent
    return [f"{modules[module].relative_to(root).as_posix()}:{line}: {target}"
            for module, path in modules.items() for line, target in iter_imports(module, path, modules)
            if (target == package or target.startswith(package + ".")) and target not in modules]


def test_checker_flags_an_import_of_a_missing_module(tmp_path):
    package = _write_package(tmp_path, {
        "__init__.py": "",
        "sub/__init__.py": "",
        "sub/x.py": "def f():\n    from .errors import E\n    from ..errors import E\n",
        "errors.py": "E = 1\n",
    })
    assert unresolved_imports(package, "pkg") == ["pkg/sub/x.py:2: pkg.sub.errors"]


def test_every_package_import_names_an_existing_module():
    missing = unresolved_imports(PACKAGE_DIR, "hug_vis_dataset")
    assert missing == [], "imports of modules that do not exist:\n" + "\n".join(missing)


def test_no_import_cycle_in_the_package():
    cycles = find_cycles(PACKAGE_DIR, "hug_vis_dataset")
    assert cycles == [], "import cycles:\n" + "\n".join(cycles)


def module_sizes(package_dir: Path) -> list[tuple[int, str]]:
    """(lines, path relative to the package's parent) of every module, largest first."""
    sizes = [
        (len(path.read_text(encoding="utf-8").splitlines()), path.relative_to(package_dir.parent).as_posix())
        for path in package_dir.rglob("*.py")
    ]
    return sorted(sizes, reverse=True)


def test_line_counter_counts_lines(tmp_path):
    package = _write_package(tmp_path, {"__init__.py": "", "a.py": "x = 1\n\ny = 2\n", "b.py": "z = 3"})
    assert module_sizes(package) == [(3, "pkg/a.py"), (1, "pkg/b.py"), (0, "pkg/__init__.py")]


def test_no_module_over_the_line_bound():
    sizes = module_sizes(PACKAGE_DIR)
    print("largest modules:", ", ".join(f"{path} {lines}" for lines, path in sizes[:5]))
    too_long = [f"{path}: {lines} lines" for lines, path in sizes
                if lines > (SINGLE_JOB_MAX_LINES if path in SINGLE_JOB_MODULES else MAX_MODULE_LINES)]
    assert too_long == [], f"modules over {MAX_MODULE_LINES} lines (split them by job):\n" + "\n".join(too_long)


def test_single_job_exceptions_are_real_files():
    sizes = {path: lines for lines, path in module_sizes(PACKAGE_DIR)}
    assert [path for path in SINGLE_JOB_MODULES if path not in sizes] == []
    # An exception that has shrunk below the common bound is no longer needed: drop it.
    assert [path for path in SINGLE_JOB_MODULES if sizes[path] <= MAX_MODULE_LINES] == []


# ----------------------------------------------------------------------------- one CLI convention
def _calls_named(path: Path, names: set[str]) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names]


def test_every_sub_command_registers_from_a_commands_module():
    from hug_vis_dataset import cli

    modules = module_files(PACKAGE_DIR, "hug_vis_dataset")
    commands = sorted(name for name in modules if name.endswith(".commands"))
    assert sorted(cli.COMMAND_MODULES) == commands  # every commands module is offered, nothing else is
    for name in commands:
        tree = ast.parse(modules[name].read_text(encoding="utf-8"))
        top_level = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        assert "register" in top_level, f"{name} has no register(subparsers)"
    # Parsers are built nowhere else: a feature module never imports argparse's sub-command API.
    elsewhere = [f"{modules[name].relative_to(PACKAGE_DIR.parent).as_posix()}:{line}"
                 for name in modules if not name.endswith(".commands") and name != "hug_vis_dataset.cli"
                 for line in _calls_named(modules[name], {"add_parser", "add_subparsers"})]
    assert elsewhere == []



# ----------------------------------------------------------------------------- one home per concept
#: Module name prefixes of a concept -> the packages it may live in (docs/ARCHITECTURE.md): the study's
#: logic in studies/, the report's blocks (the MOS tables among them) in reporting/.
CONCEPT_HOMES: dict[str, "str | tuple[str, ...]"] = {
    "report": "reporting",
    "mos": ("studies", "reporting"),
    "rater_qc": "studies",
    "bradley_terry": "studies",
    "preference": "studies",
    "study": "studies",
    "ratings": "studies",
}
#: Modules whose names match a concept but are another one, with why.
CONCEPT_EXCEPTIONS: dict[str, str] = {
    "validate/report.py": "the validation report of hugvis validate (problems of a release), not the results report",
    "metrics/mos_agreement.py": "the math of the metric_mos_agreement evaluate module: a metric, beside the others",
    "space/mos_study.py": "the Gradio layout of the MOS study tab (its logic is in studies/)",
    "synth/ratings.py": "the synthetic release's simulated ratings (a generator, like the rest of synth/)",
}
#: The one Markdown table renderer: where it is defined, the one module it is imported from.
MARKDOWN_RENDERER = ("markdown_table", "presentation.tables")
#: The Space's study forms: layout and wiring only. From studies/ they take constants (upper-case names)
#: and the study object they wire, as a type (FORM_TYPES); the study's logic (what may be rated, storing,
#: validating and aggregating ratings) is studies/'s.
STUDY_FORMS = ("space/mos_study.py", "space/pairwise_form.py", "space/session_form.py", "space/emotion_form.py")
FORM_TYPES = frozenset({"MosStudy"})
#: Where a metric's code lives: the function each catalog row names (``MetricSpec.implementation``), by mode.
IMPLEMENTATION_HOMES = {"analysis": "analyses", "per-clip": "metrics"}


def misplaced_modules(package_dir: Path, homes: dict, exceptions: dict[str, str]) -> list[str]:
    """Modules named after a concept (a prefix of ``homes``) that live outside that concept's packages."""
    out = []
    for path in sorted(package_dir.rglob("*.py")):
        relative = path.relative_to(package_dir).as_posix()
        for prefix, home in homes.items():
            allowed = (home,) if isinstance(home, str) else home
            if (path.stem.startswith(prefix) and relative.split("/")[0] not in allowed
                    and relative not in exceptions):
                out.append(f"{relative}: belongs in {' or '.join(f'{h}/' for h in allowed)}")
    return out


def renderer_homes(package_dir: Path, package: str, name: str) -> tuple[list[str], list[str]]:
    """(modules defining a function ``name``, modules ``name`` is imported from), as dotted names."""
    modules = module_files(package_dir, package)
    defined, imported = set(), set()
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        defined |= {module for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == name}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and any(alias.name == name for alias in node.names):
                imported.add(_resolve_relative(_package_of(module, path), node.level, node.module)
                             if node.level else (node.module or ""))
    return sorted(defined), sorted(imported)


def form_logic(package_dir: Path, package: str, forms: tuple[str, ...], types: "frozenset[str]") -> list[str]:
    """What in the form modules is not layout or wiring: a class, or a name other than a constant or one of
    ``types`` imported from the study package."""
    out = []
    for form in forms:
        path = package_dir / form
        module = ".".join([package, *Path(form).with_suffix("").parts])
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                out.append(f"{form}:{node.lineno}: defines class {node.name}")
            elif isinstance(node, ast.ImportFrom):
                source = (_resolve_relative(_package_of(module, path), node.level, node.module)
                          if node.level else (node.module or ""))
                if source == f"{package}.studies" or source.startswith(f"{package}.studies."):
                    out += [f"{form}:{node.lineno}: imports {alias.name} from {source}" for alias in node.names
                            if not (alias.name.isupper() or alias.name in types)]
    return out


def implementation_homes(package: str, homes: dict[str, str]) -> list[str]:
    """Catalog rows whose function (``module:function``) is not a module of their mode's home package."""
    from hug_vis_dataset import catalog

    modules = module_files(PACKAGE_DIR, package)
    out = []
    for row in catalog.METRICS:
        home = f"{package}.{homes['analysis' if row.mode == catalog.ANALYSIS else 'per-clip']}"
        module = row.implementation.partition(":")[0]
        if module not in modules or not (module == home or module.startswith(home + ".")):
            out.append(f"{row.name}: {row.implementation} is not in {home}")
    return out


def test_the_study_forms_keep_only_layout_and_wiring():
    assert form_logic(PACKAGE_DIR, "hug_vis_dataset", STUDY_FORMS, FORM_TYPES) == []
    assert all((PACKAGE_DIR / form).is_file() for form in STUDY_FORMS)  # no stale entry


def test_form_checker_finds_logic_in_a_form(tmp_path):
    package = _write_package(tmp_path, {
        "__init__.py": "", "studies/__init__.py": "", "studies/ratings.py": "", "studies/desk.py": "",
        "space/__init__.py": "",
        "space/form.py": ("from ..studies.ratings import MAX_CRITERIA, RatingStore\n"
                          "from ..studies.desk import Desk\n\nclass Callbacks:\n    pass\n"),
    })
    assert form_logic(package, "pkg", ("space/form.py",), frozenset({"Desk"})) == [
        "space/form.py:1: imports RatingStore from pkg.studies.ratings", "space/form.py:4: defines class Callbacks"]


def test_each_metric_is_computed_by_the_function_its_row_names():
    """A metric's code lives under metrics/ (an analysis's in analyses.py), named by its catalog row, and the
    task scorers dispatch from the catalog: no scorer keeps its own metric -> method table."""
    assert implementation_homes("hug_vis_dataset", IMPLEMENTATION_HOMES) == []
    modules = module_files(PACKAGE_DIR, "hug_vis_dataset")
    tables = [f"{modules[name].relative_to(PACKAGE_DIR).as_posix()}:{node.lineno}"
              for name in modules if name.startswith("hug_vis_dataset.tasks.")
              for node in ast.walk(ast.parse(modules[name].read_text(encoding="utf-8")))
              if isinstance(node, ast.FunctionDef) and node.name == "computations"]
    assert [t.split(":")[0] for t in tables] == ["tasks/base.py"], tables


def test_concept_checker_finds_a_second_home(tmp_path):
    package = _write_package(tmp_path, {
        "__init__.py": "", "report_extra.py": "", "reporting/__init__.py": "", "reporting/report.py": "",
        "space/mos_form.py": "", "space/study_ok.py": "", "studies/mos.py": "",
        "tables.py": "def markdown_table():\n    pass\n",
        "leaderboard.py": "from .tables import markdown_table\n",
        "status.py": "from .reporting.report import markdown_table\n",
    })
    homes = {"report": "reporting", "mos": ("studies", "reporting"), "study": "studies"}
    assert misplaced_modules(package, homes, {"space/study_ok.py": "why"}) == [
        "report_extra.py: belongs in reporting/", "space/mos_form.py: belongs in studies/ or reporting/"]
    assert renderer_homes(package, "pkg", "markdown_table") == (["pkg.tables"], ["pkg.reporting.report", "pkg.tables"])


def test_each_concept_lives_in_its_package():
    misplaced = misplaced_modules(PACKAGE_DIR, CONCEPT_HOMES, CONCEPT_EXCEPTIONS)
    assert misplaced == [], "modules outside their concept's package:\n" + "\n".join(misplaced)
    files = {p.relative_to(PACKAGE_DIR).as_posix() for p in PACKAGE_DIR.rglob("*.py")}
    assert [path for path in CONCEPT_EXCEPTIONS if path not in files] == []  # no stale exception


def test_the_markdown_table_renderer_has_one_home():
    name, home = MARKDOWN_RENDERER
    defined, imported = renderer_homes(PACKAGE_DIR, "hug_vis_dataset", name)
    assert defined == [f"hug_vis_dataset.{home}"]
    assert imported == [f"hug_vis_dataset.{home}"]


# ----------------------------------------------------------------------------- a scoring request's walk
SCORING = "hug_vis_dataset.scoring"
SCORING_RUNNER = "hug_vis_dataset.scoring.runner"
SCORING_REQUEST = "hug_vis_dataset.scoring.request"
#: The doors: the only modules that import the runner; each builds an EvaluationRequest and runs it.
SCORING_DOORS = frozenset({
    "hug_vis_dataset.scoring.commands",  # hugvis evaluate (evaluate_request)
    "hug_vis_dataset.space.explorer",  # the Space's upload scoring (space.uploads.upload_request)
    "hug_vis_dataset.space.example_data",  # the Space's example rows
    "hug_vis_dataset.leaderboard.worker",  # the queue worker (QueueWorker.evaluation_request)
    "hug_vis_dataset.audit.robustness",  # hugvis audit robustness (audit_request)
    "hug_vis_dataset.demo.pipeline",  # hugvis demo (demo_request)
})
#: Modules a scoring request visits (:func:`request_walk` from the runner): 27 when ``evaluate_submission`` did
#: every step itself (issue 55); 26 with the request, its stages and the packages' faces; 27 again since the coverage
#: report names skipped metrics by their labels (``labels``, issue 51), one module more to read, not a detour; 25
#: since ``scoring/`` reads JSON and Parquet through the ``readers`` face instead of two of its rooms.
MAX_SCORING_WALK = 25
#: What the request module may import: the one error base, the catalog (tasks, metrics, protocols) and the output
#: guard (the type of an output a door already claimed).
REQUEST_IMPORTS = frozenset({"hug_vis_dataset.errors", "hug_vis_dataset.catalog", "hug_vis_dataset.outputs"})


def request_walk(graph: dict[str, dict[str, int]], entry: str, package: str) -> list[str]:
    """The modules a request visits from ``entry``, in the order first reached (depth first, imports sorted):
    modules of ``package`` are walked into, a module of any other package is visited but not walked (it is the
    face the request is handed to; what happens behind it is that package's business)."""
    seen: list[str] = []

    def visit(module: str) -> None:
        seen.append(module)
        if module == entry or module.startswith(package + "."):
            for target in sorted(graph[module]):
                if target not in seen:
                    visit(target)

    visit(entry)
    return seen


def importers(graph: dict[str, dict[str, int]], module: str) -> set[str]:
    """The modules that import ``module``."""
    return {name for name, targets in graph.items() if module in targets}


def test_request_walk_on_a_known_package(tmp_path):
    package = _write_package(tmp_path, {
        "__init__.py": "", "faces/__init__.py": "from .inner import X\n", "faces/inner.py": "from ..deep import D\n",
        "deep.py": "D = 1\n", "run/__init__.py": "", "run/runner.py": "from .stage import s\nfrom ..faces import X\n",
        "run/stage.py": "from ..deep import D\n", "run/door.py": "from .runner import run\n",
    })
    graph = import_edges(module_files(package, "pkg"))
    assert request_walk(graph, "pkg.run.runner", "pkg.run") == ["pkg.run.runner", "pkg.faces", "pkg.run.stage",
                                                                 "pkg.deep"]
    assert importers(graph, "pkg.run.runner") == {"pkg.run.door"}


def test_a_scoring_request_walks_few_modules():
    graph = import_edges(module_files(PACKAGE_DIR, "hug_vis_dataset"))
    walk = request_walk(graph, SCORING_RUNNER, SCORING)
    print(f"a scoring request's walk: {len(walk)} modules:", ", ".join(m.removeprefix("hug_vis_dataset.") for m in walk))
    assert len(walk) <= MAX_SCORING_WALK, walk
    assert SCORING_REQUEST in walk


def test_the_request_is_the_bottom_floor_and_only_doors_import_the_runner():
    graph = import_edges(module_files(PACKAGE_DIR, "hug_vis_dataset"))
    assert set(graph[SCORING_REQUEST]) <= REQUEST_IMPORTS, graph[SCORING_REQUEST]
    assert importers(graph, SCORING_RUNNER) == SCORING_DOORS  # no stage helper imports back up to the runner


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__, "-q", "-s"])

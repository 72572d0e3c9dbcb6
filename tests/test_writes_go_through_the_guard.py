"""Architecture: the output guard is the only way the library deletes, renames or places a file.

Read from the source with :mod:`ast` (every call, at any depth): outside ``hug_vis_dataset/outputs/``, no
module calls a deletion or rename primitive (``os.remove``/``unlink``/``rmdir``/``rename``/``replace``,
``shutil.rmtree``/``move``, a ``Path``'s ``unlink()``/``rmdir()``), and none imports the guard's file
primitives (``hug_vis_dataset.outputs.files``): they go through :func:`hug_vis_dataset.outputs.discard`,
:func:`~hug_vis_dataset.outputs.put_scratch`, :func:`~hug_vis_dataset.outputs.write_file` or an
:class:`~hug_vis_dataset.outputs.Output`, which check ownership first. ``stopping.py`` is the one exception,
with its reason: its ``remove`` deletes only the temporary paths the guard registered before creating them.

What runs, not only what is written, is checked by ``tests/test_no_stray_writes.py``: every command runs under
an audit hook, and each write lands inside an output the process claimed (:func:`hug_vis_dataset.outputs.claimed`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import hug_vis_dataset

PACKAGE = Path(hug_vis_dataset.__file__).resolve().parent
GUARD = PACKAGE / "outputs"
#: Modules allowed a primitive, with why.
EXCEPTIONS: dict[str, str] = {
    "stopping.py": "removes, after a stop, only the temporary paths the guard registered before creating them",
}
MODULE_CALLS = {("os", "remove"), ("os", "unlink"), ("os", "rmdir"), ("os", "removedirs"), ("os", "rename"),
                ("os", "renames"), ("os", "replace"), ("shutil", "rmtree"), ("shutil", "move")}
METHOD_CALLS = {"unlink", "rmdir"}


def primitive_calls(source: str) -> list[tuple[int, str]]:
    """(line, call) of every deletion or rename primitive called in ``source``.

    >>> primitive_calls("import os, shutil\\nos.replace(a, b)\\nshutil.rmtree(d)\\np.unlink(missing_ok=True)\\ns.replace('a', 'b')")
    [(2, 'os.replace'), (3, 'shutil.rmtree'), (4, '.unlink()')]
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner, name = node.func.value, node.func.attr
        if isinstance(owner, ast.Name) and (owner.id, name) in MODULE_CALLS:
            found.append((node.lineno, f"{owner.id}.{name}"))
        elif name in METHOD_CALLS:
            found.append((node.lineno, f".{name}()"))
    return sorted(found)


def imports_of_the_primitives(source: str) -> list[int]:
    """Lines importing ``hug_vis_dataset.outputs.files`` (absolute or relative).

    >>> imports_of_the_primitives("from ..outputs.files import atomic_write\\nfrom ..outputs import discard")
    [1]
    """
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.endswith("outputs.files") or (module.endswith("outputs") and any(
                    alias.name == "files" for alias in node.names)):
                lines.append(node.lineno)
        elif isinstance(node, ast.Import) and any(a.name.endswith("outputs.files") for a in node.names):
            lines.append(node.lineno)
    return lines


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        if GUARD in path.parents:
            continue
        yield path.relative_to(PACKAGE).as_posix(), path.read_text(encoding="utf-8")


def test_no_module_deletes_or_renames_but_through_the_guard():
    found = [f"hug_vis_dataset/{name}:{line}: {call}" for name, source in _modules() if name not in EXCEPTIONS
             for line, call in primitive_calls(source)]
    assert found == [], ("delete or rename through hug_vis_dataset.outputs (discard, put_scratch, an Output), "
                         "which checks that the path is the toolkit's:\n" + "\n".join(found))


def test_the_file_primitives_are_private_to_the_guard():
    found = [f"hug_vis_dataset/{name}:{line}" for name, source in _modules() for line in imports_of_the_primitives(source)]
    assert found == [], "import writing helpers from hug_vis_dataset.outputs, not outputs.files:\n" + "\n".join(found)


def test_the_exceptions_are_real_and_still_needed():
    for name, why in EXCEPTIONS.items():
        source = (PACKAGE / name).read_text(encoding="utf-8")
        assert primitive_calls(source), f"{name} no longer needs its exception ({why}): remove it"


def test_the_checker_finds_a_hidden_delete(tmp_path):
    hidden = "def f(p):\n    def g():\n        import shutil\n        shutil.rmtree(p)\n    return g\n"
    assert primitive_calls(hidden) == [(4, "shutil.rmtree")]

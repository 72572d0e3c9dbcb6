"""The ``metrics/<name>/`` folders (module, card, ``app.py``, ``requirements.txt``), generated from the catalog.

Every evaluate module, suite and analysis of :mod:`hug_vis_dataset.catalog` gets a folder in the
Hugging Face Space layout whose module calls :func:`hug_vis_dataset.modules.compute` and whose card
states the catalog's definition, direction, units and the install command. Regenerate with
``python -m hug_vis_dataset.publish.module_folders metrics``; ``tests/test_catalog.py`` fails when a committed
folder differs from what the catalog generates.

Example:
    >>> sorted(module_files("dtssd"))
    ['README.md', 'app.py', 'dtssd.py', 'requirements.txt']
    >>> print(APP_SOURCE, end="")
    from hug_vis_dataset.space.metric_app import launch
    <BLANKLINE>
    launch(__file__)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .. import catalog
from ..modules import description

if TYPE_CHECKING:
    from ..outputs import Output

#: This repository's module folders (where the bundled examples and their outputs are committed).
REPO_METRICS = Path(__file__).resolve().parents[2] / "metrics"


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def module_source(name: str) -> str:
    """The text of ``metrics/<name>/<name>.py`` (the library import guarded: a missing library names
    the exact install command, :func:`hug_vis_dataset.publish.release_info.import_guard`)."""
    from .release_info import import_guard

    guard = import_guard(name, ["from hug_vis_dataset.modules import compute",
                                "from hug_vis_dataset.modules import description",
                                "from hug_vis_dataset.modules import inputs_description",
                                "from hug_vis_dataset.modules import module_info"], catalog.extras_of([name]))
    return f'''"""HUG-VIS `{name}` evaluate module. Generated from hug_vis_dataset/catalog.py; do not edit."""

import evaluate

{guard}


@evaluate.utils.file_utils.add_start_docstrings(description("{name}"), inputs_description("{name}"))
class {_class_name(name)}(evaluate.Metric):
    def _info(self):
        return module_info("{name}")

    def _compute(self, **inputs):
        return compute("{name}", **inputs)
'''


def card(name: str, output: "dict | None" = None) -> str:
    """The text of ``metrics/<name>/README.md``: the Space's front matter (what the Hub builds: sdk,
    sdk_version, python_version, app_file) and the metric card (:mod:`hug_vis_dataset.publish.module_cards`);
    ``output`` is what the card's example printed (``examples/output.json``)."""
    from .module_cards import card_body, title

    return f"""---
title: HUG-VIS {title(name)[:40]}
emoji: 📏
colorFrom: blue
colorTo: green
sdk: gradio
sdk_version: {GRADIO_VERSION}
python_version: "{PYTHON_VERSION}"
app_file: app.py
pinned: false
tags:
- evaluate
- metric
- hug-vis
description: >-
  {description(name)}
---

{card_body(name, output)}"""


#: The Gradio version of the published Spaces (the ``space`` extra's pin).
GRADIO_VERSION = "6.31.0"
#: The Python of the published Spaces (the cards' ``python_version``; the stack is measured on 3.11).
PYTHON_VERSION = "3.11"
#: Every Space's ``app.py``: the shared app of :mod:`hug_vis_dataset.space.metric_app` on this folder.
APP_SOURCE = '''from hug_vis_dataset.space.metric_app import launch

launch(__file__)
'''


def module_files(name: str, examples_root: "str | Path | None" = REPO_METRICS) -> dict[str, str]:
    """File name -> text of one generated module folder (the card's example output is read from
    ``<examples_root>/<name>/examples/output.json``, written by :func:`write_examples`)."""
    from .release_info import requirements_lines
    from ..space.example_data import recorded_output

    output = recorded_output(Path(examples_root) / name) if examples_root is not None else None
    return {f"{name}.py": module_source(name), "README.md": card(name, output), "app.py": APP_SOURCE,
            "requirements.txt": "\n".join(requirements_lines("metric", catalog.extras_of([name]))) + "\n"}


def write_module_folders(root: "str | Path", examples_root: "str | Path | None" = REPO_METRICS,
                         output: "Output | None" = None) -> list[Path]:
    """Write every module folder of the catalog under ``root``; returns the files written. The bundled
    ``examples/`` are copied from ``examples_root`` (this repository's ``metrics/``) when it holds them.

    ``output``: ``root`` claimed as a user's output (the demo's ``hugvis/``): the folders are written in a
    staging folder and merged in (:meth:`hug_vis_dataset.outputs.Output.staged`). Without it ``root`` is
    the repository's own generated ``metrics/`` tree, written in place by the maintainer's
    ``python -m hug_vis_dataset.publish.module_folders metrics`` (``tests/test_catalog.py`` checks it).
    """
    import shutil

    if output is not None:
        with output.staged() as stage:
            staged = write_module_folders(stage, examples_root)
        return [Path(root) / p.relative_to(stage) for p in staged]
    written = []
    for name in catalog.module_names():
        folder = Path(root) / name
        folder.mkdir(parents=True, exist_ok=True)
        for filename, text in module_files(name, examples_root).items():
            (folder / filename).write_text(text, encoding="utf-8")
            written.append(folder / filename)
        source = Path(examples_root) / name / "examples" if examples_root is not None else None
        if source is not None and source.is_dir() and source.resolve() != (folder / "examples").resolve():
            shutil.copytree(source, folder / "examples", dirs_exist_ok=True)
            written += sorted((folder / "examples").iterdir())
    return written


def regenerate(root: "str | Path") -> list[Path]:
    """What ``python -m hug_vis_dataset.publish.module_folders ROOT`` does: write the module files, the
    bundled examples and their recorded outputs (each module run on them), then the cards with them."""
    from ..space.example_data import write_examples

    write_module_folders(root, examples_root=None)
    written = write_examples(root)
    return written + write_module_folders(root, examples_root=root)


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    import sys

    for path in regenerate(sys.argv[1] if len(sys.argv) > 1 else "metrics"):
        print(path)

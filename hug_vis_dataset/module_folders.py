"""The ``metrics/<name>/`` folders (module, card, ``app.py``, ``requirements.txt``), generated from the catalog.

Every evaluate module, suite and analysis of :mod:`hug_vis_dataset.catalog` gets a folder in the
Hugging Face Space layout whose module calls :func:`hug_vis_dataset.modules.compute` and whose card
states the catalog's definition, direction, units and the install command. Regenerate with
``python -m hug_vis_dataset.module_folders metrics``; ``tests/test_catalog.py`` fails when a committed
folder differs from what the catalog generates.

Example:
    >>> sorted(module_files("dtssd"))
    ['README.md', 'app.py', 'dtssd.py', 'requirements.txt']
"""

from __future__ import annotations

from pathlib import Path

from . import catalog
from .citation import CITATION
from .modules import reference_urls, description, inputs_description


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _weights_line(name: str) -> str:
    weights = catalog.weights_of(catalog.suite_or_metric(name))
    from .weights import download_command, get_spec

    downloadable = [w for w in weights if get_spec(w).source != "package"]
    return (f"Needs pretrained files: `{download_command(downloadable)}` (or point "
            "`HUGVIS_WEIGHTS_DIR` at a folder holding them)." if downloadable else
            "Runs offline: its model files ship inside pip packages." if weights else "Needs no model file.")


def module_source(name: str) -> str:
    """The text of ``metrics/<name>/<name>.py`` (the library import guarded: a missing library names
    the exact install command, :func:`hug_vis_dataset.release_info.import_guard`)."""
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


def _notes(name: str) -> str:
    """Implementation notes that belong in a module's card, kept as constants next to the code they
    describe; each concerns the metrics computed through one model (from the catalog)."""
    from .metrics.sync_timeline import SYNC_FRONT_END_NOTE
    from .metrics.voice import DNSMOS_RESAMPLER_NOTE

    card_notes = ((catalog.metrics_needing("dnsmos_sig_bak_ovr"), DNSMOS_RESAMPLER_NOTE),
                  (catalog.metrics_needing("syncnet_v2"), SYNC_FRONT_END_NOTE))
    members = set(catalog.suite_or_metric(name))
    notes = [note for metrics, note in card_notes if members & set(metrics)]
    return "".join(f"\n**Implementation note.** {n}\n" for n in notes)


def card(name: str) -> str:
    """The text of ``metrics/<name>/README.md``: Space front matter and the metric card."""
    names = catalog.suite_or_metric(name)
    specs = [catalog.spec(m) for m in names]
    title = " / ".join(s.label for s in specs)
    rows = "\n".join(f"| `{s.name}` | {s.label} | {', '.join(s.tasks) or 'cross-task'} | {s.arrow} | "
                     f"{s.unit} | x{s.paper_scale:g} | {s.paper_table or '-'} |" for s in specs)
    definitions = "\n\n".join(f"**{s.label}.** {s.definition or s.description}" for s in specs)
    references = "\n".join(f"- {u}" for u in reference_urls(name)) or "- the HUG-VIS paper (section 4)"
    from .release_info import install_command, space_extras

    return f"""---
title: HUG-VIS {title}
emoji: 📏
colorFrom: blue
colorTo: green
sdk: gradio
sdk_version: {GRADIO_VERSION}
app_file: app.py
pinned: false
tags:
- evaluate
- metric
- hug-vis
description: >-
  {description(name)}
---

# {title}

{description(name)}

## Definition

{definitions}
{_notes(name)}
| name (= stored rows) | label | tasks | direction | stored unit | to paper unit | paper |
| --- | --- | --- | --- | --- | --- | --- |
{rows}

## How to use

```bash
{install_command(space_extras("metric", catalog.extras_of([name])))}
```

```python
import evaluate
module = evaluate.load("hugvis/{name}")
```
{inputs_description(name)}
{_weights_line(name)} The module, `hugvis evaluate` and the explorer Space call the same per-clip
scorer (`hug_vis_dataset.tasks`) and the same aggregation, so they give the same number.

## References

{references}

## Citation

```bibtex
{CITATION}
```
"""


#: The Gradio version of the published Spaces (the ``space`` extra's pin).
GRADIO_VERSION = "6.31.0"
APP_SOURCE = '''import os

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(os.path.dirname(os.path.abspath(__file__)))
launch_gradio_widget(module)
'''


def module_files(name: str) -> dict[str, str]:
    """File name -> text of one generated module folder."""
    from .release_info import requirements_lines

    return {f"{name}.py": module_source(name), "README.md": card(name), "app.py": APP_SOURCE,
            "requirements.txt": "\n".join(requirements_lines("metric", catalog.extras_of([name]))) + "\n"}


def write_module_folders(root: "str | Path") -> list[Path]:
    """Write every module folder of the catalog under ``root``; returns the files written."""
    written = []
    for name in catalog.module_names():
        folder = Path(root) / name
        folder.mkdir(parents=True, exist_ok=True)
        for filename, text in module_files(name).items():
            (folder / filename).write_text(text, encoding="utf-8")
            written.append(folder / filename)
    return written


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    import sys

    for path in write_module_folders(sys.argv[1] if len(sys.argv) > 1 else "metrics"):
        print(path)

"""The metric cards (``metrics/<name>/README.md``) in huggingface/evaluate's Metric Card structure.

Sections: Metric Description, How to Use (Inputs, Output Values with range and direction, Values
from Popular Papers taken from the paper's tables in ``data/paper_tables.json``, Examples with the
output recorded by running them on the Space's bundled examples), Limitations and Bias, Citation,
Further References. Everything is derived from the catalog; written as Markdown (lists and
tables), never a pasted docstring. ``tests/test_cards.py`` renders every card with markdown-it-py
and runs every example.

Example:
    >>> text = card_body("mad", {"mad": 22.2122, "n_ok": 1, "n_failed": 0})
    >>> [line for line in text.splitlines() if line.startswith("## ")][:3]
    ['## Metric Description', '## How to Use', '## Limitations and Bias']
"""

from __future__ import annotations

import json

from .. import catalog
from ..presentation.analysis_fields import ANALYSIS_FIELDS
from ..presentation.citation import CITATION, links_markdown
from ..space.metric_examples import ANALYSIS_OPTIONS, example_names, input_kind, needs_reference

_LIMITATIONS = {
    "alpha": "Values depend on the matte being compared at the reference's resolution and frame count; a matte "
             "saved with lossy compression loses precision before scoring.",
    "video": "Generated videos are decoded frame by frame and paired with the reference by index; a clip with a "
             "different frame rate or length is scored on the frames both have.",
    "audio": "Speech is resampled to 16 kHz mono; network predictors were trained on English and other corpora, "
             "not on Mandarin studio speech, so their absolute scale is not calibrated for HUG-VIS.",
    "speech_text": "Speech is resampled to 16 kHz mono and transcribed by Whisper large-v3, whose Mandarin error "
                   "rate is higher than Paraformer-zh's (Seed-TTS-eval's recogniser): compare CERs scored here with "
                   "each other and with the Real-audio row (the recogniser's floor), not with papers using another "
                   "ASR.",
    "label": "Free-text answers are parsed for one of the seven emotion words (English or Chinese); an answer naming "
             "none, or several, counts as wrong.",
    "rows": "An analysis reads stored rows as they are: with few actors, clips or models its correlations and "
            "shares are unstable, and the paper's figures use the full 30-actor grid.",
}


def _weights_line(name: str) -> str:
    weights = catalog.weights_of(catalog.suite_or_metric(name))
    from ..weights import download_command, get_spec

    downloadable = [w for w in weights if get_spec(w).source != "package"]
    return (f"Needs pretrained files: `{download_command(downloadable)}` (or point "
            "`HUGVIS_WEIGHTS_DIR` at a folder holding them)." if downloadable else
            "Runs offline: its model files ship inside pip packages." if weights else "Needs no model file.")


def _notes(name: str) -> str:
    """Implementation notes that belong in a module's card, kept as constants next to the code they
    describe; each concerns the metrics computed through one model (from the catalog)."""
    from ..metrics.sync_timeline import SYNC_FRONT_END_NOTE
    from ..metrics.voice import DNSMOS_RESAMPLER_NOTE

    card_notes = ((catalog.metrics_needing("dnsmos_sig_bak_ovr"), DNSMOS_RESAMPLER_NOTE),
                  (catalog.metrics_needing("syncnet_v2"), SYNC_FRONT_END_NOTE))
    members = set(catalog.suite_or_metric(name))
    notes = [note for metrics, note in card_notes if members & set(metrics)]
    return "".join(f"\n**Implementation note.** {n}\n" for n in notes)


def _label(label: str) -> str:
    """A label as Markdown: the paper's ``D_{e,k}`` becomes D<sub>e,k</sub> (no raw TeX on a card).

    Example:
        >>> _label("D_{e,k}")
        'D<sub>e,k</sub>'
    """
    import re

    return re.sub(r"_\{([^}]*)\}", r"<sub>\1</sub>", label)


def _cell(text: str) -> str:
    """Text for a Markdown table cell (a ``|`` would end the cell)."""
    return str(text).replace("|", "\\|")


def _title(name: str) -> str:
    names = catalog.suite_or_metric(name)
    if catalog.spec(names[0]).mode == catalog.ANALYSIS:
        return name.replace("_", " ").capitalize()
    return " / ".join(catalog.spec(m).label for m in names) if len(names) <= 5 else name.replace("_", " ").capitalize()


def title(name: str) -> str:
    """The card's and the Space's title (an analysis by its name in words, never a formula)."""
    return _title(name)


def _range(spec: catalog.MetricSpec) -> str:
    low, high = (v * spec.paper_scale for v in spec.value_range)
    fmt = lambda v: "∞" if v == float("inf") else ("-∞" if v == float("-inf") else f"{v:g}")  # noqa: E731
    return f"{fmt(low)} to {fmt(high)}" + ("" if spec.range_is_bound else " (nominal scale)")


def _inputs(name: str) -> str:
    from ..analyses import READS_SAMPLES
    from ..space.metric_app import _UPLOAD_HELP

    kind, names = input_kind(name), catalog.suite_or_metric(name)
    spec = catalog.spec(names[0])
    if kind == "rows":
        lines = ["- **model, task, clip_id, metric, value** (`list`): stored result rows (`rows.parquet` of "
                 "`hugvis evaluate`); its other columns may be passed too (`compute(**rows)`). Failed rows and "
                 "reference rows are left out. Rows of a run scored over several samples per clip (a `sample` "
                 "column) are read " + ("sample by sample: the decomposition gains the sample (seed) term."
                                        if name in READS_SAMPLES else "as each clip's mean over its samples.")]
        lines += [f"- **{k}** (optional): {json.dumps(v)} in the example." for k, v in ANALYSIS_OPTIONS.get(name, {}).items()]
        return "\n".join(lines)
    if kind == "label":
        return ("- **predictions** (`list` of `str`): answers, emotion labels or free text (English or Chinese).\n"
                "- **references** (`list` of `str`): the instructed emotion of each clip (a label or an alias).\n"
                + ("- **input_settings** (`list` of `str`, optional): the input setting of each answer (Table 4).\n"
                   if name == "emotion_accuracy" else ""))
    lines = [f"- **predictions** (`list` of `str`): one path per clip: {_UPLOAD_HELP[kind]} (a zip is unpacked "
             "with `unpack`)." if kind == "alpha" else f"- **predictions** (`list` of `str`): one path per clip, "
             f"{_UPLOAD_HELP['audio' if kind == 'speech_text' else kind]}."]
    if kind == "speech_text":
        lines.append("- **references** (`list` of `str`): the target text of each prediction (what it should say: "
                     "the `voice_cloning` config's `target_text`), same order.")
    elif needs_reference(name):
        lines.append("- **references** (`list` of `str`): the reference of each prediction, same order (clip ids "
                     "in both paths are checked).")
    lines += ["- **chunk_frames**, **device**, **batch_size** (optional): decoding and network settings; they never "
              "change a value."]
    if spec.protocol == catalog.RVM:
        lines.append('- **protocol** (optional): `"rvm"` (the paper\'s default) or `"clip"` (mean of per-clip means).')
    return "\n".join(lines)


def _outputs(name: str) -> str:
    from ..space.metric_app import direction_text, paper_unit

    names = catalog.suite_or_metric(name)
    if catalog.spec(names[0]).mode == catalog.ANALYSIS:
        return "\n".join(f"- **{k}**: {text}." for k, text in ANALYSIS_FIELDS[name])
    rows = "\n".join(f"| `{m}` | {_cell(catalog.spec(m).label)} | {_cell(paper_unit(m))} | {_range(catalog.spec(m))} | "
                     f"{direction_text(m)} |" for m in names)
    return ("| key | label | unit | range | direction |\n| --- | --- | --- | --- | --- |\n" + rows + "\n\n"
            "Also returned: `per_clip` (stored per-clip values, input order), `clip_ids`, `n_ok`, `n_failed`, "
            "`errors` (one per failed clip) and `protocol`.")


def paper_values(name: str) -> str:
    """Markdown tables of the paper's numbers for a module's metrics (from ``data/paper_tables.json``)."""
    from ..datamodel.paper_tables import paper_frame

    frame = paper_frame()
    parts = []
    for metric in catalog.suite_or_metric(name):
        sel = frame[frame.metric == metric]
        for table, rows in sel.groupby("table", sort=True):
            setting = rows.input_setting.astype(bool).any()
            head = "| model | input setting | value |\n| --- | --- | --- |" if setting else "| model | value |\n| --- | --- |"
            body = "\n".join(f"| {_cell(r.model)} | {_cell(r.input_setting)} | {r.text} |" if setting
                             else f"| {_cell(r.model)} | {r.text} |"
                             for r in rows.itertuples())
            parts.append(f"{catalog.spec(metric).label}, paper Table {table} ({rows.metric_display.iloc[0]}):\n\n"
                         f"{head}\n{body}")
    if not parts and catalog.spec(catalog.suite_or_metric(name)[0]).beyond_paper:
        task = catalog.spec(catalog.suite_or_metric(name)[0]).tasks[0]
        return (f"Beyond the paper: HUG-VIS reports no such column; `hugvis report` prints it in its own table "
                f"beside {catalog.paper_table_of(task)}, never among the paper's columns.")
    if not parts:
        where = catalog.spec(catalog.suite_or_metric(name)[0]).paper_table
        return (f"The paper reports this as {where}, a figure, not a table of numbers." if where else
                "The paper reports no table of this module's values.")
    return "\n\n".join(parts)


def example_code(name: str) -> str:
    """The Python of a card's example, run on the Space's bundled ``examples/`` (cwd: the Space folder)."""
    kind = input_kind(name)
    files = example_names(name)
    lines = ["import evaluate"]
    if kind == "alpha":
        lines.append("from hug_vis_dataset.space.metric_examples import unpack")
        args = f'predictions=[unpack("examples/{files[0]}")]'
        args += f', references=[unpack("examples/{files[1]}")]' if needs_reference(name) else ""
    elif kind == "label":
        lines.append("from hug_vis_dataset.space.metric_examples import read_answers")
        args = "**read_answers(\"examples/predictions.jsonl\")" if name == "emotion_accuracy" else \
            'predictions=answers["predictions"], references=answers["references"]'
    elif kind == "rows":
        lines.append("from hug_vis_dataset.space.metric_examples import read_rows")
        options = dict(ANALYSIS_OPTIONS.get(name, {}))
        if "ratings" in options:
            options["ratings"] = "examples/ratings.csv"
        args = "**read_rows(\"examples/rows.csv\")" + "".join(f", {k}={v!r}" for k, v in options.items())
    elif kind == "speech_text":
        lines.append("from pathlib import Path")
        args = (f'predictions=["examples/{files[0]}"], '
                f'references=[Path("examples/{files[1]}").read_text(encoding="utf-8").strip()]')
    else:
        args = f'predictions=["examples/{files[0]}"]'
        args += f', references=["examples/{files[1]}"]' if needs_reference(name) else ""
    lines.append("from hug_vis_dataset.space.example_data import headline")
    lines += ["", f'module = evaluate.load("hugvis/{name}")']
    if kind == "label" and name != "emotion_accuracy":
        lines.append('answers = read_answers("examples/predictions.jsonl")')
    lines += [f"result = module.compute({args})", f'print(headline("{name}", result))']
    return "\n".join(lines)


def _example_section(name: str, output: "dict | None") -> str:
    from ..space.example_data import NOT_RUN

    code = f"```python\n{example_code(name)}\n```"
    if output is None:
        return code + "\n\nThe output was not recorded when this card was generated."
    if NOT_RUN in output:
        return code + f"\n\nNot run when this card was generated: {output[NOT_RUN]}"
    return code + f"\n\nOutput:\n\n```text\n{output!r}\n```"


def card_body(name: str, output: "dict | None") -> str:
    """The card below the front matter (see the module docstring for its sections)."""
    from ..modules import description, reference_urls
    from .release_info import install_command, space_extras

    names = catalog.suite_or_metric(name)
    specs = [catalog.spec(m) for m in names]
    kind = input_kind(name)
    definitions = "\n\n".join(f"**{_label(s.label)}** (`{s.name}`). {s.definition or s.description}"
                               for s in specs[:6])
    if len(specs) > 6:
        definitions += "\n\n" + "\n".join(f"- `{s.name}`: {s.description}" for s in specs[6:])
    further = links_markdown() + "".join(f"\n- Reference implementation: {u}" for u in reference_urls(name))
    return f"""# Metric Card for HUG-VIS {_title(name)}

## Metric Description

{description(name)}

{definitions}
{_notes(name)}
## How to Use

Install the library, then load the module by its Hub id:

```bash
{install_command(space_extras("metric", catalog.extras_of([name])))}
```

```python
import evaluate
module = evaluate.load("hugvis/{name}")
```

{_weights_line(name)} The module, `hugvis evaluate` and the explorer Space call the same per-clip
scorer and the same aggregation, so they give the same number. This Space's app computes with this
module on uploaded files; its bundled `examples/` are cut from the toolkit's synthetic grid.

### Inputs

{_inputs(name)}

### Output Values

{_outputs(name)}

#### Values from Popular Papers

{paper_values(name)}

### Examples

Run in this Space's folder (its bundled `examples/`):

{_example_section(name, output)}

## Limitations and Bias

{_LIMITATIONS[kind]} The bundled examples are synthetic (made by `hugvis synth`), not HUG-VIS
recordings: their values show the module works, not how any model performs.

## Citation

```bibtex
{CITATION}
```

## Further References

{further}
"""

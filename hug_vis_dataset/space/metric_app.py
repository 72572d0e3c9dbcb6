"""The Gradio app of every published metric Space (``metrics/<name>/app.py`` calls :func:`launch`).

A visitor uploads a prediction and, where the module takes one, a reference (a PNG-sequence zip
or a video for alpha mattes, MP4 for generated videos, WAV for speech, ``predictions.jsonl`` for
emotion answers, stored result rows as CSV or Parquet for analyses), or presses *Use the bundled
example*, and gets the module's output with units and direction. The numbers are computed by the
Space's own ``evaluate`` module (``evaluate.load(<Space folder>)``), on inputs prepared by
:func:`hug_vis_dataset.space.metric_examples.compute_inputs`, so they equal what
``evaluate.load("hugvis/<name>").compute(...)`` returns for the same files. Gradio 6
(:data:`hug_vis_dataset.publish.module_folders.GRADIO_VERSION`, the cards' ``sdk_version``).

Example:
    >>> rows = result_rows("mad", {"mad": 22.2122, "n_ok": 1, "n_failed": 0})
    >>> rows[0]
    ('mad', 'MAD', '22.2122', 'mean |alpha error| x1e3', 'lower is better')
    >>> print(result_html("mad", {"mad": 1.5, "n_ok": 1, "n_failed": 0}).splitlines()[1])
    <tr data-key="mad"><th>MAD</th><td class="value">1.5</td><td>mean |alpha error| x1e3</td><td>lower is better</td></tr>
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from pathlib import Path
from typing import Any

from .. import catalog
from ..errors import HugvisError
from ..readers.json_files import loads_strict
from .metric_examples import ANALYSIS_OPTIONS, RATED_ANALYSES, compute_inputs, example_names, input_kind, needs_reference
from .style import PAGE_CSS, launch_i18n

#: What the upload fields accept, per input kind (Gradio ``file_types``).
FILE_TYPES = {"alpha": [".zip", ".mkv", ".mov", ".mp4", ".avi"], "video": [".mp4", ".mov", ".mkv", ".avi"],
              "audio": [".wav", ".flac"], "label": [".jsonl"], "rows": [".csv", ".parquet"],
              "speech_text": [".wav", ".flac"]}
#: What the reference field accepts where it differs from the prediction's (CER: the target text).
REFERENCE_FILE_TYPES = {"speech_text": [".txt"]}
_UPLOAD_HELP = {
    "alpha": "a zip of the matte's PNG frames (000000.png, 000001.png ...) or a lossless gray video",
    "video": "an MP4 video of one clip",
    "audio": "a WAV (or FLAC) file of one clip",
    "speech_text": "a WAV (or FLAC) file of one clip and, as its reference, a UTF-8 .txt file of the text it "
                   "should say",
    "label": "predictions.jsonl: one {\"clip_id\", \"input_setting\", \"answer\"} per line; the reference is "
             "the emotion in each clip id",
    "rows": "stored result rows: rows.parquet of `hugvis evaluate`, or the same columns as CSV",
}


def _format(value: Any) -> str:
    if isinstance(value, float):
        return "n/a" if not math.isfinite(value) else f"{value:.6g}"
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, default=str)
        return text if len(text) <= 160 else text[:157] + "..."
    return str(value)


def direction_text(name: str) -> str:
    """``higher is better`` / ``lower is better`` of a metric; an analysis's direction in words."""
    spec = catalog.spec(name)
    if spec.mode == catalog.ANALYSIS:
        return "larger = harder" if "difficulty" in spec.name else ""
    return "higher is better" if spec.higher_is_better else "lower is better"


def paper_unit(name: str) -> str:
    """The unit of a module's headline value (``compute`` returns paper units: stored x ``paper_scale``)."""
    spec = catalog.spec(name)
    return spec.unit if spec.paper_scale == 1 else f"{spec.unit}, x{spec.paper_scale:g}"


def result_rows(name: str, result: dict) -> list[tuple[str, str, str, str, str]]:
    """``(key, label, value, unit, direction)`` per headline value of a module's output."""
    names = catalog.suite_or_metric(name)
    if catalog.spec(names[0]).mode == catalog.ANALYSIS:
        return [(key, key, _format(value), "", "") for key, value in result.items()]
    protocol = result.get("protocol")
    suffix = f" ({'RVM average' if protocol == catalog.RVM else 'mean over clips'})" if protocol else ""
    rows = [(m, catalog.spec(m).label + suffix, _format(result.get(m, math.nan)), paper_unit(m), direction_text(m))
            for m in names]
    per_clip = result.get("per_clip")
    if isinstance(per_clip, list) and len(names) == 1:  # each clip's own value: labelled apart from the headline
        rows.append(("per_clip", f"{catalog.spec(names[0]).label} of each clip (its own frames)",
                     ", ".join(_format(v if v is not None else math.nan) for v in per_clip[:20])
                     + (" ..." if len(per_clip) > 20 else ""), paper_unit(names[0]), ""))
    rows += [(k, COUNT_LABELS.get(k, k), _format(result[k]), "clips", "") for k in ("n_ok", "n_failed", "n_clips")
             if k in result]
    if protocol:
        rows.append(("aggregation", "aggregation", str(result.get("aggregation", protocol)), "", ""))
    return rows


COUNT_LABELS = {"n_ok": "clips scored", "n_failed": "clips failed", "n_clips": "clips"}


def without_folders(value: Any) -> Any:
    """The module's output with every absolute path in its texts cut to its file name (the full-output box
    shows it to visitors: never the server's folders).

    >>> without_folders({"errors": [{"error": "/tmp/hugvis-metric-x1/000000.png has 3 channels"}], "mad": 1.5})
    {'errors': [{'error': '000000.png has 3 channels'}], 'mad': 1.5}
    """
    if isinstance(value, str):
        return _no_folders(value)
    if isinstance(value, dict):
        return {k: without_folders(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [without_folders(v) for v in value]
    return value


def failure_html(result: dict) -> str:
    """Why clips failed (``errors`` of the module's output), one escaped line each above the table, so a
    headline "n/a" is never shown without its reason; "" when every clip scored."""
    errors = result.get("errors") if isinstance(result, dict) else None
    if not errors:
        return ""
    lines = []
    for e in errors[:10]:
        if isinstance(e, dict):
            where = e.get("clip_id") or f"input {e.get('index', '?')}"
            lines.append(f"<li>{html.escape(str(where))}: {html.escape(_no_folders(e.get('error', '')))}</li>")
        else:
            lines.append(f"<li>{html.escape(str(e))}</li>")
    more = f"<li>... and {len(errors) - 10} more</li>" if len(errors) > 10 else ""
    return (f"<div class='hugvis-error' id='hugvis-failures'><b>{len(errors)} input(s) could not be scored</b> "
            f"(n/a below):<ul>{''.join(lines)}{more}</ul></div>")


def _no_folders(text: Any) -> str:
    """An error text with absolute paths cut to their file names: a visitor sees their upload's name,
    never the server's folders.

    Example:
        >>> _no_folders("cannot read video /tmp/gradio/ab12/clip.mp4: Invalid data")
        'cannot read video clip.mp4: Invalid data'
    """
    return re.sub(r"(?<![\w.])/(?:[^\s/:'\"]+/)+(?=[^\s/:'\"]+)", "", str(text), flags=re.ASCII)


def result_html(name: str, result: dict) -> str:
    """The result as an HTML table, one ``<tr data-key=...>`` per value (escaped: values may hold
    uploaded text), after the reasons of any failed input (:func:`failure_html`)."""
    cells = [f'<tr data-key="{html.escape(key)}"><th>{html.escape(label)}</th><td class="value">'
             f"{html.escape(value)}</td><td>{html.escape(unit)}</td><td>{html.escape(direction)}</td></tr>"
             for key, label, value, unit, direction in result_rows(name, result)]
    return failure_html(result) + '<table id="hugvis-result-table">\n' + "\n".join(cells) + "\n</table>"


def _file_path(upload: Any) -> "str | None":
    if upload is None:
        return None
    return str(getattr(upload, "name", upload))


def run_module(module: Any, name: str, prediction: Any, reference: Any = None, options: str = "",
               work_dir: "str | None" = None) -> tuple[str, dict]:
    """Compute the module on uploaded files; returns ``(html table, full output)`` or an error line."""
    pred, ref = _file_path(prediction), _file_path(reference)
    if pred is None:
        return "<p class='hugvis-error'>Upload a prediction file, or press <b>Use the bundled example</b>.</p>", {}
    if needs_reference(name) and ref is None:
        return (f"<p class='hugvis-error'>Upload the reference too: {html.escape(_title(name))} compares the "
                "prediction with its reference (the second upload field).</p>"), {}
    try:
        chosen = loads_strict(options, "options") if options and options.strip() else None  # a key twice: refused
        result = module.compute(**compute_inputs(name, pred, ref, chosen, work_dir))
    except (HugvisError, ValueError, OSError) as err:  # a visitor's bad file or option: the reason, in words
        return f"<p class='hugvis-error'>Could not compute: {html.escape(_no_folders(err))}</p>", {}
    except Exception as err:  # noqa: BLE001 - anything else is shown with its kind, never crashes the Space
        return f"<p class='hugvis-error'>{html.escape(type(err).__name__)}: {html.escape(_no_folders(err))}</p>", {}
    return result_html(name, result), without_folders(json.loads(json.dumps(result, default=str)))


def _title(name: str) -> str:
    names = catalog.suite_or_metric(name)
    if catalog.spec(names[0]).mode == catalog.ANALYSIS:
        return name.replace("_", " ").capitalize()
    return " / ".join(catalog.spec(m).label for m in names) if len(names) <= 5 else name.replace("_", " ")


def card_text(folder: "str | Path") -> str:
    r"""The module folder's Metric Card (its ``README.md``) without the Space's front matter; "" when absent.

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()); _ = (f / "README.md").write_text("---\ntitle: x\n---\n# MAD\ntext\n")
    >>> card_text(f)
    '# MAD\ntext\n'
    """
    path = Path(folder) / "README.md"
    if not path.is_file():
        return ""
    text = path.read_text(encoding="utf-8")
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        text = text[end + 5:] if end >= 0 else text
    return text


def build_metric_app(folder: "str | Path", name: "str | None" = None) -> Any:
    """The ``gr.Blocks`` of one metric Space: upload fields, a bundled example, the result table."""
    import evaluate
    import gradio as gr

    from ..modules import description

    folder = Path(folder).resolve()
    name = name or folder.name
    module = evaluate.load(str(folder))
    kind = input_kind(name)
    examples = [folder / "examples" / f for f in example_names(name)]
    from ..outputs import scratch_folder

    work = str(scratch_folder(prefix="hugvis-metric-"))
    with gr.Blocks(title=f"HUG-VIS {_title(name)}") as demo:
        gr.Markdown(f"# HUG-VIS {_title(name)}\n\n{description(name)}\n\nUpload {_UPLOAD_HELP[kind]}.")
        with gr.Row():
            prediction = gr.File(label="prediction" if kind != "rows" else "result rows", file_types=FILE_TYPES[kind],
                                 elem_id="prediction")
            reference = gr.File(label="reference", file_types=REFERENCE_FILE_TYPES.get(kind, FILE_TYPES[kind]),
                                elem_id="reference",
                                visible=needs_reference(name))
        ratings = gr.File(label="ratings CSV (rater, clip_id, model, criterion, score)", file_types=[".csv"],
                          elem_id="ratings", visible=name in RATED_ANALYSES)
        options = gr.Textbox(label="options (JSON)", elem_id="options", visible=kind == "rows",
                             value=json.dumps({k: v for k, v in ANALYSIS_OPTIONS.get(name, {}).items()
                                               if k != "ratings"}))
        with gr.Row():
            compute_button = gr.Button("Compute", variant="primary", elem_id="compute")
            example_button = gr.Button("Use the bundled example", elem_id="use-example")
        result = gr.HTML(elem_id="result")
        raw = gr.JSON(label="full output of module.compute", elem_id="raw")
        card = card_text(folder)
        if card:  # the Metric Card: what the value is, how it is computed, its limits
            with gr.Accordion("Metric Card", open=False, elem_id="metric-card"):
                gr.Markdown(card)

        def on_compute(pred, ref, rate, opts):
            chosen = opts
            if name in RATED_ANALYSES:
                parsed = loads_strict(opts, "options") if opts and opts.strip() else {}
                parsed["ratings"] = _file_path(rate)
                chosen = json.dumps(parsed)
            return run_module(module, name, pred, ref, chosen, work)

        def on_example():
            opts = json.dumps(ANALYSIS_OPTIONS.get(name, {})) if kind == "rows" else ""
            html_text, out = run_module(module, name, str(examples[0]),
                                        str(examples[1]) if needs_reference(name) else None, opts, work)
            return (str(examples[0]), str(examples[1]) if needs_reference(name) else None, html_text, out)

        compute_button.click(on_compute, [prediction, reference, ratings, options], [result, raw])
        example_button.click(on_example, [], [prediction, reference, result, raw])
    demo.hugvis_allowed_paths = [str(folder / "examples"), work]
    return demo


def launch(app_file: "str | Path", block: bool = True) -> Any:
    """Start the Space whose ``app.py`` is ``app_file``, as the Hub runs it: ``GRADIO_SERVER_NAME``
    and ``GRADIO_SERVER_PORT`` from the environment (the Hub sets ``0.0.0.0:7860``; default
    ``127.0.0.1``), analytics off; returns the Blocks when ``block`` is False."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    demo = build_metric_app(Path(app_file).resolve().parent)
    port = os.environ.get("GRADIO_SERVER_PORT")
    demo.launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"),
                server_port=int(port) if port else None, css=PAGE_CSS, prevent_thread_lock=not block,
                allowed_paths=demo.hugvis_allowed_paths, i18n=launch_i18n())
    return demo

"""The explorer's components and events: each tab wires :class:`~hug_vis_dataset.space.app.Explorer`
callbacks to Gradio components, and nothing else (no computation lives here).

Conventions every tab follows: a filter that does not apply to the current table or analysis is
hidden and reset to All when the table changes; a result that is empty is hidden and the message
above it says why and names the fix; the leaderboard and the model lists are read from the store
again whenever they are shown, so a run stored a moment ago is there.
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

from .. import catalog
from ..outputs import OutputError, discard
from ..leaderboard.board import ALL, DEFAULT_ORIGINS, ORIGIN_LABELS, applicable_filters, provenance_href
from ..presentation.escaping import markdown_text
from ..datamodel.results import NAME_RULE
from .explorer import ANALYSES, ANALYSIS_FILTERS, FINDINGS, SCORED_TASKS, Explorer, table_number
from .mos_study import build_mos_tab
from .precheck import layout_help


#: The paper's MOS tables (6, 8, 10), from the catalog: where the QC toggle applies.
MOS_TABLES = frozenset(catalog.task(t).mos_table for t in catalog.task_names()) - {None}
#: Tables with human judgments quality control counts: the MOS tables and Table 4 (its People rows).
RATED_TABLES = MOS_TABLES | {catalog.task("emotion").paper_table}


def _filter_choices(explorer: Explorer, table: int) -> dict[str, list]:
    """Each filter's choices for a paper table: (shown, value), the Source values under the board's words."""
    paper = explorer.paper[explorer.paper["table"] == table]
    return {c: [(ALL, ALL)] + [(catalog.SOURCE_LABELS.get(v, v) if c == "source" else v, v)
                               for v in dict.fromkeys(v for v in paper[c] if v)]
            for c in ("source", "input_setting", "paradigm")}


def board_html(frame) -> str:
    """The board as a plain HTML table: escaped cells, best bold and second underlined (the only
    winning-cell style, explained once above the board), Provenance as a relative link
    (``provenance/<task>/<model>/summary.json``, served by :func:`~hug_vis_dataset.space.app.provenance_routes`,
    so no server path is shown), headers that sort the rows within their origin group.

    A plain table rather than Gradio's data grid: the grid keeps a column filter set in its header
    menu when its value changes, so a filter set on one table emptied the next. Each cell carries
    its sort key (``data-sort``): the printed number in a column of numbers (a cell without one,
    e.g. ``needs weights``, has none and sorts last), the text elsewhere; each row its group
    (``data-group``, from ``frame.attrs["groups"]``, :func:`~hug_vis_dataset.leaderboard.board.row_group`);
    :data:`SORT_ON_CLICK` sorts by them in the browser and shows the direction in the header.

    Example:
        >>> import pandas as pd
        >>> page = board_html(pd.DataFrame({"Model": ["a<b"], "MAD ↓": ["1.00 (best)"], "Provenance": [""]}))
        >>> import re; print(re.sub(r' style="[^"]*"', "", page))
        <div><table class="hugvis-board"><thead><tr><th title="sort by Model">Model<span class="sort-mark"></span></th><th title="sort by MAD ↓">MAD ↓<span class="sort-mark"></span></th><th title="sort by Provenance">Provenance<span class="sort-mark"></span></th></tr></thead><tbody><tr data-group="0"><td data-sort="a&lt;b">a&lt;b</td><td data-sort="1.00"><b>1.00</b></td><td data-sort=""></td></tr></tbody></table></div>
    """
    import html

    def cell(column: str, text) -> str:
        text = "" if text is None else str(text)
        if column == "Provenance" and text.startswith("https://"):
            return f'<a href="{html.escape(text)}" target="_blank">summary.json</a>'
        if column == "Provenance" and text.endswith("summary.json") and Path(text).is_absolute():
            return f'<a href="{html.escape(provenance_href(text))}" target="_blank">summary.json</a>'
        mark = _RANK_MARK.search(text)
        if mark:
            shown = html.escape(text[:mark.start()])
            return f"<b>{shown}</b>" if mark.group(1) == "best" else f"<u>{shown}</u>"
        return html.escape(text)

    texts = {c: ["" if v is None else str(v) for v in frame[c]] for c in frame.columns}
    groups = list(frame.attrs.get("groups") or [0] * len(frame))
    # A column of numbers: at least half its filled cells are a printed number (with a rank mark or %).
    numeric = {c for c, values in texts.items()
               if 2 * sum(bool(_PRINTED_NUMBER.fullmatch(v)) for v in values) >= max(1, sum(bool(v) for v in values))}

    def key(column: str, text: str) -> str:
        if column not in numeric:
            return f' data-sort="{html.escape(text)}"'
        number = _PRINTED_NUMBER.fullmatch(text)
        return f' data-sort="{number.group(1)}"' if number else ""

    columns = list(frame.columns)
    head = "".join(f'<th{_HEADER[:-1] + _column_style(c, columns)}" title="sort by {html.escape(str(c))}">'
                   f'{html.escape(str(c))}<span class="sort-mark"></span></th>' for c in columns)
    body = "".join(f'<tr data-group="{int(groups[i])}">'
                   + "".join(f'<td{_CELL[:-1] + _column_style(c, columns)}"{key(c, texts[c][i])}>'
                             f"{cell(c, texts[c][i])}</td>" for c in columns) + "</tr>" for i in range(len(frame)))
    # Separate borders: a collapsed border belongs to no cell, and the scrolled cells showed through the pinned
    # column's 1 px border strip; a separate one is painted by the pinned cell over them.
    return (f'<div style="max-height: 640px; overflow: auto"><table class="hugvis-board" style="border-collapse: '
            f'separate; border-spacing: 0; width: 100%"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
            '</div>')


# Inline styles: the board carries its look wherever the HTML is shown (Gradio 6 takes page CSS at launch).
# Only a bottom rule: the page's own table styles give cells side borders, which a sideways scroll shifted under the
# pinned column's edge.
_CELL = ' style="border: 0; border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: left; white-space: nowrap"'
_HEADER = _CELL[:-1] + '; cursor: pointer"'
#: Provenance wraps inside its cell (a long link is never cut at the table's right edge); the first column
#: (Model) stays pinned while a narrow screen scrolls the score columns sideways.
_WRAPPING = "; white-space: normal; overflow-wrap: anywhere; min-width: 9em"
_PINNED = "; position: sticky; left: 0; background: var(--background-fill-primary, #fff); z-index: 1"


def _column_style(column: str, columns: list) -> str:
    """The extra inline style of a column's cells (:data:`_WRAPPING`, :data:`_PINNED`)."""
    return (_WRAPPING if column == "Provenance" else "") + (_PINNED if columns and column == columns[0] else "")


#: A cell's printed number (its sort key), then a rank mark, a not-separable mark, a MOS interval or %.
_PRINTED_NUMBER = re.compile(r"([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?:%|\s.*)?", re.S | re.ASCII)
_RANK_MARK = re.compile(r" \((best|second)\)$")
#: Browser side of the board's sorting: a click on a header sorts the rows by that column's
#: ``data-sort`` keys, ascending then descending (numbers as numbers, text in locale order), within
#: each row group (``data-group``: reference, paper, submitted, synthetic, subset, baseline rows stay
#: in their groups); cells without a key stay last in their group, ties keep the board's order (the
#: sort is stable). The sorted header shows ▲ or ▼ (and ``aria-sort``). The same script shows the "scroll sideways"
#: hint whenever the table is wider than its box (redrawn or resized), and hides it otherwise.
SORT_ON_CLICK = """
const overflowHint = () => {
  const table = element.querySelector('table'), box = table && table.parentElement;
  const wide = !!box && table.scrollWidth > box.clientWidth + 1;
  for (const hint of document.querySelectorAll('.hugvis-overflow-hint')) hint.classList.toggle('hugvis-overflowing', wide);
};
new MutationObserver(overflowHint).observe(element, {childList: true, subtree: true});
new ResizeObserver(overflowHint).observe(element);
overflowHint();
element.addEventListener('click', (event) => {
  const th = event.target.closest('th');
  if (!th || !element.contains(th)) return;
  const row = th.parentNode, body = th.closest('table').tBodies[0], column = Array.from(row.children).indexOf(th);
  const ascending = th.getAttribute('aria-sort') !== 'ascending';
  for (const other of row.children) {
    other.removeAttribute('aria-sort');
    const mark = other.querySelector('.sort-mark'); if (mark) mark.textContent = '';
  }
  th.setAttribute('aria-sort', ascending ? 'ascending' : 'descending');
  const mark = th.querySelector('.sort-mark'); if (mark) mark.textContent = ascending ? ' ▲' : ' ▼';
  const key = (tr) => { const v = tr.children[column].dataset.sort; return v === undefined ? null : v; };
  const group = (tr) => Number(tr.dataset.group || 0);
  const numeric = Array.from(body.rows).every((tr) => key(tr) === null || !isNaN(Number(key(tr))));
  const rows = Array.from(body.rows).sort((a, b) => {
    if (group(a) !== group(b)) return group(a) - group(b);
    const x = key(a), y = key(b);
    if (x === null || y === null) return (x === null) - (y === null);
    const order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
    return ascending ? order : -order;
  });
  for (const tr of rows) body.appendChild(tr);
});
"""


def _leaderboard_tab(gr, explorer: Explorer, demo, tab):
    """Table, Show and filter controls over the board; returns the ``gr.State`` to bump after a run
    is stored (the board is read from the store again on every change, tab visit and page load)."""
    labels = explorer.table_labels()
    first = labels[0]
    # Which filters split a table is the paper's layout; the store is read only by the events below.
    filters = applicable_filters(table_number(first), explorer.paper)
    choices = _filter_choices(explorer, table_number(first))
    with gr.Row():
        # wide enough for a table's name; on a phone it takes its own line (a Row wraps below min_width)
        table = gr.Dropdown(labels, value=first, label="Table", elem_id="board-table", scale=2, min_width=320)
        show = gr.CheckboxGroup(list(ORIGIN_LABELS.values()), value=[ORIGIN_LABELS[o] for o in DEFAULT_ORIGINS],
                                label="Show", elem_id="board-show",
                                info="synthetic-demo and grid-subset runs are never ranked with the paper")
    with gr.Row():
        source = gr.Dropdown(choices["source"], value=ALL, label="Open vs closed source", visible="source" in filters,
                             elem_id="board-source")
        setting = gr.Dropdown(choices["input_setting"], value=ALL, label="Input setting",
                              visible="input_setting" in filters, elem_id="board-setting")
        paradigm = gr.Dropdown(choices["paradigm"], value=ALL, label="Paradigm", visible="paradigm" in filters,
                               elem_id="board-paradigm")
        # Tables with human judgments only: quality control leaves flagged raters out unless asked (the unfiltered view).
        raters = gr.Checkbox(False, label="include flagged raters", visible=table_number(first) in RATED_TABLES,
                             elem_id="board-all-raters",
                             info="MOS tables and Table 4's People rows leave out raters the study's QC flags")
    gr.Markdown("Best **bold**, second <u>underlined</u>, within each comparable group (`docs/SCORING.md`). "
                "Click a header to sort (▲ ascending, ▼ descending); rows stay within their group "
                "(reference, paper, submitted, synthetic, subset, baseline).")
    # A board wider than its box (a phone; a MOS table at 1280 px): the score columns are a sideways scroll away,
    # and the page says so (the board's script shows this hint while the table overflows; the Model column stays
    # pinned while the table scrolls).
    gr.Markdown("Scroll the table sideways for every score column →", elem_id="board-scroll-hint",
                elem_classes=["hugvis-overflow-hint"])
    board = gr.HTML(elem_id="leaderboard", js_on_load=SORT_ON_CLICK)
    notes = gr.Markdown(elem_id="leaderboard-notes")
    stored_runs = gr.State(0)

    def refresh(table_label, shown, src, inp, par, all_raters):
        frame, text, _ = explorer.leaderboard(table_label, shown, src, inp, par, all_raters=bool(all_raters))
        return board_html(frame), text

    def on_table(table_label, shown):
        frame, text, applies = explorer.leaderboard(table_label, shown)
        choices = _filter_choices(explorer, table_number(table_label))
        return [board_html(frame), text, *[gr.update(choices=choices[c], value=ALL, visible=c in applies)
                                           for c in ("source", "input_setting", "paradigm")],
                gr.update(value=False, visible=table_number(table_label) in RATED_TABLES)]

    inputs = [table, show, source, setting, paradigm, raters]
    # Every event that draws the board is one queue, served in the order the events came (FIFO, one at a time):
    # an answer computed from older inputs (a tab visit's refresh) can never land after a newer one (the table
    # just chosen) and draw the wrong table.
    one_board = dict(concurrency_id="leaderboard-board", concurrency_limit=1)
    table.change(on_table, [table, show], [board, notes, source, setting, paradigm, raters], **one_board)
    # Page load included: the board is read from the store once per event, never at build time.
    for event in (demo.load, show.change, source.change, setting.change, paradigm.change, raters.change,
                  stored_runs.change, tab.select):
        event(refresh, inputs, [board, notes], **one_board)
    return stored_runs


def task_choices(tasks) -> list[tuple[str, str]]:
    """A task dropdown's choices: what a person reads (the catalog's label), what the code gets (the key).

    >>> task_choices(["audio_driven"])
    [('Audio-driven video generation', 'audio_driven')]
    """
    return [(catalog.task(t).label, t) for t in tasks]


def metric_choices(metrics) -> list[tuple[str, str]]:
    """A metric dropdown's choices: the catalog's header (label, arrow, unit) shown, the key passed.

    >>> metric_choices(["mad_band_5"])
    [('MAD (band 5) ↓', 'mad_band_5')]
    """
    return [(catalog.spec(m).header, m) if m in catalog.METRIC_NAMES else (m, m) for m in metrics]


def _model_choices(models) -> list[tuple[str, str]]:
    """A model checklist's choices: a reserved row under its printed name, the stored key passed.

    >>> _model_choices(["real-audio", "vis_good"])
    [('Real audio (reference)', 'real-audio'), ('vis_good', 'vis_good')]
    """
    from ..datamodel.results import reserved_label

    return [(reserved_label(m), m) for m in models]


def _crosstask_tab(gr, explorer: Explorer):
    from ..metrics.crosstask import DEFAULT_PAPER_METRICS

    models = explorer.crosstask_models()
    emotions = explorer.choices()["emotion"]
    with gr.Row():
        analysis = gr.Dropdown(list(ANALYSES), value=ANALYSES[0], label="Analysis", elem_id="ct-analysis")
        emotion_pick = gr.Dropdown([ALL] + list(emotions), value=ALL, label="Emotion", elem_id="ct-emotion",
                                   visible="emotion" in ANALYSIS_FILTERS[ANALYSES[0]])
        metric_pick = gr.Dropdown([ALL] + [m.label for m in DEFAULT_PAPER_METRICS], value=ALL, label="Metric",
                                  visible="metric" in ANALYSIS_FILTERS[ANALYSES[0]], elem_id="ct-metric")
    with gr.Accordion(f"Models ({len(models)} stored; all selected)", open=False) as accordion:
        model_pick = gr.CheckboxGroup(_model_choices(models), value=models, label="Models", elem_id="ct-models")
    run = gr.Button("Run analysis", elem_id="crosstask-run")
    message = gr.Markdown(elem_id="ct-message")
    table = gr.Dataframe(interactive=False, label="Result", visible=False, elem_id="ct-table")
    image = gr.Image(label="Figure", type="filepath", visible=False)

    def on_analysis(name):
        applies = ANALYSIS_FILTERS[name]
        return (gr.update(value=ALL, visible="emotion" in applies), gr.update(value=ALL, visible="metric" in applies))

    def compute(name, chosen, emotion, metric):
        frame, figure, text = explorer.crosstask(name, chosen, emotion, metric)
        return text, gr.update(value=frame, visible=len(frame) > 0), gr.update(value=figure, visible=figure is not None)

    def models_now(chosen):
        names = explorer.crosstask_models()
        keep = [m for m in (chosen or []) if m in names] + [m for m in names if m not in (chosen or [])]
        return gr.update(choices=_model_choices(names), value=keep), gr.update(label=f"Models ({len(names)} stored)")

    analysis.change(on_analysis, analysis, [emotion_pick, metric_pick])
    run.click(compute, [analysis, model_pick, emotion_pick, metric_pick], [message, table, image])
    return models_now, model_pick, [model_pick, accordion]


def _findings_tab(gr, explorer: Explorer):
    with gr.Row():
        finding = gr.Dropdown(list(FINDINGS), value=FINDINGS[0], label="Finding", elem_id="findings-finding")
        task = gr.Dropdown(task_choices(SCORED_TASKS), value="matting", label="Task", elem_id="findings-task")
    run = gr.Button("Measure", elem_id="findings-run")
    message = gr.Markdown(elem_id="findings-message")
    table = gr.Dataframe(interactive=False, label="Result", elem_id="findings-table", visible=False)
    image = gr.Image(label="Figure", type="filepath", visible=False)

    def compute(name, task_name):
        frame, figure, text = explorer.findings(name, task_name)
        return text, gr.update(value=frame, visible=len(frame) > 0), gr.update(value=figure, visible=figure is not None)

    run.click(compute, [finding, task], [message, table, image])


def _inspector_tab(gr, explorer: Explorer):
    choices = explorer.choices()
    # a choice is a value, or a (shown, value) pair (actors: "actor 1" shown, "actor_0001" passed)
    first = [choices[k][0][1] if isinstance(choices[k][0], tuple) else choices[k][0]
             for k in ("actor", "emotion", "action", "script")]
    with gr.Row():
        actor = gr.Dropdown(choices["actor"], value=first[0], label="Actor")
        emotion = gr.Dropdown(choices["emotion"], value=first[1], label="Emotion")
        action = gr.Dropdown(choices["action"], value=first[2], label="Action")
        script = gr.Dropdown(choices["script"], value=first[3], label="Script")
        frame = gr.Slider(0, explorer.frame_count(*first) - 1, value=0, step=1, label="Frame", elem_id="inspector-frame")
    show = gr.Button("Show clip", elem_id="inspector-show")
    with gr.Row():
        video = gr.Video(label="Video (the whole clip)", elem_id="inspector-video")
        still = gr.Image(label="Video frame", type="numpy", elem_id="inspector-frame-image")
        matte = gr.Image(label="Alpha matte", type="numpy", elem_id="inspector-matte")
        overlay = gr.Image(label="Matte overlay", type="numpy", elem_id="inspector-overlay")
    audio = gr.Audio(label="Audio", type="filepath")
    text = gr.Markdown("Choose a clip and press **Show clip**; the video frame, matte and overlay then follow the "
                       "Frame slider (the video and audio play the whole clip).",
                       elem_id="inspector-text")
    keys = [actor, emotion, action, script]
    for control in keys:
        control.change(lambda *k: gr.update(maximum=explorer.frame_count(*k) - 1, value=0), keys, frame)
    outputs = [video, still, matte, overlay, audio, text]
    show.click(explorer.inspect, keys + [frame], outputs)
    # The frame panels (video frame, matte, overlay) follow the slider; the video and audio play the whole clip.
    frame.change(explorer.inspect, keys + [frame], outputs)


def _viewer_tab(gr, explorer: Explorer, tab):
    """Per-clip viewer: a stored run's clips worst-first, one clip's output beside its reference,
    following the Frame slider; the per-frame curve of matting metrics."""
    from .explorer import VIEWER_HINT
    from .viewer import FRAME_PANELS, clip_display, curve_with_marker

    runs = explorer.viewer_runs()
    # Two rows, each wide enough for its values whole ("Boundary-aware matting errors (finding iii) / matte_good",
    # "actor 2 · Surprised · action 1 · script 1"): four fields in one row cut them even at 1280 px.
    with gr.Row():
        run = gr.Dropdown(runs, value=None, label="Stored run", elem_id="viewer-run", scale=3, min_width=320)
        metric = gr.Dropdown([], value=None, label="Order by (worst first)", elem_id="viewer-metric", scale=2)
    with gr.Row():
        clip = gr.Dropdown([], value=None, label="Clip", elem_id="viewer-clip", scale=2, min_width=300)
        frame = gr.Slider(0, 1, value=0, step=1, label="Frame", elem_id="viewer-frame", scale=3)
    message = gr.Markdown(VIEWER_HINT, elem_id="viewer-message")
    clips = gr.Dataframe(interactive=False, label="Clips, worst first", visible=False, max_height=260,
                         elem_id="viewer-clips")
    with gr.Row():
        reference = gr.Image(label="Reference", type="numpy", elem_id="viewer-reference")
        output = gr.Image(label="Model output", type="numpy", elem_id="viewer-output")
        error = gr.Image(label="Error map |output - reference|", type="numpy", visible=False, elem_id="viewer-error")
    with gr.Row():
        ref_audio = gr.Audio(label="Reference recording", type="filepath", visible=False, elem_id="viewer-ref-audio")
        out_audio = gr.Audio(label="Generated recording", type="filepath", visible=False, elem_id="viewer-out-audio")
    text = gr.Markdown(elem_id="viewer-text")
    # Two series: the values and a vertical mark at the frame the panels show (curve_with_marker).
    curve = gr.LinePlot(x="frame", y="value", color="series", label="Per-frame value", visible=False,
                        elem_id="viewer-curve")

    def show(label, chosen, at, by):
        view = explorer.viewer_view(label, chosen, at, by)
        has_curve = "curve" in view.panels and view.curve is not None and len(view.curve) > 0
        images = "images" in view.panels  # the reference and the model's output; a clip property: the reference
        title = view.curve_title or "value"
        return (gr.update(value=view.reference, visible=bool(view.panels & FRAME_PANELS)),
                gr.update(value=view.output, visible=images),
                gr.update(value=view.error, visible=view.error is not None),
                gr.update(value=view.reference_audio, visible="audio" in view.panels),
                gr.update(value=view.output_audio, visible="audio" in view.panels), view.text,
                gr.update(value=curve_with_marker(view.curve, view.frame) if has_curve else None, visible=has_curve,
                          y_title=title, label=f"Per-frame {title}, frame {view.frame} marked"))

    panels = [reference, output, error, ref_audio, out_audio, text, curve]

    def slider(view):
        """The frame slider of a clip: shown only where the task's view has frames."""
        return gr.update(maximum=max(1, view.n_frames - 1), value=0, visible=bool(view.panels & FRAME_PANELS))

    def on_run(label, by):
        table, metrics, chosen_metric, ids, note, order = explorer.viewer_clips(label, by)
        first = ids[0] if ids else None
        view = explorer.viewer_view(label, first, 0, chosen_metric)
        return (ids, note, gr.update(value=table, visible=len(table) > 0, label=f"Clips, {order}"),
                gr.update(choices=[(clip_display(c), c) for c in dict.fromkeys(ids)], value=first),
                gr.update(choices=metric_choices(metrics), value=chosen_metric, label=f"Order by ({order})",
                          visible=bool(metrics)), slider(view),
                *show(label, first, 0, chosen_metric))

    def on_clip(label, chosen, by):
        return (slider(explorer.viewer_view(label, chosen, 0, by)), *show(label, chosen, 0, by))

    def on_row(label, by, ids, evt: gr.SelectData):
        """A click on a row of the clip table selects that row's clip (the table shows clips as read; ``ids`` are
        the listed clips' ids, kept when the run was listed)."""
        row = evt.row_value if isinstance(evt.row_value, (list, tuple)) else None
        shown = {clip_display(c): c for c in ids or []}
        chosen = shown.get(str(row[0]), str(row[0])) if row else None
        return (gr.update(value=chosen), *on_clip(label, chosen, by))

    # The class itself, not the postponed string: Gradio finds the event-data parameter by its type,
    # and "gr.SelectData" cannot be resolved in this module's globals.
    on_row.__annotations__["evt"] = gr.SelectData

    listed = gr.State([])  # the ids of the clips the table lists, so a row click needs no second read of the store
    run.change(on_run, [run, metric], [listed, message, clips, clip, metric, frame, *panels])
    metric.input(on_run, [run, metric], [listed, message, clips, clip, metric, frame, *panels])
    clip.input(on_clip, [run, clip, metric], [frame, *panels])
    clips.select(on_row, [run, metric, listed], [clip, frame, *panels])
    frame.change(show, [run, clip, frame, metric], panels)
    tab.select(lambda: gr.update(choices=explorer.viewer_runs()), None, run)


def _score_tab(gr, explorer: Explorer, stored_runs):
    limits = explorer.limits
    with gr.Row():
        task = gr.Dropdown(task_choices(SCORED_TASKS), value="matting", label="Task", elem_id="score-task")
        model = gr.Textbox(label="Model name", placeholder="my_model", elem_id="score-model",
                           info=f"{NAME_RULE}; one name per leaderboard")
    help_text = gr.Markdown(layout_help("matting"), elem_id="score-help")
    gr.Markdown(f"Limits: {limits.max_zip_bytes // 2**20} MiB zip, {limits.max_total_bytes // 2**20} MiB unpacked, "
                f"{limits.max_members} files; no links, no pickles. The zip and its files are deleted after scoring.")
    model_check = gr.Markdown("Type a model name first.", elem_id="score-model-check")
    upload = gr.File(label="Predictions (.zip)", file_types=[".zip"], type="filepath", elem_id="score-upload",
                     interactive=False)
    precheck = gr.Markdown(elem_id="score-precheck")
    button = gr.Button("Score", elem_id="score-run", interactive=False)
    message = gr.Markdown(elem_id="score-message")
    table = gr.Dataframe(interactive=False, label="Task scores", elem_id="score-table", visible=False)
    rows = gr.Dataframe(interactive=False, label="Per-clip rows", max_height=300, visible=False)

    def on_name(task_name, name):
        ok, text = explorer.check_model(task_name, name) if (name or "").strip() else (False, "Type a model name first.")
        return text, gr.update(interactive=ok), gr.update(interactive=ok)

    def run(task_name, name, path, progress=gr.Progress()):
        progress(0, desc="unpacking and checking the zip")
        text, aggregate, per_clip = explorer.score(
            task_name, name, path, progress=lambda done, total: progress((done, total), desc="scoring", unit="clips"))
        if path:  # the upload itself (extracted files are already gone), where it lies in the Space's scratch
            with contextlib.suppress(OutputError):
                discard(path)
        # The name check after scoring, in the same answer (a later event could land after the next name typed):
        # a run just stored under the name says so (not "taken"); otherwise the name is checked again.
        if text.startswith("Scored "):
            check, ok = (f"Stored as `{markdown_text(str(name).strip())}`: it is on the leaderboard now. Type a new "
                         "model name to score another submission."), False
        else:
            ok, check = explorer.check_model(task_name, name) if (name or "").strip() else (
                False, "Type a model name first.")
        return (text, gr.update(value=aggregate, visible=len(aggregate) > 0),
                gr.update(value=per_clip, visible=len(per_clip) > 0), gr.update(value=None, interactive=ok), "",
                check, gr.update(interactive=ok))

    task.change(lambda t: layout_help(t), task, help_text)
    for event in (task.change, model.change):
        event(on_name, [task, model], [model_check, upload, button])
    upload.upload(explorer.check_upload, [task, upload], precheck)
    button.click(run, [task, model, upload], [message, table, rows, upload, precheck, model_check, button]).then(
        lambda n: n + 1, stored_runs, stored_runs)


def build_blocks(explorer: Explorer):
    """The explorer's ``gr.Blocks``: seven tabs over ``explorer``, and the Submit tab when it has a queue."""
    import gradio as gr

    with gr.Blocks(title="HUG-VIS explorer") as demo:
        gr.Markdown("# HUG-VIS explorer\nThe paper's tables beside every stored run, clips, submissions and the "
                    f"MOS study. Release: `{markdown_text(explorer.release_dir.name)}` ({len(explorer.release)} clips"
                    f"{', synthetic' if explorer.release.synthetic else ''}); results: {explorer.store_summary()}.")
        # Every tab in sight at any width: the tab bar wraps onto a second line (never a "..." menu on a phone).
        with gr.Tabs(overflow_behavior="wrap", elem_id="explorer-tabs"):
            with gr.Tab("Leaderboards", id="leaderboards") as board_tab:
                stored_runs = _leaderboard_tab(gr, explorer, demo, board_tab)
            with gr.Tab("Cross-task", id="crosstask") as ct_tab:
                models_now, model_pick, model_outputs = _crosstask_tab(gr, explorer)
            with gr.Tab("Findings", id="findings"):
                _findings_tab(gr, explorer)
            with gr.Tab("Clip inspector", id="inspector"):
                _inspector_tab(gr, explorer)
            with gr.Tab("Per-clip viewer", id="viewer") as viewer_tab:
                _viewer_tab(gr, explorer, viewer_tab)
            with gr.Tab("Score a submission", id="score"):
                _score_tab(gr, explorer, stored_runs)
            with gr.Tab("MOS study", id="mos"):
                build_mos_tab(explorer.mos, demo)
            if explorer.desk is not None:
                from .submit_tab import submit_tab

                with gr.Tab("Submit to the leaderboard", id="submit"):
                    submit_tab(gr, explorer.desk, demo)
        ct_tab.select(models_now, model_pick, model_outputs)
    return demo


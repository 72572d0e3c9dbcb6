"""What the study forms (MOS, pairwise, emotion) share: the rater row, media heights, one item's updates and the
session's two handlers.

Both forms show one item of a rater's blind session at a time (:class:`~hug_vis_dataset.studies.blind_study.BlindStudy`):
media (video or speech, per task), one slot per criterion (its anchors or question, an answer that
starts unset), and a submit button; Start / resume opens or resumes the rater's session and Submit
stores the answer or names what is missing, keeping the item on screen.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..studies.blind_study import VOICE_TASK
from ..studies.ratings import MAX_CRITERIA

# Media heights in pixels: one item's media (a video, a frame, a portrait beside the video) at 320;
# the pairwise form puts two videos side by side under the portrait, so each is a little lower.
MEDIA_HEIGHT = 320
PAIR_MEDIA_HEIGHT = 280


def session_header(gr: Any) -> "tuple[Any, Any, Any]":
    """The components above a form's item, the same in every form: ``(rater, start, progress)``,
    the rater-id box and *Start / resume* in one row, then the session's progress line. Their
    ``elem_id`` values are what the browser tests and the raters' instructions name."""
    with gr.Row():
        rater = gr.Textbox(label="Rater id", placeholder="rater_01", elem_id="mos-rater")
        start = gr.Button("Start / resume", elem_id="mos-start")
    progress = gr.Markdown(elem_id="mos-progress")
    return rater, start, progress


def item_updates(view: Any, media: Sequence[tuple[Any, bool]]) -> list:
    """Gradio updates for one item: its code and progress, each ``(value, is_speech)`` media slot
    shown when the item's task uses it, each criterion slot's anchors and an unset answer (never
    carried over from the item before; slots past the item's criteria hidden), and the submit button."""
    import gradio as gr

    voice, shown, used = view.task == VOICE_TASK, bool(view.code), len(view.criteria)
    out = [view.code, view.progress]
    out += [gr.update(value=value, visible=shown and (voice if speech else not voice)) for value, speech in media]
    out += [gr.update(value=view.anchors[i] if i < len(view.anchors) else "", visible=i < used)
            for i in range(MAX_CRITERIA)]
    out += [gr.update(value=None, visible=i < used) for i in range(MAX_CRITERIA)]
    return out + [gr.update(visible=shown)]


def session_handlers(blind: Any, render: Callable[[Any], list], n_item_outputs: int, intro: Callable[[str], str],
                     extra: Callable[[], list] = list) -> "tuple[Callable, Callable]":
    """``(on_start, on_submit)`` of a form: each returns the item's updates, a fresh message (never a
    stale confirmation of another rater or item), the coverage and ``extra()``; a refused answer
    leaves the item and its answers as they are and changes only the message."""
    import gradio as gr

    def on_start(rater_id):
        view, message = blind.current(rater_id)
        return render(view) + [message or intro(str(rater_id).strip()), blind.coverage_markdown(), *extra()]

    def on_submit(rater_id, item_code, *answers):
        message, stored = blind.submit(rater_id, item_code, *answers)
        if not stored:
            return [gr.update()] * n_item_outputs + [message, blind.coverage_markdown(), *extra()]
        view, note = blind.current(rater_id, new_session=False)
        return render(view) + [f"{message} {note}".strip(), blind.coverage_markdown(), *extra()]

    return on_start, on_submit


def session_footer(gr: Any, blind: Any) -> "tuple[Any, Any, Any, Any, Any]":
    """The components under a form's criteria, the same in both forms: ``(submit, message, code,
    coverage, refresh)``; ``code`` holds the shown item's opaque code."""
    submit = gr.Button("Submit answer", elem_id="mos-submit", visible=False)
    message = gr.Markdown(elem_id="mos-message")
    code = gr.State("")
    with gr.Accordion("Study coverage", open=False):
        coverage = gr.Markdown(blind.coverage_markdown(), elem_id="mos-coverage")
        refresh = gr.Button("Refresh coverage", elem_id="mos-coverage-refresh")
    return submit, message, code, coverage, refresh


def connect_session(demo: Any, blind: Any, rater: Any, start: Any, footer: tuple, item_outputs: list, answers: list,
                    render: Callable[[Any], list], intro: Callable[[str], str], extra_outputs: Sequence = (),
                    extra: Callable[[], list] = list) -> None:
    """Wire a form: Start / resume and Submit through :func:`session_handlers` (their outputs: the
    item, the message, the coverage, then ``extra_outputs`` filled by ``extra()``), the coverage's
    Refresh, and the page load (coverage and extras)."""
    submit, message, code, coverage, refresh = footer
    on_start, on_submit = session_handlers(blind, render, len(item_outputs), intro, extra)
    outputs = item_outputs + [message, coverage, *extra_outputs]
    start.click(on_start, [rater], outputs)
    submit.click(on_submit, [rater, code] + list(answers), outputs)
    refresh.click(blind.coverage_markdown, [], [coverage])
    if demo is not None:
        demo.load(_one_or_many(lambda: [blind.coverage_markdown(), *extra()]), [], [coverage, *extra_outputs])


def _one_or_many(values: Callable[[], list]) -> Callable[[], Any]:
    """A handler returning ``values()``, unwrapped when it holds one value: Gradio takes a handler's
    return value as *the* value of a single output, so a one-element list would be given to that
    component as a list (the pairwise page's load, whose only output is the coverage, failed so).

    Example:
        >>> _one_or_many(lambda: ["a"])(), _one_or_many(lambda: ["a", "b"])()
        ('a', ['a', 'b'])
    """
    def handler():
        out = values()
        return out[0] if len(out) == 1 else out

    return handler


__all__ = ["MEDIA_HEIGHT", "PAIR_MEDIA_HEIGHT", "connect_session", "item_updates", "session_footer",
           "session_handlers", "session_header"]

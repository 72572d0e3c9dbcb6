"""The explorer's MOS study tab: the blind rater session's components and events, layout and wiring only.

The study's logic (which outputs may be rated, the item a rater sees, storing and validating ratings,
the MOS so far) is :class:`hug_vis_dataset.studies.study_desk.MosStudy`'s; :func:`build_mos_tab` wires
it to Gradio components inside the caller's ``gr.Tab`` (the pairwise protocol's form is
:mod:`.pairwise_form`, both over :mod:`.session_form`), and :func:`build_rater_app` is the raters'
page. Radios start unset for each item; the first item is shown as soon as the rater starts.
"""

from __future__ import annotations

from ..presentation.escaping import markdown_text
from ..studies.ratings import CRITERIA, MAX_CRITERIA
from ..studies.study_desk import MosStudy
from .session_form import MEDIA_HEIGHT, connect_session, item_updates, session_footer, session_header



def build_mos_tab(study: MosStudy, demo=None) -> None:
    """The blind MOS study's components and events; call inside a ``gr.Tab`` of ``demo``.

    The rater enters an id and presses *Start / resume*; items come one at a time under opaque
    codes (:class:`~hug_vis_dataset.studies.blind_study.BlindStudy`), every criterion with its
    question and anchors, unset until answered. Nothing on the page names a system. The coverage
    view (items by number of ratings, raters, completion) is under *Study coverage*.

    Args:
        study: the callbacks.
        demo: the enclosing ``gr.Blocks``; when given, the coverage and the log notes are read
            fresh on page load.
    """
    import gradio as gr

    if not study.study_path and not any(study.systems(task) for task in CRITERIA):
        # A release without simulated systems (the real one) has nothing to rate until a study
        # file names the systems: say so instead of failing to start the Space.
        gr.Markdown("No MOS study is configured for this release: start the Space with `HUGVIS_STUDY=study.json` "
                    "(a study file naming the systems and clips to rate; see docs/MOS.md).", elem_id="mos-no-study")
        return
    if study.spec.protocol == "pairwise":  # the second protocol: two systems side by side
        from .pairwise_form import build_pairwise_tab

        return build_pairwise_tab(study, demo)
    if study.spec.protocol == "emotion":  # the third: people as the ceiling of Table 4 (forced choice)
        from .emotion_form import build_emotion_tab

        return build_emotion_tab(study, demo)
    blind = study.blind
    rater, start, progress = session_header(gr)
    with gr.Row():
        # Same height: the portrait is read at full size and shown as large as the video.
        mos_video = gr.Video(label="Video to rate", height=MEDIA_HEIGHT, elem_id="mos-video", visible=False)
        portrait = gr.Image(label="Source portrait (judge ID similarity against it)", type="numpy",
                            height=MEDIA_HEIGHT, interactive=False, elem_id="mos-portrait", visible=False)
        speech = gr.Audio(label="Speech to rate", type="filepath", visible=False, elem_id="mos-speech")
        reference_speech = gr.Audio(label="Actor's reference speech (judge ID similarity against it)",
                                    type="filepath", visible=False, elem_id="mos-reference-speech")
    anchors, radios = [], []
    for i in range(MAX_CRITERIA):
        anchors.append(gr.Markdown(visible=False, elem_id=f"mos-anchor-{i}"))
        radios.append(gr.Radio(["1", "2", "3", "4", "5"], value=None, label="Score (1-5)", visible=False,
                               elem_id=f"mos-score-{i}", elem_classes=["hugvis-scale"]))
    footer = session_footer(gr, blind)
    submit, _, code, _, _ = footer  # item_outputs needs these two
    log_notes = gr.Markdown(study.log_notes(), elem_id="mos-log-notes")
    item_outputs = [code, progress, mos_video, portrait, speech, reference_speech] + anchors + radios + [submit]

    def render(view):
        return item_updates(view, [(view.video, False), (view.portrait, False), (view.speech, True),
                                   (view.reference_speech, True)])

    connect_session(demo, blind, rater, start, footer, item_outputs, radios, render,
                    lambda rater_id: f"Rating as {markdown_text(rater_id)}. Answer every criterion of each item.",
                    extra_outputs=[log_notes], extra=lambda: [study.log_notes()])


def build_rater_app(study: MosStudy):
    """A page with the blind rater session only (what raters are sent to: no leaderboard, no names)."""
    import gradio as gr

    with gr.Blocks(title="HUG-VIS rating study") as demo:
        gr.Markdown("## Rating study\nEnter your rater id, press *Start / resume*, and rate each item on every "
                    "criterion. You can stop at any time and resume later with the same id.")
        build_mos_tab(study, demo)
    return demo

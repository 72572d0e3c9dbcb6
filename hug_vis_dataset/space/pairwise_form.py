"""The Space's pairwise-preference form: two systems on the same clip, side by side, blind.

Wired by :func:`hug_vis_dataset.space.mos_study.build_mos_tab` when the study file says
``"protocol": "pairwise"``; the callbacks are :class:`~hug_vis_dataset.studies.blind_study.BlindStudy`'s
(the same sessions, codes, resume and coverage as the MOS form). What a rater sees for one item:

* video tasks: the **source portrait**, then "Video A" and "Video B" side by side; voice cloning:
  the actor's **reference speech**, then "Speech A" and "Speech B". Which system is A is drawn per
  rater and item from the session seed and stored with the answer; the media files are named
  ``<code>-a`` / ``<code>-b``, so nothing on the page or in a URL names a system;
* per criterion "Which is better on <criterion>?" with its question, answered A, Tie or B; every
  choice starts unset and the answer is stored only when each criterion has one (the message
  names the missing one).
"""

from __future__ import annotations

from ..presentation.escaping import markdown_text
from ..studies.preferences import CHOICES
from ..studies.ratings import MAX_CRITERIA
from .session_form import PAIR_MEDIA_HEIGHT, connect_session, item_updates, session_footer, session_header



def build_pairwise_tab(study, demo=None) -> None:
    """The pairwise form's components and events; call inside a ``gr.Tab`` (or ``gr.Blocks``).

    Args:
        study: the :class:`~hug_vis_dataset.studies.study_desk.MosStudy` whose study is pairwise.
        demo: the enclosing ``gr.Blocks``; when given, the coverage is read fresh on page load.
    """
    import gradio as gr

    blind = study.blind
    rater, start, progress = session_header(gr)
    with gr.Row():
        portrait = gr.Image(label="Source portrait (judge ID similarity against it)", type="numpy",
                            height=PAIR_MEDIA_HEIGHT, interactive=False, elem_id="mos-portrait", visible=False)
        reference_speech = gr.Audio(label="Actor's reference speech (judge ID similarity against it)",
                                    type="filepath", visible=False, elem_id="mos-reference-speech")
    with gr.Row():
        video_a = gr.Video(label="Video A", height=PAIR_MEDIA_HEIGHT, elem_id="mos-video-a", visible=False)
        video_b = gr.Video(label="Video B", height=PAIR_MEDIA_HEIGHT, elem_id="mos-video-b", visible=False)
        speech_a = gr.Audio(label="Speech A", type="filepath", visible=False, elem_id="mos-speech-a")
        speech_b = gr.Audio(label="Speech B", type="filepath", visible=False, elem_id="mos-speech-b")
    questions, choices = [], []
    for i in range(MAX_CRITERIA):
        questions.append(gr.Markdown(visible=False, elem_id=f"mos-question-{i}"))
        choices.append(gr.Radio(list(CHOICES), value=None, label="Better", visible=False,
                                elem_id=f"mos-choice-{i}"))
    footer = session_footer(gr, blind)
    submit, _, code, _, _ = footer  # item_outputs needs these two
    item_outputs = [code, progress, portrait, reference_speech, video_a, video_b, speech_a, speech_b]
    item_outputs += questions + choices + [submit]

    def render(view):
        return item_updates(view, [(view.portrait, False), (view.reference_speech, True), (view.video, False),
                                   (view.video_b, False), (view.speech, True), (view.speech_b, True)])

    connect_session(demo, blind, rater, start, footer, item_outputs, choices, render,
                    lambda rater_id: f"Rating as {markdown_text(rater_id)}. For each criterion choose the better of "
                                     "A and B, or Tie.")

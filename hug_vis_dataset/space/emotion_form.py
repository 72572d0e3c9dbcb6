"""The Space's forced-choice emotion form: one clip in one input setting, blind; layout and wiring only.

Wired by :func:`hug_vis_dataset.space.mos_study.build_mos_tab` when the study file says ``"protocol": "emotion"``;
the callbacks are :class:`~hug_vis_dataset.studies.blind_study.BlindStudy`'s (the same sessions, opaque codes,
resume and coverage as the MOS form; what an item shows: :mod:`hug_vis_dataset.studies.emotion_study`). The rater
sees only the setting's media (the video without its sound, the recording, the middle frame, the transcript), what
they are given and the question, and answers with one of the seven emotions or "Cannot tell"; the answer starts
unset for every item and a submission without one is refused.
"""

from __future__ import annotations

from ..presentation.escaping import markdown_text
from ..studies.emotion_answers import ANSWER_CHOICES
from .session_form import MEDIA_HEIGHT, connect_session, session_footer, session_header



def build_emotion_tab(study, demo=None) -> None:
    """The emotion form's components and events; call inside a ``gr.Tab`` (or ``gr.Blocks``).

    Args:
        study: the :class:`~hug_vis_dataset.studies.study_desk.MosStudy` whose study is an emotion study.
        demo: the enclosing ``gr.Blocks``; when given, the coverage is read fresh on page load.
    """
    import gradio as gr

    blind = study.blind
    rater, start, progress = session_header(gr)
    with gr.Row():
        video = gr.Video(label="Video", height=MEDIA_HEIGHT, elem_id="emo-video", visible=False)
        image = gr.Image(label="Frame", type="filepath", height=MEDIA_HEIGHT, interactive=False, elem_id="emo-image",
                         visible=False)
        audio = gr.Audio(label="Recording", type="filepath", visible=False, elem_id="emo-audio")
    text = gr.Markdown(visible=False, elem_id="emo-text")
    question = gr.Markdown(visible=False, elem_id="emo-question")
    answer = gr.Radio(list(ANSWER_CHOICES), value=None, label="Answer", visible=False, elem_id="emo-answer")
    footer = session_footer(gr, blind)
    submit, _, code, _, _ = footer  # item_outputs needs these two
    item_outputs = [code, progress, video, image, audio, text, question, answer, submit]

    def render(view):
        shown = bool(view.code)
        transcript = f"**Transcript:** {markdown_text(view.text)}" if view.text else ""
        return [view.code, view.progress,
                gr.update(value=view.video, visible=shown and view.video is not None),
                gr.update(value=view.image, visible=shown and view.image is not None),
                gr.update(value=view.speech, visible=shown and view.speech is not None),
                gr.update(value=transcript, visible=shown and bool(transcript)),
                gr.update(value=view.anchors[0] if view.anchors else "", visible=shown),
                gr.update(value=None, visible=shown),  # never carried over from the item before
                gr.update(visible=shown)]

    connect_session(demo, blind, rater, start, footer, item_outputs, [answer], render,
                    lambda rater_id: f"Answering as {markdown_text(rater_id)}. For each item choose the emotion the "
                                     "person expresses, or Cannot tell.")


__all__ = ["build_emotion_tab"]

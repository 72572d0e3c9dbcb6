"""The explorer's MOS study tab: which outputs to rate, the rating form, and the MOS so far.

:class:`MosStudy` holds the callbacks (plain functions of their inputs, tested without a
browser); :func:`build_mos_tab` wires them to Gradio components inside the caller's ``gr.Tab``.
Ratings go to a :class:`~hug_vis_dataset.space.ratings.RatingStore`; aggregation is
:mod:`hug_vis_dataset.mos`'s, so the Space's MOS equals ``hugvis mos``'s on the same ratings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .ratings import CRITERIA, CRITERION_LABELS, RatingError, RatingStore

MAX_CRITERIA = max(len(c) for c in CRITERIA.values())


class MosStudy:
    """Rating callbacks over one release's simulated systems and one rating store."""

    def __init__(self, release, release_dir: "str | Path", ratings_path: "str | Path"):
        self.release = release
        self.release_dir = Path(release_dir)
        self.ratings = RatingStore(ratings_path)

    def systems(self, task: str) -> list[str]:
        folder = self.release_dir / "simulated_systems" / task
        return sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []

    def clip_ids(self) -> list[str]:
        return [r.clip_id for r in self.release]

    def media(self, task: str, system: str, clip_id: str) -> "str | None":
        """The system output to rate (a video, or a WAV for voice cloning), if it exists."""
        if not (task and system and clip_id):
            return None
        suffix = ".wav" if task == "voice_cloning" else ".mp4"
        path = self.release_dir / "simulated_systems" / task / system / f"{clip_id}{suffix}"
        return str(path) if path.is_file() else None

    def rate(self, task: str, system: str, clip_id: str, rater: str, *scores: Any):
        """Store one rater's scores; returns (message, aggregated MOS table)."""
        wanted = CRITERIA.get(task, ())
        values = {c: (int(s) if s is not None else None) for c, s in zip(wanted, scores)}
        try:
            self.ratings.add((rater or "").strip(), task, clip_id, system, values)
        except RatingError as err:
            return f"**Rating refused:** {err}", self.table()
        return f"Stored {len(values)} score(s) from `{rater}` for `{system}` on `{clip_id}`.", self.table()

    def table(self):
        """MOS per (task, model, criterion): mean and counts of the stored ratings."""
        return aggregate_ratings(self.ratings.frame())


def aggregate_ratings(frame):
    """MOS per (task, model, criterion) with :mod:`hug_vis_dataset.mos` (ratings averaged within
    each clip, then over clips), plus the number of ratings and raters.
    """
    import pandas as pd

    from ..mos import RATING_COLUMNS, mos_table, validate_ratings

    columns = ["task", "model", "criterion", "mos", "n_clips", "n_ratings", "n_raters"]
    if not len(frame):
        return pd.DataFrame(columns=columns)
    parts = []
    for task, ratings in frame.groupby("task", sort=True):
        valid, _invalid = validate_ratings(ratings[list(RATING_COLUMNS)].astype(str))
        if not len(valid):
            continue
        table = mos_table(valid).reset_index()
        raters = valid.groupby(["model", "criterion"])["rater"].nunique().rename("n_raters").reset_index()
        table = table.merge(raters, on=["model", "criterion"])
        table.insert(0, "task", task)
        parts.append(table)
    if not parts:
        return pd.DataFrame(columns=columns)
    out = pd.concat(parts, ignore_index=True)[columns]
    out["criterion"] = out["criterion"].map(lambda c: CRITERION_LABELS.get(c, c))
    return out.round({"mos": 3})


def build_mos_tab(study: MosStudy) -> None:
    """The MOS study's components and events (call inside a ``gr.Tab``)."""
    import gradio as gr

    mos_tasks = list(CRITERIA)
    with gr.Row():
        mos_task = gr.Dropdown(mos_tasks, value=mos_tasks[0], label="Task")
        systems = study.systems(mos_tasks[0])
        mos_system = gr.Dropdown(systems, value=systems[0] if systems else None, label="System")
        clip_ids = study.clip_ids()
        mos_clip = gr.Dropdown(clip_ids, value=clip_ids[0], label="Clip")
        rater = gr.Textbox(label="Rater id", placeholder="rater_01")
    mos_video = gr.Video(label="Generated video")
    mos_audio = gr.Audio(label="Generated speech", type="filepath")
    sliders = [gr.Slider(1, 5, value=3, step=1, label=CRITERION_LABELS[c]) for c in CRITERIA[mos_tasks[0]]]
    sliders += [gr.Slider(1, 5, value=3, step=1, visible=False) for _ in range(MAX_CRITERIA - len(sliders))]
    submit = gr.Button("Submit rating", elem_id="mos-submit")
    mos_message = gr.Markdown()
    mos_table = gr.Dataframe(study.table(), interactive=False, label="MOS so far")

    def on_task(task_name):
        names = study.systems(task_name)
        crit = CRITERIA[task_name]
        updates = [gr.update(choices=names, value=names[0] if names else None)]
        updates += [gr.update(visible=i < len(crit), label=CRITERION_LABELS[crit[i]] if i < len(crit) else "")
                    for i in range(MAX_CRITERIA)]
        return updates

    def on_clip(task_name, system, clip_id):
        path = study.media(task_name, system, clip_id)
        is_voice = task_name == "voice_cloning"
        return (None if is_voice else path), (path if is_voice else None)

    mos_task.change(on_task, mos_task, [mos_system] + sliders)
    for control in (mos_task, mos_system, mos_clip):
        control.change(on_clip, [mos_task, mos_system, mos_clip], [mos_video, mos_audio])
    submit.click(study.rate, [mos_task, mos_system, mos_clip, rater] + sliders, [mos_message, mos_table])

"""The HUG-VIS explorer: a ``gr.Blocks`` app over a release tree and stored results.

The callbacks are methods of :class:`Explorer`, plain functions of their inputs that return
plain values (DataFrames, paths, Markdown), so they are tested without a browser; ``build_app``
only wires them to components.

Tabs: Leaderboards (paper Tables 4-11 beside ``hugvis evaluate`` summaries), Cross-task (Figs.
8-11 from stored per-clip rows), Clip inspector, Score a submission (untrusted zip upload), MOS study (:mod:`.mos_study`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

from .. import catalog
from .. import paper_tables as pt
from .mos_study import MosStudy, build_mos_tab, ratings_location
from .uploads import UnsafeUploadError, UploadLimits, extracted_upload

ALL = "All"
SCORED_TASKS = catalog.task_names(with_paper_table=True)
FINDINGS = ("Variance decomposition (finding iv)", "Significance between neighbours",
            "Boundary / thin-structure matting errors (finding iii)")
ANALYSES = ("Emotion difficulty (Fig. 8)", "Difficulty agreement (Fig. 9)", "Source difficulty (Fig. 10)",
            "Motion difficulty (Fig. 11)")


def _table_label(info: dict) -> str:
    return f"Table {info['table']}: {info['title']}"


class Explorer:
    """State and callbacks of the app: one release tree, a results folder, a work folder."""

    def __init__(self, release_dir: "str | Path", results_dir: "str | Path | None" = None,
                 work_dir: "str | Path | None" = None, ratings_path: "str | Path | None" = None,
                 limits: UploadLimits = UploadLimits()):
        from ..release import Release

        self.release_dir = Path(release_dir)
        self.release = Release(self.release_dir)
        if not len(self.release):
            raise ValueError(f"the release at {release_dir} has no readable clip")
        self.results_dir = Path(results_dir) if results_dir else None
        self.work_dir = Path(work_dir or tempfile.mkdtemp(prefix="hugvis-space-"))
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.mos = MosStudy(self.release, self.release_dir,
                            ratings_location(ratings_path, self.results_dir, self.work_dir))
        self.limits = limits
        self.paper = pt.paper_frame()

    # ------------------------------------------------------------------ leaderboards
    def table_labels(self) -> list[str]:
        return [_table_label(info) for info in pt.paper_data()["tables"]]

    def leaderboard(self, table_label: str, source: str = ALL, input_setting: str = ALL, paradigm: str = ALL):
        """The chosen table, paper rows and ours, filtered; marks recomputed on the view."""
        import pandas as pd

        table = int(table_label.split(":")[0].split()[-1])
        frame = pd.concat([self.paper, pt.load_results(self.results_dir)], ignore_index=True)
        try:
            return pt.leaderboard(frame, table, source=source, input_setting=input_setting, paradigm=paradigm)
        except ValueError as err:
            return pd.DataFrame({"Model": [f"({err})"]})

    # ------------------------------------------------------------------ cross-task
    def result_rows(self):
        """Every stored per-clip row under the results folder (empty frame without one)."""
        import pandas as pd

        from ..results import RESULT_COLUMNS

        paths = sorted(self.results_dir.glob("*/*/rows.parquet")) if self.results_dir else []
        if not paths:
            return pd.DataFrame(columns=list(RESULT_COLUMNS))
        return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)

    def crosstask_models(self) -> list[str]:
        rows = self.result_rows()
        return sorted(rows["model"].unique().tolist()) if len(rows) else []

    def crosstask(self, analysis: str, models: "list[str] | None" = None, emotion: str = ALL, metric: str = ALL):
        """(table, figure path or None, message) of one analysis on the chosen models.

        ``metric`` keeps one column of Fig. 8 (and its row/column in Fig. 9); ``emotion`` keeps
        one emotion's row of the displayed table (the analysis itself always uses every emotion,
        since min-max normalisation needs them all).
        """
        import pandas as pd

        from .. import figures
        from ..metrics import crosstask as ct
        from ..report import motion_analysis

        stored = self.result_rows()
        selected = stored[stored["model"].isin(models)] if models else stored
        if not len(selected):
            return pd.DataFrame(), None, ("No stored per-clip rows: run `hugvis evaluate TASK ... --out RESULTS` "
                                          "and start the Space with `--results RESULTS`.")
        # The analyses leave reference rows (Real audio, motion statistics) out themselves.
        rows = selected
        stem = self.work_dir / f"fig-{uuid.uuid4().hex}"
        if analysis.startswith("Emotion difficulty") or analysis.startswith("Difficulty agreement"):
            result = ct.emotion_difficulty(rows)
            D = result.D.dropna(axis=1, how="all")
            if metric not in (None, "", ALL) and metric in D.columns and analysis.startswith("Emotion"):
                D = D[[metric]]
            if analysis.startswith("Emotion"):
                paths = figures.plot_emotion_difficulty(D, stem, title="Emotion difficulty")
                table = D if emotion in (None, "", ALL) else D.loc[[emotion]] if emotion in D.index else D.iloc[:0]
                return table.round(3).reset_index(names="Emotion"), _png(paths), f"{len(rows)} rows"
            rho = ct.difficulty_agreement(D)
            paths = figures.plot_agreement(rho, stem, title="Difficulty agreement (Spearman)")
            return rho.round(3).reset_index(names="Metric"), _png(paths), f"{len(rows)} rows"
        if analysis.startswith("Source difficulty"):
            try:
                result = ct.source_difficulty(rows)
            except (ValueError, KeyError) as err:
                return pd.DataFrame(), None, f"Source difficulty needs audio- and vision-driven rows: {err}"
            table = result.pairs.round(4)
            paths = figures.plot_source_difficulty(result.pairs["Z_AD"], result.pairs["Z_VD"], stem)
            if emotion not in (None, "", ALL):
                table = table[table["emotion"] == emotion]
            return table, _png(paths), f"{len(result.pairs)} clips, Spearman rho = {result.rho:.2f}"
        # Motion difficulty: the reference statistics are kept whatever models are selected.
        motion, lines = motion_analysis(pd.concat([selected, stored[stored["task"] == "motion"]]).drop_duplicates())
        if motion is None:
            return pd.DataFrame(), None, " ".join(lines).strip()
        paths = figures.plot_motion_difficulty(motion.d_motion, motion.dtssd, motion.emotions, stem)
        table = pd.DataFrame({"emotion": motion.emotions, "D_motion": motion.d_motion, "dtSSD": motion.dtssd}).round(4)
        if emotion not in (None, "", ALL):
            table = table[table["emotion"] == emotion]
        return table, _png(paths), lines[0]

    # ------------------------------------------------------------------ findings
    def findings(self, analysis: str, task: str):
        """(table, figure path or None, message) of one finding on the stored rows of a task; the
        same functions as the report's Findings section (:mod:`hug_vis_dataset.report_findings`)."""
        import pandas as pd

        from .. import report_findings as rf

        rows = self.result_rows()
        if analysis == FINDINGS[0]:
            frame, decompositions, why = rf.variance_frame(rows, task)
            if frame.empty:
                return pd.DataFrame(), None, why
            from ..figures import plot_variance_decomposition

            paths = plot_variance_decomposition(decompositions, self.work_dir / f"fig-{uuid.uuid4().hex}",
                                                title=f"{task}: share of variance")
            wide = frame.pivot_table(index="term", columns="metric", values="share", sort=False)
            return wide.round(4).reset_index(), _png(paths), f"methods: {({m: d.method for m, d in decompositions.items()})}"
        if analysis == FINDINGS[1]:
            frame, why = rf.significance_frame(rows, task)
            return (frame.round(4) if not frame.empty else frame), None, why or (
                f"{int((frame['verdict'] == 'distinguishable').sum())} of {len(frame)} neighbour pairs distinguishable")
        frame, why = rf.boundary_frame(rows)
        return (frame.round(3).reset_index() if not frame.empty else frame), None, why or "MAD x1e3 per region"

    # ------------------------------------------------------------------ inspector
    def choices(self) -> dict[str, list]:
        from .inspector import clip_choices

        return clip_choices(self.release)

    def inspect(self, actor: str, emotion: str, action: Any, script: Any, frame: Any = 0):
        """(video path, matte frame, overlay frame, audio path, markdown) of one clip.

        Frames are uint8 arrays (Gradio shows them as images); ``frame`` is clamped to the clip.
        A missing clip or unreadable file gives ``None`` media and the error as text.
        """
        from ..media import MediaError
        from .inspector import clip_text, find_clip, matte_overlay, read_matte_frame, read_video_frame

        try:
            record = find_clip(self.release, actor, emotion, action, script)
        except (KeyError, ValueError) as err:
            return None, None, None, None, f"**No such clip:** {err}"
        n_frames = max(1, int(round(record.duration * record.fps)))
        index = min(max(int(frame or 0), 0), n_frames - 1)
        try:
            rgb = read_video_frame(record.video_path, index)
            alpha = read_matte_frame(record.alpha_matte_path, index)
            overlay = matte_overlay(rgb, alpha)
        except (MediaError, ValueError, OSError) as err:
            return str(record.video_path), None, None, str(record.audio_path), f"{clip_text(record)}\n\n**Error:** {err}"
        return (str(record.video_path), alpha, overlay, str(record.audio_path),
                clip_text(record) + f"\n\nShowing frame {index} of {n_frames}.")

    # ------------------------------------------------------------------ scoring
    def score(self, task: str, model: str, upload: "str | None"):
        """(markdown, aggregate table, per-clip rows) of an uploaded zip, scored on this release."""
        import pandas as pd

        from ..scoring.runner import evaluate_submission

        empty = pd.DataFrame()
        if not upload:
            return "Upload a zip of your predictions first.", empty, empty
        if task not in SCORED_TASKS:
            return f"Unknown task {task!r}.", empty, empty
        job = self.work_dir / "submissions" / uuid.uuid4().hex
        try:
            # The extracted files (they can be gigabytes) are deleted when scoring ends; the rows stay.
            with extracted_upload(upload, self.work_dir / "uploads", self.limits) as root:
                result = evaluate_submission(task, root, (model or "submission").strip(), self.release_dir,
                                             job / "results", progress=False, command_line=["space", task])
        except UnsafeUploadError as err:
            shutil.rmtree(job, ignore_errors=True)
            return f"**Upload refused:** {err}", empty, empty
        except (ValueError, FileNotFoundError, RuntimeError) as err:
            shutil.rmtree(job, ignore_errors=True)
            return f"**Scoring failed:** {err}", empty, empty
        table = result.table.reset_index() if result.table is not None else empty
        rows = pd.read_parquet(result.rows_path) if Path(result.rows_path).is_file() else empty
        cov = result.coverage
        message = (f"Scored **{task}** for `{result.model}`: {cov.ok} clip(s) ok of {cov.grid_size}; "
                   f"missing {len(cov.missing)}, failed {len(cov.failed)}, unmatched {len(cov.unmatched)}.")
        if result.summary.get("metrics", {}).get("skipped"):
            message += " Skipped metrics: " + "; ".join(f"{m} ({why})" for m, why in
                                                         result.summary["metrics"]["skipped"].items())
        return message, table.round(4), rows

def _png(paths) -> "str | None":
    for path in paths or []:
        if str(path).endswith(".png"):
            return str(path)
    return None


# ---------------------------------------------------------------------------------- UI
def build_app(explorer: Explorer):
    """The ``gr.Blocks`` of the explorer (five tabs) wired to ``explorer``'s callbacks."""
    import gradio as gr

    paper = explorer.paper
    sources = [ALL, "open", "closed", "reference", "ours"]
    settings = [ALL] + list(dict.fromkeys(s for s in paper["input_setting"] if s))
    paradigms = [ALL] + list(dict.fromkeys(p for p in paper["paradigm"] if p))
    choices = explorer.choices()
    first_label = explorer.table_labels()[0]

    with gr.Blocks(title="HUG-VIS explorer") as demo:
        gr.Markdown("# HUG-VIS explorer\nPaper results, our scored results, clips, submissions and the MOS study. "
                    f"Release: `{explorer.release_dir.name}` ({len(explorer.release)} clips).")
        with gr.Tab("Leaderboards", id="leaderboards"):
            with gr.Row():
                table = gr.Dropdown(explorer.table_labels(), value=first_label, label="Table")
                source = gr.Dropdown(sources, value=ALL, label="Open vs closed source")
                setting = gr.Dropdown(settings, value=ALL, label="Input setting (Table 4)")
                paradigm = gr.Dropdown(paradigms, value=ALL, label="Paradigm (Tables 7-8)")
            board = gr.Dataframe(explorer.leaderboard(first_label), label="Leaderboard (best / second marked)",
                                 interactive=False, show_search="filter", elem_id="leaderboard")
            for control in (table, source, setting, paradigm):
                control.change(explorer.leaderboard, [table, source, setting, paradigm], board)

        with gr.Tab("Cross-task", id="crosstask"):
            models = explorer.crosstask_models()
            from ..metrics.crosstask import DEFAULT_PAPER_METRICS

            with gr.Row():
                analysis = gr.Dropdown(list(ANALYSES), value=ANALYSES[0], label="Analysis")
                model_pick = gr.Dropdown(models, value=models, multiselect=True, label="Models")
                emotion_pick = gr.Dropdown([ALL] + [e for e in choices["emotion"]], value=ALL, label="Emotion")
                metric_pick = gr.Dropdown([ALL] + [m.label for m in DEFAULT_PAPER_METRICS], value=ALL,
                                          label="Metric")
            ct_button = gr.Button("Run analysis", elem_id="crosstask-run")
            ct_message = gr.Markdown()
            ct_table = gr.Dataframe(interactive=False, label="Result")
            ct_image = gr.Image(label="Figure", type="filepath")
            ct_button.click(lambda a, m, e, k: _reorder(explorer.crosstask(a, m, e, k)),
                            [analysis, model_pick, emotion_pick, metric_pick], [ct_message, ct_table, ct_image])

        with gr.Tab("Findings", id="findings"):
            with gr.Row():
                finding = gr.Dropdown(list(FINDINGS), value=FINDINGS[0], label="Finding")
                finding_task = gr.Dropdown(list(SCORED_TASKS), value="matting", label="Task")
            f_button = gr.Button("Measure", elem_id="findings-run")
            f_message = gr.Markdown(elem_id="findings-message")
            f_table = gr.Dataframe(interactive=False, label="Result", elem_id="findings-table")
            f_image = gr.Image(label="Figure", type="filepath")
            f_button.click(lambda a, t: _reorder(explorer.findings(a, t)), [finding, finding_task],
                           [f_message, f_table, f_image])

        with gr.Tab("Clip inspector", id="inspector"):
            with gr.Row():
                actor = gr.Dropdown(choices["actor"], value=choices["actor"][0], label="Actor")
                emotion = gr.Dropdown(choices["emotion"], value=choices["emotion"][0], label="Emotion")
                action = gr.Dropdown(choices["action"], value=choices["action"][0], label="Action")
                script = gr.Dropdown(choices["script"], value=choices["script"][0], label="Script")
                frame = gr.Slider(0, 10_000, value=0, step=1, label="Frame")
            show = gr.Button("Show clip", elem_id="inspector-show")
            with gr.Row():
                video = gr.Video(label="Video", elem_id="inspector-video")
                matte = gr.Image(label="Alpha matte", type="numpy", elem_id="inspector-matte")
                overlay = gr.Image(label="Matte overlay", type="numpy", elem_id="inspector-overlay")
            audio = gr.Audio(label="Audio", type="filepath")
            text = gr.Markdown(elem_id="inspector-text")
            show.click(explorer.inspect, [actor, emotion, action, script, frame], [video, matte, overlay, audio, text])

        with gr.Tab("Score a submission", id="score"):
            gr.Markdown("Upload a zip of one task's predictions, one entry per clip named by its clip id "
                        "(the layout of each task is in docs/SCORING.md). "
                        f"Limits: {explorer.limits.max_zip_bytes // 2**20} MiB zip, "
                        f"{explorer.limits.max_total_bytes // 2**20} MiB unpacked, {explorer.limits.max_members} "
                        "files; no links, no pickles.")
            with gr.Row():
                task = gr.Dropdown(list(SCORED_TASKS), value="matting", label="Task")
                model_name = gr.Textbox(value="my_model", label="Model name")
                upload = gr.File(label="Predictions (.zip)", file_types=[".zip"], type="filepath",
                                 elem_id="score-upload")
            score_button = gr.Button("Score", elem_id="score-run")
            score_message = gr.Markdown(elem_id="score-message")
            score_table = gr.Dataframe(interactive=False, label="Task scores", elem_id="score-table")
            score_rows = gr.Dataframe(interactive=False, label="Per-clip rows", max_height=300)
            score_button.click(explorer.score, [task, model_name, upload], [score_message, score_table, score_rows])

        with gr.Tab("MOS study", id="mos"):
            build_mos_tab(explorer.mos, demo)
    return demo


def _reorder(result):
    table, image, message = result
    return message, table, image


def default_release(work_dir: "str | Path") -> Path:
    """A tiny synthetic release (the Space's default when no release is given)."""
    from ..synth import synthesize

    root = Path(work_dir) / "synthetic_release"
    if not (root / "metadata" / "clips.csv").is_file():
        synthesize(root, actors=1, emotions=None, actions=1, scripts=1, seconds=1.0, size=(160, 90))
    return root


def launch(release_dir: "str | Path | None" = None, results_dir: "str | Path | None" = None,
           port: "int | None" = None, work_dir: "str | Path | None" = None, block: bool = True):
    """Start the explorer on 127.0.0.1 (analytics off); returns ``(demo, url)`` when ``block`` is False."""
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    work = Path(work_dir or tempfile.mkdtemp(prefix="hugvis-space-"))
    release = Path(release_dir) if release_dir else default_release(work)
    explorer = Explorer(release, results_dir, work_dir=work)
    demo = build_app(explorer)
    allowed = [str(release.resolve()), str(work.resolve())] + ([str(Path(results_dir).resolve())] if results_dir else [])
    _, url, _ = demo.launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "127.0.0.1"), server_port=port,
                            allowed_paths=allowed, prevent_thread_lock=not block, quiet=not block)
    return demo, url

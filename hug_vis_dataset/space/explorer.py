"""The explorer's state and callbacks: one release tree, a results store, a work folder.

The callbacks are methods of :class:`Explorer`, plain functions of their inputs that return
plain values (DataFrames, paths, Markdown), so they are tested without a browser;
:mod:`hug_vis_dataset.space.ui` wires them to components and :mod:`hug_vis_dataset.space.app`
builds and launches the app.

The leaderboard *is* the results store (:mod:`hug_vis_dataset.leaderboard`): a run scored by
``hugvis evaluate --out RESULTS`` or uploaded in the Score tab is stored there with its provenance
and shown at once, and after a restart, beside the paper's Tables 4-11.

Tabs: Leaderboards, Cross-task (Figs. 8-11 from stored per-clip rows), Findings, Clip inspector,
Score a submission (untrusted zip upload), MOS study (:mod:`.mos_study`, on :mod:`hug_vis_dataset.studies.study_desk`).
"""

from __future__ import annotations

import uuid
import zipfile
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, NamedTuple

from ..outputs import scratch_folder
from .. import catalog, stopping
from ..datamodel import paper_tables as pt
from ..readers.hub_access import HubUnreachableError
from ..leaderboard import LocalResultsStore, ModelNameError, StoreError, board, board_rows
from ..presentation.escaping import markdown_code_text, markdown_text
from ..presentation.labels import skipped_words
from ..leaderboard.board import (ALL, DEFAULT_ORIGINS, ORIGIN_LABELS, SPACE_REVEAL, SUBMITTED,
                                 clip_rows_of, run_tables)
from ..studies.study_desk import MosStudy, ratings_location
from .people_view import people_board_rows, table4_notes
from .findings_view import joint_finding
from .crosstask_view import ANALYSES, ANALYSIS_FILTERS, crosstask_view, png_of  # noqa: F401 (ANALYSES*: the app's API)
from .precheck import PARTIAL_HELP, ambiguous_refusal, layout_check, refusals_message
from .uploads import UnsafeUploadError, UploadLimits, check_zip, extracted_upload, upload_request
from .upload_results import same_predictions, score_table, shown_link, stored_rows_of, upload_inputs
from .viewer import clip_scores

SCORED_TASKS = catalog.task_names(with_paper_table=True)
FINDINGS = ("Variance decomposition (finding iv)", "Significance between neighbours",
            "Boundary / thin-structure matting errors (finding iii)",
            "Metrics and human judgment jointly (finding ii)", "Seeds: runs scored over several samples per clip")
VIEWER_HINT = ("Choose a stored run: its clips are listed worst first by the chosen metric; pick one to see the "
               "model's output beside the reference at the frame of the slider.")


def _table_label(info: dict) -> str:
    return f"Table {info['table']}: {info['title']}"


def table_number(label: str) -> int:
    """``"Table 11: ..."`` -> 11."""
    return int(label.split(":")[0].split()[-1])


class ViewerClips(NamedTuple):
    """What the per-clip viewer lists for one run (:meth:`Explorer.viewer_clips`)."""

    table: Any  #: one row per clip (and input setting), clips as read, the metric under its board header
    metrics: list  #: the run's metrics with per-clip values (the "Order by" choices)
    metric: "str | None"  #: the metric the table is ordered by
    ids: list  #: the clip ids in the table's order
    note: str  #: what is listed, in words
    order: str  #: "worst first", "largest first" (a clip property) or "grid order" (nothing scored)


class Explorer:
    """State and callbacks of the app: one release tree, a results store, a work folder.

    Args:
        release_dir: the release tree the clips, references and MOS items come from.
        results_dir: the local results store (default: ``<work_dir>/results``).
        work_dir: uploads in flight and figures (temporary).
        ratings_path: the MOS ratings file (default: the store's ``ratings/ratings.jsonl``, so
            ratings persist with the results).
        limits: upload limits.
        store: a store object instead of ``results_dir`` (e.g. a
            :class:`~hug_vis_dataset.leaderboard.HubResultsStore`).
    """

    def __init__(self, release_dir: "str | Path", results_dir: "str | Path | None" = None,
                 work_dir: "str | Path | None" = None, ratings_path: "str | Path | None" = None,
                 limits: UploadLimits = UploadLimits(), store: "LocalResultsStore | None" = None):
        from ..datamodel.release import Release

        self.release_dir = Path(release_dir)
        self.release = Release(self.release_dir)
        if not len(self.release):
            raise ValueError(f"the release at {release_dir} has no readable clip")
        self.work_dir = Path(work_dir) if work_dir else scratch_folder(prefix="hugvis-space-")
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.store = store or LocalResultsStore(results_dir or self.work_dir / "results")
        self.results_dir = self.store.root
        self.mos = MosStudy(self.release, self.release_dir, ratings_location(ratings_path, self.store.root, self.work_dir),
                            on_stored=self.push_ratings)
        self.limits = limits
        self.paper = pt.paper_frame()
        self.desk = None  # the Submit tab's requests queue (space.submit_tab.SubmitDesk), when one is configured

    def allowed_paths(self) -> list[str]:
        """The folders the app serves files from (Gradio's ``allowed_paths``): the release, the work folder, the
        store. A file elsewhere (a CLI run's predictions) is served through :meth:`served`."""
        return [str(Path(p).resolve()) for p in (self.release_dir, self.work_dir, self.store.root)]

    def served(self, path: "str | Path | None") -> "str | None":
        """``path`` as a file the app may serve (:func:`~hug_vis_dataset.space.served.served_file`: a file outside
        :meth:`allowed_paths`, such as a CLI run's predictions, is served from a copy in the work folder)."""
        from .served import served_file

        return served_file(path, self.allowed_paths(), self.work_dir)

    def store_summary(self) -> str:
        """The results store in words for the page header (a Hub repo id, or a local folder's
        run count; never a server path)."""
        repo = getattr(self.store, "repo_id", None)
        if repo:
            return f"the Hub dataset `{markdown_text(repo)}`"
        return f"a local results store ({len(self.store.scan().runs)} stored run(s) at start)"

    def push_ratings(self) -> "str | None":
        """Push the ratings file to a Hub store; the problem in words when that fails (the rating
        is kept on this machine either way and goes up with the next successful push)."""
        try:
            self.store.save_ratings()
        except (StoreError, HubUnreachableError) as err:
            return f"Kept on this machine; not yet in the results repo: {err}"
        return None

    # ------------------------------------------------------------------ leaderboards
    def table_labels(self) -> list[str]:
        return [_table_label(info) for info in pt.paper_data()["tables"]]

    def board_rows(self, runs=None, all_raters: bool = False):
        """Paper rows, every valid stored run and the MOS rows of each task's human source, as board rows (read
        fresh).

        The MOS count the ratings the one rule counts (:func:`hug_vis_dataset.studies.judgments.counted_ratings`:
        flagged raters out unless ``all_raters``), from the source :meth:`human_sources` chose per task
        (:mod:`hug_vis_dataset.leaderboard.human_rows`, as ``hugvis leaderboard show`` draws them)."""
        return board_rows(self.store.runs() if runs is None else runs, *self.human(all_raters).board_rows(),
                          people_board_rows(self, all_raters))

    def human(self, all_raters: bool = False):
        """:class:`~hug_vis_dataset.leaderboard.human_rows.HumanRows` of the study's log and the simulated raters,
        with the study file's QC thresholds (a broken study file is reported by the MOS tab; QC keeps its
        defaults)."""
        from ..leaderboard.human_rows import human_rows
        from ..studies.rater_qc import QcRules

        try:
            rules = self.mos.spec.qc
        except Exception:  # noqa: BLE001
            rules = QcRules()
        return human_rows(self.mos.ratings.frame(), self.simulated_ratings, self.release.synthetic, rules, all_raters)

    def human_sources(self, all_raters: bool = False) -> dict:
        """Task -> :class:`~hug_vis_dataset.studies.judgments.Source`: the study's ratings or the release's
        simulated raters, by the one rule (:func:`hug_vis_dataset.studies.judgments.choose_source`), each counted
        with the study's quality control."""
        return self.human(all_raters).sources

    def mos_qc(self, all_raters: bool = False):
        """(the study's ratings, the simulated ratings or None) as :class:`~hug_vis_dataset.studies.mos_qc.QcSelection`:
        the study's QC rule (``hugvis mos status``'s, with the study file's thresholds) on each."""
        human = self.human(all_raters)
        return human.study_qc, human.simulated_qc

    def mos_qc_notes(self, all_raters: bool = False) -> list[str]:
        """The QC lines under a MOS table (one per set of ratings that has raters), then which source each task
        shows and why (the study's coverage)."""
        return self.human(all_raters).notes()

    @cached_property
    def simulated_ratings(self):
        """The synthetic release's simulated ratings (``simulated_systems/mos_ratings.csv``) with their
        task, read once: they are part of the release, so they do not change while the app runs."""
        from ..leaderboard.human_rows import simulated_ratings

        return simulated_ratings(self.release_dir)

    def evidence(self, runs, all_raters: bool = False):
        """The per-clip rows every verdict of the board compares: the stored runs' and each task's per-clip MOS
        (:func:`~hug_vis_dataset.leaderboard.board.clip_rows_of`)."""
        return clip_rows_of(runs, *self.human(all_raters).clip_rows())

    def leaderboard(self, table_label: str, origins: "list[str] | None" = None, source: str = ALL,
                    input_setting: str = ALL, paradigm: str = ALL, all_raters: bool = False):
        """(table, notes Markdown, filters that apply) of one paper table beside the stored runs.

        ``origins`` are labels of :data:`~hug_vis_dataset.leaderboard.board.ORIGIN_LABELS` (what the
        Show checkboxes hold) or keys; default paper and submitted. A MOS table (6, 8, 10) leaves out
        the raters the study's QC flags, and says so in the notes, unless ``all_raters``.
        """
        by_label = {v: k for k, v in ORIGIN_LABELS.items()}
        keys = [by_label.get(o, o) for o in (origins if origins is not None else
                                              [ORIGIN_LABELS[o] for o in DEFAULT_ORIGINS])]
        scan = self.store.scan()
        table = table_number(table_label)
        # The ratings log's skipped lines matter where ratings are shown: the MOS tables.
        is_mos = table in {catalog.task(t).mos_table for t in catalog.task_names()}
        human = self.human(all_raters)  # counted once for the rows, the verdicts' evidence and the notes
        problems = (self.mos.problems() + human.notes() if is_mos else table4_notes(self, scan.runs, all_raters)
                    if table == catalog.task("emotion").paper_table else [])
        view = board(board_rows(scan.runs, *human.board_rows(), people_board_rows(self, all_raters)), table, keys,
                     source, input_setting, paradigm,
                     damaged=scan.damaged, extra_notes=problems,
                     clip_rows=clip_rows_of(scan.runs, *(human.clip_rows() if is_mos else ())))
        return view.frame, view.markdown_notes, view.filters

    def comparisons(self, runs=None):
        """The stored runs' comparison sets (:class:`~hug_vis_dataset.statistics.evidence.Comparisons`)."""
        from ..statistics.evidence import Comparisons

        return Comparisons.from_runs(self.store.runs() if runs is None else runs)

    # ------------------------------------------------------------------ cross-task
    def result_rows(self):
        """Every stored per-clip row of the store (empty frame with the columns when none)."""
        return self.store.rows()

    def pooled_rows(self):
        """The rows the analyses that pool a task's systems read: complete runs of one comparison set, partial
        runs left out (:func:`hug_vis_dataset.reporting.findings.pooled_rows`), and the words naming those left out."""
        from ..reporting.findings import pooled_rows

        rows = self.result_rows()
        if not len(rows):
            return rows, ""
        comparisons = self.comparisons()
        left = " ".join(w for w in (comparisons.left_out_words(t) for t in sorted(set(rows["task"].unique()))) if w)
        return pooled_rows(rows, comparisons), markdown_text(left)

    def crosstask_models(self) -> list[str]:
        rows = self.pooled_rows()[0]
        return sorted(rows["model"].unique().tolist()) if len(rows) else []

    def crosstask(self, analysis: str, models: "list[str] | None" = None, emotion: str = ALL, metric: str = ALL):
        """(table, figure path or None, message) of one analysis on the chosen models' stored rows
        (:func:`~hug_vis_dataset.space.crosstask_view.crosstask_view`); partial runs are left out, as every analysis
        that pools the systems leaves them out, and the message says so."""
        rows, left = self.pooled_rows()
        table, figure, message = crosstask_view(rows, self.work_dir, analysis, models, emotion, metric,
                                                {r.task for r in self.store.runs()})
        return table, figure, (f"{message} {left}".strip() if left else message)

    # ------------------------------------------------------------------ findings
    def findings(self, analysis: str, task: str):
        """(table, figure path or None, message) of one finding on the stored rows of a task; the
        same functions as the report's Findings section (:mod:`hug_vis_dataset.reporting.findings`)."""
        rows = self.result_rows()
        frame, figure, message = self._finding(analysis, task, rows)
        if frame is None or not len(frame):
            message = self._why_empty(task, message)
        return frame, figure, message

    def _why_empty(self, task: str, why: str) -> str:
        """A finding with nothing to measure: when runs of the task are stored but have no per-clip values (their
        metrics need weights), say so and name the command, instead of asking for runs that are there."""
        from ..reporting.findings import why_no_values

        runs = [r for r in self.store.runs() if r.task == task]
        if not runs or not str(why).startswith("no per-clip values"):
            return why
        return why_no_values(task, [r.skipped for r in runs])

    def _finding(self, analysis: str, task: str, rows):
        import pandas as pd

        from ..reporting import findings as rf

        samples = {(r.task, r.model): r.sample_rows for r in self.store.runs() if r.sample_rows is not None}
        if analysis == FINDINGS[0]:  # a run of several samples enters with them: the sample (seed) term
            frame, decompositions, why = rf.variance_frame(rows, task, self.comparisons(), samples)
            if frame.empty:
                return pd.DataFrame(), None, why
            from ..reporting.figures import plot_variance_decomposition

            paths = plot_variance_decomposition(decompositions, self.work_dir / f"fig-{uuid.uuid4().hex}",
                                                title=f"{catalog.task(task).label}: share of variance")
            return rf.variance_table(frame).round(4).reset_index(), png_of(paths), rf.methods_text(decompositions)
        if analysis == FINDINGS[1]:
            from ..statistics.verdicts import VERDICTS

            runs = self.store.runs()
            frame, why = rf.significance_frame(rows, task, self.comparisons(runs), run_tables(runs),
                                               clip_rows_of(runs))
            return (frame.round(4) if not frame.empty else frame), None, why or (
                f"{len(frame)} neighbour pairs: " + ", ".join(f"{int((frame['Verdict'] == w).sum())} {w}"
                                                              for w in VERDICTS))
        if analysis == FINDINGS[3]:
            return self._joint_finding(rows, task)
        if analysis == FINDINGS[4]:
            return self._seeds_finding(rows, task, samples)
        if task not in ("matting", "matting_boundary"):  # the finding is matting's: the Task selector says which
            return pd.DataFrame(), None, (f"Boundary and thin-structure errors are a finding of Video matting, not of "
                                          f"{catalog.task(task).label}: choose Video matting.")
        frame, why = rf.boundary_frame(rf.pooled_rows(rows, self.comparisons()))
        return (frame.round(3).reset_index() if not frame.empty else frame), None, why or "MAD x1e3 per region"

    def _seeds_finding(self, rows, task: str, samples: dict):
        """The report's Seeds block for one task (:func:`hug_vis_dataset.reporting.findings.seeds_frames`): the rank
        stability of each neighbour pair with its verdict as the table, the seed spread in the message, the figure."""
        import pandas as pd

        from ..presentation.tables import markdown_table
        from ..reporting import findings as rf

        runs = self.store.runs()
        spread, stability, figure, why = rf.seeds_frames(rows, task, samples, self.comparisons(runs), run_tables(runs))
        if spread.empty:
            return pd.DataFrame(), None, why
        path = None
        if figure:
            from ..reporting.figures import plot_rank_stability

            path = png_of(plot_rank_stability(figure, self.work_dir / f"fig-{uuid.uuid4().hex}",
                                              title=f"{catalog.task(task).label}: rank stability under one-seed draws"))
        message = f"{rf.SEEDS_INTRO}\n\nSeed spread:\n\n{markdown_table(spread, 4)}"
        return (stability.round(3) if not stability.empty else stability), path, message

    def _joint_finding(self, rows, task: str):
        """The joint table on the task's human source (:meth:`human_sources`: the study's counted ratings once they
        cover the task, else the release's simulated raters), on the task's pooled runs; the message says which
        source and why."""
        from ..reporting.findings import pooled_rows

        sources = self.human_sources()
        source = sources.get(task)
        if source is None:  # not a generation task: the library says what the joint view needs
            first = next((s for s in sources.values() if s.ratings is not None), None)
            return joint_finding(rows, task, first.ratings if first else None, first.whose if first else "",
                                 counted=True)
        table, figure, message = joint_finding(pooled_rows(rows, self.comparisons()), task, source.ratings,
                                               source.whose, counted=True)
        return table, figure, (f"{message}\n\n{markdown_text(source.note)}" if source.note else message)

    # ------------------------------------------------------------------ inspector
    def choices(self) -> dict[str, list]:
        from .inspector import clip_choices

        return clip_choices(self.release)

    def frame_count(self, actor: str, emotion: str, action: Any, script: Any) -> int:
        """Frames of one clip (1 when it does not exist), for the Frame slider's range."""
        from .inspector import find_clip

        try:
            record = find_clip(self.release, actor, emotion, action, script)
        except (KeyError, ValueError):
            return 1
        return _frame_count(record)

    def inspect(self, actor: str, emotion: str, action: Any, script: Any, frame: Any = 0):
        """(video path, video frame, matte frame, overlay frame, audio path, markdown) of one clip.

        Frames are uint8 arrays (Gradio shows them as images) at ``frame``, clamped to the clip: they follow the
        Frame slider; the video and the audio are the whole clip.
        A missing clip or unreadable file gives ``None`` media and the error as text.
        """
        from ..readers.media import MediaError
        from .inspector import clip_text, find_clip, matte_overlay, read_matte_frame, read_video_frame

        try:
            record = find_clip(self.release, actor, emotion, action, script)
        except (KeyError, ValueError) as err:
            return None, None, None, None, None, f"**No such clip:** {err}"
        n_frames = _frame_count(record)
        index = min(max(int(frame or 0), 0), n_frames - 1)
        try:
            rgb = read_video_frame(record.video_path, index)
            alpha = read_matte_frame(record.alpha_matte_path, index)
            overlay = matte_overlay(rgb, alpha)
        except (MediaError, ValueError, OSError) as err:
            return (str(record.video_path), None, None, None, str(record.audio_path),
                    f"{clip_text(record)}\n\n**Error:** {err}")
        return (str(record.video_path), rgb, alpha, overlay, str(record.audio_path),
                clip_text(record) + f"\n\nShowing frame {index} of {n_frames} (video frame, matte and overlay).")

    # ------------------------------------------------------------------ per-clip viewer
    def viewer_runs(self) -> list[str]:
        """``task / model`` of every valid stored run (read fresh): with per-clip values, or without (its metrics
        needed weights), where its outputs can still be watched."""
        from .viewer import PANELS, run_label, run_metrics, unscored_clips

        return [run_label(r) for r in self.store.runs()
                if r.task in PANELS and (run_metrics(r) or unscored_clips(self.release, r))]

    def viewer_clips(self, label: "str | None", metric: "str | None" = None) -> "ViewerClips":
        """:class:`ViewerClips` of one run (the table, its metric choices, its clip ids in order, the note and the
        order in words), from one read of the store."""
        import pandas as pd

        from .viewer import clip_display, find_run, order_words, run_metrics, skipped_reasons, unscored_clips, worst_first

        try:
            run = find_run(self.store.runs(), label or "")
        except KeyError:
            return ViewerClips(pd.DataFrame(), [], None, [], VIEWER_HINT, "worst first")
        metrics = run_metrics(run)
        if not metrics:  # nothing scored (the metrics needed weights): the clips with outputs, in grid order
            ids = unscored_clips(self.release, run)
            reasons = skipped_reasons(run.skipped)
            return ViewerClips(pd.DataFrame({"Clip": [clip_display(c) for c in ids], "Score": "not scored"}), [],
                               None, ids, f"{len(ids)} clip(s) of {markdown_text(label)} in grid order, not scored"
                               + (f" ({reasons})" if reasons else "")
                               + ": the outputs are shown beside the reference.", "grid order")
        metric = metric if metric in metrics else metrics[0]
        table = worst_first(run, metric)
        ids = table["Clip"].tolist()
        order = order_words(run.task)
        # the table shows each clip as a person reads it (Afraid, not the id's "fearful"); the ids stay the values
        return ViewerClips(table.assign(Clip=[clip_display(c) for c in ids]), metrics, metric, ids,
                           f"{len(table)} clip(s) of {markdown_text(label)}, {order} by "
                           f"{catalog.spec(metric).header}.", order)

    def viewer_view(self, label: "str | None", clip: "str | None", frame: Any = 0, metric: "str | None" = None):
        """:class:`~hug_vis_dataset.space.viewer.ClipView` of one clip of one run (None with a message
        when nothing is chosen yet)."""
        from .viewer import ClipView, clip_view, find_run

        try:
            run = find_run(self.store.runs(), label or "")
        except KeyError:
            return ClipView(text=VIEWER_HINT)
        if not clip:
            return ClipView(text="Choose a clip of the list (worst first).")
        try:
            view = clip_view(self.release, run, clip, frame, metric)
        except KeyError as err:
            return ClipView(text=f"**No such clip:** {markdown_text(err)}")
        view.reference_audio, view.output_audio = self.served(view.reference_audio), self.served(view.output_audio)
        return view

    # ------------------------------------------------------------------ scoring
    def check_model(self, task: str, model: str) -> "tuple[bool, str]":
        """(ok, message) for a model name typed in the Score tab, before anything is uploaded."""
        try:
            name = self.store.check_new_model(task, model)
        except ModelNameError as err:
            return False, f"**Model name:** {err}"
        return True, f"`{name}` is free on the {catalog.task(task).label} leaderboard; now upload the zip."

    def _queue_refusal(self, task: str, root: Path, model: str) -> "str | None":
        """The check-only pass on an extracted upload (``scoring.check``): an upload whose files cannot be told
        apart (two files for one clip, names that are no clip of the grid) is refused in one message. Missing
        clips are no refusal: the run is scored and shown, and ranked only among runs that miss clips too
        (:data:`~hug_vis_dataset.leaderboard.board.PARTIAL_RULE`); a clip failing the scorer's checks is a
        failed clip, as ``hugvis evaluate`` counts it."""
        from ..scoring.check import check_submission

        coverage = check_submission(task, root, self.release_dir, model=model)
        if not coverage.duplicates and (not coverage.predicted or not (coverage.unmatched or coverage.extra)):
            return None  # nothing matched (the scoring path says which layout), or names that can be scored
        return f"**Not added:** {ambiguous_refusal(coverage)}\n\n{refusals_message(coverage, root)}".strip()

    def check_upload(self, task: str, upload: "str | None") -> str:
        """The layout check of an uploaded zip from its member names (nothing extracted yet)."""
        if not upload:
            return ""
        try:
            check_zip(upload, self.limits)
            with zipfile.ZipFile(upload) as archive:
                names = archive.namelist()
        except UnsafeUploadError as err:
            return f"**Upload refused:** {markdown_text(err)}"
        check = layout_check(task, names)
        if not check.matched:
            return check.message()
        # Then the scorer's own checks (hugvis evaluate --check-only): decodability, frame count,
        # size, rate; container headers only, no weights, the extracted files deleted after.
        from ..scoring.check import check_submission

        try:
            with extracted_upload(upload, self.work_dir / "uploads", self.limits) as root:
                coverage = check_submission(task, root, self.release_dir, model="upload")
        except UnsafeUploadError as err:
            return f"**Upload refused:** {markdown_text(err)}"
        except (ValueError, FileNotFoundError, RuntimeError) as err:
            return f"**Check failed:** {markdown_text(err)}"
        refused = refusals_message(coverage, root)
        return check.message() + (f"\n\n{refused}" if refused else
                                  f" All {coverage.predicted} predicted clip(s) pass the scorer's checks.")

    def score(self, task: str, model: str, upload: "str | None",
              progress: "Callable[[int, int], None] | None" = None):
        """(markdown, aggregate table, per-clip rows) of an uploaded zip, scored and stored.

        The run is scored into a staging folder and added to the store only when it is complete,
        so it appears on the leaderboard at once (and after a restart), never half-scored.
        ``progress(done, total)`` is called once per clip scored.
        """
        import pandas as pd

        from ..scoring.runner import run

        empty = pd.DataFrame()
        if task not in SCORED_TASKS:
            return f"Unknown task {task!r}.", empty, empty
        try:
            model = self.store.check_new_model(task, model)
        except ModelNameError as err:
            return f"**Model name:** {err}", empty, empty
        if not upload:
            return "Upload a zip of your predictions first.", empty, empty
        try:
            # The extracted files (they can be gigabytes) are deleted when scoring ends; the rows stay.
            # A stopped Space (SIGTERM/SIGINT) waits for this block to unwind: the runner raises
            # stopping.Stopped here at its next clip, and the upload and the staging folder go.
            with stopping.working(), stopping.resume_note(_stopped_score_note, overrides=True), \
                    extracted_upload(upload, self.work_dir / "uploads", self.limits) as root, \
                    self.store.staging() as stage, stopping.removed_on_stop(stage):
                refusal = self._queue_refusal(task, root, model)  # the queue's rules at this door
                if refusal:
                    return refusal, empty, empty
                # The same predictions as a stored run: refused before a clip is scored (the clips' fingerprints,
                # as the run's rows would store them, against each stored run's).
                twin = same_predictions(self.store.runs(), task, upload_inputs(task, root, self.release.clip_ids()))
                if twin:
                    return (f"**Not added:** these predictions are already on the {catalog.paper_table_of(task)} "
                            f"leaderboard as `{markdown_text(twin)}` (the scoring queue refuses the same predictions "
                            "under a second name); nothing was scored or added."), empty, empty
                result = run(upload_request(task, root, model, self.release_dir, stage, on_scored=progress))
                cov = result.coverage
                if cov.ok == 0:
                    if cov.failed:
                        why = f"every one of the {len(cov.failed)} matched clip(s) failed."
                    else:
                        why = f"no file matched the {task} layout. " + layout_check(
                            task, [str(p.relative_to(root)) for p in root.rglob("*")]).message()
                    refused = refusals_message(cov, root)
                    return (f"**0 scored**: {why} Nothing was added to the leaderboard."
                            + (f"\n\n{refused}" if refused else "")), empty, clip_scores(stored_rows_of(result.rows_path))
                rows = stored_rows_of(result.rows_path)
                stored = self.store.add(stage, task, model, verified=True)
        except UnsafeUploadError as err:
            return f"**Upload refused:** {markdown_text(err)}", empty, empty
        except (ValueError, FileNotFoundError, RuntimeError) as err:
            return f"**Scoring failed:** {markdown_text(err)}", empty, empty
        except stopping.Stopped:
            return "**Scoring stopped:** the Space is shutting down; nothing was added. Upload again.", empty, empty
        table = result.table.reset_index() if result.table is not None else empty
        origin = stored.origin
        where = (f"Added to the {catalog.paper_table_of(task)} leaderboard as **{ORIGIN_LABELS[origin]}**"
                 + ("" if origin == SUBMITTED else
                    f" ({SPACE_REVEAL.format(origin=origin, label=ORIGIN_LABELS[origin])} to see it)")
                 + f"; provenance: `{markdown_text(shown_link(stored.link))}`.")
        message = (f"Scored **{catalog.task(task).label}** for `{model}`: {cov.ok} clip(s) ok of {cov.grid_size}; "
                   f"missing {len(cov.missing)}, failed {len(cov.failed)}, unmatched {len(cov.unmatched)}. {where}")
        if cov.missing:  # the board's rule for a run that leaves clips out, said where the run is stored
            message += f" {PARTIAL_HELP}"
        skipped = result.summary.get("metrics", {}).get("skipped")
        if skipped:
            message += " Not computed: " + "; ".join(f"{label} ({markdown_code_text(why)})"
                                                     for label, why in skipped_words(skipped).items())
        refused = refusals_message(cov, root)
        if refused:
            message += f"\n\n{refused}"
        return message, score_table(task, table), clip_scores(rows)


def _stopped_score_note() -> str:
    return "an upload being scored was dropped (its files and staging folder removed, nothing added to the store); " \
           "start the Space again and upload it again"


def _frame_count(record) -> int:
    """Frames of a release clip by its recorded duration and rate (at least 1)."""
    return max(1, int(round(record.duration * record.fps)))

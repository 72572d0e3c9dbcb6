"""What every task scorer shares: the clip job, the per-clip result, the row builder and the base class.

A scorer answers two questions for one clip (the torchmetrics update step):

* :meth:`TaskScorer.check` -- can this prediction be compared with this reference (frame count,
  size, sample rate)? Raises :class:`SubmissionError`.
* :meth:`TaskScorer.score_clip` -- the per-clip values (and per-frame values where defined) of the
  requested metrics. Dispatch reads the catalog (:meth:`TaskScorer.computations`): a row calling its
  function per frame or per clip goes to the task's pass for that call (:attr:`TaskScorer.passes`,
  e.g. the one decode of a video), a kernel's rows to the pass running that kernel
  (:attr:`TaskScorer.kernels`), so metrics computed together run once and a new frame-paired or
  per-clip audio metric needs no scorer change (:mod:`hug_vis_dataset.tasks.dispatch`).

:meth:`TaskScorer.score` wraps both for the runner and never raises: a failure becomes failed
rows carrying its text. Every door (the runner, the evaluate modules, the Space) calls these.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Collection, Mapping, Sequence

from .. import catalog
from ..datamodel.results import MISSING_PREDICTION, SAMPLE_COLUMN, STATUS_FAILED, STATUS_OK, result_rows
from .submission import SubmissionError, index_entries


class MetricUnavailable(RuntimeError):
    """A metric cannot run in this installation (its weights or library module are absent)."""


@dataclass(frozen=True)
class ClipJob:
    """Everything a worker needs to score one clip; plain data so it pickles to any process.

    Attributes:
        task: task name (a row of :data:`hug_vis_dataset.catalog.TASKS`).
        model: the submission's model name.
        clip_id: the clip id as the release spells it.
        reference: reference media by kind (``alpha``, ``video``, ``audio``, ``portrait``): file
            paths (release tree) or row locators into a dataset repo's Parquet shards
            (:mod:`hug_vis_dataset.references`).
        expected: reference properties the prediction must match (``width``, ``height``,
            ``sample_rate``, ``fps``).
        prediction: the prediction path(s) found for the clip (more than one is a duplicate, unless ``samples``).
        samples: the sample numbers of a clip given as several samples (``prediction[i]`` is sample
            ``samples[i]``: each scored as the clip's prediction, its rows carrying
            :data:`~hug_vis_dataset.datamodel.results.SAMPLE_COLUMN`); empty for one prediction.
        payload: task data other than files (emotion: ``[(input_setting, answer, where), ...]``, an answer given under
            a reordered question with its ``(order, language)`` fourth).
        metrics: the metrics to compute (those available in this installation).
        options: protocol options (``chunk_frames``, ``device``, ``batch_size``, emotion ``settings``;
            ``set_features``: the set metrics of the run, whose per-clip features the scorer may return in
            :attr:`ClipOutcome.set_features`, e.g. FID's Inception features from the one-decode pass).
    """

    task: str
    model: str
    clip_id: str
    reference: Mapping[str, str]
    expected: Mapping[str, Any]
    prediction: tuple[str, ...]
    payload: Any = None
    metrics: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    samples: tuple[int, ...] = ()


@dataclass
class ClipScores:
    """What :meth:`TaskScorer.score_clip` returns for one clip.

    Attributes:
        values: metric -> per-clip value (the library's unit; see :mod:`hug_vis_dataset.catalog`).
        frames: per-frame values as ``{"metric", "frame", "value"}`` dicts (matting only).
        notes: diagnostics that are not metric values (``frames_no_face``, ``frames_dropped``).
        errors: metric -> why its value is undefined for this clip (NaN by definition, e.g. a region
            that is empty in every frame); those rows are stored as failed with this text.
        set_features: set metric -> this clip's features for it (``fid``: the prediction's Inception
            features, ``(frames, 2048)`` float32), when the job asked for them (``set_features`` option).
        remarks: metric -> a remark kept with its ok row (``scored on 170 of 180 frames; 10 without a person:
            no person detected``), in place of the clip's :meth:`TaskScorer.note`.
    """

    values: dict[str, float] = field(default_factory=dict)
    frames: list[dict] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    set_features: dict[str, Any] = field(default_factory=dict)
    remarks: dict[str, str] = field(default_factory=dict)

    def update(self, other: "ClipScores") -> None:
        self.values.update(other.values)
        self.frames.extend(other.frames)
        self.notes.update(other.notes)
        self.errors.update(other.errors)
        self.set_features.update(other.set_features)
        self.remarks.update(other.remarks)


@dataclass
class ClipOutcome:
    """Rows (and per-frame rows) of one clip."""

    clip_id: str
    rows: list[dict]
    frames: list[dict] = field(default_factory=list)
    #: why the clip fails the submission checks ("" when it passes); set even when no metric ran,
    #: so a run whose metrics are all skipped still reports a garbage prediction.
    check_error: str = ""
    #: set metric -> the clip's features for it (:attr:`ClipScores.set_features`); empty when the
    #: prediction failed its checks. Travels with the outcome (plain arrays: any process, any machine).
    set_features: dict[str, Any] = field(default_factory=dict)
    #: a clip given as several samples: sample number -> that sample's set features (kept apart: FID is computed
    #: per sample draw); ``set_features`` stays empty.
    sample_features: dict[int, dict[str, Any]] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return any(r["status"] == STATUS_FAILED for r in self.rows)


def failed_rows(job: ClipJob, error: str, metrics: "Sequence[str] | None" = None,
                model: "str | None" = None) -> list[dict]:
    """One failed row per metric, value NaN, with the error text."""
    return result_rows(model or job.model, job.task, job.clip_id, {m: math.nan for m in (metrics or job.metrics)},
                       error=error, status=STATUS_FAILED)


class TaskScorer:
    """Base of a task scorer: reference lookup, checks, per-clip scoring.

    Subclasses set ``name``, ``reference_kinds``, :attr:`kernels` and :attr:`passes`, and implement
    :meth:`reference` and :meth:`check`. The metric lists and their dispatch come from the catalog.
    """

    name: str = ""
    #: Reference kinds the scorer reads, for a release record (see :meth:`reference`).
    reference_kinds: tuple[str, ...] = ()
    #: Reference kinds the scorer needs as real files (repo cells are written to temporary files).
    file_kinds: tuple[str, ...] = ()
    #: True for rows derived from the reference data alone (no submission): see MotionTask.
    reference_only: bool = False
    #: The kernels this task runs: a row's implementation -> the method of the pass calling it (rows
    #: naming one kernel are computed by one call; :data:`~hug_vis_dataset.catalog.KERNEL`).
    kernels: Mapping[str, str] = {}
    #: The task's pass for rows called per frame or per clip: call -> method
    #: (:mod:`hug_vis_dataset.tasks.dispatch`); a call missing here is one this task cannot run.
    passes: Mapping[str, str] = {}

    # -- facts from the catalog ----------------------------------------------------------------
    @property
    def spec(self) -> catalog.TaskSpec:
        return catalog.task(self.name)

    @property
    def metrics(self) -> tuple[str, ...]:
        """Per-clip metrics, in the paper table's order."""
        return catalog.clip_metrics(self.name)

    @property
    def set_metrics(self) -> tuple[str, ...]:
        return catalog.set_metrics(self.name)

    @property
    def prediction_suffixes(self) -> tuple[str, ...]:
        return self.spec.prediction_suffixes

    @property
    def prediction_dirs(self) -> bool:
        return self.spec.prediction_dirs

    def match_names(self, entries: Mapping[str, bool], sample_folders: "Collection[str]" = ()
                    ) -> "tuple[int, list[tuple[str, str]]]":
        """The submission layout checked on names alone: how many top-level entries (name -> is a
        folder) are predictions, and the entries that are not, with why (the Space checks a zip's
        members before extracting it). Same rules as indexing the extracted folder; ``sample_folders``: the
        folders holding ``sample_<k>`` entries (:func:`~hug_vis_dataset.tasks.submission.sample_folders`).
        """
        index = index_entries(((name, is_dir, name) for name, is_dir in sorted(entries.items())),
                              self.prediction_suffixes, self.prediction_dirs,
                              frozenset(sample_folders) if self.spec.samples else False)
        return len(index.found), index.unmatched

    def computations(self) -> Mapping[str, Callable[..., ClipScores]]:
        """Metric -> bound method computing it, from each row's implementation and call (several
        metrics share one method: one pass, one decode).

        Raises:
            ValueError: a row of this task that none of its passes can call (one line naming the row).
        """
        table = {}
        for metric in self.metrics:
            row = catalog.spec(metric)
            method = self.kernels.get(row.implementation) if row.call == catalog.KERNEL else self.passes.get(row.call)
            if method is None:
                raise ValueError(f"{metric}: task {self.name} has no pass calling {row.implementation} "
                                 f"({row.call}); it runs kernels {sorted(self.kernels)} and {sorted(self.passes)} rows")
            table[metric] = getattr(self, method)
        return table

    # -- references ---------------------------------------------------------------------------
    def reference(self, record) -> dict[str, str]:
        """Reference paths of a :class:`~hug_vis_dataset.datamodel.release.ClipRecord`."""
        raise NotImplementedError

    def expected(self, record) -> dict[str, Any]:
        return {"width": record.width, "height": record.height, "fps": record.fps,
                "sample_rate": record.sample_rate}

    def index_from_references(self, refs, predictions) -> Any:
        """Predictions derived from the reference source itself (reference-only tasks and the
        Real-audio row); a task without such a mode refuses."""
        raise SubmissionError(f"task {self.name} has no reference-derived mode for {predictions!r}")

    def metrics_for(self, index: Any, metrics: Sequence[str]) -> tuple[str, ...]:
        """The metrics of ``metrics`` a submission (its :class:`~hug_vis_dataset.tasks.submission.PredictionIndex`) can
        give rows for, what a run computes and records (default: all of them)."""
        return tuple(metrics)

    def availability(self) -> dict[str, str]:
        """Metric -> ``""`` when it can run here, else ``"skipped: <why and the command to fix it>"``."""
        from .. import weights

        out = {}
        for metric in self.metrics + self.set_metrics:
            note = weights.missing_note(catalog.spec(metric).weights)
            out[metric] = f"skipped: {note}" if note else ""
        return out

    # -- one clip ------------------------------------------------------------------------------
    def check(self, prediction: str, reference: Mapping[str, str], expected: Mapping[str, Any]) -> None:
        """Raise :class:`SubmissionError` when the prediction cannot be compared to the reference."""

    def groups(self, metrics: Sequence[str]) -> list[tuple[str, ...]]:
        """The requested metrics grouped by the method that computes them (one call per group).

        Raises:
            ValueError: a metric this task does not compute.
        """
        table = self.computations()
        unknown = [m for m in metrics if m not in table]
        if unknown:
            raise ValueError(f"task {self.name} does not compute {unknown}; it computes {sorted(table)}")
        out: dict = {}
        for metric in metrics:
            out.setdefault(table[metric], []).append(metric)
        return [tuple(group) for group in out.values()]

    def score_clip(self, prediction: Any, reference: Mapping[str, str], metrics: Sequence[str], models,
                   options: "Mapping[str, Any] | None" = None) -> ClipScores:
        """Per-clip (and per-frame) values of ``metrics`` for one prediction; raises on any failure.

        Args:
            prediction: the prediction (a path; emotion: the answer text).
            reference: reference media by kind (paths or repo row locators).
            metrics: metric names of this task.
            models: a :class:`~hug_vis_dataset.tasks.models.ModelCache` (models load once per process).
            options: ``chunk_frames`` and task options.
        """
        options = dict(options or {})
        table = self.computations()
        scores = ClipScores()
        for group in self.groups(metrics):
            scores.update(table[group[0]](prediction, reference, group, models, options))
        return scores

    def load_networks(self, metrics: Sequence[str], models,
                      reraise: "tuple[type[BaseException], ...]" = ()) -> "tuple[list[str], dict[str, str]]":
        """Load the networks each row names (``MetricSpec.networks``) before any pass runs, rows in the
        task's catalog order: a missing or broken one fails (or, in ``reraise``, stops) its own rows
        only, though rows share a pass (Sync-C/D need ``syncnet`` and ``face_detector``).

        Returns:
            ``(rows whose networks loaded, row -> error text of the others)``.
        """
        errors: dict[str, str] = {}
        by_networks: dict[tuple[str, ...], list[str]] = {}
        for metric in [m for m in self.metrics if m in metrics]:
            if catalog.spec(metric).networks:
                by_networks.setdefault(catalog.spec(metric).networks, []).append(metric)
        for kinds, rows in by_networks.items():
            try:
                for kind in kinds:
                    models.get(kind)
            except reraise:
                raise
            except Exception as err:  # noqa: BLE001 - recorded for its rows, never dropped
                errors.update(dict.fromkeys(rows, f"{type(err).__name__}: {err}"))
        return [m for m in metrics if m not in errors], errors

    def score_groups(self, prediction: Any, reference: Mapping[str, str], metrics: Sequence[str], models,
                     options: "Mapping[str, Any] | None" = None,
                     reraise: "tuple[type[BaseException], ...]" = ()) -> "tuple[ClipScores, dict[str, str]]":
        """:meth:`score_clip` one group at a time: a failing computation (a broken weight file, a
        metric that cannot score this clip) fails only its own metrics; the rows' networks load
        first (:meth:`load_networks`).

        Args:
            reraise: exception types that stop the caller instead (the evaluate door: missing weights).

        Returns:
            ``(scores of the groups that succeeded, metric -> error text of the others)``.
        """
        metrics, errors = self.load_networks(metrics, models, reraise)
        scores = ClipScores()
        for group in self.groups(metrics):
            try:
                scores.update(self.score_clip(prediction, reference, group, models, options))
            except reraise:
                raise
            except Exception as err:  # noqa: BLE001 - recorded per metric, never dropped
                errors.update({m: f"{type(err).__name__}: {err}" for m in group})
        errors.update(scores.errors)
        return scores, errors

    def note(self, prediction: str) -> str:
        """A remark to keep with the clip's ok rows (e.g. a stereo file scored on its mean); none by default."""
        return ""

    def check_job(self, job: ClipJob) -> str:
        """Why ``job``'s prediction would fail before any metric runs ("" when it passes): missing,
        duplicate, or :meth:`check` (decodability, frame count, size, rate). Needs no weights; the
        check-only pass (``hugvis evaluate --check-only``) and every scoring run call it."""
        if self.reference_only:
            return ""
        if job.samples:  # the first sample that would fail, named
            for number, one in self._sample_jobs(job):
                why = self.check_job(one)
                if why:
                    return f"sample {number}: {why}"
            return ""
        if not job.prediction:
            return f"{MISSING_PREDICTION}: no file named by this clip id"
        if len(job.prediction) > 1:
            return "duplicate predictions: " + ", ".join(Path(p).name for p in job.prediction)
        from ..references import reference_files

        try:
            with reference_files(job.reference, self.file_kinds) as reference:
                self.check(job.prediction[0], reference, job.expected)
        except Exception as err:  # noqa: BLE001 - reported as the clip's failure, never raised
            return f"{type(err).__name__}: {err}"
        return ""

    def score(self, job: ClipJob, models) -> ClipOutcome:
        """Rows of one clip for the runner; any error becomes failed rows carrying its text.

        With no metric to compute (all skipped for missing weights) the clip is still checked, and
        a failure is returned in :attr:`ClipOutcome.check_error`.
        """
        if not job.metrics:
            return ClipOutcome(job.clip_id, [], check_error=self.check_job(job))
        if job.samples:
            return self._score_samples(job, models)
        if not job.prediction:
            return ClipOutcome(job.clip_id, failed_rows(job, f"{MISSING_PREDICTION}: no file named by this clip id"))
        if len(job.prediction) > 1:
            names = ", ".join(Path(p).name for p in job.prediction)
            return ClipOutcome(job.clip_id, failed_rows(job, f"duplicate predictions: {names}"))
        from ..references import reference_files

        try:
            with reference_files(job.reference, self.file_kinds) as reference:
                self.check(job.prediction[0], reference, job.expected)
                scores, errors = self.score_groups(job.prediction[0], reference, job.metrics, models, job.options)
                note = self.note(job.prediction[0])
        except Exception as err:  # noqa: BLE001 - any failure of one clip must not lose the others
            return ClipOutcome(job.clip_id, failed_rows(job, f"{type(err).__name__}: {err}"))
        rows = []
        for metric in job.metrics:
            if metric in errors:
                rows += result_rows(job.model, job.task, job.clip_id, {metric: math.nan}, error=errors[metric],
                                    status=STATUS_FAILED)
            elif metric not in scores.values:
                rows += result_rows(job.model, job.task, job.clip_id, {metric: math.nan},
                                    error="the library returned no value", status=STATUS_FAILED)
            else:
                rows += result_rows(job.model, job.task, job.clip_id, {metric: scores.values[metric]},
                                    error=scores.remarks.get(metric) or note)
        rows.sort(key=lambda r: r["metric"])
        frame_rows = [{"model": job.model, "task": job.task, "clip_id": job.clip_id, **f} for f in scores.frames]
        return ClipOutcome(job.clip_id, rows, frame_rows, set_features=dict(scores.set_features))

    @staticmethod
    def _sample_jobs(job: ClipJob) -> "list[tuple[int, ClipJob]]":
        """``(sample number, the job of that sample alone)`` of a clip given as several samples."""
        return [(number, replace(job, prediction=(path,), samples=()))
                for number, path in zip(job.samples, job.prediction)]

    def _score_samples(self, job: ClipJob, models) -> ClipOutcome:
        """:meth:`score` of each sample of a clip, its rows and per-frame rows carrying the sample number
        (:data:`~hug_vis_dataset.datamodel.results.SAMPLE_COLUMN`) and a failed row's error naming the sample."""
        rows: list[dict] = []
        frames: list[dict] = []
        features: dict[int, dict[str, Any]] = {}
        check_error = ""
        for number, one in self._sample_jobs(job):
            outcome = self.score(one, models)
            if outcome.set_features:  # from the sample's one decode, as a one-sample clip's (FID per draw)
                features[number] = dict(outcome.set_features)
            for row in outcome.rows:
                row[SAMPLE_COLUMN] = number
                if row["status"] == STATUS_FAILED and row["error"]:
                    row["error"] = f"sample {number}: {row['error']}"
            rows += outcome.rows
            frames += [{**f, SAMPLE_COLUMN: number} for f in outcome.frames]
            check_error = check_error or (f"sample {number}: {outcome.check_error}" if outcome.check_error else "")
        return ClipOutcome(job.clip_id, rows, frames, check_error=check_error, sample_features=features)

    def score_set(self, predictions: Sequence[str], references: Sequence[Mapping[str, str]],
                  metrics: Sequence[str], models, options: "Mapping[str, Any] | None" = None,
                  features: "Callable[[str, str], Any] | None" = None) -> dict[str, float]:
        """Set-level metrics over the valid clips of one system (FID); none by default.

        ``features(prediction, metric)``: the clip's stored features for the metric
        (:attr:`ClipOutcome.set_features` kept by the runner), or None to compute them from the file.
        """
        return {}

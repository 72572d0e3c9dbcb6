"""Score one submission on one task: an :class:`~hug_vis_dataset.scoring.request.EvaluationRequest` through named stages.

:func:`run` chains five stages, each a function of this module named after what it does:

1. :func:`resolve_inputs`: open the reference dataset (a release tree, a built dataset repo or a Hub id:
   :mod:`hug_vis_dataset.references`), index the submission by clip id, choose the metrics that can run here,
   and build one job per grid clip (``--out`` is claimed first, :func:`claim_output`);
2. :func:`plan_the_rerun`: read the rows already stored for (task, model) and decide what this run starts
   from (failed clips are retried unless ``retry_failed=False``), so an interrupted run resumes; when nothing
   is to rescore, :func:`stored_result` returns the stored run as it is;
3. :func:`score_clips`: score the clips still to do, one job per clip, in-process, in a spawn process pool
   (``num_proc``) or on Ray (``backend="ray"``); each clip is a pure function of its files, so the values do
   not depend on the engine; finished clips are persisted in small atomic Parquet parts as they complete;
4. :func:`store_rows`: compact the parts into ``rows.parquet`` sorted in grid order, and compute the
   set-level metrics (FID) once the clips are in;
5. :func:`summarise`: the task aggregate from the stored rows, the coverage report and ``summary.json`` (with
   provenance); then the finished run replaces the stored one in one rename.

:func:`evaluate_submission` is the same run with the request's fields as keyword arguments.
``on_persisted`` is called with the number of clips persisted after every flush (tests use it
to kill the process mid-run and check the resume).

Example:
    >>> import tempfile, pathlib
    >>> from hug_vis_dataset.synth import example_emotion_submission, example_release
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> release = example_release(root / "rel", emotions=["Happy", "Sad"])
    >>> sub = example_emotion_submission(root / "sub", {"actor_0001_happy_action_01_script_001": "happy"})
    >>> res = evaluate_submission("emotion", sub, "toy", release, root / "res", progress=False)
    >>> res.coverage.missing
    ['actor_0001_sad_action_01_script_001']
    >>> float(res.table.loc["toy | Text", "emotion_accuracy"])
    100.0
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from .. import stopping
from ..errors import HugvisError
from .coverage import Coverage, run_coverage
from ..references import VERIFY_CACHE_FILE, ReferenceSource, open_reference_source
from ..outputs import Output, claim, discard, write_text_file
# What a run was computed with lives beside what it is bound to (binding.py); named here as well.
from .binding import INPUT_COLUMN, PROVENANCE_PACKAGES, package_versions, weights_used
from .rerun import RerunPlan, RunBusyError, RunConflictError, plan_rerun
from .engines import ClipWorker, _worker_init, default_gpus_per_worker, ray_worker_options, run_local, run_ray
from .jobs import build_jobs, select_metrics
from .request import EvaluationRequest, RunOptionError, check_gpus_per_worker, check_run_options
from .store import SetFeatures
from ..tasks import REAL_AUDIO, ClipJob, ClipOutcome, get_task, index_predictions, result_rows, score_job
from ..datamodel.results import SAMPLE_COLUMN
#: The stages :func:`run` chains, in order (each a function of this module).
STAGES = ("resolve_inputs", "plan_the_rerun", "score_clips", "store_rows", "summarise")


class IncompleteMetricsError(HugvisError, RuntimeError):
    """``require_all_metrics`` was set and some metric of the task cannot run here."""


@dataclass
class EvaluationResult:
    """What :func:`run` (and :func:`evaluate_submission`) produced."""

    task: str
    model: str
    rows_path: Path
    summary_path: Path
    coverage: Coverage
    summary: dict
    table: Any  # pandas DataFrame: model x metric in paper units, n_ok, n_failed
    computed: int  # clips scored in this run (the rest were resumed from disk)


# ----------------------------------------------------------------------------- what the stages hand on
@dataclass
class ResolvedInputs:
    """What :func:`resolve_inputs` found, read by every later stage (the request stays as it was asked)."""

    scorer: Any  # the task's TaskScorer
    refs: ReferenceSource
    grid: list[str]  # the dataset's clip ids, in grid order
    index: Any  # the submission by clip id (tasks.PredictionIndex)
    metrics: tuple[str, ...]  # per-clip metrics that run here
    set_metrics: tuple[str, ...]  # set-level metrics (FID) that run here
    skipped: dict[str, str]  # metric -> why it cannot run here
    options: dict[str, Any]  # what every clip job carries (chunk size, device, batch, emotion settings)
    protocol: str  # aggregation of the summary
    recorded_protocol: dict  # what the summary stores and the re-run rule compares
    reference_derived: bool  # predictions drawn from the references (motion, real audio), not a folder
    gpus_per_worker: float
    jobs: list[ClipJob]  # one per grid clip, every metric of the run, in grid order


@dataclass
class RunCounts:
    """What a stop keeps: the clips whose rows are in the work folder (None: scoring has not started)."""

    kept: "int | None" = None
    persisted: int = 0


@dataclass
class ScoredClips:
    """What :func:`score_clips` did: the clips it scored and what the later stages need from them."""

    computed: int  # clips scored in this run
    check_failures: dict[str, str]  # clip id -> why its submission check failed
    features: SetFeatures  # the per-clip features of the set metrics
    set_reusable: bool  # the stored set-level rows still describe every clip


@dataclass
class StoredRows:
    """The run's stored tables, as :func:`store_rows` left them in the work folder."""

    rows: Any  # per-clip rows (pandas)
    frames: Any  # per-frame rows
    set_rows: Any  # set-level rows (FID)


@dataclass
class RunClock:
    """When the run started (the summary's provenance)."""

    started: str = field(default_factory=lambda: _now())
    t0: float = field(default_factory=time.perf_counter)

    def seconds(self) -> float:
        return round(time.perf_counter() - self.t0, 3)


# ----------------------------------------------------------------------------- engines (engines.py)
def _progress(iterable: Iterable, total: int, desc: str, enabled: bool) -> Iterator:
    if not enabled:  # tqdm.auto imports asyncio and tqdm's CLI: about 0.3 s of CPU for no bar
        return iter(iterable)
    from tqdm.auto import tqdm

    return iter(tqdm(iterable, total=total, desc=desc, unit="clip", disable=not enabled, dynamic_ncols=True))


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


# ----------------------------------------------------------------------------- stage 1: resolve inputs
def _reference_derived(request: EvaluationRequest) -> bool:
    """Whether the predictions are drawn from the references (motion, ``--real-audio``), not read from a folder."""
    return get_task(request.task).reference_only or str(request.predictions) == REAL_AUDIO


def claim_output(request: EvaluationRequest) -> Output:
    """``request.output`` when the caller claimed it (the Space's staging, the queue worker), else ``--out``
    claimed here, with the dataset and the predictions as inputs it may not overlap
    (:func:`hug_vis_dataset.outputs.claim`)."""
    if request.output is not None:
        return request.output
    inputs = [("--dataset", request.dataset)] + ([] if _reference_derived(request)
                                                 else [("--predictions", request.predictions)])
    return claim("hugvis evaluate", request.out, "results", into_existing=request.into_existing, inputs=inputs)


def resolve_inputs(request: EvaluationRequest) -> ResolvedInputs:
    """Stage 1: the references, the submission's index, the metrics that can run here and one job per clip.

    Raises:
        ValueError: the dataset has no clips.
        IncompleteMetricsError: ``require_all_metrics`` and some chosen metric cannot run here.
        RunOptionError: ``metrics`` names a metric the task does not compute.
    """
    from .. import catalog

    task = request.task
    scorer = get_task(task)
    reference_derived = _reference_derived(request)
    gpus_per_worker = (request.gpus_per_worker if request.gpus_per_worker is not None
                       else default_gpus_per_worker(request.backend, request.device))
    # The shards' digests are remembered under --out (what the user named), never next to the dataset.
    refs = open_reference_source(request.dataset, task, request.revision, verify=request.verify_dataset,
                                 digests_file=Path(request.out) / VERIFY_CACHE_FILE)
    grid = refs.clip_ids()
    if not grid:
        raise ValueError(f"the dataset at {request.dataset} has no clips")
    chosen = select_metrics(scorer, request.metrics)
    availability = {m: why for m, why in scorer.availability().items() if m in chosen}
    skipped = {m: why for m, why in availability.items() if why}
    if skipped and request.require_all_metrics:
        raise IncompleteMetricsError("cannot compute every metric of " + task + ": "
                                     + "; ".join(f"{m}: {why}" for m, why in skipped.items()))
    metrics = tuple(m for m in scorer.metrics if m in chosen and not availability.get(m))
    set_metrics = tuple(m for m in scorer.set_metrics if m in chosen and not availability.get(m))
    if reference_derived:
        index = scorer.index_from_references(refs, request.predictions)
    else:
        index = index_predictions(task, request.predictions)
    options: dict[str, Any] = {"chunk_frames": int(request.chunk_frames), "device": request.device,
                               "batch_size": request.batch_size}
    if task == "emotion":
        options["settings"] = tuple(scorer.settings(index))
    metrics = scorer.metrics_for(index, metrics)  # emotion: circular rows only for reordered questions
    if set_metrics:  # each clip returns its features for them (FID: from its one decode), kept with its rows
        options["set_features"] = set_metrics
    protocol = request.protocol or catalog.task_protocol(task)
    recorded_protocol = {"aggregation": protocol, "chunk_frames": request.chunk_frames,
                         "emotion_settings": list(options.get("settings", ())) or None}
    # Built once: the re-run rule, the scoring and the set metrics read the same jobs.
    jobs = build_jobs(task, request.model, refs, index, metrics, options)
    return ResolvedInputs(scorer, refs, grid, index, metrics, set_metrics, skipped, options, protocol,
                          recorded_protocol, reference_derived, gpus_per_worker, jobs)


# ----------------------------------------------------------------------------- stage 2: plan the re-run
def plan_the_rerun(request: EvaluationRequest, inputs: ResolvedInputs) -> RerunPlan:
    """Stage 2: what is stored for (task, model) and what this run starts from (:func:`~.rerun.plan_rerun`).

    Raises:
        RunConflictError: a run of other predictions is stored under (task, model) and ``overwrite`` is off.
    """
    predictions = (str(request.predictions) if inputs.reference_derived
                   else str(Path(request.predictions).resolve()))
    return plan_rerun(request.out, request.task, request.model, predictions, inputs.refs, inputs.index,
                      inputs.metrics + inputs.set_metrics, request.overwrite, inputs.reference_derived)


def stored_result(request: EvaluationRequest, inputs: ResolvedInputs, plan: RerunPlan) -> "EvaluationResult | None":
    """The stored run, read and not rewritten, when this run would store exactly what is stored (so a store
    the user cannot write is read); None when there is something to score."""
    computed = inputs.metrics + inputs.set_metrics
    if not plan.unchanged([j.clip_id for j in inputs.jobs], inputs.metrics, inputs.set_metrics, request.retry_failed,
                          inputs.recorded_protocol, {"computed": list(computed), "skipped": inputs.skipped}):
        return None
    stored = plan.stored_result(inputs.refs, inputs.index, inputs.skipped, inputs.protocol, computed)
    if stored is None:
        return None
    return EvaluationResult(request.task, request.model, plan.published.rows_path,
                            plan.published.dir / "summary.json", *stored, 0)


# ----------------------------------------------------------------------------- stage 3: score clips
def score_clips(request: EvaluationRequest, inputs: ResolvedInputs, plan: RerunPlan, kept: dict,
                counts: RunCounts) -> ScoredClips:
    """Stage 3: every clip not kept from the stored run, scored by the request's engine and persisted in parts
    of ``flush_every`` clips as they finish (``kept``: clip id -> the metrics kept, from ``plan.start``)."""
    store = plan.work
    metrics, set_metrics = inputs.metrics, inputs.set_metrics
    features = SetFeatures.for_run(store, plan.fingerprints, plan.current.definitions, inputs.options, set_metrics)
    jobs = []
    for job in inputs.jobs:
        todo = tuple(m for m in metrics if m not in kept.get(job.clip_id, ()))
        if todo or not metrics:  # with no metric to compute the clip is still checked
            jobs.append(replace(job, metrics=todo))
    if not set_metrics:
        discard(store.set_rows_path)  # set values of a metric not requested now
    set_reusable = plan.set_rows_reusable(bool(jobs), set_metrics)
    counts.kept = len(inputs.grid) - len(jobs)
    buffer: list[ClipOutcome] = []
    check_failures: dict[str, str] = {}

    def flush() -> None:
        nonlocal buffer
        if not buffer:
            return
        for o in buffer:  # before the rows that mark the clips done
            features.write(o.clip_id, o.set_features, set_metrics)
            for sample, kept in o.sample_features.items():  # a clip of several samples: each sample's own
                features.write(SetFeatures.sample_key(o.clip_id, sample), kept, set_metrics)
        store.write_part([{**r, INPUT_COLUMN: plan.fingerprints.get(o.clip_id, "")} for o in buffer for r in o.rows],
                         [f for o in buffer for f in o.frames])
        counts.persisted += len(buffer)
        buffer = []
        if request.on_persisted is not None:
            request.on_persisted(counts.persisted)

    if jobs:
        engine = (run_ray(jobs, request.num_proc, request.ray_address, gpus_per_worker=inputs.gpus_per_worker)
                  if request.backend == "ray" else run_local(jobs, request.num_proc))
        # A stop ends the engine's workers (the generator's finally) before the note is read.
        with contextlib.closing(engine):
            label = f"{request.task}/{request.model}"
            for done, outcome in enumerate(_progress(engine, len(jobs), label, request.progress), start=1):
                stopping.check()  # scoring outside the main thread (the Space) stops here
                buffer.append(outcome)
                if outcome.check_error:
                    check_failures[outcome.clip_id] = outcome.check_error
                if request.on_scored is not None:
                    request.on_scored(done, len(jobs))
                if len(buffer) >= max(1, request.flush_every):
                    flush()
            flush()
    return ScoredClips(len(jobs), check_failures, features, set_reusable)


# ----------------------------------------------------------------------------- stage 4: store rows
def store_rows(request: EvaluationRequest, inputs: ResolvedInputs, plan: RerunPlan, scored: ScoredClips) -> StoredRows:
    """Stage 4: the parts compacted into the run's tables in grid order, and the set-level rows (FID) computed
    over the clips that scored, unless the stored ones still describe every clip."""
    store = plan.work
    rows = store.compact()
    set_metrics = inputs.set_metrics
    if set_metrics and not (scored.set_reusable and store.set_rows_path.is_file()):
        store.write_set_rows(_set_rows(request, inputs, scored, rows))
    return StoredRows(rows, store.read_frames(), store.read_set_rows())


def _set_rows(request: EvaluationRequest, inputs: ResolvedInputs, scored: ScoredClips, rows) -> list[dict]:
    """The set-level rows (FID) over the clips whose rows are ok; a failure is a failed row, never a lost run."""
    from ..tasks import process_models

    ok_clips = set(rows.loc[rows["status"] == "ok", "clip_id"].unique()) if len(rows) else set()
    valid = [j for j in inputs.jobs if j.clip_id in ok_clips]
    # Several samples per clip: one value per sample draw (sample k of every clip that has it), each over as many
    # clips as a one-sample run; the table reads their mean (aggregate.sample_means).
    draws = sorted({k for j in valid for k in j.samples})
    set_rows = []
    for draw in draws or [None]:
        pairs = [(j.prediction[0] if not j.samples else j.prediction[j.samples.index(draw)], j)
                 for j in valid if draw is None or (draw in j.samples if j.samples else draw == 0)]
        why = "no valid clips or no set-level implementation"
        keys = {p: SetFeatures.sample_key(j.clip_id, draw) if j.samples else j.clip_id for p, j in pairs}
        try:  # each prediction's features as its one decode kept them (a sample's under its own key)
            values = inputs.scorer.score_set([p for p, _ in pairs], [j.reference for _, j in pairs],
                                             inputs.set_metrics, process_models(request.device), inputs.options,
                                             scored.features.reader(keys)) if pairs else {}
        except Exception as err:  # noqa: BLE001 - a set metric's failure is a failed row, not a lost run
            values, why = {}, f"{type(err).__name__}: {err}"
        sample = {} if draw is None else {SAMPLE_COLUMN: draw}
        for metric in inputs.set_metrics:
            if metric in values:
                rows_of = result_rows(request.model, request.task, "", {metric: values[metric]})
            else:
                rows_of = result_rows(request.model, request.task, "", {metric: float("nan")}, error=why,
                                      status="failed")
            set_rows += [{**r, **sample} for r in rows_of]
    return set_rows


# ----------------------------------------------------------------------------- stage 5: summarise
def summarise(request: EvaluationRequest, inputs: ResolvedInputs, plan: RerunPlan, scored: ScoredClips,
              stored: StoredRows, clock: RunClock) -> tuple[Coverage, dict, Any]:
    """Stage 5: the task table from the stored rows, the coverage report and the summary (with provenance),
    written into the work folder as ``coverage.json`` and ``summary.json``; returns (coverage, summary, table)."""
    from .aggregate import aggregate_record, task_table

    rows, frames, computed = stored.rows, stored.frames, inputs.metrics + inputs.set_metrics
    protocol = inputs.protocol if len(frames) or inputs.protocol != "rvm" else "clip"
    table = task_table(rows, frames, stored.set_rows, protocol=protocol, metrics=computed) if len(rows) else None
    coverage = run_coverage(request.task, request.model, inputs.refs, inputs.index, inputs.skipped, rows,
                            scored.check_failures)
    unparsed = int((rows["error"] == "unparsed answer").sum()) if len(rows) else 0
    summary = {
        "task": request.task,
        "model": request.model,
        "protocol": inputs.recorded_protocol,  # what RerunPlan.unchanged compares
        "metrics": {"computed": list(computed), "skipped": inputs.skipped},
        "aggregate": aggregate_record(table),
        "coverage": coverage.to_dict(),
        "unparsed_answers": unparsed,
        "provenance": {
            "packages": package_versions(),
            "weights": weights_used(request.task, computed),
            "dataset": inputs.refs.fingerprint(),
            "predictions": plan.current.predictions,
            "library": plan.current.library,
            "command_line": request.recorded_command_line,
            "backend": request.backend, "num_proc": request.num_proc, "ray_address": request.ray_address,
            "device": request.device, "gpus_per_worker": inputs.gpus_per_worker,
            "started": clock.started, "finished": _now(), "seconds": clock.seconds(),
            "clips_computed_this_run": scored.computed,
        },
    }
    write_text_file(plan.work.dir / "coverage.json", json.dumps(coverage.to_dict(), indent=2, ensure_ascii=False))
    write_text_file(plan.work.dir / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False))
    return coverage, summary, table


# ----------------------------------------------------------------------------- the run
def _stop_note(request: EvaluationRequest, inputs: ResolvedInputs, plan: RerunPlan, counts: RunCounts) -> str:
    """The one line a stop prints: what the work folder keeps and how to resume."""
    if counts.kept is None:
        return f"nothing was scored; the stored run under {request.out} is unchanged; run the same command again"
    return (f"{counts.kept + counts.persisted} of {len(inputs.grid)} clips kept in {plan.work.dir}; "
            "run the same command again to resume")


def run(request: EvaluationRequest) -> EvaluationResult:
    """Score a request's submission and store per-clip rows, coverage and a summary: the stages of :data:`STAGES`.

    What each field does, the re-run rule and what is raised: :func:`evaluate_submission`.

    Example:
        >>> import tempfile, pathlib
        >>> from hug_vis_dataset.synth import example_emotion_submission, example_release
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> release = example_release(root / "rel")
        >>> sub = example_emotion_submission(root / "sub", {"actor_0001_happy_action_01_script_001": "sad"})
        >>> request = EvaluationRequest("emotion", sub, "toy", release, root / "res", progress=False)
        >>> result = run(request)
        >>> result.coverage.ok, result.computed
        (1, 1)
        >>> run(request).computed  # the stored run is unchanged: read back, nothing scored
        0
    """
    clock = RunClock()
    output = claim_output(request)
    # --out is made (with its marker) before the dataset is opened, so the shards' digests can be kept there;
    # a refusal before anything is scored removes it again (opened()).
    with output.opened():
        inputs = resolve_inputs(request)
        plan = plan_the_rerun(request, inputs)
    stored = stored_result(request, inputs, plan)
    if stored is not None:
        return stored
    counts = RunCounts()
    with stopping.resume_note(lambda: _stop_note(request, inputs, plan, counts)), \
            plan.start(inputs.metrics, request.retry_failed) as kept:
        scored = score_clips(request, inputs, plan, kept, counts)
        stored_rows = store_rows(request, inputs, plan, scored)
        coverage, summary, table = summarise(request, inputs, plan, scored, stored_rows, clock)
        # The finished run replaces the published one in one rename; until here a failure or a
        # kill left the published run as it was.
        plan.publish(output)
    published = plan.published
    return EvaluationResult(request.task, request.model, published.rows_path, published.dir / "summary.json",
                            coverage, summary, table, scored.computed)


def evaluate_submission(
    task: str,
    predictions: "str | Path",
    model: str,
    dataset: "str | Path",
    out: "str | Path" = "results",
    num_proc: int = 1,
    backend: str = "local",
    ray_address: "str | None" = None,
    chunk_frames: int = 32,
    flush_every: int = 8,
    retry_failed: bool = True,
    require_all_metrics: bool = False,
    protocol: "str | None" = None,
    progress: bool = True,
    command_line: "Sequence[str] | None" = None,
    revision: "str | None" = None,
    device: str = "cpu",
    batch_size: "int | None" = None,
    gpus_per_worker: "float | None" = None,
    on_persisted: "Callable[[int], None] | None" = None,
    verify_dataset: bool = True,
    on_scored: "Callable[[int, int], None] | None" = None,
    overwrite: bool = False,
    metrics: "Sequence[str] | None" = None,
    into_existing: bool = False,
    output: "Output | None" = None,
) -> EvaluationResult:
    """Score a submission folder and store per-clip rows, coverage and a summary.

    Args:
        task: ``matting``, ``audio_driven``, ``vision_driven``, ``voice_cloning`` or ``emotion``.
        predictions: the submission folder (layout: :data:`hug_vis_dataset.catalog.TASKS`).
        model: model name (one folder name) used in rows and as ``out/<task>/<model>/``.
        dataset: a release tree, a dataset repo folder built by ``hugvis build``, or a Hub id
            (``hugvis/hug-vis``); see :mod:`hug_vis_dataset.references`.
        out: results root.
        num_proc: worker processes (local) or CPUs of the local Ray.
        backend: ``local`` or ``ray``.
        ray_address: join this Ray cluster instead of starting a local one.
        chunk_frames: frames per chunk when streaming media (never changes a value).
        flush_every: finished clips per Parquet part (never changes a value).
        retry_failed: recompute clips whose stored rows failed.
        require_all_metrics: raise :class:`IncompleteMetricsError` when a metric cannot run.
        protocol: aggregation protocol of the summary (``rvm`` for matting, ``clip`` otherwise).
        progress: show tqdm progress bars.
        command_line: recorded in the summary (defaults to ``sys.argv``).
        revision: Hub revision (branch, tag or commit) when ``dataset`` is a Hub id.
        device: where network metrics run (``cpu``, ``cuda``, ``auto``).
        batch_size: frames/windows per forward pass of a network metric (default per metric; values
            do not depend on it beyond float rounding).
        gpus_per_worker: GPUs each Ray worker requests (``backend="ray"`` only; fractions share a
            GPU). Default: 1 when ``device`` is CUDA, else 0 (:func:`default_gpus_per_worker`).
        on_persisted: called with the number of clips persisted so far after every flush.
        verify_dataset: check a dataset repo's shards against its manifest's sha256 first
            (recorded in the summary's provenance either way).
        on_scored: called with ``(clips scored, clips to score)`` in this run after every clip
            (progress bars: the Space's upload scoring).
        overwrite: replace a stored run of other predictions under the same (task, model); the
            stored run stays as it is until the new one is complete.
        metrics: the subset of the task's metrics to compute (default: all). A re-run with more
            metrics computes only those the stored run lacks (:func:`~hug_vis_dataset.scoring.binding.reusable_metrics`).
        into_existing: ``out`` may be a non-empty folder hugvis did not make (nothing in it is replaced).
        output: ``out`` already claimed by the caller (the Space's staging, the queue worker); default: claimed
            here, with the predictions and the dataset as inputs (:func:`hug_vis_dataset.outputs.claim`).

    Re-runs (``docs/SCORING.md``, "Re-runs"): a clip's stored rows are kept only when its
    prediction's fingerprint, the dataset's and the metric definitions are unchanged
    (:func:`hug_vis_dataset.scoring.binding.reusable_clips`); every other clip is scored again.
    The run is scored in ``out/<task>/.work-<model>/`` and replaces the stored run by one rename
    when complete, so a failed or interrupted run leaves the stored one byte-identical, and the
    next run resumes from the work folder.

    Raises:
        RunOptionError: ``num_proc``, ``chunk_frames`` or ``flush_every`` below 1, unknown backend,
            ``gpus_per_worker`` below 0 or given without ``backend="ray"``.
        RunConflictError: a run of another predictions folder is stored under (task, model) and
            ``overwrite`` is not set.
        RunBusyError: another process is scoring the same (task, model) into ``out``.
        OutputError: ``out`` overlaps the predictions or the dataset, is not a results store, or the
            stored (task, model) is not a run hugvis stored (:mod:`hug_vis_dataset.outputs`).

    Returns:
        An :class:`EvaluationResult`.

    The arguments are the fields of one :class:`~hug_vis_dataset.scoring.request.EvaluationRequest`, which this
    builds (and validates) and hands to :func:`run`; a door that has a request calls :func:`run` itself.
    """
    return run(EvaluationRequest(
        task, predictions, model, dataset, out=out, num_proc=num_proc, backend=backend, ray_address=ray_address,
        chunk_frames=chunk_frames, flush_every=flush_every, retry_failed=retry_failed,
        require_all_metrics=require_all_metrics, protocol=protocol, progress=progress, command_line=command_line,
        revision=revision, device=device, batch_size=batch_size, gpus_per_worker=gpus_per_worker,
        on_persisted=on_persisted, verify_dataset=verify_dataset, on_scored=on_scored, overwrite=overwrite,
        metrics=metrics, into_existing=into_existing, output=output))


__all__ = ["STAGES", "ClipWorker", "EvaluationRequest", "EvaluationResult", "IncompleteMetricsError", "RunBusyError",
           "RunConflictError", "RunOptionError", "build_jobs", "check_gpus_per_worker", "check_run_options",
           "claim_output", "default_gpus_per_worker", "evaluate_submission", "package_versions", "plan_the_rerun",
           "ray_worker_options", "resolve_inputs", "run", "run_local", "run_ray", "score_clips", "select_metrics",
           "store_rows", "stored_result", "summarise", "weights_used"]

"""Score one submission on one task: join predictions to references, score every clip, store rows.

The flow of :func:`evaluate_submission`:

1. open the reference dataset (a release tree, a built dataset repo or a Hub id: hug_vis_dataset.references)
   and index the submission by clip id;
2. read the rows already stored for (task, model) and keep only clips still to do (failed clips
   are retried unless ``retry_failed=False``), so an interrupted run resumes;
3. score the remaining clips one job per clip, in-process, in a spawn process pool
   (``num_proc``) or on Ray (``backend="ray"``); each clip is a pure function of its files, so
   the values do not depend on the engine;
4. persist finished clips in small atomic Parquet parts as they complete, then compact them into
   ``rows.parquet`` sorted in grid order;
5. compute set-level metrics (FID), the task aggregate from the stored rows, the coverage report
   and ``summary.json`` (with provenance).

``on_persisted`` is called with the number of clips persisted after every flush (tests use it
to kill the process mid-run and check the resume).

Example:
    >>> import tempfile, pathlib, json
    >>> from hug_vis_dataset.synth import synthesize
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = synthesize(root / "rel", actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1,
    ...                seconds=0.2, size=(64, 36), systems=False)
    >>> sub = root / "sub"; sub.mkdir()
    >>> _ = (sub / "predictions.jsonl").write_text(
    ...     '{"clip_id": "actor_0001_happy_action_01_script_001", "input_setting": "text", "answer": "happy"}\\n')
    >>> res = evaluate_submission("emotion", sub, "toy", root / "rel", root / "res", progress=False)
    >>> res.coverage.missing
    ['actor_0001_sad_action_01_script_001']
    >>> float(res.table.loc["toy | Text", "emotion_accuracy"])
    100.0
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import numbers
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from .. import stopping
from ..errors import HugvisError
from .coverage import Coverage, run_coverage
from ..references import ReferenceSource, open_reference_source
from ..references.sources import VERIFY_CACHE_FILE
from ..outputs import Output, claim, discard, write_text_file
from .binding import INPUT_COLUMN
from .rerun import RunBusyError, RunConflictError, plan_rerun
from .engines import (ClipWorker, RunOptionError, _worker_init, check_gpus_per_worker, default_gpus_per_worker,
                      ray_worker_options, run_local, run_ray)
from .store import SetFeatures
from ..tasks import REAL_AUDIO, ClipJob, ClipOutcome, get_task, index_predictions, result_rows, score_job
PROVENANCE_PACKAGES = ("hug-vis", "numpy", "scipy", "pandas", "pyarrow", "torch", "opencv-python-headless", "av",
                       "soundfile", "librosa", "scikit-image", "lpips", "resemblyzer", "speechmos", "onnxruntime",
                       "ray", "datasets")


class IncompleteMetricsError(HugvisError, RuntimeError):
    """``require_all_metrics`` was set and some metric of the task cannot run here."""


@dataclass
class EvaluationResult:
    """What :func:`evaluate_submission` produced."""

    task: str
    model: str
    rows_path: Path
    summary_path: Path
    coverage: Coverage
    summary: dict
    table: Any  # pandas DataFrame: model x metric in paper units, n_ok, n_failed
    computed: int  # clips scored in this run (the rest were resumed from disk)


def check_run_options(num_proc: int, chunk_frames: int, flush_every: int, backend: str) -> None:
    """Refuse bad run options before any clip is scored (they are never clip failures).

    Example:
        >>> try:
        ...     check_run_options(1, 0, 8, "local")
        ... except RunOptionError as err:
        ...     print(err)
        chunk_frames must be an integer >= 1, got 0
    """
    for name, value in (("num_proc", num_proc), ("chunk_frames", chunk_frames), ("flush_every", flush_every)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise RunOptionError(f"{name} must be an integer >= 1, got {value!r}")
    if backend not in ("local", "ray"):
        raise RunOptionError(f"unknown backend {backend!r}; choose local or ray")


# ----------------------------------------------------------------------------- engines (engines.py)
def _progress(iterable: Iterable, total: int, desc: str, enabled: bool) -> Iterator:
    if not enabled:  # tqdm.auto imports asyncio and tqdm's CLI: about 0.3 s of CPU for no bar
        return iter(iterable)
    from tqdm.auto import tqdm

    return iter(tqdm(iterable, total=total, desc=desc, unit="clip", disable=not enabled, dynamic_ncols=True))


# ----------------------------------------------------------------------------- provenance
def package_versions(names: Iterable[str] = PROVENANCE_PACKAGES) -> dict[str, "str | None"]:
    """Installed versions of the packages that can change a value (None when absent)."""
    from importlib import metadata

    out = {"python": sys.version.split()[0]}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def weights_used(task: str, metrics: Iterable[str]) -> dict[str, dict]:
    """sha256 and path of every pretrained file behind the metrics that ran.

    Digests come from the weights' process-wide cache: the availability check before scoring has
    already hashed the pinned files (some are hundreds of MB).
    """
    from .. import catalog, weights
    from ..weights.resolve import PINNED_HASHES

    out = {}
    for name in catalog.weights_of(metrics):
        status = weights.weight_status(name, check=False)
        if status.path is not None:
            out[name] = {"path": str(status.path), "sha256": PINNED_HASHES.sha256(status.path),
                         "pinned_sha256": weights.get_spec(name).sha256}
    return out


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


# ----------------------------------------------------------------------------- the command
def select_metrics(scorer, metrics: "Sequence[str] | None") -> tuple[str, ...]:
    """The task's metrics a run computes: all of them, or the subset ``metrics`` names (with the rows a
    corpus ratio is aggregated from: ``cer`` brings ``cer_edits`` and ``cer_ref_chars``).

    Example:
        >>> from hug_vis_dataset.tasks import get_task
        >>> select_metrics(get_task("vision_driven"), ["ssim", "psnr"])
        ('psnr', 'ssim')
        >>> select_metrics(get_task("voice_cloning"), ["cer"])
        ('cer', 'cer_edits', 'cer_ref_chars')
        >>> try:
        ...     select_metrics(get_task("matting"), ["psnr"])
        ... except RunOptionError as err:
        ...     print(err)
        matting does not compute psnr; its metrics: mad, mse, dtssd, grad, conn
        >>> try:  # FID pools the clips that score: it needs a per-clip metric to say which do
        ...     select_metrics(get_task("vision_driven"), ["fid"])
        ... except RunOptionError as err:
        ...     print(err)
        fid is computed over the clips that score, so it needs a per-clip metric of vision_driven beside it: e.g. --metrics psnr,fid
    """
    known = scorer.metrics + scorer.set_metrics
    if metrics is None:
        return known
    unknown = [m for m in metrics if m not in known]
    if unknown or not metrics:
        raise RunOptionError(f"{scorer.name} does not compute {', '.join(unknown) or 'an empty list'}; "
                             f"its metrics: {', '.join(known)}")
    if not set(metrics) & set(scorer.metrics):
        runnable = next((m for m, why in scorer.availability().items() if not why and m in scorer.metrics),
                        scorer.metrics[0])
        raise RunOptionError(f"{', '.join(metrics)} is computed over the clips that score, so it needs a per-clip "
                             f"metric of {scorer.name} beside it: e.g. --metrics {runnable},{metrics[0]}")
    from .. import catalog

    wanted = set(metrics) | {part for m in metrics for part in catalog.spec(m).ratio_of}
    return tuple(m for m in known if m in wanted)


def build_jobs(task_name: str, model: str, refs: ReferenceSource, index, metrics: tuple[str, ...],
               options: dict) -> list[ClipJob]:
    """One job per grid clip, in grid order (missing clips get a job that fails as 'missing')."""
    task = get_task(task_name)
    jobs = []
    for cid in refs.clip_ids():
        record = refs.record(cid)
        jobs.append(ClipJob(
            task=task_name, model=model, clip_id=record.clip_id, reference=refs.reference(cid),
            expected=task.expected(record), prediction=tuple(index.found.get(cid, ())),
            payload=index.payload.get(cid), metrics=metrics, options=options,
        ))
    return jobs


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
    """
    from .aggregate import aggregate_record, task_table

    started = _now()
    t0 = time.perf_counter()
    check_run_options(num_proc, chunk_frames, flush_every, backend)
    check_gpus_per_worker(backend, gpus_per_worker)
    if gpus_per_worker is None:
        gpus_per_worker = default_gpus_per_worker(backend, device)
    scorer = get_task(task)
    reference_derived = scorer.reference_only or str(predictions) == REAL_AUDIO
    if output is None:
        output = claim("hugvis evaluate", out, "results", into_existing=into_existing,
                       inputs=[("--dataset", dataset)] + ([] if reference_derived else [("--predictions", predictions)]))
    # --out is made (with its marker) before the dataset is opened, so the shards' digests can be kept there;
    # a refusal before anything is scored removes it again (opened()).
    with output.opened():
        # The shards' digests are remembered under --out (what the user named), never next to the dataset.
        refs = open_reference_source(dataset, task, revision, verify=verify_dataset,
                                     digests_file=Path(out) / VERIFY_CACHE_FILE)
        grid = refs.clip_ids()
        if not grid:
            raise ValueError(f"the dataset at {dataset} has no clips")
        chosen = select_metrics(scorer, metrics)
        availability = {m: why for m, why in scorer.availability().items() if m in chosen}
        skipped = {m: why for m, why in availability.items() if why}
        if skipped and require_all_metrics:
            raise IncompleteMetricsError("cannot compute every metric of " + task + ": "
                                         + "; ".join(f"{m}: {why}" for m, why in skipped.items()))
        metrics = tuple(m for m in scorer.metrics if m in chosen and not availability.get(m))
        set_metrics = tuple(m for m in scorer.set_metrics if m in chosen and not availability.get(m))
        if scorer.reference_only or str(predictions) == REAL_AUDIO:
            index = scorer.index_from_references(refs, predictions)
        else:
            index = index_predictions(task, predictions)
        options: dict[str, Any] = {"chunk_frames": int(chunk_frames), "device": device, "batch_size": batch_size}
        if task == "emotion":
            options["settings"] = tuple(scorer.settings(index))
        metrics = scorer.metrics_for(index, metrics)  # emotion: circular rows only for reordered questions
        if set_metrics:  # each clip returns its features for them (FID: from its one decode), kept with its rows
            options["set_features"] = set_metrics
        from .. import catalog

        protocol = protocol or catalog.task_protocol(task)

        plan = plan_rerun(out, task, model, str(predictions) if reference_derived else str(Path(predictions).resolve()),
                          refs, index, metrics + set_metrics, overwrite, reference_derived)
    fingerprints = plan.fingerprints
    # Nothing to rescore: the stored run is read, not rewritten, so a store the user cannot write is read.
    stored_protocol = {"aggregation": protocol, "chunk_frames": chunk_frames,
                       "emotion_settings": list(options.get("settings", ())) or None}
    if plan.unchanged([j.clip_id for j in build_jobs(task, model, refs, index, metrics, options)], metrics, set_metrics,
                      retry_failed, stored_protocol, {"computed": list(metrics + set_metrics), "skipped": skipped}):
        stored = plan.stored_result(refs, index, skipped, protocol, metrics + set_metrics)
        if stored is not None:
            return EvaluationResult(task, model, plan.published.rows_path, plan.published.dir / "summary.json",
                                    *stored, 0)
    counts = {"kept": None, "persisted": 0}  # what a stop keeps: the clips whose rows are in the work folder

    def stop_note() -> str:
        if counts["kept"] is None:
            return f"nothing was scored; the stored run under {out} is unchanged; run the same command again"
        return (f"{counts['kept'] + counts['persisted']} of {len(grid)} clips kept in {plan.work.dir}; "
                "run the same command again to resume")

    with stopping.resume_note(stop_note), contextlib.ExitStack() as stack, plan.start(metrics, retry_failed) as kept:
        store = plan.work
        features = SetFeatures.for_run(store, fingerprints, plan.current.definitions, options, set_metrics)
        jobs = []
        for job in build_jobs(task, model, refs, index, metrics, options):
            todo = tuple(m for m in metrics if m not in kept.get(job.clip_id, ()))
            if todo or not metrics:  # with no metric to compute the clip is still checked
                jobs.append(replace(job, metrics=todo))
        if not set_metrics:
            discard(store.set_rows_path)  # set values of a metric not requested now
        set_reusable = plan.set_rows_reusable(bool(jobs), set_metrics)
        counts["kept"] = len(grid) - len(jobs)
        persisted = 0
        buffer: list[ClipOutcome] = []
        check_failures: dict[str, str] = {}

        def flush() -> None:
            nonlocal persisted, buffer
            if not buffer:
                return
            for o in buffer:  # before the rows that mark the clips done
                features.write(o.clip_id, o.set_features, set_metrics)
            store.write_part([{**r, INPUT_COLUMN: fingerprints.get(o.clip_id, "")} for o in buffer for r in o.rows],
                             [f for o in buffer for f in o.frames])
            persisted += len(buffer)
            counts["persisted"] = persisted
            buffer = []
            if on_persisted is not None:
                on_persisted(persisted)

        if jobs:
            engine = (run_ray(jobs, num_proc, ray_address, gpus_per_worker=gpus_per_worker) if backend == "ray"
                      else run_local(jobs, num_proc))
            # A stop ends the engine's workers (the generator's finally) before the note is read.
            stack.enter_context(contextlib.closing(engine))
            for done, outcome in enumerate(_progress(engine, len(jobs), f"{task}/{model}", progress), start=1):
                stopping.check()  # scoring outside the main thread (the Space) stops here
                buffer.append(outcome)
                if outcome.check_error:
                    check_failures[outcome.clip_id] = outcome.check_error
                if on_scored is not None:
                    on_scored(done, len(jobs))
                if len(buffer) >= max(1, flush_every):
                    flush()
            flush()
        rows = store.compact()

        if set_metrics and not (set_reusable and store.set_rows_path.is_file()):
            ok_clips = set(rows.loc[rows["status"] == "ok", "clip_id"].unique()) if len(rows) else set()
            valid = [j for j in build_jobs(task, model, refs, index, metrics, options) if j.clip_id in ok_clips]
            from ..tasks import process_models

            why = "no valid clips or no set-level implementation"
            try:
                values = scorer.score_set([j.prediction[0] for j in valid], [j.reference for j in valid], set_metrics,
                                          process_models(device), options,
                                          features.reader({j.prediction[0]: j.clip_id for j in valid})) if valid else {}
            except Exception as err:  # noqa: BLE001 - a set metric's failure is a failed row, not a lost run
                values, why = {}, f"{type(err).__name__}: {err}"
            set_rows = []
            for metric in set_metrics:
                if metric in values:
                    set_rows += result_rows(model, task, "", {metric: values[metric]})
                else:
                    set_rows += result_rows(model, task, "", {metric: float("nan")}, error=why, status="failed")
            store.write_set_rows(set_rows)

        frames = store.read_frames()
        set_rows = store.read_set_rows()
        table = task_table(rows, frames, set_rows, protocol=protocol if len(frames) or protocol != "rvm" else "clip",
                           metrics=metrics + set_metrics) if len(rows) else None

        coverage = run_coverage(task, model, refs, index, skipped, rows, check_failures)
        unparsed = int((rows["error"] == "unparsed answer").sum()) if len(rows) else 0

        summary = {
            "task": task,
            "model": model,
            "protocol": stored_protocol,  # what RerunPlan.unchanged compares
            "metrics": {"computed": list(metrics + set_metrics), "skipped": skipped},
            "aggregate": aggregate_record(table),
            "coverage": coverage.to_dict(),
            "unparsed_answers": unparsed,
            "provenance": {
                "packages": package_versions(),
                "weights": weights_used(task, metrics + set_metrics),
                "dataset": refs.fingerprint(),
                "predictions": plan.current.predictions,
                "library": plan.current.library,
                "command_line": list(command_line if command_line is not None else sys.argv),
                "backend": backend, "num_proc": num_proc, "ray_address": ray_address,
                "device": device, "gpus_per_worker": gpus_per_worker,
                "started": started, "finished": _now(), "seconds": round(time.perf_counter() - t0, 3),
                "clips_computed_this_run": len(jobs),
            },
        }
        write_text_file(store.dir / "coverage.json", json.dumps(coverage.to_dict(), indent=2, ensure_ascii=False))
        write_text_file(store.dir / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False))
        # The finished run replaces the published one in one rename; until here a failure or a
        # kill left the published run as it was.
        plan.publish(output)
    published = plan.published
    return EvaluationResult(task, model, published.rows_path, published.dir / "summary.json", coverage, summary, table,
                            len(jobs))

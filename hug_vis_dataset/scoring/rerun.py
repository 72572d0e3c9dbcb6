"""The re-run rule of ``hugvis evaluate``: what a run keeps, rescores or refuses.

Before a run scores anything, :func:`plan_rerun` reads what is stored for ``(task, model)``:

* the **published** run ``out/<task>/<model>/`` (complete, bound by its ``run.json``);
* the **work** folder ``out/<task>/.work-<model>/`` of an interrupted run, if any.

A published run of *another predictions folder* is refused (:class:`RunConflictError`) unless
``overwrite`` is set. A work folder of the same predictions is resumed; otherwise the work
folder starts afresh, seeded with a copy of the published run's files (unless overwriting).
Under the work folder's lock, :meth:`RerunPlan.start` keeps a clip's rows only when
:func:`hug_vis_dataset.scoring.binding.reusable_clips` says so and drops the rest; the runner
scores what is left into the work folder and then replaces the published run by one rename.
Everything that can be refused (a conflict, a damaged stored file) is refused before anything
is written, so a refused or failed re-run leaves the store byte-identical.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..errors import HugvisError, ToolUsageError
from ..hashing import DigestCache
from ..readers import read_json
from .binding import (DIGESTS_FILE, RUN_BINDING_FILE, RunBinding, clip_fingerprint, dataset_key, library_version,
                      metric_definitions, reusable_clips, reusable_metrics)
from ..outputs import FolderBusyError, NotOursError, Output, discard, hold, unit_problem, write_text_file
from .store import ResultStore


class RunConflictError(ToolUsageError):
    """The (task, model) already holds a run of other predictions; ``--overwrite`` or another name."""


class RunBusyError(HugvisError, RuntimeError):
    """Another process is scoring the same (task, model) into the same results folder."""


@dataclass
class RerunPlan:
    """What a run starts from (see the module docstring).

    Attributes:
        published, work: the stored run and the work folder.
        current: the binding of this run.
        computed_under: the binding the rows in ``earlier`` were computed under (None: none).
        resume_work: the work folder of an interrupted run of the same predictions is resumed.
        seed: the published run whose files seed a fresh work folder (None: start empty).
        earlier: the rows that may be kept (None when there are none).
        digests: file digests by path, size and mtime (the fast pre-check), kept with the run.
        fingerprints: clip id -> the sha256 of its prediction now.
    """

    published: ResultStore
    work: ResultStore
    current: RunBinding
    computed_under: "RunBinding | None"
    resume_work: bool
    seed: "ResultStore | None"
    earlier: Any
    digests: DigestCache
    fingerprints: dict = field(default_factory=dict)

    @contextlib.contextmanager
    def start(self, clip_metrics: "tuple[str, ...]", retry_failed: bool) -> Iterator[dict]:
        """Hold the work folder, keep the reusable rows there and yield, per clip, the metrics kept.

        A clip kept whole keeps its stored rows as they are; a clip keeping some of its metrics
        (a run adding metrics, a metric whose definition changed) keeps those rows (and their
        per-frame values) and drops the rest; every other clip's rows are dropped.

        Raises:
            RunBusyError: another process holds the work folder.
        """
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(hold(self.work.dir, "work", str(self.published.dir)))
            except FolderBusyError:
                raise RunBusyError(f"another hugvis evaluate is scoring {self.current.task}/{self.current.model} "
                                   f"(its folder {self.work.dir} is locked); wait for it to finish, or use another "
                                   f"--out") from None
            if not self.resume_work:
                _reset_work_folder(self.work.dir, self.seed)
            kept = (reusable_metrics(self.earlier, self.computed_under, self.current, self.fingerprints, clip_metrics,
                                     retry_failed) if self.earlier is not None else {})
            if self.earlier is not None and len(self.earlier):
                whole = reusable_clips(self.earlier, self.computed_under, self.current, self.fingerprints,
                                       clip_metrics, retry_failed)
                partial = {c: m for c, m in kept.items() if c not in whole}
                frames = self.work.read_frames() if partial else None
                self.work.compact(drop_clips=set(self.earlier["clip_id"]) - whole)
                if partial:
                    self.work.write_part(_kept_records(self.earlier, partial), _kept_records(frames, partial))
            write_text_file(self.work.dir / RUN_BINDING_FILE, self.current.to_json())
            yield kept

    def set_rows_reusable(self, any_job: bool, set_metrics: "tuple[str, ...]") -> bool:
        """Set-level values (FID) describe every clip: reused only when no clip is rescored and
        neither the dataset nor their definitions changed."""
        under = self.computed_under
        return (not any_job and under is not None and under.dataset == self.current.dataset
                and all(under.definitions.get(m) == self.current.definitions[m] for m in set_metrics))

    def unchanged(self, clip_ids: "Iterable[str]", clip_metrics: "tuple[str, ...]", set_metrics: "tuple[str, ...]",
                  retry_failed: bool, protocol: dict, metrics_entry: dict) -> bool:
        """Whether this run would store exactly what is stored: nothing to rescore, nothing to write.

        True when the published run is bound to the same predictions, dataset, metric definitions and
        library (no work folder, no ``--overwrite``), every clip of ``clip_ids`` is stored and kept
        whole for ``clip_metrics`` (failed clips are retried unless ``retry_failed`` is off), the set
        values are reusable and stored exactly when ``set_metrics`` asks for them, and the stored
        summary's ``protocol`` and ``metrics`` entries are the ones this run would write. The
        runner then reads the stored run instead of rewriting it, so a store the user cannot write
        is read (docs/ARCHITECTURE.md, "No stray writes").
        """
        if (not clip_metrics or self.resume_work or self.seed is not self.published or self.earlier is None
                or not len(self.earlier) or self.computed_under != self.current or self.work.dir.exists()):
            return False
        stored = set(self.earlier["clip_id"])
        if stored != set(clip_ids) or reusable_clips(self.earlier, self.computed_under, self.current, self.fingerprints,
                                                     clip_metrics, retry_failed) != stored:
            return False
        if set_metrics:
            if not (self.published.set_rows_path.is_file() and self.set_rows_reusable(False, set_metrics)):
                return False
        elif self.published.set_rows_path.is_file():
            return False
        try:
            summary = read_json(self.published.dir / "summary.json")
        except ValueError:  # unreadable: the run is rewritten, which names nothing wrong but replaces it
            return False
        return summary.get("protocol") == protocol and summary.get("metrics") == metrics_entry

    def stored_result(self, refs, index, skipped: dict, protocol: str, metrics: "tuple[str, ...]"
                      ) -> "tuple[Any, dict, Any] | None":
        """(coverage, summary, table) of the published run when :meth:`unchanged` holds and its stored
        coverage is the one this run would write (the submission's names unchanged too); None
        otherwise, and the run is scored as usual. Reads only."""
        from .aggregate import task_table
        from .coverage import run_coverage

        coverage = run_coverage(self.current.task, self.current.model, refs, index, skipped, self.earlier)
        try:
            stored, summary = read_json(self.published.dir / "coverage.json"), read_json(self.published.dir / "summary.json")
        except ValueError:
            return None
        if stored != json.loads(json.dumps(coverage.to_dict(), ensure_ascii=False)):
            return None
        frames, set_rows = self.published.read_frames(), self.published.read_set_rows()
        table = task_table(self.earlier, frames, set_rows, metrics=metrics,
                           protocol=protocol if len(frames) or protocol != "rvm" else "clip")
        return coverage, summary, table

    def publish(self, output: Output) -> None:
        """Save the digests, then put the finished work folder in place of the published run: a unit of
        ``output`` (sealed, so a later ``--overwrite`` replaces it and nothing else)."""
        self.digests.cache_file = self.work.dir / DIGESTS_FILE
        self.digests.save()
        for folder in (self.work.rows_dir, self.work.frames_dir):
            if folder.is_dir() and not any(folder.iterdir()):
                discard(folder)
        output.replace_unit(self.work.dir, f"{self.current.task}/{self.current.model}", kind="run",
                            attrs={"task": self.current.task, "model": self.current.model})


def plan_rerun(out: "str | Path", task: str, model: str, predictions_root: str, refs, index,
               metrics: "tuple[str, ...]", overwrite: bool, reference_derived: bool = False) -> RerunPlan:
    """Read what is stored for (task, model) and decide what this run starts from.

    Raises:
        RunConflictError: a run of another predictions folder is stored and ``overwrite`` is off.
        StoredResultsError: a stored file that would be kept cannot be read (named, with the fix).
    """
    published = ResultStore(out, task, model)
    work = ResultStore.work(out, task, model)
    current = RunBinding(task, model, predictions_root, dataset_key(refs.fingerprint()), metric_definitions(metrics),
                         library_version())
    if published.dir.exists() or published.dir.is_symlink():
        # Before anything is scored: what a re-run would replace must be a run this toolkit stored.
        problem = unit_problem(published.dir, "run")
        if problem is not None:
            raise NotOursError(f"hugvis evaluate: {problem}; the run of {task}/{model} would replace it: move it out "
                               f"of {out} or choose another --model")
    stored = published_binding(published.dir)
    if stored is not None and stored.predictions != current.predictions and not overwrite:
        raise RunConflictError(
            f"{task}/{model} in {out} was scored from {stored.predictions}; --predictions {current.predictions} is "
            f"another folder: pass --overwrite to replace that run once the new one is complete, or choose "
            f"another --model")
    work_binding = RunBinding.read(work.dir)
    resume_work = work_binding is not None and work_binding.predictions == current.predictions
    seed = None if resume_work else (published if stored is not None and not overwrite else None)
    source = work if resume_work else seed
    # Read what may be kept before anything is written: a damaged file is named while the store
    # is still as it was.
    earlier = source.read_rows() if source is not None else None
    if source is not None:
        source.read_frames(), source.read_set_rows()
    digests = DigestCache(source.dir / DIGESTS_FILE if source is not None else None)
    # A reference-derived run (Real audio, motion) reads only the dataset, which the dataset key
    # binds already: its clips have no input of their own.
    fingerprints = {str(refs.record(cid).clip_id): "" if reference_derived else clip_fingerprint(
        index.found.get(cid, ()), index.payload.get(cid), digests) for cid in refs.clip_ids()}
    return RerunPlan(published, work, current, work_binding if resume_work else stored, resume_work, seed, earlier,
                     digests, fingerprints)


def published_binding(folder: Path) -> "RunBinding | None":
    """The binding of the run stored in ``folder``; for a run stored before ``run.json`` existed, its
    summary's predictions folder (bound to no dataset, so none of its clips is reused)."""
    binding = RunBinding.read(folder)
    if binding is not None or not folder.exists():
        return binding
    try:
        summary = read_json(folder / "summary.json")  # strict; an InputFileError is a ValueError
        root = str(summary["provenance"]["predictions"])
    except (OSError, ValueError, KeyError, TypeError):
        root = "(unknown: the stored run has no readable run.json or summary.json)"
    return RunBinding(folder.parent.name, folder.name, root, dataset="")


def _kept_records(table, kept: "dict[str, frozenset]") -> list[dict]:
    """The rows (or per-frame values) of ``table`` whose (clip, metric) ``kept`` names."""
    if table is None or not len(table):
        return []
    mask = [metric in kept.get(clip, ()) for clip, metric in zip(table["clip_id"], table["metric"])]
    return table[mask].to_dict("records")


def _reset_work_folder(folder: Path, seed: "ResultStore | None") -> None:
    """Empty the work folder (keeping its held marker), then copy the published run's stored files
    into it when the re-run may keep some of them."""
    from ..outputs import TRANSIENT_MARKER

    for entry in folder.iterdir():
        if entry.name == TRANSIENT_MARKER:
            continue
        discard(entry)
    if seed is not None:
        for path in (seed.rows_path, seed.frames_path, seed.set_rows_path, seed.dir / DIGESTS_FILE):
            if path.is_file():
                shutil.copy2(path, folder / path.name)
        # The set-metric features of kept clips (a read checks they belong to the clip's input now).
        # Hard links: nothing is copied, and a file is only ever replaced, never rewritten in place.
        if seed.features_dir.is_dir():
            shutil.copytree(seed.features_dir, folder / seed.features_dir.name, copy_function=_link_or_copy)


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system, or links not supported
        shutil.copy2(source, target)


__all__ = ["RerunPlan", "RunBusyError", "RunConflictError", "plan_rerun", "published_binding"]

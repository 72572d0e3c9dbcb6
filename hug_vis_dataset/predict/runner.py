"""The per-clip loop shared by every task: resume, progress, per-clip log, summary.

A run is a sequence of *units* (a clip, or for emotion a clip and an input setting). For each
unit the task says whether its output is already there and valid (then it is *skipped* on
``resume``), and produces it otherwise. Any exception of one unit is caught, recorded with the
unit's key in the log and counted as *failed*; the run goes on with the next unit. Nothing is
silently missing: every unit ends ``ok``, ``failed`` or ``skipped``, and each outcome is one line
of the log ``<out>/.hugvis-predict/log.jsonl`` (hidden, so ``hugvis evaluate`` ignores it).

Outputs are written under a hidden temporary name and put in place through the submission's output
guard (:meth:`hug_vis_dataset.outputs.Output.atomic`) once they verify, so an interrupted run leaves
either a whole prediction or none, and a file the toolkit did not write is never replaced.

Example:
    >>> import tempfile
    >>> from hug_vis_dataset.outputs import claim
    >>> log = PredictLog(claim("hugvis predict", tempfile.mkdtemp(), "submission"), "demo")
    >>> def attempt(unit):
    ...     if unit == "b":
    ...         raise PredictionError("no answer")
    ...     return {"answer": unit}
    >>> summary = run_units(["a", "b"], lambda u: u, attempt, lambda u: False, log, progress=False)
    >>> summary.counts()
    {'ok': 1, 'failed': 1, 'skipped': 0}
    >>> summary.failures
    [('b', 'PredictionError: no answer')]
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, TypeVar

from .. import stopping
from ..outputs import Output, OutputError

LOG_DIR = ".hugvis-predict"
LOG_FILE = "log.jsonl"
STATUS_OK, STATUS_FAILED, STATUS_SKIPPED = "ok", "failed", "skipped"

Unit = TypeVar("Unit")


class PredictionError(RuntimeError):
    """One clip's prediction is unusable (wrong shape, empty answer, wrong frame count ...)."""


class PredictSetupError(ValueError):
    """The run cannot start (unknown adapter, unsupported input setting, missing key ...)."""


@dataclass
class PredictSummary:
    """Outcome of a run.

    Attributes:
        task: the task.
        out: the folder written (submission, export or collected submission).
        ok, failed, skipped: unit keys by outcome, in run order.
        failures: (unit key, error text) of every failed unit.
        log_path: the per-unit JSONL log.
    """

    task: str
    out: Path
    ok: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failures: list[tuple[str, str]] = field(default_factory=list)
    log_path: "Path | None" = None

    def counts(self) -> dict[str, int]:
        return {STATUS_OK: len(self.ok), STATUS_FAILED: len(self.failed), STATUS_SKIPPED: len(self.skipped)}

    def to_text(self) -> str:
        """The one summary line the CLI prints."""
        c = self.counts()
        return (f"predict {self.task}: {c['ok']} ok, {c['failed']} failed, {c['skipped']} skipped -> {self.out}"
                + (f" (log: {self.log_path})" if self.log_path else ""))


class PredictLog:
    """Appends one JSON line per unit outcome to ``<out>/.hugvis-predict/log.jsonl`` (through the output's guard).

    Args:
        output: the run's output folder.
        run: a label of this run (adapter and time), written on every line.
    """

    def __init__(self, output: Output, run: str):
        self.output = output
        self.path = Path(output.named) / LOG_DIR / LOG_FILE
        self.run = run

    def write(self, key: str, status: str, seconds: float, error: str = "", details: "dict | None" = None) -> None:
        line = {"run": self.run, "unit": key, "status": status, "seconds": round(seconds, 3), "error": error,
                **(details or {})}
        self.output.append_text(f"{LOG_DIR}/{LOG_FILE}", json.dumps(line, ensure_ascii=False, default=str) + "\n")


def run_units(
    units: Iterable[Unit],
    key: Callable[[Unit], str],
    attempt: Callable[[Unit], "dict | None"],
    is_done: Callable[[Unit], bool],
    log: PredictLog,
    progress: bool = True,
    total: "int | None" = None,
    task: str = "",
    out: "str | Path | None" = None,
) -> PredictSummary:
    """Run ``attempt`` on every unit not already done; never raises for one unit's failure.

    Args:
        units: the units in order.
        key: the unit's name in the log and the summary (clip id, or ``clip_id | setting``).
        attempt: produces the unit's output; returns details for the log (prompt, raw answer ...).
            Raising any exception marks the unit failed.
        is_done: True when the unit's output already exists and verifies (it is then skipped).
        log: where outcomes go.
        progress: show a tqdm bar.
        total: number of units, for the bar.
    """
    from tqdm.auto import tqdm

    summary = PredictSummary(task, Path(out) if out is not None else log.path.parent.parent, log_path=log.path)
    # A stop (SIGINT/SIGTERM, stopping.py) leaves the unit being written as nothing (Output.atomic removes
    # its temporary) and every finished one in place: --resume keeps them.
    with stopping.resume_note(lambda: _stop_note(summary, total)):
        for unit in tqdm(units, total=total, desc=f"predict {task}".strip(), unit="clip", disable=not progress,
                         dynamic_ncols=True):
            _run_unit(unit, key, attempt, is_done, log, summary)
    return summary


def _stop_note(summary: PredictSummary, total: "int | None") -> str:
    done = len(summary.ok) + len(summary.skipped)
    of = f" of {total}" if total is not None else ""
    return f"{done}{of} clip(s) kept in {summary.out}; run the same command with --resume to continue"


def _run_unit(unit, key, attempt, is_done, log: PredictLog, summary: PredictSummary) -> None:
    """One unit: skipped, ok or failed (recorded in ``summary`` and the log)."""
    name = key(unit)
    start = time.perf_counter()
    try:
        if is_done(unit):
            summary.skipped.append(name)
            log.write(name, STATUS_SKIPPED, time.perf_counter() - start)
            return
        details = attempt(unit) or {}
    except OutputError:
        raise  # the guard refused to replace something not the toolkit's: the run stops, naming it
    except Exception as err:  # noqa: BLE001 - one clip's failure must not stop the others
        error = f"{type(err).__name__}: {err}"
        summary.failed.append(name)
        summary.failures.append((name, error))
        log.write(name, STATUS_FAILED, time.perf_counter() - start, error=error)
        return
    summary.ok.append(name)
    log.write(name, STATUS_OK, time.perf_counter() - start, details=details)


def verified(check: Callable[[], Any]) -> bool:
    """True when ``check()`` runs without error: an existing output that verifies is kept on resume."""
    try:
        check()
    except Exception:  # noqa: BLE001 - any problem means "redo it", the redo reports the error
        return False
    return True


class FileTask:
    """A task whose prediction is one file or folder per clip (matting, generation, voice, export).

    Subclasses set ``task`` and implement :meth:`output_name`, :meth:`write` and :meth:`verify`.
    """

    task: str = ""

    def output_name(self, clip) -> str:
        """The clip's entry in the output folder (``<clip_id>.mp4``, ``<clip_id>`` ...)."""
        raise NotImplementedError

    def write(self, clip, path: Path) -> "dict | None":
        """Write the clip's output at ``path`` (a temporary name); return details for the log."""
        raise NotImplementedError

    def verify(self, clip, path: Path) -> "dict | None":
        """Raise :class:`PredictionError` when the output at ``path`` is not a valid prediction."""
        raise NotImplementedError

    def produce(self, clip, output: Output) -> dict:
        """Write, verify, then put in place (replacing only a prediction the toolkit wrote)."""
        with output.atomic(self.output_name(clip)) as tmp:
            details = self.write(clip, tmp) or {}
            details.update(self.verify(clip, tmp) or {})
        return details


def run_file_task(file_task: FileTask, clips: Iterable, output: Output, resume: bool = False,
                  progress: bool = True, total: "int | None" = None, run: str = "") -> PredictSummary:
    """Produce every clip's output in ``output``; with ``resume`` keep outputs that verify.

    Without ``resume`` every clip is redone: each one already there must be the toolkit's own, unchanged,
    checked before the first clip is predicted (a refusal writes nothing).
    """
    clips = list(clips)
    out = Path(output.named)
    if not resume:
        output.check_replaceable([file_task.output_name(c) for c in clips])
    output.ensure()
    log = PredictLog(output, run or file_task.task)

    def is_done(clip) -> bool:
        path = out / file_task.output_name(clip)
        return resume and path.exists() and verified(lambda: file_task.verify(clip, path))

    return run_units(clips, lambda c: c.clip_id, lambda c: file_task.produce(c, output), is_done, log,
                     progress=progress, total=total, task=file_task.task, out=out)

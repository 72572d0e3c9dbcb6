"""What one scoring run is asked to do: :class:`EvaluationRequest`, built by every door, validated here once.

Every door that scores a submission (``hugvis evaluate``, the Space's upload scoring, the leaderboard's queue
worker, ``hugvis audit robustness``, the demo) builds one :class:`EvaluationRequest` and hands it to
:func:`hug_vis_dataset.scoring.runner.run`; :func:`~hug_vis_dataset.scoring.runner.evaluate_submission` is the
same request built from keyword arguments. The request says

* **what** to score: ``task``, ``model``, ``metrics``;
* **where from**: ``predictions``, ``dataset`` (with ``revision`` and ``verify_dataset``);
* **where to**: ``out`` (or an ``output`` the caller already claimed, ``into_existing``);
* **the re-run rule**: ``retry_failed``, ``overwrite`` (``docs/SCORING.md``, "Re-runs");
* **how**: ``backend``, ``num_proc``, ``ray_address``, ``device``, ``batch_size``, ``gpus_per_worker``,
  ``chunk_frames``, ``flush_every``;
* **what is recorded and said**: ``require_all_metrics``, ``protocol``, ``command_line``, ``progress``,
  ``on_scored``, ``on_persisted``.

Defaults are the runner's. A bad option is refused when the request is built, before anything is claimed,
read or scored, by a :class:`RunOptionError` of one line naming the field and the fix. This module imports
only the error classes and the catalog, so a door can build and check a request without loading a scorer.

Example:
    >>> request = EvaluationRequest("matting", "preds", "MyNet", "hugvis/hug-vis", num_proc=4)
    >>> request.backend, request.out, request.metrics
    ('local', 'results', None)
    >>> try:
    ...     EvaluationRequest("matting", "preds", "MyNet", "hugvis/hug-vis", flush_every=0)
    ... except RunOptionError as err:
    ...     print(err)
    flush_every must be an integer >= 1, got 0
"""

from __future__ import annotations

import numbers
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from .. import catalog
from ..errors import ToolUsageError

if TYPE_CHECKING:  # the output guard is the runner's business; a request only carries one
    from ..outputs import Output

#: The engines a run can use (:mod:`hug_vis_dataset.scoring.engines`).
BACKENDS = ("local", "ray")


class RunOptionError(ToolUsageError):
    """An option of a scoring request (:class:`EvaluationRequest`, ``hugvis evaluate``) is out of range."""


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
    if backend not in BACKENDS:
        raise RunOptionError(f"unknown backend {backend!r}; choose local or ray")


def check_gpus_per_worker(backend: str, gpus_per_worker: "float | None") -> None:
    """Refuse ``gpus_per_worker`` outside Ray and values below 0 (one line each).

    Example:
        >>> try:
        ...     check_gpus_per_worker("local", 1)
        ... except RunOptionError as err:
        ...     print(err)
        gpus_per_worker (--gpus-per-worker) applies to the Ray backend only; add --backend ray or drop it
    """
    if gpus_per_worker is None:
        return
    if backend != "ray":
        raise RunOptionError("gpus_per_worker (--gpus-per-worker) applies to the Ray backend only; "
                             "add --backend ray or drop it")
    if isinstance(gpus_per_worker, bool) or not isinstance(gpus_per_worker, numbers.Real) or not (
            0 <= float(gpus_per_worker) < float("inf")):
        raise RunOptionError(f"gpus_per_worker must be a number >= 0 (fractions share a GPU), got {gpus_per_worker!r}")


def _names(field_name: str, value: "Sequence[str] | None", example: str) -> "tuple[str, ...] | None":
    """A sequence of names as a tuple (requests compare equal whatever sequence a door used); one string is
    refused, since iterating it would name its letters."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)) or not all(isinstance(v, str) for v in value):
        raise RunOptionError(f"{field_name} must be a list of strings such as {example}, got {value!r}")
    return tuple(value)


@dataclass(frozen=True)
class EvaluationRequest:
    """One scoring run: what to score, where from, where to, the re-run rule and how (module docstring).

    Built by every door and read by every stage of :func:`hug_vis_dataset.scoring.runner.run`; the fields
    and defaults are :func:`~hug_vis_dataset.scoring.runner.evaluate_submission`'s arguments, which say
    what each one does. ``task``, ``predictions``, ``model``, ``dataset`` and ``out`` may be given by
    position, every other field by name. Validated once, when built (``dataclasses.replace`` validates again).

    Callbacks (``on_scored``, ``on_persisted``) and a claimed ``output`` watch or hold the run without
    changing what it stores, so two requests that differ only in them compare equal.

    Example (a two-clip synthetic grid, one clip predicted; about a second)::

        >>> import tempfile, pathlib
        >>> from hug_vis_dataset.synth import example_emotion_submission, example_release
        >>> from hug_vis_dataset.scoring.runner import run
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> release = example_release(root / "rel", emotions=["Happy", "Sad"])
        >>> sub = example_emotion_submission(root / "sub", {"actor_0001_happy_action_01_script_001": "happy"})
        >>> request = EvaluationRequest("emotion", sub, "toy", release, root / "res", progress=False)
        >>> result = run(request)
        >>> result.coverage.ok, result.coverage.missing
        (1, ['actor_0001_sad_action_01_script_001'])
    """

    # -- what to score, where from and where to, by position as evaluate_submission takes them; the rest by name
    task: str
    predictions: "str | Path"
    model: str
    dataset: "str | Path"
    out: "str | Path" = "results"  # where to: the results root
    _: KW_ONLY
    # -- what to score: a subset of the task's metrics (None: all of them)
    metrics: "Sequence[str] | None" = None
    # -- where from: which revision of a Hub dataset, and whether its shards are checked first
    revision: "str | None" = None
    verify_dataset: bool = True
    # -- where to: an output the caller already claimed (default: out, claimed by the run)
    output: "Output | None" = field(default=None, compare=False, repr=False)
    into_existing: bool = False
    # -- the re-run rule
    retry_failed: bool = True
    overwrite: bool = False
    # -- how: the engine and the device
    backend: str = "local"
    num_proc: int = 1
    ray_address: "str | None" = None
    device: str = "cpu"
    batch_size: "int | None" = None
    gpus_per_worker: "float | None" = None
    chunk_frames: int = 32
    flush_every: int = 8
    # -- what the run must compute, and what it records
    require_all_metrics: bool = False
    protocol: "str | None" = None
    command_line: "Sequence[str] | None" = None
    # -- what it says while it runs: watchers, never a change to what is stored
    progress: bool = True
    on_scored: "Callable[[int, int], None] | None" = field(default=None, compare=False)
    on_persisted: "Callable[[int], None] | None" = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # One place for every refusal a request can get before anything runs, in the order the runner always
        # checked them: the engine's options, the GPU request, then the task.
        check_run_options(self.num_proc, self.chunk_frames, self.flush_every, self.backend)
        check_gpus_per_worker(self.backend, self.gpus_per_worker)
        catalog.task(self.task)  # ValueError naming the known tasks
        if self.protocol not in (None, catalog.CLIP, catalog.RVM):  # the task tables' protocols
            raise RunOptionError(f"protocol must be {catalog.CLIP} or {catalog.RVM} (or None: the task's own), "
                                 f"got {self.protocol!r}")
        # frozen: normalised through object.__setattr__, once, here
        object.__setattr__(self, "metrics", _names("metrics", self.metrics, "('psnr', 'ssim')"))
        object.__setattr__(self, "command_line", _names("command_line", self.command_line, "['hugvis', 'evaluate']"))

    @property
    def recorded_command_line(self) -> list[str]:
        """The command line the summary records: the request's, else this process's ``sys.argv``."""
        import sys

        return list(self.command_line if self.command_line is not None else sys.argv)


__all__ = ["BACKENDS", "EvaluationRequest", "RunOptionError", "check_gpus_per_worker", "check_run_options"]

"""How a task scorer calls the function a catalog row names (``MetricSpec.implementation`` and ``.call``).

A per-clip row names its function in :mod:`hug_vis_dataset.metrics`; its ``call`` says how the task's
pass calls it (:data:`hug_vis_dataset.catalog.CALLS`):

* ``per-frame`` (:func:`frame_function`, :class:`FrameMeans`): ``fn(pred_chunk, ref_chunk)`` returns one
  value per frame pair; it is fed every chunk of the task's one decode (uint8 RGB ``(n, H, W, 3)`` frames
  in the generation pass, alpha mattes as float32 ``(n, H, W)`` in [0, 1] in the matting pass), and the
  clip value is the exactly rounded mean over frames
  (:class:`~hug_vis_dataset.metrics.exact_sum.ExactSum`: it does not depend on chunking). A row with
  ``networks`` gets them first and the batch size last: ``fn(net, pred_chunk, ref_chunk, batch)`` (LPIPS).
* ``per-clip`` (:func:`clip_function`): ``fn(pred)`` for a reference-free row, ``fn(pred, ref)`` otherwise,
  on the clip decoded once for all such rows (voice cloning: 16 kHz mono float32 samples); networks first.
* ``kernel``: the task's own pass calls it (:attr:`~hug_vis_dataset.tasks.base.TaskScorer.kernels`); the
  rows naming one kernel are computed by one call (the fused matting kernel, DNSMOS's four scores).

So a new frame-paired metric of a video or matting task, or a per-clip audio metric, is one catalog row
and one function: no scorer changes (``tests/test_dispatch.py``). A per-frame or per-clip function that
raises fails its own row with its error text, never its neighbours; a missing network or weight file
(:func:`setup_errors`) is raised, so the evaluate door stops on it as before.

Example:
    >>> import numpy as np
    >>> from hug_vis_dataset.tasks.models import ModelCache
    >>> means = FrameMeans(["psnr"], ModelCache(), {})
    >>> x = np.zeros((2, 16, 16, 3), np.uint8)
    >>> means.feed(x, x); means.feed(x[:1], x[:1])
    >>> means.n, means.values()
    (3, {'psnr': 100.0})
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .. import catalog
from ..metrics.exact_sum import ExactSum


def rows_naming(metrics: Iterable[str], implementation: str) -> list[str]:
    """The requested rows whose implementation is ``implementation`` (a kernel's rows), in order."""
    return [m for m in metrics if catalog.spec(m).implementation == implementation]


def rows_calling(metrics: Iterable[str], call: str) -> list[str]:
    """The requested rows called as ``call`` (:data:`~hug_vis_dataset.catalog.PER_FRAME` ...), in order."""
    return [m for m in metrics if catalog.spec(m).call == call]


@functools.lru_cache(maxsize=None)
def setup_errors() -> tuple[type[BaseException], ...]:
    """Errors of the installation, not of a clip (missing or broken weights, an unavailable metric):
    a pass never records them as a row's failure, the scorer's group step does (or the door stops)."""
    from ..weights import WeightsHashError, WeightsMissingError
    from .base import MetricUnavailable

    return (WeightsMissingError, WeightsHashError, MetricUnavailable)


def frame_batch(models, options: Mapping[str, Any]) -> int:
    """Frame pairs per forward pass of a per-frame network: ``batch_size``, default 1 on the CPU, else 8."""
    return int(options.get("batch_size") or (1 if models.device == "cpu" else 8))


def frame_function(metric: str, models, options: Mapping[str, Any]) -> Callable[[np.ndarray, np.ndarray], Any]:
    """``(pred_chunk, ref_chunk) -> per-frame values`` of a per-frame row, its networks bound (loaded now)."""
    row = catalog.spec(metric)
    function = catalog.implementation_of(row)
    if not row.networks:
        return function
    networks, batch = [models.get(kind) for kind in row.networks], frame_batch(models, options)
    return lambda pred, ref: function(*networks, pred, ref, batch)


def clip_function(metric: str, models) -> Callable[[Any, Any], float]:
    """``(pred, ref) -> value`` of a per-clip row (``ref`` unused by a reference-free row), networks bound."""
    row = catalog.spec(metric)
    function = catalog.implementation_of(row)
    networks = [models.get(kind) for kind in row.networks]
    if row.mode == catalog.REFERENCE_FREE:
        return lambda pred, ref: function(*networks, pred)
    return lambda pred, ref: function(*networks, pred, ref)


def needs_reference(metrics: Iterable[str]) -> bool:
    """Some of the (per-clip) rows compare with the reference: it must be decoded too."""
    return any(catalog.spec(m).mode != catalog.REFERENCE_FREE for m in metrics)


def error_text(err: BaseException) -> str:
    """How a row's failure reads in its stored row (``"ValueError: ..."``)."""
    return f"{type(err).__name__}: {err}"


def clip_values(metrics: Sequence[str], models, pred: Any, ref: Any) -> tuple[dict[str, float], dict[str, str]]:
    """``(values, errors)`` of per-clip rows on one decoded clip: a row that raises is in ``errors`` alone."""
    values, errors = {}, {}
    for metric in metrics:
        try:
            values[metric] = float(clip_function(metric, models)(pred, ref))
        except setup_errors():
            raise
        except Exception as err:  # noqa: BLE001 - this row's failure, recorded, never dropped
            errors[metric] = error_text(err)
    return values, errors


class FrameMeans:
    """Per-frame rows fed chunk by chunk from one decode; exact per-clip means, per-frame values on request.

    Args:
        metrics: per-frame rows (:data:`~hug_vis_dataset.catalog.PER_FRAME`).
        models: the :class:`~hug_vis_dataset.tasks.models.ModelCache` (networks are loaded now).
        options: ``batch_size``.
        keep: rows whose per-frame values are kept (:meth:`frame_rows`: the ``rvm`` protocol needs them).
    """

    def __init__(self, metrics: Sequence[str], models, options: Mapping[str, Any], keep: Iterable[str] = ()) -> None:
        self.functions = {m: frame_function(m, models, options) for m in metrics}
        self.sums = {m: ExactSum() for m in metrics}  # exact: the mean cannot depend on chunking
        self.kept: dict[str, list[np.ndarray]] = {m: [] for m in keep if m in self.functions}
        self.errors: dict[str, str] = {}
        self.n = 0

    def __bool__(self) -> bool:
        return bool(self.functions)

    def feed(self, pred: np.ndarray, ref: np.ndarray) -> None:
        """One chunk of frame pairs; a row whose function raises (or returns another count) stops here."""
        for metric, function in self.functions.items():
            if metric in self.errors:
                continue
            try:
                values = np.asarray(function(pred, ref), np.float64)
                if values.shape != (len(pred),):
                    raise ValueError(f"{catalog.spec(metric).implementation} returned an array of shape "
                                     f"{values.shape} for {len(pred)} frame pairs; one value per pair expected")
            except setup_errors():
                raise
            except Exception as err:  # noqa: BLE001 - this row's failure, recorded, never dropped
                self.errors[metric] = error_text(err)
                continue
            self.sums[metric].add(values)
            if metric in self.kept:
                self.kept[metric].append(values)
        self.n += len(pred)

    def fail(self, error: str) -> None:
        """Every row fails with ``error`` (frames that cannot be compared)."""
        self.errors.update(dict.fromkeys(self.functions, error))

    @property
    def failed(self) -> bool:
        return self.errors.keys() >= self.functions.keys()

    def values(self) -> dict[str, float]:
        """Per-clip means of the rows that did not fail (none before a frame was fed)."""
        if self.n == 0:
            return {}
        return {m: total.value() / self.n for m, total in self.sums.items() if m not in self.errors}

    def frame_rows(self) -> list[dict]:
        """``{"metric", "frame", "value"}`` of the kept rows that did not fail, frames from 0."""
        return [{"metric": m, "frame": i, "value": float(v)}
                for m, chunks in self.kept.items() if m not in self.errors
                for i, v in enumerate(np.concatenate(chunks) if chunks else ())]

"""Metric functional core: pure functions per task, plus one metadata table.

Each task module (``matting``, ``emotion``, ``generation``, ``voice``, ``crosstask``) declares
``METRIC_INFO: dict[str, MetricInfo]``; :func:`metric_info` finds any metric by name so the
CLI, the evaluate modules, reports and the Space read direction and scaling from one place.

Example:
    >>> metric_info("dtssd").higher_is_better
    False
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

TASK_MODULES: dict[str, str] = {
    "matting": "hug_vis_dataset.metrics.matting",
    "emotion": "hug_vis_dataset.metrics.emotion",
    "generation": "hug_vis_dataset.metrics.generation",
    "voice": "hug_vis_dataset.metrics.voice",
    "crosstask": "hug_vis_dataset.metrics.crosstask",
}


@dataclass(frozen=True)
class MetricInfo:
    """Metadata every metric declares (torchmetrics style).

    Attributes:
        name: machine name, also the evaluate module folder (``metrics/<name>``).
        display: the paper's column header (``dtSSD``).
        task: ``matting``, ``emotion``, ``audio_driven``, ``vision_driven``, ``voice_cloning`` or ``crosstask``.
        higher_is_better: direction of improvement.
        scale: factor applied to the raw value to get the paper's unit (MAD x1e3 -> 1000.0).
        paper_table: where the paper reports it (``"Table 11"``).
        needs_weights: names of pretrained files from the weights registry (empty if none).
        description: one line for cards and reports.
    """

    name: str
    display: str
    task: str
    higher_is_better: bool
    scale: float = 1.0
    paper_table: str = ""
    needs_weights: tuple[str, ...] = ()
    description: str = ""


def all_metric_info() -> dict[str, MetricInfo]:
    """Every declared metric, by name, across the task modules that exist."""
    table: dict[str, MetricInfo] = {}
    for module_name in TASK_MODULES.values():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            if err.name == module_name:
                continue  # task not built yet
            raise
        table.update(getattr(module, "METRIC_INFO", {}))
    return table


def metric_info(name: str) -> MetricInfo:
    table = all_metric_info()
    try:
        return table[name]
    except KeyError:
        raise KeyError(f"unknown metric {name!r}; known: {sorted(table)}") from None

"""Shared pieces of the ``metrics/<name>`` evaluate modules.

The modules hold no metric math: they declare features and call the library. This file
keeps their boilerplate (paper citation, feature specs, MetricInfo) in one place.

Example:
    >>> info = metric_module_info("dtssd", "Temporal coherence of alpha mattes.", PATH_PAIR_FEATURES)
    >>> sorted(info.features)
    ['predictions', 'references']
"""

from __future__ import annotations

from typing import Any, Mapping

HUGVIS_CITATION = """\
@article{hugvis2026,
  title   = {HUG-VIS: A Condition-Aligned Human-Centred Benchmark for Understanding and Generation},
  author  = {HUG-VIS authors},
  year    = {2026}
}
"""
HOMEPAGE = "https://huggingface.co/datasets/hugvis/hug-vis"
CODEBASE = "https://github.com/hugvis/hug-vis"


def _features(spec: Mapping[str, str]):
    import datasets

    return datasets.Features({name: datasets.Value(dtype) for name, dtype in spec.items()})


# Clips are passed as paths (a PNG folder, a video or a WAV file): Arrow-encoding large
# arrays through add_batch is slow (evaluate#513), a path is one short string.
PATH_PAIR_FEATURES = {"predictions": "string", "references": "string"}
LABEL_PAIR_FEATURES = {"predictions": "string", "references": "string"}
RESULT_ROW_FEATURES = {"model": "string", "clip_id": "string", "metric": "string", "value": "float64"}
# Cross-task analyses need the task: csim is scored by both audio- and vision-driven generation.
TASK_RESULT_ROW_FEATURES = {
    "model": "string", "task": "string", "clip_id": "string", "metric": "string", "value": "float64",
}


def metric_module_info(
    name: str,
    description: str,
    features: Mapping[str, str],
    inputs_description: str = "",
    reference_urls: "list[str] | None" = None,
) -> Any:
    """An ``evaluate.MetricInfo`` with one feature spec (several make evaluate pick the first that fits)."""
    import evaluate

    return evaluate.MetricInfo(
        module_type="metric",
        description=description,
        citation=HUGVIS_CITATION,
        inputs_description=inputs_description,
        features=_features(features),
        homepage=HOMEPAGE,
        codebase_urls=[CODEBASE],
        reference_urls=list(reference_urls or []),
    )

"""The evaluate door: what every ``metrics/<name>/`` module computes, and the module folders themselves.

A module's ``_compute`` calls :func:`compute` and nothing else. For a metric, :func:`compute` pairs
the inputs (by the clip ids their paths carry, when both sides carry one), runs the task scorer's
:meth:`~hug_vis_dataset.tasks.base.TaskScorer.score_clip` on every pair, builds result rows with
the runner's row builder and aggregates them with the report's protocols
(:func:`hug_vis_dataset.scoring.aggregate.task_table`), so a module, ``hugvis evaluate``, the
Space and the report give the same number for the same clips. For an analysis, :func:`compute`
takes stored result rows as they are (``rows.parquet`` columns) and runs the same function the
report runs.

The folders ``metrics/<name>/`` themselves are generated from the catalog by
:mod:`hug_vis_dataset.publish.module_folders`.

Example:
    >>> import numpy as np, tempfile, os
    >>> from hug_vis_dataset.readers.media import write_alpha_pngs
    >>> d = tempfile.mkdtemp()
    >>> _ = write_alpha_pngs(os.path.join(d, "p"), [np.zeros((2, 4, 4), np.uint8)])
    >>> _ = write_alpha_pngs(os.path.join(d, "t"), [np.full((2, 4, 4), 51, np.uint8)])
    >>> r = compute("mad", predictions=[os.path.join(d, "p")], references=[os.path.join(d, "t")])
    >>> round(r["mad"], 6), r["per_clip"], r["n_ok"]
    (200.0, [200.0], 1)
"""

from __future__ import annotations

import math
import re
from pathlib import PurePosixPath
from typing import Any, Mapping, Sequence

from . import analyses, catalog
from .analyses import ModuleInputError, mos_agreement_by_task  # noqa: F401 - the modules' error, and the report's entry
from .presentation.analysis_fields import ANALYSIS_FIELDS
from .presentation.citation import CITATION, CODEBASE, HOMEPAGE
from .scoring.store import STORED_COLUMNS
from .datamodel.results import SAMPLE_COLUMN

#: The model name of rows built by a module (one submission per call).
MODULE_MODEL = "submission"

# Reference kind a metric's ``references`` input is, per task (see TaskScorer.reference_kinds).
_REFERENCE_KIND = {
    "matting": "alpha",
    "matting_boundary": "alpha",
    "emotion": "emotion",
    "voice_cloning": "audio",
    "audio_driven": "video",
    "vision_driven": "video",
}
_PORTRAIT_METRICS = {"csim"}

_CLIP_IN_PATH = re.compile(r"actor_(\d+)[/\\_]([A-Za-z]+)[/\\_]action_(\d+)[/\\_]script_(\d+)",
                           re.IGNORECASE | re.ASCII)


# ----------------------------------------------------------------------------- inputs
def clip_key(path: str) -> "str | None":
    """The clip id a path names (a submission name or a release path), or ``None``.

    Example:
        >>> clip_key("pred/actor_0001_afraid_action_01_script_002.mp4")  # either spelling of Afraid
        'actor_0001_fearful_action_01_script_002'
        >>> clip_key("release/alpha_matte/actor_0001/happy/action_01/script_001")
        'actor_0001_happy_action_01_script_001'
        >>> clip_key("gen/a.mp4") is None
        True
    """
    from .datamodel.grid import ClipId, ClipIdError

    matches = list(_CLIP_IN_PATH.finditer(str(path)))
    if not matches:
        return None
    actor, emotion, action, script = matches[-1].groups()
    try:
        return ClipId.parse(f"actor_{actor}_{emotion}_action_{action}_script_{script}").format()
    except ClipIdError:
        return None


def sample_number(path: str) -> "int | None":
    """The sample a prediction path is, when it is one of several samples of its clip (``<clip_id>/sample_<k>.mp4``,
    a matting ``<clip_id>/sample_<k>/`` folder), else ``None``.

    >>> sample_number("pred/actor_0001_sad_action_01_script_001/sample_2.mp4"), sample_number("pred/c.mp4")
    (2, None)
    """
    from .tasks.submission import sample_number as number_of

    # a folder's name has no suffix, so its stem is its name: read as a file's, it is read right either way
    return number_of(PurePosixPath(str(path).replace("\\", "/").rstrip("/")).name, is_dir=False)


def pair_inputs(predictions: Sequence[str], references: "Sequence[str] | None") -> list[str]:
    """Clip keys of the inputs, after checking that position ``i`` pairs the same clip on both sides.

    When every prediction and every reference path carries a clip id, pairs must agree and no clip
    may repeat, unless each of its predictions is another sample of it (:func:`sample_number`: several samples per
    clip, whose values the headline averages per clip); otherwise inputs pair by position and are keyed ``#<index>``.

    Raises:
        ModuleInputError: different lengths, empty input, mismatched or duplicated clip ids.
    """
    if not len(predictions):
        raise ModuleInputError("no predictions to score")
    if references is not None and len(references) != len(predictions):
        raise ModuleInputError(f"{len(predictions)} predictions but {len(references)} references: give one "
                               "reference per prediction, in the same order")
    pred_keys = [clip_key(str(p)) for p in predictions]
    ref_keys = [clip_key(str(r)) for r in references] if references is not None else pred_keys
    if any(k is None for k in pred_keys) or any(k is None for k in ref_keys):
        return [f"#{i}" for i in range(len(predictions))]
    bad = [(i, p, r) for i, (p, r) in enumerate(zip(pred_keys, ref_keys)) if p != r]
    if bad:
        shown = "; ".join(f"#{i}: prediction {p} vs reference {r}" for i, p, r in bad[:3])
        raise ModuleInputError(f"{len(bad)} prediction(s) paired with another clip's reference ({shown}"
                               f"{'; ...' if len(bad) > 3 else ''}): order both lists the same way")
    seen: dict[tuple, int] = {}
    for i, key in enumerate(pred_keys):
        sample = sample_number(str(predictions[i]))
        if (key, sample) in seen or (sample is None and any(k == key for k, _ in seen)) or (key, None) in seen:
            first = next(j for (k, _), j in seen.items() if k == key)
            raise ModuleInputError(f"clip {key} is given twice (inputs #{first} and #{i}): score each clip once, or "
                                   "each sample of it once (<clip_id>/sample_<k>)")
        seen[(key, sample)] = i
    return list(pred_keys)


def _task_of(metrics: Sequence[str], task: "str | None") -> str:
    tasks = catalog.spec(metrics[0]).tasks
    if task is None:
        return tasks[0]
    if task not in tasks:
        raise ModuleInputError(f"{metrics[0]} is a metric of {', '.join(tasks)}, not {task}")
    return task


def _reference(task: str, metric_names: Sequence[str], ref: "str | None") -> dict[str, str]:
    if ref is None:
        return {}
    if set(metric_names) <= _PORTRAIT_METRICS:
        return {"portrait": str(ref)}
    kinds = {catalog.spec(m).reference_kind for m in metric_names}
    if len(kinds) == 1 and "" not in kinds:  # the reference is not the task's media (CER: the target text)
        return {kinds.pop(): str(ref)}
    return {_REFERENCE_KIND[task]: str(ref)}


def _setup_errors() -> tuple[type[BaseException], ...]:
    from .tasks.dispatch import setup_errors

    return setup_errors()


# ----------------------------------------------------------------------------- metrics
def compute_metric(name: str, predictions: Sequence[str], references: "Sequence[str] | None" = None, *,
                   task: "str | None" = None, protocol: "str | None" = None, chunk_frames: int = 32,
                   device: str = "cpu", batch_size: "int | None" = None, models: Any = None) -> dict[str, Any]:
    """Score clips through the task scorer and aggregate like the report.

    Args:
        name: a metric or a suite of :mod:`hug_vis_dataset.catalog`.
        predictions: one prediction per clip (a path; emotion: the answer text).
        references: the reference of each prediction (see each module card), same order.
        task: the task whose definition to use when the metric serves several (CSIM: identical).
        protocol: aggregation of the headline value (default: the task table's protocol).
        chunk_frames: frames decoded at a time (never changes a value).
        device: where network metrics run.
        batch_size: frames/windows per forward pass of a network (default per metric; never changes a value
            beyond float rounding).
        models: a :class:`~hug_vis_dataset.tasks.models.ModelCache` or a dict kind -> model.

    Returns:
        ``{<metric>: value in the paper's unit, ..., "per_clip": stored values in input order (a list;
        a dict of lists for a suite), "clip_ids", "n_ok", "n_failed", "errors", "protocol", "aggregation"}``.
        Several samples of a clip (``<clip_id>/sample_<k>`` paths) give one ``per_clip`` value per input, and the
        headline and counts read each clip's mean over its samples, as the task tables do.
        ``protocol`` is the one the headline was aggregated under, whatever failed; ``aggregation`` says what it is
        in words, so a headline that differs from the per-clip mean of one clip (RVM counts frame 0 of dtSSD as 0:
        one clip of T frames gives (T-1)/T of its per-clip value) is never read as the clip's score.
    """
    from .scoring.aggregate import task_table
    from .tasks import ModelCache, get_task, result_rows

    setup_errors = _setup_errors()  # missing or broken weights stop the module: they are not a clip's failure
    names = catalog.suite_or_metric(name)
    # a corpus ratio's rows are scored with it (one call) and aggregated into its value (scoring/aggregate.py)
    scored = names + tuple(part for m in names for part in catalog.spec(m).ratio_of if part not in names)
    task = _task_of(names, task)
    scorer = get_task(task)
    cache = models if isinstance(models, ModelCache) else ModelCache(device, overrides=models)
    keys = pair_inputs(predictions, references)
    sampled = len(set(keys)) < len(keys)  # several samples of a clip (pair_inputs allows nothing else twice)
    options = {"chunk_frames": int(chunk_frames), "device": device, "batch_size": batch_size}
    if catalog.spec(names[0]).mode == catalog.SET_LEVEL:
        refs = [_reference(task, names, r) for r in references or ()]
        values = scorer.score_set([str(p) for p in predictions], refs, names, cache, options)
        return {**{m: catalog.to_paper_units(m, values[m]) for m in names}, "n_clips": len(keys),
                "clip_ids": keys}
    rows, frames, errors = [], [], []
    for i, (key, pred) in enumerate(zip(keys, predictions)):
        reference = _reference(task, names, references[i] if references is not None else None)
        try:
            # No first-frame decode in the check: the pass decodes the clip right after and fails it
            # there (one decode per video and module; the check's own was 110 ms of a 1080p call).
            scorer.check(str(pred), reference, {"decode_first": False})
            scores, failed = scorer.score_groups(str(pred), reference, scored, cache, options, reraise=setup_errors)
        except setup_errors:
            raise
        except Exception as err:  # noqa: BLE001 - a clip's failure is counted, like the runner does
            scores, failed = None, {m: f"{type(err).__name__}: {err}" for m in scored}
        if failed:
            errors.append({"index": i, "clip_id": key, "error": "; ".join(dict.fromkeys(failed.values()))})
        sample = {SAMPLE_COLUMN: sample_number(str(pred)) or 0} if sampled else {}  # one clip's samples: averaged
        for metric in scored:
            if metric in failed:
                clip_rows = result_rows(MODULE_MODEL, task, key, {metric: math.nan}, error=failed[metric],
                                        status="failed")
            else:
                clip_rows = result_rows(MODULE_MODEL, task, key, {metric: scores.values[metric]})
            rows += [{**r, **sample} for r in clip_rows]
        if scores is not None:
            frames += [{"model": MODULE_MODEL, "task": task, "clip_id": key, **f, **sample} for f in scores.frames]
    import pandas as pd

    row_frame = pd.DataFrame(rows)
    frame_rows = pd.DataFrame(frames) if frames else None
    protocol = protocol or catalog.task_protocol(task)
    # The requested protocol stays the protocol (no per-frame rows: every clip failed, so no value under it either).
    table = task_table(row_frame, frame_rows, None, protocol=protocol, metrics=names)
    summary = table.loc[MODULE_MODEL] if MODULE_MODEL in table.index else {}
    per_clip = {m: [None if not math.isfinite(r["value"]) else r["value"]
                    for r in rows if r["metric"] == m] for m in names}
    return {**{m: float(summary[m]) if m in getattr(summary, "index", ()) else math.nan for m in names},
            "per_clip": per_clip[names[0]] if len(names) == 1 else per_clip, "clip_ids": keys,
            "n_ok": int(summary["n_ok"]) if len(table) else 0, "n_failed": int(summary["n_failed"]) if len(table) else 0,
            "errors": errors,
            "protocol": protocol, "aggregation": catalog.PROTOCOL_WORDS[protocol]}


def compute_emotion_accuracy(predictions: Sequence[str], references: Sequence[str],
                             input_settings: "Sequence[str] | None" = None) -> dict[str, Any]:
    """Emotion accuracy through the scorer, plus the library's breakdown (per emotion, confusion, F1)."""
    from .metrics.emotion import emotion_accuracy

    out = compute_metric("emotion_accuracy", predictions, references)
    return {**emotion_accuracy(predictions, references, input_settings), **out}


# ----------------------------------------------------------------------------- analyses
def compute_analysis(name: str, rows: Mapping[str, Sequence], **options: Any) -> dict[str, Any]:
    """Run a cross-task analysis on stored result rows (columns of ``rows.parquet``), as the report does:
    the function its catalog row names (:func:`hug_vis_dataset.analyses.run`)."""
    return analyses.run(name, rows, **options)


def compute(name: str, **inputs: Any) -> dict[str, Any]:
    """What ``evaluate.load("hugvis/<name>").compute(**inputs)`` returns (see each module card)."""
    if name in catalog.METRIC_NAMES and catalog.spec(name).mode == catalog.ANALYSIS:
        columns = {c: inputs.pop(c) for c in list(inputs) if c in ROW_FEATURES or c in ROW_EXTRA_COLUMNS}
        return compute_analysis(name, columns, **inputs)
    if name == "emotion_accuracy":
        return compute_emotion_accuracy(**inputs)
    return compute_metric(name, **inputs)


# ----------------------------------------------------------------------------- features and info
#: The columns of stored result rows (``rows.parquet``) an analysis reads.
ROW_FEATURES = {"model": "string", "task": "string", "clip_id": "string", "metric": "string", "value": "float64"}
#: The other columns of stored rows: accepted as they are (``compute(**rows)``), ``status`` is honoured.
ROW_EXTRA_COLUMNS = tuple(c for c in STORED_COLUMNS if c not in ROW_FEATURES) + (SAMPLE_COLUMN,)


def feature_spec(name: str) -> dict[str, str]:
    """The one feature spec of a module: paths (short strings: Arrow-encoding arrays through
    ``add_batch`` is slow, evaluate#513), labels, or stored result rows."""
    metric_names = catalog.suite_or_metric(name)
    mode = catalog.spec(metric_names[0]).mode
    if mode == catalog.ANALYSIS:
        return dict(ROW_FEATURES)
    if mode == catalog.REFERENCE_FREE:
        return {"predictions": "string"}
    return {"predictions": "string", "references": "string"}


def module_info(name: str) -> Any:
    """The ``evaluate.MetricInfo`` of a module (one feature spec: several make evaluate pick the first that fits)."""
    import datasets
    import evaluate

    return evaluate.MetricInfo(
        module_type="metric", description=description(name), citation=CITATION,
        inputs_description=inputs_description(name),
        features=datasets.Features({k: datasets.Value(v) for k, v in feature_spec(name).items()}),
        homepage=HOMEPAGE, codebase_urls=[CODEBASE], reference_urls=list(reference_urls(name)),
    )


def reference_urls(name: str) -> tuple[str, ...]:
    """The reference implementations a module's metrics were checked against, without repeats."""
    urls: list[str] = []
    for metric in catalog.suite_or_metric(name):
        urls += [u for u in catalog.spec(metric).reference_urls if u not in urls]
    return tuple(urls)


def description(name: str) -> str:
    """One paragraph: what the module computes, from the catalog."""
    if name in catalog.SUITES:
        members = ", ".join(catalog.spec(m).label for m in catalog.SUITES[name])
        return f"HUG-VIS {members} in one pass ({catalog.spec(catalog.SUITES[name][0]).paper_table})."
    spec = catalog.spec(name)
    where = f" (HUG-VIS {spec.paper_table})" if spec.paper_table else ""
    return f"{spec.description.rstrip('.')}{where}."


_INPUTS = {
    "matting": ("alpha clips: a PNG folder (000000.png ...) or a lossless gray video per clip",
                "the reference alpha clip of each prediction (release `alpha_matte/...` folder)"),
    "matting_boundary": ("alpha clips: a PNG folder (000000.png ...) or a lossless gray video per clip",
                         "the reference alpha clip of each prediction (regions are defined on it)"),
    "audio_driven": ("generated videos (MP4), one per clip", "the reference video of each clip"),
    "vision_driven": ("generated videos (MP4), one per clip", "the reference video of each clip"),
    "voice_cloning": ("generated speech files (WAV/FLAC), one per clip", "the recorded reference audio of each clip"),
    "emotion": ("answers: emotion labels or free text (English or Chinese)",
                "the instructed emotion of each clip (label or alias: Happy, fearful, 惊讶 ...)"),
}


def inputs_description(name: str) -> str:
    """The ``Args``/``Returns`` text of a module, derived from the catalog."""
    names = catalog.suite_or_metric(name)
    spec = catalog.spec(names[0])
    if spec.mode == catalog.ANALYSIS:
        extra = {
            "emotion_difficulty": "    metrics (list of [label, task, metric, orientation], optional): default the paper's eight.\n"
                                  "    orientations (dict label -> retain|negate|complement, optional): overrides.\n",
            "difficulty_agreement": "    metrics, orientations (optional): as emotion_difficulty.\n",
            "source_difficulty": "    ad_metrics, vd_metrics (dict metric -> retain|negate|complement, optional).\n",
            "motion_difficulty": "",
            "variance_decomposition": "    metric_name (str): the stored metric to decompose; task (str, optional) when it "
                                      "serves two.\n",
            "neighbour_significance": "    metric_name (str), task (str, optional); n_resamples, n_boot, level, seed, order "
                                      "(optional).\n",
            "detectable_difference": "    metric_name (str), task (str, optional); actor_counts (list of int), alpha, power "
                                     "(optional).\n",
            "human_metric_agreement": "    ratings (str, optional): the ratings CSV (rater, clip_id, model, criterion, "
                                      "score); preferences (str, optional): a pairwise CSV; at least one of them; "
                                      "top_k, level, n_resamples, n_boot, n_perm, seed, all_raters (optional).\n",
            "metric_mos_agreement": "    ratings (str): the ratings CSV (rater, clip_id, model, criterion, score); "
                                    "preferences (str, optional): a pairwise CSV (rater, task, clip_id, system_a, "
                                    "system_b, criterion, outcome); top_k, n_boot, seed (optional).\n",
        }[name]
        return ("\nArgs:\n    model, task, clip_id, metric, value (lists): stored result rows; the other columns of "
                "`rows.parquet` (status, error, actor_id ...) may be passed too, so `compute(**rows)` with "
                "`rows = pd.read_parquet(...).to_dict('list')` of every task works; failed rows and reference "
                "rows (Real audio, motion statistics) are left out.\n"
                f"{extra}Returns:\n" + "".join(f"    {key}: {text}.\n" for key, text in ANALYSIS_FIELDS[name])
                + "Examples:\n    see the module card (its example runs on the Space's bundled rows).\n")
    task = spec.tasks[0]
    pred, ref = _INPUTS[task]
    if names == ("csim",):
        ref = "the source portrait of each clip: an image, or the reference video (its first frame)"
    if spec.reference_kind == "text":
        ref = "the target text of each clip (what it should say: the voice_cloning config's target_text)"
    lines = ["", "Args:", f"    predictions (list of str): {pred}."]
    if spec.mode != catalog.REFERENCE_FREE:
        pairing = "paired by position" if spec.reference_kind == "text" else "clip ids in both paths are checked"
        lines.append(f"    references (list of str): {ref}; same order ({pairing}).")
    if spec.mode != catalog.LABEL:
        lines += ["    chunk_frames (int, optional): frames decoded at a time (never changes a value).",
                  "    device (str, optional): cpu, cuda or auto, for network metrics.",
                  "    batch_size (int, optional): frames or windows per forward pass of a network metric."]
    if len(spec.tasks) > 1:
        lines.append(f"    task (str, optional): {' or '.join(spec.tasks)} (one definition; recorded in rows).")
    if spec.protocol == catalog.RVM:
        lines.append('    protocol (str, optional): "rvm" (paper default) or "clip" (mean of per-clip means).')
    lines += ["Returns:", f"    {', '.join(names)} (paper units, aggregated under `protocol`), per_clip (each clip's own "
              "value, input order), clip_ids, n_ok, n_failed, errors (one per failed clip), protocol, aggregation (the "
              "protocol in words).",
              "Examples:", "    see the module card (its example runs on the Space's bundled files).", ""]
    return "\n".join(lines)

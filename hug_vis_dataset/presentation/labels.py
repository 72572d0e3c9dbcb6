"""How a person reads the toolkit's keys: the catalog's labels (:func:`hug_vis_dataset.catalog.label_of`, a task's
:attr:`~hug_vis_dataset.catalog.TaskSpec.label`, a reserved model's printed name) applied where text is shown, in
the one way every surface (the report, the board, the Space, the command line) applies them.

The keys stay the values behind the labels: a CSV written for a program keeps its column keys; a table, a heading, a
figure or a line a person reads shows labels (``tests/test_labels_a_person_reads.py`` scans every surface for every
key the package defines).

Example:
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"task": ["voice_cloning"], "metric": ["distill_mos"], "criterion": ["lip_sync"],
    ...                       "n_systems": [3], "same_top1": [True], "top1_metric": ["real-audio"]})
    >>> readable(frame).to_dict("records")
    [{'Task': 'Voice cloning', 'Metric': 'Distill-MOS', 'Criterion': 'Lip Synchronization', 'Systems': 3, 'Same best': 'yes', 'Best by metric': 'Real audio (reference)'}]
    >>> skipped_words({"cer": "skipped: needs weights", "cer_edits": "skipped: needs weights", "utmos": "x"})
    {'UTMOS': 'x', 'CER': 'needs weights'}
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .. import catalog
from .escaping import markdown_code_text
from ..datamodel.results import reserved_label

#: Columns whose values are metric keys, MOS criteria, task keys or model names (each shown by its label).
METRIC_COLUMNS = frozenset({"metric", "metric_a", "metric_b", "judge", "against"})
CRITERION_COLUMNS = frozenset({"criterion"})
TASK_COLUMNS = frozenset({"task"})
MODEL_COLUMNS = frozenset({"model", "system", "system_a", "system_b", "next_model", "top1_metric", "top1_mos",
                           "top1_pairwise", "top1_against"})


def task_label(task: Any) -> str:
    """A task as a person reads it (a name the catalog does not know, as given).

    >>> task_label("vision_driven"), task_label("other")
    ('Vision-driven video generation', 'other')
    """
    return catalog.task(str(task)).label if str(task) in catalog.task_names() else str(task)


def value_label(column: str, value: Any) -> Any:
    """One cell of a key column (:data:`METRIC_COLUMNS` ...) as a person reads it; any other cell as it is (a
    boolean as yes / no).

    >>> value_label("metric", "csim"), value_label("criterion", "id_similarity"), value_label("n_ok", 3)
    ('CSIM', 'ID Similarity', 3)
    """
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "yes" if value else "no"
    if not isinstance(value, str):
        return value
    if column in METRIC_COLUMNS or column in CRITERION_COLUMNS:
        return catalog.label_of(value)
    if column in TASK_COLUMNS:
        return task_label(value)
    if column in MODEL_COLUMNS:
        return reserved_label(value)
    return value


def readable(frame):
    """A table as a person reads it: the values of its key columns by their labels (:func:`value_label`), then
    every column header that is a key by its label (:func:`hug_vis_dataset.catalog.label_of`)."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype.kind in "bO":  # text or booleans (numbers stay numbers)
            out[column] = [value_label(str(column), v) for v in out[column]]
    return out.rename(columns=lambda c: catalog.label_of(str(c)))


def part_of(name: str) -> str:
    """The metric a stored row belongs to: a corpus ratio's two rows (CER's edits and target characters) belong to
    the ratio; any other row is its own.

    >>> part_of("cer_ref_chars"), part_of("utmos")
    ('cer', 'utmos')
    """
    for spec in catalog.METRICS:
        if name in spec.ratio_of:
            return spec.name
    return name


def skipped_words(skipped: Mapping[str, str]) -> dict[str, str]:
    """A run's skipped rows as a person reads them: metric label -> why (its ``skipped:`` prefix dropped), one entry
    per metric (a ratio's stored rows under the ratio, :func:`part_of`), in the catalog's order."""
    order = {spec.name: i for i, spec in enumerate(catalog.METRICS)}
    out: dict[str, str] = {}
    for name, why in sorted(skipped.items(), key=lambda item: (order.get(part_of(str(item[0])), len(order)), item[0])):
        out.setdefault(catalog.label_of(part_of(str(name))), str(why).removeprefix("skipped: "))
    return out


def skipped_lines(skipped: Mapping[str, str]) -> list[str]:
    """``"<label>: <why>"`` per skipped metric (:func:`skipped_words`).

    >>> skipped_lines({"csim": "skipped: needs weights: run `hugvis weights download arcface_det_10g`"})
    ['CSIM: needs weights: run `hugvis weights download arcface_det_10g`']
    """
    return [f"{label}: {why}" for label, why in skipped_words(skipped).items()]


def skipped_markdown(skipped: Mapping[str, str]) -> list[str]:
    """:func:`skipped_lines` as Markdown list items, the stored reasons escaped (their commands kept as code).

    >>> skipped_markdown({"lpips": "skipped: needs weights: run `hugvis weights download alexnet`"})
    ['- LPIPS: needs weights: run `hugvis weights download alexnet`']
    """
    return [f"- {label}: {markdown_code_text(why)}" for label, why in skipped_words(skipped).items()]


def variance_term(term: str) -> str:
    """A condition factor of the variance decomposition as a person reads it (``emotion:model`` -> Emotion × model).

    >>> variance_term("emotion:model"), variance_term("residual"), variance_term("actor")
    ('Emotion × model', 'Residual', 'Actor')
    """
    words = [catalog.label_of(f"{part}_id") if f"{part}_id" in catalog.COLUMN_LABELS else catalog.label_of(part)
             for part in str(term).split(":")]
    text = " × ".join(w if i == 0 else w.lower() for i, w in enumerate(words))
    return text[:1].upper() + text[1:]


def no_rows(task: str) -> str:
    """Why a finding of ``task`` has nothing to measure (the task as a person reads it, the command as typed).

    >>> no_rows("audio_driven")
    'no per-clip values of Audio-driven video generation: score a submission with `hugvis evaluate audio_driven`'
    """
    return (f"no per-clip values of {catalog.task(task).label}: score a submission with "
            f"`hugvis evaluate {task}`")


def why_no_values(task: str, skipped_of_runs: "Sequence[Mapping[str, str]]") -> str:
    """Why ``task`` has no per-clip value, from what its stored runs say (Markdown): no run stored (score one), or
    the runs stored and each metric they could not compute, once, with its reason and the command that fixes it.

    Example:
        >>> why_no_values("audio_driven", [])
        'no per-clip values of Audio-driven video generation: score a submission with `hugvis evaluate audio_driven`'
        >>> why_no_values("audio_driven", [{"csim": "skipped: needs weights: run `hugvis weights download x`"}] * 4)
        '4 Audio-driven video generation run(s) stored, none with per-clip values: CSIM needs weights: run `hugvis weights download x`.'
    """
    if not skipped_of_runs:
        return no_rows(task)
    merged: dict[str, str] = {}
    for skipped in skipped_of_runs:
        merged.update({k: v for k, v in skipped.items() if k not in merged})
    reasons = "; ".join(f"{label} {markdown_code_text(why)}" for label, why in skipped_words(merged).items())
    return (f"{len(skipped_of_runs)} {catalog.task(task).label} run(s) stored, none with per-clip values"
            + (f": {reasons}" if reasons else "") + ".")


def clip_display(clip_id: str) -> str:
    """A clip as a person reads it: actor, emotion (its name as the tables print it), action and script.

    >>> clip_display("actor_0001_fearful_action_01_script_001"), clip_display("free-form")
    ('actor 1 · Afraid · action 1 · script 1', 'free-form')
    """
    from ..datamodel.grid import ClipId, ClipIdError

    try:
        c = ClipId.parse(clip_id)
    except ClipIdError:
        return clip_id
    return f"actor {c.actor_id} · {c.emotion.value} · action {c.action_id} · script {c.script_id}"

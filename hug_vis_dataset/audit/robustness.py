"""Noise floors: what each metric says about the reference (or a submission) after ordinary processing.

:func:`audit_robustness` writes, for every transform of :mod:`.transforms` that applies to the task's
medium, a processed copy of every clip's reference media in the submission layout
(``OUT/variants/<task>/<transform>/``), scores it through the normal scorer
(:func:`hug_vis_dataset.scoring.runner.run` of :func:`audit_request`) into the audit's own results root
``OUT/results/<task>/audit@<transform>/`` -- model names with the reserved prefix
:data:`hug_vis_dataset.datamodel.results.AUDIT_PREFIX`, so reports, analyses and the leaderboard's
readers leave them out -- and tabulates per metric:

* ``identity``: the untouched media scored against the reference (PSNR's 100 dB cap, SSIM 1, MAD 0,
  a reference-free metric's own score of the reference);
* per transform: its value (the task table's protocol) and its **shift**, the mean over clips of the
  per-clip difference to ``identity`` (paper units), with a 95% actor-clustered bootstrap interval
  (set-level FID: the difference of the two values, no interval);
* ``gaps below``: how many neighbour gaps of the paper's table for that metric are smaller than
  the shift's magnitude (those rankings could be reordered by re-encoding alone).

With ``predictions`` the same transforms are applied to a submission instead and the shift is
against the submission as submitted (``audit@pred-identity``): how much a system's score depends
on its output encoding.

Example (not run in doctests: it encodes and scores every clip)::

    audit_robustness("matting", "demo_out/release", "demo_out/audit")
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .. import catalog
from ..readers.json_files import read_json
from ..datamodel.results import AUDIT_PREFIX
from . import transforms as tr

if TYPE_CHECKING:
    from ..scoring.request import EvaluationRequest

#: The medium each task's predictions are (what the transforms act on).
TASK_MEDIUM = {"matting": "alpha", "vision_driven": "video", "audio_driven": "video", "voice_cloning": "audio"}
_DONE = ".complete"


def model_name(transform: str, predictions: bool = False) -> str:
    """The reserved model name of a pseudo-system: ``audit@<transform>`` (``audit@pred-<transform>``).

    Example:
        >>> model_name("h264_crf23"), model_name("identity", predictions=True)
        ('audit@h264_crf23', 'audit@pred-identity')
    """
    return f"{AUDIT_PREFIX}{'pred-' if predictions else ''}{transform}"


@dataclass
class RobustnessResult:
    """What :func:`audit_robustness` produced: the table, skipped transforms and where it is stored."""

    task: str
    table: Any  # DataFrame: metric, transform, value, shift, ci_low, ci_high, n_clips, gaps_below, n_gaps
    skipped: dict[str, str] = field(default_factory=dict)
    metrics_skipped: dict[str, str] = field(default_factory=dict)
    results_root: "Path | None" = None
    source: str = "reference"

    def to_json(self) -> dict:
        records = self.table.to_dict("records") if len(self.table) else []
        clean = [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()}
                 for r in records]
        return {"task": self.task, "source": self.source, "rows": clean, "skipped_transforms": self.skipped,
                "skipped_metrics": self.metrics_skipped}


# ----------------------------------------------------------------------------- variants
def _write_variant(task: str, transform: str, clip_id: str, source: dict, dst_root: Path) -> None:
    """One clip's processed prediction in the task's submission layout."""
    from ..readers.media import write_alpha_pngs, write_wav

    medium = TASK_MEDIUM[task]
    if medium == "alpha":
        write_alpha_pngs(dst_root / clip_id, [tr.process_alpha(source["alpha"], transform, source["fps"])])
    elif medium == "audio":
        write_wav(dst_root / f"{clip_id}.wav", tr.process_audio(source["audio"], source["rate"], transform),
                  source["rate"])
    else:
        suffix = Path(source["path"]).suffix if transform == tr.IDENTITY else tr.output_suffix(transform)
        tr.transform_video_file(source["path"], dst_root / f"{clip_id}{suffix}", transform)


def _clip_sources(task: str, dataset, predictions: "str | Path | None"):
    """Yield ``(clip_id, source media dict)`` in grid order: the reference, or the submission's file."""
    from ..readers.media import iter_alpha_frames, read_audio
    from ..references import open_reference_source
    from ..references.readers import iter_reference_alpha, read_reference_audio, reference_file
    from ..tasks import index_predictions

    refs = open_reference_source(dataset, task)
    index = index_predictions(task, predictions) if predictions is not None else None
    medium = TASK_MEDIUM[task]
    for cid in refs.clip_ids():
        record, ref = refs.record(cid), refs.reference(cid)
        fps = float(getattr(record, "fps", None) or 30.0)
        if index is not None:
            found = index.found.get(cid)
            if not found:
                continue  # a missing prediction stays missing in every variant (coverage says so)
            path = found[0]
            if medium == "alpha":
                yield record.clip_id, {"alpha": np.concatenate(list(iter_alpha_frames(path))), "fps": fps}
            elif medium == "audio":
                audio, rate = read_audio(path)
                yield record.clip_id, {"audio": audio, "rate": rate}
            else:
                yield record.clip_id, {"path": str(path)}
            continue
        if medium == "alpha":
            yield record.clip_id, {"alpha": np.concatenate(list(iter_reference_alpha(ref["alpha"]))), "fps": fps}
        elif medium == "audio":
            audio, rate = read_reference_audio(ref["audio"])
            yield record.clip_id, {"audio": audio, "rate": rate}
        else:
            with reference_file(ref["video"], ".mp4") as path:
                yield record.clip_id, {"path": path}


def write_variants(task: str, dataset, out: "str | Path", transforms: Sequence[str],
                   predictions: "str | Path | None" = None) -> dict[str, Path]:
    """Write each transform's variant folder (skipping finished ones); returns transform -> folder.

    A folder is finished when its marker file exists (written last), so an interrupted audit redoes
    only the variant it was writing. Each variant folder is a work folder of the toolkit's (its transient
    marker): an unfinished one is removed, never a folder the audit did not make.
    """
    from ..outputs import discard, hold

    base = Path(out) / "variants" / task / ("predictions" if predictions is not None else "reference")
    todo = {t: base / t for t in transforms if not (base / t / _DONE).is_file()}
    for folder in todo.values():
        discard(folder)  # refused (one line) for a folder the audit did not make
        with hold(folder, "work", "audit variant"):
            pass
    if todo:
        for clip_id, source in _clip_sources(task, dataset, predictions):
            for transform, folder in todo.items():
                _write_variant(task, transform, clip_id, source, folder)
        for folder in todo.values():
            (folder / _DONE).write_text("", encoding="utf-8")
    return {t: base / t for t in transforms}


# ----------------------------------------------------------------------------- the audit
def paper_gaps(task: str, metric: str) -> list[float]:
    """Neighbour gaps (absolute, paper units) of the paper's table for a metric; per input setting for Table 4.

    Reference rows (Table 9's real audio) are not competitors: their gaps are not neighbour gaps.

    Example:
        >>> len(paper_gaps("matting", "mad")) > 0, paper_gaps("matting", "motion_u")
        (True, [])
        >>> len(paper_gaps("voice_cloning", "utmos"))  # six systems; the real-audio row left out
        5
    """
    from ..datamodel.paper_tables import UNRANKED_SOURCES, paper_frame

    frame = paper_frame()
    sel = frame[(frame["task"] == task) & (frame["metric"] == metric) & ~frame["source"].isin(list(UNRANKED_SOURCES))]
    gaps: list[float] = []
    groups = sel.groupby("input_setting", sort=True) if task == "emotion" else [("", sel)]
    for _, part in groups:
        values = np.sort(part["value"].astype(float).dropna().to_numpy())
        gaps += np.diff(values).tolist()
    return gaps


def shift_table(task: str, rows, tables: dict, baseline: str, n_boot: int = 1000, seed: int = 0):
    """Per (metric, transform): value, shift against ``baseline`` with its actor interval, paper gaps below.

    Args:
        rows: the pseudo-systems' per-clip rows (all transforms of the task).
        tables: model -> the run's task table (paper units): the headline values, and set-level FID.
        baseline: the model every shift is measured from (``audit@identity``).
    """
    import pandas as pd

    from ..statistics.paired import cluster_bootstrap_interval

    ok = rows[rows["status"] == "ok"] if len(rows) else rows
    records = []
    metrics = [m for m in catalog.table_metrics(task)]
    for metric in metrics:
        spec = catalog.spec(metric)
        gaps = paper_gaps(task, metric)
        for model in tables:
            value = _table_value(tables[model], model, metric)
            record = {"metric": metric, "transform": model.split("@", 1)[1].removeprefix("pred-"), "value": value,
                      "shift": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n_clips": 0,
                      "gaps_below": math.nan, "n_gaps": len(gaps)}
            if spec.mode == catalog.SET_LEVEL:
                base = _table_value(tables.get(baseline), baseline, metric)
                record["shift"] = value - base
            elif len(ok):
                mine = ok[(ok["model"] == model) & (ok["metric"] == metric)].set_index("clip_id")["value"]
                ref = ok[(ok["model"] == baseline) & (ok["metric"] == metric)].set_index("clip_id")["value"]
                common = sorted(set(mine.index) & set(ref.index))
                if common:
                    d = (mine.loc[common].to_numpy() - ref.loc[common].to_numpy()) * spec.paper_scale
                    actors = [c.split("_")[1] for c in common]
                    record["shift"], record["n_clips"] = float(d.mean()), len(common)
                    record["ci_low"], record["ci_high"] = cluster_bootstrap_interval(d, actors, n_boot, seed=seed)
            if math.isfinite(record["shift"]) and gaps:
                record["gaps_below"] = int(sum(g < abs(record["shift"]) for g in gaps))
            records.append(record)
    return pd.DataFrame(records)


def _table_value(table, model: str, metric: str) -> float:
    if table is None or model not in table.index or metric not in table.columns:
        return math.nan
    return float(table.loc[model, metric])


def audit_robustness(task: str, dataset: "str | Path", out: "str | Path" = "audit",
                     predictions: "str | Path | None" = None, transforms: "Sequence[str] | None" = None,
                     num_proc: int = 1, n_boot: int = 1000, seed: int = 0, progress: bool = False,
                     device: str = "cpu") -> RobustnessResult:
    """Make the processed variants, score them as reserved pseudo-systems and tabulate the shifts.

    Args:
        task: ``matting``, ``vision_driven``, ``audio_driven`` or ``voice_cloning``.
        dataset: the reference release tree or built repo (``--dataset`` of ``hugvis evaluate``).
        out: the audit's own folder (never a leaderboard results folder): variants, rows, tables.
        predictions: a submission folder: audit its encoding dependence instead of the reference's.
        transforms: a subset of the medium's transforms (default all); ``identity`` is always scored.
        num_proc, device: passed to the scorer.
        n_boot, seed: the shift intervals' actor bootstrap.

    Returns:
        A :class:`RobustnessResult`; ``OUT/robustness_<task>.json`` and ``.md`` hold the same table.

    Raises:
        ValueError: a task without media predictions (emotion, motion).
    """
    from ..outputs import claim
    from ..scoring.runner import run

    if task not in TASK_MEDIUM:
        raise ValueError(f"hugvis audit robustness takes a media task ({', '.join(TASK_MEDIUM)}), not {task!r}")
    chosen = tr.names(TASK_MEDIUM[task], transforms)  # every name checked before anything is written
    output = claim("hugvis audit robustness", out, "audit", inputs=[("--dataset", dataset), ("--predictions", predictions)])
    output.ensure()
    out = Path(out)
    skipped = tr.unavailable(chosen)
    chosen = [t for t in chosen if t not in skipped]
    folders = write_variants(task, dataset, out, ([] if predictions is not None else [tr.IDENTITY]) + chosen,
                             predictions)
    if predictions is not None:
        folders = {tr.IDENTITY: Path(predictions), **folders}
    results_root = out / "results"
    import pandas as pd

    from ..scoring.store import read_stored

    rows, tables, metrics_skipped = [], {}, {}
    for transform, folder in folders.items():
        model = model_name(transform, predictions is not None)
        res = run(audit_request(task, folder, model, dataset, results_root, num_proc=num_proc, progress=progress,
                                device=device))
        metrics_skipped.update(res.coverage.skipped_metrics)
        rows.append(read_stored(res.rows_path))  # the declared rows schema, checked
        tables[model] = res.table
    all_rows = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
    baseline = model_name(tr.IDENTITY, predictions is not None)
    table = shift_table(task, all_rows, tables, baseline, n_boot, seed)
    table = table[~table["metric"].isin(list(metrics_skipped))].reset_index(drop=True)
    result = RobustnessResult(task, table, skipped, metrics_skipped, results_root,
                              "predictions" if predictions is not None else "reference")
    suffix = "_predictions" if predictions is not None else ""
    output.write_text(f"robustness_{task}{suffix}.json", json.dumps(result.to_json(), indent=2))
    output.write_text(f"robustness_{task}{suffix}.md", robustness_markdown([result.to_json()]))
    return result


def audit_request(task: str, predictions: "str | Path", model: str, dataset: "str | Path", results: "str | Path",
                  num_proc: int = 1, progress: bool = True, device: str = "cpu") -> "EvaluationRequest":
    """The request one variant of the audit is scored by: the normal scorer into the audit's own results root,
    a stored variant replaced (each audit scores its variants afresh; they are the audit's, never a user's run).

    Example:
        >>> request = audit_request("matting", "audit/variants/h264_crf23", "audit@h264_crf23", "release",
        ...                         "audit/results", num_proc=2)
        >>> request.overwrite, request.num_proc, request.device
        (True, 2, 'cpu')
    """
    from ..scoring.request import EvaluationRequest

    return EvaluationRequest(task, predictions, model, dataset, results, num_proc=num_proc, progress=progress,
                             device=device, overwrite=True)


# ----------------------------------------------------------------------------- reading
def load_robustness(folder: "str | Path") -> list[dict]:
    """Every ``robustness_*.json`` an audit wrote into ``folder`` (none: an empty list)."""
    folder = Path(folder)
    return [read_json(p) for p in sorted(folder.glob("robustness_*.json"))]  # strict: one line naming a bad one


def robustness_markdown(audits: Sequence[dict], digits: int = 4) -> str:
    """The noise-floor tables of stored audits (:meth:`RobustnessResult.to_json`), one per task.

    Example:
        >>> print(robustness_markdown([{"task": "matting", "source": "reference", "rows": [
        ...     {"metric": "mad", "transform": "h264_crf23", "value": 0.5, "shift": 0.5, "ci_low": 0.4,
        ...      "ci_high": 0.6, "n_clips": 4, "gaps_below": 3, "n_gaps": 9}], "skipped_transforms": {},
        ...     "skipped_metrics": {}}]))
        **matting** (processed reference vs the untouched reference; shift = mean per-clip difference, paper units):
        <BLANKLINE>
        | metric | transform | value | shift [95% actor CI] | clips | paper gaps below shift |
        | --- | --- | ---: | --- | ---: | ---: |
        | MAD | h264_crf23 | 0.5 | 0.5 [0.4, 0.6] | 4 | 3 of 9 |
    """
    def num(v) -> str:
        return "n/a" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.{digits}g}"

    lines: list[str] = []
    for audit in audits:
        what = ("processed submission vs the submission as submitted" if audit.get("source") == "predictions"
                else "processed reference vs the untouched reference")
        lines += [f"**{audit['task']}** ({what}; shift = mean per-clip difference, paper units):", "",
                  "| metric | transform | value | shift [95% actor CI] | clips | paper gaps below shift |",
                  "| --- | --- | ---: | --- | ---: | ---: |"]
        for r in audit["rows"]:
            shift = num(r["shift"]) + (f" [{num(r['ci_low'])}, {num(r['ci_high'])}]"
                                       if r.get("ci_low") is not None else "")
            gaps = f"{int(r['gaps_below'])} of {r['n_gaps']}" if r.get("gaps_below") is not None else "n/a"
            lines.append(f"| {catalog.spec(r['metric']).label} | {r['transform']} | {num(r['value'])} | {shift} | "
                         f"{r['n_clips']} | {gaps} |")
        capped = sorted({catalog.spec(r["metric"]).label for r in audit["rows"] if r["transform"] == tr.IDENTITY
                         and r["value"] is not None and r["value"] == catalog.spec(r["metric"]).value_range[1]})
        if capped and audit.get("source") != "predictions":
            lines.append(f"\n- {', '.join(capped)}: the untouched value is the metric's bound (e.g. PSNR's 100 dB "
                         "cap), so the shift measures distance from a perfect copy; read the value column, and "
                         "use --predictions for a system's own encoding dependence.")
        for name, why in audit.get("skipped_transforms", {}).items():
            lines.append(f"\n- transform {name} skipped: {why}")
        for name, why in audit.get("skipped_metrics", {}).items():
            lines.append(f"\n- {name}: {why}")
        lines.append("")
    return "\n".join(lines).rstrip("\n")

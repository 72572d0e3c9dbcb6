"""Writing the bundled examples of the metric Spaces from the synthetic grid, and what they compute.

:func:`write_examples` synthesizes :data:`~hug_vis_dataset.space.metric_examples.EXAMPLE_GRID`
(deterministic: the same bytes on every run), cuts one clip's files per module (see
:mod:`hug_vis_dataset.space.metric_examples`) and stored result rows of the simulated systems for
the analyses, then runs every module on its examples through ``evaluate.load(folder)`` and records
what the card's example prints in ``examples/output.json`` (``{"not_run": reason}`` where the
module needs pretrained files this machine does not have). Run by ``python -m hug_vis_dataset.publish.module_folders metrics``.

Example:
    >>> headline("mad", {"mad": 12.345678, "per_clip": [12.3], "n_ok": 1, "n_failed": 0})
    {'mad': 12.3457, 'n_ok': 1, 'n_failed': 0}
"""

from __future__ import annotations

import json
import math
import shutil
import zipfile
from pathlib import Path
from typing import Any

from ..outputs import scratch
from .. import catalog
from .metric_examples import EXAMPLE_GRID, EXAMPLE_SYSTEM, example_inputs, input_kind

EXAMPLE_CLIP = ("actor_0001", "happy", "action_01", "script_001")
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # fixed member times: the zip's bytes depend on its content only
# Columns of stored rows an example keeps (the rest of rows.parquet is accepted but not needed).
_ROW_COLUMNS = ("model", "task", "clip_id", "metric", "value", "status", "actor_id", "emotion")
_ROW_TASKS = ("matting", "emotion", "vision_driven")


def _round(value: Any, digits: int = 4) -> Any:
    if isinstance(value, float):
        return None if not math.isfinite(value) else round(value, digits)
    if isinstance(value, dict):
        return {k: _round(v, digits) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_round(v, digits) for v in value]
    return value


def headline(name: str, result: dict) -> dict:
    """What a card's example prints: a metric's values in paper units with the clip counts; an
    analysis's result with floats rounded to 4 decimals (``None`` where not finite)."""
    if catalog.spec(catalog.suite_or_metric(name)[0]).mode == catalog.ANALYSIS:
        return _round(json.loads(json.dumps(result, default=str)))  # as output.json holds it: keys are strings
    keys = [*catalog.suite_or_metric(name), "n_ok", "n_failed", "n_clips"]
    return {k: _round(result[k]) for k in keys if k in result}


def _zip_pngs(folder: Path, dest: Path) -> None:
    with zipfile.ZipFile(dest, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for png in sorted(folder.glob("*.png")):
            info = zipfile.ZipInfo(png.name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, png.read_bytes())


def _stored_rows(release: Path, work: Path) -> "Any":
    """Result rows of every simulated system of :data:`_ROW_TASKS`, scored by the runner and read
    back through the validated store, as ``hugvis evaluate`` writes them."""
    import pandas as pd

    from ..scoring.request import EvaluationRequest
    from ..scoring.runner import run

    results = work / "results"
    for task in _ROW_TASKS:
        for system in sorted(p for p in (release / "simulated_systems" / task).iterdir() if p.is_dir()):
            run(EvaluationRequest(task, system, system.name, release, results, progress=False))
    from ..datamodel.results import REFERENCE_MODEL

    # The reference motion statistics behind Fig. 11 (motion_difficulty), as the demo scores them.
    run(EvaluationRequest("motion", "reference", REFERENCE_MODEL, release, results, progress=False))
    from ..scoring.store import read_stored

    frames = [read_stored(p) for p in sorted(results.glob("*/*/rows.parquet"))]  # declared rows schema checked
    rows = pd.concat(frames, ignore_index=True)
    return rows[[c for c in _ROW_COLUMNS if c in rows.columns]].sort_values(
        ["task", "model", "clip_id", "metric"], kind="stable")


def _task_files(release: Path, work: Path) -> dict[str, dict[str, Path]]:
    actor, emotion, action, script = EXAMPLE_CLIP
    clip = "_".join(EXAMPLE_CLIP)
    systems = release / "simulated_systems"
    alpha = work / "alpha"
    alpha.mkdir()
    _zip_pngs(systems / "matting" / EXAMPLE_SYSTEM["matting"] / clip, alpha / "prediction.zip")
    _zip_pngs(release / "alpha_matte" / actor / emotion / action / script, alpha / "reference.zip")
    video = release / "video_processed" / actor / emotion / action / f"{script}.mp4"
    rows = _stored_rows(release, work)
    rows.to_csv(work / "rows.csv", index=False, float_format="%.17g")
    ratings = work / "ratings.csv"
    shutil.copy2(systems / "mos_ratings.csv", ratings)
    from ..datamodel.release import Release

    target = work / "reference.txt"  # the clip's target text: CER's reference
    target.write_text(Release(release).record(clip).transcript + "\n", encoding="utf-8")
    return {
        "alpha": {"prediction.zip": alpha / "prediction.zip", "reference.zip": alpha / "reference.zip"},
        "video": {"prediction.mp4": systems / "vision_driven" / EXAMPLE_SYSTEM["vision_driven"] / f"{clip}.mp4",
                  "reference.mp4": video},
        "video_free": {"prediction.mp4": systems / "audio_driven" / EXAMPLE_SYSTEM["audio_driven"] / f"{clip}.mp4"},
        "audio": {"prediction.wav": systems / "voice_cloning" / EXAMPLE_SYSTEM["voice_cloning"] / f"{clip}.wav",
                  "reference.wav": release / "audio" / actor / emotion / action / f"{script}.wav"},
        "speech_text": {"prediction.wav": systems / "voice_cloning" / EXAMPLE_SYSTEM["voice_cloning"] / f"{clip}.wav",
                        "reference.txt": target},
        "label": {"predictions.jsonl": systems / "emotion" / EXAMPLE_SYSTEM["emotion"] / "predictions.jsonl"},
        "rows": {"rows.csv": work / "rows.csv", "ratings.csv": ratings},
    }


def _files_for(name: str, files: dict[str, dict[str, Path]]) -> dict[str, Path]:
    from .metric_examples import example_names

    kind = input_kind(name)
    if kind == "video" and catalog.spec(catalog.suite_or_metric(name)[0]).tasks[0] == "audio_driven" \
            and catalog.spec(catalog.suite_or_metric(name)[0]).mode == catalog.REFERENCE_FREE:
        kind = "video_free"
    pool = {**files[kind], **(files["rows"] if kind == "rows" else {})}
    return {n: pool[n] for n in example_names(name)}


#: The key of a recorded output that could not be computed here (pretrained files missing), with the reason.
NOT_RUN = "not_run"


def example_output(folder: "str | Path") -> dict:
    """What the card's example prints for the module in ``folder`` (through ``evaluate.load``), or
    ``{NOT_RUN: reason}`` when the module needs pretrained files (or rows) this machine does not have."""
    import evaluate

    from ..metrics.crosstask import MissingMetricsError
    from ..modules import _setup_errors

    folder = Path(folder)
    module = evaluate.load(str(folder.resolve()))
    try:
        return headline(folder.name, module.compute(**example_inputs(folder)))
    except (*_setup_errors(), MissingMetricsError) as err:  # no weights here: the card says why, not a number
        return {NOT_RUN: str(err).splitlines()[0]}


def write_examples(root: "str | Path", names: "list[str] | None" = None) -> list[Path]:
    """Write ``<root>/<name>/examples/`` for every module (or ``names``) and record their outputs."""
    from ..synth import synthesize

    written = []
    with scratch(prefix="hugvis-examples-") as tmp:
        release = Path(tmp) / "release"
        synthesize(release, **EXAMPLE_GRID)
        files = _task_files(release, Path(tmp))
        for name in names or catalog.module_names():
            dest = Path(root) / name / "examples"  # the repository's generated metrics/ tree: files rewritten
            dest.mkdir(parents=True, exist_ok=True)
            for filename, source in _files_for(name, files).items():
                shutil.copyfile(source, dest / filename)
                written.append(dest / filename)
    for name in names or catalog.module_names():
        out = Path(root) / name / "examples" / "output.json"
        out.write_text(json.dumps(example_output(Path(root) / name), ensure_ascii=False, indent=1) + "\n",
                       encoding="utf-8")
        written.append(out)
    return written


def recorded_output(folder: "str | Path") -> "dict | None":
    """The output recorded in ``<folder>/examples/output.json`` (``None`` if absent or not run)."""
    path = Path(folder) / "examples" / "output.json"
    from ..readers.json_files import read_json

    return read_json(path) if path.is_file() else None

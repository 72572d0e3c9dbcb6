"""The door world of the MetricTester (tests/metric_tester.py): one small synthetic release with one
system per task scored by ``hugvis evaluate``'s runner and the report, built once per session, and
the door-side helpers (module inputs, the library on the files, the evaluate door's ``compute``).
``tests/test_doors.py`` reuses it for its other door checks.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable

import numpy as np

from hug_vis_dataset import catalog

# ----------------------------------------------------------------------------- the door world
#: Metrics checked door by door on the synthetic grid (at 64x36 the thin region is empty: NaN everywhere).
SYSTEM = {"matting": "matte_fair", "matting_boundary": "matte_fair", "vision_driven": "vis_fair",
          "voice_cloning": "clone_fair", "emotion": "emo_medium", "motion": "reference"}
SETTING = "Video + Audio + Text"
_WORLD: list[tuple[Path, Path, Any]] = []


def door_world(tmp_path_factory) -> tuple[Path, Path, Any]:
    """A 4-clip synthetic release, one system per task scored by the runner, and the report (built once)."""
    if not _WORLD:
        from hug_vis_dataset.reporting.report import build_report
        from hug_vis_dataset.scoring.runner import evaluate_submission
        from hug_vis_dataset.synth import synthesize

        root = tmp_path_factory.mktemp("doors")
        synthesize(root / "rel", actors=2, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.5,
                   size=(64, 36), systems=True)
        release = root / "rel"
        for task, system in SYSTEM.items():
            folder = "reference" if task == "motion" else release / "simulated_systems" / _folder_task(task) / system
            evaluate_submission(task, folder, system, release, root / "results", progress=False)
        report = build_report([root / "results"], root / "report", formats=("md",), n_boot=0, figures=False)
        _WORLD.append((release, root / "results", report))
    return _WORLD[0]


def _folder_task(task: str) -> str:
    return "matting" if task == "matting_boundary" else task


def door_inputs(release: Path, task: str, system: str) -> tuple[list[str], list[str], list]:
    """Module inputs of a system: prediction paths named by clip id, reference paths of the release."""
    from hug_vis_dataset.metrics.emotion import normalize_input_setting
    from hug_vis_dataset.datamodel.release import Release

    records = list(Release(release))
    folder = release / "simulated_systems" / _folder_task(task) / system
    if task in ("matting", "matting_boundary", "motion"):
        return [str(folder / r.clip_id) for r in records], [str(r.alpha_matte_path) for r in records], records
    if task == "vision_driven":
        return [str(folder / f"{r.clip_id}.mp4") for r in records], [str(r.video_path) for r in records], records
    if task == "voice_cloning":
        return [str(folder / f"{r.clip_id}.wav") for r in records], [str(r.audio_path) for r in records], records
    answers = {}
    for line in (folder / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if normalize_input_setting(record["input_setting"]) == SETTING:
            answers[record["clip_id"]] = record["answer"]
    return [answers[r.clip_id] for r in records], [r.clip_id.split("_")[2] for r in records], records


_MEMO: dict[tuple, Any] = {}


def memo(key: tuple, fn: Callable[[], Any]) -> Any:
    """``fn()`` once per session per ``key`` (the metrics of one family share one computation)."""
    if key not in _MEMO:
        _MEMO[key] = fn()
    return _MEMO[key]


def module_of(metric: str) -> str:
    """The evaluate module folder whose door computes ``metric``: its own, else its suite's ("" for none)."""
    if catalog.spec(metric).module:
        return metric
    return next((suite for suite, members in catalog.SUITES.items() if metric in members), "")


def door_compute(name: str, predictions: list, references: list, **options: Any) -> dict:
    """``hug_vis_dataset.modules.compute`` (what every evaluate module calls), once per input set."""
    from hug_vis_dataset.modules import compute

    key = ("compute", name, tuple(predictions), tuple(references), tuple(sorted(options.items())))
    return memo(key, lambda: compute(name, predictions=predictions, references=references, **options))


def door_per_clip(out: dict, metric: str) -> list:
    return out["per_clip"][metric] if isinstance(out["per_clip"], dict) else out["per_clip"]


def door_library(task: str, metric: str, prediction: str, reference: str) -> float:
    """The metric computed by calling the library's math directly on the files (no scorer, no door)."""
    from hug_vis_dataset.readers.media import iter_video_frames
    from hug_vis_dataset.metrics import emotion, matting, voice

    if task == "matting":
        return matting.score_matting_clip(prediction, reference, metrics=(metric,))["clip"][metric]
    if task == "motion":
        return matting.motion_stats(reference)[0 if metric == "motion_u" else 1]
    if task == "matting_boundary":
        from hug_vis_dataset.metrics.boundary import score_boundary_clip

        error, region = metric.split("_", 1)
        scored = memo(("boundary", prediction, reference), lambda: score_boundary_clip(prediction, reference))
        return scored["clip"][region][error]
    if task == "vision_driven":
        p, r = memo(("decoded", prediction, reference), lambda: (np.concatenate(list(iter_video_frames(prediction))),
                                                                 np.concatenate(list(iter_video_frames(reference)))))
        return float(catalog.implementation_of(metric)(p, r).mean())  # the row's per-frame function
    if task == "voice_cloning":
        if metric == "speaker_similarity":
            return voice.speaker_similarity(prediction, reference)
        if metric == "distill_mos":
            from hug_vis_dataset.readers.media import read_audio
            from hug_vis_dataset.metrics.distill_mos import distill_mos_clip
            from hug_vis_dataset.models.distill_mos import load_distill_mos

            model = memo(("distill_mos_model",), load_distill_mos)
            return distill_mos_clip(model, *read_audio(prediction, mono=True))
        return memo(("dnsmos", prediction), lambda: voice.dnsmos(prediction))[metric]
    return float(emotion.parse_answer(prediction) == emotion.parse_answer(reference))


def stored_rows(results: Path, task: str, model: str):
    import pandas as pd

    return pd.read_parquet(results / task / model / "rows.parquet")


def close_or_nan(a: "float | None", b: float, where: Any) -> None:
    a = math.nan if a is None else a
    assert (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12 + 1e-9 * abs(b), (where, a, b)

"""A simulated results store of the full grid: what the statistics have to carry at the real benchmark's scale.

No clip is rendered or scored: per-clip (and, for matting, per-frame) values are drawn directly, for every task, for
``models`` systems of graded quality, on all 8,400 clips of the grid (30 actors x 7 emotions x 4 actions x 10
scripts), with the structure the analyses look for (an actor effect, an emotion effect, a per-system quality), and
written as stored runs exactly as ``hugvis evaluate`` writes them (``rows.parquet``, ``frames.parquet``,
``set_rows.parquet``, ``summary.json`` with its cached aggregate), so every reader validates and reads them as real
runs. Beside them, simulated MOS ratings (one rater answering faster than the media, which quality control flags)
and pairwise answers of the generation tasks. ``scripts/bench_report.py`` times the report, the board and the
Findings on it.

Values are a function of the seed only (``numpy.random.default_rng``), so two stores built with the same arguments
hold the same numbers.

Example:
    >>> import tempfile, pathlib
    >>> out = simulated_store(pathlib.Path(tempfile.mkdtemp()) / "store", models=2, actors=1, tasks=("audio_driven",),
    ...                       ratings_clips=2)
    >>> sorted(p.name for p in (out / "results" / "audio_driven").iterdir() if not p.name.startswith("."))
    ['sim_01', 'sim_02']
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .. import catalog

#: Tasks of a full store (matting_boundary: the boundary finding's rows; motion: Fig. 11's reference motion).
TASKS: tuple[str, ...] = ("emotion", "audio_driven", "vision_driven", "voice_cloning", "matting", "matting_boundary",
                          "motion")
EMOTION_SETTINGS: tuple[str, ...] = ("Audio", "Text", "Video", "Video + Audio + Text")
#: Typical value and spread of a metric (stored units) where its range does not say: (centre, spread).
TYPICAL: dict[str, tuple[float, float]] = {
    "utmos": (3.2, 0.5), "dnsmos": (3.0, 0.4), "dnsmos_sig": (3.3, 0.4), "dnsmos_bak": (3.8, 0.4),
    "dnsmos_p808": (3.4, 0.4), "distill_mos": (3.3, 0.5), "speaker_similarity": (0.75, 0.1), "csim": (0.6, 0.12),
    "sync_c": (6.0, 1.5), "sync_d": (8.0, 1.2), "lpips": (0.25, 0.06), "psnr": (21.0, 2.5), "ssim": (0.7, 0.08),
    "mad": (4.0, 1.5), "mse": (1.5, 0.6), "dtssd": (2.5, 0.6), "grad": (12.0, 3.0), "conn": (5.0, 1.5),
    "motion_u": (0.01, 0.004), "motion_v": (0.002, 0.001),
}


def _clips(actors: int):
    from ..datamodel.grid import full_grid

    return [c for c in full_grid() if c.actor_id <= actors]


def _draw(rng, metric: str, quality: float, actor_effect: np.ndarray, emotion_effect: np.ndarray) -> np.ndarray:
    """Per-clip values of one system: centre + (quality + actor + emotion) effects in spreads + noise, inside the
    metric's range; ``quality`` > 0 is better whatever the metric's direction."""
    spec = catalog.spec(metric)
    centre, spread = TYPICAL.get(metric, (1.0, 0.3))
    for suffix in ("_band_5", "_band_10", "_band_20", "_thin", "_bulk", "_moving"):
        if metric.endswith(suffix):
            centre, spread = TYPICAL[metric[: -len(suffix)]]
    sign = 1.0 if spec.higher_is_better else -1.0
    values = centre + spread * (sign * quality + actor_effect + emotion_effect
                                + 0.8 * rng.standard_normal(len(actor_effect)))
    low, high = spec.value_range
    return np.clip(values, max(low, -1e9) + 1e-6 * spread, min(high, 1e9) - 1e-6 * spread)


def _rows_frame(task: str, label: str, clips, metric_values: dict[str, np.ndarray]):
    import pandas as pd

    parts = []
    for metric, values in metric_values.items():
        parts.append(pd.DataFrame({
            "model": label, "task": task, "clip_id": [str(c) for c in clips],
            "actor_id": pd.array([c.actor_id for c in clips], dtype="Int64"),
            "emotion": [c.emotion.value for c in clips],
            "action_id": pd.array([c.action_id for c in clips], dtype="Int64"),
            "script_id": pd.array([c.script_id for c in clips], dtype="Int64"),
            "metric": metric, "value": values, "status": "ok", "error": "", "input_sha256": "0" * 64}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def _summary(task: str, model: str, table, grid_size: int, protocol: str, metrics: Sequence[str]) -> dict:
    from ..scoring.aggregate import aggregate_record

    return {"task": task, "model": model, "protocol": {"aggregation": protocol},
            "metrics": {"computed": list(metrics), "skipped": {}}, "aggregate": aggregate_record(table),
            "coverage": {"task": task, "model": model, "grid_size": grid_size, "predicted": grid_size, "missing": [],
                         "extra": [], "unmatched": [], "duplicates": {}, "failed": {}, "ok": grid_size,
                         "skipped_metrics": {}},
            "unparsed_answers": 0, "provenance": {"dataset": {"synthetic": True, "kind": "simulated full grid"},
                                                  "simulated": "hug_vis_dataset.synth.fullgrid"}}


def _with_samples(rng, task: str, label: str, clips, values: dict[str, np.ndarray], samples: int, length: int):
    """``(rows, frames)`` of a run scored over ``samples`` samples per clip: sample ``k`` of a clip is its value plus
    seed noise of half the metric's spread, kept inside the metric's range (a corpus ratio's integer parts stay the
    clip's own); matting's per-frame rows around each sample's value."""
    import pandas as pd

    rows, frames = [], []
    for k in range(samples):
        drawn = {}
        for metric, v in values.items():
            spec = catalog.spec(metric)
            if spec.protocol == catalog.RATIO or spec.ratio_of or metric in ("cer_edits", "cer_ref_chars"):
                drawn[metric] = v
                continue
            spread = TYPICAL.get(metric, (1.0, 0.3))[1]
            low, high = spec.value_range
            drawn[metric] = np.clip(v + 0.5 * spread * rng.standard_normal(len(v)), max(low, -1e9) + 1e-6 * spread,
                                    min(high, 1e9) - 1e-6 * spread)
        rows.append(_rows_frame(task, label, clips, drawn).assign(sample=k))
        if task == "matting":
            frames.append(_frames(rng, label, clips, drawn, length).assign(sample=k))
    return pd.concat(rows, ignore_index=True), (pd.concat(frames, ignore_index=True) if frames else None)


def _write_run(stage: Path, task: str, model: str, rows, frames=None, set_rows=None) -> None:
    from ..scoring.aggregate import task_table
    from ..scoring.store import sort_rows

    folder = stage / task / model
    folder.mkdir(parents=True, exist_ok=True)
    protocol = catalog.task_protocol(task) if frames is not None else "clip"
    table = task_table(rows, frames, set_rows, protocol=protocol)
    sampled = ("sample",) if "sample" in rows.columns else ()
    sort_rows(rows, extra=sampled).to_parquet(folder / "rows.parquet", index=False)
    if frames is not None:  # the runner's order (model, clip in grid order, metric, [sample,] frame)
        sort_rows(frames, extra=sampled + ("frame",)).to_parquet(folder / "frames.parquet", index=False)
    if set_rows is not None:
        set_rows.to_parquet(folder / "set_rows.parquet", index=False)
    metrics = sorted(set(rows["metric"])) + (sorted(set(set_rows["metric"])) if set_rows is not None else [])
    summary = _summary(task, model, table, int(rows["clip_id"].nunique()), protocol, metrics)
    (folder / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")


def _frames(rng, label: str, clips, clip_values: dict[str, np.ndarray], length: int):
    """Per-frame rows around each clip's value, whose mean over the clip's frames is the clip's value."""
    import pandas as pd

    parts = []
    ids = np.repeat(np.array([str(c) for c in clips], dtype=object), length)
    frame = np.tile(np.arange(length), len(clips))
    for metric, values in clip_values.items():
        first = 1 if metric == "dtssd" else 0
        n = length - first
        noise = rng.standard_normal((len(clips), n)) * 0.2 * np.abs(values)[:, None]
        noise -= noise.mean(axis=1, keepdims=True)
        per_frame = np.clip(values[:, None] + noise, 0.0, None).ravel()
        keep = frame >= first
        parts.append(pd.DataFrame({"model": label, "task": "matting", "clip_id": ids[keep], "metric": metric,
                                   "frame": frame[keep], "value": per_frame}))
    return pd.concat(parts, ignore_index=True)


def simulated_store(out: "str | Path", models: int = 10, actors: int = 30, tasks: Sequence[str] = TASKS,
                    seconds: float = 6.0, fps: int = 30, seed: int = 0, ratings_clips: int = 14,
                    raters_per_clip: int = 2, pairs_per_clip: int = 3, samples: int = 1,
                    progress: "Callable[[str], None] | None" = None) -> Path:
    """Write a simulated store into the new folder ``out`` (the command's output, claimed through the guard):
    ``out/results/<task>/<model>/`` runs, ``out/mos_ratings.csv`` and ``out/pairwise_ratings.csv``.

    Args:
        models: systems per task, ``sim_01`` best to ``sim_NN`` worst (quality falls by 0.2 spreads a step, so
            neighbours are close: some comparisons separate, some do not).
        actors: the grid's first ``actors`` actors (30: the full grid, 8,400 clips).
        seconds, fps: the clips' length (matting's per-frame rows: ``seconds x fps`` frames per clip).
        ratings_clips: clips per actor the MOS study and the pairwise study rate.
        raters_per_clip: MOS ratings per (clip, system, criterion); pairs_per_clip: pairwise answers per clip and
            criterion.
        samples: samples per clip of every run of a task that takes several (``TaskSpec.samples``): each sample is
            the clip's value plus seed noise of half a spread (:func:`_with_samples`), a set metric is drawn per
            sample; 1: one sample per clip, no ``sample`` column (the store as before).
    """
    import pandas as pd

    from ..outputs import claim

    output = claim("hugvis bench-store", out, "results")
    rng = np.random.default_rng(seed)
    say = progress or (lambda text: None)
    clips = _clips(actors)
    actor_effect = {a: rng.standard_normal() * 0.6 for a in range(1, actors + 1)}
    emotion_effect = {e: rng.standard_normal() * 0.4 for e in {c.emotion for c in clips}}
    a_eff = np.array([actor_effect[c.actor_id] for c in clips])
    e_eff = np.array([emotion_effect[c.emotion] for c in clips])
    names = [f"sim_{i:02d}" for i in range(1, models + 1)]
    quality = {name: 1.0 - 0.2 * i for i, name in enumerate(names)}
    length = max(2, int(round(seconds * fps)))
    with output.staged() as stage:
        results = stage / "results"
        for task in tasks:
            say(f"{task}: {models if task != 'motion' else 1} run(s) x {len(clips):,} clips")
            if task == "motion":
                values = {m: _draw(rng, m, 0.0, a_eff, e_eff) for m in catalog.clip_metrics(task)}
                _write_run(results, task, "reference", _rows_frame(task, "reference", clips, values))
                continue
            for name in names:
                q = quality[name]
                if task == "emotion":
                    parts = []
                    for k, setting in enumerate(EMOTION_SETTINGS):
                        p = 1.0 / (1.0 + np.exp(-(0.4 + q + 0.3 * k + a_eff + e_eff)))
                        correct = (rng.random(len(clips)) < p).astype(float)
                        parts.append(_rows_frame(task, f"{name} | {setting}", clips, {"emotion_accuracy": correct}))
                    _write_run(results, task, name, pd.concat(parts, ignore_index=True))
                    continue
                values = {m: _draw(rng, m, q, a_eff, e_eff) for m in catalog.clip_metrics(task)}
                if task == "voice_cloning":
                    chars = rng.integers(8, 30, len(clips)).astype(float)
                    edits = np.minimum(chars, rng.poisson(np.clip(2.0 - q, 0.1, None), len(clips))).astype(float)
                    values.update(cer_ref_chars=chars, cer_edits=edits, cer=edits / chars)
                    values["distill_mos"] = np.clip(values["distill_mos"], 1.0, 5.0)
                if samples > 1 and catalog.task(task).samples:
                    rows, frames = _with_samples(rng, task, name, clips, values, samples, length)
                else:
                    rows = _rows_frame(task, name, clips, values)
                    frames = _frames(rng, name, clips, values, length) if task == "matting" else None
                set_rows = None
                if catalog.set_metrics(task):
                    set_rows = pd.DataFrame([{"model": name, "task": task, "clip_id": "", "actor_id": None,
                                              "emotion": "", "action_id": None, "script_id": None, "metric": m,
                                              "value": float(max(1.0, 30.0 - 8.0 * q + rng.standard_normal())),
                                              "status": "ok", "error": "", "input_sha256": ""}
                                             for m in catalog.set_metrics(task)])
                    if samples > 1 and catalog.task(task).samples:  # one value per sample draw
                        set_rows = pd.concat([set_rows.assign(value=set_rows["value"] + rng.standard_normal(),
                                                              sample=k) for k in range(samples)], ignore_index=True)
                    for column in ("actor_id", "action_id", "script_id"):
                        set_rows[column] = set_rows[column].astype("Int64")
                _write_run(results, task, name, rows, frames, set_rows)
        say("MOS ratings and pairwise answers")
        _write_judgments(stage, rng, clips, names, quality, actors, ratings_clips, raters_per_clip, pairs_per_clip,
                         a_eff, seconds)
    return Path(out)


def _write_judgments(stage: Path, rng, clips, names, quality, actors: int, per_actor: int, raters: int,
                     pairs: int, a_eff: np.ndarray, seconds: float) -> None:
    import pandas as pd

    from ..studies.mos import TASK_CRITERIA

    rated = [i for a in range(1, actors + 1) for i in [j for j, c in enumerate(clips) if c.actor_id == a][:per_actor]]
    mos, prefs = [], []
    pool = [f"rater_{i:02d}" for i in range(1, 41)]
    for task, criteria in TASK_CRITERIA.items():
        for criterion in criteria:
            for name in names:
                for r in range(raters):
                    who = rng.choice(pool, len(rated))
                    score = np.clip(np.rint(3.0 + quality[name] + a_eff[rated] * 0.5
                                            + rng.standard_normal(len(rated)) * 0.8), 1, 5).astype(int)
                    elapsed = np.where(who == pool[-1], seconds * 0.3, seconds * 1.5 + rng.random(len(rated)))
                    mos.append(pd.DataFrame({"rater": who, "clip_id": [str(clips[i]) for i in rated], "model": name,
                                             "criterion": criterion, "score": score, "study": "simulated-full-grid",
                                             "item": [f"{task}-{name}-{i}-{r}" for i in rated],
                                             "elapsed": elapsed.round(3), "duration": seconds, "task": task}))
            for _ in range(pairs):
                a = rng.integers(0, len(names), len(rated))
                b = (a + rng.integers(1, len(names), len(rated))) % len(names)
                qa = np.array([quality[names[i]] for i in a])
                qb = np.array([quality[names[i]] for i in b])
                p = 1.0 / (1.0 + np.exp(-(qa - qb) * 2.0))
                u = rng.random(len(rated))
                outcome = np.where(u < p * 0.9, 1.0, np.where(u < p * 0.9 + 0.1, 0.5, 0.0))
                prefs.append(pd.DataFrame({"rater": rng.choice(pool[:-1], len(rated)), "task": task,
                                           "clip_id": [str(clips[i]) for i in rated],
                                           "system_a": [names[i] for i in a], "system_b": [names[i] for i in b],
                                           "criterion": criterion, "outcome": outcome,
                                           "left": [names[i] for i in a], "study": "simulated-full-grid-pairwise",
                                           "item": [f"p-{task}-{i}" for i in rated], "elapsed": seconds * 2.0,
                                           "duration": seconds}))
    ratings = pd.concat(mos, ignore_index=True)
    ratings = ratings.drop_duplicates(["rater", "clip_id", "model", "criterion"])  # one rating per rater and item
    ratings.drop(columns=["task"]).to_csv(stage / "mos_ratings.csv", index=False)
    answers = pd.concat(prefs, ignore_index=True)
    first = answers[["system_a", "system_b"]].min(axis=1)
    second = answers[["system_a", "system_b"]].max(axis=1)
    once = ~answers.assign(_a=first, _b=second).duplicated(["rater", "clip_id", "_a", "_b", "criterion"])
    answers[once].to_csv(stage / "pairwise_ratings.csv", index=False)  # one answer per rater, clip, pair, criterion


__all__ = ["EMOTION_SETTINGS", "TASKS", "simulated_store"]

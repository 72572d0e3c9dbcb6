"""The whole path on the synthetic grid: synthesize, build the dataset repo, score, report.

Example (not run in doctests: it takes tens of seconds)::

    from hug_vis_dataset.demo import run_demo
    run_demo("demo_out", quick=True)
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence

from ..tasks import TASKS


# The demo grid: every emotion (the cross-task analyses normalise over all seven) and two
# actors (the bootstrap resamples actors), kept small enough to finish in minutes on 2 cores.
DEMO_GRID = dict(actors=2, emotions=None, actions=1, scripts=2, seconds=1.5)
QUICK_GRID = dict(actors=1, emotions=["Happy", "Sad", "Angry"], actions=1, scripts=2, seconds=1.0)


def _outcome(res) -> str:
    """One line of a scored submission for the demo's log."""
    done = (f"{res.coverage.ok}/{res.coverage.grid_size} clips ok" if res.summary["metrics"]["computed"]
            else "no metric can run here")
    skipped = res.coverage.skipped_metrics
    return done + (f", skipped: {', '.join(skipped)}" if skipped else "")


def score_baselines(release: "str | Path", submissions: "str | Path", results: "str | Path", num_proc: int = 1,
                    progress: bool = True, command_line: "Sequence[str] | None" = None,
                    tasks: "Sequence[str] | None" = None) -> dict:
    """Run ``hugvis predict`` with every task's built-in baseline and score it as model ``baseline``.

    The baselines (:mod:`hug_vis_dataset.predict`, docs/PREDICT.md) are real predictions from the
    release's own inputs, so the report gets one non-simulated row per task (emotion:
    ``baseline | Text``) next to the simulated systems.

    Args:
        release: the release tree (or built repo) to predict on and score against.
        submissions: one submission folder per task is written to ``submissions/<task>``.
        results: the results root of :func:`~hug_vis_dataset.scoring.runner.evaluate_submission`.
        num_proc, progress, command_line: passed to the scoring.
        tasks: the tasks to run (default: all five, :data:`hug_vis_dataset.predict.api.TASKS`).

    Returns:
        task -> (:class:`~hug_vis_dataset.predict.PredictSummary`,
        :class:`~hug_vis_dataset.scoring.runner.EvaluationResult`).

    Example (not run in doctests: it scores every task)::

        score_baselines("demo_out/release", "demo_out/baselines", "demo_out/results")
    """
    from ..predict import predict
    from ..predict.api import BASELINE
    from ..predict.api import TASKS as PREDICT_TASKS
    from ..scoring.runner import evaluate_submission

    done = {}
    for task in (PREDICT_TASKS if tasks is None else tasks):
        predicted = predict(task, BASELINE, release, Path(submissions) / task, progress=progress)
        res = evaluate_submission(task, predicted.out, BASELINE, release, results, num_proc=num_proc,
                                  progress=progress, command_line=command_line)
        print(f"    {predicted.to_text()}\n    {task}/{BASELINE}: {_outcome(res)}", flush=True)
        for unit, error in predicted.failures[:10]:
            print(f"      {unit}: {error}", flush=True)
        done[task] = (predicted, res)
    return done


def run_demo(out_dir: "str | Path", quick: bool = True, seed: int = 0, num_proc: int = 1, build: bool = True,
             n_boot: int = 200, progress: bool = True, grid: "dict | None" = None) -> dict:
    """Synthesize a small grid, build the Hub repo, validate it, score every simulated system of
    every task and each task's built-in baseline, and write the report; print the tables.

    Args:
        grid: keyword arguments of :func:`hug_vis_dataset.synth.synthesize` choosing the grid;
            default :data:`QUICK_GRID` when ``quick`` else :data:`DEMO_GRID`.

    Returns:
        ``{"release", "results", "report", "markdown", "seconds"}``.
    """
    from ..report import build_report
    from ..synth import synthesize
    from ..scoring.runner import evaluate_submission

    out = Path(out_dir)
    release = out / "release"
    results = out / "results"
    start = time.perf_counter()
    size = grid if grid is not None else (QUICK_GRID if quick else DEMO_GRID)
    print(f"[1] synthesizing into {release} ...", flush=True)
    summary = synthesize(release, seed=seed, progress=progress, **size)
    print(f"    {len(summary.clip_ids)} clips; simulated systems: "
          + ", ".join(f"{task} {len(names)}" for task, names in summary.systems.items()), flush=True)
    from ..validate import validate_release

    validation = validate_release(release)
    print("    validation: " + ("OK" if validation.ok else f"{len(validation.problems)} problem(s)"), flush=True)
    if not validation.ok:
        raise RuntimeError("the synthetic release failed validation:\n" + validation.to_text())
    if build:
        try:
            from ..hub.builder import build_repo
        except ImportError:
            build_repo = None
        if build_repo is not None:
            print(f"[2] building the dataset repo into {out / 'repo'} ...", flush=True)
            build = build_repo(release, out / "repo")
            from ..hub import load_config

            matting = load_config(out / "repo", "matting", cache_dir=str(out / "hf_cache"))
            print(f"    {sum(build.rows.values())} rows in {len(build.rows)} configs; "
                  f"load_dataset(repo, 'matting'): {matting.num_rows} rows, features "
                  f"{', '.join(matting.features)}", flush=True)
    systems_root = release / "simulated_systems"
    print("[3] scoring every simulated system ...", flush=True)
    for task in TASKS:
        task_dir = systems_root / task
        if not task_dir.is_dir():
            continue
        for system in sorted(p for p in task_dir.iterdir() if p.is_dir()):
            res = evaluate_submission(task, system, system.name, release, results, num_proc=num_proc,
                                      progress=progress, command_line=["run_demo", str(out)])
            print(f"    {task}/{system.name}: {_outcome(res)}", flush=True)
    # Finding (iii): the matting systems again, inside boundary bands, thin structures and moving regions.
    for system in sorted(p for p in (systems_root / "matting").iterdir() if p.is_dir()):
        res = evaluate_submission("matting_boundary", system, system.name, release, results, num_proc=num_proc,
                                  progress=progress, command_line=["run_demo", str(out)])
        print(f"    matting_boundary/{system.name}: {_outcome(res)}", flush=True)
    print(f"[3b] predicting and scoring each task's built-in baseline (real, not simulated) into {out / 'baselines'} ...",
          flush=True)
    score_baselines(release, out / "baselines", results, num_proc=num_proc, progress=progress,
                    command_line=["run_demo", str(out)])
    from ..results import REAL_AUDIO_MODEL, REFERENCE_MODEL
    from ..tasks import REAL_AUDIO

    # Reference rows the report needs: Table 9's "Real audio" row and the reference motion
    # statistics behind Fig. 11.
    for task, predictions, model in (("voice_cloning", REAL_AUDIO, REAL_AUDIO_MODEL),
                                     ("motion", "reference", REFERENCE_MODEL)):
        res = evaluate_submission(task, predictions, model, release, results, num_proc=num_proc,
                                  progress=progress, command_line=["run_demo", str(out)])
        print(f"    {task}/{model}: {res.coverage.ok}/{res.coverage.grid_size} clips ok", flush=True)
    print("[4] writing the report ...", flush=True)
    # The synthetic grid's simulated raters (not human judgements) give Tables 6/8/10.
    ratings = systems_root / "mos_ratings.csv"
    report = build_report([results], out / "report", n_boot=n_boot, mos=ratings if ratings.is_file() else None)
    print(report.markdown)
    seconds = time.perf_counter() - start
    print(f"demo finished in {seconds:.1f} s; report in {out / 'report'}")
    return {"release": release, "results": results, "report": out / "report", "markdown": report.markdown,
            "seconds": seconds}

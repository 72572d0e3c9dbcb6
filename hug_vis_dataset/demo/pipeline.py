"""The whole path on the synthetic grid: synthesize, build the dataset repo, score, report.

Example (not run in doctests: it takes tens of seconds)::

    from hug_vis_dataset.demo import run_demo
    run_demo("demo_out", quick=True)
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from ..presentation.labels import skipped_words
from ..datamodel.layout import (SIMULATED_EMOTION_ANSWERS_FILE, SIMULATED_RATINGS_FILE, SIMULATED_SEEDED_DIR,
                                SIMULATED_SYSTEMS_DIR)
from ..outputs import claim
from ..statistics.rules import N_BOOT
from ..tasks import TASKS

if TYPE_CHECKING:
    from ..scoring.request import EvaluationRequest


# The demo grid: every emotion (the cross-task analyses normalise over all seven) and two
# actors (the bootstrap resamples actors), kept small enough to finish in minutes on 2 cores.
DEMO_GRID = dict(actors=2, emotions=None, actions=1, scripts=2, seconds=1.5)
QUICK_GRID = dict(actors=1, emotions=["Happy", "Sad", "Angry"], actions=1, scripts=2, seconds=1.0)


def demo_request(task: str, predictions: "str | Path", model: str, release: "str | Path", results: "str | Path",
                 num_proc: int = 1, progress: bool = True,
                 command_line: "Sequence[str] | None" = None) -> "EvaluationRequest":
    """The request each of the demo's scorings runs (a simulated system, a built-in baseline, a reference row):
    the demo's release and results root, its workers and progress bars, recorded under the demo's command line.

    Example:
        >>> request = demo_request("matting", "demo_out/baselines/matting", "baseline", "demo_out/release",
        ...                        "demo_out/results", num_proc=2, command_line=["run_demo", "demo_out"])
        >>> request.num_proc, request.command_line, request.overwrite
        (2, ('run_demo', 'demo_out'), False)
    """
    from ..scoring.request import EvaluationRequest

    return EvaluationRequest(task, predictions, model, release, results, num_proc=num_proc, progress=progress,
                             command_line=command_line)


def _outcome(res) -> str:
    """One line of a scored submission for the demo's log."""
    done = (f"{res.coverage.ok}/{res.coverage.grid_size} clips ok" if res.summary["metrics"]["computed"]
            else "no metric can run here")
    skipped = list(skipped_words(res.coverage.skipped_metrics))  # each metric once, by its label
    return done + (f"; not computed here: {', '.join(skipped)}" if skipped else "")


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
        results: the results root of :func:`~hug_vis_dataset.scoring.runner.run` (:func:`demo_request`).
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
    from ..scoring.runner import run

    done = {}
    for task in (PREDICT_TASKS if tasks is None else tasks):
        predicted = predict(task, BASELINE, release, Path(submissions) / task, progress=progress)
        res = run(demo_request(task, predicted.out, BASELINE, release, results, num_proc=num_proc,
                               progress=progress, command_line=command_line))
        print(f"    {predicted.to_text()}\n    {task}/{BASELINE}: {_outcome(res)}", flush=True)
        for unit, error in predicted.failures[:10]:
            print(f"      {unit}: {error}", flush=True)
        done[task] = (predicted, res)
    return done


def score_selfie_segmentation(release: "str | Path", submissions: "str | Path", results: "str | Path",
                              num_proc: int = 1, progress: bool = True,
                              command_line: "Sequence[str] | None" = None) -> "object | None":
    """``hugvis predict matting --model selfie-segmentation`` (MediaPipe's person mask as alpha) scored like any
    submission, when its weights are here; else one line naming the command that fetches them (None)."""
    from .. import weights
    from ..predict import predict
    from ..predict.api import SELFIE_SEGMENTATION
    from ..scoring.runner import run

    note = weights.missing_note(n for n, s in weights.REGISTRY.items() if s.serves.endswith(SELFIE_SEGMENTATION))
    if note:
        print(f"    matting/{SELFIE_SEGMENTATION}: not run ({note})", flush=True)
        return None
    predicted = predict("matting", SELFIE_SEGMENTATION, release, Path(submissions) / "matting-selfie",
                        progress=progress)
    res = run(demo_request("matting", predicted.out, SELFIE_SEGMENTATION, release, results, num_proc=num_proc,
                           progress=progress, command_line=command_line))
    print(f"    {predicted.to_text()}\n    matting/{SELFIE_SEGMENTATION}: {_outcome(res)}", flush=True)
    return res


def build_front_doors(out_dir: "str | Path", grid: "dict | None" = None, seed: int = 0, progress: bool = True,
                      build: bool = True, people: bool = False) -> dict:
    """The demo's first steps: what the README's Python snippet reads, named as on the Hub.

    Synthesizes and validates ``out_dir/release``, builds the dataset repo into ``out_dir/hug-vis``
    and writes the evaluate module folders into ``out_dir/hugvis/<name>/``, so that from
    ``out_dir`` ``load_dataset("hug-vis", "matting")`` and ``evaluate.load("hugvis/dtssd")`` read
    these local copies offline (both libraries try a local folder of that name before the Hub).
    The module folders are generated files, not links to the checkout's ``metrics/``: they work on
    Windows without symlink rights and for a pip-installed package that has no ``metrics/``.

    Args:
        out_dir: the demo's output folder.
        grid: keyword arguments of :func:`hug_vis_dataset.synth.synthesize` (default :data:`QUICK_GRID`).
        seed: the synthesis seed.
        progress: show progress bars.
        build: build the dataset repo (off: only the release tree and the module folders).
        people: synthesize the people grid (:mod:`hug_vis_dataset.synth.people`: real photographs, espeak-ng
            speech, planted human-motion defects).

    Returns:
        ``{"release", "dataset", "modules"}`` paths (``dataset`` is None when not built).

    Example (not run in doctests: it synthesizes and builds, a few seconds)::

        build_front_doors("/tmp/tiny", grid=dict(actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.4))
    """
    from ..readers.hub_access import DEMO_DATASET_DIR, DEMO_MODULES_DIR
    from ..publish.module_folders import write_module_folders
    from ..synth import synthesize
    from ..validate import validate_release

    out = Path(out_dir)
    release, dataset, modules = out / "release", out / DEMO_DATASET_DIR, out / DEMO_MODULES_DIR
    demo = claim("hugvis demo", out, "demo")  # each step below claims its own folder inside it
    print(f"[1] synthesizing into {release} ...", flush=True)
    summary = synthesize(release, seed=seed, progress=progress, people=people,
                         **(grid if grid is not None else QUICK_GRID))
    print(f"    {len(summary.clip_ids)} clips; simulated systems: "
          + ", ".join(f"{task} {len(names)}" for task, names in summary.systems.items()), flush=True)
    validation = validate_release(release)
    print("    validation: " + ("OK" if validation.ok else f"{len(validation.problems)} problem(s)"), flush=True)
    if not validation.ok:
        raise RuntimeError("the synthetic release failed validation:\n" + validation.to_text())
    if build:
        from ..hub import build_repo, load_config

        print(f"[2] building the dataset repo into {dataset} ...", flush=True)
        # An earlier demo's repo is rebuilt (seconds here): removed whole, only if every file in it is the
        # earlier build's, unchanged (a file someone added stops the demo, naming it).
        demo.remove_unit(DEMO_DATASET_DIR, kind="dataset-repo")
        report = build_repo(release, dataset)
        matting = load_config(dataset, "matting", cache_dir=str(out / "hf_cache"))
        print(f"    {sum(report.rows.values())} rows in {len(report.rows)} configs; "
              f"load_dataset({DEMO_DATASET_DIR!r}, 'matting') from {out}: {matting.num_rows} rows, features "
              f"{', '.join(matting.features)}", flush=True)
        if report.storage is not None:
            print("    storage: " + "; ".join(report.storage.summary_lines()[1:]), flush=True)
        if (out / "repo").is_dir():  # where demos before this one wrote the repo
            print(f"    note: {out / 'repo'} is left from an older demo and no longer used; delete it", flush=True)
    written = write_module_folders(modules, output=claim("hugvis demo", modules, "modules"))
    print(f"    evaluate modules: {len({p.parent for p in written})} folders in {modules} "
          f"(evaluate.load('{DEMO_MODULES_DIR}/<name>') from {out})", flush=True)
    return {"release": release, "dataset": dataset if build else None, "modules": modules}


def run_demo(out_dir: "str | Path", quick: bool = True, seed: int = 0, num_proc: int = 1, build: bool = True,
             n_boot: "int | None" = None, progress: bool = True, grid: "dict | None" = None, audit: bool = False,
             into_existing: bool = False, people: bool = False) -> dict:
    """Synthesize a small grid, build the Hub repo, validate it, score every simulated system of
    every task and each task's built-in baseline, and write the report; print its summary (as `hugvis report`
    does: where it is and its tables) and where to look next.

    The dataset repo and the evaluate modules land where the README's Python snippet finds them
    (:func:`build_front_doors`: ``out_dir/hug-vis``, ``out_dir/hugvis/<name>``).

    Args:
        grid: keyword arguments of :func:`hug_vis_dataset.synth.synthesize` choosing the grid;
            default :data:`QUICK_GRID` when ``quick`` else :data:`DEMO_GRID`.
        audit: also run ``hugvis audit robustness`` for matting and vision_driven into ``out_dir/audit``
            and add its noise-floor table to the report's Findings (off by default: measured 10 min on
            the demo grid, 9 variants of 28 clips per task, on 2 busy cores: matting 4, vision_driven 6;
            the whole demo took 52 min there).
        people: the grid's actors are real photographs and the generation systems plant graded human-motion
            defects (:mod:`hug_vis_dataset.synth.people`), so every generation task is scored by MediaPipe's
            networks against a known order.

    Returns:
        ``{"release", "results", "report", "markdown", "seconds"}``.
    """
    from ..reporting.report import build_report
    from ..reporting.commands import report_summary
    from ..scoring.runner import run

    out = Path(out_dir)
    claim("hugvis demo", out, "demo", into_existing=into_existing).ensure()
    release = out / "release"
    results = out / "results"
    start = time.perf_counter()
    build_front_doors(out, grid if grid is not None else (QUICK_GRID if quick else DEMO_GRID), seed=seed,
                      progress=progress, build=build, people=people)
    systems_root = release / SIMULATED_SYSTEMS_DIR
    command_line = ["run_demo", str(out)]
    print("[3] scoring every simulated system ...", flush=True)
    # Finding (iii) scores the matting systems again as matting_boundary (boundary bands, thin
    # structures, moving regions); tasks without simulated systems (motion) are scored below.
    for task in TASKS:
        task_dir = systems_root / {"matting_boundary": "matting"}.get(task, task)
        if not task_dir.is_dir():
            continue
        for system in sorted(p for p in task_dir.iterdir() if p.is_dir()):
            res = run(demo_request(task, system, system.name, release, results, num_proc=num_proc,
                                   progress=progress, command_line=command_line))
            print(f"    {task}/{system.name}: {_outcome(res)}", flush=True)
    # A stochastic system scored over several samples per clip (<clip_id>/sample_<k>/): the report's seed statistics.
    seeded_root = systems_root / SIMULATED_SEEDED_DIR
    for task in TASKS:
        task_dir = seeded_root / {"matting_boundary": "matting"}.get(task, task)
        for system in sorted(p for p in task_dir.iterdir() if p.is_dir()) if task_dir.is_dir() else ():
            res = run(demo_request(task, system, system.name, release, results, num_proc=num_proc,
                                   progress=progress, command_line=command_line))
            print(f"    {task}/{system.name} (several samples per clip): {_outcome(res)}", flush=True)
    print(f"[3b] predicting and scoring each task's built-in baseline (real, not simulated) into {out / 'baselines'} ...",
          flush=True)
    score_baselines(release, out / "baselines", results, num_proc=num_proc, progress=progress,
                    command_line=command_line)
    score_selfie_segmentation(release, out / "baselines", results, num_proc=num_proc, progress=progress,
                              command_line=command_line)
    from ..datamodel.results import REAL_AUDIO_MODEL, REFERENCE_MODEL
    from ..tasks import REAL_AUDIO

    # Reference rows the report needs: Table 9's "Real audio" row and the reference motion
    # statistics behind Fig. 11.
    for task, predictions, model in (("voice_cloning", REAL_AUDIO, REAL_AUDIO_MODEL),
                                     ("motion", "reference", REFERENCE_MODEL)):
        res = run(demo_request(task, predictions, model, release, results, num_proc=num_proc,
                               progress=progress, command_line=command_line))
        print(f"    {task}/{model}: {_outcome(res)}", flush=True)
    if audit:
        from ..audit.robustness import audit_robustness

        print(f"[3c] noise floors: processed references scored as pseudo-systems into {out / 'audit'} ...", flush=True)
        for task in ("matting", "vision_driven"):
            done = audit_robustness(task, release, out / "audit", num_proc=num_proc,
                                    n_boot=N_BOOT if n_boot is None else n_boot)
            print(f"    {task}: {done.table['transform'].nunique()} variants scored", flush=True)
    print("[4] writing the report ...", flush=True)
    # The synthetic grid's simulated raters (not human judgements) give Tables 6/8/10.
    # They follow the schedule of a real blind study (synth/ratings.py): the pairwise answers give the
    # Bradley-Terry strengths in the Findings, the study folder the quality-control section.
    from ..synth.emotion_raters import EMOTION_STUDY_FILE
    from ..synth.ratings import LOG_FILE, MOS_STUDY_FILE, PAIRWISE_FILE, PAIRWISE_STUDY_FILE, STUDY_DIR

    ratings = systems_root / SIMULATED_RATINGS_FILE
    pairwise = systems_root / PAIRWISE_FILE
    study = systems_root / STUDY_DIR
    appendix: list[str] = []
    if (study / LOG_FILE).is_file():
        from ..studies.status import study_markdown

        appendix = study_markdown([study / MOS_STUDY_FILE, study / PAIRWISE_STUDY_FILE]
                                  + [p for p in (study / EMOTION_STUDY_FILE,) if p.is_file()], study / LOG_FILE)
    # The audit's rows live in their own folder (never with the ranked results); its noise-floor
    # table joins the report's Findings.
    people = systems_root / SIMULATED_EMOTION_ANSWERS_FILE  # the simulated emotion study: Table 4's People rows
    report = build_report([results], out / "report", n_boot=N_BOOT if n_boot is None else n_boot,
                          mos=ratings if ratings.is_file() else None,
                          preferences=pairwise if pairwise.is_file() else None,
                          audit=out / "audit" if audit else None, appendix=appendix,
                          people=people if people.is_file() else None)
    markdown = report.markdown
    # The summary hugvis report prints (where the report is, its tables), not the whole report: report.md has it.
    print(report_summary(report, out / "report", ratings.is_file()))
    seconds = time.perf_counter() - start
    print(f"demo finished in {seconds:.1f} s; report in {out / 'report'}")
    print(f"leaderboard and clips in the browser: hugvis space --release {release} --results {results}")
    return {"release": release, "results": results, "report": out / "report", "markdown": markdown,
            "seconds": seconds}

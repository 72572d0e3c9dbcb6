"""``hugvis evaluate`` (``hugvis report`` and ``hugvis mos`` are :mod:`hug_vis_dataset.reporting.commands`).

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(); sub = parser.add_subparsers()
    >>> register(sub)
    >>> args = parser.parse_args(["evaluate", "matting", "--predictions", "p", "--model", "m", "--dataset", "d"])
    >>> args.num_proc, args.backend, args.out
    (1, 'local', PosixPath('results'))
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from .request import EvaluationRequest


def _evaluate(args) -> int:
    from .runner import IncompleteMetricsError, run
    from ..datamodel.results import REAL_AUDIO_MODEL, REFERENCE_MODEL
    from ..tasks import REAL_AUDIO, get_task

    predictions, model = args.predictions, args.model
    # Every missing argument in one message (argparse would name --dataset alone, then the next one).
    submission = not (args.real_audio or get_task(args.task).reference_only)
    # --check-only stores nothing, so it needs no model name (the Space's pre-check and predict --collect rely on it)
    needed = [("--predictions DIR", predictions if submission else True),
              ("--model NAME", model if submission and not args.check_only else True), ("--dataset D", args.dataset)]
    missing = [option for option, value in needed if value is None]
    if missing:
        listed = missing[0] if len(missing) == 1 else ", ".join(missing[:-1]) + " and " + missing[-1]
        usage = (f"hugvis evaluate {args.task} --predictions DIR --model NAME --dataset D" if submission
                 else f"hugvis evaluate {args.task}{' --real-audio' if args.real_audio else ''} --dataset D")
        print(f"error: {args.task} needs {listed} (usage: {usage})", file=sys.stderr)
        return 2
    if args.real_audio:
        if args.task != "voice_cloning" or predictions is not None:
            print("error: --real-audio scores the release's own recordings for voice_cloning; "
                  "give no --predictions", file=sys.stderr)
            return 2
        predictions, model = REAL_AUDIO, model or REAL_AUDIO_MODEL
    elif get_task(args.task).reference_only:
        predictions, model = "reference", model or REFERENCE_MODEL
    elif args.check_only and predictions is not None:
        return _check_only(args)
    elif predictions is None or model is None:
        missing = " and ".join(o for o, v in (("--predictions DIR", predictions), ("--model NAME", model)) if v is None)
        print(f"error: {args.task} needs {missing} (usage: hugvis evaluate {args.task} --predictions DIR "
              f"--model NAME --dataset D)", file=sys.stderr)
        return 2
    from ..datamodel.results import BASELINE_MODEL, model_name_problem

    # The one model-name rule (results.model_name_problem): a name of the user's may not be a spelling of a
    # reserved row (audit@..., real-audio ...), which every reader would then leave out of the rankings. This
    # command stores the baseline's outputs under "baseline", and real audio and motion under their own names.
    allowed = (BASELINE_MODEL, *((model,) if model in (REAL_AUDIO_MODEL, REFERENCE_MODEL) and
                                 (args.real_audio or get_task(args.task).reference_only) else ()))
    problem = model_name_problem(model, allowed)
    if problem:
        print(f"error: --model: {problem}", file=sys.stderr)
        return 2
    try:
        result = run(evaluate_request(args, predictions, model))
    except (IncompleteMetricsError, FileNotFoundError, ValueError) as err:
        from ..errors import one_line

        print(f"error: {one_line(err)}", file=sys.stderr)
        return 2
    print(result.coverage.to_text())
    if result.table is not None:
        print()
        print(board_headers(result.table).to_string(float_format=lambda v: f"{v:.4g}"))
    print(f"\nrows: {result.rows_path}\nsummary: {result.summary_path}")
    lost = lost_metrics_line(args.task, result.summary["metrics"]["skipped"])
    if lost:
        # Loud on purpose: a table without a column must not pass for a complete result.
        print(lost, file=sys.stderr)
    if args.strict and result.coverage.problems():
        print(f"--strict: {result.coverage.problems()} coverage problem(s)", file=sys.stderr)
        return 1
    return 0


def evaluate_request(args, predictions: "str | Path", model: str,
                     command_line: "Sequence[str] | None" = None) -> "EvaluationRequest":
    """The request ``hugvis evaluate`` scores: its options as :class:`~hug_vis_dataset.scoring.request.EvaluationRequest`
    fields (``predictions`` and ``model`` as the handler settled them: ``--real-audio`` and motion name their own).

    ``command_line`` is what the summary records (default: this process's, as ``hugvis ...``).

    Example:
        >>> import argparse
        >>> parser = argparse.ArgumentParser(); sub = parser.add_subparsers()
        >>> register(sub)
        >>> args = parser.parse_args(["evaluate", "matting", "--predictions", "p", "--model", "m", "--dataset", "d",
        ...                           "--keep-failed", "--metrics", "mad,mse", "--no-progress"])
        >>> request = evaluate_request(args, args.predictions, args.model, command_line=["hugvis", "evaluate"])
        >>> request.retry_failed, request.metrics, request.progress, str(request.out)
        (False, ('mad', 'mse'), False, 'results')
    """
    from .request import EvaluationRequest

    return EvaluationRequest(
        args.task, predictions, model, args.dataset, args.out, num_proc=args.num_proc,
        backend=args.backend, ray_address=args.ray_address, chunk_frames=args.chunk_frames,
        flush_every=args.flush_every, retry_failed=not args.keep_failed,
        require_all_metrics=args.require_all_metrics, protocol=args.protocol, progress=not args.no_progress,
        command_line=command_line if command_line is not None else ["hugvis", *sys.argv[1:]],
        revision=args.revision, device=args.device, batch_size=args.batch_size,
        gpus_per_worker=args.gpus_per_worker, verify_dataset=not args.no_verify_dataset, overwrite=args.overwrite,
        metrics=_metric_list(args.metrics), into_existing=args.into_existing,
    )


def _metric_list(text: "str | None") -> "tuple[str, ...] | None":
    """``--metrics psnr,ssim`` -> ``("psnr", "ssim")``; None (every metric) when not given."""
    if text is None:
        return None
    return tuple(m.strip() for m in text.split(",") if m.strip())


def _check_only(args) -> int:
    """``--check-only``: the submission checks of every clip, no weights; exit 1 on any problem."""
    from .check import check_submission

    if args.metrics is not None:
        print("error: --check-only computes no metric; drop --metrics", file=sys.stderr)
        return 2
    coverage = check_submission(args.task, args.predictions, args.dataset, model=args.model or "submission",
                                revision=args.revision, verify_dataset=not args.no_verify_dataset)
    print(coverage.to_text())
    if coverage.problems():
        print(f"--check-only: {coverage.problems()} problem(s); {coverage.ok} of {coverage.grid_size} clips "
              f"would score", file=sys.stderr)
        return 1
    return 0


def board_headers(table):
    """The printed table with the board's column headers (label, arrow, unit) instead of metric keys, the counts
    and the row names under their catalog labels.

    Example:
        >>> import pandas as pd
        >>> list(board_headers(pd.DataFrame({"psnr": [30.0], "n_ok": [2], "n_missing": [0]})).columns)
        ['PSNR ↑ (dB)', 'Clips scored', 'Clips missing']
    """
    from .. import catalog

    names = {c: catalog.spec(str(c)).header if str(c) in catalog.METRIC_NAMES else catalog.label_of(str(c))
             for c in table.columns}
    out = table.rename(columns=names)
    if out.index.name:
        out.index.name = catalog.label_of(str(out.index.name))
    return out


def lost_metrics_line(task: str, skipped: "dict[str, str]") -> "str | None":
    """The loud summary line of a run that could not compute every metric (None when complete): each metric once,
    by its label (a corpus ratio's stored parts under the ratio), with its reason.

    Example:
        >>> lost_metrics_line("voice_cloning", {"utmos": "skipped: weights 'utmos22_strong': broken"})
        "WARNING: 1 metric of Voice cloning NOT computed (UTMOS: weights 'utmos22_strong': broken); \
pass --require-all-metrics to make this an error"
        >>> lost_metrics_line("voice_cloning", {"cer": "skipped: x", "cer_edits": "skipped: x"}).split(" (")[0]
        'WARNING: 1 metric of Voice cloning NOT computed'
    """
    from .. import catalog
    from ..presentation.labels import skipped_words

    if not skipped:
        return None
    words = skipped_words(skipped)
    reasons = "; ".join(f"{label}: {why}" for label, why in words.items())
    count = f"{len(words)} metric{'s' if len(words) > 1 else ''}"
    return (f"WARNING: {count} of {catalog.task(task).label} NOT computed ({reasons}); pass --require-all-metrics to "
            "make this an error")


#: ``hugvis evaluate``'s usage line: ``--predictions`` and ``--model`` are required for every submission
#: (argparse cannot say "required unless", so the usage is written out; the handler enforces it).
EVALUATE_USAGE = ("%(prog)s TASK --predictions DIR --model NAME --dataset D [options]\n"
                  "       %(prog)s voice_cloning --real-audio --dataset D [options]\n"
                  "       %(prog)s motion --dataset D [options]")


def register(subparsers) -> None:
    """Add ``evaluate`` to the ``hugvis`` command line."""
    from ..cli import positive_int
    from ..outputs import output_option
    from ..tasks import TASKS

    p = subparsers.add_parser("evaluate", help="score a submission folder on one task (per-clip rows, summary)",
                              description="Score a submission; see docs/SCORING.md for the layout per task.",
                              usage=EVALUATE_USAGE)
    p.add_argument("task", choices=sorted(TASKS))
    p.add_argument("--predictions", type=Path, default=None,
                   help="submission folder (files named by clip id; several samples of a clip: "
                        "<clip_id>/sample_<k>.<ext>, averaged per clip); not used by the reference-only task 'motion' "
                        "(required with --model, except for motion and --real-audio)")
    # Not argparse-required: motion and --real-audio name their own model. The usage says when it is.
    p.add_argument("--model", default=None,
                   help="model name (one folder name) (required, except for motion and --real-audio)")
    p.add_argument("--real-audio", action="store_true",
                   help="voice_cloning: score the release's own recordings against another recording of the same "
                        "actor (the paper's 'Real audio' row of Table 9; model name 'Real audio')")
    # Not argparse-required: the handler names every missing argument at once.
    p.add_argument("--dataset", default=None,
                   help="(required) release tree, dataset repo folder (hugvis build), or Hub id such as hugvis/hug-vis")
    p.add_argument("--revision", default=None,
                   help="Hub revision (tag, branch or commit) to score against when --dataset is a Hub id")
    p.add_argument("--out", type=Path, default=Path("results"), help="results root (default: results)")
    p.add_argument("--num-proc", type=positive_int, default=1, help="worker processes / local Ray CPUs")
    p.add_argument("--backend", choices=("local", "ray"), default="local")
    p.add_argument("--ray-address", default=None, help="join this Ray cluster (else a local Ray starts)")
    p.add_argument("--chunk-frames", type=positive_int, default=32, help="frames per streamed chunk (values unchanged)")
    p.add_argument("--device", choices=("cpu", "cuda", "auto"), default="cpu",
                   help="where network metrics run (auto: cuda when available)")
    p.add_argument("--batch-size", type=positive_int, default=None,
                   help="frames/windows per forward pass of a network metric (default per metric; values unchanged)")
    p.add_argument("--gpus-per-worker", type=float, default=None,
                   help="--backend ray: GPUs each worker requests (fractions share a GPU; default 1 with "
                        "--device cuda, else 0)")
    p.add_argument("--flush-every", type=positive_int, default=8, help="finished clips per Parquet part")
    p.add_argument("--protocol", choices=("clip", "rvm"), default=None,
                   help="aggregation of the summary (default: rvm for matting, clip otherwise)")
    p.add_argument("--keep-failed", action="store_true", help="on resume, do not retry clips that failed")
    p.add_argument("--overwrite", action="store_true",
                   help="replace a stored run of other predictions under this --model (the stored run stays "
                        "until the new one is complete); it replaces that run and nothing else")
    output_option(p)
    p.add_argument("--require-all-metrics", action="store_true",
                   help="fail (exit 2) when a metric cannot run (weights missing, failing their hash or not "
                        "loading) instead of skipping it with a WARNING line")
    p.add_argument("--no-verify-dataset", action="store_true",
                   help="do not check a dataset repo's shards against the sha256 of its manifest.json (recorded "
                        "in the summary's provenance)")
    p.add_argument("--strict", action="store_true", help="exit 1 on any missing/extra/duplicate/failed clip")
    p.add_argument("--check-only", action="store_true",
                   help="check every clip (layout, names, decodability, frame count, size, rate) without scoring "
                        "or weights; prints the coverage report and exits 1 when a clip would fail")
    p.add_argument("--metrics", default=None,
                   help="comma-separated subset of the task's metrics to compute (default: all); a re-run adds "
                        "metrics to a stored run without recomputing those it has")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_evaluate)

"""``hugvis predict``: run a model or a baseline into a submission, or export / collect generation I/O.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(); sub = parser.add_subparsers()
    >>> register(sub)
    >>> args = parser.parse_args(["predict", "emotion", "--model", "baseline", "--dataset", "d", "--out", "s"])
    >>> args.settings, args.language, args.video_frames, args.resume, args.circular
    (None, 'auto', 8, False, 1)
"""

from __future__ import annotations

import sys
from pathlib import Path

#: Failures printed under the summary line (all of them are in the log).
SHOW_FAILURES = 10


def _predict(args) -> int:
    from ..references import DatasetSourceError
    from . import api
    from .runner import PredictSetupError

    modes = [m for m in ("model", "export", "collect") if getattr(args, m) is not None]
    if len(modes) != 1:
        print("error: give exactly one of --model, --export DIR, --collect OUTPUTS", file=sys.stderr)
        return 2
    if args.export is None and args.out is None:
        print("error: --out SUBMISSION_DIR is required with --model and --collect", file=sys.stderr)
        return 2
    common = dict(limit=args.limit, resume=args.resume, revision=args.revision, progress=not args.no_progress,
                  into_existing=args.into_existing)
    try:
        if args.export is not None:
            summary = api.export_inputs(args.task, args.dataset, args.export, **common)
        elif args.collect is not None:
            summary = api.collect_outputs(args.task, args.collect, args.dataset, args.out, **common)
        else:
            summary = api.predict(args.task, args.model, args.dataset, args.out, settings=args.settings,
                                  language=args.language, video_frames=args.video_frames,
                                  text_column=args.text_column, chunk_frames=args.chunk_frames,
                                  matting_reads_path=args.matting_input == "path", timeout=args.timeout,
                                  retries=args.retries, pipeline_task=args.pipeline_task, circular=args.circular,
                                  **common)
    except (PredictSetupError, DatasetSourceError, FileNotFoundError, ValueError) as err:
        from ..errors import one_line

        print(f"error: {one_line(err)}", file=sys.stderr)
        return 2
    print(summary.to_text())
    for unit, error in summary.failures[:SHOW_FAILURES]:
        print(f"  failed {unit}: {error}")
    if len(summary.failures) > SHOW_FAILURES:
        print(f"  ... {len(summary.failures) - SHOW_FAILURES} more in the log")
    return 1 if summary.failed else 0


def register(subparsers) -> None:
    """Add ``predict`` to the ``hugvis`` command line."""
    from .api import TASKS

    p = subparsers.add_parser(
        "predict", help="run a model or baseline into a submission folder; export/collect generation I/O",
        description="Write the submission layout hugvis evaluate reads (docs/PREDICT.md). Exit 1 when a clip failed.")
    p.add_argument("task", choices=TASKS)
    p.add_argument("--model", default=None,
                   help="baseline | module:function | openai:MODEL | transformers:ID_OR_PATH (emotion) | "
                        "selfie-segmentation (matting: MediaPipe's person mask as alpha)")
    p.add_argument("--export", type=Path, default=None, metavar="DIR",
                   help="generation tasks: write each clip's inputs to DIR/<clip_id>/ and DIR/manifest.jsonl")
    p.add_argument("--collect", type=Path, default=None, metavar="OUTPUTS",
                   help="generation tasks: gather OUTPUTS/<clip_id>.<ext> into --out, checking each clip")
    p.add_argument("--dataset", required=True, help="release tree, dataset repo folder, or Hub id")
    p.add_argument("--revision", default=None, help="Hub revision when --dataset is a Hub id")
    p.add_argument("--out", type=Path, default=None, help="the submission folder to write")
    p.add_argument("--limit", type=int, default=None, help="only the first N clips in grid order")
    p.add_argument("--resume", action="store_true", help="keep clips whose output exists and verifies")
    p.add_argument("--setting", dest="settings", action="append", default=None,
                   help="emotion input setting (repeatable): 'Image frame', Video, Audio, Text, 'Video + Audio', "
                        "'Video + Text', 'Video + Audio + Text'; the baseline defaults to Text")
    p.add_argument("--language", choices=("auto", "en", "zh", "both"), default="auto",
                   help="emotion prompt language (auto: the transcript's; both: every question in English and Chinese)")
    p.add_argument("--circular", type=int, default=1, metavar="K",
                   help="emotion: ask each clip K times (1..7) with the seven options rotated, for circular accuracy "
                        "and the flip rate (docs/PREDICT.md)")
    p.add_argument("--video-frames", type=int, default=8, help="emotion: frames sampled for Video settings")
    p.add_argument("--text-column", choices=("transcript", "asr_transcript"), default="transcript",
                   help="emotion: the text given for Text settings")
    p.add_argument("--timeout", type=float, default=60.0, help="openai: deadline in seconds for each whole request (connect, send, full answer)")
    p.add_argument("--retries", type=int, default=3, help="openai: retries after timeouts, 429 and 5xx")
    p.add_argument("--pipeline-task", default=None, help="transformers: pipeline task if not inferable")
    p.add_argument("--chunk-frames", type=int, default=32, help="matting: frames per model call")
    p.add_argument("--matting-input", choices=("frames", "path"), default="frames",
                   help="matting: call the model on frame chunks (default) or once per clip on the video's path")
    p.add_argument("--no-progress", action="store_true")
    from ..outputs import output_option

    output_option(p)
    p.set_defaults(func=_predict)

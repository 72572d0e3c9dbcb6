"""``hugvis report`` and ``hugvis mos``: read stored rows and ratings, never score.

Example:
    >>> import argparse
    >>> parser = argparse.ArgumentParser(); sub = parser.add_subparsers()
    >>> register(sub)
    >>> args = parser.parse_args(["report", "results", "--n-boot", "0"])
    >>> args.n_boot, args.format
    (0, 'md,tex,html')
"""

from __future__ import annotations

import sys
from pathlib import Path


def _report(args) -> int:
    from .report import build_report

    formats = tuple(f.strip() for f in args.format.split(",") if f.strip())
    progress = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    report = build_report(args.results, args.out, formats=formats, mos=args.mos, n_boot=args.n_boot,
                          figures=not args.no_figures, audit=args.audit, paper=not args.no_paper,
                          preferences=args.preferences, mos_all_raters=args.mos_all_raters,
                          into_existing=args.into_existing, progress=progress, people=args.people)
    if args.print:
        print(report.markdown)
    else:
        print(report_summary(report, args.out, args.mos is not None))
    for folder in report.skipped:
        print(f"warning: skipped results folder {folder}", file=sys.stderr)
    return 0


def report_summary(report, out, with_mos: bool) -> str:
    """What ``hugvis report`` prints: where the report is, its tables, and what would add the missing ones
    (the whole Markdown is in ``report.md``; ``--print`` prints it).

    Example:
        >>> from types import SimpleNamespace as R
        >>> from pathlib import Path
        >>> print(report_summary(R(files=[Path("r/report.md"), Path("r/matting.md")], tables={"matting": None}), "r", False))
        report written to r (2 files; the whole report: r/report.md, or hugvis report ... --print)
        - Table 11: Video matting
        - Tables 6, 8 and 10 (criterion-specific MOS): not in this report; pass --mos RATINGS.csv to add them
        >>> print(report_summary(R(files=[], tables={"matting": None}, mos_tables=["voice_cloning"]), "r", True))
        report written to r (0 files; the whole report: r/report.md, or hugvis report ... --print)
        - Table 10: Voice cloning, MOS
        - Table 11: Video matting
    """
    from .. import catalog
    from .report import MOS_NEEDS_RATINGS

    lines = [f"report written to {out} ({len(report.files)} files; the whole report: {Path(out) / 'report.md'}, or "
             f"hugvis report ... --print)"]
    tables = [(catalog.task(t).paper_table, catalog.task(t).label) for t in report.tables
              if catalog.task(t).paper_table is not None]
    tables += [(catalog.task(t).mos_table, f"{catalog.task(t).label}, MOS") for t in getattr(report, "mos_tables", ())]
    lines += [f"- Table {number}: {label}" for number, label in sorted(tables)]
    if not with_mos:
        lines.append(f"- {MOS_NEEDS_RATINGS}")
    return "\n".join(lines)


def _mos(args) -> int:
    from ..studies.mos import mos_report

    if str(args.ratings) == "status" and not args.ratings.is_file():
        return _mos_status(args)
    report = mos_report(args.ratings, n_boot=args.n_boot, seed=args.seed)
    print(report.to_text())
    if args.out:
        report.save(args.out, inputs=[("RATINGS", args.ratings)], into_existing=args.into_existing)
        print(f"written to {args.out}")
    return 1 if (args.strict and report.invalid_count) else 0


def _mos_status(args) -> int:
    """``hugvis mos status --study STUDY.json --log RATINGS.jsonl [--release DIR]``: study coverage."""
    from ..errors import ToolUsageError
    from ..studies.status import study_status

    if args.study is None or args.log is None:
        raise ToolUsageError("hugvis mos status needs --study STUDY.json and --log RATINGS.jsonl (the Space's "
                          "ratings/ratings.jsonl)")
    clips = None
    if args.release is not None:
        from ..datamodel.release import Release

        clips = [str(c) for c in Release(args.release).clip_ids()]
    print(study_status(args.study, args.log, clips))
    return 0


def register(subparsers) -> None:
    """Add ``report`` and ``mos`` to the ``hugvis`` command line."""
    from ..cli import nonnegative_int, positive_int
    from ..outputs import output_option

    r = subparsers.add_parser("report", help="paper-style tables, analyses and figures from stored results")
    r.add_argument("results", nargs="+", type=Path, help="results roots written by hugvis evaluate")
    r.add_argument("--out", type=Path, default=Path("report"))
    r.add_argument("--format", default="md,tex,html", help="comma-separated: md, tex, html")
    r.add_argument("--mos", type=Path, default=None, help="ratings CSV for the MOS tables and MOS-metric agreement")
    r.add_argument("--mos-all-raters", action="store_true",
                   help="count the raters the study's quality control flags in Tables 6/8/10 (the unfiltered view; "
                   "by default they are left out, as hugvis mos status flags them)")
    r.add_argument("--preferences", type=Path, default=None,
                   help="pairwise CSV (a pairwise study export): Bradley-Terry strengths and their agreement with "
                   "the MOS and the metrics in the Findings")
    r.add_argument("--people", type=Path, default=None,
                   help="emotion-study answers CSV (an emotion study's export, or a synthetic release's "
                   "simulated_systems/emotion_answers.csv): Table 4's People row per input setting, people against "
                   "the best model of each setting (docs/MOS.md)")
    r.add_argument("--n-boot", type=nonnegative_int, default=1000,
                   help="bootstrap replicates (actor-clustered; 1000, every surface's, by default)")
    r.add_argument("--no-figures", action="store_true")
    r.add_argument("--print", action="store_true", help="print the whole report (Markdown) instead of a summary")
    r.add_argument("--quiet", action="store_true", help="no progress lines on stderr (each step, with its counts)")
    r.add_argument("--no-paper", action="store_true",
                   help="leave the paper's published rows out of the task tables (shown by default, origin 'paper')")
    r.add_argument("--audit", type=Path, default=None,
                   help="audit folder of hugvis audit robustness: its noise floors after the Findings section")
    output_option(r)
    r.set_defaults(func=_report)

    m = subparsers.add_parser("mos", help="criterion-specific MOS per model from a ratings CSV")
    m.add_argument("ratings", type=Path, help="CSV with rater, clip_id, model, criterion, score (1..5)")
    m.add_argument("--out", type=Path, default=None, help="folder for mos.csv, invalid_ratings.csv, mos.json")
    m.add_argument("--n-boot", type=positive_int, default=1000)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--strict", action="store_true", help="exit 1 when any rating is invalid")
    # `hugvis mos status ...`: the study's coverage, flagged raters and MOS with and without them.
    m.add_argument("--study", type=Path, default=None, help="(mos status) the study file")
    m.add_argument("--log", type=Path, default=None, help="(mos status) the ratings log (ratings.jsonl)")
    m.add_argument("--release", type=Path, default=None, help="(mos status) release for a study's \"clips\": \"all\"")
    output_option(m)
    m.set_defaults(func=_mos)

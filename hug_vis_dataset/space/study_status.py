"""``hugvis mos status``: a study's coverage, flagged raters, MOS with and without them, agreement.

Reads only files: the study file, the ratings log and the session log next to it; shared by the CLI
(:mod:`hug_vis_dataset.reporting.commands`) and usable from a notebook.
"""

from __future__ import annotations

from pathlib import Path

from ..metrics.rater_qc import GOLD_MODELS
from ..studies.sessions import SESSIONS_FILE, SessionLog, coverage


def study_status(study_path: "str | Path", ratings_path: "str | Path", clip_ids: "list[str] | None" = None) -> str:
    """``hugvis mos status``: coverage, flagged raters, MOS with and without them, agreement (text).

    Reads the study file, the ratings log and the session log next to it (``sessions.jsonl``);
    ``clip_ids`` resolves a study's ``"clips": "all"``.
    """
    from ..metrics.rater_qc import flag_raters
    from ..mos import RATING_COLUMNS, agreement, validate_ratings
    from ..studies.spec import load_study
    from .mos_study import aggregate_ratings
    from .ratings import latest_ratings, read_log

    spec = load_study(study_path, clip_ids)
    ratings_path = Path(ratings_path)
    frame, problems = read_log(ratings_path)
    frame = latest_ratings(frame)
    mine = frame[frame["study"] == spec.name] if len(frame) else frame
    log = SessionLog(ratings_path.parent / SESSIONS_FILE, spec)
    answered = {r: set(g["item"]) for r, g in mine.groupby("rater")} if len(mine) else {}
    cov = coverage(spec, log.sessions(), answered)
    lines = [f"study {spec.name} ({spec.protocol}): {cov['items']} items, target {cov['target']} ratings each",
             "items by number of ratings: " + ", ".join(f"{c}: {n}" for c, n in cov["by_ratings"].items()),
             f"raters {cov['raters']}, sessions {cov['sessions']}, answers {cov['answers']} + {cov['gold_answers']} "
             f"gold, completion {100 * cov['completion']:.1f}%"]
    lines += [f"  {r}: {a} of {n} answered" for r, (a, n) in cov["per_rater"].items()]
    if problems:
        lines.append(f"{len(problems)} skipped line(s) in {ratings_path} (see the Space's MOS tab)")
    flags = flag_raters(mine.assign(item=mine["item"].fillna(mine["seq"].astype(str))), spec.qc) if len(mine) else None
    flagged = set(flags.loc[flags["flagged"], "rater"]) if flags is not None and len(flags) else set()
    lines += ["", f"flagged raters: {len(flagged)}"]
    if flags is not None and len(flags):
        lines += [f"  {r.rater}: {r.reasons}" for r in flags.itertuples() if r.flagged]
    for title, exclude in (("MOS (all raters)", set()), ("MOS without flagged raters", flagged)):
        table = aggregate_ratings(mine, exclude_raters=exclude)
        lines += ["", f"{title}:", table.to_string(index=False, float_format=lambda v: f"{v:.2f}") if len(table)
                  else "  no ratings"]
    rated = mine[~mine["model"].isin(GOLD_MODELS)] if len(mine) else mine
    if len(rated):
        lines += ["", "Inter-rater agreement (Krippendorff's alpha, interval; units = (clip, system)):"]
        for task, part in rated.groupby("task"):
            valid, _ = validate_ratings(part[list(RATING_COLUMNS)].astype(str))
            for criterion, a in agreement(valid).items():
                lines.append(f"  {task} {criterion}: alpha {a['alpha']:.3f}, {a['raters']} raters, "
                             f"{a['units']} units ({a['pairable_units']} pairable)")
    return "\n".join(lines)

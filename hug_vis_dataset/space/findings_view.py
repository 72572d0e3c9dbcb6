"""The Findings tab's joint view of metrics and human judgment (finding ii), as the Space shows it.

One function of its inputs, so it is tested without a browser: the report's joint tables
(:mod:`hug_vis_dataset.reporting.joint`) on a task's stored rows and a ratings frame, with the
message the tab prints under the table (SPA per metric and criterion, discordant pairs, notes).
"""

from __future__ import annotations

from .. import catalog
from ..presentation.escaping import markdown_text


def joint_finding(rows, task: str, ratings, whose: str, counted: bool = False):
    """``(table, None, message)`` for one generation task; ``whose`` says whose ratings these are; ``counted``: the
    ratings are already the counted ones (:func:`hug_vis_dataset.studies.judgments.counted_ratings` with the
    study's own thresholds), so quality control is not applied a second time.

    Example:
        >>> import pandas as pd
        >>> joint_finding(pd.DataFrame(), "audio_driven", None, "simulated raters")[2]
        'No ratings yet: rate the systems in the MOS study tab.'
    """
    import pandas as pd

    from ..reporting.joint import discordant_lines, joint_tables, joint_wide, small_sample_note, summary_frame

    if ratings is None or not len(ratings):
        return pd.DataFrame(), None, "No ratings yet: rate the systems in the MOS study tab."
    tables, why = joint_tables(rows, ratings, tasks=(task,), all_raters=counted, joint_only=True)
    if tables is None:
        return pd.DataFrame(), None, markdown_text(why)
    summary = summary_frame(tables)
    lines = [f"From {whose}; actors resampled as clusters, 95% intervals. SPA (people vs metric):", ""]
    accuracy = catalog.label_of("acc_eq")
    lines += [f"- {c} ({p}), {m}: SPA {spa}, top-k SPA {top}, {accuracy.lower()} {acc:.2f}"
              for c, p, m, spa, top, acc in zip(summary["Criterion"], summary["People"], summary["Metric"],
                                                 summary["SPA [95%]"], summary["top-k SPA [95%]"], summary[accuracy])]
    discordant = discordant_lines(tables, task)  # "- † ...": a list, escaped but for its bullet
    lines += [""] + ([f"- {markdown_text(line[2:])}" for line in discordant] or ["No discordant pair."])
    lines += [""] + [markdown_text(n) for n in sorted(set(n for n in tables.summary["note"] if n))]
    small = small_sample_note(tables, task)
    lines += [markdown_text(small)] if small else []
    return joint_wide(tables, task), None, "\n".join(lines)

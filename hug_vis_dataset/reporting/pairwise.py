"""The report's pairwise-preference findings: Bradley-Terry strengths and their agreement.

From a pairwise CSV (``hugvis report --preferences``; the synthetic release's
``simulated_systems/pairwise_ratings.csv``, or a study's export,
:meth:`~hug_vis_dataset.studies.preferences.PreferenceStore.to_csv`):

* :func:`strengths_frame` -- per task and criterion, each system's Bradley-Terry log-strength
  (mean 0) with its actor-clustered bootstrap interval, answers, wins, ties and rank
  (:func:`hug_vis_dataset.studies.bradley_terry.strengths_table`);
* :func:`pairwise_agreement_frame` -- the strengths against the MOS ranking and each automatic
  metric (``metric_mos_agreement``'s pairwise source, :func:`hug_vis_dataset.modules.mos_agreement_by_task`);
* :func:`pairwise_frames` -- both, for the Findings block (rendered by :mod:`hug_vis_dataset.reporting.findings`).

Example:
    >>> frame, why = strengths_frame(None)
    >>> len(frame), why
    (0, 'no pairwise answers: pass --preferences PAIRWISE.csv (a pairwise study export)')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

NO_ANSWERS = "no pairwise answers: pass --preferences PAIRWISE.csv (a pairwise study export)"
#: Bootstrap replicates of the strengths' intervals in the report (actors resampled).
STRENGTH_BOOT = 200


def _answers(preferences: Any):
    import pandas as pd

    from ..studies.answers import read_preferences

    if preferences is None:
        return pd.DataFrame()
    return read_preferences(preferences) if isinstance(preferences, (str, Path)) else pd.DataFrame(preferences)


def strengths_frame(preferences: Any, n_boot: int = STRENGTH_BOOT, seed: int = 0):
    """Bradley-Terry strengths per (task, criterion, system); ``(frame, why-empty)``."""
    import pandas as pd

    from ..studies.bradley_terry import PreferenceInputError, strengths_table

    answers = _answers(preferences)
    if answers.empty:
        return pd.DataFrame(), NO_ANSWERS
    parts = []
    for task, group in answers.groupby("task", sort=True):
        try:
            table = strengths_table(group, n_boot=n_boot, seed=seed)
        except PreferenceInputError as err:  # one line naming the file, the task and the systems
            source = preferences if isinstance(preferences, (str, Path)) else "pairwise answers"
            raise PreferenceInputError(f"{source}: task {task}: {err}") from None
        table.insert(0, "task", task)
        parts.append(table)
    return pd.concat(parts, ignore_index=True), ""


def pairwise_agreement_frame(rows, preferences: Any, ratings: Any = None, top_k: int = 3, all_raters: bool = False):
    """The strengths against the MOS (with ``ratings``) and each automatic metric; ``(frame, why-empty)``."""
    import pandas as pd

    from ..modules import ModuleInputError, mos_agreement_by_task

    if preferences is None:
        return pd.DataFrame(), NO_ANSWERS
    try:
        # Only the pairwise part: the MOS's own agreement is the MOS block's business.
        out = mos_agreement_by_task(rows, ratings=ratings, preferences=preferences, top_k=top_k, all_raters=all_raters,
                                    pairwise_only=True)
    except ModuleInputError as err:
        return pd.DataFrame(), str(err)
    pairwise = out.get("pairwise", {})
    if not pairwise:
        return pd.DataFrame(), "no task has both pairwise answers and stored rows of the same systems"
    return pd.concat([pd.DataFrame(v) for v in pairwise.values()], ignore_index=True), ""


#: The Findings block's heading and what its numbers are (findings.py renders the frames).
TITLE = "### Pairwise preference (Bradley-Terry) vs MOS and automatic metrics"
INTRO = ("Strengths are log Bradley-Terry strengths (mean 0 per criterion; a difference of 1 = odds e:1), a tie "
         "half a win, 0.5 virtual ties per compared pair, 95% intervals from actors resampled as clusters. "
         "Agreement: Spearman/Kendall of the strengths with the same criterion's MOS and with each automatic "
         "metric (lower-is-better negated), the best system of each, top-k overlap and pair accuracy.")


def pairwise_frames(rows, preferences: Any, ratings: Any = None, all_raters: bool = False) -> list:
    """The Findings block's two tables as ``[(frame, why-empty), ...]``: the strengths, then their
    agreement (metrics named by their catalog label)."""
    from .. import catalog

    strengths = strengths_frame(preferences)
    frame, why = pairwise_agreement_frame(rows, preferences, ratings, all_raters=all_raters)
    if not frame.empty:
        labels = {m.name: m.label for m in catalog.METRICS}
        frame = frame.assign(against=[labels.get(a, a) for a in frame["against"]])
    return [strengths, (frame, why)]

"""The check-only pass: would a submission score, without any weights and without computing a metric?

:func:`check_submission` runs, for every grid clip, what a scoring run does before its metrics
(:meth:`hug_vis_dataset.tasks.base.TaskScorer.check_job`): the layout and names (missing, extra,
unmatched, duplicate), then per prediction its decodability (the first frame or the audio header),
frame count, size and rate against the reference (``docs/SCORING.md``, "checks before scoring").
Frame counts come from the container, not from decoding, so a 1080p clip is checked in milliseconds.
The result is the same :class:`~hug_vis_dataset.scoring.coverage.Coverage` a run reports, with
``failed`` naming each clip that would fail and ``ok`` the clips that pass.

Example:
    >>> import tempfile, pathlib
    >>> from hug_vis_dataset.synth import synthesize
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = synthesize(root / "rel", actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.2,
    ...                size=(64, 36), systems=False)
    >>> sub = root / "sub"; sub.mkdir()
    >>> _ = (sub / "actor_0001_happy_action_01_script_001.wav").write_text("not audio")
    >>> cov = check_submission("voice_cloning", sub, root / "rel")
    >>> cov.ok, "unreadable prediction" in cov.failed["actor_0001_happy_action_01_script_001"]
    (0, True)
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .coverage import Coverage, submission_coverage


def check_submission(task: str, predictions: "str | Path", dataset: "str | Path", model: str = "submission",
                     revision: "str | None" = None, verify_dataset: bool = True,
                     on_checked: "Callable[[int, int], None] | None" = None) -> Coverage:
    """Check every clip of a submission against the dataset; loads no network and needs no weights.

    Args:
        task: a task name.
        predictions: the submission folder.
        dataset: a release tree, a dataset repo folder or a Hub id (as ``hugvis evaluate``).
        model: the name shown in the report.
        revision: Hub revision when ``dataset`` is a Hub id.
        verify_dataset: check a dataset repo's shards against its manifest first.
        on_checked: called with ``(clips checked, clips to check)`` after every clip.

    Returns:
        The coverage report; ``problems()`` is 0 exactly when every grid clip would score.
    """
    from ..references import open_reference_source
    from ..tasks import get_task, index_predictions
    from .jobs import build_jobs

    scorer = get_task(task)
    refs = open_reference_source(dataset, task, revision, verify=verify_dataset)
    index = index_predictions(task, predictions)
    coverage = submission_coverage(task, model, refs, index)
    skip = set(coverage.missing) | set(coverage.duplicates)
    jobs = [j for j in build_jobs(task, model, refs, index, (), {}) if j.clip_id not in skip]
    for done, job in enumerate(jobs, start=1):
        error = scorer.check_job(job)
        if error:
            coverage.failed[job.clip_id] = error
        else:
            coverage.ok += 1
        if on_checked is not None:
            on_checked(done, len(jobs))
    return coverage


__all__ = ["check_submission"]

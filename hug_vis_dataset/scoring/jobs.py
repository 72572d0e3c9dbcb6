"""What a run computes: the task's metrics it asks for (:func:`select_metrics`) and one job per clip (:func:`build_jobs`).

Shared by the runner's stages (:mod:`hug_vis_dataset.scoring.runner`) and ``--check-only``
(:mod:`hug_vis_dataset.scoring.check`), which builds the same jobs and scores none of them.
"""

from __future__ import annotations

from typing import Sequence

from ..references import ReferenceSource
from ..tasks import ClipJob, get_task
from .request import RunOptionError


def select_metrics(scorer, metrics: "Sequence[str] | None") -> tuple[str, ...]:
    """The task's metrics a run computes: all of them, or the subset ``metrics`` names (with the rows a
    corpus ratio is aggregated from: ``cer`` brings ``cer_edits`` and ``cer_ref_chars``).

    Example:
        >>> from hug_vis_dataset.tasks import get_task
        >>> select_metrics(get_task("vision_driven"), ["ssim", "psnr"])
        ('psnr', 'ssim')
        >>> select_metrics(get_task("voice_cloning"), ["cer"])
        ('cer', 'cer_edits', 'cer_ref_chars')
        >>> try:
        ...     select_metrics(get_task("matting"), ["psnr"])
        ... except RunOptionError as err:
        ...     print(err)
        matting does not compute psnr; its metrics: mad, mse, dtssd, grad, conn
        >>> try:  # FID pools the clips that score: it needs a per-clip metric to say which do
        ...     select_metrics(get_task("vision_driven"), ["fid"])
        ... except RunOptionError as err:
        ...     print(err)
        fid is computed over the clips that score, so it needs a per-clip metric of vision_driven beside it: e.g. --metrics psnr,fid
    """
    known = scorer.metrics + scorer.set_metrics
    if metrics is None:
        return known
    unknown = [m for m in metrics if m not in known]
    if unknown or not metrics:
        raise RunOptionError(f"{scorer.name} does not compute {', '.join(unknown) or 'an empty list'}; "
                             f"its metrics: {', '.join(known)}")
    if not set(metrics) & set(scorer.metrics):
        runnable = next((m for m, why in scorer.availability().items() if not why and m in scorer.metrics),
                        scorer.metrics[0])
        raise RunOptionError(f"{', '.join(metrics)} is computed over the clips that score, so it needs a per-clip "
                             f"metric of {scorer.name} beside it: e.g. --metrics {runnable},{metrics[0]}")
    from .. import catalog

    wanted = set(metrics) | {part for m in metrics for part in catalog.spec(m).ratio_of}
    return tuple(m for m in known if m in wanted)


def build_jobs(task_name: str, model: str, refs: ReferenceSource, index, metrics: tuple[str, ...],
               options: dict) -> list[ClipJob]:
    """One job per grid clip, in grid order (missing clips get a job that fails as 'missing'); a clip given as
    several samples (``index.samples``) is one job scoring each of them."""
    task = get_task(task_name)
    samples = getattr(index, "samples", {})
    jobs = []
    for cid in refs.clip_ids():
        record = refs.record(cid)
        found = tuple(index.found.get(cid, ()))
        numbered = samples.get(cid) if len(found) == 1 else None  # a duplicate fails as one, samples or not
        jobs.append(ClipJob(
            task=task_name, model=model, clip_id=record.clip_id, reference=refs.reference(cid),
            expected=task.expected(record), prediction=tuple(numbered.values()) if numbered else found,
            payload=index.payload.get(cid), metrics=metrics, options=options,
            samples=tuple(numbered) if numbered else (),
        ))
    return jobs


__all__ = ["build_jobs", "select_metrics"]

"""Coverage of a submission against the grid: missing, extra, unmatched, duplicate, failed clips.

Example:
    >>> cov = Coverage(task="voice_cloning", model="m", grid_size=2, predicted=1,
    ...                missing=["actor_0001_sad_action_01_script_002"])
    >>> cov.problems()
    1
    >>> print(cov.to_text().splitlines()[1])
      grid clips: 2, predicted: 1, scored ok: 0
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .. import catalog
from ..presentation.labels import skipped_lines


@dataclass
class Coverage:
    """What a submission covers; every list names clips (or entries) with the reason.

    Attributes:
        grid_size: clips in the reference dataset.
        predicted: grid clips with exactly one prediction.
        missing: grid clips with no prediction.
        extra: well-formed clip ids that are not in the reference grid.
        unmatched: submission entries naming no clip, ``{"name", "reason"}``.
        duplicates: clip -> the entries that all predict it (scored as failed).
        failed: clip -> error text of its failed rows (missing and duplicates excluded).
        ok: clips whose rows are all ``ok``.
        skipped_metrics: metric -> why it was not computed (missing weights / module).
        samples: how many samples the predicted clips hold, ``{"min", "max", "clips_with_samples"}``, when any clip
            was given as several samples (``<clip>/sample_<k>``); empty for one prediction per clip.
    """

    task: str
    model: str
    grid_size: int = 0
    predicted: int = 0
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    unmatched: list[dict] = field(default_factory=list)
    duplicates: dict[str, list[str]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    ok: int = 0
    skipped_metrics: dict[str, str] = field(default_factory=dict)
    samples: dict[str, int] = field(default_factory=dict)

    def problems(self) -> int:
        """Number of coverage problems (what ``--strict`` fails on)."""
        return len(self.missing) + len(self.extra) + len(self.unmatched) + len(self.duplicates) + len(self.failed)

    def to_dict(self) -> dict:
        out = {**asdict(self), "problems": self.problems()}
        if not self.samples:  # one prediction per clip: the record as before samples existed
            out.pop("samples")
        return out

    def refusals(self) -> dict[str, str]:
        """Why each clip would not score: duplicates (the scorer's wording), then failed checks."""
        return {**{c: f"duplicate predictions: {', '.join(names)}" for c, names in self.duplicates.items()},
                **self.failed}

    def failure_lines(self) -> list[str]:
        """One ``clip: why`` line per clip that would not score, as the report words them; the Space
        and ``hugvis predict --collect`` show these lines.

        >>> Coverage("matting", "m", failed={"c1": "SubmissionError: wrong frame count"}).failure_lines()
        ['c1: SubmissionError: wrong frame count']
        """
        return [f"{c}: {why}" for c, why in self.refusals().items()]

    def to_text(self, limit: int = 10) -> str:
        """Human-readable report, listing at most ``limit`` entries per kind."""
        task = catalog.task(self.task).label if self.task in catalog.task_names() else self.task
        lines = [f"coverage of {self.model} on {task}:",
                 f"  grid clips: {self.grid_size}, predicted: {self.predicted}, scored ok: {self.ok}"]
        if self.samples:
            k_min, k_max = self.samples["min"], self.samples["max"]
            lines.append(f"  samples per clip: {k_min if k_min == k_max else f'{k_min}-{k_max}'} "
                         f"({self.samples['clips_with_samples']} clips given as sample_<k> folders; "
                         "tables average a clip's samples)")

        def block(title: str, items: list[str]) -> None:
            if not items:
                return
            lines.append(f"  {title}: {len(items)}")
            lines.extend(f"    {item}" for item in items[:limit])
            if len(items) > limit:
                lines.append(f"    ... and {len(items) - limit} more")

        block("missing (no prediction)", self.missing)
        block("extra (clip not in the grid)", self.extra)
        block("unmatched entries", [f"{u['name']}: {u['reason']}" for u in self.unmatched])
        block("duplicates", [f"{c}: {', '.join(names)}" for c, names in self.duplicates.items()])
        block("failed", [f"{c}: {err}" for c, err in self.failed.items()])
        block("metrics skipped", skipped_lines(self.skipped_metrics))  # each metric once, by its label
        if not self.problems():
            lines.append("  no coverage problems")
        return "\n".join(lines)


def submission_coverage(task: str, model: str, refs: Any, index: Any, skipped: "dict[str, str] | None" = None) -> Coverage:
    """What a submission's names cover against the grid of ``refs`` (a reference source): missing,
    extra, unmatched, duplicate and predicted clips; ``failed`` and ``ok`` are left to the caller
    (the scoring run reads them from its rows, the check-only pass from its checks).
    """
    from ..datamodel.grid import ClipId

    grid = refs.clip_ids()
    grid_set = set(grid)
    coverage = Coverage(task=task, model=model, grid_size=len(grid), skipped_metrics=dict(skipped or {}))
    coverage.missing = [str(refs.record(c).clip_id) for c in grid if c not in index.found]
    coverage.extra = sorted((str(c) for c in index.found if c not in grid_set), key=lambda s: ClipId.parse(s))
    coverage.unmatched = [{"name": n, "reason": r} for n, r in index.unmatched]
    dups = index.duplicates()
    coverage.duplicates = {refs.record(c).clip_id if c in grid_set else str(c): [Path(p).name for p in v]
                           for c, v in sorted(dups.items())}
    coverage.predicted = sum(1 for c in grid if c in index.found and c not in dups)
    sampled = {c: k for c, k in getattr(index, "samples", {}).items() if c in grid_set and c not in dups}
    if sampled:
        counts = [len(sampled[c]) if c in sampled else 1 for c in grid if c in index.found and c not in dups]
        coverage.samples = {"min": min(counts), "max": max(counts), "clips_with_samples": len(sampled)}
    return coverage


def _series(values, rows):
    """``values`` as a Series on ``rows``' index (grouped by one of its columns)."""
    import pandas as pd

    return pd.Series(values, index=rows.index)


def run_coverage(task: str, model: str, refs: Any, index: Any, skipped: "dict[str, str] | None", rows: Any,
                 check_failures: "dict[str, str] | None" = None) -> Coverage:
    """The coverage a scoring run stores: :func:`submission_coverage` with ``failed`` and ``ok`` read
    from the run's rows (a clip is ok when none of its rows failed, rows counted alone aside), plus the clips whose checks failed
    with no metric to compute (``check_failures``); missing and duplicate clips are not failures.
    """
    coverage = submission_coverage(task, model, refs, index, skipped)
    skip = set(coverage.missing) | set(coverage.duplicates)
    if rows is not None and len(rows):
        from .. import catalog

        # A row counted alone (MetricSpec.counted_alone: a human-motion row, failing where the generated video
        # shows no person) never makes its clip a failure: its own failure stays in its row, counted per metric.
        alone = rows["metric"].isin([m.name for m in catalog.METRICS if m.counted_alone]).to_numpy()
        bad = (rows["status"] == "failed").to_numpy() & ~alone
        failed = rows[bad]
        first_error = failed.groupby("clip_id", sort=False)["error"].first()
        coverage.failed = {c: e for c, e in first_error.items() if c not in skip}
        coverage.ok = int((~_series(bad, rows).groupby(rows["clip_id"]).any()).sum())
    # Clips checked but with no metric to compute (all skipped): the checks still name them.
    coverage.failed.update({c: e for c, e in (check_failures or {}).items()
                            if c not in skip and c not in coverage.failed})
    return coverage

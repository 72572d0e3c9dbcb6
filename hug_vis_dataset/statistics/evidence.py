"""Which stored rows are compared with which: the comparison sets of every task, decided once from the rows.

A surface never decides on its own which systems to rank, test or pool; it asks :class:`Comparisons`, built from
the stored rows (and the origin of each run where the surface knows it):

* :meth:`Comparisons.sets`: the ranked groups of a task, one per comparison set
  (:func:`hug_vis_dataset.statistics.rules.comparison_set`: origin pool, partial runs apart, Table 4 per input
  setting); reference rows and built-in baselines are in none;
* :meth:`Comparisons.pooled`: the systems an analysis that pools a task's systems uses (variance decomposition,
  detectable differences, cross-task difficulties, the joint tables): the complete runs of one comparison set, the
  others named with why they were left out.

A run is **partial** when some of its clips were never predicted: their rows carry the error
:data:`hug_vis_dataset.datamodel.results.MISSING_PREDICTION`, so the rows alone say it, whichever door reads them.

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"task": "matting", "model": ["a", "b", "b", "baseline"], "metric": "mad",
    ...                      "clip_id": "actor_0001_sad_action_01_script_001", "value": 1.0,
    ...                      "status": ["ok", "ok", "failed", "ok"], "error": ["", "", "missing prediction: x", ""]})
    >>> c = Comparisons.from_rows(rows)
    >>> c.sets("matting"), c.pooled("matting")
    ({'subset': ['a'], 'subset (partial)': ['b']}, (['a'], {'b': 'partial run: 1 clip(s) of its grid missing'}))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from . import rules


@dataclass(frozen=True)
class RunInfo:
    """What the rules need to know of one row label of a task (a run, or one input setting of an emotion run)."""

    task: str
    label: str
    origin: str = "subset"
    n_missing: int = 0

    @property
    def partial(self) -> bool:
        return self.n_missing > 0

    @property
    def setting(self) -> str:
        from ..datamodel.results import EMOTION_MODEL_SEP

        return self.label.partition(EMOTION_MODEL_SEP)[2] if self.task == "emotion" else ""

    @property
    def reserved(self) -> bool:
        """Reference rows, built-in baselines and audit pseudo-systems: printed, never compared."""
        from ..datamodel.results import is_reference

        return is_reference(self.label)

    @property
    def comparison_set(self) -> str:
        return rules.comparison_set(self.origin, self.partial, self.setting)


class Comparisons:
    """The comparison sets of every task (module docstring)."""

    def __init__(self, infos: Iterable[RunInfo]):
        self._infos: dict[tuple[str, str], RunInfo] = {(i.task, i.label): i for i in infos}

    @classmethod
    def from_rows(cls, rows, origins: "Mapping[tuple[str, str], str] | None" = None) -> "Comparisons":
        """From per-clip rows of any tasks (``task``, ``model``, ``clip_id``, ``status``, ``error``); ``origins``:
        ``(task, model) -> origin`` of each run where known (an emotion label's model part is looked up)."""
        from ..datamodel.results import EMOTION_MODEL_SEP, MISSING_PREDICTION

        if rows is None or not len(rows):
            return cls([])
        from .sums import text_test

        missing = (text_test(rows["error"], lambda t: t.startswith(MISSING_PREDICTION))
                   & ~text_test(rows["status"], lambda t: t == "ok")) if "error" in rows.columns else None
        counts = (rows[missing].groupby(["task", "model"], observed=True)["clip_id"].nunique().to_dict()
                  if missing is not None and missing.any() else {})
        infos = []
        pairs = rows.groupby(["task", "model"], observed=True, sort=False).size().index
        for task, label in pairs:
            model = str(label).partition(EMOTION_MODEL_SEP)[0]
            origin = (origins or {}).get((task, model), (origins or {}).get((task, str(label)), "subset"))
            infos.append(RunInfo(str(task), str(label), origin, int(counts.get((task, label), 0))))
        return cls(infos)

    @classmethod
    def from_runs(cls, runs: Iterable[Any]) -> "Comparisons":
        """From stored runs (:class:`~hug_vis_dataset.scoring.runs.StoredRun`: task, model, origin, rows), each
        run's rows read on their own (nothing concatenated)."""
        infos: list[RunInfo] = []
        for run in runs:
            rows = getattr(run, "rows", None)
            if rows is None or not len(rows):
                continue
            infos.extend(cls.from_rows(rows, {(run.task, run.model): run.origin})._infos.values())
        return cls(infos)

    def info(self, task: str, label: str) -> RunInfo:
        return self._infos.get((task, label), RunInfo(task, label))

    def labels(self, task: str) -> list[str]:
        return sorted(label for t, label in self._infos if t == task)

    def sets(self, task: str) -> dict[str, list[str]]:
        """Comparison set -> its row labels (sorted), reserved rows left out."""
        out: dict[str, list[str]] = {}
        for label in self.labels(task):
            info = self.info(task, label)
            if not info.reserved:
                out.setdefault(info.comparison_set, []).append(label)
        return dict(sorted(out.items()))

    def pooled(self, task: str) -> tuple[list[str], dict[str, str]]:
        """``(labels, left out -> why)``: the labels an analysis pooling the task's systems uses: the complete,
        non-reserved runs of the first comparison pool that has any (benchmark, then synthetic, then subset)."""
        candidates = [self.info(task, label) for label in self.labels(task)]
        left: dict[str, str] = {}
        complete = []
        for info in candidates:
            if info.reserved:
                continue
            if info.partial:
                left[info.label] = f"partial run: {info.n_missing} clip(s) of its grid missing"
            else:
                complete.append(info)
        for pool in dict.fromkeys(rules.RANK_POOLS.values()):
            chosen = [i.label for i in complete if rules.RANK_POOLS.get(i.origin, "subset") == pool]
            if chosen:
                for info in complete:
                    if info.label not in chosen:
                        left[info.label] = f"another comparison set ({rules.RANK_POOLS.get(info.origin, 'subset')})"
                return chosen, dict(sorted(left.items()))
        return [], dict(sorted(left.items()))

    def left_out_words(self, task: str) -> str:
        """One sentence naming the runs a pooled analysis of ``task`` leaves out and why ("" when none)."""
        from .. import catalog

        left = self.pooled(task)[1]
        if not left:
            return ""
        name = catalog.task(task).label if task in catalog.task_names() else task
        return f"{name}: left out of analyses that pool its systems: " + "; ".join(
            f"{k} ({v})" for k, v in left.items()) + "."


def comparisons_of(rows: Any, comparisons: "Comparisons | None" = None) -> Comparisons:
    """``comparisons`` when given, else :meth:`Comparisons.from_rows` of ``rows``."""
    return comparisons if comparisons is not None else Comparisons.from_rows(rows)


__all__ = ["Comparisons", "RunInfo", "comparisons_of"]

"""The statistics engine: every interval, test, verdict and rule a surface shows comes from here.

The stored per-clip rows are arranged once into sufficient statistics (:mod:`.sums`: per-clip value matrices with
each clip's actor, per-frame rows reduced to per-actor sums by frame index), and every statistic is computed from
per-actor sums with the bootstrap's replicates as weight vectors over actors (:mod:`.draws`), all replicates in
one matrix product: task-table and MOS intervals (:mod:`.intervals`), the paired sign-flip test and paired
bootstrap (:mod:`.paired`), one verdict per comparison (:mod:`.verdicts`), one ranking of a table column with
marks the statistics back (:mod:`.ranking`). :mod:`.rules` states the rules every
surface applies (small samples, collapsed intervals, comparison sets, partial runs, missing vs failed) in the words
every surface prints, and :mod:`.evidence` which stored rows each surface compares (the comparison sets); :mod:`.seeds`
what the samples of a run scored over several samples per clip say (seed spread, rank stability). :mod:`.generic` keeps the generic bootstrap (any statistic re-evaluated on rebuilt
replicate frames) as the tests' reference; no surface calls it.

Modules: ``basics`` (Spearman, OLS, min-max, the draws, the percentile rule), ``draws``, ``sums``, ``intervals``,
``paired``, ``verdicts``, ``ranking``, ``rules``, ``evidence``, ``seeds``, ``generic``.

Example:
    >>> from hug_vis_dataset import statistics
    >>> statistics.rules.MIN_ACTORS, statistics.verdicts.compare.__name__
    (6, 'compare')
"""

from . import basics, draws, evidence, generic, intervals, paired, ranking, rules, seeds, sums, verdicts  # noqa: F401

__all__ = ["basics", "draws", "evidence", "generic", "intervals", "paired", "ranking", "rules", "seeds", "sums",
           "verdicts"]

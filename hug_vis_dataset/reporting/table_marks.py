"""The marks of a report table: which cells are best / second, and which carry a verdict's or a small sample's mark.

Every report table ranks as the board ranks (:func:`hug_vis_dataset.statistics.ranking.rank_column`: within a
comparison set, on printed values, best / second only where the verdicts separate the rows) and marks an interval
that is not a 95% interval (:func:`hug_vis_dataset.statistics.rules.interval_mark`), with the legends the caption
states.

Example:
    >>> from types import SimpleNamespace as CI
    >>> print(collapsed_intervals({("m", "csim"): CI(low=71.43, high=71.43, n_clusters=2),
    ...                            ("m", "psnr"): CI(low=20.0, high=21.0, n_clusters=2)}))
    Warning: 1 interval(s) collapsed to a point (m CSIM: low = high with 2 actors): so few actors resample to the same mean, so the interval says nothing about uncertainty; score more actors.
"""

from __future__ import annotations

from .. import catalog


def collapsed_intervals(cis: "dict | None") -> str:
    """A warning naming the intervals that collapsed to a point (low = high) although two or more actors
    were resampled: with so few actors every resample can give the same mean, and "71.43 [71.43, 71.43]"
    reads as certainty it is not; "" when none collapsed.

    """
    import math

    single = sum(1 for ci in (cis or {}).values() if getattr(ci, "n_clusters", 2) < 2)
    note = (f"{single} interval(s) left out: one actor, nothing to resample." if single else "")
    bad = [(key, ci) for key, ci in (cis or {}).items() if getattr(ci, "n_clusters", 0) >= 2
           and math.isfinite(float(ci.low)) and float(ci.low) == float(ci.high)]
    if not bad:
        return note
    actors = sorted({int(ci.n_clusters) for _, ci in bad})
    names = ", ".join(" ".join(_shown_name(k) for k in key) for key, _ in bad[:6]) + (" ..." if len(bad) > 6 else "")
    return (f"Warning: {len(bad)} interval(s) collapsed to a point ({names}: low = high with "
            f"{'/'.join(map(str, actors))} actors): so few actors resample to the same mean, so the interval says "
            "nothing about uncertainty; score more actors." + (f" {note}" if note else ""))


def with_own_actors(cis: "dict | None", rows, task: str) -> dict:
    """The intervals as a table shows them: each labelled with the actors its own row label's clips cover (an
    interval is computed over the task's actors; a partial run of one actor's clips has one, and its interval is
    then no interval: nothing of its own to resample), so a caption never says "2 actors" of a run with one.

    Example:
        >>> import pandas as pd
        >>> from hug_vis_dataset.statistics.basics import BootstrapCI
        >>> rows = pd.DataFrame({"task": "matting", "model": ["a", "a", "b"], "status": "ok",
        ...                      "actor_id": [1, 2, 1]})
        >>> ci = BootstrapCI(1.0, 1.0, 1.0, 0.95, 10, 10, 2)
        >>> {k: v.n_clusters for k, v in with_own_actors({("a", "mad"): ci, ("b", "mad"): ci}, rows, "matting").items()}
        {('a', 'mad'): 2, ('b', 'mad'): 1}
    """
    from dataclasses import replace

    if not cis or rows is None or "actor_id" not in getattr(rows, "columns", ()):
        return dict(cis or {})
    mine = rows[(rows["task"] == task) & (rows["status"] == "ok")] if "status" in rows.columns else rows
    actors = mine.groupby(mine["model"].astype(str))["actor_id"].nunique().to_dict()
    return {key: replace(ci, n_clusters=min(int(ci.n_clusters), int(actors.get(str(key[0]), ci.n_clusters))))
            if hasattr(ci, "n_clusters") else ci for key, ci in cis.items()}


def _shown_name(name) -> str:
    """A model or metric as a table prints it (a metric by its label, a reserved row by its label)."""
    from ..datamodel.results import reserved_label

    name = str(name)
    return catalog.spec(name).label if name in catalog.METRIC_NAMES else reserved_label(name)



def _measure(m: str, labels: "dict | None"):
    """(label, higher is better, printed text of a value, set-level) of a column: a catalog metric's, else a MOS
    criterion's (higher is better, the board's printing)."""
    if m in catalog.METRIC_NAMES:
        spec = catalog.spec(m)
        return spec.label, spec.higher_is_better, spec.printed, spec.mode == catalog.SET_LEVEL
    from ..leaderboard.board import print_value

    return (labels or {}).get(m, m), True, print_value, False


def table_marks(task: str, frame, metrics, texts, unranked, cis, group, comparisons=None, evidence=None,
                labels: "dict | None" = None):
    """``(marks, suffixes, legends)`` of a report table: the board's ranking of every column
    (:func:`hug_vis_dataset.statistics.ranking.rank_column` within comparison sets, verdict marks, marks only where
    the verdicts separate the rows) and the small-sample mark after an interval that is not a 95% interval.

    ``frame``: the table's rows with ``model`` (as printed), ``_label`` (the row's label in the per-clip rows; None
    for a paper row), ``_origin`` and, with ``group``, ``input``; a column outside the catalog (a MOS criterion,
    named by ``labels``) is higher-is-better."""
    import math

    from ..statistics.ranking import Entry, rank_column
    from ..statistics.rules import comparison_set, interval_mark, small_sample_legend

    marked, suffixes, legends = {}, {}, {}
    actor_counts = []
    for m in metrics:
        name, higher, printed, set_level = _measure(m, labels)
        entries = []
        for i in range(len(frame)):
            value = frame[m].iat[i]
            shown = (float(texts[(i, m)]) if (i, m) in texts else float(printed(float(value)))) \
                if value is not None and value == value else math.nan
            label = frame["_label"].iat[i] if isinstance(frame["_label"].iat[i], str) else None
            info = comparisons.info(task, label) if comparisons is not None and label else None
            entries.append(Entry(i, comparison_set(frame["_origin"].iat[i], bool(info and info.partial),
                                                   frame["input"].iat[i] if group else ""),
                                 shown, label, frame["model"].iat[i] not in unranked))
        compared = evidence if evidence is not None and not set_level else None
        for i, outcome in rank_column(entries, task, m, higher, compared).items():
            marked[(i, m)] = outcome.mark
            marks = [outcome.verdict.mark] if outcome.verdict is not None and outcome.verdict.mark else []
            if outcome.verdict is not None and outcome.verdict.legend:
                legends.setdefault(f"{name}: {outcome.verdict.legend}", None)
            label = entries[i].label
            ci = (cis or {}).get((label, m)) if label else None
            actors = getattr(ci, "n_clusters", None)  # (an interval given without its actor count: no mark)
            if ci is not None and actors is not None and actors >= 2:
                actor_counts.append(actors)
                marks.append(interval_mark(actors, ci.low, ci.high))
            shown = "".join(dict.fromkeys(k for k in marks if k))
            if shown:
                suffixes[(i, m)] = shown
    small = small_sample_legend(actor_counts)
    return marked, suffixes, ([small] if small else []) + list(legends)


__all__ = ["collapsed_intervals", "table_marks"]

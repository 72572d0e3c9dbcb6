"""Do automatic metrics rank generation systems as people do, and do they agree on the best?

The paper's finding (ii), "automatic metrics and human judgments agree in overall trend but differ
at the top", measured. For one task, every (automatic metric, MOS criterion) pair is compared at the
system level (one mean per system each):

* **trend**: Spearman's rho and Kendall's tau-b between the metric means and the MOS means, the
  metric first multiplied by -1 when lower is better (so +1 always means full agreement);
* **top**: ``same_top1`` (the system(s) with the best metric value include one with the best MOS),
  ``top_k_overlap`` (shared systems of the two top-k sets over the larger set's size, which is k
  unless values tie at the k-th place: tied systems are all in), and **pairwise ranking accuracy**,
  the share of system pairs the metric orders as the MOS does, among the MOS top-k systems
  (``pairwise_top_k``) versus among all systems (``pairwise_all``). Pairs with equal MOS are left
  out; a pair the metric ties counts one half.

It runs on system means alone, so it applies to the paper's own Tables 5+6, 7+8 and 9+10
(:func:`paper_agreement`); given per-clip rows instead (:func:`metric_mos_agreement_rows`), it adds
percentile intervals of rho and tau from the actor-clustered bootstrap of
:func:`hug_vis_dataset.statistics.generic.bootstrap_ci`, computed by the statistics engine from per-actor sums.

**Pairwise source.** The second protocol's Bradley-Terry strengths are another human ranking:
:func:`strength_agreement` (system means) compares them with the MOS ranking of the same criterion
and with each automatic metric (from answers and per-clip rows, the study fits the strengths first:
:func:`hug_vis_dataset.studies.bradley_terry.strength_agreement_rows`).

Run ``python -m hug_vis_dataset.metrics.mos_agreement`` to print the paper's tables' agreement as
Markdown (what ``docs/FINDINGS.md`` shows).

Example:
    >>> import pandas as pd
    >>> auto = pd.DataFrame({"err": [1.0, 2.0, 3.0, 4.0]}, index=["a", "b", "c", "d"])   # lower is better
    >>> mos = pd.DataFrame({"mos": [4.0, 4.5, 2.0, 1.0]}, index=["a", "b", "c", "d"])
    >>> r = metric_mos_agreement(auto, mos, higher_is_better={"err": False}, top_k=2).iloc[0]
    >>> round(float(r.spearman), 3), r.top1_metric, r.top1_mos, bool(r.same_top1), float(r.pairwise_top_k)
    (0.8, 'a', 'b', False, 0.0)
    >>> round(float(r.pairwise_all), 3)   # 5 of the 6 pairs ordered as people do
    0.833
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

import numpy as np

DEFAULT_TOP_K = 3
AGREEMENT_COLUMNS: tuple[str, ...] = (
    "task", "metric", "criterion", "n_systems", "spearman", "kendall", "top1_metric", "top1_mos", "same_top1",
    "top_k", "top_k_overlap", "pairwise_top_k", "pairwise_all",
)


class AgreementInputError(ValueError):
    """Tables that cannot be compared: no shared systems, unknown direction, missing columns."""


# ----------------------------------------------------------------------------- rank helpers
def _tied_top(values: Mapping[str, float], k: int) -> set[str]:
    """Systems ranked <= k when tied values share the best of their ranks (ties at the k-th all in)."""
    ordered = sorted(values.values(), reverse=True)
    cut = ordered[min(k, len(ordered)) - 1]
    return {name for name, v in values.items() if v >= cut}


def pairwise_accuracy(metric: Mapping[str, float], mos: Mapping[str, float], systems: Iterable[str]) -> float:
    """Share of system pairs (with different MOS) that the metric orders like the MOS; metric ties = 1/2.

    Both mappings are "higher is better". NaN when no pair has different MOS.

    Example:
        >>> pairwise_accuracy({"a": 3, "b": 2, "c": 2}, {"a": 1, "b": 2, "c": 3}, "abc")  # (0 + 0 + 1/2) / 3
        0.16666666666666666
    """
    names = sorted(systems)
    score = 0.0
    pairs = 0
    for i, x in enumerate(names):
        for y in names[i + 1:]:
            human = np.sign(mos[x] - mos[y])
            if human == 0:
                continue
            auto = np.sign(metric[x] - metric[y])
            score += 1.0 if auto == human else (0.5 if auto == 0 else 0.0)
            pairs += 1
    return score / pairs if pairs else math.nan


def _kendall(x: np.ndarray, y: np.ndarray) -> float:
    from scipy.stats import kendalltau

    if x.size < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(kendalltau(x, y).statistic)


def _pair_row(metric: Mapping[str, float], mos: Mapping[str, float], top_k: int) -> dict[str, Any]:
    from ..statistics.basics import spearman

    systems = sorted(set(metric) & set(mos))
    x = np.array([metric[s] for s in systems])
    y = np.array([mos[s] for s in systems])
    if not systems:
        return {"n_systems": 0, "spearman": math.nan, "kendall": math.nan, "top1_metric": "", "top1_mos": "",
                "same_top1": None, "top_k": top_k, "top_k_overlap": math.nan, "pairwise_top_k": math.nan,
                "pairwise_all": math.nan}
    m = dict(zip(systems, x))
    h = dict(zip(systems, y))
    top1_metric, top1_mos = _tied_top(m, 1), _tied_top(h, 1)
    top_metric, top_mos = _tied_top(m, top_k), _tied_top(h, top_k)
    return {
        "n_systems": len(systems), "spearman": spearman(x, y), "kendall": _kendall(x, y),
        "top1_metric": " = ".join(sorted(top1_metric)), "top1_mos": " = ".join(sorted(top1_mos)),
        "same_top1": bool(top1_metric & top1_mos), "top_k": top_k,
        "top_k_overlap": len(top_metric & top_mos) / max(len(top_metric), len(top_mos)),
        "pairwise_top_k": pairwise_accuracy(m, h, top_mos), "pairwise_all": pairwise_accuracy(m, h, systems),
    }


def _direction(metric: str, higher_is_better: "Mapping[str, bool] | None") -> float:
    if higher_is_better is not None and metric in higher_is_better:
        return 1.0 if higher_is_better[metric] else -1.0
    from ..catalog import spec as metric_spec

    try:
        return 1.0 if metric_spec(metric).higher_is_better else -1.0
    except KeyError:
        raise AgreementInputError(f"no direction known for metric {metric!r}: pass higher_is_better={{...}}") from None


# ----------------------------------------------------------------------------- system means
def metric_mos_agreement(metric_means: Any, mos_means: Any, higher_is_better: "Mapping[str, bool] | None" = None,
                         top_k: int = DEFAULT_TOP_K, task: str = ""):
    """Agreement of every (automatic metric, MOS criterion) pair from system-level means.

    Args:
        metric_means: DataFrame, index = system, one column per automatic metric (any units).
        mos_means: DataFrame, index = system, one column per MOS criterion (higher is better).
        higher_is_better: direction per metric; metrics not given are looked up with
            :func:`hug_vis_dataset.catalog.spec`.
        top_k: size of the top sets (systems tied at the k-th place are all in).
        task: copied into the ``task`` column.

    Returns:
        A DataFrame with :data:`AGREEMENT_COLUMNS`, one row per pair (metric order, then criterion
        order). Each pair uses the systems with finite values in both columns.

    Raises:
        AgreementInputError: ``top_k < 1`` or a metric without a known direction.
    """
    import pandas as pd

    if top_k < 1:
        raise AgreementInputError(f"top_k must be >= 1, got {top_k}")
    rows = []
    for metric in metric_means.columns:
        sign = _direction(str(metric), higher_is_better)
        auto = {str(s): sign * float(v) for s, v in metric_means[metric].items() if np.isfinite(float(v))}
        for criterion in mos_means.columns:
            human = {str(s): float(v) for s, v in mos_means[criterion].items() if np.isfinite(float(v))}
            rows.append({"task": task, "metric": str(metric), "criterion": str(criterion),
                         **_pair_row(auto, human, top_k)})
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))


# ----------------------------------------------------------------------------- per-clip rows
def metric_mos_agreement_rows(metric_rows: Any, mos_rows: Any, higher_is_better: "Mapping[str, bool] | None" = None,
                              top_k: int = DEFAULT_TOP_K, task: str = "", n_boot: int = 1000, level: float = 0.95,
                              seed: int = 0):
    """:func:`metric_mos_agreement` of per-clip rows, with actor-clustered bootstrap intervals.

    System means are plain means over each system's clips (automatic metrics: result rows with
    status ok and a finite value; MOS: per-clip means over raters, as :func:`hug_vis_dataset.studies.mos.clip_means`
    gives them). The bootstrap draws actors with replacement over both tables together, so a drawn
    actor brings its clips' metric values and ratings, and recomputes rho and tau.

    Args:
        metric_rows: ``model``, ``clip_id``, ``metric``, ``value`` (``actor_id``, ``status`` optional).
        mos_rows: ``model``, ``clip_id``, ``criterion``, ``score`` (``actor_id`` optional).
        n_boot, level, seed: the actor bootstrap's (:func:`hug_vis_dataset.statistics.draws.draw_weights`).

    Returns:
        The agreement frame plus ``spearman_low``, ``spearman_high``, ``kendall_low``,
        ``kendall_high`` (NaN with a single actor: nothing to resample).
    """
    import pandas as pd

    auto = metric_rows.copy() if isinstance(metric_rows, pd.DataFrame) else pd.DataFrame(list(metric_rows))
    human = mos_rows.copy() if isinstance(mos_rows, pd.DataFrame) else pd.DataFrame(list(mos_rows))
    for name, frame, needed in (("metric_rows", auto, ("model", "clip_id", "metric", "value")),
                                ("mos_rows", human, ("model", "clip_id", "criterion", "score"))):
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise AgreementInputError(f"{name} lack columns {missing}")
    if "status" in auto.columns:
        auto = auto[auto["status"].fillna("ok") == "ok"]
    auto = auto.assign(kind="metric", name=auto["metric"], value=auto["value"].astype(float))
    human = human.assign(kind="mos", name=human["criterion"], value=human["score"].astype(float))
    columns = ["model", "clip_id", "kind", "name", "value"]
    if "actor_id" in auto and "actor_id" in human:  # else bootstrap_ci reads the actor from the clip id
        columns.append("actor_id")
    combined = pd.concat([auto[columns], human[columns]], ignore_index=True)
    combined = combined[np.isfinite(combined["value"])].sort_values(["kind", "name", "model", "clip_id"], kind="stable")
    metric_order = [str(m) for m in auto["metric"].unique()]  # in order of appearance, one pass
    criterion_order = [str(c) for c in human["criterion"].unique()]
    directions = {m: _direction(str(m), higher_is_better) > 0 for m in metric_order}

    def table(frame):
        means = frame.groupby(["kind", "name", "model"], sort=True)["value"].mean()
        wide = {kind: means.xs(kind).unstack("name") if kind in means.index.get_level_values(0) else pd.DataFrame()
                for kind in ("metric", "mos")}
        m = wide["metric"].reindex(columns=metric_order)
        h = wide["mos"].reindex(columns=criterion_order)
        return metric_mos_agreement(m, h, directions, top_k, task)

    point = table(combined)

    for stat in ("spearman", "kendall"):
        for end in ("low", "high"):
            point[f"{stat}_{end}"] = math.nan
    if not len(combined) or not len(point):
        return point
    intervals = _rank_correlation_intervals(combined, point, directions, n_boot, level, seed)
    for i, (m, c) in enumerate(zip(point["metric"], point["criterion"])):
        for stat in ("spearman", "kendall"):
            ci = intervals.get((m, c, stat))
            # One actor: every replicate is the data itself, a zero-width "interval" that says nothing.
            if ci is not None and ci.n_clusters > 1:
                point.loc[point.index[i], [f"{stat}_low", f"{stat}_high"]] = [ci.low, ci.high]
    return point


def _rank_correlation_intervals(combined, point, directions: Mapping[str, bool], n_boot: int, level: float,
                                seed: int) -> dict:
    """Actor-bootstrap intervals of rho and tau of every (metric, criterion) row of ``point``, every replicate at
    once: the systems' means of each replicate from per-actor sums (the statistics engine's weights), the rank
    correlations of all replicates vectorised (:func:`~hug_vis_dataset.statistics.basics.spearman_rows`,
    :func:`~hug_vis_dataset.statistics.basics.kendall_rows`); a replicate missing a system's value (no drawn
    actor rated it) is computed on its own, as the generic path would."""
    from ..statistics.basics import kendall_rows, spearman_rows
    from ..statistics.draws import check_level, draw_weights, percentile_intervals, replicate_means
    from ..statistics.intervals import grouped_sums
    from ..statistics.sums import _actor_ids

    check_level(level)
    actor_ids = _actor_ids(combined)
    actors = np.unique(actor_ids)
    weights = draw_weights(len(actors), n_boot, seed)
    uniques, sums, counts = grouped_sums(combined[["kind", "name", "model"]], actor_ids,
                                         combined["value"].to_numpy(float), actors)
    replicates = replicate_means(weights, sums, counts)
    column = {k: i for i, k in enumerate(uniques)}
    points, reps, names = [], [], []
    for metric, criterion in zip(point["metric"], point["criterion"]):
        sign = 1.0 if directions.get(metric, True) else -1.0
        systems = sorted({k[2] for k in uniques if k[:2] == ("metric", metric)}
                         & {k[2] for k in uniques if k[:2] == ("mos", criterion)})
        x = sign * replicates[:, [column[("metric", metric, s)] for s in systems]]
        y = replicates[:, [column[("mos", criterion, s)] for s in systems]]
        whole = np.isfinite(x).all(axis=1) & np.isfinite(y).all(axis=1)
        values = {"spearman": np.full(len(x), np.nan), "kendall": np.full(len(x), np.nan)}
        values["spearman"][whole] = spearman_rows(x[whole], y[whole])
        values["kendall"][whole] = kendall_rows(x[whole], y[whole])
        for b in np.flatnonzero(~whole):  # the systems this replicate has
            keep = np.isfinite(x[b]) & np.isfinite(y[b])
            values["spearman"][b] = spearman_rows(x[b, keep][None], y[b, keep][None])[0]
            values["kendall"][b] = kendall_rows(x[b, keep][None], y[b, keep][None])[0]
        row = point[(point["metric"] == metric) & (point["criterion"] == criterion)].iloc[0]
        for stat in ("spearman", "kendall"):
            names.append((metric, criterion, stat))
            points.append(float(row[stat]))
            reps.append(values[stat])
    cis = percentile_intervals(points, np.stack(reps, axis=1), level, len(actors)) if reps else []
    return dict(zip(names, cis))


# ----------------------------------------------------------------------------- the pairwise source
PAIRWISE_AGREEMENT_COLUMNS: tuple[str, ...] = (
    "task", "criterion", "against", "n_systems", "spearman", "kendall", "top1_pairwise", "top1_against",
    "same_top1", "top_k", "top_k_overlap", "pairwise_top_k", "pairwise_all",
)


def strength_agreement(strengths: Any, mos_means: Any = None, metric_means: Any = None,
                       higher_is_better: "Mapping[str, bool] | None" = None, top_k: int = DEFAULT_TOP_K,
                       task: str = ""):
    """Agreement of the pairwise protocol's Bradley-Terry strengths with the MOS and each automatic metric.

    The strengths are the reference ranking ("human", pairwise); each criterion's strengths are compared
    with the same criterion's MOS (``against`` = ``"MOS"``) and with every automatic metric (``against``
    = the metric's name; lower-is-better metrics negated), with the statistics of
    :func:`metric_mos_agreement` (``top1_pairwise`` / ``top1_against``: the best system of each;
    ``pairwise_top_k``: pair accuracy among the strengths' top-k).

    Args:
        strengths: DataFrame, index = system, one column per criterion (log-strength, higher is better).
        mos_means: DataFrame, index = system, one column per MOS criterion (optional).
        metric_means: DataFrame, index = system, one column per automatic metric (optional).
        higher_is_better, top_k, task: as :func:`metric_mos_agreement`.

    Returns:
        DataFrame with :data:`PAIRWISE_AGREEMENT_COLUMNS`, per criterion: the MOS row, then one per metric.

    Example:
        >>> import pandas as pd
        >>> bt = pd.DataFrame({"lip_sync": [0.9, 0.1, -1.0]}, index=["a", "b", "c"])
        >>> mos = pd.DataFrame({"lip_sync": [3.9, 4.1, 2.0]}, index=["a", "b", "c"])
        >>> err = pd.DataFrame({"err": [1.0, 2.0, 3.0]}, index=["a", "b", "c"])
        >>> t = strength_agreement(bt, mos, err, higher_is_better={"err": False})
        >>> t[["against", "spearman", "top1_pairwise", "top1_against", "same_top1"]].values.tolist()
        [['MOS', 0.5, 'a', 'b', False], ['err', 1.0, 'a', 'a', True]]
    """
    import pandas as pd

    if top_k < 1:
        raise AgreementInputError(f"top_k must be >= 1, got {top_k}")
    rows = []
    for criterion in strengths.columns:
        human = {str(s): float(v) for s, v in strengths[criterion].items() if np.isfinite(float(v))}
        others = []
        if mos_means is not None and criterion in mos_means.columns:
            others.append(("MOS", 1.0, mos_means[criterion]))
        if metric_means is not None:
            others += [(str(m), _direction(str(m), higher_is_better), metric_means[m]) for m in metric_means.columns]
        for name, sign, column in others:
            values = {str(s): sign * float(v) for s, v in column.items() if np.isfinite(float(v))}
            row = _pair_row(values, human, top_k)
            row["top1_pairwise"], row["top1_against"] = row.pop("top1_mos"), row.pop("top1_metric")
            rows.append({"task": task, "criterion": str(criterion), "against": name, **row})
    return pd.DataFrame(rows, columns=list(PAIRWISE_AGREEMENT_COLUMNS))


# ----------------------------------------------------------------------------- the paper's tables
def paper_table_pairs(path: Any = None) -> list[tuple[str, int, int]]:
    """``(task, objective table, subjective table)`` of every generation task the paper rates.

    The objective table of a task is :data:`hug_vis_dataset.datamodel.paper_tables.TASK_TABLES`'s; the
    subjective one is the paper's other table of that task.

    Example:
        >>> paper_table_pairs()
        [('audio_driven', 5, 6), ('vision_driven', 7, 8), ('voice_cloning', 9, 10)]
    """
    from ..datamodel.paper_tables import TASK_TABLES, paper_data

    out = []
    for task, objective in TASK_TABLES.items():
        others = [t["table"] for t in paper_data(path)["tables"] if t["task"] == task and t["table"] != objective]
        if others:
            out.append((task, objective, others[0]))
    return sorted(out, key=lambda item: item[1])


def paper_agreement(top_k: int = DEFAULT_TOP_K, path: Any = None):
    """:func:`metric_mos_agreement` on the paper's Tables 5+6, 7+8 and 9+10 (published numbers only).

    Reference rows the paper does not rank (Table 9's real audio) are left out; systems are
    matched by name. Directions come from the metric table (:func:`hug_vis_dataset.catalog.spec`).

    Example:
        >>> frame = paper_agreement()
        >>> frame.groupby("task").size().to_dict()
        {'audio_driven': 9, 'vision_driven': 15, 'voice_cloning': 6}
    """
    import pandas as pd

    from ..datamodel.paper_tables import UNRANKED_SOURCES, paper_frame, table_info

    values = paper_frame(path)
    values = values[~values["source"].isin(UNRANKED_SOURCES)]
    parts = []
    for task, objective, subjective in paper_table_pairs(path):
        wide = {}
        for table in (objective, subjective):
            keys = [m["key"] for m in table_info(table, path)["metrics"]]
            sub = values[values["table"] == table]
            wide[table] = sub.pivot(index="model", columns="metric", values="value").reindex(columns=keys)
        parts.append(metric_mos_agreement(wide[objective], wide[subjective], top_k=top_k, task=task))
    return pd.concat(parts, ignore_index=True)


def _cell(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        text = f"{value:.{digits}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text  # no "-0.00"
    return str(value)


def agreement_markdown(frame, path: Any = None) -> str:
    """The agreement frame as Markdown: one table per task, then per-task summary lines.

    Metric and criterion names are the paper's column headers (automatic metrics through
    :func:`hug_vis_dataset.catalog.spec`, MOS criteria from the paper's table).
    """
    from ..datamodel.paper_tables import paper_data
    from ..catalog import spec as metric_spec

    criterion_display = {}
    for table in paper_data(path)["tables"]:
        for m in table["metrics"]:
            criterion_display.setdefault((table["task"], m["key"]), m["display"])
    lines = []
    for task, part in frame.groupby("task", sort=False):
        k = int(part["top_k"].iloc[0])
        lines += [f"### {task} ({int(part['n_systems'].max())} systems)", "",
                  f"| metric | MOS criterion | Spearman | Kendall | best by metric | best by MOS | same best | "
                  f"top-{k} overlap | pairwise acc. top-{k} | pairwise acc. all |",
                  "| --- | --- | ---: | ---: | --- | --- | --- | ---: | ---: | ---: |"]
        for r in part.itertuples():
            lines.append(
                f"| {metric_spec(r.metric).label} | {criterion_display.get((task, r.criterion), r.criterion)} | "
                f"{_cell(r.spearman)} | {_cell(r.kendall)} | {r.top1_metric} | {r.top1_mos} | {_cell(r.same_top1)} | "
                f"{_cell(r.top_k_overlap)} | {_cell(r.pairwise_top_k)} | {_cell(r.pairwise_all)} |")
        lines += ["", f"Summary: mean Spearman {_cell(part['spearman'].mean())}, "
                      f"{int((part['spearman'] > 0).sum())} of {len(part)} pairs positive; "
                      f"same best system in {int(part['same_top1'].sum())} of {len(part)} pairs; "
                      f"mean pairwise accuracy {_cell(part['pairwise_top_k'].mean())} among the MOS top-{k} vs "
                      f"{_cell(part['pairwise_all'].mean())} over all pairs.", ""]
    return "\n".join(lines).rstrip() + "\n"


def paper_agreement_markdown(top_k: int = DEFAULT_TOP_K) -> str:
    """:func:`agreement_markdown` of :func:`paper_agreement` (the block in ``docs/FINDINGS.md``)."""
    return agreement_markdown(paper_agreement(top_k))


if __name__ == "__main__":  # pragma: no cover - exercised through docs/FINDINGS.md's test
    print(paper_agreement_markdown(), end="")

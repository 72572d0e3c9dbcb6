"""The cross-task analyses and findings over stored result rows: one function per catalog row.

Each analysis row of :mod:`hug_vis_dataset.catalog` names its function here in
:attr:`~hug_vis_dataset.catalog.MetricSpec.implementation`; :func:`run` looks the row up and calls it,
so adding an analysis is one catalog row and one function of the signature ``(frame, **options) ->
dict`` (``frame``: the rows as a ``pandas.DataFrame`` with ``rows.parquet``'s columns). The evaluate
modules (:func:`hug_vis_dataset.modules.compute`) and the report's Findings call them.

Example:
    >>> from hug_vis_dataset import catalog
    >>> implementation(catalog.spec("motion_difficulty")).__name__
    'motion_difficulty'
    >>> sorted(m.name for m in catalog.analyses()) == sorted(
    ...     m.name for m in catalog.analyses() if callable(implementation(m)))
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from . import catalog


class ModuleInputError(ValueError):
    """Inputs a module cannot pair or read; the message names the clips or paths and the fix."""


def implementation(spec: catalog.MetricSpec) -> Callable[..., dict]:
    """The function an analysis row names (``"module:function"``, imported now).

    Raises:
        KeyError: the row is not an analysis.
        ValueError: its function does not exist (:func:`hug_vis_dataset.catalog.implementation_of`).
    """
    if spec.mode != catalog.ANALYSIS:
        raise KeyError(f"{spec.name!r} is not an analysis; analyses: {[m.name for m in catalog.analyses()]}")
    return catalog.implementation_of(spec)


def rows_frame(rows: Mapping[str, Sequence]):
    """Columns of stored rows (``{"model": [...], ...}``) as a DataFrame."""
    import pandas as pd

    return pd.DataFrame({k: list(v) for k, v in rows.items()})


def run(name: str, rows: Mapping[str, Sequence], **options: Any) -> dict[str, Any]:
    """Run the analysis ``name`` on stored result rows (columns of ``rows.parquet``), as the report does.

    Raises:
        KeyError: ``name`` is not an analysis of the catalog.
    """
    try:
        spec = catalog.spec(name)
    except KeyError:
        raise KeyError(f"{name!r} is not an analysis; analyses: {[m.name for m in catalog.analyses()]}") from None
    frame = rows_frame(rows)
    if name not in READS_SAMPLES:  # rows of several samples per clip: one row per clip, as every table reads them
        from .scoring.aggregate import sample_means

        frame = sample_means(frame)
    return implementation(spec)(frame, **options)


#: The analyses that read a run's samples themselves (rows with ``sample``: several samples per clip); every other
#: analysis reads the per-clip means over the samples (:func:`hug_vis_dataset.scoring.aggregate.sample_means`).
READS_SAMPLES = frozenset({"variance_decomposition"})


# ----------------------------------------------------------------------------- section 4.3 (Eq. 1-6)
def emotion_difficulty(frame, metrics: Any = None, orientations: Any = None, **_ignored: Any) -> dict:
    """Fig. 8 (Eq. 1-2): per-metric emotion difficulty."""
    from .metrics import crosstask as ct

    return ct.emotion_difficulty(frame, ct.metrics_from_spec(metrics), orientations).to_dict()


def difficulty_agreement(frame, metrics: Any = None, orientations: Any = None, **_ignored: Any) -> dict:
    """Fig. 9 (Eq. 3): Spearman rho between the metrics' emotion difficulty profiles."""
    from .metrics import crosstask as ct

    difficulty = ct.emotion_difficulty(frame, ct.metrics_from_spec(metrics), orientations)
    D = difficulty.D.dropna(axis=1, how="all")
    rho = ct.difficulty_agreement(D)
    return {"rho": {a: {b: float(v) for b, v in col.items()} for a, col in rho.items()},
            "metrics": list(rho.columns), "D": difficulty.to_dict()["D"]}


def source_difficulty(frame, ad_metrics: Any = None, vd_metrics: Any = None, **_ignored: Any) -> dict:
    """Fig. 10 (Eq. 4): audio- vs vision-driven clip difficulty on common valid clips."""
    from .metrics import crosstask as ct

    return ct.source_difficulty(frame, ad_metrics or ct.DEFAULT_AD_METRICS, vd_metrics or ct.DEFAULT_VD_METRICS).to_dict()


def motion_difficulty(frame, **_ignored: Any) -> dict:
    """Fig. 11 (Eq. 5-6): reference motion against model-averaged dtSSD."""
    from .metrics import crosstask as ct

    return ct.motion_relation(frame).to_dict()


# ----------------------------------------------------------------------------- findings of one metric
def one_metric_rows(frame, metric: str, task: "str | None"):
    """The rows of one (task, metric), naming what the rows hold when the choice is wrong."""
    if metric not in catalog.METRIC_NAMES:
        raise ModuleInputError(f"metric_name={metric!r} is not a metric of the catalog")
    tasks = [task] if task else list(catalog.spec(metric).tasks)
    sel = frame[(frame["metric"] == metric) & frame["task"].isin(tasks)]
    if len(set(sel["task"].unique())) > 1:
        raise ModuleInputError(f"{metric} rows of several tasks {sorted(set(sel['task'].unique()))}: pass task=...")
    if sel.empty:
        raise ModuleInputError(f"no rows of {metric} ({', '.join(tasks)}); the rows hold "
                               f"{sorted(set(zip(frame['task'], frame['metric'])))[:8]}")
    from .datamodel.results import reference_rows

    return sel[~reference_rows(sel["model"])]


def variance_decomposition(frame, metric_name: str = "", task: "str | None" = None, **_ignored: Any) -> dict:
    """Shares of one metric's per-clip variance (``metric_name``: the rows' ``metric`` to analyse)."""
    from .metrics.variance import variance_decomposition as decompose

    result = decompose(one_metric_rows(frame, metric_name, task))
    return {"metric": metric_name, "method": result.method, "reason": result.reason, "n_rows": result.n_rows,
            "shares": result.shares(), "table": result.table.to_dict("records")}


def detectable_difference(frame, metric_name: str = "", task: "str | None" = None, **options: Any) -> dict:
    """Minimum detectable difference of one metric between leaderboard neighbours."""
    from .metrics.power import detectable_differences

    sel = one_metric_rows(frame, metric_name, task)
    spec = catalog.spec(metric_name)
    return {"metric": metric_name, **detectable_differences(sel, spec.higher_is_better, scale=spec.paper_scale,
                                                             **options)}


def neighbour_significance(frame, metric_name: str = "", task: "str | None" = None, **options: Any) -> dict:
    """Paired actor-clustered tests between each system and the next one on one metric."""
    from .metrics.significance import neighbour_tests
    from .statistics.verdicts import word_of

    sel = one_metric_rows(frame, metric_name, task)
    tests = neighbour_tests(sel, catalog.spec(metric_name).higher_is_better, **options)
    for test in tests:  # the verdict in the words every surface uses (hug_vis_dataset.verdicts)
        test["verdict"], test["why"] = word_of(test["distinguishable"], test["p_value"], test["n_actors"],
                                               "" if test["distinguishable"] is not None else test["verdict"])
    return {"metric": metric_name, "tests": tests,
            "ties": [(t["model"], t["next_model"]) for t in tests if t["distinguishable"] is False]}


# ----------------------------------------------------------------------------- metrics against the MOS
def mos_agreement_by_task(frame, ratings: Any = None, top_k: int = 3, n_boot: int = 1000, seed: int = 0,
                          preferences: Any = None, all_raters: bool = False, pairwise_only: bool = False) -> dict:
    """Metric-MOS agreement per generation task from stored rows and a ratings CSV (or its rows); with
    ``preferences`` (a pairwise CSV or its rows) also the pairwise source under ``"pairwise"``: per
    task, the Bradley-Terry strengths against the MOS and against each automatic metric
    (:func:`hug_vis_dataset.studies.bradley_terry.strength_agreement_rows`). The ratings that count are the one
    rule's (:func:`hug_vis_dataset.studies.judgments.counted_ratings`: gold items and flagged raters out, unless
    ``all_raters``), as in the MOS tables and the joint tables. ``pairwise_only``: only the pairwise block (the
    ratings then give the strengths' MOS, not an agreement of their own)."""
    import pandas as pd

    from .metrics.mos_agreement import metric_mos_agreement_rows
    from .studies.bradley_terry import strength_agreement_rows
    from .studies.judgments import counted_ratings
    from .studies.mos import RatingsFileError, clip_means

    if ratings is None and preferences is None:
        raise ModuleInputError("metric_mos_agreement needs ratings=<ratings CSV path> (rater, clip_id, model, "
                               "criterion, score) and/or preferences=<pairwise CSV path>")
    human = None
    if ratings is not None:
        try:  # the one ratings reader, for a file and for rows alike
            valid = counted_ratings(ratings, all_raters)[0]
        except RatingsFileError as err:
            raise ModuleInputError(str(err)) from None
        human = clip_means(valid) if len(valid) else None
    out: dict = {}
    tasks = [t.name for t in catalog.TASKS if t.mos_table]
    for task in tasks if human is not None and not pairwise_only else ():
        models = set(frame.loc[frame["task"] == task, "model"].unique())
        rows = frame[(frame["task"] == task) & frame["metric"].isin(_agreement_metrics(task))]
        mos_rows = human[human["model"].isin(models)]
        if rows.empty or mos_rows.empty:
            continue
        table = metric_mos_agreement_rows(rows, mos_rows, top_k=top_k, task=task, n_boot=n_boot, seed=seed)
        out[task] = table.to_dict("records")
    if preferences is not None:
        from .studies.answers import read_preferences

        prefs = read_preferences(preferences) if isinstance(preferences, (str, Path)) else pd.DataFrame(preferences)
        pairwise = {}
        for task in tasks:
            mine = prefs[prefs["task"] == task] if "task" in prefs.columns else prefs.iloc[0:0]
            rows = frame[(frame["task"] == task) & frame["metric"].isin(_agreement_metrics(task))]
            if mine.empty or rows.empty:
                continue
            systems = set(mine["system_a"].unique()) | set(mine["system_b"].unique())
            mos_rows = human[human["model"].isin(systems)] if human is not None else None
            table = strength_agreement_rows(mine, mos_rows, rows[rows["model"].isin(systems)], top_k=top_k, task=task)
            pairwise[task] = table.to_dict("records")
        if pairwise:
            out["pairwise"] = pairwise
    if not out and not pairwise_only:
        raise ModuleInputError("no generation task has both stored rows and ratings (or pairwise answers) of the "
                               "same models")
    return out


def _agreement_metrics(task: str) -> tuple[str, ...]:
    """The metrics compared with the MOS: the paper table's columns and those beside it whose table value
    is the mean over clips (Distill-MOS), the system value this agreement compares. A corpus ratio (CER)
    is not: its mean of per-clip quotients is not the value its table prints, so it is left out.

    Example:
        >>> _agreement_metrics("voice_cloning")
        ('utmos', 'dnsmos', 'speaker_similarity', 'distill_mos')
    """
    return catalog.table_metrics(task) + tuple(m for m in catalog.beyond_paper_metrics(task)
                                               if catalog.spec(m).protocol == catalog.CLIP)


def checked_ratings(frame, ratings: Any):
    """The evaluate modules' door to human ratings (a CSV or its rows): read by the one ratings reader, and
    refused in one line when a rating is invalid (a module has no report to list it in) or names a system of
    the stored rows under another spelling (it would vanish from every table without a word)."""
    from .names import another_spelling
    from .studies.mos import RatingsFileError, invalid_lines, ratings_frames
    from .studies.rater_qc import GOLD_MODELS

    source = str(ratings) if isinstance(ratings, (str, Path)) else "ratings rows"
    try:
        valid, invalid = ratings_frames(ratings, source)
    except RatingsFileError as err:
        raise ModuleInputError(str(err)) from None
    if len(invalid):
        named = "; ".join(invalid_lines(invalid, source, limit=3))
        raise ModuleInputError(f"{source}: {len(invalid)} invalid rating(s) ({named}); fix or drop them")
    scored = sorted(set(frame["model"].astype(str)))
    for model in sorted(set(valid["model"]) - set(GOLD_MODELS) - set(scored)):
        same = another_spelling(model, scored)
        if same is not None:
            raise ModuleInputError(f"{source}: rated system {model!r} is not a model of the stored rows; it is "
                                   f"spelt {same!r} there: rate under one name")
    return valid


def metric_mos_agreement(frame, **options: Any) -> dict:
    """Metric-MOS agreement per generation task (:func:`mos_agreement_by_task`)."""
    if options.get("ratings") is not None:
        options["ratings"] = checked_ratings(frame, options["ratings"])
    return mos_agreement_by_task(frame, **options)


def human_metric_agreement(frame, ratings: Any = None, preferences: Any = None, **options: Any) -> dict:
    """Automatic metrics and human judgment jointly (SPA, acc_eq, PERM-BOTH, P.1401, the joint table) per
    generation task from stored rows and a ratings CSV and/or a pairwise CSV (or their rows):
    :func:`hug_vis_dataset.studies.human_metric.human_metric_tables`, as records."""
    from .studies.human_metric import HumanMetricInputError, human_metric_tables

    if ratings is not None:
        ratings = checked_ratings(frame, ratings)
    try:
        return human_metric_tables(frame, ratings, preferences, **options).records()
    except HumanMetricInputError as err:
        raise ModuleInputError(str(err)) from None

"""What the joint human/metric measures can say from the paper's own Tables 5-10 (system means only).

The paper publishes one mean per system and criterion, no per-clip scores and no rating spread, so of
:mod:`hug_vis_dataset.metrics.human_agreement` only the measures of system means apply: Kendall's tau-b and
the tie-calibrated pairwise accuracy ``acc_eq`` (its tie threshold in the metric's units), and of ITU-T
P.1401 (:mod:`hug_vis_dataset.metrics.p1401`) the mapping and its RMSE on ``N - 4`` degrees of freedom,
for the metrics that predict MOS (:attr:`hug_vis_dataset.catalog.MetricSpec.predicts_mos`) with systems as
items. Everything else needs per-clip rows and ratings and is marked so: SPA and its interval (p-values
come from per-clip differences), intervals and rank intervals, discordant pairs, PERM-BOTH, and P.1401's
rmse* and outlier ratio (each item's 95% interval comes from its votes).

Run ``python -m hug_vis_dataset.studies.human_metric_paper`` to print the block of ``docs/FINDINGS.md``.

Example:
    >>> frame = paper_joint_agreement()
    >>> frame.groupby("task").size().to_dict()
    {'audio_driven': 9, 'vision_driven': 15, 'voice_cloning': 6}
"""

from __future__ import annotations

import math
from typing import Any

from ..metrics.human_agreement import kendall_tau_b, tie_calibrated_accuracy

NEEDS_ROWS = "needs per-clip rows"


def _criterion_of(display: str) -> str:
    from .mos import CRITERIA

    return {v: k for k, v in CRITERIA.items()}.get(display, display)


def _paper_wide(path: Any = None) -> dict:
    """task -> (metric means, MOS means) as wide frames (system x column; MOS columns named by criterion)."""
    from ..datamodel.paper_tables import UNRANKED_SOURCES, paper_frame, table_info
    from ..metrics.mos_agreement import paper_table_pairs

    values = paper_frame(path)
    values = values[~values["source"].isin(UNRANKED_SOURCES)]
    out = {}
    for task, objective, subjective in paper_table_pairs(path):
        wide = {}
        for table in (objective, subjective):
            info = table_info(table, path)["metrics"]
            sub = values[values["table"] == table]
            frame = sub.pivot(index="model", columns="metric", values="value").reindex(columns=[m["key"] for m in info])
            if table == subjective:
                frame = frame.rename(columns={m["key"]: _criterion_of(m["display"]) for m in info})
            wide[table] = frame
        out[task] = (wide[objective], wide[subjective])
    return out


def paper_joint_agreement(path: Any = None):
    """Per task, metric and MOS criterion of the paper: systems, Kendall tau-b, acc_eq and its threshold.

    Metrics are oriented by the catalog (lower-is-better negated for the pair comparisons); epsilon is
    printed in the metric's units.
    """
    import numpy as np
    import pandas as pd

    from ..catalog import spec

    rows = []
    for task, (metrics, mos) in _paper_wide(path).items():
        for metric in metrics.columns:
            sign = 1.0 if spec(metric).higher_is_better else -1.0
            for criterion in mos.columns:
                both = metrics[[metric]].join(mos[[criterion]], how="inner").dropna()
                m, h = sign * both[metric].to_numpy(float), both[criterion].to_numpy(float)
                acc, eps = tie_calibrated_accuracy(h, m)
                rows.append({"task": task, "metric": metric, "criterion": criterion, "n_systems": len(both),
                             "kendall_tau_b": kendall_tau_b(h, m), "acc_eq": acc, "acc_eq_epsilon": eps,
                             "spa": NEEDS_ROWS})
    return pd.DataFrame(rows).astype({"n_systems": np.int64})


def paper_mos_prediction(path: Any = None):
    """P.1401 on the paper's system means for each metric that predicts MOS (systems as items): the mapping
    and RMSE on N - 4 degrees of freedom; rmse* and the outlier ratio need per-item intervals."""
    import pandas as pd

    from ..catalog import spec
    from ..metrics.p1401 import p1401

    rows = []
    for task, (metrics, mos) in _paper_wide(path).items():
        for metric in metrics.columns:
            criterion = spec(metric).predicts_mos
            if not criterion or criterion not in mos.columns:
                continue
            both = metrics[[metric]].join(mos[[criterion]], how="inner").dropna()
            fit = p1401(both[metric].to_numpy(float), both[criterion].to_numpy(float))
            rows.append({"task": task, "metric": metric, "criterion": criterion, "n_items": fit.n_items,
                         **dict(zip("abcd", fit.coefficients)), "constrained": fit.constrained, "rmse": fit.rmse,
                         "rmse_star": "needs per-clip ratings", "outlier_ratio": "needs per-clip ratings"})
    return pd.DataFrame(rows)


def _num(value: Any, digits: int = 2) -> str:
    if isinstance(value, str):
        return value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def paper_markdown(path: Any = None) -> str:
    """The block of ``docs/FINDINGS.md``: per task the tau-b / acc_eq table, then the P.1401 table."""
    from ..catalog import COLUMN_LABELS, spec, task
    from .mos import CRITERIA

    accuracy, threshold = COLUMN_LABELS["acc_eq"], COLUMN_LABELS["acc_eq_epsilon"]
    frame = paper_joint_agreement(path)
    lines = []
    for name, part in frame.groupby("task", sort=False):
        lines += [f"#### {task(name).label} ({int(part['n_systems'].max())} systems)", "",
                  f"| Metric | MOS criterion | Kendall tau-b | {accuracy} | {threshold} | SPA, intervals, discordant "
                  "pairs |",
                  "| --- | --- | ---: | ---: | ---: | --- |"]
        for r in part.itertuples():
            eps = spec(r.metric).printed(r.acc_eq_epsilon) if math.isfinite(r.acc_eq_epsilon) else "n/a"
            lines.append(f"| {spec(r.metric).label} | {CRITERIA.get(r.criterion, r.criterion)} | {_num(r.kendall_tau_b)} | "
                         f"{_num(r.acc_eq)} | {eps} | {r.spa} |")
        lines.append("")
    prediction = paper_mos_prediction(path)
    lines += ["#### Metrics that predict MOS (ITU-T P.1401, systems as items)", "",
              "| Task | Metric | MOS criterion | N | Mapping a + b x + c x^2 + d x^3 | Monotonic constraint active | "
              "RMSE (N - 4 df) | RMSE* | Outlier ratio |",
              "| --- | --- | --- | ---: | --- | --- | ---: | --- | --- |"]
    for r in prediction.itertuples():
        mapping = ", ".join(f"{c} = {getattr(r, c):.3g}" for c in "abcd")
        lines.append(f"| {task(r.task).label} | {spec(r.metric).label} | {CRITERIA.get(r.criterion, r.criterion)} | {r.n_items} | "
                     f"{mapping} | {'yes' if r.constrained else 'no'} | {_num(r.rmse, 3)} | {r.rmse_star} | "
                     f"{r.outlier_ratio} |")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover - exercised through docs/FINDINGS.md's test
    print(paper_markdown(), end="")

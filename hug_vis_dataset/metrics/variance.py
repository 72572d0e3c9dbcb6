"""How much of a metric's variation each factor of the grid explains (the paper's finding (iv)).

For one task metric's per-clip rows (one value per model and clip) the total sum of squares around
the grand mean is split into the terms of the grid, in this order:

``actor``, ``emotion``, ``action`` (nested in emotion: the four action templates differ per emotion),
``script`` (nested in action: the ten utterances are written per action), ``model``,
``emotion:model``, ``actor:model``, and the ``residual`` (everything else: the actor's performance of
one assignment, model x assignment, noise). A term's **share** is its sum of squares over the total.

* **Balanced grid** (every model scored every clip of a complete actor x assignment grid, the same
  number of actions per emotion and scripts per action): the terms are orthogonal and their sums of
  squares come from marginal means (``SS_actor = sum over rows of (mean_actor - grand)^2``,
  ``SS_action = sum (mean_{emotion,action} - mean_emotion)^2``,
  ``SS_emotion:model = sum (mean_{e,m} - mean_e - mean_m + grand)^2``, ...); every ANOVA type gives
  the same numbers there.
* **Incomplete grid** (missing or failed clips, a model that skipped some): the marginal-mean
  formulas no longer partition the total, so the decomposition **falls back** to a least-squares
  regression with the same terms as indicator columns and reports ``method="sequential"``:
  sequential (type I) sums of squares, each term's reduction of the residual sum of squares when it
  is added after the terms before it in the order above. Type I is chosen because its terms and the
  residual still add up to the total, so the shares remain a decomposition of the variance (type II
  terms do not add up on unbalanced data); the price is that a share depends on the term order,
  which is fixed above (grid factors first, then the model and its interactions).

A term with no degrees of freedom (one actor, one model, ...) cannot be estimated: its sum of squares
and share are NaN, never 0. The same holds for every share when the values are all equal.

**Several samples per clip** (a stochastic model scored over seeds: rows with a ``sample`` column, see
:data:`hug_vis_dataset.datamodel.results.SAMPLE_COLUMN`). When at least one cell (model, actor, emotion,
action, script) has two or more finite ok samples, the decomposition runs on the per-sample rows
``v_ck`` (cell ``c``, sample ``k``, ``n_c`` samples, cell mean ``mean_c``) and gains one term, ``sample``
(after ``actor:model``, before the residual): the within-cell sum of squares

``SS_sample = sum_c sum_k (v_ck - mean_c)^2``, with ``df = n_rows - n_cells``,

the seed-to-seed spread of one model on one clip. The total is taken around the per-sample grand mean,
and ``residual`` becomes the between-cell residual, ``total - sum of terms - SS_sample`` (df
``n_cells - 1 - sum of the terms' df``). When every cell has the same number ``K`` of samples and the
cells form a balanced grid, each grid term's sum of squares is ``K`` times its sum of squares on the cell
means (so the shares of the grid terms keep their ratios to each other); otherwise the sequential
fallback above runs on the per-sample rows (computed as the identical least-squares fit of the cell
means weighted by ``n_c``; the within-cell part of every residual sum of squares is ``SS_sample``).
Rows without a ``sample`` column, or with one sample per cell, give exactly the table above (no
``sample`` row). Two rows of one cell with the same sample index are an input error.

Example:
    >>> import itertools
    >>> rows = [{"model": m, "actor_id": a, "emotion": e, "action_id": 1, "script_id": 1,
    ...          "value": (m == "y") * 2.0 + (a == 2) * 1.0}
    ...         for m, a, e in itertools.product("xy", (1, 2), ("Happy", "Sad"))]
    >>> d = variance_decomposition(rows)
    >>> d.method, round(d.shares()["model"], 3), round(d.shares()["actor"], 3), d.shares()["residual"]
    ('balanced', 0.8, 0.2, 0.0)

    Two seeds per clip, which differ by 1 (each sample 0.5 from its cell mean: ``SS_sample`` = 16 x 0.25 = 4;
    the cell means are the values above, so ``SS_model`` = 2 x 8 and ``SS_actor`` = 2 x 2):

    >>> seeds = [{**r, "sample": k, "value": r["value"] + (k - 0.5)} for r in rows for k in (0, 1)]
    >>> t = variance_decomposition(seeds).table.set_index("term")
    >>> t.loc[["model", "actor", "sample", "residual", "total"], ["df", "sum_sq"]].values.tolist()
    [[1.0, 16.0], [1.0, 4.0], [8.0, 4.0], [2.0, 0.0], [15.0, 24.0]]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..datamodel.results import SAMPLE_COLUMN

TERMS: tuple[str, ...] = ("actor", "emotion", "action", "script", "model", "emotion:model", "actor:model")
RESIDUAL = "residual"
#: The within-cell term of rows with several samples per clip (placed after :data:`TERMS`, before the residual).
SAMPLE = "sample"
# The grouping columns behind each term (nested factors carry their parents' columns).
TERM_COLUMNS: dict[str, tuple[str, ...]] = {
    "actor": ("actor_id",),
    "emotion": ("emotion",),
    "action": ("emotion", "action_id"),
    "script": ("emotion", "action_id", "script_id"),
    "model": ("model",),
    "emotion:model": ("emotion", "model"),
    "actor:model": ("actor_id", "model"),
}
_CELL = ("model", "actor_id", "emotion", "action_id", "script_id")


class VarianceInputError(ValueError):
    """Rows that cannot be decomposed: none, missing grid columns, or several metrics mixed."""


@dataclass(frozen=True)
class VarianceDecomposition:
    """Sums of squares and shares of one metric's variation.

    Attributes:
        table: one row per term plus ``residual`` and ``total``: ``term``, ``df``, ``sum_sq``,
            ``share`` (``sum_sq / total``; NaN where not estimable).
        method: ``"balanced"`` (marginal means) or ``"sequential"`` (type I regression fallback).
        n_rows: rows used (finite values with status ok).
        reason: why the balanced formulas did not apply (empty when they did).
    """

    table: Any
    method: str
    n_rows: int
    reason: str = ""

    @property
    def fell_back(self) -> bool:
        return self.method != "balanced"

    def shares(self) -> dict[str, float]:
        """``{term: share}`` for the terms and the residual (not the total)."""
        part = self.table[self.table["term"] != "total"]
        return {str(t): float(s) for t, s in zip(part["term"], part["share"])}


def _prepare(rows: "Iterable[Mapping] | Any"):
    import pandas as pd

    from ..datamodel.grid import ClipId

    frame = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    if frame.empty:
        raise VarianceInputError("no rows to decompose")
    if "metric" in frame.columns and frame["metric"].nunique() > 1:
        raise VarianceInputError(f"rows mix metrics {sorted(frame['metric'].unique())}; pass one metric's rows")
    if "status" in frame.columns:
        frame = frame[frame["status"].fillna("ok") == "ok"]
    absent = [c for c in ("actor_id", "emotion", "action_id", "script_id") if c not in frame.columns]
    if "clip_id" in frame.columns and absent:  # grid fields from the clip id, one parse per distinct clip
        fields = {c: ClipId.parse(str(c)).fields() for c in frame["clip_id"].unique()}
        for column in absent:
            frame[column] = frame["clip_id"].map({c: f[column] for c, f in fields.items()})
    missing = [c for c in (*_CELL, "value") if c not in frame.columns]
    if missing:
        raise VarianceInputError(f"rows lack columns {missing} (see hug_vis_dataset.datamodel.results.RESULT_COLUMNS)")
    frame = frame[np.isfinite(frame["value"].astype(float))]
    if frame.empty:
        raise VarianceInputError("no finite values with status ok to decompose")
    samples = None
    if SAMPLE_COLUMN in frame.columns:
        samples = _sample_indices(frame[SAMPLE_COLUMN])
    frame = frame[[*_CELL, "value"]].copy()
    frame["value"] = frame["value"].astype(float)
    for column in _CELL:
        frame[column] = frame[column].astype(str)
    if samples is not None and frame.groupby(list(_CELL), sort=False).size().max() > 1:
        frame[SAMPLE_COLUMN] = samples
        if frame.duplicated([*_CELL, SAMPLE_COLUMN]).any():
            first = frame[frame.duplicated([*_CELL, SAMPLE_COLUMN])].iloc[0]
            raise VarianceInputError(f"model {first['model']!r} has two values for sample {first[SAMPLE_COLUMN]} of "
                                     "one clip; pass one metric's rows")
        return frame.sort_values([*_CELL, SAMPLE_COLUMN], kind="stable").reset_index(drop=True)
    if frame.duplicated(list(_CELL)).any():
        first = frame[frame.duplicated(list(_CELL))].iloc[0]
        raise VarianceInputError(f"model {first['model']!r} has two values for one clip; pass one metric's rows")
    # A fixed order: float sums must not depend on how the rows came in.
    return frame.sort_values(list(_CELL), kind="stable").reset_index(drop=True)


def _sample_indices(column) -> np.ndarray:
    """The rows' sample indices as integers (a missing index reads as sample 0, as an older run does)."""
    import pandas as pd

    numbers = pd.to_numeric(column, errors="coerce")
    bad = column.notna() & (numbers.isna() | (numbers < 0) | (numbers != numbers.round()))
    if bad.any():
        raise VarianceInputError(f"sample indices must be integers >= 0, got {column[bad].iloc[0]!r}")
    return numbers.fillna(0).to_numpy(dtype=np.int64)


def _balance_problem(frame) -> str:
    """Why the grid is not complete and balanced ('' when it is)."""
    assignments = frame[["emotion", "action_id", "script_id"]].drop_duplicates()
    n_models, n_actors = frame["model"].nunique(), frame["actor_id"].nunique()
    expected = n_models * n_actors * len(assignments)
    if len(frame) != expected:
        return (f"{len(frame)} rows, but a complete grid of {n_models} models x {n_actors} actors x "
                f"{len(assignments)} assignments has {expected}")
    if assignments.groupby("emotion")["action_id"].nunique().nunique() > 1:
        return "emotions have different numbers of actions"
    if assignments.groupby(["emotion", "action_id"]).size().nunique() > 1:
        return "actions have different numbers of scripts"
    return ""


def _balanced(frame, y: np.ndarray) -> tuple[dict[str, float], dict[str, int]]:
    grand = y.mean()

    def mean_of(columns: Sequence[str]) -> np.ndarray:
        return frame.groupby(list(columns), sort=True)["value"].transform("mean").to_numpy()

    def levels(columns: Sequence[str]) -> int:
        return len(frame[list(columns)].drop_duplicates())

    m_actor, m_emotion, m_model = mean_of(["actor_id"]), mean_of(["emotion"]), mean_of(["model"])
    m_action = mean_of(TERM_COLUMNS["action"])
    effects = {
        "actor": m_actor - grand,
        "emotion": m_emotion - grand,
        "action": m_action - m_emotion,
        "script": mean_of(TERM_COLUMNS["script"]) - m_action,
        "model": m_model - grand,
        "emotion:model": mean_of(TERM_COLUMNS["emotion:model"]) - m_emotion - m_model + grand,
        "actor:model": mean_of(TERM_COLUMNS["actor:model"]) - m_actor - m_model + grand,
    }
    n_a, n_e, n_m = levels(["actor_id"]), levels(["emotion"]), levels(["model"])
    n_action, n_script = levels(TERM_COLUMNS["action"]), levels(TERM_COLUMNS["script"])
    df = {"actor": n_a - 1, "emotion": n_e - 1, "action": n_action - n_e, "script": n_script - n_action,
          "model": n_m - 1, "emotion:model": (n_e - 1) * (n_m - 1), "actor:model": (n_a - 1) * (n_m - 1)}
    return {term: float(e @ e) for term, e in effects.items()}, df


def _indicators(frame, columns: Sequence[str]) -> np.ndarray:
    codes = frame.groupby(list(columns), sort=True).ngroup().to_numpy()
    out = np.zeros((len(frame), int(codes.max()) + 1))
    out[np.arange(len(frame)), codes] = 1.0
    return out


def _sequential(frame, y: np.ndarray, weights: "np.ndarray | None" = None
                ) -> tuple[dict[str, float], dict[str, int]]:
    """Type I sums of squares; ``weights``: the fit of cell means weighted by their sample counts, whose
    residual sums of squares are those of the per-sample rows less their within-cell sum of squares."""
    root = None if weights is None else np.sqrt(weights)
    design = np.ones((len(frame), 1)) if root is None else root[:, None].copy()
    target = y if root is None else y * root
    rank = 1
    if weights is None:
        rss = float(((y - y.mean()) ** 2).sum())
    else:
        rss = float((weights * (y - (weights @ y) / weights.sum()) ** 2).sum())
    ss: dict[str, float] = {}
    df: dict[str, int] = {}
    for term in TERMS:
        block = _indicators(frame, TERM_COLUMNS[term])
        candidate = np.hstack([design, block if root is None else block * root[:, None]])
        coef, _, new_rank, _ = np.linalg.lstsq(candidate, target, rcond=None)
        new_rss = float(((target - candidate @ coef) ** 2).sum())
        df[term] = int(new_rank - rank)
        ss[term] = max(rss - new_rss, 0.0)
        design, rank, rss = candidate, int(new_rank), new_rss
    return ss, df


def _sample_terms(frame) -> tuple[dict[str, float], dict[str, int], float, str]:
    """The grid terms, the within-cell sum of squares and the fallback reason of per-sample rows."""
    cells = frame.groupby(list(_CELL), sort=True)
    means = cells["value"].mean().reset_index()  # one row per cell, in _prepare's order
    counts = cells.size().to_numpy()
    values = frame["value"].to_numpy()
    within = float(((values - cells["value"].transform("mean").to_numpy()) ** 2).sum())
    reason = _balance_problem(means)
    if not reason and counts.min() != counts.max():
        reason = f"cells have different numbers of samples ({counts.min()} to {counts.max()})"
    if reason:
        ss, df = _sequential(means, means["value"].to_numpy(), counts.astype(float))
    else:
        ss, df = _balanced(means, means["value"].to_numpy())
        ss = {term: float(counts[0]) * value for term, value in ss.items()}
    return ss, df, within, reason


def variance_decomposition(rows: "Iterable[Mapping] | Any") -> VarianceDecomposition:
    """Share of a metric's variance explained by each grid factor and interaction.

    Args:
        rows: per-clip result rows of one task metric (columns of
            :data:`hug_vis_dataset.datamodel.results.RESULT_COLUMNS`; ``model``, ``actor_id``, ``emotion``,
            ``action_id``, ``script_id`` and ``value`` are used, grid fields are read from
            ``clip_id`` when absent). Rows whose status is not ``ok`` or whose value is not finite
            are left out. With a ``sample`` column and two or more samples of some clip, the per-sample rows
            are decomposed and the table gains the ``sample`` term (module docstring).

    Returns:
        A :class:`VarianceDecomposition` (``method`` says whether it fell back to the regression).

    Raises:
        VarianceInputError: no usable rows, missing columns, several metrics, duplicate cells (or duplicate
            samples of a cell), sample indices that are not integers >= 0.
    """
    import pandas as pd

    frame = _prepare(rows)
    y = frame["value"].to_numpy()
    with_samples = SAMPLE_COLUMN in frame.columns
    if with_samples:
        ss, df, within, reason = _sample_terms(frame)
        n_cells = int(frame.groupby(list(_CELL), sort=False).ngroups)
    else:
        reason = _balance_problem(frame)
        ss, df = (_sequential if reason else _balanced)(frame, y)
    total = float(((y - y.mean()) ** 2).sum())
    records = []
    for term in TERMS:
        estimable = df[term] > 0
        value = ss[term] if estimable else math.nan
        records.append({"term": term, "df": df[term], "sum_sq": value,
                        "share": value / total if estimable and total > 0 else math.nan})
    explained = sum(ss[t] for t in TERMS if df[t] > 0)
    residual_df = len(y) - 1 - sum(df.values())
    if with_samples:
        sample_df = len(y) - n_cells
        records.append({"term": SAMPLE, "df": sample_df, "sum_sq": within,
                         "share": within / total if total > 0 else math.nan})
        residual_df -= sample_df
        explained += within
    residual = max(total - explained, 0.0) if residual_df > 0 else math.nan
    records.append({"term": RESIDUAL, "df": residual_df, "sum_sq": residual,
                    "share": residual / total if total > 0 and residual_df > 0 else math.nan})
    records.append({"term": "total", "df": len(y) - 1, "sum_sq": total, "share": 1.0 if total > 0 else math.nan})
    return VarianceDecomposition(pd.DataFrame(records), "sequential" if reason else "balanced", len(y), reason)

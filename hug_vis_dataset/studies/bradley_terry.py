"""Pairwise preference: Bradley-Terry system strengths from "which is better" answers.

The second protocol of the subjective study (``docs/MOS.md``): a rater sees two systems' outputs of
the same clip side by side, blind and in random order, and answers which is better on a criterion,
or that they are tied. Under the Bradley-Terry model system ``i`` beats ``j`` with probability
``p_i / (p_i + p_j)``; the strengths ``p`` are fitted by maximum likelihood with the MM algorithm of
Hunter (2004), ``p_i <- W_i / sum_j n_ij / (p_i + p_j)``, which increases the likelihood at every
step and converges to the unique maximum when the comparison graph is strongly connected.

* A **tie** counts half a win for each side (the usual reduction; it keeps the closed forms).
* ``prior`` adds that many virtual ties to every compared pair, so a system that never won keeps a
  finite strength (a bootstrap replicate often has such a system); with ``prior=0`` the fit is the
  plain MLE, which diverges for a system with no win or no loss (then NaN/inf is returned, not a
  made-up number).
* Strengths are reported as ``log p`` centred to mean 0 (the scale of a logit: a difference of 1
  means odds ``e`` to 1).

Closed form with two systems: ``p_a / p_b = w_ab / w_ba`` (the share of wins is the probability).

Example:
    >>> fit = bradley_terry([("a", "b", 1.0)] * 3 + [("b", "a", 1.0)])
    >>> round(float(np.exp(fit["a"] - fit["b"])), 6)   # 3 wins to 1: strength ratio 3
    3.0
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..errors import HugvisError
from ..metrics.mos_agreement import DEFAULT_TOP_K

#: What an answer says about the first system of the pair: it won, tied or lost.
WIN, TIE, LOSS = 1.0, 0.5, 0.0
PREFERENCE_COLUMNS: tuple[str, ...] = ("rater", "clip_id", "criterion", "system_a", "system_b", "outcome")


class PreferenceInputError(HugvisError, ValueError):
    """Answers that cannot be fitted: an outcome outside {0, 0.5, 1}, a system against itself, or answers that
    do not join every system (:func:`comparison_problem`)."""


def comparison_problem(pairs: Iterable[Sequence[Any]]) -> "str | None":
    """The Bradley-Terry precondition, in words: strengths compare only systems the answers join (directly or
    through others); None when the comparison graph of ``(system_a, system_b, ...)`` answers is connected.

    Example:
        >>> comparison_problem([("a", "b", 1), ("b", "c", 0)]) is None
        True
        >>> comparison_problem([("a", "b", 1), ("c", "d", 0.5)])
        'the answers leave the systems in 2 groups never compared with each other ({a, b} and {c, d}): add answers comparing a system of one group with one of another'
    """
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    for a, b, *_ in pairs:
        parent[root(str(a))] = root(str(b))
    groups: dict[str, list[str]] = {}
    for name in sorted(parent):
        groups.setdefault(root(name), []).append(name)
    if len(groups) <= 1:
        return None
    shown = sorted(groups.values())
    listed = ", ".join("{" + ", ".join(g) + "}" for g in shown[:-1]) + " and {" + ", ".join(shown[-1]) + "}"
    return (f"the answers leave the systems in {len(shown)} groups never compared with each other ({listed}): "
            "add answers comparing a system of one group with one of another")


def win_matrix(answers: Iterable[Sequence[Any]], systems: "Sequence[str] | None" = None) -> tuple[list[str], np.ndarray]:
    """(systems, W) with ``W[i, j]`` the wins of ``i`` over ``j`` (ties split in halves).

    Args:
        answers: ``(system_a, system_b, outcome)`` with outcome 1 (a better), 0.5 (tie), 0 (b better).
        systems: the order of the rows (default: sorted names seen).

    Example:
        >>> names, w = win_matrix([("a", "b", 1), ("a", "b", 0.5)])
        >>> names, w.tolist()
        (['a', 'b'], [[0.0, 1.5], [0.5, 0.0]])
    """
    answers = list(answers)
    for a, b, outcome in answers:
        if a == b:
            raise PreferenceInputError(f"system {a!r} is compared with itself")
        if float(outcome) not in (WIN, TIE, LOSS):
            raise PreferenceInputError(f"outcome {outcome!r} must be 1 (first better), 0.5 (tie) or 0 (second better)")
    names = list(systems) if systems is not None else sorted({s for a, b, _ in answers for s in (a, b)})
    pos = {s: i for i, s in enumerate(names)}
    w = np.zeros((len(names), len(names)))
    for a, b, outcome in answers:
        w[pos[a], pos[b]] += float(outcome)
        w[pos[b], pos[a]] += 1.0 - float(outcome)
    return names, w


def fit_strengths(wins: np.ndarray, prior: float = 0.0, tol: float = 1e-12, max_iter: int = 100_000) -> np.ndarray:
    """Bradley-Terry log-strengths (mean 0) from a win matrix, by MM iterations.

    Args:
        wins: square matrix, ``wins[i, j]`` = wins of i over j.
        prior: virtual ties added to every pair compared at least once (>= 0).
        tol: stop when no log-strength moves more than this.
        max_iter: iteration cap.

    Returns:
        ``log p`` centred to mean 0; ``+inf``/``-inf`` for a system that (with ``prior=0``) never
        lost / never won, NaN where the comparisons do not connect the systems.

    Example (hand-worked: wins proportional to p = 4, 2, 1 make p the exact MLE):
        >>> w = np.array([[0, 4, 4], [2, 0, 2], [1, 1, 0]], dtype=float)
        >>> np.round(np.exp(fit_strengths(w) - fit_strengths(w)[2]), 6).tolist()
        [4.0, 2.0, 1.0]
    """
    w = np.asarray(wins, dtype=np.float64)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or (w < 0).any() or not np.isfinite(w).all():
        raise PreferenceInputError("wins must be a square matrix of finite non-negative counts")
    if prior < 0:
        raise PreferenceInputError(f"prior must be >= 0, got {prior}")
    k = len(w)
    if k == 0:
        return np.zeros(0)
    n = w + w.T
    compared = n > 0
    w = w + prior / 2.0 * compared
    n = w + w.T
    total = w.sum(axis=1)
    if k == 1:
        return np.zeros(1)
    if not _connected(n > 0):
        return np.full(k, math.nan)
    losses = w.sum(axis=0)
    if (total == 0).any() or (losses == 0).any():
        # The MLE sits at infinity: report the direction, not a number the iterations made up.
        out = np.zeros(k)
        out[total == 0], out[losses == 0] = -math.inf, math.inf
        return out
    log_p = np.zeros(k)
    for _ in range(max_iter):
        p = np.exp(log_p)
        denom = (n / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.log(total / denom)
        new -= new.mean()  # the likelihood is scale-free: fix the scale
        if np.max(np.abs(new - log_p)) < tol:
            return new
        log_p = new
    return log_p


def fit_strengths_batch(wins: np.ndarray, prior: float = 0.0, tol: float = 1e-12, max_iter: int = 100_000
                        ) -> np.ndarray:
    """:func:`fit_strengths` of a stack of win matrices ``(B, S, S)`` at once (one per bootstrap replicate): the
    same prior, the same MM iterations, each matrix stopping when its own strengths move less than ``tol``, the
    same infinite and NaN outcomes; so row ``b`` equals ``fit_strengths(wins[b], prior)``.

    Example:
        >>> w = np.array([[[0, 4, 4], [2, 0, 2], [1, 1, 0]], [[0, 1, 0], [1, 0, 0], [0, 0, 0]]], dtype=float)
        >>> out = fit_strengths_batch(w)
        >>> np.allclose(out[0], fit_strengths(w[0])), bool(np.isnan(out[1]).all())   # the second: c never compared
        (True, True)
    """
    w = np.asarray(wins, dtype=np.float64)
    if w.ndim != 3 or w.shape[1] != w.shape[2] or (w < 0).any() or not np.isfinite(w).all():
        raise PreferenceInputError("wins must be a stack of square matrices of finite non-negative counts")
    if prior < 0:
        raise PreferenceInputError(f"prior must be >= 0, got {prior}")
    b, k = w.shape[:2]
    out = np.zeros((b, k))
    if k <= 1:
        return out
    compared = (w + w.transpose(0, 2, 1)) > 0
    w = w + prior / 2.0 * compared
    n = w + w.transpose(0, 2, 1)
    total, losses = w.sum(axis=2), w.sum(axis=1)
    reach = (n > 0) | np.eye(k, dtype=bool)
    for _ in range(int(np.ceil(np.log2(k))) + 1):  # transitive closure by squaring
        reach = (reach.astype(np.int64) @ reach.astype(np.int64)) > 0
    connected = reach[:, 0, :].all(axis=1)
    out[~connected] = math.nan
    infinite = connected & ((total == 0).any(axis=1) | (losses == 0).any(axis=1))
    out[infinite] = np.where(total[infinite] == 0, -math.inf, np.where(losses[infinite] == 0, math.inf, 0.0))
    active = np.flatnonzero(connected & ~infinite)
    log_p = np.zeros((len(active), k))
    n_act, total_act = n[active], total[active]
    running = np.ones(len(active), dtype=bool)
    for _ in range(max_iter):
        if not running.any():
            break
        idx = np.flatnonzero(running)
        p = np.exp(log_p[idx])
        denom = (n_act[idx] / (p[:, :, None] + p[:, None, :])).sum(axis=2)
        new = np.log(total_act[idx] / denom)
        new -= new.mean(axis=1, keepdims=True)  # the likelihood is scale-free: fix the scale
        done = np.max(np.abs(new - log_p[idx]), axis=1) < tol
        log_p[idx] = new
        running[idx[done]] = False
    out[active] = log_p
    return out


def _connected(adjacent: np.ndarray) -> bool:
    """Whether the comparison graph joins every system (else strengths are not comparable)."""
    seen, todo = {0}, [0]
    while todo:
        i = todo.pop()
        for j in np.flatnonzero(adjacent[i]):
            if int(j) not in seen:
                seen.add(int(j))
                todo.append(int(j))
    return len(seen) == len(adjacent)


def bradley_terry(answers: Iterable[Sequence[Any]], prior: float = 0.0,
                  systems: "Sequence[str] | None" = None) -> dict[str, float]:
    """``{system: log-strength}`` (mean 0) from ``(system_a, system_b, outcome)`` answers.

    Example:
        >>> fit = bradley_terry([("x", "y", 1), ("y", "x", 0.5)], prior=0.0)   # x: 1.5 wins, y: 0.5
        >>> round(float(np.exp(fit["x"] - fit["y"])), 6)
        3.0
    """
    names, w = win_matrix(answers, systems)
    return dict(zip(names, (float(v) for v in fit_strengths(w, prior))))


def win_probability(strengths: Mapping[str, float], a: str, b: str) -> float:
    """P(a beats b) under the fitted model.

    Example:
        >>> win_probability({"a": math.log(3), "b": 0.0}, "a", "b")
        0.75
    """
    return float(1.0 / (1.0 + math.exp(strengths[b] - strengths[a])))


def strengths_table(answers, criterion_column: str = "criterion", prior: float = 0.5, n_boot: int = 1000,
                    level: float = 0.95, seed: int = 0):
    """Bradley-Terry strength per (criterion, system) with actor-clustered bootstrap intervals.

    Args:
        answers: DataFrame with :data:`PREFERENCE_COLUMNS` (``actor_id`` optional, read from the clip id).
        prior: virtual ties per compared pair (keeps replicates finite).
        n_boot, level, seed: the actor bootstrap's (:func:`hug_vis_dataset.statistics.draws.draw_weights`; every
            replicate fitted at once by :func:`fit_strengths_batch`).

    Returns:
        DataFrame with ``criterion, system, strength, ci_low, ci_high, n_answers, wins, ties,
        n_actors, rank`` (rank 1 = strongest within the criterion).
    """
    import pandas as pd

    frame = pd.DataFrame(answers).copy()
    missing = [c for c in PREFERENCE_COLUMNS if c not in frame.columns]
    if missing:
        raise PreferenceInputError(f"preference answers lack columns {missing}")
    frame["outcome"] = frame["outcome"].astype(float)
    rows = []
    for criterion, group in frame.groupby(criterion_column, sort=True):
        names = sorted(set(group["system_a"]) | set(group["system_b"]))
        problem = comparison_problem(zip(group["system_a"], group["system_b"]))
        if problem:  # the analysis's own precondition, said in words (a replicate may still disconnect: NaN there)
            raise PreferenceInputError(f"criterion {criterion}: {problem}")
        point = bradley_terry(zip(group["system_a"], group["system_b"], group["outcome"]), prior, names)
        cis = _strength_intervals(group, names, prior, n_boot, level, seed) if n_boot else {}
        for system in names:
            mine_a, mine_b = group["system_a"] == system, group["system_b"] == system
            wins = float(group.loc[mine_a, "outcome"].sum() + (1.0 - group.loc[mine_b, "outcome"]).sum())
            ties = int(((mine_a | mine_b) & (group["outcome"] == TIE)).sum())
            ci = cis.get(system)
            rows.append({"criterion": criterion, "system": system, "strength": float(point[system]),
                         "ci_low": ci.low if ci else math.nan, "ci_high": ci.high if ci else math.nan,
                         "n_answers": int((mine_a | mine_b).sum()), "wins": wins, "ties": ties,
                         "n_actors": ci.n_clusters if ci else 0})
    table = pd.DataFrame(rows, columns=["criterion", "system", "strength", "ci_low", "ci_high", "n_answers",
                                        "wins", "ties", "n_actors"])
    table["rank"] = table.groupby("criterion")["strength"].rank(ascending=False, method="min").astype(int)
    return table


def _strength_intervals(group, names: Sequence[str], prior: float, n_boot: int, level: float, seed: int) -> dict:
    """Actor-bootstrap intervals of every system's strength: per actor the win matrix of its answers; a replicate's
    win matrix is the weighted sum (the statistics engine's weights over actors), all replicates fitted at once
    (:func:`fit_strengths_batch`): the generic path's replicates, without rebuilding them."""
    from ..statistics.draws import check_level, draw_weights, percentile_intervals
    from ..statistics.sums import _actor_ids

    check_level(level)
    actor_ids = _actor_ids(group)
    actors, position = np.unique(actor_ids, return_inverse=True)
    pos = {s: i for i, s in enumerate(names)}
    a = group["system_a"].map(pos).to_numpy()
    b = group["system_b"].map(pos).to_numpy()
    outcome = group["outcome"].to_numpy(float)
    wins = np.zeros((len(actors), len(names), len(names)))
    np.add.at(wins, (position, a, b), outcome)
    np.add.at(wins, (position, b, a), 1.0 - outcome)
    weights = draw_weights(len(actors), n_boot, seed)
    replicates = fit_strengths_batch(np.einsum("ra,aij->rij", weights.astype(np.float64), wins), prior)
    point = fit_strengths_batch(wins.sum(axis=0)[None], prior)[0]
    return dict(zip(names, percentile_intervals(list(point), replicates, level, len(actors))))


# ----------------------------------------------------------------------------- against the MOS and the metrics
def strength_agreement_rows(preference_rows: Any, mos_rows: Any = None, metric_rows: Any = None,
                            higher_is_better: "Mapping[str, bool] | None" = None, top_k: int = DEFAULT_TOP_K,
                            task: str = "", prior: float = 0.5):
    """The Bradley-Terry strengths of pairwise answers against the MOS and each automatic metric
    (:func:`hug_vis_dataset.metrics.mos_agreement.strength_agreement`), from per-answer and per-clip
    rows (point estimates).

    Strengths are the Bradley-Terry fit per criterion (:func:`bradley_terry`,
    ``prior`` virtual ties per compared pair); MOS means are means over clips of the per-clip means;
    metric means are means over each system's ok rows with a finite value.

    Args:
        preference_rows: ``system_a``, ``system_b``, ``criterion``, ``outcome`` (one per answer).
        mos_rows: ``model``, ``clip_id``, ``criterion``, ``score`` (per-clip means or single ratings).
        metric_rows: ``model``, ``metric``, ``value`` (``status`` optional).

    Example:
        >>> import pandas as pd
        >>> prefs = pd.DataFrame({"system_a": ["a", "a", "b"], "system_b": ["b", "c", "c"],
        ...                       "criterion": "lip_sync", "outcome": [1.0, 1.0, 1.0]})
        >>> t = strength_agreement_rows(prefs, metric_rows=pd.DataFrame(
        ...     {"model": ["a", "b", "c"], "metric": "err", "value": [1.0, 2.0, 3.0]}), higher_is_better={"err": False})
        >>> t[["against", "spearman", "top1_pairwise"]].values.tolist()
        [['err', 1.0, 'a']]
    """
    import pandas as pd

    from ..metrics.mos_agreement import strength_agreement

    prefs = pd.DataFrame(preference_rows)
    strengths = {}
    for criterion, group in prefs.groupby("criterion", sort=False):
        problem = comparison_problem(zip(group["system_a"], group["system_b"]))
        if problem:
            raise PreferenceInputError(f"criterion {criterion}: {problem}")
        strengths[criterion] = bradley_terry(zip(group["system_a"], group["system_b"], group["outcome"].astype(float)),
                                             prior=prior)
    strengths = pd.DataFrame(strengths)
    mos_means = None
    if mos_rows is not None and len(mos_rows):
        human = pd.DataFrame(mos_rows)
        per_clip = human.groupby(["model", "criterion", "clip_id"])["score"].mean()
        mos_means = per_clip.groupby(["model", "criterion"]).mean().unstack("criterion")
    metric_means = None
    if metric_rows is not None and len(metric_rows):
        auto = pd.DataFrame(metric_rows)
        if "status" in auto.columns:
            auto = auto[auto["status"].fillna("ok") == "ok"]
        auto = auto[np.isfinite(auto["value"].astype(float))]
        order = [str(m) for m in auto["metric"].unique()]  # in order of appearance
        metric_means = auto.groupby(["model", "metric"])["value"].mean().unstack("metric").reindex(columns=order)
    return strength_agreement(strengths, mos_means, metric_means, higher_is_better, top_k, task)

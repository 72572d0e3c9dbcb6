"""Figures of the cross-task analyses (paper Figs. 8-11), written as PNG and SVG.

Every function takes plain data (DataFrames or arrays), draws with matplotlib's non-interactive
Agg backend, writes ``<out_stem>.png`` and ``<out_stem>.svg`` and returns the two paths. Nothing is
shown on screen, so the functions work on headless machines and in tests.

Example:
    >>> import pandas as pd, tempfile, pathlib
    >>> D = pd.DataFrame({"A": [0.0, 1.0], "B": [1.0, 0.0]}, index=["Happy", "Sad"])
    >>> paths = plot_emotion_difficulty(D, pathlib.Path(tempfile.mkdtemp()) / "fig8")
    >>> [p.suffix for p in paths]
    ['.png', '.svg']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from . import figure_style as style
from ..catalog import label_of, task_names
from ..datamodel.grid import EMOTION_NAMES
from ..presentation.labels import task_label, variance_term

_TASK_NAMES = frozenset(task_names())
from ..statistics.basics import ols_fit, spearman

# One colour per emotion (Table 1 order), colour-blind friendly (Okabe-Ito plus grey).
EMOTION_COLORS: dict[str, str] = {
    "Happy": "#E69F00", "Angry": "#D55E00", "Sad": "#0072B2", "Afraid": "#CC79A7",
    "Disgusted": "#009E73", "Surprised": "#56B4E9", "Neutral": "#7F7F7F",
}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    style.apply(plt)
    return plt


def _save(fig: Any, out_stem: "str | Path") -> list[Path]:
    stem = Path(out_stem)
    if stem.suffix in (".png", ".svg"):
        stem = stem.with_suffix("")
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in (".png", ".svg"):
        path = stem.with_name(stem.name + ext)
        # A fixed date keeps the SVG identical across runs (matplotlib writes one otherwise).
        fig.savefig(path, dpi=200, bbox_inches="tight", metadata={"Date": None} if ext == ".svg" else None)
        paths.append(path)
    _pyplot().close(fig)
    return paths


def column_maxima(D: Any) -> list[tuple[int, int]]:
    """(row, column) positions of every column maximum (ties all boxed; NaN and constant columns none).

    Example:
        >>> import pandas as pd
        >>> column_maxima(pd.DataFrame({"a": [0.0, 1.0, 1.0], "b": [0.0, 0.0, 0.0]}))
        [(1, 0), (2, 0)]
    """
    arr = np.asarray(D, dtype=float)
    cells = []
    for j in range(arr.shape[1]):
        col = arr[:, j]
        finite = col[np.isfinite(col)]
        if finite.size == 0 or finite.max() == finite.min():
            continue
        cells += [(i, j) for i in range(arr.shape[0]) if col[i] == finite.max()]
    return sorted(cells)


FIG8_TITLE = "Emotion difficulty D per metric (Fig. 8)"
FIG8_CAPTION = ("Fig. 8: emotion difficulty D_{e,k} (Eq. 1-2), min-max normalised per metric over the emotions "
                "(0 = easiest, 1 = hardest; unitless); each column's hardest emotion is boxed. ")
FIG9_TITLE = "Agreement between difficulty profiles (Fig. 9)"
FIG9_CAPTION = ("Fig. 9: Spearman rank correlation between the metrics' emotion-difficulty profiles (Eq. 3), "
                "in [-1, 1]. ")


def emotion_difficulty_figure(D: Any, title: str = FIG8_TITLE):
    """Fig. 8 as a matplotlib Figure: heatmap of D (emotions x metrics), each column's maximum boxed,
    missing cells hatched and labelled n/a."""
    plt = _pyplot()
    from matplotlib.patches import Rectangle

    arr = np.asarray(D, dtype=float)
    fig, ax = plt.subplots(figsize=(1.6 + 0.9 * arr.shape[1], 1.2 + 0.55 * arr.shape[0]))
    image = ax.imshow(np.ma.masked_invalid(arr), cmap="Reds", vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(range(arr.shape[1]), [label_of(str(c)) for c in D.columns], rotation=45, ha="right")
    ax.set_yticks(range(arr.shape[0]), [str(r) for r in D.index])
    ax.set_xlabel("Metric")
    ax.set_ylabel("Emotion")
    style.annotate_cells(ax, arr, fontsize=8)
    style.draw_missing(ax, arr)
    for i, j in column_maxima(D):
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=2.0))
    fig.colorbar(image, ax=ax, label="difficulty D (0 easiest, 1 hardest)")
    ax.set_title(title or FIG8_TITLE)
    return fig


def plot_emotion_difficulty(D: Any, out_stem: "str | Path", title: str = FIG8_TITLE) -> list[Path]:
    """Fig. 8 (:func:`emotion_difficulty_figure`) as PNG and SVG, its caption beside them.

    Args:
        D: DataFrame, rows = emotions, columns = metric labels, values in [0, 1] (NaN: hatched n/a).
        out_stem: output path without extension.
    """
    missing = bool(style.missing_positions(np.asarray(D, dtype=float)))
    style.write_caption(out_stem, FIG8_CAPTION + (style.MISSING_CAPTION if missing else ""))
    return _save(emotion_difficulty_figure(D, title), out_stem)


def agreement_figure(rho: Any, title: str = FIG9_TITLE):
    """Fig. 9 as a matplotlib Figure: the Spearman matrix, diverging colours in [-1, 1], missing
    cells hatched and labelled n/a."""
    plt = _pyplot()
    arr = np.asarray(rho, dtype=float)
    fig, ax = plt.subplots(figsize=(1.8 + 0.75 * arr.shape[1], 1.2 + 0.75 * arr.shape[0]))
    image = ax.imshow(np.ma.masked_invalid(arr), cmap="RdBu_r", vmin=-1.0, vmax=1.0)
    ax.set_xticks(range(arr.shape[1]), [label_of(str(c)) for c in rho.columns], rotation=45, ha="right")
    ax.set_yticks(range(arr.shape[0]), [label_of(str(r)) for r in rho.index])
    ax.set_xlabel("Metric")
    ax.set_ylabel("Metric")
    style.annotate_cells(ax, arr, fontsize=7, shade=np.abs(arr))  # both ends of the diverging map are dark
    style.draw_missing(ax, arr)
    fig.colorbar(image, ax=ax, label="Spearman ρ (unitless)")
    ax.set_title(title or FIG9_TITLE)
    return fig


def plot_agreement(rho: Any, out_stem: "str | Path", title: str = FIG9_TITLE) -> list[Path]:
    """Fig. 9 (:func:`agreement_figure`) as PNG and SVG, its caption beside them."""
    missing = bool(style.missing_positions(np.asarray(rho, dtype=float)))
    style.write_caption(out_stem, FIG9_CAPTION + (style.MISSING_CAPTION if missing else ""))
    return _save(agreement_figure(rho, title), out_stem)


def _fit_line(ax: Any, x: np.ndarray, y: np.ndarray, **style: Any) -> None:
    fit = ols_fit(x, y)
    if np.isfinite(fit.slope):
        xs = np.array([np.nanmin(x), np.nanmax(x)])
        ax.plot(xs, fit.slope * xs + fit.intercept,
                label=f"OLS: y = {fit.slope:.2f}x + {fit.intercept:.2f} (R² = {fit.r2:.2f})", **style)


def plot_source_difficulty(
    z_ad: Sequence[float], z_vd: Sequence[float], out_stem: "str | Path", gridsize: int = 25, title: str = ""
) -> list[Path]:
    """Fig. 10: hexbin of Z_s^AD (x) vs Z_s^VD (y), dashed equality line and red OLS fit."""
    plt = _pyplot()
    x, y = np.asarray(z_ad, dtype=float), np.asarray(z_vd, dtype=float)
    if x.shape != y.shape or x.size == 0:
        raise ValueError(f"z_ad and z_vd must be non-empty and equally long, got {x.size} and {y.size}")
    fig, ax = plt.subplots(figsize=(5.0, 4.2))
    hb = ax.hexbin(x, y, gridsize=gridsize, cmap="viridis", mincnt=1, extent=(0, 1, 0, 1))
    fig.colorbar(hb, ax=ax, label="clips per bin")
    ax.plot([0, 1], [0, 1], linestyle="--", color="black", linewidth=1.0, label="equality")
    _fit_line(ax, x, y, color="red", linewidth=1.5)
    ax.set_xlabel(r"$Z_s^{\mathrm{AD}}$ (audio-driven difficulty)")
    ax.set_ylabel(r"$Z_s^{\mathrm{VD}}$ (vision-driven difficulty)")
    ax.set_title(title or f"Source difficulty (Fig. 10): Spearman ρ = {spearman(x, y):.2f}, n = {x.size}")
    style.legend_outside(ax)
    style.write_caption(out_stem, "Fig. 10: per-clip difficulty of audio-driven (x) vs vision-driven (y) generation, "
                                  "z-scores min-max normalised to [0, 1] (Eq. 4; unitless); dashed: equality, red: OLS.")
    return _save(fig, out_stem)


#: dtSSD's unit as the leaderboard header prints it (stored values are in the paper's x1e2).
DTSSD_UNIT = "×1e2"


def plot_motion_difficulty(
    d_motion: Sequence[float], dtssd: Sequence[float], emotions: Sequence[str], out_stem: "str | Path",
    title: str = "",
) -> list[Path]:
    """Fig. 11: per-clip motion difficulty vs model-averaged dtSSD, coloured by emotion, OLS fit.

    Args:
        d_motion: D_motion(s) per clip (Eq. 5-6, from the matting module).
        dtssd: dtSSD_s per clip (mean over models).
        emotions: the clip's emotion name (Table 1 spelling) per clip.
    """
    plt = _pyplot()
    x, y = np.asarray(d_motion, dtype=float), np.asarray(dtssd, dtype=float)
    emotions = [str(e) for e in emotions]
    if not (x.shape == y.shape and x.size == len(emotions)) or x.size == 0:
        raise ValueError(f"d_motion, dtssd and emotions must be non-empty and equally long: "
                         f"{x.size}, {y.size}, {len(emotions)}")
    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    names = [e for e in EMOTION_NAMES if e in set(emotions)] + sorted(set(emotions) - set(EMOTION_NAMES))
    for name in names:
        keep = np.array([e == name for e in emotions])
        ax.scatter(x[keep], y[keep], s=14, alpha=0.8, color=EMOTION_COLORS.get(name, "black"), label=name)
    _fit_line(ax, x, y, color="red", linewidth=1.5)
    ax.set_xlabel(r"motion difficulty $D_{\mathrm{motion}}(s)$ (percentile rank, 0-1)")
    ax.set_ylabel(f"dtSSD$_s$ ({DTSSD_UNIT}, mean over models)")
    ax.set_title(title or f"Motion difficulty (Fig. 11): Spearman ρ = {spearman(x, y):.2f}, n = {x.size}")
    style.legend_outside(ax, markerscale=1.2)
    style.write_caption(out_stem, f"Fig. 11: per-clip motion difficulty (Eq. 5-6) vs dtSSD ({DTSSD_UNIT}) averaged "
                                  "over the stored matting models, one colour per emotion; red: OLS fit.")
    return _save(fig, out_stem)


def crosstask_figures(
    rows: Any,
    out_dir: "str | Path",
    motion: Any = None,
    difficulty: Any = None,
) -> dict[str, list[Path]]:
    """Write Figs. 8-11 from per-clip result rows into ``out_dir`` (``fig8_emotion_difficulty`` ...).

    Figs. 8-9 use the paper's eight metrics (missing tasks give blank columns); Fig. 10 is drawn
    when both generation regimes have rows; Fig. 11 when ``motion`` (a
    :class:`~hug_vis_dataset.metrics.crosstask.MotionRelation`) is given; ``difficulty``: the rows'
    :func:`~hug_vis_dataset.metrics.crosstask.emotion_difficulty` when the caller has it (not computed twice).
    Returns name -> paths.
    """
    from ..metrics.crosstask import difficulty_agreement, emotion_difficulty, source_difficulty

    out_dir = Path(out_dir)
    written: dict[str, list[Path]] = {}
    difficulty = emotion_difficulty(rows) if difficulty is None else difficulty
    written["fig8"] = plot_emotion_difficulty(difficulty.D, out_dir / "fig8_emotion_difficulty")
    written["fig9"] = plot_agreement(difficulty_agreement(difficulty.D), out_dir / "fig9_difficulty_agreement")
    try:
        source = source_difficulty(rows)
    except ValueError:
        source = None  # a regime is missing or shares fewer than two valid clips: no Fig. 10
    if source is not None:
        written["fig10"] = plot_source_difficulty(source.pairs["Z_AD"], source.pairs["Z_VD"],
                                                  out_dir / "fig10_source_difficulty")
    if motion is not None:
        written["fig11"] = plot_motion_difficulty(motion.d_motion, motion.dtssd, motion.emotions,
                                                  out_dir / "fig11_motion_difficulty")
    return written


# ----------------------------------------------------------------------------- variance decomposition (finding iv)
def _bar_label(name: str) -> str:
    """A variance bar's name as a person reads it: a metric's label or a task's (``mad`` -> MAD)."""
    return task_label(name) if str(name) in _TASK_NAMES else label_of(str(name))


def variance_figure(decompositions: Mapping[str, Any], title: str = ""):
    """Stacked bars, one per task (or metric), one segment per term's share plus the residual.

    Terms that are not estimable (NaN) get no segment; a fallback decomposition is marked with
    ``*`` after its label (sequential sums of squares, see the module docstring). When some decomposition has
    the within-clip ``sample`` term (several samples per clip), every bar gets its segment, after the grid
    terms and before the residual (0 for a bar without it).

    Returns:
        The matplotlib Figure (Agg backend); ``fig.axes[0].containers[i]`` holds term ``i``'s bars.

    Example:
        >>> import itertools
        >>> rows = [{"model": m, "actor_id": a, "emotion": "Sad", "action_id": 1, "script_id": 1,
        ...          "value": float(m == "y") + 0.5 * a} for m, a in itertools.product("xy", (1, 2))]
        >>> from hug_vis_dataset.metrics.variance import variance_decomposition
        >>> fig = variance_figure({"matting": variance_decomposition(rows)})
        >>> [round(float(c.patches[0].get_height()), 2) for c in fig.axes[0].containers][:5]
        [0.2, 0.0, 0.0, 0.0, 0.8]
    """
    from ..metrics.variance import RESIDUAL, SAMPLE, TERMS, VarianceInputError

    if not decompositions:
        raise VarianceInputError("no decompositions to draw")
    plt = _pyplot()
    # a bar per metric (or task) under its label, a segment per condition factor under its words
    labels = [f"{_bar_label(name)}*" if d.fell_back else _bar_label(name) for name, d in decompositions.items()]
    fig, ax = plt.subplots(figsize=(1.6 + 1.1 * len(labels), 4.2))
    bottom = np.zeros(len(labels))
    colors = plt.get_cmap("tab10").colors
    with_samples = any(SAMPLE in d.shares() for d in decompositions.values())
    for i, term in enumerate((*TERMS, SAMPLE, RESIDUAL) if with_samples else (*TERMS, RESIDUAL)):
        heights = np.array([d.shares().get(term, np.nan) for d in decompositions.values()])
        heights = np.where(np.isfinite(heights), heights, 0.0)
        ax.bar(labels, heights, bottom=bottom, label=variance_term(term),
               color="#BBBBBB" if term == RESIDUAL else colors[i])
        bottom += heights
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of variance")
    style.legend_outside(ax)
    ax.set_title(title or "Share of variance by condition factor (finding iv)")
    return fig


def plot_variance_decomposition(decompositions: Mapping[str, Any], out_stem: "str | Path",
                                title: str = "") -> list[Path]:
    """Draw :func:`variance_figure` and write ``<out_stem>.png`` and ``.svg`` (as the other figures)."""
    return _save(variance_figure(decompositions, title), out_stem)


# ----------------------------------------------------------------------------- rank stability under seed noise
def rank_stability_figure(stabilities: Mapping[str, Sequence[Mapping[str, Any]]], title: str = ""):
    """One panel per metric, one horizontal bar per neighbour pair ``A > B`` (best pair on top): the share of
    one-seed evaluations that keep the pair's order (:func:`hug_vis_dataset.statistics.seeds.rank_stability`),
    with lines at 0.5 (seed noise alone decides) and 0.95. A pair without a common clip is written ``n/a``.

    Args:
        stabilities: metric (or task) -> :func:`~hug_vis_dataset.statistics.seeds.rank_stability`'s records.

    Returns:
        The matplotlib Figure (Agg backend); ``fig.axes[i].patches`` are metric ``i``'s bars, top to bottom.

    Example:
        >>> pairs = [{"better": "a", "worse": "b", "share_kept": 0.97, "n_draws": 1000, "n_clips": 8},
        ...          {"better": "b", "worse": "c", "share_kept": 0.55, "n_draws": 1000, "n_clips": 8}]
        >>> fig = rank_stability_figure({"fvd": pairs})
        >>> [(t.get_text(), round(float(p.get_width()), 2)) for t, p in zip(fig.axes[0].get_yticklabels(),
        ...                                                                 fig.axes[0].patches)]
        [('a > b', 0.97), ('b > c', 0.55)]
    """
    from ..statistics.seeds import STABILITY_WORDS

    if not stabilities:
        raise ValueError("no rank stabilities to draw")
    plt = _pyplot()
    heights = [max(len(pairs), 1) for pairs in stabilities.values()]
    fig, axes = plt.subplots(len(heights), 1, squeeze=False, sharex=True,
                             gridspec_kw={"height_ratios": heights, "hspace": 0.45},
                             figsize=(6.4, 1.0 + 0.32 * sum(heights) + 0.45 * len(heights)))
    for ax, (name, pairs) in zip(axes[:, 0], stabilities.items()):
        labels = [f"{p['better']} > {p['worse']}" for p in pairs]
        shares = np.array([float(p["share_kept"]) for p in pairs], dtype=float)
        y = np.arange(len(pairs))
        ax.barh(y, np.where(np.isfinite(shares), shares, 0.0), color="#0072B2", height=0.6)
        for i in np.flatnonzero(~np.isfinite(shares)):
            ax.text(0.01, i, style.MISSING_TEXT, va="center", fontsize=7, color="black")
        for i in np.flatnonzero(np.isfinite(shares)):
            ax.text(min(shares[i], 1.0) + 0.01, i, f"{shares[i]:.2f}", va="center", fontsize=7)
        ax.axvline(0.5, color="black", linestyle="--", linewidth=1.0, label="0.5: seed noise decides")
        ax.axvline(0.95, color="#D55E00", linestyle=":", linewidth=1.2, label="0.95")
        ax.set_yticks(y, labels)
        ax.set_ylim(len(pairs) - 0.5 if pairs else 0.5, -0.5)  # the best pair on top
        ax.set_xlim(0, 1.08)
        ax.set_title(_bar_label(name), loc="left")
    axes[-1, 0].set_xlabel("share of one-seed evaluations that keep the order")
    style.legend_outside(axes[0, 0])
    fig.suptitle(title or "Rank stability under seed noise")
    import textwrap

    fig.text(0.01, 0.0, textwrap.fill(STABILITY_WORDS, 110), fontsize=7, va="top", ha="left")
    return fig


def plot_rank_stability(stabilities: Mapping[str, Sequence[Mapping[str, Any]]], out_stem: "str | Path",
                        title: str = "") -> list[Path]:
    """Draw :func:`rank_stability_figure` and write ``<out_stem>.png`` and ``.svg`` (as the other figures)."""
    return _save(rank_stability_figure(stabilities, title), out_stem)

"""One look for every figure (paper Figs. 8-11, the variance bars): fonts, sizes, how a missing
cell is drawn, where legends go, and the caption file written beside each figure.

Missing cells (a metric that could not be computed) are hatched grey and labelled ``n/a``, never
left white: white is a value on a sequential colour bar (0.0, "easiest" in Fig. 8). Legends sit
outside the axes, right of the data, so they cover nothing.

Example:
    >>> import numpy as np
    >>> missing_positions(np.array([[0.0, np.nan], [np.nan, 1.0]]))
    [(0, 1), (1, 0)]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

#: Matplotlib settings every figure is drawn with.
RC: dict[str, Any] = {"font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 7,
                      "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.spines.top": False,
                      "axes.spines.right": False, "svg.hashsalt": "hugvis"}
MISSING_TEXT = "n/a"
MISSING_HATCH = "///"
MISSING_FACE = "#EEEEEE"
MISSING_EDGE = "#999999"
#: Said in every caption of a figure with missing cells.
MISSING_CAPTION = "Hatched cells marked n/a: the metric could not be computed from the stored rows (no value)."


def apply(plt: Any) -> None:
    """Set :data:`RC` on a pyplot module (idempotent)."""
    plt.rcParams.update(RC)


def missing_positions(arr: np.ndarray) -> list[tuple[int, int]]:
    """(row, column) of every non-finite cell of a 2-D array."""
    arr = np.asarray(arr, dtype=float)
    return [(int(i), int(j)) for i, j in zip(*np.where(~np.isfinite(arr)))]


def annotate_cells(ax: Any, arr: np.ndarray, *, fontsize: float, shade: "np.ndarray | None" = None,
                   white_above: float = 0.6) -> int:
    """Write every finite cell's value (two decimals) at its centre of a heatmap drawn with ``imshow``:
    white where ``shade`` (default: the value itself) is above ``white_above``, so the number stays
    legible on the dark end of the colour map, black elsewhere. Non-finite cells are left to
    :func:`draw_missing`.

    Returns:
        The number of cells written.

    Example:
        >>> import matplotlib; matplotlib.use("Agg"); import matplotlib.pyplot as plt
        >>> fig, ax = plt.subplots()
        >>> annotate_cells(ax, np.array([[0.1, 0.9], [np.nan, -0.7]]), fontsize=7, shade=np.array([[0.1, 0.9], [0, 0.7]]))
        3
        >>> [(t.get_text(), t.get_color()) for t in ax.texts]
        [('0.10', 'black'), ('0.90', 'white'), ('-0.70', 'white')]
        >>> plt.close(fig)
    """
    arr = np.asarray(arr, dtype=float)
    shade = arr if shade is None else np.asarray(shade, dtype=float)
    cells = [(int(i), int(j)) for i, j in zip(*np.where(np.isfinite(arr)))]
    for i, j in cells:
        ax.text(j, i, f"{arr[i, j]:.2f}", ha="center", va="center", fontsize=fontsize,
                color="white" if shade[i, j] > white_above else "black")
    return len(cells)


def draw_missing(ax: Any, arr: np.ndarray) -> int:
    """Hatch every non-finite cell of a heatmap drawn with ``imshow`` and write ``n/a`` in it.

    Returns:
        The number of cells drawn so.
    """
    from matplotlib.patches import Rectangle

    cells = missing_positions(arr)
    for i, j in cells:
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=MISSING_FACE, edgecolor=MISSING_EDGE,
                               hatch=MISSING_HATCH, linewidth=0.0, gid="missing"))
        ax.text(j, i, MISSING_TEXT, ha="center", va="center", fontsize=7, color="black")
    return len(cells)


def legend_outside(ax: Any, **kwargs: Any) -> Any:
    """A legend right of the axes (never over the data)."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kwargs)


def write_caption(out_stem: "str | Path", text: str) -> Path:
    """``<out_stem>.caption.txt`` beside the figure: what it shows, its units and its missing cells."""
    stem = Path(out_stem)
    if stem.suffix in (".png", ".svg"):
        stem = stem.with_suffix("")
    path = stem.with_name(stem.name + ".caption.txt")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.strip() + "\n", encoding="utf-8")
    return path

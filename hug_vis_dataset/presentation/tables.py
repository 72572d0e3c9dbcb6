"""The table renderers every report, board and status uses: paper-style result tables in Markdown, LaTeX
and HTML (Tables 4-11, :func:`render_table`) and plain Markdown tables of a DataFrame (:func:`markdown_table`).

:func:`render_table` is one renderer for every task: a frame of model x metric values (wide, or long with ``metric`` and
``value`` columns), an optional group column (Table 4 groups rows by input setting), and a
direction per metric. Best values are bold and second-best underlined, per metric column and,
when rows are grouped, within each group.

Ranking rule: values are compared after scaling and rounding to the printed precision (what the
reader sees); ranks are dense, so every row tied for the best value is bold, and every row with the
next distinct value is underlined. A column (or group) with a single distinct value marks all of it
bold and nothing underlined. Missing values print as an en dash and are never marked.

Example:
    >>> import pandas as pd
    >>> f = pd.DataFrame({"model": ["a", "b", "c"], "mad": [1.0, 3.0, 2.0]})
    >>> print(render_table(f, higher_is_better={"mad": False}, scales={"mad": 1}, display={"mad": "MAD"}))
    | Model | MAD ↓ |
    | --- | ---: |
    | a | **1.00** |
    | b | 3.00 |
    | c | <u>2.00</u> |
"""

from __future__ import annotations

import html
import math
from typing import Any, Mapping, Sequence

BEST = "best"
SECOND = "second"
FORMATS = ("markdown", "latex", "html")


def mark_ranks(values: Sequence[float], higher_is_better: bool, decimals: "int | None" = 2) -> list["str | None"]:
    """``"best"``, ``"second"`` or ``None`` per value: the one ranking rule of every table.

    Dense ranks on values rounded to ``decimals`` (what the reader sees; ``None`` compares the
    values exactly, for numbers already as printed, e.g. the paper's): every value tied for the
    best is ``best``, every value equal to the next distinct one is ``second``; NaN is never marked.

    Example:
        >>> mark_ranks([0.5, 0.9, 0.9, 0.7, float("nan")], higher_is_better=True)
        [None, 'best', 'best', 'second', None]
        >>> mark_ranks([3.0, 1.0, 2.0], higher_is_better=False)
        [None, 'best', 'second']
        >>> mark_ranks([7.73, 8.10, 7.73, 8.90], higher_is_better=False, decimals=None)
        ['best', 'second', 'best', None]
    """
    rounded = [None if v is None or not math.isfinite(float(v))
               else (float(v) if decimals is None else round(float(v), decimals)) for v in values]
    distinct = sorted({v for v in rounded if v is not None}, reverse=higher_is_better)
    best = distinct[0] if distinct else None
    second = distinct[1] if len(distinct) > 1 else None
    return [BEST if v is not None and v == best else SECOND if v is not None and v == second else None
            for v in rounded]


def _lookup_info(name: str):
    from .. import catalog

    return catalog.spec(name) if name in catalog.METRIC_NAMES else None


def _latex_escape(text: str) -> str:
    out = str(text)
    for char, repl in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                       ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\^{}")):
        out = out.replace(char, repl)
    return out


def _latex_header(text: str) -> str:
    """A board header in LaTeX: escaped, its arrow and unit signs in math mode."""
    out = _latex_escape(text)
    for char, repl in (("↑", r"$\uparrow$"), ("↓", r"$\downarrow$"), ("×", r"$\times$"), ("÷", r"$\div$")):
        out = out.replace(char, repl)
    return out


def _md_escape(text: str) -> str:
    return str(text).replace("|", r"\|")


def render_table(
    frame: Any,
    metrics: "Sequence[str] | None" = None,
    row_label: str = "model",
    group: "str | None" = None,
    fmt: str = "markdown",
    higher_is_better: "Mapping[str, bool] | None" = None,
    decimals: "int | Mapping[str, int]" = 2,
    scales: "Mapping[str, float] | None" = None,
    display: "Mapping[str, str] | None" = None,
    extra_columns: Sequence[str] = (),
    caption: str = "",
    rank_within: str = "group",
    metric_column: str = "metric",
    value_column: str = "value",
    unranked: Sequence[str] = (),
    intervals: "Mapping[tuple[int, str], tuple[float, float]] | None" = None,
    precision: str = "fixed",
    pool: "str | None" = None,
    texts: "Mapping[tuple[int, str], str] | None" = None,
    marked: "Mapping[tuple[int, str], str | None] | None" = None,
    suffixes: "Mapping[tuple[int, str], str] | None" = None,
) -> str:
    """Render a results table with best (bold) and second-best (underlined) values per metric.

    Args:
        frame: a pandas DataFrame, wide (one column per metric) or long (``metric_column`` and
            ``value_column``; pivoted to wide, one row per row label, extra columns and group).
        metrics: metric columns, in order; default every column that is not a label/group/extra
            column (wide) or every metric in order of appearance (long).
        row_label: column naming the row (the model); printed first, header capitalised.
        group: optional column whose values become group header rows, in order of appearance.
        fmt: ``markdown`` (bold ``**x**``, underline ``<u>x</u>``), ``latex`` (booktabs,
            ``\\textbf``, ``\\underline``) or ``html`` (``<b>``, ``<u>``).
        higher_is_better: direction per metric; metrics not given are looked up in
            :mod:`hug_vis_dataset.catalog` (KeyError if unknown there too).
        decimals: printed precision, one for all or per metric. Ranking uses the printed values.
        scales: factor per metric applied before printing (default: the catalog's ``paper_scale``:
            stored values in, paper units out; else 1).
        display: header per metric (default: the catalog's label, else the metric name); the
            direction arrow is appended.
        extra_columns: further label columns printed after the row label (e.g. ``Input``).
        caption: table caption (LaTeX/HTML caption; a leading line in Markdown).
        rank_within: ``"group"`` (mark best per group, Table 4) or ``"all"``.
        metric_column, value_column: column names of a long frame.
        unranked: row labels printed but never marked nor ranked against (a reference row such
            as Table 9's "Real audio").
        intervals: ``(row position, metric) -> (low, high)`` (paper units, the frame's row order):
            printed after the value as ``[low, high]`` at the value's precision; the mark stays on
            the value.
        precision: ``"fixed"`` (``decimals``) or ``"catalog"`` (each catalog metric's
            :meth:`~hug_vis_dataset.catalog.MetricSpec.printed`: its decimals, one more below 1,
            e.g. ``0.044`` beside ``10.43``); ranking uses the printed values either way.
        pool: optional column splitting the ranking further without printing anything (rows
            ranked only against rows of the same pool value, within the group): the board's
            comparable groups, e.g. the paper's rows pooled with full-grid runs, synthetic-grid
            runs among themselves.
        texts: ``(row position, metric) -> text``: a cell printed exactly so (the paper's digits as
            published) instead of by ``precision``; it is ranked on ``float(text)``.
        marked: ``(row position, metric) -> best / second / None``: the marks, computed by the caller (the
            statistics' ranking, :func:`hug_vis_dataset.statistics.ranking.rank_column`, which draws a mark only
            where the verdicts separate the rows); without it marks follow the printed values alone.
        suffixes: ``(row position, metric) -> text`` printed after the cell (and its interval): a verdict mark
            (``≈``, ``?``) or the small-sample mark of an interval.

    Returns:
        The table as a string.

    Raises:
        ValueError: unknown ``fmt``/``rank_within``, missing columns, duplicate cells in a long frame.
    """
    import pandas as pd

    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS}, got {fmt!r}")
    if rank_within not in ("group", "all"):
        raise ValueError(f"rank_within must be 'group' or 'all', got {rank_within!r}")
    labels = [row_label] + [c for c in extra_columns if c != row_label]
    for column in (group, pool):
        if column is not None and column not in labels:
            labels.append(column)
    missing = [c for c in labels if c not in frame.columns]
    if missing:
        raise ValueError(f"table frame lacks column(s) {missing}; has {list(frame.columns)}")
    if metrics is None and metric_column in frame.columns and value_column in frame.columns:
        order = list(dict.fromkeys(frame[metric_column].astype(str)))
        metrics = order
    is_long = metric_column in frame.columns and value_column in frame.columns and not set(metrics or ()) <= set(
        frame.columns
    )
    if is_long:
        dup = frame.duplicated(labels + [metric_column])
        if dup.any():
            raise ValueError(f"{int(dup.sum())} duplicate (row, metric) cells in the long frame")
        wide = frame.pivot(index=labels, columns=metric_column, values=value_column)
        keys = list(dict.fromkeys(map(tuple, frame[labels].itertuples(index=False, name=None))))
        index = pd.MultiIndex.from_tuples(keys, names=labels) if len(labels) > 1 else pd.Index(
            [k[0] for k in keys], name=labels[0])
        wide = wide.reindex(index).reset_index()
        wide.columns.name = None
    else:
        wide = frame.reset_index(drop=True)
        if metrics is None:
            metrics = [c for c in wide.columns if c not in labels]
    metrics = list(metrics)
    absent = [m for m in metrics if m not in wide.columns]
    if absent:
        raise ValueError(f"metric column(s) {absent} not in the table frame")

    infos = {m: _lookup_info(m) for m in metrics}
    direction = {}
    for m in metrics:
        if higher_is_better is not None and m in higher_is_better:
            direction[m] = bool(higher_is_better[m])
        elif infos[m] is not None:
            direction[m] = infos[m].higher_is_better
        else:
            raise KeyError(f"no direction for metric {m!r}: pass higher_is_better={{{m!r}: ...}}")
    scale = {m: float((scales or {}).get(m, infos[m].paper_scale if infos[m] else 1.0)) for m in metrics}
    places = {m: int(decimals[m] if isinstance(decimals, Mapping) else decimals) for m in metrics}
    header = {m: (display or {}).get(m, infos[m].label if infos[m] else m) for m in metrics}
    # A catalog metric without a given header shows the leaderboard's (label, arrow, unit).
    board_header = {m: infos[m].header for m in metrics if infos[m] is not None and m not in (display or {})}
    if precision not in ("fixed", "catalog"):
        raise ValueError(f"precision must be 'fixed' or 'catalog', got {precision!r}")

    def printed(m: str, v: float, i: "int | None" = None) -> str:
        if i is not None and (i, m) in (texts or {}):
            return str(texts[(i, m)])
        if precision == "catalog" and infos[m] is not None:
            return infos[m].printed(v)
        return f"{v:.{places[m]}f}"

    values = {m: [float(v) * scale[m] if pd.notna(v) else float("nan") for v in wide[m]] for m in metrics}
    groups = list(wide[group]) if group is not None else [None] * len(wide)
    pools = list(wide[pool]) if pool is not None else [None] * len(wide)
    ranked_in = [(gi if rank_within == "group" else None, pi) for gi, pi in zip(groups, pools)]
    marks = {m: [None] * len(wide) for m in metrics}
    excluded = {i for i, label in enumerate(wide[row_label]) if label in set(unranked)}
    if marked is not None:
        for (i, m), mark in marked.items():
            if m in marks and 0 <= i < len(wide) and i not in excluded:
                marks[m][i] = mark
    else:
        for key in dict.fromkeys(ranked_in):
            idx = [i for i, ki in enumerate(ranked_in) if ki == key and i not in excluded]
            for m in metrics:
                shown = [float(printed(m, values[m][i], i)) if math.isfinite(values[m][i]) else math.nan for i in idx]
                for i, mark in zip(idx, mark_ranks(shown, direction[m], None)):
                    marks[m][i] = mark

    label_cols = [row_label] + [c for c in extra_columns if c != row_label]
    from ..catalog import COLUMN_LABELS  # a key column under its label (n_ok: Clips scored), else capitalised

    label_headers = [COLUMN_LABELS.get(c) or c[:1].upper() + c[1:] for c in label_cols]

    def cell(m: str, i: int) -> str:
        v = values[m][i]
        if math.isnan(v):
            return "–"
        text = printed(m, v, i)
        mark = marks[m][i]
        interval = (intervals or {}).get((i, m))
        tail = ""
        if interval is not None and all(math.isfinite(float(b)) for b in interval):
            tail = f" [{printed(m, float(interval[0]))}, {printed(m, float(interval[1]))}]"
        suffix = (suffixes or {}).get((i, m), "")
        if suffix:
            tail += " " + (html.escape(suffix) if fmt == "html" else
                           _latex_escape(suffix).replace("≈", r"$\approx$") if fmt == "latex" else suffix)
        if fmt == "markdown":
            return (f"**{text}**" if mark == BEST else f"<u>{text}</u>" if mark == SECOND else text) + tail
        if fmt == "latex":
            return (rf"\textbf{{{text}}}" if mark == BEST else rf"\underline{{{text}}}" if mark == SECOND
                    else text) + tail
        return (f"<b>{text}</b>" if mark == BEST else f"<u>{text}</u>" if mark == SECOND else text) + tail

    ncols = len(label_cols) + len(metrics)
    lines: list[str] = []
    prev_group: Any = object()
    if fmt == "markdown":
        if caption:
            lines += [caption, ""]
        arrows = {m: "↑" if direction[m] else "↓" for m in metrics}
        lines.append("| " + " | ".join([_md_escape(h) for h in label_headers]
                                      + [_md_escape(board_header[m]) if m in board_header
                                         else f"{_md_escape(header[m])} {arrows[m]}" for m in metrics]) + " |")
        lines.append("| " + " | ".join(["---"] * len(label_cols) + ["---:"] * len(metrics)) + " |")
        for i in range(len(wide)):
            if group is not None and groups[i] != prev_group:
                lines.append("| " + " | ".join([f"*{_md_escape(groups[i])}*"] + [""] * (ncols - 1)) + " |")
                prev_group = groups[i]
            lines.append("| " + " | ".join([_md_escape(wide[c].iloc[i]) for c in label_cols]
                                          + [cell(m, i) for m in metrics]) + " |")
        return "\n".join(lines)
    if fmt == "latex":
        arrows = {m: r"$\uparrow$" if direction[m] else r"$\downarrow$" for m in metrics}
        lines += [r"\begin{table}[t]", r"\centering"]
        if caption:
            lines.append(rf"\caption{{{_latex_escape(caption)}}}")
        lines += [r"\begin{tabular}{" + "l" * len(label_cols) + "r" * len(metrics) + "}", r"\toprule"]
        lines.append(" & ".join([_latex_escape(h) for h in label_headers]
                                + [_latex_header(board_header[m]) if m in board_header
                                   else f"{_latex_escape(header[m])} {arrows[m]}" for m in metrics]) + r" \\")
        lines.append(r"\midrule")
        for i in range(len(wide)):
            if group is not None and groups[i] != prev_group:
                if i:
                    lines.append(r"\midrule")
                lines.append(rf"\multicolumn{{{ncols}}}{{l}}{{\textit{{{_latex_escape(groups[i])}}}}} \\")
                prev_group = groups[i]
            lines.append(" & ".join([_latex_escape(wide[c].iloc[i]) for c in label_cols]
                                    + [cell(m, i) for m in metrics]) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines)
    arrows = {m: "&uarr;" if direction[m] else "&darr;" for m in metrics}
    lines.append("<table>")
    if caption:
        lines.append(f"<caption>{html.escape(caption)}</caption>")
    lines.append("<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in label_headers)
                 + "".join(f"<th>{html.escape(board_header[m])}</th>" if m in board_header
                           else f"<th>{html.escape(header[m])} {arrows[m]}</th>" for m in metrics) + "</tr></thead>")
    lines.append("<tbody>")
    for i in range(len(wide)):
        if group is not None and groups[i] != prev_group:
            lines.append(f'<tr class="group"><th colspan="{ncols}">{html.escape(str(groups[i]))}</th></tr>')
            prev_group = groups[i]
        lines.append("<tr>" + "".join(f"<td>{html.escape(str(wide[c].iloc[i]))}</td>" for c in label_cols)
                     + "".join(f"<td>{cell(m, i)}</td>" for m in metrics) + "</tr>")
    lines += ["</tbody>", "</table>"]
    return "\n".join(lines)


def text_table(frame, fmt: str, caption: str = "") -> str:
    """A table of text cells (already formatted) as ``markdown`` (:func:`markdown_table`), ``latex`` (booktabs,
    escaped, arrows and daggers in math mode) or ``html`` (escaped): the joint table of the report.

    Example:
        >>> import pandas as pd
        >>> print(text_table(pd.DataFrame({"system": ["a_1"], "PSNR ↑": ["31.5 (31.0, 32.0) †"]}), "latex"))
        \\begin{tabular}{ll}
        \\toprule
        system & PSNR $\\uparrow$ \\\\
        \\midrule
        a\\_1 & 31.5 (31.0, 32.0) $\\dagger$ \\\\
        \\bottomrule
        \\end{tabular}
    """
    if fmt == "markdown":
        return markdown_table(frame)
    columns = [str(c) for c in frame.columns]
    rows = [[str(v) for v in row] for row in frame.itertuples(index=False)]
    if fmt == "latex":
        def tex(text: str) -> str:
            return _latex_header(text).replace("†", r"$\dagger$")

        lines = [r"\begin{tabular}{" + "l" * len(columns) + "}", r"\toprule", " & ".join(map(tex, columns)) + r" \\",
                 r"\midrule"] + [" & ".join(map(tex, row)) + r" \\" for row in rows] + [r"\bottomrule", r"\end{tabular}"]
        if caption:  # a caption needs the float around the tabular
            lines = [r"\begin{table}[t]", r"\centering", rf"\caption{{{tex(caption)}}}", *lines, r"\end{table}"]
        return "\n".join(lines)
    if fmt != "html":
        raise ValueError(f"unknown format {fmt!r}; choose from {FORMATS}")
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in row) + "</tr>" for row in rows)
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def markdown_table(frame, digits: int = 3, index: bool = False) -> str:
    """A plain Markdown table of a DataFrame (numbers to ``digits`` significant digits, NaN as n/a).

    Example:
        >>> import pandas as pd
        >>> print(markdown_table(pd.DataFrame({"a": [1.23456, float("nan")], "b": ["x", "y"]})))
        | a | b |
        | --- | --- |
        | 1.23 | x |
        | n/a | y |
    """
    import math

    from .escaping import markdown_text

    frame = frame.reset_index() if index else frame

    def cell(value) -> str:
        if isinstance(value, float):
            return "n/a" if math.isnan(value) else f"{value:.{digits}g}"
        # Stored text (model names, settings, reasons) must not split the row or become markup.
        return markdown_text(value)

    lines = ["| " + " | ".join(markdown_text(c) for c in frame.columns) + " |", "| " + " | ".join("---" for _ in frame.columns) + " |"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)

"""The words of the report's task tables: how every caption states its cells, and the sentences a caption adds
(paper rows, RVM's protocol, the synthetic grid, columns beyond the paper, corpus ratios, runs of several samples
per clip).

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"clip_id": ["c1"] * 3, "metric": "mad", "sample": [0, 1, 2]})
    >>> samples_line({"matte_seeded": rows})
    "- matte_seeded: each clip's value is the mean over its 3 samples (a stochastic model's seeds); seed spread and rank stability under one-seed draws: Findings, Seeds."
"""

from __future__ import annotations

from typing import Any, Mapping

from .. import catalog
from ..presentation.escaping import markdown_text

#: How every report table states its cells (one convention, in each caption).
CELL_CONVENTION = ("each cell: mean [95% actor-clustered bootstrap interval] in the header's units; best bold, "
                   "second underlined (printed values; reference and baseline rows never ranked)")
SYNTHETIC_CAPTION = ("Rows scored on the toolkit's synthetic mini-grid (small frames, short clips, synthetic "
                     "recordings): their values are not comparable in scale with the paper's; read their order, not "
                     "their size.")
#: Why a task's synthetic values differ in scale, where one reason dominates (said after the caption).
SYNTHETIC_SCALE: dict[str, str] = {
    "matting": "Grad and Conn sum over pixels and grow with resolution (Grad 0.044 here against 10.43 in the paper).",
    "voice_cloning": "DNSMOS and UTMOS rate speech; the synthetic recordings are formant-synthesized, not "
                     "intelligible speech, and score near the bottom of the scale.",
}


PAPER_CAPTION = ("Rows of origin 'paper' are the published numbers of {table}, as printed; they are ranked only "
                 "with full-grid (submitted) runs, never with synthetic-grid or grid-subset runs, which are ranked "
                 "among themselves.")


RVM_CAPTION = (f"Values are {catalog.PROTOCOL_WORDS[catalog.RVM]}: the paper's protocol; their intervals are the "
               "actor-clustered bootstrap of that same statistic.")


BEYOND_CAPTION = ("Beyond the paper, beside {table} ({task}): columns HUG-VIS does not report, so never among "
                  "its columns and with no paper rows; {cells}.")
RATIO_CAPTION = ("{labels}: corpus-level (the sum of the clips' numerators over the sum of their denominators: "
                 "CER = total character edits / total target characters), its interval the actor bootstrap of "
                 "that ratio.")


def samples_line(sample_rows: Mapping[str, Any]) -> str:
    """The line under a task table naming its runs scored over several samples per clip (model -> its per-sample
    rows, :attr:`~hug_vis_dataset.scoring.runs.StoredRun.sample_rows`), "" when there is none."""
    from ..datamodel.results import SAMPLE_COLUMN

    counts = {model: int(rows.groupby(["clip_id", "metric"], observed=True)[SAMPLE_COLUMN].nunique().max())
              for model, rows in sorted(sample_rows.items()) if rows is not None and len(rows)}
    if not counts:
        return ""
    runs = "; ".join(f"{markdown_text(model)}: each clip's value is the mean over its {k} samples"
                     for model, k in counts.items())
    return f"- {runs} (a stochastic model's seeds); seed spread and rank stability under one-seed draws: Findings, Seeds."

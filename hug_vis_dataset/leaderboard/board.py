"""Leaderboards: the paper's Tables 4-11 beside every stored run, flagged by origin and ranked fairly.

Rows have an **origin**:

* ``paper``: the numbers of Tables 4-11 as published (``hug_vis_dataset/data/paper_tables.json``);
* ``submitted``: a stored run scored on the full 8,400-clip grid, comparable with the paper;
* ``synthetic``: a run on the toolkit's synthetic mini-grid (its scores say nothing about the
  real benchmark);
* ``subset``: a run on part of the grid (its means are over other clips than the paper's).

**Ranking rule** (one, the report's: :func:`hug_vis_dataset.statistics.ranking.rank_column`): rows rank on
their printed values within a *comparison set* (:func:`hug_vis_dataset.statistics.rules.comparison_set`: paper and
submitted rows form one pool, synthetic rows another, subset rows a third, a partial run only with partial runs;
Table 4 further split by input setting); each stored row is compared with the next-ranked stored row (the one
verdict), and best / second are drawn only where those comparisons separate the rows (a paper row has no per-clip
rows and no verdict). Reference rows (Table 9's real audio) and the built-in baselines are printed, never ranked.
Synthetic and subset rows are shown only on request.

Headers carry the metric's label, direction arrow and unit from the catalog
(:attr:`hug_vis_dataset.catalog.MetricSpec.header`); stored rows carry their clips scored and failed (the catalog's
labels of ``n_ok`` and ``n_failed``), coverage and a link to their provenance (``summary.json``). A metric that could not run is ``needs weights``
in its cells, and the notes name the command that fixes it.

Example:
    >>> from hug_vis_dataset.datamodel.paper_tables import paper_frame
    >>> view = board(paper_rows(paper_frame()), 11)
    >>> list(view.frame.columns[:4])
    ['Model', 'Origin', 'Scored by', 'MAD ↓ (×1e3)']
    >>> view.frame.loc[view.frame.Model == "BiRefNet", "dtSSD ↓ (×1e2)"].item()
    '2.04 (best)'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from .. import catalog
from ..datamodel.paper_tables import PAPER_COLUMNS, TASK_TABLES, UNRANKED_SOURCES, table_info
from ..datamodel.results import (BASELINE_MODEL, EMOTION_MODEL_SEP, PEOPLE_MODEL, PEOPLE_NOTE, REAL_AUDIO_MODEL,
                       RESERVED_LABELS, baseline_note, reserved_label)
from ..presentation.escaping import markdown_code_text, markdown_text
from ..statistics.ranking import Entry, rank_column
from ..statistics.rules import PARTIAL_RULE, RANK_POOLS, comparison_set  # noqa: F401 (the board's rules)
from ..statistics.sums import RowsIndex
from .seed_cells import SEED_MARK, SEED_NOTE, seed_details

PAPER, SUBMITTED, SYNTHETIC, SUBSET = "paper", "submitted", "synthetic", "subset"
ORIGIN_LABELS: dict[str, str] = {PAPER: "paper", SUBMITTED: "submitted", SYNTHETIC: "synthetic demo",
                                 SUBSET: "grid subset"}
DEFAULT_ORIGINS: tuple[str, ...] = (PAPER, SUBMITTED)
BOARD_COLUMNS: tuple[str, ...] = PAPER_COLUMNS + ("origin", "n_ok", "n_failed", "coverage", "link", "note",
                                                  "scored_by", "detail", "partial")
ALL = "All"
#: The count columns under their catalog labels (a MOS row counts its rated clips there).
OK_HEADER, FAILED_HEADER = catalog.label_of("n_ok"), catalog.label_of("n_failed")
NEEDS_WEIGHTS = "needs weights"
#: Why a cell of a metric the run did not compute is empty (a run scored with ``hugvis evaluate --metrics``).
NOT_SCORED = "not scored in this run (it was scored with --metrics, without this metric)"
#: Paper rows have no per-clip rows: no verdict can be computed for them (hug_vis_dataset.verdicts).
UNMARKED_PAPER_NOTE = "Paper rows have no per-clip rows: no verdict is drawn against them."
#: What the "Scored by" column's values mean (every board with stored rows says it).
SCORED_BY_NOTE = ("Scored by: *verified* = scored by this leaderboard's own scorer from the uploaded predictions (its "
                  "record's digests still match the stored files); *self-reported* = scored elsewhere and stored as it "
                  "was (hugvis evaluate, leaderboard push); *paper* = the paper's published numbers; *ratings* = a "
                  "MOS from the study's ratings; *people* = the emotion study's answers.")
MOS_NOTE = ("MOS cells: the mean opinion score, its 95% actor-clustered bootstrap interval in brackets and the "
            "number of ratings behind it; ranked on the printed MOS.")
UNRANKED_NOTE = ("{labels}: printed to read the systems against, never ranked (a value of theirs beyond the bold cell "
                 "is not a winner).")
#: Row groups in printed order; clicking a header sorts within each group, never across them.
ROW_GROUPS: tuple[str, ...] = ("reference", PAPER, SUBMITTED, SYNTHETIC, SUBSET, "baseline")


@dataclass
class Board:
    """One leaderboard view: the table to show, notes under it and the filters that apply."""

    frame: object  # pandas DataFrame, display-ready strings
    notes: list[str] = field(default_factory=list)
    filters: tuple[str, ...] = ()

    @property
    def markdown_notes(self) -> str:
        return "\n".join(f"- {n}" for n in self.notes)


def word_list(words: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b, c and d``: labels as one English list (never "a and b and c").

    Example:
        >>> word_list(["Real audio"]), word_list(["a", "b", "c", "d"])
        ('Real audio', 'a, b, c and d')
    """
    words = [str(w) for w in words]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1] if words else ""


def print_value(value: float, metric: "str | None" = None) -> str:
    """Two decimals, three below 1 (the paper's printing); a catalog metric as its column prints it
    (:meth:`~hug_vis_dataset.catalog.MetricSpec.printed`: Speaker Sim. 1.000, not 1.00); ranking uses these.

    >>> print_value(1.0), print_value(1.0, "speaker_similarity"), print_value(0.5)
    ('1.00', '1.000', '0.500')
    """
    if metric in catalog.METRIC_NAMES:
        return catalog.spec(metric).printed(value)
    return f"{value:.2f}" if abs(value) >= 1 or value == 0 else f"{value:.3f}"


def paper_rows(frame):
    """The paper's values with the board's extra columns (origin ``paper``)."""
    out = frame.copy()
    out["origin"] = PAPER
    for column in ("n_ok", "n_failed", "coverage", "link", "note"):
        out[column] = None
    out["link"] = "paper, Table " + out["table"].astype(str)
    out["scored_by"] = PAPER
    out["detail"] = None
    out["partial"] = False
    return out[list(BOARD_COLUMNS)]


def run_rows(run) -> "object":
    """Board rows of one validated stored run, computed from its per-clip rows.

    The values are ``run.table``: the stored rows aggregated by
    :func:`hug_vis_dataset.scoring.aggregate.task_table` under the task's documented protocol
    (:func:`hug_vis_dataset.scoring.runs.read_run`), never the summary's cached aggregate.
    Metrics of the task's paper table that did not run become rows with a NaN value and the
    reason in ``note`` (``needs weights: run ...``), so the cell and the notes can say why.
    """
    import pandas as pd

    task = run.task
    table = TASK_TABLES.get(task)
    if table is None:
        return pd.DataFrame(columns=list(BOARD_COLUMNS))
    info = table_info(table)
    skipped = run.skipped
    computed = set(run.summary["metrics"]["computed"])
    grid = run.grid_size
    seeds = seed_details(run)
    records = []
    aggregate = ({str(label): dict(run.table.loc[label].items()) for label in run.table.index}
                 if run.table is not None else {})
    if not aggregate and skipped:
        # Nothing could be computed here (every metric needs weights): the run is still listed,
        # its cells say why and the notes give the command.
        aggregate = {run.model: {"n_ok": 0, "n_failed": 0}}
    for label, values in aggregate.items():
        # Labels come from the folder name; the rows' model part was checked to be that name.
        setting = str(label).partition(EMOTION_MODEL_SEP)[2] if task == "emotion" else ""
        n_ok, n_failed = int(values.get("n_ok", 0)), int(values.get("n_failed", 0))
        coverage = f"{100.0 * n_ok / grid:.1f}%" if grid else None
        partial = bool(run.summary.get("coverage", {}).get("missing"))
        source = "reference" if run.model == REAL_AUDIO_MODEL else ""
        for metric in info["metrics"]:
            value = values.get(metric["key"])
            finite = value is not None and math.isfinite(float(value))
            note = None if finite else skipped.get(metric["key"], "no value (every clip failed)" if metric["key"] in
                                                   computed else NOT_SCORED)
            records.append({
                "table": table, "task": task, "model": run.model, "input_setting": setting, "source": source,
                "paradigm": "", "metric": metric["key"], "metric_display": metric["display"],
                "value": float(value) if finite else float("nan"), "text": print_value(float(value), metric["key"]) if finite else "",
                "higher_is_better": metric["higher_is_better"], "origin": run.origin, "n_ok": n_ok,
                "n_failed": n_failed, "coverage": coverage, "link": run.link, "note": note,
                "scored_by": run.scored_by, "detail": seeds.get(metric["key"]) if finite else None,
                "partial": partial})
    return pd.DataFrame(records, columns=list(BOARD_COLUMNS))


def mos_rows(mos, origin: str, note: str = ""):
    """Board rows of Tables 6, 8 and 10 from aggregated ratings.

    Args:
        mos: ``task, model, criterion (label), mos, n_clips, n_ratings, n_raters`` rows, with
            ``ci_low``/``ci_high`` when present (:func:`hug_vis_dataset.studies.status.aggregate_ratings`);
            the interval and the ratings count go in ``detail``, printed after the MOS.
        origin: the origin of every row (ratings of synthetic systems are synthetic).
        note: appended to the model name (``(simulated raters)``).
    """
    import pandas as pd

    records = []
    for row in mos.itertuples(index=False):
        task = catalog.task(row.task)
        if task.mos_table is None:
            continue
        columns = {m["display"]: m for m in table_info(task.mos_table)["metrics"]}
        metric = columns.get(row.criterion)
        if metric is None:
            continue
        records.append({
            "table": task.mos_table, "task": row.task, "model": f"{row.model}{note}", "input_setting": "",
            "source": "", "paradigm": "", "metric": metric["key"], "metric_display": metric["display"],
            "value": float(row.mos), "text": print_value(float(row.mos)), "higher_is_better": True,
            "origin": origin, "n_ok": int(row.n_clips), "n_failed": 0, "coverage": None,
            "link": f"{int(row.n_ratings)} ratings by {int(row.n_raters)} rater(s)", "note": None,
            "scored_by": "ratings", "detail": mos_detail(row), "partial": False})
    return pd.DataFrame(records, columns=list(BOARD_COLUMNS))


def people_rows(table, origin: str, simulated: bool = False):
    """Board rows of Table 4's People row per input setting from :func:`hug_vis_dataset.studies.people.accuracy_table`
    (``setting, accuracy, ci_low, ci_high, n_clips, n_answers, n_raters``): the accuracy in %, the interval and the
    answers behind it in ``detail``, never ranked (a reserved row, :data:`hug_vis_dataset.datamodel.results.PEOPLE_MODEL`);
    ``simulated``: the synthetic release's simulated raters (said in the provenance column).

    Example:
        >>> import pandas as pd
        >>> t = pd.DataFrame({"setting": ["Video"], "accuracy": [93.35], "ci_low": [90.77], "ci_high": [96.03],
        ...                   "n_clips": [168], "n_answers": [470], "n_raters": [15]})
        >>> people_rows(t, "synthetic")[["model", "input_setting", "text", "detail"]].values.tolist()
        [['people', 'Video', '93.35', '[90.77, 96.03], 470 answers']]
    """
    import pandas as pd

    info = table_info(catalog.task("emotion").paper_table)
    metric = info["metrics"][0]
    who = "simulated rater(s)" if simulated else "rater(s)"
    records = [{"table": info["table"], "task": "emotion", "model": PEOPLE_MODEL, "input_setting": row.setting,
                "source": "", "paradigm": "", "metric": metric["key"], "metric_display": metric["display"],
                "value": float(row.accuracy), "text": print_value(float(row.accuracy), metric["key"]),
                "higher_is_better": True, "origin": origin, "n_ok": int(row.n_clips), "n_failed": 0, "coverage": None,
                "link": f"{int(row.n_answers)} answers by {int(row.n_raters)} {who}", "note": None,
                "scored_by": "emotion study", "detail": _interval_detail(row.ci_low, row.ci_high, f"{int(row.n_answers)} answers"),
                "partial": False} for row in table.itertuples(index=False)]
    return pd.DataFrame(records, columns=list(BOARD_COLUMNS))


def _interval_detail(low: float, high: float, count: str) -> str:
    """``[low, high], <count>`` (the interval left out when NaN: one actor; marked ``?`` when collapsed)."""
    from ..statistics.verdicts import MARKS, CANNOT_TELL, collapsed

    low, high = float(low), float(high)
    interval = f"[{print_value(low)}, {print_value(high)}], " if math.isfinite(low) and math.isfinite(high) else ""
    if collapsed(low, high):  # absence of evidence, drawn as such (hug_vis_dataset.verdicts)
        interval = f"[{print_value(low)}, {print_value(high)}] {MARKS[CANNOT_TELL]}, "
    return f"{interval}{count}"


def mos_detail(row) -> str:
    """``[low, high], N ratings`` after a MOS (the interval left out when it is NaN: one actor).

    Example:
        >>> from types import SimpleNamespace as R
        >>> mos_detail(R(ci_low=3.91, ci_high=4.3, n_ratings=12)), mos_detail(R(ci_low=float("nan"), ci_high=1, n_ratings=1))
        ('[3.91, 4.30], 12 ratings', '1 ratings')
    """
    low, high = (float(getattr(row, k, math.nan)) for k in ("ci_low", "ci_high"))
    return _interval_detail(low, high, f"{int(row.n_ratings)} ratings")


def clip_rows_of(runs: Iterable, *extra) -> "RowsIndex":
    """The per-clip rows of valid stored runs (and ``extra`` frames: per-clip MOS rows), indexed for
    :func:`board`'s ``clip_rows`` (:class:`~hug_vis_dataset.statistics.sums.RowsIndex`: each run's rows as they
    are, nothing concatenated but what a column's comparisons read)."""
    parts = [run.rows for run in runs if getattr(run, "rows", None) is not None and len(run.rows)]
    return RowsIndex(parts + [e for e in extra if e is not None and len(e)])


def run_tables(runs: Iterable) -> dict:
    """Task -> the stored runs' tables concatenated (paper units, each task's protocol): the values the board prints,
    which every surface ranks by."""
    import pandas as pd

    out: dict = {}
    for run in runs:
        if run.table is not None and len(run.table):
            out.setdefault(run.task, []).append(run.table)
    return {task: pd.concat(parts) for task, parts in out.items()}


def row_group(model: str, origin: str, source: str = "") -> int:
    """Index in :data:`ROW_GROUPS` of a board row: the paper's reference rows first, baselines last; a stored
    reference row (Real audio scored here) heads its own origin's group, never above the paper's rows
    (:func:`row_order`).

    Example:
        >>> row_group("Real audio", "paper", "reference"), row_group("x", "paper"), row_group("baseline", "synthetic")
        (0, 1, 5)
        >>> row_group("real-audio", "synthetic")   # the synthetic demo's group, after the paper's rows
        3
    """
    if origin == PAPER and source in UNRANKED_SOURCES:
        return 0
    if model == REAL_AUDIO_MODEL:
        return ROW_GROUPS.index(origin) if origin in ROW_GROUPS else ROW_GROUPS.index(SUBSET)
    if model == BASELINE_MODEL:
        return len(ROW_GROUPS) - 1
    return ROW_GROUPS.index(origin) if origin in ROW_GROUPS else ROW_GROUPS.index(SUBSET)


def row_order(model: str, origin: str, source: str = "") -> tuple[int, int]:
    """Sort key of a board row: its :func:`row_group`, then reference rows first within the group.

    >>> sorted(["clone_good", "real-audio"], key=lambda m: row_order(m, "synthetic"))
    ['real-audio', 'clone_good']
    """
    first = model in (REAL_AUDIO_MODEL, PEOPLE_MODEL) or source in UNRANKED_SOURCES  # references head their group
    return row_group(model, origin, source), 0 if first else 1


def provenance_href(summary_path: str) -> str:
    """The relative link of a stored run's ``summary.json``: ``provenance/<task>/<model>/summary.json``.

    Example:
        >>> provenance_href("/srv/results/matting/my_model/summary.json")
        'provenance/matting/my_model/summary.json'
    """
    from urllib.parse import quote

    from pathlib import Path

    folder = Path(summary_path).parent
    return f"provenance/{quote(folder.parent.name)}/{quote(folder.name)}/summary.json"


def stored_rows(runs: Iterable) -> "object":
    """Board rows of every stored run (:func:`run_rows` concatenated)."""
    import pandas as pd

    parts = [run_rows(run) for run in runs]
    parts = [p for p in parts if len(p)]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=list(BOARD_COLUMNS))


def board_rows(runs: Iterable, *extra) -> "object":
    """Everything a board is drawn from: the paper's rows, every stored run's, and ``extra``
    board rows (:func:`mos_rows`)."""
    import pandas as pd

    from ..datamodel.paper_tables import paper_frame

    parts = [paper_rows(paper_frame()), stored_rows(runs), *extra]
    return pd.concat([p for p in parts if len(p)], ignore_index=True)


def header(metric: dict) -> str:
    """A metric column's header: the catalog's label, arrow and unit; MOS criteria on a 1-5 scale."""
    if metric["key"] in catalog.METRIC_NAMES:
        return catalog.spec(metric["key"]).header
    return catalog.column_header(metric["display"], metric["higher_is_better"], catalog.MOS_SCALE_TEXT)


def applicable_filters(table: int, frame) -> tuple[str, ...]:
    """Filters that split this table in the paper: ``source``, ``input_setting``, ``paradigm``."""
    sub = frame[frame["table"] == int(table)]
    return tuple(c for c in ("source", "input_setting", "paradigm") if sub[c].fillna("").astype(bool).any())


def _unranked(record) -> bool:
    return record["source"] in UNRANKED_SOURCES or record["model"] in (BASELINE_MODEL, PEOPLE_MODEL)


#: How a hidden origin is shown, per door (``{origin}``: key, ``{label}``: printed label).
SPACE_REVEAL = "tick '{label}' under Show"
CLI_REVEAL = "pass --show {origin}"
#: Where a MOS table's ratings come from, per door (the CLI reads the store's log, a CSV or the simulated raters).
MOS_HOW_SPACE = "rate outputs in the MOS study tab"
MOS_HOW_CLI = ("rate the systems in the Space's MOS study tab (`hugvis space --results RESULTS` keeps its ratings in the "
               "store), pass `--mos RATINGS.csv`, or `--release DIR` for a synthetic release's simulated raters")


def board(frame, table: int, origins: Sequence[str] = DEFAULT_ORIGINS, source: str = ALL,
          input_setting: str = ALL, paradigm: str = ALL, reveal: str = SPACE_REVEAL,
          damaged: Sequence = (), extra_notes: Sequence[str] = (), clip_rows=None) -> Board:
    """One table's leaderboard view.

    Args:
        frame: :func:`paper_rows` and :func:`stored_rows` / :func:`mos_rows` concatenated.
        table: 4..11.
        origins: origins shown (default: paper and submitted; add ``synthetic``/``subset`` on request).
        source, input_setting, paradigm: filters; one that does not apply to ``table`` is ignored
            (the Space hides it), ``"All"`` keeps every row.
        reveal: what the note on hidden rows tells the reader to do (:data:`SPACE_REVEAL`,
            :data:`CLI_REVEAL`).
        damaged: stored runs that failed validation
            (:class:`~hug_vis_dataset.scoring.runs.DamagedRun`); those of this table's task (or of
            no known task) are listed once in the notes with their path, problem and fix.
        extra_notes: plain-text notes to add (e.g. skipped lines of the ratings log).
        clip_rows: per-clip rows of the valid stored runs (:func:`clip_rows_of`, or their
            :class:`~hug_vis_dataset.statistics.sums.RowsIndex`; MOS columns: per-clip MOS rows); each stored value
            of a comparison set is compared with the next-ranked stored row
            (:func:`hug_vis_dataset.statistics.verdicts.compare`, the verdict every surface shows): ``≈`` marks
            "not separable", ``?`` "cannot tell", with the reason in the notes; "separable" needs no mark, and
            only separable rows keep a best / second mark.

    Every note is Markdown; text taken from stored data in it (reasons, paths, names) is escaped
    with :func:`hug_vis_dataset.presentation.escaping.markdown_text`.

    Returns:
        A :class:`Board`; with no row left it has the headers and a note saying which filter or
        origin to change, never an empty frame without columns.
    """
    import pandas as pd

    info = table_info(table)
    metrics = info["metrics"]
    headers = {m["key"]: header(m) for m in metrics}
    filters = applicable_filters(table, frame)
    # Rows of different input settings (Table 4) are not comparable: ranked per setting.
    by_setting = "input_setting" in filters
    every = frame[frame["table"] == int(table)]
    sub = every[every["origin"].isin(list(origins))]
    notes: list[str] = []
    # The filters set to a value other than All, among those that split this table.
    applied = {c: w for c, w in (("source", source), ("input_setting", input_setting), ("paradigm", paradigm))
               if c in filters and w not in (None, "", ALL)}
    for column, wanted in applied.items():
        sub = sub[sub[column] == wanted]
    hidden = every[~every["origin"].isin(list(origins))].drop_duplicates(["origin", "model", "input_setting"])
    for origin, count in hidden["origin"].value_counts().sort_index().items():
        how = reveal.format(origin=origin, label=ORIGIN_LABELS[origin])
        notes.append(f"{count} {ORIGIN_LABELS[origin]} row(s) hidden: {how} to see them (never ranked with the paper).")
    keys = ["origin", "model", "input_setting", "source", "paradigm"]
    order = list(dict.fromkeys(tuple(r) for r in sub[keys].itertuples(index=False)))
    cells: dict[tuple, dict[str, str]] = {k: {} for k in order}
    extra: dict[tuple, dict] = {}
    reasons: dict[str, set[str]] = {}
    legends: dict[str, None] = {}
    has_mos = collapsed_mos = collapsed_people = seeded = False
    evidence = clip_rows if clip_rows is None or isinstance(clip_rows, RowsIndex) else RowsIndex(clip_rows)
    for metric in metrics:
        part = sub[sub["metric"] == metric["key"]]
        entries = [Entry(index, comparison_set(record["origin"], _is_partial(record),
                                               record["input_setting"] if by_setting else ""),
                         float(record["text"]) if record["text"] else float("nan"),
                         None if record["origin"] == PAPER else _clip_label(record), not _unranked(record))
                   for index, record in part.iterrows()]
        compared = evidence if _has_evidence(evidence, info["task"], metric["key"]) else None
        outcome = rank_column(entries, info["task"], metric["key"], metric["higher_is_better"], compared)
        for index, record in part.iterrows():
            key = tuple(record[k] for k in keys)
            mark, verdict = outcome[index].mark, outcome[index].verdict
            if record["text"]:
                text = record["text"] + (f" {verdict.mark}" if verdict is not None and verdict.mark else "")
                text += f" {record['detail']}" if isinstance(record.get("detail"), str) and record["detail"] else ""
                text = f"{text} ({mark})" if mark else text
                if verdict is not None and verdict.legend:
                    legends.setdefault(f"{headers[metric['key']]}: {verdict.legend}", None)
                rated = record.get("scored_by") == "ratings"  # a MOS cell (People cells have their own note)
                has_mos |= rated and isinstance(record.get("detail"), str) and bool(record["detail"])
                collapsed_mos |= rated and "] ?" in str(record.get("detail") or "")
                collapsed_people |= not rated and "] ?" in str(record.get("detail") or "")
                seeded |= str(record.get("detail") or "").endswith(SEED_MARK)
            else:
                text = NEEDS_WEIGHTS if "weights" in str(record["note"] or "") else "n/a"
                if record["note"]:
                    reasons.setdefault(str(record["note"]), set()).add(headers[metric["key"]])
            cells[key][headers[metric["key"]]] = text
            extra[key] = record
    rows = []
    paper_names = {str(m).casefold() for m in every.loc[every["origin"] == PAPER, "model"]}
    # Reference rows first (SCORING.md), then origin by origin, baselines last; stable within a group.
    order.sort(key=lambda k: row_order(k[1], k[0], k[3]))
    for key in order:
        record = extra.get(key)
        row = {"Model": key[1] if key[0] == PAPER else _stored_label(key[1], key[0], paper_names),
               "Origin": ORIGIN_LABELS[key[0]]}
        row["Scored by"] = _scored_by(record)
        if by_setting:
            row["Input"] = key[2]
        if "source" in filters:
            row["Source"] = catalog.SOURCE_LABELS.get(key[3], key[3])
        if "paradigm" in filters:
            row["Paradigm"] = key[4]
        for column in headers.values():
            row[column] = cells[key].get(column, "")
        row[OK_HEADER] = _count(record["n_ok"]) if record is not None else ""
        row[FAILED_HEADER] = _count(record["n_failed"]) if record is not None else ""
        row["Coverage"] = record["coverage"] or "" if record is not None else ""
        row["Provenance"] = record["link"] or "" if record is not None else ""
        rows.append(row)
    columns = ["Model", "Origin", "Scored by", *(["Input"] if by_setting else []),
               *(["Source"] if "source" in filters else []), *(["Paradigm"] if "paradigm" in filters else []),
               *headers.values(), OK_HEADER, FAILED_HEADER, "Coverage", "Provenance"]
    for reason, named in sorted(reasons.items()):
        notes.append(f"{markdown_text(', '.join(sorted(named)))}: {markdown_code_text(reason.removeprefix('skipped: '))}")
    for run in damaged:
        if run.task == info["task"] or run.task not in catalog.task_names():
            notes.append(f"Damaged run, not shown: {markdown_text(run.message())}")
    # one printed name per row (a stored real-audio row is "Real audio (reference)", never also its key)
    unranked_labels = sorted({reserved_label(str(m)) for m, src in zip(sub["model"], sub["source"])
                              if m in RESERVED_LABELS or src in UNRANKED_SOURCES})
    if unranked_labels:
        notes.append(UNRANKED_NOTE.format(labels=word_list(unranked_labels)))
    if BASELINE_MODEL in set(sub["model"]) and baseline_note(info["task"]):
        notes.append(markdown_text(baseline_note(info["task"])))
    if sub["model"].astype(str).str.startswith(PEOPLE_MODEL).any():
        notes.append(markdown_text(PEOPLE_NOTE) + ".")
    if legends:
        notes.extend(legends)
        notes.append(UNMARKED_PAPER_NOTE)
    if _partial(sub).any():
        notes.append(PARTIAL_RULE)
    if (sub["origin"] != PAPER).any():
        notes.append(SCORED_BY_NOTE)
    if has_mos:
        notes.append(MOS_NOTE)
    if seeded:
        notes.append(markdown_text(SEED_NOTE))
    if collapsed_mos:
        from ..statistics.verdicts import COLLAPSED

        notes.append(f"? on a MOS interval: {COLLAPSED}.")
    if collapsed_people:
        from ..statistics.verdicts import COLLAPSED

        notes.append(f"? on a People interval: {COLLAPSED}.")
    notes.extend(markdown_text(n) for n in extra_notes)
    if not rows:
        notes.insert(0, f"No row of Table {table} matches " + (", ".join(f"{c} = {w!r}" for c, w in applied.items())
                                                                 or "the origins shown")
                     + ": set the filter back to All or show more origins.")
    if not any(o != PAPER for o in every["origin"]):
        task = info["task"]
        how = ((MOS_HOW_SPACE if reveal == SPACE_REVEAL else MOS_HOW_CLI) if int(table) == catalog.task(task).mos_table
               else f"`hugvis evaluate {task} --predictions DIR --model NAME --dataset D --out RESULTS` or the Score tab")
        notes.append(f"No stored result for Table {table} yet: {how}.")
    shown = pd.DataFrame(rows, columns=columns)
    # The row groups travel with the frame: the Space's click-sort keeps rows inside their group.
    shown.attrs["groups"] = [row_group(k[1], k[0], k[3]) for k in order]
    return Board(shown, notes, filters)


def _partial(frame):
    """Per board row: the run misses clips of its grid (paper and MOS rows never do)."""
    import pandas as pd

    if "partial" not in frame.columns:
        return pd.Series(False, index=frame.index)
    return frame["partial"].map(lambda v: v is True or v == 1.0)


def _is_partial(record) -> bool:
    value = record.get("partial") if hasattr(record, "get") else None
    return value is True or value == 1.0


def _clip_label(record) -> str:
    """A stored board row's label in the per-clip rows (emotion: ``model | setting``)."""
    return f"{record['model']}{EMOTION_MODEL_SEP}{record['input_setting']}" if record["input_setting"] else record["model"]


def _has_evidence(evidence, task: str, key: str) -> bool:
    """Whether the per-clip rows hold the column's values (a set-level metric such as FID has none)."""
    if evidence is None or (key in catalog.METRIC_NAMES and catalog.spec(key).mode == catalog.SET_LEVEL):
        return False
    return len(evidence.values(task, key).systems) > 0


def _stored_label(model: str, origin: str, paper_names: "set[str]") -> str:
    """A stored row's printed name: the run's folder name, the reserved rows' labels, and the origin
    beside a name that is also a paper system's, so the two rows can never be taken for one."""
    if model in RESERVED_LABELS:
        return RESERVED_LABELS[model]
    return f"{model} ({ORIGIN_LABELS[origin]})" if model.casefold() in paper_names else model


def _scored_by(record) -> str:
    """Who computed a row: the paper, the leaderboard's own scorer (verified), the submitter
    (self-reported), or raters."""
    if record is None:
        return ""
    value = record.get("scored_by") if hasattr(record, "get") else None
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _count(value) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(int(value))

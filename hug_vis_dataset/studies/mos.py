"""Subjective study: criterion-specific MOS, intervals, inter-rater agreement, invalid ratings.

Ratings CSV columns: ``rater, clip_id, model, criterion, score`` (score an integer 1..5).
Criteria of the paper (section 4.2): ``id_similarity``, ``emotion_naturalness``, ``lip_sync``
(audio-driven) or ``motion_naturalness`` (vision-driven) for video generation; ``id_similarity``
and ``emotion_naturalness`` for voice cloning.

Protocol:

* **MOS** of a (model, criterion): ratings are averaged within each clip (over raters), then the
  clip means are averaged over clips, so a clip rated by more raters does not weigh more.
* **Interval**: 95% percentile bootstrap clustered by actor, from per-actor sums
  (:func:`hug_vis_dataset.statistics.intervals.mean_intervals`).
* **Agreement**: Krippendorff's alpha per criterion, units = (clip, model) pairs, values = the
  raters' scores, with the interval (default) or ordinal distance metric.
* **Invalid ratings** (score not an integer in 1..5, unknown criterion, bad clip id, empty
  rater/model, the same rater rating the same (clip, model, criterion) twice) are excluded and
  reported with their line and reason, never dropped silently. For duplicates every copy is
  excluded: which one the rater meant is unknown.

Example:
    >>> import pandas as pd
    >>> r = pd.DataFrame({"rater": ["a", "b", "a"], "clip_id": ["actor_0001_happy_action_01_script_001"] * 2
    ...                   + ["actor_0001_sad_action_01_script_001"], "model": "m",
    ...                   "criterion": "lip_sync", "score": [4, 5, 2]})
    >>> float(mos_table(r).loc[("m", "lip_sync"), "mos"])   # clip means 4.5 and 2 -> 3.25
    3.25
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ..catalog import MOS_CRITERIA
from ..errors import HugvisError
from ..presentation.escaping import one_line
from ..readers.values import decimal_number
from ..presentation.skipped_lines import SHOWN_LINES, listed
from ..statistics.basics import format_interval

#: The criteria and their labels: the catalog's (one spelling).
CRITERIA: dict[str, str] = MOS_CRITERIA
# The paper's criteria per task, in its column order (Tables 6, 8, 10). The Space's rating
# form and this module share this table, so stored ratings always aggregate here.
TASK_CRITERIA: dict[str, tuple[str, ...]] = {
    "audio_driven": ("id_similarity", "emotion_naturalness", "lip_sync"),
    "vision_driven": ("id_similarity", "emotion_naturalness", "motion_naturalness"),
    "voice_cloning": ("id_similarity", "emotion_naturalness"),
}
RATING_COLUMNS = ("rater", "clip_id", "model", "criterion", "score")
# The automatic metric(s) each criterion is compared with in the joint view (per task); Distill-MOS,
# beyond the paper, is a second naturalness predictor beside UTMOS.
MATCHING_METRIC: dict[str, dict[str, "str | tuple[str, ...]"]] = {
    "audio_driven": {"id_similarity": "csim", "lip_sync": "sync_c"},
    "vision_driven": {"id_similarity": "csim", "motion_naturalness": "lpips"},
    "voice_cloning": {"id_similarity": "speaker_similarity", "emotion_naturalness": ("utmos", "distill_mos")},
}


def matching_pairs(task: str, mapping: "dict[str, str | tuple[str, ...]] | None" = None) -> list[tuple[str, str]]:
    """``(criterion, metric)`` pairs of the joint view, in mapping order (:data:`MATCHING_METRIC`).

    Example:
        >>> matching_pairs("voice_cloning")
        [('id_similarity', 'speaker_similarity'), ('emotion_naturalness', 'utmos'), ('emotion_naturalness', 'distill_mos')]
    """
    chosen = mapping if mapping is not None else MATCHING_METRIC.get(task, {})
    return [(criterion, metric) for criterion, metrics in chosen.items()
            for metric in ((metrics,) if isinstance(metrics, str) else metrics)]


# ----------------------------------------------------------------------------- reading
class RatingsFileError(HugvisError, ValueError):
    """A ratings CSV cannot be read at all (missing, empty, wrong separator, missing columns)."""


def validate_ratings(frame) -> "tuple[object, object]":
    """Split ratings into (valid, invalid); ``invalid`` has ``line`` and ``reason`` columns.

    ``line`` is the CSV line number (header = line 1).

    Example:
        >>> import pandas as pd
        >>> f = pd.DataFrame({"rater": ["a", "a"], "clip_id": ["actor_0001_sad_action_01_script_001", "x"],
        ...                   "model": ["m", "m"], "criterion": ["lip_sync", "lip_sync"], "score": ["6", "3"]})
        >>> sorted(validate_ratings(f)[1]["reason"])
        ['bad clip id', 'score 6 is not an integer in 1..5']
    """
    import pandas as pd

    from ..datamodel.grid import ClipId, ClipIdError

    missing = [c for c in RATING_COLUMNS if c not in frame.columns]
    if missing:
        raise RatingsFileError(f"ratings lack columns {missing}; expected {list(RATING_COLUMNS)}")
    lines = frame.attrs.get("lines")  # read_ratings' CSV lines (blank lines and quoted line breaks counted)
    frame = frame.reset_index(drop=True).copy()
    frame.attrs = {}  # read once here: pandas would copy the line list into every frame derived from this one
    frame["line"] = lines if lines is not None and len(lines) == len(frame) else np.arange(len(frame)) + 2
    # Each check on the distinct values of its column (a study's tens of thousands of ratings hold a few hundred),
    # then the first failing check of each rating, in this order, is its reason.
    raw = frame["score"].astype(str).str.strip()
    parsed = {}
    for text in raw.unique():  # ASCII digits only: float() also reads "\u0664" and "0_4" as 4
        number = decimal_number(text)
        parsed[text] = np.nan if number is None else number
    value = raw.map(parsed).to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore"):
        bad_score = ~(np.isfinite(value) & (value == np.floor(value)) & (value >= 1) & (value <= 5))
    criterion = frame["criterion"].astype(str)
    bad_criterion = ~criterion.str.strip().isin(list(CRITERIA)).to_numpy()

    def empty(column: str) -> np.ndarray:
        text = frame[column].astype(str)
        return ((text.str.strip() == "") | (text == "nan")).to_numpy()

    canonical = {}
    for clip in frame["clip_id"].astype(str).unique():
        try:
            canonical[clip] = str(ClipId.parse(clip))
        except ClipIdError:
            canonical[clip] = None
    clip_text = frame["clip_id"].astype(str)
    bad_clip = clip_text.map(canonical).isna().to_numpy()
    reasons = np.select(
        [bad_score, bad_criterion, empty("rater"), empty("model"), bad_clip],
        [("score " + raw.where(raw != "", "(empty)") + " is not an integer in 1..5").to_numpy(dtype=object),
         np.array([f"unknown criterion {c!r}" for c in frame["criterion"]], dtype=object) if bad_criterion.any()
         else np.full(len(frame), "", dtype=object),
         "empty rater", "empty model", "bad clip id"], default="")
    frame["score"] = value
    frame["reason"] = reasons
    for column in ("rater", "model", "criterion"):
        frame[column] = frame[column].astype(str).str.strip()
    ok = frame["reason"] == ""
    frame.loc[ok, "clip_id"] = clip_text[ok].map(canonical)
    key = ["rater", "clip_id", "model", "criterion"]
    dup = pd.Series(False, index=frame.index)
    dup[ok] = frame.loc[ok].duplicated(subset=key, keep=False)
    frame.loc[dup, "reason"] = "duplicate rating (same rater, clip, model, criterion)"
    valid = frame[frame["reason"] == ""].drop(columns=["reason"]).reset_index(drop=True)
    valid["score"] = valid["score"].astype(int)
    actors = {c: ClipId.parse(c).actor_id for c in valid["clip_id"].unique()}  # one parse per distinct clip
    valid["actor_id"] = valid["clip_id"].map(actors)
    invalid = frame[frame["reason"] != ""][["line", *RATING_COLUMNS, "reason"]].reset_index(drop=True)
    return valid, pd.DataFrame(invalid)


def read_ratings(path: "str | Path"):
    """Read a ratings CSV (all columns as text) and validate it; returns (valid, invalid).

    The file must be UTF-8 (BOM accepted), comma-separated, with a header naming
    :data:`RATING_COLUMNS` and at least one rating. A file read before in this process, unchanged since (same size,
    modification time and inode), is not read again (a report reads one ratings file for several blocks): copies of
    the first reading are returned.

    Raises:
        RatingsFileError: missing or empty file, header only, ``;``/tab separators, missing
            columns, unparsable CSV; the message names the file and the fix.
    """
    path = Path(path)
    if not path.is_file():
        raise RatingsFileError(f"ratings CSV {path} does not exist")
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino)
    if _READ.get("key") != key:
        _READ.clear()
        _READ.update(key=key, result=_read_ratings(path))
    valid, invalid = _READ["result"]
    return valid.copy(), invalid.copy()


#: The last ratings file read (its signature and what it held).
_READ: dict = {}


def _read_ratings(path: Path):
    from ..readers import InputFileError
    from ..readers.csv_files import read_csv_table

    header = ",".join(RATING_COLUMNS)
    try:  # the one CSV reader: a ragged row, an open quote, a cut last line name their line
        table = read_csv_table(path, RATING_COLUMNS, extra="keep")
    except InputFileError as err:
        raise RatingsFileError(_ratings_file_problem(err, header)) from None
    if not table.rows:
        raise RatingsFileError(f"{path} has a header but no ratings; add one rating per line")
    frame = table.frame()
    frame.attrs["lines"] = table.lines
    return validate_ratings(frame)


def ratings_frames(ratings, where: str = "ratings rows"):
    """The one reader of human ratings behind every door: a ratings CSV (:func:`read_ratings`) or its rows (a
    DataFrame, a list of records, a mapping of columns), checked by the same :func:`validate_ratings`; returns
    ``(valid, invalid)``.

    Rows are read as a file's cells are: each value as the text it is (a score ``4``, ``4.0`` or ``"4"`` is 4;
    ``"four"``, ``7``, ``None`` or NaN is refused with its reason), so rows and files give the same ratings.
    Rows have no file to list their bad lines in: an invalid row is refused in one line naming the first
    ones (``row N``, 1-based) and how many, where a file's are returned for its reader to list.

    Example:
        >>> clip = "actor_0001_happy_action_01_script_001"
        >>> valid, _ = ratings_frames([{"rater": "a", "clip_id": clip, "model": " m ", "criterion": "lip_sync",
        ...                              "score": 4.0}])
        >>> valid[["model", "score"]].values.tolist()
        [['m', 4]]
        >>> try:
        ...     ratings_frames({"rater": ["a"], "clip_id": [clip], "model": ["m"], "criterion": ["lip_sync"],
        ...                     "score": ["four"]})
        ... except RatingsFileError as err:
        ...     print(err)
        ratings rows: 1 of 1 rows are not valid ratings (row 1: score four is not an integer in 1..5); fix or drop them

    Raises:
        RatingsFileError: the file cannot be read, the rows lack a column, or a row is invalid.
    """
    import pandas as pd

    if isinstance(ratings, (str, Path)):
        return read_ratings(ratings)
    frame = ratings.copy() if isinstance(ratings, pd.DataFrame) else pd.DataFrame(ratings)
    missing = [c for c in RATING_COLUMNS if c not in frame.columns]
    if missing:
        raise RatingsFileError(f"{where} lack columns {missing}; pass {', '.join(RATING_COLUMNS)}")
    frame = frame.reset_index(drop=True)
    for column in RATING_COLUMNS:  # a cell's text, as a CSV holds it: None and NaN are empty cells
        frame[column] = _cells(frame[column])
    frame.attrs["lines"] = list(range(1, len(frame) + 1))
    valid, invalid = validate_ratings(frame)
    if len(invalid):
        named = "; ".join(f"row {int(line)}: {reason}" for line, reason in
                          zip(invalid["line"].head(3), invalid["reason"].head(3)))
        raise RatingsFileError(f"{where}: {len(invalid)} of {len(frame)} rows are not valid ratings ({named}); "
                               "fix or drop them")
    return valid, invalid


def _cells(column) -> "np.ndarray":
    """Each value's text (:func:`_cell`), read once per distinct value of a typed column (a study's rows hold a few
    hundred); an object column (Python values of any type: ``True`` and ``1`` are equal keys but different cells)
    is read value by value."""
    import pandas as pd

    if column.dtype == object:
        return np.array([_cell(value) for value in column], dtype=object)
    codes, uniques = pd.factorize(column, use_na_sentinel=True)  # missing values: code -1, the empty cell
    texts = np.array([_cell(value) for value in uniques] + [""], dtype=object)
    return texts[codes]


def _cell(value) -> str:
    import pandas as pd

    try:
        empty = value is None or (not isinstance(value, str) and bool(pd.isna(value)))
    except (TypeError, ValueError):  # a list or an array in a cell: its text, refused as a score or a name
        empty = False
    return "" if empty else str(value)


def _ratings_file_problem(err, header: str) -> str:
    """The reader's error in the words ``hugvis mos`` has always used (``... is empty``, ``... is not a
    readable CSV (line 5: ...)``), naming the file, the line and the fix."""
    header_line = err.where == "line 1" or err.where.startswith("line 1,")
    if err.where and not header_line:  # a row, not the header: the CSV is malformed
        return f"{err.path} is not a readable CSV ({err.where}: {err.problem}); {err.fix}"
    place = f"{err.path}: {err.where}:" if err.where else f"{err.path}:" if err.problem.startswith("line ") \
        else err.path
    fix = f"it needs the header {header} and one rating per line" if err.problem == "is empty" else err.fix
    return f"{place} {err.problem}; {fix}" if fix else f"{place} {err.problem}"


# ----------------------------------------------------------------------------- MOS
def clip_means(valid):
    """Mean score per (model, criterion, clip) over raters."""
    if "actor_id" not in valid.columns:
        from ..datamodel.grid import ClipId

        valid = valid.assign(actor_id=valid["clip_id"].map(lambda c: ClipId.parse(c).actor_id))
    return valid.groupby(["model", "criterion", "clip_id", "actor_id"], sort=True)["score"].mean().reset_index()


def mos_table(valid):
    """MOS per (model, criterion): mean over clips of the per-clip mean over raters.

    Columns: ``mos``, ``n_clips``, ``n_ratings``.
    """
    per_clip = clip_means(valid)
    table = per_clip.groupby(["model", "criterion"], sort=True).agg(mos=("score", "mean"),
                                                                     n_clips=("clip_id", "nunique"))
    table["n_ratings"] = valid.groupby(["model", "criterion"], sort=True).size()
    return table


def mos_intervals(valid, n_boot: int = 1000, level: float = 0.95, seed: int = 0) -> dict:
    """Actor-clustered bootstrap interval of every (model, criterion) MOS: the mean over clips of the per-clip means,
    from per-actor sums (:func:`hug_vis_dataset.statistics.intervals.mean_intervals`; the clusters are every actor
    of the ratings given, as the generic path draws them)."""
    from ..statistics.intervals import mean_intervals

    per_clip = clip_means(valid)
    return mean_intervals(per_clip[["model", "criterion"]], per_clip["actor_id"].to_numpy(), per_clip["score"].to_numpy(float),
                          n_boot, level, seed)


# ----------------------------------------------------------------------------- agreement
def krippendorff_alpha(units: "Sequence[Sequence[float]]", level: str = "interval") -> float:
    """Krippendorff's alpha from the values each unit received (missing values simply absent).

    Coincidence-matrix form: units with fewer than two values are not pairable and are ignored;
    ``alpha = 1 - (n - 1) * sum_ck o_ck d_ck / sum_ck n_c n_k d_ck`` with ``n`` the pairable
    values. Distances: ``interval`` (c - k)^2; ``ordinal`` (sum of n_g for g between c and k,
    minus (n_c + n_k) / 2) squared; ``nominal`` 0/1.

    Returns NaN when there is no disagreement to expect (a single value observed).

    Example (Krippendorff 2011, "Computing Krippendorff's alpha-reliability", 4 coders x 12 units):
        >>> data = [[1, 1, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2], [1, 2, 3, 4],
        ...         [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [5, 5, 5], [1, 1], [3]]
        >>> round(krippendorff_alpha(data, "nominal"), 3), round(krippendorff_alpha(data, "ordinal"), 3)
        (0.743, 0.815)
        >>> round(krippendorff_alpha(data, "interval"), 3)
        0.849
    """
    if level not in ("interval", "ordinal", "nominal"):
        raise ValueError(f"level must be interval, ordinal or nominal, got {level!r}")
    pairable = [np.asarray(u, dtype=np.float64) for u in units if len(u) >= 2]
    if any(not np.isfinite(u).all() for u in pairable):
        raise ValueError("ratings must be finite numbers")
    if not pairable:
        return float("nan")
    lengths = np.array([u.size for u in pairable])
    return _alpha_of_values(np.repeat(np.arange(len(pairable)), lengths), np.concatenate(pairable), level)


def _alpha_of_values(unit: np.ndarray, value: np.ndarray, level: str) -> float:
    """Krippendorff's alpha of values tagged with their unit (every unit pairable), the coincidence matrix built
    from per-unit value counts in one pass: ``o = sum_u (c_u c_u^T - diag(c_u)) / (n_u - 1)``."""
    values, code = np.unique(value, return_inverse=True)
    units, unit_code = np.unique(unit, return_inverse=True)
    counts = np.zeros((len(units), len(values)))
    np.add.at(counts, (unit_code, code), 1.0)
    n_u = counts.sum(axis=1)
    w = 1.0 / (n_u - 1.0)
    o = (counts * w[:, None]).T @ counts - np.diag((counts * w[:, None]).sum(axis=0))
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        d = 1.0 - np.eye(len(values))
    elif level == "interval":
        d = (values[:, None] - values[None, :]) ** 2
    else:
        cum = np.cumsum(n_c)
        d = np.zeros((len(values), len(values)))
        for c in range(len(values)):
            for k in range(c + 1, len(values)):
                d[c, k] = d[k, c] = (cum[k] - cum[c] + n_c[c] - (n_c[c] + n_c[k]) / 2.0) ** 2
    expected = (np.outer(n_c, n_c) * d).sum()
    if expected == 0:
        return float("nan")
    return float(1.0 - (n - 1) * (o * d).sum() / expected)


def agreement(valid, level: str = "interval") -> dict[str, dict]:
    """Krippendorff's alpha per criterion over (clip, model) units (units with one rating are not pairable)."""
    import pandas as pd

    out = {}
    for criterion, group in valid.groupby("criterion", sort=True):
        unit = pd.MultiIndex.from_arrays([group["clip_id"], group["model"]]).factorize()[0]
        sizes = np.bincount(unit)
        pairable = sizes[unit] >= 2
        scores = group["score"].to_numpy(dtype=np.float64)
        alpha = _alpha_of_values(unit[pairable], scores[pairable], level) if pairable.any() else float("nan")
        out[criterion] = {"alpha": alpha, "level": level, "units": int(len(sizes)),
                          "pairable_units": int((sizes >= 2).sum()), "raters": int(group["rater"].nunique())}
    return out


# ----------------------------------------------------------------------------- joint view
def mos_metric_agreement(mos, auto, task: str, mapping: "dict[str, str] | None" = None) -> list[dict]:
    """Spearman rank correlation, per criterion, between model MOS and the matching automatic metric.

    Args:
        mos: :func:`mos_table` output (index model, criterion).
        auto: model x metric table (paper units) of the task.
        task: picks the default criterion -> metric mapping (:data:`MATCHING_METRIC`).
        mapping: override of that mapping (a criterion may name several metrics).

    Lower-is-better metrics are negated first, so a positive rho always means agreement. Also
    reports whether both name the same best model (the paper: they agree in trend, not at the top).
    """
    from .. import catalog
    from ..statistics.basics import spearman

    rows = []
    for criterion, metric in matching_pairs(task, mapping or None):
        if metric not in getattr(auto, "columns", ()):
            continue
        sub = mos.xs(criterion, level="criterion")["mos"] if criterion in mos.index.get_level_values(1) else None
        if sub is None:
            continue
        models = sorted(set(sub.index) & set(auto.index))
        if len(models) < 2:
            continue
        sign = 1.0 if catalog.spec(metric).higher_is_better else -1.0
        m = np.array([sub[x] for x in models])
        a = np.array([sign * float(auto.loc[x, metric]) for x in models])
        rows.append({"task": task, "criterion": criterion, "metric": metric, "models": len(models),
                     "spearman": spearman(m, a), "best_by_mos": models[int(np.argmax(m))],
                     "best_by_metric": models[int(np.argmax(a))]})
    return rows


# ----------------------------------------------------------------------------- report
@dataclass
class MOSReport:
    """Everything ``hugvis mos`` prints and saves."""

    table: object  # DataFrame index (model, criterion): mos, n_clips, n_ratings, ci_low, ci_high
    agreement: dict
    invalid: object  # DataFrame of invalid ratings with line and reason
    n_valid: int
    extra: dict = field(default_factory=dict)
    source: str = ""  # the ratings CSV the invalid lines are in ("" for a frame)

    @property
    def invalid_count(self) -> int:
        return len(self.invalid)

    def invalid_summary(self) -> dict[str, int]:
        reasons = self.invalid["reason"].str.replace(r"score .* is not", "score is not", regex=True)
        return {k: int(v) for k, v in reasons.value_counts().sort_index().items()}

    def to_text(self) -> str:
        lines = [f"{self.n_valid} valid ratings, {self.invalid_count} invalid"]
        for reason, count in self.invalid_summary().items():
            lines.append(f"  invalid: {count} x {reason}")
        # Named where they are read: file:line: reason, bounded (--out writes them all to invalid_ratings.csv).
        lines += [f"  {one_line(line)}" for line in listed(invalid_lines(self.invalid, self.source),
                                                            self.invalid_count)]
        wide = self.table["mos"].unstack("criterion")
        lines += ["", "MOS (ratings averaged within each clip, then over clips):",
                  wide.to_string(float_format=lambda v: f"{v:.2f}")]
        lines += ["", "95% actor-clustered bootstrap intervals:"]
        for (model, criterion), row in self.table.iterrows():
            actors = int(row["n_actors"]) if "n_actors" in row else 2
            interval = format_interval(row["mos"], row["ci_low"], row["ci_high"], actors)
            lines.append(f"  {model:>20s} {criterion:<20s} {interval}"
                         f"  ({int(row['n_clips'])} clips, {int(row['n_ratings'])} ratings)")
        lines += ["", "Inter-rater agreement (Krippendorff's alpha, interval):"]
        for criterion, a in self.agreement.items():
            lines.append(f"  {criterion:<20s} alpha = {a['alpha']:.3f} ({a['pairable_units']} pairable units, "
                         f"{a['raters']} raters)")
        return "\n".join(lines)

    def save(self, out: "str | Path", inputs: "Sequence[tuple[str, str | Path]]" = (),
             into_existing: bool = False) -> None:
        """Write ``mos.csv``, ``invalid_ratings.csv`` and ``mos.json`` into ``out``, the command's one output
        (outside ``inputs``; an earlier ``hugvis mos`` output's files are replaced, nothing else:
        :func:`hug_vis_dataset.outputs.claim`)."""
        from ..outputs import claim

        output = claim("hugvis mos", out, "mos", inputs=inputs, into_existing=into_existing)
        with output.staged() as stage:
            self.table.to_csv(stage / "mos.csv")
            self.invalid.to_csv(stage / "invalid_ratings.csv", index=False)
            (stage / "mos.json").write_text(json.dumps({
                "n_valid": self.n_valid, "invalid": self.invalid_summary(), "agreement": self.agreement,
                "mos": [{"model": m, "criterion": c, **{k: float(v) for k, v in r.items()}}
                        for (m, c), r in self.table.iterrows()],
            }, indent=2))


def mos_report(ratings: "str | Path | object", n_boot: int = 1000, seed: int = 0, level: str = "interval") -> MOSReport:
    """Validate ratings, compute MOS with intervals and agreement."""
    source = str(ratings) if isinstance(ratings, (str, Path)) else ""
    if source:
        valid, invalid = read_ratings(ratings)
    else:
        valid, invalid = validate_ratings(ratings)
    if valid.empty:
        where = f"{ratings}: " if source else ""
        named = "; ".join(one_line(line) for line in listed(invalid_lines(invalid, source), len(invalid), limit=3))
        raise RatingsFileError(f"{where}no valid ratings ({len(invalid)} invalid: {named}); fix those lines (hugvis "
                               f"mos --out DIR lists them all in invalid_ratings.csv)")
    table = mos_table(valid)
    cis = mos_intervals(valid, n_boot=n_boot, seed=seed)
    table["ci_low"] = [cis[k].low for k in table.index]
    table["ci_high"] = [cis[k].high for k in table.index]
    table["n_actors"] = [cis[k].n_clusters for k in table.index]
    return MOSReport(table, agreement(valid, level), invalid, len(valid), source=source)


def invalid_lines(invalid, source: str = "", limit: int = SHOWN_LINES) -> list[str]:
    """The first ``limit`` invalid ratings as ``"<file>:<line>: <reason>"`` (``line <n>: ...`` without a file).

    Example:
        >>> import pandas as pd
        >>> invalid_lines(pd.DataFrame({"line": [3, 7], "reason": ["empty rater", "bad clip id"]}), "r.csv")
        ['r.csv:3: empty rater', 'r.csv:7: bad clip id']
    """
    head = invalid.head(limit)
    where = f"{source}:" if source else "line "
    return [f"{where}{int(line)}: {reason}" for line, reason in zip(head["line"], head["reason"])]

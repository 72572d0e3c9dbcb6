"""Subjective study: criterion-specific MOS, intervals, inter-rater agreement, invalid ratings.

Ratings CSV columns: ``rater, clip_id, model, criterion, score`` (score an integer 1..5).
Criteria of the paper (section 4.2): ``id_similarity``, ``emotion_naturalness``, ``lip_sync``
(audio-driven) or ``motion_naturalness`` (vision-driven) for video generation; ``id_similarity``
and ``emotion_naturalness`` for voice cloning.

Protocol:

* **MOS** of a (model, criterion): ratings are averaged within each clip (over raters), then the
  clip means are averaged over clips, so a clip rated by more raters does not weigh more.
* **Interval**: 95% percentile bootstrap clustered by actor (:func:`hug_vis_dataset.stats.bootstrap_ci`).
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

from ..errors import HugvisError
from ..escaping import one_line
from ..readers.values import decimal_number
from ..skipped_lines import SHOWN_LINES, listed
from ..stats import format_interval

CRITERIA: dict[str, str] = {
    "id_similarity": "ID Similarity",
    "emotion_naturalness": "Emotion Naturalness",
    "lip_sync": "Lip Synchronization",
    "motion_naturalness": "Motion Naturalness",
}
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

    from ..grid import ClipId, ClipIdError

    missing = [c for c in RATING_COLUMNS if c not in frame.columns]
    if missing:
        raise RatingsFileError(f"ratings lack columns {missing}; expected {list(RATING_COLUMNS)}")
    lines = frame.attrs.get("lines")  # read_ratings' CSV lines (blank lines and quoted line breaks counted)
    frame = frame.reset_index(drop=True).copy()
    frame["line"] = lines if lines is not None and len(lines) == len(frame) else np.arange(len(frame)) + 2
    reasons: list[str] = []
    scores: list[float] = []
    for row in frame.itertuples(index=False):
        reason = ""
        raw = str(row.score).strip()
        number = decimal_number(raw)  # ASCII digits only: float() also reads "\u0664" and "0_4" as 4
        value = np.nan if number is None else number
        if not (np.isfinite(value) and value == int(value) and 1 <= value <= 5):
            reason = f"score {raw or '(empty)'} is not an integer in 1..5"
        elif str(row.criterion).strip() not in CRITERIA:
            reason = f"unknown criterion {row.criterion!r}"
        elif not str(row.rater).strip() or str(row.rater) == "nan":
            reason = "empty rater"
        elif not str(row.model).strip() or str(row.model) == "nan":
            reason = "empty model"
        else:
            try:
                ClipId.parse(str(row.clip_id))
            except ClipIdError:
                reason = "bad clip id"
        reasons.append(reason)
        scores.append(value)
    frame["score"] = scores
    frame["reason"] = reasons
    for column in ("rater", "model", "criterion"):
        frame[column] = frame[column].astype(str).str.strip()
    ok = frame["reason"] == ""
    canon = frame.loc[ok, "clip_id"].map(lambda c: str(ClipId.parse(str(c))))
    frame.loc[ok, "clip_id"] = canon
    key = ["rater", "clip_id", "model", "criterion"]
    dup = pd.Series(False, index=frame.index)
    dup[ok] = frame.loc[ok].duplicated(subset=key, keep=False)
    frame.loc[dup, "reason"] = "duplicate rating (same rater, clip, model, criterion)"
    valid = frame[frame["reason"] == ""].drop(columns=["reason"]).reset_index(drop=True)
    valid["score"] = valid["score"].astype(int)
    valid["actor_id"] = valid["clip_id"].map(lambda c: ClipId.parse(c).actor_id)
    invalid = frame[frame["reason"] != ""][["line", *RATING_COLUMNS, "reason"]].reset_index(drop=True)
    return valid, pd.DataFrame(invalid)


def read_ratings(path: "str | Path"):
    """Read a ratings CSV (all columns as text) and validate it; returns (valid, invalid).

    The file must be UTF-8 (BOM accepted), comma-separated, with a header naming
    :data:`RATING_COLUMNS` and at least one rating.

    Raises:
        RatingsFileError: missing or empty file, header only, ``;``/tab separators, missing
            columns, unparsable CSV; the message names the file and the fix.
    """
    from ..readers import InputFileError
    from ..readers.csv_files import read_csv_table

    path = Path(path)
    if not path.is_file():
        raise RatingsFileError(f"ratings CSV {path} does not exist")
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
        frame[column] = [_cell(value) for value in frame[column]]
    frame.attrs["lines"] = list(range(1, len(frame) + 1))
    valid, invalid = validate_ratings(frame)
    if len(invalid):
        named = "; ".join(f"row {int(line)}: {reason}" for line, reason in
                          zip(invalid["line"].head(3), invalid["reason"].head(3)))
        raise RatingsFileError(f"{where}: {len(invalid)} of {len(frame)} rows are not valid ratings ({named}); "
                               "fix or drop them")
    return valid, invalid


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
        from ..grid import ClipId

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
    """Actor-clustered bootstrap interval of every (model, criterion) MOS."""
    from ..stats import bootstrap_ci

    per_clip = clip_means(valid)

    def statistic(frame):
        return frame.groupby(["model", "criterion"], sort=True)["score"].mean()

    return bootstrap_ci(per_clip, statistic, cluster="actor_id", n_boot=n_boot, level=level, seed=seed)


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
    values = np.unique(np.concatenate(pairable))
    pos = {v: i for i, v in enumerate(values)}
    o = np.zeros((len(values), len(values)))
    for u in pairable:
        counts = np.zeros(len(values))
        for v in u:
            counts[pos[v]] += 1
        o += (np.outer(counts, counts) - np.diag(counts)) / (len(u) - 1)
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
    """Krippendorff's alpha per criterion over (clip, model) units."""
    out = {}
    for criterion, group in valid.groupby("criterion", sort=True):
        units = [g["score"].tolist() for _, g in group.groupby(["clip_id", "model"], sort=True)]
        out[criterion] = {"alpha": krippendorff_alpha(units, level), "level": level,
                          "units": len(units), "pairable_units": sum(1 for u in units if len(u) >= 2),
                          "raters": int(group["rater"].nunique())}
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
    from ..stats import spearman

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

"""The engine's sufficient statistics: per-clip values arranged once, per-actor sums read off them.

Every interval, test and verdict of the toolkit is a function of per-actor sums: a mean over clips is ``sum of the
actors' sums / sum of their counts``, a replicate of the actor bootstrap weights the actors
(:mod:`hug_vis_dataset.statistics.draws`), a sign-flip test flips them. So the stored rows are arranged once:

* :class:`ClipValues`: one measure (a metric of a task, a MOS criterion) of several systems, a ``(systems, clips)``
  matrix with the actor of each clip (NaN where a system has no counted value of that clip: missing or failed);
* :class:`FrameSums`: the per-frame rows of the ``rvm`` protocol reduced to per-actor sums and counts by frame
  index (dtSSD with RVM's 0 at frame 0 of every clip), all that protocol's table and intervals need; a run's
  millions of per-frame rows are never kept.

Both are built with vectorised numpy (codes, ``bincount``), never a Python loop over rows or clips.

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"model": ["a", "a", "b", "b"], "value": [1.0, 3.0, 2.0, 2.0],
    ...                      "clip_id": ["actor_0001_sad_action_01_script_001", "actor_0002_sad_action_01_script_001"] * 2})
    >>> v = ClipValues.from_rows(rows)
    >>> v.systems, v.actors.tolist(), v.values.tolist()
    (('a', 'b'), [1, 2], [[1.0, 3.0], [2.0, 2.0]])
    >>> sums, counts = v.actor_sums()
    >>> sums.tolist(), counts.tolist()
    ([[1.0, 3.0], [2.0, 2.0]], [[1.0, 1.0], [1.0, 1.0]])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from ..datamodel.results import SAMPLE_COLUMN
from .basics import actor_of_clip


def text_codes(series, sort: bool = False) -> tuple[np.ndarray, list[str]]:
    """``(codes, names)`` of a text column without writing one string per row (a category column keeps its codes;
    an Arrow string column is dictionary-encoded); a missing value gets code -1.

    Example:
        >>> import pandas as pd
        >>> codes, names = text_codes(pd.Series(["b", "a", "b"], dtype="category"), sort=True)
        >>> codes.tolist(), names
        ([1, 0, 1], ['a', 'b'])
    """
    import pandas as pd

    codes, uniques = pd.factorize(series, sort=sort)
    return np.asarray(codes), [str(u) for u in uniques]


def text_test(series, predicate) -> np.ndarray:
    """``predicate(text)`` of every row, evaluated once per distinct value (a missing value reads as ``""``).

    Example:
        >>> import pandas as pd
        >>> text_test(pd.Series(["missing x", None, "ok"]), lambda t: t.startswith("missing")).tolist()
        [True, False, False]
    """
    codes, names = text_codes(series)
    answers = np.array([bool(predicate(n)) for n in names] + [bool(predicate(""))], dtype=bool)
    return answers[codes]  # code -1 (missing) reads the last answer


class EvidenceError(ValueError):
    """Rows the engine cannot arrange (a column missing, a clip given twice for one system)."""


def _actor_ids(frame) -> np.ndarray:
    """The actor of every row: its ``actor_id`` where every row has one, else read from the clip id."""
    if "actor_id" in frame.columns and not frame["actor_id"].isna().any():
        return frame["actor_id"].to_numpy(dtype=np.int64)
    import pandas as pd

    codes, uniques = text_codes(frame["clip_id"])
    return np.array([actor_of_clip(c) for c in uniques], dtype=np.int64)[codes] if len(uniques) else np.zeros(0, np.int64)


@dataclass(frozen=True)
class ClipValues:
    """One measure of several systems over clips: ``values[s, c]`` (NaN: no counted value).

    Attributes:
        systems: the systems (row labels, e.g. ``model`` or ``model | setting``), sorted.
        clips: the clip ids, sorted.
        clip_actors: the actor id of each clip.
        values: ``(len(systems), len(clips))`` float64.
    """

    systems: tuple[str, ...]
    clips: tuple[str, ...]
    clip_actors: np.ndarray
    values: np.ndarray

    @classmethod
    def from_rows(cls, rows, series: str = "model", value: str = "value", systems: "Sequence[str] | None" = None
                  ) -> "ClipValues":
        """Arrange long rows of ONE measure (``series``, ``clip_id``, ``value``; ``status`` and ``actor_id`` when
        present): rows whose status is not ``ok`` or whose value is not finite leave their cell NaN.

        Raises:
            EvidenceError: a column is missing or a (system, clip) is given twice.
        """
        import pandas as pd

        frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
        missing = [c for c in (series, "clip_id", value) if c not in frame.columns]
        if missing:
            raise EvidenceError(f"rows lack columns {missing}; expected {series}, clip_id, {value}[, actor_id, status]")
        if "status" in frame.columns:
            frame = frame[text_test(frame["status"], lambda t: t in ("ok", ""))]
        vals = pd.to_numeric(frame[value], errors="coerce").to_numpy(dtype=np.float64)
        finite = np.isfinite(vals)
        frame, vals = frame[finite], vals[finite]
        s_codes, names = text_codes(frame[series], sort=True)
        c_codes, c_names = text_codes(frame["clip_id"], sort=True)
        if systems is not None:  # a fixed system order (systems without a value keep a NaN row)
            position = {s: i for i, s in enumerate(systems)}
            unknown = [s for s in names if s not in position]
            if unknown:
                raise EvidenceError(f"rows name systems {unknown} outside {list(systems)}")
            s_codes = np.array([position[s] for s in names], dtype=np.int64)[s_codes] if len(names) else s_codes
            names = list(systems)
        out = np.full((len(names), len(c_names)), np.nan)
        if len(vals):
            flat = s_codes.astype(np.int64) * len(c_names) + c_codes
            if len(np.unique(flat)) != len(flat):
                dup = pd.Series(flat).duplicated().to_numpy().argmax()
                raise EvidenceError(f"{series} {frame[series].iloc[dup]!r} has clip {frame['clip_id'].iloc[dup]!r} "
                                    "twice; pass one measure's rows")
            out.reshape(-1)[flat] = vals
        actors = np.zeros(len(c_names), dtype=np.int64)
        if len(c_names):
            actors[c_codes] = _actor_ids(frame)
        return cls(tuple(names), tuple(c_names), actors, out)

    @property
    def actors(self) -> np.ndarray:
        """The actors (sorted ids) of the clips with at least one value."""
        has = np.isfinite(self.values).any(axis=0) if self.values.size else np.zeros(len(self.clips), bool)
        return np.unique(self.clip_actors[has])

    def index(self, system: str) -> int:
        return self.systems.index(system)

    def actor_sums(self, actors: "Sequence[int] | None" = None) -> tuple[np.ndarray, np.ndarray]:
        """``(sums, counts)``, each ``(systems, actors)``: every system's sum and count of values per actor (the
        given actor ids, default :attr:`actors`; an actor without a value of a system has 0 and 0)."""
        actors = self.actors if actors is None else np.asarray(actors, dtype=np.int64)
        position = np.searchsorted(actors, self.clip_actors)
        known = (position < len(actors)) & (actors[np.minimum(position, max(len(actors) - 1, 0))] == self.clip_actors) \
            if len(actors) else np.zeros(len(self.clips), bool)
        sums = np.zeros((len(self.systems), len(actors)))
        counts = np.zeros((len(self.systems), len(actors)))
        for s in range(len(self.systems)):
            row = self.values[s]
            have = np.isfinite(row) & known
            sums[s] = np.bincount(position[have], weights=row[have], minlength=len(actors))
            counts[s] = np.bincount(position[have], minlength=len(actors))
        return sums, counts

    def means(self) -> np.ndarray:
        """Each system's mean over its clips (NaN without one)."""
        with np.errstate(invalid="ignore"):
            return np.nanmean(self.values, axis=1) if self.values.shape[1] else np.full(len(self.systems), np.nan)

    def paired(self, a: str, b: str, scale: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(actor ids, sums, counts)`` of ``scale * (a - b)`` per actor over the clips both systems have (actors
        sorted, each with at least one common clip): the input of
        :func:`hug_vis_dataset.statistics.paired.paired_test_of_sums`."""
        from .paired import positional_sums

        x, y = self.values[self.index(a)], self.values[self.index(b)]
        common = np.isfinite(x) & np.isfinite(y)
        d = scale * (x[common] - y[common])
        actors, position = np.unique(self.clip_actors[common], return_inverse=True)
        sums, counts = positional_sums(d, position, len(actors))
        return actors, sums, counts


@dataclass
class FrameSums:
    """Per-frame rows of the ``rvm`` protocol reduced to per-actor sums and counts by frame index.

    ``parts[(label, metric)] = (actor ids, sums (A, T), counts (A, T))``; dtSSD's arrays start at frame 0 with
    RVM's 0 of every clip, as :func:`hug_vis_dataset.metrics.matting.aggregate` counts it.
    """

    parts: dict = field(default_factory=dict)

    @classmethod
    def from_frames(cls, frames, keep: "Iterable[tuple[str, str]] | None" = None) -> "FrameSums":
        """Reduce per-frame rows (``model``, ``clip_id``, ``metric``, ``frame``, ``value``; ``actor_id`` optional).

        Args:
            keep: the ``(model, clip_id)`` pairs that count (the one rule for partial failures; a MultiIndex or
                pairs); None: every row.
        """
        import pandas as pd

        if frames is None or not len(frames):
            return cls()
        codes = {}
        for column in ("model", "metric", "clip_id"):
            codes[column] = text_codes(frames[column], sort=True)
        sample = frames[SAMPLE_COLUMN].to_numpy(dtype=np.int64) if SAMPLE_COLUMN in frames.columns else None
        return cls.from_codes(codes["model"], codes["metric"], codes["clip_id"],
                              frames["frame"].to_numpy(dtype=np.int64), frames["value"].to_numpy(dtype=np.float64),
                              keep, sample)

    @classmethod
    def from_codes(cls, models, metrics, clips, frame_index: np.ndarray, value: np.ndarray,
                   keep: "Iterable[tuple[str, str]] | None" = None, sample: "np.ndarray | None" = None
                   ) -> "FrameSums":
        """:meth:`from_frames` of per-frame rows given as ``(codes, names)`` per string column (what a dictionary
        encoded Parquet column reads as, with no string hashed per row). ``sample``: each row's sample number, for a
        run of several samples per clip: a clip's value at a frame index is then the mean over its samples
        (:func:`hug_vis_dataset.scoring.aggregate.sample_means`' rule, per frame)."""
        import pandas as pd

        out = cls()
        (m_codes, models), (k_codes, metrics), (c_codes, clips) = models, metrics, clips
        # Codes in the integer width they come in (a dictionary column's int32): no per-row copy.
        m_codes, k_codes, c_codes = (np.asarray(c) for c in (m_codes, k_codes, c_codes))
        models, metrics, clips = ([str(x) for x in names] for names in (models, metrics, clips))
        if sample is not None and len(sample) and np.any(np.asarray(sample) != np.asarray(sample)[0]):
            m_codes, k_codes, c_codes, frame_index, value = _mean_over_samples(
                m_codes, k_codes, c_codes, np.asarray(frame_index, dtype=np.int64), np.asarray(value, np.float64),
                np.asarray(sample, dtype=np.int64), len(metrics), len(clips), grid_rank(clips))
        if keep is not None:  # by codes: the kept (model, clip) pairs as a matrix, looked up per row
            keep = keep if isinstance(keep, pd.MultiIndex) else pd.MultiIndex.from_tuples(list(keep))
            rows = pd.Index(models).get_indexer(np.asarray(keep.get_level_values(0), dtype=object))
            cols = pd.Index(clips).get_indexer(np.asarray(keep.get_level_values(1), dtype=object))
            allowed = np.zeros((len(models), len(clips)), dtype=bool)
            found = (rows >= 0) & (cols >= 0)
            allowed[rows[found], cols[found]] = True
            mask = allowed[m_codes, c_codes] if allowed.size else np.zeros(len(m_codes), bool)
            if not mask.all():  # a failed clip's frames: left out (every clip kept: nothing copied)
                m_codes, k_codes, c_codes = m_codes[mask], k_codes[mask], c_codes[mask]
                frame_index, value = frame_index[mask], value[mask]
        if not len(value):
            return out
        known = _grid_positions()
        clip_actor = np.array([known[c][1] if c in known else _actor_or_unknown(c) for c in clips], dtype=np.int64)
        actor_ids, clip_position = np.unique(clip_actor, return_inverse=True)  # per distinct clip, not per row
        n_k, n_c, n_a = len(metrics), len(clips), len(actor_ids)
        length = int(frame_index.max()) + 1
        # One fixed summation order, the one the toolkit stores rows in (model, clip in grid order, metric, frame):
        # the sums do not depend on row order, and a stored file is not sorted again (one pass, numba).
        from ._sums_kernel import frame_bincounts

        rank = grid_rank(clips)
        args = (len(models), n_k, n_c, n_a, length)
        sums, counts, has, ordered = frame_bincounts(m_codes, k_codes, c_codes, clip_position, frame_index, value,
                                                     rank, *args)
        if not ordered:
            key = ((m_codes.astype(np.int64) * n_c + rank[c_codes]) * n_k + k_codes) * length + frame_index
            order = np.argsort(key, kind="stable")
            sums, counts, has, _ = frame_bincounts(m_codes[order], k_codes[order], c_codes[order], clip_position,
                                                   frame_index[order], value[order], rank, *args)
        for mi, model in enumerate(models):
            for ki, metric in enumerate(metrics):
                if not has[mi, ki].any():
                    continue
                clips_per_actor = np.bincount(clip_position[has[mi, ki]], minlength=n_a)
                present = clips_per_actor > 0
                part_sums, part_counts = sums[mi, ki][present], counts[mi, ki][present]
                last = int(np.flatnonzero(part_counts.sum(axis=0) > 0).max()) + 1
                part_sums, part_counts = part_sums[:, :last], part_counts[:, :last].copy()
                if metric == "dtssd":
                    part_counts[:, 0] += clips_per_actor[present]
                out.parts[(model, metric)] = (actor_ids[present], part_sums, part_counts)
        return out

    def __len__(self) -> int:
        return len(self.parts)

    def keys(self) -> list[tuple[str, str]]:
        return sorted(self.parts)

    def select(self, labels: Iterable[str]) -> "FrameSums":
        wanted = set(labels)
        return FrameSums({k: v for k, v in self.parts.items() if k[0] in wanted})

    @classmethod
    def merge(cls, pieces: Iterable["FrameSums"]) -> "FrameSums":
        out = cls()
        for piece in pieces:
            out.parts.update(piece.parts)
        return out

    def actors(self) -> np.ndarray:
        """Every actor of any part, sorted (the clusters an interval of these rows resamples)."""
        ids = [a for a, _, _ in self.parts.values()]
        return np.unique(np.concatenate(ids)) if ids else np.zeros(0, np.int64)

    def aligned(self, key: tuple[str, str], actors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(sums, counts)`` of one part over the given actors (an actor without clips: zeros)."""
        ids, sums, counts = self.parts[key]
        position = np.searchsorted(actors, ids)
        full_s = np.zeros((len(actors), sums.shape[1]))
        full_c = np.zeros((len(actors), counts.shape[1]))
        full_s[position], full_c[position] = sums, counts
        return full_s, full_c

    def means(self) -> dict[tuple[str, str], float]:
        """The ``rvm`` value of each part: the mean over frame indices of the per-index mean over clips."""
        out = {}
        for key, (_, sums, counts) in self.parts.items():
            s, c = sums.sum(axis=0), counts.sum(axis=0)
            out[key] = float(np.mean(s[c > 0] / c[c > 0])) if (c > 0).any() else float("nan")
        return out


def _mean_over_samples(m_codes, k_codes, c_codes, frame_index, value, sample, n_metrics: int, n_clips: int,
                       rank: np.ndarray):
    """Per-frame rows of several samples per clip reduced to one row per (model, clip, metric, frame): the mean over
    the samples that have that frame (every sample of a scored clip has the reference's frame count).

    Summed one sample at a time, in sample order (a stored (clip, metric, sample, frame) is one row), so a mean does
    not depend on the row order; returned in the order the per-frame kernel reads without sorting (model, clip in
    grid order (``rank``), metric, frame). Dense accumulators over every (model, clip, metric, frame) when they are
    no bigger than a few times the rows (a run's frames), else the distinct keys sorted (sparse input).

    >>> m, k, c, f, v = _mean_over_samples(np.zeros(4, int), np.zeros(4, int), np.zeros(4, int),
    ...                                    np.array([0, 1, 0, 1]), np.array([1.0, 2.0, 3.0, 6.0]),
    ...                                    np.array([0, 0, 1, 1]), 1, 1, np.zeros(1, int))
    >>> f.tolist(), v.tolist()
    ([0, 1], [2.0, 4.0])
    """
    length = int(frame_index.max()) + 1 if len(frame_index) else 1
    n_models = int(m_codes.max()) + 1 if len(m_codes) else 0
    numbers = np.flatnonzero(np.bincount(sample))  # the sample numbers present, in order
    size = n_models * n_clips * n_metrics * length
    if size <= 4 * len(value) + (1 << 20):  # dense: one numba pass per sample number, no temporaries
        from ._sums_kernel import sample_frame_sums

        unique = None
        sums, counts = sample_frame_sums(m_codes, k_codes, c_codes, frame_index, value, sample, numbers,
                                         np.asarray(rank, dtype=np.int64), n_metrics, n_clips, length, size)
    else:  # sparse input: the distinct keys sorted, summed sample by sample
        key = ((m_codes.astype(np.int64) * n_clips + rank[c_codes]) * n_metrics + k_codes) * length + frame_index
        unique = np.unique(key)
        where = np.searchsorted(unique, key)
        sums, counts = np.zeros(len(unique)), np.zeros(len(unique), dtype=np.int64)
        for number in numbers:
            mine = sample == number
            sums += np.bincount(where[mine], weights=value[mine], minlength=len(unique))
            counts += np.bincount(where[mine], minlength=len(unique))
    present = np.flatnonzero(counts)
    keys = present if unique is None else unique[present]
    frame = keys % length
    rest = keys // length
    metric = rest % n_metrics
    rest //= n_metrics
    clip_of_rank = np.empty(n_clips, dtype=np.int64)
    clip_of_rank[rank] = np.arange(n_clips)
    return rest // n_clips, metric, clip_of_rank[rest % n_clips], frame, sums[present] / counts[present]


def _actor_or_unknown(clip_id: str) -> int:
    """The actor of a grid clip id; -1 for a key outside the grid (an evaluate module's own clip keys), whose
    values still aggregate (an rvm mean needs no actor), as one cluster."""
    try:
        return actor_of_clip(clip_id)
    except AttributeError:
        return -1


def _grid_positions() -> dict:
    """The grid's clip ids as the toolkit writes them -> (position in grid order, actor), built once."""
    if not _GRID:
        from ..datamodel.grid import full_grid

        _GRID.update({str(c): (i, c.actor_id) for i, c in enumerate(sorted(full_grid()))})
    return _GRID


_GRID: dict = {}


def grid_rank(clips: Sequence[str]) -> np.ndarray:
    """Each clip's position in the grid order (actor, emotion in Table 1 order, action, script); ids outside the
    grid's written form after them (another spelling parsed into its place), by name.

    Example:
        >>> grid_rank(["actor_0001_sad_action_01_script_001", "actor_0001_happy_action_01_script_001"]).tolist()
        [1, 0]
    """
    from ..datamodel.grid import ClipId, ClipIdError

    known = _grid_positions()
    keys = []
    for name in clips:
        if name in known:  # a dictionary lookup: the common case, no parse
            keys.append((0, known[name][0], ""))
            continue
        try:
            keys.append((0, known.get(str(ClipId.parse(name)), (len(known),))[0], name))
        except (ClipIdError, ValueError):
            keys.append((1, 0, name))
    order = sorted(range(len(clips)), key=lambda i: keys[i])
    rank = np.empty(len(clips), dtype=np.int64)
    rank[order] = np.arange(len(clips))
    return rank


class RowsIndex:
    """Per-clip rows of many tasks and metrics, indexed once: ``values(task, metric)`` is a :class:`ClipValues`
    built on first use and kept (a board ranks several columns of the same rows; the full grid holds millions).

    ``rows``: one frame, or several (each stored run's own rows: nothing is concatenated but the parts a
    measure needs).

    Example:
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"task": "t", "metric": ["m1", "m2"], "model": "a", "value": [1.0, 2.0],
        ...                      "clip_id": "actor_0001_sad_action_01_script_001"})
        >>> RowsIndex(rows).values("t", "m2").values.tolist()
        [[2.0]]
    """

    def __init__(self, rows):
        import pandas as pd

        frames = [rows] if isinstance(rows, pd.DataFrame) else [f for f in rows if f is not None]
        self.frames = [f for f in frames if len(f)]
        self._groups: list = [None] * len(self.frames)
        self._values: dict[tuple[str, str], ClipValues] = {}

    def _parts(self, task: str, metric: str) -> list:
        parts = []
        for i, frame in enumerate(self.frames):
            if self._groups[i] is None:
                self._groups[i] = frame.groupby(["task", "metric"], sort=False).indices
            index = self._groups[i].get((task, metric))
            if index is not None:
                parts.append(frame.iloc[index])
        return parts

    def values(self, task: str, metric: str) -> ClipValues:
        key = (task, metric)
        if key not in self._values:
            import pandas as pd

            parts = self._parts(task, metric)
            part = pd.concat(parts, ignore_index=True) if len(parts) > 1 else (parts[0] if parts else
                                                                                 pd.DataFrame(columns=["model", "clip_id", "value"]))
            self._values[key] = ClipValues.from_rows(part)
        return self._values[key]


def value_matrix(rows, task: str, metric: str) -> ClipValues:
    """:class:`ClipValues` of one metric of one task from per-clip rows of any tasks and metrics (a DataFrame or
    mappings)."""
    import pandas as pd

    mine = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    for column, wanted in (("task", task), ("metric", metric)):
        if column in mine.columns:
            mine = mine[mine[column].to_numpy() == wanted]
    return ClipValues.from_rows(mine)


def matrix_of(values: Any, task: str, metric: str) -> ClipValues:
    """``values`` if it is already a :class:`ClipValues`, its entry if a :class:`RowsIndex`, else
    :func:`value_matrix` of those rows."""
    if isinstance(values, ClipValues):
        return values
    if isinstance(values, RowsIndex):
        return values.values(task, metric)
    return value_matrix(values, task, metric)


__all__ = ["ClipValues", "EvidenceError", "FrameSums", "RowsIndex", "grid_rank", "matrix_of", "text_codes", "text_test",
           "value_matrix"]

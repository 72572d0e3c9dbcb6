"""Cross-task analyses of paper section 4.3 (Eq. 1-4), computed from per-clip result rows.

Inputs are rows with at least ``model``, ``task``, ``clip_id``, ``metric``, ``value`` (see
:mod:`hug_vis_dataset.datamodel.results`); the emotion of a row comes from its clip id. Rows whose ``status``
is not ``ok`` (when a status column exists) or whose value is not finite are left out and counted.
Every function sorts its rows into a canonical order before aggregating, so results do not depend
on row order, bit for bit.

Task names used in rows: ``emotion``, ``audio_driven``, ``vision_driven``, ``voice_cloning``,
``matting``; metric names: ``correct`` (emotion, 1/0 per clip and model), ``csim``, ``sync_c``,
``sync_d``, ``lpips``, ``psnr``, ``ssim``, ``utmos``, ``dnsmos``, ``speaker_similarity``, ``mad``,
``mse``, ``grad``, ``conn``, ``dtssd``.

Orientation makes larger values harder: ``retain`` (x; error-like metrics), ``negate`` (-x),
``complement`` (1 - x; fractions such as accuracy or cosine similarity). Min-max normalisation is
invariant to any increasing affine map, so ``negate`` and ``complement`` give the same D; the
choice only changes the intermediate g values (complement keeps them readable: error rate,
cosine distance).

Example:
    >>> rows = [
    ...     {"model": "m", "task": "matting", "clip_id": f"actor_0001_{e}_action_01_script_001",
    ...      "metric": "mad", "value": v}
    ...     for e, v in [("happy", 3.0), ("sad", 1.0), ("neutral", 2.0)]]
    >>> res = emotion_difficulty(rows, [DifficultyMetric("VM-MAD", "matting", "mad", "retain")])
    >>> res.D["VM-MAD"].dropna().to_dict(), res.hardest["VM-MAD"]
    ({'Happy': 1.0, 'Sad': 0.0, 'Neutral': 0.5}, 'Happy')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Any, Iterable, Mapping, Sequence

import numpy as np

from ..datamodel.grid import EMOTION_NAMES, ClipId
from ..datamodel.results import reference_rows
from ..statistics.basics import OLSFit, minmax, ols_fit, spearman

ORIENTATIONS = ("retain", "negate", "complement")

class MissingMetricsError(ValueError):
    """An analysis needs metrics the rows do not have; the message names them and how to get them."""

    def __init__(self, labels: Sequence[str], metrics: Sequence[str]):
        from .. import catalog
        from ..weights import download_command

        weights = [w for w in catalog.weights_of(m for m in metrics if m in catalog.METRIC_NAMES)]
        how = (f"; they need pretrained files: run `{download_command(weights)}`, then "
               "`hugvis evaluate` again" if weights else "; score those tasks with `hugvis evaluate` first")
        super().__init__(f"no valid rows of {', '.join(labels)}{how}")
        self.labels, self.metrics = list(labels), list(metrics)


@dataclass(frozen=True)
class DifficultyMetric:
    """One column of the emotion difficulty matrix: a (task, metric) of the rows and its orientation.

    Attributes:
        label: the paper's name (``"AD-CSIM"``).
        task: the rows' task (``None`` matches any task; then the metric name must be unambiguous).
        metric: the rows' metric name.
        orientation: ``retain``, ``negate`` or ``complement`` (larger = harder afterwards).
    """

    label: str
    task: "str | None"
    metric: str
    orientation: str

    def __post_init__(self) -> None:
        if self.orientation not in ORIENTATIONS:
            raise ValueError(f"{self.label}: orientation {self.orientation!r} is not one of {ORIENTATIONS}")


# The paper's eight metrics (section 5.5, Fig. 8), named as stored rows name them. MER-RE is the
# recognition error: the complement of per-clip correctness (stored as ``emotion_accuracy``, 0/1),
# whose per-emotion mean is the error rate 1 - accuracy.
DEFAULT_PAPER_METRICS: tuple[DifficultyMetric, ...] = (
    DifficultyMetric("MER-RE", "emotion", "emotion_accuracy", "complement"),
    DifficultyMetric("AD-CSIM", "audio_driven", "csim", "complement"),
    DifficultyMetric("AD-Sync-C", "audio_driven", "sync_c", "negate"),
    DifficultyMetric("VD-CSIM", "vision_driven", "csim", "complement"),
    DifficultyMetric("VD-LPIPS", "vision_driven", "lpips", "retain"),
    DifficultyMetric("VC-UTMOS", "voice_cloning", "utmos", "negate"),
    DifficultyMetric("VC-DNSMOS", "voice_cloning", "dnsmos", "negate"),
    DifficultyMetric("VM-MAD", "matting", "mad", "retain"),
)

# The paper does not list which metrics enter Eq. 4; it says both regimes use appearance-fidelity
# and perceptual-reconstruction criteria. These defaults use every objective per-clip metric of
# each generation task (FID is a set-level metric, so it cannot score a clip).
DEFAULT_AD_METRICS: dict[str, str] = {"csim": "negate", "sync_c": "negate", "sync_d": "retain"}
DEFAULT_VD_METRICS: dict[str, str] = {"csim": "negate", "lpips": "retain", "psnr": "negate", "ssim": "negate"}


def metrics_from_spec(spec: "Sequence[Sequence[str]] | None") -> tuple[DifficultyMetric, ...]:
    """``[[label, task, metric, orientation], ...]`` (e.g. from JSON) -> DifficultyMetric tuple; None -> defaults.

    Example:
        >>> metrics_from_spec([["VM-MAD", "matting", "mad", "retain"]])[0].orientation
        'retain'
    """
    if spec is None:
        return DEFAULT_PAPER_METRICS
    out = []
    for item in spec:
        if isinstance(item, DifficultyMetric):
            out.append(item)
        elif len(item) != 4:
            raise ValueError(f"metric spec {item!r} must be [label, task, metric, orientation]")
        else:
            out.append(DifficultyMetric(*(str(x) if x is not None else None for x in item)))
    return tuple(out)


def orient(values: Any, orientation: str) -> np.ndarray:
    """Apply an orientation so that larger = harder.

    Example:
        >>> orient([0.25, 1.0], "complement").tolist(), orient([2.0], "negate").tolist()
        ([0.75, 0.0], [-2.0])
    """
    arr = np.asarray(values, dtype=float)
    if orientation == "retain":
        return arr.copy()
    if orientation == "negate":
        return -arr
    if orientation == "complement":
        return 1.0 - arr
    raise ValueError(f"orientation {orientation!r} is not one of {ORIENTATIONS}")


class PreparedRows(NamedTuple):
    """:func:`prepare_rows`' output, given instead of rows to several analyses (Figs. 8-10 of one report) so the
    millions of rows of a full grid are prepared once."""

    frame: Any
    n_dropped: int

    @classmethod
    def of(cls, rows: Any) -> "PreparedRows":
        return cls(*prepare_rows(rows))


def prepare_rows(rows: "Iterable[Mapping] | Any", need_task: bool = True):
    """Valid rows as a canonically sorted DataFrame with an ``emotion`` column from the clip id.

    Rows of reserved model names (:data:`hug_vis_dataset.datamodel.results.REFERENCE_MODELS`: the
    Real-audio row, reference statistics, the built-in baselines) are left out, so stored ``rows.parquet`` of every task
    can be passed as they are.

    Returns:
        ``(frame, n_dropped)``: model rows with status ``ok`` (if a status column exists) and a finite
        value, sorted by task, model, clip (grid order), metric, value; and how many rows were left out.

    Raises:
        ValueError: empty input, a missing required column, or a bad clip id (named).
    """
    import pandas as pd

    if isinstance(rows, PreparedRows):  # prepared once by the caller for several analyses
        return rows.frame, rows.n_dropped
    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))  # read, never changed
    if frame.empty:
        raise ValueError("no result rows")
    required = ["model", "clip_id", "metric", "value"] + (["task"] if need_task else [])
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise ValueError(
            f"result rows lack column(s) {missing}; have {list(frame.columns)}"
            + (" (the task tells audio_driven csim from vision_driven csim)" if "task" in missing else "")
        )
    value = pd.to_numeric(frame["value"], errors="coerce").to_numpy(dtype=np.float64)
    keep = np.isfinite(value)
    if "status" in frame.columns:
        from ..statistics.sums import text_test

        keep &= text_test(frame["status"], lambda t: t in ("ok", ""))
    # Reference rows (the Real-audio recordings, reference motion statistics) are not models.
    keep &= ~reference_rows(frame["model"]).to_numpy()
    n_dropped = int((~keep).sum())
    columns = {c: frame[c][keep] for c in ("model", "clip_id", "metric")}
    columns["task"] = frame["task"][keep] if "task" in frame.columns else pd.Series("", index=frame.index[keep])
    emotions = {}
    for clip in columns["clip_id"].unique():
        try:
            emotions[clip] = ClipId.parse(str(clip)).emotion.value
        except ValueError as err:
            raise ValueError(f"result row: {err}") from None
    # The columns as they come (a category column stays one: its codes are what is copied), values as floats.
    out = pd.DataFrame({c: columns[c].reset_index(drop=True) for c in ("model", "task", "clip_id", "metric")}
                       | {"value": value[keep]})
    clip_codes, clips = pd.factorize(out["clip_id"])
    out["emotion"] = np.array([emotions[c] for c in clips], dtype=object)[clip_codes] if len(clips) else []
    # One canonical order (task, model, clip in grid order, metric, value) whatever order the rows came in, so
    # float sums do not depend on it. Stored runs read in (task, model) order already are in it: then no reordering.
    from ..statistics.sums import grid_rank

    codes = [pd.factorize(out[c], sort=True)[0] for c in ("task", "model")]
    rank = grid_rank([str(c) for c in clips])[clip_codes] if len(clips) else clip_codes
    metric_codes, metrics = pd.factorize(out["metric"], sort=True)
    key = ((codes[0].astype(np.int64) * (codes[1].max() + 1 if len(out) else 1) + codes[1]) * max(len(clips), 1)
           + rank) * max(len(metrics), 1) + metric_codes
    if len(key) > 1 and (np.diff(key) <= 0).any():
        out = out.iloc[np.lexsort((out["value"].to_numpy(), key))]
    return out.reset_index(drop=True), n_dropped


def _select(frame, task: "str | None", metric: str):
    mask = frame["metric"] == metric
    if task is not None:
        mask &= frame["task"] == task
    return frame[mask]


@dataclass
class EmotionDifficulty:
    """Result of :func:`emotion_difficulty`.

    Attributes:
        D: emotions (Table 1 order) x metric labels, Eq. 2; NaN where an emotion has no data.
        g: the model-averaged oriented means g_{e,k} (Eq. 1), same shape.
        g_model: long frame (label, model, emotion, g, n_clips): g_{m,e,k} per model.
        n_models: emotions x labels, how many models entered each g_{e,k}.
        hardest: label -> emotion with D = 1 (first in Table 1 order on ties); ``None`` when the
            profile is constant or empty.
        missing: label -> emotions without any valid row (NaN in D).
        n_dropped: rows left out as failed or non-finite (all tasks).
    """

    D: Any
    g: Any
    g_model: Any
    n_models: Any
    hardest: dict
    missing: dict
    n_dropped: int = 0
    metrics: tuple = field(default_factory=tuple)

    def to_dict(self) -> dict:
        """Plain nested dicts (metric label -> emotion -> value), e.g. for an evaluate module."""
        return {
            "D": {k: {e: float(v) for e, v in col.items()} for k, col in self.D.items()},
            "g": {k: {e: float(v) for e, v in col.items()} for k, col in self.g.items()},
            "hardest": dict(self.hardest),
            "missing": {k: list(v) for k, v in self.missing.items()},
            "n_dropped": int(self.n_dropped),
        }


def emotion_difficulty(
    rows: "Iterable[Mapping] | Any",
    metrics: Sequence[DifficultyMetric] = DEFAULT_PAPER_METRICS,
    orientations: "Mapping[str, str] | None" = None,
) -> EmotionDifficulty:
    """Emotion difficulty per metric, paper Eq. 1-2 (Fig. 8).

    For each metric k: values are oriented (larger = harder); g_{m,e,k} is the mean of model m over
    its clips of emotion e; g_{e,k} is the unweighted mean over the models with at least one clip
    of emotion e (Eq. 1, each model weighs the same whatever its clip count); D_{e,k} min-max
    normalises g_{e,k} over the emotions that have data (Eq. 2).

    Edge cases: an emotion with no valid row has D = NaN and is listed in ``missing``; when all
    present g are equal (max = min, including a single emotion), D = 0 for all of them (no emotion
    is harder than another) and ``hardest`` is ``None``.

    Args:
        rows: per-clip result rows (mappings or a DataFrame) with model, task, clip_id, metric, value.
        metrics: the columns; default the paper's eight (:data:`DEFAULT_PAPER_METRICS`).
        orientations: optional label -> orientation overrides.

    Raises:
        ValueError: bad rows, duplicate labels, unknown orientation.
    """
    import pandas as pd

    metrics = tuple(metrics)
    if orientations:
        unknown = set(orientations) - {m.label for m in metrics}
        if unknown:
            raise ValueError(f"orientations for unknown metric labels {sorted(unknown)}")
        metrics = tuple(
            DifficultyMetric(m.label, m.task, m.metric, orientations.get(m.label, m.orientation)) for m in metrics
        )
    labels = [m.label for m in metrics]
    if len(set(labels)) != len(labels):
        raise ValueError(f"duplicate metric labels in {labels}")
    frame, n_dropped = prepare_rows(rows, need_task=any(m.task is not None for m in metrics))
    g = pd.DataFrame(np.nan, index=list(EMOTION_NAMES), columns=labels)
    D = g.copy()
    n_models = pd.DataFrame(0, index=list(EMOTION_NAMES), columns=labels)
    per_model, hardest, missing = [], {}, {}
    for spec in metrics:
        sel = _select(frame, spec.task, spec.metric).copy()
        sel["oriented"] = orient(sel["value"].to_numpy(), spec.orientation)
        gm = (
            sel.groupby(["model", "emotion"], sort=True)["oriented"]
            .agg(g="mean", n_clips="size")
            .reset_index()
        )
        gm.insert(0, "label", spec.label)
        per_model.append(gm)
        for emotion in EMOTION_NAMES:
            vals = gm.loc[gm["emotion"] == emotion, "g"].to_numpy()
            if vals.size:
                g.loc[emotion, spec.label] = float(np.mean(vals))
                n_models.loc[emotion, spec.label] = int(vals.size)
        profile = minmax(g[spec.label].to_numpy())
        D[spec.label] = profile
        missing[spec.label] = [e for e, v in zip(EMOTION_NAMES, profile) if np.isnan(v)]
        finite = profile[np.isfinite(profile)]
        if finite.size and finite.max() == 1.0:
            hardest[spec.label] = EMOTION_NAMES[int(np.nanargmax(profile))]
        else:
            hardest[spec.label] = None
    g_model = pd.concat(per_model, ignore_index=True) if per_model else pd.DataFrame()
    return EmotionDifficulty(D, g, g_model, n_models, hardest, missing, n_dropped, metrics)


def difficulty_agreement(D: Any) -> Any:
    """Spearman agreement between emotion difficulty profiles, paper Eq. 3 (Fig. 9).

    Args:
        D: emotions x metrics DataFrame (e.g. ``emotion_difficulty(...).D``).

    Returns:
        A symmetric metrics x metrics DataFrame of Spearman rho (ties get average ranks, as
        ``scipy.stats.spearmanr``). Each pair uses the emotions where both profiles are defined.
        A constant profile (or fewer than two shared emotions) gives NaN: its ranks have no
        variance, so the correlation is undefined - including on the diagonal.

    Example:
        >>> import pandas as pd
        >>> D = pd.DataFrame({"a": [0, 0.5, 1], "b": [1, 0.5, 0], "c": [0, 0, 0]})
        >>> difficulty_agreement(D).round(3).to_dict()["a"]
        {'a': 1.0, 'b': -1.0, 'c': nan}
    """
    import pandas as pd

    names = list(D.columns)
    out = pd.DataFrame(np.nan, index=names, columns=names)
    for i, a in enumerate(names):
        for b in names[i:]:
            rho = spearman(D[a].to_numpy(dtype=float), D[b].to_numpy(dtype=float))
            out.loc[a, b] = out.loc[b, a] = rho
    return out


@dataclass
class SourceDifficulty:
    """Result of :func:`source_difficulty`.

    Attributes:
        pairs: one row per selected clip: clip_id, emotion, Z_AD, Z_VD (grid order).
        rho: Spearman correlation of Z_AD and Z_VD.
        fit: OLS of Z_VD on Z_AD.
        z: long frame (regime, model, clip_id, z) of per-model clip difficulty z_{m,s}.
        models: regime -> models averaged.
        n_valid: regime -> clips where every model of the regime has every metric.
        n_dropped: rows left out as failed or non-finite.
    """

    pairs: Any
    rho: float
    fit: OLSFit
    z: Any
    models: dict
    n_valid: dict
    n_dropped: int = 0

    def to_dict(self) -> dict:
        """Plain values: rho, the OLS fit, counts and the per-clip pairs as a list of dicts."""
        return {
            "rho": float(self.rho),
            "slope": float(self.fit.slope),
            "intercept": float(self.fit.intercept),
            "r2": float(self.fit.r2),
            "n_clips": int(len(self.pairs)),
            "n_valid": dict(self.n_valid),
            "models": {k: list(v) for k, v in self.models.items()},
            "pairs": self.pairs.to_dict(orient="records"),
            "n_dropped": int(self.n_dropped),
        }


def _regime_valid(frame, task: str, metrics: Mapping[str, str]):
    sel = frame[(frame["task"] == task) & frame["metric"].isin(list(metrics))]
    models = sorted(sel["model"].unique().tolist())
    if not models:
        return sel, models, set()
    # Duplicated (model, clip, metric) rows are averaged: one value per cell.
    cell = sel.groupby(["model", "clip_id", "metric"], sort=True)["value"].mean()
    counts = cell.groupby(level="clip_id").size()
    valid = set(counts[counts == len(models) * len(metrics)].index)
    return sel, models, valid


def _regime_z(frame, models, metrics: Mapping[str, str], clips: list[str]):
    import pandas as pd

    sel = frame[frame["clip_id"].isin(clips)]
    cell = sel.groupby(["model", "metric", "clip_id"], sort=True)["value"].mean()
    zs = []
    for model in models:
        per_metric = []
        for metric, orientation in metrics.items():
            values = cell.loc[(model, metric)].reindex(clips).to_numpy()
            per_metric.append(minmax(orient(values, orientation)))
        zs.append(np.mean(per_metric, axis=0))
    return pd.DataFrame(zs, index=models, columns=clips)


def source_difficulty(
    rows: "Iterable[Mapping] | Any",
    ad_metrics: Mapping[str, str] = DEFAULT_AD_METRICS,
    vd_metrics: Mapping[str, str] = DEFAULT_VD_METRICS,
    ad_task: str = "audio_driven",
    vd_task: str = "vision_driven",
    clips: "Iterable[str] | None" = None,
) -> SourceDifficulty:
    """Clip-level difficulty of the AD and VD generation regimes, paper Eq. 4 (Fig. 10).

    Selection: a clip is valid for a regime when every model of the regime (models with any row
    of the regime's metrics) has a finite value of every one of its metrics; the selected clips
    are the intersection of the two regimes' valid clips (and of ``clips`` if given). Then, per
    model and metric, values are oriented and min-max normalised over the selected clips (a
    constant metric gives 0), averaged over the metrics to z_{m,s}, and averaged over the models
    of each regime to Z_s^AD and Z_s^VD.

    Args:
        rows: per-clip result rows with model, task, clip_id, metric, value.
        ad_metrics, vd_metrics: metric -> orientation for each regime.
        ad_task, vd_task: the task names of the two regimes in the rows.
        clips: optional restriction of the clip set.

    Raises:
        MissingMetricsError: a metric of a regime has no valid row (names it and the weights command).
        ValueError: fewer than two common valid clips.
    """
    import pandas as pd

    for name, spec in (("ad_metrics", ad_metrics), ("vd_metrics", vd_metrics)):
        if not spec:
            raise ValueError(f"{name} is empty")
        for metric, orientation in spec.items():
            if orientation not in ORIENTATIONS:
                raise ValueError(f"{name}[{metric!r}]: orientation {orientation!r} is not one of {ORIENTATIONS}")
    frame, n_dropped = prepare_rows(rows)
    from .. import catalog

    missing = [(task, metric) for task, spec in ((ad_task, ad_metrics), (vd_task, vd_metrics)) for metric in spec
               if not ((frame["task"] == task) & (frame["metric"] == metric)).any()]
    if missing:  # named as a person reads them (task and metric labels); the command keeps its keys
        label = (lambda t, m: f"{catalog.task(t).label if t in catalog.task_names() else t} "
                              f"{catalog.label_of(m)}")
        raise MissingMetricsError([label(t, m) for t, m in missing], [m for _, m in missing])
    ad, ad_models, ad_valid = _regime_valid(frame, ad_task, ad_metrics)
    vd, vd_models, vd_valid = _regime_valid(frame, vd_task, vd_metrics)
    common = ad_valid & vd_valid
    if clips is not None:
        common &= set(map(str, clips))
    selected = sorted(common, key=ClipId.parse)
    if len(selected) < 2:
        raise ValueError(
            f"only {len(selected)} clip(s) valid for both regimes (AD valid {len(ad_valid)}, VD valid {len(vd_valid)})"
        )
    z_ad = _regime_z(ad, ad_models, ad_metrics, selected)
    z_vd = _regime_z(vd, vd_models, vd_metrics, selected)
    pairs = pd.DataFrame({
        "clip_id": selected,
        "emotion": [ClipId.parse(c).emotion.value for c in selected],
        "Z_AD": z_ad.mean(axis=0).to_numpy(),
        "Z_VD": z_vd.mean(axis=0).to_numpy(),
    })
    z_long = pd.concat(
        [z.stack().rename("z").rename_axis(["model", "clip_id"]).reset_index().assign(regime=r)
         for r, z in (("AD", z_ad), ("VD", z_vd))],
        ignore_index=True,
    )[["regime", "model", "clip_id", "z"]]
    return SourceDifficulty(
        pairs=pairs,
        rho=spearman(pairs["Z_AD"], pairs["Z_VD"]),
        fit=ols_fit(pairs["Z_AD"], pairs["Z_VD"]),
        z=z_long,
        models={"AD": ad_models, "VD": vd_models},
        n_valid={"AD": len(ad_valid), "VD": len(vd_valid), "common": len(selected)},
        n_dropped=n_dropped,
    )


@dataclass
class MotionRelation:
    """Result of :func:`motion_relation`: D_motion against model-averaged dtSSD (Eq. 5-6, Fig. 11).

    Attributes:
        clips: the clips analysed (grid order): those with reference motion and matting dtSSD rows.
        u, v: the reference's U_s and V_s per clip.
        d_motion: mean percentile rank of U_s and V_s over ``clips``.
        dtssd: per-clip dtSSD averaged over the matting models that scored the clip.
        emotions: each clip's emotion.
        relation: :func:`hug_vis_dataset.metrics.matting.motion_vs_dtssd` (overall and per emotion).
    """

    clips: list
    u: np.ndarray
    v: np.ndarray
    d_motion: np.ndarray
    dtssd: np.ndarray
    emotions: list
    relation: dict

    def to_dict(self) -> dict:
        """JSON-friendly result (what the ``motion_difficulty`` evaluate module returns)."""
        return {
            "motion_difficulty": float(np.mean(self.d_motion)),
            "n_clips": len(self.clips),
            "per_clip": {"clip_id": list(self.clips), "u": self.u.tolist(), "v": self.v.tolist(),
                         "d_motion": self.d_motion.tolist(), "dtssd": self.dtssd.tolist()},
            "relation": self.relation,
        }


def motion_relation(rows: "Iterable[Mapping] | Any") -> MotionRelation:
    """D_motion (paper Eq. 5-6) of every clip with reference motion rows and matting dtSSD rows.

    U_s and V_s come from the rows of the ``motion`` task (``hugvis evaluate motion``: model
    ``reference``, metrics ``motion_u``/``motion_v``); dtSSD_s is the per-clip dtSSD averaged over
    the matting models that scored the clip. The percentile ranks are taken over the clips that
    have both, so D_motion depends on that set.

    Raises:
        MissingMetricsError: no motion rows or no matting dtSSD rows.
        ValueError: fewer than two clips have both.
    """
    import pandas as pd

    from .matting import motion_difficulty, motion_vs_dtssd

    frame = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    for column in ("task", "clip_id", "metric", "value"):
        if column not in frame.columns:
            raise ValueError(f"result rows lack column {column!r}; have {list(frame.columns)}")
    ok = frame[frame["status"].fillna("ok").isin(["ok", ""])] if "status" in frame.columns else frame
    ok = ok[np.isfinite(pd.to_numeric(ok["value"], errors="coerce").astype(float))]
    motion = ok[ok["task"] == "motion"].pivot_table(index="clip_id", columns="metric", values="value",
                                                    aggfunc="first")
    models = ok[(ok["task"] == "matting") & (ok["metric"] == "dtssd") & ~reference_rows(ok["model"])]
    dtssd = models.groupby("clip_id")["value"].mean()
    from .. import catalog

    absent = [label for label, missing in (  # named by the catalog's labels: this message reaches pages
        (f"{catalog.task('motion').label} {catalog.spec('motion_u').label}, {catalog.spec('motion_v').label} "
         "(run `hugvis evaluate motion --dataset D`)",
         motion.empty or not {"motion_u", "motion_v"} <= set(motion.columns)),
        (f"{catalog.task('matting').label} {catalog.spec('dtssd').label}", dtssd.empty)) if missing]
    if absent:
        raise MissingMetricsError(absent, [])
    clips = sorted(set(motion.index) & set(dtssd.index), key=ClipId.parse)
    if len(clips) < 2:
        raise ValueError(f"only {len(clips)} clip(s) have both reference motion and dtSSD rows; need 2")
    u = motion.loc[clips, "motion_u"].to_numpy(np.float64)
    v = motion.loc[clips, "motion_v"].to_numpy(np.float64)
    d = motion_difficulty(u, v)["d_motion"]
    y = dtssd.loc[clips].to_numpy(np.float64)
    emotions = [ClipId.parse(c).emotion.value for c in clips]
    return MotionRelation(list(clips), u, v, np.asarray(d, np.float64), y, emotions, motion_vs_dtssd(d, y, emotions))

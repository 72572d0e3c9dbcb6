"""Per-task clip scorers: where a submission keeps each clip's prediction, what the reference
is, which checks a prediction must pass, and which library functions score it.

Submission layout (one prediction per clip, named by clip id, never matched by sorted order):

=================  =============================================================================
task               prediction of clip ``<clip_id>`` inside ``--predictions DIR``
=================  =============================================================================
``matting``        ``<clip_id>/000000.png ...`` (8-bit gray PNGs) or ``<clip_id>.mp4|.mkv|.mov``
                   (lossless); frame count and size equal to the reference alpha
``audio_driven``   ``<clip_id>.mp4``; frame count equal to the reference video (any size)
``vision_driven``  ``<clip_id>.mp4``; frame count and size equal to the reference video
``voice_cloning``  ``<clip_id>.wav`` (or .flac); sample rate equal to the release's clip rate
``emotion``        ``predictions.jsonl``, lines ``{"clip_id", "input_setting", "answer"}``
=================  =============================================================================

Clip ids may use any emotion spelling the grid accepts (``fearful`` or ``afraid``). Files named
``README*``, ``*.md``, ``*.json``, ``*.txt``, ``*.yaml`` and hidden files are ignored; any other
entry that does not name a clip is reported as *unmatched*.

Every scorer turns one clip into result rows (:data:`hug_vis_dataset.results.RESULT_COLUMNS`):
``ok`` rows carry the library's value, ``failed`` rows carry NaN and the error text. Emotion rows
name the model as ``"<model> | <input setting>"`` (Table 4 has one row per model and setting).

Example:
    >>> sorted(TASKS)
    ['audio_driven', 'emotion', 'matting', 'vision_driven', 'voice_cloning']
    >>> get_task("voice_cloning").prediction_suffixes
    ('.wav', '.flac')
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from ..grid import ClipId, ClipIdError
from ..results import STATUS_FAILED, STATUS_OK
from .references import is_row_locator

EMOTION_MODEL_SEP = " | "
# `--predictions` value (and CLI flag --real-audio) that scores the release's own recordings as
# the paper's "Real audio" reference row of Table 9.
REAL_AUDIO = "real-audio"
REAL_AUDIO_MODEL = "real-audio"  # a folder name; reports print it as "Real audio"
# Model name of reference-only rows (motion statistics of the reference alpha).
REFERENCE_MODEL = "reference"
IGNORED_SUFFIXES = (".md", ".json", ".txt", ".yaml", ".yml")


class SubmissionError(ValueError):
    """A prediction exists but cannot be scored (wrong size, frame count, rate, unreadable)."""


class MetricUnavailable(RuntimeError):
    """A metric cannot run in this installation (its library module or weights are absent)."""


@dataclass(frozen=True)
class ClipJob:
    """Everything a worker needs to score one clip; plain data so it pickles to any process.

    Attributes:
        task: task name (key of :data:`TASKS`).
        model: the submission's model name.
        clip_id: the clip id as the release spells it.
        reference: reference media by kind (``alpha``, ``video``, ``audio``, ``portrait``): file
            paths (release tree) or row locators into a dataset repo's Parquet shards
            (:mod:`hug_vis_dataset.scoring.references`).
        expected: reference properties the prediction must match (``width``, ``height``,
            ``sample_rate``, ``fps``).
        prediction: the prediction path(s) found for the clip (more than one is a duplicate).
        payload: task data other than files (emotion: ``[(input_setting, answer), ...]``).
        metrics: the metrics to compute (those available in this installation).
        options: protocol options (``chunk_frames``).
    """

    task: str
    model: str
    clip_id: str
    reference: Mapping[str, str]
    expected: Mapping[str, Any]
    prediction: tuple[str, ...]
    payload: Any = None
    metrics: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class ClipOutcome:
    """Rows (and per-frame values) of one clip."""

    clip_id: str
    rows: list[dict]
    frames: list[dict] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(r["status"] == STATUS_FAILED for r in self.rows)


@dataclass
class PredictionIndex:
    """What a submission folder holds, by clip.

    Attributes:
        found: clip -> the names of every entry predicting it (two or more: duplicate).
        unmatched: entries naming no clip, with the reason.
        payload: task data per clip (emotion answers).
    """

    found: dict[ClipId, list[str]] = field(default_factory=dict)
    unmatched: list[tuple[str, str]] = field(default_factory=list)
    payload: dict[ClipId, Any] = field(default_factory=dict)
    duplicate_keys: "dict[ClipId, list[str]] | None" = None

    def duplicates(self) -> dict[ClipId, list[str]]:
        """Clips predicted more than once (for emotion: twice for one input setting)."""
        if self.duplicate_keys is not None:
            return self.duplicate_keys
        return {c: v for c, v in self.found.items() if len(v) > 1}


def _rows(job: ClipJob, values: Mapping[str, float], model: "str | None" = None, error: str = "",
          status: "str | None" = None) -> list[dict]:
    fields = ClipId.parse(job.clip_id).fields()
    fields["clip_id"] = job.clip_id
    out = []
    for metric in sorted(values):
        value = float(values[metric])
        row_status = status or (STATUS_OK if math.isfinite(value) else STATUS_FAILED)
        row_error = error or ("" if math.isfinite(value) else f"{metric} is not finite ({value})")
        out.append({"model": model or job.model, "task": job.task, **fields, "metric": metric, "value": value,
                    "status": row_status, "error": row_error})
    return out


def failed_rows(job: ClipJob, error: str, metrics: "tuple[str, ...] | None" = None,
                model: "str | None" = None) -> list[dict]:
    """One failed row per metric, value NaN, with the error text."""
    return _rows(job, {m: math.nan for m in (metrics or job.metrics)}, model=model, error=error,
                 status=STATUS_FAILED)


class TaskScorer:
    """Base of a task: submission layout, reference lookup, checks, scoring.

    Subclasses set ``name``, ``metric_module``, ``metrics`` (the per-clip metrics, in table
    order) and implement :meth:`check` and :meth:`score_values`.
    """

    name: str = ""
    metric_module: str = ""
    metrics: tuple[str, ...] = ()
    set_metrics: tuple[str, ...] = ()
    prediction_suffixes: tuple[str, ...] = ()
    prediction_dirs: bool = False
    # Reference kinds the scorer needs as files (repo cells are written to temporary files).
    file_kinds: tuple[str, ...] = ()
    # True when the library already returns values in the paper's unit (matting x1e3 ...), so
    # reports must not apply MetricInfo.scale again.
    paper_units: bool = False
    # True for rows derived from the reference data alone (no submission): see MotionTask.
    reference_only: bool = False

    # -- layout ----------------------------------------------------------------------------
    def index_predictions(self, pred_dir: "str | Path") -> PredictionIndex:
        """Map every entry of the submission folder to the clip its name gives."""
        pred_dir = Path(pred_dir)
        if not pred_dir.is_dir():
            raise FileNotFoundError(f"predictions folder {pred_dir} does not exist")
        index = PredictionIndex()
        for entry in sorted(pred_dir.iterdir()):
            name = entry.name
            if name.startswith(".") or name.upper().startswith("README") or (
                entry.is_file() and entry.suffix.lower() in IGNORED_SUFFIXES
            ):
                continue
            if entry.is_dir():
                if not self.prediction_dirs:
                    index.unmatched.append((name, "a folder, expected one file per clip"))
                    continue
                stem = name
            elif entry.suffix.lower() in self.prediction_suffixes:
                stem = entry.stem
            else:
                index.unmatched.append((name, f"unexpected file type, expected {'/'.join(self.prediction_suffixes)}"))
                continue
            try:
                cid = ClipId.parse(stem)
            except ClipIdError as err:
                index.unmatched.append((name, str(err)))
                continue
            index.found.setdefault(cid, []).append(str(entry))
        return index

    def reference(self, record) -> dict[str, str]:
        """Reference paths of a :class:`~hug_vis_dataset.release.ClipRecord`."""
        raise NotImplementedError

    def index_from_references(self, refs, predictions: "str | Path") -> PredictionIndex:
        """Predictions derived from the reference source itself (reference-only tasks and the
        Real-audio row); a task without such a mode refuses."""
        raise SubmissionError(f"task {self.name} has no reference-derived mode for {predictions!r}")

    def expected(self, record) -> dict[str, Any]:
        return {"width": record.width, "height": record.height, "fps": record.fps,
                "sample_rate": record.sample_rate}

    # -- metrics ---------------------------------------------------------------------------
    def library(self):
        """The task's metric module; :class:`MetricUnavailable` when it is not installed."""
        try:
            return importlib.import_module(self.metric_module)
        except ModuleNotFoundError as err:
            if err.name == self.metric_module:
                raise MetricUnavailable(f"{self.metric_module} is not part of this installation") from None
            raise

    def availability(self) -> dict[str, str]:
        """Metric -> ``""`` when it can run here, else the reason it is skipped."""
        from .. import weights

        try:
            info = getattr(self.library(), "METRIC_INFO", {})
        except MetricUnavailable as err:
            return {m: f"skipped: {err}" for m in self.metrics + self.set_metrics}
        out = {}
        for metric in self.metrics + self.set_metrics:
            note = weights.missing_note(info[metric].needs_weights if metric in info else ())
            out[metric] = f"skipped: {note}" if note else ""
        return out

    def check(self, job: ClipJob) -> None:
        """Raise :class:`SubmissionError` when the prediction cannot be compared to the reference."""

    def score_values(self, job: ClipJob) -> "tuple[dict[str, float], list[dict]]":
        """Metric values of one clip and per-frame rows (``metric``, ``frame``, ``value``)."""
        raise NotImplementedError

    # -- one clip, never raising -------------------------------------------------------------
    def score(self, job: ClipJob) -> ClipOutcome:
        """Rows of one clip; any error becomes failed rows carrying its text."""
        if not job.metrics:
            return ClipOutcome(job.clip_id, [])
        if not job.prediction:
            return ClipOutcome(job.clip_id, failed_rows(job, "missing prediction: no file named by this clip id"))
        if len(job.prediction) > 1:
            names = ", ".join(Path(p).name for p in job.prediction)
            return ClipOutcome(job.clip_id, failed_rows(job, f"duplicate predictions: {names}"))
        try:
            with _reference_files(job, self.file_kinds) as job:
                self.check(job)
                values, frames = self.score_values(job)
        except Exception as err:  # noqa: BLE001 - any failure of one clip must not lose the others
            return ClipOutcome(job.clip_id, failed_rows(job, f"{type(err).__name__}: {err}"))
        missing = [m for m in job.metrics if m not in values]
        values = {m: values.get(m, math.nan) for m in job.metrics}
        rows = _rows(job, values)
        if missing:
            for row in rows:
                if row["metric"] in missing:
                    row["status"], row["error"] = STATUS_FAILED, "the library returned no value"
        frame_rows = [{"model": job.model, "task": job.task, "clip_id": job.clip_id, **f} for f in frames]
        return ClipOutcome(job.clip_id, rows, frame_rows)

    def score_set(self, jobs: "list[ClipJob]", metrics: "tuple[str, ...]") -> dict[str, float]:
        """Set-level metrics over all valid clips of the model (FID); none by default."""
        return {}


# ----------------------------------------------------------------------------- checks
@contextlib.contextmanager
def _reference_files(job: ClipJob, kinds: "tuple[str, ...]"):
    """``job`` with its repo references of ``kinds`` turned into temporary files for the clip's life."""
    from .references import reference_file

    wanted = [k for k in kinds if is_row_locator(job.reference.get(k, ""))]
    if not wanted:
        yield job
        return
    with contextlib.ExitStack() as stack:
        files = {k: stack.enter_context(reference_file(job.reference[k], ".mp4")) for k in wanted}
        yield replace(job, reference={**job.reference, **files})


def _frame_count_and_size(source: str) -> tuple[int, int, int]:
    """(frames, width, height) of a PNG folder or a video, reading headers and one frame only."""
    from .. import media

    path = Path(source)
    if path.is_dir():
        files = media.alpha_frame_files(path)
        if not files:
            raise SubmissionError(f"no PNG frames in {path.name}/")
        missing = sorted(set(range(max(files) + 1)) - set(files))
        if missing:
            raise SubmissionError(f"{path.name}/ lacks frames {missing[:10]}")
        first = media.read_png_gray(files[0])
        return len(files), first.shape[1], first.shape[0]
    info = media.video_info(path)
    return info.frames, info.width, info.height


def _check_video(pred: str, ref: str, size: bool, what: str) -> None:
    from ..media import MediaError

    try:
        n_pred, w_pred, h_pred = _frame_count_and_size(pred)
    except MediaError as err:
        raise SubmissionError(f"unreadable prediction: {err}") from None
    if is_row_locator(ref):  # an alpha matte inside a dataset repo: read its header only
        from .references import reference_alpha_info

        n_ref, w_ref, h_ref = reference_alpha_info(ref)
    else:
        n_ref, w_ref, h_ref = _frame_count_and_size(ref)
    if size and (w_pred, h_pred) != (w_ref, h_ref):
        raise SubmissionError(f"wrong resolution: prediction is {w_pred}x{h_pred}, reference {what} is {w_ref}x{h_ref}")
    if n_pred != n_ref:
        raise SubmissionError(f"wrong frame count: prediction has {n_pred} frames, reference {what} has {n_ref}")


# ----------------------------------------------------------------------------- tasks
class MattingTask(TaskScorer):
    """Video matting (Table 11): MAD, MSE, dtSSD, Grad, Conn against the reference alpha.

    Per-frame values are stored (frames table) so the ``rvm`` protocol can be computed from
    stored rows; the per-clip rows hold the mean over the clip's frames.
    """

    name = "matting"
    metric_module = "hug_vis_dataset.metrics.matting"
    metrics = ("mad", "mse", "dtssd", "grad", "conn")
    prediction_suffixes = (".mp4", ".mkv", ".mov", ".avi")
    prediction_dirs = True
    paper_units = True

    def reference(self, record) -> dict[str, str]:
        return {"alpha": str(record.alpha_matte_path)}

    def check(self, job: ClipJob) -> None:
        _check_video(job.prediction[0], job.reference["alpha"], size=True, what="alpha")

    def score_values(self, job: ClipJob):
        from .references import iter_reference_alpha

        lib = self.library()
        chunk = int(job.options.get("chunk_frames", 32))
        ref = job.reference["alpha"]
        # A repo matte is decoded from its lossless blob chunk by chunk (same values as the PNGs).
        ref_source = iter_reference_alpha(ref, chunk) if is_row_locator(ref) else ref
        result = lib.score_matting_clip(job.prediction[0], ref_source, chunk_frames=chunk, metrics=job.metrics)
        return _split_clip_result(result, job.metrics)


class MotionTask(TaskScorer):
    """Reference motion statistics for the motion-difficulty analysis (paper Eq. 5-6, Fig. 11).

    Not a model evaluation: for every clip it stores U_s (mean absolute inter-frame alpha
    change) and V_s (mean centroid displacement) of the *reference* matte as rows of model
    :data:`REFERENCE_MODEL`. D_motion is a percentile rank over the clips analysed, so it is
    computed by the report from these stored rows (``hugvis evaluate motion --dataset D``).
    """

    name = "motion"
    metric_module = "hug_vis_dataset.metrics.matting"
    metrics = ("motion_u", "motion_v")
    reference_only = True

    def reference(self, record) -> dict[str, str]:
        return {"alpha": str(record.alpha_matte_path)}

    def availability(self) -> dict[str, str]:
        return {m: "" for m in self.metrics}

    def index_from_references(self, refs, predictions) -> PredictionIndex:
        index = PredictionIndex()
        for cid in refs.clip_ids():
            index.found[cid] = ["reference"]  # the reference alpha is the only input
        return index

    def score_values(self, job: ClipJob):
        from .references import iter_reference_alpha

        lib = self.library()
        chunk = int(job.options.get("chunk_frames", 32))
        ref = job.reference["alpha"]
        u, v = lib.motion_stats(iter_reference_alpha(ref, chunk) if is_row_locator(ref) else ref, chunk)
        return {"motion_u": float(u), "motion_v": float(v)}, []


def _split_clip_result(result: Mapping, metrics: "tuple[str, ...]") -> "tuple[dict[str, float], list[dict]]":
    """Per-clip means and per-frame rows from a matting library result.

    Accepts ``{"per_clip": {m: v}, "per_frame": {m: array}}`` or flat ``{m: array}`` /
    ``{m: value}`` layouts; dtSSD per-frame values are indexed from frame 1 (the first frame has
    no predecessor).
    """
    import numpy as np

    per_clip = dict(result.get("clip", result.get("per_clip", {})))
    per_frame = dict(result.get("per_frame", result.get("frames", {})))
    for metric in metrics:
        value = result.get(metric)
        if value is None:
            continue
        arr = np.asarray(value, dtype=np.float64)
        if arr.ndim == 0:
            per_clip.setdefault(metric, float(arr))
        else:
            per_frame.setdefault(metric, arr)
    frames = []
    for metric in metrics:
        if metric not in per_frame:
            continue
        arr = np.asarray(per_frame[metric], dtype=np.float64).ravel()
        if metric not in per_clip:
            per_clip[metric] = float(arr.mean()) if arr.size else math.nan
        offset = 1 if metric == "dtssd" else 0
        frames.extend({"metric": metric, "frame": i + offset, "value": float(v)} for i, v in enumerate(arr))
    return {m: float(per_clip[m]) for m in metrics if m in per_clip}, frames


class _GenerationTask(TaskScorer):
    metric_module = "hug_vis_dataset.metrics.generation"
    prediction_suffixes = (".mp4", ".mkv", ".mov")
    same_size = True
    file_kinds = ("video",)

    def reference(self, record) -> dict[str, str]:
        return {"video": str(record.video_path), "audio": str(record.audio_path)}

    def check(self, job: ClipJob) -> None:
        _check_video(job.prediction[0], job.reference["video"], size=self.same_size, what="video")

    def score_values(self, job: ClipJob):
        lib = self.library()
        pred, ref = job.prediction[0], job.reference["video"]
        chunk = int(job.options.get("chunk_frames", 32))
        values: dict[str, float] = {}
        frame_metrics = [m for m in job.metrics if m in ("psnr", "ssim", "lpips")]
        if frame_metrics:
            scores = lib.score_video_pair(pred, ref, frame_metrics, lpips_model=_cached_lpips() if "lpips"
                                          in frame_metrics else None, chunk_frames=chunk)
            values.update({m: float(scores[m]) for m in frame_metrics})
        if "csim" in job.metrics:
            from ..media import iter_video_frames
            from ..models.arcface import ArcFaceEmbedder, SCRFDDetector

            detector, embedder = _cached(SCRFDDetector), _cached(ArcFaceEmbedder)
            # Identity source: the first reference frame (the source portrait of the clip).
            first = next(iter_video_frames(ref, 1))[0]
            source = lib.aligned_face_of(first, detector)
            values["csim"] = float(lib.csim_clip(iter_video_frames(pred, chunk), source, detector, embedder).csim)
        if "sync_c" in job.metrics or "sync_d" in job.metrics:
            sync = lib.syncnet_clip(pred)
            values.update({m: float(sync[m]) for m in ("sync_c", "sync_d") if m in job.metrics})
        return values, []

    def score_set(self, jobs, metrics):
        if "fid" not in metrics:
            return {}
        lib = self.library()
        gen = lib.video_inception_stats([j.prediction[0] for j in jobs])
        from .references import iter_reference_files

        # One temporary file at a time when the references are repo cells.
        ref = lib.video_inception_stats(iter_reference_files([j.reference["video"] for j in jobs], ".mp4"))
        return {"fid": float(lib.fid_from_stats(gen, ref))}


_MODEL_CACHE: dict = {}


def _cached(factory):
    """One instance per process of a model wrapper (weights load once per worker)."""
    if factory not in _MODEL_CACHE:
        _MODEL_CACHE[factory] = factory()
    return _MODEL_CACHE[factory]


def _cached_lpips():
    from ..metrics.generation import load_lpips

    return _cached(load_lpips)


class AudioDrivenTask(_GenerationTask):
    """Audio-driven generation (Table 5): CSIM to the source portrait, Sync-C, Sync-D."""

    name = "audio_driven"
    metrics = ("csim", "sync_c", "sync_d")
    same_size = False


class VisionDrivenTask(_GenerationTask):
    """Vision-driven generation (Table 7): LPIPS, CSIM, PSNR, SSIM per clip; FID per model."""

    name = "vision_driven"
    metrics = ("lpips", "csim", "psnr", "ssim")
    set_metrics = ("fid",)


class VoiceCloningTask(TaskScorer):
    """Voice cloning (Table 9): UTMOS, DNSMOS (OVRL, plus SIG/BAK/P.808), speaker similarity."""

    name = "voice_cloning"
    metric_module = "hug_vis_dataset.metrics.voice"
    metrics = ("utmos", "dnsmos", "dnsmos_sig", "dnsmos_bak", "dnsmos_p808", "speaker_similarity")
    prediction_suffixes = (".wav", ".flac")

    def reference(self, record) -> dict[str, str]:
        return {"audio": str(record.audio_path)}

    def availability(self) -> dict[str, str]:
        out = super().availability()
        # DNSMOS's sub-scores come from the same ONNX files as the headline value.
        for sub in ("dnsmos_sig", "dnsmos_bak", "dnsmos_p808"):
            if out.get("dnsmos"):
                out[sub] = out["dnsmos"]
        return out

    def index_from_references(self, refs, predictions) -> PredictionIndex:
        """The paper's "Real audio" row: each clip's prediction is another recording of the same
        actor (pairing rule of :func:`hug_vis_dataset.metrics.voice.real_audio_pairs`)."""
        if str(predictions) != REAL_AUDIO:
            return super().index_from_references(refs, predictions)
        from types import SimpleNamespace

        lib = self.library()
        records = [SimpleNamespace(cid=cid, clip_id=refs.record(cid).clip_id, audio_path=None)
                   for cid in refs.clip_ids()]
        pairs, _unpaired = lib.real_audio_pairs(records)
        index = PredictionIndex()
        for pair in pairs:  # an unpaired clip stays missing: counted by the coverage report
            partner = ClipId.parse(pair.partner_id)
            index.found[ClipId.parse(pair.clip_id)] = [refs.reference(partner)["audio"]]
        return index

    def _prediction_audio(self, job: ClipJob):
        """A submission file path, or (samples, rate) of a partner recording inside a dataset repo."""
        pred = job.prediction[0]
        if is_row_locator(pred):
            from .references import read_reference_audio

            return read_reference_audio(pred)
        return pred, None

    def check(self, job: ClipJob) -> None:
        from ..media import MediaError, audio_info

        if is_row_locator(job.prediction[0]):
            return  # a recording of the release itself (Real-audio row)
        try:
            frames, rate, _ = audio_info(job.prediction[0])
        except MediaError as err:
            raise SubmissionError(f"unreadable prediction: {err}") from None
        want = int(job.expected.get("sample_rate") or 0)
        if want and rate != want:
            raise SubmissionError(f"wrong sample rate: prediction is {rate} Hz, the release's clips are {want} Hz")
        if frames == 0:
            raise SubmissionError("empty audio: the prediction has no samples")

    def score_values(self, job: ClipJob):
        lib = self.library()
        values: dict[str, float] = {}
        ref = job.reference["audio"]
        pred, pred_rate = self._prediction_audio(job)
        if any(m.startswith("dnsmos") for m in job.metrics):
            scores = lib.dnsmos(pred, pred_rate)
            values.update({m: float(scores[m]) for m in job.metrics if m.startswith("dnsmos") and m in scores})
        if "speaker_similarity" in job.metrics:
            from .references import read_reference_audio

            # Decoded as media.read_audio does, from the release file or the repo cell's bytes.
            ref_audio, ref_rate = read_reference_audio(ref)
            values["speaker_similarity"] = float(lib.speaker_similarity(pred, ref_audio, prediction_rate=pred_rate,
                                                                        reference_rate=ref_rate))
        if "utmos" in job.metrics:
            values["utmos"] = float(lib.utmos(pred, pred_rate))
        return values, []


class EmotionTask(TaskScorer):
    """Emotion recognition (Table 4): per clip and input setting, 1.0 when the parsed answer
    names the clip's instructed emotion, else 0.0 (unparsed answers count as wrong and carry
    the note ``unparsed answer`` in ``error``)."""

    name = "emotion"
    metric_module = "hug_vis_dataset.metrics.emotion"
    metrics = ("emotion_accuracy",)
    predictions_file = "predictions.jsonl"

    def reference(self, record) -> dict[str, str]:
        return {}

    def index_predictions(self, pred_dir: "str | Path") -> PredictionIndex:
        pred_dir = Path(pred_dir)
        path = pred_dir / self.predictions_file if pred_dir.is_dir() else pred_dir
        if not path.is_file():
            raise FileNotFoundError(f"no {self.predictions_file} in {pred_dir}")
        lib = self.library()
        index = PredictionIndex()
        with open(path, encoding="utf-8") as handle:
            for lineno, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                where = f"{path.name}:{lineno}"
                try:
                    record = json.loads(line)
                    cid = ClipId.parse(record["clip_id"])
                    answer = record["answer"]
                except (json.JSONDecodeError, KeyError, TypeError, ClipIdError) as err:
                    index.unmatched.append((where, f"{type(err).__name__}: {err}"))
                    continue
                setting = lib.normalize_input_setting(record.get("input_setting") or "unknown")
                index.found.setdefault(cid, [where])
                index.payload.setdefault(cid, []).append((setting, "" if answer is None else str(answer), where))
        index.duplicate_keys = {}
        for cid, answers in index.payload.items():
            by_setting: dict[str, list[str]] = {}
            for setting, _, where in answers:
                by_setting.setdefault(setting, []).append(where)
            dup = [w for ws in by_setting.values() if len(ws) > 1 for w in ws]
            if dup:
                index.duplicate_keys[cid] = dup
        return index

    def settings(self, index: PredictionIndex) -> list[str]:
        lib = self.library()
        return sorted({s for answers in index.payload.values() for s, _, _ in answers},
                      key=lib.input_setting_sort_key)

    def score(self, job: ClipJob) -> ClipOutcome:
        lib = self.library()
        cid = ClipId.parse(job.clip_id)
        answers: dict[str, list[tuple[str, str]]] = {}
        for setting, answer, where in job.payload or ():
            answers.setdefault(setting, []).append((answer, where))
        rows: list[dict] = []
        for setting in job.options.get("settings", ()):
            model = f"{job.model}{EMOTION_MODEL_SEP}{setting}"
            given = answers.get(setting, [])
            if not given:
                rows += failed_rows(job, f"missing prediction for input setting {setting!r}", model=model)
            elif len(given) > 1:
                rows += failed_rows(job, "duplicate predictions: " + ", ".join(w for _, w in given), model=model)
            else:
                parsed = lib.parse_answer(given[0][0])
                note = "" if parsed is not None else "unparsed answer"
                rows += _rows(job, {"emotion_accuracy": float(parsed == cid.emotion)}, model=model, error=note,
                              status=STATUS_OK)
        return ClipOutcome(job.clip_id, rows)


TASKS: dict[str, TaskScorer] = {
    t.name: t for t in (MattingTask(), AudioDrivenTask(), VisionDrivenTask(), VoiceCloningTask(), EmotionTask(),
                        MotionTask())
}


def get_task(name: str) -> TaskScorer:
    """The scorer of a task by name."""
    try:
        return TASKS[name]
    except KeyError:
        raise ValueError(f"unknown task {name!r}; choose one of {', '.join(sorted(TASKS))}") from None


def score_job(job: ClipJob) -> ClipOutcome:
    """Score one clip (top-level so process pools and Ray can ship it)."""
    return get_task(job.task).score(job)


def split_emotion_model(model: str) -> tuple[str, str]:
    """``"qwen | Video + Text"`` -> ``("qwen", "Video + Text")``; other models -> ``(model, "")``.

    Example:
        >>> split_emotion_model("m | Audio")
        ('m', 'Audio')
    """
    name, sep, setting = model.partition(EMOTION_MODEL_SEP)
    return (name, setting) if sep else (model, "")

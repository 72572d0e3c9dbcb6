"""The per-clip viewer: one stored run's clips worst-first by a metric, and one clip's model output
beside its reference at the same frame.

What "output beside reference" is per task:

* matting: the reference frame with the reference matte overlaid, the same frame with the model's
  matte overlaid, and the error map ``|predicted - reference|``; plus the per-frame curve of the
  metric (``frames.parquet``) where the metric has per-frame values;
* audio- and vision-driven generation: the generated frame beside the reference video's frame;
* voice cloning: both recordings (the reference and the generated one) as audio players, no frames;
* emotion: one row per (clip, input setting) with the setting named, correctness in the table's %,
  and per setting the model's answer and the label parsed from it, beside the clip's emotion; no frames;
* reference motion (U_s, V_s): a property of each clip, not a model's score: the clips largest first and
  the reference frame alone.

A run whose metrics all need weights it did not have has no per-clip values: its clips (the predictions
present) are listed in grid order, named "not scored" with the stored reason, and its outputs are shown
beside the reference all the same. Table 9's Real audio row replays the release's own recordings: its
"output" is the reference recording, and the text says so.

:data:`PANELS` says which panels each task shows (the Space hides the rest, frame slider included).

The model's outputs are read from the predictions folder its ``run.json`` records. An upload scored
in the Space is deleted after scoring, so its clips show the scores and the reference only, and the
text says why.

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"clip_id": ["a", "b", "c"], "metric": "mad", "value": [2.0, 5.0, 1.0], "status": "ok"})
    >>> worst_first_rows(rows, "mad")["clip_id"].tolist()   # MAD: lower is better, so the largest first
    ['b', 'a', 'c']
    >>> rows = pd.DataFrame({"clip_id": ["a", "a", "b"], "model": ["m | Audio", "m | Text", "m | Audio"],
    ...                      "metric": "emotion_accuracy", "value": [1.0, 0.0, 1.0], "status": "ok"})
    >>> worst_first_rows(rows, "emotion_accuracy")[["clip_id", "input_setting"]].values.tolist()
    [['a', 'Text'], ['a', 'Audio'], ['b', 'Audio']]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import catalog
from ..presentation.escaping import markdown_text
from ..presentation.labels import clip_display  # noqa: F401 (the viewer's API: clips as read)
from ..readers.json_files import read_json
from ..datamodel.results import REAL_AUDIO_MODEL, reserved_label

#: The panels each task's view uses: ``images`` (reference / output frames and the frame slider),
#: ``error`` (the matte error map), ``audio`` (the two recordings), ``curve`` (per-frame values).
PANELS: dict[str, frozenset] = {
    "matting": frozenset({"images", "error", "curve"}), "matting_boundary": frozenset({"images", "error", "curve"}),
    "audio_driven": frozenset({"images"}), "vision_driven": frozenset({"images"}),
    "voice_cloning": frozenset({"audio"}), "emotion": frozenset(), "motion": frozenset({"reference"}),
}
#: Panels that show frames (the frame slider is shown with them).
FRAME_PANELS = frozenset({"images", "reference"})
#: Tasks whose rows describe the reference clip itself (no model output, no "worst").
CLIP_PROPERTY_TASKS = frozenset({"motion"})
#: What a run's output is called when it replays the reference recordings (Table 9's Real audio row).
REPLAYS_REFERENCE = ("This row scores the release's own recordings (Table 9's Real audio row): its \"generated\" "
                     "recording of this clip is another recording of the same actor, {partner}, so Speaker Sim. "
                     "compares two recordings of one speaker saying different things; the two players play them.")
#: The Real audio row's text for a clip whose actor has no other recording (it was not scored).
NO_PARTNER = ("This row scores the release's own recordings (Table 9's Real audio row); this clip's actor has no "
              "other recording, so it was not paired and has no score.")
#: Separates a model from its input setting in stored emotion rows (``model | Audio``).
SETTING_SEP = " | "

#: What the viewer shows when a run's outputs are no longer on disk.
NO_OUTPUTS = ("The model's outputs are not on this machine (an uploaded zip is deleted after scoring; a CLI run "
              "keeps them in its predictions folder): the scores and the reference are shown.")


@dataclass
class ClipView:
    """One clip of one run at one frame: images (uint8), audio paths, Markdown text."""

    reference: "np.ndarray | None" = None
    output: "np.ndarray | None" = None
    error: "np.ndarray | None" = None
    reference_audio: "str | None" = None
    output_audio: "str | None" = None
    text: str = ""
    frame: int = 0
    n_frames: int = 1
    curve: Any = None  # DataFrame frame/value, or None
    curve_title: str = ""  # the curve's metric under the board's header (label, arrow, unit)
    notes: list[str] = field(default_factory=list)
    panels: frozenset = frozenset({"images"})  # :data:`PANELS` of the run's task


def run_label(run) -> str:
    """``<task label> / model``: how a run is chosen in the viewer (the task as the catalog names it for people).

    >>> from types import SimpleNamespace as Run
    >>> run_label(Run(task="audio_driven", model="talk_good"))
    'Audio-driven video generation / talk_good'
    >>> run_label(Run(task="voice_cloning", model="real-audio"))
    'Voice cloning / Real audio (reference)'
    """
    return f"{catalog.task(run.task).label} / {reserved_label(run.model)}"


def find_run(runs: Sequence, label: str):
    """The run of a :func:`run_label` (KeyError naming the label when it is not stored)."""
    for run in runs:
        if run_label(run) == label:
            return run
    raise KeyError(f"no stored run {label!r}")


def skipped_reasons(skipped) -> str:
    """A run's skipped metrics in one Markdown phrase: each metric once by its label, its stored reason escaped
    with its command kept as code (``CSIM: needs weights: run `hugvis weights download ...```).

    >>> skipped_reasons({"cer": "skipped: needs weights: run `hugvis weights download w`", "cer_edits": "x"})
    'CER: needs weights: run `hugvis weights download w`'
    """
    from ..presentation.escaping import markdown_code_text
    from ..presentation.labels import skipped_words

    return "; ".join(f"{label}: {markdown_code_text(why)}" for label, why in skipped_words(skipped).items())


def order_words(task: str) -> str:
    """How the viewer orders a run's clips, in words: worst first for a score, largest first for a property of
    the clip (reference motion).

    >>> order_words("matting"), order_words("motion")
    ('worst first', 'largest first')
    """
    return "largest first" if task in CLIP_PROPERTY_TASKS else "worst first"


def unscored_clips(release, run) -> list[str]:
    """The clips of a run with no per-clip value (its metrics were skipped): the release's clips its predictions
    folder still has an output of, in grid order ([] when the folder is gone)."""
    root = predictions_root(run)
    if root is None:
        return []
    present = set()
    for path in root.iterdir():
        name = path.name.split(".", 1)[0] if path.is_file() else path.name
        present.add(name)
    return [str(c) for c in release.clip_ids() if str(c) in present]


def run_metrics(run) -> list[str]:
    """The catalog metrics the run has per-clip values of, in the task's table order first."""
    rows = run.rows
    if rows is None or not len(rows):
        return []
    present = set(rows.loc[rows["status"] == "ok", "metric"])
    order = list(catalog.table_metrics(run.task)) + sorted(present)
    return [m for m in dict.fromkeys(order) if m in present and m in catalog.METRIC_NAMES]


def input_setting(model: Any) -> str:
    """The input setting a stored row's model carries (``m | Audio`` -> ``Audio``; "" when none).

    Example:
        >>> input_setting("emo | Video + Audio"), input_setting("matte_good")
        ('Video + Audio', '')
    """
    return str(model).split(SETTING_SEP, 1)[1] if SETTING_SEP in str(model) else ""


def worst_first_rows(rows, metric: str):
    """One metric's OK per-clip rows ordered worst-first (by the catalog's direction; ties by clip id,
    then input setting); ``input_setting`` is a column where the rows have settings (emotion)."""
    sel = rows[(rows["metric"] == metric) & (rows["status"] == "ok")]
    settings = sel["model"].map(input_setting) if "model" in sel.columns else None
    sel = sel[["clip_id", "value"]].copy()
    if settings is not None and settings.astype(bool).any():
        sel.insert(1, "input_setting", settings)
    higher = catalog.spec(metric).higher_is_better if metric in catalog.METRIC_NAMES else False
    if set(catalog.spec(metric).tasks if metric in catalog.METRIC_NAMES else ()) <= CLIP_PROPERTY_TASKS:
        higher = False  # a property of the clip (reference motion): the largest first, never "worst"
    # Worst first: the smallest value when higher is better, the largest when lower is.
    sel["_key"] = sel["value"] if higher else -sel["value"]
    order = ["_key", "clip_id"] + (["input_setting"] if "input_setting" in sel.columns else [])
    return sel.sort_values(order, kind="mergesort").drop(columns="_key").reset_index(drop=True)


def worst_first(run, metric: str):
    """A run's clips worst-first by ``metric``: ``clip_id`` (and the input setting where rows have one)
    and the value in the board's units (:func:`~hug_vis_dataset.catalog.to_paper_units`) under its header."""
    table = worst_first_rows(run.rows, metric)
    spec = catalog.spec(metric)
    table["value"] = [spec.printed(catalog.to_paper_units(metric, v)) for v in table["value"]]
    return table.rename(columns={"clip_id": "Clip", "input_setting": "Input setting", "value": spec.header})


def clip_scores(rows):
    """An upload's per-clip rows as a reader reads them: one row per clip (and input setting), each metric under
    its board header in the board's units and printing (accuracy in %, not 0/1), and why a clip failed.

    Example:
        >>> import pandas as pd
        >>> rows = pd.DataFrame({"model": "m | Text", "clip_id": ["c1", "c2"], "metric": "emotion_accuracy",
        ...                      "value": [1.0, 0.123456789012345], "status": "ok", "error": ""})
        >>> clip_scores(rows).to_dict("records")
        [{'Clip': 'c1', 'Input setting': 'Text', 'Acc. (%) ↑': '100.00', 'Why failed': ''}, {'Clip': 'c2', 'Input setting': 'Text', 'Acc. (%) ↑': '12.35', 'Why failed': ''}]
    """
    import pandas as pd

    if rows is None or not len(rows):
        return pd.DataFrame()
    frame = rows.copy()
    frame["setting"] = frame["model"].map(input_setting) if "model" in frame.columns else ""
    keys = ["clip_id", "setting"]
    out = frame[keys].drop_duplicates().reset_index(drop=True)
    for metric in [m for m in dict.fromkeys(frame["metric"]) if m in catalog.METRIC_NAMES]:
        spec = catalog.spec(metric)
        part = frame[frame["metric"] == metric]
        shown = {(c, s): (spec.printed(catalog.to_paper_units(metric, v)) if st == "ok" else "failed")
                 for c, s, v, st in zip(part["clip_id"], part["setting"], part["value"], part["status"])}
        out[spec.header] = [shown.get((c, s), "") for c, s in zip(out["clip_id"], out["setting"])]
    errors = frame[frame["status"] != "ok"].groupby(keys)["error"].agg(lambda e: "; ".join(dict.fromkeys(e)))
    out["Why failed"] = [errors.get((c, s), "") for c, s in zip(out["clip_id"], out["setting"])]
    if not out["setting"].astype(bool).any():
        out = out.drop(columns="setting")
    out["clip_id"] = out["clip_id"].map(clip_display)  # a clip as read (Afraid), as the viewer shows it
    return out.rename(columns={"clip_id": "Clip", "setting": "Input setting"})


def curve_with_marker(curve, frame: int):
    """The per-frame curve as two series for the plot: ``value`` and ``current frame`` (a vertical
    segment at ``frame`` spanning the curve's range), so the plot marks where the panels are.

    Example:
        >>> import pandas as pd
        >>> c = curve_with_marker(pd.DataFrame({"frame": [0, 1, 2], "value": [1.0, 3.0, 2.0]}), 1)
        >>> c[c["series"] == "current frame"][["frame", "value"]].values.tolist()
        [[1.0, 1.0], [1.0, 3.0]]
    """
    import pandas as pd

    if curve is None or not len(curve):
        return curve
    low, high = float(curve["value"].min()), float(curve["value"].max())
    marker = pd.DataFrame({"frame": [float(frame)] * 2, "value": [low, high], "series": "current frame"})
    values = curve.assign(frame=curve["frame"].astype(float), series="value")
    return pd.concat([values, marker], ignore_index=True)


def predictions_root(run) -> "Path | None":
    """The predictions folder the run was scored from (``run.json``), when it is still there."""
    try:
        record = read_json(Path(run.folder) / "run.json")  # strict; an InputFileError is a ValueError
    except (OSError, ValueError, TypeError):
        return None
    root = record.get("predictions") if isinstance(record, dict) else None
    return Path(root) if isinstance(root, str) and Path(root).is_dir() else None


#: What the viewer says when a clip was scored over several samples (it shows the first one's media).
SAMPLES_SHOWN = ("Scored over {k} samples (seeds); the media shown are sample {first}'s, the scores the means over the "
                 "samples. Per sample: {values}.")


def clip_entry(root: "Path | None", clip_id: str, suffix: str = "") -> "tuple[Path | None, int]":
    """Where the viewer reads a clip's prediction: ``root/<clip_id><suffix>`` (``suffix`` "" for a frames folder),
    or, for a clip given as several samples (``<clip_id>/sample_<k>``), its lowest-numbered sample; with the number
    of samples (1 for one prediction, 0 when there is none).

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp())
        >>> for name in ("sample_1.mp4", "sample_0.mp4"):
        ...     _ = (root / "c1").mkdir(exist_ok=True), (root / "c1" / name).write_bytes(b"")
        >>> path, k = clip_entry(root, "c1", ".mp4")
        >>> path.name, k, clip_entry(root, "c2", ".mp4")
        ('sample_0.mp4', 2, (None, 0))
    """
    from ..tasks.submission import sample_number

    if root is None:
        return None, 0
    folder = root / clip_id
    samples = {}
    if folder.is_dir():
        for entry in folder.iterdir():
            number = sample_number(entry.name, entry.is_dir())
            if number is not None and (entry.is_dir() or not suffix or entry.suffix.lower() == suffix):
                samples[number] = entry
    if samples:
        return samples[min(samples)], len(samples)
    single = root / f"{clip_id}{suffix}"
    return (single, 1) if (single.is_dir() if not suffix else single.is_file()) else (None, 0)


def sample_values(run, clip_id: str) -> str:
    """``MAD ↓ 27.88 (0), 0.00 (1)``: a clip's per-sample scores of a run scored over several samples ("" otherwise).

    >>> import pandas as pd
    >>> from types import SimpleNamespace
    >>> rows = pd.DataFrame({"clip_id": "c1", "metric": "mad", "status": "ok", "sample": [1, 0], "value": [0.0, 27.9]})
    >>> sample_values(SimpleNamespace(sample_rows=rows), "c1")
    'MAD ↓ (×1e3) 27.90 (sample 0), 0.00 (sample 1)'
    """
    from ..datamodel.results import SAMPLE_COLUMN

    rows = getattr(run, "sample_rows", None)
    if rows is None or not len(rows):
        return ""
    mine = rows[(rows["clip_id"] == clip_id) & (rows["status"] == "ok")].sort_values(["metric", SAMPLE_COLUMN])
    parts = []
    for metric, part in mine.groupby("metric", sort=False):
        if str(metric) in catalog.METRIC_NAMES:
            spec = catalog.spec(str(metric))
            parts.append(f"{spec.header} " + ", ".join(
                f"{spec.printed(catalog.to_paper_units(str(metric), v))} (sample {int(k)})"
                for k, v in zip(part[SAMPLE_COLUMN], part["value"])))
    return "; ".join(parts)


def frame_curve(run, clip_id: str, metric: str):
    """Per-frame values of one clip and metric (``frame``, ``value``) from the run's ``frames.parquet`` (read
    through its declared schema; a stored run keeps only their per-actor sums in memory), or None when not stored.

    Example:
        >>> import pandas as pd, tempfile
        >>> from types import SimpleNamespace
        >>> folder = Path(tempfile.mkdtemp())
        >>> pd.DataFrame({"model": "m", "clip_id": ["a", "a", "b"], "metric": "mad", "frame": [1, 0, 0],
        ...               "value": [2.0, 1.0, 9.0]}).to_parquet(folder / "frames.parquet")
        >>> frame_curve(SimpleNamespace(folder=folder), "a", "mad").values.tolist()
        [[0.0, 1.0], [1.0, 2.0]]
        >>> frame_curve(SimpleNamespace(folder=folder), "a", "mse") is None
        True
    """
    import pyarrow.compute as pc

    from ..readers.parquet_files import read_parquet
    from ..scoring.store import FRAME_SCHEMA

    path = Path(run.folder) / "frames.parquet"
    if not path.is_file():
        return None
    try:
        table = read_parquet(path, FRAME_SCHEMA, ["clip_id", "metric", "frame", "value"])
    except ValueError:  # a damaged file shows no curve; the run's validation names it on the board
        return None
    table = table.filter(pc.and_(pc.equal(table["clip_id"], clip_id), pc.equal(table["metric"], metric)))
    if not table.num_rows:
        return None
    curve = table.select(["frame", "value"]).to_pandas()
    # A run of several samples per clip: the curve of the samples' mean at each frame (the rvm protocol's value).
    return curve.groupby("frame", as_index=False, sort=True)["value"].mean()


def error_map(predicted: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """``|predicted - reference|`` of two uint8 mattes as an RGB image (black = no error, red = 255).

    Example:
        >>> error_map(np.array([[0, 255]], np.uint8), np.array([[0, 0]], np.uint8))[0].tolist()
        [[0, 0, 0], [255, 0, 0]]
    """
    diff = np.abs(predicted.astype(np.int16) - reference.astype(np.int16)).astype(np.uint8)
    out = np.zeros(diff.shape + (3,), np.uint8)
    out[..., 0] = diff
    return out


def clip_view(release, run, clip_id: str, frame: Any = 0, metric: "str | None" = None) -> ClipView:
    """The viewer's panels for one clip of one run at ``frame`` (clamped to the clip)."""
    from ..readers.media import MediaError
    from .inspector import matte_overlay, read_matte_frame, read_video_frame

    record = release.record(clip_id)
    n_frames = max(1, int(round(record.duration * record.fps)))
    index = min(max(int(frame or 0), 0), n_frames - 1)
    panels = PANELS.get(run.task, frozenset({"images"}))
    view = ClipView(frame=index, n_frames=n_frames, panels=panels)
    root = predictions_root(run)
    scores = run.rows[(run.rows["clip_id"] == clip_id) & (run.rows["status"] == "ok")]
    where = f", frame {index} of {n_frames}" if panels & FRAME_PANELS else ""
    lines = [f"**{markdown_text(run_label(run))}**, clip {clip_display(clip_id)}{where}."]
    lines.append("; ".join(_score_text(m, v, model) for m, v, model in zip(scores["metric"], scores["value"],
                                                                            scores["model"])
                           if m in catalog.METRIC_NAMES))
    per_sample = sample_values(run, clip_id)
    if per_sample:
        shown, k = clip_entry(root, clip_id, {"audio_driven": ".mp4", "vision_driven": ".mp4",
                                              "voice_cloning": ".wav"}.get(run.task, ""))
        first = shown.stem.removeprefix("sample_") if shown is not None and k > 1 else "0"
        lines.append(SAMPLES_SHOWN.format(k=run.samples_per_clip, first=first, values=markdown_text(per_sample)))
    if not len(scores):
        reasons = skipped_reasons(run.skipped)
        lines.append("Not scored" + (f": {reasons}." if reasons else ": no metric gave a value."))
    try:
        if run.task in CLIP_PROPERTY_TASKS:
            view.reference = read_video_frame(record.video_path, index)
        elif run.task in ("matting", "matting_boundary"):
            rgb = read_video_frame(record.video_path, index)
            alpha = read_matte_frame(record.alpha_matte_path, index)
            view.reference = matte_overlay(rgb, alpha)
            folder, _ = clip_entry(root, clip_id)
            if folder is not None and folder.is_dir():
                predicted = read_matte_frame(folder, index)
                view.output = matte_overlay(rgb, predicted)
                view.error = error_map(predicted, alpha)
            else:
                view.notes.append(NO_OUTPUTS)
            view.curve = frame_curve(run, clip_id, metric or "mad")
            view.curve_title = catalog.spec(metric or "mad").header
        elif run.task in ("audio_driven", "vision_driven"):
            view.reference = read_video_frame(record.video_path, index)
            video, _ = clip_entry(root, clip_id, ".mp4")
            if video is not None and video.is_file():
                view.output = read_video_frame(video, min(index, _video_frames(video) - 1))
            else:
                view.notes.append(NO_OUTPUTS)
        elif run.task == "voice_cloning":
            view.reference_audio = str(record.audio_path)
            wav, _ = clip_entry(root, clip_id, ".wav")
            view.output_audio = str(wav) if wav is not None and wav.is_file() else None
            if run.model == REAL_AUDIO_MODEL:  # its prediction is the partner recording the row paired the clip with
                partner = real_audio_partner(release, clip_id)
                view.output_audio = str(release.record(partner).audio_path) if partner else None
                view.notes.append(REPLAYS_REFERENCE.format(partner=clip_display(partner)) if partner else NO_PARTNER)
            elif view.output_audio is None:
                view.notes.append(NO_OUTPUTS)
        elif run.task == "emotion":
            lines += _emotion_lines(root, clip_id, record, scores)
    except (MediaError, ValueError, OSError) as err:
        view.notes.append(f"**Could not read a frame:** {err}")
    view.text = "\n\n".join([*lines, *view.notes])
    return view


def real_audio_partner(release, clip_id: str) -> "str | None":
    """The recording the Real audio row scored as ``clip_id``'s prediction: another recording of the same actor, by
    the row's one pairing rule (:func:`hug_vis_dataset.metrics.voice.real_audio_pairs`); None when it has none."""
    from ..metrics.voice import real_audio_pairs

    pairs, _ = real_audio_pairs(list(release))
    return next((p.partner_id for p in pairs if p.clip_id == clip_id), None)


def _video_frames(path: Path) -> int:
    from ..readers.media import iter_video_frames

    return max(1, sum(len(chunk) for chunk in iter_video_frames(path, chunk_frames=32)))


def _score_text(metric: str, value: float, model: Any) -> str:
    """``Acc. (%) (Audio): 100.00``: a clip's score in the board's units, named by its input setting."""
    spec = catalog.spec(metric)
    setting = input_setting(model)
    return f"{spec.header}{f' ({setting})' if setting else ''}: {spec.printed(catalog.to_paper_units(metric, value))}"


def _emotion_lines(root: "Path | None", clip_id: str, record, scores=None) -> list[str]:
    """The model's answers for a clip, one line per input setting: the answer, the label parsed from
    it and whether it is the clip's emotion (the stored score of that setting)."""
    from ..metrics.emotion import normalize_input_setting, parse_answer, read_predictions_jsonl

    lines = [f"Reference emotion: **{record.cid.emotion.value}**."]
    stored = {} if scores is None else {input_setting(m): v for m, v in zip(scores["model"], scores["value"])}
    path = root / "predictions.jsonl" if root is not None else None
    if path is None or not path.is_file():
        lines += [f"- {markdown_text(s)}: {'correct' if v >= 0.5 else 'wrong'}" for s, v in sorted(stored.items())]
        return lines + [NO_OUTPUTS]
    for item in read_predictions_jsonl(path):
        if item.get("clip_id") == clip_id:
            setting = normalize_input_setting(str(item.get("input_setting", "")))  # the stored rows' name
            parsed = parse_answer(item.get("answer"))
            verdict = {True: ": correct", False: ": wrong"}.get(stored[setting] >= 0.5, "") if setting in stored else ""
            lines.append(f"- {markdown_text(setting)}: answer \"{markdown_text(item.get('answer', ''))}\" -> parsed "
                         f"label **{parsed.value if parsed is not None else 'none'}**{verdict}")
    return lines

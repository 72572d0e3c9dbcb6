"""The per-clip viewer: one stored run's clips worst-first by a metric, and one clip's model output
beside its reference at the same frame.

What "output beside reference" is per task:

* matting: the reference frame with the reference matte overlaid, the same frame with the model's
  matte overlaid, and the error map ``|predicted - reference|``; plus the per-frame curve of the
  metric (``frames.parquet``) where the metric has per-frame values;
* audio- and vision-driven generation: the generated frame beside the reference video's frame;
* voice cloning: both recordings (the reference and the generated one);
* emotion: the model's answer and the label parsed from it, beside the clip's emotion.

The model's outputs are read from the predictions folder its ``run.json`` records. An upload scored
in the Space is deleted after scoring, so its clips show the scores and the reference only, and the
text says why.

Example:
    >>> import pandas as pd
    >>> rows = pd.DataFrame({"clip_id": ["a", "b", "c"], "metric": "mad", "value": [2.0, 5.0, 1.0], "status": "ok"})
    >>> worst_first_rows(rows, "mad")["clip_id"].tolist()   # MAD: lower is better, so the largest first
    ['b', 'a', 'c']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import catalog
from ..readers.json_files import read_json

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


def run_label(run) -> str:
    """``task / model``: how a run is chosen in the viewer."""
    return f"{run.task} / {run.model}"


def find_run(runs: Sequence, label: str):
    """The run of a :func:`run_label` (KeyError naming the label when it is not stored)."""
    for run in runs:
        if run_label(run) == label:
            return run
    raise KeyError(f"no stored run {label!r}")


def run_metrics(run) -> list[str]:
    """The catalog metrics the run has per-clip values of, in the task's table order first."""
    rows = run.rows
    if rows is None or not len(rows):
        return []
    present = set(rows.loc[rows["status"] == "ok", "metric"])
    order = list(catalog.table_metrics(run.task)) + sorted(present)
    return [m for m in dict.fromkeys(order) if m in present and m in catalog.METRIC_NAMES]


def worst_first_rows(rows, metric: str):
    """One metric's OK per-clip rows ordered worst-first (by the catalog's direction; ties by clip id)."""
    sel = rows[(rows["metric"] == metric) & (rows["status"] == "ok")][["clip_id", "value"]].copy()
    higher = catalog.spec(metric).higher_is_better if metric in catalog.METRIC_NAMES else False
    # Worst first: the smallest value when higher is better, the largest when lower is.
    sel["_key"] = sel["value"] if higher else -sel["value"]
    return sel.sort_values(["_key", "clip_id"], kind="mergesort").drop(columns="_key").reset_index(drop=True)


def worst_first(run, metric: str):
    """A run's clips worst-first by ``metric``: ``clip_id`` and the value under the board's header."""
    table = worst_first_rows(run.rows, metric)
    spec = catalog.spec(metric)
    table["value"] = [spec.printed(v) for v in table["value"]]
    return table.rename(columns={"clip_id": "Clip", "value": spec.header})


def predictions_root(run) -> "Path | None":
    """The predictions folder the run was scored from (``run.json``), when it is still there."""
    try:
        record = read_json(Path(run.folder) / "run.json")  # strict; an InputFileError is a ValueError
    except (OSError, ValueError, TypeError):
        return None
    root = record.get("predictions") if isinstance(record, dict) else None
    return Path(root) if isinstance(root, str) and Path(root).is_dir() else None


def frame_curve(run, clip_id: str, metric: str):
    """Per-frame values of one clip and metric (``frame``, ``value``), or None when not stored."""
    frames = run.frames
    if frames is None or not len(frames):
        return None
    sel = frames[(frames["clip_id"] == clip_id) & (frames["metric"] == metric)]
    return sel[["frame", "value"]].sort_values("frame").reset_index(drop=True) if len(sel) else None


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
    from ..media import MediaError
    from .inspector import matte_overlay, read_matte_frame, read_video_frame

    record = release.record(clip_id)
    n_frames = max(1, int(round(record.duration * record.fps)))
    index = min(max(int(frame or 0), 0), n_frames - 1)
    view = ClipView(frame=index, n_frames=n_frames)
    root = predictions_root(run)
    scores = run.rows[(run.rows["clip_id"] == clip_id) & (run.rows["status"] == "ok")]
    lines = [f"**{run.task} / {run.model}**, clip `{clip_id}`, frame {index} of {n_frames}."]
    lines.append("; ".join(f"{catalog.spec(m).header}: {catalog.spec(m).printed(v)}"
                           for m, v in zip(scores["metric"], scores["value"]) if m in catalog.METRIC_NAMES))
    try:
        if run.task in ("matting", "matting_boundary"):
            rgb = read_video_frame(record.video_path, index)
            alpha = read_matte_frame(record.alpha_matte_path, index)
            view.reference = matte_overlay(rgb, alpha)
            folder = root / clip_id if root is not None else None
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
            video = root / f"{clip_id}.mp4" if root is not None else None
            if video is not None and video.is_file():
                view.output = read_video_frame(video, min(index, _video_frames(video) - 1))
            else:
                view.notes.append(NO_OUTPUTS)
        elif run.task == "voice_cloning":
            view.reference_audio = str(record.audio_path)
            wav = root / f"{clip_id}.wav" if root is not None else None
            view.output_audio = str(wav) if wav is not None and wav.is_file() else None
            if view.output_audio is None:
                view.notes.append(NO_OUTPUTS)
        elif run.task == "emotion":
            lines += _emotion_lines(root, clip_id, record)
    except (MediaError, ValueError, OSError) as err:
        view.notes.append(f"**Could not read a frame:** {err}")
    view.text = "\n\n".join([*lines, *view.notes])
    return view


def _video_frames(path: Path) -> int:
    from ..media import iter_video_frames

    return max(1, sum(len(chunk) for chunk in iter_video_frames(path, chunk_frames=32)))


def _emotion_lines(root: "Path | None", clip_id: str, record) -> list[str]:
    """The model's answers for a clip (every input setting) and the label parsed from each."""
    from ..escaping import markdown_text
    from ..metrics.emotion import parse_answer, read_predictions_jsonl

    path = root / "predictions.jsonl" if root is not None else None
    if path is None or not path.is_file():
        return [NO_OUTPUTS]
    lines = [f"Reference emotion: **{record.cid.emotion.value}**."]
    for item in read_predictions_jsonl(path):
        if item.get("clip_id") == clip_id:
            parsed = parse_answer(item.get("answer"))
            lines.append(f"- {markdown_text(item.get('input_setting', ''))}: answer "
                         f"\"{markdown_text(item.get('answer', ''))}\" -> parsed label "
                         f"**{parsed.value if parsed is not None else 'none'}**")
    return lines

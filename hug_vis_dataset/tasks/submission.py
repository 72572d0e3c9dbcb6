"""Submission folders: which entry predicts which clip (by the clip id in its name, never by sorted
order), and the header checks a prediction must pass before it is scored.

The layout of each task is a row of :data:`hug_vis_dataset.catalog.TASKS` (``prediction``,
``prediction_suffixes``, ``example_tree``). Clip ids may use any emotion spelling the grid accepts
(``fearful`` or ``afraid``). Files named ``README*``, ``*.md``, ``*.json``, ``*.txt``, ``*.yaml``
and hidden files are ignored; any other entry that does not name a clip is reported as
*unmatched*, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

from ..datamodel.grid import ClipId, ClipIdError

IGNORED_SUFFIXES = (".md", ".json", ".txt", ".yaml", ".yml")


class SubmissionError(ValueError):
    """A prediction exists but cannot be scored (wrong size, frame count, rate, unreadable)."""


@dataclass
class PredictionIndex:
    """What a submission folder holds, by clip.

    Attributes:
        found: clip -> the names of every entry predicting it (two or more: duplicate).
        unmatched: entries naming no clip, with the reason.
        payload: task data per clip (emotion answers).
        duplicate_keys: clip -> entries when duplicates are defined otherwise (emotion: per setting).
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


def index_entries(entries: Iterable[tuple[str, bool, str]], suffixes: tuple[str, ...], dirs: bool) -> PredictionIndex:
    """Map entries ``(name, is a folder, where)`` of a submission's top level to the clips their
    names give: the rules of :func:`index_folder`, on names alone (the Space checks a zip's
    member names with them before extracting anything).

    Example:
        >>> index = index_entries([("actor_0001_sad_action_01_script_001", True, "a"), ("notes.txt", False, "b"),
        ...                        ("x.wav", False, "c")], (".mp4",), dirs=True)
        >>> [str(c) for c in index.found], index.unmatched
        (['actor_0001_sad_action_01_script_001'], [('x.wav', 'unexpected file type, expected .mp4')])
    """
    index = PredictionIndex()
    for name, is_dir, where in entries:
        suffix = PurePosixPath(name).suffix.lower()
        if name.startswith(".") or name.upper().startswith("README") or (not is_dir and suffix in IGNORED_SUFFIXES):
            continue
        if is_dir and not dirs:
            index.unmatched.append((name, "a folder, expected one file per clip"))
            continue
        if not is_dir and suffix not in suffixes:
            index.unmatched.append((name, f"unexpected file type, expected {'/'.join(suffixes)}"))
            continue
        try:
            cid = ClipId.parse(name if is_dir else PurePosixPath(name).stem)
        except ClipIdError as err:
            index.unmatched.append((name, str(err)))
            continue
        index.found.setdefault(cid, []).append(where)
    return index


def index_folder(pred_dir: "str | Path", suffixes: tuple[str, ...], dirs: bool) -> PredictionIndex:
    """Map every entry of a submission folder to the clip its name gives.

    Args:
        pred_dir: the submission folder.
        suffixes: accepted file suffixes of one clip's prediction.
        dirs: a folder named by a clip id is a prediction (PNG frames).
    """
    pred_dir = Path(pred_dir)
    if not pred_dir.is_dir():
        raise FileNotFoundError(f"predictions folder {pred_dir} does not exist")
    return index_entries(((e.name, e.is_dir(), str(e)) for e in sorted(pred_dir.iterdir())), suffixes, dirs)


def check_video(pred: str, ref: str, size: bool, what: str, fps: "float | None" = None,
                decode_first: bool = True) -> None:
    """Same frame count (and size when ``size``, and rate when ``fps``) as the reference, and a first
    frame that decodes; :class:`SubmissionError` otherwise. Nothing is decoded beyond the first
    frame: counts come from the container (:func:`hug_vis_dataset.readers.media.video_info`).

    ``decode_first=False`` skips the first frame's decode, for a caller that decodes the clip right
    after and fails it there (the evaluate modules: at 1080p that decode was 110 ms of a module call).
    """
    from ..readers.media import MediaError, video_info
    from ..references import reference_alpha_info as frames_and_size

    rate = None
    try:
        if Path(pred).is_dir():
            n_pred, w_pred, h_pred = frames_and_size(pred)
        else:
            info = video_info(pred, decode_first=decode_first)
            n_pred, w_pred, h_pred, rate = info.frames, info.width, info.height, info.fps
    except MediaError as err:
        raise SubmissionError(f"unreadable prediction: {err}") from None
    n_ref, w_ref, h_ref = frames_and_size(ref)
    if size and (w_pred, h_pred) != (w_ref, h_ref):
        raise SubmissionError(f"wrong resolution: prediction is {w_pred}x{h_pred}, reference {what} is {w_ref}x{h_ref}")
    if n_pred != n_ref:
        raise SubmissionError(f"wrong frame count: prediction has {n_pred} frames, reference {what} has {n_ref}")
    # Same count at another rate is another duration: frame i would not be the reference's instant i.
    if fps and rate and abs(rate - float(fps)) > 1e-3 * float(fps):
        raise SubmissionError(f"wrong frame rate: prediction is {rate:g} fps, the release's clips are {float(fps):g} fps")

"""Submission folders: which entry predicts which clip (by the clip id in its name, never by sorted
order), and the header checks a prediction must pass before it is scored.

The layout of each task is a row of :data:`hug_vis_dataset.catalog.TASKS` (``prediction``,
``prediction_suffixes``, ``example_tree``). Clip ids may use any emotion spelling the grid accepts
(``fearful`` or ``afraid``). Files named ``README*``, ``*.md``, ``*.json``, ``*.txt``, ``*.yaml``
and hidden files are ignored; any other entry that does not name a clip is reported as
*unmatched*, with the reason.

**Several samples per clip** (tasks whose ``TaskSpec.samples`` is set: :func:`samples_layout` words it):
a folder named by the clip whose entries are ``sample_<k>`` predictions (``sample_0.mp4``, ``sample_1.mp4``, ...;
for matting also ``sample_<k>/`` folders of PNG frames). A folder is told apart from a matting frames folder by its
entries (any ``sample_<k>`` entry makes it a samples folder), never by position; an entry of a samples folder that
is not a sample is unmatched, and one sample number given twice makes the clip a duplicate (it fails, naming both).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Collection, Iterable

from ..datamodel.grid import ClipId, ClipIdError

IGNORED_SUFFIXES = (".md", ".json", ".txt", ".yaml", ".yml")
#: A sample's name in a samples folder (its suffix aside): ``sample_<k>``, k a non-negative integer.
SAMPLE_NAME = re.compile(r"sample_([0-9]{1,6})")


def sample_number(name: str, is_dir: bool) -> "int | None":
    """The sample an entry of a samples folder is (``sample_<k>.<ext>``, or a ``sample_<k>`` folder), else None.

    >>> sample_number("sample_01.mp4", False), sample_number("sample_2", True), sample_number("take.mp4", False)
    (1, 2, None)
    """
    match = SAMPLE_NAME.fullmatch(name if is_dir else PurePosixPath(name).stem)
    return int(match.group(1)) if match else None


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
        samples: clip -> {sample number: entry} for a clip given as a samples folder (its ``found`` entry is the
            folder, so coverage, duplicates and the clip's fingerprint see one prediction holding every sample).
    """

    found: dict[ClipId, list[str]] = field(default_factory=dict)
    unmatched: list[tuple[str, str]] = field(default_factory=list)
    payload: dict[ClipId, Any] = field(default_factory=dict)
    duplicate_keys: "dict[ClipId, list[str]] | None" = None
    samples: dict[ClipId, dict[int, str]] = field(default_factory=dict)

    def duplicates(self) -> dict[ClipId, list[str]]:
        """Clips predicted more than once (for emotion: twice for one input setting)."""
        if self.duplicate_keys is not None:
            return self.duplicate_keys
        return {c: v for c, v in self.found.items() if len(v) > 1}


def _ignored(name: str, is_dir: bool) -> bool:
    """Names a submission may hold beside its predictions (notes, hidden files)."""
    return (name.startswith(".") or name.upper().startswith("README")
            or (not is_dir and PurePosixPath(name).suffix.lower() in IGNORED_SUFFIXES))


def index_entries(entries: Iterable[tuple[str, bool, str]], suffixes: tuple[str, ...], dirs: bool,
                  samples: "bool | Collection[str]" = False) -> PredictionIndex:
    """Map entries ``(name, is a folder, where)`` of a submission's top level to the clips their
    names give: the rules of :func:`index_folder`, on names alone (the Space checks a zip's
    member names with them before extracting anything).

    Example:
        >>> index = index_entries([("actor_0001_sad_action_01_script_001", True, "a"), ("notes.txt", False, "b"),
        ...                        ("x.wav", False, "c")], (".mp4",), dirs=True)
        >>> [str(c) for c in index.found], index.unmatched
        (['actor_0001_sad_action_01_script_001'], [('x.wav', 'unexpected file type, expected .mp4')])

    ``samples``: a folder named by a clip may be a samples folder (``True``: told apart by :func:`index_folder`, which
    sees its entries; a collection: the folders known to hold ``sample_<k>`` entries, :func:`sample_folders`).
    """
    index = PredictionIndex()
    for name, is_dir, where in entries:
        suffix = PurePosixPath(name).suffix.lower()
        if _ignored(name, is_dir):
            continue
        if is_dir and not (dirs or samples is True or (not isinstance(samples, bool) and name in samples)):
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


def samples_layout(suffix: str, dirs: bool) -> str:
    """The samples layout in words, for a task whose predictions end in ``suffix`` (help texts, the Space).

    >>> samples_layout(".wav", False)
    "several samples (seeds) of a clip: <clip_id>/sample_0.wav, <clip_id>/sample_1.wav, ..., each scored as a prediction of the clip; tables average a clip's samples"
    """
    frames = " (or <clip_id>/sample_0/000000.png ...)" if dirs else ""
    return (f"several samples (seeds) of a clip: <clip_id>/sample_0{suffix}, "
            f"<clip_id>/sample_1{suffix}, ...{frames}, each scored as a prediction of the clip; tables average a "
            "clip's samples")


def sample_folders(paths: Iterable[str]) -> set[str]:
    """The top-level folders of a submission, given its files' relative paths (a zip's members, a repo's files),
    that hold a ``sample_<k>`` entry: what :func:`index_entries` accepts as samples folders on names alone.

    >>> sorted(sample_folders(["c1/sample_0.mp4", "c1/sample_1/000000.png", "c2/000000.png", "c3.mp4"]))
    ['c1']
    """
    out = set()
    for path in paths:
        parts = PurePosixPath(path).parts
        if len(parts) > 1 and sample_number(parts[1], is_dir=len(parts) > 2) is not None:
            out.add(parts[0])
    return out


def index_folder(pred_dir: "str | Path", suffixes: tuple[str, ...], dirs: bool, samples: bool = False
                 ) -> PredictionIndex:
    """Map every entry of a submission folder to the clip its name gives.

    Args:
        pred_dir: the submission folder.
        suffixes: accepted file suffixes of one clip's prediction.
        dirs: a folder named by a clip id is a prediction (PNG frames).
        samples: a folder named by a clip id may hold ``sample_<k>`` predictions (module docstring).

    Example:
        >>> import pathlib, tempfile
        >>> root = pathlib.Path(tempfile.mkdtemp())
        >>> clip = root / "actor_0001_sad_action_01_script_001"
        >>> clip.mkdir()
        >>> for name in ("sample_0.wav", "sample_1.wav", "notes.txt", "take2.wav"):
        ...     _ = (clip / name).write_bytes(b"")
        >>> index = index_folder(root, (".wav",), dirs=False, samples=True)
        >>> sorted(next(iter(index.samples.values()))), index.unmatched
        ([0, 1], [('actor_0001_sad_action_01_script_001/take2.wav', 'not a sample: a samples folder holds sample_<k>.wav entries (k = 0, 1, ...)')])
    """
    pred_dir = Path(pred_dir)
    if not pred_dir.is_dir():
        raise FileNotFoundError(f"predictions folder {pred_dir} does not exist")
    index = index_entries(((e.name, e.is_dir(), str(e)) for e in sorted(pred_dir.iterdir())), suffixes, dirs,
                          samples)
    if samples:
        for cid, where in list(index.found.items()):
            for entry in [w for w in where if Path(w).is_dir()]:
                _index_samples(index, cid, Path(entry), suffixes, dirs)
    return index


def _sample_words(suffixes: tuple[str, ...], dirs: bool) -> str:
    """How a sample is named, in the words an unmatched entry's reason uses.

    >>> _sample_words((".wav", ".flac"), False), _sample_words((".mp4", ".mkv"), True)
    ('sample_<k>.wav (or .flac)', 'sample_<k>.mp4 (or .mkv, or a sample_<k>/ folder of PNG frames)')
    """
    others = [f"or {', '.join(suffixes[1:])}"] if len(suffixes) > 1 else []
    others += ["or a sample_<k>/ folder of PNG frames"] if dirs else []
    return f"sample_<k>{suffixes[0]}" + (f" ({', '.join(others)})" if others else "")


def _index_samples(index: PredictionIndex, cid: ClipId, folder: Path, suffixes: tuple[str, ...], dirs: bool) -> None:
    """Read one clip-named folder: a samples folder (any ``sample_<k>`` entry) records its samples; otherwise it is
    a frames folder (``dirs``) or, where the task takes files only, unmatched."""
    members = [(e.name, e.is_dir(), str(e)) for e in sorted(folder.iterdir()) if not _ignored(e.name, e.is_dir())]
    named = [(sample_number(name, is_dir), name, is_dir, where) for name, is_dir, where in members]
    if all(number is None for number, *_ in named):
        if not dirs:
            index.found[cid].remove(str(folder))
            if not index.found[cid]:
                del index.found[cid]
            index.unmatched.append((folder.name, f"a folder, expected one file per clip, or {_sample_words(suffixes, dirs)} "
                                                 "files (several samples of the clip)"))
        return
    by_number: dict[int, str] = {}
    for number, name, is_dir, where in named:
        suffix_ok = (dirs and is_dir) or (not is_dir and PurePosixPath(name).suffix.lower() in suffixes)
        if number is None or not suffix_ok:
            index.unmatched.append((f"{folder.name}/{name}", f"not a sample: a samples folder holds "
                                    f"{_sample_words(suffixes, dirs)} entries (k = 0, 1, ...)"))
            continue
        if number in by_number:  # sample_1.mp4 and sample_01.mkv: which one? neither (the clip fails as a duplicate)
            index.found[cid].append(where)
            continue
        by_number[number] = where
    if by_number:
        index.samples[cid] = dict(sorted(by_number.items()))
    else:  # only entries that are not samples: nothing predicts the clip
        index.found[cid].remove(str(folder))
        if not index.found[cid]:
            del index.found[cid]


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

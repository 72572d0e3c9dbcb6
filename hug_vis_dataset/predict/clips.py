"""The clips a prediction run iterates, with everything a task feeds a model.

Clips come from the scoring references (:mod:`hug_vis_dataset.references`), so
``hugvis predict --dataset X`` accepts exactly what ``hugvis evaluate --dataset X`` accepts: a
release tree, a dataset repo folder built by ``hugvis build``, or a Hub id. Media stay references
(a file path, or a row locator into a repo shard) until a task reads them with the reference
readers (:func:`~hug_vis_dataset.references.reference_file`,
:func:`~hug_vis_dataset.references.read_reference_audio`, ...), one clip at a time.

Example:
    >>> import tempfile
    >>> from hug_vis_dataset.synth import example_release
    >>> root = example_release(tempfile.mkdtemp(), emotions=["Sad"], size=(32, 18))
    >>> source = open_clip_source(root, "emotion")
    >>> clip = next(source.clips())
    >>> clip.clip_id, sorted(clip.media), clip.text["transcript"][:5]
    ('actor_0001_sad_action_01_script_001', ['alpha', 'audio', 'portrait', 'video'], '我盼望的一')
    >>> reference_frame_count(clip)
    6
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping

from ..datamodel.grid import ClipId
from ..references import (
    METADATA_COLUMNS,
    ReferenceClip,
    ReferenceSource,
    ReleaseSource,
    RepoSource,
    RowLocator,
    TASK_TEXTS,
    iter_columns,
    open_reference_source,
    reference_file,
)

#: Media of the task's repo config that a prediction needs beyond the scoring references
#: (``references.TASK_COLUMNS`` lists only what scoring reads; emotion scoring reads no media).
EXTRA_REPO_MEDIA: dict[str, dict[str, str]] = {"emotion": {"video": "video", "audio": "audio"}}
#: Text columns of each task's repo config, by the release CSV name they correspond to. The
#: voice-cloning config calls the assigned prompt ``target_text`` (hub/schema.py).
REPO_TEXT_COLUMNS: dict[str, dict[str, str]] = {
    "emotion": {"transcript": "transcript", "asr_transcript": "asr_transcript"},
    "audio_driven": {"transcript": "transcript"},
    "voice_cloning": {"transcript": "target_text", "asr_transcript": "asr_transcript"},
}


@dataclass(frozen=True, kw_only=True)
class ClipInputs(ReferenceClip):
    """One clip of a prediction run: the reference clip's recorded properties plus its inputs.

    Attributes:
        cid, clip_id, width, height, fps, sample_rate, num_frames: as in
            :class:`~hug_vis_dataset.references.sources.ReferenceClip` (``clip_id`` as the dataset
            spells it; None: not recorded).
        media: kind (``video``, ``audio``, ``portrait``, ``alpha``) -> file path or repo row
            locator; read with the readers of :mod:`hug_vis_dataset.references`.
        text: ``transcript`` (the assigned prompt the actor speaks) and ``asr_transcript`` when
            the dataset has them.
    """

    media: Mapping[str, str]
    text: Mapping[str, str] = field(default_factory=dict)


class ClipSource:
    """The clips of one task from a reference source, in grid order.

    Args:
        references: an opened source (release tree or dataset repo).
        task: the task whose clips and media are listed.
    """

    def __init__(self, references: ReferenceSource, task: str):
        self.references = references
        self.task = task
        self._text: dict[ClipId, dict[str, str]] = {}
        if isinstance(references, RepoSource):
            columns = REPO_TEXT_COLUMNS.get(task, {})
            if columns:
                wanted = ("clip_id",) + tuple(columns.values())
                for values in iter_columns(references.shards(references.config), wanted):
                    text = {name: values[col] for name, col in columns.items() if values.get(col) is not None}
                    self._text[ClipId.parse(values["clip_id"])] = text
        elif isinstance(references, ReleaseSource):
            # Every media kind of the release, whatever the task lists for scoring.
            self._all_media = ReleaseSource(references.root, None)

    def __len__(self) -> int:
        return len(self.references.clip_ids())

    def fingerprint(self) -> dict:
        return self.references.fingerprint()

    def clips(self, limit: "int | None" = None) -> Iterator[ClipInputs]:
        """The task's clips in grid order (the first ``limit`` when given)."""
        ids = self.references.clip_ids()
        for cid in ids[:limit] if limit is not None else ids:
            yield self.clip(cid)

    def clip(self, cid: ClipId) -> ClipInputs:
        record = self.references.record(cid)
        props = {k: getattr(record, k, None) for k in METADATA_COLUMNS}
        if isinstance(self.references, ReleaseSource):
            media = self._all_media.reference(cid)
            text = {"transcript": record.transcript, "asr_transcript": record.asr_transcript}
        else:
            # the media of the clip (the target text, a text reference of scoring, is in ``text``)
            media = {k: v for k, v in self.references.reference(cid).items() if k not in TASK_TEXTS.get(self.task, {})}
            media.update(_repo_locators(self.references, cid, EXTRA_REPO_MEDIA.get(self.task, {})))
            text = self._text.get(cid, {})
        return ClipInputs(cid=cid, clip_id=record.clip_id, media=media, text=text, **props)


def _repo_locators(source: RepoSource, cid: ClipId, columns: Mapping[str, str]) -> dict[str, str]:
    """Row locators of further media columns of the clip's row in the task's config."""
    if not columns:
        return {}
    shard, row, clip = source._rows[cid]  # the clip's row, as RepoSource.reference locates it
    return {kind: RowLocator(str(Path(shard).resolve()), row, column, clip).to_ref()
            for kind, column in columns.items()}


def open_clip_source(dataset: "str | Path", task: str, revision: "str | None" = None) -> ClipSource:
    """The clips of ``task`` in ``dataset`` (release tree, repo folder or Hub id).

    Raises:
        hug_vis_dataset.references.DatasetSourceError: ``dataset`` is none of these.
    """
    return ClipSource(open_reference_source(dataset, task, revision), task)


def reference_frame_count(clip: ClipInputs) -> int:
    """Frames of the clip's video: the recorded count, else counted by decoding the video."""
    if clip.num_frames:
        return int(clip.num_frames)
    from ..readers.media import video_info

    with reference_file(clip.media["video"], ".mp4") as path:
        return video_info(path).frames


def reference_fps(clip: ClipInputs) -> float:
    """Frame rate of the clip's video: the recorded one, else the video header's."""
    if clip.fps:
        return float(clip.fps)
    from ..readers.media import video_info

    with reference_file(clip.media["video"], ".mp4") as path:
        return video_info(path, count_frames=False).fps

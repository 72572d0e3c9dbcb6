"""The human-motion rows of one clip in the generation task's one decode (``catalog.PER_TRACK`` rows).

Every decoded frame of the generated video (and of the reference video, when a row compares with it) goes
once through MediaPipe's landmark networks (:class:`~hug_vis_dataset.models.mediapipe.holistic.VideoLandmarks`:
the parts the requested rows name in ``networks``); the landmarks are collected into
:class:`~hug_vis_dataset.metrics.human_tracks.HumanTrack` objects and each row's function
(:mod:`hug_vis_dataset.metrics.human_motion`) is called on them: ``fn(pred)`` for a reference-free row,
``fn(pred, ref)`` otherwise (``ref`` carries the driving audio's envelope for a row whose
``reference_kind`` is ``audio``). So a new landmark metric is one catalog row and one function.

A row that raises fails alone with its reason; an ok row keeps a remark counting the frames that had
no person, face or hand (``ClipScores.remarks``). The reference's landmarks are the same for every system:
they are kept in the feature cache (``human_landmarks``) and read back instead of recomputed.

Example:
    >>> from hug_vis_dataset.catalog import spec
    >>> parts_of(["lmd", "akd"]), needs_reference_video(["mouth_audio_offset"])
    (('human_pose', 'human_face'), False)
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

import numpy as np

from .. import catalog
from ..metrics.human_tracks import HumanTrack, TrackBuilder, speech_envelope
from .dispatch import error_text, setup_errors

#: The order parts run in (hands and face start from the pose).
PARTS = ("human_pose", "human_hands", "human_face")
#: What a row reads most, for its remark: the row's last part.
_PART_WORDS = {"human_pose": ("body", "a person"), "human_hands": ("hands", "a hand"), "human_face": ("face", "a face")}
_ARRAYS = ("body", "visibility", "world", "hands", "hands_world", "face")


def parts_of(metrics: Sequence[str]) -> tuple[str, ...]:
    """The landmark parts the rows need (``MetricSpec.networks``), in :data:`PARTS` order."""
    wanted = {kind for m in metrics for kind in catalog.spec(m).networks}
    return tuple(kind for kind in PARTS if kind in wanted)


def needs_reference_video(metrics: Sequence[str]) -> bool:
    """Some row compares with the reference video's landmarks (not only with the driving audio)."""
    return any(catalog.spec(m).mode != catalog.REFERENCE_FREE and catalog.spec(m).reference_kind != "audio"
               for m in metrics)


def _reference_entry(reference_video: str, models, metrics: Sequence[str], parts: tuple[str, ...]):
    """``(cache, key parts)`` of the reference's landmarks, or ``(None, None)`` (no cache, an injected network)."""
    from ..cache.features import FEATURE_VERSIONS, reference_digest, shared_cache

    cache = shared_cache()
    weights = catalog.weights_of(metrics)
    ids = tuple(models.identity(kind, weights) for kind in parts)
    if cache is None or None in ids:
        return None, None
    return cache, {"reference": reference_digest(reference_video), "extractor": ids, "parts": list(parts),
                   "version": FEATURE_VERSIONS["human_landmarks"]}


def _track_arrays(track: HumanTrack) -> dict[str, np.ndarray]:
    return {**{k: getattr(track, k).astype(np.float32) for k in _ARRAYS}, "fps": np.float64(track.fps),
            "missing": np.array(json.dumps(track.missing, sort_keys=True))}


def _track_from(arrays: Mapping[str, np.ndarray]) -> HumanTrack:
    return HumanTrack(float(arrays["fps"]), missing=json.loads(str(arrays["missing"])),
                      **{k: np.asarray(arrays[k], np.float64) for k in _ARRAYS})


def _remark(track: HumanTrack, part: str, who: str) -> str:
    """``"10 of 180 generated frames without a person (no person detected: 10)"``, or "" when none is missing."""
    key, thing = _PART_WORDS[part]
    found = track.found(key)
    total = found.size
    missing = int(total - found.sum())
    if not missing:
        return ""
    unit = "frame-hands" if key == "hands" else "frames"
    sources = ("left hand", "right hand") if key == "hands" else (key,)
    reasons = "; ".join(f"{why}: {count}" for source in sources
                        for why, count in sorted(track.missing.get(source, {}).items()))
    return f"{missing} of {total} {who} {unit} without {thing}" + (f" ({reasons})" if reasons else "")


class HumanPass:
    """The per-track rows of one clip: :meth:`start`, :meth:`feed` each decoded piece, :meth:`finish`."""

    def __init__(self, metrics: Sequence[str], models, fps: float, reference: Mapping[str, str],
                 reference_track: "HumanTrack | None", entry) -> None:
        from ..models.mediapipe.holistic import VideoLandmarks

        self.metrics = list(metrics)
        self.parts = parts_of(metrics)
        networks = {kind: models.get(kind) for kind in self.parts}
        self.reference = reference
        self.prediction = VideoLandmarks(networks, fps)
        self.pred_frames = TrackBuilder(fps)
        self.reference_track = reference_track
        self.wants_ref = needs_reference_video(metrics) and reference_track is None and "video" in reference
        self.ref_video = VideoLandmarks(networks, fps) if self.wants_ref else None
        self.ref_frames = TrackBuilder(fps) if self.wants_ref else None
        self.entry = entry

    @classmethod
    def start(cls, prediction: str, reference: Mapping[str, str], metrics: Sequence[str], models,
              options: Mapping[str, Any]) -> "HumanPass | None":
        """None without per-track rows; the networks load now (a missing file raises, before any decode)."""
        if not metrics:
            return None
        from ..readers.media import video_info

        for kind in parts_of(metrics):
            models.get(kind)
        entry, cached = (None, None), None
        if needs_reference_video(metrics) and reference.get("video"):
            entry = _reference_entry(reference["video"], models, metrics, parts_of(metrics))
            if entry[0] is not None:
                found = entry[0].load("human_landmarks", entry[1])
                cached = None if found is None else _track_from(found)
        return cls(metrics, models, video_info(prediction).fps, reference, cached, entry)

    @property
    def wants_reference(self) -> bool:
        """The reference video's frames must be decoded (its landmarks are not cached)."""
        return self.wants_ref

    def feed(self, prediction: np.ndarray, reference: "np.ndarray | None") -> None:
        """One decoded piece: ``prediction`` frames and the reference's frames at the same indices (or None)."""
        for frame in prediction:
            self._add(self.pred_frames, self.prediction.process(frame))
        if self.ref_video is not None and reference is not None:
            for frame in reference:
                self._add(self.ref_frames, self.ref_video.process(frame))

    @staticmethod
    def _add(builder: TrackBuilder, frame) -> None:
        builder.add(reasons=frame.reasons, body=frame.body, visibility=frame.visibility, world=frame.world,
                    hands=frame.hands, hands_world=frame.hands_world, face=frame.face)

    def _reference_track(self) -> "HumanTrack | None":
        if self.reference_track is not None:
            return self.reference_track
        if self.ref_frames is None:
            return None
        track = self.ref_frames.track()
        cache, parts = self.entry
        if cache is not None:
            from ..readers.media import video_info

            try:  # only a whole reference is kept: a shorter prediction stops its decode early
                if track.n == video_info(self.reference["video"]).frames:
                    cache.store("human_landmarks", parts, _track_arrays(track))
            except OSError:
                pass  # not cached: computed again next time
        return track

    def _envelope(self, fps: float, frames: int) -> np.ndarray:
        from ..references import read_reference_audio

        source = self.reference.get("audio")
        if not source:
            raise ValueError("no driving audio was given (the clip's reference audio)")
        samples, rate = read_reference_audio(source)
        return speech_envelope(samples, rate, fps, frames)

    def finish(self):
        """The rows' :class:`~hug_vis_dataset.tasks.base.ClipScores` (values, errors and remarks)."""
        from .base import ClipScores

        scores = ClipScores()
        pred = self.pred_frames.track()
        ref = self._reference_track()
        envelope, envelope_error = None, ""
        if any(catalog.spec(m).reference_kind == "audio" for m in self.metrics):
            try:
                envelope = self._envelope(pred.fps, pred.n)
            except setup_errors():
                raise
            except Exception as err:  # noqa: BLE001 - fails the rows reading the audio, alone
                envelope_error = error_text(err)
        for metric in self.metrics:
            row = catalog.spec(metric)
            try:
                function = catalog.implementation_of(row)
                if row.mode == catalog.REFERENCE_FREE:
                    value = function(pred)
                elif row.reference_kind == "audio":
                    if envelope is None:
                        raise ValueError(envelope_error or "no driving audio was given")
                    value = function(pred, TrackBuilder(pred.fps).track(envelope=envelope))
                else:
                    if ref is None:
                        raise ValueError("no reference video was given")
                    value = function(pred, ref)
            except setup_errors():
                raise
            except Exception as err:  # noqa: BLE001 - this row's failure, with its reason, never a 0
                scores.errors[metric] = error_text(err)
                continue
            scores.values[metric] = float(value)
            part = row.networks[-1]
            remarks = [_remark(pred, part, "generated")]
            if row.mode != catalog.REFERENCE_FREE and ref is not None and row.reference_kind != "audio":
                remarks.append(_remark(ref, part, "reference"))
            remark = "; ".join(r for r in remarks if r)
            if remark:
                scores.remarks[metric] = remark
        return scores

"""Sync-C/D in the audio-driven task's one-decode pass (issue 25).

The pass (:func:`hug_vis_dataset.tasks.generation.video_pass`) records the boxes CSIM's detector
finds on every decoded source frame and gives them to SyncNet
(:func:`hug_vis_dataset.metrics.sync.syncnet_from_detections`); only the crops of the face tracks
are decoded again. Checked on talking-head clips made here (a face of ~130 px, so the task's default
``min_face_size=100`` and ``min_track=50`` keep its track; 30, 24 and 25 fps, an interpolated gap,
two tracks) with a SyncNet built from a random state dict in the official key layout, and a cheap
network of SyncNet's interface where only counts and failures are checked:

* the task's values equal the separate per-metric path (:func:`csim_to_portrait` +
  :func:`syncnet_clip`) exactly, for several chunk sizes;
* the detector runs once per source frame (not once per source frame plus once per 25 fps frame);
* the prediction is decoded twice (pass + crops of a one-track clip), not three times;
* a failing CSIM (no face in the portrait, a detector or embedder error) leaves Sync's value, and a
  failing Sync (no face track, no SyncNet weights) CSIM's;
* detections of the wrong length are refused.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_csim_pipeline import ProjectionEmbedder
from test_sync_pipeline import _TinyNet

from hug_vis_dataset.readers import media
from hug_vis_dataset.metrics.sync import SourceDetections, SyncFailure, syncnet_clip, syncnet_from_detections
from hug_vis_dataset.metrics.sync_timeline import ffmpeg_rate_indices
from hug_vis_dataset.tasks import ModelCache, get_task
from hug_vis_dataset.tasks.generation import csim_to_portrait

BG = np.array([30, 60, 40], np.uint8)
SKIN, EYE, MOUTH = (220, 180, 150), (40, 30, 30), (120, 20, 30)
ALL = ("csim", "sync_c", "sync_d")


class BlobDetector:
    """``.detect`` of the library detectors: the box of everything far from the background colour
    (the face drawn by :func:`talking_clip`), with template landmarks; counts its calls."""

    def __init__(self, broken: "bytes | None" = None):
        self.calls, self.broken = 0, broken

    def detect(self, frame):
        from hug_vis_dataset.models.arcface import landmarks_from_box

        self.calls += 1
        if self.broken is not None and frame.tobytes() == self.broken:
            raise RuntimeError("detector broke on this frame")
        fg = np.abs(frame.astype(np.int16) - BG).sum(-1) > 90
        rows, cols = np.flatnonzero(fg.any(1)), np.flatnonzero(fg.any(0))
        if rows.size == 0:
            return []
        box = (float(cols[0]), float(rows[0]), float(cols[-1] + 1), float(rows[-1] + 1))
        return [(box, landmarks_from_box(box), 1.0)]


class FailingEmbedder(ProjectionEmbedder):
    """Embeds the portrait (first call), then fails."""

    def __init__(self):
        super().__init__()
        self.n = 0

    def __call__(self, faces):
        self.n += 1
        if self.n > 1:
            raise RuntimeError("embedder broke")
        return super().__call__(faces)


def talking_clip(path, fps: float, seconds: float, gaps=(), face=(130, 140), seed=0):
    """A face (skin box, eyes, a mouth opening with the audio's envelope) moving slowly on a plain
    background, with its 16 kHz audio track; no face in the frames of ``gaps`` ([a, b) ranges)."""
    n = int(round(seconds * fps))
    w, h = face
    t = np.arange(n) / fps
    opening = 0.5 + 0.5 * np.sin(2 * np.pi * 2.7 * t + seed)
    frames = np.empty((n, 240, 224, 3), np.uint8)
    frames[:] = BG
    for i in range(n):
        if any(a <= i < b for a, b in gaps):
            continue
        x0 = 40 + int(round(6 * np.sin(2 * np.pi * 0.7 * t[i] + seed)))
        y0 = 50 + int(round(4 * np.cos(2 * np.pi * 0.5 * t[i])))
        frames[i, y0:y0 + h, x0:x0 + w] = SKIN
        for ex in (x0 + w // 5, x0 + w - w // 5 - 20):
            frames[i, y0 + h // 4:y0 + h // 4 + 12, ex:ex + 20] = EYE
        mh = 3 + int(round(0.18 * h * opening[i]))
        frames[i, y0 + 2 * h // 3:y0 + 2 * h // 3 + mh, x0 + w // 3:x0 + 2 * w // 3] = MOUTH
    samples = int(round(n / fps * 16000))
    envelope = np.interp(np.arange(samples) / 16000, t, opening)
    audio = (np.random.default_rng(seed).normal(0, 0.2, samples) * envelope).astype(np.float32)
    media.write_video(path, [frames], fps=fps, audio=audio, sample_rate=16000)
    return str(path)


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    import cv2

    root = tmp_path_factory.mktemp("synconedecode")
    out = {
        "a30": talking_clip(root / "a30.mp4", 30, 2.4, gaps=[(30, 37)], seed=0),  # an interpolated gap
        "b24": talking_clip(root / "b24.mp4", 24, 2.5, seed=1),  # 24 fps: the 25 fps timeline repeats frames
        "c25": talking_clip(root / "c25.mp4", 25, 5.6, gaps=[(55, 86)], seed=2),  # two tracks
        "small": talking_clip(root / "small.mp4", 30, 2.4, face=(60, 64), seed=3),  # too small for SyncNet
    }
    portrait = np.asarray(next(media.iter_video_frames(out["a30"], 1))[0])
    out["portrait"] = str(root / "portrait.png")
    cv2.imwrite(out["portrait"], portrait[..., ::-1])
    out["blank"] = str(root / "blank.png")
    cv2.imwrite(out["blank"], np.broadcast_to(BG[::-1], portrait.shape).copy())
    return out


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    import torch

    from hug_vis_dataset.models.syncnet import build_syncnet, load_syncnet

    torch.manual_seed(0)
    weights = tmp_path_factory.mktemp("syncnetw") / "syncnet_v2.model"
    torch.save(build_syncnet().state_dict(), weights)  # official key layout: netcnnaud.0.weight ...
    return load_syncnet(str(weights))


def models(net, detector=None, embedder=None):
    return ModelCache(overrides={"face_detector": detector or BlobDetector(),
                                 "face_embedder": embedder or ProjectionEmbedder(), "syncnet": net})


def task_scores(clip, portrait, metrics, cache, options):
    return get_task("audio_driven").score_groups(clip, {"video": clip, "audio": clip, "portrait": portrait},
                                                 metrics, cache, options)


def separate(clip, portrait, net, chunk, batch=20):
    """The per-metric path of before: CSIM's decode, then syncnet_clip (its own detection decode)."""
    csim = csim_to_portrait(clip, portrait, models(net), chunk)
    return csim, syncnet_clip(clip, net, BlobDetector(), chunk_frames=chunk, batch=batch)


@pytest.mark.parametrize("name,chunk,batch", [("a30", 7, None), ("b24", 32, 4)])
def test_task_values_equal_the_separate_path(clips, net, name, chunk, batch):
    options = {"chunk_frames": chunk, **({"batch_size": batch} if batch else {})}
    scores, errors = task_scores(clips[name], clips["portrait"], ALL, models(net), options)
    csim, sync = separate(clips[name], clips["portrait"], net, chunk, batch or 20)
    assert errors == {}
    assert scores.values["csim"] == csim.values["csim"]  # bit-identical: same chunks, same detections
    assert scores.notes["frames_no_face"] == csim.notes["frames_no_face"]
    assert (scores.values["sync_c"], scores.values["sync_d"]) == (sync["sync_c"], sync["sync_d"])
    assert scores.notes["sync_offset"] == sync["offset"]
    (track,) = sync["tracks"]
    if name == "a30":  # the clip exercises what it was made for: frames without a detection, interpolated
        assert track["detected"] < track["end"] - track["start"] + 1


def test_values_equal_for_every_chunk_size_and_metric_subset(clips):
    tiny = _TinyNet()
    for name, chunks in (("a30", (3, 32, 200)), ("b24", (5, 64)), ("c25", (13,))):
        for chunk in chunks:
            options = {"chunk_frames": chunk}
            csim, sync = separate(clips[name], clips["portrait"], tiny, chunk)
            scores, errors = task_scores(clips[name], clips["portrait"], ALL, models(tiny), options)
            assert errors == {}
            assert scores.values == {"csim": csim.values["csim"], "sync_c": sync["sync_c"], "sync_d": sync["sync_d"]}
            assert scores.notes["sync_offset"] == sync["offset"]
        alone, errors = task_scores(clips[name], clips["portrait"], ("sync_d",), models(tiny), options)
        assert errors == {} and alone.values == {"sync_d": sync["sync_d"]}
        alone, errors = task_scores(clips[name], clips["portrait"], ("csim",), models(tiny), options)
        assert errors == {} and alone.values == {"csim": csim.values["csim"]}
        assert len(sync["tracks"]) == (2 if name == "c25" else 1) and sync["tracks_failed"] == 0


def test_detector_runs_once_per_source_frame(clips):
    net = _TinyNet()
    for name in ("a30", "b24"):
        n = media.video_info(clips[name]).frames
        keep = ffmpeg_rate_indices(n, media.video_info(clips[name]).fps, 25)
        detector = BlobDetector()
        scores, errors = task_scores(clips[name], clips["portrait"], ALL, models(net, detector), {"chunk_frames": 16})
        assert errors == {}
        assert detector.calls == 1 + n  # the portrait, then each source frame once for CSIM and Sync
        before = BlobDetector()  # the separate path: the portrait, every source frame, every 25 fps frame
        csim_to_portrait(clips[name], clips["portrait"], models(net, before), 16)
        syncnet_clip(clips[name], net, before, chunk_frames=16)
        assert before.calls == 1 + n + len(keep)
        # Sync alone detects the source frames the 25 fps timeline shows, each once
        detector = BlobDetector()
        task_scores(clips[name], clips["portrait"], ("sync_c", "sync_d"), models(net, detector), {})
        assert detector.calls == len(set(keep.tolist())) <= len(keep)
    assert len(set(keep.tolist())) < len(keep)  # b24: a repeated frame was detected once, not twice


def test_prediction_decoded_twice(clips, monkeypatch):
    net = _TinyNet()
    decodes: dict[str, int] = {}
    real = media.iter_video_frames

    def counting(path, chunk_frames=32, gray=False):
        decodes[str(path)] = decodes.get(str(path), 0) + 1
        yield from real(path, chunk_frames, gray)

    monkeypatch.setattr(media, "iter_video_frames", counting)
    clip = clips["a30"]
    scores, errors = task_scores(clip, clips["portrait"], ALL, models(net), {"chunk_frames": 8})
    assert errors == {} and decodes == {clip: 2}  # the pass, the crops of its one track
    decodes.clear()
    separate(clip, clips["portrait"], net, 8)
    assert decodes == {clip: 3}  # before: CSIM, Sync's detection, the crops
    decodes.clear()
    task_scores(clips["c25"], clips["portrait"], ALL, models(net), {"chunk_frames": 8})
    assert decodes == {clips["c25"]: 3}  # two tracks: the pass and one crop decode per track span


def test_a_failing_metric_leaves_the_other(clips):
    net = _TinyNet()
    clip, chunk = clips["a30"], 8
    csim, sync = separate(clip, clips["portrait"], net, chunk)
    options = {"chunk_frames": chunk}
    # no face in the portrait: CSIM fails before decoding, Sync still detects every frame it needs
    scores, errors = task_scores(clip, clips["blank"], ALL, models(net), options)
    assert set(errors) == {"csim"} and "no face detected in the source image" in errors["csim"]
    assert (scores.values["sync_c"], scores.values["sync_d"]) == (sync["sync_c"], sync["sync_d"])
    # the detector fails on source frame 13, which the 25 fps timeline drops: CSIM fails mid-chunk,
    # Sync detects the rest of the chunk and of the video itself
    n = media.video_info(clip).frames
    keep = ffmpeg_rate_indices(n, 30.0, 25)
    assert 13 not in keep
    frame13 = np.concatenate(list(media.iter_video_frames(clip, 32)))[13]
    detector = BlobDetector(broken=frame13.tobytes())
    scores, errors = task_scores(clip, clips["portrait"], ALL, models(net, detector), options)
    assert set(errors) == {"csim"} and "detector broke" in errors["csim"]
    assert (scores.values["sync_c"], scores.values["sync_d"]) == (sync["sync_c"], sync["sync_d"])
    assert detector.calls == 1 + 14 + int(np.isin(np.arange(14, n), keep).sum())
    # the embedder fails after the detector ran on the first chunk
    scores, errors = task_scores(clip, clips["portrait"], ALL, models(net, embedder=FailingEmbedder()), options)
    assert set(errors) == {"csim"} and "embedder broke" in errors["csim"]
    assert (scores.values["sync_c"], scores.values["sync_d"]) == (sync["sync_c"], sync["sync_d"])
    # no face track (the face is too small): Sync fails, CSIM keeps its value
    small_csim = csim_to_portrait(clips["small"], clips["portrait"], models(net), chunk)
    with pytest.raises(SyncFailure):
        syncnet_clip(clips["small"], net, BlobDetector())
    scores, errors = task_scores(clips["small"], clips["portrait"], ALL, models(net), options)
    assert set(errors) == {"sync_c", "sync_d"} and errors["sync_c"].startswith("SyncFailure: ")
    assert "no face track" in errors["sync_d"] and scores.values == {"csim": small_csim.values["csim"]}

    # SyncNet's weights missing: Sync-C/D fail (or, in reraise, stop), CSIM scores
    class NoSyncNet(ModelCache):
        def get(self, kind):
            if kind == "syncnet":
                raise FileNotFoundError("syncnet_v2 weights not found")
            return super().get(kind)

    cache = NoSyncNet(overrides={"face_detector": BlobDetector(), "face_embedder": ProjectionEmbedder()})
    scores, errors = task_scores(clip, clips["portrait"], ALL, cache, options)
    assert set(errors) == {"sync_c", "sync_d"} and "syncnet_v2 weights not found" in errors["sync_c"]
    assert scores.values == {"csim": csim.values["csim"]}
    with pytest.raises(FileNotFoundError):
        get_task("audio_driven").score_groups(clip, {"video": clip, "portrait": clips["portrait"]}, ALL, cache,
                                              options, reraise=(FileNotFoundError,))


def test_detections_of_the_wrong_length_are_refused(clips):
    net = _TinyNet()
    clip = clips["a30"]
    n = media.video_info(clip).frames
    recorder = SourceDetections(clip, BlobDetector())
    for chunk in media.iter_video_frames(clip, 10):
        recorder.feed(chunk)
    boxes = recorder.boxes
    assert len(boxes) == n and sum(b is None for b in boxes) == n - len(set(ffmpeg_rate_indices(n, 30.0, 25)))
    direct = syncnet_clip(clip, net, BlobDetector())
    assert syncnet_from_detections(clip, boxes, net) == direct
    for wrong in (boxes[:-1], boxes + [[]], []):
        with pytest.raises(ValueError, match=f"{len(wrong)} source frame detections for a video of {n} frames"):
            syncnet_from_detections(clip, wrong, net)
    with pytest.raises(ValueError, match=r"no detections for source frames \[0\]"):
        syncnet_from_detections(clip, [None] + boxes[1:], net)

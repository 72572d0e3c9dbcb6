"""Sync-C / Sync-D end to end: face tracks (syncnet_python track_shot / crop_video) and syncnet_clip.

Track functions are checked by hand and against scipy (interp1d, medfilt) and a np.pad
re-derivation of the reference crop. The whole pipeline runs on a synthetic talking video with
its muxed audio track, a SyncNet built from a random state dict in the official key layout
(loaded by path through the weights layer) and an injected head detector; its per-track
distances are recomputed independently from the detector boxes.
"""

from __future__ import annotations

import numpy as np
import pytest
from synth_faces import head_box
from scipy.interpolate import interp1d
from scipy.signal import medfilt

from hug_vis_dataset.models import facetrack as FT


# ----------------------------------------------------------------------------- track functions
def test_box_iou_by_hand():
    assert FT.box_iou((0, 0, 2, 2), (1, 0, 3, 2)) == pytest.approx(2 / 6)
    assert FT.box_iou((0, 0, 2, 2), (0, 0, 2, 2)) == 1.0
    assert FT.box_iou((0, 0, 2, 2), (2, 0, 4, 2)) == 0.0  # touching edges
    assert FT.box_iou((0, 0, 4, 4), (1, 1, 3, 3)) == pytest.approx(4 / 16)
    assert FT.box_iou((1, 1, 1, 1), (1, 1, 1, 1)) == 0.0  # empty boxes


def test_link_tracks_iou_and_two_faces():
    # face A drifts right 1 px/frame (IoU 9/11 > 0.5), face B is static far away
    a = [(10 + f, 10, 20 + f, 20) for f in range(5)]
    b = (100, 100, 120, 120)
    dets = [[b, a[f]] if f % 2 else [a[f], b] for f in range(5)]  # detector order varies
    tracks = FT.link_tracks(dets)
    assert len(tracks) == 2
    boxes = sorted([[bx for _, bx in t] for t in tracks], key=lambda t: t[0][0])
    assert boxes[0] == [tuple(map(float, x)) for x in a] and boxes[1] == [tuple(map(float, b))] * 5
    # a jump with IoU <= 0.5 starts a new track: shift by 4 px of 10 -> IoU 6/14
    jump = [[(0, 0, 10, 10)], [(4, 0, 14, 10)]]
    assert [len(t) for t in FT.link_tracks(jump)] == [1, 1]
    # exactly 0.5 is not enough (strict >): boxes 0..12 and 4..16 -> IoU 8 / 16
    half = [[(0, 0, 12, 1)], [(4, 0, 16, 1)]]
    assert FT.box_iou(*[d[0] for d in half]) == 0.5
    assert [len(t) for t in FT.link_tracks(half)] == [1, 1]


def test_link_tracks_gap_split():
    box = (0, 0, 10, 10)
    dets = [[box], [box]] + [[]] * 3 + [[box], [box]]  # gap: frames 2..4, next box 4 frames later
    assert [[f for f, _ in t] for t in FT.link_tracks(dets, num_failed_det=4)] == [[0, 1, 5, 6]]
    assert [[f for f, _ in t] for t in FT.link_tracks(dets, num_failed_det=3)] == [[0, 1], [5, 6]]
    # the best-IoU box of a frame joins; the other stays for a later track
    dets = [[(0, 0, 10, 10)], [(1, 0, 11, 10), (0, 0, 10, 10)]]
    assert FT.link_tracks(dets) == [[(0, (0.0, 0.0, 10.0, 10.0)), (1, (0.0, 0.0, 10.0, 10.0))],
                                    [(1, (1.0, 0.0, 11.0, 10.0))]]
    assert FT.link_tracks([[], []]) == []
    with pytest.raises(ValueError):
        FT.link_tracks([[(0, 0, 1)]])
    with pytest.raises(ValueError):
        FT.link_tracks([[(0, 0, np.nan, 1)]])
    with pytest.raises(ValueError):
        FT.link_tracks([[(5, 0, 1, 1)]])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_interpolation_equals_interp1d(seed):
    rng = np.random.default_rng(seed)
    frames = np.sort(rng.choice(np.arange(3, 60), size=12, replace=False))
    boxes = rng.uniform(0, 100, (12, 4))
    every, out = FT.interpolate_boxes(frames, boxes)
    assert every.tolist() == list(range(frames[0], frames[-1] + 1))
    for j in range(4):
        np.testing.assert_allclose(out[:, j], interp1d(frames, boxes[:, j])(every), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(out[frames - frames[0]], boxes)  # detections kept as they are
    with pytest.raises(ValueError):
        FT.interpolate_boxes([3, 3], boxes[:2])


@pytest.mark.filterwarnings("ignore:kernel_size exceeds volume extent")
@pytest.mark.parametrize("n,kernel", [(40, 13), (13, 13), (7, 13), (9, 3), (5, 1)])
def test_median_filter_equals_scipy_medfilt(n, kernel):
    x = np.random.default_rng(n).uniform(1, 50, n)
    np.testing.assert_array_equal(FT.median_filter(x, kernel), medfilt(x, kernel))
    with pytest.raises(ValueError):
        FT.median_filter(x, 4)


def test_smooth_track_and_filters():
    rng = np.random.default_rng(3)
    b = np.cumsum(rng.normal(0, 1, (30, 4)), 0) + [50, 60, 90, 110]
    s, cx, cy = FT.smooth_track(b)
    np.testing.assert_allclose(s, medfilt(np.maximum(b[:, 3] - b[:, 1], b[:, 2] - b[:, 0]) / 2, 13))
    np.testing.assert_allclose(cx, medfilt((b[:, 0] + b[:, 2]) / 2, 13))
    np.testing.assert_allclose(cy, medfilt((b[:, 1] + b[:, 3]) / 2, 13))
    with pytest.raises(ValueError):
        FT.smooth_track(b[:6])  # fewer than 7 frames: the zero padding would dominate
    # min_track is strict (> min_track detections); min_face_size on the mean side
    dets = [[(0, 0, 30, 20)]] * 10 + [[]] * 2 + [[(0, 0, 30, 20)]] * 2
    (t,) = FT.track_faces(dets, min_track=11, min_face_size=29)
    assert (t.start, t.end, int(t.detected.sum())) == (0, 13, 12)
    assert t.detected.tolist() == [True] * 10 + [False] * 2 + [True] * 2
    assert FT.track_faces(dets, min_track=12, min_face_size=29) == []
    assert FT.track_faces(dets, min_track=11, min_face_size=30) == []


def _reference_crop(frame, s, x, y, cs=0.4):
    """syncnet_python crop_video, re-derived: pad by int(s (1 + 2 cs)) with 110, slice, resize."""
    import cv2

    bsi = int(s * (1 + 2 * cs))
    padded = np.pad(frame, ((bsi, bsi), (bsi, bsi), (0, 0)), "constant", constant_values=(110, 110))
    my, mx = y + bsi, x + bsi
    face = padded[int(my - s):int(my + s * (1 + 2 * cs)), int(mx - s * (1 + cs)):int(mx + s * (1 + cs))]
    return cv2.resize(face, (224, 224))


@pytest.mark.parametrize("s,x,y", [(20.0, 80.0, 50.0), (13.7, 3.2, 4.9), (31.5, 150.4, 95.0), (8.0, 60.5, 0.0)])
def test_crop_face_matches_reference(s, x, y):
    frame = np.random.default_rng(int(s)).integers(0, 256, (100, 160, 3)).astype(np.uint8)
    np.testing.assert_array_equal(FT.crop_face(frame, s, x, y), _reference_crop(frame, s, x, y))
    with pytest.raises(ValueError):
        FT.crop_face(frame, 0.0, x, y)


# ----------------------------------------------------------------------------- streaming embeddings
class _TinyNet:
    """A cheap stand-in with SyncNet's interface: lip = per-colour window means, audio = MFCC means."""

    def forward_lip(self, x):
        return x.mean(dim=(2, 3, 4)) / 100.0 + x[:, :, 2:3].mean(dim=(2, 3, 4)) / 50.0

    def forward_aud(self, x):
        return x[:, 0, :3, :].mean(-1) / 100.0


def test_lip_embeddings_independent_of_chunks_and_batch():
    import torch

    from hug_vis_dataset.models.syncnet import lip_embeddings

    crops = np.random.default_rng(0).integers(0, 256, (17, 224, 224, 3)).astype(np.uint8)
    n = 12
    # direct: window i = frames i..i+4, BGR, (3, 5, H, W)
    direct = np.stack([_TinyNet().forward_lip(torch.from_numpy(
        crops[i:i + 5, :, :, ::-1].astype(np.float32).transpose(3, 0, 1, 2)[None].copy()))[0].numpy()
        for i in range(n)])
    for chunks, batch in (([17], 20), ([1] * 17, 1), ([3, 5, 9], 4), ([16, 1], 5)):
        parts = np.split(crops, np.cumsum(chunks)[:-1])
        np.testing.assert_allclose(lip_embeddings(_TinyNet(), parts, n, batch), direct, rtol=1e-6)
    with pytest.raises(ValueError):
        lip_embeddings(_TinyNet(), [crops[:10]], n)  # 10 frames give 6 windows, 12 asked


# ----------------------------------------------------------------------------- end to end
@pytest.fixture(scope="module")
def synth_root(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("syncsynth")
    synthesize(root, actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=2.5, size=(320, 180),
               systems=True)
    return root


def _talk(root, system="talk_good"):
    return root / "simulated_systems" / "audio_driven" / system / "actor_0001_happy_action_01_script_001.mp4"


def test_syncnet_clip_end_to_end_random_official_layout(synth_root, tmp_path):
    import torch

    from hug_vis_dataset.readers.media import video_info
    from hug_vis_dataset.metrics.sync import syncnet_clip
    from hug_vis_dataset.metrics.sync_timeline import ffmpeg_rate_indices, video_audio_16k
    from hug_vis_dataset.models.syncnet import build_syncnet, load_syncnet, mfcc, sync_windows

    torch.manual_seed(0)
    weights = tmp_path / "syncnet_v2.model"
    torch.save(build_syncnet().state_dict(), weights)  # official key layout: netcnnaud.0.weight ...
    net = load_syncnet(str(weights))
    video = _talk(synth_root)
    info = video_info(video)
    assert (info.frames, info.fps) == (75, 30.0)

    res = syncnet_clip(video, net, head_box, min_track=20, min_face_size=20, batch=4, chunk_frames=7)

    # ffmpeg -r 25 keeps 64 frames of the 75 at 30 fps (it holds early frames: test_sync_timeline);
    # every frame has the head, one track over all; the 2.5 s of audio bound the windows
    keep = ffmpeg_rate_indices(75, 30.0, 25.0)
    assert res["frames"] == len(keep) == 64 and res["frames_untracked"] == 0 and res["tracks_failed"] == 0
    (tr,) = res["tracks"]
    windows = sync_windows(64, len(video_audio_16k(video)))
    assert (tr["start"], tr["end"], tr["detected"], tr["windows"]) == (0, 63, 64, windows)
    mdist = np.array(tr["mdist"])
    assert mdist.shape == (31,)
    assert tr["sync_d"] == pytest.approx(mdist.min(), rel=1e-12)
    assert tr["sync_c"] == pytest.approx(np.median(mdist) - mdist.min(), rel=1e-9, abs=1e-12)
    assert tr["offset"] == 15 - int(np.argmin(mdist)) and -15 <= tr["offset"] <= 15
    assert (res["sync_c"], res["sync_d"], res["offset"]) == (tr["sync_c"], tr["sync_d"], tr["offset"])

    # audio: 16 kHz mono, 100 Hz MFCC = 4 per 25 fps frame
    audio = video_audio_16k(video)
    assert abs(len(audio) - 40000) <= 1024  # AAC priming/padding at most one frame
    segment = audio[:62 * 640]
    assert len(segment) == 62 * 640
    assert mfcc(segment * 32768).shape[0] == 4 * 62 - 1  # 1 + ceil((4 * 62 * 160 - 400) / 160)



def test_syncnet_clip_equals_independent_recomputation(synth_root):
    """Boxes -> scipy medfilt -> np.pad crops -> whole-array embeddings -> offset search, by hand,
    with a cheap network of SyncNet's interface (the random S above checks the real shapes)."""
    from hug_vis_dataset.readers.media import iter_video_frames
    from hug_vis_dataset.metrics.sync import syncnet_clip
    from hug_vis_dataset.metrics.sync_timeline import ffmpeg_rate_indices, video_audio_16k
    from hug_vis_dataset.models.syncnet import sync_offset_search, syncnet_embeddings

    video = _talk(synth_root, "talk_poor")
    keep = ffmpeg_rate_indices(75, 30.0, 25.0)
    frames = np.concatenate(list(iter_video_frames(video, 75)))[keep]
    boxes = np.array([head_box(f)[0] for f in frames])
    s = medfilt(np.maximum(boxes[:, 3] - boxes[:, 1], boxes[:, 2] - boxes[:, 0]) / 2, 13)
    x = medfilt((boxes[:, 0] + boxes[:, 2]) / 2, 13)
    y = medfilt((boxes[:, 1] + boxes[:, 3]) / 2, 13)
    crops = np.stack([_reference_crop(f, s[i], x[i], y[i]) for i, f in enumerate(frames)])
    v, a = syncnet_embeddings(_TinyNet(), crops, video_audio_16k(video)[:len(keep) * 640])
    c, d, off, ref_mdist = sync_offset_search(v, a, 15)
    for chunk, batch in ((32, 20), (7, 3)):  # and independent of decode chunk / batch sizes
        (tr,) = syncnet_clip(video, _TinyNet(), head_box, min_track=20, min_face_size=20, batch=batch,
                             chunk_frames=chunk)["tracks"]
        np.testing.assert_allclose(tr["mdist"], ref_mdist, rtol=1e-6)
        assert (tr["sync_c"], tr["sync_d"], tr["offset"]) == pytest.approx((c, d, off), rel=1e-6)


def test_syncnet_clip_gaps_tracks_and_failures(synth_root):
    from hug_vis_dataset.metrics.sync import SyncFailure, syncnet_clip
    from hug_vis_dataset.modules import compute

    video = _talk(synth_root, "talk_fair")
    calls = {"n": 0}

    def gappy(frame):  # misses output frames 20..24 (calls are in frame order)
        i = calls["n"]
        calls["n"] += 1
        return [] if 20 <= i < 25 else head_box(frame)

    res = syncnet_clip(video, _TinyNet(), gappy, min_track=10, min_face_size=20, num_failed_det=25)
    (tr,) = res["tracks"]
    # 64 frames on ffmpeg's 25 fps timeline, 5 without a detection, interpolated into one track
    assert (tr["start"], tr["end"], tr["detected"]) == (0, 63, 59) and res["frames_untracked"] == 0

    calls["n"] = 0
    res = syncnet_clip(video, _TinyNet(), gappy, min_track=10, min_face_size=20, num_failed_det=3)
    assert [(t["start"], t["end"]) for t in res["tracks"]] == [(0, 19), (25, 63)]
    assert res["frames_untracked"] == 5
    from hug_vis_dataset.metrics.sync_timeline import video_audio_16k
    from hug_vis_dataset.models.syncnet import sync_windows

    samples = len(video_audio_16k(video))
    for t in res["tracks"]:
        m = np.array(t["mdist"])
        # a track's windows: its frames, bounded by the audio of its own span (640 samples a frame)
        span = min(samples, (t["end"] + 1) * 640) - t["start"] * 640
        assert t["windows"] == sync_windows(t["end"] - t["start"] + 1, span) <= t["end"] - t["start"] + 1 - 5
        assert t["sync_d"] == pytest.approx(m.min()) and t["sync_c"] == pytest.approx(np.median(m) - m.min())
    # the clip value is the mean over tracks
    for k in ("sync_c", "sync_d", "offset"):
        assert res[k] == pytest.approx(np.mean([t[k] for t in res["tracks"]]))

    calls["n"] = 0
    # the short first track (20 frames) is dropped by min_track=20 and its frames counted
    res = syncnet_clip(video, _TinyNet(), gappy, min_track=20, min_face_size=20, num_failed_det=3)
    assert [(t["start"], t["end"]) for t in res["tracks"]] == [(25, 63)] and res["frames_untracked"] == 25

    with pytest.raises(SyncFailure, match="no face track"):
        syncnet_clip(video, _TinyNet(), lambda f: [], min_track=10)
    with pytest.raises(SyncFailure, match="no face track"):  # faces too small for the default 100 px
        syncnet_clip(video, _TinyNet(), head_box, min_track=10)

    # through the module door: a clip whose face is never found is a counted failure, not a number
    out = compute("syncnet", predictions=[str(video)], models={"syncnet": _TinyNet(), "face_detector": lambda f: []})
    assert out["n_failed"] == 1 and out["n_ok"] == 0 and "no face track" in out["errors"][0]["error"]
    assert np.isnan(out["sync_c"]) and out["per_clip"] == {"sync_c": [None], "sync_d": [None]}

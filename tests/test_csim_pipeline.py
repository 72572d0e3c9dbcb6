"""CSIM end to end on a synthetic video pair (vision_driven simulated system vs the reference video,
and vs a source portrait image), with an injected detector and embedder.

The expected values are recomputed here frame by frame from decoded frames: detection, 5-point
alignment, embedding, cosine, mean over frames with a face on both sides; frames without a
face are counted.
"""

from __future__ import annotations

import numpy as np
import pytest
from synth_faces import head_box

CLIP = "actor_0001_happy_action_01_script_001"


class HeadDetector:
    """``.detect`` interface of the library detectors; optionally blind on some calls."""

    def __init__(self, blind=()):
        self.blind, self.calls = set(blind), 0

    def detect(self, frame):
        from hug_vis_dataset.models.arcface import landmarks_from_box

        i, self.calls = self.calls, self.calls + 1
        if i in self.blind:
            return []
        return [(b, landmarks_from_box(b), 1.0) for b in head_box(frame)]


class ProjectionEmbedder:
    """A fixed random projection of the 8x8-pooled aligned face: a 192 -> 32 'ArcFace'."""

    def __init__(self, seed=0):
        self.w = np.random.default_rng(seed).normal(size=(192, 32))

    def __call__(self, faces):
        f = np.asarray(faces, np.float64)
        assert f.shape[1:] == (112, 112, 3)
        pooled = f.reshape(len(f), 8, 14, 8, 14, 3).mean(axis=(2, 4)).reshape(len(f), -1) / 255 - 0.5
        return pooled @ self.w


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    from hug_vis_dataset.release import Release
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("csimsynth")
    synthesize(root, actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=1.0, size=(320, 180),
               systems=True)
    ref = Release(root).record(CLIP).video_path
    preds = {s: root / "simulated_systems" / "vision_driven" / s / f"{CLIP}.mp4"
             for s in ("vis_good", "vis_fair", "vis_poor")}
    return ref, preds


def _faces(frames, detector):
    from hug_vis_dataset.models.arcface import align_face

    out = []
    for f in frames:
        d = detector.detect(f)
        out.append(align_face(f, d[0][1]) if d else None)
    return out


def _cos(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


@pytest.mark.parametrize("blind", [(), (0, 5, 17)])
def test_csim_video_vs_reference_video(pair, blind):
    from hug_vis_dataset.media import iter_video_frames
    from hug_vis_dataset.metrics.generation import csim_video

    ref, preds = pair
    emb = ProjectionEmbedder()
    pred = preds["vis_fair"]
    p_frames = np.concatenate(list(iter_video_frames(pred, 100)))
    r_frames = np.concatenate(list(iter_video_frames(ref, 100)))
    assert len(p_frames) == len(r_frames) == 30
    # by hand: the detector sees pred frame i then ref frame i; blind calls -> no face
    blind_calls = {2 * i for i in blind}
    fp = _faces(p_frames, HeadDetector(blind=[c // 2 for c in blind_calls]))
    fr = _faces(r_frames, HeadDetector())
    sims = [_cos(emb(a[None])[0], emb(b[None])[0]) for a, b in zip(fp, fr) if a is not None and b is not None]
    res = csim_video(pred, ref, HeadDetector(blind=blind_calls), emb)
    assert res.frames_scored == len(sims) == 30 - len(blind) and res.frames_no_face == len(blind)
    assert res.csim == pytest.approx(np.mean(sims), rel=1e-9)
    assert -1 <= res.csim <= 1
    # the reference against itself: every frame identical -> 1
    assert csim_video(ref, ref, HeadDetector(), emb).csim == pytest.approx(1.0, abs=1e-12)


def test_csim_video_vs_source_portrait_and_dataset_level(pair, tmp_path):
    import cv2

    from hug_vis_dataset.media import iter_video_frames
    from hug_vis_dataset.metrics.generation import csim_video, evaluate_csim

    ref, preds = pair
    emb = ProjectionEmbedder(1)
    first = next(iter_video_frames(ref, 1))[0]
    portrait = tmp_path / "source.png"
    cv2.imwrite(str(portrait), first[..., ::-1])  # lossless PNG: the decoded portrait equals `first`
    src = emb(_faces([first], HeadDetector())[0][None])[0]
    per_clip = {}
    for name, pred in preds.items():
        faces = _faces(np.concatenate(list(iter_video_frames(pred, 100))), HeadDetector())
        per_clip[name] = np.mean([_cos(emb(f[None])[0], src) for f in faces])
        res = csim_video(pred, portrait, HeadDetector(), emb)
        assert res.csim == pytest.approx(per_clip[name], rel=1e-9) and res.frames_no_face == 0
    out = evaluate_csim([str(p) for p in preds.values()], [str(portrait)] * 3, HeadDetector(), emb)
    assert out["csim"] == pytest.approx(np.mean(list(per_clip.values())), rel=1e-9)
    assert out["per_clip"] == pytest.approx(list(per_clip.values()), rel=1e-9) and out["frames_no_face"] == 0
    with pytest.raises(ValueError, match="no face"):
        csim_video(preds["vis_good"], ref, HeadDetector(blind=range(1000)), emb)

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
    from hug_vis_dataset.datamodel.release import Release
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
def test_csim_scorer_vs_source_portrait(pair, blind):
    """The one CSIM: every generated frame against the source portrait (the reference's first frame)."""
    from hug_vis_dataset.readers.media import iter_video_frames
    from hug_vis_dataset.tasks import ModelCache
    from hug_vis_dataset.tasks.generation import csim_to_portrait

    ref, preds = pair
    emb = ProjectionEmbedder()
    pred = preds["vis_fair"]
    p_frames = np.concatenate(list(iter_video_frames(pred, 100)))
    first = next(iter_video_frames(ref, 1))[0]
    src = emb(_faces([first], HeadDetector())[0][None])[0]
    faces = _faces(p_frames, HeadDetector(blind=blind))
    sims = [_cos(emb(f[None])[0], src) for f in faces if f is not None]
    # call 0 of the detector is the portrait; frame i is call i + 1
    models = ModelCache(overrides={"face_detector": HeadDetector(blind=[b + 1 for b in blind]), "face_embedder": emb})
    res = csim_to_portrait(str(pred), str(ref), models, chunk_frames=7)
    assert res.notes["frames_no_face"] == len(blind) and len(sims) == 30 - len(blind)
    assert res.values["csim"] == pytest.approx(np.mean(sims), rel=1e-9)
    assert -1 <= res.values["csim"] <= 1
    # the portrait against a video of itself: every frame identical to the source -> 1
    still = ModelCache(overrides={"face_detector": HeadDetector(), "face_embedder": emb})
    assert csim_to_portrait(str(ref), str(ref), still, 30).values["csim"] < 1.0  # the reference moves
    with pytest.raises(ValueError, match="no face"):
        csim_to_portrait(str(pred), str(ref), ModelCache(overrides={
            "face_detector": HeadDetector(blind=range(1, 1000)), "face_embedder": emb}), 32)


def test_csim_module_portrait_image_equals_reference_video(pair, tmp_path):
    """The module with a portrait image, with the reference video and the scorer give one value."""
    import cv2

    from hug_vis_dataset.readers.media import iter_video_frames
    from hug_vis_dataset.modules import compute

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
    for name, pred in preds.items():  # one module call per system (a submission holds a clip once)
        for reference in (portrait, ref):
            out = compute("csim", predictions=[str(pred)], references=[str(reference)],
                          models={"face_detector": HeadDetector(), "face_embedder": emb})
            assert out["csim"] == pytest.approx(per_clip[name], rel=1e-9)
            assert out["per_clip"] == [pytest.approx(per_clip[name], rel=1e-9)] and out["n_failed"] == 0

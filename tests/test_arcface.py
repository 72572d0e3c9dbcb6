"""Face alignment (Umeyama vs skimage and known parameters), offline detection, CSIM maths."""

from __future__ import annotations

import numpy as np
import pytest

from hug_vis_dataset.models import arcface as AF


def _skimage_similarity(src, dst):
    from skimage.transform import SimilarityTransform

    if hasattr(SimilarityTransform, "from_estimate"):
        return SimilarityTransform.from_estimate(src, dst)
    est = SimilarityTransform()
    est.estimate(src, dst)
    return est


@pytest.mark.parametrize("scale,angle,tx,ty", [(1.0, 0.0, 0, 0), (2.5, 0.3, 40, -12), (0.4, -1.2, 300, 150)])
def test_similarity_recovers_known_parameters(scale, angle, tx, ty):
    c, s = np.cos(angle), np.sin(angle)
    true = np.array([[scale * c, -scale * s, tx], [scale * s, scale * c, ty]])
    # points = template mapped by the known transform; aligning them back must give its inverse
    pts = AF.ARCFACE_TEMPLATE @ true[:, :2].T + true[:, 2]
    M = AF.similarity_transform(pts, AF.ARCFACE_TEMPLATE)
    inv = np.linalg.inv(np.vstack([true, [0, 0, 1]]))[:2]
    np.testing.assert_allclose(M, inv, atol=1e-9)
    est = _skimage_similarity(pts, AF.ARCFACE_TEMPLATE)
    np.testing.assert_allclose(M, est.params[:2], atol=1e-9)


def test_similarity_noisy_matches_skimage_and_never_reflects():
    rng = np.random.default_rng(0)
    for _ in range(5):
        pts = rng.uniform(0, 200, (5, 2))
        M = AF.similarity_transform(pts, AF.ARCFACE_TEMPLATE)
        est = _skimage_similarity(pts, AF.ARCFACE_TEMPLATE)
        np.testing.assert_allclose(M, est.params[:2], atol=1e-8)
        assert np.linalg.det(M[:, :2]) > 0
    mirrored = AF.ARCFACE_TEMPLATE * [-1, 1]
    assert np.linalg.det(AF.similarity_transform(mirrored, AF.ARCFACE_TEMPLATE)[:, :2]) > 0
    with pytest.raises(ValueError):
        AF.similarity_transform(np.zeros((5, 2)), AF.ARCFACE_TEMPLATE)


def test_align_face_moves_landmarks_onto_template():
    image = np.zeros((300, 300, 3), np.uint8)
    true = np.array([[2.0, 0, 50], [0, 2.0, 30]])
    pts = AF.ARCFACE_TEMPLATE @ true[:, :2].T + true[:, 2]
    for k, (x, y) in enumerate(pts):
        image[int(round(y)) - 1:int(round(y)) + 2, int(round(x)) - 1:int(round(x)) + 2] = 50 * (k + 1)
    aligned = AF.align_face(image, pts)
    assert aligned.shape == (112, 112, 3)
    for k, (x, y) in enumerate(AF.ARCFACE_TEMPLATE):
        assert aligned[int(round(y)), int(round(x)), 0] > 0


def test_astronaut_detect_and_align():
    from skimage import data

    img = data.astronaut()
    found = AF.CascadeFaceDetector().detect(img)
    assert found, "scikit-image's astronaut face must be found"
    (x0, y0, x1, y1), lms, _ = found[0]
    # the face of the astronaut photograph lies around x 170-300, y 40-180
    assert 150 < (x0 + x1) / 2 < 300 and 40 < (y0 + y1) / 2 < 180 and 60 < x1 - x0 < 200
    aligned = AF.align_face(img, lms)
    assert aligned.shape == (112, 112, 3) and aligned.std() > 20
    assert AF.CascadeFaceDetector().detect(np.zeros((200, 200, 3), np.uint8)) == []


def test_csim_clip_with_injected_embedder():
    from hug_vis_dataset.metrics.identity import CsimResult, cosine_similarity, csim_clip

    class Det:
        def detect(self, frame):
            if frame.mean() == 0:
                return []
            return [((0, 0, 112, 112), AF.ARCFACE_TEMPLATE, 1.0)]

    def embed(faces):  # mean colour per channel as a 3-d "embedding"
        return faces.reshape(len(faces), -1, 3).mean(1) + 1.0

    src = np.full((112, 112, 3), [200, 10, 10], np.uint8)
    frames = np.stack([np.full((112, 112, 3), c, np.uint8) for c in ([200, 10, 10], [10, 200, 10], [0, 0, 0])])
    res = csim_clip([frames[:1], frames[1:]], src, Det(), embed)
    expected = np.mean([cosine_similarity(embed(frames[i:i + 1]), embed(src[None]))[0] for i in range(2)])
    assert isinstance(res, CsimResult) and res.frames_scored == 2 and res.frames_no_face == 1
    assert res.csim == pytest.approx(expected)
    with pytest.raises(ValueError):
        csim_clip([frames[2:]], src, Det(), embed)

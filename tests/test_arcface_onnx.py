"""SCRFD decoding and ArcFace embedding through real onnxruntime sessions on tiny ONNX models.

The real ``det_10g.onnx`` / ``w600k_r50.onnx`` cannot be downloaded here, so the test builds
models of the same interface with ``onnx.helper``:

- an SCRFD-shaped detector: input ``input.1`` (1, 3, ?, ?), nine outputs in insightface's order
  (scores, box distances, landmark distances, each for strides 8, 16, 32; 2 anchors per
  location), whose values are planted constants (plus ``0 * ReduceMean(input)`` so the graph
  consumes the input). Expected boxes and landmarks are worked out by hand from the anchor
  centre, the distances in stride units and insightface's letterbox scale;
- an ArcFace-shaped embedder: (N, 3, 112, 112) -> 4x4 average pool -> flatten -> fixed random
  matrix -> (N, 512), recomputed in numpy.

Preprocessing is checked against OpenCV's ``blobFromImage(s)`` on BGR input with ``swapRB=True``,
which is how insightface's ``scrfd.py`` / ``arcface_onnx.py`` build their blobs.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from synth_faces import head_box

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from hug_vis_dataset.models import arcface as AF  # noqa: E402

STRIDES = (8, 16, 32)
SIZE = 640
CLIP = "actor_0001_happy_action_01_script_001"


# ----------------------------------------------------------------------------- model builders
def _save(graph, path):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # readable by every onnxruntime that supports opset 17
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return path


def empty_maps(batched=False):
    """Zero score / distance maps per stride, in insightface's (anchors, channels) layout."""
    maps = {}
    for s in STRIDES:
        n = (SIZE // s) ** 2 * 2
        maps[s] = [np.zeros((n, 1), np.float32), np.zeros((n, 4), np.float32), np.zeros((n, 10), np.float32)]
    return maps


def anchor_index(stride, row, col, anchor):
    """Row-major locations, the 2 anchors of a location adjacent (insightface's anchor_centers)."""
    return (row * (SIZE // stride) + col) * 2 + anchor


def plant(maps, stride, row, col, anchor, score, dist, kps):
    """Set one anchor: ``dist`` = (left, top, right, bottom), ``kps`` = 5 (dx, dy), stride units."""
    i = anchor_index(stride, row, col, anchor)
    maps[stride][0][i] = score
    maps[stride][1][i] = dist
    maps[stride][2][i] = np.asarray(kps, np.float32).reshape(10)


def build_scrfd(path, maps, batched=False, with_kps=True):
    """SCRFD-shaped graph: outputs score_8/16/32, bbox_8/16/32, kps_8/16/32 (det_10g order)."""
    inp = helper.make_tensor_value_info("input.1", TensorProto.FLOAT, [1, 3, "?", "?"])
    nodes = [helper.make_node("ReduceMean", ["input.1"], ["mean"], keepdims=0),
             helper.make_node("Mul", ["mean", "zero"], ["dep"])]
    inits = [numpy_helper.from_array(np.zeros((), np.float32), "zero")]
    outputs = []
    kinds = (0, 1, 2) if with_kps else (0, 1)
    for k in kinds:
        for s in STRIDES:
            arr = maps[s][k][None] if batched else maps[s][k]
            name = f"out_{k}_{s}"
            inits.append(numpy_helper.from_array(arr, f"c_{k}_{s}"))
            nodes.append(helper.make_node("Add", ["dep", f"c_{k}_{s}"], [name]))
            outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(arr.shape)))
    return _save(helper.make_graph(nodes, "scrfd_like", [inp], outputs, inits), path)


def arcface_matrix(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(3 * 28 * 28, 512)) / 40).astype(np.float32), rng.normal(size=512).astype(np.float32)


def build_arcface(path, seed=0):
    w, b = arcface_matrix(seed)
    inp = helper.make_tensor_value_info("input.1", TensorProto.FLOAT, ["N", 3, 112, 112])
    out = helper.make_tensor_value_info("683", TensorProto.FLOAT, ["N", 512])
    nodes = [helper.make_node("AveragePool", ["input.1"], ["pool"], kernel_shape=[4, 4], strides=[4, 4]),
             helper.make_node("Flatten", ["pool"], ["flat"], axis=1),
             helper.make_node("MatMul", ["flat", "W"], ["proj"]),
             helper.make_node("Add", ["proj", "B"], ["683"])]
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")]
    return _save(helper.make_graph(nodes, "arcface_like", [inp], [out], inits), path)


def arcface_reference(faces_rgb, seed=0):
    """Numpy re-derivation: OpenCV blob of the BGR faces with swapRB (insightface's get_feat)."""
    import cv2

    w, b = arcface_matrix(seed)
    bgr = [np.ascontiguousarray(f[..., ::-1]) for f in faces_rgb]
    blob = cv2.dnn.blobFromImages(bgr, 1.0 / 127.5, (112, 112), (127.5, 127.5, 127.5), swapRB=True)
    pooled = blob.astype(np.float64).reshape(len(bgr), 3, 28, 4, 28, 4).mean(axis=(3, 5)).reshape(len(bgr), -1)
    feats = pooled @ w + b
    return feats / np.linalg.norm(feats, axis=1, keepdims=True)


# ----------------------------------------------------------------------------- insightface letterbox
def insightface_det_scale(h, w, size=SIZE):
    """insightface SCRFD.detect: resized (new_w, new_h) and det_scale = new_h / h (int truncation)."""
    im_ratio = float(h) / w
    if im_ratio > 1.0:
        new_h = size
        new_w = int(new_h / im_ratio)
    else:
        new_w = size
        new_h = int(new_w * im_ratio)
    return new_w, new_h, float(new_h) / h


def insightface_blob(image_rgb):
    import cv2

    bgr = np.ascontiguousarray(image_rgb[..., ::-1])
    new_w, new_h, _ = insightface_det_scale(*bgr.shape[:2])
    det = np.zeros((SIZE, SIZE, 3), np.uint8)
    det[:new_h, :new_w] = cv2.resize(bgr, (new_w, new_h))
    return cv2.dnn.blobFromImage(det, 1.0 / 128, (SIZE, SIZE), (127.5, 127.5, 127.5), swapRB=True)


class RecordingSession:
    """Forwards to a real onnxruntime session and keeps the fed blobs."""

    def __init__(self, session):
        self.session, self.feeds = session, []

    def get_inputs(self):
        return self.session.get_inputs()

    def get_outputs(self):
        return self.session.get_outputs()

    def run(self, names, feed):
        self.feeds.append(feed)
        return self.session.run(names, feed)


# ----------------------------------------------------------------------------- planted faces
KPS_A = [(-1.25, -1.0), (1.25, -1.0), (0.0, 0.5), (-1.0, 2.0), (1.0, 2.25)]
KPS_B = [(-0.5, -0.5), (0.5, -0.5), (0.0, 0.0), (-0.25, 0.5), (0.25, 0.5)]


def planted_scene():
    """Faces in 640-input coordinates, with the expected survivors (stride, row, col, anchor, ...)."""
    maps = empty_maps()
    faces = {
        # kept: a large face at stride 16 and a smaller one at stride 32
        "A": (16, 10, 20, 1, 0.9, (3.0, 4.0, 3.0, 5.0), KPS_A),
        "B": (32, 12, 2, 0, 0.8, (1.5, 1.5, 1.5, 1.5), KPS_B),
        # exactly at the threshold: kept (insightface keeps score >= threshold)
        "C": (8, 70, 70, 0, 0.5, (2.0, 2.0, 2.0, 2.0), KPS_B),
        # below the threshold: dropped, even though nothing overlaps it
        "D": (8, 10, 70, 1, 0.49, (2.0, 2.0, 2.0, 2.0), KPS_B),
        # duplicate of A at the neighbouring location with a lower score: IoU 0.92 -> suppressed
        "E": (16, 10, 21, 0, 0.7, (4.0, 4.0, 1.5, 5.0), KPS_A),
    }
    for stride, row, col, anchor, score, dist, kps in faces.values():
        plant(maps, stride, row, col, anchor, score, dist, kps)
    return maps, faces


def expected(face, det_scale):
    """distance2bbox / distance2kps by hand, then back to the original image (/ det_scale)."""
    stride, row, col, _, score, dist, kps = face
    cx, cy = col * stride, row * stride
    l, t, r, b = (d * stride for d in dist)
    box = np.array([cx - l, cy - t, cx + r, cy + b]) / det_scale
    pts = np.array([(cx + dx * stride, cy + dy * stride) for dx, dy in kps]) / det_scale
    return box, pts, score


def _iou(a, b, plus_one):
    e = 1.0 if plus_one else 0.0
    iw = max(0.0, min(a[2], b[2]) - max(a[0], b[0]) + e)
    ih = max(0.0, min(a[3], b[3]) - max(a[1], b[1]) + e)
    area = lambda x: (x[2] - x[0] + e) * (x[3] - x[1] + e)  # noqa: E731
    return iw * ih / (area(a) + area(b) - iw * ih)


@pytest.fixture(scope="module")
def scene_model(tmp_path_factory):
    maps, faces = planted_scene()
    d = tmp_path_factory.mktemp("scrfd")
    return build_scrfd(d / "det_10g.onnx", maps), faces


def _check(found, faces, names, det_scale):
    exp = [expected(faces[n], det_scale) for n in names]
    exp.sort(key=lambda e: -(e[0][2] - e[0][0]) * (e[0][3] - e[0][1]))  # largest first
    assert len(found) == len(exp)
    for (box, kps, score), (ebox, ekps, escore) in zip(found, exp):
        np.testing.assert_allclose(box, ebox, rtol=0, atol=1e-3)
        np.testing.assert_allclose(np.asarray(kps).reshape(5, 2), ekps, rtol=0, atol=1e-3)
        assert score == pytest.approx(escore, abs=1e-7)


@pytest.mark.parametrize("h,w", [(180, 320), (640, 640), (100, 333), (300, 97), (1080, 1920)])
def test_scrfd_decodes_planted_faces(scene_model, h, w):
    path, faces = scene_model
    det = AF.SCRFDDetector(path=path)
    rng = np.random.default_rng(h * w)
    image = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    det.session = RecordingSession(det.session)
    found = det.detect(image)
    # letterbox, colour order and normalisation exactly as insightface (cv2 blob on BGR + swapRB)
    (blob,) = det.session.feeds[0].values()
    assert blob.dtype == np.float32 and blob.shape == (1, 3, SIZE, SIZE)
    np.testing.assert_allclose(blob, insightface_blob(image), rtol=0, atol=1e-6)
    _, _, det_scale = insightface_det_scale(h, w)
    # sanity of the scene itself: E really overlaps A beyond the NMS threshold
    assert _iou(expected(faces["A"], 1)[0], expected(faces["E"], 1)[0], True) > 0.4
    _check(found, faces, ["A", "B", "C"], det_scale)


def test_scrfd_threshold_is_a_parameter(scene_model):
    path, faces = scene_model
    image = np.zeros((320, 320, 3), np.uint8)
    _check(AF.SCRFDDetector(path=path, threshold=0.45).detect(image), faces, ["A", "B", "C", "D"], 2.0)
    _check(AF.SCRFDDetector(path=path, threshold=0.85).detect(image), faces, ["A"], 2.0)
    assert AF.SCRFDDetector(path=path, threshold=0.95).detect(image) == []


@pytest.mark.parametrize("shift", [4.0, 4.5, 5.0])
def test_scrfd_nms_uses_insightface_pixel_convention(tmp_path, shift):
    """insightface's NMS counts box sides with +1 pixel: IoU 0.4 falls at a different shift.

    Two 10x10 boxes (original image) shifted by ``shift`` in x: without +1 the IoU is 0.4 at
    shift 4.286, with +1 at 4.714. At 4.5 insightface suppresses the lower-scored box.
    """
    maps = empty_maps()
    # image 320x320 -> det_scale 2: a 10x10 original box is 20x20 in the input (2.5 x stride 8)
    a = (8, 20, 20, 0, 0.9, (1.25, 1.25, 1.25, 1.25), KPS_B)
    off = shift * 2 / 8  # original shift -> input pixels -> stride units, relative to the same centre
    b = (8, 20, 20, 1, 0.8, (1.25 - off, 1.25, 1.25 + off, 1.25), KPS_B)
    for f in (a, b):
        plant(maps, *f)
    det = AF.SCRFDDetector(path=build_scrfd(tmp_path / "d.onnx", maps))
    found = det.detect(np.zeros((320, 320, 3), np.uint8))
    boxa, boxb = expected(a, 2.0)[0], expected(b, 2.0)[0]
    suppressed = _iou(boxa, boxb, plus_one=True) > 0.4
    assert suppressed == (shift < 4.714)
    assert len(found) == (1 if suppressed else 2)
    np.testing.assert_allclose(found[0][0], boxa, atol=1e-3)


def test_scrfd_batched_output_layout_and_no_face(tmp_path):
    """Exports with a leading batch axis decode the same; an all-zero map finds nothing."""
    maps, faces = planted_scene()
    det = AF.SCRFDDetector(path=build_scrfd(tmp_path / "b.onnx", maps, batched=True))
    _check(det.detect(np.zeros((180, 320, 3), np.uint8)), faces, ["A", "B", "C"], 2.0)
    none = AF.SCRFDDetector(path=build_scrfd(tmp_path / "z.onnx", empty_maps()))
    assert none.detect(np.zeros((180, 320, 3), np.uint8)) == []


def test_scrfd_rejects_bad_inputs_and_models(tmp_path, scene_model):
    det = AF.SCRFDDetector(path=scene_model[0])
    for bad in (np.zeros((10, 10), np.uint8), np.zeros((10, 10, 4), np.uint8), np.zeros((10, 10, 3), np.float32),
                np.zeros((0, 10, 3), np.uint8)):
        with pytest.raises(ValueError):
            det.detect(bad)
    no_kps = build_scrfd(tmp_path / "nokps.onnx", empty_maps(), with_kps=False)
    with pytest.raises(ValueError, match="9 outputs"):
        AF.SCRFDDetector(path=no_kps)


# ----------------------------------------------------------------------------- ArcFace
@pytest.fixture(scope="module")
def arc_model(tmp_path_factory):
    return build_arcface(tmp_path_factory.mktemp("arc") / "w600k_r50.onnx")


@pytest.mark.parametrize("n", [1, 3])
def test_arcface_embedder_matches_numpy(arc_model, n):
    rng = np.random.default_rng(n)
    faces = rng.integers(0, 256, (n, 112, 112, 3), dtype=np.uint8)
    emb = AF.ArcFaceEmbedder(path=arc_model)
    out = emb(faces)
    assert out.shape == (n, 512)
    np.testing.assert_allclose(out, arcface_reference(faces), rtol=0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    # the colour order matters for this model: BGR input would give another embedding
    assert np.abs(emb(faces[..., ::-1].copy()) - out).max() > 1e-2
    # batch independence: one call for all equals one call per face
    np.testing.assert_allclose(np.concatenate([emb(f[None]) for f in faces]), out, atol=1e-6)


def test_arcface_embedder_rejects_bad_faces(arc_model):
    emb = AF.ArcFaceEmbedder(path=arc_model)
    for bad in (np.zeros((112, 112, 3), np.uint8), np.zeros((1, 100, 112, 3), np.uint8),
                np.zeros((0, 112, 112, 3), np.uint8), np.full((1, 112, 112, 3), np.nan, np.float32)):
        with pytest.raises(ValueError):
            emb(bad)


# ----------------------------------------------------------------------------- CSIM end to end
@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from hug_vis_dataset.readers.media import iter_video_frames
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("onnxsynth")
    synthesize(root, actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.5, size=(320, 180),
               systems=True)
    ref = Release(root).record(CLIP).video_path
    preds = [root / "simulated_systems" / "vision_driven" / s / f"{CLIP}.mp4" for s in ("vis_good", "vis_poor")]
    # plant the head of the first reference frame as a stride-16 face in the detector
    x0, y0, x1, y1 = (2.0 * v for v in head_box(next(iter_video_frames(ref, 1))[0])[0])  # det_scale 2
    row, col = int(round((y0 + y1) / 32)), int(round((x0 + x1) / 32))
    cx, cy = 16.0 * col, 16.0 * row
    marks = AF.landmarks_from_box((x0, y0, x1, y1))
    maps = empty_maps()
    plant(maps, 16, row, col, 0, 0.93, ((cx - x0) / 16, (cy - y0) / 16, (x1 - cx) / 16, (y1 - cy) / 16),
          (marks - [cx, cy]) / 16)
    weights = tmp_path_factory.mktemp("weights")
    build_scrfd(weights / "det_10g.onnx", maps)
    build_arcface(weights / "w600k_r50.onnx")
    return ref, preds, weights, marks / 2.0


def _csim_by_hand(pred, ref, marks):
    """Every generated frame against the source portrait (the reference video's first frame)."""
    from hug_vis_dataset.readers.media import iter_video_frames

    p = np.concatenate(list(iter_video_frames(pred, 100)))
    source = next(iter_video_frames(ref, 1))[:1]
    fp = np.stack([AF.align_face(f, marks) for f in p])
    fs = np.stack([AF.align_face(f, marks) for f in source])
    sims = (arcface_reference(fp) * arcface_reference(fs)).sum(1)
    return float(sims.mean()), len(p)


def test_csim_with_onnx_models_from_weights_dir(synthetic, monkeypatch):
    """Default construction (no injection) loads the tiny files through $HUGVIS_WEIGHTS_DIR."""
    from hug_vis_dataset import weights as W
    from hug_vis_dataset.modules import compute
    from hug_vis_dataset.tasks import ModelCache
    from hug_vis_dataset.tasks.generation import csim_to_portrait

    ref, preds, folder, marks = synthetic
    for name in ("arcface_det_10g", "arcface_w600k_r50"):
        monkeypatch.delenv(W.env_var(name), raising=False)
        # these files are ours, not insightface's: no pinned hash may match them
        assert W.REGISTRY[name].sha256 is None
    monkeypatch.setenv(W.ENV_DIR, str(folder))
    expect = [_csim_by_hand(p, ref, marks) for p in preds]
    results = [csim_to_portrait(str(p), str(ref), ModelCache(), 32) for p in preds]
    for res, (value, n) in zip(results, expect):
        assert res.notes["frames_no_face"] == 0
        assert res.values["csim"] == pytest.approx(value, abs=1e-5)
    assert expect[0][0] > expect[1][0]  # the poor system drifts further from the reference
    for pred, (value, _) in zip(preds, expect):  # one submission (system) per module call
        out = compute("csim", predictions=[str(pred)], references=[str(ref)])
        assert out["per_clip"] == [pytest.approx(value, abs=1e-5)] and out["csim"] == pytest.approx(value, abs=1e-5)
    with pytest.raises(ValueError, match="given twice"):  # the same clip twice in one submission
        compute("csim", predictions=[str(p) for p in preds], references=[str(ref)] * 2)


def test_pinned_hash_is_checked_on_explicit_path(synthetic, monkeypatch):
    """With a pinned sha256 the explicit path must match it: the right file loads, another is refused."""
    from hug_vis_dataset import weights as W

    _, _, folder, _ = synthetic
    det_file = folder / "det_10g.onnx"
    spec = W.REGISTRY["arcface_det_10g"]
    monkeypatch.setitem(W.REGISTRY, spec.name, dataclasses.replace(spec, sha256=W.sha256_file(det_file)))
    assert AF.SCRFDDetector(path=det_file).detect(np.zeros((180, 320, 3), np.uint8))
    monkeypatch.setitem(W.REGISTRY, spec.name, dataclasses.replace(spec, sha256="0" * 64))
    with pytest.raises(W.WeightsHashError):
        AF.SCRFDDetector(path=det_file)
    with pytest.raises(W.WeightsMissingError, match="det_10g.onnx"):
        AF.SCRFDDetector(path=folder / "missing.onnx")

"""MediaPipe's graph logic re-derived in models/mediapipe/, against what is known by construction.

The SSD anchors against the models' own output shapes and the graphs' ``num_boxes``; box decoding and
weighted non-maximum suppression against hand-worked values; the crop and the projection back against each
other (a tensor pixel's centre lands on the image point it sampled); the one-euro filter against its
recurrence written out; and, through the real networks on real photographs (``tests/human_photos.py``): a
photo moved by a known shift and zoom moves every landmark by that shift and zoom, within the stated
tolerance, and a frame with nobody in it gives no landmarks and says why.

Tolerances, stated here (measured on these photos at 640 x 360, 2026-12-06, in brackets): face mesh points
within 3 px of the frame (2.05 px at most; the mesh's region is about 110 px wide there); body points (pose
landmarks 0-12: face and shoulders) within 3 px of the pose network's 256-px input, i.e. 3/256 of the side
of its region of interest: 6.6-8.3 px for the astronaut (4.5 px at most), 15-17 px for Grace Hopper (9.2 px).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import human_photos as P
from hug_vis_dataset.models.mediapipe import geometry as g
from hug_vis_dataset.models.mediapipe import ssd


@pytest.fixture(scope="module")
def networks():
    P.needs_mediapipe()
    from hug_vis_dataset.models.mediapipe.holistic import load_face, load_hands, load_pose

    return {"human_pose": load_pose(), "human_hands": load_hands(), "human_face": load_face()}


# ----------------------------------------------------------------------------- SSD
def test_anchor_counts_match_the_graphs_and_the_models(networks):
    # num_boxes of pose_detection_cpu.pbtxt, palm_detection_cpu.pbtxt, face_detection_{short,full}_range.pbtxt
    assert [len(ssd.anchors(o)) for o in (ssd.POSE, ssd.PALM, ssd.FACE_SHORT, ssd.FACE_FULL)] == [2254, 2016, 896, 2304]
    from hug_vis_dataset.models.mediapipe.runtime import TfliteNet

    for name, options in (("mediapipe_pose_detection", ssd.POSE), ("mediapipe_face_detection_short_range", ssd.FACE_SHORT),
                          ("mediapipe_face_detection_full_range", ssd.FACE_FULL)):
        shapes = [shape for _, shape in TfliteNet.load(name).outputs]
        assert shapes[0] == (1, len(ssd.anchors(options)), options.num_coords), name


def test_anchor_centres_by_hand():
    # Pose: 28x28 cells of stride 8 with 2 anchors each (aspect 1 + interpolated), then 14x14 x2, then 7x7 x6.
    a = ssd.anchors(ssd.POSE)
    assert np.allclose(a[0], [0.5 / 28, 0.5 / 28]) and np.allclose(a[1], a[0])
    assert np.allclose(a[2], [1.5 / 28, 0.5 / 28])
    assert np.allclose(a[28 * 28 * 2], [0.5 / 14, 0.5 / 14])
    assert np.allclose(a[-1], [6.5 / 7, 6.5 / 7]) and np.allclose(a[-6:], a[-1])
    # Full-range face: one layer of 48x48 cells, one anchor each (interpolated_scale_aspect_ratio 0).
    f = ssd.anchors(ssd.FACE_FULL)
    assert np.allclose(f[48], [0.5 / 48, 1.5 / 48])


def test_decode_by_hand():
    options = ssd.FACE_SHORT
    raw = np.zeros((896, 16), np.float32)
    scores = np.full((896, 1), -50.0, np.float32)
    anchor = ssd.anchors(options)[100]
    raw[100, :4] = (12.8, -6.4, 25.6, 38.4)  # x, y, w, h in tensor pixels (XYWH: reverse_output_order)
    raw[100, 4:6] = (6.4, 0.0)
    scores[100] = 2.0
    found = ssd.decode(raw, scores, options)
    assert len(found) == 1
    cx, cy = anchor[0] + 0.1, anchor[1] - 0.05
    np.testing.assert_allclose(found.boxes[0], [cx - 0.1, cy - 0.15, cx + 0.1, cy + 0.15], atol=1e-6)
    np.testing.assert_allclose(found.keypoints[0, 0], [anchor[0] + 0.05, anchor[1]], atol=1e-6)
    assert found.scores[0] == pytest.approx(1 / (1 + math.exp(-2.0)))


def test_weighted_nms_by_hand():
    boxes = np.array([[0, 0, 1, 1], [0.1, 0, 1.1, 1], [3, 3, 4, 4]], float)
    keypoints = np.array([[[0.5, 0.5]], [[0.7, 0.5]], [[3.5, 3.5]]])
    out = ssd.weighted_nms(ssd.Detections(boxes, keypoints, np.array([0.6, 0.9, 0.8])), 0.3)
    # The 0.9 box absorbs the 0.6 one (IoU 0.82): corners and keypoints weighted 0.9 : 0.6; its score stays.
    np.testing.assert_allclose(out.boxes[0], [0.06, 0, 1.06, 1])
    np.testing.assert_allclose(out.keypoints[0, 0], [(0.7 * 0.9 + 0.5 * 0.6) / 1.5, 0.5])
    np.testing.assert_allclose(out.scores, [0.9, 0.8])
    np.testing.assert_allclose(out.boxes[1], boxes[2])


# ----------------------------------------------------------------------------- regions, crops, projection
def test_rect_calculators_by_hand():
    r = g.rect_from_alignment_points(np.array([100.0, 200.0]), np.array([100.0, 150.0]), 90.0)
    assert (r.cx, r.cy, r.w, r.h, r.rotation) == (100.0, 200.0, 100.0, 100.0, 0.0)
    # pointing right instead of up: rotated by +90 degrees (clockwise on the screen)
    r = g.rect_from_alignment_points(np.array([0.0, 0.0]), np.array([10.0, 0.0]), 90.0)
    assert r.rotation == pytest.approx(math.pi / 2)
    # shift along the rotated axes: +90 degrees turns "down" (shift_y) into "left"
    moved = g.transform_rect(g.Rect(0.0, 0.0, 10.0, 20.0, math.pi / 2), shift_y=0.5)
    assert (moved.cx, moved.cy) == pytest.approx((-10.0, 0.0))
    assert g.pad_to_aspect(g.Rect(0, 0, 40.0, 10.0), 20, 20).h == 40.0


@pytest.mark.parametrize("rotation", [0.0, 0.4, -2.0])
def test_crop_and_projection_agree(rotation):
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (90, 160, 3), dtype=np.uint8)
    rect = g.Rect(80.3, 44.7, 50.0, 50.0, rotation)
    tensor = g.crop(image, rect, (32, 32), (0.0, 255.0))
    # tensor pixel (u, v) sampled the image at to_image(((u+.5)/32, (v+.5)/32)): bilinear there
    for u, v in ((0, 0), (5, 17), (31, 20), (16, 16)):
        x, y = g.to_image(np.array([(u + 0.5) / 32, (v + 0.5) / 32]), rect) - 0.5  # pixel-index coordinates
        x0, y0 = int(np.floor(x)), int(np.floor(y))
        fx, fy = x - x0, y - y0
        want = ((1 - fx) * (1 - fy) * image[y0, x0] + fx * (1 - fy) * image[y0, x0 + 1]
                + (1 - fx) * fy * image[y0 + 1, x0] + fx * fy * image[y0 + 1, x0 + 1])
        np.testing.assert_allclose(tensor[v, u], want, atol=1.0)  # OpenCV's 1/32-pixel fixed point


def test_one_euro_filter_written_out():
    from hug_vis_dataset.models.mediapipe.pose import OneEuroFilter

    values = [0.0, 1.0, 1.5, 1.2]
    f = OneEuroFilter(30.0, min_cutoff=0.01, beta=10.0, derivative_cutoff=1.0)
    got = [float(f(np.array([v]), value_scale=0.5)[0]) for v in values]
    alpha = lambda cutoff: 1 / (1 + 30.0 / (2 * math.pi * cutoff))  # noqa: E731
    x, dx, raw, want = values[0], 0.0, values[0], [values[0]]
    for v in values[1:]:
        dx = alpha(1.0) * ((v - raw) * 0.5 * 30.0) + (1 - alpha(1.0)) * dx
        x = alpha(0.01 + 10.0 * abs(dx)) * v + (1 - alpha(0.01 + 10.0 * abs(dx))) * x
        raw = v
        want.append(x)
    np.testing.assert_allclose(got, want, rtol=1e-12)


# ----------------------------------------------------------------------------- the networks on real photographs
def _settled(video, frame, n=3):
    for _ in range(n):
        out = video.process(frame)
    return out


@pytest.mark.parametrize("name", ["astronaut", "grace"])
def test_a_moved_photo_moves_the_landmarks_by_the_same_amount(networks, name):
    from hug_vis_dataset.models.mediapipe.holistic import VideoLandmarks

    image = P.photo(name)
    nets = {k: networks[k] for k in ("human_pose", "human_face")}
    results = []
    for dx, dy, zoom in ((0, 0, 1.0), (31, 0, 1.0), (-47, 6, 1.0), (12, 9, 1.12), (0, 3, 1.25)):
        m = P.placement(image, dx=dx, dy=dy, zoom=zoom)
        video = VideoLandmarks(nets)
        out = _settled(video, P.scene(image, dx=dx, dy=dy, zoom=zoom))
        results.append((P.to_photo(out.body, m), out.visibility, P.to_photo(out.face, m), video.pose.roi, m))
    body0, vis0, face0, _, _ = results[0]
    assert (vis0[:13] > 0.9).all()
    for body, vis, face, roi, m in results[1:]:
        # in frame pixels: photo-coordinate differences times the placement's scale
        face_error = np.hypot(*(face - face0).T) * m[0, 0]
        assert face_error.max() < 3.0, face_error.max()
        body_error = np.hypot(*(body[:13] - body0[:13]).T) * m[0, 0]
        assert body_error.max() < 3 * roi.w / 256, (body_error.round(2), roi.w)


def test_a_frame_with_nobody_has_no_landmarks_and_says_why(networks):
    from hug_vis_dataset.models.mediapipe.holistic import VideoLandmarks

    video = VideoLandmarks(networks)
    empty = np.full((360, 640, 3), 128, np.uint8)
    out = video.process(empty)
    assert np.isnan(out.body).all() and np.isnan(out.face).all() and np.isnan(out.hands).all()
    assert out.reasons["body"] == "no person detected"
    assert out.reasons["face"] == "no face detected"
    assert out.reasons["left hand"] == "no pose to find the hand from"
    # and the person is found again in the next frame
    back = video.process(P.scene(P.photo("astronaut")))
    assert not np.isnan(back.body).any() and back.reasons["body"] == ""


def test_the_networks_pickle_to_a_worker(networks):
    import pickle

    from hug_vis_dataset.models.mediapipe.holistic import VideoLandmarks

    frame = P.scene(P.photo("grace"))
    clone = pickle.loads(pickle.dumps(networks))
    a, b = VideoLandmarks(networks).process(frame), VideoLandmarks(clone).process(frame)
    np.testing.assert_array_equal(a.body, b.body)
    np.testing.assert_array_equal(a.face, b.face)


def _refine_loop(points, heatmap, kernel=7, min_confidence=0.5):
    """RefineLandmarksFromHeatmapCalculator written as its C++ loop: one landmark, one window at a time."""
    height, width, _ = heatmap.shape
    out, half = points.copy(), (kernel - 1) // 2
    for i, (x, y) in enumerate(points):
        col, row = int(x * width), int(y * height)
        if x < 0 or y < 0 or not (0 <= col < width and 0 <= row < height):
            continue
        total = weighted_col = weighted_row = best = 0.0
        for r in range(max(0, row - half), min(height, row + half + 1)):
            for c in range(max(0, col - half), min(width, col + half + 1)):
                confidence = 1 / (1 + math.exp(-float(heatmap[r, c, i])))
                total, best = total + confidence, max(best, confidence)
                weighted_col, weighted_row = weighted_col + c * confidence, weighted_row + r * confidence
        if best >= min_confidence and total > 0:
            out[i] = (weighted_col / width / total, weighted_row / height / total)
    return out


def test_heatmap_refinement_equals_the_calculators_loop():
    from hug_vis_dataset.models.mediapipe.pose import refine_from_heatmap

    rng = np.random.default_rng(8)
    for _ in range(5):
        heatmap = rng.normal(-2, 3, (64, 64, 39)).astype(np.float32)
        points = rng.uniform(-0.05, 1.05, (39, 2))  # some outside: kept as they are
        np.testing.assert_allclose(refine_from_heatmap(points, heatmap), _refine_loop(points, heatmap), atol=1e-12)

"""Face detection, 5-point alignment and ArcFace embeddings for CSIM.

Reference path (insightface ``buffalo_l``): SCRFD ``det_10g.onnx`` gives boxes and 5 landmarks
(eyes, nose, mouth corners); a similarity transform (Umeyama, no reflection) maps them onto
:data:`ARCFACE_TEMPLATE`; ``cv2.warpAffine`` cuts the 112x112 face; ``w600k_r50.onnx`` embeds
``(x - 127.5) / 127.5`` RGB into 512-d. Both ONNX files come through the weights layer.

Offline path (:class:`CascadeFaceDetector`): scikit-image ships an LBP frontal-face cascade
(``skimage.data.lbp_frontal_face_cascade_filename``); it gives a box only, so the 5 points are
placed at the template's relative positions inside the box. That alignment is coarser than
SCRFD's landmarks (no roll correction): use it for pipeline checks, never for paper numbers.

Example:
    >>> import numpy as np
    >>> M = similarity_transform(ARCFACE_TEMPLATE, ARCFACE_TEMPLATE)
    >>> np.allclose(M, [[1, 0, 0], [0, 1, 0]])
    True
"""

from __future__ import annotations

import numpy as np

ARCFACE_TEMPLATE = np.array(
    [[38.2946, 51.6963], [73.5318, 51.5014], [56.0252, 71.7366], [41.5493, 92.3655], [70.7299, 92.2041]],
    dtype=np.float64,
)
ALIGNED_SIZE = 112


def similarity_transform(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Least-squares similarity (rotation, uniform scale, translation) taking ``src`` to ``dst``.

    Umeyama (1991) with the determinant sign correction, so it never reflects.

    Args:
        src: (n, 2) points, n >= 2.
        dst: (n, 2) target points.

    Returns:
        (2, 3) affine matrix ``M`` with ``dst ~ M @ [x, y, 1]``.
    """
    src = np.asarray(src, dtype=np.float64)
    dst = np.asarray(dst, dtype=np.float64)
    if src.shape != dst.shape or src.ndim != 2 or src.shape[1] != 2 or src.shape[0] < 2:
        raise ValueError(f"need matching (n>=2, 2) point sets, got {src.shape} and {dst.shape}")
    if not (np.all(np.isfinite(src)) and np.all(np.isfinite(dst))):
        raise ValueError("landmarks contain NaN or inf")
    mu_s, mu_d = src.mean(0), dst.mean(0)
    s0, d0 = src - mu_s, dst - mu_d
    var_s = (s0 ** 2).sum() / len(src)
    if var_s == 0:
        raise ValueError("degenerate landmarks (all points equal)")
    cov = d0.T @ s0 / len(src)
    u, sing, vt = np.linalg.svd(cov)
    d = np.ones(2)
    if np.linalg.det(u) * np.linalg.det(vt) < 0:
        d[-1] = -1  # reflection would fit better: forbid it
    rot = u @ np.diag(d) @ vt
    scale = (sing * d).sum() / var_s
    M = np.zeros((2, 3))
    M[:, :2] = scale * rot
    M[:, 2] = mu_d - scale * rot @ mu_s
    return M


def align_face(image_rgb: np.ndarray, landmarks: np.ndarray, size: int = ALIGNED_SIZE) -> np.ndarray:
    """Warp a face onto the 112x112 ArcFace template from its 5 landmarks (x, y)."""
    import cv2

    image = np.asarray(image_rgb)
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"image must be uint8 (H, W, 3), got {image.dtype} {image.shape}")
    M = similarity_transform(np.asarray(landmarks, dtype=np.float64).reshape(5, 2),
                             ARCFACE_TEMPLATE * (size / ALIGNED_SIZE))
    return cv2.warpAffine(image, M, (size, size), borderValue=0.0)


def landmarks_from_box(box: "tuple[float, float, float, float]") -> np.ndarray:
    """Template landmarks placed in a square-ish face box (x0, y0, x1, y1): the offline fallback.

    The template spans roughly the central face of a 112x112 crop; the box of a frontal
    detector spans a similar region, so the relative positions are reused directly.
    """
    x0, y0, x1, y1 = map(float, box)
    rel = ARCFACE_TEMPLATE / ALIGNED_SIZE
    return np.stack([x0 + rel[:, 0] * (x1 - x0), y0 + rel[:, 1] * (y1 - y0)], axis=1)


class CascadeFaceDetector:
    """Offline face boxes with scikit-image's shipped LBP frontal-face cascade.

    ``detect`` returns ``[(box, landmarks5, score)]`` with estimated landmarks (see module doc).
    """

    def __init__(self, scale_factor: float = 1.2, step_ratio: float = 1.0, min_size: int = 40):
        from skimage import data
        from skimage.feature import Cascade

        self._cascade = Cascade(data.lbp_frontal_face_cascade_filename())
        self.scale_factor, self.step_ratio, self.min_size = scale_factor, step_ratio, min_size

    def detect(self, image_rgb: np.ndarray) -> "list[tuple[tuple[float, float, float, float], np.ndarray, float]]":
        from skimage.color import rgb2gray

        h, w = image_rgb.shape[:2]
        found = self._cascade.detect_multi_scale(
            img=rgb2gray(image_rgb), scale_factor=self.scale_factor, step_ratio=self.step_ratio,
            min_size=(self.min_size, self.min_size), max_size=(h, w))
        out = []
        for d in found:
            box = (d["c"], d["r"], d["c"] + d["width"], d["r"] + d["height"])
            out.append((box, landmarks_from_box(box), 1.0))
        # largest face first, as the audio-driven protocol keeps the largest face
        out.sort(key=lambda t: -(t[0][2] - t[0][0]) * (t[0][3] - t[0][1]))
        return out


def _onnx_session(path, device: str = "cpu"):
    from .device import onnx_session

    return onnx_session(path, device, threads=1)  # one thread: deterministic and polite on shared CPUs


def _nms(boxes: np.ndarray, scores: np.ndarray, thresh: float) -> list[int]:
    """Greedy NMS as insightface's ``SCRFD.nms``: indices kept, highest score first.

    Box sides count one extra pixel (``x1 - x0 + 1``), the convention of insightface's (and
    py-faster-rcnn's) NMS: it raises the IoU of small boxes, so which near duplicates survive
    matches the reference detector.

    Example:
        >>> b = np.array([[0, 0, 10, 10], [4.5, 0, 14.5, 10], [50, 50, 60, 60]], float)
        >>> _nms(b, np.array([0.9, 0.8, 0.7]), 0.4)  # IoU 71.5/170.5 = 0.42 with the +1 sides
        [0, 2]
    """
    def area(b):
        return (b[..., 2] - b[..., 0] + 1) * (b[..., 3] - b[..., 1] + 1)

    order, keep = scores.argsort()[::-1], []
    while order.size:
        i, rest = order[0], order[1:]
        keep.append(int(i))
        iw = np.maximum(0.0, np.minimum(boxes[i, 2], boxes[rest, 2]) - np.maximum(boxes[i, 0], boxes[rest, 0]) + 1)
        ih = np.maximum(0.0, np.minimum(boxes[i, 3], boxes[rest, 3]) - np.maximum(boxes[i, 1], boxes[rest, 1]) + 1)
        inter = iw * ih
        iou = inter / (area(boxes[i]) + area(boxes[rest]) - inter)
        order = rest[iou <= thresh]
    return keep


def letterbox_size(height: int, width: int, input_size: int = 640) -> "tuple[int, int, float]":
    """insightface SCRFD's resize before padding: ``(new_width, new_height, det_scale)``.

    The longer side becomes ``input_size``, the other is truncated (``int``), and detections
    are divided by ``det_scale = new_height / height`` -- insightface's own choice (not
    ``input_size / max(h, w)``), kept so boxes and landmarks agree with the reference.

    Example:
        >>> letterbox_size(180, 320)
        (640, 360, 2.0)
        >>> letterbox_size(100, 333)
        (640, 192, 1.92)
    """
    if height <= 0 or width <= 0:
        raise ValueError(f"empty image {height}x{width}")
    im_ratio = float(height) / width
    if im_ratio > 1.0:
        new_h = input_size
        new_w = int(new_h / im_ratio)
    else:
        new_w = input_size
        new_h = int(new_w * im_ratio)
    return new_w, new_h, float(new_h) / height


class SCRFDDetector:
    """insightface SCRFD (``det_10g.onnx``): 640x640 letterbox, strides 8/16/32, 2 anchors, NMS 0.4.

    Preprocessing and decoding follow insightface's ``scrfd.py`` (``SCRFD.detect`` with
    ``det_size=(640, 640)`` as ``FaceAnalysis`` uses it): resize by :func:`letterbox_size`,
    zero padding bottom/right, RGB ``(x - 127.5) / 128``; the nine outputs are scores, box
    distances and landmark offsets for strides 8, 16, 32 in that order, distances in stride units
    from anchor centres ``(col * stride, row * stride)`` (two anchors per location); scores
    ``>= threshold`` are kept and :func:`_nms` removes duplicates. Checked on constant-output
    ONNX models of the same interface (tests/test_arcface_onnx.py), not on the real file (no
    download possible here): a first real run should still be compared with insightface.

    ``detect`` returns ``[(box, landmarks5, score)]`` in original image pixels, largest face first.

    ``device`` (``"cpu"``, ``"cuda"``, ``"auto"``) picks the onnxruntime provider
    (:func:`hug_vis_dataset.models.device.onnx_providers`). Images go through one at a time:
    ``det_10g.onnx`` has a fixed batch of one (its outputs are per-anchor, without a batch axis).
    """

    def __init__(self, path: "str | None" = None, threshold: float = 0.5, input_size: int = 640,
                 device: str = "cpu"):
        from ..weights import resolve

        self.session = _onnx_session(resolve("arcface_det_10g", path=path), device)
        n_out = len(self.session.get_outputs())
        if n_out != 9:
            # 6 outputs: SCRFD without landmarks; 10/15: the 5-stride variants. CSIM needs landmarks.
            raise ValueError(f"expected an SCRFD model with 9 outputs (3 strides x score/box/landmarks), "
                             f"got {n_out}")
        self.threshold, self.input_size = threshold, input_size

    def detect(self, image_rgb: np.ndarray) -> "list[tuple[tuple[float, float, float, float], np.ndarray, float]]":
        import cv2

        image = np.asarray(image_rgb)
        if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
            raise ValueError(f"image must be uint8 (H, W, 3), got {image.dtype} {image.shape}")
        h, w = image.shape[:2]
        new_w, new_h, det_scale = letterbox_size(h, w, self.input_size)
        canvas = np.zeros((self.input_size, self.input_size, 3), np.float32)
        canvas[:new_h, :new_w] = cv2.resize(image, (new_w, new_h))
        blob = ((canvas - 127.5) / 128.0).transpose(2, 0, 1)[None].astype(np.float32)
        outs = self.session.run(None, {self.session.get_inputs()[0].name: blob})
        boxes, scores, kpss = [], [], []
        for idx, stride in enumerate((8, 16, 32)):
            score = outs[idx].reshape(-1)
            dist, kps = outs[idx + 3].reshape(-1, 4) * stride, outs[idx + 6].reshape(-1, 10) * stride
            side = self.input_size // stride
            cy, cx = np.mgrid[:side, :side]
            centres = np.repeat(np.stack([cx, cy], -1).reshape(-1, 2) * stride, 2, axis=0).astype(np.float32)
            if not (len(score) == len(dist) == len(kps) == len(centres)):
                raise ValueError(f"stride {stride}: outputs have {len(score)}/{len(dist)}/{len(kps)} anchors, "
                                 f"expected {len(centres)} for a {self.input_size} input")
            keep = score >= self.threshold
            c = centres[keep]
            boxes.append(np.concatenate([c - dist[keep][:, :2], c + dist[keep][:, 2:]], 1))
            kpss.append((np.tile(c, 5) + kps[keep]).reshape(-1, 5, 2))
            scores.append(score[keep])
        boxes, kpss = np.concatenate(boxes) / det_scale, np.concatenate(kpss) / det_scale
        scores = np.concatenate(scores)
        keep = _nms(boxes, scores, 0.4)
        out = [(tuple(float(v) for v in boxes[i]), kpss[i], float(scores[i])) for i in keep]
        # largest face first, as the protocols keep the largest face (stable: ties keep score order)
        out.sort(key=lambda t: -(t[0][2] - t[0][0]) * (t[0][3] - t[0][1]))
        return out


class ArcFaceEmbedder:
    """ArcFace ``w600k_r50.onnx``: aligned 112x112 RGB uint8 -> L2-normalised 512-d.

    Args:
        path: explicit ``w600k_r50.onnx`` (else the weights registry).
        device: ``"cpu"``, ``"cuda"`` or ``"auto"``: the onnxruntime provider
            (:func:`hug_vis_dataset.models.device.onnx_providers`).
        batch_size: faces per ``session.run``; a call with more faces is split, so memory is
            bounded and each face's embedding does not depend on it beyond float rounding.
    """

    def __init__(self, path: "str | None" = None, device: str = "cpu", batch_size: int = 32):
        from ..weights import resolve
        from .device import check_batch_size

        self.batch_size = check_batch_size(batch_size)
        self.session = _onnx_session(resolve("arcface_w600k_r50", path=path), device)

    def __call__(self, faces_rgb: np.ndarray) -> np.ndarray:
        faces = np.asarray(faces_rgb)
        if faces.ndim != 4 or faces.shape[1:] != (ALIGNED_SIZE, ALIGNED_SIZE, 3) or len(faces) == 0:
            raise ValueError(f"faces must be (n>=1, 112, 112, 3) aligned RGB, got {faces.shape}")
        if not np.all(np.isfinite(faces)):
            raise ValueError("faces contain NaN or inf")
        # insightface feeds BGR crops through blobFromImages(swapRB=True): the network sees RGB,
        # which these faces already are
        name = self.session.get_inputs()[0].name
        parts = []
        for start in range(0, len(faces), self.batch_size):
            x = (faces[start:start + self.batch_size].astype(np.float32) - 127.5) / 127.5
            parts.append(self.session.run(None, {name: np.ascontiguousarray(x.transpose(0, 3, 1, 2))})[0])
        feats = np.concatenate(parts)
        return feats / np.linalg.norm(feats, axis=1, keepdims=True)

"""Real photographs of people shipped in installed packages, made into video frames with known motion.

scikit-image's ``data.astronaut()`` (512 x 512) and matplotlib's ``grace_hopper.jpg`` (512 x 600) are
head-and-shoulders portraits. :func:`scene` frames one like a seated half-body clip: scaled to the frame's
height, bottom-aligned (the body goes on below the frame, as it does in HUG-VIS), the sides filled with the
photo's edge pixels, then shifted and zoomed by known amounts; :func:`open_mouth` opens its mouth by a known
number of pixels (the jaw pulled down, a dark cavity between the lips); :func:`stretch_neck` stretches
everything above the shoulders.

:func:`person_alpha` cuts the person out of a photo (MediaPipe's selfie segmentation run once per photo,
then the largest region, its holes filled, its edge softened: a fixed, documented recipe), and
:func:`composite` places the cut-out over a background with an exact uint8 alpha: the alpha it returns is the
one the frame was blended with, so a clip's matte is exact by construction (:mod:`hug_vis_dataset.synth.people`).

Example:
    >>> import numpy as np
    >>> image = photo("astronaut")
    >>> image.shape, float(placement(image, size=(640, 360))[0, 0]) == 360 / 512
    ((512, 512, 3), True)
    >>> to_photo(np.array([[320.0, 180.0]]), placement(image, size=(640, 360))).tolist()
    [[256.0, 256.0]]
"""

from __future__ import annotations

import functools

import numpy as np

#: The photographs, by name.
PHOTOS = ("astronaut", "grace")
#: Frame size of the test clips (a 16:9 frame; values do not depend on it: everything is in body units).
SIZE = (640, 360)
#: The mouth of each photo (pixels of the photo): the point between the inner lips, the jaw's reach sideways
#: and the lips' half width.
MOUTHS = {"astronaut": (222.7, 146.1, 38.0, 22.0), "grace": (268.3, 276.8, 48.0, 30.0)}
#: The shoulder line of each photo (pixels of the photo; the mean height of MediaPipe's pose landmarks 11
#: and 12 on the photo itself: astronaut 258.2 and 237.4, grace 403.7 and 387.9).
SHOULDER_Y = {"astronaut": 247.8, "grace": 395.8}
#: Blur (photo pixels) that softens the cut-out's edge in :func:`person_alpha`.
EDGE_SIGMA = 1.5


def photo(name: str) -> np.ndarray:
    """The photograph as uint8 RGB (``name`` in :data:`PHOTOS`)."""
    if name == "astronaut":
        import skimage.data

        return skimage.data.astronaut()
    if name != "grace":
        raise ValueError(f"unknown photo {name!r}; expected one of {PHOTOS}")
    import matplotlib.cbook as cbook
    import matplotlib.image as mpimg

    return np.ascontiguousarray(mpimg.imread(cbook.get_sample_data("grace_hopper.jpg"))[..., :3])


def placement(image: np.ndarray, dx: float = 0.0, dy: float = 0.0, zoom: float = 1.0, size=SIZE,
              angle: float = 0.0) -> np.ndarray:
    """The 2 x 3 map from photo coordinates to frame coordinates (continuous pixels: corner at 0): scaled to
    the frame's height times ``zoom``, centred, bottom-aligned, moved by ``(dx, dy)`` frame pixels, then turned
    by ``angle`` radians (positive: clockwise on screen) about the bottom centre of the placed photo."""
    width, height = size
    scale = height / image.shape[0] * zoom
    x0 = width / 2 - image.shape[1] * scale / 2 + dx
    y0 = height - image.shape[0] * scale + dy
    m = np.array([[scale, 0.0, x0], [0.0, scale, y0]])
    if angle:
        c, s = np.cos(angle), np.sin(angle)
        pivot = np.array([width / 2 + dx, height + dy])
        turn = np.array([[c, -s], [s, c]])
        m = np.c_[turn @ m[:, :2], turn @ m[:, 2] + pivot - turn @ pivot]
    return m


def _warp(image: np.ndarray, m: np.ndarray, size, border: int) -> np.ndarray:
    import cv2

    index = m.copy()
    # continuous -> pixel-index coordinates: i' + 0.5 = A (i + 0.5) + t
    index[:, 2] += 0.5 * (m[:, :2].sum(axis=1) - 1)
    return cv2.warpAffine(image, index, tuple(size), flags=cv2.INTER_LINEAR, borderMode=border)


def scene(image: np.ndarray, dx: float = 0.0, dy: float = 0.0, zoom: float = 1.0, size=SIZE) -> np.ndarray:
    """One frame: the photo placed by :func:`placement` (edge pixels replicated around it).

    Example:
        >>> frame = scene(photo("grace"), dx=10.0, size=(64, 36))
        >>> frame.shape, frame.dtype
        ((36, 64, 3), dtype('uint8'))
    """
    import cv2

    return _warp(image, placement(image, dx, dy, zoom, size), size, cv2.BORDER_REPLICATE)


def to_photo(points: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Frame points back to photo coordinates (the inverse of :func:`placement` without a turn)."""
    return (np.asarray(points, np.float64) - m[:, 2]) / m[0, 0]


def stretch_neck(frame: np.ndarray, shoulder_y: float, factor: float) -> np.ndarray:
    """Everything above ``shoulder_y`` stretched upwards by ``factor`` (a neck longer by that factor).

    Example:
        >>> column = np.arange(10, dtype=np.float32)[:, None]
        >>> stretch_neck(column, 8.0, 2.0)[:, 0].tolist()
        [4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0, 7.5, 8.0, 9.0]
    """
    import cv2

    height, width = frame.shape[:2]
    ys = np.arange(height, dtype=np.float32)
    source = np.where(ys < shoulder_y, shoulder_y - (shoulder_y - ys) / factor, ys).astype(np.float32)
    return cv2.remap(frame, np.tile(np.arange(width, dtype=np.float32), (height, 1)),
                     np.tile(source[:, None], (1, width)), cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


@functools.lru_cache(maxsize=4)
def _mouth_grid(name: str, height: int, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xm, ym, jaw, _ = MOUTHS[name]
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    weight = np.exp(-((xs - xm) / jaw) ** 2) * np.clip((ys - ym) / 4.0, 0, 1) * np.clip(1 - (ys - ym - 45) / 40, 0, 1)
    return xs, ys, weight.astype(np.float32)


def open_mouth(image: np.ndarray, name: str, opening: float) -> np.ndarray:
    """The photo with its mouth opened by ``opening`` pixels: the lower lip and chin pulled down (fading out
    sideways and under the chin) and a dark cavity between the lips.

    Example:
        >>> image = photo("astronaut")
        >>> opened = open_mouth(image, "astronaut", 10.0)
        >>> opened[150, 222].tolist(), bool((open_mouth(image, "astronaut", 0.0) == image).all())
        ([60, 20, 25], True)
    """
    import cv2

    xm, ym, _, half_width = MOUTHS[name]
    xs, ys, weight = _mouth_grid(name, *image.shape[:2])
    opening = float(opening)
    if opening == 0.0:
        return image.copy()
    out = cv2.remap(image, xs, ys - np.float32(opening) * weight, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    if opening > 0.5:
        out[((xs - xm) / half_width) ** 2 + ((ys - (ym + opening / 2)) / (opening / 2)) ** 2 <= 1] = (60, 20, 25)
    return out


@functools.lru_cache(maxsize=len(PHOTOS))
def person_alpha(name: str) -> np.ndarray:
    """The person's alpha in the photo, float32 (H, W) in [0, 1]: MediaPipe's selfie segmentation (the general
    256 x 256 model, ``hugvis weights download mediapipe``) on the photo, thresholded at 0.5, its largest
    region kept and its holes filled, then blurred by :data:`EDGE_SIGMA` pixels so the edge is soft. Computed
    once per photo and process.

    Example:
        >>> alpha = person_alpha("grace")
        >>> alpha.shape, bool(alpha[300, 256] == 1.0), bool(alpha[30, 20] == 0.0)
        ((600, 512), True, True)
    """
    from scipy import ndimage

    from ..models.mediapipe.segmentation import SelfieSegmentation

    mask = SelfieSegmentation()(photo(name)[None])[0] >= 0.5
    labels, count = ndimage.label(mask)
    if count > 1:
        sizes = ndimage.sum_labels(mask, labels, index=np.arange(1, count + 1))
        mask = labels == 1 + int(np.argmax(sizes))
    mask = ndimage.binary_fill_holes(mask)
    soft = ndimage.gaussian_filter(mask.astype(np.float64), EDGE_SIGMA, mode="nearest")
    soft[soft < 1 / 512] = 0.0
    soft[soft > 1 - 1 / 512] = 1.0
    return soft.astype(np.float32)


def composite(image: np.ndarray, alpha: np.ndarray, m: np.ndarray, background: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
    """``(alpha uint8 (H, W), rgb uint8 (H, W, 3))``: the photo and its alpha placed by the 2 x 3 map ``m`` over
    ``background`` (uint8 (H, W, 3)). The alpha is rounded to uint8 first and the frame blended with exactly
    that alpha: ``rgb = round(a / 255 * photo + (1 - a / 255) * background)``. Below the photo its bottom rows
    go on (the body continues out of the frame).

    Example:
        >>> image = np.full((4, 4, 3), 200, np.uint8); alpha = np.ones((4, 4), np.float32)
        >>> a, rgb = composite(image, alpha, placement(image, size=(8, 4)), np.zeros((4, 8, 3), np.uint8))
        >>> a[2].tolist(), rgb[2, :, 0].tolist()
        ([0, 0, 255, 255, 255, 255, 0, 0], [0, 0, 200, 200, 200, 200, 0, 0])
    """
    import cv2

    height, width = background.shape[:2]
    pad = image.shape[0] // 2  # the bottom rows repeated, so a body moved up or turned leaves no gap
    tall = np.concatenate([image, np.repeat(image[-1:], pad, axis=0)])
    tall_alpha = np.concatenate([alpha, np.repeat(alpha[-1:], pad, axis=0)])
    a = np.round(_warp(tall_alpha, m, (width, height), cv2.BORDER_CONSTANT) * 255.0).clip(0, 255).astype(np.uint8)
    fg = _warp(tall, m, (width, height), cv2.BORDER_REPLICATE).astype(np.float32)
    w = a.astype(np.float32)[..., None] / 255.0
    rgb = np.round(w * fg + (1.0 - w) * background.astype(np.float32)).clip(0, 255).astype(np.uint8)
    return a, rgb

"""Analytic rendering of a seated half-body figure with an exact soft alpha.

Every body part is a primitive with a signed distance function (capsules, ellipses,
rounded boxes) evaluated at pixel centres. Coverage of a pixel is
``clip(0.5 - d, 0, 1)`` for signed distance ``d`` in pixels: a one-pixel linear ramp
across every edge, the area coverage of a straight edge. The figure's alpha is the
coverage of the *union* of all parts (the minimum distance), so seams between parts stay
opaque; colours are composited back to front. Motion blur averages several sub-frame
renders within the exposure, so alpha is the time-averaged coverage, as a camera sees it.
Each part is evaluated only inside its bounding box, which keeps a 320x180 frame at a
few milliseconds.

Example:
    >>> import numpy as np
    >>> look = appearance_for_actor(1)
    >>> alpha, premult = render_pose(rest_pose(), look, 64, 36)
    >>> alpha.shape, premult.shape, bool(0 < alpha.mean() < 1)
    ((36, 64), (36, 64, 3), True)
    >>> bool(((alpha > 0) & (alpha < 1)).any())
    True
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Union

import numpy as np

GREEN = np.array([0.0, 177.0, 64.0]) / 255.0

# Pose vector fields (radians for angles, frame heights for offsets).
POSE_FIELDS: tuple[str, ...] = (
    "lean",  # torso roll about the hips (+ towards image right)
    "shift_x",
    "shift_y",  # + down
    "scale",  # >1 leaning towards the camera, <1 leaning back
    "head_tilt",
    "head_nod",  # + chin down (head drops)
    "r_upper",  # image-right arm: upper arm angle from hanging down, + outwards
    "r_fore",  # forearm absolute angle from down, + outwards, pi = straight up
    "l_upper",
    "l_fore",
    "r_open",  # finger spread 0 (fist) .. 1 (open)
    "l_open",
    "mouth",  # 0 closed .. 1 open
)
P = {name: i for i, name in enumerate(POSE_FIELDS)}


def rest_pose() -> np.ndarray:
    """Seated rest: upright, forearms resting inwards on the lap, mouth closed."""
    pose = np.zeros(len(POSE_FIELDS))
    pose[P["scale"]] = 1.0
    pose[P["r_upper"]] = pose[P["l_upper"]] = 0.22
    pose[P["r_fore"]] = pose[P["l_fore"]] = -0.95
    pose[P["r_open"]] = pose[P["l_open"]] = 0.3
    return pose


@dataclass(frozen=True)
class Appearance:
    """Per-actor look: colours in [0, 1] RGB, proportions as multipliers."""

    skin: tuple[float, float, float]
    shirt: tuple[float, float, float]
    shirt2: tuple[float, float, float]
    stripe_period: float  # frame heights; 0 = plain shirt
    hair: tuple[float, float, float]
    hair_volume: float
    fringe: int  # number of fringe/flyaway strands
    shoulders: float
    head_w: float
    head_h: float
    arm_len: float
    lips: tuple[float, float, float]


def appearance_for_actor(actor_id: int, seed: int = 0) -> Appearance:
    """The deterministic look of an actor (seeded by actor id and seed).

    Example:
        >>> appearance_for_actor(3) == appearance_for_actor(3), appearance_for_actor(3) == appearance_for_actor(4)
        (True, False)
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, actor_id, 0xA99E]))
    tone = rng.uniform(0.25, 1.0)
    skin = np.array([0.45, 0.28, 0.20]) * (1 - tone) + np.array([0.96, 0.80, 0.68]) * tone
    # Shirt colours avoid green so the keying problem stays about edges, not spill-coloured clothes.
    hue = rng.choice([0.0, 0.08, 0.6, 0.67, 0.75, 0.9, 0.12])
    shirt = _hsv(hue, rng.uniform(0.3, 0.8), rng.uniform(0.35, 0.9))
    shirt2 = _hsv((hue + 0.5) % 1.0 if rng.uniform() < 0.5 else hue, rng.uniform(0.0, 0.4), rng.uniform(0.15, 0.95))
    hair_base = rng.choice([0.08, 0.15, 0.3, 0.55])
    hair = tuple(float(v) for v in np.array([1.0, 0.8, 0.6]) * hair_base)
    return Appearance(
        skin=tuple(float(v) for v in skin),
        shirt=shirt,
        shirt2=shirt2,
        stripe_period=float(rng.choice([0.0, 0.035, 0.06])),
        hair=hair,
        hair_volume=float(rng.uniform(0.8, 1.3)),
        fringe=int(rng.integers(5, 11)),
        shoulders=float(rng.uniform(0.88, 1.12)),
        head_w=float(rng.uniform(0.88, 1.1)),
        head_h=float(rng.uniform(0.92, 1.1)),
        arm_len=float(rng.uniform(0.92, 1.08)),
        lips=tuple(float(v) for v in np.clip(skin * np.array([0.75, 0.45, 0.45]), 0, 1)),
    )


def blend_appearance(a: Appearance, b: Appearance, weight: float) -> Appearance:
    """Interpolate two looks field by field (integers rounded); ``weight`` in [0, 1]."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"weight must be in [0, 1], got {weight}")
    out = {}
    for f in dataclasses.fields(Appearance):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, tuple):
            out[f.name] = tuple(float((1 - weight) * p + weight * q) for p, q in zip(x, y))
        elif isinstance(x, int):
            out[f.name] = int(round((1 - weight) * x + weight * y))
        else:
            out[f.name] = float((1 - weight) * x + weight * y)
    return Appearance(**out)


def _hsv(h: float, s: float, v: float) -> tuple[float, float, float]:
    import colorsys

    return tuple(float(c) for c in colorsys.hsv_to_rgb(float(h), float(s), float(v)))


# ----------------------------------------------------------------------------- primitives
Color = Union[tuple, Callable[[np.ndarray, np.ndarray], np.ndarray]]


def sd_capsule(px, py, ax, ay, bx, by, ra, rb):
    """Signed distance to a tapered capsule (radius ra at a, rb at b), approximately exact."""
    dx, dy = bx - ax, by - ay
    denom = dx * dx + dy * dy
    h = np.clip(((px - ax) * dx + (py - ay) * dy) / denom, 0.0, 1.0) if denom > 0 else np.zeros_like(px + py)
    qx, qy = px - ax - h * dx, py - ay - h * dy
    return np.sqrt(qx * qx + qy * qy) - (ra + (rb - ra) * h)


def sd_ellipse(px, py, cx, cy, rx, ry, angle=0.0):
    """Signed distance to a rotated ellipse (first-order approximation, exact on the axes)."""
    c, s = np.cos(angle), np.sin(angle)
    x, y = (px - cx) * c + (py - cy) * s, -(px - cx) * s + (py - cy) * c
    k0 = np.sqrt((x / rx) ** 2 + (y / ry) ** 2)
    k1 = np.sqrt((x / rx**2) ** 2 + (y / ry**2) ** 2)
    return np.where(k1 > 1e-9, k0 * (k0 - 1.0) / np.maximum(k1, 1e-9), -min(rx, ry))


def sd_rbox(px, py, cx, cy, hw, hh, r, angle=0.0):
    """Signed distance to a rotated box with rounded corners (exact)."""
    c, s = np.cos(angle), np.sin(angle)
    x, y = np.abs((px - cx) * c + (py - cy) * s), np.abs(-(px - cx) * s + (py - cy) * c)
    qx, qy = x - (hw - r), y - (hh - r)
    return np.sqrt(np.maximum(qx, 0) ** 2 + np.maximum(qy, 0) ** 2) + np.minimum(np.maximum(qx, qy), 0) - r


@dataclass
class Part:
    kind: str  # "capsule" | "ellipse" | "rbox"
    args: tuple
    color: Color
    bbox: tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels
    solid: bool = True  # contributes to alpha (face details inside the head do not need to)
    group: str = "body"  # "head" parts change with identity drift (simulated talking heads)


def _capsule(a, b, ra, rb, color) -> Part:
    r = max(ra, rb) + 1.5
    return Part("capsule", (a[0], a[1], b[0], b[1], ra, rb), color,
                (min(a[0], b[0]) - r, min(a[1], b[1]) - r, max(a[0], b[0]) + r, max(a[1], b[1]) + r))


def _ellipse(c, rx, ry, angle, color, solid=True) -> Part:
    r = max(rx, ry) + 1.5
    return Part("ellipse", (c[0], c[1], rx, ry, angle), color, (c[0] - r, c[1] - r, c[0] + r, c[1] + r), solid)


def _rbox(c, hw, hh, r, angle, color) -> Part:
    e = np.hypot(hw, hh) + 1.5
    return Part("rbox", (c[0], c[1], hw, hh, r, angle), color, (c[0] - e, c[1] - e, c[0] + e, c[1] + e))


_SDF = {"capsule": sd_capsule, "ellipse": sd_ellipse, "rbox": sd_rbox}


# ----------------------------------------------------------------------------- figure
def build_parts(
    pose: np.ndarray, look: Appearance, width: int, height: int, keypoints: "list | None" = None
) -> list[Part]:
    """Primitives of the figure for one pose, back to front, in pixel coordinates.

    When ``keypoints`` is a list, the head centre and both wrists are appended to it.
    """
    H = float(height)
    px_unit = H / 180.0  # thin structures are sized in pixels of the default 320x180 frame
    cx = width / 2.0
    pivot = np.array([cx, 1.05 * H])
    lean, scale = pose[P["lean"]], pose[P["scale"]]
    rot = np.array([[np.cos(lean), -np.sin(lean)], [np.sin(lean), np.cos(lean)]])
    offset = np.array([pose[P["shift_x"]] * H, pose[P["shift_y"]] * H])

    def T(x: float, y: float) -> np.ndarray:
        return pivot + scale * rot @ (np.array([x, y]) - pivot) + offset

    s = scale
    sh_y = 0.56 * H
    sh_hw = 0.17 * H * look.shoulders
    parts: list[Part] = []

    # Hair volume behind the head.
    head_c0 = np.array([cx, sh_y - 0.215 * H])
    head_c0[1] += pose[P["head_nod"]] * H
    head_c = T(*head_c0)
    tilt = lean + pose[P["head_tilt"]]
    rx, ry = 0.085 * H * look.head_w * s, 0.11 * H * look.head_h * s
    cth, sth = np.cos(tilt), np.sin(tilt)

    def H_(dx: float, dy: float) -> np.ndarray:  # head-local offset (in head radii) -> pixels
        x, y = dx * rx, dy * ry
        return head_c + np.array([x * cth - y * sth, x * sth + y * cth])

    hv = look.hair_volume
    parts.append(_ellipse(H_(0, -0.12), rx * (1.0 + 0.12 * hv), ry * (0.95 + 0.08 * hv), tilt, look.hair))

    # Torso (striped or plain shirt), shoulders, neck.
    torso_c = T(cx, sh_y + 0.3 * H)
    shirt, shirt2, period = np.array(look.shirt), np.array(look.shirt2), look.stripe_period * H * s
    top_y = T(cx, sh_y)[1]

    def shirt_color(xx: np.ndarray, yy: np.ndarray) -> np.ndarray:
        shade = 1.0 - 0.25 * np.clip((yy - top_y) / H, 0, 1)  # softly lit from above
        if period > 0:
            w = 0.5 + 0.5 * np.sin(2 * np.pi * (yy - top_y) / period)
            w = np.clip((w - 0.5) * 4 + 0.5, 0, 1)[..., None]
            base = shirt * (1 - w) + shirt2 * w
        else:
            base = np.broadcast_to(shirt, (*np.broadcast(xx, yy).shape, 3))
        return base * shade[..., None]

    parts.append(_rbox(torso_c, (sh_hw + 0.015 * H) * s, 0.33 * H * s, 0.07 * H * s, lean, shirt_color))
    head_from = len(parts)
    neck_a, neck_b = T(cx, sh_y + 0.02 * H), T(cx, sh_y - 0.11 * H + pose[P["head_nod"]] * H)
    skin = np.array(look.skin)
    parts.append(_capsule(neck_a, neck_b, 0.036 * H * s, 0.032 * H * s, tuple(skin * 0.85)))

    # Head and face.
    parts.append(_ellipse(head_c, rx, ry, tilt, tuple(skin)))
    if keypoints is not None:
        keypoints.append(head_c)
    eye_r = max(0.011 * H * s, 0.45)
    for side in (-1, 1):
        parts.append(_ellipse(H_(0.38 * side, -0.05), eye_r, eye_r * 0.8, tilt, (0.08, 0.06, 0.05), solid=False))
        parts.append(_capsule(H_(0.55 * side, -0.27), H_(0.18 * side, -0.3), 0.35 * eye_r, 0.4 * eye_r, look.hair))
    mouth = float(np.clip(pose[P["mouth"]], 0, 1))
    parts.append(_ellipse(H_(0, 0.5), 0.28 * rx, max(0.025 * ry, 0.02 * ry + 0.16 * ry * mouth), tilt,
                          (0.35, 0.08, 0.1) if mouth > 0.05 else look.lips, solid=False))
    # Hair cap and a fringe of thin strands; flyaways reach past the outline (fine matting detail).
    parts.append(_ellipse(H_(0, -0.62), rx * 0.98, ry * 0.42, tilt, look.hair))
    strand_r = 0.55 * px_unit
    for i in range(look.fringe):
        u = (i + 0.5) / look.fringe * 2 - 1  # -1..1 across the forehead
        a = H_(u * 0.8, -0.75 + 0.25 * abs(u))
        b = H_(u * 1.15 + 0.1 * np.sin(7 * i), -0.25 + 0.35 * abs(u) + 0.05 * np.cos(5 * i))
        parts.append(_capsule(a, b, strand_r * 1.3, strand_r * (0.6 + 0.3 * (i % 3)), look.hair))
    for side in (-1, 1):  # flyaway hairs at the temples
        a = H_(0.9 * side, -0.45)
        b = H_(1.35 * side, -0.2)
        parts.append(_capsule(a, b, strand_r, strand_r * 0.7, look.hair))

    for part in parts[head_from:]:
        part.group = "head"
    parts[0].group = "head"

    # Arms, hands, fingers (in front of the torso).
    upper_len, fore_len = 0.2 * H * look.arm_len * s, 0.18 * H * look.arm_len * s
    for side, up_i, fo_i, op_i in ((1, "r_upper", "r_fore", "r_open"), (-1, "l_upper", "l_fore", "l_open")):
        sh = T(cx + side * sh_hw, sh_y + 0.015 * H)
        th1, th2 = pose[P[up_i]], pose[P[fo_i]]
        # Angles are measured from hanging down, + outwards; rotate with the torso.
        d1 = np.array([side * np.sin(th1), np.cos(th1)])
        d2 = np.array([side * np.sin(th2), np.cos(th2)])
        d1, d2 = rot @ d1, rot @ d2
        elbow = sh + upper_len * d1
        wrist = elbow + fore_len * d2
        if keypoints is not None:
            keypoints.append(wrist + 0.08 * H * s * d2)  # finger tips move fastest
        parts.append(_capsule(sh, elbow, 0.043 * H * s, 0.034 * H * s, shirt_color))
        parts.append(_capsule(elbow, wrist, 0.03 * H * s, 0.021 * H * s, tuple(skin * 0.97)))
        palm_c = wrist + 0.03 * H * s * d2
        parts.append(_ellipse(palm_c, 0.03 * H * s, 0.024 * H * s, float(np.arctan2(d2[1], d2[0])), tuple(skin)))
        spread = float(np.clip(pose[P[op_i]], 0, 1))
        finger_len = 0.05 * H * s * (0.45 + 0.55 * spread)
        normal = np.array([-d2[1], d2[0]])
        for j, (off, rad) in enumerate(zip((-1.5, -0.5, 0.5, 1.5), (0.75, 0.95, 0.9, 0.7))):
            ang = off * 0.22 * spread
            fd = d2 * np.cos(ang) + normal * np.sin(ang)
            base = palm_c + 0.018 * H * s * d2 + normal * off * 0.011 * H * s
            tip = base + fd * finger_len * (0.85 + 0.1 * (j in (1, 2)))
            r = max(rad * px_unit, 0.35)
            parts.append(_capsule(base, tip, r, r * 0.85, tuple(skin * 0.95)))
        # Thumb.
        tb = palm_c - normal * side * 0.022 * H * s
        tt = tb + (d2 * 0.5 - normal * side * 0.8) * 0.03 * H * s * (0.5 + 0.5 * spread)
        parts.append(_capsule(tb, tt, max(1.1 * px_unit, 0.4), max(0.9 * px_unit, 0.35), tuple(skin * 0.95)))
    return parts


_GRID_CACHE: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}


def _grid(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    key = (width, height)
    if key not in _GRID_CACHE:
        _GRID_CACHE[key] = (np.arange(width, dtype=np.float32) + 0.5, np.arange(height, dtype=np.float32) + 0.5)
    return _GRID_CACHE[key]


def render_parts(parts: list[Part], width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Alpha (H, W) float64 in [0, 1] and premultiplied colour (H, W, 3) of a part list."""
    xs, ys = _grid(width, height)
    # float32 halves memory traffic; coverage needs far less precision than 8 bits of output.
    union = np.full((height, width), 1e6, np.float32)
    premult = np.zeros((height, width, 3), np.float32)
    acc = np.zeros((height, width), np.float32)  # alpha accumulated by "over", for un-premultiplying colours
    for part in parts:
        x0, y0, x1, y1 = part.bbox
        i0, i1 = max(int(np.floor(x0)), 0), min(int(np.ceil(x1)) + 1, width)
        j0, j1 = max(int(np.floor(y0)), 0), min(int(np.ceil(y1)) + 1, height)
        if i0 >= i1 or j0 >= j1:
            continue
        px, py = xs[None, i0:i1], ys[j0:j1, None]
        d = _SDF[part.kind](px, py, *part.args)
        d = np.broadcast_to(d, (j1 - j0, i1 - i0))
        if part.solid:
            np.minimum(union[j0:j1, i0:i1], d, out=union[j0:j1, i0:i1])
        cov = np.clip(0.5 - d, 0.0, 1.0)
        if callable(part.color):
            col = part.color(np.broadcast_to(px, d.shape), np.broadcast_to(py, d.shape))
        else:
            col = np.asarray(part.color, dtype=np.float32)
        c = cov[..., None]
        premult[j0:j1, i0:i1] = col * c + premult[j0:j1, i0:i1] * (1 - c)
        acc[j0:j1, i0:i1] = cov + acc[j0:j1, i0:i1] * (1 - cov)
    alpha = np.clip(0.5 - union, 0.0, 1.0)
    # Colour where parts overlap is the painter's result; its alpha is the exact union coverage.
    colour = premult * (alpha / np.maximum(acc, 1e-6))[..., None]
    return alpha, colour


def render_pose(pose: np.ndarray, look: Appearance, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Render one instantaneous pose: (alpha, premultiplied RGB) in [0, 1]."""
    return render_parts(build_parts(pose, look, width, height), width, height)


def key_points(pose: np.ndarray, look: Appearance, width: int, height: int) -> np.ndarray:
    """Pixel positions (3, 2) of the head centre and both finger tips (for motion-blur sampling)."""
    points: list = []
    build_parts(pose, look, width, height, points)
    return np.asarray(points, dtype=np.float64)


def background(width: int, height: int) -> np.ndarray:
    """The green screen (H, W, 3) in [0, 1]: RGB ~ (0, 177, 64) with a soft lighting gradient."""
    xs, ys = _grid(width, height)
    u = (xs[None, :] / width - 0.45) ** 2 + (ys[:, None] / height - 0.35) ** 2
    light = 1.06 - 0.28 * u  # brighter centre-top, darker corners
    return np.clip(GREEN[None, None, :] * light[..., None], 0, 1)

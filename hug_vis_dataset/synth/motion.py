"""Pose trajectories: rest -> expression -> rest, per emotion style and action template.

Each emotion has a movement style (paper Table 1) that sets how fast the figure moves into
the expression (ramp), how much it moves (amplitude), its posture (lean, head) and its
repetitive component (oscillation frequency, trembling, an abrupt freeze for Surprised).
Each of the four action ids is a target pose plus oscillating joints, following Table 1's
templates where it lists them.

Example:
    >>> import numpy as np
    >>> from hug_vis_dataset.datamodel.grid import Emotion
    >>> poses = pose_track(Emotion.HAPPY, 1, np.linspace(0, 2, 61), 2.0, np.random.default_rng(0))
    >>> poses.shape
    (61, 13)
    >>> bool(np.allclose(poses[0, :-1], rest_pose()[:-1], atol=0.01))
    True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..datamodel.grid import Emotion
from .figure import P, POSE_FIELDS, rest_pose


@dataclass(frozen=True)
class Style:
    ramp: float  # seconds to reach the expression pose
    amplitude: float  # scale of the excursion from rest
    freq: float  # Hz of the repeated component
    tremble: float  # radians of fast trembling (Afraid)
    freeze: bool  # no oscillation once the pose is reached (Surprised)
    posture: dict  # offsets added during the expression


STYLES: dict[Emotion, Style] = {
    Emotion.HAPPY: Style(0.25, 1.0, 1.6, 0.0, False, {"shift_y": -0.01, "head_nod": -0.012, "scale": 0.01}),
    Emotion.ANGRY: Style(0.10, 1.0, 2.8, 0.0, False, {"shift_y": 0.015, "scale": 0.045, "head_nod": 0.01}),
    Emotion.SAD: Style(0.70, 0.40, 0.35, 0.0, False, {"shift_y": 0.02, "scale": -0.015, "head_nod": 0.035}),
    Emotion.AFRAID: Style(0.20, 0.75, 1.0, 0.035, False, {"shift_y": -0.01, "scale": -0.04, "shift_x": -0.02}),
    Emotion.DISGUSTED: Style(0.35, 0.75, 1.2, 0.0, False, {"shift_y": -0.012, "scale": -0.035, "head_tilt": 0.12}),
    Emotion.SURPRISED: Style(0.08, 1.0, 0.0, 0.0, True, {"shift_y": -0.02, "scale": -0.015, "head_nod": -0.02}),
    Emotion.NEUTRAL: Style(0.50, 0.12, 0.5, 0.0, False, {}),
}

# (target joint values, oscillating joints {field: amplitude}) per action id 1..4.
_BOTH = ("r_", "l_")
TEMPLATES: dict[Emotion, tuple[tuple[dict, dict], ...]] = {
    Emotion.HAPPY: (  # open-palmed welcomes, outward extension, thumbs-up
        ({"r_upper": 1.15, "r_fore": 1.95, "l_upper": 1.15, "l_fore": 1.95, "r_open": 1, "l_open": 1},
         {"r_upper": 0.25, "r_fore": 0.3, "l_upper": 0.25, "l_fore": 0.3}),
        ({"r_upper": 1.1, "r_fore": 2.1, "r_open": 1}, {"r_upper": 0.3, "r_fore": 0.45}),
        ({"r_upper": 1.5, "r_fore": 1.6, "l_upper": 1.5, "l_fore": 1.6, "r_open": 1, "l_open": 1},
         {"r_upper": 0.22, "l_upper": 0.22}),
        ({"r_upper": 0.6, "r_fore": 2.6, "l_upper": 0.6, "l_fore": 2.6, "r_open": 0, "l_open": 0},
         {"r_fore": 0.35, "l_fore": 0.35}),
    ),
    Emotion.ANGRY: (  # table strike, arm sweep, pointing, fist raise and drop
        ({"r_upper": 0.55, "r_fore": 0.9, "r_open": 0, "lean": 0.03}, {"r_fore": 1.0, "r_upper": 0.3}),
        ({"r_upper": 1.2, "r_fore": 1.1, "r_open": 0.6}, {"r_upper": 0.75, "r_fore": 0.7}),
        ({"r_upper": 1.35, "r_fore": 1.45, "r_open": 0.1, "lean": 0.04}, {"r_fore": 0.35, "r_upper": 0.25}),
        ({"r_upper": 0.8, "r_fore": 2.7, "r_open": 0}, {"r_fore": 1.1, "r_upper": 0.45}),
    ),
    Emotion.SAD: (  # head/neck support, hand on head, self-embrace
        ({"r_upper": 0.45, "r_fore": 3.55, "l_upper": 0.45, "l_fore": 3.55, "r_open": 0.6, "l_open": 0.6},
         {"r_fore": 0.05}),
        ({"r_upper": 1.55, "r_fore": 3.95, "r_open": 0.8}, {"r_upper": 0.05}),
        ({"r_upper": 0.1, "r_fore": -2.1, "l_upper": 0.1, "l_fore": -2.1, "scale": -0.02}, {"r_fore": 0.04}),
        ({"r_upper": 0.35, "r_fore": 3.4, "r_open": 0.5}, {"r_fore": 0.05}),
    ),
    Emotion.AFRAID: (  # guarding, recoil, hands clasped while leaning back
        ({"r_upper": 0.5, "r_fore": 2.75, "l_upper": 0.5, "l_fore": 2.75, "r_open": 1, "l_open": 1}, {}),
        ({"lean": -0.1, "scale": -0.05, "shift_x": -0.04, "r_upper": 0.4, "r_fore": 2.2}, {"lean": 0.02}),
        ({"r_upper": 0.05, "r_fore": -2.4, "l_upper": 0.05, "l_fore": -2.4, "scale": -0.04, "r_open": 0,
          "l_open": 0}, {}),
        ({"r_upper": 0.6, "r_fore": 2.85, "r_open": 1}, {}),
    ),
    Emotion.DISGUSTED: (  # push-aways, dismissive wave, shooing
        ({"r_upper": 1.2, "r_fore": 1.4, "l_upper": 1.2, "l_fore": 1.4, "r_open": 1, "l_open": 1},
         {"r_upper": 0.15, "l_upper": 0.15}),
        ({"r_upper": 1.3, "r_fore": 1.5, "r_open": 1}, {"r_upper": 0.2}),
        ({"r_upper": 0.6, "r_fore": 2.0, "r_open": 1}, {"r_fore": 0.5}),
        ({"r_upper": 0.8, "r_fore": 1.3, "r_open": 1}, {"r_fore": 0.6}),
    ),
    Emotion.SURPRISED: (  # hands up, hands behind head, torso lean, one-hand raise then freeze
        ({"r_upper": 1.9, "r_fore": 2.9, "l_upper": 1.9, "l_fore": 2.9, "r_open": 1, "l_open": 1}, {}),
        ({"r_upper": 2.2, "r_fore": 4.0, "l_upper": 2.2, "l_fore": 4.0}, {}),
        ({"lean": 0.14, "scale": 0.05, "r_upper": 0.7, "r_fore": 1.1, "l_upper": 0.7, "l_fore": 1.1}, {}),
        ({"r_upper": 2.0, "r_fore": 3.0, "r_open": 1}, {}),
    ),
    Emotion.NEUTRAL: (  # subtle finger/wrist movement, minor head or hand adjustments
        ({"r_open": 0.5}, {"r_fore": 0.5, "l_open": 0.5}),
        ({"head_tilt": 0.25}, {"r_fore": 0.4}),
        ({"r_upper": 0.4}, {"head_nod": 0.08}),
        ({"r_fore": 0.6, "l_fore": 0.6}, {"r_open": 0.6}),
    ),
}


def _smoothstep(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3 - 2 * x)


def expression_weight(times: np.ndarray, duration: float, ramp: float) -> np.ndarray:
    """0 at rest, 1 during the expression; rest -> ramp up -> hold -> ramp down -> rest.

    Example:
        >>> import numpy as np
        >>> w = expression_weight(np.array([0.0, 1.0, 2.0]), 2.0, 0.2)
        >>> w.tolist()
        [0.0, 1.0, 0.0]
    """
    t0, t1 = 0.12 * duration, 0.86 * duration
    r = max(min(ramp, 0.25 * duration), 1e-6)
    return _smoothstep((times - t0) / r) * (1 - _smoothstep((times - (t1 - r)) / r))


def pose_track(
    emotion: Emotion, action_id: int, times: np.ndarray, duration: float, rng: np.random.Generator
) -> np.ndarray:
    """Poses (len(times), len(POSE_FIELDS)) for an emotion and action id; mouth left at 0.

    ``times`` may be any instants (sub-frame samples for motion blur); the same rng draws
    give the same trajectory, so callers draw the clip's random phases once and pass them
    through :func:`clip_motion`.
    """
    return clip_motion(emotion, action_id, duration, rng)(np.asarray(times, dtype=np.float64))


def clip_motion(emotion: Emotion, action_id: int, duration: float, rng: np.random.Generator):
    """A function ``times -> poses`` for one clip (random phases drawn now, once)."""
    if action_id < 1:
        raise ValueError(f"action_id must be >= 1, got {action_id}")
    style = STYLES[emotion]
    target, osc = TEMPLATES[emotion][(action_id - 1) % 4]
    rest = rest_pose()
    delta = np.zeros(len(POSE_FIELDS))
    for name, value in target.items():
        delta[P[name]] = (value - rest[P[name]]) if name in ("r_upper", "r_fore", "l_upper", "l_fore", "r_open",
                                                               "l_open") else value
    # The joint excursion scales with the style (Sad hands only reach the face, Neutral
    # barely moves); posture offsets are added unscaled.
    delta *= style.amplitude
    for name, value in style.posture.items():
        delta[P[name]] += value
    osc_amp = np.zeros(len(POSE_FIELDS))
    for name, value in osc.items():
        osc_amp[P[name]] = value * style.amplitude
    phase = rng.uniform(0, 2 * np.pi)
    freq = style.freq * rng.uniform(0.9, 1.1)
    breath_phase = rng.uniform(0, 2 * np.pi)
    tremble_phases = rng.uniform(0, 2 * np.pi, (3, len(POSE_FIELDS)))

    def poses(times: np.ndarray) -> np.ndarray:
        t = np.asarray(times, dtype=np.float64)[:, None]
        w = expression_weight(t[:, 0], duration, style.ramp)[:, None]
        out = rest[None, :] + w * delta[None, :]
        if not style.freeze and style.freq > 0:
            out += w * osc_amp[None, :] * np.sin(2 * np.pi * freq * t + phase)
        if style.tremble:
            tr = sum(np.sin(2 * np.pi * f * t + tremble_phases[i]) for i, f in enumerate((8.3, 10.1, 12.7))) / 3
            joints = np.zeros(len(POSE_FIELDS))
            joints[[P["r_upper"], P["r_fore"], P["l_upper"], P["l_fore"], P["head_tilt"]]] = style.tremble
            joints[P["shift_x"]] = style.tremble * 0.05
            out += (0.3 + w) * joints * tr
        # Breathing keeps even the rest pose alive.
        out[:, P["shift_y"]] += 0.002 * np.sin(2 * np.pi * 0.3 * t[:, 0] + breath_phase)
        out[:, P["r_open"]] = np.clip(out[:, P["r_open"]], 0, 1)
        out[:, P["l_open"]] = np.clip(out[:, P["l_open"]], 0, 1)
        return out

    return poses

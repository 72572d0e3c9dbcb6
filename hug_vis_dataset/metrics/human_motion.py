"""Human-motion metrics of generated videos (beyond the paper): body, hands and mouth from landmark tracks.

Every function takes :class:`~.human_tracks.HumanTrack` objects (the generated clip's, and the reference's
where the metric compares) and returns one number, or raises :class:`ValueError` saying why the clip has
none (nobody found in any frame, ...): the row is then a counted failure with that reason, never 0. Body
distances are in shoulder widths (the distance between pose landmarks 11 and 12 in the same frame), hand
distances in palm lengths, mouth distances in eye widths (outer eye corners 33 and 263 of the face mesh),
so the size of the frame never matters. The formulas, units and directions are in docs/HUMAN_METRICS.md.

Example:
    >>> from .human_tracks import TrackBuilder
    >>> builder = TrackBuilder(fps=30.0)
    >>> body = np.zeros((33, 2)); body[11], body[12] = (0.0, 0.0), (100.0, 0.0)
    >>> for t in range(4):
    ...     builder.add(body=body + [3.0 * t, 0.0], visibility=np.ones(33))
    >>> track = builder.track()
    >>> body_jitter(track), akd(track, track), person_missing(track)
    (0.0, 0.0, 0.0)
"""

from __future__ import annotations

import math

import numpy as np

from .human_tracks import HumanTrack

#: A pose landmark counts where its visibility reaches this (MediaPipe's usual threshold).
VISIBLE = 0.5
#: A segment's ends count for its length only where they are clearly in view: a limb at the frame's edge
#: at visibility 0.5-0.8 is placed by the network's guess, whose spread would read as stretching.
SEGMENT_VISIBLE = 0.8
#: The upper body: pose landmarks 0-22 (face, shoulders, arms, hands); hips and legs are under the table.
UPPER_BODY = tuple(range(23))
SHOULDERS = (11, 12)
#: Segments whose length cannot change (pose landmarks; a pair of points stands for their midpoint): the neck
#: (mid-ears to mid-shoulders), the person's left upper arm and forearm, then the right ones.
BONES = (((7, 8), (11, 12)), (11, 13), (13, 15), (12, 14), (14, 16))
#: Joints measured in 3-D world coordinates: (point, vertex, point, least interior angle in degrees). Elbow
#: flexion ends near 150 degrees (interior 30), wrist flexion and extension near 80 (interior 100: 90 allowed).
BODY_JOINTS = ((11, 13, 15, 30.0), (12, 14, 16, 30.0), (13, 15, 19, 90.0), (14, 16, 20, 90.0))
#: Finger joints (hand landmarks): PIP flexion ends near 110 degrees (interior 70: 60 allowed), DIP and the
#: thumb's IP near 90 (interior 90: 70 allowed).
HAND_JOINTS = ((5, 6, 7, 60.0), (9, 10, 11, 60.0), (13, 14, 15, 60.0), (17, 18, 19, 60.0),
               (6, 7, 8, 70.0), (10, 11, 12, 70.0), (14, 15, 16, 70.0), (18, 19, 20, 70.0), (2, 3, 4, 70.0))
#: Palm length: wrist (0) to the middle finger's MCP joint (9).
PALM = (0, 9)
#: In HumanTrack.face: the 40 lip points, then the outer eye corners; the inner-lip midpoints 13 and 14.
LIP_POINTS = slice(0, 40)
EYES = (40, 41)
INNER_LIPS = (35, 25)
#: Lags tried by the mouth-audio offset, in frames either way (SyncNet's search is +-15 at 25 fps).
MAX_LAG = 15
#: Frame pairs a lag needs to be tried.
MIN_PAIRS = 10


def _nanmean_rows(values: np.ndarray) -> np.ndarray:
    """Mean over the last axis ignoring NaN; NaN for a row with no value (no warning)."""
    finite = np.isfinite(values)
    counts = finite.sum(axis=-1)
    sums = np.where(finite, values, 0.0).sum(axis=-1)
    return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def shoulder_width(track: HumanTrack) -> np.ndarray:
    """``(n,)`` the distance between the shoulders (pixels) where both are visible, else NaN."""
    left, right = track.body[:, SHOULDERS[0]], track.body[:, SHOULDERS[1]]
    width = np.hypot(*(left - right).T)
    ok = (track.visibility[:, list(SHOULDERS)] >= VISIBLE).all(axis=1) & (width > 0)
    return np.where(ok, width, np.nan)


def _visible(track: HumanTrack, points=UPPER_BODY) -> np.ndarray:
    """``(n, k, 2)`` body landmarks, NaN where not visible."""
    body = track.body[:, list(points)].copy()
    body[track.visibility[:, list(points)] < VISIBLE] = np.nan
    return body


def _mean_or_fail(values: np.ndarray, why: str) -> float:
    values = values[np.isfinite(values)]
    if not len(values):
        raise ValueError(why)
    return float(values.mean())


def _missing_share(track: HumanTrack, part: str) -> float:
    if track.n == 0:
        raise ValueError("the video has no frames")
    return 100.0 * float((~track.found(part)).sum()) / track.n


def person_missing(pred: HumanTrack) -> float:
    """Share of the generated video's frames in which no person is found (%)."""
    return _missing_share(pred, "body")


def face_missing(pred: HumanTrack) -> float:
    """Share of the generated video's frames in which no face is found (%)."""
    return _missing_share(pred, "face")


def body_jitter(pred: HumanTrack) -> float:
    """Mean acceleration of the visible upper-body landmarks, in shoulder widths per frame squared:
    ``mean_t mean_k |p_k(t+1) - 2 p_k(t) + p_k(t-1)| / S(t)`` over the frames ``t`` whose neighbours
    also show the person (a landmark counts where it is visible in all three frames)."""
    points, scale = _visible(pred), shoulder_width(pred)
    if pred.n < 3:
        raise ValueError(f"jitter needs three consecutive frames; the video has {pred.n}")
    acceleration = np.hypot(*np.moveaxis(points[2:] - 2 * points[1:-1] + points[:-2], -1, 0))
    per_frame = _nanmean_rows(acceleration / scale[1:-1, None])
    return _mean_or_fail(per_frame, "no three consecutive frames show the person with both shoulders visible")


def _end(track: HumanTrack, end) -> tuple[np.ndarray, np.ndarray]:
    """A segment end's points ``(n, 2)`` (a pair: their midpoint) and whether it is in view ``(n,)``
    (:data:`SEGMENT_VISIBLE`)."""
    ends = [end] if isinstance(end, int) else list(end)
    return track.body[:, ends].mean(axis=1), (track.visibility[:, ends] >= SEGMENT_VISIBLE).all(axis=1)


def bone_length_variation(pred: HumanTrack) -> float:
    """Mean over the segments of :data:`BONES` of the coefficient of variation over frames of the segment's
    length in shoulder widths (%): bones do not stretch. A segment counts in the frames where both its ends
    are clearly in view (visibility >= :data:`SEGMENT_VISIBLE`) and both shoulders visible, and only when
    that is at least half of the frames showing the person (a limb at the edge of the frame, seen now and
    then, would measure the detector's guesses)."""
    scale = shoulder_width(pred)
    shown = int(np.isfinite(scale).sum())
    cvs = []
    for a, b in BONES:
        (pa, va), (pb, vb) = _end(pred, a), _end(pred, b)
        length = np.hypot(*(pa - pb).T) / scale
        length = length[va & vb & np.isfinite(length)]
        if len(length) >= max(3, shown / 2) and length.mean() > 0:
            cvs.append(length.std() / length.mean())
    if not cvs:
        raise ValueError("no neck or arm segment is visible in half of the frames showing the person")
    return 100.0 * float(np.mean(cvs))


def interior_angles(a: np.ndarray, vertex: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle at ``vertex`` between the directions to ``a`` and ``b`` (degrees), along the last axis.

    >>> interior_angles(np.array([1.0, 0, 0]), np.zeros(3), np.array([0.0, 2, 0])).round(6).tolist()
    90.0
    """
    u, v = a - vertex, b - vertex
    cos = (u * v).sum(-1) / (np.linalg.norm(u, axis=-1) * np.linalg.norm(v, axis=-1))
    return np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))


def joint_angle_violations(pred: HumanTrack) -> float:
    """Share of measured elbow and wrist angles outside the human range (%), from the pose's 3-D world landmarks
    (all three points visible; :data:`BODY_JOINTS`)."""
    measured = violations = 0
    for a, v, b, least in BODY_JOINTS:
        ok = (pred.visibility[:, [a, v, b]] >= VISIBLE).all(axis=1)
        angles = interior_angles(pred.world[ok, a], pred.world[ok, v], pred.world[ok, b])
        measured, violations = measured + len(angles), violations + int((angles < least).sum())
    if measured == 0:
        raise ValueError("no elbow or wrist is visible in any frame")
    return 100.0 * violations / measured


def finger_angle_violations(pred: HumanTrack) -> float:
    """Share of measured finger joint angles outside the human range (%), from the hands' 3-D world landmarks
    (:data:`HAND_JOINTS`), over the (frame, hand) pairs showing a hand."""
    hands = pred.hands_world[pred.found("hands")]  # (m, 21, 3)
    if not len(hands):
        raise ValueError("no hand is found in any frame")
    angles = np.stack([interior_angles(hands[:, a], hands[:, v], hands[:, b]) for a, v, b, _ in HAND_JOINTS], axis=1)
    least = np.array([joint[3] for joint in HAND_JOINTS])
    return 100.0 * float((angles < least).sum()) / angles.size


def keypoint_distances(pred: HumanTrack, ref: HumanTrack) -> np.ndarray:
    """``(n,)`` per-frame AKD: the mean over the upper-body landmarks visible in the reference of the distance
    between generated and reference landmark, in the reference's shoulder widths; NaN where either video has
    no person or the reference's shoulders are not visible."""
    n = min(pred.n, ref.n)
    pred, ref = pred.head(n), ref.head(n)
    distance = np.hypot(*np.moveaxis(pred.body[:, list(UPPER_BODY)] - _visible(ref), -1, 0))
    return _nanmean_rows(distance / shoulder_width(ref)[:, None])


def akd(pred: HumanTrack, ref: HumanTrack) -> float:
    """Average keypoint distance to the reference clip, frame ``t`` against frame ``t`` (shoulder widths)."""
    return _mean_or_fail(keypoint_distances(pred, ref), "no frame shows the person in both videos "
                                                        "(with the reference's shoulders visible)")


def akd_drift(pred: HumanTrack, ref: HumanTrack) -> float:
    """How fast AKD grows over the clip: the least-squares slope of the per-frame AKD against time
    (shoulder widths per second)."""
    distance = keypoint_distances(pred, ref)
    ok = np.isfinite(distance)
    if ok.sum() < 3:
        raise ValueError(f"drift needs three frames with the person in both videos; {int(ok.sum())} have")
    t = np.flatnonzero(ok) / pred.fps
    d = distance[ok]
    t0 = t - t.mean()
    return float((t0 * (d - d.mean())).sum() / (t0 ** 2).sum())


def _hands_paired(pred: HumanTrack, ref: HumanTrack) -> tuple[HumanTrack, HumanTrack, np.ndarray, np.ndarray]:
    n = min(pred.n, ref.n)
    pred, ref = pred.head(n), ref.head(n)
    return pred, ref, pred.found("hands"), ref.found("hands")


def hand_recall(pred: HumanTrack, ref: HumanTrack) -> float:
    """Of the (frame, hand) pairs where the reference shows that hand, the share where the generated video
    shows it too (%)."""
    _, _, found, wanted = _hands_paired(pred, ref)
    if not wanted.any():
        raise ValueError("the reference shows no hand in any frame")
    return 100.0 * float((found & wanted).sum()) / float(wanted.sum())


def hand_keypoint_distance(pred: HumanTrack, ref: HumanTrack) -> float:
    """Hand shape error where both videos show a hand: the mean over its 21 landmarks of
    ``|(h_i - h_0) - (r_i - r_0)|`` (each hand relative to its wrist) in the reference's palm lengths."""
    pred, ref, found, wanted = _hands_paired(pred, ref)
    both = found & wanted
    if not both.any():
        raise ValueError("no frame shows the same hand in both videos")
    h, r = pred.hands[both], ref.hands[both]  # (m, 21, 2)
    shape_error = np.hypot(*np.moveaxis((h - h[:, :1]) - (r - r[:, :1]), -1, 0)).mean(axis=1)
    palm = np.hypot(*(r[:, PALM[1]] - r[:, PALM[0]]).T)
    return _mean_or_fail(np.where(palm > 0, shape_error / np.where(palm > 0, palm, 1), np.nan),
                         "the reference's hands have no palm length")


def normalised_lips(track: HumanTrack) -> np.ndarray:
    """``(n, 40, 2)`` lips relative to their centroid, rotated so the eye line is horizontal, in eye widths."""
    lips, eyes = track.face[:, LIP_POINTS], track.face[:, list(EYES)]
    line = eyes[:, 1] - eyes[:, 0]
    width = np.hypot(*line.T)
    angle = np.arctan2(line[:, 1], line[:, 0])
    c, s = np.cos(-angle)[:, None], np.sin(-angle)[:, None]
    rel = lips - lips.mean(axis=1, keepdims=True)
    rotated = np.stack([rel[..., 0] * c - rel[..., 1] * s, rel[..., 0] * s + rel[..., 1] * c], axis=-1)
    return rotated / np.where(width > 0, width, np.nan)[:, None, None]


def lmd(pred: HumanTrack, ref: HumanTrack) -> float:
    """Mouth landmark distance: mean over the frames with a face in both videos and the 40 lip points of the
    distance between the normalised lips (:func:`normalised_lips`), in eye widths."""
    n = min(pred.n, ref.n)
    distance = np.hypot(*np.moveaxis(normalised_lips(pred.head(n)) - normalised_lips(ref.head(n)), -1, 0))
    return _mean_or_fail(distance.mean(axis=1), "no frame shows a face in both videos")


def mouth_opening(track: HumanTrack) -> np.ndarray:
    """``(n,)`` the inner lips' gap (landmarks 13, 14) in eye widths; NaN without a face."""
    eyes = track.face[:, list(EYES)]
    gap = np.hypot(*(track.face[:, INNER_LIPS[0]] - track.face[:, INNER_LIPS[1]]).T)
    width = np.hypot(*(eyes[:, 1] - eyes[:, 0]).T)
    return np.where(width > 0, gap / np.where(width > 0, width, 1), np.nan)


def mouth_audio_lag(opening: np.ndarray, envelope: np.ndarray, max_lag: int = MAX_LAG) -> tuple[int, float]:
    """``(lag, correlation)``: the lag ``L`` in ``[-max_lag, max_lag]`` frames maximising the Pearson correlation
    of ``opening[t]`` with ``envelope[t - L]`` over the frames where both are finite (at least
    :data:`MIN_PAIRS`); ``L > 0``: the mouth moves ``L`` frames after the sound. Ties go to the smaller ``|L|``.

    Example:
        >>> signal = np.sin(np.arange(200) / 3.0) ** 2
        >>> mouth_audio_lag(np.r_[np.zeros(4), signal[:-4]], signal)[0]
        4
    """
    opening, envelope = np.asarray(opening, np.float64), np.asarray(envelope, np.float64)
    n = min(len(opening), len(envelope))
    opening, envelope = opening[:n], envelope[:n]
    if np.nanstd(opening) == 0 if np.isfinite(opening).any() else True:
        raise ValueError("the mouth does not move in the frames with a face (or no frame has a face)")
    if np.nanstd(envelope) == 0 if np.isfinite(envelope).any() else True:
        raise ValueError("the driving audio's level does not change")
    best = None
    for lag in sorted(range(-max_lag, max_lag + 1), key=lambda v: (abs(v), v)):
        m = opening[max(lag, 0):n + min(lag, 0)]
        e = envelope[max(-lag, 0):n - max(lag, 0)]
        ok = np.isfinite(m) & np.isfinite(e)
        if ok.sum() < MIN_PAIRS:
            continue
        m, e = m[ok] - m[ok].mean(), e[ok] - e[ok].mean()
        denominator = math.sqrt(float((m * m).sum() * (e * e).sum()))
        if denominator == 0:
            continue
        correlation = float((m * e).sum()) / denominator
        if best is None or correlation > best[1]:
            best = (lag, correlation)
    if best is None:
        raise ValueError(f"fewer than {MIN_PAIRS} frames have both a face and the driving audio at every lag")
    return best


def mouth_audio_offset(pred: HumanTrack, ref: HumanTrack) -> float:
    """The lag between the generated mouth's opening and the driving audio's envelope, in frames (absolute
    value: 0 = in sync). ``ref`` carries the envelope (:func:`~.human_tracks.speech_envelope`)."""
    if ref.envelope is None:
        raise ValueError("no driving audio to compare the mouth with")
    return float(abs(mouth_audio_lag(mouth_opening(pred), ref.envelope)[0]))


def mouth_audio_sync(pred: HumanTrack, ref: HumanTrack) -> float:
    """The Pearson correlation of the mouth's opening with the driving audio's envelope at the lag
    :func:`mouth_audio_offset` finds (-1..1; a mouth that does not follow the audio scores near 0, and a mouth
    that does not move at all, in at least :data:`MIN_PAIRS` frames with a face, scores 0: it follows nothing,
    while its lag is undefined).

    Example:
        >>> from .human_tracks import TrackBuilder
        >>> still = TrackBuilder(30.0)
        >>> for _ in range(12):
        ...     still.add(face=np.r_[np.zeros((25, 2)), [[0.0, 1.0]], np.zeros((14, 2)), [[-1.0, 0.0], [1.0, 0.0]]])
        >>> mouth_audio_sync(still.track(), TrackBuilder(30.0).track(envelope=np.arange(12.0)))
        0.0
    """
    if ref.envelope is None:
        raise ValueError("no driving audio to compare the mouth with")
    opening = mouth_opening(pred)
    finite = opening[np.isfinite(opening)]
    if len(finite) >= MIN_PAIRS and np.all(finite == finite[0]):
        return 0.0
    return float(mouth_audio_lag(opening, ref.envelope)[1])

"""The human-motion metrics (metrics/human_motion.py) against independent references and against what is
known by construction on real photographs (tests/human_photos.py).

* the functions on landmark tracks written by hand, against loop-by-loop re-derivations of the formulas in
  docs/HUMAN_METRICS.md (and their invariances: a track moved, scaled or rotated as a whole scores the same);
* through MediaPipe's networks on real photographs: jitter rises monotonically with planted jitter; the
  bone-length variation stays small under rigid motion and rises with a planted neck stretch; AKD and LMD are
  0 for identical clips; the mouth-audio lag recovers a planted audio delay within one frame; a frame with
  nobody is a counted failure with its reason; chunk and batch sizes change nothing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import human_photos as P
from hug_vis_dataset.metrics import human_motion as hm
from hug_vis_dataset.metrics.human_tracks import HumanTrack, TrackBuilder, speech_envelope

PARTS = ("human_pose", "human_face")


# ----------------------------------------------------------------------------- tracks written by hand
def _track(body, visibility=None, face=None, hands=None, world=None, fps=30.0, envelope=None) -> HumanTrack:
    n = len(body)
    return HumanTrack(fps, np.asarray(body, float), np.ones((n, 33)) if visibility is None else np.asarray(visibility, float),
                      np.zeros((n, 33, 3)) if world is None else np.asarray(world, float),
                      np.full((n, 2, 21, 2), np.nan) if hands is None else np.asarray(hands, float),
                      np.full((n, 2, 21, 3), np.nan), np.full((n, 42, 2), np.nan) if face is None else np.asarray(face, float),
                      envelope=envelope)


def _random_body(rng, n=12):
    base = rng.uniform(100, 400, (33, 2))
    base[11], base[12] = (200.0, 300.0), (320.0, 305.0)
    return base + rng.normal(0, 3, (n, 33, 2))


def _jitter_reference(track: HumanTrack) -> float:
    per_frame = []
    for t in range(1, track.n - 1):
        s = math.dist(track.body[t, 11], track.body[t, 12])
        values = [math.dist(track.body[t + 1, k] - track.body[t, k], track.body[t, k] - track.body[t - 1, k])
                  / s for k in range(23) if min(track.visibility[t - 1:t + 2, k]) >= 0.5]
        if values:
            per_frame.append(sum(values) / len(values))
    return sum(per_frame) / len(per_frame)


def _akd_reference(pred: HumanTrack, ref: HumanTrack) -> list[float]:
    out = []
    for t in range(min(pred.n, ref.n)):
        s = math.dist(ref.body[t, 11], ref.body[t, 12])
        ks = [k for k in range(23) if ref.visibility[t, k] >= 0.5]
        out.append(sum(math.dist(pred.body[t, k], ref.body[t, k]) for k in ks) / len(ks) / s)
    return out


def test_jitter_and_akd_against_their_formulas():
    rng = np.random.default_rng(0)
    pred, ref = _random_body(rng), _random_body(rng)
    vis = rng.uniform(0.3, 1.0, (12, 33))
    vis[:, 11:13] = 1.0
    pred_track, ref_track = _track(pred, vis), _track(ref, vis)
    assert hm.body_jitter(pred_track) == pytest.approx(_jitter_reference(pred_track), rel=1e-12)
    per_frame = _akd_reference(pred_track, ref_track)
    assert hm.akd(pred_track, ref_track) == pytest.approx(sum(per_frame) / len(per_frame), rel=1e-12)
    t = np.arange(12) / 30.0
    slope = np.polyfit(t, per_frame, 1)[0]  # numpy's least squares, an independent fit
    assert hm.akd_drift(pred_track, ref_track) == pytest.approx(slope, rel=1e-9)
    assert hm.akd(ref_track, ref_track) == 0.0 and hm.akd_drift(ref_track, ref_track) == 0.0


def test_body_values_do_not_depend_on_where_or_how_big_the_person_is():
    rng = np.random.default_rng(1)
    pred, ref = _random_body(rng), _random_body(rng)
    angle = 0.3
    rot = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    moved = lambda b: b @ rot.T * 2.5 + [400.0, -70.0]  # noqa: E731 - a larger frame, moved and turned
    for fn in (hm.body_jitter, hm.bone_length_variation):
        assert fn(_track(moved(pred))) == pytest.approx(fn(_track(pred)), rel=1e-9)
    assert hm.akd(_track(moved(pred)), _track(moved(ref))) == pytest.approx(hm.akd(_track(pred), _track(ref)), rel=1e-9)


def test_bone_length_variation_against_its_formula_and_a_planted_stretch():
    rng = np.random.default_rng(2)
    body = np.repeat(_random_body(rng, 1), 10, axis=0)
    assert hm.bone_length_variation(_track(body)) == pytest.approx(0.0, abs=1e-12)  # rigid: no variation
    stretched = body.copy()
    stretched[::2, 15] = body[::2, 13] + 1.3 * (body[::2, 15] - body[::2, 13])  # left forearm 30% longer, half the frames
    cvs = []
    for a, b in hm.BONES:
        ends = lambda e: stretched[:, list(e)].mean(axis=1) if isinstance(e, tuple) else stretched[:, e]  # noqa: E731
        length = np.hypot(*(ends(a) - ends(b)).T) / np.hypot(*(stretched[:, 11] - stretched[:, 12]).T)
        cvs.append(length.std() / length.mean())
    assert hm.bone_length_variation(_track(stretched)) == pytest.approx(100 * np.mean(cvs), rel=1e-12)
    assert hm.bone_length_variation(_track(stretched)) > 2.0


def test_joint_angles_outside_the_human_range_are_counted():
    world = np.zeros((4, 33, 3))
    world[:, 11], world[:, 13] = (0, 0, 0), (0, 0.3, 0)  # upper arm down
    forearm = [(0.0, 0.6, 0.0), (0.25, 0.3, 0.0), (0.05, 0.05, 0.0), (0.01, 0.02, 0.0)]  # 180, 90, ~11, ~2 degrees
    for t, wrist in enumerate(forearm):
        world[t, 15] = wrist
    vis = np.zeros((4, 33))
    vis[:, [11, 13, 15]] = 1.0
    angles = hm.interior_angles(world[:, 11], world[:, 13], world[:, 15])
    assert angles[:2] == pytest.approx([180.0, 90.0])
    assert hm.joint_angle_violations(_track(np.zeros((4, 33, 2)), vis, world=world)) == 50.0  # 2 of 4 under 30
    with pytest.raises(ValueError, match="no elbow or wrist"):
        hm.joint_angle_violations(_track(np.zeros((4, 33, 2)), np.zeros((4, 33)), world=world))


def test_finger_angles_outside_the_human_range_are_counted():
    # a straight hand: every finger joint at 180 degrees; then the index PIP folded to 30 degrees (under 60)
    hand = np.zeros((21, 3))
    for finger, base in enumerate((1, 5, 9, 13, 17)):
        for j in range(4):
            hand[base + j] = (finger * 0.02, 0.03 * (j + 1), 0.0)
    folded = hand.copy()
    angle = math.radians(30)
    folded[7] = hand[6] + 0.03 * np.array([0.0, -math.cos(angle), math.sin(angle)])  # back along the finger
    folded[8] = folded[7] + 0.03 * np.array([0.0, -math.cos(angle), math.sin(angle)])
    track = _track(np.zeros((2, 33, 2)), hands=np.zeros((2, 2, 21, 2)))
    track.hands[0, 1] = np.nan  # one frame shows only the left hand: 3 (frame, hand) pairs
    track.hands_world[:] = hand
    track.hands_world[1, 0] = folded
    angles = hm.interior_angles(folded[5], folded[6], folded[7])
    assert angles == pytest.approx(30.0)
    # 9 joints per hand, 3 hands: the folded index PIP (30 < 60) is the one violation (its DIP stays straight)
    assert hm.finger_angle_violations(track) == pytest.approx(100 * 1 / 27)
    with pytest.raises(ValueError, match="no hand is found"):
        hm.finger_angle_violations(_track(np.zeros((2, 33, 2))))


def _face(lips, eyes):
    return np.concatenate([lips, eyes], axis=1)


def test_lmd_against_its_formula_and_its_invariances():
    rng = np.random.default_rng(4)
    lips = rng.uniform(-20, 20, (6, 40, 2)) + [300, 400]
    eyes = np.array([[250.0, 330.0], [350.0, 335.0]])[None].repeat(6, 0)
    other = lips + rng.normal(0, 2, lips.shape)
    pred, ref = _track(np.zeros((6, 33, 2)), face=_face(other, eyes)), _track(np.zeros((6, 33, 2)), face=_face(lips, eyes))
    want = []
    for t in range(6):
        width = math.dist(*eyes[t])
        angle = math.atan2(eyes[t, 1, 1] - eyes[t, 0, 1], eyes[t, 1, 0] - eyes[t, 0, 0])
        c, s = math.cos(-angle), math.sin(-angle)
        norm = lambda pts: [((x - pts[:, 0].mean()) * c - (y - pts[:, 1].mean()) * s,  # noqa: E731
                             (x - pts[:, 0].mean()) * s + (y - pts[:, 1].mean()) * c) for x, y in pts]
        a, b = norm(other[t]), norm(lips[t])
        want.append(sum(math.dist(p, q) for p, q in zip(a, b)) / 40 / width)
    assert hm.lmd(pred, ref) == pytest.approx(sum(want) / 6, rel=1e-9)
    assert hm.lmd(ref, ref) == 0.0
    # the generated face anywhere, at any size: the same distance
    moved = _track(np.zeros((6, 33, 2)), face=_face(other * 3 + 100, eyes * 3 + 100))
    assert hm.lmd(moved, ref) == pytest.approx(hm.lmd(pred, ref), rel=1e-9)


@pytest.mark.parametrize("delay", [-6, -1, 0, 3, 9])
def test_the_lag_recovers_a_planted_delay_on_signals(delay):
    _, envelope = P.syllables(4.0, seed=5)
    per_frame = speech_envelope(envelope, 16000, 30.0, 120)
    mouth = np.roll(per_frame, delay)  # the mouth moves `delay` frames after the sound
    mouth[:max(delay, 0)] = np.nan
    if delay < 0:
        mouth[delay:] = np.nan
    lag, correlation = hm.mouth_audio_lag(mouth, per_frame)
    assert lag == delay and correlation > 0.99


def test_no_person_no_face_no_hand_are_failures_with_reasons_never_zeros():
    nobody = TrackBuilder(30.0)
    for _ in range(5):
        nobody.add(reasons={"body": "no person detected", "face": "no face detected"})
    track = nobody.track()
    assert hm.person_missing(track) == 100.0 and hm.face_missing(track) == 100.0
    for fn, why in ((hm.body_jitter, "no three consecutive frames"), (hm.bone_length_variation, "no neck or arm"),
                    (hm.joint_angle_violations, "no elbow")):
        with pytest.raises(ValueError, match=why):
            fn(track)
    for fn, why in ((hm.akd, "no frame shows the person"), (hm.hand_recall, "the reference shows no hand"),
                    (hm.hand_keypoint_distance, "no frame shows the same hand"), (hm.lmd, "no frame shows a face")):
        with pytest.raises(ValueError, match=why):
            fn(track, track)
    with pytest.raises(ValueError, match="no frame has a face"):
        hm.mouth_audio_offset(track, TrackBuilder(30.0).track(envelope=np.linspace(0, 1, 5)))


def test_hand_recall_and_distance_against_their_formulas():
    rng = np.random.default_rng(6)
    ref_hands = rng.uniform(0, 100, (5, 2, 21, 2))
    pred_hands = ref_hands + rng.normal(0, 1, ref_hands.shape)
    ref_hands[0, 1] = np.nan  # the reference shows 9 (frame, hand) pairs
    pred_hands[2, 0] = np.nan  # the generated video misses one of them
    body = np.zeros((5, 33, 2))
    pred, ref = _track(body, hands=pred_hands), _track(body, hands=ref_hands)
    assert hm.hand_recall(pred, ref) == pytest.approx(100 * 8 / 9)
    want = []
    for t in range(5):
        for side in range(2):
            if np.isnan(ref_hands[t, side, 0, 0]) or np.isnan(pred_hands[t, side, 0, 0]):
                continue
            h, r = pred_hands[t, side], ref_hands[t, side]
            palm = math.dist(r[9], r[0])
            want.append(sum(math.dist(h[i] - h[0], r[i] - r[0]) for i in range(21)) / 21 / palm)
    assert hm.hand_keypoint_distance(pred, ref) == pytest.approx(sum(want) / len(want), rel=1e-12)


# ----------------------------------------------------------------------------- real photographs through the networks
@pytest.fixture(scope="module")
def networks():
    P.needs_mediapipe()
    from hug_vis_dataset.models.mediapipe.holistic import load_face, load_pose

    return {"human_pose": load_pose(), "human_face": load_face()}


def landmark_track(networks, frames, fps=30.0, envelope=None) -> HumanTrack:
    """The library side: every frame through the landmark networks, collected into a track."""
    from hug_vis_dataset.models.mediapipe.holistic import VideoLandmarks

    video, builder = VideoLandmarks(networks, fps), TrackBuilder(fps)
    for frame in frames:
        out = video.process(frame)
        builder.add(reasons=out.reasons, body=out.body, visibility=out.visibility, world=out.world, hands=out.hands,
                    hands_world=out.hands_world, face=out.face)
    return builder.track(envelope=envelope)


@pytest.mark.parametrize("name", ["astronaut", "grace"])
def test_jitter_rises_monotonically_with_planted_jitter(networks, name):
    image = P.photo(name)
    rng = np.random.default_rng(7)
    values = []
    for amplitude in (0.0, 2.0, 5.0, 10.0):  # frame pixels (the frame is 360 px high)
        shifts = rng.normal(0, amplitude, (16, 2))
        values.append(hm.body_jitter(landmark_track(networks, [P.scene(image, dx, abs(dy)) for dx, dy in shifts])))
    assert values == sorted(values) and values[-1] > 3 * values[0], values


@pytest.mark.parametrize("name", ["astronaut", "grace"])
def test_bone_length_variation_is_small_under_rigid_motion_and_rises_with_a_stretched_neck(networks, name):
    image = P.photo(name)
    still = landmark_track(networks, [P.scene(image)] * 3)
    shoulder_y = float(still.body[-1, [11, 12], 1].mean())
    rigid = landmark_track(networks, [P.scene(image, 12 * math.sin(t / 3), 5 * abs(math.cos(t / 4))) for t in range(16)])
    stretched = [hm.bone_length_variation(landmark_track(
        networks, [P.stretch_neck(P.scene(image), shoulder_y, 1 + k * (t % 2)) for t in range(16)])) for k in (0.1, 0.2)]
    small = hm.bone_length_variation(rigid)
    assert small < 3.0, small  # percent
    assert small < stretched[0] < stretched[1] and stretched[1] > 2 * small, (small, stretched)


def _clip(tmp_path, name, frames, audio=None):
    return str(P.write_clip(tmp_path / f"{name}.mp4", frames, audio=audio))


def _score(task, prediction, reference, metrics, **options):
    from hug_vis_dataset.tasks import ModelCache, get_task

    scores, errors = get_task(task).score_groups(prediction, reference, metrics, ModelCache(), options)
    return scores, errors


HUMAN_ROWS = ("person_missing", "face_missing", "body_jitter", "bone_length_variation", "akd", "akd_drift", "lmd")


@pytest.fixture(scope="module")
def talking(tmp_path_factory, networks):
    """A talking astronaut: 75 frames whose mouth opens with a syllable rhythm; the audio of that rhythm."""
    folder = tmp_path_factory.mktemp("talking")
    image = P.photo("astronaut")
    samples, envelope = P.syllables(2.5, seed=3)
    per_frame = speech_envelope(envelope, 16000, 30.0, 75)
    frames = [P.scene(P.open_mouth(image, "astronaut", 20 * e), dx=2 * math.sin(t / 5)) for t, e in enumerate(per_frame)]
    return folder, frames, samples


def test_the_lag_recovers_a_planted_audio_delay_within_one_frame(talking, networks):
    from hug_vis_dataset.readers.media import write_wav

    folder, frames, samples = talking
    track = landmark_track(networks, frames)
    for delay in (-5, 0, 4):  # the audio `delay` frames later than the mouth: the mouth leads by `delay`
        shifted = np.roll(samples, delay * 16000 // 30)
        lag, _ = hm.mouth_audio_lag(hm.mouth_opening(track), speech_envelope(shifted, 16000, 30.0, track.n))
        assert abs(lag - (-delay)) <= 1, (delay, lag)
    # through the scorer, the planted 4-frame delay: the stored (absolute) lag
    video = _clip(folder, "talking", frames)
    wav = folder / "late.wav"
    write_wav(wav, np.roll(samples, 4 * 16000 // 30), 16000)
    scores, errors = _score("audio_driven", video, {"audio": str(wav)}, ["mouth_audio_offset", "mouth_audio_sync"])
    assert not errors and abs(scores.values["mouth_audio_offset"] - 4) <= 1 and scores.values["mouth_audio_sync"] > 0.5


def test_akd_and_lmd_are_zero_for_identical_clips_and_chunks_and_batches_change_nothing(talking, tmp_path):
    folder, frames, samples = talking
    from hug_vis_dataset.readers.media import write_wav

    clip = _clip(tmp_path, "clip", frames[:24])
    wav = tmp_path / "a.wav"
    write_wav(wav, samples, 16000)
    reference = {"video": clip, "audio": str(wav), "portrait": clip}
    base, errors = _score("vision_driven", clip, reference, list(HUMAN_ROWS))
    assert not errors, errors
    assert base.values["akd"] == 0.0 and base.values["lmd"] == 0.0 and base.values["akd_drift"] == 0.0
    assert base.values["person_missing"] == 0.0
    for chunk, batch in ((1, None), (5, 3), (64, 1)):
        other, errors = _score("vision_driven", clip, reference, list(HUMAN_ROWS), chunk_frames=chunk, batch_size=batch)
        assert other.values == base.values and not errors, (chunk, batch)


def test_frames_with_nobody_are_counted_with_their_reason(tmp_path, networks):
    image = P.photo("grace")
    empty = np.full((360, 640, 3), 128, np.uint8)
    frames = [P.scene(image)] * 6 + [empty] * 3 + [P.scene(image)] * 3
    clip = _clip(tmp_path, "gap", frames)
    scores, errors = _score("audio_driven", clip, {}, ["person_missing", "face_missing", "body_jitter"])
    assert scores.values["person_missing"] == 25.0 and scores.values["face_missing"] == 25.0
    assert scores.values["body_jitter"] > 0 and not errors
    assert scores.remarks["body_jitter"] == "3 of 12 generated frames without a person (no person detected: 3)"
    nobody = _clip(tmp_path, "nobody", [empty] * 4)
    scores, errors = _score("audio_driven", nobody, {}, ["person_missing", "body_jitter", "bone_length_variation"])
    assert scores.values == {"person_missing": 100.0}
    assert errors == {"body_jitter": "ValueError: no three consecutive frames show the person with both shoulders "
                                     "visible",
                      "bone_length_variation": "ValueError: no neck or arm segment is visible in half of the frames "
                                               "showing the person"}

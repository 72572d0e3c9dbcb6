"""Tests of the synthetic mini-grid generator (hug_vis_dataset.synth)."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from hug_vis_dataset.readers import media
from hug_vis_dataset.datamodel.grid import ClipId, Emotion
from hug_vis_dataset.datamodel.layout import CSV_COLUMNS, DEFAULT_LAYOUT
from hug_vis_dataset.synth import prompt_for, synthesize
from hug_vis_dataset.synth.figure import appearance_for_actor, render_parts, _ellipse
from hug_vis_dataset.synth.generate import ClipSpec, asr_transcript, clip_audio, reference_clip
from hug_vis_dataset.synth.systems import SYSTEMS, degrade_alpha, emotion_answer
from hug_vis_dataset.synth.voice import voice_for_actor

SMALL = dict(actors=2, emotions=["Happy", "Neutral"], actions=1, scripts=1, seconds=0.4, size=(96, 54))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    root = tmp_path_factory.mktemp("synth")
    return synthesize(root, **SMALL), root


def _rows(root: Path) -> list[dict[str, str]]:
    with (root / DEFAULT_LAYOUT.metadata_csv).open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _hashes(root: Path) -> dict[str, str]:
    """sha256 of every file of the release (the output guard's marker and ledger hold times: left out)."""
    from hug_vis_dataset.outputs import GUARD_FILES

    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name not in GUARD_FILES}


def test_layout_and_csv_match_release_layout(small):
    summary, root = small
    rows = _rows(root)
    assert tuple(rows[0].keys()) == CSV_COLUMNS
    assert [r["clip_id"] for r in rows] == summary.clip_ids
    assert len(rows) == 2 * 2
    for row in rows:
        cid = ClipId.parse(row["clip_id"])
        assert row["audio_path"] == DEFAULT_LAYOUT.audio_path(cid)
        assert row["video_path"] == DEFAULT_LAYOUT.video_path(cid)
        assert row["alpha_matte_path"] == DEFAULT_LAYOUT.alpha_dir_path(cid)
        assert row["rgba_foreground_path"] == ""
        assert row["transcript"] == prompt_for(cid.emotion, cid.script_id)
        assert (root / DEFAULT_LAYOUT.transcript_path(cid)).read_text(encoding="utf-8").strip() == row["transcript"]
        assert len(row["asr_transcript"]) == len(row["transcript"])
        assert row["resolution"] == "96x54" and float(row["fps"]) == 30 and int(row["sample_rate"]) == 16000
        assert float(row["duration"]) == pytest.approx(12 / 30)
        for key in ("audio_path", "video_path"):
            assert (root / row[key]).is_file()
        assert (root / DEFAULT_LAYOUT.alpha_frame_path(cid, 0)).is_file()
    from hug_vis_dataset.datamodel.release import Release

    assert [r.clip_id for r in Release(root)] == summary.clip_ids


def test_frame_counts_and_audio_duration_agree(small):
    summary, root = small
    for row in _rows(root):
        info = media.video_info(root / row["video_path"])
        pngs = media.alpha_frame_files(root / row["alpha_matte_path"])
        frames, rate, channels = media.audio_info(root / row["audio_path"])
        assert info.frames == summary.n_frames == len(pngs) == 12
        assert (info.width, info.height) == (96, 54)
        assert (rate, channels) == (16000, 1)
        assert frames == round(summary.n_frames / 30 * 16000)
        import soundfile as sf

        assert sf.info(str(root / row["audio_path"])).subtype == "PCM_16"


def test_alpha_is_soft_uint8_single_channel(small):
    _, root = small
    for row in _rows(root):
        for path in sorted((root / row["alpha_matte_path"]).glob("*.png"))[:3]:
            a = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
            assert a.dtype == np.uint8 and a.ndim == 2
            assert ((a > 0) & (a < 255)).sum() > 20  # anti-aliased edges
            assert (a == 255).any() and (a == 0).any()


def test_video_is_alpha_composite_over_green(small):
    _, root = small
    row = _rows(root)[0]
    alpha = next(media.iter_alpha_frames(root / row["alpha_matte_path"]))[0]
    rgb = next(media.iter_video_frames(root / row["video_path"]))[0].astype(float)
    background = rgb[alpha == 0]
    # H.264 keeps the green screen around (0, 177, 64) up to the lighting gradient.
    assert np.abs(np.median(background, axis=0) - [0, 177, 64]).max() < 20
    assert np.abs(np.median(rgb[alpha == 255], axis=0) - [0, 177, 64]).max() > 40


def test_same_seed_same_bytes_different_seed_differs(tmp_path):
    args = dict(actors=1, emotions=["Angry"], actions=1, scripts=1, seconds=0.2, size=(64, 36))
    a = _hashes(synthesize(tmp_path / "a", seed=3, **args).root)
    b = _hashes(synthesize(tmp_path / "b", seed=3, **args).root)
    c = _hashes(synthesize(tmp_path / "c", seed=4, **args).root)
    assert a == b and len(a) > 20
    assert set(a) == set(c)
    media_files = [k for k in a if k.endswith((".wav", ".mp4")) and "simulated" not in k]
    assert media_files and all(a[k] != c[k] for k in media_files)
    ratings = "simulated_systems/mos_ratings.csv"  # simulated raters are seeded too
    assert ratings in a and a[ratings] != c[ratings]


def test_coverage_matches_supersampled_reference():
    # Independent reference: 32x32 point samples per pixel of the same disk.
    W = H = 20
    cx, cy, r = 9.3, 10.7, 5.2
    alpha, _ = render_parts([_ellipse((cx, cy), r, r, 0.0, (1.0, 1.0, 1.0))], W, H)
    n = 32
    sub = (np.arange(n) + 0.5) / n
    xs = (np.arange(W)[:, None] + sub[None, :]).ravel()
    ys = (np.arange(H)[:, None] + sub[None, :]).ravel()
    inside = ((xs[None, :] - cx) ** 2 + (ys[:, None] - cy) ** 2 <= r * r).astype(float)
    ref = inside.reshape(H, n, W, n).mean(axis=(1, 3))
    assert np.abs(alpha - ref).max() < 0.08
    assert abs(alpha.sum() - np.pi * r * r) < 0.5


def _motion_stats(emotion: Emotion, actor: int) -> tuple[float, float]:
    diffs, moves = [], []
    for action in range(1, 5):
        spec = ClipSpec(ClipId(actor, emotion, action, 1), 0, 60, 30.0, 16000, 64, 36)
        alpha = reference_clip(spec)[0].astype(float) / 255
        diffs.append(np.abs(np.diff(alpha, axis=0)).mean())
        ys, xs = np.mgrid[: alpha.shape[1], : alpha.shape[2]]
        mass = alpha.sum(axis=(1, 2))
        centroid = np.stack([(alpha * xs).sum(axis=(1, 2)) / mass, (alpha * ys).sum(axis=(1, 2)) / mass], 1)
        moves.append(np.linalg.norm(np.diff(centroid, axis=0), axis=1).sum())
    return float(np.mean(diffs)), float(np.mean(moves))


@pytest.mark.slow
def test_motion_statistics_follow_emotion_styles():
    stats = {e: _motion_stats(e, 1) for e in (Emotion.HAPPY, Emotion.ANGRY, Emotion.SURPRISED, Emotion.NEUTRAL,
                                              Emotion.SAD)}
    for high in (Emotion.HAPPY, Emotion.ANGRY, Emotion.SURPRISED):
        # Surprised moves fast but then freezes, so its margin over Sad is smaller.
        margin = 1.25 if high is Emotion.SURPRISED else 1.8
        for low in (Emotion.NEUTRAL, Emotion.SAD):
            assert stats[high][0] > margin * stats[low][0], (high, low, stats)
            assert stats[high][1] > margin * stats[low][1], (high, low, stats)
    assert stats[Emotion.NEUTRAL][0] < 0.1 * stats[Emotion.SAD][0]


def _f0(audio: np.ndarray, sr: int) -> float:
    # Autocorrelation pitch of the loudest 30 ms frames (a re-derivation independent of the synthesiser).
    n = int(0.03 * sr)
    frames = audio[: len(audio) // n * n].reshape(-1, n).astype(float)
    loud = frames[np.argsort((frames**2).sum(1))[-8:]]
    lags = np.arange(int(sr / 400), int(sr / 60))
    f0s = []
    for f in loud:
        f = f - f.mean()
        ac = np.array([np.dot(f[:-lag], f[lag:]) for lag in lags])
        f0s.append(sr / lags[np.argmax(ac)])
    return float(np.median(f0s))


def test_voices_differ_more_between_actors_than_within():
    sr = 16000
    f0 = {(a, s): _f0(clip_audio(ClipSpec(ClipId(a, Emotion.NEUTRAL, 1, s), 0, 45, 30.0, sr, 64, 36)), sr)
          for a in (1, 2, 3, 4) for s in (1, 2, 3)}
    means = {a: np.mean([f0[(a, s)] for s in (1, 2, 3)]) for a in (1, 2, 3, 4)}
    within = np.mean([abs(f0[(a, s)] - means[a]) for a in (1, 2, 3, 4) for s in (1, 2, 3)])
    between = np.mean([abs(means[a] - means[b]) for a in (1, 2, 3, 4) for b in (1, 2, 3, 4) if a < b])
    assert between > 3 * within
    # The estimate agrees with the voices as built (odd actors lower-pitched).
    for a in (1, 2, 3, 4):
        assert means[a] == pytest.approx(voice_for_actor(a).f0, rel=0.35)


def test_matting_systems_mad_grows_with_strength(small):
    _, root = small
    systems = sorted(SYSTEMS["matting"], key=lambda s: s.strength)
    for row in _rows(root):
        ref = np.concatenate(list(media.iter_alpha_frames(root / row["alpha_matte_path"]))).astype(float)
        mads = []
        for system in systems:
            folder = root / "simulated_systems" / "matting" / system.name / row["clip_id"]
            pred = np.concatenate(list(media.iter_alpha_frames(folder))).astype(float)
            assert pred.shape == ref.shape
            mads.append(np.abs(pred - ref).mean())
        assert 0 < mads[0] < mads[1] < mads[2]


def test_degrade_alpha_identity_and_validation():
    a = np.zeros((3, 12, 12), np.uint8)
    a[:, 3:9, 3:9] = 200
    assert np.array_equal(degrade_alpha(a, 0.0, np.random.default_rng(0)), a)
    with pytest.raises(ValueError):
        degrade_alpha(a.astype(np.float32), 0.5, np.random.default_rng(0))
    with pytest.raises(ValueError):
        degrade_alpha(a, 1.5, np.random.default_rng(0))


def test_manifest_and_system_files(small):
    summary, root = small
    manifest = json.loads((root / "simulated_systems" / "manifest.json").read_text(encoding="utf-8"))
    assert set(manifest["tasks"]) == {"matting", "vision_driven", "audio_driven", "voice_cloning", "emotion"}
    assert summary.systems == {t: list(v["systems"]) for t, v in manifest["tasks"].items()}
    for task, entry in manifest["tasks"].items():
        systems = entry["systems"]
        assert len(systems) >= 3 and entry["description"]
        by_strength = sorted(systems, key=lambda s: systems[s]["strength"])
        assert [systems[s]["expected_rank"] for s in by_strength] == list(range(1, len(systems) + 1))
        for name in systems:
            base = root / "simulated_systems" / task / name
            for clip in summary.clip_ids:
                if task in ("vision_driven", "audio_driven"):
                    assert media.video_info(base / f"{clip}.mp4").frames == summary.n_frames
                elif task == "voice_cloning":
                    assert media.audio_info(base / f"{clip}.wav")[:2] == (round(summary.n_frames / 30 * 16000),
                                                                        16000)
            if task == "emotion":
                lines = [json.loads(x) for x in (base / "predictions.jsonl").read_text(encoding="utf-8").splitlines()]
                assert len(lines) == 4 * len(summary.clip_ids)
                assert {x["clip_id"] for x in lines} == set(summary.clip_ids)
                assert {x["input_setting"] for x in lines} == {"video", "audio", "text", "video+audio+text"}
    lags = [manifest["tasks"]["audio_driven"]["systems"][s]["lip_sync_offset_frames"] for s in
            ("talk_good", "talk_fair", "talk_poor")]
    assert lags == [0, 2, 6]


def test_emotion_answers_accuracy_is_graded():
    from hug_vis_dataset.datamodel.grid import EMOTION_ALIASES

    def named(answer: str) -> set:
        low = answer.lower()
        return {e for alias, e in EMOTION_ALIASES.items() if alias in low} | (
            {Emotion.ANGRY} if "furious" in low else set())

    rng = np.random.default_rng(0)
    hits = {}
    for acc in (1.0, 0.6, 0.2):
        ok = 0
        for i in range(400):
            truth = list(Emotion)[i % 7]
            ans = emotion_answer(truth, acc, rng, p_unparseable=0.0)
            ok += named(ans) == {truth}
        hits[acc] = ok / 400
    assert hits[1.0] == 1.0
    assert hits[1.0] > hits[0.6] > hits[0.2]
    assert hits[0.6] == pytest.approx(0.6, abs=0.1)


def test_asr_transcript_is_near_copy():
    text = prompt_for("Happy", 1)
    rng = np.random.default_rng(5)
    outs = [asr_transcript(text, rng, p_error=1.0) for _ in range(20)]
    for out in outs:
        assert len(out) == len(text)
        assert sum(a != b for a, b in zip(out, text)) == 1


def test_cli_and_bad_arguments(tmp_path, capsys):
    from hug_vis_dataset.cli import main

    status = main(["synth", str(tmp_path / "o"), "--actors", "1", "--scripts", "1", "--actions", "1",
                   "--emotions", "Sad", "--seconds", "0.1", "--size", "32x18", "--no-systems"])
    assert status == 0
    assert "1 clips x 3 frames" in capsys.readouterr().out
    assert not (tmp_path / "o" / "simulated_systems").exists()
    assert main(["synth", str(tmp_path / "p"), "--size", "31x18"]) == 2
    with pytest.raises(ValueError, match="empty"):
        synthesize(tmp_path / "q", actors=[], systems=False)
    with pytest.raises(ValueError, match="size"):
        synthesize(tmp_path / "q", size=(64,), systems=False)


def test_appearance_differs_between_actors():
    assert appearance_for_actor(1) != appearance_for_actor(2)
    assert voice_for_actor(1) != voice_for_actor(2)

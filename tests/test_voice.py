"""Voice-cloning metrics: DNSMOS against speechmos, speaker similarity against Resemblyzer."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from hug_vis_dataset.metrics import voice

ESPEAK = shutil.which("espeak-ng")
needs_espeak = pytest.mark.skipif(ESPEAK is None, reason="espeak-ng is not installed (apt-get install espeak-ng)")

SENTENCE_A = "The quick brown fox jumps over the lazy dog near the quiet river bank."
SENTENCE_B = "Please call Stella and ask her to bring these things with her from the store."


def speak(path: Path, text: str, voice_name: str, pitch: int) -> Path:
    """Speak ``text`` with espeak-ng into a 22.05 kHz WAV (so the resampling path is exercised)."""
    subprocess.run([ESPEAK, "-v", voice_name, "-p", str(pitch), "-w", str(path), text], check=True)
    return path


@pytest.fixture(scope="module")
def speech(tmp_path_factory):
    if ESPEAK is None:
        pytest.skip("espeak-ng is not installed (apt-get install espeak-ng)")
    root = tmp_path_factory.mktemp("speech")
    return {
        "male_a": speak(root / "male_a.wav", SENTENCE_A, "en+m3", 30),
        "male_b": speak(root / "male_b.wav", SENTENCE_B, "en+m3", 30),
        "female_a": speak(root / "female_a.wav", SENTENCE_A, "en+f3", 80),
        "female_b": speak(root / "female_b.wav", SENTENCE_B, "en+f3", 80),
    }


def tone_noise(seconds: float, seed: int, rate: int = 16000) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(round(seconds * rate))
    t = np.arange(n) / rate
    signal = 0.3 * np.sin(2 * np.pi * (180 + 40 * seed) * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))
    return (signal + 0.05 * rng.standard_normal(n)).astype(np.float32)


def speechmos_dnsmos(sample) -> dict[str, float]:
    import speechmos.dnsmos

    out = speechmos.dnsmos.run(sample if isinstance(sample, np.ndarray) else str(sample), sr=16000)
    return {
        "dnsmos": float(out["ovrl_mos"]),
        "dnsmos_sig": float(out["sig_mos"]),
        "dnsmos_bak": float(out["bak_mos"]),
        "dnsmos_p808": float(out["p808_mos"]),
    }


def assert_matches(ours: dict, theirs: dict, tol: float = 2e-5) -> None:
    for key, value in theirs.items():
        assert ours[key] == pytest.approx(value, abs=tol), key


# ----------------------------------------------------------------------------- DNSMOS protocol
def script_windows(num_samples: int, fs: int = 16000) -> list[tuple[int, int]]:
    """The window bounds dnsmos_local.py uses, re-derived literally from its loop."""
    length = num_samples
    while length < int(9.01 * fs):
        length += length
    hops = int(np.floor(length / fs) - 9.01) + 1
    bounds = []
    for idx in range(hops):
        start, stop = int(idx * fs), int((idx + 9.01) * fs)
        if min(stop, length) - start >= int(9.01 * fs):
            bounds.append((start, stop))
    return bounds


@pytest.mark.parametrize("seconds", [0.3, 1.0, 2.0, 4.5, 9.0, 9.01, 10.0, 10.99, 11.0, 15.5, 17.2, 33.0, 41.0])
def test_windows_match_script_loop(seconds):
    n = int(round(seconds * 16000))
    expected = script_windows(n)
    assert voice.dnsmos_window_bounds(n) == expected
    x = np.arange(n, dtype=np.float32)
    while len(x) < 144160:
        x = np.concatenate([x, x])
    windows = list(voice.dnsmos_windows(np.arange(n, dtype=np.float32)))
    assert len(windows) == len(expected)
    for (start, stop), w in zip(expected, windows):
        np.testing.assert_array_equal(w, x[start:stop])


def test_float_rounding_drops_windows_7_to_23_like_the_script():
    # Hand-checked: (7 + 9.01) * 16000 = 256159.99999999997 in binary64, so window 7 is one sample short.
    assert int((7 + 9.01) * 16000) - 7 * 16000 == 144159
    starts = [start // 16000 for start, _ in voice.dnsmos_window_bounds(16000 * 40)]
    assert starts == [0, 1, 2, 3, 4, 5, 6, 24, 25, 26, 27, 28, 29, 30]


def test_short_audio_is_doubled_not_tiled():
    # 2 s: doubling gives 16 s (7 windows); np.tile to the next multiple would give 10 s (1 window).
    x = np.arange(32000, dtype=np.float32) / 32000
    windows = list(voice.dnsmos_windows(x))
    assert len(windows) == 7
    doubled = np.concatenate([x] * 8)
    np.testing.assert_array_equal(windows[3], doubled[48000 : 48000 + 144160])


@pytest.mark.parametrize("seconds,seed", [(1.0, 0), (9.01, 2), (11.0, 3), (12.4, 4)])
def test_dnsmos_equals_speechmos_on_synthetic_signals(seconds, seed):
    x = tone_noise(seconds, seed)
    assert_matches(voice.dnsmos(x, 16000), speechmos_dnsmos(x))


# Noise, silence (scored, not rejected: finite), a 0.3 s clip and (3.3 s, seed 1) against speechmos:
# tests/metric_tester.py (DNSMOS rows), which also reads them from float WAV files and as stereo.


@needs_espeak
def test_dnsmos_equals_speechmos_on_espeak_files(speech):
    # 22.05 kHz files: both sides resample with soxr_hq; speechmos reads with librosa.load.
    for key in ("male_a", "female_b"):
        ours = voice.dnsmos(speech[key])
        assert_matches(ours, speechmos_dnsmos(speech[key]), tol=1e-4)
        assert 1.0 < ours["dnsmos"] < 5.0


@needs_espeak
def test_dnsmos_speech_beats_noise(speech):
    speech_score = voice.dnsmos(speech["male_a"])["dnsmos"]
    rng = np.random.default_rng(3)
    noise = (0.3 * rng.standard_normal(16000 * 3)).clip(-1, 1).astype(np.float32)
    assert speech_score > voice.dnsmos(noise, 16000)["dnsmos"] + 0.5


def test_long_16k_file_is_read_window_by_window(tmp_path, monkeypatch):
    x = tone_noise(17.5, 5)  # > 16 s: also crosses the script's dropped windows
    stereo = np.stack([x, 0.5 * x], axis=1)
    path = tmp_path / "long.wav"
    sf.write(path, stereo, 16000, subtype="FLOAT")
    # The windowed reader must be the one used, and give the array path's result.
    calls = []
    original = voice.prepare_audio
    monkeypatch.setattr(voice, "prepare_audio", lambda *a, **k: calls.append(a) or original(*a, **k))
    from_file = voice.dnsmos(path)
    assert calls == []
    monkeypatch.undo()
    assert from_file["dnsmos_windows"] == 7
    assert_matches(from_file, speechmos_dnsmos(stereo.mean(axis=1)), tol=1e-5)


def test_stereo_is_channel_mean_and_resampled(tmp_path):
    x = tone_noise(2.0, 6, rate=24000)
    stereo = np.stack([x, -0.25 * x], axis=1)
    import librosa

    mono16 = librosa.resample(stereo.mean(axis=1), orig_sr=24000, target_sr=16000)
    assert_matches(voice.dnsmos(stereo, 24000), speechmos_dnsmos(mono16))


@pytest.mark.parametrize(
    "audio,rate,message",
    [
        (np.zeros(0, np.float32), 16000, "empty"),
        (np.array([0.1, np.nan, 0.2], np.float32), 16000, "NaN"),
        (np.array([0.1, np.inf], np.float32), 16000, "NaN or infinite"),
        (np.array([0.5, 1.2, -1.01], np.float32), 16000, "2 samples outside"),
        (np.zeros(100, np.int16), 16000, "int16"),
        (np.zeros((2, 16000), np.float32), 16000, "looks like \\(channels, samples\\)"),
        (np.zeros((10, 2, 2), np.float32), 16000, "shape"),
        (np.zeros(100, np.float32), 0, "sample rate"),
    ],
)
def test_bad_input_raises_clear_error(audio, rate, message):
    with pytest.raises(voice.AudioInputError, match=message):
        voice.dnsmos(audio, rate)


def test_full_scale_clipped_audio_is_accepted():
    x = np.clip(tone_noise(1.0, 8) * 5, -1, 1)
    assert np.abs(x).max() == 1.0
    assert_matches(voice.dnsmos(x, 16000), speechmos_dnsmos(x))


def test_missing_file_raises_media_error(tmp_path):
    from hug_vis_dataset.readers.media import MediaError

    with pytest.raises(MediaError):
        voice.dnsmos(tmp_path / "nope.wav")


def test_catalog_declares_table_metrics():
    from hug_vis_dataset import catalog

    assert catalog.spec("dnsmos").paper_table == "Table 9"
    assert catalog.spec("speaker_similarity").higher_is_better
    assert catalog.spec("utmos").weights == ("utmos22_strong",)
    assert catalog.table_metrics("voice_cloning") == ("utmos", "dnsmos", "speaker_similarity")


# ----------------------------------------------------------------------------- speaker similarity
def resemblyzer_similarity(a: Path, b: Path) -> float:
    from resemblyzer import VoiceEncoder, preprocess_wav

    encoder = VoiceEncoder("cpu", verbose=False)
    ea = encoder.embed_utterance(preprocess_wav(a))
    eb = encoder.embed_utterance(preprocess_wav(b))
    return float(np.dot(ea, eb))


@needs_espeak
def test_speaker_similarity_equals_resemblyzer(speech):
    for a, b in (("male_a", "male_b"), ("male_a", "female_a")):
        ours = voice.speaker_similarity(speech[a], speech[b])
        assert ours == pytest.approx(resemblyzer_similarity(speech[a], speech[b]), abs=1e-5)


@needs_espeak
def test_same_voice_is_more_similar_than_other_voice(speech):
    same_m = voice.speaker_similarity(speech["male_a"], speech["male_b"])
    same_f = voice.speaker_similarity(speech["female_a"], speech["female_b"])
    cross = [
        voice.speaker_similarity(speech["male_a"], speech["female_a"]),
        voice.speaker_similarity(speech["male_b"], speech["female_b"]),
    ]
    assert min(same_m, same_f) > max(cross) + 0.05
    assert all(0.0 <= v <= 1.0 + 1e-6 for v in [same_m, same_f, *cross])


@needs_espeak
def test_embedding_independent_of_batch_size_and_matches_embed_utterance(speech):
    from resemblyzer import preprocess_wav

    wav, rate = sf.read(speech["male_b"], dtype="float32")
    long_wav = np.concatenate([wav, wav, wav])  # enough partials for several batches
    e1 = voice.speaker_embedding(long_wav, rate, batch_partials=1)
    e7 = voice.speaker_embedding(long_wav, rate, batch_partials=7)
    np.testing.assert_allclose(e1, e7, atol=1e-6)
    reference = voice.voice_encoder().embed_utterance(preprocess_wav(long_wav, source_sr=rate))
    np.testing.assert_allclose(e7, reference, atol=1e-5)


def test_speaker_similarity_of_silence_raises():
    with pytest.raises(voice.NoSpeechError, match="all zeros"):
        voice.speaker_embedding(np.zeros(16000, np.float32), 16000)
    with pytest.raises(voice.AudioInputError, match="NaN"):
        voice.speaker_embedding(np.full(16000, np.nan, np.float32), 16000)


def test_cosine_similarity_hand_worked():
    from hug_vis_dataset.metrics.identity import cosine_similarity

    assert float(cosine_similarity(np.array([3.0, 4.0]), np.array([4.0, 3.0]))) == pytest.approx(24 / 25)
    batch = cosine_similarity(np.array([[3.0, 4.0], [1.0, 0.0]]), np.array([[4.0, 3.0]]))
    assert batch.tolist() == pytest.approx([24 / 25, 4 / 5])
    with pytest.raises(ValueError):
        cosine_similarity(np.zeros(2), np.ones(2))
    with pytest.raises(ValueError):
        cosine_similarity(np.ones(2), np.ones(3))


# ----------------------------------------------------------------------------- real-audio pairing
class FakeRecord:
    def __init__(self, clip_id: str):
        from hug_vis_dataset.datamodel.grid import ClipId

        self.clip_id = clip_id
        self.cid = ClipId.parse(clip_id)
        self.audio_path = Path(clip_id + ".wav")


def test_real_audio_pairs_rule():
    ids = [
        "actor_0001_happy_action_01_script_001",
        "actor_0001_happy_action_01_script_002",
        "actor_0001_happy_action_01_script_005",
        "actor_0001_sad_action_02_script_003",  # alone in its group: next clip of the actor
        "actor_0002_angry_action_01_script_001",  # actor with one clip: unpaired
    ]
    records = [FakeRecord(i) for i in reversed(ids)]  # input order must not matter
    pairs, unpaired = voice.real_audio_pairs(records)
    got = {p.clip_id: p.partner_id for p in pairs}
    assert got == {
        ids[0]: ids[1],
        ids[1]: ids[2],
        ids[2]: ids[0],  # cycles back to the first script
        ids[3]: ids[0],  # next clip of actor 1 in grid order (happy < sad), cyclic
    }
    assert unpaired == [ids[4]]
    assert pairs == voice.real_audio_pairs([FakeRecord(i) for i in ids])[0]

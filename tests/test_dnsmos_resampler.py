"""DNSMOS resampling: one documented resampler (librosa ``soxr_hq``, float64), the one ``dnsmos()`` uses.

The reference for the resampled signal is libsoxr called directly (``soxr.resample`` with the
high-quality preset) plus librosa's length rule re-derived by hand (zero-pad or cut to
``ceil(n * 16000 / rate)``); the reference for the score is the window pipeline fed with that
signal. Speech comes from espeak-ng (22.05 kHz), as in the voice tests.
"""

from __future__ import annotations

import math
import shutil
import subprocess

import numpy as np
import pytest
import soundfile as sf

from hug_vis_dataset.metrics import voice

ESPEAK = shutil.which("espeak-ng") or "espeak-ng"  # installed by scripts/setup_system.sh


def soxr_reference(audio: np.ndarray, rate: int) -> np.ndarray:
    import soxr

    out = soxr.resample(np.asarray(audio, np.float64), rate, 16000, quality="HQ")
    length = math.ceil(len(audio) * 16000 / rate)
    out = np.pad(out, (0, max(0, length - len(out))))[:length]
    return out.astype(np.float32)


def noise(n: int, seed: int) -> np.ndarray:
    return (0.3 * np.random.default_rng(seed).standard_normal(n)).clip(-1, 1).astype(np.float32)


@pytest.mark.parametrize("rate, n", [(22050, 12345), (24000, 24001), (44100, 44100 * 2 + 7), (48000, 9999),
                                     (8000, 4001)])
def test_resample_to_is_soxr_hq_in_float64(rate, n):
    x = noise(n, rate)
    ours = voice.resample_to(x, rate)
    assert voice.DNSMOS_RESAMPLER == "soxr_hq"
    assert ours.dtype == np.float32 and len(ours) == math.ceil(n * 16000 / rate)
    np.testing.assert_array_equal(ours, soxr_reference(x, rate))


def test_16k_input_is_not_resampled():
    x = noise(16000, 1)
    assert voice.resample_to(x, 16000) is x
    with pytest.raises(voice.AudioInputError, match="sample rate"):
        voice.resample_to(x, 0)


@pytest.fixture(scope="module")
def speech_22k(tmp_path_factory):
    path = tmp_path_factory.mktemp("dnsmos_rs") / "speech.wav"
    # about 10 s: a single 9.01 s DNSMOS window, so each score costs one forward pass
    subprocess.run([ESPEAK, "-v", "en-us", "-w", str(path),
                    "Please call Stella and ask her to bring these things with her from the store: six spoons of "
                    "fresh snow peas, five thick slabs of blue cheese, and maybe a snack for her brother Bob."],
                   check=True)
    audio, rate = sf.read(path, dtype="float64")
    assert rate == 22050 and 9.5 < len(audio) / rate < 11
    return path, audio


def test_dnsmos_takes_the_documented_path(speech_22k, tmp_path):
    from scipy.signal import resample_poly

    path, audio = speech_22k
    expected = voice.dnsmos_from_windows(voice.dnsmos_windows(soxr_reference(audio, 22050)))
    assert expected["dnsmos_windows"] == 1
    assert voice.dnsmos(path) == expected  # a 22.05 kHz file
    assert voice.dnsmos(audio.astype(np.float32), 22050) == expected  # the same samples as an array
    up = tmp_path / "speech48.wav"  # the same speech at 48 kHz (PCM 16)
    sf.write(up, resample_poly(audio, 320, 147), 48000, subtype="PCM_16")
    audio48, _ = sf.read(up, dtype="float64")
    assert voice.dnsmos(up) == voice.dnsmos_from_windows(voice.dnsmos_windows(soxr_reference(audio48, 48000)))
    # another resampler (scipy's polyphase filter) gives another score: the check above can fail
    other = voice.dnsmos_from_windows(voice.dnsmos_windows(resample_poly(audio, 320, 441).astype(np.float32)))
    assert abs(other["dnsmos"] - expected["dnsmos"]) > 1e-3


def test_note_states_the_choice_and_the_alternative():
    note = voice.DNSMOS_RESAMPLER_NOTE
    assert "soxr_hq" in note and "kaiser_best" in note and "librosa <= 0.9" in note
    assert 3 <= len([s for s in note.split(". ") if s.strip()]) <= 6

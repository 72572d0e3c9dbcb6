"""Voice-cloning metrics (paper Table 9): DNSMOS, UTMOS and Resemblyzer speaker similarity.

Every function takes a waveform (float samples) plus its sample rate, or a sound-file path, and
returns plain Python floats. Input handling is the same for all three metrics
(:func:`prepare_audio`):

* **channels** -- a 2-D array is ``(samples, channels)`` (what ``soundfile`` returns) and is
  averaged over channels; files are read the same way (:func:`hug_vis_dataset.readers.media.read_audio`).
* **resampling** -- to 16 kHz with ``librosa.resample(..., res_type="soxr_hq")`` in float64
  (:data:`DNSMOS_RESAMPLER`, :func:`resample_to`): what torchmetrics' and speechmos' DNSMOS and
  Resemblyzer's ``preprocess_wav`` compute on librosa >= 0.10. The original DNSMOS script ran on
  librosa <= 0.9, whose default was resampy's ``kaiser_best``; see :data:`DNSMOS_RESAMPLER_NOTE`
  for why we do not follow it and by how much the scores differ.
* **empty / NaN / infinite** samples raise :class:`AudioInputError`.
* **clipping** -- samples outside [-1, 1] raise :class:`AudioInputError` (the models were trained
  on full-scale PCM; silently rescaling would change the score). Samples *at* +-1 (a clipped
  16-bit recording) are valid input and scored as they are.
* **silence** -- DNSMOS and UTMOS score an all-silent clip like any other (the predictors judge
  it); speaker similarity raises :class:`NoSpeechError` because there is no voice to embed.

DNSMOS follows Microsoft's ``DNSMOS/dnsmos_local.py`` exactly (see :func:`dnsmos_windows`) with the
ONNX models the ``speechmos`` wheel ships; the single "DNSMOS" number of Table 9 is **OVRL**
(the P.835 overall quality), the usual choice in TTS papers; SIG, BAK and P.808 MOS are reported
alongside as ``dnsmos_sig``, ``dnsmos_bak`` and ``dnsmos_p808``. The scores are on the P.835 / P.808
1-5 MOS scale but, as in the reference, the polynomial fit of the network's outputs is **not clipped**
to it: non-speech or heavily degraded audio can score below 1 (the synthetic grid's clones score
0.69-1.1, equal to ``speechmos.dnsmos.run`` on the same samples), so the catalog's unit says so and
no header prints "(1-5)" over them.

Example:
    >>> import numpy as np
    >>> t = np.arange(16000) / 16000
    >>> tone = 0.3 * np.sin(2 * np.pi * 220 * t)
    >>> scores = dnsmos(tone, 16000)
    >>> sorted(scores)
    ['dnsmos', 'dnsmos_bak', 'dnsmos_p808', 'dnsmos_sig', 'dnsmos_windows']
    >>> scores["dnsmos_windows"]  # a 1 s clip is doubled to 16 s: 7 windows
    7
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

SAMPLE_RATE = 16000
"""All three predictors work on 16 kHz mono audio."""

AudioSource = "str | Path | np.ndarray"

class AudioInputError(ValueError):
    """Audio that no voice metric can score: empty, NaN/inf, out of [-1, 1], bad shape or rate."""


class NoSpeechError(AudioInputError):
    """Speaker similarity found no voiced audio (silence, or nothing left after VAD trimming)."""


def to_mono(audio: np.ndarray) -> np.ndarray:
    """Float32 mono samples from a ``(samples,)`` or ``(samples, channels)`` array (channel mean).

    Raises:
        AudioInputError: for other shapes, non-numeric dtypes, or a channel axis that looks transposed.

    Example:
        >>> to_mono(np.array([[0.2, 0.4], [-1.0, 0.0]])).tolist()
        [0.30000001192092896, -0.5]
    """
    array = np.asarray(audio)
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise AudioInputError(f"audio must be numeric, got dtype {array.dtype}")
    if np.issubdtype(array.dtype, np.integer):
        raise AudioInputError(
            f"audio is {array.dtype}; pass float samples in [-1, 1] (e.g. int16 / 32768) or a file path"
        )
    if array.ndim == 2:
        if array.shape[1] > 16 and array.shape[0] <= 16:
            raise AudioInputError(
                f"audio of shape {array.shape} looks like (channels, samples); pass (samples, channels)"
            )
        array = array.mean(axis=1)
    elif array.ndim != 1:
        raise AudioInputError(f"audio must be (samples,) or (samples, channels), got shape {array.shape}")
    return array.astype(np.float32, copy=False)


def check_samples(audio: np.ndarray, what: str = "audio") -> None:
    """Raise :class:`AudioInputError` for empty, non-finite or out-of-range (|x| > 1) samples.

    Example:
        >>> check_samples(np.array([0.0, 1.0, -1.0], np.float32))
        >>> check_samples(np.array([0.0, 1.5]))
        Traceback (most recent call last):
        ...
        hug_vis_dataset.metrics.voice.AudioInputError: audio has 1 samples outside [-1, 1] (peak 1.5); normalise it before scoring
    """
    if audio.size == 0:
        raise AudioInputError(f"{what} is empty")
    finite = np.isfinite(audio)
    if not finite.all():
        raise AudioInputError(f"{what} has {int((~finite).sum())} NaN or infinite samples")
    outside = np.abs(audio) > 1.0
    if outside.any():
        raise AudioInputError(
            f"{what} has {int(outside.sum())} samples outside [-1, 1] (peak {float(np.abs(audio).max()):.4g}); "
            "normalise it before scoring"
        )


DNSMOS_RESAMPLER = "soxr_hq"
"""``librosa.resample`` ``res_type`` of every resampling to 16 kHz here (DNSMOS, UTMOS, speaker similarity)."""

DNSMOS_RESAMPLER_NOTE = (
    "Audio that is not 16 kHz is resampled to 16 kHz with librosa's `soxr_hq` (libsoxr, high quality) in "
    "float64 before DNSMOS, as torchmetrics' and speechmos' DNSMOS do and as Microsoft's `dnsmos_local.py` "
    "does once its positional `librosa.resample(aud, input_fs, fs)` call is written with keywords, which "
    "librosa >= 0.10 requires. "
    "Run unchanged, that script needs librosa <= 0.9, whose default resampler was resampy's `kaiser_best`; "
    "DNSMOS is sensitive to the choice: on 36 espeak-ng utterances (6 sentences, clean and with noise, at "
    "22.05 kHz and upsampled to 44.1 and 48 kHz) OVRL with `kaiser_best` differed from `soxr_hq` by -0.14 to +0.14 "
    "(mean |difference| 0.07; clean speech lower by 0.05 on average, noisy speech higher by 0.09). "
    "We use `soxr_hq` because it is what current DNSMOS implementations compute, it needs no extra "
    "package and is 20-60 times faster; numbers made with the 2021 script environment can differ by that "
    "much. 16 kHz input is never resampled."
)
"""For the DNSMOS module card: which resampler the score uses, why, and what the other choice changes."""


def resample_to(audio: np.ndarray, rate_in: int, rate_out: int = SAMPLE_RATE) -> np.ndarray:
    """Resample with ``librosa.resample`` and :data:`DNSMOS_RESAMPLER` (``soxr_hq``), as float64.

    The computation is librosa's: libsoxr's high-quality filter, then the result padded with
    zeros or cut to ``ceil(len * rate_out / rate_in)`` samples. It runs in float64 (what
    ``dnsmos_local.py`` gets from ``soundfile.read``) and returns float32. Why ``soxr_hq`` and
    not the ``kaiser_best`` of librosa <= 0.9: :data:`DNSMOS_RESAMPLER_NOTE`.

    Example:
        >>> resample_to(np.zeros(22050, np.float32), 22050).shape  # 1 s at 22.05 kHz -> 16 kHz
        (16000,)
    """
    if rate_in <= 0:
        raise AudioInputError(f"sample rate must be positive, got {rate_in}")
    if rate_in == rate_out:
        return audio
    import librosa

    resampled = librosa.resample(np.asarray(audio, np.float64), orig_sr=rate_in, target_sr=rate_out,
                                 res_type=DNSMOS_RESAMPLER)
    return resampled.astype(np.float32)


def prepare_audio(source: AudioSource, sample_rate: "int | None" = None) -> np.ndarray:
    """16 kHz mono float32 samples, checked, from an array (with its rate) or a sound file.

    Samples are checked *before* resampling, so clipping in the input is reported even when the
    resampler's overshoot would hide or create it.

    Args:
        source: a path to a sound file, or samples ``(n,)`` / ``(n, channels)`` in [-1, 1].
        sample_rate: the rate of an array ``source`` (required for arrays, ignored for files).

    Example:
        >>> prepare_audio(np.zeros((32000, 2), np.float32), 32000).shape
        (16000,)
    """
    if isinstance(source, (str, Path)):
        from ..readers.media import read_audio

        audio, sample_rate = read_audio(source, mono=True)
        what = f"audio file {source}"
    else:
        if sample_rate is None:
            raise AudioInputError("sample_rate is required when passing samples")
        audio = to_mono(source)
        what = "audio"
    check_samples(audio, what)
    return resample_to(audio, int(sample_rate))


# ----------------------------------------------------------------------------- DNSMOS
DNSMOS_INPUT_SECONDS = 9.01
DNSMOS_HOP_SECONDS = 1
# np.poly1d coefficients, highest order first (dnsmos_local.py, non-personalised variant).
DNSMOS_POLYNOMIALS: dict[str, tuple[float, float, float]] = {
    "sig": (-0.08397278, 1.22083953, 0.0052439),
    "bak": (-0.13166888, 1.60915514, -0.39604546),
    "ovrl": (-0.06766283, 1.11546468, 0.04602535),
}
# The P.808 model's input: 120-band power mel of the window minus its last 160 samples,
# n_fft 321 (the script's frame_size + 1), hop 160, in dB relative to the window's maximum,
# shifted and scaled by (dB + 40) / 40.
P808_MEL = {"n_mels": 120, "n_fft": 321, "hop_length": 160}
# Registry names (hug_vis_dataset.weights) of the ONNX files the speechmos wheel ships.
DNSMOS_WEIGHTS = {"primary": "dnsmos_sig_bak_ovr", "p808": "dnsmos_p808"}


def dnsmos_model_path(kind: str) -> Path:
    """Path of a DNSMOS ONNX file (``primary`` = ``sig_bak_ovr.onnx`` or ``p808`` = ``model_v8.onnx``).

    Resolved through the weights registry: an override (``HUGVIS_WEIGHT_DNSMOS_SIG_BAK_OVR`` ...)
    or the file inside the installed ``speechmos`` package, checked against its sha256.
    """
    from ..weights import resolve

    return resolve(DNSMOS_WEIGHTS[kind])


@functools.lru_cache(maxsize=None)
def _onnx_session(path: str, device: str = "cpu"):
    from ..models.device import onnx_session

    return onnx_session(path, device, threads=None)


def dnsmos_window_bounds(num_samples: int, sample_rate: int = SAMPLE_RATE) -> list[tuple[int, int]]:
    """``(start, stop)`` sample bounds of the 9.01 s windows ``dnsmos_local.py`` scores.

    Three details of the script decide which windows exist, and we keep all three because the
    score must equal the reference implementation's:

    * a clip shorter than 9.01 s is *doubled* (``np.append(aud, aud)`` in a loop, not ``np.tile``
      to the next multiple): a 2 s clip becomes 16 s, not 10 s;
    * ``int(floor(len / fs) - 9.01) + 1`` hops of 1 s (``int`` truncates towards zero);
    * a window whose slice ``[int(i * fs), int((i + 9.01) * fs))`` is shorter than
      ``int(9.01 * fs)`` is skipped. In binary floating point ``(i + 9.01) * 16000`` falls just
      below an integer for ``i`` = 7..23, so at 16 kHz those windows are one sample short and the
      script silently drops them: a 20 s clip is scored on windows 0-6 only.

    Bounds are in the (possibly doubled) clip; ``stop`` never exceeds its length.

    Example:
        >>> [len(dnsmos_window_bounds(int(s * 16000))) for s in (0.5, 2, 3, 9.01, 10.5, 11, 20, 40)]
        [7, 7, 3, 1, 1, 2, 7, 14]
    """
    if num_samples <= 0:
        raise AudioInputError("audio is empty")
    window = int(DNSMOS_INPUT_SECONDS * sample_rate)
    length = num_samples
    while length < window:
        length *= 2
    hops = int(np.floor(length / sample_rate) - DNSMOS_INPUT_SECONDS) + 1
    bounds = []
    for index in range(hops):
        start, stop = _window_bounds(index, sample_rate)
        if min(stop, length) - start >= window:
            bounds.append((start, stop))
    return bounds


def _window_bounds(index: int, sample_rate: int) -> tuple[int, int]:
    # The same float expressions as the script, so rounding of (i + 9.01) * fs agrees sample for sample.
    hop = DNSMOS_HOP_SECONDS * sample_rate
    return int(index * hop), int((index + DNSMOS_INPUT_SECONDS) * hop)


def dnsmos_windows(audio: np.ndarray, sample_rate: int = SAMPLE_RATE) -> Iterator[np.ndarray]:
    """The 9.01 s windows ``dnsmos_local.py`` scores, in order (views, no copies of long audio).

    See :func:`dnsmos_window_bounds` for which windows exist.

    Example:
        >>> [len(w) for w in dnsmos_windows(np.zeros(16000 * 11, np.float32))]
        [144160, 144160]
    """
    if len(audio) == 0:
        raise AudioInputError("audio is empty")
    window = int(DNSMOS_INPUT_SECONDS * sample_rate)
    while len(audio) < window:
        audio = np.append(audio, audio)
    for start, stop in dnsmos_window_bounds(len(audio), sample_rate):
        yield audio[start:stop]


def dnsmos_file_windows(path: "str | Path") -> Iterator[np.ndarray]:
    """Windows of a sound file, read one at a time when it is 16 kHz and at least 9.01 s long.

    Memory then stays at one window whatever the clip length. Other files (short, or at another
    rate, which needs whole-clip resampling) are decoded once with :func:`prepare_audio`.
    Every window is checked (:func:`check_samples`) as it is read.
    """
    import soundfile as sf

    from ..readers.media import audio_info

    frames, rate, _ = audio_info(path)
    window = int(DNSMOS_INPUT_SECONDS * SAMPLE_RATE)
    if rate != SAMPLE_RATE or frames < window:
        yield from dnsmos_windows(prepare_audio(path))
        return
    with sf.SoundFile(str(path)) as handle:
        for start, stop in dnsmos_window_bounds(frames):
            handle.seek(start)
            segment = to_mono(handle.read(stop - start, dtype="float32", always_2d=True))
            check_samples(segment, f"audio file {path}")
            yield segment


def p808_features(window: np.ndarray) -> np.ndarray:
    """The P.808 model input of one window: ``(1, frames, 120)`` float32 (see :data:`P808_MEL`)."""
    import librosa

    mel = librosa.feature.melspectrogram(y=window[:-160], sr=SAMPLE_RATE, **P808_MEL)
    scaled = (librosa.power_to_db(mel, ref=np.max) + 40) / 40
    return scaled.T[np.newaxis].astype(np.float32)


def dnsmos_window_scores(window: np.ndarray, device: str = "cpu") -> dict[str, float]:
    """SIG, BAK, OVRL (polynomial-mapped) and P.808 MOS of one 9.01 s, 16 kHz window."""
    primary = _onnx_session(str(dnsmos_model_path("primary")), device)
    p808 = _onnx_session(str(dnsmos_model_path("p808")), device)
    raw = primary.run(None, {"input_1": window.astype(np.float32)[np.newaxis]})[0][0]
    scores = {
        name: float(np.polyval(DNSMOS_POLYNOMIALS[name], float(raw[i])))
        for i, name in enumerate(("sig", "bak", "ovrl"))
    }
    scores["p808"] = float(p808.run(None, {"input_1": p808_features(window)})[0][0][0])
    return scores


def dnsmos_from_windows(windows: Iterable[np.ndarray], device: str = "cpu") -> dict[str, float]:
    """Per-clip DNSMOS: the mean of each score over the windows (float64 sums, order-free).

    Returns ``dnsmos`` (= OVRL, the table number), ``dnsmos_sig``, ``dnsmos_bak``,
    ``dnsmos_p808`` and ``dnsmos_windows`` (how many windows were averaged).
    Float64 sums make the mean independent of window order; the reference averages a
    float32 list for P.808, so the two agree to ~1e-7.
    """
    totals = {"sig": 0.0, "bak": 0.0, "ovrl": 0.0, "p808": 0.0}
    count = 0
    for window in windows:
        for name, value in dnsmos_window_scores(window, device).items():
            totals[name] += value
        count += 1
    if count == 0:
        raise AudioInputError("no 9.01 s DNSMOS window could be formed")
    return {
        "dnsmos": totals["ovrl"] / count,
        "dnsmos_sig": totals["sig"] / count,
        "dnsmos_bak": totals["bak"] / count,
        "dnsmos_p808": totals["p808"] / count,
        "dnsmos_windows": count,
    }


def dnsmos(source: AudioSource, sample_rate: "int | None" = None, device: str = "cpu") -> dict[str, float]:
    """DNSMOS of one clip (DNS-Challenge ``dnsmos_local.py`` protocol, non-personalised models).

    Args:
        source: a sound-file path, or samples (mono or ``(n, channels)``) in [-1, 1].
        sample_rate: rate of array input; any rate is resampled to 16 kHz.

    Returns:
        ``{"dnsmos": OVRL, "dnsmos_sig", "dnsmos_bak", "dnsmos_p808", "dnsmos_windows"}``.

    Raises:
        AudioInputError: empty, NaN/inf or out-of-range audio.

    Example:
        >>> round(dnsmos(np.zeros(8000, np.float32), 16000)["dnsmos_windows"])
        7
    """
    if isinstance(source, (str, Path)):
        return dnsmos_from_windows(dnsmos_file_windows(source), device)
    return dnsmos_from_windows(dnsmos_windows(prepare_audio(source, sample_rate)), device)


# ----------------------------------------------------------------------------- speaker similarity
SPEAKER_PARTIAL_RATE = 1.3
SPEAKER_MIN_COVERAGE = 0.75


@functools.lru_cache(maxsize=None)
def voice_encoder(device: str = "cpu"):
    """Resemblyzer's ``VoiceEncoder`` with its packaged ``pretrained.pt``, loaded once per process.

    The file is resolved (and hash-checked) through the weights registry (``resemblyzer_encoder``).
    """
    from resemblyzer import VoiceEncoder

    from ..weights import resolve

    encoder = VoiceEncoder(device=device, verbose=False, weights_fpath=resolve("resemblyzer_encoder"))
    encoder.eval()
    return encoder


def speaker_preprocess(source: AudioSource, sample_rate: "int | None" = None) -> np.ndarray:
    """Resemblyzer ``preprocess_wav`` (-30 dBFS gain, increase only; long-silence trimming by VAD).

    Raises:
        NoSpeechError: the clip is all zeros, or the VAD leaves no voiced sample.
    """
    from resemblyzer import preprocess_wav

    audio = prepare_audio(source, sample_rate)
    if not np.any(audio):
        # Resemblyzer would divide by a zero RMS and return NaNs.
        raise NoSpeechError("audio is all zeros: no voice to embed")
    wav = preprocess_wav(audio, source_sr=SAMPLE_RATE)
    if len(wav) == 0:
        raise NoSpeechError("voice activity detection found no speech in the audio")
    return wav.astype(np.float32)


def speaker_embedding(
    source: AudioSource, sample_rate: "int | None" = None, batch_partials: int = 16, device: str = "cpu"
) -> np.ndarray:
    """L2-normalised 256-d Resemblyzer utterance embedding.

    Same as ``VoiceEncoder.embed_utterance(preprocess_wav(...))`` (1.6 s partials at 1.3 per
    second, last partial kept when it covers >= 75 %, mean of partial embeddings, renormalised),
    but the partials go through the network ``batch_partials`` at a time so memory does not grow
    with clip length; sums are float64 so the result does not depend on the batch size. The
    waveform and its 40-band mel (16 kB per second) are held whole: the VAD trimming of
    ``preprocess_wav`` needs the entire clip.

    Example:
        >>> t = np.arange(32000) / 16000
        >>> voice = 0.3 * np.sin(2 * np.pi * 150 * t) * (1 + np.sin(2 * np.pi * 3 * t))
        >>> e = speaker_embedding(voice, 16000)
        >>> e.shape, round(float(np.linalg.norm(e)), 5)
        ((256,), 1.0)
    """
    import torch
    from resemblyzer.audio import wav_to_mel_spectrogram

    if batch_partials < 1:
        raise ValueError("batch_partials must be >= 1")
    encoder = voice_encoder(device)
    wav = speaker_preprocess(source, sample_rate)
    wav_slices, mel_slices = encoder.compute_partial_slices(len(wav), SPEAKER_PARTIAL_RATE, SPEAKER_MIN_COVERAGE)
    needed = wav_slices[-1].stop
    if needed >= len(wav):
        wav = np.pad(wav, (0, needed - len(wav)), "constant")
    mel = wav_to_mel_spectrogram(wav)
    total = np.zeros(encoder.linear.out_features, np.float64)
    with torch.no_grad():
        for start in range(0, len(mel_slices), batch_partials):
            batch = np.stack([mel[s] for s in mel_slices[start : start + batch_partials]])
            total += encoder(torch.from_numpy(batch).to(encoder.device)).cpu().numpy().astype(np.float64).sum(0)
    mean = total / len(mel_slices)
    return (mean / np.linalg.norm(mean)).astype(np.float32)


def speaker_similarity(
    prediction: AudioSource,
    reference: AudioSource,
    prediction_rate: "int | None" = None,
    reference_rate: "int | None" = None,
    device: str = "cpu",
    batch_partials: int = 16,
) -> float:
    """Resemblyzer speaker similarity of a generated utterance to the reference recording.

    Args:
        prediction: generated audio (path or samples).
        reference: the recorded reference audio of the same performance (path or samples).
        prediction_rate, reference_rate: sample rates of array inputs.
        device, batch_partials: where the encoder runs and partials per forward pass (values do
            not depend on either beyond float rounding).

    Returns:
        Cosine similarity of the two utterance embeddings; Resemblyzer embeddings are
        non-negative, so the value lies in [0, 1].
    """
    from .identity import cosine_similarity

    return float(cosine_similarity(
        speaker_embedding(prediction, prediction_rate, batch_partials, device),
        speaker_embedding(reference, reference_rate, batch_partials, device),
    ))


# ----------------------------------------------------------------------------- UTMOS
def utmos(source: AudioSource, sample_rate: "int | None" = None, weights: "str | Path | None" = None) -> float:
    """UTMOS22 strong naturalness MOS of one clip (2 x mean frame score + 3).

    The checkpoint ``utmos22_strong_step7459_v1.pt`` is resolved through the weights registry
    (explicit ``weights`` path, then environment variable, then the hub cache); a missing file
    raises the registry's ``WeightsMissingError`` naming how to get it.
    """
    from ..models.utmos import load_utmos22_strong

    return utmos_clip(load_utmos22_strong(weights), prepare_audio(source, sample_rate))


def utmos_clip(model, audio: np.ndarray) -> float:
    """UTMOS of one clip's 16 kHz mono float32 samples with a loaded model (whole utterance): the
    catalog row's function, which the voice scorer calls on the clip it decoded once."""
    from ..models.utmos import utmos_score

    return float(utmos_score(model, audio))


# ----------------------------------------------------------------------------- real-audio row
@dataclass(frozen=True)
class RealAudioPair:
    """A real clip and the other recording of the same actor it is compared with."""

    clip_id: str
    partner_id: str
    clip_path: Path
    partner_path: Path


def real_audio_pairs(records: Sequence) -> tuple[list[RealAudioPair], list[str]]:
    """Pair each real clip with another recording of the same actor (the "Real audio" row).

    Rule (deterministic, independent of input order): the partner is the clip of the same actor,
    emotion and action with the next script id, cycling from the last script to the first. A
    clip alone in its (actor, emotion, action) group takes the next clip of the same actor in
    grid order (cyclic). A clip whose actor has no other clip cannot be paired and is returned
    in the second list.

    The paper does not state its pairing for the 0.990 of Table 9; two different sentences of one
    speaker usually score lower than that with Resemblyzer, so expect our Real-audio value to be
    below the paper's (it is the same-speaker ceiling for *different* content).

    Args:
        records: :class:`hug_vis_dataset.datamodel.release.ClipRecord` objects (e.g. ``list(Release(root))``).

    Returns:
        ``(pairs, unpaired_clip_ids)``, pairs in grid order.
    """
    ordered = sorted(records, key=lambda r: r.cid)
    by_group: dict[tuple, list] = {}
    by_actor: dict[int, list] = {}
    for record in ordered:
        cid = record.cid
        by_group.setdefault((cid.actor_id, cid.emotion, cid.action_id), []).append(record)
        by_actor.setdefault(cid.actor_id, []).append(record)
    pairs: list[RealAudioPair] = []
    unpaired: list[str] = []
    for record in ordered:
        cid = record.cid
        group = by_group[(cid.actor_id, cid.emotion, cid.action_id)]
        pool = group if len(group) > 1 else by_actor[cid.actor_id]
        if len(pool) < 2:
            unpaired.append(record.clip_id)
            continue
        partner = pool[(pool.index(record) + 1) % len(pool)]
        pairs.append(RealAudioPair(record.clip_id, partner.clip_id, record.audio_path, partner.audio_path))
    return pairs, unpaired

"""MetricTester: the one harness every per-clip metric of the catalog passes (issue 36).

One table, :data:`FAMILIES`, gives for each family of per-clip metrics: its inputs (edge cases
included), its functional core (``library``), an independent reference (``reference``: a hand
formula, scikit-image, speechmos, Resemblyzer or the re-derivation the family tests already use,
imported from them, never copied) and the ways of computing the same thing that must not change
a value (``variants``: chunk size, batch size, thread count, row order, file vs array). Every
catalog metric is either in :data:`FAMILIES`, or in :data:`NEEDS_WEIGHTS` / :data:`NOT_PER_CLIP`
with the reason; ``tests/test_metric_tester.py`` fails on a catalog metric in none of them.

The door part (library == evaluate module == ``hugvis evaluate`` runner == report) runs on one
small synthetic release built once per session (:func:`metric_doors.door_world`, re-exported here);
``tests/test_doors.py`` reuses it for its other door checks.
"""

from __future__ import annotations

import json
import math
import random
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

import reference_matting as R
import test_boundary as _boundary  # ref_scores, CASES, figure_clip
import test_emotion as _emotion  # ANSWERS (hand-labelled answers)
import test_frame_kernels as _frames  # INPUTS, _skimage_psnr, _skimage_ssim
import test_matting as _matting  # CASES, soft_blobs, to_u8
import test_distill_mos as _distill  # package_distill_mos (the distillmos package's own API)
import test_voice as _voice  # tone_noise, speechmos_dnsmos, resemblyzer_similarity
from metric_doors import (  # the door world (re-exported: tests/test_doors.py uses it as MT.*)
    SETTING, SYSTEM, door_compute, door_inputs, door_library, door_per_clip, door_world, memo, module_of,
    stored_rows,
)
from metric_doors import close_or_nan as _close

from hug_vis_dataset import catalog

ROOT = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- exact comparison
def same(a: Any, b: Any, tol: float = 0.0, where: str = "") -> None:
    """``a`` equals ``b`` recursively (dicts, sequences, arrays, floats; NaN equals NaN), within ``tol``."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (where, sorted(a), sorted(b) if isinstance(b, dict) else b)
        for key in a:
            same(a[key], b[key], tol, f"{where}/{key}")
    elif isinstance(a, (np.ndarray, list, tuple)):
        x, y = np.asarray(a), np.asarray(b)
        assert x.shape == y.shape, (where, x.shape, y.shape)
        if x.dtype.kind in "fc" or y.dtype.kind in "fc":
            np.testing.assert_allclose(x, y, rtol=0, atol=tol, equal_nan=True, err_msg=where)
        else:
            assert np.array_equal(x, y), where
    elif isinstance(a, float) or isinstance(b, float):
        assert (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol, (where, a, b)
    else:
        assert a == b, (where, a, b)


def _nanmean(values: Any) -> float:
    values = np.asarray(values, np.float64)
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else math.nan


def _numba_threads(fn: Callable[[], Any], threads: int = 1) -> Any:
    import numba

    before = numba.get_num_threads()
    try:
        numba.set_num_threads(threads)
        return fn()
    finally:
        numba.set_num_threads(before)


# ----------------------------------------------------------------------------- the families
@dataclass(frozen=True)
class Family:
    """The harness row of one family of per-clip metrics.

    Attributes:
        name: family name (test ids).
        task: the catalog task whose rows carry the metrics.
        metrics: the catalog metrics it covers.
        cases: ``() -> {case id: (prediction, reference)}`` (arrays, texts or ``None`` for reference-only).
        library: the functional core on one case: its full output.
        value: ``(output, metric) -> the stored per-clip value``.
        reference: the independent reference on one case: ``{metric: value}``.
        variants: ``(prediction, reference) -> (label, output)`` pairs that must equal ``library``'s output.
        rel, abs: tolerance of library vs reference.
        variant_tol: absolute tolerance of the variants (0: bit-identical).
        door_clips: clips of the door world its door checks use (a DNSMOS clip costs ~3.6 s on a loaded
            2-core machine: two of them).
        door_chunk: the evaluate door takes ``chunk_frames`` (frames are decoded in chunks).
        door_rel: relative tolerance of the door's chunk invariance (0: bit-identical).
        door_order: metrics whose door order invariance is checked (default all).
        door_full: metrics checked on all clips of the door world whatever ``door_clips`` (the paper
            table's columns: the report's printed value is over every clip).
        door: False for a family with no evaluate module and no rows in the door world (the emotion rows of a
            question asked under reordered options): its doors (predict, runner, report) are checked in the file
            ``door_test`` names, on submissions that ask reordered questions.
    """

    name: str
    task: str
    metrics: tuple[str, ...]
    cases: Callable[[], dict[str, tuple[Any, Any]]]
    library: Callable[[Any, Any], Any]
    value: Callable[[Any, str], float]
    reference: Callable[[Any, Any], dict[str, float]]
    variants: Callable[[Any, Any], Iterator[tuple[str, Any]]]
    rel: float = 1e-9
    abs: float = 1e-12
    variant_tol: float = 0.0
    door_clips: int = 4
    door_chunk: bool = True
    door_rel: float = 0.0
    door_order: "tuple[str, ...] | None" = None
    door_full: tuple[str, ...] = ()
    door: bool = True
    door_test: str = ""

    def door_n(self, metric: str) -> int:
        """Clips of the door world the door checks of ``metric`` use."""
        return 4 if metric in self.door_full else self.door_clips


# -- matting (Table 11): RVM-style re-derivation of tests/reference_matting.py
def _matting_cases() -> dict[str, tuple[Any, Any]]:
    cases = {name: (pred, ref) for name, pred, ref in _matting.CASES}
    # seven frames (the family test's chunk clip): chunks of 2 and 3 split it unevenly
    ref = _matting.to_u8(_matting.soft_blobs(7, 18, 21, 11))
    cases["seven_frames"] = (_matting.to_u8(np.clip(_matting.soft_blobs(7, 18, 21, 11) * 0.9 + 0.02, 0, 1)), ref)
    return cases


def _matting_library(pred, ref):
    from hug_vis_dataset.metrics.matting import score_matting_clip

    return score_matting_clip(pred, ref)


def _matting_reference(pred, ref):
    exact = R.ref_clip(pred, ref, dtype=np.float64)
    return {m: _nanmean(v) for m, v in exact.items()}  # dtSSD of a one-frame clip: no pair, NaN


def _matting_variants(pred, ref):
    from hug_vis_dataset.readers.media import write_alpha_pngs
    from hug_vis_dataset.metrics.matting import score_matting_clip

    for chunk in (1, 2, 3, 7):
        yield f"chunk_frames={chunk}", score_matting_clip(pred, ref, chunk_frames=chunk)
    n = len(ref)  # chunk iterators of different, uneven sizes on either side (7 frames: 2+5 vs 5+1+1)
    yield "uneven chunks", score_matting_clip(iter([pred[:2], pred[2:]]),
                                              iter([ref[:max(n - 2, 0)], ref[max(n - 2, 0):n - 1], ref[n - 1:]]),
                                              chunk_frames=3)
    yield "numba threads=1", _numba_threads(lambda: score_matting_clip(pred, ref))
    if pred.dtype == np.uint8:  # the PNG folders a submission holds, streamed
        with tempfile.TemporaryDirectory() as tmp:
            write_alpha_pngs(Path(tmp) / "p", [pred])
            write_alpha_pngs(Path(tmp) / "t", [ref])
            yield "png folders", score_matting_clip(str(Path(tmp) / "p"), str(Path(tmp) / "t"), chunk_frames=2)


MATTING = Family("matting", "matting", ("mad", "mse", "dtssd", "grad", "conn"), _matting_cases, _matting_library,
                 lambda out, m: out["clip"][m], _matting_reference, _matting_variants, rel=1e-6, abs=1e-7)


# -- PSNR / SSIM (Table 7): scikit-image, frame by frame
def _frame_cases() -> dict[str, tuple[Any, Any]]:
    return {f"{kind}_{h}x{w}": make((h, w), 3) for kind, make in sorted(_frames.INPUTS.items())
            for h, w in ((11, 12), (37, 50))}


def _frame_library(pred, ref):
    from hug_vis_dataset.metrics import frames

    return {"psnr": frames.psnr_frames(pred, ref), "ssim": frames.ssim_frames(pred, ref)}


def _frame_reference(pred, ref):
    return {"psnr": float(_frames._skimage_psnr(pred, ref).mean()),
            "ssim": float(_frames._skimage_ssim(pred, ref).mean())}


def _frame_variants(pred, ref):
    one = [_frame_library(pred[i:i + 1], ref[i:i + 1]) for i in range(len(ref))]
    yield "one frame per batch", {m: np.concatenate([o[m] for o in one]) for m in ("psnr", "ssim")}
    back = _frame_library(pred[::-1], ref[::-1])
    yield "frames reversed", {m: v[::-1] for m, v in back.items()}
    yield "numba threads=1", _numba_threads(lambda: _frame_library(pred, ref))


# Bit-identical across chunk sizes: the generation scorer sums per-frame values exactly (ExactSum);
# adding each chunk's np.sum made SSIM 0.9218290287995436 vs ...438 at chunk_frames 3 vs 32, 64x36.
FRAMES = Family("frames", "vision_driven", ("psnr", "ssim"), _frame_cases, _frame_library,
                lambda out, m: float(np.mean(out[m])), _frame_reference, _frame_variants)


# -- DNSMOS (Table 9): speechmos's dnsmos (the DNS-Challenge script as a package)
def _dnsmos_cases() -> dict[str, tuple[Any, Any]]:
    rng = np.random.default_rng(7)
    return {"short_0.3s": (_voice.tone_noise(0.3, 5), None), "tone_3.3s": (_voice.tone_noise(3.3, 1), None),
            "noise_3s": ((0.2 * rng.standard_normal(16000 * 3)).clip(-1, 1).astype(np.float32), None),
            "silence_2s": (np.zeros(16000 * 2, np.float32), None)}


def _dnsmos_library(pred, ref):
    from hug_vis_dataset.metrics import voice

    return voice.dnsmos(pred, 16000)


def _dnsmos_variants(pred, ref):
    import soundfile as sf

    from hug_vis_dataset.metrics import voice

    with tempfile.TemporaryDirectory() as tmp:  # a 16 kHz file is read window by window
        path = Path(tmp) / "x.wav"
        sf.write(path, pred, 16000, subtype="FLOAT")
        yield "float wav file", voice.dnsmos(path)
    yield "stereo of two equal channels", voice.dnsmos(np.stack([pred, pred], axis=1), 16000)


DNSMOS = Family("dnsmos", "voice_cloning", ("dnsmos", "dnsmos_sig", "dnsmos_bak", "dnsmos_p808"), _dnsmos_cases,
                _dnsmos_library, lambda out, m: out[m], lambda p, r: _voice.speechmos_dnsmos(p),
                _dnsmos_variants, rel=0, abs=2e-5, door_clips=2, door_chunk=False,
                # SIG/BAK/P.808 come from dnsmos's one scorer group: its order invariance is theirs
                door_order=("dnsmos",), door_full=("dnsmos",))


# -- speaker similarity (Table 9): Resemblyzer's own encoder and preprocess_wav
def _speaker_cases() -> dict[str, tuple[Any, Any]]:
    a, b = _voice.tone_noise(2.0, 0), _voice.tone_noise(2.0, 3)
    return {"two_voices": (a, b), "same_signal": (a, a.copy()), "long_vs_short": (_voice.tone_noise(5.0, 1), b)}


def _speaker_library(pred, ref):
    from hug_vis_dataset.metrics import voice

    return voice.speaker_similarity(pred, ref, 16000, 16000)


def _speaker_variants(pred, ref):
    from hug_vis_dataset.metrics import voice

    for batch in (1, 7):  # partials per forward pass: float rounding only
        yield f"batch_partials={batch}", voice.speaker_similarity(pred, ref, 16000, 16000, batch_partials=batch)


SPEAKER = Family("speaker", "voice_cloning", ("speaker_similarity",), _speaker_cases, _speaker_library,
                 lambda out, m: float(out), lambda p, r: {"speaker_similarity": _voice.resemblyzer_similarity(p, r)},
                 _speaker_variants, rel=0, abs=1e-5, variant_tol=1e-6, door_clips=2,
                 door_chunk=False, door_full=("speaker_similarity",))


# -- Distill-MOS (beyond Table 9): the distillmos package's own API (its model, torchaudio's resampling)
def _distill_cases() -> dict[str, tuple[Any, Any]]:
    rng = np.random.default_rng(11)
    return {"tone_1s": (_voice.tone_noise(1.0, 2), None), "tone_8.5s": (_voice.tone_noise(8.5, 3), None),
            "noise_2s": ((0.2 * rng.standard_normal(32000)).clip(-1, 1).astype(np.float32), None),
            "silence_1s": (np.zeros(16000, np.float32), None)}


def _distill_library(pred, ref):
    return _distill.ours(pred, 16000)


def _distill_variants(pred, ref):
    import soundfile as sf

    from hug_vis_dataset.readers.media import read_audio

    for batch in (1, 2):  # segments per forward pass: float rounding only
        yield f"batch={batch}", _distill.ours(pred, 16000, batch)
    with tempfile.TemporaryDirectory() as tmp:  # the file the scorer decodes, as a float WAV
        path = Path(tmp) / "x.wav"
        sf.write(path, pred, 16000, subtype="FLOAT")
        audio, rate = read_audio(path, mono=True)
        yield "float wav file", _distill.ours(audio, rate)


DISTILL_MOS = Family("distill_mos", "voice_cloning", ("distill_mos",), _distill_cases, _distill_library,
                     lambda out, m: float(out), lambda p, r: {"distill_mos": _distill.package_distill_mos(p, 16000)},
                     _distill_variants, rel=0, abs=1e-6, variant_tol=1e-6, door_clips=2, door_chunk=False,
                     door_full=("distill_mos",))


# -- emotion accuracy (Table 4): the hand-labelled answers of tests/test_emotion.py
def _emotion_cases() -> dict[str, tuple[Any, Any]]:
    from hug_vis_dataset.datamodel.grid import EMOTION_NAMES

    answers = [a for a, _ in _emotion.ANSWERS]
    expected = [e for _, e in _emotion.ANSWERS]
    other = [EMOTION_NAMES[(EMOTION_NAMES.index(e) + 1) % 7] if e else "Happy" for e in expected]
    cases = {"each_vs_its_class": (answers, [e or "Neutral" for e in expected]), "each_vs_another": (answers, other)}
    for i in (0, 9, len(answers) - 1):  # one-clip inputs: the per-clip 0/1 itself
        cases[f"single_{i}_right"] = ([answers[i]], [expected[i] or "Sad"])
        cases[f"single_{i}_wrong"] = ([answers[i]], [other[i]])
    return cases


def _emotion_library(pred, ref):
    from hug_vis_dataset.metrics.emotion import emotion_accuracy

    return emotion_accuracy(pred, ref)


def _emotion_reference(pred, ref):
    truth = dict(_emotion.ANSWERS)  # a hand label per answer (None: unparsed, counted wrong)
    return {"emotion_accuracy": float(np.mean([truth[p] == r for p, r in zip(pred, ref)]))}


def _emotion_variants(pred, ref):
    from hug_vis_dataset.metrics.emotion import emotion_accuracy

    for seed in (0, 1):
        order = list(range(len(pred)))
        random.Random(seed).shuffle(order)
        yield f"rows shuffled ({seed})", json.loads(json.dumps(
            emotion_accuracy([pred[i] for i in order], [ref[i] for i in order]), sort_keys=True))


EMOTION = Family("emotion", "emotion", ("emotion_accuracy",), _emotion_cases,
                 lambda p, r: json.loads(json.dumps(_emotion_library(p, r), sort_keys=True)),
                 lambda out, m: out["accuracy"], _emotion_reference, _emotion_variants,
                 door_chunk=False)


# -- the emotion question under reordered options (issue 54): hand labels of tests/test_emotion.py
def _circular_cases() -> dict[str, tuple[Any, Any]]:
    """Clips as ``{(order, language): answer}`` with their instructed emotion, from the hand-labelled answers."""
    labelled = [(a, e) for a, e in _emotion.ANSWERS]
    by_label: dict = {}
    for answer, label in labelled:
        by_label.setdefault(label, []).append(answer)
    sad, happy, none = by_label["Sad"], by_label["Happy"], by_label[None]
    stable = {(0, "en"): sad[0], (2, "en"): sad[1], (4, "en"): sad[2]}  # right under every order
    flips = {(0, "en"): sad[0], (2, "en"): happy[0], (4, "en"): sad[3]}  # changes once
    unparsed = {(0, "en"): none[0], (3, "en"): none[1]}  # two unparsed answers: no flip (same non-answer)
    lost = {(0, "en"): happy[1], (1, "en"): none[0]}  # a parsed answer then none: a flip
    languages = {(0, "en"): sad[0], (0, "zh"): "悲伤", (3, "en"): sad[4], (3, "zh"): "开心"}  # zh flips
    one_each = {(0, "en"): happy[2], (0, "zh"): "生气"}  # no language asked twice: no flip row
    return {"stable_sad": ([stable], ["Sad"]), "mixed": ([stable, flips, unparsed, lost], ["Sad", "Sad", "Sad", "Happy"]),
            "languages": ([languages, one_each], ["Sad", "Happy"]), "one_each": ([one_each], ["Happy"]),
            "seven_orders": ([{(k, "en"): (sad[k % len(sad)] if k != 5 else none[2]) for k in range(7)}], ["Sad"])}


def _circular_library(pred, ref):
    """The scorer's per-clip function (metrics.emotion.circular_scores), averaged over the case's clips."""
    from hug_vis_dataset.metrics.emotion import circular_scores

    per_clip = [circular_scores(p, r) for p, r in zip(pred, ref)]
    return {m: _nanmean([c.get(m, math.nan) for c in per_clip]) for m in ("emotion_circular_accuracy",
                                                                         "emotion_flip_rate")}


def _circular_reference(pred, ref):
    """By hand: the hand label of every answer; right under every order, and a language whose labels differ."""
    truth = dict(_emotion.ANSWERS) | {"悲伤": "Sad", "开心": "Happy", "生气": "Angry"}
    circular, flips = [], []
    for answers, emotion in zip(pred, ref):
        labels = {key: truth[a] for key, a in answers.items()}
        circular.append(float(all(v == emotion for v in labels.values())))
        languages = {lang for _, lang in labels}
        groups = [[v for (o, lang), v in labels.items() if lang == language] for language in languages]
        if any(len(g) > 1 for g in groups):
            flips.append(float(any(len(set(g)) > 1 for g in groups)))
    return {"emotion_circular_accuracy": float(np.mean(circular)),
            "emotion_flip_rate": float(np.mean(flips)) if flips else math.nan}


def _circular_variants(pred, ref):
    for seed in (0, 1):  # the answers of a clip in another order, the clips in another order
        rng = random.Random(seed)
        order = list(range(len(pred)))
        rng.shuffle(order)
        shuffled = [dict(rng.sample(list(pred[i].items()), len(pred[i]))) for i in order]
        yield f"answers and clips shuffled ({seed})", _circular_library(shuffled, [ref[i] for i in order])


EMOTION_CIRCULAR = Family("emotion_circular", "emotion", ("emotion_circular_accuracy", "emotion_flip_rate"),
                          _circular_cases, _circular_library, lambda out, m: out[m], _circular_reference,
                          _circular_variants, door_chunk=False, door=False,
                          door_test="tests/test_circular.py (predict --circular -> evaluate -> report, planted bias)")


# -- motion statistics (Eq. 5-6): centroids by scipy.ndimage.center_of_mass
def _motion_cases() -> dict[str, tuple[Any, Any]]:
    hand = np.zeros((3, 2, 4), np.float32)
    hand[0, :, 0], hand[1, :, 2], hand[2, :, 2] = 1.0, 1.0, 0.6
    gap = np.zeros((4, 4, 2), np.uint8)
    gap[0, 0, :], gap[1, 2, :], gap[3, 3, :] = 255, 255, 255  # frame 2 empty: its pairs have no displacement
    return {"hand": (None, hand), "empty_frame": (None, gap), "all_zero": (None, np.zeros((3, 5, 6), np.uint8)),
            "soft_blobs": (None, _matting.to_u8(_matting.soft_blobs(6, 20, 24, 3))),
            "float_blobs": (None, _matting.soft_blobs(4, 15, 16, 4).astype(np.float32))}


def _motion_library(pred, ref):
    from hug_vis_dataset.metrics.matting import motion_stats

    return motion_stats(ref)


def _motion_reference(pred, ref):
    from scipy import ndimage

    alpha = ref.astype(np.float64) / 255 if ref.dtype == np.uint8 else ref.astype(np.float64)
    u = float(np.mean([np.abs(alpha[k + 1] - alpha[k]).mean() for k in range(len(alpha) - 1)]))
    H, W = alpha.shape[1:]
    centres = [np.array(ndimage.center_of_mass(a >= 0.5)) / (H, W) if (a >= 0.5).any() else None for a in alpha]
    steps = [np.hypot(*(c1 - c0)) for c0, c1 in zip(centres, centres[1:]) if c0 is not None and c1 is not None]
    return {"motion_u": u, "motion_v": float(np.mean(steps)) if steps else 0.0}


def _motion_variants(pred, ref):
    from hug_vis_dataset.metrics.matting import motion_stats

    for chunk in (1, 2, 3):
        yield f"chunk_frames={chunk}", motion_stats(ref, chunk_frames=chunk)
    yield "frame iterator", motion_stats(iter([ref[:1], ref[1:]]), chunk_frames=2)


MOTION = Family("motion", "motion", ("motion_u", "motion_v"), _motion_cases, _motion_library,
                lambda out, m: out[0 if m == "motion_u" else 1], _motion_reference, _motion_variants)


# -- boundary-aware matting (finding iii): the brute-force re-derivation of tests/test_boundary.py
def _boundary_cases() -> dict[str, tuple[Any, Any]]:
    # at 120 rows the 16 px (1080p) opening disk has radius 1.8 px: the 1-px bar is a thin structure
    return {**_boundary.CASES, "figure_7": _boundary.figure_clip(T=7), "figure_h120": _boundary.figure_clip(3, 120, 48)}


def _boundary_library(pred, ref):
    from hug_vis_dataset.metrics.boundary import score_boundary_clip

    return score_boundary_clip(pred, ref)


def _boundary_reference(pred, ref):
    from hug_vis_dataset.metrics.boundary import DEFAULT_THIN_RADIUS

    per_frame = _boundary.ref_scores(pred, ref, catalog.BOUNDARY_BAND_WIDTHS, DEFAULT_THIN_RADIUS)
    return {f"{e}_{r}": _nanmean(per_frame[r][e]) for r in catalog.BOUNDARY_REGIONS for e in catalog.BOUNDARY_ERRORS}


def _boundary_variants(pred, ref):
    from hug_vis_dataset.metrics.boundary import score_boundary_clip

    for chunk in (1, 2, 3, 7):
        yield f"chunk_frames={chunk}", score_boundary_clip(iter(list(pred)), iter(list(ref)), chunk_frames=chunk)


BOUNDARY = Family("boundary", "matting_boundary", catalog.SUITES["boundary_matting"], _boundary_cases,
                  _boundary_library, lambda out, m: out["clip"][m.split("_", 1)[1]][m.split("_", 1)[0]],
                  _boundary_reference, _boundary_variants)

FAMILIES: tuple[Family, ...] = (MATTING, FRAMES, DNSMOS, SPEAKER, DISTILL_MOS, EMOTION, EMOTION_CIRCULAR, MOTION,
                                BOUNDARY)
#: metric -> its family: the one table of references.
REFERENCES: dict[str, Family] = {m: f for f in FAMILIES for m in f.metrics}

#: Metrics whose pretrained files cannot be had on a machine without downloads (their own tests
#: inject models or need ``hugvis weights download``).
NEEDS_WEIGHTS: dict[str, str] = {
    "lpips": "AlexNet + LPIPS linear heads (downloaded); tests/test_generation_lpips.py",
    "csim": "SCRFD + ArcFace ONNX (downloaded); injected models in tests/test_doors.py, tests/test_arcface*.py",
    "fid": "Inception-v3 FID weights (downloaded), set-level; tests/test_generation.py, test_fid_one_decode.py",
    "sync_c": "SyncNet + SCRFD (downloaded); tests/test_syncnet.py, tests/test_sync_*.py",
    "sync_d": "SyncNet + SCRFD (downloaded); tests/test_syncnet.py, tests/test_sync_*.py",
    "utmos": "UTMOS22 strong learner (downloaded); tests/test_utmos.py",
    **dict.fromkeys(("cer", "cer_edits", "cer_ref_chars"),
                    "Whisper large-v3 (downloaded); a tiny random Whisper of the real architecture through every "
                    "door in tests/test_cer.py"),
    **dict.fromkeys([m.name for m in catalog.METRICS if m.call == catalog.PER_TRACK],
                    "MediaPipe's models (taken out of the pinned mediapipe wheel: hugvis weights download mediapipe); "
                    "functions vs hand re-derivations in tests/test_human_motion.py, every door on real photographs "
                    "in tests/test_human_doors.py"),
}
#: Catalog rows with no per-clip value: analyses over stored rows (their modules are door-tested in
#: tests/test_doors.py, their math in their family tests).
NOT_PER_CLIP: dict[str, str] = {
    "emotion_difficulty": "analysis over stored rows; tests/test_crosstask.py",
    "difficulty_agreement": "analysis over stored rows; tests/test_crosstask.py",
    "source_difficulty": "analysis over stored rows; tests/test_crosstask.py",
    "motion_difficulty": "analysis over stored rows; tests/test_crosstask.py, test_matting_evaluate.py",
    "metric_mos_agreement": "analysis over stored rows; tests/test_mos_agreement.py",
    "human_metric_agreement": "analysis over stored rows; tests/test_human_metric_agreement.py, "
                              "tests/test_human_metric_doors.py",
    "variance_decomposition": "analysis over stored rows; tests/test_variance.py",
    "neighbour_significance": "analysis over stored rows; tests/test_significance.py",
    "detectable_difference": "analysis over stored rows; tests/test_power.py",
}


def weight_needing_metrics() -> set[str]:
    """Catalog metrics with a pretrained file that is not shipped inside an installed package."""
    from hug_vis_dataset.weights.registry import REGISTRY

    return {m.name for m in catalog.METRICS if any(REGISTRY[w].source != "package" for w in m.weights)}


_OUTPUTS: dict[tuple[str, str, str], Any] = {}


def outputs(family: Family, case: str, side: str) -> Any:
    """``library`` or ``reference`` output of one case, computed once per session (a family's metrics share it)."""
    key = (family.name, case, side)
    if key not in _OUTPUTS:
        pred, ref = cases_of(family)[case]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # means of empty regions: NaN on both sides
            _OUTPUTS[key] = (family.library if side == "library" else family.reference)(pred, ref)
    return _OUTPUTS[key]


_CASES: dict[str, dict[str, tuple[Any, Any]]] = {}


def cases_of(family: Family) -> dict[str, tuple[Any, Any]]:
    """A family's inputs, built once."""
    if family.name not in _CASES:
        _CASES[family.name] = family.cases()
    return _CASES[family.name]


def check_reference(metric: str) -> tuple[int, int]:
    """(a) the functional value equals the independent reference on every case.

    Returns:
        ``(cases with a finite value, cases)``: NaN (an empty region) must be NaN on both sides.

    Also checks the catalog's range contract: inside ``value_range`` when it is a bound, else finite.
    """
    family, spec = REFERENCES[metric], catalog.spec(metric)
    finite = 0
    for case in cases_of(family):
        got = family.value(outputs(family, case, "library"), metric)
        want = outputs(family, case, "reference")[metric]
        if math.isnan(want):
            assert math.isnan(got), (metric, case, got)
            continue
        assert abs(got - want) <= family.abs + family.rel * abs(want), (metric, case, got, want)
        low, high = spec.value_range
        assert math.isfinite(got) and (not spec.range_is_bound or low - 1e-9 <= got <= high + 1e-9), (metric, case, got)
        finite += 1
    return finite, len(cases_of(family))


def check_variants(family: Family) -> list[str]:
    """(b) every variant (chunk, batch, threads, order, file) gives the library's output; returns the labels run."""
    run = []
    for case, (pred, ref) in cases_of(family).items():
        whole = outputs(family, case, "library")
        for label, out in family.variants(pred, ref):
            same(out, whole, family.variant_tol, f"{family.name}/{case}/{label}")
            run.append(f"{case}/{label}")
    return run


# ----------------------------------------------------------------------------- the doors
def check_doors(world: tuple[Path, Path, Any], metric: str) -> None:
    """(d) library == evaluate door (``compute``) == runner rows == report, clip by clip, on the door world."""
    from hug_vis_dataset.scoring.aggregate import task_table

    release, results, report = world
    family = REFERENCES[metric]
    if not family.door:  # no module, no rows in the door world: family.door_test checks its doors
        return
    task, system, n = family.task, SYSTEM[family.task], family.door_n(metric)
    predictions, references, records = (x[:n] for x in door_inputs(release, task, system))
    model = f"{system} | {SETTING}" if task == "emotion" else system
    stored = stored_rows(results, task, system)
    rows = stored[(stored["metric"] == metric) & (stored["model"] == model)].set_index("clip_id")["value"]
    library = [door_library(task, metric, predictions[i], references[i]) for i in range(len(records))]
    for i, record in enumerate(records):
        _close(rows[record.clip_id], library[i], (metric, record.clip_id, "runner"))
    if task == "motion":  # reference statistics: no module; the runner's rows are the door
        return
    name = module_of(metric)
    out = door_compute(name, predictions, references)
    # answers carry no clip id: the module pairs them by position
    keys = [f"#{i}" for i in range(len(records))] if task == "emotion" else [r.clip_id for r in records]
    assert out["clip_ids"] == keys
    # (a suite's clip fails when any of its metrics does: an empty region here)
    assert out["n_failed"] == 0 or name != metric or all(math.isnan(v) for v in library), out["errors"]
    for i, record in enumerate(records):
        _close(door_per_clip(out, metric)[i], library[i], (metric, record.clip_id, "module"))
    if all(math.isnan(v) for v in library):
        return
    if n < len(stored["clip_id"].unique()):  # a subset of the clips: the aggregation of the same rows
        _close(task_table(stored[stored["clip_id"].isin([r.clip_id for r in records])]).loc[model, metric],
               out[metric], (metric, "aggregate"))
    elif task in report.tables and metric in catalog.table_metrics(task) + catalog.beyond_paper_metrics(task):
        # a column of the paper's table or of the one printed beside it
        _close(report.tables[task].loc[model, metric], out[metric], (metric, "report"))
    else:  # stored but not printed (DNSMOS SIG/BAK/P.808, boundary): the report's aggregation of the rows
        _close(task_table(stored).loc[model, metric], out[metric], (metric, "aggregate"))


def check_module_invariance(world: tuple[Path, Path, Any], metric: str) -> None:
    """(b) through the evaluate door: chunk size and input order (with ids) change no value."""
    release, _, _ = world
    family, name = REFERENCES[metric], module_of(metric)
    if not name:  # reference statistics: the scorer's chunk invariance is a family variant (no module: no door)
        return
    n = family.door_n(metric)
    predictions, references, _ = (x[:n] for x in door_inputs(release, family.task, SYSTEM[family.task]))
    base = door_compute(name, predictions, references)
    scale = max(1.0, abs(base[metric])) if math.isfinite(base[metric]) else 1.0
    if family.door_chunk:
        small = door_compute(name, predictions, references, chunk_frames=3)
        same(door_per_clip(small, metric), door_per_clip(base, metric), family.door_rel * 100,
             f"{metric} chunk_frames=3")
        same(small[metric], base[metric], family.door_rel * scale, f"{metric} chunk_frames=3 aggregate")
    if family.door_order is None or metric in family.door_order:
        backwards = door_compute(name, predictions[::-1], references[::-1])
        same(door_per_clip(backwards, metric)[::-1], door_per_clip(base, metric), 0.0, f"{metric} reversed")
        same(backwards[metric], base[metric], 1e-12 * scale, f"{metric} reversed aggregate")


def check_workers(world: tuple[Path, Path, Any], metric: str) -> None:
    """(b) ``hugvis evaluate --num-proc 2`` stores the rows the one-process run of the door world stored."""
    from hug_vis_dataset.scoring.runner import evaluate_submission

    release, results, _ = world
    if not REFERENCES[metric].door:  # no rows in the door world: family.door_test runs the workers
        return
    task = REFERENCES[metric].task
    system = SYSTEM[task]

    def run():
        out = results.parent / f"workers_{task}"
        folder = "reference" if task == "motion" else release / "simulated_systems" / (
            "matting" if task == "matting_boundary" else task) / system
        evaluate_submission(task, folder, system, release, out, num_proc=2, progress=False)
        return stored_rows(out, task, system)

    key = ["model", "clip_id", "metric"]
    two = memo(("workers", task), run)
    two, one = (r[r["metric"] == metric].sort_values(key).reset_index(drop=True)
                for r in (two, stored_rows(results, task, system)))
    assert len(one) == len(two) > 0, metric
    same(two[key + ["status"]].to_dict("list"), one[key + ["status"]].to_dict("list"), 0.0, f"{metric} rows")
    same(two["value"].tolist(), one["value"].tolist(), 0.0, f"{metric} values, 2 workers vs 1")


def check_pickle(world: tuple[Path, Path, Any], metric: str) -> None:
    """(c) the evaluate module (the scorer for reference statistics) survives pickling with the same values.

    A freshly loaded module is pickled (what a worker pool receives); evaluate keeps file locks on a
    module after its first ``compute``, so a used one does not pickle (evaluate's own behaviour).
    """
    import pickle

    release, _, _ = world
    family, name = REFERENCES[metric], module_of(metric)
    if not family.door:  # no module to pickle; the scorer is emotion_accuracy's, pickled there
        return
    task = family.task
    predictions, references, records = (x[:family.door_n(metric)] for x in door_inputs(release, task,
                                                                                        SYSTEM[task]))
    n = 1 if task == "voice_cloning" else 2  # a voice clip costs seconds
    if not name:
        from hug_vis_dataset.tasks import ModelCache, get_task

        scorer = get_task(task)
        clone = pickle.loads(pickle.dumps(scorer))
        for ref in references[:n]:
            a, _ = scorer.score_groups("reference", {"alpha": ref}, family.metrics, ModelCache("cpu"), {})
            b, _ = clone.score_groups("reference", {"alpha": ref}, family.metrics, ModelCache("cpu"), {})
            same(b.values, a.values, 0.0, f"{metric} pickled scorer")
            _close(b.values[metric], door_library(task, metric, ref, ref), (metric, "pickled scorer"))
        return

    def pickled_compute() -> dict:
        import evaluate

        clone = pickle.loads(pickle.dumps(evaluate.load(str(ROOT / "metrics" / name))))
        assert type(clone).__module__.split(".")[-1] == name, type(clone)
        return clone.compute(predictions=predictions[:n], references=references[:n])

    got = memo(("pickled", name), pickled_compute)
    # a clip's value does not depend on the other clips: the first n of the door's four
    same(door_per_clip(got, metric), door_per_clip(door_compute(name, predictions, references), metric)[:n],
         0.0, f"{metric} pickled module vs compute")
    for i in range(n):
        _close(door_per_clip(got, metric)[i], door_library(task, metric, predictions[i], references[i]),
               (metric, records[i].clip_id, "pickled module"))

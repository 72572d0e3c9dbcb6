"""Distill-MOS (beyond the paper): a current reference-free speech-quality predictor beside UTMOS and DNSMOS.

Stolz and Gerkmann's Distill-MOS (ICASSP 2025) is a small network distilled from XLS-R-based
quality models; the ``distillmos`` wheel ships its weights, so it runs offline like DNSMOS and
Resemblyzer. A clip is scored as the package scores a file (:func:`distill_mos_clip`), on the
mono samples of the voice scorer's one decode at the file's own rate.

Example:
    >>> distill_mos_segments(24000), distill_mos_segments(122880 + 20000)
    ([0], [0, 10000, 20000])
"""

from __future__ import annotations

import numpy as np

from .voice import SAMPLE_RATE

#: The package's segment (7.68 s at 16 kHz) and largest hop between segments (1 s).
SEGMENT = 122880
MAX_HOP = 16000


def distill_mos_segments(num_samples: int) -> list[int]:
    """Start samples of the segments ``distillmos``'s forward pass scores (``segmenting_in_forward``).

    A clip shorter than one segment is zero-padded to it (one segment); a longer one gets
    ``ceil(overlength / 16000) + 1`` segments spread evenly from its start to its end.
    """
    over = max(int(num_samples) - SEGMENT, 0)
    hops = int(np.ceil(over / MAX_HOP)) + 1
    return [int(c * over) for c in np.linspace(0, 1, hops)]


def resample_16k(audio: np.ndarray, sample_rate: int):
    """The clip as a float32 torch vector at 16 kHz: ``torchaudio.transforms.Resample(rate, 16000)``,
    the resampler of the ``distillmos`` README (16 kHz input is left as it is)."""
    import torch

    wave = torch.from_numpy(np.ascontiguousarray(audio, dtype=np.float32))
    if int(sample_rate) == SAMPLE_RATE:
        return wave
    import torchaudio

    return torchaudio.transforms.Resample(int(sample_rate), SAMPLE_RATE)(wave[None])[0]


def distill_mos_clip(model, audio: np.ndarray, sample_rate: int, batch: int = 8) -> float:
    """Distill-MOS of one clip: the package's own pipeline, ``batch`` segments per forward pass.

    As the ``distillmos`` README scores a file: audio at another rate is resampled to 16 kHz
    (:func:`resample_16k`); a clip shorter than 7.68 s is zero-padded to one segment, a longer
    one cut into evenly spread segments (:func:`distill_mos_segments`); the network scales each
    segment to peak 1 and predicts ``1 + 4 q``; the clip value is the mean over segments (float64;
    the segment batching changes it by float rounding only).

    Args:
        model: :func:`hug_vis_dataset.models.distill_mos.load_distill_mos` (built with
            ``segmenting_in_forward=False``: the segments are cut here, so memory is ``batch`` of them).
        audio: the clip's mono float32 samples at ``sample_rate`` (the voice scorer's one decode).
        sample_rate: their rate.
        batch: segments per forward pass.
    """
    import torch

    from ..models.device import check_batch_size, module_device

    batch = check_batch_size(batch)
    wave = resample_16k(audio, sample_rate)
    if wave.numel() < SEGMENT:
        wave = torch.nn.functional.pad(wave, (0, SEGMENT - wave.numel()))
    segments = [wave[s:s + SEGMENT] for s in distill_mos_segments(wave.numel())]
    device, total = module_device(model), 0.0
    with torch.no_grad():
        for start in range(0, len(segments), batch):
            total += float(model(torch.stack(segments[start:start + batch]).to(device)).double().sum())
    return total / len(segments)

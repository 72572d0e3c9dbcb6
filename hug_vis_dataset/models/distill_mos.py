"""Distill-MOS (ICASSP 2025): the ``distillmos`` package's speech-quality network with its shipped weights.

The network is the package's own ``ConvTransformerSQAModel`` (a complex-spectrogram CNN and a
transformer with attention pooling, distilled from XLS-R-based SQA models); its weights
``distill_mos_v7.pt`` ship inside the ``distillmos`` wheel and are resolved, hash-checked and
overridable through the weights registry (``distill_mos_v7``), so the metric runs offline. How a
clip is scored: :func:`hug_vis_dataset.metrics.distill_mos.distill_mos_clip`.
"""

from __future__ import annotations

WEIGHTS_NAME = "distill_mos_v7"


def load_distill_mos(device: str = "cpu"):
    """The package's ``ConvTransformerSQAModel`` in eval mode on ``device``, with the registry's weights.

    Built without the package's own loading (which prints, and reads a fixed path) and without its
    in-forward segmenting (:func:`~hug_vis_dataset.metrics.distill_mos.distill_mos_clip` cuts the same
    segments batch by batch), then given the checkpoint's ``model`` state as the package loads it
    (``weights_only=True``, strict).

    Raises:
        hug_vis_dataset.weights.WeightsMissingError: the ``distillmos`` package (and so its weights) is
            not installed and no override is set; the message names the file and the fix.
    """
    import torch

    from ..weights import resolve
    from .device import resolve_device

    path = resolve(WEIGHTS_NAME)
    from distillmos import ConvTransformerSQAModel

    model = ConvTransformerSQAModel(load_weights=False, segmenting_in_forward=False)
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True)["model"])
    return model.eval().to(resolve_device(device))

"""UTMOS22 strong learner (Saeki et al. 2022) as packaged by SpeechMOS, for the UTMOS column of Table 9.

Architecture (SpeechMOS ``speechmos/utmos22/strong/model.py``, phoneme encoder omitted there too):

* wav2vec 2.0 base (fairseq layout: 7-layer conv feature encoder with GroupNorm on the first
  layer, LayerNorm + 512 -> 768 projection, convolutional positional embedding with 128 taps in
  16 groups, 12 post-LN transformer layers) on 16 kHz audio, one 768-d frame per 20 ms;
* a fixed data-domain embedding (128) and judge embedding (128) appended to every frame;
* a bidirectional LSTM (hidden 512) and a projection Linear 1024 -> 2048 -> ReLU -> Linear 1;
* utterance score = 2 x (mean of the frame scores) + 3.

The wav2vec 2.0 part is ``transformers.Wav2Vec2Model`` built from a config (no download); its
layers compute the same functions as the fairseq modules SpeechMOS uses.
:func:`convert_official_state_dict` maps the official checkpoint's parameter names
(``utmos22_strong_step7459_v1.pt``, fairseq-style) onto it, key for key, with nothing left over.

The whole utterance goes through the network at once: the BLSTM and self-attention see the
entire clip, so cutting it into chunks would change the score. Memory therefore grows with clip
length (attention is quadratic), which is fine for the few-second clips of the benchmark.

Example:
    >>> cfg = UTMOSConfig.tiny()
    >>> model = UTMOS22Strong(cfg).eval()
    >>> import numpy as np
    >>> score = utmos_score(model, np.zeros(4000, np.float32))
    >>> isinstance(score, float) and bool(np.isfinite(score))
    True
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

UTMOS_SAMPLE_RATE = 16000
WEIGHTS_NAME = "utmos22_strong"
MIN_SAMPLES = 400  # receptive field of the conv feature encoder: shorter input gives no frame


@dataclass(frozen=True)
class UTMOSConfig:
    """Layer sizes; the defaults are the official checkpoint's (:meth:`tiny` is for tests)."""

    conv_dim: int = 512
    conv_kernel: tuple[int, ...] = (10, 3, 3, 3, 3, 2, 2)
    conv_stride: tuple[int, ...] = (5, 2, 2, 2, 2, 2, 2)
    hidden: int = 768
    layers: int = 12
    heads: int = 12
    ffn: int = 3072
    pos_conv_kernel: int = 128
    pos_conv_groups: int = 16
    domain_dim: int = 128
    judge_dim: int = 128
    rnn_hidden: int = 512
    proj_hidden: int = 2048

    @classmethod
    def tiny(cls) -> "UTMOSConfig":
        """A small network with the same structure, for fast tests."""
        return cls(conv_dim=32, hidden=48, layers=2, heads=4, ffn=96, pos_conv_kernel=16, pos_conv_groups=4,
                   domain_dim=8, judge_dim=8, rnn_hidden=16, proj_hidden=32)


def _wav2vec2_config(cfg: UTMOSConfig):
    from transformers import Wav2Vec2Config

    return Wav2Vec2Config(
        hidden_size=cfg.hidden,
        num_hidden_layers=cfg.layers,
        num_attention_heads=cfg.heads,
        intermediate_size=cfg.ffn,
        conv_dim=(cfg.conv_dim,) * len(cfg.conv_kernel),
        conv_kernel=cfg.conv_kernel,
        conv_stride=cfg.conv_stride,
        conv_bias=False,
        feat_extract_norm="group",  # GroupNorm on the first conv only (wav2vec 2.0 base)
        feat_extract_activation="gelu",
        hidden_act="gelu",
        do_stable_layer_norm=False,  # post-LN transformer, as fairseq's layer_norm_first=False
        num_conv_pos_embeddings=cfg.pos_conv_kernel,
        num_conv_pos_embedding_groups=cfg.pos_conv_groups,
        layer_norm_eps=1e-5,
        apply_spec_augment=False,
        layerdrop=0.0,
    )


def _build_module(cfg: UTMOSConfig):
    import torch
    from torch import nn
    from transformers import Wav2Vec2Model

    class _UTMOS22Strong(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.config = cfg
            self.wav2vec2 = Wav2Vec2Model(_wav2vec2_config(cfg))
            self.domain_emb = nn.Parameter(torch.zeros(1, cfg.domain_dim), requires_grad=False)
            self.judge_emb = nn.Parameter(torch.zeros(1, cfg.judge_dim), requires_grad=False)
            self.blstm = nn.LSTM(cfg.hidden + cfg.domain_dim + cfg.judge_dim, cfg.rnn_hidden,
                                 batch_first=True, bidirectional=True)
            self.projection = nn.Sequential(
                nn.Linear(2 * cfg.rnn_hidden, cfg.proj_hidden), nn.ReLU(), nn.Linear(cfg.proj_hidden, 1)
            )

        def forward(self, wave: "torch.Tensor") -> "torch.Tensor":
            """(batch, samples) 16 kHz -> (batch,) MOS."""
            frames = self.wav2vec2(wave).last_hidden_state
            batch, steps, _ = frames.shape
            condition = torch.cat([self.domain_emb, self.judge_emb], dim=1).unsqueeze(1).expand(batch, steps, -1)
            rnn_out = self.blstm(torch.cat([frames, condition], dim=2))[0]
            return self.projection(rnn_out).mean(dim=1).squeeze(1) * 2 + 3

    return _UTMOS22Strong()


def UTMOS22Strong(config: "UTMOSConfig | None" = None):  # noqa: N802 - reads as a class at call sites
    """A randomly initialised UTMOS22 strong network (load weights with :func:`load_state_dict_official`)."""
    return _build_module(config or UTMOSConfig())


# ----------------------------------------------------------------------------- checkpoint keys
_LAYER_RENAMES = (
    ("self_attn.q_proj.", "attention.q_proj."),
    ("self_attn.k_proj.", "attention.k_proj."),
    ("self_attn.v_proj.", "attention.v_proj."),
    ("self_attn.out_proj.", "attention.out_proj."),
    ("self_attn_layer_norm.", "layer_norm."),
    ("fc1.", "feed_forward.intermediate_dense."),
    ("fc2.", "feed_forward.output_dense."),
    ("final_layer_norm.", "final_layer_norm."),
)


def official_key_to_ours(key: str, weight_norm_names: "tuple[str, str]") -> str:
    """Map one official (fairseq-style) checkpoint key to this module's state-dict key.

    Args:
        key: e.g. ``wav2vec2.encoder.layers.3.self_attn.k_proj.weight``.
        weight_norm_names: how this module names the positional conv's weight-norm magnitude and
            direction (``parametrizations.weight.original0/1`` on current torch).

    Example:
        >>> names = ("parametrizations.weight.original0", "parametrizations.weight.original1")
        >>> official_key_to_ours("wav2vec2.encoder.layers.3.fc1.weight", names)
        'wav2vec2.encoder.layers.3.feed_forward.intermediate_dense.weight'
        >>> official_key_to_ours("wav2vec2.encoder.pos_conv.0.weight_g", names)
        'wav2vec2.encoder.pos_conv_embed.conv.parametrizations.weight.original0'
    """
    if not key.startswith("wav2vec2."):
        return key  # domain_emb, judge_emb, blstm.*, projection.* keep their names
    rest = key[len("wav2vec2."):]
    match = re.fullmatch(r"feature_extractor\.conv_layers\.(\d+)\.(\d+)\.(weight|bias)", rest, re.ASCII)
    if match:
        layer, sub, kind = match.groups()
        part = {"0": "conv", "2": "layer_norm"}.get(sub)
        if part is None:
            raise KeyError(f"unexpected feature-extractor key {key}")
        return f"wav2vec2.feature_extractor.conv_layers.{layer}.{part}.{kind}"
    if rest.startswith("layer_norm."):
        return "wav2vec2.feature_projection." + rest
    if rest.startswith("post_extract_proj."):
        return "wav2vec2.feature_projection.projection." + rest[len("post_extract_proj."):]
    if rest == "mask_emb":
        return "wav2vec2.masked_spec_embed"
    if rest.startswith("encoder.pos_conv.0."):
        leaf = rest[len("encoder.pos_conv.0."):]
        leaf = {
            "weight_g": weight_norm_names[0],
            "weight_v": weight_norm_names[1],
            "parametrizations.weight.original0": weight_norm_names[0],
            "parametrizations.weight.original1": weight_norm_names[1],
        }.get(leaf, leaf)
        return "wav2vec2.encoder.pos_conv_embed.conv." + leaf
    match = re.fullmatch(r"encoder\.layers\.(\d+)\.(.+)", rest, re.ASCII)
    if match:
        layer, leaf = match.groups()
        for old, new in _LAYER_RENAMES:
            if leaf.startswith(old):
                return f"wav2vec2.encoder.layers.{layer}.{new}{leaf[len(old):]}"
        raise KeyError(f"unexpected transformer-layer key {key}")
    if rest.startswith("encoder.layer_norm."):
        return "wav2vec2." + rest
    raise KeyError(f"unexpected wav2vec2 key {key}")


def _weight_norm_names(model) -> "tuple[str, str]":
    keys = [k for k in model.state_dict() if k.startswith("wav2vec2.encoder.pos_conv_embed.conv.")]
    if any(k.endswith("weight_g") for k in keys):
        return "weight_g", "weight_v"
    return "parametrizations.weight.original0", "parametrizations.weight.original1"


def convert_official_state_dict(state: Mapping[str, "object"], model) -> dict:
    """Rename an official-layout state dict for ``model``; every key must map and match in shape.

    Raises:
        ValueError: listing missing, unexpected or mis-shaped parameters (a wrong or corrupt file).
    """
    names = _weight_norm_names(model)
    ours = model.state_dict()
    converted: dict = {}
    unexpected: list[str] = []
    for key, value in state.items():
        try:
            new_key = official_key_to_ours(key, names)
        except KeyError:
            unexpected.append(key)
            continue
        if new_key not in ours:
            unexpected.append(key)
            continue
        converted[new_key] = value
    missing = sorted(set(ours) - set(converted))
    shapes = [
        f"{k}: file {tuple(v.shape)} vs model {tuple(ours[k].shape)}"
        for k, v in converted.items()
        if tuple(v.shape) != tuple(ours[k].shape)
    ]
    if missing or unexpected or shapes:
        raise ValueError(
            "checkpoint does not match the UTMOS22 strong layout: "
            f"model parameters missing from the file {missing[:8]}{'...' if len(missing) > 8 else ''}, "
            f"unexpected file keys {unexpected[:8]}{'...' if len(unexpected) > 8 else ''}, shape mismatches {shapes[:4]}"
        )
    return converted


def load_state_dict_official(model, path: "str | Path"):
    """Load an official-layout checkpoint file into ``model`` (strict); returns the model in eval mode."""
    import torch

    state = torch.load(str(path), map_location="cpu", weights_only=True)
    if isinstance(state, dict) and isinstance(state.get("state_dict"), dict):
        state = state["state_dict"]
    model.load_state_dict(convert_official_state_dict(state, model), strict=True)
    return model.eval()


@functools.lru_cache(maxsize=2)
def _load_cached(path: str, device: str = "cpu"):
    return load_state_dict_official(UTMOS22Strong(), path).to(device)


def load_utmos22_strong(weights: "str | Path | None" = None, device: str = "cpu"):
    """The pretrained UTMOS22 strong model, resolved through the weights registry, cached per process.

    Args:
        weights: explicit checkpoint path (else ``HUGVIS_WEIGHT_UTMOS22_STRONG``,
            ``$HUGVIS_WEIGHTS_DIR`` or the download cache).
        device: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``
            (:func:`hug_vis_dataset.models.device.resolve_device`).

    Raises:
        hug_vis_dataset.weights.WeightsMissingError: the checkpoint is not available locally;
            the message says how to get it (``hugvis weights download utmos22_strong``).
    """
    from ..weights import resolve
    from .device import resolve_device

    return _load_cached(str(resolve(WEIGHTS_NAME, path=weights)), resolve_device(device))


def _check_utterance(audio: np.ndarray) -> np.ndarray:
    audio = np.asarray(audio, dtype=np.float32)
    if audio.ndim != 1:
        raise ValueError(f"UTMOS takes mono samples (n,), got shape {audio.shape}")
    if len(audio) < MIN_SAMPLES:
        raise ValueError(f"audio has {len(audio)} samples; UTMOS needs at least {MIN_SAMPLES} (25 ms at 16 kHz)")
    return audio


def utmos_score(model, audio: np.ndarray) -> float:
    """UTMOS of 16 kHz mono float samples with a loaded model (whole utterance, no chunking).

    The utterance goes to the device of ``model``.

    Raises:
        ValueError: fewer than 400 samples (25 ms), too short for one wav2vec 2.0 frame.
    """
    return utmos_scores(model, [audio], batch_size=1)[0]


def utmos_scores(model, audios: "Sequence[np.ndarray]", batch_size: int = 16) -> list[float]:
    """UTMOS of several 16 kHz utterances, in input order; equal-length ones share a forward pass.

    Only utterances of exactly the same length are batched (up to ``batch_size`` at a time):
    padding would change the score, because the first convolution's GroupNorm, the
    self-attention and the BLSTM all see the whole (padded) sequence. Each score therefore does
    not depend on ``batch_size`` beyond float rounding.

    Example:
        >>> model = UTMOS22Strong(UTMOSConfig.tiny()).eval()
        >>> clips = [np.zeros(4000, np.float32), np.ones(4000, np.float32) * 0.1, np.zeros(3000, np.float32)]
        >>> one, many = utmos_scores(model, clips, 1), utmos_scores(model, clips, 16)
        >>> bool(np.allclose(one, many, atol=1e-5))
        True
    """
    import torch

    from .device import check_batch_size, module_device

    batch_size = check_batch_size(batch_size)
    clips = [_check_utterance(a) for a in audios]
    device = module_device(model)
    by_length: dict[int, list[int]] = {}
    for index, clip in enumerate(clips):
        by_length.setdefault(len(clip), []).append(index)
    scores = [0.0] * len(clips)
    with torch.inference_mode():
        for indices in by_length.values():
            for start in range(0, len(indices), batch_size):
                chunk = indices[start:start + batch_size]
                wave = torch.from_numpy(np.stack([clips[i] for i in chunk])).to(device)
                for i, value in zip(chunk, model(wave).double().cpu().tolist()):
                    scores[i] = float(value)
    return scores

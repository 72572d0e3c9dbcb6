"""UTMOS22 strong: official key layout, forward pass against a functional re-derivation, weights errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from hug_vis_dataset.models import utmos as U


def official_shapes(cfg: U.UTMOSConfig) -> dict[str, tuple[int, ...]]:
    """Parameter names/shapes of SpeechMOS's UTMOS22Strong (fairseq_alt Wav2Vec2Model), written out by hand."""
    shapes: dict[str, tuple[int, ...]] = {}
    c, h = cfg.conv_dim, cfg.hidden
    in_dim = 1
    for i, k in enumerate(cfg.conv_kernel):
        shapes[f"wav2vec2.feature_extractor.conv_layers.{i}.0.weight"] = (c, in_dim, k)
        in_dim = c
    shapes["wav2vec2.feature_extractor.conv_layers.0.2.weight"] = (c,)
    shapes["wav2vec2.feature_extractor.conv_layers.0.2.bias"] = (c,)
    shapes["wav2vec2.layer_norm.weight"] = (c,)
    shapes["wav2vec2.layer_norm.bias"] = (c,)
    shapes["wav2vec2.post_extract_proj.weight"] = (h, c)
    shapes["wav2vec2.post_extract_proj.bias"] = (h,)
    shapes["wav2vec2.mask_emb"] = (h,)
    shapes["wav2vec2.encoder.pos_conv.0.bias"] = (h,)
    shapes["wav2vec2.encoder.pos_conv.0.weight_g"] = (1, 1, cfg.pos_conv_kernel)
    shapes["wav2vec2.encoder.pos_conv.0.weight_v"] = (h, h // cfg.pos_conv_groups, cfg.pos_conv_kernel)
    shapes["wav2vec2.encoder.layer_norm.weight"] = (h,)
    shapes["wav2vec2.encoder.layer_norm.bias"] = (h,)
    for i in range(cfg.layers):
        p = f"wav2vec2.encoder.layers.{i}."
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            shapes[p + f"self_attn.{proj}.weight"] = (h, h)
            shapes[p + f"self_attn.{proj}.bias"] = (h,)
        shapes[p + "fc1.weight"] = (cfg.ffn, h)
        shapes[p + "fc1.bias"] = (cfg.ffn,)
        shapes[p + "fc2.weight"] = (h, cfg.ffn)
        shapes[p + "fc2.bias"] = (h,)
        for norm in ("self_attn_layer_norm", "final_layer_norm"):
            shapes[p + f"{norm}.weight"] = (h,)
            shapes[p + f"{norm}.bias"] = (h,)
    shapes["domain_emb"] = (1, cfg.domain_dim)
    shapes["judge_emb"] = (1, cfg.judge_dim)
    rnn_in, r = h + cfg.domain_dim + cfg.judge_dim, cfg.rnn_hidden
    for suffix in ("", "_reverse"):
        shapes[f"blstm.weight_ih_l0{suffix}"] = (4 * r, rnn_in)
        shapes[f"blstm.weight_hh_l0{suffix}"] = (4 * r, r)
        shapes[f"blstm.bias_ih_l0{suffix}"] = (4 * r,)
        shapes[f"blstm.bias_hh_l0{suffix}"] = (4 * r,)
    shapes["projection.0.weight"] = (cfg.proj_hidden, 2 * r)
    shapes["projection.0.bias"] = (cfg.proj_hidden,)
    shapes["projection.2.weight"] = (1, cfg.proj_hidden)
    shapes["projection.2.bias"] = (1,)
    return shapes


def random_official_state(cfg: U.UTMOSConfig, seed: int = 0) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    state = {}
    for key, shape in official_shapes(cfg).items():
        scale = 1.0 if ("norm" in key or key.endswith(".2.weight") and "conv_layers" in key) else 0.2
        value = torch.randn(shape, generator=gen) * scale
        if key.endswith("weight") and ("layer_norm" in key or "conv_layers.0.2" in key):
            value = 1.0 + 0.1 * value
        state[key] = value
    return state


def reference_forward(state: dict[str, torch.Tensor], cfg: U.UTMOSConfig, wave: torch.Tensor) -> float:
    """The SpeechMOS/fairseq computation re-derived with torch.nn.functional from the official keys."""
    s = state
    x = wave[None, None]
    for i, (k, stride) in enumerate(zip(cfg.conv_kernel, cfg.conv_stride)):
        x = F.conv1d(x, s[f"wav2vec2.feature_extractor.conv_layers.{i}.0.weight"], stride=stride)
        if i == 0:
            x = F.group_norm(x, cfg.conv_dim, s["wav2vec2.feature_extractor.conv_layers.0.2.weight"],
                             s["wav2vec2.feature_extractor.conv_layers.0.2.bias"])
        x = F.gelu(x)
    x = x.transpose(1, 2)
    x = F.layer_norm(x, (cfg.conv_dim,), s["wav2vec2.layer_norm.weight"], s["wav2vec2.layer_norm.bias"])
    x = F.linear(x, s["wav2vec2.post_extract_proj.weight"], s["wav2vec2.post_extract_proj.bias"])
    # weight norm with dim=2: the direction is normalised over every axis except the kernel axis
    g, v = s["wav2vec2.encoder.pos_conv.0.weight_g"], s["wav2vec2.encoder.pos_conv.0.weight_v"]
    weight = v * (g / v.pow(2).sum(dim=(0, 1), keepdim=True).sqrt())
    pos = F.conv1d(x.transpose(1, 2), weight, s["wav2vec2.encoder.pos_conv.0.bias"],
                   padding=cfg.pos_conv_kernel // 2, groups=cfg.pos_conv_groups)[:, :, :-1]
    x = x + F.gelu(pos).transpose(1, 2)
    x = F.layer_norm(x, (cfg.hidden,), s["wav2vec2.encoder.layer_norm.weight"], s["wav2vec2.encoder.layer_norm.bias"])
    x = x.transpose(0, 1)  # (T, B, E)
    for i in range(cfg.layers):
        p = f"wav2vec2.encoder.layers.{i}."
        attn = F.multi_head_attention_forward(
            x, x, x, cfg.hidden, cfg.heads, torch.empty(0),
            torch.cat([s[p + "self_attn.q_proj.bias"], s[p + "self_attn.k_proj.bias"], s[p + "self_attn.v_proj.bias"]]),
            None, None, False, 0.0, s[p + "self_attn.out_proj.weight"], s[p + "self_attn.out_proj.bias"],
            training=False, need_weights=False, use_separate_proj_weight=True,
            q_proj_weight=s[p + "self_attn.q_proj.weight"], k_proj_weight=s[p + "self_attn.k_proj.weight"],
            v_proj_weight=s[p + "self_attn.v_proj.weight"],
        )[0]
        x = F.layer_norm(x + attn, (cfg.hidden,), s[p + "self_attn_layer_norm.weight"], s[p + "self_attn_layer_norm.bias"])
        ff = F.linear(F.gelu(F.linear(x, s[p + "fc1.weight"], s[p + "fc1.bias"])), s[p + "fc2.weight"], s[p + "fc2.bias"])
        x = F.layer_norm(x + ff, (cfg.hidden,), s[p + "final_layer_norm.weight"], s[p + "final_layer_norm.bias"])
    x = x.transpose(0, 1)
    steps = x.shape[1]
    cat = torch.cat([x, s["domain_emb"].expand(steps, -1)[None], s["judge_emb"].expand(steps, -1)[None]], dim=2)
    lstm = torch.nn.LSTM(cat.shape[2], cfg.rnn_hidden, batch_first=True, bidirectional=True)
    lstm.load_state_dict({k[len("blstm."):]: v for k, v in s.items() if k.startswith("blstm.")})
    out = lstm(cat)[0]
    frame = F.linear(F.relu(F.linear(out, s["projection.0.weight"], s["projection.0.bias"])),
                     s["projection.2.weight"], s["projection.2.bias"])
    return float(frame.mean() * 2 + 3)


def test_official_layout_loads_and_matches_reference_forward(tmp_path):
    cfg = U.UTMOSConfig.tiny()
    state = random_official_state(cfg, seed=1)
    path = tmp_path / "utmos_tiny_official.pt"
    torch.save(state, path)
    model = U.load_state_dict_official(U.UTMOS22Strong(cfg), path)
    rng = np.random.default_rng(0)
    # 5000 samples -> an odd frame count (15), where fairseq pads to a multiple of 2 with a key mask.
    for n in (5000, 8000, 400):
        audio = (0.3 * rng.standard_normal(n)).astype(np.float32)
        with torch.no_grad():
            expected = reference_forward(state, cfg, torch.from_numpy(audio))
        got = U.utmos_score(model, audio)
        assert got == pytest.approx(expected, abs=1e-4), n
        assert np.isfinite(got)


def test_every_official_key_is_mapped_and_errors_are_clear(tmp_path):
    cfg = U.UTMOSConfig.tiny()
    state = random_official_state(cfg)
    model = U.UTMOS22Strong(cfg)
    converted = U.convert_official_state_dict(state, model)
    assert set(converted) == set(model.state_dict())
    broken = dict(state)
    del broken["wav2vec2.encoder.layers.1.fc2.bias"]
    broken["wav2vec2.encoder.extra"] = torch.zeros(1)
    with pytest.raises(ValueError, match="missing .*layers.1.feed_forward.output_dense.bias.*unexpected .*encoder.extra"):
        U.convert_official_state_dict(broken, model)
    wrong = dict(state)
    wrong["projection.0.bias"] = torch.zeros(3)
    with pytest.raises(ValueError, match="shape mismatches"):
        U.convert_official_state_dict(wrong, model)


def test_state_dict_wrapped_in_state_dict_key(tmp_path):
    cfg = U.UTMOSConfig.tiny()
    state = random_official_state(cfg, seed=2)
    torch.save({"state_dict": state}, tmp_path / "wrapped.pt")
    model = U.load_state_dict_official(U.UTMOS22Strong(cfg), tmp_path / "wrapped.pt")
    torch.testing.assert_close(model.judge_emb.detach(), state["judge_emb"])


@pytest.mark.slow
def test_full_size_official_checkpoint_through_weights_layer(tmp_path, monkeypatch):
    cfg = U.UTMOSConfig()
    shapes = official_shapes(cfg)
    model = U.UTMOS22Strong(cfg)
    assert set(U.convert_official_state_dict({k: torch.zeros(v) for k, v in shapes.items()}, model)) == set(
        model.state_dict()
    )
    state = random_official_state(cfg, seed=3)
    path = tmp_path / "utmos22_strong_step7459_v1.pt"
    torch.save(state, path)
    del state
    monkeypatch.setenv("HUGVIS_WEIGHT_UTMOS22_STRONG", str(path))
    U._load_cached.cache_clear()
    from hug_vis_dataset.metrics.voice import utmos

    t = np.arange(16000) / 16000
    score = utmos(0.3 * np.sin(2 * np.pi * 200 * t), 16000)
    assert np.isfinite(score)
    U._load_cached.cache_clear()


def test_missing_weights_raise_clear_error(tmp_path, monkeypatch):
    from hug_vis_dataset.metrics.voice import utmos
    from hug_vis_dataset.weights import WeightsMissingError

    monkeypatch.delenv("HUGVIS_WEIGHT_UTMOS22_STRONG", raising=False)
    monkeypatch.delenv("HUGVIS_WEIGHTS_DIR", raising=False)
    monkeypatch.setenv("HUGVIS_CACHE_DIR", str(tmp_path / "empty-cache"))
    with pytest.raises(WeightsMissingError, match="utmos22_strong_step7459_v1.pt") as info:
        utmos(np.zeros(16000, np.float32), 16000)
    assert "hugvis weights download utmos22_strong" in str(info.value)
    assert "HUGVIS_WEIGHT_UTMOS22_STRONG" in str(info.value)


def test_too_short_audio_raises():
    model = U.UTMOS22Strong(U.UTMOSConfig.tiny()).eval()
    with pytest.raises(ValueError, match="at least 400"):
        U.utmos_score(model, np.zeros(399, np.float32))
    with pytest.raises(ValueError, match="mono"):
        U.utmos_score(model, np.zeros((400, 2), np.float32))

"""A tiny randomly initialised Whisper of the real architecture, saved as the four files the loader reads.

``transformers``' ``WhisperForConditionalGeneration`` with small widths (the real one: d_model 1280,
32 + 32 layers, 128 mel bands, 51,866 tokens), a byte-level BPE tokenizer whose vocabulary holds the
256 byte symbols, Whisper's special tokens and whole Chinese characters, and a decoding configuration
with Whisper's keys (language and task tokens, suppressed and begin-suppressed tokens). The byte
symbols are suppressed, so every transcript is a string of whole characters (random, but text).
"""

from __future__ import annotations

import json
from pathlib import Path

#: Whisper's special tokens in its order (the language tokens cut to two).
SPECIALS = ("<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|zh|>", "<|translate|>", "<|transcribe|>",
            "<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>")
#: The characters the tiny model can say (traditional forms among them: normalisation maps them).
CHARACTERS = "今天气很好我们去公园吧你说话語音識別測試，。！"


def build(folder: "str | Path", seed: int = 0, max_tokens: int = 24, stop_after: str = "今") -> Path:
    """Write ``model.safetensors``, ``config.json``, ``generation_config.json`` and ``tokenizer.json``."""
    import torch
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers
    from transformers import GenerationConfig, WhisperConfig, WhisperForConditionalGeneration

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    byte_symbols = sorted(pre_tokenizers.ByteLevel.alphabet())
    encode = {b: s for b, s in zip(range(256), _byte_order())}
    vocab = {s: i for i, s in enumerate(byte_symbols)}
    for char in CHARACTERS:
        vocab["".join(encode[b] for b in char.encode("utf-8"))] = len(vocab)
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIALS])
    tokenizer.save(str(folder / "tokenizer.json"))
    ids = {s: tokenizer.token_to_id(s) for s in SPECIALS}
    eos, start = ids["<|endoftext|>"], ids["<|startoftranscript|>"]
    config = WhisperConfig(vocab_size=tokenizer.get_vocab_size(), num_mel_bins=128, d_model=32, encoder_layers=2,
                           decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2,
                           encoder_ffn_dim=64, decoder_ffn_dim=64, max_source_positions=1500,
                           max_target_positions=max_tokens + 8, pad_token_id=eos, bos_token_id=eos,
                           eos_token_id=eos, decoder_start_token_id=start, init_std=0.4)
    torch.manual_seed(seed)
    model = WhisperForConditionalGeneration(config).eval()
    with torch.no_grad():  # end-of-text wins where the model would say ``stop_after`` (rows tied to the output)
        rows = model.model.decoder.embed_tokens.weight
        rows[eos] = 1.05 * rows[vocab["".join(encode[b] for b in stop_after.encode("utf-8"))]]
    model.generation_config = GenerationConfig(
        decoder_start_token_id=start, eos_token_id=eos, pad_token_id=eos, bos_token_id=eos,
        max_length=max_tokens + 4, is_multilingual=True, no_timestamps_token_id=ids["<|notimestamps|>"],
        lang_to_id={"<|en|>": ids["<|en|>"], "<|zh|>": ids["<|zh|>"]},
        task_to_id={"translate": ids["<|translate|>"], "transcribe": ids["<|transcribe|>"]},
        suppress_tokens=list(range(256)) + [i for s, i in ids.items() if s != "<|endoftext|>"],
        begin_suppress_tokens=[eos])
    model.save_pretrained(folder)
    return folder


def _byte_order() -> list[str]:
    """GPT-2's byte -> printable symbol table (what ``ByteLevel`` uses), in byte order."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    symbols, extra = {}, 0
    for b in range(256):
        if b in keep:
            symbols[b] = chr(b)
        else:
            symbols[b] = chr(256 + extra)
            extra += 1
    return [symbols[b] for b in range(256)]


def special_ids(folder: "str | Path") -> dict[str, int]:
    data = json.loads((Path(folder) / "tokenizer.json").read_text(encoding="utf-8"))
    return {t["content"]: t["id"] for t in data["added_tokens"]}

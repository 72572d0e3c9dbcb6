"""CER (beyond the paper): Seed-TTS-eval normalisation and character edits against jiwer on hand-made Chinese
strings, the corpus-level aggregate, the Whisper path with a tiny randomly initialised model of the real
architecture (an independent greedy decode, batch and device invariance, the registry's loading and its
missing-file error), and one value through every door (module, ``hugvis evaluate``, the Space's upload
scoring, the report), the Real-audio row included."""

from __future__ import annotations

import json
import math
import random
import unicodedata
import zipfile
from pathlib import Path

import jiwer
import numpy as np
import pandas as pd
import pytest
import soundfile as sf

import tiny_whisper

from hug_vis_dataset import catalog, weights
from hug_vis_dataset.metrics.cer import (TargetTextError, cer_parts, cer_values, edit_distance, normalize_text,
                                         to_halfwidth, to_simplified)
from hug_vis_dataset.models.whisper import WEIGHT_FILES, WhisperASR, audio_windows, load_whisper_large_v3

# ----------------------------------------------------------------------------- normalisation and edits
# (target text, transcript, normalised target, normalised transcript, edits worked by hand)
HAND = [
    ("今天天气很好。", "今天天气很好", "今天天气很好", "今天天气很好", 0),
    ("今天天氣很好！", "今天天气很好", "今天天气很好", "今天天气很好", 0),  # traditional 氣, full-width ！
    ("ＡＩ語音，測試。", "AI语音测试", "AI语音测试", "AI语音测试", 0),  # full-width letters, script, punctuation
    ("你好　世界 ", "你 好世界", "你好世界", "你好世界", 0),  # ideographic and ASCII spaces
    ("我们去公园吧", "我们去公圆吧吧", "我们去公园吧", "我们去公圆吧吧", 2),  # one substitution, one insertion
    ("我们去公园吧", "我们公园", "我们去公园吧", "我们公园", 2),  # two deletions
    ("“你好”，她说：《测试》……", "你好，他說", "你好她说测试", "你好他说", 3),  # quotes, colon, book title marks
    ("Hello 世界", "hello世界!", "Hello世界", "hello世界", 1),  # case kept (Seed-TTS-eval's Mandarin path)
    ("价格是$5~10元", "价格是5到10元", "价格是510元", "价格是5到10元", 1),  # ASCII symbols removed
    ("软件", "軟體", "软件", "软件", 0),  # zhconv's zh-cn wording, as Seed-TTS-eval converts
]


@pytest.mark.parametrize("target,transcript,norm_target,norm_transcript,edits", HAND)
def test_hand_made_strings(target, transcript, norm_target, norm_transcript, edits):
    assert normalize_text(target) == norm_target and normalize_text(transcript) == norm_transcript
    assert cer_parts(target, transcript) == (edits, len(norm_target))
    # jiwer: character-level alignment of the normalised strings (substitutions + deletions + insertions)
    out = jiwer.process_characters(norm_target, norm_transcript)
    assert out.substitutions + out.deletions + out.insertions == edits
    # and Seed-TTS-eval's own way: characters joined by spaces, jiwer's word error counts
    words = jiwer.process_words(" ".join(norm_target), " ".join(norm_transcript) or "")
    assert words.substitutions + words.deletions + words.insertions == edits
    assert cer_values(target, transcript)["cer"] == edits / len(norm_target)


def test_edit_distance_equals_jiwer_on_random_chinese_strings():
    rng = random.Random(0)
    alphabet = "今天气很好我们去公园吧你说话语音识别测试"
    for _ in range(300):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14)))
        b = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        if b:
            out = jiwer.process_characters(a, b)
            assert edit_distance(a, b) == out.substitutions + out.deletions + out.insertions, (a, b)
        else:
            assert edit_distance(a, b) == len(a)
        assert edit_distance(a, b) == edit_distance(b, a)  # the distance is symmetric


def test_each_normalisation_rule_on_its_whole_range():
    # full-width -> half-width equals NFKC on the full-width ASCII block (NFKC does more elsewhere)
    block = "".join(chr(c) for c in range(0xFF01, 0xFF5F))
    assert to_halfwidth(block) == unicodedata.normalize("NFKC", block)
    assert to_halfwidth("\u3000") == " "
    # every Unicode punctuation character of the BMP is removed, letters and CJK are kept
    punctuation = [chr(c) for c in range(0x10000) if unicodedata.category(chr(c)).startswith("P")]
    assert normalize_text("".join(punctuation)) == ""
    assert normalize_text("abcXYZ019一二三") == "abcXYZ019一二三"
    assert [to_simplified(t) for t in ("語音", "識別", "測試", "後來")] == ["语音", "识别", "测试", "后来"]


def test_an_empty_target_is_undefined_not_zero():
    with pytest.raises(TargetTextError, match="no character left after normalisation"):
        cer_parts("，。！？ ", "你好")
    assert cer_parts("你好", "") == (2, 2)  # an empty transcript: every character deleted


# ----------------------------------------------------------------------------- the corpus aggregate
def _clip_rows(model: str, clips: dict, status: str = "ok") -> list[dict]:
    rows = []
    for clip, (edits, chars) in clips.items():
        for metric, value in (("cer", edits / chars), ("cer_edits", float(edits)), ("cer_ref_chars", float(chars))):
            rows.append({"model": model, "task": "voice_cloning", "clip_id": clip, "metric": metric,
                         "value": value, "status": status})
    return rows


def test_table_value_is_total_edits_over_total_characters():
    from hug_vis_dataset.scoring.aggregate import task_table

    ids = [f"actor_000{a}_sad_action_01_script_00{s}" for a in (1, 2) for s in (1, 2)]
    clips = dict(zip(ids, [(1, 10), (0, 30), (6, 12), (2, 8)]))
    rows = _clip_rows("m", clips) + _clip_rows("m", {"actor_0003_sad_action_01_script_001": (9, 9)}, "failed")
    frame = pd.DataFrame(rows)
    table = task_table(frame, metrics=("cer", "cer_edits"))
    assert table.loc["m", "cer"] == pytest.approx(100 * 9 / 60)  # paper units: %, not the clip mean 20.0
    assert table.loc["m", "cer_edits"] == pytest.approx(9 / 4)  # the integers themselves: clip means
    assert table.loc["m", "n_ok"] == 4 and table.loc["m", "n_failed"] == 1
    shuffled = frame.sample(frac=1.0, random_state=3)
    assert task_table(shuffled, metrics=("cer",)).loc["m", "cer"] == table.loc["m", "cer"]
    # a clip whose numerator row is missing leaves the ratio altogether (never half a clip)
    partial = frame[~((frame["clip_id"] == ids[0]) & (frame["metric"] == "cer_edits"))]
    assert task_table(partial, metrics=("cer",)).loc["m", "cer"] == pytest.approx(100 * 8 / 50)


def test_catalog_declares_the_ratio_and_keeps_the_rows_beside_the_paper():
    spec = catalog.spec("cer")
    assert spec.protocol == catalog.RATIO and spec.ratio_of == ("cer_edits", "cer_ref_chars")
    assert spec.beyond_paper and not spec.paper_table and spec.reference_kind == "text"
    assert "cer" not in catalog.table_metrics("voice_cloning")
    assert catalog.beyond_paper_metrics("voice_cloning") == ("cer", "distill_mos")
    assert {catalog.spec(m).implementation for m in ("cer", "cer_edits", "cer_ref_chars")} == {spec.implementation}
    assert set(catalog.weights_of(["cer"])) == set(WEIGHT_FILES.values())
    for name in WEIGHT_FILES.values():
        w = weights.get_spec(name)
        assert (w.repo_id, w.revision, len(w.sha256 or "")) == ("openai/whisper-large-v3",
                                                                 "06f233fe06e710322aca913c1bc4249a0d71fce1", 64)


# ----------------------------------------------------------------------------- the Whisper path
@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    return tiny_whisper.build(tmp_path_factory.mktemp("tiny_whisper"))


@pytest.fixture(scope="module")
def asr(tiny) -> WhisperASR:
    return WhisperASR.from_folder(tiny)


def greedy_transcript(folder: Path, audio: np.ndarray) -> str:
    """Whisper's decoding re-derived: encoder once, then argmax token by token after the forced prompt
    <|startoftranscript|><|zh|><|transcribe|><|notimestamps|>, with generation_config.json's suppressed
    tokens (and end-of-text at the first step), until end-of-text or the length limit; text by tokenizers."""
    import torch
    from tokenizers import Tokenizer
    from transformers import WhisperFeatureExtractor, WhisperForConditionalGeneration

    model = WhisperForConditionalGeneration.from_pretrained(folder).eval()
    config = json.loads((folder / "generation_config.json").read_text())
    ids = tiny_whisper.special_ids(folder)
    prompt = [ids["<|startoftranscript|>"], config["lang_to_id"]["<|zh|>"], config["task_to_id"]["transcribe"],
              config["no_timestamps_token_id"]]
    limit = min(config["max_length"] + len(prompt), model.config.max_target_positions)
    features = WhisperFeatureExtractor(feature_size=128)(audio, sampling_rate=16000, return_tensors="pt").input_features
    tokens = list(prompt)
    with torch.no_grad():
        encoded = model.model.encoder(features).last_hidden_state
        while len(tokens) < limit:
            logits = model(encoder_outputs=(encoded,), decoder_input_ids=torch.tensor([tokens])).logits[0, -1].clone()
            logits[config["suppress_tokens"]] = -math.inf
            if len(tokens) == len(prompt):
                logits[config["begin_suppress_tokens"]] = -math.inf
            token = int(torch.argmax(logits))
            if token == config["eos_token_id"]:
                break
            tokens.append(token)
    return Tokenizer.from_file(str(folder / "tokenizer.json")).decode(tokens[len(prompt):], skip_special_tokens=True)


def _noise(seconds: float, seed: int) -> np.ndarray:
    return (0.1 * np.random.default_rng(seed).standard_normal(int(16000 * seconds))).astype(np.float32)


CLIPS = [(0.6, 1), (1.0, 2), (2.5, 3), (4.0, 4), (7.0, 5)]


def test_transcripts_equal_an_independent_greedy_decode(tiny, asr):
    said = [asr.transcribe(_noise(s, seed)) for s, seed in CLIPS]
    assert said == [greedy_transcript(tiny, _noise(s, seed)) for s, seed in CLIPS]
    assert len(set(said)) >= 3 and all(set(t) <= set(tiny_whisper.CHARACTERS) for t in said)  # varied text
    assert min(map(len, said)) < max(map(len, said))  # some end at end-of-text, some at the length limit


def test_batch_size_and_windows_change_no_transcript(asr):
    clips = [_noise(s, seed) for s, seed in CLIPS]
    one = asr.transcribe_windows(clips, batch=1)
    for batch in (2, 3, 5):
        assert asr.transcribe_windows(clips, batch=batch) == one
    long = np.concatenate([_noise(30, 7), _noise(30, 8), _noise(5, 9)])  # three windows
    assert [len(w) for w in audio_windows(long)] == [480000, 480000, 80000]
    joined = asr.transcribe(long, batch=1)
    assert joined == "".join(asr.transcribe_windows(audio_windows(long), batch=1))
    assert [asr.transcribe(long, batch=b) for b in (2, 3)] == [joined, joined]


def test_device_choice_changes_no_transcript(tiny, asr):
    from hug_vis_dataset.models.device import DeviceError, _cuda_available

    clip = _noise(2.5, 3)
    for device in ("cpu", "auto"):
        assert WhisperASR.from_folder(tiny, device).transcribe(clip) == asr.transcribe(clip)
    if not _cuda_available():
        with pytest.raises(DeviceError, match="torch sees no CUDA GPU"):
            WhisperASR.from_folder(tiny, "cuda")


def _pin_tiny_files(monkeypatch, folder: Path) -> None:
    """Point each registry entry at the tiny model's file, pinned to its own sha256 (the real pins stay
    in the registry's source; the loading code is the real one)."""
    from dataclasses import replace

    from hug_vis_dataset.hashing import sha256_file

    for filename, name in WEIGHT_FILES.items():
        monkeypatch.setitem(weights.REGISTRY, name, replace(weights.get_spec(name), sha256=sha256_file(folder / filename)))
        monkeypatch.setenv(weights.env_var(name), str(folder / filename))


def test_registry_loading_reads_the_four_files(tiny, asr, monkeypatch):
    _pin_tiny_files(monkeypatch, tiny)
    loaded = load_whisper_large_v3("cpu")
    assert loaded.transcribe(_noise(1.0, 2)) == asr.transcribe(_noise(1.0, 2))
    model = loaded.model
    assert model.proj_out.weight.data_ptr() == model.model.decoder.embed_tokens.weight.data_ptr()  # tied
    # a file of other content than pinned: refused, naming the file and the pin
    monkeypatch.setitem(weights.REGISTRY, "whisper_large_v3_tokenizer",
                        __import__("dataclasses").replace(weights.get_spec("whisper_large_v3_tokenizer"), sha256="0" * 64))
    with pytest.raises(weights.WeightsHashError, match="tokenizer.json has sha256 .* pinned to 0000"):
        load_whisper_large_v3("cpu")


def test_a_missing_file_names_the_file_the_hub_id_and_the_override(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty_cache"))
    for name in WEIGHT_FILES.values():
        monkeypatch.delenv(weights.env_var(name), raising=False)
    monkeypatch.delenv(weights.ENV_DIR, raising=False)
    with pytest.raises(weights.WeightsMissingError) as err:
        load_whisper_large_v3("cpu")
    text = str(err.value)
    for needed in ("model.safetensors", "openai/whisper-large-v3", "06f233fe06e710322aca913c1bc4249a0d71fce1",
                   "HUGVIS_WEIGHT_WHISPER_LARGE_V3=", "hugvis weights download whisper_large_v3", "cer"):
        assert needed in text, needed
    # the runner skips the three rows with the command that fetches the files (one line each)
    from hug_vis_dataset.tasks import get_task

    why = get_task("voice_cloning").availability()
    assert {m for m, note in why.items() if note} >= {"cer", "cer_edits", "cer_ref_chars"}
    assert "\n" not in why["cer"] and "hugvis weights download whisper_large_v3" in why["cer"]
    # the evaluate door stops on it instead of recording a clip failure
    from hug_vis_dataset.modules import compute

    wav = tmp_path / "a.wav"
    sf.write(wav, _noise(0.5, 1), 16000)
    with pytest.raises(weights.WeightsMissingError, match="model.safetensors"):
        compute("cer", predictions=[str(wav)], references=["你好"])


def test_the_scorer_transcribes_its_one_decode_and_fails_only_the_cer_rows(asr, tmp_path):
    from hug_vis_dataset.metrics.voice import prepare_audio
    from hug_vis_dataset.tasks import ModelCache, get_task

    audio = _noise(1.3, 4)
    path = tmp_path / "clip_22k.wav"
    import librosa

    sf.write(path, librosa.resample(audio, orig_sr=16000, target_sr=22050), 22050, subtype="FLOAT")
    scorer, models = get_task("voice_cloning"), ModelCache("cpu", overrides={"asr": asr})
    metrics = ["cer", "cer_edits", "cer_ref_chars", "distill_mos"]
    assert scorer.groups(metrics) == [tuple(metrics)]  # one pass, one decode
    scores, errors = scorer.score_groups(str(path), {"text": "今天天气很好。"}, metrics, models, {})
    assert not errors
    assert scores.values == {**cer_values("今天天气很好。", asr.transcribe(prepare_audio(str(path)))),
                             "distill_mos": scores.values["distill_mos"]}
    scores, errors = scorer.score_groups(str(path), {"text": "。，！"}, metrics, models, {})
    assert set(errors) == {"cer", "cer_edits", "cer_ref_chars"} and "TargetTextError" in errors["cer"]
    assert set(scores.values) == {"distill_mos"}
    _, errors = scorer.score_groups(str(path), {}, ["cer"], models, {})
    assert "no target text for this clip" in errors["cer"]


# ----------------------------------------------------------------------------- every door
@pytest.fixture(scope="module")
def voice_world(tmp_path_factory, tiny):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("cer_doors")
    synthesize(root / "rel", actors=2, emotions=["Happy"], actions=1, scripts=2, seconds=0.5, size=(32, 18),
               systems=True)
    return root / "rel"


@pytest.fixture
def injected(asr, monkeypatch):
    """The tiny Whisper as every door's ASR (the process's model cache), its files reported present."""
    from hug_vis_dataset.tasks import ModelCache
    from hug_vis_dataset.tasks import models as model_cache

    monkeypatch.setattr(model_cache, "_PROCESS_CACHE", ModelCache("cpu", overrides={"asr": asr}))
    original = weights.missing_note
    monkeypatch.setattr(weights, "missing_note",
                        lambda names: None if set(names) <= set(WEIGHT_FILES.values()) else original(names))
    return asr


def _zip(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(folder.glob("*.wav")):
            archive.write(path, path.name)
    return target


def test_every_door_gives_the_same_cer(voice_world, injected, tmp_path):
    from hug_vis_dataset.cli import main
    from hug_vis_dataset.metrics.voice import prepare_audio
    from hug_vis_dataset.modules import compute
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.reporting.report import build_report
    from hug_vis_dataset.space.app import Explorer

    release, system = voice_world, "clone_fair"
    folder = release / "simulated_systems" / "voice_cloning" / system
    records = list(Release(release))
    # the library on the files: the transcript of each clip against its target text
    library = {r.clip_id: cer_values(r.transcript, injected.transcribe(prepare_audio(str(folder / f"{r.clip_id}.wav"))))
               for r in records}
    assert main(["evaluate", "voice_cloning", "--predictions", str(folder), "--model", system, "--dataset",
                 str(release), "--out", str(tmp_path / "cli"), "--metrics", "cer", "--no-progress"]) == 0
    rows = pd.read_parquet(tmp_path / "cli" / "voice_cloning" / system / "rows.parquet")
    assert set(rows["metric"]) == {"cer", "cer_edits", "cer_ref_chars"} and (rows["status"] == "ok").all()
    for r in records:
        got = rows[rows["clip_id"] == r.clip_id].set_index("metric")["value"].to_dict()
        assert got == library[r.clip_id]
    corpus = 100 * sum(v["cer_edits"] for v in library.values()) / sum(v["cer_ref_chars"] for v in library.values())
    # the evaluate module: predictions with their target texts, paired by position
    out = compute("cer", predictions=[str(folder / f"{r.clip_id}.wav") for r in records],
                  references=[r.transcript for r in records], models={"asr": injected})
    assert out["per_clip"] == [library[r.clip_id]["cer"] for r in records] and out["n_failed"] == 0
    assert out["cer"] == pytest.approx(corpus, rel=1e-12)
    # the Space's upload scoring stores the runner's rows
    explorer = Explorer(release, tmp_path / "space", work_dir=tmp_path / "work")
    message, _, space_rows = explorer.score("voice_cloning", system, str(_zip(folder, tmp_path / "upload.zip")))
    assert f"{len(records)} clip(s) ok of {len(records)}" in message, message
    stored = next(run for run in explorer.store.runs() if run.model == system).rows
    mine = stored[stored["metric"].str.startswith("cer")].set_index(["clip_id", "metric"])["value"]
    assert mine.to_dict() == rows.set_index(["clip_id", "metric"])["value"].to_dict()
    # the page's per-clip rows print those values in the board's units and decimals, one row per clip
    from hug_vis_dataset import catalog
    from hug_vis_dataset.space.viewer import clip_display

    shown = space_rows.set_index("Clip")[catalog.spec("cer").header]
    assert shown.to_dict() == {clip_display(r.clip_id): catalog.spec("cer").printed(
        catalog.to_paper_units("cer", library[r.clip_id]["cer"])) for r in records}  # a fraction printed in %
    # the Space computed Distill-MOS on the same upload: the library's value on each file
    from test_distill_mos import ours
    from hug_vis_dataset.readers.media import read_audio

    distill = stored[stored["metric"] == "distill_mos"].set_index("clip_id")["value"]
    for r in records:
        assert distill[r.clip_id] == pytest.approx(ours(*read_audio(folder / f"{r.clip_id}.wav", mono=True)), abs=1e-12)
    # the report prints the corpus CER beside Table 9, never among its columns
    report = build_report([tmp_path / "cli"], tmp_path / "report", formats=("md",), n_boot=0, figures=False)
    assert report.tables["voice_cloning"].loc[system, "cer"] == pytest.approx(corpus, rel=1e-12)
    beyond = report.markdown[report.markdown.index("### Voice cloning: beyond the paper"):]
    assert f"{corpus:.2f}" in beyond.split("\n## ")[0] and "CER ↓ (%)" in beyond
    paper_table = report.markdown[report.markdown.index("## Voice cloning"):report.markdown.index("### Voice cloning")]
    assert "CER" not in paper_table


def test_real_audio_cer_is_each_recording_against_what_it_says(voice_world, injected, tmp_path):
    """Table 9's Real-audio row: the recogniser's floor. The row's prediction for a clip is another recording
    of the actor; its CER compares that recording with its own target text."""
    from hug_vis_dataset.metrics.voice import prepare_audio, real_audio_pairs
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.datamodel.results import REAL_AUDIO_MODEL
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.tasks import REAL_AUDIO

    release = voice_world
    res = evaluate_submission("voice_cloning", REAL_AUDIO, REAL_AUDIO_MODEL, release, tmp_path / "res",
                              progress=False, metrics=["cer"])
    rows = pd.read_parquet(res.rows_path).set_index(["clip_id", "metric"])["value"]
    records = {r.clip_id: r for r in Release(release)}
    pairs, _ = real_audio_pairs(list(records.values()))
    assert pairs and all(p.partner_id != p.clip_id for p in pairs)
    for pair in pairs:
        partner = records[pair.partner_id]
        want = cer_values(partner.transcript, injected.transcribe(prepare_audio(str(partner.audio_path))))
        assert {m: rows[(pair.clip_id, m)] for m in want} == want

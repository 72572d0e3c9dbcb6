"""Emotion adapters: an OpenAI-compatible chat endpoint (a stand-in server on 127.0.0.1, no network)
and transformers pipelines (a tiny classifier built offline, no downloads)."""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import cv2
import numpy as np
import pytest
import soundfile as sf

from hug_vis_dataset.predict import PredictionError, PredictSetupError, predict
from hug_vis_dataset.predict.adapters import OpenAIChat, TransformersEmotion, load_callable
from hug_vis_dataset.datamodel.release import Release


class ChatServer:
    """A chat-completions stand-in. ``script`` maps a clip id found in the prompt (or ``"*"``)
    to a list of behaviours consumed one per request: ``("answer", text)``, ``("status", code)``,
    ``("sleep", seconds)``, ``("raw", body)``."""

    def __init__(self):
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.script: dict[str, list] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                text = body["messages"][0]["content"][-1]["text"]
                key = next((k for k in server.script if k != "*" and k in text), "*")
                steps = server.script.get(key) or [("answer", "Neutral")]
                kind, value = steps.pop(0) if len(steps) > 1 else steps[0]
                if kind == "sleep":
                    time.sleep(value)
                    kind, value = "answer", "Neutral"
                if kind == "status":
                    self.send_response(value)
                    self.end_headers()
                    self.wfile.write(b'{"error": "busy"}')
                    return
                payload = value if kind == "raw" else json.dumps(
                    {"choices": [{"message": {"role": "assistant", "content": value}}]})
                data = payload.encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    chat = ChatServer()
    yield chat
    chat.close()


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("release")
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=2, seconds=0.4, size=(32, 18), seed=2,
               systems=False)
    return root


def inputs(prompt="Which emotion?", frames=None, audio=None, rate=16000):
    out = {"prompt": prompt, "input_setting": "Text", "clip_id": "c"}
    if frames is not None:
        out["frames"] = frames
    if audio is not None:
        out.update(audio=audio, sample_rate=rate)
    return out


# ----------------------------------------------------------------------------- chat endpoint
def test_request_carries_frames_audio_and_prompt_in_the_openai_format(server):
    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 256, (6, 8, 3), dtype=np.uint8) for _ in range(3)]
    audio = (rng.standard_normal(800) * 0.1).astype(np.float32)
    server.script["*"] = [("answer", "Emotion: Sad")]
    chat = OpenAIChat("omni-7b", base_url=server.url, api_key="sk-test", backoff=0)
    assert chat(inputs("Which emotion? 你好", frames, audio)) == "Emotion: Sad"
    (body,), (headers,) = server.requests, server.headers
    assert headers["Authorization"] == "Bearer sk-test"
    assert body["model"] == "omni-7b" and body["temperature"] == 0
    parts = body["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["image_url"] * 3 + ["input_audio", "text"]
    for part, frame in zip(parts, frames):
        url = part["image_url"]["url"]
        assert url.startswith("data:image/png;base64,")
        decoded = cv2.imdecode(np.frombuffer(base64.b64decode(url.split(",", 1)[1]), np.uint8), cv2.IMREAD_COLOR)
        np.testing.assert_array_equal(decoded[..., ::-1], frame)  # lossless, RGB order kept
    sound, rate = sf.read(io.BytesIO(base64.b64decode(parts[3]["input_audio"]["data"])), dtype="float32")
    assert parts[3]["input_audio"]["format"] == "wav" and rate == 16000
    np.testing.assert_allclose(sound, audio, atol=1 / 32767)
    assert parts[4]["text"] == "Which emotion? 你好"


def test_retries_on_503_then_answers(server):
    server.script["*"] = [("status", 503), ("status", 429), ("answer", "happy")]
    chat = OpenAIChat("m", base_url=server.url, api_key="", retries=2, backoff=0)
    assert chat(inputs()) == "happy" and len(server.requests) == 3


def test_gives_up_after_the_retries_and_never_retries_a_400(server):
    server.script["*"] = [("status", 503)]
    with pytest.raises(PredictionError, match=r"no answer after 3 attempt\(s\): HTTP 503"):
        OpenAIChat("m", base_url=server.url, api_key="", retries=2, backoff=0)(inputs())
    assert len(server.requests) == 3
    server.requests.clear()
    server.script["*"] = [("status", 400)]
    with pytest.raises(PredictionError, match="HTTP 400"):
        OpenAIChat("m", base_url=server.url, api_key="", retries=2, backoff=0)(inputs())
    assert len(server.requests) == 1


def test_timeout_is_reported(server):
    server.script["*"] = [("sleep", 1.0)]
    with pytest.raises(PredictionError, match=r"no answer after 2 attempt\(s\): timed out after 0.2 s"):
        OpenAIChat("m", base_url=server.url, api_key="", timeout=0.2, retries=1, backoff=0)(inputs())


def test_malformed_response_is_an_error(server):
    server.script["*"] = [("raw", '{"error": {"message": "overloaded"}}')]
    with pytest.raises(PredictionError, match="no choices"):
        OpenAIChat("m", base_url=server.url, api_key="", backoff=0)(inputs())


def test_openai_api_without_a_key_is_refused_at_setup(monkeypatch):
    for name in ("HUGVIS_OPENAI_BASE_URL", "OPENAI_BASE_URL", "HUGVIS_OPENAI_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(PredictSetupError, match="needs an API key in HUGVIS_OPENAI_API_KEY"):
        OpenAIChat("gpt")


def test_predict_through_the_endpoint_records_failures_per_clip(server, release, tmp_path, monkeypatch):
    records = list(Release(release))
    transcripts = {r.clip_id: r.transcript for r in records}
    # The prompt carries the transcript, so the stand-in recognises each clip by it.
    server.script = {transcripts[records[0].clip_id]: [("answer", "开心")],
                     transcripts[records[1].clip_id]: [("sleep", 1.0)],
                     transcripts[records[2].clip_id]: [("answer", "")],
                     transcripts[records[3].clip_id]: [("status", 500), ("answer", "悲伤")]}
    monkeypatch.setenv("HUGVIS_OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("HUGVIS_OPENAI_API_KEY", "k")
    summary = predict("emotion", "openai:omni", release, tmp_path, settings=["Video + Audio + Text"], timeout=0.3,
                      retries=1, backoff=0, progress=False)
    ids = [r.clip_id for r in records]
    assert summary.ok == [f"{ids[0]} | Video + Audio + Text", f"{ids[3]} | Video + Audio + Text"]
    failures = dict(summary.failures)
    assert failures[f"{ids[1]} | Video + Audio + Text"] == \
        "PredictionError: no answer after 2 attempt(s): timed out after 0.3 s"
    assert failures[f"{ids[2]} | Video + Audio + Text"] == "PredictionError: empty answer"
    lines = [json.loads(x) for x in (tmp_path / "predictions.jsonl").read_text("utf-8").splitlines()]
    assert [(x["clip_id"], x["answer"], x["parsed"]) for x in lines] == [(ids[0], "开心", "Happy"),
                                                                        (ids[3], "悲伤", "Sad")]
    assert lines[0]["model"] == f"openai:omni at {server.url}" and len(lines[0]["frame_indices"]) == 8
    parts = server.requests[0]["messages"][0]["content"]
    assert [p["type"] for p in parts].count("image_url") == 8 and parts[8]["type"] == "input_audio"


# ----------------------------------------------------------------------------- callables, transformers
def test_load_callable_errors_name_the_problem():
    with pytest.raises(PredictSetupError, match="expected baseline, module:function"):
        load_callable("justaname")
    with pytest.raises(PredictSetupError, match="json has no nothing_here"):
        load_callable("json:nothing_here")
    with pytest.raises(PredictSetupError, match="is not callable"):
        load_callable("math:pi")
    assert load_callable("os.path:join")("a", "b") == "a/b"


def test_transformers_missing_model_is_a_setup_error(tmp_path):
    with pytest.raises(PredictSetupError, match="has no config.json"):
        TransformersEmotion(str(tmp_path))
    with pytest.raises(PredictSetupError, match="is neither a local folder nor a Hub id"):
        TransformersEmotion(str(tmp_path / "absent"))


@pytest.fixture(scope="module")
def tiny_text_classifier(tmp_path_factory) -> Path:
    """A randomly initialised 1-layer BERT with the seven emotions as labels, built offline."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder = tmp_path_factory.mktemp("tiny-bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "我", "你", "了", "开", "心", "怕", "！", "，", "。"]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    names = ["Happy", "Angry", "Sad", "Afraid", "Disgusted", "Surprised", "Neutral"]
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, num_labels=7,
                        id2label=dict(enumerate(names)), label2id={n: i for i, n in enumerate(names)})
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(folder)
    BertTokenizer(str(folder / "vocab.txt")).save_pretrained(folder)
    return folder


def test_transformers_text_classifier_answers_its_argmax_label(tiny_text_classifier, release, tmp_path):
    import torch
    from transformers import BertForSequenceClassification, BertTokenizer

    summary = predict("emotion", f"transformers:{tiny_text_classifier}", release, tmp_path / "text", settings=["Text"],
                      progress=False)
    assert summary.counts()["ok"] == 4
    model = BertForSequenceClassification.from_pretrained(tiny_text_classifier).eval()
    tokenizer = BertTokenizer.from_pretrained(tiny_text_classifier)
    answers = {json.loads(x)["clip_id"]: json.loads(x)["answer"]
               for x in (tmp_path / "text" / "predictions.jsonl").read_text("utf-8").splitlines()}
    for record in Release(release):
        with torch.no_grad():
            logits = model(**tokenizer(record.transcript, return_tensors="pt")).logits[0]
        assert answers[record.clip_id] == model.config.id2label[int(logits.argmax())]
    # A text classifier cannot take frames: each clip of that setting fails, with the reason.
    frames = predict("emotion", f"transformers:{tiny_text_classifier}", release, tmp_path / "img",
                     settings=["Image frame"], progress=False)
    assert frames.counts()["failed"] == 4
    assert frames.failures[0][1] == "PredictionError: a text-classification pipeline takes the Text setting, " \
                                    "not Image frame"

"""Model adapters: how ``--model`` turns into a callable on one clip's inputs.

``--model`` takes one of:

* ``baseline`` -- the task's built-in trivial baseline;
* ``module:function`` -- any importable Python callable (:func:`load_callable`): emotion
  ``f(inputs: dict) -> str``, matting ``f(frames (n, H, W, 3) uint8) -> alpha (n, H, W)``;
* ``openai:MODEL`` (emotion) -- an OpenAI-compatible chat endpoint (:class:`OpenAIChat`): the base
  URL from ``HUGVIS_OPENAI_BASE_URL`` (else ``OPENAI_BASE_URL``, else the OpenAI API), the key from
  ``HUGVIS_OPENAI_API_KEY`` (else ``OPENAI_API_KEY``);
* ``transformers:ID_OR_PATH`` (emotion) -- a ``transformers`` pipeline from a local folder or a
  Hub id (:class:`TransformersEmotion`), for the settings its pipeline task can take.

The ``openai:`` and ``transformers:`` prefixes win over a Python module of that name.

Example:
    >>> load_callable("math:sqrt")(9.0)
    3.0
    >>> message = chat_messages({"prompt": "Which emotion?", "frames": [np.zeros((2, 2, 3), np.uint8)]})
    >>> [part["type"] for part in message[0]["content"]]
    ['image_url', 'text']
    >>> message[0]["content"][0]["image_url"]["url"][:22]
    'data:image/png;base64,'
"""

from __future__ import annotations

import base64
import importlib
import io
import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable, Mapping

import numpy as np

from ..readers import InputFileError
from ..readers.json_files import loads_strict
from .runner import PredictionError, PredictSetupError

BASE_URL_ENV = ("HUGVIS_OPENAI_BASE_URL", "OPENAI_BASE_URL")
API_KEY_ENV = ("HUGVIS_OPENAI_API_KEY", "OPENAI_API_KEY")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: HTTP statuses worth retrying: rate limits and server-side failures.
RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504})


def load_callable(spec: str) -> Callable:
    """The callable ``module:attr`` (``attr`` may be dotted: ``pkg.mod:Class.method``).

    Raises:
        PredictSetupError: a malformed spec, a module that does not import, a missing attribute,
            or an attribute that is not callable.
    """
    module_name, sep, attr = str(spec).partition(":")
    if not sep or not module_name or not attr:
        raise PredictSetupError(f"--model {spec!r}: expected baseline, module:function, openai:MODEL or "
                                f"transformers:ID_OR_PATH")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as err:
        raise PredictSetupError(f"--model {spec!r}: cannot import {module_name}: {err}") from None
    for part in attr.split("."):
        if not hasattr(target, part):
            raise PredictSetupError(f"--model {spec!r}: {module_name} has no {attr}")
        target = getattr(target, part)
    if not callable(target):
        raise PredictSetupError(f"--model {spec!r}: {attr} is not callable")
    return target


# ----------------------------------------------------------------------------- OpenAI chat
def png_data_url(rgb: np.ndarray) -> str:
    """An RGB uint8 (H, W, 3) image as a lossless ``data:image/png;base64,...`` URL."""
    import cv2

    ok, buf = cv2.imencode(".png", np.ascontiguousarray(np.asarray(rgb, np.uint8)[..., ::-1]))
    if not ok:
        raise PredictionError("PNG encoding of a frame failed")
    return "data:image/png;base64," + base64.b64encode(buf.tobytes()).decode("ascii")


def wav_base64(audio: np.ndarray, sample_rate: int) -> str:
    """Mono audio as base64 16-bit PCM WAV (the OpenAI ``input_audio`` payload)."""
    import soundfile as sf

    buffer = io.BytesIO()
    sf.write(buffer, np.clip(np.asarray(audio, np.float32), -1.0, 1.0), int(sample_rate), format="WAV",
             subtype="PCM_16")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def chat_messages(inputs: Mapping[str, Any]) -> list[dict]:
    """One user message in the OpenAI chat format: the frames as PNG data URLs (in time order),
    the audio as ``input_audio`` WAV, then the prompt text (which carries the transcript)."""
    content: list[dict] = [{"type": "image_url", "image_url": {"url": png_data_url(f)}}
                           for f in inputs.get("frames") or ()]
    if inputs.get("audio") is not None:
        content.append({"type": "input_audio",
                        "input_audio": {"data": wav_base64(inputs["audio"], inputs["sample_rate"]), "format": "wav"}})
    content.append({"type": "text", "text": inputs["prompt"]})
    return [{"role": "user", "content": content}]


def _env(names: tuple[str, ...]) -> "str | None":
    for name in names:
        if os.environ.get(name):
            return os.environ[name]
    return None


class OpenAIChat:
    """An emotion model behind an OpenAI-compatible ``/chat/completions`` endpoint.

    Args:
        model: the model name sent in the request.
        base_url: the API root (``.../v1``); default from the environment (module docstring).
        api_key: default from the environment; may be absent for a local server, not for the
            OpenAI API itself.
        timeout: deadline in seconds for the whole request (connect, send, and reading the
            complete response); a request past it is a timed-out attempt.
        retries: further attempts after a timeout, a connection error or a 408/409/429/5xx status.
        backoff: seconds before the first retry, doubled each time.
        max_tokens: answer length limit (the answer is one word).

    Raises:
        PredictSetupError: no key for the OpenAI API.
    """

    def __init__(self, model: str, base_url: "str | None" = None, api_key: "str | None" = None,
                 timeout: float = 60.0, retries: int = 3, backoff: float = 1.0, max_tokens: int = 16):
        self.model = model
        self.base_url = (base_url or _env(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")
        self.api_key = api_key if api_key is not None else _env(API_KEY_ENV)
        if not self.api_key and self.base_url == DEFAULT_BASE_URL:
            raise PredictSetupError(f"openai:{model} needs an API key in {API_KEY_ENV[0]} or {API_KEY_ENV[1]} "
                                    f"(or a local server's URL in {BASE_URL_ENV[0]})")
        self.timeout, self.retries, self.backoff, self.max_tokens = timeout, retries, backoff, max_tokens

    def describe(self) -> str:
        return f"openai:{self.model} at {self.base_url}"

    def request_body(self, inputs: Mapping[str, Any]) -> dict:
        """The JSON body of one request (greedy decoding)."""
        return {"model": self.model, "messages": chat_messages(inputs), "temperature": 0,
                "max_tokens": self.max_tokens}

    def __call__(self, inputs: Mapping[str, Any]) -> str:
        data = json.dumps(self.request_body(inputs)).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(f"{self.base_url}/chat/completions", data=data, headers=headers)
            try:
                return _answer_text(json.loads(post_before_deadline(request, self.timeout).decode("utf-8")))
            except urllib.error.HTTPError as err:
                body = err.read().decode("utf-8", "replace")[:200]
                last = f"HTTP {err.code}: {body}"
                if err.code not in RETRY_STATUSES:
                    raise PredictionError(last) from None
            except (urllib.error.URLError, socket.timeout, TimeoutError, ConnectionError) as err:
                reason = getattr(err, "reason", err)
                last = f"timed out after {self.timeout:g} s" if isinstance(reason, (socket.timeout, TimeoutError)) \
                    else f"{type(reason).__name__}: {reason}"
        raise PredictionError(f"no answer after {self.retries + 1} attempt(s): {last}")


class _Deadline:
    """Shuts the request's sockets down when ``seconds`` have passed, whatever the request is blocked
    in: a socket timeout alone bounds each read, so a server sending a byte a second never trips it."""

    def __init__(self, seconds: float):
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                self._shutdown(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                self._shutdown(sock)

    @staticmethod
    def _shutdown(sock: socket.socket) -> None:
        try:  # the plain socket's shutdown: an SSL socket's own would drop its state under the reading thread
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        except OSError:
            pass  # already closed: nothing left to interrupt

    def __enter__(self) -> "_Deadline":
        self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._timer.cancel()


def _watched(http_class: type, deadline: _Deadline) -> type:
    """``http_class`` (``HTTPConnection`` or ``HTTPSConnection``) handing its socket to ``deadline``."""

    class Watched(http_class):  # type: ignore[misc, valid-type]
        def connect(self) -> None:
            super().connect()
            deadline.watch(self.sock)

    return Watched


class _WatchedOpen:
    """For urllib's HTTP(S) handlers: each connection they open hands its socket to ``deadline``."""

    def __init__(self, deadline: _Deadline):
        super().__init__()
        self.deadline = deadline

    def do_open(self, http_class, req, **kwargs):  # http(s)_open call this with the connection class
        return super().do_open(_watched(http_class, self.deadline), req, **kwargs)  # type: ignore[misc]


class _WatchedHTTP(_WatchedOpen, urllib.request.HTTPHandler):
    pass


class _WatchedHTTPS(_WatchedOpen, urllib.request.HTTPSHandler):
    pass


def post_before_deadline(request: urllib.request.Request, timeout: float) -> bytes:
    """The complete response body of ``request``, or :class:`TimeoutError` once ``timeout`` seconds
    have passed since the call, counting connect, send and the whole response read.

    ``urllib``'s own ``timeout`` is kept too (it bounds the connect); the deadline is enforced by
    shutting the socket down, so no phase can outlive it. Proxies (``HTTPS_PROXY`` ...) are honoured
    as by ``urlopen``.

    Raises:
        TimeoutError: the deadline passed.
        urllib.error.HTTPError, urllib.error.URLError: as ``urlopen`` raises them.
    """
    with _Deadline(timeout) as deadline:
        opener = urllib.request.build_opener(_WatchedHTTP(deadline), _WatchedHTTPS(deadline))
        try:
            with opener.open(request, timeout=timeout) as response:
                body = response.read()
        except Exception as err:
            if deadline.expired:  # whatever the interrupted read raised, the cause is the deadline
                raise TimeoutError(f"timed out after {timeout:g} s") from err
            raise
        if deadline.expired:  # a close-delimited body cut short by the shutdown reads as complete
            raise TimeoutError(f"timed out after {timeout:g} s")
    return body


def _answer_text(response: Mapping[str, Any]) -> str:
    """The text of the first choice (string content, or the text parts of a list content)."""
    try:
        content = response["choices"][0]["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        raise PredictionError(f"the response has no choices[0].message: {str(response)[:200]}") from None
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


# ----------------------------------------------------------------------------- transformers
#: Pipeline task by the suffix of the model's architecture (config.json ``architectures``).
PIPELINE_BY_ARCHITECTURE = {
    "ForSequenceClassification": "text-classification",
    "ForImageClassification": "image-classification",
    "ForAudioClassification": "audio-classification",
    "ForCausalLM": "text-generation",
}
#: The input setting each pipeline task can take.
SETTING_BY_PIPELINE = {
    "text-classification": "Text",
    "text-generation": "Text",
    "image-classification": "Image frame",
    "audio-classification": "Audio",
}


class TransformersEmotion:
    """An emotion model as a ``transformers`` pipeline (local folder or Hub id).

    The pipeline task comes from ``pipeline_task`` or from the architecture in the folder's
    ``config.json``; a Hub id without ``pipeline_task`` lets ``transformers`` ask the Hub.
    Classifiers answer their top label (e.g. ``joy``, which :func:`parse_answer` reads as Happy);
    a causal LM answers the prompt of the setting. Each pipeline takes one setting
    (:data:`SETTING_BY_PIPELINE`); other settings need a chat endpoint or a callable.

    Raises:
        PredictSetupError: the model cannot be loaded (missing folder, no network for a Hub id,
            unknown architecture).
    """

    def __init__(self, model: str, pipeline_task: "str | None" = None, device: "str | int | None" = None):
        self.model = model
        config = _local_config(model)  # read even with pipeline_task: a broken file fails here, named
        task = pipeline_task or _pipeline_task_of(model, config)
        if task is not None and task not in SETTING_BY_PIPELINE:
            raise PredictSetupError(f"transformers:{model}: pipeline task {task!r} is not supported; use one of "
                                    f"{', '.join(SETTING_BY_PIPELINE)}")
        _require_hub_model(model)
        try:
            from transformers import pipeline

            self.pipe = pipeline(task, model=model, device=device)
        except Exception as err:  # noqa: BLE001 - missing files, offline Hub, bad config: one message
            raise PredictSetupError(f"transformers:{model}: cannot load the pipeline: {type(err).__name__}: "
                                    f"{str(err).splitlines()[0] if str(err) else ''}") from None
        self.task = self.pipe.task if task is None else task
        if self.task not in SETTING_BY_PIPELINE:
            raise PredictSetupError(f"transformers:{model} is a {self.task} pipeline; supported: "
                                    f"{', '.join(SETTING_BY_PIPELINE)}")
        self.setting = SETTING_BY_PIPELINE[self.task]

    def describe(self) -> str:
        return f"transformers:{self.model} ({self.task})"

    def __call__(self, inputs: Mapping[str, Any]) -> str:
        if inputs["input_setting"] != self.setting:
            raise PredictionError(f"a {self.task} pipeline takes the {self.setting} setting, not "
                                  f"{inputs['input_setting']}")
        if self.task == "text-classification":
            return _top_label(self.pipe(inputs["text"]))
        if self.task == "image-classification":
            from PIL import Image

            return _top_label(self.pipe(Image.fromarray(inputs["frames"][0])))
        if self.task == "audio-classification":
            return _top_label(self.pipe({"raw": np.asarray(inputs["audio"], np.float32),
                                         "sampling_rate": int(inputs["sample_rate"])}))
        out = self.pipe([{"role": "user", "content": inputs["prompt"]}], max_new_tokens=16, do_sample=False,
                        return_full_text=False)
        text = out[0]["generated_text"]
        return text[-1]["content"] if isinstance(text, list) else str(text)


def _top_label(result: Any) -> str:
    """The label of the highest score in a classification pipeline's output."""
    while isinstance(result, list) and result and isinstance(result[0], list):
        result = result[0]
    if not result:
        return ""
    return str(max(result, key=lambda r: r["score"])["label"])


def _require_hub_model(model: str) -> None:
    """A Hub id that is not cached, on a machine that cannot reach the Hub: fail now, not after retries."""
    from huggingface_hub import try_to_load_from_cache

    from ..readers.hub_access import looks_like_hub_id, require_reachable

    if not looks_like_hub_id(model) or isinstance(try_to_load_from_cache(model, "config.json"), str):
        return
    require_reachable(model, "pass a downloaded model folder instead: "
                             "--model transformers:/path/to/model (the folder with config.json)")


def _local_config(model: str) -> "dict | None":
    """The ``config.json`` of a local model folder as a dict; None for a Hub id.

    Raises:
        PredictSetupError: not a folder nor a Hub id, no ``config.json``, or one that is not a
            UTF-8 JSON object (the message names the file and the fix).
    """
    from ..readers.hub_access import looks_like_hub_id

    config = Path(model) / "config.json"
    if not config.is_file():
        if Path(model).exists():
            raise PredictSetupError(f"transformers:{model}: the folder has no config.json")
        if not looks_like_hub_id(model):
            raise PredictSetupError(f"transformers:{model} is neither a local folder nor a Hub id (owner/name)")
        return None
    fix = "replace it with the model's own config.json (a JSON object, as save_pretrained writes it)"
    try:
        text = config.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise PredictSetupError(f"{config} is not UTF-8 text (byte {err.start}); {fix}") from None
    except OSError as err:
        raise PredictSetupError(f"{config} cannot be read ({err.strerror or err}); {fix}") from None
    try:  # strict: a duplicated "architectures" or NaN is refused, naming the line
        data = loads_strict(text, config)
    except InputFileError as err:
        try:
            json.loads(text)
        except json.JSONDecodeError as syntax:  # not JSON at all: the parser's own words and place
            raise PredictSetupError(f"{config} is not valid JSON ({syntax.msg}, line {syntax.lineno} column "
                                    f"{syntax.colno}); {fix}") from None
        raise PredictSetupError(f"{config} is not valid JSON ({err.where}: {err.problem}); {fix}") from None
    if not isinstance(data, dict):
        raise PredictSetupError(f"{config} holds a JSON {type(data).__name__}, not an object; {fix}")
    return data


def _pipeline_task_of(model: str, config: "dict | None") -> "str | None":
    """The pipeline task of a local model from its architecture; None for a Hub id (the Hub knows)."""
    if config is None:
        return None
    architectures = config.get("architectures") or []
    if not isinstance(architectures, list) or not all(isinstance(a, str) for a in architectures):
        raise PredictSetupError(f"{Path(model) / 'config.json'}: \"architectures\" is {architectures!r}, not a list "
                                f"of class names; fix the file, or pass the pipeline task "
                                f"({', '.join(SETTING_BY_PIPELINE)})")
    for arch in architectures:
        for suffix, task in PIPELINE_BY_ARCHITECTURE.items():
            if arch.endswith(suffix):
                return task
    raise PredictSetupError(f"transformers:{model}: architecture {architectures} has no supported pipeline; "
                            f"pass the pipeline task ({', '.join(SETTING_BY_PIPELINE)})")

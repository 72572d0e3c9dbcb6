"""Whisper large-v3 through ``transformers``: the speech recogniser of the CER metric.

Why Whisper large-v3 and not Paraformer-zh (Seed-TTS-eval's Mandarin ASR): it runs through
``transformers``, already a dependency of the toolkit (Paraformer needs ``funasr`` and its own
model stack); its four Hub files are pinned here by commit and sha256 from independent public
pins (:mod:`hug_vis_dataset.weights.registry`), none of which is available for Paraformer offline;
and it is the ASR Seed-TTS-eval itself uses for its English set, so one recogniser serves a
multilingual extension. The cost of the choice: Mandarin CERs are not comparable in absolute
value with papers that transcribe with Paraformer-zh (Whisper's Mandarin error rate is higher),
so compare systems scored here with each other, and read the Real-audio row (the same recogniser
on the release's own recordings) as the recogniser's floor.

Decoding is the model card's: 16 kHz mono audio, 128-band log-mel features of 30 s windows
(``WhisperFeatureExtractor``), greedy search with the forced prompt ``<|startoftranscript|><|zh|>
<|transcribe|><|notimestamps|>`` and the suppressed tokens of ``generation_config.json``, text
decoded without special tokens. A clip longer than 30 s is cut into consecutive 30 s windows
(each transcribed alone, the texts joined); HUG-VIS prompts are one sentence, far shorter. Windows
go ``batch`` at a time through the network; a window's transcript does not depend on the batch.

Example (needs the weights: ``hugvis weights download whisper_large_v3 whisper_large_v3_config
whisper_large_v3_generation whisper_large_v3_tokenizer``)::

    asr = load_whisper_large_v3(device="cuda")
    asr.transcribe(samples_16k)
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

SAMPLE_RATE = 16000
#: Whisper's input window: 30 s (3,000 feature frames); longer clips are cut into such windows.
WINDOW_SECONDS = 30
WINDOW_SAMPLES = WINDOW_SECONDS * SAMPLE_RATE
#: The prompt's language and task: Mandarin transcription.
LANGUAGE = "zh"
TASK = "transcribe"
HUB_ID = "openai/whisper-large-v3"
#: Registry names of the files, by the name ``transformers`` reads them under in one folder.
WEIGHT_FILES: dict[str, str] = {"model.safetensors": "whisper_large_v3", "config.json": "whisper_large_v3_config",
                                "generation_config.json": "whisper_large_v3_generation",
                                "tokenizer.json": "whisper_large_v3_tokenizer"}


def audio_windows(audio: np.ndarray) -> list[np.ndarray]:
    """Consecutive 30 s windows of a clip (the last one shorter), as views.

    Example:
        >>> [len(w) for w in audio_windows(np.zeros(16000 * 65, np.float32))]
        [480000, 480000, 80000]
    """
    audio = np.asarray(audio, np.float32)
    if audio.ndim != 1 or audio.size == 0:
        raise ValueError(f"Whisper takes non-empty mono samples (n,), got shape {audio.shape}")
    return [audio[start:start + WINDOW_SAMPLES] for start in range(0, audio.size, WINDOW_SAMPLES)]


class WhisperASR:
    """A loaded Whisper model with its tokenizer, features and decoding configuration.

    Args:
        model: a ``WhisperForConditionalGeneration`` in eval mode (its ``generation_config`` holds
            the language/task tokens and the suppressed tokens).
        tokenizer: the matching ``WhisperTokenizer``.
        language, task: the forced prompt (:data:`LANGUAGE`, :data:`TASK`).
    """

    def __init__(self, model: Any, tokenizer: Any, language: str = LANGUAGE, task: str = TASK):
        from transformers import WhisperFeatureExtractor

        self.model = model.eval()
        self.tokenizer = tokenizer
        self.language, self.task = language, task
        self.features = WhisperFeatureExtractor(feature_size=model.config.num_mel_bins, sampling_rate=SAMPLE_RATE)

    @classmethod
    def from_folder(cls, folder: "str | Path", device: str = "cpu") -> "WhisperASR":
        """Load from a folder holding the files of :data:`WEIGHT_FILES` (``transformers``' own loading,
        offline: fp16 weights cast to float32, the output projection tied to the token embedding).

        Raises:
            WeightsFormatError: a file does not load as what it should be (one line naming the folder).
        """
        import torch
        from transformers import WhisperForConditionalGeneration, WhisperTokenizer

        from ..weights import WeightsFormatError
        from .device import resolve_device

        folder = Path(folder)
        try:
            model = WhisperForConditionalGeneration.from_pretrained(folder, local_files_only=True,
                                                                    dtype=torch.float32)
            tokenizer = WhisperTokenizer(tokenizer_file=str(folder / "tokenizer.json"))
        except (OSError, ValueError, KeyError, RuntimeError) as err:
            raise WeightsFormatError(f"the Whisper files in {folder} do not load ({type(err).__name__}: "
                                     f"{str(err).splitlines()[0] if str(err) else ''}); download them again "
                                     f"(hugvis weights download {' '.join(WEIGHT_FILES.values())})") from None
        return cls(model.to(resolve_device(device)), tokenizer)

    @property
    def device(self) -> Any:
        from .device import module_device

        return module_device(self.model)

    def transcribe_windows(self, windows: Sequence[np.ndarray], batch: int = 1) -> list[str]:
        """The transcript of each window (at most 30 s of 16 kHz mono samples), ``batch`` per forward pass."""
        import torch

        from .device import check_batch_size

        batch = check_batch_size(batch)
        texts: list[str] = []
        for start in range(0, len(windows), batch):
            part = [np.asarray(w, np.float32) for w in windows[start:start + batch]]
            features = self.features(part, sampling_rate=SAMPLE_RATE, return_tensors="pt").input_features
            with torch.no_grad():
                tokens = self.model.generate(input_features=features.to(self.device), language=self.language,
                                             task=self.task, do_sample=False, num_beams=1)
            texts += [str(t) for t in self.tokenizer.batch_decode(tokens.cpu(), skip_special_tokens=True)]
        return texts

    def transcribe(self, audio: np.ndarray, batch: int = 1) -> str:
        """The transcript of one clip: its 30 s windows transcribed and joined (:func:`audio_windows`)."""
        return "".join(self.transcribe_windows(audio_windows(audio), batch))


@contextlib.contextmanager
def linked_folder(files: "dict[str, str | Path]"):
    """A temporary folder where each resolved file appears under the name ``transformers`` reads
    (symbolic links; the folder is removed on exit, the files are not touched)."""
    with tempfile.TemporaryDirectory(prefix="hugvis-whisper-") as folder:
        for name, path in files.items():
            os.symlink(Path(path).resolve(), Path(folder) / name)
        yield Path(folder)


def load_whisper_large_v3(device: str = "cpu") -> WhisperASR:
    """Whisper large-v3 from the weights registry (each file hash-checked; overrides by
    ``HUGVIS_WEIGHT_WHISPER_LARGE_V3*`` or ``$HUGVIS_WEIGHTS_DIR``).

    Raises:
        hug_vis_dataset.weights.WeightsMissingError: a file is not available locally; the message
            names it, its Hub id and revision, the override and ``hugvis weights download ...``.
    """
    from ..weights import resolve

    files = {name: resolve(weight) for name, weight in WEIGHT_FILES.items()}
    with linked_folder(files) as folder:
        return WhisperASR.from_folder(folder, device)

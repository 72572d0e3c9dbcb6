"""Columns of every Hub config, as ``datasets`` features.

One table, :data:`CONFIG_COLUMNS`, says which columns each config holds; :func:`features`
turns it into a :class:`datasets.Features` whose Arrow schema (with the ``huggingface``
metadata) the builder writes into every Parquet shard, so ``load_dataset`` sees Audio, Video,
Image and ClassLabel features without any loading script.

Example:
    >>> CONFIG_NAMES[0], DEFAULT_CONFIG
    ('clips', 'clips')
    >>> f = features("emotion")
    >>> f["label"].names == list(EMOTION_NAMES)
    True
    >>> type(features("matting")["alpha_matte"]).__name__
    'Video'
"""

from __future__ import annotations

from typing import Any

from ..datamodel.grid import EMOTION_NAMES

#: Columns every config carries, so any result joins back to the grid.
KEY_COLUMNS: tuple[str, ...] = ("clip_id", "actor_id", "emotion", "action_id", "script_id")

# Column name -> (kind, description). Kinds: string, int32, float64, label, video, audio, image.
COLUMN_SPECS: dict[str, tuple[str, str]] = {
    "clip_id": ("string", "release clip id, e.g. actor_0001_happy_action_01_script_001"),
    "actor_id": ("int32", "actor number (1-30)"),
    "emotion": ("string", "instructed emotion (Table 1 name: Happy, Angry, Sad, Afraid, Disgusted, Surprised, Neutral)"),
    "action_id": ("int32", "action template number within the emotion (1-4)"),
    "script_id": ("int32", "script (utterance) number within the action (1-10)"),
    "label": ("label", "instructed emotion as a ClassLabel over the seven conditions (Table 1 order)"),
    "transcript": ("string", "the assigned Mandarin prompt the actor speaks (release CSV `transcript`)"),
    "asr_transcript": ("string", "verbatim ASR transcript of the recorded audio (release CSV `asr_transcript`)"),
    "video": ("video", "RGB video as released (H.264 MP4 bytes, not re-encoded)"),
    "audio": ("audio", "noise-suppressed recording as released (16-bit PCM WAV bytes)"),
    "alpha_matte": ("video", "reference alpha matte, lossless 8-bit video (see 'Alpha storage'); use channel 0"),
    "source_frame": ("image", "first video frame as a lossless PNG (the source portrait)"),
    "driving_audio": ("audio", "the clip's recorded audio, which drives the generation (WAV bytes)"),
    "driving_video": ("video", "the clip's video, which drives the generation (self-reenactment)"),
    "reference_video": ("video", "the recorded video the generated video is compared with"),
    "reference_audio": ("audio", "the actor's recording of this performance: enrollment sample and reference"),
    "target_text": ("string", "text to synthesise in the actor's voice (the assigned prompt)"),
    "speaker_id": ("string", "speaker (actor) id, e.g. actor_0001"),
    "num_frames": ("int32", "number of video frames (= number of alpha frames)"),
    "fps": ("float64", "frames per second"),
    "duration": ("float64", "duration in seconds (release CSV)"),
    "sample_rate": ("int32", "audio sampling rate in Hz"),
    "width": ("int32", "frame width in pixels"),
    "height": ("int32", "frame height in pixels"),
}

#: Columns per config, in column order. The first config is the default.
CONFIG_COLUMNS: dict[str, tuple[str, ...]] = {
    "clips": KEY_COLUMNS + (
        "label", "transcript", "asr_transcript", "video", "audio", "alpha_matte",
        "num_frames", "fps", "duration", "sample_rate", "width", "height",
    ),
    "emotion": KEY_COLUMNS + ("video", "audio", "transcript", "asr_transcript", "label"),
    "audio_driven": KEY_COLUMNS + ("source_frame", "driving_audio", "reference_video", "transcript"),
    "vision_driven": KEY_COLUMNS + ("source_frame", "driving_video", "reference_video"),
    "voice_cloning": KEY_COLUMNS + ("reference_audio", "target_text", "speaker_id", "asr_transcript"),
    "matting": KEY_COLUMNS + ("video", "alpha_matte", "num_frames"),
}
CONFIG_NAMES: tuple[str, ...] = tuple(CONFIG_COLUMNS)
DEFAULT_CONFIG = "clips"

#: One-line purpose of each config, for the card.
CONFIG_PURPOSE: dict[str, str] = {
    "clips": "every modality and all metadata of each clip (the default)",
    "emotion": "multimodal emotion recognition: predict `label` from video, audio and/or text",
    "audio_driven": "audio-driven video generation: animate `source_frame` with `driving_audio`, compare with `reference_video`",
    "vision_driven": "vision-driven video generation: animate `source_frame` with `driving_video`, compare with `reference_video`",
    "voice_cloning": "voice cloning: say `target_text` in the voice of `reference_audio`, compare with `reference_audio`",
    "matting": "human video matting: predict the alpha of `video`, compare with `alpha_matte`",
}


def check_config(config: str) -> str:
    """Return ``config`` or raise a ValueError naming the valid configs."""
    if config not in CONFIG_COLUMNS:
        raise ValueError(f"unknown config {config!r}; expected one of {', '.join(CONFIG_NAMES)}")
    return config


def _feature(kind: str) -> Any:
    import datasets

    if kind == "string":
        return datasets.Value("string")
    if kind in ("int32", "float64"):
        return datasets.Value(kind)
    if kind == "label":
        return datasets.ClassLabel(names=list(EMOTION_NAMES))
    if kind == "video":
        # 0 = FFmpeg picks the thread count. The default (1) made decoding the matting config
        # about 2x slower than PyAV on the raw files; decoded frames do not depend on threads.
        return datasets.Video(num_ffmpeg_threads=0)
    if kind == "audio":
        # sampling_rate=None keeps the file's own rate: decoding must not resample the reference.
        return datasets.Audio()
    if kind == "image":
        return datasets.Image()
    raise ValueError(f"unknown column kind {kind!r}")  # pragma: no cover - table is static


def features(config: str) -> "Any":
    """The :class:`datasets.Features` of a config (column order as in :data:`CONFIG_COLUMNS`)."""
    import datasets

    return datasets.Features({name: _feature(COLUMN_SPECS[name][0]) for name in CONFIG_COLUMNS[check_config(config)]})


def media_columns(config: str) -> tuple[str, ...]:
    """Columns of a config holding media bytes (they dominate row size)."""
    return tuple(c for c in CONFIG_COLUMNS[check_config(config)] if COLUMN_SPECS[c][0] in ("video", "audio", "image"))

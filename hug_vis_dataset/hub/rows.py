"""One row of a Hub config per clip: the release's media embedded as Arrow-ready values.

:func:`clip_row` reads a clip of the release tree and returns the row of a config
(:mod:`hug_vis_dataset.hub.schema` names the columns): video and audio bytes exactly as released,
the alpha matte re-encoded losslessly (:mod:`hug_vis_dataset.hub.alpha`), the first video frame
as the source portrait PNG.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from ..readers.regular_files import open_regular
from ..datamodel.release import ClipRecord
from .alpha import ALPHA_CODECS, DEFAULT_ALPHA_CODEC, encode_alpha
from .schema import CONFIG_COLUMNS, check_config


def _read_bytes(path: Path) -> bytes:
    with open_regular(path, "media file") as handle:  # a release's FIFO or device would never end
        return handle.read()


def first_frame_png(video_path: "str | Path") -> bytes:
    """The first frame of a video as lossless RGB PNG bytes (deterministic)."""
    import cv2

    from ..readers.media import iter_video_frames

    frame = next(iter_video_frames(video_path, chunk_frames=1))[0]
    ok, buf = cv2.imencode(".png", np.ascontiguousarray(frame[..., ::-1]), [cv2.IMWRITE_PNG_COMPRESSION, 6])
    if not ok:  # pragma: no cover - cv2 cannot fail on a uint8 RGB frame
        raise RuntimeError(f"PNG encoding of the first frame of {video_path} failed")
    return buf.tobytes()


def clip_row(config: str, record: ClipRecord, alpha_codec: str = DEFAULT_ALPHA_CODEC) -> dict:
    """The row of ``config`` for one clip, with media bytes embedded (Arrow-ready values).

    Example:
        >>> import tempfile
        >>> from hug_vis_dataset.synth import synthesize
        >>> from hug_vis_dataset.datamodel.release import Release
        >>> root = tempfile.mkdtemp()
        >>> _ = synthesize(root, actors=1, emotions=["Sad"], actions=1, scripts=1, seconds=0.2,
        ...                size=(64, 36), systems=False)
        >>> row = clip_row("voice_cloning", next(iter(Release(root))))
        >>> row["speaker_id"], row["emotion"], row["reference_audio"]["path"]
        ('actor_0001', 'Sad', 'actor_0001_sad_action_01_script_001.wav')
    """
    from ..readers.media import iter_alpha_frames

    columns = CONFIG_COLUMNS[check_config(config)]
    cid = record.cid
    clip = record.clip_id
    cache: dict[str, object] = {}

    def video() -> dict:
        if "video" not in cache:
            cache["video"] = {"bytes": _read_bytes(record.video_path), "path": f"{clip}.mp4"}
        return cache["video"]  # type: ignore[return-value]

    def audio() -> dict:
        if "audio" not in cache:
            cache["audio"] = {"bytes": _read_bytes(record.audio_path), "path": f"{clip}.wav"}
        return cache["audio"]  # type: ignore[return-value]

    def alpha() -> tuple[dict, int]:
        if "alpha" not in cache:
            blob, count = encode_alpha(iter_alpha_frames(record.alpha_matte_path), record.fps, alpha_codec)
            ext = ALPHA_CODECS[alpha_codec].extension
            cache["alpha"] = ({"bytes": blob, "path": f"{clip}.alpha.{ext}"}, count)
        return cache["alpha"]  # type: ignore[return-value]

    makers: dict[str, Callable[[], object]] = {
        "clip_id": lambda: clip,
        "actor_id": lambda: cid.actor_id,
        "emotion": lambda: cid.emotion.value,
        "action_id": lambda: cid.action_id,
        "script_id": lambda: cid.script_id,
        "label": lambda: cid.emotion.index,
        "transcript": lambda: record.transcript,
        "asr_transcript": lambda: record.asr_transcript,
        "target_text": lambda: record.transcript,
        "speaker_id": lambda: cid.actor,
        "video": video,
        "driving_video": video,
        "reference_video": video,
        "audio": audio,
        "driving_audio": audio,
        "reference_audio": audio,
        "alpha_matte": lambda: alpha()[0],
        "num_frames": lambda: alpha()[1],
        "source_frame": lambda: {"bytes": first_frame_png(record.video_path), "path": f"{clip}.png"},
        "fps": lambda: record.fps,
        "duration": lambda: record.duration,
        "sample_rate": lambda: record.sample_rate,
        "width": lambda: record.width,
        "height": lambda: record.height,
    }
    return {name: makers[name]() for name in columns}


def row_bytes(row: dict) -> int:
    """An upper bound of the bytes a row adds to a row group (Parquet ``total_byte_size``, uncompressed).

    Strings count three times their UTF-8 length (plain values, a dictionary page and page
    statistics may each hold a copy), and every Parquet column (a media cell is two: blob and
    path) 128 bytes for lengths, levels and page headers: a row group of one row costs that much.
    The builder checks the bound against the written footer.

    Example:
        >>> row_bytes({"clip_id": "ab", "fps": 25.0, "video": {"bytes": b"x" * 1000, "path": "a.mp4"}})
        1541
    """
    total = 0
    for value in row.values():
        if isinstance(value, dict):
            blob, path = value.get("bytes") or b"", value.get("path") or ""
            total += len(blob) + 3 * len(path.encode("utf-8")) + 2 * _COLUMN_OVERHEAD
        elif isinstance(value, str):
            total += 3 * len(value.encode("utf-8")) + _COLUMN_OVERHEAD
        else:
            total += 8 + _COLUMN_OVERHEAD
    return total


# Page header(s), dictionary page header, levels and length prefixes of one column in one row
# group: measured at 70-100 bytes for the small columns of a one-row group.
_COLUMN_OVERHEAD = 128

"""What a rater of the forced-choice emotion study is shown for one item, blind, and how long it takes.

An item is a clip in one input setting (Table 4's): only that setting's modalities reach the page, each written
under the item's opaque code in the study's blind-media folder (a cache of the toolkit's), so neither a file name,
a media URL, the page nor the file's own metadata names the clip or its emotion:

=====================  ============================================================================================
modality               what the rater gets
=====================  ============================================================================================
Video                  ``<code>.mp4``: the clip's video stream without its sound (with the setting's Audio: muxed
                       with the clip's recording, one player); global and stream metadata dropped
Audio (no Video)       ``<code>.wav``: the clip's recording decoded and written again (16-bit PCM, no other chunk)
Image frame            ``<code>.png``: the middle frame (index ``T // 2``, the models' rule:
                       :func:`hug_vis_dataset.predict.emotion.sample_frame_indices`)
Text                   the transcript, as text on the page
=====================  ============================================================================================

The gold item (:data:`~hug_vis_dataset.studies.rater_qc.GOLD_CLEAR`) shows the clip with all its evidence: the
video with its sound and the transcript.

**Speed.** An answer given sooner than :func:`minimum_seconds` after the item was shown is *fast* (quality control,
:mod:`hug_vis_dataset.studies.rater_qc`): the media's duration where there is a video or a recording, the time to
read the transcript at :data:`READING_CHARS_PER_SECOND`, :data:`IMAGE_SECONDS` for a frame alone; a combination
takes the longest of its parts.

Example:
    >>> shown_modalities("Video + Text"), shown_modalities("gold_clear")
    (('Video', 'Text'), ('Video', 'Audio', 'Text'))
    >>> minimum_seconds("Text", 3.0, "我今天太开心了"), minimum_seconds("Video + Text", 3.0, "我今天太开心了")
    (0.7, 3.0)
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .rater_qc import GOLD_CLEAR

#: A reading speed no careful reader of a Mandarin transcript exceeds (characters per second): faster is not reading.
READING_CHARS_PER_SECOND = 10.0
#: Seconds a single frame takes to look at (the floor of an Image frame item).
IMAGE_SECONDS = 1.0
#: The question every item asks (the models' question, :data:`hug_vis_dataset.predict.emotion.QUESTIONS`).
QUESTION = ("**Which emotion does the person express?** Choose one of the seven, or *Cannot tell* if you cannot "
            "decide from what you are given.")
def shown_modalities(setting: str) -> tuple[str, ...]:
    """The modalities an item of ``setting`` shows (the gold item: video, audio and text)."""
    if setting == GOLD_CLEAR:
        return ("Video", "Audio", "Text")
    return tuple(part.strip() for part in setting.split("+"))


def minimum_seconds(setting: str, duration: float, transcript: str = "") -> float:
    """The time an answer to an item of ``setting`` cannot be given faster than (module docstring)."""
    parts = []
    for modality in shown_modalities(setting):
        if modality in ("Video", "Audio"):
            parts.append(float(duration))
        elif modality == "Text":
            parts.append(round(len(transcript or "") / READING_CHARS_PER_SECOND, 3))
        else:
            parts.append(IMAGE_SECONDS)
    return max(parts) if parts else 0.0


def instructions(setting: str) -> str:
    """The item's Markdown above the answer: what the rater is given (never a word about the clip) and the question.

    Example:
        >>> instructions("Video + Audio").splitlines()[0], instructions("Image frame + Text").splitlines()[0]
        ('You are given the video with its sound.', 'You are given one frame of the video and the transcript of what the person says.')
    """
    modalities = shown_modalities(setting)
    given = []
    if "Image frame" in modalities:
        given.append("one frame of the video")
    if "Video" in modalities:  # with the setting's Audio, muxed into one player
        given.append("the video with its sound" if "Audio" in modalities else "the video without its sound")
    elif "Audio" in modalities:
        given.append("the recording of the person speaking")
    if "Text" in modalities:
        given.append("the transcript of what the person says")
    words = given[0] if len(given) == 1 else ", ".join(given[:-1]) + " and " + given[-1]
    return f"You are given {words}.\n\n{QUESTION}"


@dataclass
class EmotionMedia:
    """The files and text of one item (None where its setting has no such modality)."""

    video: "str | None" = None
    audio: "str | None" = None
    image: "str | None" = None
    text: "str | None" = None


def item_media(record, setting: str, media_dir: "str | Path", code: str) -> EmotionMedia:
    """The blind media of one item: ``record`` is the clip's :class:`~hug_vis_dataset.datamodel.release.ClipRecord`; files
    named ``<code>.<ext>`` in ``media_dir`` (a cache of the toolkit's, made once per code)."""
    modalities = shown_modalities(setting)
    out = EmotionMedia()
    if "Video" in modalities:
        sound = record.audio_path if "Audio" in modalities else None
        out.video = _placed(media_dir, f"{code}.mp4", lambda tmp: blind_video(record.video_path, tmp, sound))
    elif "Audio" in modalities:
        out.audio = _placed(media_dir, f"{code}.wav", lambda tmp: blind_audio(record.audio_path, tmp))
    if "Image frame" in modalities:
        out.image = _placed(media_dir, f"{code}.png", lambda tmp: middle_frame(record.video_path, tmp))
    if "Text" in modalities:
        out.text = record.transcript
    return out


def _placed(media_dir: "str | Path", name: str, write: Callable[[Path], None]) -> str:
    """``media_dir/name``, written once through a temporary of the same folder (the cache's own files only)."""
    from ..outputs import mark_cache, put_scratch

    folder = Path(media_dir)
    mark_cache(folder.parent)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    if not target.is_file():
        tmp = folder / f".{Path(name).stem}.{os.getpid()}.tmp{Path(name).suffix}"
        write(tmp)
        put_scratch(tmp, target)
    return str(target)


def blind_video(video: "str | Path", out: "str | Path", audio: "str | Path | None" = None) -> None:
    """``video``'s picture (stream copy, no re-encoding) without its sound, or with ``audio`` muxed in (AAC), every
    global and stream metadata tag and chapter dropped, so the file says nothing but its picture and sound."""
    command = ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", str(video)]
    if audio is not None:
        command += ["-i", str(audio), "-map", "0:v:0", "-map", "1:a:0", "-c:a", "aac", "-shortest"]
    else:
        command += ["-map", "0:v:0", "-an"]
    command += ["-c:v", "copy", "-map_metadata", "-1", "-map_metadata:s", "-1", "-map_chapters", "-1",
                "-fflags", "+bitexact", "-f", "mp4", str(out)]
    subprocess.run(command, check=True)


def blind_audio(audio: "str | Path", out: "str | Path") -> None:
    """The recording decoded and written again as 16-bit PCM WAV: the same sound, none of the file's other chunks."""
    from ..readers.media import read_audio, write_wav

    samples, rate = read_audio(audio)
    write_wav(out, samples, rate)


def middle_frame(video: "str | Path", out: "str | Path") -> None:
    """The video's middle frame (the Image frame setting's, as models get it) as a PNG with no text chunk."""
    import cv2
    import numpy as np

    from ..readers.media import video_info
    from ..predict.emotion import read_frames, sample_frame_indices

    frame = read_frames(video, sample_frame_indices(video_info(video).frames, 1))[0]
    ok, data = cv2.imencode(".png", np.ascontiguousarray(frame[..., ::-1]))
    if not ok:
        raise ValueError(f"the middle frame of {Path(video).name} could not be encoded as PNG")
    Path(out).write_bytes(data.tobytes())


__all__ = ["EmotionMedia", "IMAGE_SECONDS", "QUESTION", "READING_CHARS_PER_SECOND", "blind_audio",
           "blind_video", "instructions", "item_media", "middle_frame", "minimum_seconds", "shown_modalities"]

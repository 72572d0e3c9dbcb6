"""Clip inspector logic: pick a clip by its grid fields, read one frame of video and matte, overlay.

Example:
    >>> import numpy as np
    >>> rgb = np.full((1, 2, 3), 100, np.uint8); alpha = np.array([[255, 0]], np.uint8)
    >>> matte_overlay(rgb, alpha, tint=(255, 0, 0), strength=0.5)[0].tolist()
    [[100, 100, 100], [178, 50, 50]]
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from ..datamodel.grid import TABLE1, ClipId, parse_emotion


def matte_overlay(rgb: np.ndarray, alpha: np.ndarray, tint: Sequence[int] = (255, 0, 255),
                  strength: float = 0.6) -> np.ndarray:
    """Tint the background (alpha 0) of a frame, leave the foreground (alpha 255) untouched.

    ``out = a * rgb + (1 - a) * ((1 - strength) * rgb + strength * tint)`` with ``a = alpha / 255``,
    rounded half up; so matte errors show as tinted foreground or untinted background.

    Raises:
        ValueError: shapes that do not match, non-uint8 input or strength outside [0, 1].
    """
    rgb = np.asarray(rgb)
    alpha = np.asarray(alpha)
    if rgb.dtype != np.uint8 or alpha.dtype != np.uint8:
        raise ValueError(f"expected uint8 frames, got {rgb.dtype} and {alpha.dtype}")
    if rgb.ndim != 3 or rgb.shape[2] != 3 or alpha.shape != rgb.shape[:2]:
        raise ValueError(f"rgb {rgb.shape} and alpha {alpha.shape} must be (H, W, 3) and (H, W)")
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"strength {strength} must be in [0, 1]")
    a = alpha.astype(np.float64)[..., None] / 255.0
    base = rgb.astype(np.float64)
    tinted = (1.0 - strength) * base + strength * np.asarray(tint, np.float64)
    return np.floor(a * base + (1.0 - a) * tinted + 0.5).clip(0, 255).astype(np.uint8)


def clip_choices(release) -> dict[str, list]:
    """Values present in a release for each selector: actors as ``(shown, value)`` pairs (``actor 1`` shown, the
    id's ``actor_0001`` passed, as the viewer names clips), emotions by name, actions and scripts by number."""
    ids = release.clip_ids()
    return {
        "actor": [(f"actor {int(a.removeprefix('actor_'))}", a) for a in sorted({c.actor for c in ids})],
        "emotion": [e.value for e in sorted({c.emotion for c in ids}, key=lambda e: e.index)],
        "action": sorted({c.action_id for c in ids}),
        "script": sorted({c.script_id for c in ids}),
    }


def find_clip(release, actor: str, emotion: str, action: "int | str", script: "int | str"):
    """The release record of the chosen grid cell; a clear KeyError when the release lacks it."""
    actor_id = int(str(actor).removeprefix("actor_"))
    cid = ClipId(actor_id, parse_emotion(emotion), int(action), int(script))
    return release.record(cid)


def read_video_frame(path: "str | Path", index: int) -> np.ndarray:
    """Frame ``index`` (0-based) of a video as uint8 (H, W, 3), decoding in chunks up to it."""
    from ..readers.media import MediaError, iter_video_frames

    seen = 0
    for chunk in iter_video_frames(path, chunk_frames=16):
        if index < seen + len(chunk):
            return chunk[index - seen]
        seen += len(chunk)
    raise MediaError(f"{path} has {seen} frames; frame {index} does not exist")


def read_matte_frame(folder: "str | Path", index: int) -> np.ndarray:
    """Alpha frame ``index`` of a PNG folder as uint8 (H, W)."""
    from ..readers.media import MediaError, alpha_frame_files, read_png_gray

    files = alpha_frame_files(folder)
    if index not in files:
        raise MediaError(f"alpha folder {folder} has no frame {index} (frames 0..{max(files, default=-1)})")
    return read_png_gray(files[index])


def clip_text(record) -> str:
    """Markdown for the inspector: the assigned prompt, the ASR transcript and the Table 1 design."""
    design = TABLE1[record.cid.emotion]
    from ..presentation.labels import clip_display

    return "\n".join([
        f"**Clip** {clip_display(record.clip_id)} ({record.resolution}, {record.fps:g} fps, {record.duration:.2f} s, "
        f"{record.sample_rate} Hz)",
        "",
        f"**Prompt (assigned text):** {record.transcript}",
        "",
        f"**Transcript (ASR):** {record.asr_transcript or '(none)'}",
        "",
        f"**{design.emotion.value}** - movement style: {design.movement_style}.",
        f"Action templates: {'; '.join(design.action_templates)}.",
    ])

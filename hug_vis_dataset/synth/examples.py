"""The smallest inputs a docstring example needs: a one-actor release and a one-line emotion submission.

Docstring examples across the library (reading a release, validating it, opening a task's clips, scoring
a run) start from the same tiny grid; these two helpers make it, so each example shows only what it is about.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> release = example_release(root / "rel", emotions=["Happy", "Sad"])
    >>> sorted(p.name for p in (release / "metadata").iterdir())[:1]
    ['clips.csv']
    >>> sub = example_emotion_submission(root / "sub", {"actor_0001_happy_action_01_script_001": "happy"})
    >>> (sub / "predictions.jsonl").read_text()
    '{"clip_id": "actor_0001_happy_action_01_script_001", "input_setting": "text", "answer": "happy"}\\n'
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence

from .generate import synthesize


def example_release(root: "str | Path", emotions: Sequence[str] = ("Happy",), size: Sequence[int] = (64, 36)) -> Path:
    """A release of one actor, the given emotions, one action and one script: 0.2 s clips of ``size``
    (width, height), no simulated systems; about a tenth of a second per clip. Returns ``root``.

    Clip ids are ``actor_0001_<emotion>_action_01_script_001`` (the emotion in lower case).
    """
    synthesize(root, actors=1, emotions=list(emotions), actions=1, scripts=1, seconds=0.2, size=tuple(size),
               systems=False)
    return Path(root)


def example_emotion_submission(folder: "str | Path", answers: Mapping[str, str], setting: str = "text") -> Path:
    """A new folder holding ``predictions.jsonl``: one line per ``clip id -> answer``, all in ``setting``.
    Returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True)
    lines = [json.dumps({"clip_id": clip, "input_setting": setting, "answer": answer}, ensure_ascii=False)
             for clip, answer in answers.items()]
    (folder / "predictions.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return folder


__all__ = ["example_emotion_submission", "example_release"]

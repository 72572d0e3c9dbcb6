"""Deterministic synthetic mini-grid: a stand-in for the gated HUG-VIS release.

:func:`synthesize` writes the release tree of :mod:`hug_vis_dataset.datamodel.layout` for a small
grid (a seated figure over a green screen with an exact soft alpha, source-filter speech,
Mandarin transcripts) plus simulated system outputs whose quality is graded by
construction, so metrics can be checked to rank them as built.

Example:
    >>> import tempfile
    >>> s = synthesize(tempfile.mkdtemp(), actors=1, emotions=["Sad"], actions=1, scripts=1,
    ...                seconds=0.1, size=(32, 18), systems=False)
    >>> len(s.clip_ids), s.n_frames
    (1, 3)
"""

from .examples import example_emotion_submission, example_release
from .generate import SynthSummary, synthesize
from .prompts import PROMPTS, prompt_for

__all__ = ["PROMPTS", "SynthSummary", "example_emotion_submission", "example_release", "prompt_for", "synthesize"]

"""Purpose tags of the synthetic grid's seed sequences, in one place.

Every random draw of :mod:`hug_vis_dataset.synth` comes from ``numpy.random.SeedSequence`` keyed
by the user's seed, the clip's grid coordinates (where per clip) and one of these tags, so each
purpose has its own stream and adding a purpose never shifts another's draws. The values are part
of the output's identity: changing one changes the bytes that ``hugvis synth`` writes.

Example:
    >>> sorted({TAG_AUDIO, TAG_MOTION, TAG_ASR, TAG_SYSTEM, TAG_RATINGS, TAG_PEOPLE})
    [1, 2, 3, 100, 200, 300]
"""

from __future__ import annotations

#: Reference clips (generate.py): the voice, the body motion, the simulated ASR errors.
TAG_AUDIO, TAG_MOTION, TAG_ASR = 1, 2, 3
#: Base tag of the simulated systems (systems.py adds the task's index).
TAG_SYSTEM = 100
#: Simulated MOS ratings (ratings.py); above the systems' range 100 + task index.
TAG_RATINGS = 200
#: Simulated raters of the forced-choice emotion study (emotion_raters.py).
TAG_PEOPLE = 300

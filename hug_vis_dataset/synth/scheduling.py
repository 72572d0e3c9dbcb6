"""How the synthetic release's simulated studies pick their clips and schedule their raters, shared by the MOS and
pairwise studies (:mod:`hug_vis_dataset.synth.ratings`) and the emotion study
(:mod:`hug_vis_dataset.synth.emotion_raters`): the Space's own schedule (:func:`~hug_vis_dataset.studies.schedule.plan_session`),
raters taking turns.

Example:
    >>> ids = [f"actor_0001_happy_action_01_script_00{s}" for s in (1, 2, 3, 4)]
    >>> len(choose_clips(ids, seed=0, fraction=0.5))
    2
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Sequence

import numpy as np

from ..datamodel.grid import ClipId
from ..studies.schedule import plan_session, session_rng, session_seed
from ..studies.sessions import item_code
from ..studies.spec import StudySpec
from .seeds import TAG_RATINGS

_P_CLIPS = 0  # the purpose of the clip choice's seed sequence (the MOS study's since it was first drawn)


def _rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed), TAG_RATINGS, *map(int, keys)]))


def choose_clips(clip_ids: Sequence[str], seed: int, fraction: float = 0.5) -> list[str]:
    """A deterministic subset: ``ceil(fraction x n_a)`` clips of every actor ``a``, in grid order.

    Independent of the order of ``clip_ids`` (they are sorted by their grid fields first).

    Example:
        >>> ids = [f"actor_0001_happy_action_01_script_00{s}" for s in (1, 2, 3, 4)]
        >>> len(choose_clips(ids, seed=0, fraction=0.5)), choose_clips(ids, 0) == choose_clips(ids[::-1], 0)
        (2, True)
    """
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    parsed = sorted({ClipId.parse(c) for c in clip_ids})  # grid order, not the order given
    chosen: list[ClipId] = []
    for actor in sorted({c.actor_id for c in parsed}):
        mine = [c for c in parsed if c.actor_id == actor]
        k = math.ceil(fraction * len(mine))
        picked = _rng(seed, _P_CLIPS, actor).permutation(len(mine))[:k]
        chosen += [mine[i] for i in sorted(picked)]
    return [str(c) for c in chosen]


def schedule_sessions(spec: StudySpec, raters: Sequence[str], secret: bytes) -> list:
    """Sessions as the Space's session log would plan them, raters taking turns until nothing is left (the
    study's group rule applied: in the emotion study a rater meets each clip once)."""
    counts: Counter = Counter()
    seen: dict[str, set] = {r: set() for r in raters}
    groups: dict[str, set] = {r: set() for r in raters}
    taken: Counter = Counter()
    sessions, active = [], list(raters)
    while active:
        for rater in list(active):
            number = taken[rater] + 1
            planned = plan_session(spec.items(), spec.gold_items(), counts, seen[rater], spec.items_per_session,
                                   spec.n_gold(), spec.ratings_per_item, session_rng(spec.seed, rater, number),
                                   spec.group_rule, groups[rater])
            if not planned:
                active.remove(rater)
                continue
            taken[rater] = number
            counts.update(i.key for i in planned if i.kind == "system")
            seen[rater].update(i.key for i in planned)
            groups[rater].update(spec.group_of(i) for i in planned)
            entries = [(item_code(secret, rater, number, i), item) for i, item in enumerate(planned)]
            sessions.append((spec, rater, number, session_seed(spec.seed, rater, number), entries))
    return sessions


__all__ = ["choose_clips", "schedule_sessions"]

"""The balanced schedule of a study: which items a new rater session gets, in which order.

Pure functions of the study's items, the number of times each item was already assigned, and what
the rater has seen; no I/O (:mod:`.sessions` keeps the log).

Rules (``docs/MOS.md``):

* **Level by level.** Items are only taken from the lowest assignment count of the whole study, so
  every item reaches ``k`` assignments before any gets ``k + 1``, and none gets more than
  ``ratings_per_item``. When the lowest level holds only items this rater has already seen, the
  session ends shorter rather than push another item two levels ahead.
* **Never twice.** An item the rater was assigned before is never assigned to them again. Where the
  study has a group rule (:meth:`~.spec.StudySpec.group_of`: the emotion study's clips), a rater meets
  each group at most once, gold items included: nobody sees a clip's transcript after its silent video.
* **Even coverage.** Among the candidates, the next pick is the one whose systems, actor, emotion
  and task the session has seen least (the largest of those counts first, then their sum), ties
  broken by the session's seeded random order.
* **Order.** The session's items, with its gold items, are shuffled with the session's seed, which
  is recorded, so the order can be reproduced.

Example:
    >>> from hug_vis_dataset.studies.spec import study_from_mapping
    >>> spec = study_from_mapping({"tasks": {"voice_cloning": {"systems": ["a", "b"]}}, "ratings_per_item": 1,
    ...     "items_per_session": 3, "clips": ["actor_0001_happy_action_01_script_001",
    ...                                       "actor_0001_sad_action_01_script_001"]})
    >>> first = assign_items(spec.items(), {}, set(), 3, 1, session_rng(0, "r1", 1))
    >>> second = assign_items(spec.items(), {i.key: 1 for i in first}, set(), 3, 1, session_rng(0, "r2", 1))
    >>> len(first), len(second), {i.key for i in first} & {i.key for i in second}
    (3, 1, set())
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Callable, Mapping, Sequence

import numpy as np

from .spec import StudyItem


def session_rng(seed: int, rater: str, session: int) -> np.random.Generator:
    """The generator of one rater's session: from the study seed, the rater id and the session number.

    Example:
        >>> bool(session_rng(0, "r1", 1).integers(1 << 30) == session_rng(0, "r1", 1).integers(1 << 30))
        True
    """
    return np.random.default_rng(session_seed(seed, rater, session))


def session_seed(seed: int, rater: str, session: int) -> int:
    """The recorded seed of a session (63 bits from the study seed, rater id and session number).

    Example:
        >>> session_seed(0, "r1", 1) == session_seed(0, "r1", 1) != session_seed(0, "r2", 1)
        True
    """
    digest = hashlib.sha256(f"{int(seed)}\0{rater}\0{int(session)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def _features(item: StudyItem) -> list[tuple[str, object]]:
    clip = item.clip
    return [("system", s) for s in item.systems] + [("actor", clip.actor_id), ("emotion", clip.emotion.value),
                                                     ("task", item.task)]


#: A study's group rule (:meth:`~.spec.StudySpec.group_of`): the group of an item, None for none.
GroupOf = Callable[[StudyItem], "str | None"]


def assign_items(items: Sequence[StudyItem], counts: Mapping[str, int], seen: "set[str]", size: int, k: int,
                 rng: np.random.Generator, group_of: "GroupOf | None" = None,
                 seen_groups: "set[str] | frozenset[str]" = frozenset()) -> list[StudyItem]:
    """Up to ``size`` items for a new session, level by level (see the module docstring).

    Args:
        items: the study's items (:meth:`~.spec.StudySpec.items`).
        counts: times each item key was assigned so far (missing = 0).
        seen: item keys this rater was assigned before (never again).
        size: items wanted.
        k: ratings per item (the cap).
        rng: the session's generator (:func:`session_rng`).
        group_of: the study's group rule (None: none); a rater gets at most one item of a group, ever.
        seen_groups: the groups of every item this rater was assigned before.

    Returns:
        The chosen items in pick order (shuffle them for presentation: :func:`presentation_order`).
    """
    if not items or size < 1:
        return []
    # A seeded shuffle first: ties of the evenness score then go to the first in this order.
    pool = [items[i] for i in rng.permutation(len(items))]
    level = {item.key: int(counts.get(item.key, 0)) for item in pool}
    chosen: list[StudyItem] = []
    taken: set[str] = set()
    met: set = set(seen_groups)
    used: Counter = Counter()
    while len(chosen) < size:
        low = min(level.values())
        if low >= k:
            break  # every item has its k assignments: the study is fully scheduled
        candidates = [i for i in pool if level[i.key] == low and i.key not in seen and i.key not in taken
                      and (group_of is None or group_of(i) not in met)]
        if not candidates:
            break  # only items this rater saw are at the lowest level: stop rather than unbalance

        def cost(item: StudyItem) -> tuple[int, int]:
            values = [used[f] for f in _features(item)]
            return max(values), sum(values)

        pick = min(candidates, key=cost)
        chosen.append(pick)
        taken.add(pick.key)
        if group_of is not None:
            met.add(group_of(pick))
        level[pick.key] += 1
        used.update(_features(pick))
    return chosen


def choose_gold(gold: Sequence[StudyItem], n: int, rng: np.random.Generator,
                seen: "set[str] | frozenset[str]" = frozenset(), group_of: "GroupOf | None" = None,
                met: "set[str] | frozenset[str]" = frozenset()) -> list[StudyItem]:
    """``n`` gold items, alternating reference and degraded from a seeded first kind (so sessions
    with one gold item get either), each on a seeded random clip the rater has not had (``seen``:
    keys of items shown to this rater before) and not twice in one session; a gold item is shown
    again only once every one of its kind has been. With a group rule (``group_of``; ``met``: the
    groups this rater has met, this session's items included) a gold item is drawn only from a group
    not met, never shown again: fewer gold items rather than a clip seen twice.

    Example:
        >>> from hug_vis_dataset.studies.spec import study_from_mapping
        >>> spec = study_from_mapping({"tasks": {"voice_cloning": {"systems": ["a"]}}, "gold_rate": 0.5,
        ...                            "clips": ["actor_0001_happy_action_01_script_001"]})
        >>> kinds = [g.systems[0] for g in choose_gold(spec.gold_items(), 3, session_rng(0, "r", 1))]
        >>> kinds[0] != kinds[1] == "gold_degraded" or kinds[1] == "gold_reference"
        True
    """
    if not gold or n < 1:
        return []
    kinds = sorted({g.systems[0] for g in gold}, reverse=True)  # gold_reference first
    by_kind = {kind: [g for g in gold if g.systems[0] == kind] for kind in kinds}
    first = int(rng.integers(len(kinds)))
    out: list[StudyItem] = []
    met = set(met)
    for i in range(n):
        pool = by_kind[kinds[(first + i) % len(kinds)]]
        taken = {g.key for g in out}
        if group_of is not None:
            options = [g for g in pool if g.key not in seen and g.key not in taken and group_of(g) not in met]
            if not options:
                continue
        else:
            options = ([g for g in pool if g.key not in seen and g.key not in taken]
                       or [g for g in pool if g.key not in taken] or list(pool))
        pick = options[int(rng.integers(len(options)))]
        out.append(pick)
        if group_of is not None:
            met.add(group_of(pick))
    return out


def presentation_order(items: Sequence[StudyItem], rng: np.random.Generator) -> list[StudyItem]:
    """The session's items in a seeded random order (gold items mixed in anywhere)."""
    return [items[i] for i in rng.permutation(len(items))]


def plan_session(study_items: Sequence[StudyItem], gold: Sequence[StudyItem], counts: Mapping[str, int],
                 seen: "set[str]", items_per_session: int, n_gold: int, k: int,
                 rng: np.random.Generator, group_of: "GroupOf | None" = None,
                 seen_groups: "set[str] | frozenset[str]" = frozenset()) -> list[StudyItem]:
    """A whole new session: ``items_per_session - n_gold`` scheduled items plus ``n_gold`` gold
    items, shuffled; no gold when nothing is left to schedule (an empty session stays empty).
    ``group_of`` / ``seen_groups``: the study's group rule and the groups this rater met before.

    Example:
        >>> plan_session([], [], {}, set(), 5, 1, 3, session_rng(0, "r", 1))
        []
    """
    # At least one scheduled item: a session is never gold alone.
    regular = assign_items(study_items, counts, seen, max(items_per_session - n_gold, 1), k, rng, group_of,
                           seen_groups)
    if not regular:
        return []
    met = set(seen_groups) | ({group_of(i) for i in regular} if group_of is not None else set())
    return presentation_order(regular + choose_gold(gold, n_gold, rng, seen, group_of, met), rng)


def pair_sides(seed: int, code: str, systems: Sequence[str]) -> tuple[str, str]:
    """Which system of a pairwise item a rater sees as "A" (left) and which as "B" (right).

    Seeded by the session's recorded seed and the item's opaque code, so the side is random per rater
    and per item, reproducible from the session log, and stored with every answer (``left``).

    Example:
        >>> sides = {pair_sides(s, "i0123456789", ("x", "y")) for s in range(16)}
        >>> sorted(sides)
        [('x', 'y'), ('y', 'x')]
        >>> pair_sides(3, "i0123456789", ("x", "y")) == pair_sides(3, "i0123456789", ("x", "y"))
        True
    """
    first, second = systems
    digest = hashlib.sha256(f"{int(seed)}\0{code}\0sides".encode()).digest()
    return (second, first) if digest[0] & 1 else (first, second)

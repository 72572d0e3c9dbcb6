"""Simulated subjective study of the synthetic grid (``simulated_systems/mos_ratings.csv``).

**These are simulated raters, not human judgements.** They exist to exercise the MOS pipeline
(:mod:`hug_vis_dataset.mos`, ``hugvis mos``, the Tables 6/8/10 section of ``hugvis report``) end
to end on the synthetic grid; no conclusion about perception may be drawn from them.

For the simulated systems of ``audio_driven``, ``vision_driven`` and ``voice_cloning`` (names and
degradation ``strength`` from ``simulated_systems/manifest.json``) every criterion of the task
(:data:`hug_vis_dataset.mos.TASK_CRITERIA`) is rated on a 1..5 scale:

* **Clips**: a deterministic subset, ``ceil(clip_fraction x n)`` clips of every actor (so the
  actor-clustered bootstrap sees every actor), drawn by a seeded permutation.
* **Raters**: ``n_raters`` simulated raters; each chosen clip is rated by ``raters_per_clip`` of
  them (a seeded choice per clip), on every system and criterion of the task, as in a listening
  or viewing test where one rater sees all systems of a stimulus. Clips therefore have the same
  number of ratings; which raters they have differs, exercising the within-clip averaging.
* **Score**: ``round(q + bias_r + e)`` clipped to 1..5, with the latent quality
  ``q = TOP - SPAN x strength^2 + system_criterion + clip``. The quadratic makes mild
  degradations hard to tell apart (a ceiling near the top), the fixed per-(system, criterion)
  offset (sd :data:`SYSTEM_SD`) then occasionally reorders neighbouring systems, and ``clip``
  (sd :data:`CLIP_SD`, shared by the systems of a clip) models stimulus difficulty. Each rater
  has a fixed bias (sd :data:`RATER_BIAS_SD`) and an own noise level ``e ~ N(0, sd_r)`` with
  ``sd_r`` uniform in :data:`RATER_NOISE_SD`. So the MOS order follows ``strength`` on average,
  but not always at the top, as the paper found for MOS against automatic metrics.

Every draw comes from ``numpy.random.SeedSequence`` keyed by ``(seed, TAG_RATINGS, purpose,
...)``, and rows are written in a fixed order, so a seed gives the same bytes.

Example:
    >>> rows = simulate_ratings(["actor_0001_happy_action_01_script_001"],
    ...                         {"voice_cloning": {"clone_good": 0.1, "clone_poor": 0.8}}, seed=0)
    >>> len(rows)   # 1 clip x 3 raters x 2 systems x 2 criteria
    12
    >>> sorted({r["criterion"] for r in rows})
    ['emotion_naturalness', 'id_similarity']
    >>> all(1 <= r["score"] <= 5 for r in rows)
    True
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from ..grid import ClipId
from ..layout import SIMULATED_RATINGS_FILE
from ..mos import RATING_COLUMNS, TASK_CRITERIA
from .seeds import TAG_RATINGS

RATINGS_FILE = SIMULATED_RATINGS_FILE
TOP, SPAN = 4.6, 3.0  # latent quality of a perfect copy and its drop at strength 1
SYSTEM_SD = 0.3  # fixed per (system, criterion) offset: reorders neighbours now and then
CLIP_SD = 0.3  # stimulus difficulty shared by all systems of a clip
RATER_BIAS_SD = 0.35
RATER_NOISE_SD = (0.4, 0.8)
# Purposes of the seed sequences.
_P_CLIPS, _P_RATERS, _P_SYSTEM, _P_CLIP, _P_ASSIGN, _P_SCORE = range(6)
_TASK_INDEX = {task: i for i, task in enumerate(TASK_CRITERIA)}


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


def simulate_ratings(clip_ids: Sequence[str], systems: Mapping[str, Mapping[str, float]], seed: int = 0,
                     n_raters: int = 5, raters_per_clip: int = 3, clip_fraction: float = 0.5) -> list[dict]:
    """Simulated ratings rows (``rater, clip_id, model, criterion, score``) for the given systems.

    Args:
        clip_ids: the grid's clip ids; a subset per actor is rated (:func:`choose_clips`).
        systems: task -> {system name: degradation strength in [0, 1]}; tasks without MOS
            criteria (:data:`hug_vis_dataset.mos.TASK_CRITERIA`) are ignored.
        seed: every draw derives from it.
        n_raters: size of the rater pool (``sim_rater_01`` ...).
        raters_per_clip: raters drawn per clip (at least 2, so agreement is defined).
        clip_fraction: share of each actor's clips that is rated.

    Returns:
        Rows ordered by task, clip, rater, system, criterion; ``score`` an int in 1..5.

    Raises:
        ValueError: bad rater counts or a strength outside [0, 1].
    """
    if not 2 <= raters_per_clip <= n_raters:
        raise ValueError(f"need 2 <= raters_per_clip <= n_raters, got {raters_per_clip} of {n_raters}")
    raters = [f"sim_rater_{i + 1:02d}" for i in range(n_raters)]
    pool = _rng(seed, _P_RATERS)
    bias = pool.normal(0.0, RATER_BIAS_SD, n_raters)
    noise = pool.uniform(*RATER_NOISE_SD, n_raters)
    clips = choose_clips(clip_ids, seed, clip_fraction)
    rows: list[dict] = []
    for task in TASK_CRITERIA:  # fixed task order, whatever the mapping's order
        if task not in systems:
            continue
        criteria = TASK_CRITERIA[task]
        t = _TASK_INDEX[task]
        names = sorted(systems[task])
        for name in names:
            if not 0.0 <= float(systems[task][name]) <= 1.0:
                raise ValueError(f"strength of {task}/{name} must be in [0, 1], got {systems[task][name]}")
        # Offsets are keyed by the system's position in the sorted names, so adding a task or
        # renaming other tasks' systems does not change this task's draws.
        offset = {(name, c): _rng(seed, _P_SYSTEM, t, k, j).normal(0.0, SYSTEM_SD)
                  for k, name in enumerate(names) for j, c in enumerate(criteria)}
        for clip in clips:
            cid = ClipId.parse(clip)
            key = (cid.actor_id, cid.emotion.index, cid.action_id, cid.script_id)
            difficulty = _rng(seed, _P_CLIP, t, *key).normal(0.0, CLIP_SD)
            who = sorted(_rng(seed, _P_ASSIGN, t, *key).choice(n_raters, raters_per_clip, replace=False))
            draws = _rng(seed, _P_SCORE, t, *key).standard_normal((len(who), len(names), len(criteria)))
            for a, r in enumerate(who):
                for k, name in enumerate(names):
                    strength = float(systems[task][name])
                    for j, criterion in enumerate(criteria):
                        q = TOP - SPAN * strength ** 2 + offset[(name, criterion)] + difficulty
                        score = int(np.clip(np.rint(q + bias[r] + noise[r] * draws[a, k, j]), 1, 5))
                        rows.append({"rater": raters[r], "clip_id": clip, "model": name, "criterion": criterion,
                                     "score": score})
    return rows


def ratings_csv(rows: Sequence[Mapping]) -> str:
    """Rows as CSV text with the columns :data:`hug_vis_dataset.mos.RATING_COLUMNS` and ``\\n`` line ends."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(RATING_COLUMNS), lineterminator="\n", extrasaction="raise")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def write_simulated_ratings(systems_root: "str | Path", clip_ids: Sequence[str], seed: int = 0, **options) -> Path:
    """Write ``<systems_root>/mos_ratings.csv`` for the systems listed in ``manifest.json`` there.

    Args:
        systems_root: the ``simulated_systems`` folder (its manifest must exist).
        clip_ids: the grid's clip ids.
        seed: the synth seed.
        **options: ``n_raters``, ``raters_per_clip``, ``clip_fraction`` of :func:`simulate_ratings`.

    Returns:
        The path written.
    """
    root = Path(systems_root)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    systems = {task: {name: float(info["strength"]) for name, info in manifest["tasks"][task]["systems"].items()}
               for task in TASK_CRITERIA if task in manifest.get("tasks", {})}
    path = root / RATINGS_FILE
    path.write_text(ratings_csv(simulate_ratings(clip_ids, systems, seed=seed, **options)), encoding="utf-8")
    return path

"""One pass over a run's per-frame rows (numba): the per-actor sums and counts by frame index, the clips each part
has, and whether the rows came in the canonical order, without one temporary array per arithmetic step.

Example:
    >>> import numpy as np
    >>> z = np.zeros(3, dtype=np.int64)
    >>> sums, counts, has, ordered = frame_bincounts(z, z, np.array([0, 0, 1]), np.array([0, 1, 0]),
    ...     np.array([0, 1, 0]), np.array([1.0, 2.0, 4.0]), np.array([0, 1]), 1, 1, 2, 2, 2)
    >>> sums.tolist(), counts.tolist(), has.tolist(), bool(ordered)
    ([[[[1.0, 2.0], [4.0, 0.0]]]], [[[[1.0, 1.0], [1.0, 0.0]]]], [[[True, True]]], True)
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def frame_bincounts(m_codes: np.ndarray, k_codes: np.ndarray, c_codes: np.ndarray, clip_position: np.ndarray,
                    frame: np.ndarray, value: np.ndarray, rank: np.ndarray, n_models: int, n_metrics: int,
                    n_clips: int, n_actors: int, length: int):
    """``(sums, counts, has, ordered)``: sums and counts ``(models, metrics, actors, frame indices)``, ``has``
    ``(models, metrics, clips)``, and whether the rows are in the canonical order (model, clip rank, metric, frame)
    so summed in it (else the caller sorts them and calls again)."""
    sums = np.zeros((n_models, n_metrics, n_actors, length))
    counts = np.zeros((n_models, n_metrics, n_actors, length))
    has = np.zeros((n_models, n_metrics, n_clips), dtype=np.bool_)
    ordered = True
    previous = -1
    for i in range(len(value)):
        m, k, c, f = m_codes[i], k_codes[i], c_codes[i], frame[i]
        key = ((m * n_clips + rank[c]) * n_metrics + k) * length + f
        if key <= previous:
            ordered = False
        previous = key
        a = clip_position[c]
        sums[m, k, a, f] += value[i]
        counts[m, k, a, f] += 1.0
        has[m, k, c] = True
    return sums, counts, has, ordered


@njit(cache=True, nogil=True)
def sample_frame_sums(m_codes: np.ndarray, k_codes: np.ndarray, c_codes: np.ndarray, frame: np.ndarray,
                      value: np.ndarray, sample: np.ndarray, numbers: np.ndarray, rank: np.ndarray, n_metrics: int,
                      n_clips: int, length: int, slots: int):
    """``(sums, counts)`` over every (model, clip rank, metric, frame) slot of per-frame rows of several samples per
    clip, summed one sample number at a time in ``numbers``' order (a slot has one row per sample): the sum of a
    slot does not depend on the order the rows come in.

    >>> z = np.zeros(4, dtype=np.int64)
    >>> sums, counts = sample_frame_sums(z, z, z, np.array([0, 1, 0, 1]), np.array([1.0, 2.0, 3.0, 6.0]),
    ...                                  np.array([1, 1, 0, 0]), np.array([0, 1]), np.zeros(1, np.int64), 1, 1, 2, 2)
    >>> sums.tolist(), counts.tolist()
    ([4.0, 8.0], [2, 2])
    """
    sums = np.zeros(slots)
    counts = np.zeros(slots, dtype=np.int64)
    for number in numbers:
        for i in range(len(value)):
            if sample[i] != number:
                continue
            slot = ((m_codes[i] * n_clips + rank[c_codes[i]]) * n_metrics + k_codes[i]) * length + frame[i]
            sums[slot] += value[i]
            counts[slot] += 1
    return sums, counts


__all__ = ["frame_bincounts", "sample_frame_sums"]

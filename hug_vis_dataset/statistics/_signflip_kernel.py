"""The sign-flip null distribution of many pairs at once, by subset-sum tables (numba).

For one pair's per-actor sums ``d`` (``A`` actors) a sign pattern ``s`` gives ``T* = sum_a s_a d_a``. Written with
the pattern's bits (``s_a = 1 - 2 bit_a``), ``T* = sum(d) - 2 sum_{bit_a = 1} d_a``. The actors are split into
groups of at most :data:`GROUP_BITS`; per group, the table of ``-2 sum_{a in mask} d_a`` over every mask of the group
is built incrementally (one addition per entry), and each pattern's ``T*`` is ``sum(d)`` plus one table entry per
group: with 30 actors, three lookups instead of thirty multiply-adds, and no ``(patterns x pairs)`` matrix held in
memory. Each ``T*`` is compared with the observed ``sum(d)`` as :func:`hug_vis_dataset.statistics.paired.pair_p_values`
compares them (ties within ``100 eps sum|d|``, which bounds the rounding of either way of summing).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

#: Actors per subset-sum table (2^8 entries: building and reading the tables of 30 actors cost least).
GROUP_BITS = 8


def pattern_masks(signs: np.ndarray) -> np.ndarray:
    """``(R,)`` int64: each pattern's flipped actors as one bit mask (empty when there are more than 62 actors:
    the one-sided shortcut of :func:`null_counts` is then not taken).

    Example:
        >>> pattern_masks(np.array([[1.0, -1.0, -1.0], [-1.0, 1.0, 1.0]])).tolist()
        [6, 1]
    """
    bits = (np.asarray(signs) < 0).astype(np.int64)
    if bits.shape[1] > 62:
        return np.zeros(0, dtype=np.int64)
    return (bits << np.arange(bits.shape[1], dtype=np.int64)[None, :]).sum(axis=1)


def pattern_codes(signs: np.ndarray) -> np.ndarray:
    """``(R, G)`` int64: each pattern's bits (``-1`` -> 1) as one mask per group of :data:`GROUP_BITS` actors.

    Example:
        >>> pattern_codes(np.array([[1.0, -1.0, -1.0], [-1.0, 1.0, 1.0]])).tolist()
        [[6], [1]]
    """
    bits = (np.asarray(signs) < 0).astype(np.int64)
    n_r, n_a = bits.shape
    groups = max(1, -(-n_a // GROUP_BITS))
    codes = np.zeros((n_r, groups), dtype=np.int64)
    for a in range(n_a):
        codes[:, a // GROUP_BITS] |= bits[:, a] << (a % GROUP_BITS)
    return codes


@njit(cache=True)
def _count_rows(sums: np.ndarray, codes: np.ndarray, masks: np.ndarray, n_actors: int, start: int, stop: int,
                tables: np.ndarray, above: np.ndarray, below: np.ndarray) -> None:
    n_groups = codes.shape[1]
    eps = np.finfo(np.float64).eps
    for i in range(start, stop):
        row = sums[i]
        total = 0.0
        magnitude = 0.0
        for a in range(n_actors):
            total += row[a]
            magnitude += abs(row[a])
        tol = 100.0 * eps * magnitude
        # One-sided rows (every actor's sum >= 0, or every one <= 0, each non-zero one beyond half the tolerance,
        # the common case of two clearly different systems): a pattern is on the far side exactly when it flips a
        # non-zero actor, and equal otherwise; one AND per pattern instead of the tables.
        if masks.shape[0]:
            positive = 0
            negative = 0
            small = False
            nonzero = 0
            for a in range(n_actors):
                if row[a] != 0.0:
                    nonzero |= 1 << a
                    if 2.0 * abs(row[a]) <= tol:
                        small = True
                    if row[a] > 0.0:
                        positive += 1
                    else:
                        negative += 1
            if not small and (positive == 0 or negative == 0):
                flipped = 0
                for r in range(masks.shape[0]):
                    flipped += (masks[r] & nonzero) != 0
                above[i] = flipped if negative else 0
                below[i] = flipped if positive else 0
                continue
        for g in range(n_groups):
            first = g * GROUP_BITS
            size = min(GROUP_BITS, n_actors - first)
            table = tables[g]
            table[0] = 0.0
            for bit in range(size):  # masks with highest bit ``bit``: the masks below it, minus 2 d
                step = 1 << bit
                shift = -2.0 * row[first + bit]
                for mask in range(step):
                    table[step + mask] = table[mask] + shift
        up = 0
        down = 0
        hi = total + tol
        lo = total - tol
        for r in range(codes.shape[0]):
            t = total
            for g in range(n_groups):
                t += tables[g, codes[r, g]]
            up += t > hi  # branch-free: a pattern's side is a coin flip under the null, and mispredicted
            down += t < lo  # branches would cost more than the sum itself
        above[i] = up
        below[i] = down


@njit(cache=True, parallel=True)
def null_counts(sums: np.ndarray, codes: np.ndarray, masks: np.ndarray, n_actors: int) -> tuple[np.ndarray, np.ndarray]:
    """``(above, below)``, each ``(N,)``: per row of ``sums`` (``(N, A)``, finite), how many patterns give ``T*``
    above ``T + tol`` and below ``T - tol`` (``T = sum(row)``, ``tol = 100 eps sum|row|``). Rows are split into
    one block per thread, each with its own tables."""
    n_rows = sums.shape[0]
    n_groups = codes.shape[1]
    above = np.zeros(n_rows, dtype=np.int64)
    below = np.zeros(n_rows, dtype=np.int64)
    n_blocks = min(n_rows, 64)
    for k in prange(n_blocks):
        start = k * n_rows // n_blocks
        stop = (k + 1) * n_rows // n_blocks
        tables = np.zeros((n_groups, 1 << GROUP_BITS))
        _count_rows(sums, codes, masks, n_actors, start, stop, tables, above, below)
    return above, below


__all__ = ["GROUP_BITS", "null_counts", "pattern_codes", "pattern_masks"]

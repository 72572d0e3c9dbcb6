"""An exactly rounded running sum, so a per-clip mean does not depend on how frames were chunked.

``np.sum`` of each chunk, added up, rounds differently for each grouping of the frames: SSIM of one
clip differed in its last bit between chunks of 3 and of 32 frames. :class:`ExactSum` keeps
Shewchuk's non-overlapping partials (the algorithm behind :func:`math.fsum`), so its total is the
correctly rounded sum of every value added, whatever the order or grouping, in bounded memory (the
partials are few: at most one per binary exponent range in use).

Example:
    >>> total = ExactSum()
    >>> total.add([1e16, 1.0]); total.add([-1e16])
    >>> total.value(), (1e16 + 1.0) - 1e16
    (1.0, 0.0)
    >>> a, b = ExactSum(), ExactSum()
    >>> values = [0.1 * k for k in range(1, 31)]
    >>> a.add(values); _ = [b.add(values[i:i + 7]) for i in range(0, 30, 7)]
    >>> a.value() == b.value() == __import__("math").fsum(values)
    True
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np


class ExactSum:
    """A running sum of floats, correctly rounded when read (:meth:`value`), independent of grouping."""

    def __init__(self) -> None:
        self._partials: list[float] = []

    def add(self, values: "Iterable[float] | np.ndarray") -> None:
        """Add every value (an array is flattened; values are taken as float64)."""
        partials = self._partials
        for x in np.asarray(values, dtype=np.float64).ravel().tolist():
            kept = 0
            for y in partials:
                if abs(x) < abs(y):
                    x, y = y, x
                high = x + y
                low = y - (high - x)
                if low:
                    partials[kept] = low
                    kept += 1
                x = high
            partials[kept:] = [x]

    def value(self) -> float:
        """The correctly rounded sum of everything added so far."""
        return math.fsum(self._partials)

"""Former home of the reference sources and readers, now :mod:`hug_vis_dataset.references`.

Kept so that ``from hug_vis_dataset.scoring.references import ...`` keeps working for code that
has not moved yet (the task scorers in :mod:`hug_vis_dataset.tasks`); new code imports from
:mod:`hug_vis_dataset.references`. Delete this module once nothing imports it.

Example:
    >>> from hug_vis_dataset import references
    >>> open_reference_source is references.open_reference_source
    True
"""

from __future__ import annotations

from ..references import *  # noqa: F401,F403 - the whole public API, unchanged
from ..references import __all__  # noqa: F401

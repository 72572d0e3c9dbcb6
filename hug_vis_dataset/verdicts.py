"""Old import path of the verdict layer, kept for one release: use :mod:`hug_vis_dataset.statistics.verdicts`
(docs/CHANGELOG.md)."""

from .statistics.verdicts import *  # noqa: F401,F403
from .statistics.verdicts import (BOOTSTRAP, CANNOT_TELL, COLLAPSED, LEGEND, MARKS, NOT_SEPARABLE,  # noqa: F401
                                  RESAMPLES, SEED, SEPARABLE, VERDICTS, Verdict, collapsed, compare,
                                  neighbour_verdicts, ranking, verdict_counts, word_of)

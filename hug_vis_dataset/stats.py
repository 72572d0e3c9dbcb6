"""Old import path of the statistics helpers, kept for one release: use :mod:`hug_vis_dataset.statistics`.

``from hug_vis_dataset.stats import bootstrap_ci, spearman, ...`` keeps working; new code imports
:mod:`hug_vis_dataset.statistics.basics` (helpers), :mod:`hug_vis_dataset.statistics.generic` (the generic
bootstrap) and the engine's other modules directly (docs/CHANGELOG.md).
"""

from .statistics.basics import (BootstrapCI, OLSFit, actor_of_clip, cluster_draws, format_interval,  # noqa: F401
                                minmax, ols_fit, percentile_ci, spearman)
from .statistics.generic import bootstrap_ci  # noqa: F401

"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.reporting.figures` (docs/CHANGELOG.md)."""

from .reporting.figures import (label_of, task_names, EMOTION_NAMES, task_label, variance_term, ols_fit,
    spearman, EMOTION_COLORS, column_maxima, FIG8_TITLE, FIG8_CAPTION, FIG9_TITLE, FIG9_CAPTION,
    emotion_difficulty_figure, plot_emotion_difficulty, agreement_figure, plot_agreement,
    plot_source_difficulty, DTSSD_UNIT, plot_motion_difficulty, crosstask_figures, variance_figure,
    plot_variance_decomposition)  # noqa: F401

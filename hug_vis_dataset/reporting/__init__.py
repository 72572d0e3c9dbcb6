"""The reporting commands (``hugvis report``, ``hugvis mos``) over the modules that read stored rows:
:mod:`hug_vis_dataset.report`, :mod:`hug_vis_dataset.report_findings`, :mod:`hug_vis_dataset.mos`,
:mod:`hug_vis_dataset.tables`, :mod:`hug_vis_dataset.figures` and :mod:`hug_vis_dataset.stats`.
"""

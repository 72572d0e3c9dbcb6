"""Reporting: everything that turns stored rows and ratings into tables, analyses and pages, never scoring.

It owns ``hugvis report`` and ``hugvis mos`` (:mod:`.commands`), the report itself (:mod:`.report`:
task tables, Figs. 8-11, the cross-task analyses, ``build_report``), the Findings section
(:mod:`.findings`: variance decomposition, neighbour significance, boundary errors, metric-MOS
agreement, noise floors), the MOS tables and the MOS-metric view (:mod:`.mos_tables`), the pairwise
block of the Findings (:mod:`.pairwise`) and the standalone HTML page (:mod:`.html`). The table
renderers it shares with the leaderboard and the study status live one layer below, in
:mod:`hug_vis_dataset.presentation.tables`; the MOS arithmetic in :mod:`hug_vis_dataset.studies.mos`, the study's logs and
quality control in :mod:`hug_vis_dataset.studies`.
"""

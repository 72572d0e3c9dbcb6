"""Subjective studies: the study file (:mod:`.spec`), the balanced schedule (:mod:`.schedule`) and
the per-rater sessions with their opaque item codes (:mod:`.sessions`). ``docs/MOS.md`` describes
the protocols; the math of quality control and of pairwise preference lives in
:mod:`hug_vis_dataset.metrics.rater_qc` and :mod:`hug_vis_dataset.metrics.preference`."""

"""The human study, everything but its forms: what the Space's rater tabs, ``hugvis mos``, ``hugvis mos status``
and the report's MOS tables call.

It owns the study file (:mod:`.spec`), the balanced schedule (:mod:`.schedule`), the per-rater sessions
with their opaque item codes (:mod:`.sessions`), the rating scale's anchors (:mod:`.anchors`); the ratings
log the Space appends to (:mod:`.ratings`, latest rating wins) and its pairwise answers
(:mod:`.preferences`), a pairwise CSV export (:mod:`.answers`), a rater's blind session over them
(:mod:`.blind_study`: items by opaque code, gold items, degraded anchors), the study the Space runs over a
release (:mod:`.study_desk`: what may be rated, an item's media, storing ratings, the MOS so far, the
ratings file's location); the MOS arithmetic of a ratings CSV
(:mod:`.mos`), rater quality control (:mod:`.rater_qc`, the rules; :mod:`.mos_qc`, the raters the MOS
tables keep), Bradley-Terry strengths (:mod:`.bradley_terry`) and the study's status with the MOS
table of a log (:mod:`.status`). ``docs/MOS.md`` describes the protocols. The Gradio layout and wiring live in
:mod:`hug_vis_dataset.space` (``mos_study``, ``session_form``, ``pairwise_form``: forms only); the
report's blocks in :mod:`hug_vis_dataset.reporting`; the MOS-metric agreement metric in
:mod:`hug_vis_dataset.metrics.mos_agreement`.
"""

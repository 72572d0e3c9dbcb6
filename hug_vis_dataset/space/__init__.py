"""The HUG-VIS explorer Space: app logic kept in the library so ``spaces/hug-vis-explorer/app.py`` stays thin.

The paper's Tables 4-11 and their leaderboards are :mod:`hug_vis_dataset.datamodel.paper_tables` (the report and
the metric-MOS agreement read them too).

Modules:
    uploads: safe extraction of untrusted submission zips.
    explorer: the explorer's callbacks (plain functions of their inputs); ui: its components and events.
    inspector: clip look-up and matte overlay frames for the clip inspector.
    mos_study, pairwise_form, session_form: the rating study's forms (layout and wiring only; the study's
        logic, its rating store and the MOS are :mod:`hug_vis_dataset.studies`').
    app: ``build_app`` (the ``gr.Blocks``) and ``launch``.
    commands: ``hugvis space``.
"""

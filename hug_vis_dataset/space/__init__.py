"""The HUG-VIS explorer Space: app logic kept in the library so ``spaces/hug-vis-explorer/app.py`` stays thin.

The paper's Tables 4-11 and their leaderboards are :mod:`hug_vis_dataset.paper_tables` (the report and
the metric-MOS agreement read them too).

Modules:
    uploads: safe extraction of untrusted submission zips.
    ratings: the append-only, validated MOS rating store (one rating per rater and item, the latest wins).
    inspector: clip look-up and matte overlay frames for the clip inspector.
    mos_study: the MOS study tab (rating callbacks and components).
    app: ``build_app`` (the ``gr.Blocks``) and ``launch``.
    commands: ``hugvis space``.
"""

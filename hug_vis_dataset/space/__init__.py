"""The HUG-VIS explorer Space: app logic kept in the library so ``spaces/hug-vis-explorer/app.py`` stays thin.

Modules:
    paper_tables: the paper's Tables 4-11 as data, leaderboards with best/second-best marks.
    uploads: safe extraction of untrusted submission zips.
    ratings: the append-only, validated MOS rating store.
    inspector: clip look-up and matte overlay frames for the clip inspector.
    app: ``build_app`` (the ``gr.Blocks``) and ``launch``.
    commands: ``hugvis space``.
"""

"""The demo: the whole path on the synthetic grid (synthesize, validate, build, score, report).

It sits above every feature it chains (synth, validate, hub, scoring, report), so no feature
depends on it. :mod:`~hug_vis_dataset.demo.pipeline` holds :func:`run_demo` (and
:func:`build_front_doors`, its first steps: the release, ``hug-vis/`` and ``hugvis/<name>/``);
:mod:`~hug_vis_dataset.demo.commands` registers ``hugvis demo``.
"""

from __future__ import annotations

from .pipeline import DEMO_GRID, QUICK_GRID, build_front_doors, run_demo, score_baselines

__all__ = ["DEMO_GRID", "QUICK_GRID", "build_front_doors", "run_demo", "score_baselines"]

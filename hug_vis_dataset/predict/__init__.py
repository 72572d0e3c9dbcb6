"""From a model to a submission: ``hugvis predict`` and its Python API.

``predict(task, model, dataset, out)`` runs a model, or the task's built-in baseline, on every
clip of a release tree, a built dataset repo or a Hub id, and writes exactly the submission
layout ``hugvis evaluate`` reads (docs/SCORING.md), so predict then evaluate is the whole loop.
Generators that run as their own scripts use ``export_inputs`` then ``collect_outputs``.
Runs are resumable per clip and log every clip's outcome; see docs/PREDICT.md.

Modules: :mod:`.clips` (clips and their media, from the scoring references), :mod:`.runner`
(per-clip loop, resume, log), :mod:`.emotion` (prompt protocol, keyword baseline),
:mod:`.adapters` (callables, OpenAI-compatible chat, transformers), :mod:`.matting`
(frame-chunk models, chroma-key baseline), :mod:`.generation` (baselines, export, collect),
:mod:`.api`, :mod:`.commands`.
"""

from .api import collect_outputs, export_inputs, predict
from .runner import PredictionError, PredictSetupError, PredictSummary

__all__ = ["predict", "export_inputs", "collect_outputs", "PredictSummary", "PredictionError", "PredictSetupError"]

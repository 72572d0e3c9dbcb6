"""``hugvis audit``: how much a metric moves under ordinary processing (noise floors) and what the
grid can detect (:mod:`hug_vis_dataset.metrics.power`).

* :mod:`.transforms` -- the named, deterministic processing steps (codecs, frame rate, scale, shifts);
* :mod:`.robustness` -- scores processed variants of the reference media (or of a submission) as
  pseudo-systems and reports each metric's shift per transform;
* :mod:`.commands` -- the command line.
"""

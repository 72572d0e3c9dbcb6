"""Pretrained networks used by the generation metrics (SyncNet, ArcFace, Inception).

Every loader takes its file through :mod:`hug_vis_dataset.weights`, so a missing file raises
:class:`hug_vis_dataset.weights.WeightsMissingError` with instructions instead of downloading
silently or producing a number.
"""

"""Metric math by family: arrays in, numbers out.

``matting`` (+ ``_matting_kernels``), ``frames`` (PSNR, SSIM, LPIPS), ``fid``, ``identity`` (CSIM and
the shared cosine), ``sync`` (Sync-C/D pipeline), ``voice`` (DNSMOS, UTMOS, speaker similarity),
``emotion`` (answer parsing, accuracy) and ``crosstask`` (Eq. 1-6). Facts about each metric (name,
label, direction, units, weights, paper table) live in :mod:`hug_vis_dataset.catalog`, whose row names
the function here that computes it (``MetricSpec.implementation``: a per-frame or per-clip function, or
a kernel computing several rows at once); the per-task scorers that decode media, load models and call
those functions live in :mod:`hug_vis_dataset.tasks`.
"""

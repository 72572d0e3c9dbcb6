"""``hugvis cache``: what the content-addressed feature cache (:mod:`hug_vis_dataset.cache.features`) holds."""

"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.cache.features` (docs/CHANGELOG.md)."""

from .cache.features import (ToolUsageError, DigestCache, sha256_file, discard, mark_cache, write_file,
    write_text_file, read_json, FEATURE_VERSIONS, ENV_DISABLE, cache_folder, reference_digest, FeatureCache,
    shared_cache)  # noqa: F401

"""The HUG-VIS Hub dataset: build a Parquet repo with one config per task, and load it.

``hugvis build RELEASE_DIR REPO_DIR`` (:func:`build_repo`) writes the repo; users load it with
``datasets.load_dataset(REPO, config)`` or :func:`load_config`; :func:`load` finds the repo itself
(explicit path, ``$HUGVIS_DATASET``, ``demo_out/hug-vis``, the Hub id) and fails fast offline.
Configs and columns: schema.py.

Example:
    >>> CONFIG_NAMES
    ('clips', 'emotion', 'audio_driven', 'vision_driven', 'voice_cloning', 'matting')
"""

from __future__ import annotations

from .schema import CONFIG_COLUMNS, CONFIG_NAMES, DEFAULT_CONFIG, check_config, features
from .build_info import BuildError, BuildOptions, BuildReport, ShardEntry
from .builder import build_repo, iter_rows, verify_repo
from .loading import load, load_config, resolve_dataset

__all__ = [
    "CONFIG_COLUMNS", "CONFIG_NAMES", "DEFAULT_CONFIG", "BuildError", "BuildOptions", "BuildReport", "ShardEntry",
    "build_repo", "check_config", "features", "iter_rows", "load", "load_config", "resolve_dataset", "verify_repo",
]

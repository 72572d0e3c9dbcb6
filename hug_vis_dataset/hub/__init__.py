"""The HUG-VIS Hub dataset: build a Parquet repo with one config per task, and load it.

``hugvis build RELEASE_DIR REPO_DIR`` (:func:`build_repo`) writes the repo; users load it with
``datasets.load_dataset(REPO, config)`` or :func:`load_config`. Configs and columns: schema.py.

Example:
    >>> CONFIG_NAMES
    ('clips', 'emotion', 'audio_driven', 'vision_driven', 'voice_cloning', 'matting')
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .schema import CONFIG_COLUMNS, CONFIG_NAMES, DEFAULT_CONFIG, check_config, features
from .build_info import BuildError, BuildOptions, BuildReport, ShardEntry
from .builder import build_repo, iter_rows, verify_repo

__all__ = [
    "CONFIG_COLUMNS", "CONFIG_NAMES", "DEFAULT_CONFIG", "BuildError", "BuildOptions", "BuildReport", "ShardEntry",
    "build_repo", "check_config", "features", "iter_rows", "load_config", "verify_repo",
]


def load_config(repo: "str | Path", config: str = DEFAULT_CONFIG, split: "str | None" = "test", **kwargs: Any):
    """``datasets.load_dataset(repo, config, split=split, **kwargs)`` with the config name checked.

    ``repo`` is a local repo folder (works offline) or a Hub id. Pass ``streaming=True`` for an
    IterableDataset, ``cache_dir=...`` for a fresh cache (with YAML configs, a file rewritten at
    the same path is not noticed by an existing cache).

    Example:
        >>> load_config("/nonexistent", "mattingg")
        Traceback (most recent call last):
        ...
        ValueError: unknown config 'mattingg'; expected one of clips, emotion, audio_driven, vision_driven, voice_cloning, matting
    """
    import datasets

    check_config(config)
    return datasets.load_dataset(str(repo), config, split=split, **kwargs)

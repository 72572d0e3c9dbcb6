"""Loading the built dataset: :func:`load_config` for a known folder or id, :func:`load` to find it.

:func:`load` is the library's dataset front door for a user outside ``demo_out/``: it finds the
built repo by explicit path, ``$HUGVIS_DATASET``, the demo's output, then the Hub id, and fails at
once offline (:mod:`hug_vis_dataset.hub_access`) instead of letting ``datasets`` retry for ~23 s.

Example:
    >>> import os, tempfile
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {ENV_DATASET: ""}):
    ...     resolve_dataset(cwd=tempfile.mkdtemp()), resolve_dataset("my/repo")
    (('hugvis/hug-vis', 'Hub id'), ('my/repo', 'argument'))
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..hub_access import (DEMO_DATASET_DIR, DEMO_OUT, ENV_DATASET, HUB_DATASET_ID, LOAD_ALTERNATIVE, fetch_or_explain,
                          looks_like_hub_id, offline_flag)
from .build_info import MANIFEST
from .schema import DEFAULT_CONFIG, check_config


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


def demo_dataset_candidates(cwd: "str | Path | None" = None) -> list[Path]:
    """Where :func:`load` looks for the demo's built repo: ``./hug-vis`` (run from ``demo_out/``)
    and ``./demo_out/hug-vis`` (run from the checkout)."""
    base = Path.cwd() if cwd is None else Path(cwd)
    return [base / DEMO_DATASET_DIR, base / DEMO_OUT / DEMO_DATASET_DIR]


def resolve_dataset(dataset: "str | Path | None" = None, cwd: "str | Path | None" = None) -> "tuple[str, str]":
    """Where :func:`load` reads from: ``(location, how_found)``.

    Order: the explicit ``dataset``, ``$HUGVIS_DATASET``, the demo's output (a folder of
    :func:`demo_dataset_candidates` holding the builder's ``manifest.json``), then the Hub id
    ``hugvis/hug-vis``.
    """
    if dataset is not None:
        return str(dataset), "argument"
    if os.environ.get(ENV_DATASET):
        return os.environ[ENV_DATASET], ENV_DATASET
    for candidate in demo_dataset_candidates(cwd):
        if (candidate / MANIFEST).is_file():
            return str(candidate), "demo output"
    return HUB_DATASET_ID, "Hub id"


def load(config: str = DEFAULT_CONFIG, split: "str | None" = "test", dataset: "str | Path | None" = None,
         **kwargs: Any):
    """The HUG-VIS dataset's ``config`` as a ``datasets.Dataset``, from wherever it is.

    Resolved by :func:`resolve_dataset` (explicit path, ``$HUGVIS_DATASET``, ``demo_out/hug-vis``,
    then the Hub id ``hugvis/hug-vis``). A local built repo is read offline; the Hub id is tried
    only when the Hub answers (or, with an offline flag set, from the ``datasets`` cache), so an
    offline machine gets :class:`~hug_vis_dataset.hub_access.HubUnreachableError` at once.

    Args:
        config: ``clips``, ``emotion``, ``audio_driven``, ``vision_driven``, ``voice_cloning`` or ``matting``.
        split: the split (the repo has ``test``); None returns the ``DatasetDict``.
        dataset: a built repo folder or Hub id; overrides the search.
        kwargs: passed to ``datasets.load_dataset`` (``streaming=True``, ``cache_dir=...``).

    Raises:
        HubUnreachableError: nothing local was found and the Hub cannot be reached.
        ValueError: unknown config.

    Example (after ``make demo``, from the checkout; not run in doctests)::

        from hug_vis_dataset.hub import load
        ds = load("matting")                 # reads demo_out/hug-vis
        print(ds.num_rows, ds.features["alpha_matte"])
    """
    check_config(config)
    location, _ = resolve_dataset(dataset)
    if not looks_like_hub_id(location):  # a folder, or a path that datasets names as missing
        return load_config(location, config, split=split, **kwargs)

    def from_hub(local_only: bool):
        if local_only and not offline_flag():
            # The probe found no Hub and no offline flag is set: datasets would retry for ~23 s.
            raise ConnectionError("the Hub endpoint did not answer")
        return load_config(location, config, split=split, **kwargs)

    return fetch_or_explain(location, LOAD_ALTERNATIVE, from_hub)

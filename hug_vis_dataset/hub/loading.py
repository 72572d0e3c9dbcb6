"""Loading the built dataset: :func:`load_config` for a known folder or id, :func:`load` to find it.

:func:`load` is the library's dataset front door for a user outside ``demo_out/``: it finds the
built repo by explicit path, ``$HUGVIS_DATASET``, the demo's output, then the Hub id, and fails at
once offline (:mod:`hug_vis_dataset.readers.hub_access`) instead of letting ``datasets`` retry for ~23 s.

Example:
    >>> import os, tempfile
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {ENV_DATASET: ""}):
    ...     resolve_dataset(cwd=tempfile.mkdtemp()), resolve_dataset("my/repo")
    (('hugvis/hug-vis', 'Hub id'), ('my/repo', 'argument'))
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from ..readers.hub_access import (DEMO_DATASET_DIR, DEMO_OUT, ENV_DATASET, HUB_DATASET_ID, LOAD_ALTERNATIVE, fetch_or_explain,
                          looks_like_hub_id, offline_flag)
from ..readers.parquet_files import ParquetSchema, open_parquet
from .build_info import MANIFEST
from .schema import COLUMN_SPECS, CONFIG_COLUMNS, DEFAULT_CONFIG, check_config

#: What to do about a shard whose columns are not its config's (the card's ``features`` would lie).
SHARD_FIX = ("rebuild the repo with hugvis build (the shard was edited after the build, or the repo was built "
             "by another version of the toolkit)")


def _arrow_type(kind: str) -> Any:
    import pyarrow as pa

    if kind in ("video", "audio", "image"):  # datasets' Video/Audio/Image storage
        return pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    return {"string": pa.string(), "int32": pa.int32(), "float64": pa.float64(), "label": pa.int64()}[kind]


@functools.lru_cache(maxsize=None)
def shard_schema(config: str) -> ParquetSchema:
    """The declared schema of every shard of ``config``: exactly its columns, with their Arrow types.

    Built from :data:`~hug_vis_dataset.hub.schema.COLUMN_SPECS` without importing ``datasets``; it
    equals ``features(config).arrow_schema`` (tested).

    Example:
        >>> schema = shard_schema("matting")
        >>> list(schema.required)
        ['clip_id', 'actor_id', 'emotion', 'action_id', 'script_id', 'video', 'alpha_matte', 'num_frames']
        >>> str(schema.required["alpha_matte"]), schema.extra_allowed
        ('struct<bytes: binary, path: string>', False)
    """
    columns = {name: _arrow_type(COLUMN_SPECS[name][0]) for name in CONFIG_COLUMNS[check_config(config)]}
    return ParquetSchema(f"a shard of the {config!r} config", columns, {}, False, SHARD_FIX)


def shard_config(path: "str | Path") -> "str | None":
    """The config a shard belongs to by its folder (``data/<config>/...``), or None for another layout.

    Example:
        >>> shard_config("/r/data/matting/test-00000.parquet"), shard_config("/r/other/x.parquet")
        ('matting', None)
    """
    name = Path(path).parent.name
    return name if name in CONFIG_COLUMNS else None


def open_shard(path: "str | Path", config: "str | None" = None, **options: Any):
    """A shard opened with pyarrow, its footer's schema checked against :func:`shard_schema`.

    Args:
        path: the shard.
        config: its config (default: :func:`shard_config`; a shard outside ``data/<config>/`` is
            only checked to be Parquet with a ``clip_id``).
        options: passed to ``pyarrow.parquet.ParquetFile`` (``buffer_size``, ``pre_buffer``).

    Raises:
        InputFileError: truncated or not Parquet, or a column missing, extra or of another type
            (naming the shard, the column and :data:`SHARD_FIX`).
    """
    config = config or shard_config(path)
    declared = (shard_schema(config) if config is not None
                else ParquetSchema("a HUG-VIS shard", {"clip_id": "string"}, fix=SHARD_FIX))
    return open_parquet(path, declared, **options)


def config_shards(repo: "str | Path", config: str) -> list[Path]:
    """The shards ``datasets`` loads for ``config`` (the card's ``data/<config>/test-*.parquet``), sorted."""
    return sorted((Path(repo) / "data" / config).glob("test-*.parquet"))


def check_config_shards(repo: "str | Path", config: str) -> int:
    """Check the footer of every shard of ``config`` in a local repo; returns how many were checked.

    Raises:
        InputFileError: the first shard that does not match (see :func:`open_shard`).
    """
    shards = config_shards(repo, config)
    for shard in shards:
        open_shard(shard, config)
    return len(shards)


def load_config(repo: "str | Path", config: str = DEFAULT_CONFIG, split: "str | None" = "test", **kwargs: Any):
    """``datasets.load_dataset(repo, config, split=split, **kwargs)`` with the config name checked.

    ``repo`` is a local repo folder (works offline) or a Hub id. The shards of a local folder are
    checked against the config's schema first (:func:`check_config_shards`), so a shard with an
    extra column or without ``alpha_matte`` is one error naming it, not a cast failure or a column
    of ``None``. Pass ``streaming=True`` for an
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
    if Path(repo).is_dir():  # before datasets casts (or fails on) a shard that is not the config's
        check_config_shards(repo, config)
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
    offline machine gets :class:`~hug_vis_dataset.readers.hub_access.HubUnreachableError` at once.

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

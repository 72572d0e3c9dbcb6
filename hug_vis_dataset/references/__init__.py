"""The reference side of a scoring run: where the references come from and how to read them.

- :mod:`~hug_vis_dataset.references.sources` -- :func:`open_reference_source`: a release tree,
  a built dataset repo folder or a Hub id, behind one small interface (clips, per-clip
  properties, references by kind, provenance).
- :mod:`~hug_vis_dataset.references.locators` -- row locators: a reference pointing at one media
  cell of a repo's Parquet shard, read one row at a time.
- :mod:`~hug_vis_dataset.references.readers` -- reference media (alpha chunks, a file path,
  audio samples, the source portrait) from a path or a row locator alike.
- :mod:`~hug_vis_dataset.references.hub_download` -- fetching a repo from the Hub.

The names below are the public API; import them from here.

Example:
    >>> is_row_locator(RowLocator("/r/s.parquet", 0, "video", "c").to_ref())
    True
"""

from __future__ import annotations

from .hub_download import HUB_CARD, HUB_MANIFEST, download_repo, looks_like_hub_id
from .locators import LOCATOR_PREFIX, DatasetSourceError, RowLocator, is_row_locator, open_parquet, read_cell_bytes
from .readers import (IMAGE_SUFFIXES, iter_reference_alpha, iter_reference_files, read_reference_audio,
                      read_reference_portrait, reference_alpha_info, reference_file, reference_files)
from .sources import (METADATA_COLUMNS, TASK_COLUMNS, TASK_CONFIG, TASK_TEXTS, ReferenceClip, ReferenceSource, ReleaseSource,
                      RepoSource, VERIFY_CACHE_FILE, git_revision, is_dataset_repo, is_release_tree, iter_columns,
                      open_reference_source, verify_manifest_shards)

__all__ = [
    "DatasetSourceError", "HUB_CARD", "HUB_MANIFEST", "IMAGE_SUFFIXES", "LOCATOR_PREFIX", "METADATA_COLUMNS",
    "ReferenceClip", "ReferenceSource", "ReleaseSource", "RepoSource", "RowLocator", "TASK_COLUMNS", "TASK_CONFIG", "TASK_TEXTS",
    "VERIFY_CACHE_FILE", "download_repo", "git_revision", "is_dataset_repo", "is_release_tree", "is_row_locator", "iter_columns",
    "iter_reference_alpha", "iter_reference_files", "looks_like_hub_id", "open_parquet", "open_reference_source",
    "read_cell_bytes", "read_reference_audio", "read_reference_portrait", "reference_alpha_info", "reference_file",
    "reference_files", "verify_manifest_shards",
]

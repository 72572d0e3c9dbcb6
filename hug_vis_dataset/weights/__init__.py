"""The model-weights layer: one registry of every pretrained file, resolution, download, hashes.

Modules: :mod:`~.registry` (the table and its errors), :mod:`~.resolve` (finding and downloading),
:mod:`~.verify` (pinned hash, loadability, status), :mod:`~.commands` (``hugvis weights``). The
names below are the public API; import them from here.

Every metric that needs a pretrained network asks this module for a local path with
:func:`resolve`. A file is looked up, in this order:

1. an explicit ``path`` argument (a file, or a folder holding ``spec.filename``);
2. the per-file environment variable ``HUGVIS_WEIGHT_<NAME>`` (upper case), then the folder
   ``$HUGVIS_WEIGHTS_DIR`` (``<dir>/<filename>`` or ``<dir>/<name>/<filename>``); either one set to
   a path that is not a file / not a folder is an error (:class:`WeightsDirError` for the folder),
   never silently passed over;
3. where the file comes from: inside an installed pip package (``source="package"``), the
   ``huggingface_hub`` cache at the pinned revision (``source="hub"``), or this project's cache
   folder for upstream URLs (``source="url"``; ``$HUGVIS_CACHE_DIR`` or ``~/.cache/hugvis``).

With ``download=True`` (what ``hugvis weights download`` does) a missing Hub file is fetched with
``hf_hub_download`` and a missing URL file with :mod:`urllib`. The sha256 of the file, where the
registry pins one, is checked (streaming, cached by path/size/mtime) before the path is returned.
When nothing is found a :class:`WeightsMissingError` names the file, its origin, the revision,
the overrides and the download command: a metric never skips silently nor invents a score.

Example:
    >>> spec = REGISTRY["lpips_alex_linear"]
    >>> spec.source, spec.filename
    ('package', 'alex.pth')
    >>> resolve("lpips_alex_linear").name
    'alex.pth'
    >>> env_var("syncnet_v2")
    'HUGVIS_WEIGHT_SYNCNET_V2'
"""

from __future__ import annotations

from ..hashing import sha256_file
from .registry import (ENV_CACHE, ENV_DIR, ENV_PREFIX, REGISTRY, UnknownWeightsError, WeightSpec, WeightsDirError,
                       WeightsFormatError, WeightsHashError, WeightsMissingError, cache_dir, download_command, env_var,
                       get_spec, missing_message, register, weights_dir)
from .resolve import PINNED_HASHES, check_hash, download, find_weight, resolve
from .verify import WeightStatus, check_loadable, format_problem, is_available, missing_note, weight_status

__all__ = [
    "ENV_CACHE", "ENV_DIR", "ENV_PREFIX", "PINNED_HASHES", "REGISTRY", "UnknownWeightsError", "WeightSpec", "WeightStatus",
    "WeightsDirError", "WeightsFormatError", "WeightsHashError", "WeightsMissingError", "cache_dir", "check_hash", "check_loadable",
    "download", "download_command",
    "env_var", "find_weight", "format_problem", "get_spec", "is_available", "missing_message",
    "missing_note", "register", "resolve", "sha256_file", "weight_status", "weights_dir",
]

"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.readers.digests` (docs/CHANGELOG.md)."""

from .readers.digests import (open_regular, BLOCK_BYTES, digest_file, sha256_file)  # noqa: F401

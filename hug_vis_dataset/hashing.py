"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.outputs.hashing` (docs/CHANGELOG.md)."""

from .outputs.hashing import (BLOCK_BYTES, digest_file, sha256_file, DigestCache)  # noqa: F401

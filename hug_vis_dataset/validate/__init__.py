"""Validate a release tree against the grid and its own metadata.

``hugvis validate RELEASE_DIR [--json] [--grid SPEC] [--num-proc N] [--strict]`` checks
(:mod:`~.checks`; the grid subset in :mod:`~.gridspec`, findings in :mod:`~.report`, the
command in :mod:`~.commands`):

* the metadata CSV: required columns, parseable rows, no duplicated clip id, the id agrees
  with the actor/emotion/action/script columns and with every path (layout.py);
* completeness against the expected grid: the full 8,400-unit grid, or the subset the
  release declares in ``metadata/grid.json`` (written by ``hugvis synth``), or ``--grid``;
* per clip, reading every file (a corrupt file is a reported problem, never a crash):
  audio, video and alpha exist; video and alpha frame counts agree; every alpha PNG is
  8-bit single-channel at the video resolution; audio duration equals the video duration
  within one frame; fps, sample rate, duration and resolution agree with the CSV; the
  transcript file exists.

* every path of the tree that no CSV row nor the layout accounts for, the top level included
  (:func:`~.checks.unlisted_media`): a warning, not an error.

Every problem is reported with its clip id. Exit status 0 when clean (warnings allowed), 1
otherwise; with ``--strict`` warnings also give 1.

Example:
    >>> import tempfile
    >>> from hug_vis_dataset.synth import example_release
    >>> root = example_release(tempfile.mkdtemp(), emotions=["Sad"])
    >>> validate_release(root).ok
    True
"""

from __future__ import annotations

from .checks import check_clip, unlisted_media, validate_release
from .gridspec import (GRID_DECLARATION, GridDeclarationError, GridSpec, GridSpecError, expected_grid, grid_option,
                       write_grid_declaration)
from .report import ERROR, WARNING, Problem, ValidationReport

__all__ = [
    "ERROR", "GRID_DECLARATION", "GridDeclarationError", "GridSpec", "GridSpecError", "Problem", "ValidationReport",
    "WARNING", "check_clip", "expected_grid", "grid_option", "unlisted_media", "validate_release",
    "write_grid_declaration",
]

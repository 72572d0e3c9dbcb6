"""Outputs: the one guard every write of the toolkit goes through. See docs/ARCHITECTURE.md, "Outputs".

* :mod:`~hug_vis_dataset.outputs.guard`: :func:`claim` (a command declares what it reads and the one folder
  it writes) and :class:`Output` (every write, replacement and deletion inside that folder);
* :mod:`~hug_vis_dataset.outputs.ledger`: markers, ledgers and units (what the toolkit made);
* :mod:`~hug_vis_dataset.outputs.scratch`: the toolkit's own things wherever they lie (:func:`discard`,
  :func:`write_file`);
* :mod:`~hug_vis_dataset.outputs.transient`: work, staging, scratch and cache folders;
* :mod:`~hug_vis_dataset.outputs.files`: the primitives (whole-or-absent files, the umask, nothing left by a
  stop), used only inside this package.
"""

from .files import current_umask, file_mode, folder_mode
from .guard import Output, check_overlaps, claim, claimed, output_option
from .ledger import (GUARD_FILES, KINDS, LEDGER, MARKER, NotOursError, OutputError, OverlapError, read_marker, resolve,
                     seal_unit, unit_problem)
from .scratch import discard, put_scratch, write_file, write_text_file
from .transient import (CLEANED_KINDS, FolderBusyError, clean_transients, hold, is_run_folder_name, is_transient,
                        mark_cache, mark_scratch, mark_work, scratch, scratch_folder, transient_folder)
from .transient import MARKER as TRANSIENT_MARKER  # a held work folder's marker (MARKER above: an output's)

__all__ = ["CLEANED_KINDS", "FolderBusyError", "GUARD_FILES", "KINDS", "LEDGER", "MARKER", "NotOursError", "Output",
           "OutputError", "OverlapError", "TRANSIENT_MARKER", "check_overlaps", "claim", "claimed", "clean_transients", "current_umask",
           "discard", "file_mode", "folder_mode", "hold", "is_run_folder_name", "is_transient", "mark_cache",
           "mark_scratch", "mark_work", "output_option", "put_scratch", "read_marker", "resolve", "scratch", "scratch_folder",
           "seal_unit", "transient_folder", "unit_problem", "write_file", "write_text_file"]

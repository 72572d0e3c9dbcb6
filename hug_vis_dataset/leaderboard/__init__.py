"""The leaderboard: a results store (every scored run with its provenance) and the views over it.

Modules:
    store: :class:`LocalResultsStore` (a folder) and :class:`HubResultsStore` (a Hub dataset repo
        mirrored locally and appended to by commits); model-name rules.
    board: rows by origin (paper, submitted, synthetic, subset), headers from the catalog, one
        ranking rule per comparable group, notes naming the fix of every empty cell.
"""

from .board import Board, board, board_rows, mos_rows, paper_rows, people_rows, stored_rows
from .store import (HubResultsStore, LocalResultsStore, ModelNameError, StoreError, StoredRun, check_model_name,
                    open_store)

__all__ = ["Board", "board_rows", "HubResultsStore", "LocalResultsStore", "ModelNameError", "StoreError", "StoredRun", "board",
           "check_model_name", "mos_rows", "open_store", "paper_rows", "people_rows", "stored_rows"]

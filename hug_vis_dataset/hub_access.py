"""Old import path, kept for one release: moved to :mod:`hug_vis_dataset.readers.hub_access` (docs/CHANGELOG.md)."""

from .readers.hub_access import (HugvisError, HUB_DATASET_ID, HUB_RESULTS_ID, HUB_REQUESTS_ID, DEMO_OUT,
    DEMO_DATASET_DIR, DEMO_MODULES_DIR, ENV_DATASET, PROBE_TIMEOUT_S, DATASET_ALTERNATIVE, LOAD_ALTERNATIVE,
    T, HubUnreachableError, looks_like_hub_id, offline_flag, hub_endpoint, unreachable_reason,
    require_reachable, is_connection_failure, fetch_or_explain)  # noqa: F401

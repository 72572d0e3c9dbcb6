"""Fetching a HUG-VIS dataset repo from the Hugging Face Hub by id (``owner/name``).

Only the card, the manifest, the checksums and the task's shards (plus ``clips``) are fetched, at
the requested revision; the snapshot folder is then read like a local repo folder.
"""

from __future__ import annotations

from pathlib import Path

from ..readers.hub_access import DATASET_ALTERNATIVE, HubUnreachableError, fetch_or_explain, looks_like_hub_id
from .locators import DatasetSourceError

HUB_MANIFEST = "manifest.json"
HUB_CARD = "README.md"
__all__ = ["HUB_CARD", "HUB_MANIFEST", "download_repo", "looks_like_hub_id"]


def download_repo(repo_id: str, revision: "str | None" = None, task: "str | None" = None) -> tuple[Path, str]:
    """Fetch a dataset repo from the Hub (card, manifest and the task's shards); (folder, commit).

    Offline (an offline flag set, or the endpoint not answering within
    :data:`~hug_vis_dataset.readers.hub_access.PROBE_TIMEOUT_S`) only a cached snapshot is used, so
    nothing waits on retries.

    Raises:
        HubUnreachableError: the Hub cannot be reached and nothing is cached; names the local alternative.
        DatasetSourceError: unknown repo or revision, gated without access.
    """
    try:
        from huggingface_hub import snapshot_download
    except ImportError as err:  # pragma: no cover - huggingface_hub ships with datasets
        raise DatasetSourceError(f"huggingface_hub is needed to read {repo_id} from the Hub: {err}") from None
    patterns = [HUB_CARD, HUB_MANIFEST, "checksums.sha256"]
    patterns += [f"data/{task}/*", "data/clips/*"] if task else ["data/*"]

    def fetch(local_only: bool) -> str:
        return snapshot_download(repo_id, repo_type="dataset", revision=revision, allow_patterns=patterns,
                                 local_files_only=local_only)

    try:
        named = f"{repo_id} (revision {revision})" if revision else repo_id
        folder = Path(fetch_or_explain(named, DATASET_ALTERNATIVE, fetch))
    except HubUnreachableError:
        raise
    except Exception as err:  # noqa: BLE001 - 401/404 and bad revisions all mean "cannot use it"
        raise DatasetSourceError(
            f"cannot fetch the dataset {repo_id!r} (revision {revision or 'main'}) from the Hugging Face Hub: "
            f"{type(err).__name__}: {err}; {DATASET_ALTERNATIVE}") from None
    # Snapshot folders are named by the commit they hold: the exact revision scored.
    return folder, folder.name

"""A local stand-in of the Hub API for the results store: the few ``HfApi`` methods it calls.

It keeps each repo's history as snapshots in memory and behaves like the Hub where the store
relies on it: ``create_commit`` with a ``parent_commit`` that is no longer the head is refused
(the Hub answers 412), ``snapshot_download`` writes the files of one revision into ``local_dir``.
Its method signatures are checked against ``huggingface_hub.HfApi`` by the tests, so it cannot
drift from the real client's calling convention.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path


class ConflictError(RuntimeError):
    """The commit's parent is not the branch head any more."""


@dataclass
class RepoInfo:
    id: str
    sha: str


@dataclass
class CommitInfo:
    oid: str
    commit_message: str


class LocalHub:
    """Repos as lists of (sha, {path: bytes}) snapshots; no network, no files outside ``local_dir``."""

    def __init__(self) -> None:
        self.repos: dict[str, list[tuple[str, dict[str, bytes]]]] = {}
        self.calls: list[str] = []

    def create_repo(self, repo_id: str, repo_type: "str | None" = None) -> None:
        self.repos.setdefault(repo_id, [(hashlib.sha1(repo_id.encode()).hexdigest(), {})])

    def _history(self, repo_id: str):
        if repo_id not in self.repos:
            raise FileNotFoundError(f"404: repository {repo_id} not found")
        return self.repos[repo_id]

    def repo_info(self, repo_id: str, revision: "str | None" = None, repo_type: "str | None" = None, **_: object):
        self.calls.append("repo_info")
        return RepoInfo(repo_id, self._history(repo_id)[-1][0])

    def snapshot_download(self, repo_id: str, repo_type: "str | None" = None, revision: "str | None" = None,
                          local_dir: "str | None" = None, **_: object) -> str:
        self.calls.append("snapshot_download")
        history = self._history(repo_id)
        files = next((f for sha, f in history if sha == revision), None) if revision else history[-1][1]
        if files is None:
            raise FileNotFoundError(f"revision {revision} not found in {repo_id}")
        for path, data in files.items():
            target = Path(local_dir) / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return str(local_dir)

    def create_commit(self, repo_id: str, operations, commit_message: str, repo_type: "str | None" = None,
                      revision: "str | None" = None, parent_commit: "str | None" = None, **_: object):
        self.calls.append("create_commit")
        history = self._history(repo_id)
        head, files = history[-1]
        if parent_commit is not None and parent_commit != head:
            raise ConflictError(f"412: parent commit {parent_commit[:8]} is not the head {head[:8]} of {repo_id}")
        files = dict(files)
        for op in operations:
            source = op.path_or_fileobj
            data = Path(source).read_bytes() if isinstance(source, (str, Path)) else (
                source if isinstance(source, bytes) else io.BytesIO(source.read()).getvalue())
            files[op.path_in_repo] = data
        sha = hashlib.sha1((head + commit_message + str(sorted(files))).encode()).hexdigest()
        history.append((sha, files))
        return CommitInfo(sha, commit_message)

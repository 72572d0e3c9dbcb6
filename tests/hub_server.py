"""A Hub stand-in served over HTTP on 127.0.0.1, for the real ``huggingface_hub`` client.

The real client (``HfApi``, ``snapshot_download``, ``create_commit``) talks to it through
``HF_ENDPOINT``, so code under test runs exactly as against the Hub, in this process or in
subprocesses (the leaderboard's workers). It implements the endpoints those calls use, with the
Hub's behaviour where callers rely on it:

* ``GET /api/{type}s/{repo}[/revision/{rev}]``: repo info (``sha``, ``siblings``);
* ``GET /api/{type}s/{repo}/tree/{rev}[/{path}]``: the file list (recursive or not), sizes, blob ids;
* ``HEAD|GET /[datasets/]{repo}/resolve/{rev}/{path}``: files with ``X-Repo-Commit`` and ``ETag``;
* ``POST .../preupload/{rev}`` (every file "regular") and ``POST .../commit/{rev}`` (NDJSON):
  a commit whose ``parentCommit`` is not the branch head is refused with **412**, as on the Hub;
* ``GET /api/whoami-v2``: the user of a bearer token.

Repos keep their whole history in memory (one snapshot per commit), so any revision can be read.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator
from urllib.parse import parse_qs, unquote, urlsplit


def blob_id(data: bytes) -> str:
    """Git's blob id of a file (what the Hub reports as ``oid`` and ``ETag`` of a regular file)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    history: list = field(default_factory=list)  # [(commit sha, message, {path: bytes})]

    def snapshot(self, revision: str) -> "tuple[str, dict[str, bytes]] | None":
        if revision in ("main", "", None):
            sha, _, files = self.history[-1]
            return sha, files
        for sha, _, files in self.history:
            if sha == revision or (len(revision) >= 7 and sha.startswith(revision)):
                return sha, files
        return None


class HubState:
    """Repos by ``(type, id)``, tokens by value; every change under one lock."""

    def __init__(self) -> None:
        self.repos: dict[tuple[str, str], Repo] = {}
        self.tokens: dict[str, str] = {}
        self.lock = threading.Lock()
        self.commits: list[tuple[str, str, str]] = []  # (repo id, message, user) of every accepted commit
        self.refused: int = 0  # commits refused with 412

    def create(self, repo_id: str, repo_type: str = "dataset", files: "dict[str, bytes] | None" = None) -> str:
        """Make a repo (with an initial commit of ``files``); returns the head sha."""
        with self.lock:
            repo = self.repos.setdefault((repo_type, repo_id), Repo())
            sha = hashlib.sha1(f"{repo_type}/{repo_id}/{len(repo.history)}".encode()).hexdigest()
            previous = repo.history[-1][2] if repo.history else {}
            repo.history.append((sha, "initial commit", {**previous, **(files or {})}))
            return sha

    def head(self, repo_id: str, repo_type: str = "dataset") -> str:
        return self.repos[(repo_type, repo_id)].history[-1][0]

    def files(self, repo_id: str, repo_type: str = "dataset", revision: str = "main") -> dict[str, bytes]:
        return dict(self.repos[(repo_type, repo_id)].snapshot(revision)[1])

    def commit(self, repo_id: str, repo_type: str, parent: "str | None", message: str, user: str,
               additions: dict[str, bytes], deletions: list[str]) -> "str | None":
        """The new head, or None when ``parent`` is not the head (the caller answers 412)."""
        with self.lock:
            repo = self.repos[(repo_type, repo_id)]
            head, _, files = repo.history[-1]
            if parent is not None and not head.startswith(parent):
                self.refused += 1
                return None
            files = {p: d for p, d in files.items() if p not in deletions}
            files.update(additions)
            sha = hashlib.sha1(f"{head}\n{message}\n{len(repo.history)}".encode()).hexdigest()
            repo.history.append((sha, message, files))
            self.commits.append((repo_id, message, user))
            return sha


def _tree_entries(files: dict[str, bytes], path: str, recursive: bool) -> "list[dict] | None":
    prefix = path.strip("/")
    inside = {p: d for p, d in files.items() if not prefix or p.startswith(prefix + "/")}
    if prefix and not inside:
        return None
    entries, folders = [], set()
    for name, data in sorted(inside.items()):
        rest = name[len(prefix) + 1:] if prefix else name
        parts = rest.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(([prefix] if prefix else []) + parts[:depth])
            if (recursive or depth == 1) and folder not in folders:
                folders.add(folder)
                entries.append({"type": "directory", "oid": blob_id(folder.encode()), "size": 0, "path": folder})
        if recursive or len(parts) == 1:
            entries.append({"type": "file", "oid": blob_id(data), "size": len(data), "path": name})
    return entries


def make_handler(state: HubState):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # quiet
            pass

        # -- helpers ----------------------------------------------------------------------
        def _send(self, status: int, body: bytes = b"", headers: "dict | None" = None, head: bool = False) -> None:
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _json(self, status: int, data: object, headers: "dict | None" = None) -> None:
            self._send(status, json.dumps(data).encode(), {"Content-Type": "application/json", **(headers or {})})

        def _error(self, status: int, message: str, code: "str | None" = None) -> None:
            self._json(status, {"error": message}, {"X-Error-Code": code} if code else None)

        def _user(self) -> "str | None":
            auth = self.headers.get("Authorization", "")
            return state.tokens.get(auth.removeprefix("Bearer ").strip()) if auth.startswith("Bearer ") else None

        def _repo(self, repo_type: str, repo_id: str) -> "Repo | None":
            repo = state.repos.get((repo_type, repo_id))
            if repo is None:
                self._error(404, f"Repository Not Found for url: {self.path}", "RepoNotFound")
            return repo

        def _snapshot(self, repo: Repo, revision: str):
            found = repo.snapshot(unquote(revision))
            if found is None:
                self._error(404, f"Invalid rev id: {revision}", "RevisionNotFound")
            return found

        # -- routes -----------------------------------------------------------------------
        def do_HEAD(self) -> None:  # noqa: N802
            self._resolve(head=True)

        def do_GET(self) -> None:  # noqa: N802
            url = urlsplit(self.path)
            parts = url.path.strip("/").split("/")
            query = parse_qs(url.query)
            if parts[:2] == ["api", "whoami-v2"]:
                user = self._user()
                return self._json(200, {"name": user, "type": "user"}) if user else self._error(401, "Invalid token")
            if parts[0] == "api" and len(parts) >= 4 and parts[1] in ("datasets", "models"):
                repo_type, repo_id = parts[1][:-1], f"{parts[2]}/{parts[3]}"
                repo = self._repo(repo_type, repo_id)
                if repo is None:
                    return
                if len(parts) == 4 or parts[4] == "revision":
                    found = self._snapshot(repo, parts[5] if len(parts) > 5 else "main")
                    if found:
                        sha, files = found
                        return self._json(200, {"id": repo_id, "sha": sha, "private": False,
                                                "siblings": [{"rfilename": p} for p in sorted(files)]})
                    return
                if parts[4] == "tree":
                    found = self._snapshot(repo, parts[5])
                    if not found:
                        return
                    path = unquote("/".join(parts[6:]))
                    recursive = query.get("recursive", ["False"])[0].lower() in ("true", "1")
                    entries = _tree_entries(found[1], path, recursive)
                    if entries is None:
                        return self._error(404, f"{path} not found", "EntryNotFound")
                    return self._json(200, entries)
            return self._resolve(head=False)

        def _resolve(self, head: bool) -> None:
            parts = urlsplit(self.path).path.strip("/").split("/")
            repo_type = "dataset" if parts[0] == "datasets" else "model"
            if parts[0] == "datasets":
                parts = parts[1:]
            if len(parts) < 5 or parts[2] != "resolve":
                return self._error(404, f"no route {self.path}")
            repo = self._repo(repo_type, f"{parts[0]}/{parts[1]}")
            if repo is None:
                return
            found = self._snapshot(repo, parts[3])
            if not found:
                return
            sha, files = found
            name = unquote("/".join(parts[4:]))
            if name not in files:
                return self._error(404, f"Entry not found: {name}", "EntryNotFound")
            data = files[name]
            self._send(200, data, {"X-Repo-Commit": sha, "ETag": f'"{blob_id(data)}"',
                                   "Content-Type": "application/octet-stream"}, head=head)

        def do_POST(self) -> None:  # noqa: N802
            parts = urlsplit(self.path).path.strip("/").split("/")
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if len(parts) < 6 or parts[0] != "api" or parts[1] not in ("datasets", "models"):
                return self._error(404, f"no route {self.path}")
            repo_type, repo_id, action = parts[1][:-1], f"{parts[2]}/{parts[3]}", parts[4]
            repo = self._repo(repo_type, repo_id)
            if repo is None:
                return
            user = self._user()
            if user is None:
                return self._error(401, "Invalid credentials in Authorization header")
            if action == "preupload":
                head_files = repo.history[-1][2]
                files = json.loads(body)["files"]
                return self._json(200, {"files": [
                    {"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                     "oid": blob_id(head_files[f["path"]]) if f["path"] in head_files else None} for f in files]})
            if action == "commit":
                lines = [json.loads(line) for line in body.splitlines() if line.strip()]
                header = next(item["value"] for item in lines if item["key"] == "header")
                additions = {item["value"]["path"]: base64.b64decode(item["value"]["content"])
                             for item in lines if item["key"] == "file"}
                deletions = [item["value"]["path"] for item in lines if item["key"] == "deletedFile"]
                sha = state.commit(repo_id, repo_type, header.get("parentCommit"), header.get("summary", ""), user,
                                   additions, deletions)
                if sha is None:
                    return self._error(412, "A commit has happened since. Please refresh and try again.")
                prefix = "datasets/" if repo_type == "dataset" else ""
                return self._json(200, {"success": True, "commitOid": sha,
                                        "commitUrl": f"http://{self.headers['Host']}/{prefix}{repo_id}/commit/{sha}"})
            return self._error(404, f"no route {self.path}")

    return Handler


@contextlib.contextmanager
def serve_hub(state: "HubState | None" = None) -> Iterator[tuple[str, HubState]]:
    """Serve ``state`` on 127.0.0.1 (a free port) for the ``with`` block; yields ``(url, state)``.

    ``huggingface_hub`` reads ``HF_HUB_OFFLINE`` once, at its first import: a test earlier in the same
    process that imported it under ``monkeypatch.setenv("HF_HUB_OFFLINE", "1")`` would leave the client
    offline for good, so the block turns the client's own flag off and restores it afterwards.
    """
    from huggingface_hub import constants

    was_offline, constants.HF_HUB_OFFLINE = constants.HF_HUB_OFFLINE, False
    try:
        with _serve(state) as served:
            yield served
    finally:
        constants.HF_HUB_OFFLINE = was_offline


@contextlib.contextmanager
def _serve(state: "HubState | None") -> Iterator[tuple[str, HubState]]:
    state = state or HubState()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", state
    finally:
        server.shutdown()
        server.server_close()

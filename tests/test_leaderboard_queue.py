"""The leaderboard's request queue: submission rules, atomic claims, take-over, status.

Everything runs against the HTTP Hub stand-in (``tests/hub_server.py``) through the real
``huggingface_hub`` client, so the commits, the 412 conflicts and the downloads are the client's own.
The end-to-end run with two worker processes on a local Ray is ``tests/test_leaderboard_workers.py``.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from hub_server import serve_hub
from hug_vis_dataset.leaderboard.queue_view import status_html, status_lines, status_rows
from hug_vis_dataset.leaderboard.requests import (FAILED, PENDING, RUNNING, QueueLimits, RequestError, RequestsRepo,
                                                  ScoringRequest, claimable, parse_request, request_path)
from hug_vis_dataset.leaderboard.store import HubResultsStore, ModelNameError
from hug_vis_dataset.leaderboard.submit import submit_request
from hug_vis_dataset.leaderboard.worker import QueueWorker

CLIP = "actor_0001_happy_action_01_script_001"


def files_of(folder: Path, prefix: str = "") -> dict[str, bytes]:
    return {prefix + str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("queue") / "release"
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=2, seconds=0.3, size=(32, 18))
    return root


@pytest.fixture()
def hub(release, monkeypatch):
    from huggingface_hub import HfApi

    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")

    with serve_hub() as (url, state):
        state.tokens.update({"alice-token": "alice", "bob-token": "bob", "worker-token": "worker"})
        state.create("alice/good", "dataset", files_of(release / "simulated_systems" / "matting" / "matte_good"))
        state.create("hugvis/requests")
        state.create("hugvis/results")

        def api(token="alice-token"):
            return HfApi(endpoint=url, token=token)

        yield url, state, api


def queue(api, token="alice-token", **kw):
    return RequestsRepo("hugvis/requests", api=api(token), **kw)


def test_submission_pins_the_commit_and_records_the_listing(hub, release):
    _, state, api = hub
    request = submit_request(queue(api), "matting", "alice/good", "main", "GoodNet", "alice")
    good = release / "simulated_systems" / "matting" / "matte_good"
    files = [p for p in good.rglob("*") if p.is_file()]
    assert request.revision == state.head("alice/good")  # "main" was pinned to its commit
    assert (request.status, request.clips, request.files) == (PENDING, 4, len(files))
    assert request.total_bytes == sum(p.stat().st_size for p in files)
    stored = json.loads(state.files("hugvis/requests")[request_path("matting", "GoodNet")])
    assert parse_request(stored, request.path) == request
    assert [h["status"] for h in stored["history"]] == [PENDING]


def test_submission_rules_each_refuse_in_one_line(hub, release):
    _, state, api = hub
    q = queue(api)
    files = files_of(release / "simulated_systems" / "matting" / "matte_good")
    state.create("alice/messy", "dataset", {**files, "notes.pdf": b"x", "misc/a.txt": b"y"})
    with pytest.raises(RequestError, match=r"2 entr\(y/ies\) do not follow the matting layout \(misc: .*notes.pdf: unexpected file type"):
        submit_request(q, "matting", "alice/messy", "main", "Messy", "alice")
    with pytest.raises(RequestError, match="no file follows the voice_cloning layout|do not follow the voice_cloning"):
        submit_request(q, "voice_cloning", "alice/good", "main", "Wrong", "alice")
    with pytest.raises(ModelNameError, match="must be 1-64"):
        submit_request(q, "matting", "alice/good", "main", "bad name", "alice")
    with pytest.raises(RequestError, match="cannot be listed .*check the id"):
        submit_request(q, "matting", "alice/none", "main", "Ghost", "alice")
    with pytest.raises(RequestError, match="cannot be listed"):
        submit_request(q, "matting", "alice/good", "f" * 40, "Ghost", "alice")
    with pytest.raises(RequestError, match=r"over the per-file limit"):
        submit_request(q, "matting", "alice/good", "main", "Big", "alice", limits=QueueLimits(max_file_bytes=10))
    with pytest.raises(RequestError, match=r"GiB, over the limit"):
        submit_request(q, "matting", "alice/good", "main", "Big", "alice", limits=QueueLimits(max_total_bytes=10))
    assert request_path("matting", "Messy") not in state.files("hugvis/requests")  # nothing was written
    assert state.files("hugvis/requests") == {}


def test_duplicates_limits_and_a_failed_request_frees_its_name(hub):
    _, state, api = hub
    q = queue(api)
    submit_request(q, "matting", "alice/good", "main", "GoodNet", "alice")
    with pytest.raises(RequestError, match="GoodNet is already requested \\(PENDING\\)"):
        submit_request(q, "matting", "alice/good", "main", "GoodNet", "alice")
    with pytest.raises(RequestError, match="already requested for matting as GoodNet"):
        submit_request(q, "matting", "alice/good", "main", "SameFiles", "alice")
    state.create("alice/good", "dataset", {"README.md": b"a new commit of the same repo"})
    submit_request(q, "matting", "alice/good", "main", "GoodNet2", "alice")  # a new commit is new predictions
    state.create("alice/good", "dataset", {"README.md": b"third commit"})
    with pytest.raises(RequestError, match=r"alice has 2 request\(s\) waiting or running \(limit 2\)"):
        submit_request(q, "matting", "alice/good", "main", "GoodNet3", "alice")
    # Bob is not limited by Alice's requests.
    submit_request(queue(api, "bob-token"), "matting", "alice/good", "main", "BobNet", "bob")
    # A FAILED request frees the name (and the submitter's slot).
    path = request_path("matting", "GoodNet")
    failed = parse_request(json.loads(state.files("hugvis/requests")[path]), path).moved(FAILED, "2026-12-01T00:00:00+00:00")
    q.write(failed, state.head("hugvis/requests"), "fail it")
    state.create("alice/good", "dataset", {"README.md": b"fixed predictions"})
    again = submit_request(q, "matting", "alice/good", "main", "GoodNet", "alice")
    assert again.status == PENDING and again.request_id != failed.request_id


def test_a_name_on_the_board_is_refused(hub, release, tmp_path):
    from hug_vis_dataset.scoring.runner import evaluate_submission

    _, _, api = hub
    results = HubResultsStore("hugvis/results", tmp_path / "mirror", api=api("worker-token"))
    evaluate_submission("matting", release / "simulated_systems" / "matting" / "matte_good", "OnBoard", release,
                        tmp_path / "runs", progress=False)
    results.pull()
    results.add(tmp_path / "runs", "matting", "OnBoard")
    with pytest.raises(RequestError, match="OnBoard is already on the leaderboard"):
        submit_request(queue(api), "matting", "alice/good", "main", "OnBoard", "alice", results=results)


def test_concurrent_claims_never_share_a_request(hub):
    """Eight claimers on three requests: each request claimed once, the Hub refused the losers."""
    url, state, api = hub
    for i, name in enumerate(("A", "B", "C")):
        state.create("alice/good", "dataset", {"README.md": f"commit {i}".encode()})
        submit_request(queue(api, **{}), "matting", "alice/good", "main", name, "alice" if i < 2 else "bob")
    claimed, errors = [], []
    start = threading.Barrier(8)

    def claim(i):
        worker = QueueWorker(queue(api, "worker-token"), None, "unused", "unused", worker_id=f"w{i}")
        start.wait()
        try:
            request = worker.claim()
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)
            return
        if request is not None:
            claimed.append((request.model, request.worker))

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted(m for m, _ in claimed) == ["A", "B", "C"]  # each once, and no more claims than requests
    assert len({w for _, w in claimed}) == 3
    assert state.refused > 0  # the compare-and-swap did refuse concurrent writers
    stored = {p: json.loads(d) for p, d in state.files("hugvis/requests").items()}
    assert {v["model"]: v["worker"] for v in stored.values()} == {m: w for m, w in claimed}
    assert all(v["status"] == RUNNING and v["attempts"] == 1 for v in stored.values())


def test_stale_running_requests_are_taken_over_and_damaged_files_never_claimed(hub):
    _, state, api = hub
    q = queue(api)
    alive = ScoringRequest("matting", "Alive", "alice/good", "a" * 40, "alice", "2026-12-01T00:00:00+00:00",
                           status=RUNNING, worker="w1", heartbeat_at="2026-12-01T00:09:50+00:00")
    silent = ScoringRequest("matting", "Silent", "alice/good", "b" * 40, "alice", "2026-12-01T00:00:01+00:00",
                            status=RUNNING, worker="w2", heartbeat_at="2026-12-01T00:01:00+00:00")
    for request in (alive, silent):
        q.write(request, state.head("hugvis/requests"), "seed")
    q.write(ScoringRequest("matting", "Evil", "x/y", "nothex", "eve", "2026-11-30T00:00:00+00:00"),
            state.head("hugvis/requests"), "bad revision")
    read = q.read()
    assert read.damaged == {"requests/matting/Evil.json": "revision is not a 40-hex commit"}
    assert [r.model for r in read.requests] == ["Alive", "Silent"]
    assert claimable(read, "2026-12-01T00:10:00+00:00", 300).model == "Silent"
    assert claimable(read, "2026-12-01T00:03:00+00:00", 300) is None
    lines = list(status_lines(read))
    assert lines[0].endswith("0 PENDING, 2 RUNNING, 0 FINISHED, 0 FAILED")
    assert lines[-1] == ("- damaged request file requests/matting/Evil.json: revision is not a 40-hex commit "
                         "(never scored; fix or delete it)")


def test_status_shows_positions_and_escapes_request_text(hub):
    _, state, api = hub
    q = queue(api)
    for i, name in enumerate(("First", "Second")):
        state.create("alice/good", "dataset", {"README.md": f"c{i}".encode()})
        submit_request(q, "matting", "alice/good", "main", name, "alice")
    read = q.read()
    assert [(r["Model"], r["Queue position"]) for r in status_rows(read)] == [("First", "1"), ("Second", "2")]
    hostile = ScoringRequest("matting", "Third", "alice/good", "c" * 40, "alice", "2026-12-02T00:00:00+00:00",
                             status=FAILED, failure="<script>alert(1)</script> | bad")
    q.write(hostile, state.head("hugvis/requests"), "hostile")
    html = status_html(q.read())
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "| bad" not in "\n".join(status_lines(q.read())).replace("\\| bad", "")


def test_a_taken_over_worker_stops_and_writes_nothing(hub):
    from hug_vis_dataset.leaderboard.worker import Lease, LeaseLostError

    _, state, api = hub
    q = queue(api, "worker-token")
    submit_request(queue(api), "matting", "alice/good", "main", "GoodNet", "alice")
    mine = QueueWorker(q, None, "unused", "unused", worker_id="w-old", heartbeat_s=60, stale_after_s=300).claim()
    lease = Lease(q, mine, "w-old", interval_s=60)
    lease.beat()  # still ours: a heartbeat is written
    assert json.loads(state.files("hugvis/requests")[mine.path])["heartbeat_at"] is not None
    # Another worker takes it over (as after a stale heartbeat).
    other = mine.moved(RUNNING, "2026-12-02T00:00:00+00:00", worker="w-new", attempts=2)
    q.write(other, state.head("hugvis/requests"), "take over")
    head = state.head("hugvis/requests")
    lease.beat()
    assert lease.lost.is_set() and state.head("hugvis/requests") == head  # nothing written
    with pytest.raises(LeaseLostError, match="taken over by another worker"):
        lease.progress(1, 4)


def test_a_run_stored_before_a_crash_is_finished_not_added_twice(hub, release, tmp_path):
    """A worker died after adding the run and before writing FINISHED: the next one finishes the
    request without a second results commit."""
    from huggingface_hub import HfApi

    from hug_vis_dataset.leaderboard.requests import FINISHED, seconds_since

    url, state, api = hub
    q = queue(api, "worker-token")
    results = HubResultsStore("hugvis/results", tmp_path / "mirror", api=HfApi(endpoint=url, token="worker-token"))
    results.pull()
    submit_request(queue(api), "matting", "alice/good", "main", "GoodNet", "alice")
    first = QueueWorker(q, results, release, tmp_path / "work", worker_id="w1", heartbeat_s=0.5, stale_after_s=2,
                        poll_s=0.1, evaluate_options={"backend": "local"}, log=lambda _: None)
    claimed = first.claim()
    with Lease_for(q, claimed, "w1") as lease:
        link = first._score(claimed, lease)  # scored and stored, then the worker "dies"
    assert link.endswith("/matting/GoodNet/summary.json")
    assert seconds_since(json.loads(state.files("hugvis/requests")[claimed.path])["heartbeat_at"]) < 60
    second = QueueWorker(q, results, release, tmp_path / "work", worker_id="w2", heartbeat_s=0.5, stale_after_s=2,
                         poll_s=0.2, evaluate_options={"backend": "local"}, log=lambda _: None)
    assert second.run(exit_when_idle=True) == 1
    final = json.loads(state.files("hugvis/requests")[claimed.path])
    assert (final["status"], final["worker"], final["attempts"], final["run_link"]) == (FINISHED, "w2", 2, link)
    assert [m for _, m, _ in state.commits].count("Add matting/GoodNet") == 1


def Lease_for(q, request, worker_id):  # noqa: N802 - a context manager named for what it holds
    from hug_vis_dataset.leaderboard.worker import Lease

    return Lease(q, request, worker_id, interval_s=0.5)


def test_cli_submit_and_status_through_the_hub_client(hub, tmp_path):
    import os
    import subprocess
    import sys

    url, state, _ = hub
    env = {**os.environ, "HF_ENDPOINT": url, "HF_TOKEN": "alice-token", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    hugvis = [sys.executable, "-m", "hug_vis_dataset.cli", "leaderboard"]
    done = subprocess.run(hugvis + ["submit", "matting", "--predictions-repo", "alice/good", "--revision", "main",
                                    "--model", "CliNet", "--requests-repo", "hugvis/requests",
                                    "--results-repo", "hugvis/results"],
                          env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"queued matting/CliNet: alice/good@{state.head('alice/good')} (4 clip(s), 36 file(s), ")
    stored = json.loads(state.files("hugvis/requests")["requests/matting/CliNet.json"])
    assert stored["submitter"] == "alice"  # the Hub user of the token, not a typed name
    again = subprocess.run(hugvis + ["submit", "matting", "--predictions-repo", "alice/good", "--revision", "main",
                                     "--model", "CliNet", "--requests-repo", "hugvis/requests",
                                     "--results-repo", "hugvis/results"],
                           env=env, capture_output=True, text=True, timeout=180)
    assert again.returncode == 1
    assert again.stderr.strip() == "error: matting/CliNet is already requested (PENDING); choose another model name"
    status = subprocess.run(hugvis + ["status", "CliNet", "--requests-repo", "hugvis/requests"],
                            env=env, capture_output=True, text=True, timeout=180)
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert lines[0].endswith("1 PENDING, 0 RUNNING, 0 FINISHED, 0 FAILED")
    assert lines[3].startswith("| matting | CliNet | PENDING | 1 | ")

"""End to end: three requests, two ``hugvis leaderboard worker`` processes on one local Ray, one killed mid-run.

The Hub is the HTTP stand-in (``tests/hub_server.py``) served on 127.0.0.1; the workers are the
real command line in subprocesses with ``HF_ENDPOINT`` pointing at it, so every claim, heartbeat,
download and results commit goes through the real ``huggingface_hub`` client. What must hold:

* every request ends exactly once: the two good ones FINISHED (one commit each in the results
  repo), the broken one FAILED with the check-only reason naming its clip;
* the killed worker's request is resumed by the other after its heartbeat went stale, keeping the
  clips already scored (the runner's resume), and its history reads PENDING, RUNNING (killed),
  RUNNING (resumed), FINISHED;
* the board shows both runs as verified, with the numbers ``hugvis evaluate`` gives on the same
  predictions.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hub_server import serve_hub
from hug_vis_dataset.leaderboard.requests import FAILED, FINISHED, PENDING, RUNNING, RequestsRepo, request_path
from hug_vis_dataset.leaderboard.store import LEADERBOARD_SCORER, HubResultsStore
from hug_vis_dataset.leaderboard.submit import submit_request
from hug_vis_dataset.scoring.runs import KEY_ENV, VERIFIED

KEY = "queue-test-signing-key"
BROKEN_CLIP = "actor_0001_sad_action_02_script_001"


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("workers") / "release"
    # Clips large enough that a run lasts a few seconds: the kill lands between the first
    # persisted clip and the end.
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=2, scripts=3, seconds=1.0, size=(256, 144))
    return root


def system(release: Path, name: str) -> Path:
    return release / "simulated_systems" / "matting" / name


def start_worker(name: str, env: dict, release: Path, work: Path, address: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "hug_vis_dataset.cli", "leaderboard", "worker",
               "--requests-repo", "hugvis/requests", "--results-repo", "hugvis/results", "--dataset", str(release),
               "--work-dir", str(work), "--worker-id", name, "--backend", "ray", "--ray-address", address,
               "--num-proc", "1", "--device", "cpu", "--flush-every", "1", "--heartbeat", "1", "--stale-after", "4",
               "--poll", "0.5", "--exit-when-idle"]
    log = open(work.parent / f"{name}.log", "w")
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def stored_request(state, model: str) -> dict:
    data = state.files("hugvis/requests").get(request_path("matting", model))
    return json.loads(data) if data else {}


@pytest.mark.slow
def test_two_workers_finish_every_request_once_and_resume_the_killed_one(release, tmp_path, monkeypatch):
    import ray
    from huggingface_hub import HfApi

    from hug_vis_dataset.scoring.runner import evaluate_submission

    broken = tmp_path / "broken"
    broken.mkdir()
    for path, data in files_of(system(release, "matte_good")).items():
        target = broken / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    frames = sorted((broken / BROKEN_CLIP).glob("*.png"))
    frames[-1].unlink()  # one frame short: names and layout are fine, the check-only pass is not

    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    work = tmp_path / "work"
    work.mkdir()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    workers: dict[str, subprocess.Popen] = {}
    try:
        address = ray.get_runtime_context().gcs_address
        with serve_hub() as (url, state):
            state.tokens.update({"alice-token": "alice", "bob-token": "bob", "carol-token": "carol",
                                 "worker-token": "leaderboard-worker"})
            state.create("alice/good", "dataset", files_of(system(release, "matte_good")))
            state.create("bob/poor", "dataset", files_of(system(release, "matte_poor")))
            state.create("carol/broken", "dataset", files_of(broken))
            state.create("hugvis/requests")
            state.create("hugvis/results")
            for model, repo, token in (("GoodNet", "alice/good", "alice"), ("PoorNet", "bob/poor", "bob"),
                                       ("BrokenNet", "carol/broken", "carol")):
                queue = RequestsRepo("hugvis/requests", api=HfApi(endpoint=url, token=f"{token}-token"))
                submit_request(queue, "matting", repo, "main", model, token)
                time.sleep(1.1)  # submission times order the queue (seconds resolution)

            env = {**os.environ, "HF_ENDPOINT": url, "HF_TOKEN": "worker-token", KEY_ENV: KEY,
                   "HF_HUB_DISABLE_PROGRESS_BARS": "1", "PYTHONPATH": str(Path(__file__).parents[1])}
            workers = {name: start_worker(name, env, release, work, address) for name in ("A", "B")}

            # Kill whichever worker holds GoodNet once it has persisted a clip, before it finishes.
            victim, deadline = None, time.monotonic() + 240
            while victim is None and time.monotonic() < deadline:
                request = stored_request(state, "GoodNet")
                parts = list(work.glob(f"*/results/matting/.work-GoodNet/rows/part-*.parquet"))
                if request.get("status") == RUNNING and parts:
                    victim = request["worker"]
                    os.killpg(workers[victim].pid, signal.SIGKILL)
                    break
                assert request.get("status") in (PENDING, RUNNING), f"GoodNet ended before the kill: {request}"
                time.sleep(0.005)
            assert victim is not None, "GoodNet was never seen running with a persisted clip"
            workers[victim].wait(timeout=30)
            survivor = "B" if victim == "A" else "A"
            assert workers[survivor].wait(timeout=300) == 0, (work.parent / f"{survivor}.log").read_text()[-3000:]

            good, poor, bad = (stored_request(state, m) for m in ("GoodNet", "PoorNet", "BrokenNet"))
            commits = [message for repo, message, _ in state.commits]
            hub_files = state.files("hugvis/results")
    finally:
        for process in workers.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
        ray.shutdown()

    # Statuses moved PENDING -> RUNNING -> FINISHED; the killed request was resumed by the survivor.
    assert [(h["status"], h.get("worker")) for h in good["history"]] == [
        (PENDING, None), (RUNNING, victim), (RUNNING, survivor), (FINISHED, None)]
    assert good["attempts"] == 2 and good["worker"] == survivor
    assert [h["status"] for h in poor["history"]] == [PENDING, RUNNING, FINISHED]
    assert good["scored"] == good["total"] == poor["total"] == 12
    # The broken request failed with the check-only reason, named clip and all; it stored nothing.
    assert bad["status"] == FAILED and [h["status"] for h in bad["history"]] == [PENDING, RUNNING, FAILED]
    assert bad["failure"].startswith("check-only pass: 1 problem(s) of 12 clips (1 failing); first failing clip "
                                     f"{BROKEN_CLIP}: ")
    assert "frame" in bad["failure"]
    # Exactly once: one results commit per good run, none for the broken one.
    assert commits.count("Add matting/GoodNet") == 1 and commits.count("Add matting/PoorNet") == 1
    assert not any("BrokenNet" in m for m in commits if m.startswith("Add "))
    assert not any(path.startswith("matting/BrokenNet/") for path in hub_files)

    # The resumed run kept the clips scored before the kill.
    resumed = json.loads(hub_files["matting/GoodNet/summary.json"])
    assert 0 < resumed["provenance"]["clips_computed_this_run"] < 12
    assert resumed["provenance"]["backend"] == "ray"

    # The board reads both runs as verified, with the numbers of `hugvis evaluate` on the same files.
    mirror = tmp_path / "board"
    with serve_hub(state) as (url2, _):
        board = HubResultsStore("hugvis/results", mirror, api=HfApi(endpoint=url2, token="alice-token"))
        board.pull()
        runs = {run.model: run for run in board.runs()}
    assert set(runs) == {"GoodNet", "PoorNet"}
    for model, name in (("GoodNet", "matte_good"), ("PoorNet", "matte_poor")):
        run = runs[model]
        assert run.scored_by == VERIFIED
        assert json.loads((run.folder / "verification.json").read_text())["scored_by"] == LEADERBOARD_SCORER
        local = evaluate_submission("matting", system(release, name), model, release, tmp_path / "local",
                                    progress=False)
        assert set(run.table.columns) == set(local.table.columns)
        assert run.table.loc[model].to_dict() == pytest.approx(local.table.loc[model].to_dict(), rel=1e-12)

"""Children of a stopped parent (issue 52): one rule for every command that starts workers
(``stopping.child_init`` / ``worker_count`` / ``worker_pool``).

Classes generated, in real subprocesses with real signals:

* any stop of the parent -- SIGHUP (a closed terminal or ssh session), SIGTERM, SIGINT, or SIGKILL that no
  handler sees -- ends every worker it started (SIGHUP left ``hugvis evaluate --num-proc 2``'s workers alive,
  1.8 GB, after the parent died); a catchable one still ends the command with its one stop line and 128 + N;
* workers are capped by the work: ``--num-proc 24`` for 6 clips starts at most 6 (``hugvis validate`` started
  24).

No timing is asserted: the tests wait for states (a worker exists, a process is gone) with generous deadlines.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FEW = settings(max_examples=6, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
WAIT_S = 120


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _descendants(pid: int) -> set[int]:
    out, todo = set(), [pid]
    while todo:
        for child in _children(todo.pop()):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def _is_worker(pid: int) -> bool:
    try:
        return b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended; only its parent's wait is missing


def _wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting: {what}")
        time.sleep(0.05)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("workers")
    synthesize(root / "rel", actors=2, emotions=["Happy", "Sad", "Angry"], actions=1, scripts=1, seconds=1.0,
               size=(96, 54), progress=False)
    return root


def _start(world: Path, out: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "HUGVIS_NO_FEATURE_CACHE": "1"}
    # A session of its own: the signal reaches the parent alone, as `kill PID` (or a dropped ssh session's
    # SIGHUP to the session leader) does, never the workers directly.
    return subprocess.Popen([sys.executable, "-m", "hug_vis_dataset.cli", *args], cwd=world, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)


@FEW
@given(signum=st.sampled_from([signal.SIGHUP, signal.SIGTERM, signal.SIGINT, signal.SIGKILL]),
       num_proc=st.sampled_from([2, 3]))
def test_any_stop_of_the_parent_ends_every_worker_it_started(world, tmp_path, signum, num_proc):
    system = sorted((world / "rel" / "simulated_systems" / "matting").iterdir())[0]
    out = tmp_path / f"out{signum}{num_proc}{time.monotonic_ns()}"
    proc = _start(world, out, "evaluate", "matting", "--predictions", str(system), "--model", "m", "--dataset",
                  str(world / "rel"), "--out", str(out), "--num-proc", str(num_proc), "--no-progress")
    try:
        _wait_until(lambda: any(_is_worker(p) for p in _descendants(proc.pid)) or proc.poll() is not None,
                    "a worker of hugvis evaluate")
        workers = {p for p in _descendants(proc.pid)}
        if proc.poll() is not None:
            return  # done before a worker could be seen (a very fast machine): nothing to stop
        os.kill(proc.pid, signum)
        _, err = proc.communicate(timeout=WAIT_S)
        if signum == signal.SIGKILL:
            assert proc.returncode == -signal.SIGKILL
        else:
            text = err.decode("utf-8", "replace")
            assert proc.returncode == 128 + signum, text
            assert "Traceback" not in text
            assert text.strip().splitlines()[-1].startswith(f"stopped by {signal.Signals(signum).name}: "), text
        _wait_until(lambda: not any(_alive(p) for p in workers), f"workers {sorted(workers)} to end")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("command", ["validate", "evaluate"])
def test_workers_are_capped_by_the_work(world, tmp_path, command):
    from hug_vis_dataset.datamodel.release import Release

    clips = len(list(Release(world / "rel")))
    system = sorted((world / "rel" / "simulated_systems" / "matting").iterdir())[0]
    args = (["validate", str(world / "rel"), "--num-proc", "24"] if command == "validate" else
            ["evaluate", "matting", "--predictions", str(system), "--model", "m", "--dataset", str(world / "rel"),
             "--out", str(tmp_path / "out"), "--num-proc", "24", "--no-progress"])
    proc = _start(world, tmp_path, *args)
    most = 0
    try:
        while proc.poll() is None:
            # the parent's own children: a worker's momentary fork (a library running a helper) is not a worker
            most = max(most, sum(_is_worker(p) for p in _children(proc.pid)))
            time.sleep(0.02)
        assert proc.returncode in (0, 1), proc.stderr.read().decode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert 1 <= most <= clips == 6


def test_worker_count_is_the_work_when_less():
    from hug_vis_dataset.stopping import worker_count  # noqa

    assert [worker_count(n, w) for n, w in ((24, 6), (1, 6), (6, 6), (3, 0))] == [6, 1, 6, 1]

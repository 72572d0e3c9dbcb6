"""Stop signals, in real subprocesses: SIGTERM and SIGINT end every long-running command cleanly.

Each command runs as ``python -m hug_vis_dataset.cli ...`` in a session of its own, on a tiny synthetic
grid (12 clips of 1 s at 64x64). Once it has made progress (a number of persisted clips or shards drawn
from a seeded generator) it gets SIGTERM or SIGINT, to its process group (a scheduler's timeout, Ctrl-C
in a terminal) or to its pid alone (``kill PID``: the parent must end its workers itself). Then:

* the exit status is 143 (SIGTERM) or 130 (SIGINT), and stderr's last non-empty line is the one stop
  line, ``stopped by SIG...: <what was kept>; <how to resume>``, with no traceback anywhere;
* no process of its process group is left (workers, pools) once the resource tracker of
  ``multiprocessing`` has seen the pipe close (it exits within a second or two);
* no temporary file is left: ``$TMPDIR`` is empty, no ``*.tmp`` or ``.partial-*`` in the output, and
  what is left is exactly the resume state the line names (its count checked on disk);
* the same command run again (``--resume`` where the command has it) completes, resuming, and gives
  byte-identical rows / the same shard sha256s / the same files as an uninterrupted run.

The rule is ``hug_vis_dataset/stopping.py`` (docs/ARCHITECTURE.md, "Stop signals").
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEED = 35
CLIPS = 12
LINE = re.compile(r"^stopped by (SIGTERM|SIGINT): (.+)$")


def draw(name: str, low: int, high: int) -> int:
    """The progress point at which a test stops its command: seeded per test, so a failure replays."""
    return random.Random(f"{SEED}/{name}").randint(low, high)


@pytest.fixture(scope="session")
def grid(tmp_path_factory) -> Path:
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("signals") / "grid"
    synthesize(root, actors=2, emotions=["Happy", "Sad", "Angry"], actions=2, scripts=1, seconds=1.0, size=(64, 64),
               systems=False)
    return root


@pytest.fixture(scope="session")
def mattes(grid: Path) -> Path:
    """A matting submission: the built-in baseline's (the simulated systems cost more to make)."""
    out = grid.parent / "mattes"
    done = subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", "predict", "matting", "--model", "baseline",
                           "--dataset", str(grid), "--out", str(out), "--no-progress"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    return out


class Command:
    """One CLI process in its own session, with its own empty ``$TMPDIR`` and log files."""

    def __init__(self, args: list[str], where: Path, env: "dict | None" = None, name: str = "run"):
        self.where, self.name = where, name
        self.tmpdir = where / f"tmp-{name}"
        self.tmpdir.mkdir(parents=True, exist_ok=True)
        self.out_path, self.err_path = where / f"{name}.out", where / f"{name}.err"
        environ = {**os.environ, "TMPDIR": str(self.tmpdir), "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
                   "PYTHONUNBUFFERED": "1", **(env or {})}
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.process = subprocess.Popen([sys.executable, "-m", "hug_vis_dataset.cli", *args], cwd=where,
                                            env=environ, stdout=out, stderr=err, start_new_session=True)

    @property
    def stderr(self) -> str:
        return self.err_path.read_text(encoding="utf-8", errors="replace")

    def wait_until(self, ready, what: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if self.process.poll() is not None:
                pytest.fail(f"{self.name} ended (rc {self.process.returncode}) before {what}: {self.stderr[-2000:]}")
            if time.monotonic() > deadline:
                self.kill()
                pytest.fail(f"{self.name}: no {what} after {timeout:.0f} s: {self.stderr[-2000:]}")
            time.sleep(0.01)

    def stop(self, signum: int, group: bool) -> int:
        if group:
            os.killpg(self.process.pid, signum)
        else:
            self.process.send_signal(signum)
        try:
            return self.process.wait(timeout=90)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"{self.name} did not end within 90 s of {signal.Signals(signum).name}")

    def finish(self, timeout: float = 300) -> int:
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"{self.name} did not finish in {timeout} s: {self.stderr[-2000:]}")

    def kill(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def group_alive(self) -> list[str]:
        """Command lines of the processes still in the command's process group."""
        left = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[2]) == self.process.pid and fields[0] != "Z":
                    left.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:120])
            except (OSError, IndexError, ValueError):
                continue
        return left


def assert_stopped(command: Command, status: int, signum: int) -> str:
    """The stop's common promises; returns the note of the stop line."""
    name = signal.Signals(signum).name
    err = command.stderr
    assert status == 128 + signum, f"exit {status}, expected {128 + signum}: {err[-2000:]}"
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines, "nothing on stderr"
    match = LINE.match(lines[-1])
    assert match and match.group(1) == name, f"last line is not the stop line: {lines[-3:]}"
    assert sum(bool(LINE.match(line)) for line in lines) == 1, lines
    assert "Traceback" not in err and "Error" not in err, err[-3000:]
    deadline = time.monotonic() + 10
    while command.group_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not command.group_alive(), f"left running: {command.group_alive()}"
    assert sorted(p.name for p in command.tmpdir.iterdir()) == [], "files left in $TMPDIR"
    return match.group(2)


def temporaries(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                  if p.name.endswith(".tmp") or p.name.startswith((".partial-", ".staging-", ".incoming-", "upload-")))


def kept_count(note: str) -> int:
    return int(re.match(r"^(\d+)", note).group(1))


# ----------------------------------------------------------------------------- stopping.py itself
@pytest.fixture
def handlers():
    """stopping's handlers installed in this (the main) thread for one test, then the old ones back."""
    from hug_vis_dataset import stopping

    saved = {signum: signal.getsignal(signum) for signum in stopping.STOP_SIGNALS}
    stopping.reset()
    stopping._STATE.installed = False
    stopping.install()
    yield stopping
    for signum, handler in saved.items():
        signal.signal(signum, handler)
    stopping.reset()
    stopping._STATE.installed = False


def test_exit_codes_and_the_one_line():
    from hug_vis_dataset import stopping

    assert (stopping.exit_code(signal.SIGINT), stopping.exit_code(signal.SIGTERM)) == (130, 143)
    assert stopping.Stopped(signal.SIGTERM).exit_code == 143 and isinstance(stopping.Stopped(2), KeyboardInterrupt)
    assert stopping.stop_line(signal.SIGTERM, "3 of 8 clips kept in R/.work-x;\n run it again") == (
        "stopped by SIGTERM: 3 of 8 clips kept in R/.work-x; run it again")  # always one line


def test_sigterm_raises_in_the_main_thread_and_nested_cleanup_runs_innermost_first(handlers, tmp_path):
    stopping = handlers
    made = tmp_path / "half-written.tmp"
    order = []
    with pytest.raises(stopping.Stopped) as stopped:
        with stopping.resume_note(lambda: f"outer sees the file gone: {not made.exists()}"):
            try:
                with stopping.resume_note(lambda: order.append("inner note") or "inner note"):
                    made.write_text("x")
                    try:
                        os.kill(os.getpid(), signal.SIGTERM)
                        time.sleep(5)  # the handler raises before this ends
                        order.append("not stopped")
                    finally:
                        made.unlink()
                        order.append("file removed")
                        os.kill(os.getpid(), signal.SIGTERM)  # a second signal must not cut the cleanup short
                        order.append("cleanup finished")
            finally:
                order.append("outer finally")
    assert stopped.value.signum == signal.SIGTERM and stopping.requested() == signal.SIGTERM
    assert order == ["file removed", "cleanup finished", "inner note", "outer finally"]
    assert stopping.stop_line(stopped.value.signum) == "stopped by SIGTERM: inner note"  # the innermost note
    assert stopping.exit_code(stopped.value.signum) == 143


def test_an_overriding_outer_note_wins_and_no_note_says_nothing_was_kept(handlers):
    stopping = handlers
    assert stopping.stop_line(signal.SIGINT) == f"stopped by SIGINT: {stopping.NOTHING_KEPT}"
    with pytest.raises(KeyboardInterrupt):
        with stopping.resume_note(lambda: "request released", overrides=True):
            with stopping.resume_note(lambda: "2 of 4 clips kept"):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)
    assert stopping.stop_line(signal.SIGINT) == "stopped by SIGINT: request released"


def test_work_in_another_thread_unwinds_before_the_line_and_leftovers_are_removed(handlers, tmp_path):
    import threading

    stopping = handlers
    cleaned, stuck = tmp_path / "upload-1", tmp_path / "upload-2"
    cleaned.mkdir(), stuck.mkdir()

    def score() -> None:  # the Space's scoring in a server thread: checks between clips
        with stopping.working(), stopping.removed_on_stop(cleaned):
            try:
                while True:
                    stopping.check()
                    time.sleep(0.01)
            except stopping.Stopped:
                time.sleep(0.3)  # unwinding takes a moment: drain waits for it
                cleaned.rmdir()

    def hung() -> None:  # a thread that never checks: its registered folder is removed for it
        with stopping.removed_on_stop(stuck):
            time.sleep(3)

    threads = [threading.Thread(target=score, daemon=True), threading.Thread(target=hung, daemon=True)]
    for thread in threads:
        thread.start()
    with pytest.raises(stopping.Stopped):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    started = time.monotonic()
    left = stopping.drain(timeout=1.0)
    assert not threads[0].is_alive() and not cleaned.exists()
    assert left == [stuck] and not stuck.exists() and time.monotonic() - started < 2.5


def test_a_child_started_in_children_start_ignores_sigint_and_dies_on_sigterm():
    import multiprocessing

    from hug_vis_dataset import stopping

    context = multiprocessing.get_context("spawn")
    ready, born_blocked = context.Event(), context.Event()
    with stopping.children_start():
        child = context.Process(target=_child, args=(ready, born_blocked))
        child.start()
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the parent's mask is back
    assert ready.wait(60), "the child did not start"
    assert born_blocked.is_set(), "the child was born able to take a SIGINT before child_init"
    os.kill(child.pid, signal.SIGINT)
    child.join(1.0)
    assert child.is_alive(), "SIGINT ended the child: the parent decides"
    stopping.end_processes([child])
    assert child.exitcode == -signal.SIGTERM


def _child(ready, born_blocked) -> None:
    if signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []):
        born_blocked.set()
    from hug_vis_dataset import stopping

    stopping.child_init()
    ready.set()
    time.sleep(60)


def test_a_pool_whose_result_queue_lock_is_held_for_good_still_ends():
    """The deadlock a stop to the whole group can leave (a worker killed while putting its result, inside the result
    queue's lock): with the lock held for good, ``Pool.terminate`` waits forever;
    :func:`~hug_vis_dataset.stopping.end_pool` ends the workers and returns after its timeout."""
    import multiprocessing

    from hug_vis_dataset import stopping

    with stopping.children_start():
        pool = multiprocessing.get_context("spawn").Pool(2, initializer=stopping.child_init)
    workers = list(pool._pool)
    assert pool.apply(os.getpid) in {w.pid for w in workers}  # the workers are up
    assert pool._outqueue._wlock.acquire(timeout=5)  # what a worker killed inside the lock leaves behind
    started = time.monotonic()
    stopping.end_pool(pool, timeout=2.0)
    assert time.monotonic() - started < 10.0
    assert not any(w.is_alive() for w in workers) and not any(w.is_alive() for w in pool._pool)


def test_a_stop_taken_by_another_thread_is_raised_while_the_main_thread_waits_on_a_pool(handlers):
    """The kernel may hand SIGTERM to any thread; Python runs the handler only when the main thread runs Python again,
    so a wait on a pool without a timeout outlasted the stop for good. pool_results raises it within its poll."""
    import threading

    with handlers.worker_pool(2, 2) as pool:
        results = pool.imap(time.sleep, [30, 30])
        other = threading.Thread(target=time.sleep, args=(5,), daemon=True)
        other.start()
        threading.Timer(1.0, signal.pthread_kill, (other.ident, signal.SIGTERM)).start()
        started = time.monotonic()
        with pytest.raises(handlers.Stopped):
            list(handlers.pool_results(results))
        assert time.monotonic() - started < 10.0


def test_a_stop_inside_a_callback_of_c_code_is_quiet_and_raised_at_the_next_check(handlers, capfd):
    """numba's JIT calls llvmlite's ctypes callbacks: a stop handled inside one cannot propagate, and Python printed
    it as "Exception ignored ... Traceback". It is recorded, kept quiet, and raised at the next check."""
    import ctypes

    def callback():
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(10000):  # the handler runs here, inside the callback
            pass

    ctypes.CFUNCTYPE(None)(callback)()
    assert handlers.requested() == signal.SIGTERM
    with pytest.raises(handlers.Stopped):
        handlers.check()
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception ignored" not in err, err


def test_a_pool_ends_at_once_when_nothing_holds_it():
    import multiprocessing

    from hug_vis_dataset import stopping

    with stopping.children_start():
        pool = multiprocessing.get_context("spawn").Pool(2, initializer=stopping.child_init)
    assert pool.map(abs, [-1, -2]) == [1, 2]
    started = time.monotonic()
    stopping.end_pool(pool, timeout=60.0)
    assert time.monotonic() - started < 30.0 and not any(w.is_alive() for w in pool._pool)


# ----------------------------------------------------------------------------- hugvis evaluate
def evaluate_args(grid: Path, out: Path, model: str = "m") -> list[str]:
    return ["evaluate", "matting", "--predictions", str(grid.parent / "mattes"),
            "--model", model, "--dataset", str(grid), "--out", str(out), "--num-proc", "2", "--flush-every", "1",
            "--no-progress"]


@pytest.fixture(scope="session")
def evaluated(grid, mattes, tmp_path_factory) -> Path:
    """An uninterrupted run: the rows every stopped-and-resumed run must reproduce."""
    where = tmp_path_factory.mktemp("evaluate-reference")
    run = Command(evaluate_args(grid, where / "results"), where, name="reference")
    assert run.finish() == 0, run.stderr[-2000:]
    return where / "results" / "matting" / "m"


# Both signals, both ways: to the pid alone (the parent must end its two workers) and to the group.
@pytest.mark.parametrize("signum, group", [(signal.SIGTERM, False), (signal.SIGINT, True)],
                         ids=["SIGTERM-pid", "SIGINT-group"])
def test_evaluate_stops_cleanly_and_resumes_to_identical_rows(grid, evaluated, tmp_path, signum, group):
    out = tmp_path / "results"
    work = out / "matting" / ".work-m"
    at = draw(f"evaluate-{signum}-{group}", 1, CLIPS // 2)
    run = Command(evaluate_args(grid, out), tmp_path)
    run.wait_until(lambda: len(list((work / "rows").glob("part-*.parquet"))) >= at, f"{at} persisted clip(s)")
    note = assert_stopped(run, run.stop(signum, group), signum)

    assert note.endswith(f"clips kept in {work}; run the same command again to resume"), note
    parts = len(list((work / "rows").glob("part-*.parquet")))  # flush-every 1: one clip per part
    assert at <= parts < CLIPS and kept_count(note) in (parts, parts - 1), (note, parts)
    assert note.split(" clips")[0].endswith(f"of {CLIPS}")
    assert temporaries(out) == []
    assert not (out / "matting" / "m").exists()  # nothing published: the work folder is the resume state

    again = Command(evaluate_args(grid, out), tmp_path, name="again")
    assert again.finish() == 0, again.stderr[-2000:]
    summary = json.loads((out / "matting" / "m" / "summary.json").read_text())
    assert summary["provenance"]["clips_computed_this_run"] == CLIPS - parts  # resumed, not rescored
    for name in ("rows.parquet", "frames.parquet"):
        assert (out / "matting" / "m" / name).read_bytes() == (evaluated / name).read_bytes(), name
    assert not work.exists() and temporaries(out) == []


# ----------------------------------------------------------------------------- hugvis build
def build_args(grid: Path, repo: Path, resume: bool = False, num_proc: int = 2) -> list[str]:
    # Tiny shards and row groups: about 50 shards, so a stop lands between two of them.
    return ["build", str(grid), str(repo), "--num-proc", str(num_proc), "--no-storage-report", "--shard-mb", "0.05",
            "--row-group-mb", "0.01"] + (["--resume"] if resume else [])


def shards_of(repo: Path) -> list[Path]:
    return sorted(repo.glob("data/*/test-*.parquet"))


@pytest.fixture(scope="session")
def built(grid, tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("build-reference")
    run = Command(build_args(grid, where / "repo"), where, name="reference")
    assert run.finish() == 0, run.stderr[-2000:]
    return where / "repo"


# Two worker processes (the pool is terminated, the shards they were writing removed), and one process
# (the shard writer aborts its own shard).
@pytest.mark.parametrize("signum, group, num_proc", [(signal.SIGTERM, True, 2), (signal.SIGINT, False, 1)],
                         ids=["SIGTERM-group-2-workers", "SIGINT-pid-serial"])
def test_build_stops_cleanly_and_resumes_to_the_same_shards(grid, built, tmp_path, signum, group, num_proc):
    repo = tmp_path / "repo"
    total = len(shards_of(built))
    at = draw(f"build-{signum}-{group}-{num_proc}", 1, total // 2)
    run = Command(build_args(grid, repo, num_proc=num_proc), tmp_path)
    run.wait_until(lambda: len(shards_of(repo)) >= at, f"{at} shard(s)")
    note = assert_stopped(run, run.stop(signum, group), signum)

    kept = len(shards_of(repo))
    assert note == f"{kept} shard(s) kept in {repo}; run the same command with --resume to finish the build", note
    assert at <= kept < total
    assert temporaries(repo) == []
    assert not (repo / "manifest.json").exists()

    again = Command(build_args(grid, repo, resume=True, num_proc=num_proc), tmp_path, name="again")
    assert again.finish() == 0, again.stderr[-2000:]
    # Each of the two workers may have renamed a shard it had not yet recorded: the resume rewrites it.
    reused = int(re.search(r"reused from an earlier run: (\d+)", again.out_path.read_text()).group(1))
    assert kept - 2 <= reused <= kept, (reused, kept)
    ours, theirs = (json.loads((r / "manifest.json").read_text()) for r in (repo, built))
    assert ours["configs"] == theirs["configs"]  # every shard's sha256, rows and clip range
    assert (repo / "checksums.sha256").read_bytes() == (built / "checksums.sha256").read_bytes()
    assert temporaries(repo) == []


# ----------------------------------------------------------------------------- hugvis predict
SLOW_MODEL = '''
import time

import numpy as np


def matte(frames):
    """A user's matting model that takes its time (a real one does): alpha from the frames' brightness."""
    time.sleep(0.04)
    return np.asarray(frames, dtype=np.float64).mean(axis=3) / 255.0
'''


def predict_args(grid: Path, out: Path, resume: bool = False) -> list[str]:
    return ["predict", "matting", "--model", "slow_matte:matte", "--dataset", str(grid), "--out", str(out),
            "--chunk-frames", "5", "--no-progress"] + (["--resume"] if resume else [])


def outputs_of(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and not str(p.relative_to(out)).startswith(".")}


def test_predict_stops_cleanly_and_resumes_to_the_same_files(grid, tmp_path):
    (tmp_path / "slow_matte.py").write_text(SLOW_MODEL)
    env = {"PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
    reference = Command(predict_args(grid, tmp_path / "reference"), tmp_path, env, name="reference")
    assert reference.finish() == 0, reference.stderr[-2000:]

    out = tmp_path / "submission"
    at = draw("predict", 1, CLIPS // 2)
    run = Command(predict_args(grid, out), tmp_path, env)
    done = lambda: [p for p in out.glob("actor_*") if p.is_dir()]  # noqa: E731
    run.wait_until(lambda: len(done()) >= at, f"{at} clip(s) predicted")
    note = assert_stopped(run, run.stop(signal.SIGTERM, True), signal.SIGTERM)

    kept = len(done())
    assert note.endswith(f"of {CLIPS} clip(s) kept in {out}; run the same command with --resume to continue"), note
    assert at <= kept < CLIPS and kept_count(note) in (kept, kept - 1), (note, kept)
    assert temporaries(out) == []

    again = Command(predict_args(grid, out, resume=True), tmp_path, env, name="again")
    assert again.finish() == 0, again.stderr[-2000:]
    assert f"{CLIPS - kept} ok, 0 failed, {kept} skipped" in again.out_path.read_text()
    assert outputs_of(out) == outputs_of(tmp_path / "reference")


# ----------------------------------------------------------------------------- the queue worker
@pytest.mark.slow
def test_queue_worker_stops_releases_its_request_and_the_next_worker_resumes(grid, evaluated, tmp_path):
    import pandas as pd
    from huggingface_hub import HfApi

    sys.path.insert(0, str(Path(__file__).parent))
    from hub_server import serve_hub
    from hug_vis_dataset.leaderboard.requests import FINISHED, PENDING, RUNNING, RequestsRepo, request_path
    from hug_vis_dataset.leaderboard.submit import submit_request
    from hug_vis_dataset.scoring.runs import KEY_ENV

    system = grid.parent / "mattes"
    files = {str(p.relative_to(system)): p.read_bytes() for p in sorted(system.rglob("*"))
             if p.is_file() and not str(p.relative_to(system)).startswith(".")}
    work, results = tmp_path / "work", tmp_path / "results"
    with serve_hub() as (url, state):
        state.tokens.update({"alice-token": "alice", "worker-token": "leaderboard-worker"})
        state.create("alice/good", "dataset", files)
        state.create("hugvis/requests")
        submit_request(RequestsRepo("hugvis/requests", api=HfApi(endpoint=url, token="alice-token")), "matting",
                       "alice/good", "main", "GoodNet", "alice")
        env = {"HF_ENDPOINT": url, "HF_TOKEN": "worker-token", KEY_ENV: "signals-test-key", "HF_HUB_OFFLINE": "0",
               "HF_HUB_DISABLE_PROGRESS_BARS": "1"}

        def worker(name: str) -> Command:
            return Command(["leaderboard", "worker", "--requests-repo", "hugvis/requests", "--results", str(results),
                            "--dataset", str(grid), "--work-dir", str(work), "--worker-id", name, "--backend", "local", "--num-proc", "2",
                            "--device", "cpu", "--flush-every", "1", "--heartbeat", "1", "--stale-after", "600",
                            "--poll", "0.5", "--exit-when-idle"], tmp_path, env, name=name)

        def stored() -> dict:
            return json.loads(state.files("hugvis/requests")[request_path("matting", "GoodNet")])

        at = draw("worker", 1, CLIPS // 2)
        first = worker("A")
        parts = lambda: list(work.glob("*/results/matting/.work-GoodNet/rows/part-*.parquet"))  # noqa: E731
        first.wait_until(lambda: len(parts()) >= at, f"{at} persisted clip(s)", timeout=180)
        assert stored()["status"] == RUNNING
        note = assert_stopped(first, first.stop(signal.SIGTERM, True), signal.SIGTERM)
        kept = len(parts())
        assert note.startswith("request requests/matting/GoodNet.json released (PENDING again) for the next worker;")
        assert stored()["status"] == PENDING and stored()["history"][-1]["status"] == PENDING
        assert temporaries(work) == [] and not (results / "matting" / "GoodNet").exists()

        # With a stale time of 10 minutes, only the release lets the next worker take it at once.
        second = worker("B")
        assert second.finish() == 0, second.stderr[-2000:]
        final = stored()
    assert final["status"] == FINISHED, final
    assert [h["status"] for h in final["history"]] == ["PENDING", "RUNNING", "PENDING", "RUNNING", "FINISHED"]
    run = results / "matting" / "GoodNet"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["provenance"]["clips_computed_this_run"] == CLIPS - kept
    ours, theirs = pd.read_parquet(run / "rows.parquet"), pd.read_parquet(evaluated / "rows.parquet")
    pd.testing.assert_frame_equal(ours.drop(columns="model"), theirs.drop(columns="model"))
    assert temporaries(work) == [] and temporaries(results) == []


# ----------------------------------------------------------------------------- the Space's scoring
@pytest.mark.slow
def test_space_stopped_mid_score_leaves_no_upload_and_no_staging_folder(grid, mattes, tmp_path):
    """``hugvis space`` scoring an upload (the Score tab's ``/run`` endpoint, through gradio_client) is
    stopped while the staging folder already holds rows: the extraction and the staging folder go."""
    import socket
    import zipfile

    from gradio_client import Client, handle_file

    upload = tmp_path / "upload.zip"
    with zipfile.ZipFile(upload, "w") as archive:
        for path in sorted(mattes.rglob("*")):
            if path.is_file() and not path.relative_to(mattes).parts[0].startswith("."):
                archive.write(path, str(path.relative_to(mattes)))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    results, work, gradio_tmp = tmp_path / "results", tmp_path / "space", tmp_path / "gradio"
    space = Command(["space", "--release", str(grid), "--results", str(results), "--work-dir", str(work),
                     "--port", str(port)], tmp_path, {"GRADIO_TEMP_DIR": str(gradio_tmp)}, name="space")
    deadline, client = time.monotonic() + 180, None
    while client is None:
        try:
            client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        except Exception:  # noqa: BLE001 - not listening yet
            if space.process.poll() is not None or time.monotonic() > deadline:
                space.kill()
                pytest.fail(f"the Space did not start: {space.stderr[-2000:]}")
            time.sleep(0.5)
    # 12 clips of 1 s score in well under a second here: the stop lands a drawn moment (0-20 ms) after
    # the run's folder appears in the staging folder, while its clips are scored.
    after = draw("space", 0, 20) / 1000
    job = client.submit("matting", "SigNet", handle_file(str(upload)), api_name="/run")
    started = lambda: list(results.glob(".staging-*/matting/.work-SigNet/run.json"))  # noqa: E731
    space.wait_until(started, "scoring into the staging folder")
    time.sleep(after)
    assert list((work / "uploads").glob("upload-*")), "the upload is not extracted while it is scored"
    note = assert_stopped(space, space.stop(signal.SIGTERM, True), signal.SIGTERM)
    with contextlib.suppress(Exception):
        job.cancel()

    assert note.startswith("an upload being scored was dropped"), note
    assert list((work / "uploads").iterdir()) == []
    from hug_vis_dataset.outputs import GUARD_FILES

    # only the store's marker (the first write claimed it as a results store): no staging folder, no run
    assert sorted(p.name for p in results.iterdir() if p.name not in GUARD_FILES) == [], "staging or run left"
    assert [p.name for p in gradio_tmp.rglob("*.zip")] == []  # the Score tab deletes Gradio's copy too


# ----------------------------------------------------------------------------- stops anywhere, on a busy machine
@contextlib.contextmanager
def cpu_hog(processes: int = 2):
    """Processes that keep every core busy while the block runs: a race that shows only under load shows here."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def _whole_run_seconds(args: list[str], where: Path) -> float:
    start = time.monotonic()
    run = Command(args, where, name="timed")
    assert run.finish() == 0, run.stderr[-2000:]
    return time.monotonic() - start


@pytest.mark.slow
@pytest.mark.parametrize("command", ["evaluate", "build"])
def test_a_stop_at_any_moment_on_a_busy_machine_leaves_no_temporary_and_resumes(grid, mattes, evaluated, built,
                                                                                 tmp_path, command):
    """Stops drawn uniformly over the whole run (start-up, claim, scoring or shards, publishing), to the process
    or its group, with every core busy: no temporary survives, and the resumed run ends where an uninterrupted
    one does."""
    make = {"evaluate": lambda out, resume: evaluate_args(grid, out),
            "build": lambda out, resume: build_args(grid, out, resume=resume)}[command]
    output = {"evaluate": lambda root: root / "results", "build": lambda root: root / "repo"}[command]
    rng = random.Random(f"{SEED}/anywhere/{command}")

    def finished(out: Path) -> bool:
        """The output is the uninterrupted run's."""
        if command == "evaluate":
            return all((out / "matting" / "m" / name).is_file() and (out / "matting" / "m" / name).read_bytes()
                       == (evaluated / name).read_bytes() for name in ("rows.parquet", "frames.parquet"))
        return bool(sorted(shards_of(out))) and [p.read_bytes() for p in shards_of(out)] == [
            p.read_bytes() for p in shards_of(built)]

    with cpu_hog():
        seconds = _whole_run_seconds(make(output(tmp_path / "timed"), False), tmp_path)
        for attempt in range(4):
            where = tmp_path / f"stop-{attempt}"
            where.mkdir()
            signum, group = rng.choice([(signal.SIGINT, True), (signal.SIGTERM, False), (signal.SIGTERM, True)])
            run = Command(make(output(where), False), where, name="stopped")
            time.sleep(rng.uniform(0.0, seconds))
            status = run.stop(signum, group)
            if status == -signum:
                # The signal's default action: no handler of ours existed when it came. That is only while the
                # interpreter starts and imports the package, before the CLI's first step installs the handler
                # (hug_vis_dataset.cli.main), or while it shuts down after main returned (CPython puts the default
                # handlers back then): nothing made yet, or the whole result made, never a run cut in the middle.
                assert not output(where).exists() or finished(output(where)), (attempt, signum, run.stderr[-2000:])
                assert sorted(p.name for p in run.tmpdir.iterdir()) == []
            elif status != 0:  # a stop that came after the end finds nothing to interrupt
                assert_stopped(run, status, signum)
            assert temporaries(where) == [], (attempt, signum, group, temporaries(where))
            again = Command(make(output(where), True), where, name="again")
            assert again.finish() == 0, again.stderr[-2000:]
            assert temporaries(where) == []
            assert finished(output(where))

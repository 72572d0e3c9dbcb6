"""Ray across workers (and GPUs): identical rows to one local process, GPU requests, worker reuse, options."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pandas as pd
import pytest

from hug_vis_dataset.scoring import runner
from hug_vis_dataset.scoring.runner import (RunOptionError, check_gpus_per_worker, default_gpus_per_worker,
                                            evaluate_submission, run_ray)
from hug_vis_dataset.tasks import ClipJob


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("grid")
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=2, seconds=0.4, size=(48, 28), seed=5)
    return root


def matting_system(grid: Path) -> Path:
    return sorted(p for p in (grid / "simulated_systems" / "matting").iterdir() if p.is_dir())[1]


def stored(out: Path, model: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    d = out / "matting" / model
    return pd.read_parquet(d / "rows.parquet"), pd.read_parquet(d / "frames.parquet")


# ----------------------------------------------------------------------------- a real local Ray
@pytest.mark.slow
def test_ray_actors_give_the_rows_of_one_local_process(grid, tmp_path):
    system = matting_system(grid)
    base = evaluate_submission("matting", system, system.name, grid, tmp_path / "local", progress=False)
    ray_run = evaluate_submission("matting", system, system.name, grid, tmp_path / "ray", progress=False,
                                  backend="ray", num_proc=2, gpus_per_worker=0, flush_every=1)
    assert base.computed == ray_run.computed == 4
    rows0, frames0 = stored(tmp_path / "local", system.name)
    rows, frames = stored(tmp_path / "ray", system.name)
    assert len(rows0) == 4 * 5 and (rows0["status"] == "ok").all()
    pd.testing.assert_frame_equal(rows, rows0, check_exact=True)
    pd.testing.assert_frame_equal(frames, frames0, check_exact=True)
    assert ray_run.summary["aggregate"] == base.summary["aggregate"]
    assert ray_run.summary["provenance"]["gpus_per_worker"] == 0


@pytest.mark.slow
def test_ray_workers_are_long_lived_processes(grid):
    """Every clip goes to one of ``num_proc`` actor processes, so each keeps its models across clips."""
    import ray

    from hug_vis_dataset.tasks import ClipOutcome

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        jobs = [ClipJob(task="emotion", model="m", clip_id=f"actor_0001_happy_action_01_script_00{i}", reference=None,
                        expected=None, prediction=(), payload=None, metrics=(), options={}) for i in range(1, 7)]
        outcomes = list(run_ray(jobs, num_proc=2))
        assert sorted(o.clip_id for o in outcomes) == sorted(j.clip_id for j in jobs)
        assert all(isinstance(o, ClipOutcome) for o in outcomes)
        worker = ray.remote(num_cpus=1)(runner.ClipWorker).remote()
        first = ray.get(worker.pid.remote())
        assert ray.get([worker.pid.remote() for _ in range(4)]) == [first] * 4
    finally:
        ray.shutdown()


# ----------------------------------------------------------------------------- GPU requests (mocked Ray)
class FakeRay(types.ModuleType):
    """Just enough of ``ray`` to record what run_ray asks for; tasks run inline."""

    def __init__(self, gpus: float):
        super().__init__("ray")
        self.gpus, self.remote_options, self.actors, self.killed = gpus, [], [], 0
        self.initialized = False

    def is_initialized(self):
        return self.initialized

    def init(self, **kw):
        self.initialized, self.init_kw = True, kw

    def shutdown(self):
        self.initialized = False

    def cluster_resources(self):
        return {"CPU": 8.0, "GPU": self.gpus}

    def remote(self, **options):
        self.remote_options.append(options)
        fake = self

        def wrap(cls):
            class Handle:
                def __init__(self):
                    self.obj, self.calls = cls.__new__(cls), 0
                    fake.actors.append(self)
                    outer = self

                    class Method:
                        @staticmethod
                        def remote(job):
                            outer.calls += 1
                            return ("ref", job.clip_id)
                    self.score = Method()

            return types.SimpleNamespace(remote=Handle)
        return wrap

    def wait(self, refs, num_returns=1):
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        return ref[1]

    def kill(self, actor):
        self.killed += 1


def fake_jobs(n: int) -> list[ClipJob]:
    return [ClipJob(task="emotion", model="m", clip_id=f"c{i}", reference=None, expected=None, prediction=(),
                    payload=None, metrics=(), options={"device": "cuda"}) for i in range(n)]


@pytest.mark.parametrize("gpus_per_worker,cluster_gpus,workers", [(1, 4, 3), (0.5, 1, 2), (1, 2, 2), (0, 0, 3)])
def test_workers_request_gpus_and_fit_the_cluster(monkeypatch, gpus_per_worker, cluster_gpus, workers):
    fake = FakeRay(cluster_gpus)
    monkeypatch.setitem(sys.modules, "ray", fake)
    done = list(run_ray(fake_jobs(7), num_proc=3, gpus_per_worker=gpus_per_worker))
    assert sorted(done) == sorted(f"c{i}" for i in range(7))
    assert fake.remote_options == [{"num_cpus": 1, "num_gpus": float(gpus_per_worker)}]
    assert len(fake.actors) == workers  # never more actors than the GPUs can place
    assert sum(a.calls for a in fake.actors) == 7 and min(a.calls for a in fake.actors) >= 2
    assert fake.killed == workers and not fake.initialized  # a local Ray started here is stopped


def test_gpus_requested_on_a_cluster_without_gpus_is_one_line(monkeypatch):
    fake = FakeRay(0)
    monkeypatch.setitem(sys.modules, "ray", fake)
    with pytest.raises(RunOptionError, match=r"requests 1 GPU\(s\) but the cluster has 0") as err:
        list(run_ray(fake_jobs(2), num_proc=2, gpus_per_worker=1))
    assert "\n" not in str(err.value) and not fake.initialized


def test_ray_address_is_joined_and_left_running(monkeypatch):
    fake = FakeRay(2)
    monkeypatch.setitem(sys.modules, "ray", fake)
    list(run_ray(fake_jobs(3), num_proc=2, address="ray://head:10001", gpus_per_worker=1))
    assert fake.init_kw["address"] == "ray://head:10001" and fake.killed == 2


def test_evaluate_submission_passes_the_default_gpu_request(monkeypatch, grid, tmp_path):
    seen = {}

    def fake_run_ray(jobs, num_proc, address=None, max_in_flight=None, gpus_per_worker=0.0):
        seen.update(address=address, gpus=gpus_per_worker)
        return runner.run_local(jobs, 1)

    monkeypatch.setattr(runner, "run_ray", fake_run_ray)
    monkeypatch.setattr("hug_vis_dataset.models.device._cuda_available", lambda: True)
    system = matting_system(grid)
    res = evaluate_submission("matting", system, system.name, grid, tmp_path / "a", progress=False, backend="ray",
                              device="auto", ray_address="auto")
    assert seen == {"address": "auto", "gpus": 1.0} and res.summary["provenance"]["gpus_per_worker"] == 1.0
    evaluate_submission("matting", system, system.name, grid, tmp_path / "b", progress=False, backend="ray",
                        device="cuda", gpus_per_worker=0.25)
    assert seen["gpus"] == 0.25


# ----------------------------------------------------------------------------- options
def test_default_gpus_per_worker(monkeypatch):
    assert default_gpus_per_worker("ray", "cuda") == 1.0
    assert default_gpus_per_worker("ray", "CUDA:1") == 1.0
    assert default_gpus_per_worker("ray", "cpu") == 0.0
    assert default_gpus_per_worker("local", "cuda") == 0.0
    monkeypatch.setattr("hug_vis_dataset.models.device._cuda_available", lambda: False)
    assert default_gpus_per_worker("ray", "auto") == 0.0
    monkeypatch.setattr("hug_vis_dataset.models.device._cuda_available", lambda: True)
    assert default_gpus_per_worker("ray", "auto") == 1.0


@pytest.mark.parametrize("backend,value,match", [("local", 1, "Ray backend only"), ("local", 0, "Ray backend only"),
                                                 ("ray", -1, ">= 0"), ("ray", float("nan"), ">= 0"),
                                                 ("ray", True, ">= 0"), ("ray", "1", ">= 0")])
def test_bad_gpus_per_worker(backend, value, match):
    with pytest.raises(RunOptionError, match=match):
        check_gpus_per_worker(backend, value)


def test_good_gpus_per_worker():
    for value in (None, 0, 0.5, 2):
        check_gpus_per_worker("ray", value)
    check_gpus_per_worker("local", None)


def test_cli_gpus_per_worker_with_local_backend_is_one_line(grid, tmp_path):
    import subprocess

    repo = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", "evaluate", "matting", "--predictions",
                          str(matting_system(grid)), "--model", "m", "--dataset", str(grid), "--out",
                          str(tmp_path), "--gpus-per-worker", "1"], capture_output=True, text=True, cwd=repo)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == ["error: gpus_per_worker (--gpus-per-worker) applies to the Ray "
                                               "backend only; add --backend ray or drop it"]
    assert not (tmp_path / "matting").exists()


def test_progress_bar_counts_clips_with_rate_and_eta(capsys):
    assert list(runner._progress(range(3), 3, "matting/m", True)) == [0, 1, 2]
    err = capsys.readouterr().err
    assert "3/3" in err and "clip/s" in err and "<00:00" in err

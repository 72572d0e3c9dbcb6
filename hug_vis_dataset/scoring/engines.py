"""The engines of ``hugvis evaluate``: clip jobs scored in-process, in a spawn process pool, or on Ray actors.

Each yields :class:`~hug_vis_dataset.tasks.ClipOutcome` in completion order; a clip is a pure function of its
files, so the values do not depend on the engine. A stop (SIGINT/SIGTERM, :mod:`hug_vis_dataset.stopping`)
ends the workers: the local pool's children ignore SIGINT, die on SIGTERM and are terminated and joined by
the parent when the generator is closed; Ray's actors are killed.
"""

from __future__ import annotations

import os
import sys
from typing import Iterator, Sequence

from .. import stopping
from ..tasks import ClipJob, ClipOutcome, score_job
# Refused when a request is built (request.py, the one place options are checked); named here too for the callers
# that imported them from the engines.
from .request import RunOptionError, check_gpus_per_worker


def _worker_init() -> None:
    # A stop is the parent's to handle: a worker ignores SIGINT and dies on SIGTERM (stopping.py).
    stopping.child_init()
    # One thread per worker: the pool already uses the cores, and BLAS/torch thread pools per
    # process would oversubscribe them.
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    # numba on one thread before its OpenMP layer starts: starting it sets the process's OpenMP thread
    # count to numba's (every core), which is also torch's, so a worker set to 1 ran torch on 2 threads
    # after its first numba kernel (measured: tests/test_scoring.py::test_a_worker_keeps_one_thread).
    # Through numba's variable, read when numba is imported: a worker whose task has no numba kernel
    # (voice, emotion) does not import it (0.25 s) at start-up.
    if "numba" in sys.modules:
        sys.modules["numba"].set_num_threads(1)
    else:
        os.environ["NUMBA_NUM_THREADS"] = "1"
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover - torch is optional
        pass


def run_local(jobs: Sequence[ClipJob], num_proc: int) -> Iterator[ClipOutcome]:
    """Outcomes in completion order (serial when ``num_proc <= 1``, else a spawn process pool)."""
    if num_proc <= 1:
        for job in jobs:
            yield score_job(job)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    context = multiprocessing.get_context("spawn")  # fork is unsafe with torch/onnxruntime threads
    pool, futures, finished = None, [], False
    try:
        # A stop held while workers start is raised at the block's end: inside the try, so they are ended.
        with stopping.children_start():  # workers are spawned by the first submits, never more than the clips
            pool = ProcessPoolExecutor(max_workers=stopping.worker_count(num_proc, len(jobs)), mp_context=context,
                                       initializer=_worker_init)
            futures = [pool.submit(score_job, job) for job in jobs]
        for future in as_completed(futures):
            yield future.result()
        finished = True
    finally:
        if pool is None:
            pass
        elif finished:
            pool.shutdown(wait=True)
        else:
            # Stopped (or the consumer gave up): the queued clips are dropped, the running ones
            # ended; the workers computed nothing that is not in the parent, so nothing is lost.
            workers = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            stopping.end_processes(workers)
            pool.shutdown(wait=True)


def default_gpus_per_worker(backend: str, device: str) -> float:
    """GPUs each Ray worker requests when none is given: 1 for ``backend="ray"`` on CUDA, else 0.

    ``device="auto"`` counts as CUDA when torch sees a GPU on the driver machine.

    Example:
        >>> default_gpus_per_worker("ray", "cuda:0"), default_gpus_per_worker("ray", "cpu")
        (1.0, 0.0)
        >>> default_gpus_per_worker("local", "cuda")
        0.0
    """
    if backend != "ray":
        return 0.0
    name = str(device).strip().lower()
    if name == "auto":
        from ..models.device import resolve_device

        name = resolve_device("auto")
    return 1.0 if name.startswith("cuda") else 0.0


def ray_worker_options(gpus_per_worker: float) -> dict[str, float]:
    """Resources one Ray scoring worker (an actor) holds for its lifetime.

    Example:
        >>> ray_worker_options(0.5)
        {'num_cpus': 1, 'num_gpus': 0.5}
    """
    return {"num_cpus": 1, "num_gpus": float(gpus_per_worker)}


class ClipWorker:
    """One Ray scoring worker: a long-lived process that scores clip after clip.

    An actor, not plain Ray tasks, because Ray ends the worker process of a GPU *task* after
    every call (``max_calls=1`` is its default for tasks with ``num_gpus``): the models would be
    reloaded for every clip. The actor's process keeps :func:`hug_vis_dataset.tasks.models.process_models`
    (one :class:`~hug_vis_dataset.tasks.models.ModelCache` per process and device) across clips.
    """

    def __init__(self) -> None:
        _worker_init()

    def score(self, job: ClipJob) -> ClipOutcome:
        """One clip's rows, scored with this process's models."""
        return score_job(job)

    def pid(self) -> int:
        """This worker's process id (the same for every clip it scores)."""
        return os.getpid()


def run_ray(jobs: Sequence[ClipJob], num_proc: int, address: "str | None" = None,
            max_in_flight: "int | None" = None, gpus_per_worker: float = 0.0) -> Iterator[ClipOutcome]:
    """Outcomes in completion order from ``num_proc`` Ray actors (:class:`ClipWorker`).

    With ``address`` the run joins that cluster (``ray://host:10001`` or ``auto``); without it a
    local Ray with ``num_proc`` CPUs starts and stops here. Each worker holds one CPU and
    ``gpus_per_worker`` GPUs (a fraction lets workers share a GPU) and keeps its models loaded
    across clips; no more workers start than the cluster's CPUs and GPUs can hold. Each worker has
    at most two clips queued (``max_in_flight`` caps the total), so the driver's memory stays
    bounded on large grids.

    Raises:
        RunOptionError: GPUs requested but the cluster has fewer than ``gpus_per_worker``.
    """
    import ray

    jobs = list(jobs)
    num_proc = stopping.worker_count(num_proc, len(jobs))  # a local Ray's CPUs and the actors: never more than clips
    started = False
    if not ray.is_initialized():
        if address:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(num_cpus=max(1, num_proc), include_dashboard=False, log_to_driver=False,
                     runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})
        started = True
        # ray.init replaces the SIGTERM handler with sys.exit: a stop must still unwind through the
        # finally below (actors killed, the local Ray shut down) and print its one line.
        stopping.install(again=True)
    workers: list = []
    try:
        options = ray_worker_options(gpus_per_worker)
        resources = ray.cluster_resources()
        capacity = max(1, int(resources.get("CPU", num_proc)))
        if options["num_gpus"] > 0:
            gpus = float(resources.get("GPU", 0))
            if gpus < options["num_gpus"]:
                raise RunOptionError(f"each Ray worker requests {options['num_gpus']:g} GPU(s) but the cluster "
                                     f"has {gpus:g}; use --device cpu, a smaller --gpus-per-worker, or "
                                     "--ray-address of a cluster with GPUs")
            capacity = min(capacity, int(gpus // options["num_gpus"]))
        # A worker that the cluster cannot place would hold its queued clips forever.
        actor_class = ray.remote(**options)(ClipWorker)
        workers = [actor_class.remote() for _ in range(max(1, min(num_proc, capacity)))]
        per_worker = 2  # one clip running, the next one shipped
        window = min(max_in_flight or per_worker * len(workers), per_worker * len(workers))
        load = {i: 0 for i in range(len(workers))}
        owner: dict = {}
        queue = list(jobs)
        queue.reverse()  # pop() from the end keeps grid order
        while queue or owner:
            while queue and len(owner) < window:
                i = min(load, key=load.get)
                owner[workers[i].score.remote(queue.pop())] = i
                load[i] += 1
            done, _ = ray.wait(list(owner), num_returns=1)
            for ref in done:
                load[owner.pop(ref)] -= 1
                yield ray.get(ref)
    finally:
        for worker in workers:
            ray.kill(worker)  # frees the worker's GPU on a shared cluster
        if started:
            ray.shutdown()


__all__ = ["ClipWorker", "RunOptionError", "check_gpus_per_worker", "default_gpus_per_worker", "ray_worker_options",
           "run_local", "run_ray"]

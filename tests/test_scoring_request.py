"""One scoring request: built and checked once (``scoring/request.py``), the same from every door, run by named stages.

* A bad option is refused when the request is built, in one line naming the field and the fix.
* Every door (``hugvis evaluate``, the Space's upload scoring, the queue worker, the audit, the demo and
  ``evaluate_submission`` itself) builds an equal request for equivalent options: the doors' own request builders
  are called here, not stand-ins.
* ``run(request)`` and ``evaluate_submission(...)`` store identical rows, frames, coverage and summaries on the
  synthetic mini-grid.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path

import pandas as pd
import pytest

from hug_vis_dataset.scoring import runner
from hug_vis_dataset.scoring.request import EvaluationRequest, RunOptionError
from hug_vis_dataset.scoring.runner import STAGES, evaluate_submission, run

BASE = ("matting", Path("preds"), "MyNet", "release")


# ----------------------------------------------------------------------------- the request
@pytest.mark.parametrize("changes,field,fix", [
    ({"num_proc": 0}, "num_proc", "integer >= 1"),
    ({"chunk_frames": 2.5}, "chunk_frames", "integer >= 1"),
    ({"flush_every": True}, "flush_every", "integer >= 1"),
    ({"backend": "dask"}, "backend", "choose local or ray"),
    ({"gpus_per_worker": 1}, "gpus_per_worker", "add --backend ray or drop it"),
    ({"backend": "ray", "gpus_per_worker": -1}, "gpus_per_worker", "a number >= 0"),
    ({"protocol": "median"}, "protocol", "must be clip or rvm"),
    ({"metrics": "psnr"}, "metrics", "a list of strings such as"),
    ({"command_line": "hugvis evaluate"}, "command_line", "a list of strings such as"),
])
def test_a_bad_option_is_one_line_naming_the_field_and_the_fix(changes, field, fix):
    with pytest.raises(RunOptionError) as caught:
        EvaluationRequest(*BASE, **changes)
    message = str(caught.value)
    assert "\n" not in message and field in message and fix in message, message


def test_an_unknown_task_is_one_line_naming_the_known_ones():
    with pytest.raises(ValueError) as caught:
        EvaluationRequest("mating", Path("preds"), "MyNet", "release")
    assert str(caught.value).startswith("unknown task 'mating'; choose one of ") and "\n" not in str(caught.value)
    assert "matting" in str(caught.value)


def test_defaults_are_the_runners_and_the_request_is_frozen():
    import inspect

    request = EvaluationRequest(*BASE)
    signature = inspect.signature(evaluate_submission)
    for field in dataclasses.fields(EvaluationRequest):
        if field.name == "_":
            continue
        parameter = signature.parameters[field.name]  # every field is an argument of evaluate_submission ...
        if parameter.default is not inspect.Parameter.empty:  # ... with the same default
            assert getattr(request, field.name) == parameter.default, field.name
    assert set(signature.parameters) == {f.name for f in dataclasses.fields(EvaluationRequest)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.num_proc = 4  # type: ignore[misc]
    with pytest.raises(RunOptionError, match="num_proc"):  # replace() checks again
        dataclasses.replace(request, num_proc=0)


def test_sequences_compare_by_value_and_watchers_do_not_count():
    a = EvaluationRequest(*BASE, metrics=["mad", "mse"], command_line=["hugvis", "evaluate"],
                          on_scored=lambda done, todo: None)
    b = EvaluationRequest(*BASE, metrics=("mad", "mse"), command_line=("hugvis", "evaluate"), on_persisted=print)
    assert a == b and a.metrics == ("mad", "mse")
    assert a != dataclasses.replace(b, overwrite=True)


def test_the_stages_are_functions_named_by_the_stage():
    assert STAGES == ("resolve_inputs", "plan_the_rerun", "score_clips", "store_rows", "summarise")
    assert all(callable(getattr(runner, name)) for name in STAGES)


# ----------------------------------------------------------------------------- every door builds the same request
def cli_request(argv: list[str], command_line=("test",)) -> EvaluationRequest:
    """``hugvis evaluate``'s request for ``argv`` (its parser and its request builder)."""
    from hug_vis_dataset.scoring.commands import evaluate_request, register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["evaluate", *argv])
    return evaluate_request(args, args.predictions, args.model, command_line=command_line)


def test_the_space_builds_the_request_of_hugvis_evaluate():
    from hug_vis_dataset.space.uploads import upload_request

    space = upload_request("matting", Path("upload"), "MyNet", "release", Path("stage"), on_scored=lambda d, t: None)
    cli = cli_request(["matting", "--predictions", "upload", "--model", "MyNet", "--dataset", "release", "--out",
                       "stage", "--no-progress"], command_line=["space", "matting"])
    assert space == cli


def test_the_queue_worker_builds_the_request_of_hugvis_evaluate():
    from hug_vis_dataset.leaderboard.requests import ScoringRequest
    from hug_vis_dataset.leaderboard.worker import QueueWorker

    queued = ScoringRequest("vision_driven", "MyNet", "me/mynet", "a" * 40, "me", "2026-12-01T00:00:00+00:00")
    worker = QueueWorker(None, None, "hugvis/hug-vis", "work", worker_id="w1", dataset_revision="v1.0",
                         evaluate_options={"backend": "local", "num_proc": 2, "device": "cpu"})
    request = worker.evaluation_request(queued, Path("work/r/predictions"), Path("work/r/results"),
                                        on_scored=lambda d, t: None)
    cli = cli_request(["vision_driven", "--predictions", "work/r/predictions", "--model", "MyNet", "--dataset",
                       "hugvis/hug-vis", "--out", "work/r/results", "--revision", "v1.0", "--require-all-metrics",
                       "--num-proc", "2", "--device", "cpu", "--no-progress"], command_line=request.command_line)
    assert request == cli
    assert request.command_line[:3] == ("hugvis", "leaderboard", "worker")


def test_the_audit_builds_the_request_of_hugvis_evaluate():
    from hug_vis_dataset.audit.robustness import audit_request

    audit = audit_request("matting", Path("audit/variants/x"), "audit@x", "release", Path("audit/results"),
                          num_proc=2, progress=False, device="cpu")
    cli = cli_request(["matting", "--predictions", "audit/variants/x", "--model", "audit@x", "--dataset", "release",
                       "--out", "audit/results", "--num-proc", "2", "--overwrite", "--no-progress"], command_line=None)
    assert audit == dataclasses.replace(cli, command_line=None)  # the audit records its own process's command line


def test_the_demo_builds_the_request_of_hugvis_evaluate():
    from hug_vis_dataset.demo.pipeline import demo_request

    demo = demo_request("emotion", Path("demo/systems/e"), "e", "demo/release", Path("demo/results"), num_proc=2,
                        progress=True, command_line=["run_demo", "demo"])
    cli = cli_request(["emotion", "--predictions", "demo/systems/e", "--model", "e", "--dataset", "demo/release",
                       "--out", "demo/results", "--num-proc", "2"], command_line=["run_demo", "demo"])
    assert demo == cli


def test_evaluate_submission_builds_the_request_of_hugvis_evaluate(monkeypatch):
    asked = []
    monkeypatch.setattr(runner, "run", asked.append)
    evaluate_submission("voice_cloning", Path("p"), "m", "release", Path("out"), num_proc=3, backend="ray",
                        ray_address="auto", chunk_frames=16, flush_every=4, retry_failed=False,
                        require_all_metrics=True, protocol="clip", progress=False, command_line=["x"], revision="r",
                        device="cuda", batch_size=8, gpus_per_worker=0.5, verify_dataset=False, overwrite=True,
                        metrics=["utmos"], into_existing=True)
    cli = cli_request(["voice_cloning", "--predictions", "p", "--model", "m", "--dataset", "release", "--out", "out",
                       "--num-proc", "3", "--backend", "ray", "--ray-address", "auto", "--chunk-frames", "16",
                       "--flush-every", "4", "--keep-failed", "--require-all-metrics", "--protocol", "clip",
                       "--no-progress", "--revision", "r", "--device", "cuda", "--batch-size", "8",
                       "--gpus-per-worker", "0.5", "--no-verify-dataset", "--overwrite", "--metrics", "utmos",
                       "--into-existing"], command_line=["x"])
    assert asked == [cli]


# ----------------------------------------------------------------------------- run(request) == evaluate_submission
@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("request")
    synthesize(root / "grid", actors=2, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.4,
               size=(48, 28), seed=1)
    return root


def stored(folder: Path) -> dict:
    """Everything a run stored, the summary without its clock (when it ran, for how long)."""
    out = {name: pd.read_parquet(folder / name) for name in ("rows.parquet", "frames.parquet", "set_rows.parquet")
           if (folder / name).is_file()}
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    for key in ("started", "finished", "seconds"):
        summary["provenance"].pop(key)
    out["summary"] = summary
    out["coverage"] = json.loads((folder / "coverage.json").read_text(encoding="utf-8"))
    return out


@pytest.mark.parametrize("task", ["matting", "emotion", "vision_driven"])
def test_run_and_evaluate_submission_store_identical_rows(grid, task, monkeypatch):
    for var in [v for v in os.environ if v.startswith("HUGVIS_WEIGHT")]:  # no weight file: LPIPS/CSIM/FID skipped
        monkeypatch.delenv(var)
    (grid / "no-weights").mkdir(exist_ok=True)
    monkeypatch.setenv("HUGVIS_WEIGHTS_DIR", str(grid / "no-weights"))
    monkeypatch.setenv("HUGVIS_CACHE_DIR", str(grid / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    system = sorted(p for p in (grid / "grid" / "simulated_systems" / task).iterdir() if p.is_dir())[0]
    by_request = run(EvaluationRequest(task, system, system.name, grid / "grid", grid / "by-request", progress=False,
                                       command_line=["same"]))
    by_function = evaluate_submission(task, system, system.name, grid / "grid", grid / "by-function", progress=False,
                                      command_line=["same"])
    a, b = stored(by_request.rows_path.parent), stored(by_function.rows_path.parent)
    assert a.keys() == b.keys() and len(a["rows.parquet"]) > 0
    for name in a:
        if name.endswith(".parquet"):
            pd.testing.assert_frame_equal(a[name], b[name])
        else:
            assert a[name] == b[name], name
    assert (by_request.computed, by_request.coverage.to_dict()) == (by_function.computed, by_function.coverage.to_dict())
    pd.testing.assert_frame_equal(by_request.table, by_function.table)

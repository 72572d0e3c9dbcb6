"""Every Hub-id front door fails fast offline with one line naming the local alternative.

No test touches the real network: the Hub endpoint is a closed local port (``HF_ENDPOINT``), or an
offline flag is set. Elapsed times are measured and bounded loosely (< 10 s; the retrying default
of ``huggingface_hub`` takes ~23-26 s on the same endpoint).
"""

from __future__ import annotations

import dataclasses
import socket
import time
from pathlib import Path

import pytest

from hug_vis_dataset import cli
from hug_vis_dataset import hub
from hug_vis_dataset.readers import hub_access as H
from hug_vis_dataset import publish as pub
from hug_vis_dataset import references as R
from hug_vis_dataset.weights import registry

FAIL_FAST_S = 10.0
TINY_GRID = dict(actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.4, size=(64, 36))


def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


@pytest.fixture
def no_hub(monkeypatch, tmp_path):
    """No offline flag, the Hub endpoint a closed local port, empty caches."""
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", H.ENV_DATASET,
                registry.ENV_DIR, "HUGVIS_WEIGHT_SYNCNET_V2"):
        monkeypatch.delenv(var, raising=False)
    port = closed_port()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf_home" / "hub"))
    monkeypatch.setenv("HUGVIS_CACHE_DIR", str(tmp_path / "hugvis_cache"))
    monkeypatch.chdir(tmp_path)
    return port


def timed_cli(argv, capsys) -> "tuple[int, str, float]":
    start = time.perf_counter()
    status = cli.main(argv)
    seconds = time.perf_counter() - start
    return status, capsys.readouterr().err, seconds


# ----------------------------------------------------------------------------- the probe
def test_unreachable_reason_names_the_flag_the_refused_port_or_nothing(no_hub, monkeypatch):
    assert H.unreachable_reason() == f"127.0.0.1:{no_hub} did not accept a connection: Connection refused"
    for var in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):  # HF_HUB_OFFLINE is looked at first
        monkeypatch.setenv(var, "yes")
        assert H.unreachable_reason() == f"offline: {var} is set"
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert H.offline_flag() == "offline: HF_DATASETS_OFFLINE is set"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        assert H.unreachable_reason(url, honour_offline_flags=False) is None
        assert H.unreachable_reason(url) == "offline: HF_DATASETS_OFFLINE is set"
    finally:
        listener.close()


def test_unreachable_reason_bounds_a_silent_name_lookup(monkeypatch):
    # getaddrinfo is not covered by the socket timeout; the probe's own wait is.
    def hang(*args, **kwargs):
        time.sleep(5)
        raise OSError("never answered")

    monkeypatch.setattr(socket, "create_connection", hang)
    start = time.perf_counter()
    reason = H.unreachable_reason("https://hub.invalid", timeout=0.3, honour_offline_flags=False)
    assert reason == "hub.invalid:443 did not answer within 0.3 s"
    assert time.perf_counter() - start < 3


def test_connection_failures_are_told_apart_from_answers():
    import httpx
    from huggingface_hub.errors import LocalEntryNotFoundError, OfflineModeIsEnabled

    for err in (OfflineModeIsEnabled("x"), LocalEntryNotFoundError("x"), httpx.ConnectError("x"),
                httpx.ReadTimeout("x"), ConnectionRefusedError(), TimeoutError()):
        assert H.is_connection_failure(err), err
    for err in (ValueError("404"), FileNotFoundError("x"), RuntimeError("gated")):
        assert not H.is_connection_failure(err), err


# ----------------------------------------------------------------------------- hugvis evaluate / predict
def test_evaluate_with_the_hub_id_fails_fast_and_names_the_demo_repo(no_hub, tmp_path, capsys):
    (tmp_path / "sub").mkdir()
    status, err, seconds = timed_cli(["evaluate", "matting", "--predictions", str(tmp_path / "sub"), "--model", "m",
                                      "--dataset", "hugvis/hug-vis", "--out", str(tmp_path / "res")], capsys)
    print(f"hugvis evaluate --dataset hugvis/hug-vis, endpoint refused: {seconds:.2f} s")
    assert status == 1 and seconds < FAIL_FAST_S
    assert err == (f"error: hugvis/hug-vis is not reachable (127.0.0.1:{no_hub} did not accept a connection: "
                   f"Connection refused); {H.DATASET_ALTERNATIVE}\n")
    assert "--dataset demo_out/hug-vis" in err and not (tmp_path / "res").exists()


def test_predict_with_the_hub_id_offline_flag_fails_fast(no_hub, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    status, err, seconds = timed_cli(["predict", "matting", "--model", "baseline", "--dataset", "hugvis/hug-vis",
                                      "--out", str(tmp_path / "sub")], capsys)
    assert status == 1 and seconds < FAIL_FAST_S
    assert err == f"error: hugvis/hug-vis is not reachable (offline: HF_HUB_OFFLINE is set); {H.DATASET_ALTERNATIVE}\n"


def test_a_transformers_hub_model_fails_fast_offline(no_hub):
    from hug_vis_dataset.predict.adapters import TransformersEmotion

    start = time.perf_counter()
    with pytest.raises(H.HubUnreachableError) as caught:
        TransformersEmotion("someorg/emotion-model", pipeline_task="text-classification")
    assert time.perf_counter() - start < FAIL_FAST_S
    assert str(caught.value) == (f"someorg/emotion-model is not reachable (127.0.0.1:{no_hub} did not accept a "
                                 "connection: Connection refused); pass a downloaded model folder instead: "
                                 "--model transformers:/path/to/model (the folder with config.json)")


def test_a_cached_snapshot_is_used_offline(no_hub, tmp_path, monkeypatch):
    import huggingface_hub

    calls = []

    def cached_only(repo_id, local_files_only=False, **_):
        calls.append(local_files_only)
        folder = tmp_path / "snapshots" / ("c" * 40)
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", cached_only)
    folder, commit = R.download_repo("hugvis/hug-vis", task="matting")
    assert calls == [True] and commit == "c" * 40 and folder.is_dir()


def test_an_answer_of_a_reachable_hub_keeps_its_own_message(monkeypatch):
    import huggingface_hub

    def not_found(*args, **kwargs):
        raise RuntimeError("404 Client Error: Repository Not Found")

    monkeypatch.setattr(H, "unreachable_reason", lambda *a, **k: None)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", not_found)
    with pytest.raises(R.DatasetSourceError, match=r"cannot fetch the dataset 'hugvis/nope' .*404 .*demo_out/hug-vis"):
        R.download_repo("hugvis/nope", task="matting")


# ----------------------------------------------------------------------------- weights
def test_weights_download_fails_fast_naming_the_local_override(no_hub, capsys):
    status, err, seconds = timed_cli(["weights", "download", "syncnet_v2"], capsys)
    print(f"hugvis weights download syncnet_v2, endpoint refused: {seconds:.2f} s")
    spec = registry.get_spec("syncnet_v2")
    assert status == 1 and seconds < FAIL_FAST_S
    assert err == (f"error: syncnet_v2: {spec.repo_id} is not reachable (127.0.0.1:{no_hub} did not accept a connection: "
                   f"Connection refused); copy syncnet_v2.model from a machine with internet and set "
                   f"HUGVIS_WEIGHT_SYNCNET_V2=/path/to/syncnet_v2.model (or put it in $HUGVIS_WEIGHTS_DIR/)\n")


def test_url_weights_fail_fast_when_their_host_refuses(no_hub, monkeypatch, tmp_path):
    from hug_vis_dataset.weights import resolve

    spec = registry.get_spec("alexnet")
    url = f"http://127.0.0.1:{no_hub}/alexnet.pth"
    monkeypatch.setitem(registry.REGISTRY, "alexnet", dataclasses.replace(spec, url=url))
    with pytest.raises(H.HubUnreachableError) as caught:
        resolve("alexnet", download=True)
    assert str(caught.value).startswith(f"{url} is not reachable (127.0.0.1:{no_hub} did not accept a connection")
    assert "HUGVIS_WEIGHT_ALEXNET=/path/to/" in str(caught.value)
    assert not list((tmp_path / "hugvis_cache").rglob("*.pth"))


# ----------------------------------------------------------------------------- publish
def test_publish_refuses_before_any_request_when_offline(no_hub, tmp_path, monkeypatch):
    import huggingface_hub

    made = []
    monkeypatch.setattr(huggingface_hub, "HfApi", lambda *a, **k: made.append(1))
    targets = [pub.RepoTarget("hugvis/hug-vis", "dataset", tmp_path), pub.RepoTarget("hugvis/dtssd", "space", tmp_path)]
    with pytest.raises(H.HubUnreachableError, match=r"^hugvis/hug-vis, hugvis/dtssd is not reachable .*--dry-run"):
        pub.publish(targets)
    assert made == []


def test_publish_command_refuses_before_building_anything(no_hub, monkeypatch, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(pub, "materialise", lambda *a, **k: pytest.fail("materialised while offline"))
    status, err, seconds = timed_cli(["publish"], capsys)
    assert status == 1 and seconds < FAIL_FAST_S
    assert err == (f"error: hugvis/hug-vis, hugvis/* is not reachable (offline: HF_HUB_OFFLINE is set); "
                   f"{pub.OFFLINE_ALTERNATIVE}\n")


# ----------------------------------------------------------------------------- hug_vis_dataset.hub.load
@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Three built repos of one clip each, so the test can tell which one ``load`` read."""
    from hug_vis_dataset.demo import build_front_doors

    root = tmp_path_factory.mktemp("load")
    out = build_front_doors(root / "demo_out", grid=TINY_GRID, progress=False)
    return root, out["dataset"]


def test_load_order_explicit_then_env_then_demo_then_hub(built, tmp_path, monkeypatch):
    root, demo_repo = built
    monkeypatch.delenv(H.ENV_DATASET, raising=False)
    assert hub.resolve_dataset(cwd=tmp_path) == (H.HUB_DATASET_ID, "Hub id")
    assert hub.resolve_dataset(cwd=root) == (str(demo_repo), "demo output")             # ./demo_out/hug-vis
    assert hub.resolve_dataset(cwd=root / "demo_out") == (str(demo_repo), "demo output")  # ./hug-vis
    (tmp_path / "hug-vis").mkdir()  # a folder of that name that is no dataset is skipped
    assert hub.resolve_dataset(cwd=tmp_path) == (H.HUB_DATASET_ID, "Hub id")
    monkeypatch.setenv(H.ENV_DATASET, "/data/hug-vis")
    assert hub.resolve_dataset(cwd=root) == ("/data/hug-vis", H.ENV_DATASET)
    assert hub.resolve_dataset("/mine", cwd=root) == ("/mine", "argument")


def test_load_reads_the_demo_repo_and_the_env_repo(built, monkeypatch, tmp_path):
    import pyarrow.parquet as pq

    root, demo_repo = built
    monkeypatch.delenv(H.ENV_DATASET, raising=False)
    monkeypatch.chdir(root)
    kwargs = dict(cache_dir=str(tmp_path / "cache"))
    ds = hub.load("matting", **kwargs)
    shard_ids = [c for p in sorted((demo_repo / "data" / "matting").glob("*.parquet"))
                 for c in pq.read_table(p, columns=["clip_id"]).column("clip_id").to_pylist()]
    assert ds["clip_id"] == shard_ids == ["actor_0001_happy_action_01_script_001"]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(H.ENV_DATASET, str(demo_repo))
    assert hub.load("clips", **kwargs)["clip_id"] == shard_ids
    with pytest.raises(ValueError, match="unknown config 'mattingg'"):
        hub.load("mattingg")


def test_load_without_a_local_copy_fails_fast_offline(no_hub):
    start = time.perf_counter()
    with pytest.raises(H.HubUnreachableError) as caught:
        hub.load("matting")
    seconds = time.perf_counter() - start
    print(f"hug_vis_dataset.hub.load offline, endpoint refused: {seconds:.2f} s")
    assert seconds < FAIL_FAST_S
    assert str(caught.value) == (f"hugvis/hug-vis is not reachable (127.0.0.1:{no_hub} did not accept a connection: "
                                 f"Connection refused); {H.LOAD_ALTERNATIVE}")
    assert "HUGVIS_DATASET=PATH" in str(caught.value)

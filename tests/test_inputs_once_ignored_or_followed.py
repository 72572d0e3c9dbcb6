"""Five inputs that were silently ignored, followed, unbounded or crashing.

1. ``$HUGVIS_WEIGHTS_DIR`` naming a file or nothing: one line at every door (resolve, ``hugvis weights``,
   the scorers' availability check, ``hugvis evaluate``).
2. ``hugvis publish``: a symbolic link in a folder it copies is refused (never followed), and a
   ``metrics/<name>/`` folder without ``<name>.py`` is refused instead of left out.
3. The OpenAI-compatible adapter's ``timeout`` is a deadline for the whole request (a real server on
   127.0.0.1 that drips one byte at a time).
4. ``transformers:`` folders whose ``config.json`` is a list, broken JSON or not UTF-8: one line naming it.
5. ``hugvis validate`` warns about every unknown path, the top level included; ``--strict`` fails on them.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
from hostile_cli import assert_one_line_error, run_cli, snapshot

from hug_vis_dataset import weights as W

REPO = Path(__file__).resolve().parents[1]
DIR_FIX = "point HUGVIS_WEIGHTS_DIR at a folder holding the weight files, or unset it"


# ----------------------------------------------------------------------------- 1. HUGVIS_WEIGHTS_DIR
@pytest.fixture
def bad_weights_dir(request, tmp_path, monkeypatch):
    """``HUGVIS_WEIGHTS_DIR`` set to a missing folder or to a file; returns (value, what is wrong)."""
    for var in [v for v in os.environ if v.startswith("HUGVIS_WEIGHT")]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("HUGVIS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    if request.param == "missing":
        value, wrong = tmp_path / "no-such-folder", "does not exist"
    else:
        value, wrong = tmp_path / "weights.tar", "is not a folder"
        value.write_bytes(b"not a folder")
    monkeypatch.setenv(W.ENV_DIR, str(value))
    return str(value), wrong


def _dir_line(value: str, wrong: str) -> str:
    return f"HUGVIS_WEIGHTS_DIR={value} {wrong}: {DIR_FIX}"


@pytest.mark.parametrize("bad_weights_dir", ["missing", "file"], indirect=True)
def test_bad_weights_dir_is_one_line_in_the_library(bad_weights_dir):
    value, wrong = bad_weights_dir
    with pytest.raises(W.WeightsDirError) as caught:
        W.weights_dir()
    assert str(caught.value) == _dir_line(value, wrong)
    # Even a file that ships in a pip package is not silently taken from elsewhere: the folder was asked for.
    with pytest.raises(W.WeightsDirError) as caught:
        W.resolve("lpips_alex_linear")
    assert str(caught.value) == _dir_line(value, wrong)
    assert isinstance(caught.value, W.WeightsMissingError)  # every handler of a bad override reports it
    status = W.weight_status("syncnet_v2", check=True)
    assert status.hash_status == "bad override" and status.failed and status.problem == _dir_line(value, wrong)
    assert W.check_loadable("arcface_det_10g") == _dir_line(value, wrong)


@pytest.mark.parametrize("bad_weights_dir", ["missing", "file"], indirect=True)
@pytest.mark.parametrize("action", [["list"], ["verify"], ["verify", "lpips_alex_linear"], ["download", "syncnet_v2"]])
def test_bad_weights_dir_is_one_error_line_of_hugvis_weights(bad_weights_dir, action, capsys):
    value, wrong = bad_weights_dir
    status, out, err = run_cli(capsys, "weights", *action)
    line = assert_one_line_error((status, out, err), 1, f"HUGVIS_WEIGHTS_DIR={value} {wrong}", DIR_FIX)
    assert line == "error: " + _dir_line(value, wrong)
    assert out == ""  # no table with every file "missing" above the error


@pytest.mark.parametrize("bad_weights_dir", ["missing", "file"], indirect=True)
def test_bad_weights_dir_is_the_reason_metrics_are_skipped(bad_weights_dir):
    from hug_vis_dataset.tasks import get_task

    value, wrong = bad_weights_dir
    # CSIM needs two files: the reason is said once, not once per file.
    assert W.missing_note(["arcface_det_10g", "arcface_w600k_r50"]) == _dir_line(value, wrong)
    availability = get_task("vision_driven").availability()
    skipped = "skipped: " + _dir_line(value, wrong)
    assert {m: availability[m] for m in ("lpips", "csim", "psnr", "ssim", "fid")} == {
        "lpips": skipped, "csim": skipped, "psnr": "", "ssim": "", "fid": skipped}
    # The rows beyond the paper that need files (MediaPipe's trackers) give the same one reason; the rest run.
    from hug_vis_dataset import catalog

    beyond = {m.name: m for m in catalog.metrics_of("vision_driven") if m.name not in ("lpips", "csim", "psnr", "ssim", "fid")}
    assert any(m.weights for m in beyond.values())
    assert {name: availability[name] for name in beyond} == {
        name: skipped if m.weights else "" for name, m in beyond.items()}


@pytest.mark.parametrize("bad_weights_dir", ["missing"], indirect=True)
def test_hugvis_evaluate_names_the_bad_weights_dir_and_still_scores_the_rest(bad_weights_dir, tmp_path, capsys):
    """The scoring door: the run completes with the metrics that need no weights, and the loud line
    names the variable as the reason for the others (``--require-all-metrics`` makes it the error)."""
    from hug_vis_dataset.synth import synthesize

    value, wrong = bad_weights_dir
    grid = tmp_path / "grid"
    synthesize(grid, actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.2, size=(32, 18), seed=4)
    system = sorted(p for p in (grid / "simulated_systems" / "vision_driven").iterdir() if p.is_dir())[0]
    status, out, err = run_cli(capsys, "evaluate", "vision_driven", "--predictions", system, "--model", "m",
                               "--dataset", grid, "--out", tmp_path / "res", "--no-progress")
    assert status == 0 and "Traceback" not in out + err
    lost = [line for line in err.splitlines() if "NOT computed" in line]
    assert len(lost) == 1 and _dir_line(value, wrong) in lost[0]
    from hug_vis_dataset import catalog

    assert catalog.spec("psnr").header in out and catalog.spec("ssim").header in out  # the board's headers
    result = run_cli(capsys, "evaluate", "vision_driven", "--predictions", system, "--model", "m2",
                     "--dataset", grid, "--out", tmp_path / "res", "--no-progress", "--require-all-metrics")
    assert_one_line_error(result, 2, f"HUGVIS_WEIGHTS_DIR={value} {wrong}", DIR_FIX)


def test_a_real_weights_dir_is_used_and_an_empty_value_is_unset(tmp_path, monkeypatch):
    for var in [v for v in os.environ if v.startswith("HUGVIS_WEIGHT")]:
        monkeypatch.delenv(var)
    packaged = W.resolve("lpips_alex_linear")
    folder = tmp_path / "weights"
    folder.mkdir()
    monkeypatch.setenv(W.ENV_DIR, str(folder))
    assert W.weights_dir() == folder
    assert W.find_weight("lpips_alex_linear") == (packaged, "package")  # an empty folder falls through
    shutil.copy(packaged, folder / "alex.pth")
    assert W.find_weight("lpips_alex_linear") == (folder / "alex.pth", W.ENV_DIR)
    assert W.check_loadable("lpips_alex_linear") is None
    monkeypatch.setenv(W.ENV_DIR, "")
    assert W.weights_dir() is None and W.find_weight("lpips_alex_linear") == (packaged, "package")


# ----------------------------------------------------------------------------- 2. publish
LINK_FIX = "publishing never follows a link: replace each link by the file it points to"
MODULE_FIX = "regenerate the module folders with `python -m hug_vis_dataset.publish.module_folders metrics`, or remove the folder"


def _dataset_dir(tmp_path: Path) -> tuple[Path, Path]:
    """A dataset repo folder and, outside it, a secret file its link points at."""
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text("SECRET-BYTES-22", encoding="utf-8")
    dataset = tmp_path / "ds"
    (dataset / "data" / "matting").mkdir(parents=True)
    (dataset / "README.md").write_text("---\nlicense: other\n---\n# card\n", encoding="utf-8")
    return dataset, secret


def _holds_secret(folder: Path) -> bool:
    return any(b"SECRET-BYTES-22" in p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.mark.parametrize("kind", ["file", "folder"])
def test_publish_dry_run_refuses_a_symlink_in_the_dataset_dir(tmp_path, capsys, kind):
    dataset, secret = _dataset_dir(tmp_path)
    link = dataset / "data" / "matting" / ("test-00000.parquet" if kind == "file" else "more")
    os.symlink(secret if kind == "file" else secret.parent, link)
    out_dir = tmp_path / "out"
    status, out, err = run_cli(capsys, "publish", "--dry-run", out_dir, "--dataset-dir", dataset)
    assert status == 2 and "Traceback" not in out + err
    assert err.count("\n") == 2 and err.startswith("hugvis publish: symbolic link(s) in ")  # + the count line
    assert err.splitlines()[1] == "hugvis publish: not fit to publish: 1 problem(s) in 1 folder(s); fix each one above and run again"
    assert f"{link} -> {os.readlink(link)}" in err and LINK_FIX in err
    assert not out_dir.exists()  # refused before anything is written
    assert not _holds_secret(tmp_path / "ds")  # the link itself is left as it is, unread


def test_publish_never_copies_or_lists_through_a_link(tmp_path):
    from hug_vis_dataset import publish as pub

    metrics = tmp_path / "metrics"
    shutil.copytree(REPO / "metrics" / "psnr", metrics / "psnr")
    _dataset, secret = _dataset_dir(tmp_path)
    os.symlink(secret, metrics / "psnr" / "extra.txt")
    with pytest.raises(pub.PublishError) as caught:
        pub.materialise(tmp_path / "out", include_dataset=False, metrics_root=metrics, explorer_dir=tmp_path / "none")
    text = str(caught.value)
    line, count = text.splitlines()  # the problem, then the count line
    assert str(metrics / "psnr" / "extra.txt") in line and LINK_FIX in line and count == "not fit to publish: 1 problem(s) in 1 folder(s); fix each one above and run again"
    assert not (tmp_path / "out").exists()
    with pytest.raises(pub.PublishError, match="replace each link by the file"):
        pub.local_files(metrics / "psnr")  # what an upload lists: refused the same way
    assert pub.symlinks_in(metrics) == [metrics / "psnr" / "extra.txt"]
    # Replaced by the file, as the message says: it publishes, byte for byte.
    (metrics / "psnr" / "extra.txt").unlink()
    shutil.copy(secret, metrics / "psnr" / "extra.txt")
    targets = pub.materialise(tmp_path / "out", include_dataset=False, metrics_root=metrics,
                              explorer_dir=tmp_path / "none")
    assert [t.repo_id for t in targets] == ["hugvis/psnr"]
    assert (targets[0].folder / "extra.txt").read_bytes() == secret.read_bytes()


def test_metrics_folder_without_its_module_file_is_refused(tmp_path, capsys, monkeypatch):
    from hug_vis_dataset import publish as pub

    metrics = tmp_path / "metrics"
    shutil.copytree(REPO / "metrics" / "psnr", metrics / "psnr")
    shutil.copytree(REPO / "metrics" / "ssim", metrics / "ssim")
    (metrics / "ssim" / "ssim.py").unlink()
    with pytest.raises(pub.PublishError) as caught:
        pub.metric_module_dirs(metrics)
    assert str(caught.value) == f"{metrics / 'ssim'} has no module file ssim.py; {MODULE_FIX}\nnot fit to publish: 1 problem(s) in 1 folder(s); fix each one above and run again"
    # Through `hugvis publish`: the real materialise, only its metrics folder redirected to this one.
    monkeypatch.setattr(pub, "materialise", functools.partial(pub.materialise, metrics_root=metrics,
                                                              explorer_dir=tmp_path / "none"))
    status, out, err = run_cli(capsys, "publish", "--dry-run", tmp_path / "out", "--no-dataset")
    assert status == 2 and "Traceback" not in out + err and err.count("\n") == 2
    assert err == f"hugvis publish: {metrics / 'ssim'} has no module file ssim.py; {MODULE_FIX}\nhugvis publish: not fit to publish: 1 problem(s) in 1 folder(s); fix each one above and run again\n"
    assert not (tmp_path / "out").exists()
    shutil.rmtree(metrics / "ssim")  # removed, as the message says: the rest publishes
    status, out, err = run_cli(capsys, "publish", "--dry-run", tmp_path / "out", "--no-dataset")
    assert status == 0 and "space hugvis/psnr:" in out, err


def test_the_repository_metrics_folders_all_have_their_module():
    from hug_vis_dataset import publish as pub

    folders = pub.metric_module_dirs()
    assert folders and all((f / f"{f.name}.py").is_file() for f in folders)
    assert pub.symlinks_in(REPO / "metrics") == []


# ----------------------------------------------------------------------------- 3. request deadline
CHAT_BODY = json.dumps({"choices": [{"message": {"role": "assistant", "content": "Happy"}}]}).encode()


class TinyServer:
    """An HTTP/1.1 chat-completions stand-in on a raw socket, in a daemon thread that stops by itself
    (after ``connections`` requests, or ``lifetime`` seconds). ``mode``: ``"ok"`` answers at once,
    ``"drip"`` sends the whole response a byte every ``interval`` s, ``"drip_body"`` sends the headers
    at once and drips the body, ``"late"`` answers once after ``interval`` s."""

    def __init__(self, mode: str, connections: int = 1, interval: float = 0.25, lifetime: float = 15.0):
        self.mode, self.interval, self.accepted = mode, interval, 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self._stop_at = time.monotonic() + lifetime
        self._left = connections
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            while self._left and time.monotonic() < self._stop_at:
                try:
                    conn, _ = self.sock.accept()
                except socket.timeout:
                    continue
                self.accepted += 1
                self._left -= 1
                with conn:
                    self._answer(conn)
        finally:
            self.sock.close()

    def _answer(self, conn: socket.socket) -> None:
        conn.settimeout(5)
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                data += conn.recv(65536)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            while len(body) < length:
                body += conn.recv(65536)
            headers = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                       b"Content-Length: %d\r\n\r\n" % len(CHAT_BODY))
            if self.mode == "late":
                time.sleep(self.interval)
            if self.mode == "drip_body":
                conn.sendall(headers)
            if self.mode in ("ok", "late"):
                conn.sendall(headers + CHAT_BODY)
                return
            payload = CHAT_BODY if self.mode == "drip_body" else headers + CHAT_BODY
            for i in range(len(payload)):
                if time.monotonic() > self._stop_at:
                    return
                conn.sendall(payload[i:i + 1])
                time.sleep(self.interval)
        except OSError:
            return  # the client gave up (its deadline shut the connection): what the test wants

    def close(self) -> None:
        self.thread.join(timeout=20)


def _chat(url: str, **options):
    from hug_vis_dataset.predict.adapters import OpenAIChat

    return OpenAIChat("tiny", base_url=url, api_key="", **options)


def _ask(model) -> str:
    return model({"prompt": "Which emotion?", "input_setting": "Text", "clip_id": "c"})


@pytest.mark.parametrize("mode", ["drip", "drip_body"])
def test_a_dripping_server_fails_the_request_at_its_deadline(mode):
    from hug_vis_dataset.predict import PredictionError

    server = TinyServer(mode)
    t0 = time.monotonic()
    with pytest.raises(PredictionError) as caught:
        _ask(_chat(server.url, timeout=1, retries=0))
    elapsed = time.monotonic() - t0
    server.close()
    assert 0.9 <= elapsed < 3, elapsed  # the old per-read timeout let this run for 100+ s
    assert str(caught.value) == "no answer after 1 attempt(s): timed out after 1 s"


def test_a_timed_out_attempt_is_retried_with_its_own_deadline():
    from hug_vis_dataset.predict import PredictionError

    server = TinyServer("drip", connections=2)
    t0 = time.monotonic()
    with pytest.raises(PredictionError) as caught:
        _ask(_chat(server.url, timeout=1, retries=1, backoff=0.1))
    elapsed = time.monotonic() - t0
    server.close()
    assert server.accepted == 2 and 2.0 <= elapsed < 4.5, (server.accepted, elapsed)
    assert str(caught.value) == "no answer after 2 attempt(s): timed out after 1 s"


@pytest.mark.parametrize("mode", ["ok", "late"])
def test_a_server_answering_within_the_deadline_still_works(mode):
    server = TinyServer(mode, interval=0.4)
    t0 = time.monotonic()
    assert _ask(_chat(server.url, timeout=2, retries=0)) == "Happy"
    elapsed = time.monotonic() - t0
    server.close()
    assert elapsed < 1.5, elapsed  # returns when answered, not when the deadline's timer would fire


def test_post_before_deadline_returns_the_whole_body():
    import urllib.request

    from hug_vis_dataset.predict.adapters import post_before_deadline

    server = TinyServer("ok")
    request = urllib.request.Request(server.url + "/chat/completions", data=b"{}",
                                     headers={"Content-Type": "application/json"})
    assert post_before_deadline(request, 2) == CHAT_BODY
    server.close()


# ----------------------------------------------------------------------------- 4. transformers config.json
CONFIG_FIX = "replace it with the model's own config.json (a JSON object, as save_pretrained writes it)"


@pytest.mark.parametrize("content,wrong", [
    (b'["BertForSequenceClassification"]', "holds a JSON list, not an object"),
    (b'"just a string"', "holds a JSON str, not an object"),
    (b'{"architectures": ["BertForSequenceClassification"', "is not valid JSON (Expecting ',' delimiter, "
                                                             "line 1 column 51)"),
    (b"", "is not valid JSON (Expecting value, line 1 column 1)"),
    (b'{"model_type": "bert", "name": "caf\xe9"}', "is not UTF-8 text (byte 35)"),
])
@pytest.mark.parametrize("pipeline_task", [None, "text-classification"])
def test_a_bad_config_json_is_one_line_naming_the_file(tmp_path, content, wrong, pipeline_task):
    from hug_vis_dataset.predict import PredictSetupError
    from hug_vis_dataset.predict.adapters import TransformersEmotion

    (tmp_path / "config.json").write_bytes(content)
    with pytest.raises(PredictSetupError) as caught:
        TransformersEmotion(str(tmp_path), pipeline_task=pipeline_task)
    assert str(caught.value) == f"{tmp_path / 'config.json'} {wrong}; {CONFIG_FIX}"


def test_architectures_that_are_not_a_list_of_names_are_named(tmp_path):
    from hug_vis_dataset.predict import PredictSetupError
    from hug_vis_dataset.predict.adapters import TransformersEmotion

    (tmp_path / "config.json").write_text('{"architectures": "BertForSequenceClassification"}', encoding="utf-8")
    with pytest.raises(PredictSetupError) as caught:
        TransformersEmotion(str(tmp_path))
    assert str(caught.value).startswith(f"{tmp_path / 'config.json'}: \"architectures\" is "
                                        f"'BertForSequenceClassification', not a list of class names; fix the file")


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("release")
    synthesize(root, actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.2, size=(32, 18), seed=5,
               systems=False)
    return root


def test_hugvis_predict_with_a_list_config_json_is_one_error_line(release, tmp_path, capsys):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("[1, 2]", encoding="utf-8")
    result = run_cli(capsys, "predict", "emotion", "--dataset", release, "--model", f"transformers:{model}",
                     "--out", tmp_path / "sub", "--no-progress")
    line = assert_one_line_error(result, 2, str(model / "config.json"), "holds a JSON list, not an object",
                                 CONFIG_FIX)
    assert line == f"error: {model / 'config.json'} holds a JSON list, not an object; {CONFIG_FIX}"


# ----------------------------------------------------------------------------- 5. validate
@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> Path:
    """A synthetic release with its simulated systems, as ``hugvis synth`` writes it."""
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("synthetic") / "release"
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.2, size=(32, 18), seed=6)
    return root


def test_the_synthetic_release_validates_without_any_warning(synthetic, capsys):
    from hug_vis_dataset.validate import validate_release

    report = validate_release(synthetic)
    assert report.ok and report.problems == []
    status, out, err = run_cli(capsys, "validate", synthetic, "--strict")
    assert status == 0 and "warnings: 0" in out and err == ""


@pytest.fixture
def cluttered(synthetic, tmp_path) -> Path:
    """The synthetic release plus one unknown top-level file, folder and link, and a metadata stray."""
    root = tmp_path / "release"
    shutil.copytree(synthetic, root, symlinks=True)
    (root / "README.md").write_text("notes\n", encoding="utf-8")
    (root / "extras" / "deep").mkdir(parents=True)
    (root / "extras" / "deep" / "a.bin").write_bytes(b"x")
    (root / "metadata" / "clips_old.csv").write_text("clip_id\n", encoding="utf-8")
    os.symlink(tmp_path, root / "elsewhere")  # a link is reported, never followed
    return root


def test_unknown_paths_at_the_top_level_are_warnings(cluttered, capsys):
    from hug_vis_dataset.validate import validate_release

    before = snapshot(cluttered)
    report = validate_release(cluttered)
    assert report.ok and report.errors == []
    assert sorted(p.message for p in report.warnings) == [
        "README.md is not a file of the release layout; remove it or move it out of the release",
        "elsewhere/ is not a folder of the release layout; remove it or move it out of the release",
        "extras/ is not a folder of the release layout; remove it or move it out of the release",
        "metadata/clips_old.csv is not a file of the release layout; remove it or move it out of the release",
    ]
    assert {(p.clip_id, p.check) for p in report.warnings} == {("", "unlisted")}
    status, out, err = run_cli(capsys, "validate", cluttered)
    assert status == 0 and "Traceback" not in out + err and out.count("warning: [unlisted]") == 4
    assert "(release): warning: [unlisted] README.md is not a file of the release layout" in out
    status, out, err = run_cli(capsys, "validate", cluttered, "--json")
    assert status == 0 and json.loads(out)["warning_count"] == 4
    status, out, err = run_cli(capsys, "validate", cluttered, "--strict")
    assert status == 1 and "Traceback" not in out + err and out.count("warning: [unlisted]") == 4
    assert err == "--strict: 4 warning(s), see the lines above\n"
    assert snapshot(cluttered) == before  # validation reads, it never tidies


def test_strict_is_in_the_validate_help(capsys):
    status, out, _ = run_cli(capsys, "validate", "--help")
    assert status == 0 and "--strict" in out and "exit 1 on warnings too" in " ".join(out.split())


def test_unlisted_media_below_the_top_level_keep_their_wording(synthetic, tmp_path):
    from hug_vis_dataset.validate import validate_release

    root = tmp_path / "release"
    shutil.copytree(synthetic, root)
    stray = root / "audio" / "actor_0009" / "happy" / "action_01" / "script_001.wav"
    stray.parent.mkdir(parents=True)
    stray.write_bytes(b"RIFF")
    messages = [p.message for p in validate_release(root).warnings]
    assert messages == [f"{stray.relative_to(root).as_posix()} is not listed in metadata/clips.csv; remove it or add "
                        f"its clip"]

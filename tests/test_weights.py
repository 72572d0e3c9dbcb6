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

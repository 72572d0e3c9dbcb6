"""Property: whatever inputs and output a user names, every writing command leaves their files as they were.

For each writing command (``synth``, ``build``, ``evaluate``, ``predict``, ``report``, ``mos``, ``publish``),
hypothesis (derandomized) draws an arrangement of its inputs and its output:

* a new folder, an empty one, a folder of someone's files (with or without ``--into-existing``, and with or
  without a file at a path the command itself writes), a folder another command made;
* the output equal to an input, inside one (also a dot-folder inside it), holding one, or reaching one
  through a symbolic link (the link itself, or a folder below it);
* every path given absolute, or relative to the working folder.

The property, checked after the command ran through ``hugvis``'s own entry point: every input tree and every
file of someone else is byte-identical (paths, sizes, sha256, links), and the command either did its job (its
output is there, marked by the toolkit) or refused with exit status 1 or 2 and one line that names the output
(and, for an overlap, the input). ``cache clear`` and ``demo`` have tests of their own below.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hug_vis_dataset.outputs import MARKER, claim, read_marker

SETTINGS = settings(max_examples=14, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
CLIP = "actor_0001_happy_action_01_script_001"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """Every input tree once: a release with simulated systems, its built repo, a store with one run, a ratings CSV."""
    from hug_vis_dataset.hub.builder import build_repo
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("world")
    synthesize(root / "release", actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.2,
               size=(32, 18), seed=5)
    systems = root / "release" / "simulated_systems"
    shutil.copytree(systems / "matting" / "matte_good", root / "preds")
    shutil.copy2(systems / "mos_ratings.csv", root / "ratings.csv")
    evaluate_submission("matting", root / "preds", "m", root / "release", root / "results", progress=False)
    build_repo(root / "release", root / "repo", measure_storage=False)
    return root


@dataclass(frozen=True)
class Command:
    """How to run one writing command: its input trees, its arguments, what it leaves when it succeeds."""

    name: str
    inputs: tuple[str, ...]
    argv: Callable[[dict, str], list]
    made: Callable[[Path], bool]
    writes: str  # a path the command writes inside its output (a user's file planted there must stop it)
    kind: str
    into_existing: bool = True  # has --into-existing (build and publish write only into new or empty folders)


def _has(*names: str) -> Callable[[Path], bool]:
    return lambda out: all((out / n).exists() for n in names)


COMMANDS = {c.name: c for c in [
    Command("synth", (), lambda i, o: ["synth", o, "--actors", "1", "--scripts", "1", "--actions", "1", "--emotions",
                                       "Happy", "--seconds", "0.2", "--size", "32x18", "--no-systems"],
            _has("metadata/clips.csv"), "metadata/clips.csv", "release"),
    Command("build", ("release",), lambda i, o: ["build", i["release"], o, "--no-storage-report"],
            _has("README.md", "manifest.json"), "README.md", "dataset-repo", into_existing=False),
    Command("evaluate", ("release", "preds"),
            lambda i, o: ["evaluate", "matting", "--predictions", i["preds"], "--model", "m", "--dataset", i["release"],
                          "--out", o, "--no-progress", "--overwrite"],
            _has("matting/m/summary.json"), "matting/m/summary.json", "results"),
    Command("predict", ("release",),
            lambda i, o: ["predict", "matting", "--model", "baseline", "--dataset", i["release"], "--out", o,
                          "--no-progress"],
            _has(f"{CLIP}/000000.png"), f"{CLIP}/000000.png", "submission"),
    Command("report", ("results",),
            lambda i, o: ["report", i["results"], "--out", o, "--n-boot", "0", "--no-figures", "--format", "md"],
            _has("report.md"), "report.md", "report"),
    Command("mos", ("ratings.csv",), lambda i, o: ["mos", i["ratings.csv"], "--out", o, "--n-boot", "1"],
            _has("mos.csv", "mos.json"), "mos.csv", "mos"),
    Command("publish", ("repo",), lambda i, o: ["publish", "--dry-run", o, "--dataset-dir", i["repo"]],
            _has("spaces", "datasets"), "spaces/x", "publish", into_existing=False),
]}

ARRANGEMENTS = ("new", "empty", "theirs", "theirs-into", "theirs-colliding", "other-kind", "same", "inside",
                "inside-dot", "holds", "link-same", "link-inside")
OVERLAPS = {"same", "inside", "inside-dot", "holds", "link-same", "link-inside"}


def snapshot(*roots: Path) -> dict:
    """Every entry under the roots (links not followed): kind, size and sha256, or the link's target."""
    seen = {}
    for root in roots:
        if not os.path.lexists(root):
            continue
        for path in [root, *sorted(root.rglob("*"))] if root.is_dir() and not root.is_symlink() else [root]:
            if path.is_symlink():
                seen[str(path)] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[str(path)] = ("dir",)
            else:
                seen[str(path)] = ("file", path.stat().st_size, hashlib.sha256(path.read_bytes()).hexdigest())
    return seen


def run_hugvis(argv: list) -> tuple[int, str]:
    """``hugvis ARGV`` through its entry point, in this process; (exit status, stderr)."""
    from hug_vis_dataset.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as done:  # argparse
            code = int(done.code or 0)
    return code, err.getvalue()


def arrange(base: Path, world: Path, command: Command, arrangement: str, overlapped: str) -> tuple[dict, Path, list]:
    """Copy the inputs into ``base``, make the output's place; returns (inputs, output path, protected roots)."""
    inputs = {}
    for name in command.inputs:
        source = world / name
        where = base / ("wrap" if arrangement == "holds" and name == overlapped else "") / name
        where.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, where)
        inputs[name] = where
    theirs = base / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("someone's notes\n")
    (theirs / ".hidden").mkdir()
    (theirs / ".hidden" / "keep.bin").write_bytes(os.urandom(64))
    protected = [*inputs.values(), theirs]
    target = inputs.get(overlapped)
    if arrangement == "new":
        out = base / "new" / "out"
    elif arrangement == "empty":
        out = base / "empty"
        out.mkdir()
    elif arrangement.startswith("theirs"):
        out = theirs
        if arrangement == "theirs-colliding":
            (theirs / command.writes).parent.mkdir(parents=True, exist_ok=True)
            (theirs / command.writes).write_text("someone's file at a path the command writes\n")
    elif arrangement == "other-kind":
        out = base / "other"
        claim("hugvis test", out, "audit" if command.kind != "audit" else "report").ensure()
        (out / "their-result.json").write_text("{}")
        protected.append(out)
    elif arrangement == "same":
        out = target
    elif arrangement == "inside":
        out = target / "out" if target.is_dir() else target.parent / target.name / "out"
    elif arrangement == "inside-dot":
        out = target / ".cache" / "out"
    elif arrangement == "holds":
        out = base / "wrap"
    else:  # through a link to the input
        (base / "link").symlink_to(target)
        out = base / "link" if arrangement == "link-same" else base / "link" / "sub"
        protected.append(base / "link")
    return inputs, out, protected


def check_command(world: Path, command: Command, arrangement: str, relative: bool, overlapped: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        inputs, out, protected = arrange(base, world, command, arrangement, overlapped)
        before = snapshot(*protected)
        shown = {k: (os.path.relpath(v, base) if relative else str(v)) for k, v in inputs.items()}
        named = os.path.relpath(out, base) if relative else str(out)
        argv = command.argv(shown, named)
        if arrangement in ("theirs-into", "theirs-colliding") and command.into_existing:
            argv.append("--into-existing")
        old = os.getcwd()
        os.chdir(base)
        try:
            code, err = run_hugvis(argv)
        finally:
            os.chdir(old)
        after = snapshot(*protected)
        if out == base / "theirs":  # written into (allowed or not): what was there must be there, unchanged
            assert {k: after.get(k) for k in before} == before, f"{command.name} {arrangement}: their files changed\n{err}"
            assert not {k for k in after if k not in before and not k.startswith(str(out))}
        else:  # an input tree (or someone's folder elsewhere) gets nothing new, loses nothing
            assert after == before, f"{command.name} {arrangement}: someone's files changed\n{err}"
        lines = [line for line in err.strip().splitlines() if line]
        must_refuse = (arrangement in OVERLAPS or arrangement in ("theirs", "other-kind", "theirs-colliding")
                       or (command.name in ("build", "publish") and arrangement == "theirs-into"))
        if must_refuse:
            assert code in (1, 2), f"{command.name} {arrangement} was not refused: {code}\n{err}"
        if code == 0:
            resolved = out.resolve()
            assert command.made(resolved), f"{command.name} {arrangement}: exit 0 but no output\n{err}"
            assert read_marker(resolved)["kind"] == command.kind
            return
        assert code in (1, 2) and len(lines) == 1, f"{command.name} {arrangement}: {code}, not one line:\n{err}"
        assert named in lines[0] or str(out) in lines[0] or (arrangement == "theirs-colliding"
                                                            and command.writes in lines[0]), lines[0]
        if arrangement in OVERLAPS:
            assert shown[overlapped] in lines[0] or str(inputs[overlapped]) in lines[0], lines[0]


@pytest.mark.parametrize("name", sorted(COMMANDS))
@SETTINGS
@given(data=st.data())
def test_a_command_never_changes_what_it_did_not_make(world, name, data):
    command = COMMANDS[name]
    arrangements = ARRANGEMENTS if command.inputs else tuple(a for a in ARRANGEMENTS if a not in OVERLAPS)
    arrangement = data.draw(st.sampled_from(arrangements), label="arrangement")
    relative = data.draw(st.booleans(), label="relative paths")
    overlapped = data.draw(st.sampled_from(command.inputs), label="input") if command.inputs else ""
    check_command(world, command, arrangement, relative, overlapped)


def test_cache_clear_touches_only_cache_entries(tmp_path):
    """``hugvis cache clear --kind`` with a path for a kind is refused; a clear removes entries and nothing else."""
    import numpy as np

    from hug_vis_dataset.cache.features import FeatureCache

    cache_root = tmp_path / "cache"
    cache = FeatureCache(cache_root / "features")
    cache.store("fid_reference", {"a": 1}, {"x": np.zeros(2)})
    (cache_root / "features" / "fid_reference" / "my-notes.txt").write_text("mine")
    outside = tmp_path / "x"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep")
    env = {"HUGVIS_CACHE_DIR": str(cache_root)}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        for kind in ("../../x", "../x", str(outside), "fid_reference/../..", ""):
            code, err = run_hugvis(["cache", "clear", "--kind", kind])
            assert code == 2 and "unknown feature kind" in err and len(err.strip().splitlines()) == 1, err
        assert (outside / "precious.txt").read_text() == "keep"
        assert len(cache.entries()) == 1
        code, err = run_hugvis(["cache", "clear", "--kind", "fid_reference"])
        assert code == 0, err
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    assert cache.entries() == []
    assert (cache_root / "features" / "fid_reference" / "my-notes.txt").read_text() == "mine"
    assert (outside / "precious.txt").read_text() == "keep"


def test_demo_into_someone_elses_folder_is_refused_before_anything_is_written(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "thesis.tex").write_text("mine")
    before = snapshot(theirs)
    code, err = run_hugvis(["demo", "--out", str(theirs), "--quick"])
    assert code == 2 and "was not made by hugvis" in err and str(theirs) in err, err
    assert snapshot(theirs) == before
    assert not (tmp_path / MARKER).exists()

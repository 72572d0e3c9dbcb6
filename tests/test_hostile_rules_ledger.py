""""Unchanged since hugvis wrote it", judged per file by content identity (issue 52; ``outputs/ledger.py``).

A folder the toolkit wrote as a whole (one clip's PNG mattes) was judged by a summary (file count, newest
modification time), and a file by its size and modification time, so a user's corrected file moved in with
an old timestamp was replaced by a re-run without a word. The class generated: a file the toolkit wrote --
a video, or one frame inside a clip folder it placed whole -- replaced by other bytes (of any size, the same
size included) with its old timestamps kept, by each way a person moves files (``mv``, ``cp -p``, ``rsync -a``,
``tar x``). The re-run of the same command must refuse in one line naming the file and leave the user's bytes;
the same bytes put back by the same tools are still the toolkit's, and the re-run replaces them.
"""

from __future__ import annotations

import hashlib
import os
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostile_cli import assert_one_line_error, run_cli

FEW = settings(max_examples=12, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
TOOLS = ("mv", "cp -p", "rsync -a", "tar x")


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A release and the built-in baseline's predictions of two tasks, each written once by ``hugvis predict``."""
    from hug_vis_dataset.cli import main
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("ledger")
    synthesize(root / "rel", actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.2, size=(32, 18),
               systems=False, progress=False)
    for task in ("matting", "vision_driven"):
        assert main(["predict", task, "--model", "baseline", "--dataset", str(root / "rel"), "--out",
                     str(root / task), "--no-progress"]) == 0
    return root


def _move_in(target, data: bytes, tool: str, workdir) -> None:
    """Put ``data`` at ``target`` as ``tool`` does, keeping the timestamps ``target`` had (an old file's)."""
    old = target.stat()
    times = (old.st_atime_ns, old.st_mtime_ns)
    if tool == "cp -p":  # into the same inode, then the source's times
        with open(target, "r+b") as handle:
            handle.truncate(0)
            handle.write(data)
        os.utime(target, ns=times)
        return
    if tool == "tar x":  # unlink, create anew, set the archived times
        target.unlink()
        target.write_bytes(data)
        os.utime(target, ns=times)
        return
    source = (workdir if tool == "mv" else target.parent) / f".incoming-{target.name}"
    source.write_bytes(data)  # mv: a file of the user's; rsync -a: its temporary beside the target
    os.utime(source, ns=times)
    os.replace(source, target)


def _corrected(data: bytes, same_size: bool, seed: int) -> bytes:
    flipped = bytearray(data)
    flipped[seed % len(flipped)] ^= 0x5A
    return bytes(flipped) if same_size else bytes(flipped) + b"corrected"


@FEW
@given(task=st.sampled_from(["matting", "vision_driven"]), tool=st.sampled_from(TOOLS), same_size=st.booleans(),
       seed=st.integers(0, 10**6))
def test_a_corrected_file_moved_in_with_old_timestamps_is_never_replaced(made, tmp_path, capsys, task, tool,
                                                                          same_size, seed):
    out = tmp_path / f"{task}-{tool.replace(' ', '')}-{same_size}-{seed}"
    shutil.copytree(made / task, out, symlinks=True, copy_function=shutil.copy2)  # the toolkit's output, as written
    files = sorted(p for p in out.rglob("*") if p.is_file() and not p.name.startswith(".hugvis")
                   and p.suffix in (".png", ".mp4"))
    target = files[seed % len(files)]
    ledger_before = (out / ".hugvis-files.jsonl").read_bytes()
    # a copy with copy2 keeps the bytes but not the inodes: the ledger still judges them by content
    user = _corrected(target.read_bytes(), same_size, seed)
    _move_in(target, user, tool, tmp_path)
    result = run_cli(capsys, "predict", task, "--model", "baseline", "--dataset", made / "rel", "--out", out,
                     "--no-progress")
    line = assert_one_line_error(result, 2, "changed since")
    assert str(target if task == "vision_driven" else target.parent) in line
    assert target.read_bytes() == user  # the user's bytes stay
    assert (out / ".hugvis-files.jsonl").read_bytes() == ledger_before


@FEW
@given(task=st.sampled_from(["matting", "vision_driven"]), tool=st.sampled_from(TOOLS), seed=st.integers(0, 10**6))
def test_the_same_bytes_moved_back_are_still_the_toolkits(made, tmp_path, capsys, task, tool, seed):
    out = tmp_path / f"same-{task}-{tool.replace(' ', '')}-{seed}"
    shutil.copytree(made / task, out, symlinks=True, copy_function=shutil.copy2)
    files = sorted(p for p in out.rglob("*") if p.is_file() and p.suffix in (".png", ".mp4"))
    target = files[seed % len(files)]
    _move_in(target, target.read_bytes(), tool, tmp_path)
    status, _, err = run_cli(capsys, "predict", task, "--model", "baseline", "--dataset", made / "rel", "--out", out,
                             "--no-progress")
    assert status == 0, err
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    assert digest == hashlib.sha256((made / task / target.relative_to(out)).read_bytes()).hexdigest()

"""No stray writes: a command writes only the output the user named (issue 35, "read-only places").

Every command runs in a real subprocess (``tests/write_audit.py``: ``hugvis`` under a Python audit hook
recording every write outside the allowed roots), and three checks hold afterwards:

1. every input tree (release, predictions, results store, built repo, the metrics folders) is identical:
   same paths, sizes, mtimes and sha256, snapshotted before and after;
2. the audit log is empty: nothing opened for writing, renamed, removed or made outside the allowed roots
   (the named ``--out``, ``$TMPDIR``, ``$HUGVIS_CACHE_DIR/features`` that ``hugvis cache`` manages, and
   ``$HOME``, where third-party libraries keep their own caches: Matplotlib's font list, evaluate's
   module copies); the cache folder holds nothing but ``features/``;
3. where the kernel lets root make one (``unshare --mount`` + a read-only bind mount, probed once), the
   input trees are really read-only for the command, so a write by a C library or a child process
   fails too. As root ``chmod`` stops nothing, hence the mount;
4. every write into the output the user named lies in an output the process claimed through the output guard
   (``hug_vis_dataset.outputs.claimed()``): the guard is the only way in.

The store carries the leftover of a crashed upload (a marked ``.incoming-*`` folder): reading commands
must leave it, only a write to the store cleans it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
AUDIT = REPO / "tests" / "write_audit.py"


def _probe_read_only_mount() -> "str | None":
    """None when ``unshare --mount`` + a read-only bind works here; else why not (the tests then rely on
    the snapshot and the audit hook)."""
    if os.environ.get("HUGVIS_TEST_NO_RO_MOUNT"):  # to check what the snapshot and the hook alone catch
        return "turned off by HUGVIS_TEST_NO_RO_MOUNT"
    if shutil.which("unshare") is None or os.geteuid() != 0:
        return "not root, or no unshare"
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        script = f'mount --bind "{tmp}" "{tmp}" && mount -o remount,bind,ro "{tmp}" && ! touch "{tmp}/x" 2>/dev/null'
        try:
            done = subprocess.run(["unshare", "--mount", "sh", "-c", script], capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"unshare failed: {err}"
        if done.returncode != 0 or os.path.exists(os.path.join(tmp, "x")):
            return f"the kernel refused the read-only bind mount: {done.stderr.decode(errors='replace').strip()}"
    return None


READ_ONLY_REFUSED = _probe_read_only_mount()


def snapshot(*roots: Path) -> dict:
    """Every entry under the roots: (kind, size, mtime_ns, sha256) by path."""
    seen: dict = {}
    for root in roots:
        for path in sorted([root, *root.rglob("*")]):
            st = path.lstat()
            if path.is_symlink():
                seen[str(path)] = ("link", os.readlink(path))
            elif path.is_dir():
                seen[str(path)] = ("dir", st.st_mtime_ns)
            else:
                seen[str(path)] = ("file", st.st_size, st.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    return seen


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A release, its built repo, predictions, and a store with two runs and a crash's leftover."""
    from hug_vis_dataset.hub.builder import build_repo
    from hug_vis_dataset.outputs.transient import MARKER
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("stray")
    env = {"HUGVIS_CACHE_DIR": str(root / "setup-cache"), "HUGVIS_WEIGHTS_DIR": str(root / "no-weights"),
           "HF_HUB_OFFLINE": "1"}
    (root / "no-weights").mkdir()
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        release = root / "release"
        synthesize(release, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.4, size=(64, 36),
                   seed=3)
        build_repo(release, root / "repo")
        store = root / "store"
        systems = release / "simulated_systems"
        for task, system in (("emotion", "emo_strong"), ("matting", "matte_good")):
            evaluate_submission(task, systems / task / system, system, release, store, progress=False)
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    leftover = store / "matting" / ".incoming-0123"  # what a crashed upload leaves
    shutil.copytree(store / "matting" / "matte_good", leftover)
    (leftover / MARKER).write_text(json.dumps({"kind": "incoming", "pid": 1}))
    return {"root": root, "release": release, "repo": root / "repo", "store": store, "systems": systems,
            "leftover": leftover}


def run_audited(world, tmp_path, args: "list[str]", inputs: "list[Path]", out: "Path | None" = None,
                code: "str | None" = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run ``hugvis ARGS`` (or ``python -c CODE``) audited, with ``inputs`` read-only where the kernel allows;
    assert the three checks of the module docstring; return the finished process."""
    cache, home, tmp = tmp_path / "cache", tmp_path / "home", tmp_path / "tmp"
    for folder in (cache, home, tmp):
        folder.mkdir()
    log = tmp_path / "audit.jsonl"
    allowed = [str(out) if out is not None else ""] + [str(p) for p in (tmp, home, cache / "features")]
    env = {**os.environ, "HUGVIS_CACHE_DIR": str(cache), "HOME": str(home), "TMPDIR": str(tmp),
           "MPLCONFIGDIR": str(home / "mpl"), "HUGVIS_WEIGHTS_DIR": str(world["root"] / "no-weights"),
           "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_EVALUATE_OFFLINE": "1",
           "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("HUGVIS_RATINGS", None)
    # Where third-party caches go is the user's choice: a shell that points them elsewhere (HF_HOME, XDG_CACHE_HOME,
    # ...) would send evaluate's module cache there, outside $HOME; the check is of what the toolkit writes
    for name in ("HF_HOME", "HF_DATASETS_CACHE", "HF_EVALUATE_CACHE", "HF_MODULES_CACHE", "HF_HUB_CACHE",
                 "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME", "TORCH_HOME"):
        env.pop(name, None)
    # torch's inductor writes the cache folder it chose into os.environ when first used: a test run
    # earlier in this pytest process would hand the child /tmp/torchinductor_<user> instead of $TMPDIR
    env.pop("TORCHINDUCTOR_CACHE_DIR", None)
    command = [sys.executable, str(AUDIT), str(log), os.pathsep.join(allowed)]
    command += ["-c", code] if code is not None else ["--", *args]
    if READ_ONLY_REFUSED is None:
        mounts = " && ".join(f'mount --bind "{p}" "{p}" && mount -o remount,bind,ro "{p}"' for p in inputs)
        command = ["unshare", "--mount", "sh", "-c", f'{mounts} && exec "$@"', "sh", *command]
    before = snapshot(*inputs)
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert snapshot(*inputs) == before, f"an input changed: {_diff(before, snapshot(*inputs))}"
    records = [json.loads(line) for line in log.read_text().splitlines()] if log.is_file() else []
    writes = [r for r in records if "claimed" not in r and not r.get("named")]
    assert writes == [], f"writes outside {allowed}: {writes[:10]}"
    # Every write into the place the user named went through the output guard: it lies in an output claimed.
    claimed = [Path(c) for r in records if "claimed" in r for c in r["claimed"]]
    unclaimed = [r for r in records if r.get("named") and not any(
        Path(r["path"]) == c or c in Path(r["path"]).parents for c in claimed)]
    assert unclaimed == [], f"writes into {out} without an output claim: {unclaimed[:10]}"
    strays = [str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file()
              and p.relative_to(cache).parts[0] != "features"]
    assert strays == [], f"written into the cache folder nobody named: {strays}"
    return done


def _diff(before: dict, after: dict) -> list[str]:
    changed = [p for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p)]
    return [f"{p}: {before.get(p, 'absent')} -> {after.get(p, 'absent')}" for p in changed[:10]]


def test_the_read_only_mount_probe_is_reported():
    # Not a skip: the other tests run either way; this line says which guarantee (3.) they had.
    print(f"read-only bind mount: {'available' if READ_ONLY_REFUSED is None else READ_ONLY_REFUSED}")


def test_evaluate_writes_only_its_out(world, tmp_path):
    out = tmp_path / "results"
    predictions = world["systems"] / "emotion" / "emo_weak"
    done = run_audited(world, tmp_path, ["evaluate", "emotion", "--predictions", str(predictions), "--model", "ew",
                                         "--dataset", str(world["release"]), "--out", str(out), "--no-progress"],
                       [world["release"], world["store"]], out=out)
    assert done.returncode == 0, done.stderr
    assert (out / "emotion" / "ew" / "rows.parquet").is_file()


@pytest.mark.parametrize("task,system", [("emotion", "emo_strong"), ("matting", "matte_good")])
def test_an_up_to_date_rerun_reads_the_store_and_writes_nothing(world, tmp_path, task, system):
    # main rewrote the whole run (work folder, .input-digests.json, summary) on every re-run, so scoring
    # into a store the user cannot write failed with "Read-only file system" although nothing changed.
    store = world["store"]
    done = run_audited(world, tmp_path, ["evaluate", task, "--predictions", str(world["systems"] / task / system),
                                         "--model", system, "--dataset", str(world["release"]), "--out", str(store),
                                         "--no-progress"], [store, world["release"]])
    assert done.returncode == 0, done.stderr
    summary = json.loads((store / task / system / "summary.json").read_text())
    assert f"rows: {store / task / system / 'rows.parquet'}" in done.stdout
    first = next(iter(summary["aggregate"].values()))  # the stored aggregate is what is printed
    assert f"{next(v for v in first.values() if isinstance(v, float)):.4g}" in done.stdout


def test_evaluate_against_a_built_repo_keeps_the_shard_digests_under_its_out(world, tmp_path):
    # main wrote the shards' digest cache into $HUGVIS_CACHE_DIR/verified_shards.json, a place nobody named.
    out = tmp_path / "results"
    predictions = world["systems"] / "emotion" / "emo_medium"
    args = ["evaluate", "emotion", "--predictions", str(predictions), "--model", "em", "--dataset",
            str(world["repo"]), "--out", str(out), "--no-progress"]
    done = run_audited(world, tmp_path, args, [world["repo"], world["release"]], out=out)
    assert done.returncode == 0, done.stderr
    digests = json.loads((out / ".verified-shards.json").read_text())
    shards = {str(p.resolve()) for p in (world["repo"] / "data").rglob("*.parquet")
              if p.parent.name in ("emotion", "clips")}
    assert set(digests) == shards and all(len(v["sha256"]) == 64 for v in digests.values())


def test_check_only_against_a_built_repo_writes_nothing(world, tmp_path):
    predictions = world["systems"] / "matting" / "matte_fair"
    done = run_audited(world, tmp_path, ["evaluate", "matting", "--check-only", "--predictions", str(predictions),
                                         "--dataset", str(world["repo"])], [world["repo"], world["release"]])
    assert done.returncode == 0, done.stderr
    assert "no coverage problems" in done.stdout


def test_check_only_against_a_release_writes_nothing(world, tmp_path):
    predictions = world["systems"] / "emotion" / "emo_weak"
    done = run_audited(world, tmp_path, ["evaluate", "emotion", "--check-only", "--predictions", str(predictions),
                                         "--dataset", str(world["release"])], [world["release"]])
    assert done.returncode == 0, done.stderr


def test_report_writes_only_its_out(world, tmp_path):
    out = tmp_path / "report"
    done = run_audited(world, tmp_path, ["report", str(world["store"]), "--out", str(out)],
                       [world["store"], world["release"]], out=out)
    assert done.returncode == 0, done.stderr
    assert any(out.iterdir())
    assert world["leftover"].is_dir()


def test_leaderboard_show_leaves_the_store_as_it_is(world, tmp_path):
    # main's LocalResultsStore removed the crash's leftover when it was opened: a reader wrote.
    done = run_audited(world, tmp_path, ["leaderboard", "show", str(world["store"]), "--table", "11", "--show",
                                         "synthetic"], [world["store"]])
    assert done.returncode == 0, done.stderr
    assert "matte_good" in done.stdout and world["leftover"].is_dir()


def test_validate_writes_nothing(world, tmp_path):
    done = run_audited(world, tmp_path, ["validate", str(world["release"])], [world["release"]])
    assert done.returncode in (0, 1), done.stderr  # a grid subset may be reported; either way nothing is written


def test_build_leaves_the_release_untouched(world, tmp_path):
    repo = tmp_path / "repo"
    done = run_audited(world, tmp_path, ["build", str(world["release"]), str(repo)], [world["release"]], out=repo)
    assert done.returncode == 0, done.stderr
    assert (repo / "manifest.json").is_file()


@pytest.mark.parametrize("source", ["release", "repo"])
def test_predict_writes_only_its_out(world, tmp_path, source):
    out = tmp_path / "submission"
    done = run_audited(world, tmp_path, ["predict", "emotion", "--model", "baseline", "--dataset", str(world[source]),
                                         "--out", str(out)], [world["release"], world["repo"]], out=out)
    assert done.returncode == 0, done.stderr
    assert (out / "predictions.jsonl").is_file()


UPLOAD = """
import os, shutil
from hug_vis_dataset.leaderboard import LocalResultsStore
from hug_vis_dataset.space.explorer import Explorer
archive = shutil.make_archive(os.environ["TMPDIR"] + "/upload", "zip", {predictions!r})
explorer = Explorer({release!r}, work_dir=os.environ["TMPDIR"] + "/space", store=LocalResultsStore({store!r}))
message = explorer.score("emotion", "uploaded", archive)[0]
print(message.split(":")[0])
"""


def test_the_spaces_upload_scoring_writes_only_into_its_store(world, tmp_path):
    store = tmp_path / "store"
    code = UPLOAD.format(predictions=str(world["systems"] / "emotion" / "emo_weak"), release=str(world["release"]),
                         store=str(store))
    done = run_audited(world, tmp_path, [], [world["release"], world["store"]], out=store, code=code)
    assert done.returncode == 0, done.stderr
    assert "Scored **Multimodal emotion recognition** for `uploaded`" in done.stdout
    assert (store / "emotion" / "uploaded" / "rows.parquet").is_file()


def test_mos_and_mos_status_write_nothing(world, tmp_path):
    systems = world["systems"]
    done = run_audited(world, tmp_path, ["mos", str(systems / "mos_ratings.csv")], [world["release"]])
    assert done.returncode == 0, done.stderr
    status = tmp_path / "status"
    status.mkdir()
    done = run_audited(world, status, ["mos", "status", "--study", str(systems / "study" / "mos_study.json"),
                                       "--log", str(systems / "study" / "ratings.jsonl"), "--release",
                                       str(world["release"])],
                       [world["release"]])
    assert done.returncode in (0, 1), done.stderr


EXPLORER = """
from hug_vis_dataset.leaderboard import LocalResultsStore
from hug_vis_dataset.space.explorer import Explorer
import os
store = LocalResultsStore({store!r})
explorer = Explorer({release!r}, work_dir=os.environ["TMPDIR"] + "/space", store=store)
print(explorer.store_summary())
rows = explorer.board_rows()
print(len(rows), sorted({{r.model for r in store.runs()}}))
"""


def test_browsing_the_space_leaves_the_store_as_it_is(world, tmp_path):
    # main: opening the store for browsing removed the crash's leftover.
    code = EXPLORER.format(store=str(world["store"]), release=str(world["release"]))
    done = run_audited(world, tmp_path, [], [world["store"], world["release"]], code=code)
    assert done.returncode == 0, done.stderr
    assert "['emo_strong', 'matte_good']" in done.stdout and world["leftover"].is_dir()


DOOR = """
import glob, os
import evaluate
from hug_vis_dataset.datamodel.release import Release
release = Release({release!r})
predictions = sorted(glob.glob({predictions!r} + "/*"))
references = [str(release.record(os.path.basename(p)).alpha_matte_path) for p in predictions]
print(evaluate.load({module!r}).compute(predictions=predictions, references=references)["n_ok"])
"""


def test_the_evaluate_module_door_writes_nothing_beside_its_inputs(world, tmp_path):
    code = DOOR.format(release=str(world["release"]), predictions=str(world["systems"] / "matting" / "matte_fair"),
                       module=str(REPO / "metrics" / "mad"))
    done = run_audited(world, tmp_path, [], [world["release"], REPO / "metrics" / "mad"], code=code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "2"

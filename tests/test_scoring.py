"""End-to-end scoring on a small synthetic grid: every task, resume, determinism, bad submissions."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.scoring.runner import evaluate_submission
from hug_vis_dataset.scoring.store import ResultStore

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("grid")
    synthesize(root, actors=1, emotions=["Happy", "Sad", "Angry"], actions=1, scripts=2, seconds=0.6,
               size=(64, 36), seed=3)
    return root


def systems(grid: Path, task: str) -> list[Path]:
    return sorted(p for p in (grid / "simulated_systems" / task).iterdir() if p.is_dir())


def expected_ranks(grid: Path, task: str) -> dict[str, int]:
    manifest = json.loads((grid / "simulated_systems" / "manifest.json").read_text())
    return {name: s["expected_rank"] for name, s in manifest["tasks"][task]["systems"].items()}


def score(grid, task, system_dir, out, **kw):
    return evaluate_submission(task, system_dir, system_dir.name, grid, out, progress=False, **kw)


# ----------------------------------------------------------------------------- every task
@pytest.mark.parametrize("task,metric,higher", [("matting", "mad", False), ("vision_driven", "psnr", True),
                                                 ("emotion", "emotion_accuracy", True)])
def test_every_simulated_system_scored_and_ranked(grid, tmp_path, task, metric, higher):
    values = {}
    for system in systems(grid, task):
        res = score(grid, task, system, tmp_path)
        assert res.coverage.problems() == 0, res.coverage.to_text()
        rows = pd.read_parquet(res.rows_path)
        # rows counted alone (the human-motion rows, where MediaPipe's weights are here) fail where the cartoon
        # figures show no hand or face: their own failures, counted per metric; every other row scores
        from hug_vis_dataset import catalog

        alone = rows["metric"].isin([m.name for m in catalog.METRICS if m.counted_alone])
        assert (rows[~alone]["status"] == "ok").all()
        assert set(rows["clip_id"]) == {r.clip_id for r in __import__("hug_vis_dataset.datamodel.release").datamodel.release.Release(grid)}
        # The summary's aggregate is recomputed from the stored rows by hand (clip protocol).
        ok = rows[rows["metric"] == metric]
        if task == "emotion":
            by_model = ok.groupby("model")["value"].mean() * 100
            assert res.table[metric].to_dict() == pytest.approx(by_model.to_dict())
            values[system.name] = float(by_model.mean())
        else:
            assert float(res.table.loc[system.name, metric]) == pytest.approx(ok["value"].mean(), rel=1e-12)
            values[system.name] = float(ok["value"].mean())
    ranks = expected_ranks(grid, task)
    order = sorted(values, key=lambda s: -values[s] if higher else values[s])
    if task != "emotion":  # emotion accuracy on 6 clips is too coarse to rank reliably
        assert order == sorted(ranks, key=ranks.get)


def test_generation_and_voice_metrics_needing_weights_are_skipped_once(grid, tmp_path, monkeypatch):
    for var in [v for v in os.environ if v.startswith("HUGVIS_WEIGHT")]:
        monkeypatch.delenv(var)
    (tmp_path / "no-weights").mkdir()
    monkeypatch.setenv("HUGVIS_WEIGHTS_DIR", str(tmp_path / "no-weights"))  # no weight file can be found
    monkeypatch.setenv("HUGVIS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    res = score(grid, "audio_driven", systems(grid, "audio_driven")[0], tmp_path / "res")
    assert res.summary["metrics"]["skipped"]["sync_c"].startswith("skipped: needs weights")
    rows = pd.read_parquet(res.rows_path)
    assert "sync_c" not in set(rows["metric"])  # no made-up numbers, no per-clip failed rows
    from hug_vis_dataset.scoring.runner import IncompleteMetricsError

    with pytest.raises(IncompleteMetricsError, match="sync_c"):
        score(grid, "audio_driven", systems(grid, "audio_driven")[0], tmp_path / "res", require_all_metrics=True)


@pytest.mark.slow
def test_voice_cloning_scores_dnsmos_and_speaker_similarity(grid, tmp_path):
    from hug_vis_dataset.metrics import voice

    system = systems(grid, "voice_cloning")[0]
    res = score(grid, "voice_cloning", system, tmp_path)
    rows = pd.read_parquet(res.rows_path)
    clip = rows["clip_id"].iloc[0]
    pred = system / f"{clip}.wav"
    ref = grid / "audio" / clip.split("_action")[0].replace("actor_0001_", "actor_0001/") / "action_01" / \
        f"script_{clip[-3:]}.wav"
    got = rows[rows["clip_id"] == clip].set_index("metric")["value"]
    assert got["speaker_similarity"] == pytest.approx(voice.speaker_similarity(str(pred), str(ref)), rel=1e-6)
    assert got["dnsmos"] == pytest.approx(voice.dnsmos(str(pred))["dnsmos"], rel=1e-6)


# ----------------------------------------------------------------------------- aggregation protocol
def test_rvm_protocol_from_stored_frames_matches_library(grid, tmp_path):
    from hug_vis_dataset.metrics import matting

    system = systems(grid, "matting")[1]
    res = score(grid, "matting", system, tmp_path)
    frames = pd.read_parquet(res.rows_path.parent / "frames.parquet")
    for metric in ("mad", "dtssd", "conn"):
        per_clip = [g.sort_values("frame")["value"].to_numpy()
                    for _, g in frames[frames["metric"] == metric].groupby("clip_id")]
        want = matting.aggregate(per_clip, "rvm", temporal=metric == "dtssd")
        assert res.summary["aggregate"][system.name][metric] == pytest.approx(want, rel=1e-12)
    clip = evaluate_submission("matting", system, system.name, grid, tmp_path, protocol="clip", progress=False)
    rows = pd.read_parquet(clip.rows_path)
    assert clip.summary["aggregate"][system.name]["mad"] == pytest.approx(
        rows[rows["metric"] == "mad"]["value"].mean(), rel=1e-12)


# ----------------------------------------------------------------------------- determinism
def read_all(out: Path, task: str, model: str):
    d = out / task / model
    return pd.read_parquet(d / "rows.parquet"), pd.read_parquet(d / "frames.parquet")


@pytest.mark.slow
def test_identical_rows_for_num_proc_chunks_and_ray(grid, tmp_path):
    system = systems(grid, "matting")[2]
    base = tmp_path / "base"
    score(grid, "matting", system, base)
    rows0, frames0 = read_all(base, "matting", system.name)
    assert len(rows0) == 6 * 5 and len(frames0) > 0
    variants = {
        "proc2": dict(num_proc=2, flush_every=1),
        "chunks": dict(chunk_frames=5, flush_every=4),
        "ray": dict(num_proc=2, backend="ray"),
    }
    for name, kw in variants.items():
        out = tmp_path / name
        score(grid, "matting", system, out, **kw)
        rows, frames = read_all(out, "matting", system.name)
        differ = rows["value"].to_numpy() != rows0["value"].to_numpy()
        assert not differ.any(), (name, rows0[differ][["clip_id", "metric"]].assign(
            base=rows0["value"][differ].map(repr), other=rows["value"][differ].map(repr)).to_string())
        pd.testing.assert_frame_equal(rows, rows0, check_exact=True, obj=name)
        pd.testing.assert_frame_equal(frames, frames0, check_exact=True, obj=name)


# ----------------------------------------------------------------------------- resume
def test_interrupted_run_resumes_to_identical_rows(grid, tmp_path):
    system = systems(grid, "matting")[0]
    full = tmp_path / "full"
    score(grid, "matting", system, full)
    out = tmp_path / "crashed"
    # the process dies abruptly (no cleanup, no compaction) once two clips are persisted
    code = (f"import os; from hug_vis_dataset.scoring.runner import evaluate_submission as e; "
            f"e('matting', {str(system)!r}, {system.name!r}, {str(grid)!r}, {str(out)!r}, flush_every=1, "
            f"progress=False, on_persisted=lambda n: os._exit(75) if n >= 2 else None)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 75, proc.stderr
    assert not (out / "matting" / system.name).exists()  # nothing is published before the run is complete
    store = ResultStore.work(out, "matting", system.name)
    assert not store.rows_path.exists()  # killed before compaction
    assert len(store.done_clips()) == 2  # two finished clips survived the crash, in the work folder
    assert not list(store.rows_dir.glob(".*tmp"))
    res = score(grid, "matting", system, out)
    assert res.computed == 4  # only what was missing
    rows, frames = read_all(out, "matting", system.name)
    rows_full, frames_full = read_all(full, "matting", system.name)
    pd.testing.assert_frame_equal(rows, rows_full, check_exact=True)
    pd.testing.assert_frame_equal(frames, frames_full, check_exact=True)
    assert score(grid, "matting", system, out).computed == 0  # nothing left to do
    assert not store.dir.exists()  # the work folder became the published run


# ----------------------------------------------------------------------------- bad submissions
def _png(path: Path, image: np.ndarray) -> None:
    import cv2

    cv2.imwrite(str(path), image)


def test_bad_matting_submission_gives_per_clip_errors(grid, tmp_path):
    from hug_vis_dataset.cli import main
    from hug_vis_dataset.datamodel.release import Release

    sub = tmp_path / "sub"
    shutil.copytree(systems(grid, "matting")[0], sub)
    ids = [r.clip_id for r in Release(grid)]
    # 0: wrong name (not a clip id) -> that clip is missing and the entry unmatched
    (sub / ids[0]).rename(sub / (ids[0] + "_pred"))
    # 1: wrong resolution
    for png in (sub / ids[1]).glob("*.png"):
        _png(png, np.zeros((18, 32), np.uint8))
    # 2: wrong frame count (last frame removed)
    last = max((sub / ids[2]).glob("*.png"))
    last.unlink()
    # 3: unreadable frame
    (sub / ids[3] / "000000.png").write_bytes(b"not a png")
    # 4: duplicate (a folder and a video for the same clip)
    (sub / f"{ids[4]}.mp4").write_bytes(b"junk")
    # a prediction for a clip not in the grid
    shutil.copytree(sub / ids[5], sub / "actor_0009_happy_action_01_script_001")

    out = tmp_path / "res"
    res = score(grid, "matting", sub, out)
    cov = res.coverage
    assert cov.missing == [ids[0]]
    assert [u["name"] for u in cov.unmatched] == [ids[0] + "_pred"]
    assert cov.extra == ["actor_0009_happy_action_01_script_001"]
    assert list(cov.duplicates) == [ids[4]]
    assert set(cov.failed) == {ids[1], ids[2], ids[3]}
    assert "wrong resolution" in cov.failed[ids[1]] and "32x18" in cov.failed[ids[1]]
    assert "wrong frame count" in cov.failed[ids[2]]
    assert "corrupt PNG" in cov.failed[ids[3]]
    rows = pd.read_parquet(res.rows_path)
    assert set(rows.loc[rows["status"] == "ok", "clip_id"]) == {ids[5]}  # the good clip is kept
    failed = rows[rows["status"] == "failed"]
    assert failed["value"].isna().all() and (failed["error"] != "").all()
    assert "missing prediction" in failed[failed["clip_id"] == ids[0]]["error"].iloc[0]
    text = cov.to_text()
    assert "wrong resolution" in text and "actor_0009" in text

    argv = ["evaluate", "matting", "--predictions", str(sub), "--model", sub.name, "--dataset", str(grid),
            "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    assert main(argv + ["--strict"]) == 1


def test_bad_voice_submission_wrong_rate_and_unreadable(grid, tmp_path):
    from hug_vis_dataset.readers.media import write_wav
    from hug_vis_dataset.datamodel.release import Release

    records = list(Release(grid))
    sub = tmp_path / "voice"
    sub.mkdir()
    write_wav(sub / f"{records[0].clip_id}.wav", np.zeros(8000, np.float32), records[0].sample_rate * 2)
    (sub / f"{records[1].clip_id}.wav").write_bytes(b"RIFF....garbage")
    (sub / "notes.txt").write_text("ignored")
    res = evaluate_submission("voice_cloning", sub, "bad", grid, tmp_path / "res", progress=False)
    cov = res.coverage
    assert f"{records[0].sample_rate * 2} Hz" in cov.failed[records[0].clip_id]
    assert "wrong sample rate" in cov.failed[records[0].clip_id]
    assert "unreadable prediction" in cov.failed[records[1].clip_id]
    assert len(cov.missing) == len(records) - 2 and not cov.unmatched


def test_emotion_jsonl_duplicates_missing_and_bad_lines(grid, tmp_path):
    from hug_vis_dataset.datamodel.release import Release

    ids = [r.clip_id for r in Release(grid)]
    lines = [{"clip_id": c, "input_setting": "text", "answer": c.split("_")[2]} for c in ids[1:]]
    lines.append({"clip_id": ids[1], "input_setting": "Text", "answer": "sad"})  # duplicate for one setting
    lines.append({"clip_id": ids[2], "input_setting": "audio", "answer": "我不知道"})  # unparsed
    sub = tmp_path / "emo"
    sub.mkdir()
    body = "\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + '\n{"clip_id": "nope", "answer": "x"}\nnot json\n'
    (sub / "predictions.jsonl").write_text(body, encoding="utf-8")
    res = evaluate_submission("emotion", sub, "llm", grid, tmp_path / "res", progress=False)
    cov = res.coverage
    assert cov.missing == [ids[0]]
    assert list(cov.duplicates) == [ids[1]]
    assert len(cov.unmatched) == 2
    rows = pd.read_parquet(res.rows_path)
    text = rows[rows["model"] == "llm | Text"].set_index("clip_id")
    assert text.loc[ids[1], "status"] == "failed" and "duplicate" in text.loc[ids[1], "error"]
    # 3 correct of the 4 text clips still scored (ids[2..5]); ids[0] missing, ids[1] duplicate
    assert res.table.loc["llm | Text", "emotion_accuracy"] == pytest.approx(100.0)
    assert res.table.loc["llm | Text", "n_ok"] == len(ids) - 2
    audio = rows[rows["model"] == "llm | Audio"]
    assert (audio["status"] == "ok").sum() == 1 and res.summary["unparsed_answers"] == 1
    assert res.table.loc["llm | Audio", "emotion_accuracy"] == 0.0


def test_failed_clips_are_retried_after_a_fix(grid, tmp_path):
    from hug_vis_dataset.datamodel.release import Release

    ids = [r.clip_id for r in Release(grid)]
    sub = tmp_path / "sub"
    shutil.copytree(systems(grid, "matting")[0], sub)
    backup = tmp_path / "keep"
    shutil.move(sub / ids[0], backup)
    out = tmp_path / "res"
    first = score(grid, "matting", sub, out)
    assert first.coverage.missing == [ids[0]]
    shutil.move(backup, sub / ids[0])
    second = score(grid, "matting", sub, out)
    assert second.computed == 1 and second.coverage.problems() == 0
    assert math.isfinite(second.summary["aggregate"][sub.name]["mad"])


def _threads_around_a_numba_kernel() -> "tuple[bool, tuple[int, int], tuple[int, int]]":
    """Whether numba was imported before this call, and the (torch, numba) thread counts in this process
    before and after a parallel numba kernel (matting)."""
    imported = "numba" in sys.modules
    import numba
    import torch

    from hug_vis_dataset.metrics.matting import score_matting_clip

    before = (torch.get_num_threads(), numba.get_num_threads())
    ref = np.random.default_rng(0).random((8, 64, 64)).astype(np.float32)
    score_matting_clip(ref * 0.5, ref, chunk_frames=4)
    return imported, before, (torch.get_num_threads(), numba.get_num_threads())


def test_a_worker_keeps_one_thread():
    """A runner worker runs torch, numba and BLAS on one thread, also after its first numba kernel:
    numba's OpenMP layer, started late, set the process's OpenMP count (torch's) back to every core.
    Its start-up does not import numba (a voice or emotion worker never needs it)."""
    import multiprocessing

    pytest.importorskip("torch")
    from hug_vis_dataset.scoring.engines import _worker_init

    with multiprocessing.get_context("spawn").Pool(1, initializer=_worker_init) as pool:
        imported, before, after = pool.apply(_threads_around_a_numba_kernel)
    assert not imported
    assert before == (1, 1)
    assert after == (1, 1)

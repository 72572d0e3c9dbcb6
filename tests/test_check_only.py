"""The check-only pass (``hugvis evaluate TASK --check-only``) and the checks of a run whose metrics
are all skipped: garbage is named, one line per clip, with no weights present."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from hug_vis_dataset.readers import media
from hug_vis_dataset.cli import main
from hug_vis_dataset.scoring.check import check_submission
from hug_vis_dataset.scoring.runner import evaluate_submission


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("grid")
    synthesize(root, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=2, seconds=0.4, size=(64, 36), seed=5)
    return root


@pytest.fixture(autouse=True)
def no_weights(tmp_path, monkeypatch):
    for var in [v for v in os.environ if v.startswith("HUGVIS_WEIGHT")]:
        monkeypatch.delenv(var)
    (tmp_path / "no-weights").mkdir()
    monkeypatch.setenv("HUGVIS_WEIGHTS_DIR", str(tmp_path / "no-weights"))
    monkeypatch.setenv("HUGVIS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


def good_system(grid: Path, task: str, tmp_path: Path) -> Path:
    source = sorted(p for p in (grid / "simulated_systems" / task).iterdir() if p.is_dir())[0]
    return Path(shutil.copytree(source, tmp_path / f"{task}_sub"))


def clip_files(sub: Path, suffix: str) -> list[Path]:
    return sorted(sub.glob(f"*{suffix}"))


def test_a_clean_submission_passes_with_exit_0(grid, tmp_path, capsys):
    sub = good_system(grid, "vision_driven", tmp_path)
    cov = check_submission("vision_driven", sub, grid)
    assert cov.problems() == 0 and cov.ok == cov.grid_size == 4
    assert main(["evaluate", "vision_driven", "--check-only", "--predictions", str(sub), "--dataset", str(grid)]) == 0
    assert "no coverage problems" in capsys.readouterr().out


def test_garbage_wrong_size_and_short_videos_each_get_one_line_and_exit_1(grid, tmp_path, capsys):
    sub = good_system(grid, "audio_driven", tmp_path)
    files = clip_files(sub, ".mp4")
    files[0].write_text("this is not a video\n")  # a text file named like a clip's .mp4
    first = next(media.iter_video_frames(files[1]))
    media.write_video(files[1], [first[:4]], fps=30)  # short: 4 frames instead of 12
    vision = good_system(grid, "vision_driven", tmp_path)
    wrong = clip_files(vision, ".mp4")[2]
    media.write_video(wrong, [np.zeros((12, 18, 32, 3), np.uint8)], fps=30)  # 32x18 instead of 64x36
    status = main(["evaluate", "audio_driven", "--check-only", "--predictions", str(sub), "--dataset", str(grid)])
    out = capsys.readouterr()
    assert status == 1
    failed = [line for line in out.out.splitlines() if line.startswith("    actor_")]
    assert len(failed) == 2
    assert files[0].stem in failed[0] and "unreadable prediction" in failed[0]
    assert files[1].stem in failed[1] and "wrong frame count: prediction has 4 frames, reference video has 12" in failed[1]
    assert "2 problem(s); 2 of 4 clips would score" in out.err
    assert main(["evaluate", "vision_driven", "--check-only", "--predictions", str(vision), "--dataset",
                 str(grid)]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("    actor_")]
    assert lines == [f"    {wrong.stem}: SubmissionError: wrong resolution: prediction is 32x18, reference video is "
                     f"64x36"]


def test_a_wrong_rate_wav_and_a_wrong_rate_video(grid, tmp_path, capsys):
    sub = good_system(grid, "voice_cloning", tmp_path)
    wav = clip_files(sub, ".wav")[0]
    audio, rate = media.read_audio(wav)
    media.write_wav(wav, media.resample(audio, rate, 22050), 22050)
    assert main(["evaluate", "voice_cloning", "--check-only", "--predictions", str(sub), "--dataset", str(grid)]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("    actor_")]
    assert lines == [f"    {wav.stem}: SubmissionError: wrong sample rate: prediction is 22050 Hz, the release's "
                     f"clips are {rate} Hz"]
    vision = good_system(grid, "vision_driven", tmp_path)
    video = clip_files(vision, ".mp4")[0]
    frames = np.concatenate(list(media.iter_video_frames(video)))
    media.write_video(video, [frames], fps=25)  # same frames, another rate
    cov = check_submission("vision_driven", vision, grid)
    assert list(cov.failed) == [video.stem]
    assert "wrong frame rate: prediction is 25 fps, the release's clips are 30 fps" in cov.failed[video.stem]


def test_a_run_with_every_metric_skipped_still_names_garbage(grid, tmp_path, capsys):
    # audio_driven's metrics (CSIM, Sync, the human-motion rows) all need weights: nothing is computed, the checks
    # still run.
    sub = good_system(grid, "audio_driven", tmp_path)
    garbage = clip_files(sub, ".mp4")[0]
    garbage.write_text("not a video")
    result = evaluate_submission("audio_driven", sub, "m", grid, tmp_path / "out", progress=False)
    assert result.summary["metrics"]["computed"] == []
    from hug_vis_dataset import catalog

    assert set(result.summary["metrics"]["skipped"]) == set(catalog.clip_metrics("audio_driven"))
    assert {"csim", "sync_c", "sync_d", "lmd"} <= set(result.summary["metrics"]["skipped"])
    assert list(result.coverage.failed) == [garbage.stem]
    assert "unreadable prediction" in result.coverage.failed[garbage.stem]
    assert result.coverage.problems() == 1
    assert main(["evaluate", "audio_driven", "--predictions", str(sub), "--model", "m2", "--dataset", str(grid),
                 "--out", str(tmp_path / "out"), "--no-progress", "--strict"]) == 1
    text = capsys.readouterr().out
    assert "failed: 1" in text and garbage.stem in text and "no coverage problems" not in text


def test_check_only_needs_no_model_and_refuses_metrics(grid, tmp_path, capsys):
    sub = good_system(grid, "matting", tmp_path)
    assert main(["evaluate", "matting", "--check-only", "--predictions", str(sub), "--dataset", str(grid),
                 "--metrics", "mad"]) == 2
    assert "--check-only computes no metric" in capsys.readouterr().err
    clip = sorted(p for p in sub.iterdir() if p.is_dir())[0]
    sorted(clip.glob("*.png"))[-1].unlink()  # one frame short
    cov = check_submission("matting", sub, grid)
    assert list(cov.failed) == [clip.name] and "wrong frame count" in cov.failed[clip.name]


def test_a_set_metric_alone_is_refused_in_one_line_naming_the_fix(grid, tmp_path, capsys):
    """FID pools the clips that score; with no per-clip metric in the run no clip is known to score,
    so ``--metrics fid`` alone is refused before anything runs, naming a metric that can run here."""
    sub = good_system(grid, "vision_driven", tmp_path)
    argv = ["evaluate", "vision_driven", "--predictions", str(sub), "--model", "m", "--dataset", str(grid),
            "--out", str(tmp_path / "out"), "--no-progress", "--metrics", "fid"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("error: fid is computed over the clips that score, so it needs a per-clip metric of "
                   "vision_driven beside it: e.g. --metrics psnr,fid")
    assert not (tmp_path / "out").exists()

"""File kinds and media formats (issue 52): regular files only, read with limits (``regular_files.py``), and
media decoded at their bit depth or refused in words (``readers/media_files.video_stream_problem``).

Classes generated:

* a prediction that is no regular file or larger than any of its kind -- a FIFO, a link to ``/dev/zero`` or
  ``/dev/urandom``, a sparse file past the kind's limit -- for every prediction kind (a video, a WAV, one PNG
  frame of a matte, the emotion answers file), given to ``hugvis evaluate`` and ``--check-only`` as real
  subprocesses: each finishes and names the file and what it is (a FIFO hung both; ``/dev/zero`` as answers
  never ended);
* a video prediction of more than 8 bits per sample (10-, 12-, 16-bit, any chroma layout, H.264/FFV1): refused
  naming its format and the fix (it was rounded to 8 bits before scoring, PSNR 1.2 dB off), while 8-bit
  layouts still score;
* a video prediction with no video stream (audio only): refused in words (it was an index error).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FEW = settings(max_examples=10, deadline=None, derandomize=True, database=None,
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
GIB = 1024**3
#: Past each kind's limit (an independent statement of the documented limits: docs/SCORING.md).
PAST_LIMIT = {"media": 17 * GIB, "image": 300 * 1024**2, "text": 2 * GIB}
HANG_GUARD_S = 240  # a run that has not finished by then hangs (old: a FIFO never returns)
CLIP = "actor_0001_happy_action_01_script_001"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("file_kinds")
    synthesize(root / "rel", actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.3, size=(48, 32),
               progress=False)
    return root


def _system(world: Path, task: str) -> Path:
    return sorted((world / "rel" / "simulated_systems" / task).iterdir())[0]


def _entry(folder: Path, task: str) -> "tuple[Path, str]":
    """The file of ``folder`` (a copy of a submission) to replace, and its kind."""
    if task == "emotion":
        return folder / "predictions.jsonl", "text"
    if task == "matting":
        return folder / CLIP / "000001.png", "image"
    return folder / (CLIP + (".wav" if task == "voice_cloning" else ".mp4")), "media"


def _make(path: Path, hostile: str, kind: str) -> None:
    path.unlink()
    if hostile == "fifo":
        os.mkfifo(path)
    elif hostile in ("zero", "urandom"):
        path.symlink_to(f"/dev/{hostile}")
    else:
        with open(path, "wb") as handle:
            handle.truncate(PAST_LIMIT[kind])  # sparse: no disk used


@FEW
@given(task=st.sampled_from(["vision_driven", "voice_cloning", "matting", "emotion"]),
       hostile=st.sampled_from(["fifo", "zero", "urandom", "sparse"]), check_only=st.booleans())
def test_no_prediction_kind_hangs_evaluate_or_check_only(world, tmp_path, task, hostile, check_only):
    folder = tmp_path / f"sub-{task}-{hostile}-{check_only}"
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(_system(world, task), folder)
    path, kind = _entry(folder, task)
    _make(path, hostile, kind)
    args = ["evaluate", task, "--predictions", str(folder), "--dataset", str(world / "rel")]
    args += ["--check-only"] if check_only else ["--model", "m", "--out", str(folder) + "-out", "--no-progress"]
    env = {**os.environ, "HUGVIS_NO_FEATURE_CACHE": "1"}
    done = subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", *args], capture_output=True, env=env,
                          timeout=HANG_GUARD_S, cwd=tmp_path)
    text = done.stdout.decode() + done.stderr.decode()
    assert "Traceback" not in text and done.returncode in (0, 1, 2), text
    said = [line for line in text.splitlines() if path.name in line]
    assert said and any("not a regular file" in line or "more than any" in line for line in said), text


# ----------------------------------------------------------------------------- bit depth and streams
def _write_video(path: Path, frames: np.ndarray, rate: float, codec: str, pix_fmt: "str | None",
                 audio: bool = False) -> None:
    import av

    with av.open(str(path), "w") as container:
        if pix_fmt is not None:
            stream = container.add_stream(codec, rate=round(rate))
            stream.width, stream.height, stream.pix_fmt = frames.shape[2], frames.shape[1], pix_fmt
        if audio:
            sound = container.add_stream("aac", rate=16000)
            sound.layout = "mono"
        if pix_fmt is not None:
            for frame in frames:
                for packet in stream.encode(av.VideoFrame.from_ndarray(frame, format="rgb24").reformat(format=pix_fmt)):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)
        if audio:
            samples = np.zeros((1, 16000 // 2), np.float32)
            frame = av.AudioFrame.from_ndarray(samples, format="fltp", layout="mono")
            frame.sample_rate = 16000
            for packet in sound.encode(frame):
                container.mux(packet)
            for packet in sound.encode():
                container.mux(packet)


@settings(FEW, max_examples=20)
# (no libx265 here: this build's x265 corrupts the heap of the process that encodes with it, 12-bit input at once)
@given(layout=st.sampled_from([("libx264", "yuv420p", 8), ("libx264", "yuv444p", 8), ("libx264", "yuv422p", 8),
                               ("libx264", "yuv420p10le", 10), ("libx264", "yuv422p10le", 10),
                               ("libx264", "yuv444p10le", 10), ("ffv1", "yuv444p10le", 10),
                               ("ffv1", "yuv420p12le", 12), ("ffv1", "gray16le", 16), (None, None, 0)]))
def test_a_video_is_scored_at_8_bits_or_refused_in_words(world, tmp_path, layout):
    from hug_vis_dataset.readers.media import iter_video_frames, video_info
    from hug_vis_dataset.scoring.check import check_submission

    codec, pix_fmt, bits = layout
    folder = tmp_path / f"sub-{pix_fmt}"
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(_system(world, "vision_driven"), folder)
    path = folder / f"{CLIP}.mp4"
    frames = np.concatenate(list(iter_video_frames(path)))
    rate = video_info(path).fps
    path.unlink()
    _write_video(path, frames, rate, codec, pix_fmt, audio=pix_fmt is None)
    coverage = check_submission("vision_driven", folder, world / "rel")
    problem = coverage.failed.get(CLIP)
    if bits == 8:
        assert problem is None, problem
    elif pix_fmt is None:
        assert problem and path.name in problem and "has no video stream (audio)" in problem, problem
    else:
        assert problem and path.name in problem and f"is {bits}-bit video ({pix_fmt})" in problem, problem
        assert "-pix_fmt yuv420p" in problem


def test_a_10_bit_prediction_fails_its_clip_in_a_run_naming_the_format(world, tmp_path):
    from hug_vis_dataset.readers.media import iter_video_frames, video_info
    from hug_vis_dataset.scoring.runner import evaluate_submission

    folder = tmp_path / "sub"
    shutil.copytree(_system(world, "vision_driven"), folder)
    path = folder / f"{CLIP}.mp4"
    frames, rate = np.concatenate(list(iter_video_frames(path))), video_info(path).fps
    path.unlink()
    _write_video(path, frames, rate, "libx264", "yuv420p10le")
    result = evaluate_submission("vision_driven", folder, "m", world / "rel", tmp_path / "out", progress=False)
    errors = result.coverage.failed
    assert CLIP in errors and "10-bit video" in errors[CLIP]
    assert len(result.coverage.failed) == 1  # the other clip scored

"""hugvis predict: prompts, frame sampling, per-clip failures, resume, baselines, export/collect,
and predict -> evaluate as one loop on a tiny synthetic release (and its built repo)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from hug_vis_dataset.datamodel.grid import EMOTIONS, ClipId
from hug_vis_dataset.outputs import GUARD_FILES
from hug_vis_dataset.metrics.emotion import INPUT_SETTING_ORDER, parse_answer
from hug_vis_dataset.predict import PredictSetupError, collect_outputs, export_inputs, predict
from hug_vis_dataset.predict.emotion import (
    INTRODUCTIONS,
    LABEL_WORDS,
    QUESTIONS,
    build_prompt,
    sample_frame_indices,
)
from hug_vis_dataset.predict.matting import chroma_key_alpha
from hug_vis_dataset.datamodel.release import Release
from hug_vis_dataset.scoring.runner import evaluate_submission

REPO = Path(__file__).resolve().parents[1]
EMOTION_GRID = ["Happy", "Disgusted", "Neutral"]


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("release")
    synthesize(root, actors=1, emotions=EMOTION_GRID, actions=1, scripts=2, seconds=0.4, size=(64, 36), seed=5,
               systems=False)
    return root


@pytest.fixture(scope="module")
def repo(release, tmp_path_factory) -> Path:
    from hug_vis_dataset.hub.builder import build_repo

    out = tmp_path_factory.mktemp("repo")
    build_repo(release, out)
    return out


def clip_ids(release: Path) -> list[str]:
    return [r.clip_id for r in Release(release)]


def decode_all(path) -> np.ndarray:
    """Every frame of a video, decoded in one go with PyAV (independent of the chunked readers)."""
    import av

    with av.open(str(path)) as container:
        return np.stack([f.to_ndarray(format="rgb24") for f in container.decode(video=0)])


def log_lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / ".hugvis-predict" / "log.jsonl").read_text().splitlines()]


def evaluate(task, sub, release, out, model="m"):
    return evaluate_submission(task, sub, model, release, out, progress=False)


# ----------------------------------------------------------------------------- protocol
@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_table4_setting_has_a_prompt_listing_the_seven_words(language):
    # The prompt's word list must map back to the seven classes, in class order, by the scorer's parser.
    assert [parse_answer(w) for w in LABEL_WORDS[language]] == list(EMOTIONS)
    for setting in INPUT_SETTING_ORDER:
        prompt = build_prompt(setting, language, "TRANSCRIPT")
        assert prompt.endswith(QUESTIONS[language])
        assert all(word in prompt for word in LABEL_WORDS[language])
        assert ("TRANSCRIPT" in prompt) == ("Text" in setting)
    with pytest.raises(PredictSetupError, match="Audio \\+ Text"):
        build_prompt("Audio + Text", language)


def test_docs_state_every_prompt_verbatim():
    docs = (REPO / "docs" / "PREDICT.md").read_text(encoding="utf-8")
    for language, intros in INTRODUCTIONS.items():
        assert QUESTIONS[language] in docs
        for text in intros.values():
            assert text.replace("{text}", "<transcript>") in docs


@pytest.mark.parametrize("total,count,expected", [
    (100, 8, [6, 18, 31, 43, 56, 68, 81, 93]),  # floor(6.25), floor(18.75), ...
    (10, 4, [1, 3, 6, 8]),                      # 1.25, 3.75, 6.25, 8.75
    (7, 1, [3]), (1, 1, [0]), (3, 8, [0, 1, 2]), (8, 8, list(range(8))),
])
def test_frame_sampling_takes_segment_centres(total, count, expected):
    assert sample_frame_indices(total, count) == expected


def test_frame_sampling_matches_float_formula_on_many_lengths():
    for total in range(9, 400, 7):
        want = np.floor((np.arange(8) + 0.5) * total / 8).astype(int).tolist()
        assert sample_frame_indices(total, 8) == want


# ----------------------------------------------------------------------------- emotion
def test_emotion_inputs_carry_exactly_the_modalities_of_each_setting(release, tmp_path):
    seen = {}

    def spy(inputs):
        seen[(inputs["clip_id"], inputs["input_setting"])] = {
            k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in inputs.items()
            if k not in ("video_path", "audio_path")} | {"files": [k for k in ("video_path", "audio_path") if k in inputs]}
        return "neutral"

    summary = predict("emotion", spy, release, tmp_path / "sub", limit=1, progress=False,
                      settings=["Image frame", "Video", "audio", "text", "Video + Audio + Text"])
    assert summary.counts() == {"ok": 5, "failed": 0, "skipped": 0}
    record = Release(release).records[ClipId.parse(clip_ids(release)[0])]
    frames = decode_all(record.video_path)
    audio, rate = sf.read(record.audio_path, dtype="float32")
    image = seen[(record.clip_id, "Image frame")]
    assert image["frame_indices"] == [len(frames) // 2] and image["files"] == []
    np.testing.assert_array_equal(image["frames"][0], frames[len(frames) // 2])
    assert "audio" not in image and "text" not in image
    video = seen[(record.clip_id, "Video")]
    assert video["frame_indices"] == sample_frame_indices(len(frames), 8) and video["files"] == ["video_path"]
    np.testing.assert_array_equal(np.stack(video["frames"]), frames[video["frame_indices"]])
    sound = seen[(record.clip_id, "Audio")]
    np.testing.assert_array_equal(sound["audio"], audio)
    assert sound["sample_rate"] == rate and "frames" not in sound and "text" not in sound
    assert seen[(record.clip_id, "Text")]["text"] == record.transcript
    assert seen[(record.clip_id, "Text")]["language"] == "zh"
    full = seen[(record.clip_id, "Video + Audio + Text")]
    assert {"frames", "audio", "text"} <= set(full) and full["files"] == ["video_path", "audio_path"]


def test_keyword_baseline_then_evaluate_gives_the_hand_worked_accuracy(release, tmp_path):
    summary = predict("emotion", "baseline", release, tmp_path / "sub", progress=False)
    assert summary.counts() == {"ok": 6, "failed": 0, "skipped": 0}
    # Transcripts read by hand: only 开心 (Happy s1) and 恶心 (Disgusted s2) are emotion words;
    # every other transcript has none, so the baseline answers Neutral.
    expected = {"actor_0001_happy_action_01_script_001": "Happy", "actor_0001_happy_action_01_script_002": "Neutral",
                "actor_0001_disgusted_action_01_script_001": "Neutral",
                "actor_0001_disgusted_action_01_script_002": "Disgusted",
                "actor_0001_neutral_action_01_script_001": "Neutral",
                "actor_0001_neutral_action_01_script_002": "Neutral"}
    lines = [json.loads(x) for x in (tmp_path / "sub" / "predictions.jsonl").read_text("utf-8").splitlines()]
    assert {x["clip_id"]: x["answer"] for x in lines} == expected
    assert all(x["input_setting"] == "Text" and x["prompt"].startswith("下面是一个人所说的话") for x in lines)
    res = evaluate("emotion", tmp_path / "sub", release, tmp_path / "res", model="baseline")
    assert res.coverage.problems() == 0
    assert res.table.loc["baseline | Text", "emotion_accuracy"] == pytest.approx(100 * 4 / 6)


def test_emotion_failures_are_per_clip_and_scored_as_missing(release, tmp_path):
    ids = clip_ids(release)

    def flaky(inputs):
        if inputs["clip_id"] == ids[0]:
            raise RuntimeError("model crashed")
        if inputs["clip_id"] == ids[1]:
            return "   "
        if inputs["clip_id"] == ids[2]:
            return 3
        return "I think: angry"

    summary = predict("emotion", flaky, release, tmp_path / "sub", settings=["Text"], progress=False)
    assert summary.counts() == {"ok": 3, "failed": 3, "skipped": 0}
    errors = dict(summary.failures)
    assert errors[f"{ids[0]} | Text"] == "RuntimeError: model crashed"
    assert errors[f"{ids[1]} | Text"] == "PredictionError: empty answer"
    assert errors[f"{ids[2]} | Text"] == "PredictionError: the model returned int, expected a string"
    logged = {x["unit"]: x for x in log_lines(tmp_path / "sub")}
    assert logged[f"{ids[0]} | Text"]["status"] == "failed" and logged[f"{ids[3]} | Text"]["parsed"] == "Angry"
    res = evaluate("emotion", tmp_path / "sub", release, tmp_path / "res")
    rows = pd.read_parquet(res.rows_path).set_index("clip_id")
    assert (rows.loc[ids[:3], "status"] == "failed").all() and (rows.loc[ids[3:], "status"] == "ok").all()


def test_resume_skips_done_clips_and_redoes_failed_ones(release, tmp_path):
    ids, calls = clip_ids(release), []
    # One model (a submission holds one model's predictions: the guard refuses another name), first flaky.
    state = {"first run": True}

    def model(inputs):
        if state["first run"]:
            if inputs["clip_id"] in ids[:2] and inputs["input_setting"] == "Audio":
                raise TimeoutError("slow")
            return "happy"
        calls.append((inputs["clip_id"], inputs["input_setting"]))
        return "sad"

    sub = tmp_path / "sub"
    assert predict("emotion", model, release, sub, settings=["Text", "Audio"], progress=False).counts()["failed"] == 2
    state["first run"] = False
    again = predict("emotion", model, release, sub, settings=["Text", "Audio"], resume=True, progress=False)
    assert sorted(calls) == sorted((c, "Audio") for c in ids[:2])
    assert again.counts() == {"ok": 2, "failed": 0, "skipped": 10}
    answers = {(x["clip_id"], x["input_setting"]): x["answer"]
               for x in map(json.loads, (sub / "predictions.jsonl").read_text("utf-8").splitlines())}
    assert len(answers) == 12 and answers[(ids[0], "Audio")] == "sad" and answers[(ids[0], "Text")] == "happy"
    # Without --resume every unit of the run is redone; lines of other settings stay.
    calls.clear()
    predict("emotion", model, release, sub, settings=["Text"], progress=False)
    assert len(calls) == 6
    lines = (sub / "predictions.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 12 and json.loads(lines[0])["answer"] == "sad"


# ----------------------------------------------------------------------------- matting
def test_chroma_key_against_hand_worked_pixels():
    pixels = np.array([[[0, 177, 64],     # screen: key 113 -> 0
                        [200, 150, 120],  # skin: key -50 -> 1
                        [10, 42, 10],     # key 32 -> (48 - 32) / 32 = 0.5
                        [0, 24, 0],       # key 24 -> 0.75
                        [0, 16, 0],       # key 16 -> 1
                        [0, 48, 0]]], np.uint8)  # key 48 -> 0
    np.testing.assert_allclose(chroma_key_alpha(pixels)[0], [0, 1, 0.5, 0.75, 1, 0])


def test_matting_output_does_not_depend_on_chunk_size_and_chunks_are_in_order(release, tmp_path):
    record = next(iter(Release(release)))
    frames = decode_all(record.video_path)
    seen = []

    def brightness(chunk):
        seen.append(chunk.copy())
        return chunk.mean(axis=-1) / 255.0

    outputs = {}
    for chunk in (1, 5, 32):
        seen.clear()
        predict("matting", brightness, release, tmp_path / str(chunk), limit=1, chunk_frames=chunk, progress=False)
        assert max(len(c) for c in seen) == min(chunk, len(frames))
        np.testing.assert_array_equal(np.concatenate(seen), frames)
        folder = tmp_path / str(chunk) / record.clip_id
        outputs[chunk] = [p.read_bytes() for p in sorted(folder.glob("*.png"))]
    assert outputs[1] == outputs[5] == outputs[32] and len(outputs[1]) == len(frames)
    import cv2

    png = cv2.imread(str(tmp_path / "5" / record.clip_id / "000003.png"), cv2.IMREAD_UNCHANGED)
    np.testing.assert_array_equal(png, np.rint(frames[3].mean(axis=-1)).astype(np.uint8))


@pytest.mark.parametrize("model,error", [
    (lambda c: np.zeros(c.shape[:3] + (1,)), "alpha has shape"),
    (lambda c: np.zeros(c.shape[1:3]), "alpha has shape"),
    (lambda c: np.full(c.shape[:3], 1.5), "alpha values span [1.5, 1.5]"),
    (lambda c: np.full(c.shape[:3], np.nan), "NaN"),
    (lambda c: np.zeros(c.shape[:3], np.int64), "dtype int64"),
    (lambda c: 1 / 0, "ZeroDivisionError"),
])
def test_bad_matting_models_fail_per_clip_and_leave_nothing(release, tmp_path, model, error):
    summary = predict("matting", model, release, tmp_path, limit=2, progress=False)
    assert summary.counts() == {"ok": 0, "failed": 2, "skipped": 0}
    assert all(error in text for _, text in summary.failures)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".hugvis-predict", *GUARD_FILES - {".hugvis-transient"}])


def test_matting_baseline_then_evaluate_matches_an_independent_mad(release, tmp_path):
    import cv2

    summary = predict("matting", "baseline", release, tmp_path / "sub", progress=False)
    assert summary.counts()["ok"] == 6
    res = evaluate("matting", tmp_path / "sub", release, tmp_path / "res", model="baseline")
    assert res.coverage.problems() == 0
    rows = pd.read_parquet(res.rows_path)
    mad = rows[rows["metric"] == "mad"].set_index("clip_id")["value"]
    for record in Release(release):
        pred = np.stack([cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
                         for p in sorted((tmp_path / "sub" / record.clip_id).glob("*.png"))]) / 255.0
        ref = np.stack([cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
                        for p in sorted(Path(record.alpha_matte_path).glob("*.png"))]) / 255.0
        assert mad[record.clip_id] == pytest.approx(np.abs(pred - ref).mean() * 1e3, rel=1e-6)


def test_matting_resume_keeps_valid_outputs_and_redoes_broken_ones(release, tmp_path):
    sub = tmp_path / "sub"
    calls = []

    def counting(chunk):  # one model for both runs (a submission holds one model's predictions)
        calls.append(len(chunk))
        return chroma_key_alpha(chunk)

    predict("matting", counting, release, sub, limit=3, progress=False)
    ids = clip_ids(release)
    (sub / ids[1] / "000002.png").unlink()  # a gap: no longer a valid prediction
    calls.clear()
    summary = predict("matting", counting, release, sub, limit=3, resume=True, progress=False)
    assert summary.skipped == [ids[0], ids[2]] and summary.ok == [ids[1]] and len(calls) == 1
    assert (sub / ids[1] / "000002.png").is_file()


# ----------------------------------------------------------------------------- generation
def test_generation_baselines_then_evaluate(release, tmp_path):
    from hug_vis_dataset.readers.media import video_info

    records = {r.clip_id: r for r in Release(release)}
    for task in ("vision_driven", "audio_driven", "voice_cloning"):
        summary = predict(task, "baseline", release, tmp_path / task, progress=False)
        assert summary.counts() == {"ok": 6, "failed": 0, "skipped": 0}, summary.failures
    for task in ("vision_driven", "audio_driven"):
        res = evaluate(task, tmp_path / task, release, tmp_path / "res", model="baseline")
        assert res.coverage.problems() == 0 and not res.coverage.failed
    record = records[clip_ids(release)[0]]
    reference = decode_all(record.video_path)
    held = decode_all(tmp_path / "vision_driven" / f"{record.clip_id}.mp4")
    assert held.shape == reference.shape and video_info(tmp_path / "vision_driven" / f"{record.clip_id}.mp4").fps == 30
    # Every generated frame is the first reference frame, up to H.264 loss.
    psnr = 10 * np.log10(255 ** 2 / ((held.astype(float) - reference[0].astype(float)) ** 2).mean(axis=(1, 2, 3)))
    assert psnr.min() > 35
    import av

    with av.open(str(tmp_path / "audio_driven" / f"{record.clip_id}.mp4")) as container:
        assert container.streams.audio[0].sample_rate == record.sample_rate
    replay, rate = sf.read(tmp_path / "voice_cloning" / f"{record.clip_id}.wav", dtype="int16")
    original, rate_ref = sf.read(record.audio_path, dtype="int16")
    assert rate == rate_ref and np.array_equal(replay, original)


@pytest.mark.slow  # DNSMOS and Resemblyzer on every clip: about a minute on 2 cores
def test_voice_replay_baseline_then_evaluate(release, tmp_path):
    assert predict("voice_cloning", "baseline", release, tmp_path / "sub", progress=False).counts()["ok"] == 6
    res = evaluate("voice_cloning", tmp_path / "sub", release, tmp_path / "res", model="baseline")
    assert res.coverage.problems() == 0 and not res.coverage.failed
    rows = pd.read_parquet(res.rows_path)
    # The replay is the reference recording itself: cosine similarity of an embedding with itself.
    similarity = rows[rows["metric"] == "speaker_similarity"]["value"]
    assert len(similarity) == 6 and similarity.to_numpy() == pytest.approx(1.0, abs=1e-5)


def test_repo_and_release_give_identical_predictions(release, repo, tmp_path):
    for task in ("matting", "vision_driven", "voice_cloning"):
        for name, dataset in (("release", release), ("repo", repo)):
            assert predict(task, "baseline", dataset, tmp_path / name / task, progress=False).counts()["ok"] == 6
        files = sorted(p.relative_to(tmp_path / "release" / task) for p in (tmp_path / "release" / task).rglob("*")
                       if p.is_file() and ".hugvis-predict" not in p.parts and p.name not in GUARD_FILES)
        assert files
        for rel in files:
            assert (tmp_path / "release" / task / rel).read_bytes() == (tmp_path / "repo" / task / rel).read_bytes()
    import hashlib

    def digest(inputs):
        frames = hashlib.sha256(np.stack(inputs["frames"]).tobytes()).hexdigest()
        audio = hashlib.sha256(inputs["audio"].tobytes()).hexdigest()
        return f"neutral {frames} {audio} {inputs['text']} {inputs['frame_indices']}"

    answers = {}
    for name, dataset in (("release", release), ("repo", repo)):
        run = predict("emotion", digest, dataset, tmp_path / name / "emotion", settings=["Video + Audio + Text"],
                      progress=False)
        assert run.counts()["ok"] == 6
        answers[name] = [json.loads(x)["answer"] for x in
                         (tmp_path / name / "emotion" / "predictions.jsonl").read_text("utf-8").splitlines()]
    assert answers["release"] == answers["repo"] and len(set(answers["repo"])) == 6


def test_export_then_collect_with_per_clip_checks(release, repo, tmp_path):
    from hug_vis_dataset.readers.media import write_video

    summary = export_inputs("vision_driven", repo, tmp_path / "inputs", progress=False)
    assert summary.counts()["ok"] == 6
    manifest = [json.loads(x) for x in (tmp_path / "inputs" / "manifest.jsonl").read_text().splitlines()]
    assert [m["clip_id"] for m in manifest] == clip_ids(release)
    records = {r.clip_id: r for r in Release(release)}
    first = manifest[0]
    assert (first["num_frames"], first["fps"], first["width"]) == (12, 30.0, 64)
    exported = tmp_path / "inputs" / first["inputs"]["driving_video"]
    assert exported.read_bytes() == Path(records[first["clip_id"]].video_path).read_bytes()
    import cv2

    source = cv2.imread(str(tmp_path / "inputs" / first["inputs"]["source"]))[..., ::-1]
    np.testing.assert_array_equal(source, decode_all(records[first["clip_id"]].video_path)[0])
    # A "generator": copies the driving video, except for clip 1 (missing), clip 2 (5 frames),
    # clip 3 (25 fps) and clip 4 (written inside a folder, which is accepted).
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    ids = clip_ids(release)
    for k, entry in enumerate(manifest):
        driving = tmp_path / "inputs" / entry["inputs"]["driving_video"]
        if k == 1:
            continue
        if k == 2:
            write_video(outputs / entry["output"], [decode_all(driving)[:5]], fps=30)
        elif k == 3:
            write_video(outputs / entry["output"], [decode_all(driving)], fps=25)
        elif k == 4:
            (outputs / entry["clip_id"]).mkdir()
            shutil.copyfile(driving, outputs / entry["clip_id"] / "result.mp4")
        else:
            shutil.copyfile(driving, outputs / entry["output"])
    got = collect_outputs("vision_driven", outputs, release, tmp_path / "sub", progress=False)
    errors = dict(got.failures)
    assert got.ok == [ids[0], ids[4], ids[5]]
    assert errors[ids[1]].startswith("PredictionError: no output for this clip")
    assert errors[ids[2]] == "PredictionError: the video has 5 frames, the reference has 12"
    assert errors[ids[3]] == "PredictionError: the video has 25 fps, the reference has 30"
    res = evaluate("vision_driven", tmp_path / "sub", release, tmp_path / "res")
    assert sorted(res.coverage.missing) == sorted(ids[1:4])
    rows = pd.read_parquet(res.rows_path)
    psnr = rows[(rows["metric"] == "psnr") & (rows["status"] == "ok")]
    assert set(psnr["clip_id"]) == {ids[0], ids[4], ids[5]}


def test_voice_collect_resamples_and_rejects_empty(release, tmp_path):
    from hug_vis_dataset.readers.media import resample

    export_inputs("voice_cloning", release, tmp_path / "inputs", limit=3, progress=False)
    manifest = [json.loads(x) for x in (tmp_path / "inputs" / "manifest.jsonl").read_text().splitlines()]
    assert manifest[0]["target_text"] == (tmp_path / "inputs" / manifest[0]["inputs"]["target_text"]).read_text(
        "utf-8").strip() == next(iter(Release(release))).transcript
    outputs = tmp_path / "outputs"
    outputs.mkdir()
    tone = np.sin(np.arange(24000 * 0.4) * 2 * np.pi * 220 / 24000).astype(np.float32) * 0.5
    sf.write(outputs / manifest[0]["output"], tone, 24000, subtype="FLOAT")
    sf.write(outputs / manifest[1]["output"], np.zeros(0, np.float32), 16000)
    got = collect_outputs("voice_cloning", outputs, release, tmp_path / "sub", limit=3, progress=False)
    ids = clip_ids(release)
    assert got.ok == [ids[0]]
    assert dict(got.failures)[ids[1]] == "PredictionError: the audio has no samples"
    assert dict(got.failures)[ids[2]].startswith("PredictionError: no output for this clip")
    audio, rate = sf.read(tmp_path / "sub" / f"{ids[0]}.wav", dtype="float32")
    assert rate == 16000 and len(audio) == 6400
    # 16-bit PCM of the polyphase-resampled tone: equal up to quantisation.
    np.testing.assert_allclose(audio, resample(tone, 24000, 16000), atol=2 / 32768)
    note = [x for x in log_lines(tmp_path / "sub") if x["unit"] == ids[0]][0]["note"]
    assert note == "re-written as 16000 Hz WAV from .wav at 24000 Hz"


# ----------------------------------------------------------------------------- CLI
def hugvis(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_cli_predict_then_evaluate_and_one_line_errors(release, tmp_path):
    run = hugvis("predict", "voice_cloning", "--model", "baseline", "--dataset", release, "--out", tmp_path / "sub",
                 "--no-progress", "--limit", "2")
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("predict voice_cloning: 2 ok, 0 failed, 0 skipped")
    bad = hugvis("predict", "emotion", "--model", "no_such_module:f", "--setting", "Text", "--dataset", release,
                 "--out", tmp_path / "x")
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0
    assert "cannot import no_such_module" in bad.stderr
    both = hugvis("predict", "vision_driven", "--model", "baseline", "--export", tmp_path / "e", "--dataset", release)
    assert both.returncode == 2 and "exactly one of" in both.stderr
    generator = hugvis("predict", "vision_driven", "--model", "m:f", "--dataset", release, "--out", tmp_path / "y")
    assert generator.returncode == 2 and "--export" in generator.stderr
    failing = hugvis("predict", "matting", "--model", "numpy:mean", "--dataset", release, "--out", tmp_path / "z",
                     "--limit", "1", "--no-progress")
    assert failing.returncode == 1 and "1 failed" in failing.stdout and "alpha has shape" in failing.stdout


def test_audio_driven_export_and_collect_require_the_audio_track(release, tmp_path):
    from hug_vis_dataset.readers.media import write_video

    export_inputs("audio_driven", release, tmp_path / "inputs", limit=2, progress=False)
    manifest = [json.loads(x) for x in (tmp_path / "inputs" / "manifest.jsonl").read_text().splitlines()]
    records = {r.clip_id: r for r in Release(release)}
    for entry in manifest:
        record = records[entry["clip_id"]]
        assert (tmp_path / "inputs" / entry["inputs"]["driving_audio"]).read_bytes() == \
            Path(record.audio_path).read_bytes()
        assert (tmp_path / "inputs" / entry["inputs"]["transcript"]).read_text("utf-8") == record.transcript + "\n"
    outputs = tmp_path / "outputs"
    for k, entry in enumerate(manifest):
        frames = decode_all(records[entry["clip_id"]].video_path)
        audio, rate = sf.read(tmp_path / "inputs" / entry["inputs"]["driving_audio"], dtype="float32")
        write_video(outputs / entry["output"], [frames], fps=30, audio=audio if k == 0 else None, sample_rate=rate)
    got = collect_outputs("audio_driven", outputs, release, tmp_path / "sub", limit=2, progress=False)
    assert got.ok == [manifest[0]["clip_id"]]
    assert got.failures == [(manifest[1]["clip_id"], "PredictionError: the video has no audio track (audio-driven "
                                                     "videos carry the driving audio)")]


def test_matting_model_reading_the_clip_path_streams_chunks(release, tmp_path):
    records = list(Release(release))[:2]
    calls = []

    def whole_clip(path):
        calls.append(path)
        frames = decode_all(path)
        for start in range(0, len(frames), 5):  # a generator of chunks: memory flat in clip length
            yield (frames[start:start + 5, ..., 1] > 100).astype(np.uint8) * 255

    summary = predict("matting", whole_clip, release, tmp_path / "sub", limit=2, matting_reads_path=True,
                      progress=False)
    assert summary.counts()["ok"] == 2 and len(calls) == 2
    import cv2

    frames = decode_all(records[1].video_path)
    written = np.stack([cv2.imread(str(p), cv2.IMREAD_UNCHANGED)
                        for p in sorted((tmp_path / "sub" / records[1].clip_id).glob("*.png"))])
    np.testing.assert_array_equal(written, (frames[..., 1] > 100).astype(np.uint8) * 255)
    short = predict("matting", lambda path: np.zeros((3, 36, 64)), release, tmp_path / "short", limit=1,
                    matting_reads_path=True, progress=False)
    assert short.failures[0][1].startswith("PredictionError: prediction has 3 frames of 64x36, the reference alpha 12")
    wrong = predict("matting", lambda path: np.zeros((12, 36, 63)), release, tmp_path / "wrong", limit=1,
                    matting_reads_path=True, progress=False)
    assert wrong.failures[0][1] == "PredictionError: alpha has shape (12, 36, 63), expected (n, 36, 64) " \
                                   "(frames, height, width)"
    none = predict("matting", lambda path: None, release, tmp_path / "none", limit=1, matting_reads_path=True,
                   progress=False)
    assert none.failures[0][1] == "PredictionError: the model returned NoneType, expected an alpha array or an " \
                                  "iterable of alpha chunks"


def test_an_interrupted_run_keeps_finished_clips_and_resumes(release, tmp_path):
    ids, count = clip_ids(release), {"n": 0}

    def interrupted(inputs):
        count["n"] += 1
        if count["n"] == 4:
            raise KeyboardInterrupt
        return "sad"

    with pytest.raises(KeyboardInterrupt):
        predict("emotion", interrupted, release, tmp_path / "emo", settings=["Text"], progress=False)
    kept = [json.loads(x)["clip_id"] for x in (tmp_path / "emo" / "predictions.jsonl").read_text("utf-8").splitlines()]
    assert kept == ids[:3]
    count["n"] = 100  # the same model resumes (a submission holds one model's predictions)
    rest = predict("emotion", interrupted, release, tmp_path / "emo", settings=["Text"], resume=True,
                   progress=False)
    assert rest.skipped == [f"{c} | Text" for c in ids[:3]] and rest.ok == [f"{c} | Text" for c in ids[3:]]

    def stops_mid_clip(chunk):
        count["n"] += 1
        if count["n"] == 100:
            raise KeyboardInterrupt
        return chroma_key_alpha(chunk)

    count["n"] = 97  # one-frame chunks: the interruption comes on the third frame of the first clip
    with pytest.raises(KeyboardInterrupt):
        predict("matting", stops_mid_clip, release, tmp_path / "mat", chunk_frames=1, progress=False)
    # no half-written folder (hidden: only the guard's marker, and no temporary)
    assert sorted(p.name for p in (tmp_path / "mat").iterdir()) == [".hugvis-output.json"]
    resumed = predict("matting", stops_mid_clip, release, tmp_path / "mat", limit=2, resume=True, progress=False)
    assert resumed.ok == ids[:2]

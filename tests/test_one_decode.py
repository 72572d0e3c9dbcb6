"""One decode per video: container frame counts equal decoded counts, and the one-pass scorer
(:func:`hug_vis_dataset.tasks.generation.video_pass`) gives the values of the per-metric path while
decoding each video once."""

from __future__ import annotations

import numpy as np
import pytest
from test_csim_pipeline import HeadDetector, ProjectionEmbedder

from hug_vis_dataset.readers import media
from hug_vis_dataset.tasks import ModelCache, get_task
from hug_vis_dataset.tasks.generation import csim_to_portrait, frame_metric_sums, video_pass

CLIP = "actor_0001_happy_action_01_script_001"


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("onedecode")
    synthesize(root, actors=1, emotions=["Happy"], actions=1, scripts=2, seconds=0.8, size=(160, 90), seed=2)
    return root


def clips(grid):
    from hug_vis_dataset.datamodel.release import Release

    release = Release(grid)
    out = []
    for system in ("vis_good", "vis_fair", "vis_poor"):
        for record in release.records.values():
            pred = grid / "simulated_systems" / "vision_driven" / system / f"{record.clip_id}.mp4"
            if pred.is_file():
                out.append((str(pred), str(record.video_path)))
    return out


def models():
    return ModelCache(overrides={"face_detector": HeadDetector(), "face_embedder": ProjectionEmbedder()})


def test_container_counts_equal_decoded_counts(grid, tmp_path):
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 255, (17, 32, 48, 3)).astype(np.uint8)
    paths = [tmp_path / "bframes.mp4", tmp_path / "ffv1.mkv", tmp_path / "with_audio.mp4"]
    media.write_video(paths[0], [frames], preset="medium")  # x264 medium: B-frames, decoder delay
    from hug_vis_dataset.hub.alpha import encode_alpha

    paths[1].write_bytes(encode_alpha([frames[..., 0]], 30.0, "ffv1")[0])  # the repo's lossless mattes
    media.write_video(paths[2], [frames], audio=np.zeros(16000, np.float32))
    paths += [p for pair in clips(grid) for p in pair]
    for path in paths:
        assert media.video_info(path).frames == media.count_decoded_frames(path), path


def test_one_pass_equals_the_per_metric_path(grid):
    for chunk in (7, 32):
        for pred, ref in clips(grid):
            fused = video_pass(pred, {"video": ref, "portrait": ref}, ("psnr", "ssim", "csim"), models(),
                               {"chunk_frames": chunk})
            frames = frame_metric_sums(pred, ref, ("psnr", "ssim"), models(), chunk)
            csim = csim_to_portrait(pred, ref, models(), chunk)
            assert fused.errors == {}
            assert fused.values["psnr"] == frames.values["psnr"]  # bit-identical: same pairs, same order
            assert fused.values["ssim"] == frames.values["ssim"]
            assert fused.values["csim"] == pytest.approx(csim.values["csim"], rel=1e-12)
            assert fused.notes["frames"] == frames.notes["frames"] == 24
            assert fused.notes["frames_dropped"] == frames.notes["frames_dropped"] == 0
            assert fused.notes["frames_no_face"] == csim.notes["frames_no_face"]


def test_each_video_is_decoded_once_when_a_clip_is_scored(grid, monkeypatch):
    decoded: dict[str, int] = {}
    real = media.iter_video_frames

    def counting(path, chunk_frames=32, gray=False):
        for chunk in real(path, chunk_frames, gray):
            decoded[str(path)] = decoded.get(str(path), 0) + len(chunk)
            yield chunk

    monkeypatch.setattr(media, "iter_video_frames", counting)
    scorer = get_task("vision_driven")
    pred, ref = clips(grid)[0]
    scorer.check(pred, {"video": ref}, {"fps": 30})  # the check decodes nothing but the first frame
    assert decoded == {}
    scores, errors = scorer.score_groups(pred, {"video": ref, "portrait": ref}, ("psnr", "ssim", "csim"), models(),
                                         {"chunk_frames": 5})
    assert errors == {} and set(scores.values) == {"psnr", "ssim", "csim"}
    # prediction: 24 frames once; reference: 24 frames once plus the portrait (its first frame).
    assert decoded == {pred: 24, ref: 25}


def test_a_failing_metric_does_not_fail_the_others(grid, tmp_path):
    pred, ref = clips(grid)[0]
    small = tmp_path / "small.mp4"
    media.write_video(small, [np.concatenate(list(media.iter_video_frames(pred)))[:, :64, :96]])
    out = video_pass(str(small), {"video": ref, "portrait": ref}, ("psnr", "ssim", "csim"), models(),
                     {"chunk_frames": 8})
    assert set(out.errors) == {"psnr", "ssim"} and "differ from the reference" in out.errors["psnr"]
    assert "csim" in out.values
    blind = ModelCache(overrides={"face_detector": HeadDetector(blind=range(1, 1000)),
                                  "face_embedder": ProjectionEmbedder()})
    out = video_pass(pred, {"video": ref, "portrait": ref}, ("psnr", "csim"), blind, {"chunk_frames": 8})
    assert "no face detected" in out.errors["csim"]
    assert out.values["psnr"] == frame_metric_sums(pred, ref, ("psnr",), blind, 8).values["psnr"]

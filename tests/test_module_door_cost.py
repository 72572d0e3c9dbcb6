"""The evaluate modules' door costs one decode per video and module (issue 37): the check before the
pass reads counts and sizes from the container and decodes no frame, since the pass decodes the clip
right after; ``hugvis evaluate``'s own check still decodes the first frame (its ``--check-only`` decodes
nothing else). Values are the runner's (tests/test_doors.py); here the decodes are counted."""

from __future__ import annotations

import numpy as np
import pytest

from hug_vis_dataset.readers import media


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("module_door")
    rng = np.random.default_rng(0)
    ref = rng.integers(0, 256, (6, 36, 64, 3), dtype=np.uint8)
    pred = np.clip(ref.astype(np.int16) + rng.integers(-9, 10, ref.shape), 0, 255).astype(np.uint8)
    media.write_video(root / "ref.mp4", [ref], fps=30)
    media.write_video(root / "pred.mp4", [pred], fps=30)
    return str(root / "pred.mp4"), str(root / "ref.mp4")


@pytest.fixture
def first_frame_decodes(monkeypatch):
    """Calls of ``media.video_info`` that decode a frame (``decode_first=True``), by path."""
    calls: list[str] = []
    real = media.video_info

    def spy(path, count_frames=True, decode_first=False):
        if decode_first:
            calls.append(str(path))
        return real(path, count_frames=count_frames, decode_first=decode_first)

    monkeypatch.setattr(media, "video_info", spy)
    return calls


def test_module_check_decodes_no_frame(pair, first_frame_decodes):
    from hug_vis_dataset.modules import compute_metric

    pred, ref = pair
    for name in ("psnr", "ssim"):
        result = compute_metric(name, [pred], [ref])
        assert result["n_ok"] == 1 and np.isfinite(result[name])
    assert first_frame_decodes == []


def test_module_still_fails_an_unreadable_prediction(pair, tmp_path, first_frame_decodes):
    from hug_vis_dataset.modules import compute_metric

    garbage = tmp_path / "pred.mp4"
    garbage.write_text("this is not a video\n")
    result = compute_metric("psnr", [str(garbage)], [pair[1]])
    assert result["n_ok"] == 0 and result["n_failed"] == 1
    assert "unreadable prediction: cannot read video" in result["errors"][0]["error"]


def test_the_runners_check_still_decodes_the_first_frame(pair, first_frame_decodes):
    from hug_vis_dataset.tasks import get_task

    pred, ref = pair
    get_task("vision_driven").check(pred, {"video": ref}, {})
    assert first_frame_decodes == [pred]

"""Memory of scoring a clip does not grow with its length: the peak of numpy allocations while one
clip is scored (tracemalloc sees every numpy buffer) for a 2 s and an 8 s clip, vision_driven
(one decode per video, PSNR+SSIM) and matting (every Table 11 metric)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from hug_vis_dataset.readers import media
from hug_vis_dataset.tasks import ModelCache, get_task

SIZE = (160, 96)  # one RGB frame: 46 KB; 8 s at 30 fps held at once would be 11 MB per video


def clip_pair(folder, seconds: float):
    rng = np.random.default_rng(int(seconds))
    n = int(seconds * 30)
    yy, xx = np.mgrid[0:SIZE[1], 0:SIZE[0]]

    def frames():
        for start in range(0, n, 16):
            k = np.arange(start, min(n, start + 16))[:, None, None]
            base = ((xx[None] * 3 + yy[None] * 2 + k * 5) % 256).astype(np.uint8)
            yield np.repeat(base[..., None], 3, axis=-1)

    def noisy(chunks):
        for c in chunks:
            yield np.clip(c.astype(np.int16) + rng.integers(-8, 9, c.shape), 0, 255).astype(np.uint8)

    ref, pred = folder / f"ref_{seconds}.mp4", folder / f"pred_{seconds}.mp4"
    media.write_video(ref, frames(), preset="ultrafast")
    media.write_video(pred, noisy(frames()), preset="ultrafast")
    alpha_ref, alpha_pred = folder / f"aref_{seconds}", folder / f"apred_{seconds}"
    media.write_alpha_pngs(alpha_ref, (c[..., 0] for c in frames()))
    media.write_alpha_pngs(alpha_pred, (c[..., 0] for c in noisy(frames())))
    return (str(pred), str(ref)), (str(alpha_pred), str(alpha_ref))


def peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("task", ["vision_driven", "matting"])
def test_peak_memory_of_a_clip_is_flat_in_its_length(tmp_path, task):
    scorer = get_task(task)
    peaks = {}
    for seconds in (2.0, 8.0):
        video, alpha = clip_pair(tmp_path, seconds)
        if task == "vision_driven":
            pred, ref = video
            reference, metrics = {"video": ref, "portrait": ref}, ("psnr", "ssim")
        else:
            pred, ref = alpha
            reference, metrics = {"alpha": ref}, scorer.metrics
        scorer.check(pred, reference if task == "matting" else {"video": ref}, {})
        run = lambda: scorer.score_clip(pred, reference, metrics, ModelCache(), {"chunk_frames": 16})  # noqa: E731
        run()  # warm: kernels compiled, lazy imports done
        peaks[seconds] = peak_bytes(run)
    frame = SIZE[0] * SIZE[1] * 3
    # 4x the frames: the peak grows by far less than one chunk's worth of frames (16 frames) ...
    assert peaks[8.0] - peaks[2.0] < 16 * frame, peaks
    # ... while holding the clip would have cost 180 extra frames per video.
    assert peaks[8.0] < 0.5 * 240 * frame * 2, peaks

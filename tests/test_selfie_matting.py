"""The real-network matting baseline: ``hugvis predict matting --model selfie-segmentation`` writes MediaPipe
Selfie Segmentation's soft mask as the alpha of every frame, and ``hugvis evaluate`` scores it like any
submission. On a real photograph the mask is the person: near 1 on the face and the suit, near 0 on the wall
behind, and it moves with the photo."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import human_photos as P


@pytest.fixture(scope="module")
def model():
    P.needs_mediapipe()
    from hug_vis_dataset.models.mediapipe.segmentation import SelfieSegmentation

    return SelfieSegmentation()


def test_the_mask_is_the_person_and_moves_with_the_photo(model):
    image = P.photo("astronaut")
    frames = np.stack([P.scene(image), P.scene(image, dx=40)])
    alpha = model(frames)
    assert alpha.shape == (2, 360, 640) and alpha.dtype == np.float32 and 0 <= alpha.min() and alpha.max() <= 1
    m = P.placement(image)
    face = np.rint(m[:, :2] @ [222, 120] + m[:, 2]).astype(int)  # the face, in frame pixels
    wall = np.rint(m[:, :2] @ [300, 30] + m[:, 2]).astype(int)  # the wall left of the shuttle
    assert alpha[0, face[1], face[0]] > 0.9 and alpha[0, wall[1], wall[0]] < 0.1
    assert alpha[1, face[1], face[0] + 40] > 0.9
    # the mask moved with the photo: its column centroid is 40 px further right (within 2 px)
    centroid = [float((a.sum(axis=0) * np.arange(640)).sum() / a.sum()) for a in alpha]
    assert abs(centroid[1] - centroid[0] - 40) < 2.0, centroid


def test_predict_and_evaluate_score_it_like_any_submission(tmp_path, model):
    import pandas as pd

    from hug_vis_dataset.synth import synthesize

    release = tmp_path / "rel"
    synthesize(release, actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.2, size=(320, 180),
               systems=False)
    run = lambda *args: subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", *args],  # noqa: E731
                                       capture_output=True, text=True, timeout=600)
    predicted = run("predict", "matting", "--model", "selfie-segmentation", "--dataset", str(release),
                    "--out", str(tmp_path / "sub"))
    assert predicted.returncode == 0, predicted.stderr
    pngs = sorted((tmp_path / "sub").glob("*/*.png"))
    assert len(pngs) == 6  # 0.2 s at 30 fps
    scored = run("evaluate", "matting", "--predictions", str(tmp_path / "sub"), "--model", "selfie-segmentation",
                 "--dataset", str(release), "--out", str(tmp_path / "results"))
    assert scored.returncode == 0, scored.stderr
    rows = pd.read_parquet(tmp_path / "results" / "matting" / "selfie-segmentation" / "rows.parquet")
    assert set(rows["metric"]) >= {"mad", "mse", "dtssd", "grad", "conn"}
    assert (rows["status"] == "ok").all() and np.isfinite(rows["value"]).all()

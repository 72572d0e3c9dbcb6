"""The people grid (``hugvis synth --people``, hug_vis_dataset/synth/people.py) against what is planted.

* the clip's alpha matte is exactly the alpha its frames were composited with (re-rendered from the clip's
  spec, and the blend checked against that alpha on two backgrounds);
* the simulated generation systems, scored by the normal scorer with MediaPipe's real networks, come out in
  the planted order: jitter, bone-length variation (the stretched neck), AKD and its drift good < fair < poor
  for vision-driven systems; the mouth-audio lag recovers the planted 0, 2 and 6 frame delays within one frame
  and jitter rises for audio-driven systems.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import human_photos as P
from hug_vis_dataset.synth import people, photos, synthesize

GRID = dict(actors=2, emotions=["Happy"], actions=1, scripts=1, seconds=1.5)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    P.needs_mediapipe()
    root = tmp_path_factory.mktemp("people") / "release"
    summary = synthesize(root, people=True, **GRID)
    return root, summary


def _spec(cid, summary):
    from hug_vis_dataset.synth.generate import ClipSpec

    return ClipSpec(cid, 0, summary.n_frames, summary.fps, summary.sample_rate, *summary.size, people=True)


def test_the_matte_is_exactly_the_compositing_alpha(release):
    from hug_vis_dataset.grid import iter_grid
    from hug_vis_dataset.layout import DEFAULT_LAYOUT
    from hug_vis_dataset.media import iter_alpha_frames

    root, summary = release
    for cid in iter_grid(**{k: v for k, v in GRID.items() if k != "seconds"}):
        alpha, _, audio, mouth = people.reference_clip(_spec(cid, summary))
        written = np.concatenate(list(iter_alpha_frames(root / DEFAULT_LAYOUT.alpha_dir_path(cid))))
        assert written.dtype == np.uint8 and np.array_equal(written, alpha)
        assert 0.1 < (alpha == 255).mean() < 0.9 and mouth.max() == 1.0  # a person, and a mouth that moves
    image = photos.photo("grace")
    m = photos.placement(image, 7.5, 3.0, 1.05, (320, 180), 0.1)
    black, white = (np.full((180, 320, 3), v, np.uint8) for v in (0, 255))
    a, on_black = photos.composite(image, photos.person_alpha("grace"), m, black)
    a2, on_white = photos.composite(image, photos.person_alpha("grace"), m, white)
    # the blend used exactly that alpha: on white minus on black is 255 - a (up to the two roundings)
    assert np.array_equal(a, a2)
    assert np.abs(on_white.astype(int) - on_black - (255 - a.astype(int))[..., None]).max() <= 1


def _means(root, task, metrics, tmp):
    from hug_vis_dataset.scoring.runner import evaluate_submission

    out = {}
    for system in json.loads((root / "simulated_systems" / "manifest.json").read_text())["tasks"][task]["systems"]:
        res = evaluate_submission(task, root / "simulated_systems" / task / system, system, root, out=tmp,
                                  metrics=metrics, progress=False)
        import pandas as pd

        rows = pd.read_parquet(res.rows_path)
        assert (rows["status"] == "ok").all(), rows[rows["status"] != "ok"][["metric", "error"]]
        out[system] = rows.groupby("metric")["value"].mean().to_dict() | {
            "per_clip": rows.pivot(index="clip_id", columns="metric", values="value")}
    return out


def test_vision_driven_systems_come_out_in_the_planted_order(release, tmp_path):
    root, _ = release
    values = _means(root, "vision_driven", ["body_jitter", "bone_length_variation", "akd", "akd_drift",
                                            "person_missing"], tmp_path)
    good, fair, poor = (values[f"vis_{s}"] for s in ("good", "fair", "poor"))
    for metric in ("body_jitter", "bone_length_variation", "akd", "akd_drift"):
        assert good[metric] < fair[metric] < poor[metric], (metric, good[metric], fair[metric], poor[metric])
    assert poor["bone_length_variation"] > 1.5 * good["bone_length_variation"]
    assert good["person_missing"] == fair["person_missing"] == poor["person_missing"] == 0.0


def test_audio_driven_mouth_delay_is_recovered_and_jitter_ranks(release, tmp_path):
    root, _ = release
    values = _means(root, "audio_driven", ["body_jitter", "mouth_audio_offset", "mouth_audio_sync"], tmp_path)
    for system, defects in zip(("talk_good", "talk_fair", "talk_poor"), people.PEOPLE_DEFECTS["audio_driven"]):
        lags = values[system]["per_clip"]["mouth_audio_offset"]
        assert (abs(lags - defects.lag) <= 1).all(), (system, lags.tolist())
        assert values[system]["mouth_audio_sync"] > 0.5
    assert values["talk_good"]["body_jitter"] < values["talk_fair"]["body_jitter"] < values["talk_poor"]["body_jitter"]


def test_the_manifest_names_what_is_planted(release):
    root, summary = release
    manifest = json.loads((root / "simulated_systems" / "manifest.json").read_text())
    poor = manifest["tasks"]["vision_driven"]["systems"]["vis_poor"]
    assert poor["planted"] == {"jitter": 0.02, "stretch": 0.2, "drift": 0.1, "lag": 0}
    assert manifest["tasks"]["audio_driven"]["systems"]["talk_fair"]["lip_sync_offset_frames"] == 2
    from hug_vis_dataset.layout import SYNTHETIC_MARKER

    assert json.loads((root / SYNTHETIC_MARKER).read_text())["people"] is True
    assert summary.systems["vision_driven"] == ["vis_good", "vis_fair", "vis_poor"]


def test_people_synthesis_is_deterministic(tmp_path):
    P.needs_mediapipe()
    one = dict(actors=1, emotions=["Sad"], actions=1, scripts=1, seconds=0.4, systems=False, people=True)
    synthesize(tmp_path / "a", **one)
    synthesize(tmp_path / "b", **one)
    from hug_vis_dataset.outputs import GUARD_FILES  # the output guard's marker and ledger hold times

    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*")
                   if p.is_file() and p.name not in GUARD_FILES)
    assert len(files) > 10
    assert [f for f in files if (tmp_path / "a" / f).read_bytes() != (tmp_path / "b" / f).read_bytes()] == []


def test_hugvis_synth_people_writes_a_people_release(tmp_path, capsys):
    from hug_vis_dataset.cli import main
    from hug_vis_dataset.layout import SYNTHETIC_MARKER

    P.needs_mediapipe()
    out = tmp_path / "cli"
    assert main(["synth", str(out), "--people", "--actors", "2", "--emotions", "Sad", "--actions", "1",
                 "--scripts", "1", "--seconds", "0.4", "--no-systems"]) == 0
    assert "2 clips x 12 frames" in capsys.readouterr().out
    assert json.loads((out / SYNTHETIC_MARKER).read_text())["people"] is True


def test_people_mode_without_espeak_stops_before_writing(tmp_path, monkeypatch):
    monkeypatch.setattr(people.shutil, "which", lambda name: None)
    with pytest.raises(ValueError, match="espeak-ng, which is not installed"):
        synthesize(tmp_path / "none", people=True, actors=1, emotions=["Sad"], actions=1, scripts=1, seconds=0.2)
    assert not (tmp_path / "none").exists()

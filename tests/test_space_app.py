"""Explorer callbacks without a browser: overlay maths, inspector, unsafe uploads, MOS flow."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

from hug_vis_dataset.space.inspector import matte_overlay


def test_matte_overlay_against_per_pixel_formula():
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
    alpha = rng.integers(0, 256, (5, 7), dtype=np.uint8)
    alpha[0, 0], alpha[0, 1] = 0, 255
    out = matte_overlay(rgb, alpha, tint=(10, 200, 30), strength=0.4)
    for y in range(5):
        for x in range(7):
            a = alpha[y, x] / 255
            for c, t in enumerate((10, 200, 30)):
                want = a * rgb[y, x, c] + (1 - a) * (0.6 * rgb[y, x, c] + 0.4 * t)
                assert out[y, x, c] == int(np.floor(want + 0.5))
    assert (out[0, 1] == rgb[0, 1]).all()  # opaque foreground untouched
    with pytest.raises(ValueError, match="uint8"):
        matte_overlay(rgb.astype(np.float32), alpha)
    with pytest.raises(ValueError, match="must be"):
        matte_overlay(rgb, alpha[:, :3])
    with pytest.raises(ValueError, match="strength"):
        matte_overlay(rgb, alpha, strength=1.5)


@pytest.fixture(scope="module")
def explorer(tmp_path_factory):
    from hug_vis_dataset.space.app import Explorer
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("app")
    synthesize(root / "rel", actors=1, emotions=["Angry"], actions=1, scripts=2, seconds=0.3, size=(32, 18))
    return Explorer(root / "rel", None, work_dir=root / "work")


def test_inspector_returns_the_clip_frames(explorer):
    from hug_vis_dataset.readers.media import iter_alpha_frames, iter_video_frames

    video, still, matte, overlay, audio, text = explorer.inspect("actor_0001", "Angry", 1, 2, 4)
    record = explorer.release.record("actor_0001_angry_action_01_script_002")
    assert video == str(record.video_path) and audio == str(record.audio_path)
    want_alpha = np.concatenate(list(iter_alpha_frames(record.alpha_matte_path)))[4]
    want_rgb = np.concatenate(list(iter_video_frames(record.video_path)))[4]
    assert (matte == want_alpha).all() and (still == want_rgb).all()  # the video frame follows the slider too
    assert not (still == np.concatenate(list(iter_video_frames(record.video_path)))[0]).all()
    assert (overlay == matte_overlay(want_rgb, want_alpha)).all()
    assert record.transcript in text and "Showing frame 4 of 9" in text
    assert "Showing frame 8 of 9" in explorer.inspect("actor_0001", "Angry", 1, 2, 999)[-1]  # clamped
    assert explorer.inspect("actor_0001", "Sad", 1, 1)[-1].startswith("**No such clip:**")


def test_score_refuses_unsafe_zip_and_reports_missing(explorer, tmp_path):
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("../x.wav", b"1")
    message, table, rows = explorer.score("voice_cloning", "m", str(bad))
    assert message.startswith("**Upload refused:**") and "'..' component" in message and table.empty
    assert explorer.score("matting", "m", None)[0].startswith("Upload a zip")
    good = tmp_path / "good.zip"
    src = explorer.release_dir / "simulated_systems" / "voice_cloning"
    system = sorted(p for p in src.iterdir())[0]
    with zipfile.ZipFile(good, "w") as archive:
        wav = sorted(system.glob("*.wav"))[0]
        archive.write(wav, wav.name)
    message, table, rows = explorer.score("voice_cloning", "one_clip", str(good))
    # The one rule for clips left out: scored and shown, ranked only among runs missing clips too.
    assert message.startswith("Scored **Voice cloning** for `one_clip`: 1 clip(s) ok of 2; missing 1"), message
    assert explorer.store.has("voice_cloning", "one_clip")
    from hug_vis_dataset.leaderboard.board import PARTIAL_RULE
    from hug_vis_dataset.space.precheck import PARTIAL_HELP, layout_help

    frame, notes, _ = explorer.leaderboard(next(t for t in explorer.table_labels() if t.startswith("Table 9")),
                                           ["paper", "synthetic demo"])
    assert PARTIAL_RULE in notes and PARTIAL_HELP in layout_help("voice_cloning")
    cell = frame.set_index("Model").loc["one_clip", "Speaker Sim. ↑"] if "Speaker Sim. ↑" in frame.columns else ""
    assert "(best)" not in str(cell)  # alone in its pool of partial runs: nothing to rank it against
    # Files that cannot be told apart are the one refusal: two files for one clip.
    twice = tmp_path / "twice.zip"
    with zipfile.ZipFile(twice, "w") as archive:
        archive.write(wav, wav.name)
        archive.write(wav, wav.with_suffix(".flac").name)
    message, table, rows = explorer.score("voice_cloning", "twice", str(twice))
    assert message.startswith("**Not added:** 1 clip(s) have two or more files"), message
    assert not explorer.store.has("voice_cloning", "twice")


def test_mos_flow_stores_and_aggregates(explorer):
    task = "audio_driven"
    system = explorer.mos.systems(task)[0]
    clip = explorer.mos.clip_ids()[0]
    assert explorer.mos.media(task, system, clip).endswith(".mp4")
    message, table = explorer.mos.rate(task, system, clip, "r1", 2, 4, 5)
    assert message.startswith("Stored 3")
    message, table = explorer.mos.rate(task, system, clip, "r2", 4, 4, 3)
    got = {r.criterion: (r.mos, r.n_ratings) for r in table.itertuples()}
    assert got == {"ID Similarity": (3.0, 2), "Emotion Naturalness": (4.0, 2), "Lip Synchronization": (4.0, 2)}
    message, _ = explorer.mos.rate(task, system, clip, "bad rater!", 2, 4, 5)
    assert message.startswith("**Rating refused:**")
    # r1 changes their mind: the new scores replace the old ones, r2's stay: MOS (1 + 4) / 2 etc.
    message, table = explorer.mos.rate(task, system, clip, " r1 ", 1, 2, 5)
    assert message.startswith(f"Replaced your earlier rating of {system} on {clip}")
    assert "ID Similarity 2 -> 1" in message and "Lip Synchronization 5 -> 5" in message
    got = {r.criterion: (r.mos, r.n_ratings, r.n_raters) for r in table.itertuples()}
    assert got == {"ID Similarity": (2.5, 2, 2), "Emotion Naturalness": (3.0, 2, 2),
                   "Lip Synchronization": (4.0, 2, 2)}


def test_mos_items_show_the_identity_reference(explorer):
    import av

    clip = explorer.mos.clip_ids()[1]
    record = explorer.release.record(clip)
    video = explorer.mos.item("vision_driven", "vis_fair", clip)
    assert video.video == str(explorer.release_dir / "simulated_systems" / "vision_driven" / "vis_fair" / f"{clip}.mp4")
    with av.open(str(record.video_path)) as container:  # the source portrait: the reference's first frame
        first = next(container.decode(video=0)).to_ndarray(format="rgb24")
    assert video.portrait.dtype == np.uint8 and (video.portrait == first).all()
    assert video.speech is None and video.reference_speech is None and video.note == ""
    voice = explorer.mos.item("voice_cloning", "clone_good", clip)
    assert voice.speech.endswith(f"clone_good/{clip}.wav")
    assert voice.reference_speech == str(record.audio_path)
    assert voice.video is None and voice.portrait is None
    missing = explorer.mos.item("audio_driven", "no_such_system", clip)
    assert missing.video is None and (missing.portrait == first).all()
    assert "No output of no_such_system" in missing.note
    elsewhere = explorer.mos.item("audio_driven", "talk_good", "actor_0009_sad_action_01_script_001")
    assert "not in the release" in elsewhere.note and elsewhere.video is None and elsewhere.portrait is None


def test_ratings_location_and_restart(tmp_path, monkeypatch):
    from hug_vis_dataset.space.app import Explorer
    from hug_vis_dataset.studies.study_desk import MosStudy, ratings_location

    monkeypatch.delenv("HUGVIS_RATINGS", raising=False)
    assert ratings_location("a.jsonl", tmp_path / "res", tmp_path / "w") == Path("a.jsonl")
    assert ratings_location(None, tmp_path / "res", tmp_path / "w") == tmp_path / "res" / "ratings" / "ratings.jsonl"
    assert ratings_location(None, None, tmp_path / "w") == tmp_path / "w" / "ratings.jsonl"
    monkeypatch.setenv("HUGVIS_RATINGS", str(tmp_path / "env.jsonl"))
    assert ratings_location(None, tmp_path / "res", tmp_path / "w") == tmp_path / "env.jsonl"
    assert ratings_location(tmp_path / "arg.jsonl", tmp_path / "res", None) == tmp_path / "arg.jsonl"
    monkeypatch.delenv("HUGVIS_RATINGS")
    with pytest.raises(ValueError, match="ratings path"):
        ratings_location(None, None, None)

    from hug_vis_dataset.synth import synthesize

    synthesize(tmp_path / "rel", actors=1, emotions=["Sad"], actions=1, scripts=1, seconds=0.2, size=(32, 18))
    first = Explorer(tmp_path / "rel", tmp_path / "res", work_dir=tmp_path / "w1")
    assert first.mos.ratings.path == tmp_path / "res" / "ratings" / "ratings.jsonl"
    clip = first.mos.clip_ids()[0]
    system = first.mos.systems("voice_cloning")[0]  # only what the study presents can be rated
    first.mos.rate("voice_cloning", system, clip, "r1", 4, 2)
    # A restart: a new study (new work folder) on the same results folder sees the rating.
    table = Explorer(tmp_path / "rel", tmp_path / "res", work_dir=tmp_path / "w2").mos.table()
    assert sorted((r.model, r.criterion, r.mos, r.n_ratings) for r in table.itertuples()) == [
        (system, "Emotion Naturalness", 2.0, 1), (system, "ID Similarity", 4.0, 1)]
    assert MosStudy(first.release, first.release_dir, first.mos.ratings.path).table().equals(table)


def test_crosstask_tab_draws_fig11_from_stored_rows_like_the_report(tmp_path):
    from hug_vis_dataset.reporting.report import motion_analysis
    from hug_vis_dataset.datamodel.results import RESULT_COLUMNS
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.space.app import Explorer
    from hug_vis_dataset.synth import synthesize

    import pandas as pd

    release = tmp_path / "rel"
    synthesize(release, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=2, seconds=0.3, size=(32, 18))
    results = tmp_path / "results"
    for name in ("matte_good", "matte_poor"):
        evaluate_submission("matting", release / "simulated_systems" / "matting" / name, name, release, results,
                            progress=False)
    evaluate_submission("motion", "reference", "reference", release, results, progress=False)
    explorer = Explorer(release, results, work_dir=tmp_path / "work")
    table, png, message = explorer.crosstask("Motion difficulty (Fig. 11)")
    assert png and png.endswith(".png") and len(table) == 4
    rows = pd.concat([pd.read_parquet(p) for p in results.glob("*/*/rows.parquet")])[list(RESULT_COLUMNS)]
    motion, _ = motion_analysis(rows)
    np.testing.assert_allclose(table["D_motion"], np.round(motion.d_motion, 4))
    np.testing.assert_allclose(table["dtSSD"], np.round(motion.dtssd, 4))
    from hug_vis_dataset.space.viewer import clip_display

    assert table["Clip"].tolist() == [clip_display(c) for c in motion.clips]  # each row names its clip
    # Fig. 8 says what it was computed from, in words a reader can check
    n = len(rows[rows.model.isin(["matte_good", "matte_poor", "reference"])])
    message = explorer.crosstask("Emotion difficulty (Fig. 8)")[2]
    assert message.startswith(f"Computed from {n:,} stored per-clip rows (one per model, clip and metric): 3 models")
    # a metric with no values is said to be absent, never replaced by the others
    table, png, message = explorer.crosstask("Emotion difficulty (Fig. 8)", metric="AD-CSIM")
    assert table.empty and png is None and message.startswith("AD-CSIM has no per-clip values")
    # its real cause: no audio-driven run is stored here (weights would not help)
    assert "no Audio-driven video generation run is stored: score one" in message and "weights" not in message
    shown = explorer.crosstask("Emotion difficulty (Fig. 8)", metric="VM-MAD")[0]
    assert list(shown.columns) == ["Emotion", "VM-MAD"]
    # every model unticked: said, never all of them instead
    table, png, message = explorer.crosstask("Motion difficulty (Fig. 11)", models=[])
    assert table.empty and png is None and message == "No model is ticked: tick at least one model under Models."
    # selecting one model keeps the reference statistics and averages dtSSD over that model only
    table_one, _, _ = explorer.crosstask("Motion difficulty (Fig. 11)", models=["matte_poor"])
    poor = rows[(rows.model == "matte_poor") & (rows.metric == "dtssd")].set_index("clip_id")["value"]
    assert sorted(np.round(poor.to_numpy(), 4)) == sorted(table_one["dtSSD"])
    # Source difficulty without generation rows explains itself and names the weights command
    from hug_vis_dataset import catalog

    message = explorer.crosstask("Source difficulty (Fig. 10)")[2]
    assert "audio- and vision-driven" in message and "weights" not in message  # no run of either task is stored
    assert all(f"no {catalog.task(t).label} run is stored" in message for t in ("audio_driven", "vision_driven"))


def test_a_release_without_systems_builds_the_app_and_says_there_is_no_study(tmp_path, monkeypatch):
    """The real release has no simulated systems: the explorer must start, its MOS tab naming the fix."""
    from hug_vis_dataset.space.app import Explorer, build_app
    from hug_vis_dataset.synth import synthesize

    monkeypatch.delenv("HUGVIS_STUDY", raising=False)
    synthesize(tmp_path / "rel", actors=1, emotions=["Sad"], actions=1, scripts=1, seconds=0.2, size=(32, 18),
               systems=False)
    demo = build_app(Explorer(tmp_path / "rel", tmp_path / "res", work_dir=tmp_path / "w"))
    texts = [getattr(block, "value", "") for block in demo.blocks.values()]
    assert any(isinstance(t, str) and "No MOS study is configured" in t and "HUGVIS_STUDY" in t for t in texts)

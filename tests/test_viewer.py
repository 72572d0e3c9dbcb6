"""The per-clip viewer: worst-first order from the stored rows, the model's output beside the
reference at the chosen frame, the per-frame curve (checked against independent reads)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset import catalog


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    from hug_vis_dataset.leaderboard import LocalResultsStore
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("viewer")
    release = root / "rel"
    synthesize(release, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=2, seconds=0.3, size=(32, 18))
    systems = release / "simulated_systems"
    evaluate_submission("matting", systems / "matting" / "matte_poor", "matte_poor", release, root / "res",
                        progress=False)
    vd = sorted(p for p in (systems / "vision_driven").iterdir() if p.is_dir())[0]
    evaluate_submission("vision_driven", vd, vd.name, release, root / "res", progress=False)
    return Release(release), LocalResultsStore(root / "res").runs(), systems, vd


def test_worst_first_is_the_stored_rows_sorted_by_the_metrics_direction(stored):
    from hug_vis_dataset.space.viewer import find_run, run_metrics, worst_first

    _, runs, _, vd = stored
    run = find_run(runs, "Video matting / matte_poor")
    assert run_metrics(run)[:5] == list(catalog.table_metrics("matting"))
    table = worst_first(run, "mad")
    mine = run.rows[(run.rows.metric == "mad") & (run.rows.status == "ok")]
    by_hand = sorted(zip(mine.value, mine.clip_id), key=lambda p: (-p[0], p[1]))  # lower is better: largest first
    assert table["Clip"].tolist() == [c for _, c in by_hand]
    assert table[catalog.spec("mad").header].tolist() == [catalog.spec("mad").printed(v) for v, _ in by_hand]
    psnr = worst_first(find_run(runs, f"Vision-driven video generation / {vd.name}"), "psnr")  # higher is better: smallest first
    values = [float(v) for v in psnr[catalog.spec("psnr").header]]
    assert values == sorted(values) and len(values) == 4
    with pytest.raises(KeyError, match="no stored run"):
        find_run(runs, "Video matting / nobody")


def test_matting_view_shows_output_reference_error_and_the_per_frame_curve(stored):
    from hug_vis_dataset.readers.media import alpha_frame_files, iter_video_frames, read_png_gray
    from hug_vis_dataset.space.inspector import matte_overlay
    from hug_vis_dataset.space.viewer import clip_view, find_run

    release, runs, systems, _ = stored
    run = find_run(runs, "Video matting / matte_poor")
    clip = "actor_0001_sad_action_01_script_002"
    record = release.record(clip)
    rgb = np.concatenate(list(iter_video_frames(record.video_path)))[3]
    ref = read_png_gray(alpha_frame_files(record.alpha_matte_path)[3])
    pred = read_png_gray(alpha_frame_files(systems / "matting" / "matte_poor" / clip)[3])
    view = clip_view(release, run, clip, 3, "mad")
    assert view.frame == 3 and (view.reference == matte_overlay(rgb, ref)).all()
    assert (view.output == matte_overlay(rgb, pred)).all() and not (view.output == view.reference).all()
    assert (view.error[..., 0] == np.abs(pred.astype(int) - ref.astype(int))).all()
    stored_frames = pd.read_parquet(run.folder / "frames.parquet")  # an independent read of the stored values
    frames = stored_frames[(stored_frames.clip_id == clip) & (stored_frames.metric == "mad")].sort_values("frame")
    assert view.curve["value"].tolist() == frames["value"].tolist() and len(frames) > 1
    assert view.curve_title == "MAD ↓ (×1e3)"  # the curve's axis under the board's header
    assert f"frame 3 of {view.n_frames}" in view.text and catalog.spec("mad").header in view.text
    assert clip_view(release, run, clip, 999).frame == view.n_frames - 1  # clamped


def test_generation_view_shows_the_generated_frame_beside_the_reference(stored):
    from hug_vis_dataset.readers.media import iter_video_frames
    from hug_vis_dataset.space.viewer import NO_OUTPUTS, clip_view, find_run

    release, runs, _, vd = stored
    run = find_run(runs, f"Vision-driven video generation / {vd.name}")
    clip = "actor_0001_happy_action_01_script_001"
    view = clip_view(release, run, clip, 2)
    want_ref = np.concatenate(list(iter_video_frames(release.record(clip).video_path)))[2]
    want_out = np.concatenate(list(iter_video_frames(vd / f"{clip}.mp4")))[2]
    assert (view.reference == want_ref).all() and (view.output == want_out).all()
    assert NO_OUTPUTS not in view.text


@pytest.fixture(scope="module")
def explorer_world(tmp_path_factory):
    """A store with a run no metric could score (audio-driven: its metrics need weights), the reference motion
    rows and Table 9's Real audio row, beside one scored matting run."""
    from hug_vis_dataset.datamodel.results import REAL_AUDIO_MODEL
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.space.explorer import Explorer
    from hug_vis_dataset.synth import synthesize
    from hug_vis_dataset.tasks import REAL_AUDIO

    root = tmp_path_factory.mktemp("viewer-runs")
    release = root / "rel"
    synthesize(release, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.3, size=(32, 18))
    systems, results = release / "simulated_systems", root / "res"
    talk = sorted(p for p in (systems / "audio_driven").iterdir() if p.is_dir())[0]
    # the paper's metrics of the task, which need weights not here (the human-motion rows run where MediaPipe's are)
    evaluate_submission("audio_driven", talk, talk.name, release, results, progress=False,
                        metrics=list(catalog.table_metrics("audio_driven")))
    evaluate_submission("matting", systems / "matting" / "matte_poor", "matte_poor", release, results, progress=False)
    evaluate_submission("motion", "reference", "reference", release, results, progress=False)
    evaluate_submission("voice_cloning", REAL_AUDIO, REAL_AUDIO_MODEL, release, results, progress=False)
    return Explorer(release, results, work_dir=root / "work"), talk


def test_a_run_without_scores_is_listed_and_its_outputs_shown(explorer_world):
    from hug_vis_dataset.readers.media import iter_video_frames

    explorer, talk = explorer_world
    label = f"Audio-driven video generation / {talk.name}"
    assert label in explorer.viewer_runs()  # its metrics needed weights: still there to be watched
    table, metrics, metric, ids, note, order = explorer.viewer_clips(label)
    clips = [str(c) for c in explorer.release.clip_ids()]
    assert ids == clips and table["Score"].tolist() == ["not scored"] * len(clips) and metrics == [] and metric is None
    assert "not scored" in note and "hugvis weights download" in note and "grid order" in note
    assert order == "grid order"
    view = explorer.viewer_view(label, ids[0], 2)
    want = np.concatenate(list(iter_video_frames(talk / f"{ids[0]}.mp4")))[2]
    assert view.output is not None and (view.output == want).all() and view.reference is not None
    assert "Not scored: CSIM: needs weights: run `hugvis weights download" in view.text  # by label, command as code
    assert "audio_driven" not in view.text


def test_reference_motion_is_a_clip_property_listed_largest_first(explorer_world):
    from hug_vis_dataset.readers.media import iter_video_frames

    explorer, _ = explorer_world
    label = "Reference motion statistics (Fig. 11) / reference clips"
    table, metrics, metric, ids, note, order = explorer.viewer_clips(label, "motion_u")
    from hug_vis_dataset.space.viewer import clip_display

    values = [float(v) for v in table[catalog.spec("motion_u").header]]
    assert values == sorted(values, reverse=True) and "largest first" in note and "worst" not in note
    assert table["Clip"].tolist() == [clip_display(c) for c in ids]  # shown as read; the ids stay the values
    assert order == "largest first"
    view = explorer.viewer_view(label, ids[0], 1, "motion_u")
    want = np.concatenate(list(iter_video_frames(explorer.release.record(ids[0]).video_path)))[1]
    assert view.panels == frozenset({"reference"}) and (view.reference == want).all() and view.output is None
    assert "not on this machine" not in view.text


def test_the_real_audio_row_plays_the_clip_and_the_other_recording_its_speaker_sim_compares(explorer_world):
    """The Real audio row's Speaker Sim. pairs each clip with another recording of the same actor (the row's one
    pairing rule): the reference player plays the clip, the "generated" player that other recording, and the text
    names it (it used to say both players play the same file)."""
    from hug_vis_dataset.metrics.voice import real_audio_pairs
    from hug_vis_dataset.space.viewer import NO_OUTPUTS, clip_display

    explorer, _ = explorer_world
    label = "Voice cloning / Real audio (reference)"
    ids = explorer.viewer_clips(label).ids
    partner = {p.clip_id: p.partner_id for p in real_audio_pairs(list(explorer.release))[0]}[ids[0]]
    assert partner != ids[0]
    view = explorer.viewer_view(label, ids[0])
    assert view.reference_audio == str(explorer.release.record(ids[0]).audio_path)
    assert view.output_audio == str(explorer.release.record(partner).audio_path) != view.reference_audio
    assert f"another recording of the same actor, {clip_display(partner)}" in view.text
    assert "same file" not in view.text and NO_OUTPUTS not in view.text

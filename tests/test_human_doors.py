"""Every door gives the same human-motion numbers, on real photographs: the library (the landmark networks on
the decoded frames, then the row's function), the task scorer, the evaluate module's door
(``hug_vis_dataset.modules.compute``), ``hugvis evaluate``'s runner rows and the report's table beside the
paper's. The release is a synthetic one whose reference clips and predictions are replaced by clips of the
astronaut and of Grace Hopper (tests/human_photos.py). A clip whose reference shows no hand fails its hand rows
alone (counted, with the reason), and its PSNR still counts.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

import human_photos as P
from hug_vis_dataset import catalog
from hug_vis_dataset.metrics.human_tracks import speech_envelope

VISION = ("psnr", "person_missing", "body_jitter", "bone_length_variation", "akd", "akd_drift", "lmd", "hand_recall")
AUDIO = ("person_missing", "face_missing", "body_jitter", "lmd", "mouth_audio_offset", "mouth_audio_sync")
FRAMES = 24


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    P.needs_mediapipe()
    from hug_vis_dataset.readers.media import write_wav
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.reporting.report import build_report
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("human_doors")
    release = root / "rel"
    synthesize(release, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=FRAMES / 30,
               size=P.SIZE, systems=True)
    rng = np.random.default_rng(11)
    for record, name in zip(Release(release), ("astronaut", "grace")):
        image = P.photo(name)
        samples, envelope = P.syllables(FRAMES / 30, seed=len(name))
        per_frame = speech_envelope(envelope, 16000, 30.0, FRAMES)
        talking = [P.open_mouth(image, name, 18 * e) for e in per_frame]
        reference = [P.scene(f, dx=3 * math.sin(t / 4)) for t, f in enumerate(talking)]
        generated = [P.scene(f, dx=3 * math.sin(t / 4) + rng.normal(0, 2), dy=abs(rng.normal(0, 2)))
                     for t, f in enumerate(talking)]
        P.write_clip(record.video_path, reference)
        write_wav(record.audio_path, samples, 16000)
        clip = f"{record.clip_id}.mp4"
        P.write_clip(release / "simulated_systems" / "vision_driven" / "vis_fair" / clip, generated)
        P.write_clip(release / "simulated_systems" / "audio_driven" / "talk_fair" / clip, generated[::-1])
    for task, system, metrics in (("vision_driven", "vis_fair", VISION), ("audio_driven", "talk_fair", AUDIO)):
        evaluate_submission(task, release / "simulated_systems" / task / system, system, release, root / "results",
                            metrics=list(metrics), progress=False, chunk_frames=7)
    report = build_report([root / "results"], root / "report", formats=("md",), n_boot=0, figures=False)
    return release, root / "results", report


def _library(metric, prediction, reference_video, reference_audio):
    from test_human_motion import landmark_track

    from hug_vis_dataset.readers.media import iter_video_frames, video_info
    from hug_vis_dataset.models.mediapipe.holistic import load_face, load_hands, load_pose
    from hug_vis_dataset.references import read_reference_audio

    loaders = {"human_pose": load_pose, "human_hands": load_hands, "human_face": load_face}
    row = catalog.spec(metric)
    networks = {kind: loaders[kind]() for kind in ("human_pose", "human_hands", "human_face")
                if kind in {k for m in catalog.METRICS if m.call == catalog.PER_TRACK for k in row.networks}}
    frames = lambda path: [f for chunk in iter_video_frames(path) for f in chunk]  # noqa: E731
    pred = landmark_track(networks, frames(prediction), video_info(prediction).fps)
    function = catalog.implementation_of(row)
    try:
        if row.mode == catalog.REFERENCE_FREE:
            return function(pred)
        if row.reference_kind == "audio":
            samples, rate = read_reference_audio(reference_audio)
            return function(pred, landmark_track(networks, [], pred.fps,
                                                 envelope=speech_envelope(samples, rate, pred.fps, pred.n)))
        return function(pred, landmark_track(networks, frames(reference_video), pred.fps))
    except ValueError:
        return math.nan


@pytest.mark.parametrize("task, system, metrics", [("vision_driven", "vis_fair", VISION[1:-1]),
                                                   ("audio_driven", "talk_fair", AUDIO)])
def test_every_door_gives_the_same_number(world, task, system, metrics):
    import pandas as pd

    from hug_vis_dataset.modules import compute
    from hug_vis_dataset.datamodel.release import Release

    release, results, report = world
    records = list(Release(release))
    predictions = [str(release / "simulated_systems" / task / system / f"{r.clip_id}.mp4") for r in records]
    stored = pd.read_parquet(results / task / system / "rows.parquet")
    for metric in metrics:
        row = catalog.spec(metric)
        references = ([str(r.audio_path) for r in records] if row.reference_kind == "audio" else
                      None if row.mode == catalog.REFERENCE_FREE else [str(r.video_path) for r in records])
        library = [_library(metric, p, str(r.video_path), str(r.audio_path)) for p, r in zip(predictions, records)]
        runner = stored[stored["metric"] == metric].set_index("clip_id")["value"]
        module = compute(metric, predictions=predictions, references=references, task=task)
        for i, record in enumerate(records):
            for where, value in (("runner", runner[record.clip_id]), ("module", module["per_clip"][i])):
                value = math.nan if value is None else value
                assert (math.isnan(value) and math.isnan(library[i])) or value == pytest.approx(library[i], abs=1e-12), \
                    (metric, record.clip_id, where, value, library[i])
        finite = [v for v in library if not math.isnan(v)]
        assert finite, metric  # real photographs give real values
        assert report.tables[task].loc[system, metric] == pytest.approx(module[metric], rel=1e-12), metric
        assert module[metric] == pytest.approx(sum(finite) / len(finite), rel=1e-12)


def test_a_clip_whose_reference_has_no_hand_fails_its_hand_rows_alone(world):
    import pandas as pd

    _, results, report = world
    stored = pd.read_parquet(results / "vision_driven" / "vis_fair" / "rows.parquet")
    hands = stored[stored["metric"] == "hand_recall"]
    assert (hands["status"] == "failed").all()
    assert hands["error"].str.contains("the reference shows no hand in any frame").all()
    from hug_vis_dataset.scoring.aggregate import counted_rows

    counted = counted_rows(stored)
    psnr = counted[counted["metric"] == "psnr"]
    assert (psnr["status"] == "ok").all() and len(psnr) == 2  # still counted: the hand rows fail alone
    assert report.tables["vision_driven"].loc["vis_fair", "psnr"] == pytest.approx(psnr["value"].mean())
    import json

    coverage = json.loads((results / "vision_driven" / "vis_fair" / "coverage.json").read_text(encoding="utf-8"))
    assert coverage["ok"] == 2 and coverage["failed"] == {}  # and the clips are not failures of the run

"""A metric is one catalog row + one function (issue 36): every row names the function computing it,
and the task scorers dispatch from the catalog.

The claim is proved the way a contributor would add a metric: a row and a function defined here,
injected into the catalog, scored through the task scorer, ``hugvis evaluate`` (the CLI, in process)
and the evaluate door (``modules.compute``) on the synthetic grid, with no scorer edit, and checked
against an independent computation: a frame-paired metric of decoded video frames, one of alpha
mattes (aggregated under RVM's protocol from its stored per-frame rows), and a per-clip audio metric.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metric_tester as MT
from hug_vis_dataset import catalog
from hug_vis_dataset.tasks import ModelCache, get_task


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    return MT.door_world(tmp_path_factory)


# ----------------------------------------------------------------------------- every row names its function
def test_every_row_names_a_function_that_resolves_in_its_home():
    from hug_vis_dataset.tasks.models import LOADERS

    for row in catalog.METRICS:
        function = catalog.implementation_of(row)
        assert callable(function), row.name
        home = "hug_vis_dataset.analyses" if row.mode == catalog.ANALYSIS else "hug_vis_dataset.metrics."
        assert function.__module__.startswith(home), (row.name, function.__module__)
        assert set(row.networks) <= set(LOADERS), row.name


def test_every_task_scorer_computes_each_of_its_rows_from_the_catalog():
    for task in catalog.task_names():
        scorer = get_task(task)
        table = scorer.computations()  # raises naming a row no pass of the task can call
        assert set(table) == set(catalog.clip_metrics(task)), task
        for metric, method in table.items():  # kernels group by the catalog's implementation
            row = catalog.spec(metric)
            expected = scorer.kernels.get(row.implementation) if row.call == catalog.KERNEL else scorer.passes[row.call]
            assert method.__name__ == expected, (task, metric)
    # rows naming one kernel are one call; generation's rows share the one decode
    assert get_task("matting").groups(["mad", "conn", "dtssd"]) == [("mad", "conn", "dtssd")]
    assert get_task("vision_driven").groups(["psnr", "csim", "lpips"]) == [("psnr", "csim", "lpips")]
    assert get_task("voice_cloning").groups(["utmos", "dnsmos", "dnsmos_sig", "speaker_similarity"]) == [
        ("utmos",), ("dnsmos", "dnsmos_sig"), ("speaker_similarity",)]


def test_a_wrong_implementation_is_a_one_line_error_naming_the_row(monkeypatch):
    base = catalog.spec("psnr")
    for bad in ("", "hug_vis_dataset.metrics.frames", "hug_vis_dataset.metrics.frames:", "a b:c"):
        with pytest.raises(ValueError, match=r"^psnr_bad: implementation .* does not name its function"):
            replace(base, name="psnr_bad", implementation=bad)
    for bad in ("hug_vis_dataset.metrics.frames:no_such_function", "hug_vis_dataset.metrics.no_such_module:f"):
        with pytest.raises(ValueError) as info:
            catalog.implementation_of(replace(base, name="psnr_bad", implementation=bad))
        assert "\n" not in str(info.value) and str(info.value).startswith(f"psnr_bad: implementation '{bad}'")
    with pytest.raises(ValueError, match="^psnr_bad: call '' is not one of"):
        replace(base, name="psnr_bad", call="")
    with pytest.raises(ValueError, match="^x: an analysis is called by analyses.run"):
        replace(catalog.spec("motion_difficulty"), name="x", call=catalog.PER_FRAME)
    # a row its task cannot call: the scorer says which row, one line
    row = replace(base, name="clip_psnr", call=catalog.PER_CLIP)
    _register(monkeypatch, row)
    with pytest.raises(ValueError, match="^clip_psnr: task vision_driven has no pass calling"):
        get_task("vision_driven").computations()


# ----------------------------------------------------------------------------- the new rows and their functions
def frame_mae(pred: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per-frame mean absolute RGB difference (0-255): a frame-paired metric added as one row."""
    return np.abs(pred.astype(np.float64) - ref.astype(np.float64)).mean(axis=(1, 2, 3))


def alpha_l1(pred: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Per-frame mean |alpha error| of float mattes in [0, 1]: a matte metric added as one row."""
    assert pred.dtype == np.float32 and ref.dtype == np.float32  # the call's contract
    return np.abs(pred.astype(np.float64) - ref.astype(np.float64)).mean(axis=(1, 2))


def audio_rms_ratio(pred: np.ndarray, ref: np.ndarray) -> float:
    """RMS of the prediction over the reference's (16 kHz mono samples): a paired audio metric as one row."""
    return float(np.sqrt(np.mean(pred.astype(np.float64) ** 2)) / np.sqrt(np.mean(ref.astype(np.float64) ** 2)))


def _row(name: str, like: str, **changes) -> catalog.MetricSpec:
    return replace(catalog.spec(like), name=name, label=name, weights=(), networks=(), paper_table="", in_table=False,
                   implementation=f"{__name__}:{changes.pop('function')}", **changes)


FRAME_MAE = _row("frame_mae", "psnr", function="frame_mae", higher_is_better=False, value_range=(0.0, 255.0),
                 call=catalog.PER_FRAME)
ALPHA_L1 = _row("alpha_l1", "mad", function="alpha_l1", value_range=(0.0, 1.0), call=catalog.PER_FRAME)
AUDIO_RMS = _row("audio_rms_ratio", "speaker_similarity", function="audio_rms_ratio", value_range=(0.0, math.inf),
                 call=catalog.PER_CLIP, extras=())


def _register(monkeypatch, row: catalog.MetricSpec) -> None:
    """What adding the row to ``catalog.METRICS`` does (the catalog's derived tables included)."""
    monkeypatch.setattr(catalog, "METRICS", catalog.METRICS + (row,))
    monkeypatch.setitem(catalog._BY_NAME, row.name, row)
    monkeypatch.setattr(catalog, "METRIC_NAMES", catalog.METRIC_NAMES | {row.name})


def _added(world, monkeypatch, row: catalog.MetricSpec, task: str) -> tuple[list, list, list]:
    """Register ``row``; the door world's inputs (predictions, references, records) of ``task``'s system."""
    _register(monkeypatch, row)
    return MT.door_inputs(world[0], task, MT.SYSTEM[task])


def _evaluate_cli(task: str, folder: Path, release: Path, out: Path, metrics: str) -> pd.DataFrame:
    from hug_vis_dataset.cli import main

    assert main(["evaluate", task, "--predictions", str(folder), "--dataset", str(release), "--model", "added",
                 "--out", str(out), "--metrics", metrics, "--chunk-frames", "3", "--no-progress"]) == 0
    return MT.stored_rows(out, task, "added")


def _close(a: float, b: float) -> None:
    assert abs(a - b) <= 1e-12 * max(1.0, abs(b)), (a, b)


# -- (a) a frame-paired metric of decoded video frames
def _rgb_frames(path: str) -> np.ndarray:
    """Every frame of a video as uint8 RGB, decoded by PyAV directly (not the library's reader)."""
    import av

    with av.open(path) as container:
        return np.stack([f.to_ndarray(format="rgb24") for f in container.decode(video=0)])


def test_a_new_frame_metric_of_video_frames_is_one_row_plus_one_function(world, monkeypatch, tmp_path):
    from hug_vis_dataset.readers import media
    from hug_vis_dataset import modules

    release, results, _ = world
    predictions, references, records = _added(world, monkeypatch, FRAME_MAE, "vision_driven")
    independent = []
    for pred, ref in zip(predictions, references):
        p, r = _rgb_frames(pred), _rgb_frames(ref)
        n = min(len(p), len(r))  # the common prefix
        diff = np.abs(p[:n].astype(np.int64) - r[:n].astype(np.int64))
        independent.append(int(diff.sum()) / diff.size)  # exact integer total: one frame size, equal weights
    # the task scorer: one decode of each video feeds the new row and PSNR, PSNR unchanged
    decodes = []
    real = media.iter_video_frames
    monkeypatch.setattr(media, "iter_video_frames", lambda path, *a, **k: decodes.append(path) or real(path, *a, **k))
    scorer, stored = get_task("vision_driven"), MT.stored_rows(results, "vision_driven", MT.SYSTEM["vision_driven"])
    for i, (pred, ref) in enumerate(zip(predictions, references)):
        decodes.clear()
        scores = scorer.score_clip(pred, {"video": ref, "portrait": ref}, ["frame_mae", "psnr"], ModelCache(),
                                   {"chunk_frames": 3})
        assert sorted(decodes) == sorted([pred, ref])
        _close(scores.values["frame_mae"], independent[i])
        old = stored[(stored["clip_id"] == records[i].clip_id) & (stored["metric"] == "psnr")]["value"].item()
        assert scores.values["psnr"] == old  # bit for bit: the row joined the pass, PSNR did not move
    monkeypatch.setattr(media, "iter_video_frames", real)
    # hugvis evaluate (the CLI in this process)
    rows = _evaluate_cli("vision_driven", Path(predictions[0]).parent, release, tmp_path / "out", "frame_mae,psnr")
    by_clip = rows[rows["metric"] == "frame_mae"].set_index("clip_id")["value"]
    for i, record in enumerate(records):
        _close(by_clip[record.clip_id], independent[i])
    assert (rows[rows["metric"] == "psnr"].sort_values("clip_id")["value"].to_numpy()
            == stored[stored["metric"] == "psnr"].sort_values("clip_id")["value"].to_numpy()).all()
    # the evaluate door (every metrics/<name>/ module calls it)
    out = modules.compute("frame_mae", predictions=predictions, references=references, chunk_frames=5)
    for i in range(len(records)):
        _close(out["per_clip"][i], independent[i])
    _close(out["frame_mae"], float(np.mean(independent)))


# -- (b) a frame-paired metric of alpha mattes, aggregated under RVM's protocol
def _matte(path: str) -> np.ndarray:
    """A matte's PNG folder as alpha in [0, 1], read with PIL (not the library's reader): 8-bit ``k`` is
    float32 ``k / 255``, as RVM's evaluation reads it (the per-frame call's contract), held in float64."""
    from PIL import Image

    frames = [np.asarray(Image.open(f), np.float32) / np.float32(255) for f in sorted(Path(path).glob("*.png"))]
    return np.stack(frames).astype(np.float64)


def test_a_new_frame_metric_of_alpha_mattes_is_one_row_plus_one_function(world, monkeypatch, tmp_path):
    from hug_vis_dataset import modules

    release, results, _ = world
    predictions, references, records = _added(world, monkeypatch, ALPHA_L1, "matting")
    per_frame = [np.abs(_matte(p) - _matte(r)).mean(axis=(1, 2)) for p, r in zip(predictions, references)]
    length = max(len(v) for v in per_frame)  # RVM: per frame index over the clips that have it, then over indices
    rvm = float(np.mean([np.mean([v[k] for v in per_frame if len(v) > k]) for k in range(length)]))
    scorer, stored = get_task("matting"), MT.stored_rows(results, "matting", MT.SYSTEM["matting"])
    for i, (pred, ref) in enumerate(zip(predictions, references)):
        scores = scorer.score_clip(pred, {"alpha": ref}, ["mad", "alpha_l1", "dtssd"], ModelCache(), {"chunk_frames": 3})
        _close(scores.values["alpha_l1"], float(np.mean(per_frame[i])))
        frames = [f for f in scores.frames if f["metric"] == "alpha_l1"]
        assert [f["frame"] for f in frames] == list(range(len(per_frame[i])))
        np.testing.assert_allclose([f["value"] for f in frames], per_frame[i], rtol=1e-12, atol=0)
        for metric in ("mad", "dtssd"):  # the fused kernel in the same pass: bit for bit as stored
            old = stored[(stored["clip_id"] == records[i].clip_id) & (stored["metric"] == metric)]["value"].item()
            assert scores.values[metric] == old, metric
    rows = _evaluate_cli("matting", Path(predictions[0]).parent, release, tmp_path / "out", "alpha_l1,mad")
    by_clip = rows[rows["metric"] == "alpha_l1"].set_index("clip_id")["value"]
    for i, record in enumerate(records):
        _close(by_clip[record.clip_id], float(np.mean(per_frame[i])))
    frames = pd.read_parquet(tmp_path / "out" / "matting" / "added" / "frames.parquet")
    assert len(frames[frames["metric"] == "alpha_l1"]) == sum(len(v) for v in per_frame)
    out = modules.compute("alpha_l1", predictions=predictions, references=references, chunk_frames=2)
    assert out["protocol"] == catalog.RVM
    for i in range(len(records)):
        _close(out["per_clip"][i], float(np.mean(per_frame[i])))
    _close(out["alpha_l1"], rvm)


# -- (c) a per-clip audio metric compared with the reference recording
def test_a_new_per_clip_audio_metric_is_one_row_plus_one_function(world, monkeypatch, tmp_path):
    import soundfile as sf

    from hug_vis_dataset import modules

    release = world[0]
    predictions, references, records = _added(world, monkeypatch, AUDIO_RMS, "voice_cloning")
    independent = []
    for pred, ref in zip(predictions, references):
        (p, rate_p), (r, rate_r) = sf.read(pred, dtype="float64"), sf.read(ref, dtype="float64")
        assert rate_p == rate_r == 16000 and p.ndim == r.ndim == 1  # the synthetic grid: no resampling to do
        independent.append(math.sqrt(np.mean(p ** 2)) / math.sqrt(np.mean(r ** 2)))
    scorer = get_task("voice_cloning")
    for i, (pred, ref) in enumerate(zip(predictions, references)):
        scores, errors = scorer.score_groups(pred, {"audio": ref}, ["audio_rms_ratio"], ModelCache(), {})
        assert errors == {}
        assert abs(scores.values["audio_rms_ratio"] - independent[i]) <= 1e-6 * independent[i]  # float32 samples
    rows = _evaluate_cli("voice_cloning", Path(predictions[0]).parent, release, tmp_path / "out", "audio_rms_ratio")
    by_clip = rows[rows["metric"] == "audio_rms_ratio"].set_index("clip_id")["value"]
    out = modules.compute("audio_rms_ratio", predictions=predictions, references=references)
    for i, record in enumerate(records):
        assert abs(by_clip[record.clip_id] - independent[i]) <= 1e-6 * independent[i]
        assert out["per_clip"][i] == by_clip[record.clip_id]  # the two doors: the same number
    _close(out["audio_rms_ratio"], float(np.mean(by_clip.to_numpy())))


def test_a_failing_row_fails_alone_in_a_shared_pass(world, monkeypatch):
    """A per-frame function that raises fails its own row; the pass's other rows keep their values."""
    results = world[1]
    broken = replace(FRAME_MAE, name="broken_rows", implementation=f"{__name__}:_one_value_per_chunk")
    predictions, references, records = _added(world, monkeypatch, broken, "vision_driven")
    stored = MT.stored_rows(results, "vision_driven", MT.SYSTEM["vision_driven"])
    scores, errors = get_task("vision_driven").score_groups(predictions[0], {"video": references[0]},
                                                             ["psnr", "broken_rows"], ModelCache(), {})
    assert list(errors) == ["broken_rows"] and "one value per pair expected" in errors["broken_rows"]
    old = stored[(stored["clip_id"] == records[0].clip_id) & (stored["metric"] == "psnr")]["value"].item()
    assert scores.values == {"psnr": old}


def _one_value_per_chunk(pred: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return np.zeros(1)

"""Several samples per clip (a stochastic model's seeds): the submission layout, the stored rows and the one rule
every table reads (the per-clip mean over samples), checked against one-sample runs of the same predictions.

Planted truth: a matting run whose clips hold two samples, the built-in baseline's matte (sample 0) and the
reference alpha itself (sample 1, error 0), must give exactly the mean of the two one-sample runs, under the clip
protocol and under RVM's per-frame protocol alike; one sample per clip must give exactly today's numbers.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.datamodel.grid import ClipId
from hug_vis_dataset.datamodel.results import SAMPLE_COLUMN
from hug_vis_dataset.scoring.aggregate import sample_means, task_table
from hug_vis_dataset.scoring.runner import evaluate_submission
from hug_vis_dataset.scoring.runs import DamagedRun, StoredRun, read_run
from hug_vis_dataset.tasks import index_predictions
from hug_vis_dataset.tasks.submission import index_folder

METRICS = ("mad", "mse", "grad", "conn", "dtssd")
CLIP = "actor_0001_sad_action_01_script_001"


# ----------------------------------------------------------------------------- the layout
def _touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def test_a_samples_folder_is_told_from_a_frames_folder_by_its_entries(tmp_path):
    frames = tmp_path / "actor_0001_sad_action_01_script_001"
    for name in ("000000.png", "000001.png"):
        _touch(frames / name)
    samples = tmp_path / "actor_0001_sad_action_01_script_002"
    _touch(samples / "sample_0.mkv")
    _touch(samples / "sample_1" / "000000.png")  # a sample given as PNG frames
    _touch(samples / "sample_2.mp4")
    _touch(samples / "README.md")  # notes are ignored, as at the top level
    index = index_predictions("matting", tmp_path)
    by_name = {str(c): v for c, v in index.samples.items()}
    assert list(by_name) == ["actor_0001_sad_action_01_script_002"]
    assert {k: Path(p).name for k, p in by_name["actor_0001_sad_action_01_script_002"].items()} == {
        0: "sample_0.mkv", 1: "sample_1", 2: "sample_2.mp4"}
    assert sorted(str(c) for c in index.found) == ["actor_0001_sad_action_01_script_001",
                                                   "actor_0001_sad_action_01_script_002"]
    assert index.unmatched == [] and index.duplicates() == {}
    assert sorted(len(index.samples[c]) if c in index.samples else 1 for c in index.found) == [1, 3]


def test_entries_of_a_samples_folder_that_are_not_samples_are_named(tmp_path):
    folder = tmp_path / CLIP
    _touch(folder / "sample_0.wav")
    _touch(folder / "take_b.wav")
    _touch(folder / "sample_1.mp3")  # a sample in a format the task does not take
    index = index_predictions("voice_cloning", tmp_path)
    assert {k: Path(p).name for k, p in index.samples[ClipId.parse(CLIP)].items()} == {0: "sample_0.wav"}
    assert [name for name, _ in index.unmatched] == [f"{CLIP}/sample_1.mp3", f"{CLIP}/take_b.wav"]
    assert all("sample_<k>.wav" in why for _, why in index.unmatched)


def test_a_sample_number_given_twice_makes_the_clip_a_duplicate(tmp_path):
    folder = tmp_path / CLIP
    _touch(folder / "sample_1.mp4")
    _touch(folder / "sample_01.mkv")  # also sample 1: which one? neither
    index = index_predictions("vision_driven", tmp_path)
    dups = index.duplicates()
    assert list(map(str, dups)) == [CLIP] and len(dups[ClipId.parse(CLIP)]) == 2


def test_a_folder_without_samples_is_unmatched_where_the_task_takes_files(tmp_path):
    _touch(tmp_path / CLIP / "000000.png")
    index = index_predictions("audio_driven", tmp_path)
    assert index.found == {} and index.samples == {}
    assert index.unmatched == [(CLIP, "a folder, expected one file per clip, or sample_<k>.mp4 (or .mkv, .mov) "
                                      "files (several samples of the clip)")]
    # and the emotion task, whose predictions are answers, takes no samples folder at all
    assert index_folder(tmp_path, (".jsonl",), dirs=False).unmatched == [(CLIP, "a folder, expected one file per clip")]


# ----------------------------------------------------------------------------- the rule, on rows
def _rows(values, samples, statuses=None, clips=None):
    n = len(values)
    return pd.DataFrame({"model": "m", "task": "matting", "clip_id": clips or [CLIP] * n, "actor_id": 1,
                         "emotion": "Sad", "action_id": 1, "script_id": 1, "metric": "mad",
                         "value": values, "status": statuses or ["ok"] * n, "error": "", SAMPLE_COLUMN: samples})


def test_sample_means_average_a_clip_and_fail_it_when_one_sample_failed():
    other = "actor_0002_sad_action_01_script_001"
    rows = _rows([1.0, 2.0, 6.0, 4.0, math.nan], [0, 1, 2, 0, 1],
                 ["ok", "ok", "ok", "ok", "failed"], [CLIP] * 3 + [other] * 2)
    rows.loc[4, "error"] = "sample 1: SubmissionError: wrong frame count"
    out = sample_means(rows)
    assert SAMPLE_COLUMN not in out.columns and len(out) == 2
    assert out.loc[out["clip_id"] == CLIP, "value"].item() == pytest.approx(3.0)  # (1 + 2 + 6) / 3
    failed = out[out["clip_id"] == other].iloc[0]
    assert failed["status"] == "failed" and math.isnan(failed["value"])
    assert failed["error"] == "sample 1: SubmissionError: wrong frame count"
    # the table: the failed clip counted once as failed, the mean over the other clip's sample mean
    table = task_table(rows)
    assert table.loc["m", "mad"] == pytest.approx(3.0) and table.loc["m", "n_failed"] == 1
    assert table.loc["m", "n_ok"] == 1


def test_unequal_sample_counts_weigh_clips_equally():
    other = "actor_0002_sad_action_01_script_001"
    rows = _rows([0.0, 0.0, 0.0, 9.0], [0, 1, 2, 0], clips=[CLIP] * 3 + [other])
    # per clip: 0 and 9 -> 4.5; a mean over rows would give 2.25
    assert task_table(rows).loc["m", "mad"] == pytest.approx(4.5)


def test_set_metric_draws_are_averaged_and_a_failed_draw_fails_the_value():
    def set_rows(values, statuses):
        return pd.DataFrame({"model": "m", "task": "vision_driven", "clip_id": "", "metric": "fid", "value": values,
                             "status": statuses, "error": "", SAMPLE_COLUMN: list(range(len(values)))})

    clip_rows = _rows([1.0], [0]).assign(task="vision_driven", metric="psnr")
    table = task_table(clip_rows, set_rows=set_rows([10.0, 14.0], ["ok", "ok"]))
    assert table.loc["m", "fid"] == pytest.approx(12.0)
    table = task_table(clip_rows, set_rows=set_rows([10.0, math.nan], ["ok", "failed"]))
    assert "fid" not in table.columns or math.isnan(table.loc["m", "fid"])


# ----------------------------------------------------------------------------- end to end, matting
@pytest.fixture(scope="module")
def matting_runs(tmp_path_factory):
    """One-sample runs of the baseline (A) and of the reference alpha (B), and runs holding both as samples."""
    from hug_vis_dataset.predict.api import predict
    from hug_vis_dataset.synth.generate import synthesize

    root = tmp_path_factory.mktemp("samples")
    release = root / "release"
    synthesize(release, actors=2, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.3, size=(64, 36),
               systems=False)
    predict("matting", "baseline", release, root / "baseline")
    clips = sorted(p.name for p in (root / "baseline").iterdir() if p.name.startswith("actor_"))

    def alpha(clip: str) -> Path:
        c = ClipId.parse(clip)
        return (release / "alpha_matte" / f"actor_{c.actor_id:04d}" / c.emotion.lower()
                / f"action_{c.action_id:02d}" / f"script_{c.script_id:03d}")

    def submission(name, make):
        folder = root / name
        folder.mkdir()
        for clip in clips:
            make(folder, clip)
        return folder

    def both(folder, clip):
        shutil.copytree(root / "baseline" / clip, folder / clip / "sample_0")
        shutil.copytree(alpha(clip), folder / clip / "sample_1")

    def broken_second(folder, clip):
        both(folder, clip)
        if clip == clips[0]:  # sample 1 of one clip loses a frame: the whole clip fails
            sorted((folder / clip / "sample_1").iterdir())[-1].unlink()

    made = {
        "A": submission("A", lambda f, c: shutil.copytree(root / "baseline" / c, f / c)),
        "B": submission("B", lambda f, c: shutil.copytree(alpha(c), f / c)),
        "AB": submission("AB", both),
        "A1": submission("A1", lambda f, c: shutil.copytree(root / "baseline" / c, f / c / "sample_0")),
        "broken": submission("broken", broken_second),
    }
    out = root / "results"
    runs = {}
    for name, folder in made.items():
        evaluate_submission("matting", folder, f"m{name}", release, out=out, progress=False)
        runs[name] = read_run(out / "matting" / f"m{name}")
        assert isinstance(runs[name], StoredRun), getattr(runs[name], "problem", "")
    return runs, out, clips


@pytest.mark.parametrize("protocol", ["rvm", "clip"])
def test_two_samples_give_the_mean_of_the_two_one_sample_runs(matting_runs, protocol):
    runs, _, _ = matting_runs
    a, b, ab = runs["A"], runs["B"], runs["AB"]
    if protocol == "rvm":  # the task's documented protocol, from frames.parquet
        tables = [r.table for r in (a, b, ab)]
    else:
        tables = [task_table(r.rows, protocol="clip") for r in (a, b, ab)]
    t_a, t_b, t_ab = (t.iloc[0] for t in tables)
    assert t_a["mad"] > 1.0 and t_b["mad"] == 0.0  # the planted truth has two distinct halves
    for metric in METRICS:
        assert t_ab[metric] == pytest.approx((t_a[metric] + t_b[metric]) / 2, rel=1e-12, abs=1e-12), metric
    assert int(t_ab["n_ok"]) == 4 and int(t_ab["n_failed"]) == 0


def test_every_reader_gets_one_row_per_clip_and_the_samples_apart(matting_runs):
    runs, out, clips = matting_runs
    ab = runs["AB"]
    stored = pd.read_parquet(out / "matting" / "mAB" / "rows.parquet")
    assert sorted(stored[SAMPLE_COLUMN].unique()) == [0, 1] and len(stored) == 2 * len(clips) * len(METRICS)
    assert SAMPLE_COLUMN not in ab.rows.columns and len(ab.rows) == len(clips) * len(METRICS)
    assert not ab.rows.duplicated(["clip_id", "metric"]).any()
    assert len(ab.sample_rows) == len(stored) and ab.samples_per_clip == 2
    per_clip = ab.rows.set_index(["clip_id", "metric"])["value"]
    halves = ab.sample_rows.groupby(["clip_id", "metric"])["value"].mean()
    pd.testing.assert_series_equal(per_clip.sort_index(), halves.sort_index(), check_names=False)
    coverage = ab.summary["coverage"]
    assert coverage["samples"] == {"min": 2, "max": 2, "clips_with_samples": len(clips)}
    frames = pd.read_parquet(out / "matting" / "mAB" / "frames.parquet")
    assert sorted(frames[SAMPLE_COLUMN].unique()) == [0, 1]


def test_one_sample_per_clip_is_exactly_todays_run(matting_runs):
    runs, out, _ = matting_runs
    a, a1 = runs["A"], runs["A1"]
    pd.testing.assert_frame_equal(a.table.reset_index(drop=True), a1.table.reset_index(drop=True), check_exact=True)
    assert a.sample_rows is None and a.samples_per_clip == 1
    assert SAMPLE_COLUMN not in pd.read_parquet(out / "matting" / "mA" / "rows.parquet").columns
    assert SAMPLE_COLUMN not in pd.read_parquet(out / "matting" / "mA" / "frames.parquet").columns
    assert "samples" not in a.summary["coverage"]


def test_a_failed_sample_fails_its_clip_naming_the_sample(matting_runs):
    runs, _, clips = matting_runs
    broken = runs["broken"]
    assert int(broken.table.iloc[0]["n_failed"]) == 1 and int(broken.table.iloc[0]["n_ok"]) == len(clips) - 1
    row = broken.rows[broken.rows["clip_id"] == clips[0]].iloc[0]
    assert row["status"] == "failed" and row["error"].startswith("sample 1: ")
    assert "frame count" in row["error"]
    assert broken.summary["coverage"]["failed"][clips[0]].startswith("sample 1: ")
    # the other clips' means are the two-sample means, as in the complete run
    ok = broken.rows[broken.rows["status"] == "ok"].set_index(["clip_id", "metric"])["value"]
    full = runs["AB"].rows.set_index(["clip_id", "metric"])["value"]
    np.testing.assert_array_equal(ok.to_numpy(), full.loc[ok.index].to_numpy())


@pytest.mark.parametrize("damage, problem", [
    ("repeat", "twice for sample 1"),
    ("negative", "sample number that is empty or negative"),
])
def test_a_stored_run_with_bad_sample_numbers_is_damaged(matting_runs, tmp_path, damage, problem):
    runs, out, _ = matting_runs
    folder = tmp_path / "matting" / "mAB"
    shutil.copytree(out / "matting" / "mAB", folder)
    rows = pd.read_parquet(folder / "rows.parquet")
    if damage == "repeat":
        rows.loc[rows[SAMPLE_COLUMN] == 0, SAMPLE_COLUMN] = 1
    else:
        rows.loc[0, SAMPLE_COLUMN] = -1
    rows.to_parquet(folder / "rows.parquet", index=False)
    run = read_run(folder)
    assert isinstance(run, DamagedRun) and problem in run.problem


def test_the_evaluate_module_gives_the_cli_numbers_for_the_same_samples(matting_runs):
    """Another door, the same number: the ``mad`` module fed every sample path of every clip (``<clip>/sample_<k>``)
    gives the stored run's table value and its per-sample values."""
    import evaluate


    runs, out, clips = matting_runs
    ab = runs["AB"]
    submission = Path(ab.summary["provenance"]["predictions"])
    release = Path(ab.summary["provenance"]["dataset"]["path"])
    preds, refs = [], []
    for clip in clips:
        c = ClipId.parse(clip)
        alpha = (release / "alpha_matte" / f"actor_{c.actor_id:04d}" / c.emotion.lower() / f"action_{c.action_id:02d}"
                 / f"script_{c.script_id:03d}")
        for k in (0, 1):
            preds.append(str(submission / clip / f"sample_{k}"))
            refs.append(str(alpha))
    module = evaluate.load(str(Path(__file__).resolve().parents[1] / "metrics" / "mad"))
    result = module.compute(predictions=preds, references=refs)
    assert result["mad"] == pytest.approx(float(ab.table.iloc[0]["mad"]), rel=1e-12)
    assert result["n_ok"] == len(clips) and result["n_failed"] == 0
    stored = ab.sample_rows[ab.sample_rows["metric"] == "mad"].set_index(["clip_id", SAMPLE_COLUMN])["value"]
    expected = [stored[(clip, k)] for clip in clips for k in (0, 1)]
    np.testing.assert_allclose(result["per_clip"], expected, rtol=1e-12)
    # a clip given twice without being two samples of it is still refused
    with pytest.raises(ValueError, match="given twice"):
        module.compute(predictions=[preds[0], str(submission / clips[0] / "sample_0")], references=refs[:2])


def test_a_rerun_keeps_a_samples_run_and_a_changed_sample_rescores_only_its_clip(matting_runs, tmp_path):
    """The re-run rule holds for samples: the same command scores nothing and gives the same table; a clip whose
    sample changed is rescored whole (every sample), the other clips are kept."""
    runs, out, clips = matting_runs
    ab = runs["AB"]
    submission = Path(ab.summary["provenance"]["predictions"])
    release = Path(ab.summary["provenance"]["dataset"]["path"])
    copy = tmp_path / "AB"
    shutil.copytree(submission, copy)
    results = tmp_path / "results"
    first = evaluate_submission("matting", copy, "mAB", release, out=results, progress=False)
    again = evaluate_submission("matting", copy, "mAB", release, out=results, progress=False)
    assert again.computed == 0
    pd.testing.assert_frame_equal(first.table, again.table, check_exact=True)
    # sample 1 of the first clip becomes a copy of its sample 0: that clip's mean is its sample 0's value
    changed = copy / clips[0] / "sample_1"
    shutil.rmtree(changed)
    shutil.copytree(copy / clips[0] / "sample_0", changed)
    third = evaluate_submission("matting", copy, "mAB", release, out=results, progress=False)
    assert third.computed == 1
    run = read_run(results / "matting" / "mAB")
    samples = run.sample_rows[(run.sample_rows["clip_id"] == clips[0]) & (run.sample_rows["metric"] == "mad")]
    assert samples["value"].nunique() == 1 and len(samples) == 2
    mean = run.rows[(run.rows["clip_id"] == clips[0]) & (run.rows["metric"] == "mad")]["value"].item()
    assert mean == samples["value"].iloc[0]


def test_per_frame_sample_means_do_not_depend_on_row_order_or_on_the_dense_or_sparse_path():
    """RVM's per-frame values of several samples: the mean over a clip's samples at each frame, worked by hand
    (pandas), equal from the dense numba pass and from the sparse path, and bit-identical whatever the row order."""
    from hug_vis_dataset.statistics import sums as S

    rng = np.random.default_rng(3)
    n_clips, length, k = 50, 40, 3
    rows = pd.DataFrame([(c, f, s) for c in range(n_clips) for f in range(rng.integers(5, length)) for s in range(k)],
                        columns=["clip", "frame", "sample"])
    rows["metric"] = rng.integers(0, 2, len(rows)) * 0  # one metric
    rows["value"] = rng.random(len(rows)) * 10
    rank = rng.permutation(n_clips)
    expected = rows.groupby(["clip", "frame"])["value"].mean()

    def run(frame):
        z = np.zeros(len(frame), dtype=np.int64)
        m, metric, clip, f, v = S._mean_over_samples(z, frame["metric"].to_numpy(), frame["clip"].to_numpy(),
                                                     frame["frame"].to_numpy(), frame["value"].to_numpy(),
                                                     frame["sample"].to_numpy(), 1, n_clips, rank)
        return pd.Series(v, index=pd.MultiIndex.from_arrays([clip, f])).sort_index(), rank[clip]

    dense, ranks = run(rows)
    pd.testing.assert_series_equal(dense, expected, check_names=False, rtol=1e-13)
    # the kernel's order: clip by grid rank, then frame (what FrameSums reads without sorting)
    assert (np.diff(ranks) >= 0).all()
    shuffled, _ = run(rows.sample(frac=1.0, random_state=1))
    np.testing.assert_array_equal(shuffled.to_numpy(), dense.to_numpy())
    # the sparse path (accumulators bigger than a few times the rows): a length far beyond the frames
    far = rows.assign(frame=rows["frame"] * 20_000)
    sparse, _ = run(far)
    np.testing.assert_array_equal(sparse.to_numpy(), dense.to_numpy())

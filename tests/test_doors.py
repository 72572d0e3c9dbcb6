"""Every door gives the same number: the Space's upload scoring == ``hugvis evaluate`` (runner), the
analysis modules == the report, on the synthetic clips of tests/metric_tester.py (whose harness checks
library == evaluate module == runner == report per metric); plus the module's pairing refusals and
the direction of each metric against the simulated systems' degradation order.

Metrics that need pretrained weights (LPIPS, FID, UTMOS, Sync) cannot run here; CSIM runs with an
injected detector and embedder through the module and the runner.
"""

from __future__ import annotations

import math
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metric_tester as MT
from synth_faces import head_box

from hug_vis_dataset import catalog
from hug_vis_dataset.modules import ModuleInputError, compute
from hug_vis_dataset.datamodel.release import Release
from hug_vis_dataset.scoring.runner import evaluate_submission

ROOT = Path(__file__).resolve().parents[1]
# The metrics whose direction is checked against the simulated systems (at 64x36 the thin-structure
# region is empty: the other regions). Library == module == runner == report for every runnable
# metric of the catalog: tests/test_metric_tester.py (test_every_door_gives_the_same_number).
DIRECTION = {
    "matting": ("mad", "mse", "dtssd", "grad", "conn"),
    "vision_driven": ("psnr", "ssim"),
    "voice_cloning": ("speaker_similarity",),
    "emotion": ("emotion_accuracy",),
    "matting_boundary": ("mad_band_5", "mse_band_10", "grad_band_20", "dtssd_band_5", "mad_bulk", "dtssd_moving"),
}
SYSTEM = MT.SYSTEM
_rows = MT.stored_rows
_inputs = MT.door_inputs


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The harness's 4-clip synthetic release, its runner results and report (built once per session)."""
    return MT.door_world(tmp_path_factory)


def _zip(folder: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return target


@pytest.mark.parametrize("task", ["matting", "vision_driven", "emotion"])
def test_space_upload_scoring_gives_the_runners_rows(world, task, tmp_path):
    from hug_vis_dataset.space.app import Explorer

    release, results, _ = world
    system = SYSTEM[task]
    # The Space's own store: the CLI's results already hold this model name (names are unique per store).
    explorer = Explorer(release, tmp_path / "space_results", work_dir=tmp_path / "work")
    upload = _zip(release / "simulated_systems" / task / system, tmp_path / "upload.zip")
    message, table, shown = explorer.score(task, system, str(upload))
    assert "4 clip(s) ok of 4" in message, message
    assert len(shown) and "Clip" in shown.columns  # the page's per-clip table, in the board's units
    rows = explorer.store.rows()  # what the Space stored from the upload
    stored = _rows(results, task, system)
    key = ["model", "clip_id", "metric"]
    pd.testing.assert_frame_equal(rows.sort_values(key).reset_index(drop=True)[key + ["value", "status"]],
                                  stored.sort_values(key).reset_index(drop=True)[key + ["value", "status"]],
                                  check_exact=True)
    assert not list((tmp_path / "work" / "uploads").glob("*/*")), "the extracted upload was not deleted"


def test_module_invariances_chunk_size_and_order_with_ids(world):
    release, _, _ = world
    predictions, references, _ = _inputs(release, "matting", "matte_poor")
    base = compute("matting", predictions=predictions, references=references, chunk_frames=32)
    small = compute("matting", predictions=predictions, references=references, chunk_frames=3)
    backwards = compute("matting", predictions=predictions[::-1], references=references[::-1])
    for metric in DIRECTION["matting"]:
        assert small[metric] == base[metric] and small["per_clip"][metric] == base["per_clip"][metric]
        assert backwards[metric] == pytest.approx(base[metric], rel=1e-12)
        assert backwards["per_clip"][metric] == base["per_clip"][metric][::-1]
    # reversed predictions against references in grid order: refused, naming the pairs
    with pytest.raises(ModuleInputError, match="paired with another clip's reference") as err:
        compute("mad", predictions=predictions[::-1], references=references)
    assert predictions[-1].rsplit("/", 1)[1] in str(err.value)
    with pytest.raises(ModuleInputError, match="given twice"):
        compute("mad", predictions=predictions[:1] * 2, references=references[:1] * 2)


# DNSMOS scores every 0.5 s synthetic voice at its floor (about 1.0), so its order there is noise.
@pytest.mark.parametrize("task,metric", [(t, m) for t, ms in DIRECTION.items() for m in ms])
def test_direction_follows_the_simulated_degradation(world, task, metric):
    """Better systems (expected_rank 1) score better in the catalog's direction."""
    from hug_vis_dataset.synth.systems import SYSTEMS

    release, _, _ = world
    means = []
    for system in sorted(SYSTEMS["matting" if task == "matting_boundary" else task], key=lambda s: s.expected_rank):
        predictions, references, _ = _inputs(release, task, system.name)
        means.append(compute(metric, predictions=predictions, references=references)[metric])
    oriented = means if catalog.spec(metric).higher_is_better else [-m for m in means]
    assert oriented[0] >= oriented[1] >= oriented[2] and oriented[0] > oriented[2], (metric, means)


class _Detector:
    def detect(self, frame):
        from hug_vis_dataset.models.arcface import landmarks_from_box

        return [(b, landmarks_from_box(b), 1.0) for b in head_box(frame)]


class _Embedder:
    """A fixed random projection of the 8x8-pooled aligned face (a tiny stand-in for ArcFace)."""

    def __init__(self):
        self.w = np.random.default_rng(0).normal(size=(192, 16))

    def __call__(self, faces):
        f = np.asarray(faces, np.float64)
        return (f.reshape(len(f), 8, 14, 8, 14, 3).mean(axis=(2, 4)).reshape(len(f), -1) / 255 - 0.5) @ self.w


def test_csim_module_and_runner_give_one_value(tmp_path, monkeypatch):
    """The one CSIM definition through both doors, with injected models (the real ones need weights)."""
    from hug_vis_dataset import weights
    from hug_vis_dataset.synth import synthesize
    from hug_vis_dataset.tasks import ModelCache
    from hug_vis_dataset.tasks import models as model_cache

    synthesize(tmp_path / "rel", actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.5,
               size=(320, 180), systems=True)
    release = tmp_path / "rel"
    injected = {"face_detector": _Detector(), "face_embedder": _Embedder()}
    monkeypatch.setattr(model_cache, "_PROCESS_CACHE", ModelCache("cpu", overrides=injected))
    monkeypatch.setattr(weights, "missing_note", lambda names: None)  # the injected models need no files
    res = evaluate_submission("vision_driven", release / "simulated_systems" / "vision_driven" / "vis_fair",
                              "vis_fair", release, tmp_path / "results", progress=False)
    rows = pd.read_parquet(res.rows_path)
    csim = rows[rows["metric"] == "csim"].set_index("clip_id")["value"]
    records = list(Release(release))
    preds = [str(release / "simulated_systems" / "vision_driven" / "vis_fair" / f"{r.clip_id}.mp4") for r in records]
    out = compute("csim", predictions=preds, references=[str(r.video_path) for r in records], models=injected)
    assert out["n_failed"] == 0 and len(csim) == 2
    assert out["per_clip"] == [pytest.approx(csim[r.clip_id], rel=1e-12) for r in records]
    assert all(not math.isnan(v) for v in out["per_clip"])


def test_analysis_modules_take_stored_rows_as_they_are(world):
    """``evaluate.load(...).compute(**rows)`` on every task's rows.parquet gives the report's analyses."""
    import evaluate

    from hug_vis_dataset.metrics.crosstask import MissingMetricsError, emotion_difficulty, motion_relation
    from hug_vis_dataset.reporting.report import load_results

    _, results, report = world
    rows = pd.concat([pd.read_parquet(p) for p in sorted(results.glob("*/*/rows.parquet"))], ignore_index=True)
    columns = rows.to_dict("list")
    reported, _, _, _ = load_results([results])
    expected = emotion_difficulty(reported)  # what the report's cross-task section computes
    got = evaluate.load(str(ROOT / "metrics" / "emotion_difficulty")).compute(**columns)
    assert {"MER-RE", "VM-MAD", "VC-DNSMOS"} <= {k for k, v in got["D"].items() if any(
        x is not None and not math.isnan(x) for x in v.values())}  # stored names read as they are
    for label in expected.D.columns:
        for emotion, value in expected.D[label].items():
            other = got["D"][label][emotion]
            assert (math.isnan(value) and math.isnan(other)) or other == pytest.approx(value, abs=1e-12)
            if not math.isnan(value):  # and the report printed the same profile
                assert f"{value:.2f}" in report.markdown
    agreement = evaluate.load(str(ROOT / "metrics" / "difficulty_agreement")).compute(**columns)
    assert set(agreement["metrics"]) == {c for c in expected.D.columns if expected.D[c].notna().any()}
    motion = evaluate.load(str(ROOT / "metrics" / "motion_difficulty")).compute(**columns)
    relation = motion_relation(reported)
    assert motion["per_clip"]["d_motion"] == pytest.approx(relation.d_motion.tolist())
    assert f"rho = {relation.relation['overall']['spearman_rho']:.2f}" in report.markdown
    # without generation rows, source difficulty names what is missing and how to get it
    with pytest.raises(MissingMetricsError, match="hugvis weights download"):
        evaluate.load(str(ROOT / "metrics" / "source_difficulty")).compute(**columns)


def test_findings_modules_equal_the_library_on_stored_rows(world):
    """Variance decomposition and neighbour significance through the module = the library on the same rows."""
    import evaluate

    from hug_vis_dataset.metrics.significance import neighbour_tests
    from hug_vis_dataset.metrics.variance import variance_decomposition
    from hug_vis_dataset.reporting.findings import significance_frame, variance_frame

    release, results, report = world
    rows = pd.concat([pd.read_parquet(p) for p in sorted(results.glob("*/*/rows.parquet"))], ignore_index=True)
    mad = rows[(rows["task"] == "matting") & (rows["metric"] == "mad")]
    got = evaluate.load(str(ROOT / "metrics" / "variance_decomposition")).compute(**rows.to_dict("list"),
                                                                               metric_name="mad")
    assert got["shares"] == pytest.approx(variance_decomposition(mad).shares(), nan_ok=True)
    frame, decompositions, _ = variance_frame(rows, "matting")
    assert decompositions["mad"].shares() == pytest.approx(got["shares"], nan_ok=True)
    assert "### Condition-factor decomposition of variance" in report.markdown
    sig = evaluate.load(str(ROOT / "metrics" / "neighbour_significance")).compute(**rows.to_dict("list"),
                                                                               metric_name="mad")
    assert sig["tests"] == neighbour_tests(mad, False)  # one model here: no pair
    with pytest.raises(ValueError, match="no rows of lpips"):
        evaluate.load(str(ROOT / "metrics" / "variance_decomposition")).compute(**rows.to_dict("list"),
                                                                             metric_name="lpips")
    frame, why = significance_frame(rows, "matting")
    assert frame.empty and "fewer than two models" in why


def test_space_findings_tab_shows_the_reports_numbers(world, tmp_path):
    from hug_vis_dataset.reporting.findings import boundary_frame, variance_frame
    from hug_vis_dataset.space.app import FINDINGS, Explorer

    release, results, _ = world
    explorer = Explorer(release, results, work_dir=tmp_path / "work")
    rows = explorer.result_rows()
    table, png, message = explorer.findings(FINDINGS[0], "matting")
    frame, _, _ = variance_frame(rows, "matting")
    assert png and png.endswith(".png") and "balanced" in message
    shown = table.set_index("Condition factor")[catalog.spec("mad").label].dropna()  # terms not estimable here are left out
    expected = frame[frame.metric == "mad"].set_index("term")["share"].dropna().round(4)
    from hug_vis_dataset.presentation.labels import variance_term

    assert shown.to_dict() == pytest.approx({variance_term(t): v for t, v in expected.items()})  # terms by label
    table, png, message = explorer.findings(FINDINGS[1], "matting")
    assert table.empty and "fewer than two models" in message  # one matting system here, said so
    table, _, message = explorer.findings(FINDINGS[2], "matting")
    expected, _ = boundary_frame(rows)
    column = catalog.spec("mad_band_10").label
    assert table.set_index("Model")[column].to_dict() == pytest.approx(expected[column].round(3).to_dict())

"""Reference-derived rows: motion statistics (Fig. 11) and Table 9's Real-audio row."""

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.metrics import matting, voice
from hug_vis_dataset.datamodel.release import Release
from hug_vis_dataset.scoring.runner import evaluate_submission
from hug_vis_dataset.datamodel.results import REAL_AUDIO_MODEL, REFERENCE_MODEL
from hug_vis_dataset.tasks import REAL_AUDIO
from hug_vis_dataset.presentation.tables import render_table


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("rel")
    synthesize(root, actors=1, emotions=["Happy", "Neutral"], actions=1, scripts=2, seconds=0.6, size=(64, 36),
               systems=True)
    return root


def test_motion_rows_equal_motion_stats_of_the_reference_alpha(release, tmp_path):
    res = evaluate_submission("motion", "reference", REFERENCE_MODEL, release, tmp_path, progress=False)
    rows = res.store.read_rows() if hasattr(res, "store") else pd.read_parquet(
        tmp_path / "motion" / REFERENCE_MODEL / "rows.parquet")
    assert set(rows["status"]) == {"ok"} and len(rows) == 4 * 2
    for record in Release(release):
        u, v = matting.motion_stats(record.alpha_matte_path)
        got = rows[rows["clip_id"] == record.clip_id].set_index("metric")["value"]
        assert got["motion_u"] == u and got["motion_v"] == v


def test_real_audio_rows_pair_each_clip_with_another_recording_of_the_actor(release, tmp_path):
    res = evaluate_submission("voice_cloning", REAL_AUDIO, REAL_AUDIO_MODEL, release, tmp_path, progress=False)
    rows = pd.read_parquet(tmp_path / "voice_cloning" / REAL_AUDIO_MODEL / "rows.parquet")
    sims = rows[rows["metric"] == "speaker_similarity"].set_index("clip_id")["value"]
    records = list(Release(release))
    pairs, unpaired = voice.real_audio_pairs(records)
    assert not unpaired and len(pairs) == 4
    for pair in pairs:
        # same-actor, same-emotion, same-action, next script: the partner is a real recording
        assert pair.partner_id != pair.clip_id and pair.partner_id[:30] == pair.clip_id[:30]
        expected = voice.speaker_similarity(pair.partner_path, pair.clip_path)
        assert sims[pair.clip_id] == pytest.approx(expected, abs=1e-6)
    assert res.coverage.ok == 4


def test_report_ranks_models_but_not_the_real_audio_row_and_draws_fig11(release, tmp_path):
    from hug_vis_dataset.reporting.report import build_report, motion_analysis
    from hug_vis_dataset.datamodel.results import REAL_AUDIO_LABEL

    systems = release / "simulated_systems"
    results = tmp_path / "results"  # the report's --out lies outside the results it reads
    for name in ("clone_good", "clone_poor"):
        evaluate_submission("voice_cloning", systems / "voice_cloning" / name, name, release, results, progress=False)
    for name in ("matte_good", "matte_poor"):
        evaluate_submission("matting", systems / "matting" / name, name, release, results, progress=False)
    evaluate_submission("voice_cloning", REAL_AUDIO, REAL_AUDIO_MODEL, release, results, progress=False)
    evaluate_submission("motion", "reference", REFERENCE_MODEL, release, results, progress=False)
    # the simulated clones were built with graded timbre shift: similarity follows it
    sims = {name: pd.read_parquet(results / "voice_cloning" / name / "rows.parquet").query(
        "metric == 'speaker_similarity'")["value"].mean() for name in ("clone_good", "clone_poor")}
    assert sims["clone_good"] > sims["clone_poor"]
    report = build_report([results], tmp_path / "report", formats=("md",), n_boot=0)
    voice_md = (tmp_path / "report" / "voice_cloning.md").read_text()
    real_line = next(line for line in voice_md.splitlines() if REAL_AUDIO_LABEL in line)
    assert "**" not in real_line and "<u>" not in real_line
    assert voice_md.index(REAL_AUDIO_LABEL) < voice_md.index("clone_good")
    assert (tmp_path / "report" / "figures" / "fig11_motion_difficulty.png").is_file()

    # Fig. 11's numbers by hand from the stored rows
    rows = pd.concat([pd.read_parquet(p) for p in results.glob("*/*/rows.parquet")], ignore_index=True)
    motion, _md = motion_analysis(rows)
    d_motion, dtssd, emotions = motion.d_motion, motion.dtssd, motion.emotions
    ok = rows[rows.status == "ok"]
    mot = ok[ok.task == "motion"].pivot(index="clip_id", columns="metric", values="value")
    clips = sorted(mot.index, key=lambda c: (c.split("_")[2] != "happy", c))  # grid order: Happy before Neutral
    from scipy.stats import rankdata

    u, v = mot.loc[clips, "motion_u"].to_numpy(), mot.loc[clips, "motion_v"].to_numpy()
    np.testing.assert_allclose(d_motion, (rankdata(u) / 4 + rankdata(v) / 4) / 2)
    want = [ok[(ok.task == "matting") & (ok.metric == "dtssd") & (ok.clip_id == c)]["value"].mean() for c in clips]
    np.testing.assert_allclose(dtssd, want)
    assert emotions == ["Happy", "Happy", "Neutral", "Neutral"]
    assert "Spearman rho" in report.markdown


def test_unranked_rows_are_printed_but_never_marked():
    frame = pd.DataFrame({"model": ["ref", "a", "b", "c"], "psnr": [40.0, 30.0, 20.0, 10.0]})
    md = render_table(frame, metrics=["psnr"], unranked=["ref"])
    lines = {line.split("|")[1].strip(): line for line in md.splitlines() if line.startswith("| ") and "---" not in line}
    assert "**" not in lines["ref"] and "<u>" not in lines["ref"]
    assert "**30.00**" in lines["a"] and "<u>20.00</u>" in lines["b"]


def test_reference_rows_from_a_built_repo_equal_those_from_the_release(release, tmp_path):
    from hug_vis_dataset.hub import build_repo

    build_repo(release, tmp_path / "repo", configs=None)
    for task, predictions, model in (("motion", "reference", REFERENCE_MODEL),
                                     ("voice_cloning", REAL_AUDIO, REAL_AUDIO_MODEL)):
        for source, out in ((release, tmp_path / "a"), (tmp_path / "repo", tmp_path / "b")):
            evaluate_submission(task, predictions, model, source, out, progress=False)
        a = pd.read_parquet(tmp_path / "a" / task / model / "rows.parquet")
        b = pd.read_parquet(tmp_path / "b" / task / model / "rows.parquet")
        pd.testing.assert_frame_equal(a, b, check_exact=True)

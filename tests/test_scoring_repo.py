"""Scoring against a built dataset repo gives exactly the rows scoring against the release gives.

The repo is built from the release by ``hug_vis_dataset.hub.build_repo``; every reference read
from it (alpha decoded from FFV1 blobs, video/audio bytes, source portraits) is compared with the
release file it came from, and every simulated system is scored once against each source.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.datamodel.grid import ClipId
from hug_vis_dataset.datamodel.release import Release
from hug_vis_dataset import references as R
from hug_vis_dataset.scoring.runner import evaluate_submission
from hug_vis_dataset.scoring.store import ResultStore

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from hug_vis_dataset.hub import build_repo
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("repo_scoring")
    release = root / "release"
    synthesize(release, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.5, size=(64, 36))
    build_repo(release, root / "repo")
    return release, root / "repo"


def systems(release: Path, task: str) -> list[Path]:
    return sorted(p for p in (release / "simulated_systems" / task).iterdir() if p.is_dir())


def locator(repo: Path, config: str, column: str, clip: str) -> str:
    """Independent row lookup: the row index of ``clip`` in the config's only shard."""
    import pyarrow.parquet as pq

    shard = repo / "data" / config / "test-00000.parquet"
    ids = pq.read_table(shard, columns=["clip_id"]).column("clip_id").to_pylist()
    return R.RowLocator(str(shard), ids.index(clip), column, clip).to_ref()


# ----------------------------------------------------------------------------- detection
def test_open_reference_source_detects_release_repo_and_rejects_other_folders(built, tmp_path):
    release, repo = built
    assert isinstance(R.open_reference_source(release, "matting"), R.ReleaseSource)
    src = R.open_reference_source(repo, "matting")
    assert isinstance(src, R.RepoSource)
    assert [str(c) for c in src.clip_ids()] == [r.clip_id for r in Release(release)]

    # A folder with only the card (no manifest) is still a repo: the YAML `configs:` says so.
    card_only = tmp_path / "card_only"
    shutil.copytree(repo, card_only)
    (card_only / "manifest.json").unlink()
    assert R.is_dataset_repo(card_only)
    assert R.open_reference_source(card_only, "matting").clip_ids() == src.clip_ids()

    other = tmp_path / "other"
    other.mkdir()
    (other / "README.md").write_text("# just a readme\n")
    with pytest.raises(R.DatasetSourceError, match="neither a release tree .* nor a HUG-VIS dataset repo"):
        R.open_reference_source(other, "matting")
    with pytest.raises(R.DatasetSourceError, match="does not exist"):
        R.open_reference_source(tmp_path / "no" / "such" / "folder", "matting")
    with pytest.raises(R.DatasetSourceError, match="--revision applies to Hub ids only"):
        R.open_reference_source(repo, "matting", revision="v1.0")


def test_cli_reports_a_clear_error_for_a_folder_that_is_no_dataset(built, tmp_path):
    release, _ = built
    (tmp_path / "not_a_dataset").mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "hug_vis_dataset.cli", "evaluate", "emotion", "--predictions",
         str(systems(release, "emotion")[0]), "--model", "m", "--dataset", str(tmp_path / "not_a_dataset"), "--out",
         str(tmp_path / "res"), "--no-progress"],
        capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2, proc.stderr
    assert "neither a release tree" in proc.stderr and "Traceback" not in proc.stderr


# ----------------------------------------------------------------------------- media access
@pytest.mark.parametrize("chunk", [1, 4, 7, 1000])
def test_repo_alpha_chunks_equal_release_pngs(built, chunk):
    from hug_vis_dataset.readers.media import iter_alpha_frames

    release, repo = built
    for record in Release(release):
        ref = locator(repo, "matting", "alpha_matte", record.clip_id)
        got = list(R.iter_reference_alpha(ref, chunk))
        want = np.concatenate(list(iter_alpha_frames(record.alpha_matte_path, 1000)))
        assert all(c.dtype == np.uint8 and c.ndim == 3 and len(c) <= chunk for c in got)
        assert np.array_equal(np.concatenate(got), want)
        assert R.reference_alpha_info(ref) == (len(want), want.shape[2], want.shape[1])
        assert R.reference_alpha_info(record.alpha_matte_path) == (len(want), want.shape[2], want.shape[1])


def test_repo_video_audio_and_portrait_equal_release_files(built):
    import soundfile as sf

    from hug_vis_dataset.readers.media import iter_video_frames

    release, repo = built
    for record in Release(release):
        ref = locator(repo, "vision_driven", "reference_video", record.clip_id)
        with R.reference_file(ref, ".mp4") as path:
            assert Path(path).read_bytes() == record.video_path.read_bytes()  # bytes as released
        assert not Path(path).exists()  # the temporary file is gone afterwards
        first = next(iter_video_frames(record.video_path, 1))[0]
        portrait = R.read_reference_portrait(locator(repo, "vision_driven", "source_frame", record.clip_id))
        assert portrait.dtype == np.uint8 and np.array_equal(portrait, first)
        assert np.array_equal(R.read_reference_portrait(str(record.video_path)), first)

        audio, rate = R.read_reference_audio(locator(repo, "voice_cloning", "reference_audio", record.clip_id))
        want, want_rate = sf.read(record.audio_path, dtype="float32", always_2d=True)
        assert rate == want_rate == record.sample_rate
        assert audio.dtype == np.float32 and np.array_equal(audio, want.mean(axis=1))


def test_row_locator_refuses_a_row_holding_another_clip(built):
    release, repo = built
    clips = [r.clip_id for r in Release(release)]
    good = R.RowLocator.parse(locator(repo, "voice_cloning", "reference_audio", clips[0]))
    wrong = R.RowLocator(good.shard, good.row, good.column, clips[1])
    with pytest.raises(R.DatasetSourceError, match=f"holds {clips[0]}, expected {clips[1]}"):
        R.read_cell_bytes(wrong)
    with pytest.raises(R.DatasetSourceError, match="beyond the 2 rows"):
        R.read_cell_bytes(R.RowLocator(good.shard, 2, good.column, clips[0]))
    with pytest.raises(R.DatasetSourceError, match="no column 'alpha_matte'"):
        R.read_cell_bytes(R.RowLocator(good.shard, 0, "alpha_matte", clips[0]))


def test_repo_records_carry_the_release_metadata(built):
    release, repo = built
    src = R.open_reference_source(repo, "voice_cloning")
    for record in Release(release):
        got = src.record(record.cid)
        assert (got.clip_id, got.width, got.height, got.fps, got.sample_rate) == (
            record.clip_id, record.width, record.height, record.fps, record.sample_rate)
        # the recording as a locator; the target text (CER's reference) as itself, the release's transcript
        reference = src.reference(record.cid)
        assert set(reference) == {"audio", "text"} and reference["text"] == record.transcript
        assert R.is_row_locator(reference["audio"]) and not R.is_row_locator(reference["text"])
        assert R.ReleaseSource(release, "voice_cloning").reference(record.cid)["text"] == record.transcript


# ----------------------------------------------------------------------------- scoring
def _score_both(release, repo, task, system, tmp_path):
    a = evaluate_submission(task, system, system.name, release, tmp_path / "release_res", progress=False)
    b = evaluate_submission(task, system, system.name, repo, tmp_path / "repo_res", progress=False)
    return a, b


@pytest.mark.parametrize("task", ["matting", "vision_driven", "emotion",
                                  pytest.param("voice_cloning", marks=pytest.mark.slow)])
def test_rows_identical_against_release_and_repo(built, tmp_path, task):
    release, repo = built
    n_clips = len(Release(release))
    for system in systems(release, task):
        a, b = _score_both(release, repo, task, system, tmp_path)
        rows_a, rows_b = pd.read_parquet(a.rows_path), pd.read_parquet(b.rows_path)
        # Every row is ok but a row counted alone (a human-motion row on a synthetic clip with no person in it),
        # which fails by itself and says why.
        from hug_vis_dataset import catalog

        alone = rows_a["metric"].isin([m.name for m in catalog.METRICS if m.counted_alone])
        assert len(rows_a) >= n_clips and (rows_a.loc[~alone, "status"] == "ok").all(), rows_a
        assert (rows_a.loc[rows_a["status"] != "ok", "error"].str.len() > 0).all()
        pd.testing.assert_frame_equal(rows_a, rows_b, check_exact=True)
        assert a.coverage.to_dict() == b.coverage.to_dict()
        assert a.coverage.problems() == 0
        if task == "matting":
            frames_a = ResultStore(tmp_path / "release_res", task, system.name).read_frames()
            frames_b = ResultStore(tmp_path / "repo_res", task, system.name).read_frames()
            assert len(frames_a) > 0
            pd.testing.assert_frame_equal(frames_a, frames_b, check_exact=True)
        fp_a, fp_b = a.summary["provenance"]["dataset"], b.summary["provenance"]["dataset"]
        assert fp_a["kind"] == "release" and fp_b["kind"] == "repo"
        manifest = (repo / "manifest.json").read_bytes()
        import hashlib

        assert fp_b["manifest_sha256"] == hashlib.sha256(manifest).hexdigest()
        listed = json.loads(manifest)["configs"][task]["shards"]
        assert fp_b["shards_sha256"] == {e["file"]: e["sha256"] for e in listed}
        # A repo built from a synthetic tree says so, and runs against it stay synthetic on the board.
        from hug_vis_dataset.leaderboard.board import SYNTHETIC
        from hug_vis_dataset.scoring.runs import read_run

        assert fp_a["synthetic"] is True and fp_b["synthetic"] is True
        assert read_run(a.summary_path.parent).origin == read_run(b.summary_path.parent).origin == SYNTHETIC


def test_a_repo_built_from_a_recorded_release_is_not_synthetic(built, tmp_path):
    from hug_vis_dataset.hub import build_repo
    from hug_vis_dataset.datamodel.layout import SYNTHETIC_MARKER

    release, repo = built
    recorded = tmp_path / "recorded"
    shutil.copytree(release, recorded)
    (recorded / SYNTHETIC_MARKER).unlink()
    build_repo(recorded, tmp_path / "repo", configs=["clips", "matting"], measure_storage=False)
    assert json.loads((tmp_path / "repo" / "manifest.json").read_text())["synthetic"] is False
    assert "Synthetic data" not in (tmp_path / "repo" / "README.md").read_text()
    assert "**Synthetic data.**" in (repo / "README.md").read_text()
    assert R.open_reference_source(tmp_path / "repo", "matting").fingerprint()["synthetic"] is False


def test_repo_missing_a_clip_gives_normal_extra_and_missing_handling(built, tmp_path):
    from hug_vis_dataset.hub import build_repo

    release, _ = built
    clips = [r.clip_id for r in Release(release)]
    # A release copy whose first clip is broken; the repo is built from the valid rest.
    partial = tmp_path / "partial_release"
    shutil.copytree(release, partial, ignore=shutil.ignore_patterns("simulated_systems"))
    Release(partial).record(clips[0]).audio_path.unlink()
    report = build_repo(partial, tmp_path / "repo", allow_invalid=True)  # grid: the copy's metadata/grid.json
    assert clips[0] in report.excluded and report.rows["matting"] == len(clips) - 1

    system = systems(release, "matting")[0]
    res = evaluate_submission("matting", system, system.name, tmp_path / "repo", tmp_path / "res", progress=False)
    assert res.coverage.grid_size == len(clips) - 1
    assert res.coverage.extra == [clips[0]] and res.coverage.missing == []
    assert res.coverage.problems() == 1
    rows = pd.read_parquet(res.rows_path)
    assert set(rows["clip_id"]) == set(clips[1:])

    # The other way round: a prediction missing for a repo clip is 'missing', with failed rows.
    sub = tmp_path / "sub"
    shutil.copytree(system, sub)
    shutil.rmtree(sub / clips[1])
    res = evaluate_submission("matting", sub, "m2", tmp_path / "repo", tmp_path / "res", progress=False)
    assert res.coverage.missing == [clips[1]] and res.coverage.extra == [clips[0]]
    rows = pd.read_parquet(res.rows_path)
    assert (rows.loc[rows["clip_id"] == clips[1], "status"] == "failed").all()


def test_a_shard_changed_after_the_build_is_refused(built, tmp_path):
    _, repo = built
    copy = tmp_path / "repo"
    shutil.copytree(repo, copy)
    with open(copy / "data" / "matting" / "test-00000.parquet", "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(R.DatasetSourceError, match="modified after it was built"):
        R.open_reference_source(copy, "matting")


# ----------------------------------------------------------------------------- Hub ids
def test_hub_id_is_fetched_at_the_given_revision_and_recorded(built, tmp_path, monkeypatch):
    import huggingface_hub

    from hug_vis_dataset.readers import hub_access

    monkeypatch.setattr(hub_access, "unreachable_reason", lambda *a, **k: None)  # the fake Hub answers

    release, repo = built
    calls = []
    commit = "0123456789abcdef0123456789abcdef01234567"

    def fake_snapshot_download(repo_id, repo_type=None, revision=None, allow_patterns=None, **_):
        calls.append((repo_id, repo_type, revision, tuple(allow_patterns or ())))
        folder = tmp_path / "snapshots" / commit  # huggingface_hub names snapshots by commit
        if not folder.exists():
            shutil.copytree(repo, folder)
        return str(folder)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    src = R.open_reference_source("hugvis/hug-vis", "emotion", revision="v1.0")
    assert calls[0][:3] == ("hugvis/hug-vis", "dataset", "v1.0")
    assert "data/emotion/*" in calls[0][3] and "manifest.json" in calls[0][3]
    fp = src.fingerprint()
    assert (fp["repo_id"], fp["revision"], fp["kind"]) == ("hugvis/hug-vis", commit, "repo")

    system = systems(release, "emotion")[0]
    res = evaluate_submission("emotion", system, system.name, "hugvis/hug-vis", tmp_path / "res",
                              progress=False, revision="v1.0")
    assert res.summary["provenance"]["dataset"]["revision"] == commit
    ref = evaluate_submission("emotion", system, system.name, release, tmp_path / "res_release", progress=False)
    pd.testing.assert_frame_equal(pd.read_parquet(res.rows_path), pd.read_parquet(ref.rows_path))


def test_hub_id_offline_gives_a_clear_error(monkeypatch):
    import huggingface_hub
    from huggingface_hub.errors import LocalEntryNotFoundError

    from hug_vis_dataset.readers import hub_access

    def offline(*args, **kwargs):
        raise LocalEntryNotFoundError("network is unreachable and nothing is cached")

    # The probe passed, then the download found no connection: still the one-line error.
    monkeypatch.setattr(hub_access, "unreachable_reason", lambda *a, **k: None)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", offline)
    with pytest.raises(hub_access.HubUnreachableError) as caught:
        R.open_reference_source("hugvis/hug-vis", "matting", revision="v2")
    assert str(caught.value) == ("hugvis/hug-vis (revision v2) is not reachable (LocalEntryNotFoundError: network is "
                                 f"unreachable and nothing is cached); {hub_access.DATASET_ALTERNATIVE}")
    assert R.looks_like_hub_id("hugvis/hug-vis") and not R.looks_like_hub_id("hug-vis")


def test_clip_ids_in_grid_order(built):
    _, repo = built
    ids = R.open_reference_source(repo, "emotion").clip_ids()
    assert ids == sorted(ids) and all(isinstance(c, ClipId) for c in ids)

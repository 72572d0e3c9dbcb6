"""The Space's pre-check and upload scoring, and ``hugvis predict --collect``, run the scorer's own checks
(``hugvis evaluate --check-only``: :func:`hug_vis_dataset.scoring.check.check_submission`) and name each
failing clip on one line, in the coverage report's words."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hug_vis_dataset import catalog
from hug_vis_dataset.readers import media
from hug_vis_dataset.presentation.escaping import markdown_text


@pytest.fixture(scope="module")
def explorer(tmp_path_factory):
    from hug_vis_dataset.space.app import Explorer
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("same_checks")
    synthesize(root / "rel", actors=1, emotions=["Angry"], actions=1, scripts=3, seconds=0.3, size=(32, 18), seed=3)
    return Explorer(root / "rel", None, work_dir=root / "work")


def broken_vision_zip(explorer, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A vision-driven system's videos, one a text file named like a clip's .mp4, one at the wrong size."""
    src = sorted(p for p in (explorer.release_dir / "simulated_systems" / "vision_driven").iterdir() if p.is_dir())[0]
    sub = Path(shutil.copytree(src, tmp_path / "sub"))
    files = sorted(sub.glob("*.mp4"))
    files[0].write_text("this is not a video\n")
    media.write_video(files[1], [np.zeros((9, 10, 16, 3), np.uint8)], fps=30)  # 16x10, the reference is 32x18
    upload = tmp_path / "sub.zip"
    with zipfile.ZipFile(upload, "w") as archive:
        for f in files:
            archive.write(f, f"my_system/{f.name}")
    return upload, files[0], files[1]


def test_precheck_names_garbage_and_wrong_size_one_line_each(explorer, tmp_path):
    from hug_vis_dataset.scoring.check import check_submission

    upload, garbage, wrong = broken_vision_zip(explorer, tmp_path)
    message = explorer.check_upload("vision_driven", str(upload))
    cov = check_submission("vision_driven", garbage.parent, explorer.release_dir)
    assert cov.ok == 1 and set(cov.failed) == {garbage.stem, wrong.stem}
    lines = [line for line in message.splitlines() if line.startswith("- ")]
    # The same lines, the extraction folder cut (the reader sees the zip's names, not the server's folders).
    assert lines == [f"- {markdown_text(line.replace(f'{garbage.parent}/', ''))}"
                     for line in cov.failure_lines()]
    assert "uploads" not in message
    assert "**2 clip(s) would fail the scorer's checks:**" in message
    text = {line.split(": ", 1)[0]: line for line in cov.failure_lines()}
    assert text[garbage.stem].startswith(f"{garbage.stem}: SubmissionError: unreadable prediction: cannot read video")
    assert text[wrong.stem] == (f"{wrong.stem}: SubmissionError: wrong resolution: prediction is 16x10, "
                                f"reference video is 32x18")
    assert not any((explorer.work_dir / "uploads").iterdir())  # the extracted files are gone


def test_a_clean_upload_passes_the_precheck(explorer, tmp_path):
    src = sorted(p for p in (explorer.release_dir / "simulated_systems" / "vision_driven").iterdir() if p.is_dir())[0]
    upload = tmp_path / "good.zip"
    with zipfile.ZipFile(upload, "w") as archive:
        for f in sorted(src.glob("*.mp4")):
            archive.write(f, f.name)
    message = explorer.check_upload("vision_driven", str(upload))
    assert message.endswith("All 3 predicted clip(s) pass the scorer's checks.") and "would fail" not in message


def test_upload_scoring_lists_every_failing_clip(explorer, tmp_path):
    upload, garbage, wrong = broken_vision_zip(explorer, tmp_path)
    message, table, rows = explorer.score("vision_driven", "broken_upload", str(upload))
    # a clip failing the scorer's checks is a failed clip, as `hugvis evaluate` counts it: the run is scored and
    # stored with its failures, and the message names every failing clip and why
    assert message.startswith("Scored **Vision-driven video generation** for `broken_upload`: 1 clip(s) ok of 3; "
                              "missing 0, failed 2"), message
    scan = explorer.store.scan()
    stored = next(run for run in scan.runs if run.model == "broken_upload")
    # (a row counted alone, a human-motion row on a clip with no person in it, fails by itself: the clip is ok)
    alone = stored.rows["metric"].isin([m.name for m in catalog.METRICS if m.counted_alone])
    assert set(stored.rows.loc[(stored.rows["status"] != "ok") & ~alone, "clip_id"]) == {garbage.stem, wrong.stem}
    # the page's per-clip rows say why each failed (and why a counted-alone row of the ok clip failed by itself)
    why = [w for w in rows["Why failed"] if w]
    assert sum(w.startswith("SubmissionError") for w in why) == 2, why
    lines = [line for line in message.splitlines() if line.startswith("- ")]
    assert len(lines) == 2
    assert markdown_text(f"{garbage.stem}: SubmissionError: unreadable prediction") in lines[0]
    assert lines[1] == "- " + markdown_text(f"{wrong.stem}: SubmissionError: wrong resolution: prediction is "
                                            f"16x10, reference video is 32x18")


def test_collect_runs_the_scorer_checks(explorer, tmp_path):
    """A stale output of another container left in the submission folder: the collect's own checks pass
    the new file, the scorer's refuse the clip (two predictions), and the summary says so in its words."""
    from hug_vis_dataset.predict import collect_outputs

    release = explorer.release_dir
    src = sorted(p for p in (release / "simulated_systems" / "vision_driven").iterdir() if p.is_dir())[0]
    outputs = Path(shutil.copytree(src, tmp_path / "outputs"))
    clip = sorted(outputs.glob("*.mp4"))[0]
    from hug_vis_dataset.outputs import claim

    sub = tmp_path / "sub"
    stale = tmp_path / "stale.mkv"
    shutil.copyfile(clip, stale)
    # from an earlier collect into this folder (so a file the toolkit put there, through its guard)
    claim("hugvis predict", sub, "submission", attrs={"task": "vision_driven", "model": "collected"}).place(
        stale, f"{clip.stem}.mkv")
    got = collect_outputs("vision_driven", outputs, release, sub, progress=False)
    assert len(got.ok) == 2 and got.failed == [clip.stem]
    assert dict(got.failures)[clip.stem] == f"duplicate predictions: {clip.stem}.mkv, {clip.stem}.mp4"
    clean = collect_outputs("vision_driven", outputs, release, tmp_path / "clean", progress=False)
    assert len(clean.ok) == 3 and not clean.failed

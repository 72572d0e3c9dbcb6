"""Table 4's People rows and the people block of ``hugvis report --people`` on a synthetic release (issue 54).

The synthetic release ships the simulated emotion study (``simulated_systems/emotion_answers.csv``); its simulated
emotion systems are scored with ``hugvis evaluate``. The report must print one People row per input setting whose
value is the mean over clips of the counted answers' per-clip accuracy (re-derived here from the CSV), with the
engine's interval (``intervals.csv``), never ranked; the block's verdicts are the engine's
(:func:`hug_vis_dataset.studies.people.people_vs_models`); ``--mos-all-raters`` counts the careless rater.
"""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

from hug_vis_dataset.datamodel.grid import ClipId


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("people_report")
    release = root / "release"
    synthesize(release, actors=2, actions=1, scripts=1, seconds=0.4, size=(32, 18), progress=False)
    results = root / "results"
    for system in sorted((release / "simulated_systems" / "emotion").iterdir()):
        evaluate_submission("emotion", system, system.name, release, results, progress=False)
    return root, release, results


def _report(root, results, answers, *extra):
    out = root / f"report{len(extra)}"
    done = subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", "report", str(results), "--out", str(out),
                           "--format", "md", "--no-figures", "--n-boot", "200", "--quiet", "--people", str(answers),
                           *extra], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out


def _expected(answers: pd.DataFrame, careless: bool = False) -> dict[str, float]:
    """The People value per setting, by hand: drop gold and (unless ``careless``) the careless rater, then the
    mean over clips of the share of answers naming the clip's emotion."""
    mine = answers[answers["setting"] != "gold_clear"]
    if not careless:
        mine = mine[mine["rater"] != "sim_person_01"]  # the first, careless one
    truth = mine["clip_id"].map(lambda c: ClipId.parse(c).emotion.value)
    per_clip = (mine["answer"] == truth).groupby([mine["setting"], mine["clip_id"]]).mean()
    return {s: 100 * v for s, v in per_clip.groupby(level=0).mean().items()}


def _people_cells(markdown: str) -> dict[str, str]:
    table = markdown.split("## Multimodal emotion recognition")[1].split("\n## ")[0]
    out, setting = {}, None
    for line in table.splitlines():
        if line.startswith("| *"):
            setting = line.split("*")[1]
        elif line.startswith("| People |"):
            out[setting] = line.split("|")[-2].strip()
    return out


def test_table4_prints_a_people_row_per_setting_with_the_engines_interval(world):
    from hug_vis_dataset.studies.judgments import counted_emotion_answers
    from hug_vis_dataset.studies.people import people_clip_rows, people_vs_models
    from hug_vis_dataset.scoring.runs import scan_runs
    from hug_vis_dataset.statistics.intervals import table_intervals

    root, release, results = world
    answers_path = release / "simulated_systems" / "emotion_answers.csv"
    answers = pd.read_csv(answers_path)
    out = _report(root, results, answers_path)
    markdown = (out / "report.md").read_text(encoding="utf-8")
    cells = _people_cells(markdown)
    expected = _expected(answers)
    assert set(cells) == set(expected) == {"Video", "Audio", "Text", "Video + Audio + Text"}
    intervals = pd.read_csv(out / "intervals.csv").set_index(["model", "metric"])
    stored = pd.concat([run.rows for run in scan_runs(results)[0]], ignore_index=True)
    counted = counted_emotion_answers(answers_path)[0]
    engine = table_intervals(pd.concat([stored, people_clip_rows(counted)], ignore_index=True), ["emotion_accuracy"],
                             200)
    for setting, value in expected.items():
        assert cells[setting].startswith(f"{value:.2f} ["), (setting, cells[setting])
        assert "**" not in cells[setting] and "<u>" not in cells[setting]  # never ranked
        row = intervals.loc[(f"people | {setting}", "emotion_accuracy")]
        ci = engine[(f"people | {setting}", "emotion_accuracy")]
        assert (row["estimate"], row["low"], row["high"]) == pytest.approx((ci.estimate, ci.low, ci.high))
        assert row["estimate"] == pytest.approx(value)
    assert "People: the forced-choice emotion study's raters" in markdown
    # the block: per setting the engine's verdict against the best model, and the per-emotion tables
    block = markdown.split("## People as the ceiling of emotion recognition (Table 4)")[1].split("\n## ")[0]
    for result in people_vs_models(stored, counted, n_boot=200):
        assert f"| {result.setting} | " in block and result.model_name in block
        assert f"{result.verdict.word} (" in block
        assert f"### {result.setting}: people and {result.model_name} per instructed emotion" in block
    assert "sim\\_person\\_01" in block or "sim_person_01" in block  # the flagged rater is named
    summary = pd.read_csv(out / "people.csv")
    assert list(summary["Input"]) == ["Video", "Audio", "Text", "Video + Audio + Text"]
    confusion = pd.read_csv(out / "people_confusion.csv")
    shares = confusion.dropna().groupby(["setting", "emotion"])["share"].sum()  # NaN: no clip of that emotion
    assert len(shares) and ((shares - 1).abs() < 1e-9).all()  # each instructed emotion's answers, as shares


def test_counting_every_rater_changes_the_people_rows(world):
    root, release, results = world
    answers_path = release / "simulated_systems" / "emotion_answers.csv"
    answers = pd.read_csv(answers_path)
    out = _report(root, results, answers_path, "--mos-all-raters")
    cells = _people_cells((out / "report.md").read_text(encoding="utf-8"))
    for setting, value in _expected(answers, careless=True).items():
        assert cells[setting].startswith(f"{value:.2f} ["), (setting, cells[setting])
    assert _expected(answers, careless=True) != _expected(answers)


def test_without_people_table4_is_as_before_and_says_how_to_add_them(world):
    from hug_vis_dataset.reporting.report import build_report

    root, release, results = world
    report = build_report([results], None, formats=("md",), n_boot=0, figures=False)
    assert "| People |" not in report.markdown and "People as the ceiling" not in report.markdown


def test_a_bad_answers_file_is_one_line(world, tmp_path):
    root, _, results = world
    bad = tmp_path / "answers.csv"
    bad.write_text("rater,clip_id,setting\nr1,x,Text\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", "report", str(results), "--out",
                           str(tmp_path / "r"), "--people", str(bad), "--quiet", "--no-figures"],
                          capture_output=True, text=True)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "answers.csv" in lines[0] and "answer" in lines[0], done.stderr


# ----------------------------------------------------------------------------- the Space's board
def _table4(explorer) -> str:
    return next(t for t in explorer.table_labels() if t.startswith("Table 4:"))


def test_the_board_prints_people_per_setting_never_ranked_with_the_verdicts(world, tmp_path):
    from hug_vis_dataset.presentation.escaping import markdown_text
    from hug_vis_dataset.scoring.runs import scan_runs
    from hug_vis_dataset.space.explorer import Explorer
    from hug_vis_dataset.studies.judgments import counted_emotion_answers
    from hug_vis_dataset.studies.people import people_vs_models, verdict_words

    root, release, results = world
    answers_path = release / "simulated_systems" / "emotion_answers.csv"
    explorer = Explorer(release, results, work_dir=tmp_path / "work")
    for all_raters, careless in ((False, False), (True, True)):
        frame, notes, _ = explorer.leaderboard(_table4(explorer), ["paper", "synthetic demo"], all_raters=all_raters)
        people = frame[frame["Model"] == "People"].set_index("Input")
        expected = _expected(pd.read_csv(answers_path), careless=careless)
        assert set(people.index) == set(expected)
        for setting, value in expected.items():
            cell = people.loc[setting, "Acc. (%) ↑"]
            assert cell.startswith(f"{value:.2f}") and "answers" in cell and "(best)" not in cell and "(second)" not in cell
            assert people.loc[setting, "Scored by"] == "emotion study" and people.loc[setting, "Origin"] == "synthetic demo"
            assert people.loc[setting, "Provenance"].endswith("simulated rater(s)")
    frame, notes, _ = explorer.leaderboard(_table4(explorer), ["paper", "synthetic demo"])
    stored = pd.concat([run.rows for run in scan_runs(results)[0]], ignore_index=True)
    for result in people_vs_models(stored, counted_emotion_answers(answers_path)[0]):
        assert markdown_text(verdict_words(result)) in notes
    assert "People: the forced-choice emotion study's raters" in notes and "MOS cells" not in notes
    assert "Simulated raters (emotion study): Rater quality control" in notes


def test_the_studys_answers_replace_the_simulated_raters_once_they_cover_every_setting(world, tmp_path, monkeypatch):
    import json

    from hug_vis_dataset.space.explorer import Explorer
    from hug_vis_dataset.studies.emotion_answers import EmotionAnswerStore

    root, release, results = world
    study = tmp_path / "emotion_study.json"
    settings = ["Video", "Audio", "Text", "Video + Audio + Text"]
    study.write_text(json.dumps({"name": "people-live", "protocol": "emotion", "tasks": {"emotion": {"settings": settings}},
                                 "clips": "all", "ratings_per_item": 1, "items_per_session": 4}))
    monkeypatch.setenv("HUGVIS_STUDY", str(study))
    explorer = Explorer(release, results, work_dir=tmp_path / "work")
    store = EmotionAnswerStore(explorer.mos.ratings.path, allowed=explorer.mos.emotion_offer_problem)
    clips = [str(c) for c in explorer.release.clip_ids()]
    rows = []
    for i, clip in enumerate(clips):
        for j, setting in enumerate(settings[:3]):  # Video + Audio + Text not answered yet
            answer = ClipId.parse(clip).emotion.value if (i + j) % 3 else "Cannot tell"
            store.add(f"p{j}", clip, setting, answer, extra={"study": "people-live", "item": f"i{i:04d}{j:06d}"})
            rows.append((f"p{j}", clip, setting, answer))
    frame, notes, _ = explorer.leaderboard(_table4(explorer), ["paper", "synthetic demo"])
    people = frame[frame["Model"] == "People"].set_index("Input")
    assert people.loc["Video", "Provenance"].endswith("simulated rater(s)")  # 3 of 4 settings: not yet
    assert "cover 3 of the 4 input settings" in notes
    for i, clip in enumerate(clips):
        answer = ClipId.parse(clip).emotion.value
        store.add("p3", clip, settings[3], answer, extra={"study": "people-live", "item": f"i{i:04d}999999"})
        rows.append(("p3", clip, settings[3], answer))
    frame, notes, _ = explorer.leaderboard(_table4(explorer), ["paper", "synthetic demo"])
    people = frame[frame["Model"] == "People"].set_index("Input")
    expected = _expected(pd.DataFrame(rows, columns=["rater", "clip_id", "setting", "answer"]), careless=True)
    for setting, value in expected.items():
        assert people.loc[setting, "Acc. (%) ↑"].startswith(f"{value:.2f}")
        assert people.loc[setting, "Provenance"] == f"{len(clips)} answers by 1 rater(s)"
    assert expected["Video + Audio + Text"] == 100.0 and expected["Video"] < 100.0


def test_mos_status_reads_the_emotion_study(world):
    from hug_vis_dataset.studies.people import accuracy_table
    from hug_vis_dataset.studies.judgments import counted_emotion_answers
    from hug_vis_dataset.studies.status import read_status, study_markdown, study_status

    _, release, _ = world
    study = release / "simulated_systems" / "study"
    status = read_status(study / "emotion_study.json", study / "ratings.jsonl")
    assert status.spec.protocol == "emotion" and status.flagged == {"sim_person_01"} and status.problems == []
    cov = status.coverage
    assert cov["completion"] == 1.0 and cov["by_ratings"] == {3: cov["items"]} and cov["min_raters"] == 14
    answers = release / "simulated_systems" / "emotion_answers.csv"
    for (title, table), all_raters in zip(status.tables, (True, False)):
        expected = accuracy_table(counted_emotion_answers(answers, all_raters)[0], n_boot=200)
        assert title == ("all raters" if all_raters else "without flagged raters")
        pd.testing.assert_frame_equal(table.reset_index(drop=True), expected.reset_index(drop=True))
    text = study_status(study / "emotion_study.json", study / "ratings.jsonl")
    assert "study synthetic-emotion (emotion)" in text and "People's accuracy per input setting (%) (all raters):" in text
    md = "\n".join(study_markdown([study / "emotion_study.json"], study / "ratings.jsonl"))
    assert "### synthetic-emotion (emotion)" in md and "Flagged raters: 1 of 15; sim_person_01 (" in md

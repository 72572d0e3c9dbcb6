"""Simulated subjective study of the synthetic grid and the report's Tables 6/8/10 (MOS) section."""

from __future__ import annotations

import csv
import json
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from hug_vis_dataset.datamodel.grid import ClipId, iter_grid
from hug_vis_dataset import catalog
from hug_vis_dataset.studies.mos import RATING_COLUMNS, TASK_CRITERIA, agreement, read_ratings, validate_ratings
from hug_vis_dataset.synth.ratings import choose_clips, simulate_ratings, write_simulated_ratings
from hug_vis_dataset.synth.systems import SYSTEMS

MOS_TASKS = ("audio_driven", "vision_driven", "voice_cloning")
TABLE = {"audio_driven": "Table 6", "vision_driven": "Table 8", "voice_cloning": "Table 10"}


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """A 2-actor grid with simulated systems, vision-driven scored (the others need no rows here)."""
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("mosrep")
    summary = synthesize(root / "grid", actors=2, emotions=["Happy", "Sad", "Angry"], actions=1, scripts=1,
                         seconds=0.2, size=(48, 28), seed=5)
    for system in sorted((root / "grid" / "simulated_systems" / "vision_driven").iterdir()):
        evaluate_submission("vision_driven", system, system.name, root / "grid", root / "res", progress=False)
    return root, summary


def _read_csv(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def hand_mos(rows: list[dict]) -> dict[tuple[str, str], float]:
    """Independent MOS: per (model, criterion, clip) mean over raters, then mean over clips."""
    per_clip: dict = defaultdict(list)
    for r in rows:
        per_clip[(r["model"], r["criterion"], r["clip_id"])].append(float(r["score"]))
    by_key: dict = defaultdict(list)
    for (model, criterion, _clip), scores in per_clip.items():
        by_key[(model, criterion)].append(sum(scores) / len(scores))
    return {k: sum(v) / len(v) for k, v in by_key.items()}


def hand_qc_kept(rows: list[dict], max_fast_share: float = 0.25) -> list[dict]:
    """The rows of raters the study's QC keeps, by hand: a rater goes when more than a quarter of their
    answers (one per item) came sooner than the media lasts (the CSV has no gold answers)."""
    answers: dict = defaultdict(dict)
    for r in rows:
        answers[r["rater"]][r["item"]] = float(r["elapsed"]) < float(r["duration"])
    gone = {rater for rater, fast in answers.items() if sum(fast.values()) / len(fast) > max_fast_share}
    return [r for r in rows if r["rater"] not in gone]


def parse_md_table(text: str) -> dict[str, list[str]]:
    """Rows of a Markdown table: model -> cell strings."""
    out = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith(("| Model", "| ---")):
            cells = [c.strip() for c in line.strip("|").split("|")]
            out[cells[0]] = cells[1:]
    return out


def cell_value(cell: str) -> tuple[float, "str | None"]:
    """A MOS cell's value and mark; the interval and verdict marks after the value are read past."""
    cell = cell.split(" [")[0].split(" ")[0]
    if cell.startswith("**"):
        return float(cell.strip("*")), "best"
    if cell.startswith("<u>"):
        return float(re.sub(r"</?u>", "", cell)), "second"
    return float(cell), None


# ----------------------------------------------------------------------------- simulated ratings
def test_simulated_ratings_file_is_valid_and_covers_systems_and_criteria(grid):
    root, summary = grid
    systems_root = root / "grid" / "simulated_systems"
    path = systems_root / "mos_ratings.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        # the ratings columns first (what hugvis mos needs), then the study's fields
        assert tuple(next(csv.reader(handle))) == RATING_COLUMNS + ("study", "item", "elapsed", "duration")
    valid, invalid = read_ratings(path)
    assert len(invalid) == 0 and len(valid) == len(_read_csv(path))
    manifest = json.loads((systems_root / "manifest.json").read_text())
    rows = _read_csv(path)
    chosen = choose_clips(summary.clip_ids, seed=5)
    # 2 actors x 3 clips each, ceil(0.5 x 3) = 2 rated per actor
    assert len(chosen) == 4 and {ClipId.parse(c).actor_id for c in chosen} == {1, 2}
    assert {r["clip_id"] for r in rows} == set(chosen) <= set(summary.clip_ids)
    for task in MOS_TASKS:
        names = set(manifest["tasks"][task]["systems"])
        mine = [r for r in rows if r["model"] in names]
        # every system x criterion x chosen clip x 3 raters (the schedule's k), nothing else
        assert len(mine) == len(names) * len(TASK_CRITERIA[task]) * len(chosen) * 3
        assert {(r["model"], r["criterion"]) for r in mine} == {(m, c) for m in names for c in TASK_CRITERIA[task]}
    assert {r["model"] for r in rows} == {n for t in MOS_TASKS for n in manifest["tasks"][t]["systems"]}
    per_clip = defaultdict(set)
    for r in rows:
        per_clip[(r["clip_id"], r["model"], r["criterion"])].add(r["rater"])
        assert r["score"] in {"1", "2", "3", "4", "5"}
    assert {len(v) for v in per_clip.values()} == {3}
    assert len({r["rater"] for r in rows}) <= 6
    assert not [r for r in rows if r["model"].startswith("gold")]  # gold answers are QC: in the study log only


def test_simulated_ratings_are_deterministic_and_seeded(grid, tmp_path):
    root, summary = grid
    systems_root = root / "grid" / "simulated_systems"
    written = (systems_root / "mos_ratings.csv").read_bytes()
    copy = tmp_path / "simulated_systems"
    copy.mkdir()
    (copy / "manifest.json").write_bytes((systems_root / "manifest.json").read_bytes())
    # same seed: same bytes, whatever the order the clip ids come in
    seconds = summary.n_frames / summary.fps  # what synthesize passes: the media's duration, the transcripts
    from hug_vis_dataset.datamodel.release import Release

    texts = {r.clip_id: r.transcript for r in Release(root / "grid")}
    assert write_simulated_ratings(copy, summary.clip_ids[::-1], seed=5, duration=seconds,
                                   transcripts=texts).read_bytes() == written
    for name in ("pairwise_ratings.csv", "study/ratings.jsonl", "study/sessions.jsonl", "study/mos_study.json",
                 "emotion_answers.csv", "study/emotion_study.json"):
        assert (copy / name).read_bytes() == (systems_root / name).read_bytes(), name
    assert write_simulated_ratings(copy, summary.clip_ids, seed=6, duration=seconds).read_bytes() != written
    systems = {t: {s.name: s.strength for s in SYSTEMS[t]} for t in MOS_TASKS}
    reordered = {t: dict(reversed(list(systems[t].items()))) for t in reversed(MOS_TASKS)}
    assert simulate_ratings(summary.clip_ids, systems, 3) == simulate_ratings(summary.clip_ids, reordered, 3)


def test_simulated_ratings_reject_bad_options():
    clips = ["actor_0001_happy_action_01_script_001"]
    with pytest.raises(ValueError, match="careless"):
        simulate_ratings(clips, {"voice_cloning": {"a": 0.1}}, n_raters=2, careless=2)
    with pytest.raises(ValueError, match="ratings_per_item"):
        simulate_ratings(clips, {"voice_cloning": {"a": 0.1}}, ratings_per_item=1)
    with pytest.raises(ValueError, match="strength"):
        simulate_ratings(clips, {"voice_cloning": {"a": 1.5}})
    with pytest.raises(ValueError, match="fraction"):
        choose_clips(clips, 0, fraction=0.0)
    assert simulate_ratings(clips, {"matting": {"m": 0.1}}) == []  # no MOS criteria for matting


def test_mos_ranking_follows_strength_on_average_not_always_at_the_top(grid):
    root, _ = grid
    rank = {s.name: s.expected_rank for t in MOS_TASKS for s in SYSTEMS[t]}
    mos = hand_mos(_read_csv(root / "grid" / "simulated_systems" / "mos_ratings.csv"))
    models = sorted(rank)
    overall = [np.mean([v for (m, _c), v in mos.items() if m == model]) for model in models]
    # within each task, the criterion-averaged MOS order follows expected_rank for this seed
    for task in MOS_TASKS:
        names = [s.name for s in SYSTEMS[task]]
        rho = spearmanr([overall[models.index(n)] for n in names], [rank[n] for n in names])[0]
        assert rho < 0, (task, rho)
    # over many seeds: strong agreement in trend, but the top system is sometimes not first
    clips = [str(c) for c in iter_grid(1, ["Happy", "Sad", "Angry"], 1, 2)]
    systems = {t: {s.name: s.strength for s in SYSTEMS[t]} for t in MOS_TASKS}
    rhos, tops = [], []
    for seed in range(12):
        m = hand_mos(simulate_ratings(clips, systems, seed))
        for task in MOS_TASKS:
            for criterion in TASK_CRITERIA[task]:
                names = sorted(systems[task])
                values = [m[(n, criterion)] for n in names]
                rho = spearmanr(values, [-rank[n] for n in names])[0]
                if not math.isnan(rho):
                    rhos.append(rho)
                tops.append(rank[names[int(np.argmax(values))]] == 1)
    assert np.mean(rhos) > 0.6
    assert 0.5 < np.mean(tops) < 1.0


# ----------------------------------------------------------------------------- report
@pytest.fixture(scope="module")
def report_dir(grid, tmp_path_factory):
    from hug_vis_dataset.reporting.report import build_report

    root, _ = grid
    out = tmp_path_factory.mktemp("mosout")
    report = build_report([root / "res"], out, n_boot=30, figures=False,
                          mos=root / "grid" / "simulated_systems" / "mos_ratings.csv")
    return out, report


def test_report_mos_tables_equal_hand_mos_with_marks(grid, report_dir):
    root, _ = grid
    out, report = report_dir
    rows = _read_csv(root / "grid" / "simulated_systems" / "mos_ratings.csv")
    kept = hand_qc_kept(rows)
    assert len({r["rater"] for r in kept}) < len({r["rater"] for r in rows})  # the careless rater is flagged
    mos = hand_mos(kept)  # Tables 6/8/10 leave out the raters quality control flags
    for task in MOS_TASKS:
        text = (out / f"{task}_mos.md").read_text()
        assert f"{TABLE[task]}-shaped" in text and text in report.markdown
        table = parse_md_table(text)
        names = sorted(s.name for s in SYSTEMS[task])
        assert sorted(table) == names
        for j, criterion in enumerate(TASK_CRITERIA[task]):
            for name in names:
                value, mark = cell_value(table[name][j])
                assert value == pytest.approx(mos[(name, criterion)], abs=0.005 + 1e-9)
                # Two actors: no comparison separates two systems, so none is bold or underlined (the board's rule),
                # and every interval carries the small-sample mark.
                assert mark is None and table[name][j].endswith("] ?"), (task, criterion, name)
        assert "fewer than 6, so no 95% interval or test" in text
        assert r"\textbf" not in (out / f"{task}_mos.tex").read_text()
        assert "<b>" not in (out / f"{task}_mos.html").read_text()
    header = (out / "audio_driven_mos.md").read_text().splitlines()[2]
    assert header == "| Model | ID Similarity ↑ | Emotion Naturalness ↑ | Lip Synchronization ↑ |"
    assert "Motion Naturalness ↑" in (out / "vision_driven_mos.md").read_text()


def test_report_mos_intervals_and_agreement(grid, report_dir):
    root, _ = grid
    out, report = report_dir
    path = root / "grid" / "simulated_systems" / "mos_ratings.csv"
    kept = hand_qc_kept(_read_csv(path))
    mos = hand_mos(kept)
    intervals = pd.read_csv(out / "mos_intervals.csv")
    assert len(intervals) == len(mos)
    for row in intervals.itertuples():
        assert row.estimate == pytest.approx(mos[(row.model, row.criterion)])
        assert row.low <= row.estimate <= row.high
        n = sum((r["model"], r["criterion"]) == (row.model, row.criterion) for r in kept)
        assert row.n_clusters == 2 and row.n_clips == 4 and row.n_ratings == n
    assert intervals["n_ratings"].min() < 12  # the flagged rater's ratings are left out
    valid, _ = read_ratings(path)
    valid = valid[valid["rater"].isin({r["rater"] for r in kept})]
    for task in MOS_TASKS:
        names = [s.name for s in SYSTEMS[task]]
        alphas = agreement(valid[valid["model"].isin(names)])
        section = report.markdown.split(f"### {catalog.task(task).label} ({TABLE[task]}: MOS")[1].split("###")[0]
        for criterion in TASK_CRITERIA[task]:
            assert f"{catalog.label_of(criterion)} {alphas[criterion]['alpha']:.2f} (" in section
            got = intervals[(intervals["model"] == names[0]) & (intervals["criterion"] == criterion)]["alpha"]
            assert float(got.iloc[0]) == pytest.approx(alphas[criterion]["alpha"])


def test_report_joint_view_names_tasks_without_metrics(report_dir):
    _, report = report_dir
    text = report.markdown
    assert "MOS vs automatic metric" in text
    # audio-driven and voice-cloning were not scored here: said, not failed
    assert ("Audio-driven video generation / Lip Synchronization: matching metric Sync-C not available (no stored run "
            "computed it)") in text
    assert "Voice cloning / ID Similarity: matching metric Speaker Sim. not available" in text


def test_joint_view_rho_against_scipy(grid):
    from hug_vis_dataset.reporting.report import _mos_section

    root, _ = grid
    path = root / "grid" / "simulated_systems" / "mos_ratings.csv"
    mos = hand_mos(hand_qc_kept(_read_csv(path)))
    names = ["vis_fair", "vis_good", "vis_poor"]
    auto = pd.DataFrame({"lpips": [0.20, 0.25, 0.60], "csim": [0.7, 0.9, 0.4]}, index=names)
    md = "\n".join(_mos_section(path, {"vision_driven": (auto, {}, {}, "clip")}, [], None, 0, ("md",), []))
    for criterion, metric, sign in (("motion_naturalness", "lpips", -1), ("id_similarity", "csim", 1)):
        m = [mos[(n, criterion)] for n in names]
        rho = spearmanr(m, [sign * v for v in auto[metric]])[0]
        best_mos = names[int(np.argmax(m))]
        best_metric = names[int(np.argmax([sign * v for v in auto[metric]]))]
        assert (f"| Vision-driven video generation | {catalog.label_of(criterion)} | {catalog.label_of(metric)} | 3 | "
                f"{rho:.2f} | {best_mos} | {best_metric} |") in md


def test_report_counts_invalid_ratings_and_excludes_them(grid, tmp_path):
    from hug_vis_dataset.reporting.report import build_report

    root, _ = grid
    rows = _read_csv(root / "grid" / "simulated_systems" / "mos_ratings.csv")

    def naive(kept, key):  # plain mean over ratings: differs from the MOS once clips have unequal raters
        scores = [float(r["score"]) for r in kept if (r["model"], r["criterion"]) == key]
        return sum(scores) / len(scores)

    # a rating whose exclusion separates "clip means, then mean" from the plain mean at 2 decimals
    drop = next(i for i, r in enumerate(rows)
                if round(hand_mos(rows[:i] + rows[i + 1:])[(r["model"], r["criterion"])], 2)
                != round(naive(rows[:i] + rows[i + 1:], (r["model"], r["criterion"])), 2))
    first = rows[0]
    bad = [dict(first, score="7"), dict(first, criterion="sharpness"), dict(first, clip_id="not_a_clip"),
           dict(rows[drop])]  # the last duplicates rows[drop]: both copies are excluded
    path = tmp_path / "ratings.csv"
    pd.DataFrame(rows + bad, columns=list(RATING_COLUMNS)).to_csv(path, index=False)
    out = tmp_path / "report"
    text = build_report([root / "res"], out, n_boot=0, figures=False, mos=path).markdown
    assert f"{len(rows) - 1} valid ratings, 5 invalid" in text
    assert "- 2 x duplicate rating" in text and "- 1 x score is not an integer in 1..5" in text
    assert "- 1 x bad clip id" in text and "- 1 x unknown criterion 'sharpness'" in text
    assert len(pd.read_csv(out / "mos" / "invalid_ratings.csv")) == 5
    # the table is the MOS of the remaining ratings (rows[drop] excluded)
    mos = hand_mos(rows[:drop] + rows[drop + 1:])
    model, criterion = rows[drop]["model"], rows[drop]["criterion"]
    task = next(t for t in MOS_TASKS if model in {s.name for s in SYSTEMS[t]})
    j = TASK_CRITERIA[task].index(criterion)
    cell = parse_md_table((out / f"{task}_mos.md").read_text())[model][j]
    assert cell_value(cell)[0] == pytest.approx(mos[(model, criterion)], abs=0.005 + 1e-9)


def test_report_with_no_valid_rating_says_so(grid, tmp_path):
    from hug_vis_dataset.reporting.report import build_report

    root, _ = grid
    path = tmp_path / "ratings.csv"
    path.write_text("rater,clip_id,model,criterion,score\nr1,actor_0001_happy_action_01_script_001,m,lip_sync,0\n")
    text = build_report([root / "res"], tmp_path / "out", n_boot=0, figures=False, mos=path).markdown
    assert "0 valid ratings, 1 invalid" in text and "No valid rating" in text


def test_mos_model_tasks_from_criteria_and_stored_results():
    from hug_vis_dataset.reporting.report import mos_model_tasks

    tasks, unassigned = mos_model_tasks(
        {"a": {"lip_sync"}, "v": {"id_similarity", "motion_naturalness"}, "c": {"id_similarity"},
         "s": {"emotion_naturalness"}, "both": {"lip_sync", "motion_naturalness"}, "amb": {"id_similarity"}},
        [{"task": "vision_driven", "model": "s"}, {"task": "matting", "model": "c"},
         {"task": "audio_driven", "model": "amb"}, {"task": "vision_driven", "model": "amb"}])
    assert tasks == {"a": "audio_driven", "v": "vision_driven", "c": "voice_cloning", "s": "vision_driven"}
    assert set(unassigned) == {"both", "amb"}


def test_unassigned_model_is_reported_not_dropped(grid, tmp_path):
    from hug_vis_dataset.reporting.report import build_report

    root, _ = grid
    clip = "actor_0001_happy_action_01_script_001"
    lines = ["rater,clip_id,model,criterion,score", f"r1,{clip},x,lip_sync,4", f"r1,{clip},x,motion_naturalness,3"]
    path = tmp_path / "ratings.csv"
    path.write_text("\n".join(lines) + "\n")
    text = build_report([root / "res"], None, n_boot=0, figures=False, mos=path).markdown
    assert "ratings of model x not tabulated: rated on both Lip Synchronization and Motion Naturalness" in text
    valid, invalid = validate_ratings(pd.read_csv(path, dtype=str))
    assert len(valid) == 2 and len(invalid) == 0


# ----------------------------------------------------------------------------- the simulated study
def test_simulated_study_follows_the_schedule(grid):
    from hug_vis_dataset.studies.rater_qc import flag_raters
    from hug_vis_dataset.studies.preferences import PreferenceStore
    from hug_vis_dataset.studies.ratings import read_log
    from hug_vis_dataset.studies.schedule import pair_sides
    from hug_vis_dataset.studies.sessions import SessionLog, coverage
    from hug_vis_dataset.studies.spec import load_study

    root, summary = grid
    folder = root / "grid" / "simulated_systems" / "study"
    mos_spec, pw_spec = load_study(folder / "mos_study.json"), load_study(folder / "pairwise_study.json")
    chosen = choose_clips(summary.clip_ids, seed=5)
    assert mos_spec.clips == tuple(chosen) and pw_spec.protocol == "pairwise"
    ratings, problems = read_log(folder / "ratings.jsonl")
    prefs = PreferenceStore(folder / "ratings.jsonl").frame()
    assert problems == [] and PreferenceStore(folder / "ratings.jsonl").problems() == []
    for spec, answers, k in ((mos_spec, ratings, 3), (pw_spec, prefs, 2)):
        sessions = SessionLog(folder / "sessions.jsonl", spec).sessions()
        answered = {r: set(g["item"]) for r, g in answers[answers["study"] == spec.name].groupby("rater")}
        cov = coverage(spec, sessions, answered)
        # Balanced and complete: every item has exactly k ratings; 9 systems (3 pairs per task) x 4 clips.
        assert cov["by_ratings"] == {k: len(spec.items())} and cov["completion"] == 1.0
        assert len(spec.items()) == 9 * 4
        for rater in {s.rater for s in sessions}:
            keys = [i.key for s in sessions if s.rater == rater for _, i in s.entries if i.kind == "system"]
            assert len(keys) == len(set(keys)), rater  # never the same item twice (gold may come back)
        if spec is mos_spec:
            assert {sum(i.kind == "gold" for _, i in s.entries) for s in sessions} == {2}  # 0.25 x 8
            assert cov["gold_answers"] == 2 * len(sessions)
        else:
            sides = {(s.seed, c): pair_sides(s.seed, c, i.systems)[0] for s in sessions for c, i in s.entries}
            by_code = {c: s.seed for s in sessions for c, _ in s.entries}
            assert all(left == sides[(by_code[code], code)] for code, left in zip(prefs["item"], prefs["left"]))
            assert 0 < (prefs["left"] == prefs["system_a"]).mean() < 1  # both sides came up
    # The careless rater (the last) is flagged, by gold answers and by speed; the others are not.
    flags = flag_raters(ratings, mos_spec.qc).set_index("rater")
    assert flags["flagged"].to_dict() == {f"sim_rater_0{i}": i == 6 for i in range(1, 7)}
    assert flags.loc["sim_rater_06", "fast_answers"] == flags.loc["sim_rater_06", "answers"]
    assert flags.drop("sim_rater_06")["fast_answers"].sum() == 0
    # The CSV is the log's ratings of the systems (gold left out), the same scores.
    csv_rows = pd.read_csv(root / "grid" / "simulated_systems" / "mos_ratings.csv")
    log_rows = ratings[~ratings["model"].str.startswith("gold")]
    key = ["rater", "clip_id", "model", "criterion"]
    merged = csv_rows.merge(log_rows, on=key, suffixes=("", "_log"))
    assert len(merged) == len(csv_rows) == len(log_rows) and (merged["score"] == merged["score_log"]).all()


def test_report_pairwise_findings_and_study_section(grid, tmp_path):
    from hug_vis_dataset.studies.bradley_terry import bradley_terry
    from hug_vis_dataset.reporting.report import build_report
    from hug_vis_dataset.studies.status import aggregate_ratings
    from hug_vis_dataset.studies.ratings import latest_ratings, read_log
    from hug_vis_dataset.studies.status import study_markdown

    root, _ = grid
    systems_root = root / "grid" / "simulated_systems"
    pairwise = pd.read_csv(systems_root / "pairwise_ratings.csv")
    text = build_report([root / "res"], None, n_boot=0, figures=False, mos=systems_root / "mos_ratings.csv",
                        preferences=systems_root / "pairwise_ratings.csv").markdown
    block = text.split("### Pairwise preference (Bradley-Terry)")[1]
    # The strengths: Bradley-Terry with 0.5 virtual ties per pair, per task and criterion.
    vis = pairwise[(pairwise["task"] == "vision_driven") & (pairwise["criterion"] == "motion_naturalness")]
    fit = bradley_terry(zip(vis["system_a"], vis["system_b"], vis["outcome"]), prior=0.5)
    for name, value in fit.items():
        assert f"| vision_driven | motion_naturalness | {name} | {value:.3g} |" in block
    # Agreement with the MOS (of the raters quality control keeps, as in every MOS of the report) and with each
    # scored metric (vision-driven only was scored here).
    mos = hand_mos(hand_qc_kept(_read_csv(systems_root / "mos_ratings.csv")))
    names = sorted(fit)
    rho = spearmanr([fit[n] for n in names], [mos[(n, "motion_naturalness")] for n in names])[0]
    assert f"| vision_driven | motion_naturalness | MOS | 3 | {rho:.3g} |" in block
    from hug_vis_dataset.reporting.report import load_results

    rows = load_results([root / "res"])[0]
    psnr = rows[(rows["metric"] == "psnr") & (rows["status"] == "ok")].groupby("model")["value"].mean()
    rho = spearmanr([fit[n] for n in names], [psnr[n] for n in names])[0]
    assert f"| vision_driven | motion_naturalness | PSNR | 3 | {rho:.3g} |" in block
    assert "| audio_driven |" not in block.split("| task | criterion | against |")[1]  # no stored rows: no row
    # The study section: flagged rater named, MOS with and without, as aggregate_ratings gives them.
    folder = systems_root / "study"
    md = "\n".join(study_markdown([folder / "mos_study.json", folder / "pairwise_study.json"],
                                  folder / "ratings.jsonl"))
    assert "Flagged raters: 1 of 6; sim_rater_06 (" in md and "### synthetic-pairwise (pairwise)" in md
    log = latest_ratings(read_log(folder / "ratings.jsonl")[0])
    without = aggregate_ratings(log, exclude_raters={"sim_rater_06"}).set_index(["model", "criterion"])
    allr = aggregate_ratings(log).set_index(["model", "criterion"])
    with_section = md.split("**MOS, all raters:**")[1].split("**MOS, without")[0]
    without_section = md.split("**MOS, without flagged raters:**")[1].split("###")[0]
    row = ("vis_good", "Motion Naturalness")
    assert f"| vision_driven | vis_good | Motion Naturalness | {allr.loc[row, 'mos']:.3g} |" in with_section
    assert f"| vision_driven | vis_good | Motion Naturalness | {without.loc[row, 'mos']:.3g} |" in without_section
    assert allr.loc[row, "n_raters"] == without.loc[row, "n_raters"] + 1 or allr.loc[row, "n_ratings"] == \
        without.loc[row, "n_ratings"]  # the careless rater may or may not have rated this system
    assert "100.0%" in md and "Bradley-Terry strengths, without flagged raters" in md

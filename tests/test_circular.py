"""Answers that survive a reordered question (issue 54, part 2): ``hugvis predict emotion --circular K``, the
scorer's plain accuracy, circular accuracy and flip rate, and the report's columns beside Table 4.

* the prompt lists the options in the rotated order, every adapter receives it, each line keeps it;
* the scorer's rows equal :func:`hug_vis_dataset.metrics.emotion.circular_scores` on the lines written (the
  runner door against the library), the flip row's note says which order gave which answer, order 0's rows equal a
  plain run's (Table 4 unchanged), bad submissions (no order 0, an order twice) fail naming why;
* planted truth: a model whose answers move to the first listed option with probability ``b`` under a reordered
  question: the measured flip rate and circular accuracy against their expectation, inside the engine's interval;
* the report prints Circular acc. and Flip rate beside Table 4 with the engine's intervals.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from hug_vis_dataset.datamodel.grid import EMOTION_NAMES, ClipId
from hug_vis_dataset.metrics.emotion import circular_scores, option_shifts, parse_answer, rotated_options

ACCURACY, BIAS, K = 0.7, 0.3, 3


def _draw(*keys) -> float:
    """A uniform number in [0, 1) fixed by its keys (the planted model's coin)."""
    return int.from_bytes(hashlib.sha256("\0".join(map(str, keys)).encode()).digest()[:8], "big") / 2 ** 64


def planted_model(inputs) -> str:
    """Right with probability ACCURACY (the same answer under every order), but under a reordered question the first
    listed option with probability BIAS (position bias). Answers in the prompt's language."""
    truth = ClipId.parse(inputs["clip_id"]).emotion.value
    if _draw(inputs["clip_id"], "right") < ACCURACY:
        answer = truth
    else:
        answer = EMOTION_NAMES[(EMOTION_NAMES.index(truth) + 1 + int(_draw(inputs["clip_id"], "wrong") * 6)) % 7]
    if inputs["order"] and _draw(inputs["clip_id"], inputs["order"], inputs["language"]) < BIAS:
        answer = inputs["options"][0]
    return answer if inputs["language"] == "en" else {"Happy": "开心", "Angry": "生气", "Sad": "悲伤", "Afraid": "害怕",
                                                      "Disgusted": "厌恶", "Surprised": "惊讶", "Neutral": "中性"}[answer]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from hug_vis_dataset.predict import predict
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("circular")
    release = root / "release"
    synthesize(release, actors=10, actions=1, scripts=2, seconds=0.2, size=(32, 18), systems=False, progress=False)
    results = root / "results"
    for name, circular in (("plain", 1), ("planted", K)):
        predict("emotion", planted_model, release, root / name, settings=["Text"], circular=circular,
                progress=False)
        evaluate_submission("emotion", root / name, name, release, results, progress=False)
    return root, release, results


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_each_line_keeps_the_order_that_produced_its_answer(world):
    root, release, _ = world
    lines = _lines(root / "planted" / "predictions.jsonl")
    clips = {line["clip_id"] for line in lines}
    assert len(lines) == K * len(clips) == K * 140
    for line in lines:
        shift = line["order"]
        assert shift in option_shifts(K) and line["options"] == list(rotated_options(shift))
        assert line["language"] == "zh"  # auto: the Mandarin transcript's language
        words = line["prompt"].splitlines()[-1].split("：")[1].rstrip("。").split("、")
        assert [parse_answer(w).value for w in words] == line["options"]  # the prompt gave them in that order
    plain = _lines(root / "plain" / "predictions.jsonl")
    assert "order" not in plain[0] and "options" not in plain[0]  # one order: the plain lines as ever


def test_rows_are_the_librarys_circular_scores_and_order_0_is_table4(world):
    root, _, results = world
    rows = pd.read_parquet(results / "emotion" / "planted" / "rows.parquet")
    plain = pd.read_parquet(results / "emotion" / "plain" / "rows.parquet")
    by_clip: dict = {}
    for line in _lines(root / "planted" / "predictions.jsonl"):
        by_clip.setdefault(line["clip_id"], {})[(line["order"], line["language"])] = line["answer"]
    for clip, answers in by_clip.items():
        want = circular_scores(answers, ClipId.parse(clip).emotion.value)
        mine = rows[rows["clip_id"] == clip].set_index("metric")
        assert {m: mine.loc[m, "value"] for m in want} == want, clip
        note = mine.loc["emotion_flip_rate", "error"]
        assert note.startswith("answers by order: 0 ") and all(f"; {s} " in note for s in option_shifts(K)[1:])
    a = rows[rows["metric"] == "emotion_accuracy"].set_index("clip_id")["value"]
    b = plain[plain["metric"] == "emotion_accuracy"].set_index("clip_id")["value"]
    pd.testing.assert_series_equal(a.sort_index(), b.sort_index())  # order 0 answers are the plain ones
    assert set(plain["metric"]) == {"emotion_accuracy"}  # a plain run has no circular row
    computed = {name: json.loads((results / "emotion" / name / "summary.json").read_text())["metrics"]["computed"]
                for name in ("plain", "planted")}  # and computes, records and re-runs what it always did
    assert computed == {"plain": ["emotion_accuracy"],
                        "planted": ["emotion_accuracy", "emotion_circular_accuracy", "emotion_flip_rate"]}


def test_the_planted_position_bias_is_recovered(world):
    from hug_vis_dataset.statistics.intervals import table_intervals

    root, _, results = world
    rows = pd.read_parquet(results / "emotion" / "planted" / "rows.parquet")
    first = {s: rotated_options(s)[0] for s in option_shifts(K)}
    flip, circular = [], []
    for line in _lines(root / "planted" / "predictions.jsonl"):
        if line["order"]:
            continue
        clip, truth = line["clip_id"], ClipId.parse(line["clip_id"]).emotion.value
        a0 = parse_answer(line["answer"]).value  # order 0: the unbiased answer (in Chinese: parsed)
        stay = [1 - BIAS * (first[s] != a0) for s in option_shifts(K)[1:]]
        flip.append(1 - np.prod(stay))
        circular.append((a0 == truth) * np.prod([1 - BIAS * (first[s] != truth) for s in option_shifts(K)[1:]]))
    expected = {"emotion_flip_rate": 100 * np.mean(flip), "emotion_circular_accuracy": 100 * np.mean(circular)}
    cells = table_intervals(rows, list(expected), 1000)
    for metric, value in expected.items():
        ci = cells[("planted | Text", metric)]
        # inside the 95% interval of the 10 actors' 140 clips, and that interval narrow enough to mean something
        assert ci.low <= value <= ci.high and abs(ci.estimate - value) < 8 and ci.high - ci.low < 25, (metric, value, ci)
    assert expected["emotion_flip_rate"] > 30  # the bias is there to be found
    assert cells[("planted | Text", "emotion_circular_accuracy")].estimate < \
        table_intervals(rows, ["emotion_accuracy"], 10)[("planted | Text", "emotion_accuracy")].estimate


def test_the_report_prints_circular_accuracy_and_flip_rate_beside_table4(world):
    from hug_vis_dataset.reporting.report import build_report
    from hug_vis_dataset.statistics.intervals import table_intervals

    _, _, results = world
    report = build_report([results], None, formats=("md",), n_boot=300, figures=False)
    beyond = report.markdown.split("beyond the paper (Circular acc. (%), Flip rate (%))")[1].split("\n## ")[0]
    rows = pd.read_parquet(results / "emotion" / "planted" / "rows.parquet")
    cells = table_intervals(rows, ["emotion_circular_accuracy", "emotion_flip_rate"], 300)
    line = next(l for l in beyond.splitlines() if l.startswith("| planted |"))
    for metric in ("emotion_circular_accuracy", "emotion_flip_rate"):
        ci = cells[("planted | Text", metric)]
        assert f"{ci.estimate:.2f} [{ci.low:.2f}, {ci.high:.2f}]" in line, (metric, line)
    plain_line = next(l for l in beyond.splitlines() if l.startswith("| plain |"))
    assert plain_line.endswith("| – | – |")  # a plain run has no such value: a dash, never a number


def _write(path, lines) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "predictions.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


@pytest.mark.parametrize("lines,error", [
    ([{"order": 2, "options": list(rotated_options(2)), "answer": "Sad"},
      {"order": 4, "options": list(rotated_options(4)), "answer": "Sad"}], "no answer with the options in Table 1's order"),
    ([{"order": 0, "answer": "Sad"}, {"order": 0, "answer": "Happy"}], "duplicate predictions"),
    ([{"answer": "Sad"}, {"order": 2, "answer": "Happy"}], "duplicate predictions"),
])
def test_a_submission_that_cannot_be_scored_fails_its_clip_naming_why(world, tmp_path, lines, error):
    from hug_vis_dataset.scoring.runner import evaluate_submission

    _, release, _ = world
    clip = str(sorted(ClipId.parse(c) for c in _clip_ids(release))[0])
    _write(tmp_path / "sub", [{"clip_id": clip, "input_setting": "Text", **line} for line in lines])
    evaluate_submission("emotion", tmp_path / "sub", "bad", release, tmp_path / "res", progress=False)
    rows = pd.read_parquet(tmp_path / "res" / "emotion" / "bad" / "rows.parquet")
    mine = rows[rows["clip_id"] == clip]
    assert set(mine["status"]) == {"failed"} and error in mine["error"].iloc[0]


@pytest.mark.parametrize("line,words", [
    ({"order": -1}, "field 'order' must be a non-negative integer"),
    ({"order": True}, "field 'order' must be a non-negative integer"),
    ({"order": 1, "options": ["Sad"] * 7}, "field 'options' must list the seven emotions once each"),
    ({"order": 1, "language": 3}, "field 'language' holds"),
])
def test_a_bad_order_field_is_a_bad_line_named_by_its_number(tmp_path, line, words):
    from hug_vis_dataset.metrics.emotion import iter_prediction_lines

    path = tmp_path / "predictions.jsonl"
    path.write_text(json.dumps({"clip_id": "actor_0001_sad_action_01_script_001", "answer": "Sad", **line}) + "\n")
    [(where, record, error)] = list(iter_prediction_lines(path))
    assert record is None and where == "predictions.jsonl:1" and error.startswith(words)


def _clip_ids(release) -> list[str]:
    from hug_vis_dataset.datamodel.release import Release

    return [r.clip_id for r in Release(release)]


def test_every_adapter_receives_the_order_and_the_chat_prompt_lists_it(world):
    from hug_vis_dataset.predict.adapters import OpenAIChat
    from hug_vis_dataset.predict.clips import open_clip_source
    from hug_vis_dataset.predict.emotion import emotion_inputs

    _, release, _ = world
    clip = next(iter(open_clip_source(release, "emotion").clips(1)))
    with emotion_inputs(clip, "Text", "zh", order=4) as inputs:
        assert inputs["options"] == rotated_options(4) and inputs["order"] == 4
        body = OpenAIChat("m", base_url="http://127.0.0.1:9", api_key="k").request_body(inputs)
    text = body["messages"][0]["content"][-1]["text"]
    assert text.endswith("请只用下列词语中的一个回答：厌恶、惊讶、中性、开心、生气、悲伤、害怕。")


def test_the_cli_asks_both_languages_and_the_keyword_baseline_never_flips(world, tmp_path):
    root, release, _ = world
    out = tmp_path / "sub"
    done = subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", "predict", "emotion", "--model", "baseline",
                           "--dataset", str(release), "--out", str(out), "--circular", "2", "--language", "both",
                           "--limit", "3", "--no-progress"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lines = _lines(out / "predictions.jsonl")
    assert sorted({(l["order"], l["language"]) for l in lines}) == [(0, "en"), (0, "zh"), (3, "en"), (3, "zh")]
    assert len(lines) == 3 * 4 and "predict emotion: 12 ok" in done.stdout
    again = subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", "predict", "emotion", "--model", "baseline",
                            "--dataset", str(release), "--out", str(out), "--circular", "2", "--language", "both",
                            "--limit", "3", "--no-progress", "--resume"], capture_output=True, text=True)
    assert "0 ok, 0 failed, 12 skipped" in again.stdout, again.stdout
    from hug_vis_dataset.scoring.runner import evaluate_submission

    evaluate_submission("emotion", out, "kw", release, tmp_path / "res", progress=False)
    rows = pd.read_parquet(tmp_path / "res" / "emotion" / "kw" / "rows.parquet")
    flips = rows[(rows["metric"] == "emotion_flip_rate") & (rows["status"] == "ok")]  # the 3 clips predicted
    assert len(flips) == 3 and set(flips["value"]) == {0.0}  # it never reads the options
    bad = subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", "predict", "emotion", "--model", "baseline",
                          "--dataset", str(release), "--out", str(tmp_path / "x"), "--circular", "8"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "--circular: the number of option orders must be an integer in 1..7" in bad.stderr


def test_the_space_notes_under_table4_give_the_circular_numbers_with_intervals(world, tmp_path):
    from hug_vis_dataset.presentation.escaping import markdown_text
    from hug_vis_dataset.space.explorer import Explorer
    from hug_vis_dataset.statistics.intervals import table_intervals

    _, release, results = world
    explorer = Explorer(release, results, work_dir=tmp_path / "work")
    table = next(t for t in explorer.table_labels() if t.startswith("Table 4:"))
    _, notes, _ = explorer.leaderboard(table, ["paper", "synthetic demo"])
    rows = pd.read_parquet(results / "emotion" / "planted" / "rows.parquet")
    cells = table_intervals(rows, ["emotion_accuracy", "emotion_circular_accuracy", "emotion_flip_rate"], 1000)
    words = ", ".join(f"{name} {cells[('planted | Text', m)].estimate:.2f} [{cells[('planted | Text', m)].low:.2f}, "
                      f"{cells[('planted | Text', m)].high:.2f}]" for name, m in
                      (("plain", "emotion_accuracy"), ("circular", "emotion_circular_accuracy"),
                       ("flip rate", "emotion_flip_rate")))
    assert markdown_text(f"planted | Text: {words}") in notes
    assert "plain | Text:" not in notes  # a plain run has no reordered question to report

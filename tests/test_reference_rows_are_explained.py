"""Table 9's reference and baseline rows read right on the board and in the report.

* The built-in voice-cloning baseline replays the reference recording: its Speaker Sim. is a recording against
  itself; both surfaces say so, and print it with the column's three decimals (1.000 beside 0.990, not 1.00).
* The note naming the unranked rows names each row once, by its printed name (never the stored key ``real-audio``
  beside "Real audio (reference)").
* A Real audio row scored here heads its own origin's group: the paper's rows come first in the board, the report's
  Markdown and its HTML.
"""

from __future__ import annotations

import re

import pytest

from hug_vis_dataset.datamodel.results import BASELINE_DOES, REAL_AUDIO_LABEL


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from hug_vis_dataset.demo.pipeline import score_baselines
    from hug_vis_dataset.reporting.report import build_report
    from hug_vis_dataset.datamodel.results import REAL_AUDIO_MODEL
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.space.explorer import Explorer
    from hug_vis_dataset.synth import synthesize
    from hug_vis_dataset.tasks import REAL_AUDIO

    root = tmp_path_factory.mktemp("reference-rows")
    release, results = root / "rel", root / "res"
    synthesize(release, actors=2, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.3, size=(48, 32))
    score_baselines(release, root / "subs", results, progress=False, tasks=["voice_cloning"])
    evaluate_submission("voice_cloning", REAL_AUDIO, REAL_AUDIO_MODEL, release, results, progress=False)
    good = release / "simulated_systems" / "voice_cloning" / "clone_good"
    evaluate_submission("voice_cloning", good, "clone_good", release, results, progress=False)
    report = build_report([results], root / "report", formats=("md", "html"), n_boot=50, figures=False)
    return Explorer(release, results, work_dir=root / "work"), report, root / "report"


def test_the_board_says_what_the_baseline_does_and_prints_three_decimals(world):
    from hug_vis_dataset.leaderboard.board import ORIGIN_LABELS

    explorer, _, _ = world
    label = next(t for t in explorer.table_labels() if "Table 9" in t)
    frame, notes, _ = explorer.leaderboard(label, origins=list(ORIGIN_LABELS.values()))
    sim = next(c for c in frame.columns if c.startswith("Speaker Sim."))
    baseline = frame[frame["Model"] == "baseline (built-in)"].iloc[0]
    assert re.match(r"^1\.000\b", str(baseline[sim]))  # a recording against itself, in the column's decimals
    assert BASELINE_DOES["voice_cloning"] in notes
    unranked = next(line for line in notes.splitlines() if "never ranked" in line)
    assert "real-audio" not in unranked and unranked.count(REAL_AUDIO_LABEL) == 1
    models = frame["Model"].tolist()
    paper_last = max(i for i, o in enumerate(frame["Origin"]) if o == "paper")
    assert models.index(REAL_AUDIO_LABEL) > paper_last  # scored here: after every paper row, heading its group
    assert models.index(REAL_AUDIO_LABEL) < models.index("clone_good")


def test_the_report_says_the_same_and_orders_rows_the_same(world):
    _, report, folder = world
    section = report.markdown.split("\n## Voice cloning (", 1)[1].split("\n### ", 1)[0]
    assert BASELINE_DOES["voice_cloning"] in section
    lines = [x for x in section.splitlines() if x.startswith("| ") and not x.startswith("| Model")]
    names = [x.split("|")[1].strip() for x in lines]
    baseline = lines[names.index("baseline (built-in)")]
    assert "| 1.000 [1.000, 1.000] ? |" in baseline  # a collapsed interval of 2 actors: marked, cannot tell
    paper = [i for i, x in enumerate(lines) if "| paper |" in x]
    assert paper and names.index(REAL_AUDIO_LABEL) > max(paper)
    assert "speaker_similarity" not in section  # the collapsed-interval warning names the metric by its label
    html = (folder / "voice_cloning.html").read_text(encoding="utf-8")
    assert html.index(REAL_AUDIO_LABEL) > html.index("Inworld TTS-1.5")  # the paper's last row comes first

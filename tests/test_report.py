"""hugvis report on stored rows of the synthetic grid: tables, intervals, figures, MOS joint view."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import os

import pytest

from hug_vis_dataset.cli import main


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("rep")
    synthesize(root / "grid", actors=2, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.4,
               size=(48, 28), seed=1)
    with pytest.MonkeyPatch.context() as env:  # no weight file can be found: LPIPS/CSIM/FID are skipped
        for var in [v for v in os.environ if v.startswith("HUGVIS_WEIGHT")]:
            env.delenv(var)
        (root / "no-weights").mkdir()  # an empty folder: a missing one is an error (weights_dir)
        env.setenv("HUGVIS_WEIGHTS_DIR", str(root / "no-weights"))
        env.setenv("HUGVIS_CACHE_DIR", str(root / "cache"))
        env.setenv("HF_HUB_OFFLINE", "1")
        for task in ("matting", "emotion", "vision_driven"):
            for system in sorted((root / "grid" / "simulated_systems" / task).iterdir()):
                if system.is_dir():
                    evaluate_submission(task, system, system.name, root / "grid", root / "res", progress=False)
    return root


def test_report_tables_values_marks_and_figures(results, tmp_path):
    out = tmp_path / "report"
    assert main(["report", str(results / "res"), "--out", str(out), "--n-boot", "50"]) == 0
    for task in ("matting", "emotion", "vision_driven"):
        for ext in ("md", "tex", "html"):
            assert (out / f"{task}.{ext}").is_file()
    md = (out / "matting.md").read_text()
    rows = pd.read_parquet(results / "res" / "matting" / "matte_good" / "rows.parquet")
    frames = pd.read_parquet(results / "res" / "matting" / "matte_good" / "frames.parquet")
    # rvm protocol by hand for MAD: mean over frame index of the per-index mean over clips
    mad = frames[frames["metric"] == "mad"].groupby("frame")["value"].mean().mean()
    # Two actors: no comparison can separate two systems, so no cell is bold or underlined (a table never draws a
    # winner the statistics cannot back) and every interval carries the small-sample mark, explained in the caption.
    stored = [line for line in md.splitlines() if line.startswith("| matte_")]
    assert len(stored) == 3 and any(f"| {mad:.2f} [" in line for line in stored)
    assert not any("**" in line or "<u>" in line for line in stored)
    assert all(line.count("] ?") == 5 for line in stored)  # the paper's rows keep the marks the paper printed
    assert "? after an interval: 2 actors: fewer than 6, so no 95% interval or test" in md
    tex = (out / "matting.tex").read_text()
    assert not any(r"\textbf" in line for line in tex.splitlines() if line.startswith("matte"))
    emotion = (out / "emotion.md").read_text()
    assert "*Text*" in emotion  # grouped by input setting like Table 4
    intervals = pd.read_csv(out / "intervals.csv")
    good = intervals[(intervals["model"] == "matte_good") & (intervals["metric"] == "mad")].iloc[0]
    clip_mean = rows[rows["metric"] == "mad"]["value"].mean()
    assert good["estimate"] == pytest.approx(clip_mean) and good["low"] <= clip_mean <= good["high"]
    assert (out / "figures" / "fig8_emotion_difficulty.png").is_file()
    text = (out / "report.md").read_text()
    assert "- LPIPS: needs weights: run `hugvis weights download alexnet" in text  # by its label, the command as code


def test_report_mos_joint_view(results, tmp_path):
    from hug_vis_dataset.datamodel.release import Release

    clips = [r.clip_id for r in Release(results / "grid")]
    # vision-driven: MOS ranks the systems like PSNR except that it prefers vis_fair at the top
    mos_by_model = {"vis_good": 4, "vis_fair": 5, "vis_poor": 1}
    lines = ["rater,clip_id,model,criterion,score"]
    for rater in ("r1", "r2"):
        for clip in clips:
            for model, score in mos_by_model.items():
                lines.append(f"{rater},{clip},{model},motion_naturalness,{score}")
    lines.append("r3,actor_0001_happy_action_01_script_001,vis_good,motion_naturalness,9")
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("\n".join(lines) + "\n")
    out = tmp_path / "report"
    assert main(["report", str(results / "res"), "--out", str(out), "--n-boot", "20", "--no-figures",
                 "--mos", str(ratings)]) == 0
    text = (out / "report.md").read_text()
    assert "1 invalid" in text and "Subjective study" in text
    from hug_vis_dataset.studies.mos import mos_metric_agreement, mos_report
    from hug_vis_dataset.reporting.report import build_report

    table = build_report([results / "res"], None, n_boot=0, figures=False).tables["vision_driven"]
    joint = mos_metric_agreement(mos_report(ratings, n_boot=20).table, table, "vision_driven",
                                 mapping={"motion_naturalness": "psnr"})[0]
    # ranks: MOS good 2, fair 3, poor 1; PSNR good 3, fair 2, poor 1 -> rho = 1 - 6 * 2 / (3 * 8)
    assert joint["spearman"] == pytest.approx(0.5)
    assert (joint["best_by_mos"], joint["best_by_metric"]) == ("vis_fair", "vis_good")
    assert main(["mos", str(ratings), "--n-boot", "20", "--strict"]) == 1


def test_report_table_headers_precision_and_intervals_from_hand_made_rows():
    """The board's headers, the catalog's precision (one more decimal below 1), the interval beside
    each value in one stated convention, and the synthetic-grid caption."""
    from types import SimpleNamespace

    import pandas as pd

    from hug_vis_dataset import catalog
    from hug_vis_dataset.reporting.report import CELL_CONVENTION, SYNTHETIC_CAPTION, _render

    table = pd.DataFrame({"mad": [11.391, 20.0], "mse": [5.0, 6.0], "dtssd": [2.04, 3.0], "grad": [0.0441, 0.0632],
                          "conn": [0.0631, 0.05], "n_ok": [4, 4], "n_failed": [0, 0]}, index=["good", "poor"])
    cis = {("good", "mad"): SimpleNamespace(low=10.59, high=12.2), ("poor", "grad"): SimpleNamespace(low=0.05, high=0.07)}
    md = _render("matting", table, "markdown", cis, synthetic=True)
    lines = md.splitlines()
    header = lines[2]
    for metric in ("mad", "mse", "dtssd", "grad", "conn"):
        assert catalog.spec(metric).header in header  # e.g. "MAD ↓ (×1e3)", "Grad ↓ (÷1e3)"
    good = next(line for line in lines if line.startswith("| good"))
    poor = next(line for line in lines if line.startswith("| poor"))
    assert "| **11.39** [10.59, 12.20] |" in good  # bold on the value only, interval beside it
    assert "| **0.044** |" in good and "| <u>0.063</u> [0.050, 0.070] |" in poor  # three decimals below 1
    assert "| <u>0.063</u> |" in good and "| **0.050** |" in poor  # Conn: ranked on the printed values
    assert CELL_CONVENTION in lines[0] and SYNTHETIC_CAPTION in lines[0] and "Grad 0.044" in lines[0]
    assert "Grad" not in _render("emotion", pd.DataFrame({"emotion_accuracy": [50.0], "n_ok": [1], "n_failed": [0]},
                                                         index=["m | Text"]), "markdown", synthetic=True)
    assert "shaped results" not in md
    latex = _render("matting", table, "latex", cis)
    assert r"MAD $\downarrow$ ($\times$1e3)" in latex and r"\textbf{11.39} [10.59, 12.20]" in latex
    assert "synthetic mini-grid" not in latex  # only said when the rows are synthetic


def _line(lines, start):
    return next(line for line in lines if line.startswith(start))


def test_report_prints_the_papers_rows_beside_stored_rows_in_the_boards_pools():
    """Table 11's published rows (paper_tables.json) beside stored rows: marked 'paper', printed as
    published, ranked with full-grid (submitted) runs only; synthetic runs are ranked among themselves."""
    import pandas as pd

    from hug_vis_dataset import catalog
    from hug_vis_dataset.datamodel.paper_tables import paper_frame
    from hug_vis_dataset.reporting.report import PAPER_CAPTION, _render, paper_rows

    published = paper_frame()
    published = published[published.table == 11]
    paper = paper_rows("matting")
    assert len(paper) == published.model.nunique()
    table = pd.DataFrame({"mad": [1.0, 50.0], "mse": [0.5, 30.0], "dtssd": [1.5, 9.0], "grad": [1.0, 40.0],
                          "conn": [1.0, 90.0], "n_ok": [4, 4], "n_failed": [0, 0]}, index=["mine", "other"])

    # Synthetic runs: their own pool. The paper's best stays bold, the synthetic best is bold too.
    md = _render("matting", table, "markdown", {}, synthetic=True,
                 origins={"mine": "synthetic", "other": "synthetic"}, paper=paper)
    lines = md.splitlines()
    assert lines[2].startswith("| Model | ") and "| Origin |" in lines[2]
    assert PAPER_CAPTION.format(table="Table 11") in lines[0]
    dtssd = published[published.metric == "dtssd"].sort_values("value")
    best, second = dtssd.iloc[0], dtssd.iloc[1]
    assert (best.model, best.text) == ("BiRefNet", "2.04")  # the paper's own best dtSSD
    assert f"| **{best.text}** |" in _line(lines, f"| {best.model} | paper |")
    assert f"| <u>{second.text}</u> |" in _line(lines, f"| {second.model} | paper |")
    mine = _line(lines, "| mine | synthetic demo |")
    assert "| **1.50** |" in mine and "| **1.00** |" in mine  # best of the synthetic pool
    assert "| <u>9.00</u> |" in _line(lines, "| other | synthetic demo |")
    # Every published value is printed exactly as in the paper (MSE 0.82, not 0.820).
    import re

    def plain(line: str) -> list[str]:
        return [cell.strip() for cell in re.sub(r"\*\*|</?u>", "", line).split("|")]

    columns = plain(lines[2])
    for row in published.itertuples():
        cells = plain(_line(lines, f"| {row.model} | paper |"))
        assert cells[columns.index(catalog.spec(row.metric).header)] == row.text
    assert "0.82" in plain(_line(lines, "| BiRefNet | paper |"))
    # Paper rows come before stored ones, in the paper's order.
    order = [line.split(" | ")[0][2:] for line in lines[4:]]
    assert order[:len(paper)] == list(dict.fromkeys(published.model)) and order[len(paper):] == ["mine", "other"]

    # A full-grid run is pooled with the paper: it takes the bold, the paper's best moves to second.
    md = _render("matting", table, "markdown", {}, origins={"mine": "submitted", "other": "submitted"}, paper=paper)
    lines = md.splitlines()
    assert "| **1.50** |" in _line(lines, "| mine | submitted |")
    assert f"| <u>{best.text}</u> |" in _line(lines, f"| {best.model} | paper |")
    assert f"| {second.text} |" in _line(lines, f"| {second.model} | paper |")
    assert "| 9.00 |" in _line(lines, "| other | submitted |")  # neither best nor second of the pool


def test_report_paper_rows_of_table_9_and_table_4():
    """Table 9's paper 'Real audio' first, the stored one heading its origin's rows after the paper's, both never
    ranked; Table 4's paper rows sit in their input-setting groups, ranked per setting with the submitted rows."""
    import pandas as pd

    from hug_vis_dataset.datamodel.paper_tables import paper_frame
    from hug_vis_dataset.reporting.report import _render, paper_rows
    from hug_vis_dataset.datamodel.results import REAL_AUDIO_LABEL

    published = paper_frame()
    table = pd.DataFrame({"utmos": [4.9, 1.0], "dnsmos": [4.9, 1.0], "speaker_similarity": [0.999, 0.1],
                          "n_ok": [4, 4], "n_failed": [0, 0]}, index=["real-audio", "clone"])
    lines = _render("voice_cloning", table, "markdown", {}, origins={"real-audio": "submitted", "clone": "submitted"},
                    paper=paper_rows("voice_cloning")).splitlines()
    rows = [line.split(" | ")[0][2:] for line in lines[4:]]
    paper_models = set(published[(published.table == 9)].model)
    assert rows[0] == "Real audio" and rows.index(REAL_AUDIO_LABEL) == max(i for i, r in enumerate(rows)
                                                                            if r in paper_models) + 1
    assert "**" not in _line(lines, "| Real audio | paper |")
    assert "**" not in _line(lines, f"| {REAL_AUDIO_LABEL} | submitted |")
    utmos = published[(published.table == 9) & (published.metric == "utmos") & (published.source != "reference")]
    top = utmos.sort_values("value").iloc[-1]
    assert f"**{top.text}**" in _line(lines, f"| {top.model} | paper |")  # 2.69, not the reference's values

    table = pd.DataFrame({"emotion_accuracy": [99.0, 1.0], "n_ok": [4, 4], "n_failed": [0, 0]},
                         index=["sys | Video", "sys | Text"])
    lines = _render("emotion", table, "markdown", {}, origins={"sys": "submitted"},
                    paper=paper_rows("emotion")).splitlines()
    video = published[(published.table == 4) & (published.input_setting == "Video")]
    text = published[(published.table == 4) & (published.input_setting == "Text")].sort_values("value")
    start = lines.index(next(line for line in lines if line.startswith("| *Video*")))
    block = lines[start + 1:start + 2 + len(video)]
    assert {line.split(" | ")[0][2:] for line in block} == set(video.model) | {"sys"}
    assert "**99.00**" in _line(block, "| sys |")  # best of the Video setting, above every paper row there
    start = lines.index(next(line for line in lines if line.startswith("| *Text*")))
    block = lines[start + 1:start + 2 + len(text)]
    assert f"**{text.iloc[-1].text}**" in _line(block, f"| {text.iloc[-1].model} |")
    assert "**" not in _line(block, "| sys |")  # 1.00 is the Text setting's worst


def test_rvm_values_carry_intervals_of_the_rvm_statistic():
    """Table 11's values follow the rvm protocol, and the interval beside each is the actor-clustered
    bootstrap of that statistic (on the demo grid the clip-mean interval [4.94, 4.94] had stood beside
    dtSSD 4.83): the table's intervals are rvm_intervals', each contains its printed value."""
    import numpy as np
    import pandas as pd

    from hug_vis_dataset.reporting.report import RVM_CAPTION, _render, task_tables
    from hug_vis_dataset.scoring.aggregate import rvm_intervals

    rng = np.random.default_rng(0)
    frames, rows = [], []
    for actor in range(1, 6):
        for script, length in ((1, 6), (2, 3 + actor)):
            clip = f"actor_{actor:04d}_happy_action_01_script_{script:03d}"
            for metric, first in (("mad", 0), ("dtssd", 1)):
                values = rng.gamma(2.0, (0.2 if metric == "mad" else 0.5) * actor, size=length - first)
                frames += [{"task": "matting", "model": "fair", "clip_id": clip, "metric": metric, "frame": first + i,
                            "value": float(v)} for i, v in enumerate(values)]
                rows.append({"task": "matting", "model": "fair", "clip_id": clip, "actor_id": actor, "metric": metric,
                             "value": float(values.mean()), "status": "ok", "error": ""})
    rows, frames = pd.DataFrame(rows), pd.DataFrame(frames)
    table, cis, _, protocol = task_tables(rows, frames, None, [], n_boot=200)["matting"]
    assert protocol == "rvm"
    expected = rvm_intervals(frames, n_boot=200, seed=0)
    for metric in ("mad", "dtssd"):
        ci = cis[("fair", metric)]
        assert (ci.low, ci.high) == (expected[("fair", metric)].low, expected[("fair", metric)].high)
        assert ci.estimate == pytest.approx(table.loc["fair", metric]) and ci.low < ci.estimate < ci.high
    md = _render("matting", table, "markdown", cis, protocol="rvm")
    line = next(x for x in md.splitlines() if x.startswith("| fair"))
    mad = cis[("fair", "mad")]
    dtssd = cis[("fair", "dtssd")]
    import re

    # One system alone in its comparison set is ranked against nothing (no bold); 5 actors: the small-sample mark.
    cells = re.findall(r"\| ([0-9.]+) \[([0-9.]+), ([0-9.]+)\] \?", line)
    assert [float(x) for c in cells for x in c] == pytest.approx(
        [table.loc["fair", "mad"], mad.low, mad.high, table.loc["fair", "dtssd"], dtssd.low, dtssd.high], abs=0.006)
    assert RVM_CAPTION in md.splitlines()[0]


def test_audit_pseudo_systems_are_printed_but_never_ranked_in_a_task_table():
    import pandas as pd

    from hug_vis_dataset.reporting.report import _render

    table = pd.DataFrame({"mad": [0.5, 3.0, 4.0], "n_ok": [2, 2, 2], "n_failed": [0, 0, 0]},
                         index=["audit@h264_crf23", "sys_a", "sys_b"])
    lines = _render("matting", table, "markdown", {}, synthetic=True).splitlines()
    assert "| audit@h264_crf23 | 2 | 0 | 0.500 |" in lines
    assert "| sys_a | 2 | 0 | **3.00** |" in lines and "| sys_b | 2 | 0 | <u>4.00</u> |" in lines


def test_reserved_rows_print_under_their_labels_when_the_models_are_categories():
    """The report reads the rows' text columns as categories (full-grid scale); the reserved rows' labels are not
    among them, so the task table must print them as plain text (a categorical column refuses a new label)."""
    import pandas as pd

    from hug_vis_dataset.reporting.report import _render
    from hug_vis_dataset.datamodel.results import BASELINE_LABEL, BASELINE_MODEL, REAL_AUDIO_LABEL, REAL_AUDIO_MODEL

    models = pd.CategoricalIndex([REAL_AUDIO_MODEL, BASELINE_MODEL, "clone_a", "clone_b"], name="model")
    table = pd.DataFrame({"utmos": [4.1, 1.2, 3.0, 2.5], "n_ok": [2] * 4, "n_failed": [0] * 4}, index=models)
    lines = _render("voice_cloning", table, "markdown", {}, synthetic=True).splitlines()
    assert any(line.startswith(f"| {REAL_AUDIO_LABEL} |") and "4.10" in line for line in lines), lines
    assert any(line.startswith(f"| {BASELINE_LABEL} |") and "1.20" in line for line in lines), lines
    assert not any(line.startswith(f"| {REAL_AUDIO_MODEL} |") for line in lines)

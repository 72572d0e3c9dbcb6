"""The joint human/metric measures give the same numbers through every door: the library
(studies.human_metric), the evaluate module ``human_metric_agreement`` (and analyses.run), ``hugvis report``
(its Findings block and CSV files) and the Space's Findings tab, on a small synthetic release whose three
vision-driven systems are scored by the runner and rated by the release's simulated raters."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
N_BOOT = 60
OPTIONS = dict(n_boot=N_BOOT, n_perm=50, seed=0)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A 12-clip release (3 actors), its simulated vision-driven systems scored by the runner, and the
    release's simulated MOS ratings and pairwise answers."""
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("joint")
    release = root / "rel"
    synthesize(release, actors=3, emotions=["Happy", "Sad"], actions=1, scripts=2, seconds=0.5, size=(32, 18),
               systems=True)
    for system in ("vis_good", "vis_fair", "vis_poor"):
        evaluate_submission("vision_driven", release / "simulated_systems" / "vision_driven" / system, system,
                            release, root / "results", progress=False)
    systems = release / "simulated_systems"
    return {"root": root, "release": release, "results": root / "results",
            "ratings": systems / "mos_ratings.csv", "pairwise": systems / "pairwise_ratings.csv"}


def _rows(world):
    from hug_vis_dataset.reporting.report import load_results

    return load_results([world["results"]])[0]


def test_library_module_and_analysis_door_give_the_same_numbers(world):
    import evaluate

    from hug_vis_dataset import analyses
    from hug_vis_dataset.studies.human_metric import human_metric_tables

    rows = _rows(world)
    library = human_metric_tables(rows, world["ratings"], world["pairwise"], **OPTIONS).records()
    stored = pd.concat([pd.read_parquet(p) for p in sorted(world["results"].glob("*/*/rows.parquet"))])
    module = evaluate.load(str(ROOT / "metrics" / "human_metric_agreement")).compute(
        **stored.to_dict("list"), ratings=str(world["ratings"]), preferences=str(world["pairwise"]), **OPTIONS)
    via_run = analyses.run("human_metric_agreement", stored.to_dict("list"), ratings=world["ratings"],
                           preferences=world["pairwise"], **OPTIONS)
    for other in (module, via_run):
        for name in ("summary", "joint", "pairs", "comparisons"):
            a, b = pd.DataFrame(library[name]), pd.DataFrame(other[name])
            pd.testing.assert_frame_equal(a, b, check_exact=True)
    summary = pd.DataFrame(library["summary"])
    assert set(summary["source"]) == {"MOS", "pairwise"} and set(summary["metric"]) == {"psnr", "ssim"}
    assert (summary["n_actors"] == 3).all() and (summary["n_systems"] == 3).all() and summary["exact"].all()
    assert summary["note"].str.contains("3 actors cannot reach").all()


def test_the_report_prints_and_writes_the_librarys_numbers(world, tmp_path):
    from hug_vis_dataset.reporting.joint import joint_wide, summary_frame
    from hug_vis_dataset.reporting.report import build_report
    from hug_vis_dataset.studies.human_metric import human_metric_tables

    report = build_report([world["results"]], tmp_path / "report", formats=("md", "tex", "html"), mos=world["ratings"],
                          preferences=world["pairwise"], n_boot=N_BOOT, figures=False)
    library = human_metric_tables(_rows(world), world["ratings"], world["pairwise"], n_boot=N_BOOT)
    written = pd.read_csv(tmp_path / "report" / "human_metric_agreement.csv", keep_default_na=False,
                          na_values=[""])
    for column in ("spa", "spa_low", "spa_high", "spa_top_k", "kendall_tau_b", "acc_eq"):
        assert written[column].tolist() == pytest.approx(library.summary[column].tolist(), abs=1e-12, nan_ok=True)
    text = report.markdown
    assert "### Automatic metrics and human judgment jointly, with uncertainty (finding ii)" in text
    for value in summary_frame(library)["SPA [95%]"]:
        assert value.replace("[", "\\[").replace("]", "\\]") in text
    joint = joint_wide(library, "vision_driven")
    page = (tmp_path / "report" / "joint_vision_driven.md").read_text(encoding="utf-8")
    assert all(cell in page and cell in text for cell in joint["PSNR"]) and "rank" in joint["PSNR"].iloc[0]
    tex = (tmp_path / "report" / "joint_vision_driven.tex").read_text(encoding="utf-8")
    html = (tmp_path / "report" / "joint_vision_driven.html").read_text(encoding="utf-8")
    assert tex.startswith("\\begin{table}") and all(cell in tex and cell in html for cell in joint["SSIM"])
    assert "From the paper's own Tables 5-10" in text and "needs per-clip rows" in text
    joint_csv = pd.read_csv(tmp_path / "report" / "joint_table.csv", keep_default_na=False, na_values=[""])
    assert joint_csv["value"].tolist() == pytest.approx(library.joint["value"].tolist(), abs=1e-12)


def test_the_space_findings_tab_shows_the_reports_joint_table(world, tmp_path):
    from hug_vis_dataset.reporting.joint import joint_wide
    from hug_vis_dataset.space.app import FINDINGS, Explorer
    from hug_vis_dataset.studies.human_metric import human_metric_tables

    explorer = Explorer(world["release"], world["results"], work_dir=tmp_path / "work")
    assert FINDINGS[3] == "Metrics and human judgment jointly (finding ii)"
    table, figure, message = explorer.findings(FINDINGS[3], "vision_driven")
    library = human_metric_tables(explorer.result_rows(), world["ratings"], tasks=("vision_driven",))
    pd.testing.assert_frame_equal(table.reset_index(drop=True), joint_wide(library, "vision_driven"))
    assert figure is None and "simulated raters" in message and "SPA" in message
    assert "No discordant pair." in message and "3 actors cannot reach p \\< 0.05" in message  # Markdown-escaped
    table, _, message = explorer.findings(FINDINGS[3], "matting")
    assert table.empty and "no generation task" in message


def test_a_module_call_without_ratings_names_what_it_needs(world):
    import evaluate

    from hug_vis_dataset.analyses import ModuleInputError

    stored = pd.concat([pd.read_parquet(p) for p in sorted(world["results"].glob("*/*/rows.parquet"))])
    module = evaluate.load(str(ROOT / "metrics" / "human_metric_agreement"))
    with pytest.raises(ModuleInputError, match="needs ratings"):
        module.compute(**stored.to_dict("list"))

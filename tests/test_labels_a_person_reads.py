"""Every label a person reads comes from the catalog: no key the toolkit defines on any surface.

The keys are collected from the package itself (``tests/label_scan.py``): every catalog metric and task name, the
fields of a catalog row, the MOS criteria, every column of stored rows and of every table the package declares (each
``*_COLUMNS`` constant), the statistics engine's result fields, the reserved model names and the clip id's spelling
(``actor_0001``, ``fearful``). Each surface is rendered from a store holding runs of every scored task (and the
reference rows), with the synthetic release's simulated raters behind Tables 6, 8 and 10, and everything it shows is
scanned:

* the Space: every component's label, choices and Markdown, every board (all origins), every finding of every task,
  every cross-task analysis, the per-clip viewer of every run, the clip inspector, an upload scored in the Score tab,
  and every figure drawn;
* the report (``--mos``): every line of every Markdown, HTML and LaTeX file, and every figure's titles, axes, ticks
  and legends;
* the command line: ``hugvis evaluate``, ``hugvis leaderboard show`` of every table, ``hugvis report``'s summary and
  the demo's line per run; and no Markdown escape is printed on a terminal.

A key a label lacks is added to the catalog (``hug_vis_dataset/column_labels.py``), never to this test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hug_vis_dataset import catalog
from label_scan import Scan, column_keys, strip_code, toolkit_keys


def machine_names(text: str) -> list[str]:
    """The keys in ``text`` outside code (backticks, fenced blocks, paths) (the browser tests scan what Chromium
    renders with it).

    >>> machine_names("Table 5 `hugvis evaluate audio_driven` mad_band_5 and Afraid, n_ok")
    ['mad_band_5', 'n_ok']
    >>> machine_names("clip actor_0001_fearful_action_01_script_001")
    ['actor_0001', 'fearful']
    """
    return Scan().found_in_prose(text)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from hug_vis_dataset.datamodel.results import REAL_AUDIO_MODEL, REFERENCE_MODEL
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize
    from hug_vis_dataset.tasks import REAL_AUDIO

    root = tmp_path_factory.mktemp("labels")
    release = root / "release"
    synthesize(release, actors=2, emotions=["Happy", "Afraid"], actions=1, scripts=1, seconds=0.3, size=(48, 32),
               seed=4)
    systems = release / "simulated_systems"
    results = root / "results"
    for task in ("matting", "vision_driven", "voice_cloning", "emotion", "audio_driven"):
        for system in sorted(p for p in (systems / task).iterdir() if p.is_dir())[:2]:
            evaluate_submission(task, system, system.name, release, results, progress=False)
    for system in sorted(p for p in (systems / "matting").iterdir() if p.is_dir())[:2]:
        evaluate_submission("matting_boundary", system, system.name, release, results, progress=False)
    evaluate_submission("voice_cloning", REAL_AUDIO, REAL_AUDIO_MODEL, release, results, progress=False)
    evaluate_submission("motion", "reference", REFERENCE_MODEL, release, results, progress=False)
    return release, results


@pytest.fixture()
def figures(monkeypatch):
    """Every Matplotlib figure saved while the test runs."""
    import matplotlib.figure

    drawn: list = []
    save = matplotlib.figure.Figure.savefig

    def recording(self, *args, **kwargs):
        drawn.append(self)
        return save(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", recording)
    return drawn


def _found(scan: Scan) -> dict:
    return scan.report()


# ----------------------------------------------------------------------------- the keys and their labels
def test_every_column_the_toolkit_defines_has_a_label_in_the_catalog():
    """One source of truth: a column declared anywhere in the package reads as the catalog's label (a metric's or a
    MOS criterion's own, or :data:`~hug_vis_dataset.catalog.COLUMN_LABELS`), and no label is itself a key."""
    labels = {**catalog.COLUMN_LABELS, **catalog.MOS_CRITERIA, **{m.name: m.label for m in catalog.METRICS}}
    unlabelled = sorted(k for k in column_keys() if k not in labels)
    assert unlabelled == [], f"add labels to hug_vis_dataset/column_labels.py: {unlabelled}"
    keys = toolkit_keys()
    assert [(k, v) for k, v in labels.items() if v in keys] == []
    assert all(catalog.label_of(k) != k for k in column_keys())
    assert all(catalog.task(t).label not in keys for t in catalog.task_names())


def test_the_scan_finds_keys_where_a_person_reads_them():
    """The scan itself: a key in prose, a key as a header, a cell, a heading or a bold lead-in, and a key drawn on a
    figure are found; code, paths and labels are not."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    scan = Scan()
    scan.markdown("md", "## emotion\n\n**vision_driven**: the table\n\n| task | Acc. (%) |\n| --- | --- |\n"
                        "| Multimodal emotion recognition | 1 |\n\nrvm protocol; run `hugvis evaluate n_ok`; "
                        "fig8_emotion_difficulty.png; Emotion Naturalness")
    scan.frame("frame", pd.DataFrame({"Model": ["reference", "a"], "criterion": ["lip_sync", "ID Similarity"]}))
    fig, ax = plt.subplots()
    ax.bar(["mad", "MSE"], [1, 2])
    ax.set_xlabel("metric")
    scan.figure("figure", fig)
    plt.close(fig)
    assert sorted(scan.found) == ["criterion", "emotion", "lip_sync", "mad", "metric", "reference", "rvm", "task",
                                  "vision_driven"]
    assert strip_code("see /srv/results/matting/m/summary.json and `n_ok`").split() == ["see", "and"]


# ----------------------------------------------------------------------------- the Space
def _scan_app(scan: Scan, demo) -> None:
    for block in demo.config["components"]:
        props = block.get("props", {})
        where = f"component {props.get('elem_id') or block.get('type')}"
        scan.label(where, props.get("label") or "", props.get("info") or "", props.get("placeholder") or "")
        if block.get("type") in ("markdown", "html"):
            scan.markdown(where, re.sub(r"<[^>]+>", " ", str(props.get("value") or "")))
        for choice in props.get("choices") or []:
            scan.label(f"choice of {props.get('label')}", choice[0] if isinstance(choice, (list, tuple)) else choice)


def test_the_space_shows_no_key(world, tmp_path, figures):
    from browser_support import matting_zip
    from hug_vis_dataset.space.app import Explorer, build_app
    from hug_vis_dataset.space.explorer import ANALYSES, FINDINGS, SCORED_TASKS
    from hug_vis_dataset.space.ui import board_html

    release, results = world
    store = tmp_path / "results"  # the Score tab adds a run: a copy of the store
    import shutil

    shutil.copytree(results, store)
    explorer = Explorer(release, store, work_dir=tmp_path / "work")
    scan = Scan()
    _scan_app(scan, build_app(explorer))
    for label in explorer.table_labels():
        for all_raters in (False, True):
            frame, notes, _ = explorer.leaderboard(label, ["paper", "submitted", "synthetic demo", "grid subset"],
                                                   all_raters=all_raters)
            scan.frame(f"board {label[:8]}", frame)
            scan.markdown(f"board notes {label[:8]}", notes)
            scan.markdown(f"board page {label[:8]}", re.sub(r"<[^>]+>", " | ", board_html(frame)))
    for finding in FINDINGS:
        for task in (*SCORED_TASKS, "matting_boundary"):
            frame, _, message = explorer.findings(finding, task)
            scan.frame(f"findings {finding[:20]} / {task}", frame)
            scan.markdown(f"findings {finding[:20]} / {task}", message)
    for analysis in ANALYSES:
        frame, _, message = explorer.crosstask(analysis)
        scan.frame(f"cross-task {analysis}", frame)
        scan.markdown(f"cross-task {analysis}", message)
    for run in explorer.viewer_runs():
        scan.label("viewer run", run)
        listed = explorer.viewer_clips(run)
        scan.frame(f"viewer {run}", listed.table)
        scan.markdown(f"viewer {run}", listed.note)
        for clip in listed.ids[:2]:
            view = explorer.viewer_view(run, clip, 1, listed.metric)
            scan.markdown(f"viewer clip {run}", view.text)
            scan.label(f"viewer curve {run}", view.curve_title)
    choices = explorer.choices()  # a choice is a value or a (shown, value) pair: the inspector gets the value
    first = [c[1] if isinstance(c, tuple) else c for c in (choices[k][0] for k in ("actor", "emotion", "action",
                                                                                    "script"))]
    scan.markdown("inspector", explorer.inspect(*first)[-1])
    upload = matting_zip(release, tmp_path / "up.zip", "matte_good", 1)
    scan.markdown("score pre-check", explorer.check_upload("matting", str(upload)))
    message, table, rows = explorer.score("matting", "one_clip", str(upload))
    assert message.startswith("Scored "), message
    scan.markdown("score message", message)
    scan.frame("score table", table)
    scan.frame("score rows", rows)
    assert figures, "no figure was drawn"
    for i, fig in enumerate(figures):
        scan.figure(f"figure {i}", fig)
    assert _found(scan) == {}


# ----------------------------------------------------------------------------- the report
def test_the_report_and_its_figures_show_no_key(world, tmp_path, figures):
    from hug_vis_dataset.reporting.report import build_report

    release, results = world
    ratings = release / "simulated_systems" / "mos_ratings.csv"
    report = build_report([results], tmp_path / "report", formats=("md", "tex", "html"), n_boot=20, mos=ratings)
    assert report.mos_tables and figures
    scan = Scan()
    for path in sorted((tmp_path / "report").rglob("*")):
        if path.suffix in (".md", ".html", ".tex"):
            text = path.read_text(encoding="utf-8")
            if path.suffix == ".html":
                text = re.sub(r"<[^>]+>", " | ", re.sub(r"<(style|script)\b.*?</\1>", " ", text, flags=re.S))
            if path.suffix == ".tex":
                text = re.sub(r"\\[a-z]+\{?|[{}$]", " ", text.replace("\\_", "_")).replace("&", "|")
            scan.markdown(path.name, text)
    for i, fig in enumerate(figures):
        scan.figure(f"figure {i}", fig)
    assert _found(scan) == {}


# ----------------------------------------------------------------------------- the command line
def test_the_command_line_shows_no_key(world, tmp_path, capsys):
    from hug_vis_dataset.cli import main
    from hug_vis_dataset.demo.pipeline import _outcome
    from hug_vis_dataset.scoring.runner import evaluate_submission

    release, results = world
    system = sorted(p for p in (release / "simulated_systems" / "voice_cloning").iterdir() if p.is_dir())[-1]
    scan = Scan()
    outputs = {}
    assert main(["evaluate", "voice_cloning", "--predictions", str(system), "--model", "cli_run", "--dataset",
                 str(release), "--out", str(tmp_path / "res"), "--no-progress"]) == 0
    outputs["evaluate"] = "\n".join(capsys.readouterr())
    result = evaluate_submission("voice_cloning", system, "again", release, tmp_path / "res2", progress=False)
    outputs["demo's line of a run"] = _outcome(result)
    for table in range(4, 12):
        assert main(["leaderboard", "show", str(results), "--table", str(table), "--show", "synthetic",
                     "--release", str(release)]) == 0
        outputs[f"leaderboard show --table {table}"] = capsys.readouterr().out
    assert main(["report", str(results), "--out", str(tmp_path / "report"), "--n-boot", "0", "--no-figures",
                 "--quiet", "--mos", str(release / "simulated_systems" / "mos_ratings.csv")]) == 0
    outputs["report"] = capsys.readouterr().out
    for where, text in outputs.items():
        scan.markdown(where, text)
        # a terminal shows what is printed: no Markdown escape (\`, \[, \*) in front of a character
        assert not re.search(r"\\[`\[\]*_<>#!&~]", text), (where, re.findall(r".{30}\\[`\[\]*_<>#!&~].{10}", text))
    assert "UTMOS" in outputs["evaluate"] and "cer_edits" not in outputs["evaluate"]
    assert "not computed here: UTMOS, CER" in outputs["demo's line of a run"]
    assert "Table 10: Voice cloning, MOS" in outputs["report"]
    assert _found(scan) == {}

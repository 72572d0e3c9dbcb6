"""Every label a person reads comes from the catalog or one table of display names: no machine key on a page.

A store of runs of every scored task (and the reference rows) is read by each surface a person reads, and every
text it shows is scanned for the catalog's machine names (``audio_driven``, ``mad_band_5``, ``emotion_accuracy``,
``motion_u`` ...), the raw column keys of the analyses (``next_model``, ``ci_low``, ``p_value`` ...) and the emotion
spelling of clip ids (``fearful``, where every table says Afraid) and the stored key of the real recordings' row
(``real-audio``, printed "Real audio (reference)"):

* the Space: every component's label, every dropdown's shown choices, every Markdown text, and the tables and
  notes the Leaderboard, Findings and Cross-task tabs and the per-clip viewer produce;
* the report: its headings and every table's header row (report.md and each table file);
* the figures: every title and axis label drawn.

Code (a command in backticks, a file name) is what a person types or opens, not a label: it is not scanned.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hug_vis_dataset import catalog

RAW_COLUMNS = ("next_model", "ci_low", "ci_high", "p_value", "n_actors", "n_clips", "metric_display", "input_setting")
MACHINE = sorted({m.name for m in catalog.METRICS if "_" in m.name} | {t for t in catalog.task_names() if "_" in t}
                 | set(RAW_COLUMNS) | {"fearful", "real-audio"}, key=len, reverse=True)
PATTERN = re.compile(r"(?<![\w./-])(" + "|".join(map(re.escape, MACHINE)) + r")(?![\w./-])")


def machine_names(text: str) -> list[str]:
    """The machine names in ``text`` outside code (backticks, fenced blocks).

    >>> machine_names("Table 5 `hugvis evaluate audio_driven` mad_band_5 and Afraid")
    ['mad_band_5']
    >>> machine_names("clip actor_0001_fearful_action_01_script_001")
    ['fearful']
    """
    text = re.sub(r"```.*?```", "", str(text), flags=re.S)
    text = re.sub(r"`[^`]*`", "", text)
    # a clip id spells the emotion "fearful" inside it (actor_0001_fearful_action_01_script_001): shown as a clip,
    # it is "actor 1 · Afraid · ..." (viewer.clip_display)
    return PATTERN.findall(text) + ["fearful"] * len(re.findall(r"_fearful_", text))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    from hug_vis_dataset.results import REAL_AUDIO_MODEL, REFERENCE_MODEL
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


def _frame_texts(frame) -> list[str]:
    if frame is None or not hasattr(frame, "columns"):
        return []
    out = [str(c) for c in frame.columns] + [str(i) for i in getattr(frame.index, "names", []) if i]
    return out + [str(v) for v in frame.astype(str).to_numpy().ravel()]


def test_the_space_shows_no_machine_name(world, tmp_path):
    from hug_vis_dataset.space.app import Explorer, build_app
    from hug_vis_dataset.space.explorer import ANALYSES, FINDINGS, SCORED_TASKS

    release, results = world
    explorer = Explorer(release, results, work_dir=tmp_path / "work")
    found: dict[str, list[str]] = {}

    def scan(where: str, *texts) -> None:
        for text in texts:
            for name in machine_names(text):
                found.setdefault(name, []).append(where)

    demo = build_app(explorer)
    for block in demo.config["components"]:
        props = block.get("props", {})
        scan(f"component {props.get('elem_id') or block.get('type')}", props.get("label") or "",
             props.get("info") or "", props.get("value") if block.get("type") == "markdown" else "")
        for choice in props.get("choices") or []:
            scan(f"choice of {props.get('label')}", choice[0] if isinstance(choice, (list, tuple)) else choice)
    for label in explorer.table_labels():
        frame, notes, _ = explorer.leaderboard(label, ["paper", "synthetic demo"])
        scan(f"board {label}", *_frame_texts(frame), notes)
    for finding in FINDINGS[:3]:
        for task in SCORED_TASKS:
            frame, _, message = explorer.findings(finding, task)
            scan(f"findings {finding} / {task}", *_frame_texts(frame), message)
    for analysis in ANALYSES:
        frame, _, message = explorer.crosstask(analysis)
        scan(f"cross-task {analysis}", *_frame_texts(frame), message)
    for run in explorer.viewer_runs():
        scan("viewer run", run)
        table, metrics, _, ids, note, order = explorer.viewer_clips(run)
        scan(f"viewer {run}", *_frame_texts(table), note)
    assert found == {}, {k: sorted(set(v)) for k, v in found.items()}


def test_the_report_and_its_figures_show_no_machine_name(world, tmp_path, monkeypatch):
    import matplotlib.figure

    from hug_vis_dataset.reporting.report import build_report

    release, results = world
    titles: list[str] = []
    save = matplotlib.figure.Figure.savefig

    def recording(self, *args, **kwargs):
        suptitle = getattr(self, "_suptitle", None)
        titles.extend([suptitle.get_text()] if suptitle is not None else [])
        for ax in self.axes:
            titles.extend([ax.get_title(), ax.get_xlabel(), ax.get_ylabel()])
        return save(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", recording)
    ratings = release / "simulated_systems" / "mos_ratings.csv"
    report = build_report([results], tmp_path / "report", formats=("md",), n_boot=0, mos=ratings)
    assert titles, "no figure was drawn"
    found: dict[str, list[str]] = {}
    texts = [("figure", t) for t in titles]
    for path in sorted((tmp_path / "report").rglob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("#"):
                texts.append((f"{path.name} heading", line))
        lines = path.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):  # a table's header row: the line above its |---| rule
            if i + 1 < len(lines) and re.fullmatch(r"\|?[\s:|-]+\|?", lines[i + 1] or "x") and "|" in line:
                texts.append((f"{path.name} table header", line))
    for where, text in texts:
        for name in machine_names(text):
            found.setdefault(name, []).append(where)
    assert found == {}, {k: sorted(set(v)) for k, v in found.items()}
    assert report.markdown

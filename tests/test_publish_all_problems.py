"""``hugvis publish`` lists every problem of every folder in one pass (issue 35, "publishing").

Four module folders, each broken a different way (no module file, a card the Hub would reject, a stale
requirement pin, a symbolic link), beside two sound ones: one run names all five problems, one line each
naming its folder, its file and the fix, then a count line; exit 2 and nothing written.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hug_vis_dataset import __version__
from hug_vis_dataset import publish as pub

REPO = Path(__file__).resolve().parents[1]
REGENERATE = "`python -m hug_vis_dataset.publish.module_folders metrics`"


@pytest.fixture
def metrics(tmp_path) -> Path:
    root = tmp_path / "metrics"
    for name in ("psnr", "ssim", "mad", "mse", "grad", "conn"):
        shutil.copytree(REPO / "metrics" / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "psnr" / "psnr.py").unlink()  # 1. no module file
    card = root / "ssim" / "README.md"  # 2. + 3. a card the Hub rejects: unknown sdk, no title
    card.write_text(card.read_text(encoding="utf-8").replace("sdk: gradio", "sdk: gradoi")
                    .replace("title: HUG-VIS SSIM\n", ""), encoding="utf-8")
    (root / "mad" / "requirements.txt").write_text("hug-vis[hub]==0.0.1\n")  # 4. generated for another version
    os.symlink(tmp_path / "secret.txt", root / "mse" / "extra.txt")  # 5. a link
    (tmp_path / "secret.txt").write_text("not to be published\n")
    return root


def expected_lines(metrics: Path) -> list[str]:
    return [
        f"{metrics / 'mad' / 'requirements.txt'} does not pin hug-vis=={__version__}",
        f"{metrics / 'mse'}: {metrics / 'mse' / 'extra.txt'}",
        f"{metrics / 'psnr'} has no module file psnr.py",
        f"{metrics / 'ssim' / 'README.md'}: sdk 'gradoi' is not one of",
        f"{metrics / 'ssim' / 'README.md'}: no title",
    ]


def check_report(lines: "list[str]", metrics: Path) -> None:
    problems, count = lines[:-1], lines[-1]
    assert len(problems) == 5, lines
    for want in expected_lines(metrics):
        assert sum(want in line for line in problems) == 1, (want, problems)
    fixes = {"mad": "write it unversioned", "mse": "replace each link by the file it points to",
             "psnr": REGENERATE, "ssim": REGENERATE}
    for line in problems:  # every line names its folder and says what to do
        folder = next(name for name in fixes if str(metrics / name) in line)
        assert fixes[folder] in line, line
    assert not any(f"{metrics / name}" in line for line in problems for name in ("grad", "conn"))
    assert count == "not fit to publish: 5 problem(s) in 4 folder(s); fix each one above and run again"


def test_materialise_lists_every_problem_of_every_folder(metrics, tmp_path):
    with pytest.raises(pub.PublishProblems) as caught:
        pub.materialise(tmp_path / "out", metrics_root=metrics, explorer_dir=tmp_path / "none", include_dataset=False)
    check_report(str(caught.value).splitlines(), metrics)
    assert caught.value.folders == 4 and len(caught.value.problems) == 5
    assert not (tmp_path / "out").exists()  # refused before anything is written


CLI = """
import functools, sys
from hug_vis_dataset import publish as pub
from hug_vis_dataset.cli import main
pub.materialise = functools.partial(pub.materialise, metrics_root={metrics!r}, explorer_dir={none!r})
sys.exit(main(["publish", "--dry-run", {out!r}, "--no-dataset"]))
"""


def test_the_command_prints_one_line_per_problem_then_the_count(metrics, tmp_path):
    # The real command in a subprocess; only its metrics folder points at these folders.
    code = CLI.format(metrics=str(metrics), none=str(tmp_path / "none"), out=str(tmp_path / "out"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)})
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stdout == ""
    lines = done.stderr.splitlines()
    assert all(line.startswith("hugvis publish: ") for line in lines)
    check_report([line.removeprefix("hugvis publish: ") for line in lines], metrics)
    assert not (tmp_path / "out").exists()
    # Fixed as the lines say, the same folders publish.
    (metrics / "mse" / "extra.txt").unlink()
    shutil.rmtree(metrics / "psnr")
    shutil.copy(REPO / "metrics" / "ssim" / "README.md", metrics / "ssim" / "README.md")
    (metrics / "mad" / "requirements.txt").write_text("hug-vis[hub]\n")
    targets = pub.materialise(tmp_path / "out", metrics_root=metrics, explorer_dir=tmp_path / "none",
                              include_dataset=False)
    assert [t.repo_id for t in targets] == ["hugvis/conn", "hugvis/grad", "hugvis/mad", "hugvis/mse", "hugvis/ssim"]


def test_a_sound_tree_has_no_problem():
    assert pub.source_problems() == ([], 0)
    assert functools.reduce(lambda a, b: a and b, [(f / f"{f.name}.py").is_file() for f in pub.metric_module_dirs()])

"""The explorer in a real browser: Debian's headless Chromium driven through Playwright.

Starts the app on 127.0.0.1 (free port) over a tiny synthetic release with stored results, then
checks that the page loads, every tab renders, the inspector shows a clip, an uploaded zip is
scored, and saves a screenshot.
"""

from __future__ import annotations

import os
import socket
import zipfile
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,  # about 55 s on 2 shared cores: Chromium start, synthesis, scoring
    pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason=f"Chromium is not installed at {CHROMIUM} "
                       "(Debian package 'chromium'; `make` installs it when run as root)"),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.space.app import Explorer, build_app
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("space")
    release = root / "release"
    synthesize(release, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.5, size=(64, 36))
    results = root / "results"
    for system in ("matte_good", "matte_poor"):
        evaluate_submission("matting", release / "simulated_systems" / "matting" / system, system, release, results,
                            progress=False)
    explorer = Explorer(release, results, work_dir=root / "work")
    demo = build_app(explorer)
    port = _free_port()
    _, url, _ = demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                            allowed_paths=[str(release), str(root / "work"), str(results)])
    yield url, release, root, explorer
    demo.close()


def test_explorer_in_chromium(served, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    url, release, root, explorer = served
    assert url.startswith("http://127.0.0.1:")
    upload = tmp_path / "predictions.zip"
    system = release / "simulated_systems" / "matting" / "matte_good"
    with zipfile.ZipFile(upload, "w") as archive:
        for path in sorted(system.rglob("*.png")):
            archive.write(path, f"matte_good/{path.relative_to(system).as_posix()}")

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(30_000)
        # expect() has its own 5 s default; on 2 busy cores an upload can take longer to show.
        expect.set_options(timeout=30_000)
        page.goto(url)
        expect(page.get_by_text("HUG-VIS explorer").first).to_be_visible()

        # Leaderboards: the paper's Table 4 is shown (the grid renders the rows in view).
        board = page.locator("#leaderboard")
        expect(board.get_by_text("Former-DFER").first).to_be_visible()
        expect(board.get_by_text("11.42").first).to_be_visible()

        # Every tab renders its first control.
        for tab, marker in [("Cross-task", "Run analysis"), ("Clip inspector", "Show clip"),
                            ("Score a submission", "Score"), ("MOS study", "Submit rating"),
                            ("Leaderboards", None)]:
            page.get_by_role("tab", name=tab).click()
            if marker:
                expect(page.get_by_role("button", name=marker, exact=True)).to_be_visible()

        # Cross-task: Fig. 8 from the stored matting rows.
        page.get_by_role("tab", name="Cross-task").click()
        page.get_by_role("button", name="Run analysis").click()
        expect(page.get_by_text("rows").first).to_be_visible()

        # Clip inspector: the chosen clip's text, matte and overlay appear.
        page.get_by_role("tab", name="Clip inspector").click()
        page.get_by_role("button", name="Show clip").click()
        expect(page.locator("#inspector-text")).to_contain_text("actor_0001_happy_action_01_script_001")
        expect(page.locator("#inspector-text")).to_contain_text("Showing frame 0 of 15")
        expect(page.locator("#inspector-matte img").first).to_be_visible()
        expect(page.locator("#inspector-overlay img").first).to_be_visible()
        expect(page.locator("#inspector-video video").first).to_be_attached()

        # Score a submission: upload the zip, score it, read the table.
        page.get_by_role("tab", name="Score a submission").click()
        page.locator("#score-upload input[type=file]").set_input_files(str(upload))
        expect(page.locator("#score-upload").get_by_text("predictions.zip").first).to_be_visible()
        page.get_by_role("button", name="Score", exact=True).click()
        expect(page.locator("#score-message")).to_contain_text("2 clip(s) ok of 2", timeout=45_000)
        expect(page.locator("#score-table")).to_contain_text("my_model")
        expect(page.locator("#score-table")).to_contain_text("dtssd")

        shot = tmp_path / "explorer.png"
        page.screenshot(path=str(shot), full_page=True)
        browser.close()
    assert shot.stat().st_size > 10_000
    keep = os.environ.get("HUGVIS_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / "explorer.png").write_bytes(shot.read_bytes())

"""Issue 38 in a real browser (Debian's headless Chromium through Playwright): what a user sees is right.

One tiny synthetic release (one actor, two emotions, 0.5 s clips) per module, one explorer Space over a
results store holding runs of several tasks and a ratings log with a careless rater, one rater page
over a pairwise study; each test drives them as a user would and checks what the page shows.
"""

from __future__ import annotations

import json
import os
import re
import socket
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,  # Chromium start, synthesis, a few scored runs, two apps
    pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason=f"Chromium is not installed at {CHROMIUM} "
                       "(Debian package 'chromium'; `make` installs it when run as root)"),
]
TIMEOUT_MS = 45_000
AUDIO = "audio_driven"
#: A component whose event failed shows Gradio's status tracker with this span.
ERROR_BADGE = "[data-testid=status-tracker] .error"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("issue38")
    synthesize(root / "release", actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.5,
               size=(64, 36))
    return root


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        yield chromium
        chromium.close()


def _page(browser, url: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    return page


# ----------------------------------------------------------------------------- item 1: the rater page
@pytest.fixture(scope="module")
def rater_site(release):
    """``hugvis space --rater --study pairwise.json``: the rater page of a pairwise study."""
    from hug_vis_dataset.release import Release
    from hug_vis_dataset.space.mos_study import MosStudy, build_rater_app

    rel = release / "release"
    systems = sorted(p.name for p in (rel / "simulated_systems" / AUDIO).iterdir() if p.is_dir())
    study_file = release / "pairwise.json"
    study_file.write_text(json.dumps({"name": "issue38-pairwise", "protocol": "pairwise",
                                      "tasks": {AUDIO: {"systems": systems}}, "clips": "all", "ratings_per_item": 1,
                                      "items_per_session": 3, "seed": 2}))
    study = MosStudy(Release(rel), rel, release / "rater" / "ratings.jsonl", study_path=study_file)
    demo = build_rater_app(study)
    _, url, _ = demo.launch(server_name="127.0.0.1", server_port=_free_port(), prevent_thread_lock=True, quiet=True,
                            allowed_paths=[str(release)])
    yield {"url": url, "study": study}
    demo.close()


def test_rater_page_loads_without_an_error_and_shows_the_coverage(rater_site, browser):
    """Item 1: the page's load event (its only output the coverage) used to fail with a red Error badge."""
    from playwright.sync_api import expect

    page = _page(browser, rater_site["url"])
    page.get_by_text("Study coverage").click()
    coverage = page.locator("#mos-coverage")
    expect(coverage).to_contain_text("Coverage: 6 items, target 1 ratings each")
    page.wait_for_timeout(1500)  # the load event's answer has come back
    expect(page.locator(ERROR_BADGE)).to_have_count(0)
    assert "Error" not in page.locator("body").inner_text()
    # The load reads the coverage fresh: after one answer a new page shows it.
    page.locator("#mos-rater textarea").fill("rater_a")
    page.get_by_role("button", name="Start / resume").click()
    expect(page.locator("#mos-progress")).to_contain_text("item 1 of 3")
    for i, choice in enumerate(("A", "Tie", "B")):
        page.locator(f'#mos-choice-{i} input[value="{choice}"]').check()
    page.get_by_role("button", name="Submit answer").click()
    expect(page.locator("#mos-message")).to_contain_text("Stored your answer")
    page.close()
    page = _page(browser, rater_site["url"])
    page.get_by_text("Study coverage").click()
    expect(page.locator("#mos-coverage")).to_contain_text("1 rater(s), 1 session(s), 1 answer(s)")
    page.wait_for_timeout(1500)
    expect(page.locator(ERROR_BADGE)).to_have_count(0)
    page.close()

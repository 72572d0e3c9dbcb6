"""The explorer in headless Chromium, part two: the per-clip viewer, and no debug text or server
path on any tab (the app and browser fixtures are those of ``tests/test_browser.py``)."""

from __future__ import annotations

import re

import pytest

from test_browser import TIMEOUT_MS, _choose, _page, browser, site  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: What must never reach a page: Python reprs and absolute server paths.
DEBUG = re.compile(r"\w+Store\(|\{'\w+': |\[\'|<\w[\w.]* object at 0x|Traceback|(?<![\w.])/(?:tmp|work|home|root|srv|"
                   r"usr|var)/")
TABS = ("Leaderboards", "Cross-task", "Findings", "Clip inspector", "Per-clip viewer", "Score a submission",
        "MOS study")


def _assert_clean(page, root: str, where: str) -> None:
    text = page.locator("body").inner_text()
    assert root not in text, f"{where}: server path on the page"
    found = DEBUG.search(text)
    assert found is None, f"{where}: debug text {found.group(0)!r} in {text[max(0, found.start() - 80):found.end() + 80]!r}"


def test_no_debug_text_or_server_path_on_any_tab(site, browser):
    from playwright.sync_api import expect

    page = _page(browser, site["url"])
    root = str(site["root"])
    for tab in TABS:
        page.get_by_role("tab", name=tab).click()
        page.wait_for_timeout(300)
        _assert_clean(page, root, tab)
    # The results a user asks for: the Findings' tables and methods, the cross-task figures.
    page.get_by_role("tab", name="Findings").click()
    for finding, said in (("Variance decomposition (finding iv)", "balanced grid (each factor"),
                          ("Significance between neighbours", "neighbour pairs")):
        _choose(page, "findings-finding", finding)
        page.get_by_role("button", name="Measure").click()
        expect(page.locator("#findings-message")).to_contain_text(said)
        page.wait_for_timeout(500)
        _assert_clean(page, root, finding)
    expect(page.locator("#findings-message")).not_to_contain_text("{")
    page.get_by_role("tab", name="Cross-task").click()
    page.get_by_role("button", name="Run analysis").click()
    expect(page.locator("#ct-message")).to_contain_text("rows")
    _assert_clean(page, root, "Cross-task, Fig. 8")
    page.close()


def test_viewer_lists_clips_worst_first_follows_the_frame_and_shows_output_beside_reference(site, browser):
    from playwright.sync_api import expect

    from hug_vis_dataset import catalog
    from hug_vis_dataset.leaderboard import LocalResultsStore
    from hug_vis_dataset.space.viewer import clip_display, find_run, worst_first_rows

    page = _page(browser, site["url"])
    page.get_by_role("tab", name="Per-clip viewer").click()
    expect(page.locator("#viewer-message")).to_contain_text("Choose a stored run")  # a hint before any choice
    _choose(page, "viewer-run", "Video matting / matte_poor")
    expect(page.locator("#viewer-message")).to_contain_text("worst first by MAD ↓ (×1e3)")
    run = find_run(LocalResultsStore(site["results"]).runs(), "Video matting / matte_poor")
    want = [clip_display(c) for c in worst_first_rows(run.rows, "mad")["clip_id"]]  # as the page shows clips
    table = page.locator("#viewer-clips")
    expect(table).to_contain_text(want[0])
    expect(table).to_contain_text(want[-1])
    text = table.inner_text()
    positions = [text.find(c) for c in want]
    assert -1 not in positions and positions == sorted(positions), (want, text)  # the stored rows' worst-first order
    expect(page.locator("#viewer-clip input").first).to_have_value(want[0])
    expect(page.locator("#viewer-reference img").first).to_be_visible()
    expect(page.locator("#viewer-output img").first).to_be_visible()  # the model's matte beside the reference
    expect(page.locator("#viewer-error img").first).to_be_visible()
    expect(page.locator("#viewer-text")).to_contain_text(f"clip {want[0]}")
    expect(page.locator("#viewer-text")).to_contain_text("frame 0 of")
    before = page.locator("#viewer-output img").first.get_attribute("src")
    number = page.locator("#viewer-frame input[type=number]")
    number.fill("5")
    number.press("Enter")
    expect(page.locator("#viewer-text")).to_contain_text("frame 5 of")  # follows the slider
    expect(page.locator("#viewer-output img").first).not_to_have_attribute("src", before or "")
    assert catalog.spec("mad").header in page.locator("#viewer-clips").inner_text()
    page.close()

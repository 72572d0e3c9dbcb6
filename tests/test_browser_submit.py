"""The explorer's Submit tab in headless Chromium, against the HTTP Hub stand-in.

A request filed from the form lands in the requests repo (through the real ``huggingface_hub``
client) in the signed-in user's name, the status table shows it PENDING at place 1, a duplicate
and a missing repo are refused in one line, and text from request files is shown escaped.
"""

from __future__ import annotations

import json
import os

import pytest

from browser_support import NEEDS_CHROMIUM, free_port, launch_chromium

from hub_server import serve_hub
from test_browser import TIMEOUT_MS, _choose

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    NEEDS_CHROMIUM,
]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    from huggingface_hub import HfApi

    from hug_vis_dataset.leaderboard.requests import RequestsRepo
    from hug_vis_dataset.space.app import Explorer, app_kwargs, build_app
    from hug_vis_dataset.space.submit_tab import SubmitDesk
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("submit")
    release = root / "release"
    synthesize(release, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.3, size=(32, 18))
    good = release / "simulated_systems" / "matting" / "matte_good"
    with serve_hub() as (url, state):
        state.tokens["alice-token"] = "alice"
        state.create("alice/good", "dataset", {str(p.relative_to(good)): p.read_bytes()
                                               for p in good.rglob("*") if p.is_file()})
        state.create("hugvis/requests")
        explorer = Explorer(release, root / "results", work_dir=root / "work")
        explorer.desk = SubmitDesk(RequestsRepo("hugvis/requests", api=HfApi(endpoint=url, token="alice-token")),
                                   results=explorer.store)
        demo = build_app(explorer)
        _, app_url, _ = demo.launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True,
                                    quiet=True, app_kwargs=app_kwargs(explorer))
        yield {"url": app_url, "state": state, "desk": explorer.desk}
        demo.close()


def test_a_request_from_the_form_is_queued_and_shown(site):
    from playwright.sync_api import expect, sync_playwright

    from hug_vis_dataset.leaderboard.requests import FAILED, ScoringRequest

    state = site["state"]
    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(site["url"])
        page.get_by_role("tab", name="Submit to the leaderboard").click()
        expect(page.locator("#status-table")).to_contain_text("The queue is empty.")
        _choose(page, "submit-task", "matting")
        page.locator("#submit-model textarea, #submit-model input").first.fill("GoodNet")
        page.locator("#submit-repo textarea, #submit-repo input").first.fill("alice/good")
        page.locator("#submit-run").click()
        message = page.locator("#submit-message")
        expect(message).to_contain_text("Queued GoodNet for video matting: alice/good at commit")
        expect(message).to_contain_text("2 clip(s)")
        expect(message).to_contain_text("Place in the queue: 1")
        row = page.locator("#status-table tr", has_text="GoodNet")
        expect(row).to_contain_text("PENDING")
        expect(row.locator("td").nth(3)).to_have_text("1")
        stored = json.loads(state.files("hugvis/requests")["requests/matting/GoodNet.json"])
        assert (stored["submitter"], stored["revision"]) == ("alice", state.head("alice/good"))

        page.locator("#submit-run").click()  # the same request again
        expect(message).to_contain_text("Not queued: matting/GoodNet is already requested (PENDING)")
        page.locator("#submit-model textarea, #submit-model input").first.fill("Other")
        page.locator("#submit-repo textarea, #submit-repo input").first.fill("alice/missing")
        page.locator("#submit-run").click()
        expect(message).to_contain_text("Not queued: predictions repo alice/missing (dataset) at main cannot be listed")

        # Text from a request file is the submitter's: shown as text, never as markup.
        hostile = ScoringRequest("matting", "Evil", "alice/good", "e" * 40, "alice", "2026-12-01T00:00:00+00:00",
                                 status=FAILED, failure='<img src=x onerror="window.pwned=1">')
        site["desk"].queue.write(hostile, state.head("hugvis/requests"), "hostile")
        page.locator("#status-refresh").click()
        expect(page.locator("#status-table")).to_contain_text('<img src=x onerror="window.pwned=1">')
        assert page.locator("#status-table img").count() == 0
        assert page.evaluate("window.pwned") is None
        browser.close()

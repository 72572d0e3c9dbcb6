"""The MOS study tab in a real browser: Debian's headless Chromium driven through Playwright.

Starts the explorer on 127.0.0.1 over a tiny synthetic release, then, as a rater would: the first
item's media is there on page open (generated video and source portrait); a rating is stored; a
resubmission replaces it (one rating, the new values, said so); the sliders go back to the
neutral score on another clip; voice cloning shows no video box but both speeches; and after a
restart on the same ratings file the rating is still in the table.
"""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,  # about 40 s on 2 shared cores: Chromium start, synthesis, two app starts
    pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason=f"Chromium is not installed at {CHROMIUM} "
                       "(Debian package 'chromium'; `make` installs it when run as root)"),
]
CLIPS = ("actor_0001_happy_action_01_script_001", "actor_0001_sad_action_01_script_001")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(release: Path, root: Path, ratings: Path, work: str):
    from hug_vis_dataset.space.app import Explorer, build_app

    demo = build_app(Explorer(release, None, work_dir=root / work, ratings_path=ratings))
    _, url, _ = demo.launch(server_name="127.0.0.1", server_port=_free_port(), prevent_thread_lock=True, quiet=True,
                            allowed_paths=[str(release), str(root)])
    return demo, url


def _choose(page, elem_id: str, option: str) -> None:
    page.locator(f"#{elem_id} input").click()
    page.get_by_role("option", name=option, exact=True).click()


def _set_scores(page, scores) -> None:
    for i, value in enumerate(scores):
        box = page.locator(f"#mos-score-{i} input[type=number]")
        box.fill(str(value))
        box.press("Enter")


def _scores(page, n: int) -> list[str]:
    return [page.locator(f"#mos-score-{i} input[type=number]").input_value() for i in range(n)]


def _table(page) -> dict[str, tuple[str, ...]]:
    """criterion -> (task, model, mos, n_clips, n_ratings, n_raters) as the grid shows them."""
    rows = page.locator("#mos-table .virtual-row")
    cells = [r.locator("[role=gridcell]").all_inner_texts() for r in rows.all()]
    return {c[2].strip(): tuple(x.strip() for x in c[:2] + c[3:]) for c in cells}


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("mos_space")
    synthesize(root / "release", actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.5, size=(64, 36))
    return root / "release", root


def test_mos_study_in_chromium(release, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    release_dir, root = release
    ratings = tmp_path / "kept" / "ratings.jsonl"
    demo, url = _serve(release_dir, root, ratings, "work1")
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"])
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(30_000)
            expect.set_options(timeout=30_000)
            page.goto(url)
            page.get_by_role("tab", name="MOS study").click()

            # Page open: the first item (audio_driven, first system, first clip) without touching anything.
            expect(page.locator("#mos-video video")).to_be_attached()
            expect(page.locator("#mos-video video")).to_have_attribute("src", re.compile(f"/{CLIPS[0]}\\.mp4$"))
            expect(page.locator("#mos-portrait img").first).to_be_visible()
            system = page.locator("#mos-system input").input_value()
            assert system == "talk_fair"  # the first of the sorted simulated systems

            page.locator("#mos-rater textarea").fill("rater_01")
            _set_scores(page, (2, 4, 5))
            page.get_by_role("button", name="Submit rating").click()
            expect(page.locator("#mos-message")).to_contain_text("Stored 3 score(s) from rater_01")
            expect(page.locator("#mos-table .virtual-row")).to_have_count(3)

            # Resubmit with other values: one rating per criterion, the new value, and it says so.
            _set_scores(page, (5, 1, 3))
            page.get_by_role("button", name="Submit rating").click()
            expect(page.locator("#mos-message")).to_contain_text(f"Replaced your earlier rating of {system}")
            expect(page.locator("#mos-message")).to_contain_text("ID Similarity 2 -> 5")
            want = {"ID Similarity": ("audio_driven", system, "5", "1", "1", "1"),
                    "Emotion Naturalness": ("audio_driven", system, "1", "1", "1", "1"),
                    "Lip Synchronization": ("audio_driven", system, "3", "1", "1", "1")}
            # The table arrives with the message; wait until its Lip Synchronization row shows the new 3.
            page.wait_for_function("() => [...document.querySelectorAll('#mos-table .virtual-row')].some("
                                   "r => r.innerText.includes('Lip Synchronization') && /\\b3\\b/.test(r.innerText))")
            assert _table(page) == want

            # Another clip: the sliders are back at the neutral score, the media follow.
            assert _scores(page, 3) == ["5", "1", "3"]
            _choose(page, "mos-clip", CLIPS[1])
            expect(page.locator("#mos-video video")).to_have_attribute("src", re.compile(f"/{CLIPS[1]}\\.mp4$"))
            for i in range(3):
                expect(page.locator(f"#mos-score-{i} input[type=number]")).to_have_value("3")

            # Voice cloning: no video box, no portrait; the generated and the reference speech.
            _set_scores(page, (1, 1))
            _choose(page, "mos-task", "voice_cloning")
            from hug_vis_dataset.release import Release

            recording = Release(release_dir).record(CLIPS[1]).audio_path  # the actor's own speech
            for box, name in (("#mos-speech", f"{CLIPS[1]}.wav"), ("#mos-reference-speech", recording.name)):
                expect(page.locator(f"{box} [data-testid^=audio-player]")).to_be_attached()
                expect(page.locator(f"{box} a[data-testid=download-link]")).to_have_attribute(
                    "download", name)
            expect(page.locator("#mos-video")).to_be_hidden()
            expect(page.locator("#mos-portrait")).to_be_hidden()
            expect(page.locator("#mos-score-2")).to_be_hidden()
            assert _scores(page, 2) == ["3", "3"]
            assert page.locator("#mos-system input").input_value() == "clone_fair"

            # Restart: a new app (new work folder) on the same ratings file still has the rating.
            demo.close()
            demo, url = _serve(release_dir, root, ratings, "work2")
            page.goto(url)
            page.get_by_role("tab", name="MOS study").click()
            expect(page.locator("#mos-table .virtual-row")).to_have_count(3)
            assert _table(page) == want
            browser.close()
    finally:
        demo.close()
    assert len(ratings.read_text().splitlines()) == 6  # the audit trail keeps both submissions

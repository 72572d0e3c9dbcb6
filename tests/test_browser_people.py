"""People as the ceiling of emotion recognition in a real browser (Debian's headless Chromium through Playwright).

1. The blind emotion rater page (``build_rater_app`` over an emotion study: four input settings, one clip each per
   rater): each item shows only its setting's media (a silent video, a recording, a frame or a transcript), each
   media file named by the item's opaque code; neither the page outside the answer buttons nor any URL the browser
   requests names the clip or an emotion; a submission without an answer is refused naming what is missing; the
   stored answer is the one clicked.
2. The explorer's Table 4 on a synthetic release whose emotion systems are scored: one People row per input setting
   from the simulated emotion study, never bold, and "include flagged raters" (visible on Table 4) changes them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

import pytest

from browser_support import NEEDS_CHROMIUM, choose, chromium_session, free_port, launch_chromium, open_page, tick

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,  # Chromium, synthesis, two apps
    NEEDS_CHROMIUM,
]
TIMEOUT_MS = 45_000
SETTINGS = ["Video", "Audio", "Text", "Image frame"]
LABELS = ("happy", "angry", "sad", "afraid", "disgusted", "surprised", "neutral")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("raterpage")  # no emotion word in any folder a URL could show
    release = root / "release"
    synthesize(release, actors=2, actions=1, scripts=1, seconds=0.4, size=(64, 36))  # 14 clips, 7 rated
    results = root / "results"
    for system in sorted((release / "simulated_systems" / "emotion").iterdir()):
        evaluate_submission("emotion", system, system.name, release, results, progress=False)
    return root, release, results


@contextlib.contextmanager
def rater_page(study, release: Path, root: Path, requested: list):
    from playwright.sync_api import expect, sync_playwright

    from hug_vis_dataset.space.mos_study import build_rater_app

    demo = build_rater_app(study)
    _, url, _ = demo.launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True,
                            allowed_paths=[str(release), str(root)])
    expect.set_options(timeout=TIMEOUT_MS)
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("request", lambda request: requested.append(request.url))
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(url)
            yield page
            browser.close()
    finally:
        demo.close()


def test_the_blind_emotion_page_shows_one_setting_and_never_the_label(world):
    from playwright.sync_api import expect

    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.studies.study_desk import MosStudy

    root, release, _ = world
    study_file = root / "emo_study.json"
    study_file.write_text(json.dumps({"name": "people-browser", "protocol": "emotion",
                                      "tasks": {"emotion": {"settings": SETTINGS}}, "clips": "all",
                                      "ratings_per_item": 1, "items_per_session": 4, "seed": 5}))
    desk = MosStudy(Release(release), release, root / "store" / "ratings.jsonl", study_path=study_file)
    clip_ids = [str(c) for c in desk.release.clip_ids()]
    requested: list[str] = []
    answered, media = {}, {}
    with rater_page(desk, release, root, requested) as page:
        page.locator("#mos-rater textarea").fill("rater_e")
        page.get_by_role("button", name="Start / resume").click()
        expect(page.locator("#mos-message")).to_contain_text("Answering as rater_e")
        for n in range(4):
            expect(page.locator("#mos-progress")).to_contain_text(f"item {n + 1} of 4")
            code = re.search(r"code (i[0-9a-f]{10})", page.locator("#mos-progress").inner_text()).group(1)
            item = desk.blind.log.lookup()[code][1]
            setting = item.systems[0]
            expect(page.locator("#emo-question")).to_contain_text("Which emotion does the person express?")
            want = {"Video": "video", "Audio": "audio", "Text": "text", "Image frame": "image"}[setting]
            expect(page.locator(f"#emo-{want}")).to_be_visible()
            for other in {"video", "audio", "image", "text"} - {want}:  # only the setting's media
                expect(page.locator(f"#emo-{other}")).to_be_hidden()
            if want in ("video", "image"):
                element = page.locator({"video": "#emo-video video", "image": "#emo-image img"}[want]).first
                expect(element).to_have_attribute("src", re.compile(rf"/{code}\.(mp4|png)$"))  # the code only
            elif want == "audio":
                media[code] = ".wav"
            else:
                record = desk.release.record(item.clip_id)
                expect(page.locator("#emo-text")).to_contain_text(record.transcript)
            # Nothing outside the answer buttons names an emotion; nothing anywhere names the clip.
            outside = " ".join(page.locator(s).inner_text() for s in ("#mos-progress", "#emo-question",
                                                                       "#mos-message")).lower()
            assert not any(re.search(rf"\b{label}\b", outside) for label in LABELS), outside
            html = page.content()
            assert not any(clip in html for clip in clip_ids), "a clip id is in the page"
            expect(page.locator("#emo-answer input:checked")).to_have_count(0)  # every answer starts unset
            page.get_by_role("button", name="Submit answer").click()
            expect(page.locator("#mos-message")).to_have_text(
                "Not stored: please choose an answer (one of the seven emotions, or Cannot tell).")
            choice = ("Cannot tell", "Sad", "Happy", "Neutral")[n]
            page.locator("#emo-answer").get_by_label(choice, exact=True).check()
            page.get_by_role("button", name="Submit answer").click()
            expect(page.locator("#mos-message")).to_contain_text(f"Stored your answer to item {code}.")
            answered[code] = (setting, choice)
        expect(page.locator("#mos-message")).to_contain_text("Session 1 is complete")
    assert {s for s, _ in answered.values()} == set(SETTINGS)
    for code, suffix in media.items():  # the recording was fetched under its code
        assert any(u.split("?")[0].endswith(f"/{code}{suffix}") for u in requested), (code, requested[-5:])
    leaks = [u for u in requested if "actor_" in u or any(re.search(rf"{label}", u.lower()) for label in LABELS)]
    assert leaks == [], leaks
    frame = desk.blind.emotion_answers.frame()
    assert {row.item: (row.setting, row.answer) for row in frame.itertuples()} == answered
    assert frame["clip_id"].nunique() == 4  # one item per clip for this rater


def test_table4_on_the_board_prints_people_and_the_flagged_raters_box_changes_them(world):
    from playwright.sync_api import expect

    from hug_vis_dataset.space.app import Explorer, launch

    root, release, results = world
    work = root / "work"
    explorer = Explorer(release, results, work_dir=work)
    expected = {}
    for all_raters in (False, True):
        frame, _, _ = explorer.leaderboard(next(t for t in explorer.table_labels() if t.startswith("Table 4:")),
                                           ["paper", "synthetic demo"], all_raters=all_raters)
        people = frame[frame["Model"] == "People"].set_index("Input")["Acc. (%) ↑"]
        expected[all_raters] = {k: v.split(" ")[0] for k, v in people.items()}
    assert expected[False] != expected[True]
    demo, url = launch(release, results, port=free_port(), work_dir=work, block=False)
    try:
        with chromium_session(TIMEOUT_MS) as browser:
            page = open_page(browser, url, TIMEOUT_MS, board=True)
            choose(page, "board-table", next(t for t in explorer.table_labels() if t.startswith("Table 4:")))
            tick(page, "board-show", "synthetic demo")
            expect(page.locator("#leaderboard")).to_contain_text("People")
            rows = page.locator("#leaderboard tr").filter(has=page.locator("td", has_text=re.compile(r"^People$")))
            expect(rows).to_have_count(len(expected[False]))
            for all_raters in (False, True):
                if all_raters:
                    page.locator("#board-all-raters").get_by_label("include flagged raters").check()
                for setting, value in expected[all_raters].items():
                    row = rows.filter(has=page.locator("td", has_text=re.compile(rf"^{re.escape(setting)}$")))
                    expect(row).to_contain_text(value)
                    html = row.first.inner_html()
                    assert "<b>" not in html and "<strong>" not in html and "<u>" not in html  # never ranked
            expect(page.locator("#leaderboard-notes")).to_contain_text("People against the best model, per input setting")
            page.close()
    finally:
        demo.close()

"""The blind MOS study in a real browser: Debian's headless Chromium driven through Playwright.

Starts the rater page (``build_rater_app``) for real on 127.0.0.1 over a tiny synthetic release and a
study file (audio-driven, three systems, two clips: six items, one rating each, sessions of four with
one gold item), then, as raters would:

* no system name (nor ``gold``) appears anywhere in the page or in any media URL it requests;
* submitting with an unanswered criterion is refused with a message naming it, nothing stored;
* each session serves exactly its one gold item (rate 0.25 of 4);
* a rater who stops (closes the page) and comes back with the same id continues where they left off;
* after two raters the coverage view shows every item with one rating, two raters, 100% complete.

A second test runs a pairwise study (three systems, so three pairs per clip, sessions of three): two
videos side by side as "A" and "B" (``<code>-a.mp4`` / ``<code>-b.mp4``), no system name in the page
or a URL, an unanswered criterion refused naming it, and each stored answer's recorded side matching
the session seed's draw.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

import pytest

from browser_support import NEEDS_CHROMIUM, free_port, launch_chromium

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,  # about 40 s on 2 shared cores: Chromium start, synthesis, the app
    NEEDS_CHROMIUM,
]
TASK = "audio_driven"


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("mos_blind")
    release = root / "release"
    synthesize(release, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.5, size=(64, 36))
    systems = sorted(p.name for p in (release / "simulated_systems" / TASK).iterdir() if p.is_dir())
    study = root / "study.json"
    study.write_text(json.dumps({"name": "browser-study", "tasks": {TASK: {"systems": systems}}, "clips": "all",
                                 "ratings_per_item": 1, "items_per_session": 4, "gold_rate": 0.25, "seed": 7}))
    return release, root, study, systems


@contextlib.contextmanager
def rater_pages(study, release: Path, root: Path, requested: list):
    """The rater page served for real, and a factory of fresh browser pages on it (each records the
    URLs it requests into ``requested``); the app and the browser are closed afterwards."""
    from playwright.sync_api import expect, sync_playwright

    from hug_vis_dataset.space.mos_study import build_rater_app

    demo = build_rater_app(study)
    _, url, _ = demo.launch(server_name="127.0.0.1", server_port=free_port(), prevent_thread_lock=True, quiet=True,
                            allowed_paths=[str(release), str(root)])
    expect.set_options(timeout=30_000)
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)

            def new_page():
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.on("request", lambda request: requested.append(request.url))
                page.set_default_timeout(30_000)
                page.goto(url)
                return page

            yield new_page
            browser.close()
    finally:
        demo.close()


def _answer(page, scores) -> None:
    for i, value in enumerate(scores):
        if value is not None:
            page.locator(f'#mos-score-{i} input[value="{value}"]').check()


def _rate_session(page, expect, rater: str, names, seen_media: list, stop_after: "int | None" = None) -> int:
    """Rate the rater's items until nothing is left (or ``stop_after`` answers); returns answers given."""
    page.locator("#mos-rater textarea").fill(rater)
    page.get_by_role("button", name="Start / resume").click()
    expect(page.locator("#mos-message")).to_have_text(re.compile(f"Rating as {rater}|nothing left"))
    given = 0
    while True:
        page.wait_for_function("() => /complete|nothing left/.test(document.querySelector('#mos-message').innerText) || "
                               "/item \\d+ of/.test(document.querySelector('#mos-progress').innerText)")
        if re.search("complete|nothing left", page.locator("#mos-message").inner_text()):
            return given
        progress = page.locator("#mos-progress").inner_text()
        expect(page.locator("#mos-video video")).to_be_attached()
        src = page.locator("#mos-video video").get_attribute("src")
        seen_media.append(src)
        code = re.search(r"code (i[0-9a-f]{10})", progress).group(1)
        assert src.endswith(f"/{code}.mp4"), src  # the media file is named by the opaque code only
        html = page.content()
        assert not any(name in html for name in names), "a system name is in the page"
        for i in range(3):  # every criterion starts unset, with its anchors
            expect(page.locator(f"#mos-score-{i} input:checked")).to_have_count(0)
        expect(page.locator("#mos-anchor-2")).to_contain_text("1 = unrelated to the speech")
        _answer(page, (4, 4, None))
        page.get_by_role("button", name="Submit answer").click()
        expect(page.locator("#mos-message")).to_have_text(
            "Not stored: please answer Lip Synchronization (every criterion needs a score).")
        _answer(page, (None, None, 3))
        page.get_by_role("button", name="Submit answer").click()
        expect(page.locator("#mos-message")).to_contain_text(f"Stored your answer to item {code}.")
        given += 1
        if stop_after is not None and given == stop_after:
            return given
        expect(page.locator("#mos-progress")).not_to_have_text(progress)


def test_blind_scheduled_study_in_chromium(setup):
    from playwright.sync_api import expect

    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.studies.study_desk import MosStudy
    from hug_vis_dataset.studies.sessions import SessionLog

    release, root, study_file, systems = setup
    ratings = root / "ratings" / "ratings.jsonl"
    study = MosStudy(Release(release), release, ratings, study_path=study_file)
    names = systems + ["gold_reference", "gold_degraded", "simulated_systems"]
    requested: list[str] = []
    with rater_pages(study, release, root, requested) as new_page:
        page = new_page()
        seen: list[str] = []
        # Rater 1 rates two items, closes the page, and comes back later with the same id.
        assert _rate_session(page, expect, "rater_01", names, seen, stop_after=2) == 2
        page.close()
        page = new_page()
        page.locator("#mos-rater textarea").fill("rater_01")
        page.get_by_role("button", name="Start / resume").click()
        expect(page.locator("#mos-progress")).to_contain_text("Session 1, item 3 of 4")  # resumed
        assert _rate_session(page, expect, "rater_01", names, seen) == 2
        expect(page.locator("#mos-message")).to_contain_text("Session 1 is complete")
        assert _rate_session(page, expect, "rater_02", names, seen) == 4
        # A third rater finds nothing left: every item has its one rating.
        assert _rate_session(page, expect, "rater_03", names, seen) == 0
        expect(page.locator("#mos-message")).to_contain_text("nothing left for you to rate")
        # The coverage view, as an admin sees it after the two raters.
        page.get_by_text("Study coverage").click()
        page.get_by_role("button", name="Refresh coverage").click()
        expect(page.locator("#mos-coverage")).to_contain_text("6 items, target 1 ratings each; "
                                                              "6 item(s) with 1 rating(s)")
        expect(page.locator("#mos-coverage")).to_contain_text("2 rater(s), 2 session(s), 6 answer(s) + 2 gold; "
                                                              "completion 100.0%")
    assert len(seen) == 8 and len(set(seen)) == 8
    assert not [u for u in requested if any(name in u for name in names)], "a requested URL names a system"
    # Server side: each session held exactly one gold item, and every stored answer names its code.
    sessions = SessionLog(ratings.parent / "sessions.jsonl", study.spec).sessions()
    assert [(s.rater, sum(i.kind == "gold" for _, i in s.entries), len(s.entries)) for s in sessions] == [
        ("rater_01", 1, 4), ("rater_02", 1, 4)]
    frame = study.ratings.frame()
    assert len(frame) == 8 * 3 and frame["item"].nunique() == 8 and frame["elapsed"].notna().all()
    assert set(frame.loc[frame["model"].str.startswith("gold"), "model"]) <= {"gold_reference", "gold_degraded"}


def test_blind_pairwise_session_in_chromium(setup):
    """The pairwise form: two systems side by side as A and B, no name in the page or a URL, every
    criterion required, the side recorded with the answer."""
    from playwright.sync_api import expect

    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.studies.study_desk import MosStudy
    from hug_vis_dataset.studies.schedule import pair_sides

    release, root, _, systems = setup
    study_file = root / "pairwise.json"
    study_file.write_text(json.dumps({"name": "browser-pairwise", "protocol": "pairwise",
                                      "tasks": {TASK: {"systems": systems}}, "clips": "all", "ratings_per_item": 1,
                                      "items_per_session": 3, "seed": 2}))
    ratings = root / "pairwise_ratings" / "ratings.jsonl"
    study = MosStudy(Release(release), release, ratings, study_path=study_file)
    names = systems + ["simulated_systems"]
    requested: list[str] = []
    codes: list[str] = []
    with rater_pages(study, release, root, requested) as new_page:
        page = new_page()
        page.locator("#mos-rater textarea").fill("rater_pw")
        page.get_by_role("button", name="Start / resume").click()
        expect(page.locator("#mos-message")).to_contain_text("Rating as rater_pw")
        for n in range(3):
            expect(page.locator("#mos-progress")).to_contain_text(f"item {n + 1} of 3")
            code = re.search(r"code (i[0-9a-f]{10})", page.locator("#mos-progress").inner_text()).group(1)
            codes.append(code)
            for side in ("a", "b"):
                video = page.locator(f"#mos-video-{side} video")
                expect(video).to_be_attached()
                assert video.get_attribute("src").endswith(f"/{code}-{side}.mp4")
            expect(page.locator("#mos-portrait img")).to_be_attached()
            assert not any(name in page.content() for name in names), "a system name is in the page"
            expect(page.locator("#mos-question-2")).to_contain_text("Which is better on Lip Synchronization?")
            for i in range(3):
                expect(page.locator(f"#mos-choice-{i} input:checked")).to_have_count(0)
            page.locator('#mos-choice-0 input[value="A"]').check()
            page.locator('#mos-choice-1 input[value="Tie"]').check()
            page.get_by_role("button", name="Submit answer").click()
            expect(page.locator("#mos-message")).to_have_text(
                "Not stored: please answer Lip Synchronization (every criterion needs an answer: A, B or Tie).")
            page.locator('#mos-choice-2 input[value="B"]').check()
            page.get_by_role("button", name="Submit answer").click()
            expect(page.locator("#mos-message")).to_contain_text(f"Stored your answer to item {code}.")
        expect(page.locator("#mos-message")).to_contain_text("Session 1 is complete")
    assert not [u for u in requested if any(name in u for name in names)], "a requested URL names a system"
    # Server side: one answer per criterion of each pair, "A" = the recorded left system.
    frame = study.blind.preferences.frame()
    session = study.blind.log.latest("rater_pw")
    assert session.codes() == codes and len(frame) == 3 * 3
    for code, item in session.entries:
        mine = frame[frame["item"] == code].set_index("criterion")
        left = pair_sides(session.seed, code, item.systems)[0]
        right = next(s for s in item.systems if s != left)
        assert set(mine["left"]) == {left}
        won = {c: (item.systems[0] if o == 1.0 else item.systems[1] if o == 0.0 else "tie")
               for c, o in mine["outcome"].items()}
        assert won == {"id_similarity": left, "emotion_naturalness": "tie", "lip_sync": right}
    assert len(study.ratings.frame()) == 0  # pairwise answers are not MOS ratings

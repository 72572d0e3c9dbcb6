"""What a person reads fits and works, wherever the files are, in a real browser (Debian's Chromium through
Playwright).

One small synthetic release; a store whose runs live outside the Space's folders: a clone whose predictions were
copied to a folder of their own and scored there (``hugvis evaluate`` keeps them where they are), the built-in
voice baseline (its predictions under ``baselines/``), Table 9's Real audio row, matting runs; the Space is started
from yet another folder (Gradio serves only the release, the work folder, the store and the current folder). Then:

* the per-clip viewer plays every voice run's recordings (Gradio refused the .wav of a run scored elsewhere: seven
  red Error badges), and the provenance link serves no server path;
* every tab, after its main action, and every paper table of the board, at 1280 and 390 px: the page is not wider
  than the screen, no text is clipped, every dropdown's every choice fits its field whole, a board wider than its
  box says so (the scroll hint) and keeps its Model column opaque over the scrolled cells;
* the metric Spaces (one per input kind, a suite, an analysis) on their bundled example, at both widths.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from browser_support import NEEDS_CHROMIUM, choose, chromium_session, free_port, open_page, tick

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,  # Chromium, synthesis, several scored runs, apps
    NEEDS_CHROMIUM,
]
TIMEOUT_MS = 60_000
ERROR_BADGE = "[data-testid=status-tracker] .error"
WIDTHS = (1280, 390)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from hug_vis_dataset.demo.pipeline import score_baselines
    from hug_vis_dataset.datamodel.results import REAL_AUDIO_MODEL
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize
    from hug_vis_dataset.tasks import REAL_AUDIO

    root = tmp_path_factory.mktemp("layout")
    release, results = root / "release", root / "results"
    synthesize(release, actors=2, emotions=["Happy", "Surprised"], actions=1, scripts=1, seconds=0.3,
               size=(48, 32), seed=4)
    systems = release / "simulated_systems"
    elsewhere = root / "elsewhere" / "clone_far"  # a user's own folder, outside every folder the Space serves
    shutil.copytree(systems / "voice_cloning" / "clone_good", elsewhere)
    evaluate_submission("voice_cloning", elsewhere, "clone_far", release, results, progress=False,
                        metrics=["speaker_similarity"])
    evaluate_submission("voice_cloning", REAL_AUDIO, REAL_AUDIO_MODEL, release, results, progress=False,
                        metrics=["speaker_similarity"])
    score_baselines(release, root / "baselines", results, progress=False, tasks=["voice_cloning"])
    for system in ("matte_good", "matte_poor"):
        evaluate_submission("matting", systems / "matting" / system, system, release, results, progress=False)
    return {"root": root, "release": release, "results": results}


@pytest.fixture(scope="module")
def site(world):
    """The Space as a user starts it on a machine whose files are not under the system's temporary folder (Gradio
    serves that folder and the current one besides its allowed paths; the test's own files are under /tmp): the
    temporary folder is moved aside for the module and the Space started from another folder."""
    import tempfile

    from hug_vis_dataset.space.app import launch

    other = world["root"] / "somewhere_else"  # the current folder: Gradio serves it too, so not the files' parent
    other.mkdir()
    system_tmp = world["root"] / "system_tmp" / "tmp"
    system_tmp.mkdir(parents=True)
    before, before_tmp = Path.cwd(), tempfile.tempdir
    tempfile.tempdir = str(system_tmp)
    os.chdir(other)
    try:
        demo, url = launch(world["release"], world["results"], port=free_port(), work_dir=world["root"] / "work",
                           block=False)
    finally:
        os.chdir(before)
    try:
        yield {**world, "url": url}
    finally:
        demo.close()
        tempfile.tempdir = before_tmp


@pytest.fixture(scope="module")
def browser():
    with chromium_session(TIMEOUT_MS) as chromium:
        yield chromium


# ----------------------------------------------------------------------------- files wherever they are
def test_the_viewer_plays_runs_whose_files_live_outside_the_spaces_folders(site, browser):
    """Every voice run's two players load (the clone scored from its own folder, the built-in baseline, the Real
    audio row), with no Error badge; the Real audio row's "generated" player is another recording of the actor."""
    from playwright.sync_api import expect

    page = open_page(browser, site["url"], TIMEOUT_MS, board=True)
    served: list = []  # (url, status) of every media file the page fetched
    page.on("response", lambda r: served.append((r.url, r.status)) if ".wav" in r.url else None)
    page.get_by_role("tab", name="Per-clip viewer").click()
    for run in ("Voice cloning / clone_far", "Voice cloning / baseline (built-in)",
                "Voice cloning / Real audio (reference)"):
        served.clear()
        choose(page, "viewer-run", run)
        expect(page.locator("#viewer-text")).to_contain_text(run.split(" / ")[1])
        expect(page.locator("#viewer-out-audio")).to_be_visible()
        page.wait_for_timeout(1500)  # the event's answer has come back and the players have fetched their files
        expect(page.locator(ERROR_BADGE)).to_have_count(0)
        assert served and all(status == 200 for _, status in served), (run, served)
        # both players: the clip's recording and the run's output (the Real audio row's: another recording)
        assert len({url.split("?")[0] for url, _ in served}) == 2, (run, served)
        if "Real audio" in run:  # two recordings of one actor, not one file twice
            expect(page.locator("#viewer-text")).to_contain_text("another recording of the same actor")
    page.close()


def test_the_provenance_link_serves_no_server_path(site, browser):
    page = open_page(browser, site["url"], TIMEOUT_MS, board=True)
    choose(page, "board-table", next(t for t in _tables(site) if t.startswith("Table 9:")))
    tick(page, "board-show", "synthetic demo")
    link = page.locator("#leaderboard a", has_text="summary.json").first
    link.wait_for()
    href = link.get_attribute("href")
    assert href.startswith("provenance/") and str(site["root"]) not in href
    response = page.request.get(site["url"].rstrip("/") + "/" + href)
    text = response.text()
    assert response.status == 200 and json.loads(text)["task"] == "voice_cloning"
    for folder in (site["root"], site["release"], site["results"], Path(os.sep) / "tmp"):
        assert str(folder) not in text, folder
    assert "…/" in text  # the folders are named by their last part
    page.close()


def _tables(site) -> list[str]:
    from hug_vis_dataset.space.app import Explorer

    return Explorer(site["release"], site["results"], work_dir=site["root"] / "work-tables").table_labels()


# ----------------------------------------------------------------------------- layout
#: Elements whose content is wider than their box while their overflow hides it (clipped text), and the page's
#: own width: nothing may be cut, a dropdown's value included (an ellipsis is a cut value).
CLIPPED = """() => {
  const out = [];
  for (const el of document.querySelectorAll('th, td, label, span, p, button, input, textarea, h1, h2, h3, a')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || el.clientWidth === 0 || el.closest('#leaderboard') || el.closest('.cm-editor')) continue;
    const style = getComputedStyle(el);
    if (el.scrollWidth <= el.clientWidth + 1 || (style.overflow === 'visible' && !el.matches('input'))) continue;
    out.push([el.tagName, (el.id || el.className || '').toString().slice(0, 40),
              (el.value || el.textContent || '').trim().slice(0, 50), el.scrollWidth, el.clientWidth]);
  }
  const page = document.documentElement;
  return {clipped: out, page: [page.scrollWidth, page.clientWidth]};
}"""
#: Each visible dropdown's choices (by elem_id) that do not fit its field whole, measured in the field's own font.
CHOICES_CUT = """(choices) => {
  const out = [], ctx = document.createElement('canvas').getContext('2d');
  for (const [id, values] of Object.entries(choices)) {
    const input = document.querySelector('#' + id + ' input[role=combobox]');
    if (!input || input.clientWidth === 0) continue;
    const s = getComputedStyle(input);
    ctx.font = `${s.fontStyle} ${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
    const room = input.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
    for (const v of values) { const w = ctx.measureText(v).width; if (w > room) out.push([id, v, Math.round(w), Math.round(room)]); }
  }
  return out;
}"""
#: The board: its width against its box and whether the scroll hint shows.
BOARD = """() => {
  const table = document.querySelector('#leaderboard table'), box = table.parentElement;
  const hint = document.querySelector('#board-scroll-hint');
  return {table: table.scrollWidth, box: box.clientWidth, hint: !!hint && hint.getBoundingClientRect().height > 0};
}"""
#: Scroll the board sideways to ``at`` (0 or its far end) and return the strip of the page along the pinned Model
#: column's left edge (inside the cell's padding, where nothing of its own is drawn).
PINNED_STRIP = """(at) => {
  const table = document.querySelector('#leaderboard table'), box = table.parentElement;
  box.scrollTop = 0; box.scrollLeft = at === 0 ? 0 : box.scrollWidth;
  const cell = table.tHead.rows[0].cells[0].getBoundingClientRect(), b = box.getBoundingClientRect();
  return {x: cell.left, y: b.top, width: 4, height: Math.min(b.height, window.innerHeight - b.top)};
}"""


def _dark_pixels(png: bytes) -> int:
    """Pixels of text in a screenshot (darker than the board's light rules and its cells' background)."""
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("L")
    return sum(1 for value in image.getdata() if value < 110)


def _pinned_column_is_opaque(page) -> bool:
    """Whether the pinned column hides the cells scrolled under it: along its left edge (inside the cells' padding,
    where nothing of their own is drawn) no more text shows with the board scrolled to its far end than unscrolled
    (a collapsed border let the scrolled cells' text show through a 1 px strip there)."""
    page.locator("#leaderboard").scroll_into_view_if_needed()
    # Measured up to three times: a see-through column shows on every measure, while a board still being redrawn
    # under a loaded machine (a late update of the table between the two screenshots) shows on one at most.
    for _ in range(3):
        clip = page.evaluate(PINNED_STRIP, 0)
        if clip["height"] <= 0:
            return True
        page.wait_for_timeout(100)
        still = page.screenshot(clip=clip)
        scrolled_clip = page.evaluate(PINNED_STRIP, 1)
        page.wait_for_timeout(100)
        scrolled = page.screenshot(clip=scrolled_clip)
        page.evaluate(PINNED_STRIP, 0)
        if _dark_pixels(scrolled) <= _dark_pixels(still):
            return True
    return False


def _dropdown_choices(site) -> dict:
    """Every dropdown's shown choices by elem_id, the lists filled by events too (runs, clips, metrics)."""
    from hug_vis_dataset import catalog
    from hug_vis_dataset.presentation.labels import clip_display
    from hug_vis_dataset.space.app import Explorer, build_app

    explorer = Explorer(site["release"], site["results"], work_dir=site["root"] / "work-choices")
    out = {}
    for block in build_app(explorer).config["components"]:
        props = block.get("props", {})
        if block.get("type") == "dropdown" and props.get("elem_id"):
            out[props["elem_id"]] = [c[0] if isinstance(c, (list, tuple)) else str(c) for c in props.get("choices") or []]
    out["viewer-run"] = explorer.viewer_runs()
    out["viewer-clip"] = [clip_display(str(c)) for c in explorer.release.clip_ids()]
    out["viewer-metric"] = [catalog.spec(m).header for m in catalog.METRIC_NAMES if catalog.spec(m).tasks]
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_every_tab_and_every_board_fits_the_width(site, browser, width):
    """At 1280 px and on a phone: no page wider than the screen, no clipped text, every dropdown choice whole, a board
    wider than its box under the scroll hint (and only then) with its Model column opaque."""
    choices = _dropdown_choices(site)
    page = open_page(browser, site["url"], TIMEOUT_MS, width=width, height=900, board=True)
    tick(page, "board-show", "synthetic demo")
    seen: dict[str, object] = {}
    for label in _tables(site):
        if not label.startswith("Table 4:"):
            choose(page, "board-table", label)
        page.locator("#leaderboard td").first.wait_for()
        page.wait_for_timeout(800)
        board = page.evaluate(BOARD)
        assert board["hint"] == (board["table"] > board["box"] + 1), (width, label, board)
        assert _pinned_column_is_opaque(page), (width, label)
        seen[label] = page.evaluate(CLIPPED)
    for tab, button in (("Cross-task", "Run analysis"), ("Findings", "Measure"), ("Clip inspector", "Show clip"),
                        ("Per-clip viewer", None), ("Score a submission", None), ("MOS study", None)):
        page.get_by_role("tab", name=tab).click()
        if button:
            page.get_by_role("button", name=button).click()
        if tab == "Per-clip viewer":
            choose(page, "viewer-run", "Voice cloning / baseline (built-in)")
        page.wait_for_timeout(2000)
        seen[tab] = page.evaluate(CLIPPED)
        cut = page.evaluate(CHOICES_CUT, choices)
        assert cut == [], (width, tab, cut)
    bad = {where: v for where, v in seen.items() if v["clipped"] or v["page"][0] > v["page"][1] + 1}
    assert bad == {}, (width, bad)
    page.close()


#: One metric Space per input kind, the matting suite (the widest table) and analyses of stored rows.
METRIC_SPACES = ("dtssd", "matting", "psnr", "speaker_similarity", "emotion_accuracy", "variance_decomposition")


@pytest.mark.parametrize("name", METRIC_SPACES)
def test_metric_spaces_fit_both_widths(browser, name, monkeypatch):
    from playwright.sync_api import expect

    from hug_vis_dataset.space.metric_app import launch

    folder = Path(__file__).resolve().parents[1] / "metrics" / name
    port = free_port()
    monkeypatch.setenv("GRADIO_SERVER_PORT", str(port))
    demo = launch(folder / "app.py", block=False)
    try:
        page = open_page(browser, f"http://127.0.0.1:{port}/", TIMEOUT_MS, width=WIDTHS[0], height=900)
        page.locator("#use-example").click()
        expect(page.locator("#result tr").first).to_be_attached(timeout=180_000)
        for width in WIDTHS:
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_timeout(500)
            seen = page.evaluate(CLIPPED)
            assert seen["clipped"] == [] and seen["page"][0] <= seen["page"][1] + 1, (name, width, seen)
        page.close()
    finally:
        demo.close()

"""Every surface tells one story, in a real browser (Debian's headless Chromium through Playwright).

One small synthetic release (two actors: no comparison can reach p < 0.05, so every verdict is "cannot tell"),
an explorer over a store with runs of vision-driven generation (PSNR, SSIM), audio-driven generation (stored, but its
metrics need weights), voice cloning (the built-in baseline, the real recordings, a clone), the reference motion
statistics and a ratings log whose MOS interval collapses to a point. Each test drives the page as a user would, one
per point of the "one story per number" review, and the last measures clipped text at 1280 and 390 px.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from browser_support import NEEDS_CHROMIUM, choose, chromium_session, free_port, matting_zip, open_page, tick

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,  # Chromium start, synthesis, several scored runs, two apps
    NEEDS_CHROMIUM,
]
TIMEOUT_MS = 45_000
AUDIO = "audio_driven"


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from hug_vis_dataset.demo.pipeline import score_baselines
    from hug_vis_dataset.datamodel.results import REAL_AUDIO_MODEL, REFERENCE_MODEL
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize
    from hug_vis_dataset.tasks import REAL_AUDIO

    root = tmp_path_factory.mktemp("one-story")
    release, results = root / "release", root / "results"
    synthesize(release, actors=2, emotions=["Happy", "Afraid"], actions=1, scripts=1, seconds=0.3, size=(48, 32),
               seed=4)
    systems = release / "simulated_systems"
    for system in sorted(p for p in (systems / "vision_driven").iterdir() if p.is_dir()):
        evaluate_submission("vision_driven", system, system.name, release, results, progress=False,
                            metrics=["psnr", "ssim"])
    for system in ("matte_fair", "matte_poor"):  # dtSSD for Fig. 11; matte_good stays free for an upload
        evaluate_submission("matting", systems / "matting" / system, system, release, results, progress=False)
    # a stochastic system scored over three samples per clip (simulated_systems/seeded/): the board's seed spread
    evaluate_submission("matting", systems / "seeded" / "matting" / "matte_seeded", "matte_seeded", release, results,
                        progress=False)
    for system in ("talk_good", "talk_poor"):  # CSIM and SyncNet need weights: stored, no per-clip values
        evaluate_submission(AUDIO, systems / AUDIO / system, system, release, results, progress=False,
                            metrics=["csim", "sync_c", "sync_d"])  # the paper's (MediaPipe's rows run here)
    score_baselines(release, root / "baselines", results, progress=False, tasks=["voice_cloning"])
    for model, source in ((REAL_AUDIO_MODEL, REAL_AUDIO), ("clone_good", systems / "voice_cloning" / "clone_good")):
        evaluate_submission("voice_cloning", source, model, release, results, progress=False,
                            metrics=["speaker_similarity"])
    evaluate_submission("motion", "reference", REFERENCE_MODEL, release, results, progress=False)
    return {"root": root, "release": release, "results": results}


def _write_ratings(explorer) -> None:
    """Two careful raters (right on the gold items, 5 s per answer) rate talk_good's ID similarity 5 on every
    clip: with two actors the bootstrap interval over actors collapses to [5.00, 5.00]."""
    store = explorer.mos.ratings
    for rater in ("rater_a", "rater_b"):
        for n, clip in enumerate(str(c) for c in explorer.release.clip_ids()):
            timing = {"study": "space-study", "elapsed": 5.0, "duration": 0.3}
            # every simulated system rated, so the study's ratings cover the task and replace the simulated raters
            # (studies.judgments.choose_source)
            for system in explorer.mos.systems(AUDIO):
                score = 5 if system == "talk_good" else 3
                store.add(rater, AUDIO, clip, system, {"id_similarity": score, "emotion_naturalness": 4,
                                                       "lip_sync": 4}, extra={**timing, "item": f"i{rater}{n}{system}"})
            for gold, value in (("gold_reference", 5), ("gold_degraded", 1)):
                store.add(rater, AUDIO, clip, gold, {c: value for c in ("id_similarity", "emotion_naturalness",
                                                                         "lip_sync")},
                          extra={**timing, "item": f"g{rater}{n}{gold}"})


@pytest.fixture(scope="module")
def site(world):
    from hug_vis_dataset.space.app import Explorer, launch

    work = world["root"] / "work"
    explorer = Explorer(world["release"], world["results"], work_dir=work)
    _write_ratings(explorer)
    demo, url = launch(world["release"], world["results"], port=free_port(), work_dir=work, block=False)
    yield {**world, "url": url, "explorer": explorer}
    demo.close()


@pytest.fixture(scope="module")
def browser():
    with chromium_session(TIMEOUT_MS) as chromium:
        yield chromium


def _page(browser, url: str, width: int = 1400, height: int = 1000):
    return open_page(browser, url, TIMEOUT_MS, width, height)


def _site_page(browser, url: str, width: int = 1400, height: int = 1000):
    return open_page(browser, url, TIMEOUT_MS, width, height, board=True)


_choose, _tick = choose, tick


def _board_table(page, site, number: int) -> None:
    _choose(page, "board-table", next(t for t in site["explorer"].table_labels() if t.startswith(f"Table {number}:")))


def _cells(page, model: str) -> list[str]:
    row = page.locator("#leaderboard tr").filter(has=page.locator("td", has_text=re.compile(rf"^{re.escape(model)}$")))
    return [c.strip() for c in row.first.locator("td").all_inner_texts()]


def _column(page, starts: str) -> int:
    headers = [h.strip() for h in page.locator("#leaderboard th").all_inner_texts()]
    return next(i for i, h in enumerate(headers) if h.startswith(starts))


def test_a_run_of_several_samples_shows_its_seed_spread_beside_the_value(site, browser):
    """Table 11's cell of the run scored over three samples per clip carries ``±sd (3 seeds)`` (the seed spread of
    its stored samples), the one-sample rows carry none, and the board's notes say what the ± is."""
    from playwright.sync_api import expect

    from hug_vis_dataset.leaderboard.seed_cells import seed_details
    from hug_vis_dataset.scoring.runs import read_run

    page = _site_page(browser, site["url"])
    _board_table(page, site, 11)
    _tick(page, "board-show", "synthetic demo")
    expect(page.locator("#leaderboard")).to_contain_text("matte_seeded")
    mad = _column(page, "MAD")
    detail = seed_details(read_run(site["results"] / "matting" / "matte_seeded"))["mad"]
    assert detail.endswith("(3 seeds)") and detail in _cells(page, "matte_seeded")[mad], _cells(page, "matte_seeded")
    assert "seeds" not in _cells(page, "matte_fair")[mad]
    expect(page.locator("#leaderboard-notes")).to_contain_text("the run scored K samples per clip")
    page.close()


# ----------------------------------------------------------------------------- 1: absence of evidence
def test_cannot_tell_is_marked_and_said_alike_on_the_board_and_in_findings(site, browser):
    """With two actors no pair can be separated: the board marks the cells ?, its note says why, Findings says
    "cannot tell" for every neighbour pair, and the collapsed MOS interval is marked ? with the same reason."""
    from playwright.sync_api import expect

    from hug_vis_dataset.verdicts import CANNOT_TELL, COLLAPSED

    page = _site_page(browser, site["url"])
    _board_table(page, site, 7)
    _tick(page, "board-show", "synthetic demo")
    expect(page.locator("#leaderboard")).to_contain_text("vis_good")
    psnr = _column(page, "PSNR")
    for model in ("vis_good", "vis_fair"):  # the two rows with a next-ranked row below them
        assert re.fullmatch(r"\d+\.\d\d \?", _cells(page, model)[psnr]), _cells(page, model)
    assert re.fullmatch(r"\d+\.\d\d", _cells(page, "vis_poor")[psnr])  # the last row has no pair below it
    notes = page.locator("#leaderboard-notes")
    expect(notes).to_contain_text("? cannot tell against the next-ranked row: 2 actors cannot reach p < 0.05")
    expect(notes).to_contain_text("absence of evidence, not a tie and not a separation")

    page.get_by_role("tab", name="Findings").click()
    _choose(page, "findings-finding", "Significance between neighbours")
    _choose(page, "findings-task", "Vision-driven video generation")
    page.get_by_role("button", name="Measure").click()
    message = page.locator("#findings-message")
    expect(message).to_contain_text(f"4 neighbour pairs: 0 separable, 0 not separable, 4 {CANNOT_TELL}")
    expect(page.locator("#findings-table")).to_contain_text("Verdict")
    table = page.locator("#findings-table").inner_text()
    assert table.count(CANNOT_TELL) == 4 and "separable" not in table, table  # one verdict per pair, each the same

    page.get_by_role("tab", name="Leaderboards").click()
    _board_table(page, site, 6)
    _tick(page, "board-show", "synthetic demo")
    expect(page.locator("#leaderboard")).to_contain_text("talk_good")
    cell = next(c for c in _cells(page, "talk_good") if c.startswith("5.00"))
    assert cell.startswith("5.00 ? [5.00, 5.00] ?"), cell  # cannot tell against the next row; a collapsed interval
    expect(notes).to_contain_text(f"? on a MOS interval: {COLLAPSED}")
    page.close()


# ----------------------------------------------------------------------------- 2: one clip, one number
def test_the_dtssd_space_labels_its_headline_and_each_clips_value_and_shows_its_card(browser, monkeypatch):
    """dtSSD's Space on its bundled clip: the headline names its protocol (the RVM average), each clip's own value
    is labelled apart, the aggregation field says which, and the Metric Card is on the page."""
    from playwright.sync_api import expect

    from hug_vis_dataset.space.metric_app import launch

    folder = Path(__file__).resolve().parents[1] / "metrics" / "dtssd"
    port = free_port()
    monkeypatch.setenv("GRADIO_SERVER_PORT", str(port))
    demo = launch(folder / "app.py", block=False)
    try:
        page = _page(browser, f"http://127.0.0.1:{port}/")
        page.locator("#use-example").click()
        headline = page.locator('#result tr[data-key="dtssd"]')
        expect(headline).to_contain_text("(RVM average)")
        expect(page.locator('#result tr[data-key="per_clip"]')).to_contain_text("of each clip (its own frames)")
        expect(page.locator('#result tr[data-key="aggregation"]')).to_contain_text("RVM's average")
        page.locator("#metric-card").get_by_text("Metric Card").click()
        expect(page.locator("#metric-card")).to_contain_text("dtSSD")
        card = page.locator("#metric-card").inner_text()
        assert "sqrt(sum((p_t - p_{t-1}) - (t_t - t_{t-1}))^2" not in card  # the mis-bracketed formula is gone
        page.close()
    finally:
        demo.close()


# ----------------------------------------------------------------------------- 3: the rule for clips left out
def test_a_partial_upload_is_scored_and_the_help_the_result_and_the_board_state_one_rule(site, browser, tmp_path):
    """One of four clips uploaded: scored (not refused, no CLI flag), the message states the rule the help states,
    and the board shows the run beside the same rule, unranked against complete runs."""
    from playwright.sync_api import expect

    from hug_vis_dataset.leaderboard.board import PARTIAL_RULE
    from hug_vis_dataset.space.precheck import PARTIAL_HELP

    page = _site_page(browser, site["url"])
    page.get_by_role("tab", name="Score a submission").click()
    expect(page.locator("#score-help")).to_contain_text(PARTIAL_HELP)
    page.locator("#score-model textarea, #score-model input").first.fill("one_clip")
    expect(page.locator("#score-model-check")).to_contain_text("is free on the Video matting leaderboard")
    page.locator("#score-upload input[type=file]").set_input_files(str(matting_zip(site["release"], tmp_path / "one.zip",
                                                                                   "matte_good", 1)))
    expect(page.locator("#score-precheck")).to_contain_text("match")
    page.get_by_role("button", name="Score", exact=True).click()
    message = page.locator("#score-message")
    expect(message).to_contain_text("Scored Video matting for one_clip: 1 clip(s) ok of 4; missing 3", timeout=90_000)
    expect(message).to_contain_text(PARTIAL_HELP)
    text = message.inner_text()
    assert "--check-only" not in text and "Not added" not in text
    # The per-clip rows print the board's units and decimals (MAD x1e3 with two decimals), not raw floats.
    rows = page.locator("#score-table, [aria-label='Per-clip rows']").last.inner_text()
    assert not re.search(r"\d\.\d{6,}", rows), rows

    page.get_by_role("tab", name="Leaderboards").click()
    _board_table(page, site, 11)
    _tick(page, "board-show", "grid subset")
    _tick(page, "board-show", "synthetic demo")
    expect(page.locator("#leaderboard")).to_contain_text("one_clip")
    expect(page.locator("#leaderboard-notes")).to_contain_text(PARTIAL_RULE)
    assert not any("(best)" in c or "(second)" in c for c in _cells(page, "one_clip"))  # a lone partial row
    page.close()


# ----------------------------------------------------------------------------- 4: the per-clip viewer
def test_the_viewer_lists_stored_talking_heads_orders_motion_largest_first_and_plays_real_audio(site, browser):
    from playwright.sync_api import expect

    from hug_vis_dataset.space.viewer import NO_OUTPUTS, REPLAYS_REFERENCE

    page = _site_page(browser, site["url"])
    page.get_by_role("tab", name="Per-clip viewer").click()
    page.locator("#viewer-run input").first.click()
    options = page.get_by_role("option").all_inner_texts()
    assert "Audio-driven video generation / talk_good" in options, options  # stored, not scored: still watchable
    assert "Voice cloning / Real audio (reference)" in options and not any("real-audio" in o for o in options)
    page.get_by_role("option", name="Audio-driven video generation / talk_good", exact=True).click()
    expect(page.locator("#viewer-text")).to_contain_text("Not scored")
    expect(page.locator("#viewer-output img")).to_be_visible()  # the generated talking head's frame

    _choose(page, "viewer-run", "Reference motion statistics (Fig. 11) / reference clips")
    expect(page.locator("#viewer-metric")).to_contain_text("Order by (largest first)")
    expect(page.locator("#viewer-clips")).to_contain_text("Clips, largest first")
    expect(page.locator("#viewer-reference img")).to_be_visible()  # motion is the clip's property: its frames
    expect(page.locator("#viewer-output")).to_be_hidden()
    assert "worst first" not in page.locator("#viewer-metric").inner_text()

    _choose(page, "viewer-run", "Voice cloning / Real audio (reference)")
    expect(page.locator("#viewer-text")).to_contain_text(REPLAYS_REFERENCE.split(":")[0])
    expect(page.locator("#viewer-text")).to_contain_text("another recording of the same actor")
    expect(page.locator("#viewer-text")).not_to_contain_text(NO_OUTPUTS.split("(")[0].strip())
    expect(page.locator("#viewer-out-audio audio, #viewer-out-audio [data-testid=waveform-controls]").first) \
        .to_be_attached()
    page.close()


def test_the_inspectors_frame_panel_follows_the_slider(site, browser):
    """The clip inspector's text promises that the frame panels follow the Frame slider; the "Video frame" image
    changes with it (the video plays the whole clip, as the text says)."""
    from playwright.sync_api import expect

    page = _site_page(browser, site["url"])
    page.get_by_role("tab", name="Clip inspector").click()
    expect(page.locator("#inspector-text")).to_contain_text("follow the Frame slider (the video and audio play the "
                                                            "whole clip)")
    page.get_by_role("button", name="Show clip").click()
    still = page.locator("#inspector-frame-image img")
    expect(still).to_be_visible()
    first = still.get_attribute("src")
    number = page.locator("#inspector-frame input[type=number]")
    number.fill("6")
    number.press("Enter")
    expect(still).not_to_have_attribute("src", first)
    expect(page.locator("#inspector-text")).to_contain_text("frame 6")
    page.close()


# ----------------------------------------------------------------------------- 5: Findings and Cross-task
def test_findings_and_cross_task_say_why_a_result_is_empty_and_what_it_was_computed_from(site, browser):
    from playwright.sync_api import expect

    page = _site_page(browser, site["url"])
    page.get_by_role("tab", name="Findings").click()
    _choose(page, "findings-task", "Audio-driven video generation")
    page.get_by_role("button", name="Measure").click()
    message = page.locator("#findings-message")
    expect(message).to_contain_text("2 Audio-driven video generation run(s) stored, none with per-clip values")
    expect(message).not_to_contain_text("score a submission")
    _choose(page, "findings-finding", "Boundary / thin-structure matting errors (finding iii)")
    page.get_by_role("button", name="Measure").click()
    expect(message).to_contain_text("a finding of Video matting, not of Audio-driven video generation")

    page.get_by_role("tab", name="Cross-task").click()
    _choose(page, "ct-metric", "AD-CSIM")
    page.get_by_role("button", name="Run analysis").click()
    ct = page.locator("#ct-message")
    expect(ct).to_contain_text("AD-CSIM has no per-clip values in the chosen models' rows")
    # its real cause: the two audio-driven runs are stored, without the weights CSIM needs
    expect(ct).to_contain_text("the Audio-driven video generation runs have no CSIM values: it needs weights")
    _choose(page, "ct-metric", "All")
    page.get_by_text("Models (").first.click()
    page.locator("#ct-models input[type=checkbox]").first.wait_for()
    for box in page.locator("#ct-models input[type=checkbox]").all():
        box.uncheck()
    page.get_by_role("button", name="Run analysis").click()
    expect(ct).to_contain_text("No model is ticked: tick at least one model under Models.")
    for box in page.locator("#ct-models input[type=checkbox]").all():
        box.check()
    page.get_by_role("button", name="Run analysis").click()  # Fig. 8 on every model: what its rows are
    expect(ct).to_contain_text(re.compile(r"Computed from \d+ stored per-clip rows \(one per model, clip and metric\): "
                                          r"\d+ models, 4 clips, \d+ metrics"))
    _choose(page, "ct-analysis", "Motion difficulty (Fig. 11)")
    page.get_by_role("button", name="Run analysis").click()
    expect(ct).to_contain_text("over 4 clips")
    headers = [h.strip() for h in page.locator("#ct-table thead th").all_inner_texts()]
    assert "Clip" in headers and "Emotion" in headers, headers
    expect(page.locator("#ct-table")).to_contain_text("Afraid")
    expect(page.locator("#ct-table")).not_to_contain_text("fearful")
    page.close()


# ----------------------------------------------------------------------------- 6: labels on every tab
def test_no_machine_name_on_any_tab_after_using_it(site, browser):
    """Every tab's text, after its main action, scanned for the keys the toolkit defines (the same scan as
    tests/test_labels_a_person_reads.py, on what Chromium renders), and for Markdown shown raw."""
    from test_labels_a_person_reads import machine_names

    page = _site_page(browser, site["url"])
    _tick(page, "board-show", "synthetic demo")
    seen = {"Leaderboards": page.locator("body").inner_text()}
    for tab, button in (("Cross-task", "Run analysis"), ("Findings", "Measure"), ("Clip inspector", "Show clip")):
        page.get_by_role("tab", name=tab).click()
        page.get_by_role("button", name=button).click()
        page.wait_for_timeout(2500)
        seen[tab] = page.locator("body").inner_text()
    page.get_by_role("tab", name="Per-clip viewer").click()
    _choose(page, "viewer-run", "Vision-driven video generation / vis_poor")
    page.wait_for_timeout(2000)
    seen["Per-clip viewer"] = page.locator("body").inner_text()
    leaks = {tab: machine_names(text) for tab, text in seen.items() if machine_names(text)}
    assert not leaks, leaks
    # Markdown is rendered, never shown: no literal backtick, no backslash escape on a page
    shown = {tab: [line for line in text.splitlines() if "`" in line or "\\" in line] for tab, text in seen.items()}
    assert not any(shown.values()), shown
    page.close()


# ----------------------------------------------------------------------------- 7: Table 9's reference rows
def test_table_9_says_the_baseline_replays_the_reference_and_prints_three_decimals(site, browser):
    from playwright.sync_api import expect

    from hug_vis_dataset.datamodel.results import BASELINE_DOES, BASELINE_LABEL, REAL_AUDIO_LABEL

    page = _site_page(browser, site["url"])
    _board_table(page, site, 9)
    _tick(page, "board-show", "synthetic demo")
    expect(page.locator("#leaderboard")).to_contain_text(BASELINE_LABEL)
    sim = _column(page, "Speaker Sim.")
    assert re.match(r"^1\.000\b", _cells(page, BASELINE_LABEL)[sim]), _cells(page, BASELINE_LABEL)
    notes = page.locator("#leaderboard-notes")
    expect(notes).to_contain_text(BASELINE_DOES["voice_cloning"])
    unranked = next(line for line in notes.inner_text().splitlines() if "never ranked" in line)
    assert "real-audio" not in unranked and unranked.count(REAL_AUDIO_LABEL) == 1, unranked
    models = [c.strip() for c in page.locator("#leaderboard tbody tr td:first-child").all_inner_texts()]
    assert models.index(REAL_AUDIO_LABEL) > models.index("Inworld TTS-1.5")  # after the paper's rows
    page.close()


# ----------------------------------------------------------------------------- 9: every width
#: Elements whose content is wider than their box with overflow hidden (clipped text), at the page's width; a
#: dropdown's value may scroll inside its input when it ends in an ellipsis before the arrow.
CLIPPED = """() => {
  const out = [];
  for (const el of document.querySelectorAll('th, td, label, span, p, button, input, h1, h2, h3')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || el.clientWidth === 0 || el.closest('#leaderboard')) continue;
    const style = getComputedStyle(el);
    if (el.scrollWidth <= el.clientWidth + 1 || style.overflow === 'visible') continue;
    if (el.matches('input[role=combobox]')) {
      const arrow = el.parentElement.querySelector('.icon-wrap');
      const textEnd = r.right - parseFloat(style.paddingRight);
      if (style.textOverflow === 'ellipsis' && (!arrow || textEnd <= arrow.getBoundingClientRect().left + 1)) continue;
    }
    out.push([el.tagName, (el.id || el.className || '').toString().slice(0, 40),
              (el.value || el.textContent || '').trim().slice(0, 40), el.scrollWidth, el.clientWidth]);
  }
  return out;
}"""
TAB_SHOWN = """() => Array.from(document.querySelectorAll('button[role=tab]')).map(t => {
  const r = t.getBoundingClientRect();
  return [t.textContent.trim(), r.width > 0 && r.height > 0 && r.right <= document.documentElement.clientWidth + 1];
})"""
BOARD = """() => { const t = document.querySelector('#leaderboard table'); const w = t.parentElement;
  const cells = Array.from(t.querySelectorAll('td')).filter(td => td.scrollWidth > td.clientWidth + 1);
  return [t.scrollWidth, w.clientWidth, getComputedStyle(w).overflowX, cells.length]; }"""


@pytest.mark.parametrize("width", [1280, 390])
def test_explorer_fits_the_width_every_tab_shown_and_nothing_clipped(site, browser, width):
    """All seven tabs are on screen (no overflow menu), no text is cut off; the board fits at 1280 (Provenance
    wraps) and at 390 scrolls sideways inside its box under a hint, its cells uncut."""
    from playwright.sync_api import expect

    page = _site_page(browser, site["url"], width=width, height=844)
    _tick(page, "board-show", "synthetic demo")
    expect(page.locator("#leaderboard")).to_contain_text("Provenance")
    tabs = page.evaluate(TAB_SHOWN)
    assert len(tabs) == 7 and all(shown for _, shown in tabs), tabs
    assert page.evaluate(CLIPPED) == []
    table, box, scroll, cut = page.evaluate(BOARD)
    assert cut == 0  # no cell of the board clips its text (Provenance wraps)
    hint = page.locator("#board-scroll-hint")
    if width >= 1280:
        assert table <= box + 1, (table, box)
        expect(hint).to_be_hidden()
    else:
        assert table > box and scroll in ("auto", "scroll"), (table, box, scroll)
        expect(hint).to_be_visible()
        expect(hint).to_contain_text("Scroll the table sideways")
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1")
    page.close()


@pytest.fixture(scope="module")
def rater_url(world):
    """``hugvis space --rater --study mos.json``: a MOS study's rater page (launched as the CLI launches it)."""
    from hug_vis_dataset.space.app import launch

    release = world["release"]
    systems = sorted(p.name for p in (release / "simulated_systems" / "voice_cloning").iterdir() if p.is_dir())
    study = world["root"] / "mos.json"
    study.write_text(json.dumps({"name": "phone", "protocol": "mos", "tasks": {"voice_cloning": {"systems": systems}},
                                 "clips": "all", "ratings_per_item": 1, "items_per_session": 3, "seed": 2}))
    demo, url = launch(release, world["results"], port=free_port(), work_dir=world["root"] / "rater-work",
                       block=False, rater=True, study=study)
    yield url
    demo.close()


def test_the_raters_1_to_5_scale_stays_on_one_line_on_a_phone(rater_url, browser):
    from playwright.sync_api import expect

    page = _page(browser, rater_url, width=390, height=844)
    page.locator("#mos-rater textarea").fill("phone_rater")
    page.get_by_role("button", name="Start / resume").click()
    expect(page.locator("#mos-score-0 label").first).to_be_visible()
    for scale in page.locator("[id^=mos-score-]").all():
        if not scale.is_visible():
            continue
        tops = {round(box["y"]) for box in (label.bounding_box() for label in scale.locator("label").all()) if box}
        labels = [t.strip() for t in scale.locator("label").all_inner_texts()]
        assert labels == ["1", "2", "3", "4", "5"] and len(tops) == 1, (labels, tops)
    assert page.evaluate(CLIPPED) == []
    page.close()

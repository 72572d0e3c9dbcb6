"""The explorer's Chinese prompts and transcripts are drawn with a CJK font, not as fallback boxes.

The explorer is started through its real launch path (``hug_vis_dataset.space.app.launch``, which
passes the font stack of ``space/style.py`` as the page's CSS) over a one-clip synthetic release,
and driven in Debian's headless Chromium: the clip inspector shows the clip's Mandarin prompt;
its computed font stack names the CJK family that ``scripts/setup_system.sh`` installs,
``document.fonts.check`` says that family can draw the prompt, and at screenshot level two
different characters of the prompt draw two different glyphs with ink (tofu boxes are identical).
"""

from __future__ import annotations

import io
import os

import numpy as np
import pytest

from browser_support import NEEDS_CHROMIUM, free_port, launch_chromium

from hug_vis_dataset.space.style import FONT_STACK

CJK_FAMILY = "WenQuanYi Micro Hei"
pytestmark = [
    pytest.mark.browser,
    NEEDS_CHROMIUM,
]


def _png_gray(data: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(data)).convert("L"), dtype=np.int16)


def test_inspector_prompt_is_drawn_with_a_cjk_font(tmp_path):
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from playwright.sync_api import expect, sync_playwright

    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.space.app import launch
    from hug_vis_dataset.synth import synthesize

    release = tmp_path / "release"
    synthesize(release, actors=1, emotions=["Happy"], actions=1, scripts=1, seconds=0.3, size=(32, 18), systems=False)
    prompt = next(iter(Release(release))).transcript
    demo, url = launch(release, tmp_path / "results", port=free_port(), work_dir=tmp_path / "work", block=False)
    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.set_default_timeout(60_000)
            expect.set_options(timeout=60_000)
            page.goto(url)
            page.get_by_role("tab", name="Clip inspector").click()
            page.locator("#inspector-show").click()
            text = page.locator("#inspector-text")
            expect(text).to_contain_text("actor 1 · Happy · action 1 · script 1")  # the clip as read
            shown = text.inner_text()
            cjk = [ch for ch in dict.fromkeys(shown) if "\u4e00" <= ch <= "\u9fff"]
            assert len(cjk) >= 2, f"no Chinese prompt in the inspector: {shown[:300]!r}"
            if prompt:
                assert prompt in shown
            # The element holding the prompt uses the stack that names the installed CJK family ...
            family = text.evaluate(
                """(el, chars) => {
                    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
                    let node; while ((node = walker.nextNode())) { if (node.textContent.includes(chars)) break; }
                    return getComputedStyle(node ? node.parentElement : el).fontFamily;
                }""", cjk[0])
            assert CJK_FAMILY in family, family
            # ... which the browser can use to draw those characters,
            assert page.evaluate("([f, t]) => document.fonts.check(`16px \"${f}\"`, t)", [CJK_FAMILY, "".join(cjk)])
            # and, at screenshot level, two different characters are two different inked glyphs.
            page.evaluate(
                """([stack, a, b]) => { for (const [id, ch] of [["cjk-a", a], ["cjk-b", b]]) {
                    const s = document.createElement("span"); s.id = id; s.textContent = ch;
                    s.style.cssText = `font: 48px ${stack}; position: fixed; top: 0; left: ${id == "cjk-a" ? 0 : 80}px;
                                       z-index: 99999; background: #fff; color: #000; padding: 4px; line-height: 1`;
                    document.body.prepend(s); } }""", [FONT_STACK, cjk[0], cjk[1]])
            first = _png_gray(page.locator("#cjk-a").screenshot())
            second = _png_gray(page.locator("#cjk-b").screenshot())
            browser.close()
    finally:
        demo.close()
    assert first.shape == second.shape
    ink = min((first < 128).sum(), (second < 128).sum())
    assert ink > 30, ink  # glyphs with ink
    # distinct glyphs: tofu boxes would be the same picture for both characters
    assert ((first < 128) != (second < 128)).sum() > 0.3 * ink

"""The fonts of the Spaces: a stack that draws Chinese prompts and transcripts, not fallback boxes.

Gradio's default stack (a Latin web font, then ``ui-sans-serif``/``system-ui``) has no CJK glyph,
so a browser without a CJK system font draws the inspector's Mandarin prompts as tofu boxes. The
stack names the CJK families a visitor's system is likely to have (macOS, Windows, Noto/Source
Han on Linux and Android) and WenQuanYi Micro Hei, which ``scripts/setup_system.sh`` installs for
the test browser (Debian ``fonts-wqy-microhei``, 1.6 MB).

Example:
    >>> "WenQuanYi Micro Hei" in FONT_STACK and FONT_CSS.startswith(":root")
    True
"""

from __future__ import annotations

#: Latin first (Gradio's look), then CJK families, then the generic fallback.
FONT_FAMILIES: tuple[str, ...] = (
    "Source Sans Pro", "ui-sans-serif", "system-ui", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei",
    "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Micro Hei", "sans-serif",
)
#: The families as a CSS ``font-family`` value.
FONT_STACK = ", ".join(f'"{f}"' if " " in f else f for f in FONT_FAMILIES)
#: CSS a Space passes to ``launch(css=...)``: Gradio's font variables and every element use the stack.
FONT_CSS = (f":root, .gradio-container {{ --font: {FONT_STACK}; font-family: {FONT_STACK}; }}\n"
            f".gradio-container * {{ font-family: {FONT_STACK}; }}\n"
            ".gradio-container code, .gradio-container pre { font-family: ui-monospace, monospace; }\n")

#: Narrow screens (a phone is 390 px wide) and tables wider than their box: what Gradio's defaults get wrong there,
#: measured in Chromium (tests/test_browser_layout.py).
#: * a hint shown only while the board is wider than its box (``hugvis-overflow-hint``, toggled by the board's own
#:   script, :data:`~hug_vis_dataset.space.ui.SORT_ON_CLICK`: at 1280 px a MOS table can be wider too);
#: * a dropdown's chosen text ends in an ellipsis before the arrow, never running under it;
#: * below 600 px every dropdown and every block beside another (a file field's name: "prediction.zip", not ".z")
#:   takes a whole line, with the page's and the blocks' side padding reduced and a dropdown's value at 12 px, so a
#:   value such as "Vision-driven video generation / vis_poor" or
#:   "actor 2 · Surprised · action 1 · script 1" is read whole, not cut to "Video matt…";
#: * a rating scale's five options stay on one line (Gradio wraps its radio options, "5" fell to a line alone).
NARROW_CSS = (".hugvis-overflow-hint { display: none !important; }\n"
              ".hugvis-overflow-hint.hugvis-overflowing { display: block !important; }\n"
              # a long dropdown value ends in an ellipsis before the arrow (the arrow sits over the input's
              # right end), rather than running under it
              ".gradio-container input[role=combobox] { text-overflow: ellipsis;"
              " padding-right: 26px !important; box-sizing: border-box; }\n"
              # The page's side padding, 8 px below 600 px and Gradio's 32 px above: a step written as a clamp,
              # because Gradio prefixes every rule inside @media with its ".contain", which .main is outside of.
              ".gradio-container .main { padding-left: clamp(8px, calc((100vw - 600px) * 100 + 8px), 32px) !important;"
              " padding-right: clamp(8px, calc((100vw - 600px) * 100 + 8px), 32px) !important; }\n"
              # Inside @media, selectors start inside .contain (Gradio adds ".gradio-container... .contain" to each).
              "@media (max-width: 600px) {\n"
              "  .form > .block, .row > .block { flex: 1 1 100% !important; min-width: 100% !important;"
              " padding-left: 8px !important; padding-right: 8px !important; }\n"
              "  .wrap-inner { padding-left: 8px !important; padding-right: 8px !important; }\n"
              "  input[role=combobox] { font-size: 12px !important; }\n"
              "  .hugvis-scale .wrap { flex-wrap: nowrap !important; gap: 4px !important; }\n"
              "  .hugvis-scale .wrap label { flex: 1 1 0; min-width: 0; padding-left: 6px !important;"
              " padding-right: 6px !important; justify-content: center; }\n"
              "}\n")
#: The CSS every Space passes to ``launch(css=...)``: fonts, then the narrow-screen rules.
PAGE_CSS = FONT_CSS + NARROW_CSS

#: Status words Gradio 6.31's status tracker announces (``role="status"``, read by screen readers and in
#: the page's text) through i18n keys its bundle does not translate, so the raw key "common.complete"
#: reached the page after every event; every Space passes these to ``launch(i18n=...)``.
STATUS_WORDS: dict[str, str] = {"common.complete": "Complete", "common.error": "Error"}


def launch_i18n():
    """``gr.I18n`` with :data:`STATUS_WORDS` for English (the fallback of every locale)."""
    import gradio as gr

    return gr.I18n(en=dict(STATUS_WORDS))

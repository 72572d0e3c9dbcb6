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

#: Status words Gradio 6.31's status tracker announces (``role="status"``, read by screen readers and in
#: the page's text) through i18n keys its bundle does not translate, so the raw key "common.complete"
#: reached the page after every event; every Space passes these to ``launch(i18n=...)``.
STATUS_WORDS: dict[str, str] = {"common.complete": "Complete", "common.error": "Error"}


def launch_i18n():
    """``gr.I18n`` with :data:`STATUS_WORDS` for English (the fallback of every locale)."""
    import gradio as gr

    return gr.I18n(en=dict(STATUS_WORDS))

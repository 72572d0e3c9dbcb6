"""What every browser test shares: the project's own Chromium, how it is launched, a free port.

Chromium is Debian's (``/usr/bin/chromium``; ``make`` installs it when run as root), driven by
Playwright; the flags keep it off the network this machine does not have (without
``--disable-background-networking`` it opens connections that are refused, many at a time).
"""

from __future__ import annotations

import contextlib
import socket
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
#: Skip a browser module, naming the package, where Chromium is absent.
NEEDS_CHROMIUM = pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason=f"Chromium is not installed at {CHROMIUM} "
                                    "(Debian package 'chromium'; `make` installs it when run as root)")


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch_chromium(playwright):
    """Headless Chromium from a ``sync_playwright()`` context, with the project's flags."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)


@contextlib.contextmanager
def chromium_session(timeout_ms: int):
    """One Chromium for a test module, Playwright's expectations waiting up to ``timeout_ms``."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=timeout_ms)
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser, url: str, timeout_ms: int, width: int = 1400, height: int = 1000, board: bool = False):
    """A new page at ``url`` with ``timeout_ms`` as its default wait; with ``board``, after the explorer's
    leaderboard has drawn its first cell (the page's load event draws it: wait before interacting)."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.set_default_timeout(timeout_ms)
    page.goto(url)
    if board:
        page.locator("#leaderboard td").first.wait_for()
    return page


def choose(page, elem_id: str, option: str) -> None:
    """Pick ``option`` (its shown text) in the Gradio dropdown with ``elem_id``."""
    page.locator(f"#{elem_id} input").first.click()
    page.get_by_role("option", name=option, exact=True).click()


def tick(page, elem_id: str, label: str) -> None:
    """Tick the box labelled ``label`` in the Gradio checkbox group with ``elem_id``."""
    page.locator(f"#{elem_id}").get_by_label(label, exact=True).check()


def matting_zip(release: Path, path: Path, system: str, clips: "int | None" = None) -> Path:
    """A Score-tab upload: the first ``clips`` clips (all with None) of a simulated matting system of ``release``,
    zipped as ``<system>/<clip>/<frame>.png``."""
    import zipfile

    folder = release / "simulated_systems" / "matting" / system
    chosen = sorted(p.name for p in folder.iterdir() if p.is_dir())[:clips]
    with zipfile.ZipFile(path, "w") as archive:
        for clip in chosen:
            for png in sorted((folder / clip).glob("*.png")):
                archive.write(png, f"{system}/{clip}/{png.name}")
    return path

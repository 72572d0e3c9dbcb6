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

"""Make the README's two pictures from the demo: ``docs/leaderboard.png`` and ``docs/viewer.png``.

The explorer is started on the demo's release and results (``OUT/release`` and ``OUT/results``
after ``hugvis demo --out OUT``, ``make demo``'s output) and only on them: the pictures show the
demo's full synthetic grid, its simulated systems and baselines, as the explorer draws them now.
Without a demo output the script stops and says how to make one (run ``make demo`` first).
Headless Chromium (Debian's ``/usr/bin/chromium``) through Playwright takes the screenshots.

Usage: ``.venv/bin/python scripts/make_readme_pictures.py [--demo-out demo_out] [--out docs]``
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
#: The run the viewer picture shows: a simulated matting system with visible errors, so the error map
#: and the per-frame curve have something to show (the demo stores runs of every task).
VIEWER_RUN = ("matting", "matte_fair")


def demo_inputs(demo_out: Path) -> "tuple[Path, Path] | str":
    """``(release, results)`` of a finished demo output, or why ``demo_out`` is not one."""
    release, results = demo_out / "release", demo_out / "results"
    if not (release / "metadata" / "clips.csv").is_file():
        return (f"{release} is not a release tree (no metadata/clips.csv): run `make demo` "
                f"(or hugvis demo --out {demo_out})")
    if not (results / "matting").is_dir():
        return f"{results} holds no matting results: run `make demo` (or hugvis demo --out {demo_out}) to the end"
    return release, results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo-out", type=Path, default=Path("demo_out"))
    parser.add_argument("--out", type=Path, default=Path("docs"))
    args = parser.parse_args()
    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from playwright.sync_api import sync_playwright

    from hug_vis_dataset import catalog
    from hug_vis_dataset.space.app import Explorer, app_kwargs, build_app

    found = demo_inputs(args.demo_out)
    if isinstance(found, str):
        print(f"error: {found}", file=sys.stderr)
        return 2
    release, results = found
    work = Path(tempfile.mkdtemp(prefix="hugvis-pictures-"))
    explorer = Explorer(release, results, work_dir=work / "space")
    demo = build_app(explorer)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    _, url, _ = demo.launch(server_name="127.0.0.1", server_port=port, prevent_thread_lock=True, quiet=True,
                            allowed_paths=[str(release), str(work), str(results)], app_kwargs=app_kwargs(explorer))
    args.out.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(60_000)
            page.goto(url)
            page.locator("#leaderboard td").first.wait_for()
            page.locator("#board-table input").first.click()
            page.get_by_role("option", name="Table 11: Objective results of video matting").click()
            page.locator("#board-show").get_by_label("synthetic demo", exact=True).check()
            page.locator("#leaderboard tr", has_text="synthetic demo").first.wait_for()
            page.locator("#leaderboard th", has_text="MAD").click()
            page.wait_for_timeout(800)
            page.locator("#leaderboard").screenshot(path=str(args.out / "leaderboard.png"))
            page.get_by_role("tab", name="Per-clip viewer").click()
            page.locator("#viewer-run input").first.click()
            # the viewer lists runs by the task's label, as a person reads it (catalog.TaskSpec.label)
            page.get_by_role("option", name=f"{catalog.task(VIEWER_RUN[0]).label} / {VIEWER_RUN[1]}", exact=True).click()
            page.locator("#viewer-output img").first.wait_for()
            number = page.locator("#viewer-frame input[type=number]")
            number.fill("5")
            number.press("Enter")
            page.locator("#viewer-text", has_text="frame 5 of").wait_for()
            page.wait_for_timeout(800)
            page.screenshot(path=str(args.out / "viewer.png"), full_page=True)
            browser.close()
    finally:
        demo.close()
    print(f"wrote {args.out / 'leaderboard.png'} and {args.out / 'viewer.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

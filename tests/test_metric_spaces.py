"""The metric Space app in this checkout: uploads become the module's inputs, the bundled example
button computes what the module computes, and the result table names units and direction.

The installed, published Spaces are driven in a browser by ``tests/test_cleanroom.py``; here the
app is launched through the same ``launch(app_file)`` in this process, for the kinds of input the
clean room does not cover (emotion answers; the example button).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from hug_vis_dataset.space.metric_examples import compute_inputs, example_inputs, read_answers

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_emotion_answers_take_their_reference_from_the_clip_id():
    answers = read_answers(REPO / "metrics" / "emotion_accuracy" / "examples" / "predictions.jsonl")
    assert len(answers["predictions"]) == len(answers["references"]) == 16  # 4 clips x 4 input settings
    assert set(answers["references"]) == {"Happy", "Sad"}
    inputs = compute_inputs("emotion_accuracy", REPO / "metrics" / "emotion_accuracy" / "examples" / "predictions.jsonl")
    assert sorted(inputs) == ["input_settings", "predictions", "references"]


def test_uploads_need_their_reference_and_zips_hold_pngs(tmp_path):
    with pytest.raises(ValueError, match="upload both"):
        compute_inputs("mad", REPO / "metrics" / "mad" / "examples" / "prediction.zip")
    (tmp_path / "empty.zip").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    with pytest.raises(ValueError, match="holds no PNG frame"):
        compute_inputs("mad", tmp_path / "empty.zip", tmp_path / "empty.zip")
    inputs = example_inputs(REPO / "metrics" / "mad")
    assert [len(os.listdir(p)) for p in inputs["predictions"] + inputs["references"]] == [30, 30]  # 1 s at 30 fps


@pytest.mark.browser
@pytest.mark.slow  # about 30 s each when quiet (Gradio start, evaluate.load, Chromium)
@pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason=f"Chromium is not installed at {CHROMIUM}")
@pytest.mark.parametrize("name", ["emotion_accuracy", "mad"])
def test_bundled_example_button_shows_the_module_output(name, monkeypatch):
    import evaluate
    from playwright.sync_api import expect, sync_playwright

    from hug_vis_dataset.space.metric_app import launch

    port = _free_port()
    monkeypatch.setenv("GRADIO_SERVER_PORT", str(port))
    monkeypatch.setenv("GRADIO_ANALYTICS_ENABLED", "False")
    folder = REPO / "metrics" / name
    demo = launch(folder / "app.py", block=False)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.set_default_timeout(60_000)
            expect.set_options(timeout=60_000)
            page.goto(f"http://127.0.0.1:{port}/")
            page.locator("#use-example").click()
            row = page.locator(f'#result tr[data-key="{name}"]')
            row.wait_for()
            cells = row.locator("td").all_inner_texts()
            # the example file is put in the upload field (it links the file)
            page.locator(f'#prediction a[href$="/{next((folder / "examples").glob("prediction*")).name}"]').wait_for()
            browser.close()
    finally:
        demo.close()
    expected = evaluate.load(str(folder)).compute(**example_inputs(folder))
    assert float(cells[0]) == pytest.approx(expected[name], rel=1e-5)
    assert cells[2] == "higher is better" if name == "emotion_accuracy" else cells[2] == "lower is better"
    assert cells[1] == ("per-clip correctness (0/1), x100" if name == "emotion_accuracy" else "mean |alpha error| x1e3")

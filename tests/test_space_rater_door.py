"""``hugvis space --rater`` as a user starts it: a real process serving the rater page alone.

The page's component tree (Gradio's ``/config``) holds the rating form and nothing of the
explorer: no leaderboard, no Submit tab, and no system name of the release's simulated systems.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_rater_door_serves_the_blind_form_alone(tmp_path):
    from hug_vis_dataset.synth import synthesize

    release = tmp_path / "release"
    summary = synthesize(release, actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.3,
                         size=(32, 18))
    systems = sorted(p.name for task in (release / "simulated_systems").iterdir() if task.is_dir()
                     for p in task.iterdir() if p.is_dir())
    assert systems, summary
    port = _free_port()
    env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"}
    process = subprocess.Popen([sys.executable, "-m", "hug_vis_dataset.cli", "space", "--rater", "--release",
                                str(release), "--results", str(tmp_path / "results"), "--work-dir",
                                str(tmp_path / "work"), "--port", str(port)],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        config, deadline = None, time.monotonic() + 180
        while config is None and time.monotonic() < deadline:
            assert process.poll() is None, process.stdout.read().decode()[-3000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/config", timeout=5) as response:
                    config = json.loads(response.read())
            except OSError:
                time.sleep(0.5)
        assert config is not None, "the rater page never came up"
        text = json.dumps(config)
        assert config["title"] == "HUG-VIS rating study"
        assert "Start / resume" in text and "rater id" in text.lower()
        for absent in ("Leaderboards", "Submit to the leaderboard", "Score a submission", "Cross-task"):
            assert absent not in text
        assert not [name for name in systems if name in text]
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)

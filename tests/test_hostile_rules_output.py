"""Text a person reads (issue 52): one output rule for everything a command writes to a terminal
(``escaping.terminal_text`` / ``safe_output``, installed by ``hugvis``'s ``main``).

Classes generated:

* names holding control characters (ESC sequences, C1 controls, a stray CR) or bidirectional controls (a
  right-to-left override reversed the rest of the line): printed as visible escapes, every other character
  as it is;
* an output stream that cannot encode what is printed (``PYTHONIOENCODING=ascii``, some CI and cron
  set-ups): commands died with UnicodeEncodeError after their work was done; now every character the stream
  lacks is its ``\\uXXXX`` escape and the command's status is its own.

Real subprocesses of ``hugvis`` with a real ASCII standard output.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
FEW = settings(FUZZ, max_examples=8)
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
CONTROLS = "".join(map(chr, [*range(0, 9), 11, 12, *range(14, 32), 127, *range(0x80, 0xA0)]))
# What must never reach a terminal raw (CR is allowed only as a progress bar's first character).
UNSAFE = re.compile(f"[{re.escape(BIDI + CONTROLS)}]")

hostile_text = st.text(alphabet=st.one_of(st.characters(codec="utf-8", exclude_characters="\r\\"),
                                          st.sampled_from(list(BIDI + CONTROLS))), min_size=1, max_size=25)


def _unescape(text: str) -> str:
    return re.sub(r"\\x([0-9a-f]{2})|\\u([0-9a-f]{4})|\\U([0-9a-f]{8})",
                  lambda m: chr(int(m.group(1) or m.group(2) or m.group(3), 16)), text)


@FUZZ
@given(text=hostile_text, encoding=st.sampled_from(["ascii", "utf-8", "latin-1", "cp1252"]))
def test_a_safe_stream_shows_every_unsafe_character_and_never_fails_to_encode(text, encoding):
    from hug_vis_dataset.presentation.escaping import SafeStream

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding=encoding, newline="")
    SafeStream(stream).write(text + "\n")
    stream.flush()
    written = raw.getvalue().decode(encoding)
    assert not UNSAFE.search(written), ascii(written)
    assert _unescape(written) == text + "\n"  # nothing lost: every escape names the character it replaced
    safe_chars = [c for c in text if not UNSAFE.match(c)]
    if all(_encodes(c, encoding) for c in safe_chars):
        assert written == UNSAFE.sub(lambda m: _escape(m.group(0)), text) + "\n"  # the rest as it is


def _encodes(char: str, encoding: str) -> bool:
    try:
        char.encode(encoding)
        return True
    except UnicodeEncodeError:
        return False


def _escape(char: str) -> str:
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def _hugvis(args, tmp_path, encoding="ascii"):
    env = {**os.environ, "PYTHONIOENCODING": encoding, "HUGVIS_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "hug_vis_dataset.cli", *args], capture_output=True, env=env,
                          cwd=tmp_path, timeout=300)


@FEW
@given(name=hostile_text.filter(lambda t: "/" not in t and "\x00" not in t and t not in (".", "..")))
def test_a_hostile_folder_name_in_a_one_line_error_reaches_the_terminal_escaped(tmp_path, name):
    done = _hugvis(["validate", str(tmp_path / f"rel_{name}")], tmp_path)
    err = done.stderr.decode("ascii")  # an ASCII stream got ASCII
    assert done.returncode == 2 and "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and not UNSAFE.search(err)
    shown = _unescape(lines[0])
    assert f"rel_{name}" in shown or f"rel_{' '.join(name.split())}" in shown


@pytest.fixture(scope="module")
def emotion_world(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("ascii_out")
    synthesize(root / "rel", actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.2, size=(32, 18),
               progress=False)
    return root


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_command_with_an_ascii_stdout_finishes_and_prints_non_ascii_as_escapes(emotion_world, tmp_path, encoding):
    """``hugvis evaluate`` prints its table (arrows) and the paths it wrote: with an ASCII stdout it died with
    UnicodeEncodeError after storing the run, exit 1."""
    system = sorted((emotion_world / "rel" / "simulated_systems" / "emotion").iterdir())[0]
    out = tmp_path / "out_\u202eevil_\u4e2d\u00e9"
    done = _hugvis(["evaluate", "emotion", "--predictions", str(system), "--model", "m", "--dataset",
                    str(emotion_world / "rel"), "--out", str(out), "--no-progress"], tmp_path, encoding)
    text = done.stdout.decode(encoding) + done.stderr.decode(encoding)
    assert done.returncode == 0, text
    assert "UnicodeEncodeError" not in text and "can't encode" not in text
    assert "\\u202e" in text and ("\\u2191" in text or "\\u2193" in text)  # the override and the table's arrows
    assert not UNSAFE.search(text)
    assert (out / "emotion" / "m" / "rows.parquet").is_file()


def test_markdown_and_html_show_bidi_controls_as_escapes():
    from hug_vis_dataset.presentation.escaping import html_text, markdown_text, one_line

    for render in (one_line, markdown_text, html_text):
        shown = render("model_\u202egnp.exe")
        assert "\u202e" not in shown and "u202e" in shown
    assert unicodedata.bidirectional(one_line("\u05d0")) == "R"  # right-to-left letters stay letters

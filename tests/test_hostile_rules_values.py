"""Values of a valid but unexpected form (issue 52): one typed, bounded reader per kind of value
(``readers/values.py``), used by every file the toolkit parses.

Classes generated, not cases listed:

* timestamps in any ISO 8601 form a person or another tool writes (no zone, ``Z``, any offset, a space
  for ``T``, fractions): a leaderboard request holding them is read into one UTC form, so its status,
  its staleness and the queue order agree with the instants they name (the naive one crashed ``leaderboard
  status`` and the worker: ``can't subtract offset-naive and offset-aware datetimes``);
* JSON numbers too long to be a toolkit value, numbers that overflow to infinity, and containers nested
  deeper than any toolkit file: a per-clip answer file holding one is that line's one-line error naming the
  file and line (it stopped the whole evaluation with Python's own message); ``--check-only`` still checks
  every other clip.
"""

from __future__ import annotations

import datetime as dt
import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hug_vis_dataset.errors import HugvisError
from hug_vis_dataset.readers import InputFileError

FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
CLIP = "actor_0001_happy_action_01_script_001"


# ----------------------------------------------------------------------------- timestamps
@st.composite
def written_times(draw):
    """(text as a person or tool writes it, the instant it names): naive = UTC, the format's zone."""
    naive = draw(st.datetimes(min_value=dt.datetime(2001, 1, 1), max_value=dt.datetime(2090, 1, 1)))
    zone = draw(st.one_of(st.none(), st.just("Z"), st.integers(-14 * 60, 14 * 60)))
    spec = draw(st.sampled_from(["seconds", "milliseconds", "microseconds", "minutes"]))
    sep = draw(st.sampled_from(["T", " "]))
    if spec == "minutes":
        naive = naive.replace(second=0, microsecond=0)
    elif spec == "seconds":
        naive = naive.replace(microsecond=0)
    elif spec == "milliseconds":
        naive = naive.replace(microsecond=naive.microsecond // 1000 * 1000)
    if zone is None:
        return naive.isoformat(sep=sep, timespec=spec), naive.replace(tzinfo=dt.timezone.utc)
    if zone == "Z":
        return naive.isoformat(sep=sep, timespec=spec) + "Z", naive.replace(tzinfo=dt.timezone.utc)
    aware = naive.replace(tzinfo=dt.timezone(dt.timedelta(minutes=zone)))
    return aware.isoformat(sep=sep, timespec=spec), aware


def _request_file(tmp_path, name: str, **fields) -> "tuple":
    from hug_vis_dataset.leaderboard.requests import ScoringRequest

    request = ScoringRequest("matting", name, "alice/good", "a" * 40, "alice", "2026-12-01T00:00:00+00:00")
    data = {**json.loads(request.to_json()), **fields}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path, request.path


@FUZZ
@given(submitted=written_times(), heartbeat=written_times(), claimed=written_times())
def test_a_request_reads_every_time_form_into_one_utc_form(tmp_path, submitted, heartbeat, claimed):
    from hug_vis_dataset.leaderboard.queue_view import status_lines
    from hug_vis_dataset.leaderboard.requests import QueueState, claimable, read_request_file, seconds_since

    path, name = _request_file(tmp_path, "Mine", submitted_at=submitted[0], heartbeat_at=heartbeat[0],
                               claimed_at=claimed[0], status="RUNNING", worker="w1",
                               history=[{"status": "RUNNING", "at": claimed[0]}])
    request = read_request_file(path, name)
    for field, (_, instant) in (("submitted_at", submitted), ("heartbeat_at", heartbeat), ("claimed_at", claimed)):
        stored = getattr(request, field)
        assert stored.endswith("+00:00")  # the one form
        assert dt.datetime.fromisoformat(stored) == instant  # the same instant
    assert request.history[0]["at"] == request.claimed_at
    # status and staleness work on it and agree with an independent difference of the instants
    now = dt.datetime(2091, 1, 1, tzinfo=dt.timezone.utc)
    assert seconds_since(request.heartbeat_at, now.isoformat()) == (now - heartbeat[1]).total_seconds()
    assert seconds_since(heartbeat[0], now.replace(tzinfo=None).isoformat()) == (now - heartbeat[1]).total_seconds()
    state = QueueState("h", [request])
    assert claimable(state, now.isoformat(), 60) is request  # its heartbeat is older than a minute
    assert any("Mine" in line for line in status_lines(state))


@FUZZ
@given(first=written_times(), second=written_times())
def test_the_queue_is_ordered_by_instant_whatever_the_offsets(tmp_path, first, second):
    from hug_vis_dataset.leaderboard.requests import QueueState, claimable, read_request_file

    requests = []
    for name, (text, _) in (("A", first), ("B", second)):
        path, where = _request_file(tmp_path, name, submitted_at=text)
        requests.append(read_request_file(path, where))
    from hug_vis_dataset.leaderboard.requests import _order

    requests.sort(key=_order)
    expected = sorted((("A", first[1]), ("B", second[1])), key=lambda item: (item[1], item[0]))
    assert [r.model for r in requests] == [name for name, _ in expected]
    assert claimable(QueueState("h", requests), "2091-01-01T00:00:00", 60).model == expected[0][0]


@FUZZ
@given(text=st.one_of(st.text(max_size=30), st.integers().map(str)).filter(lambda t: not t.strip().isdigit()))
def test_a_time_that_is_no_time_is_one_line_naming_the_field(tmp_path, text):
    from hug_vis_dataset.leaderboard.requests import RequestError, read_request_file
    from hug_vis_dataset.readers.values import parse_utc

    if parse_utc(text) is not None:
        return  # a real time after all (hypothesis can draw "2001-01-01")
    path, name = _request_file(tmp_path, "Mine", heartbeat_at=text)
    with pytest.raises(RequestError) as caught:
        read_request_file(path, name)
    message = str(caught.value)
    assert "\n" not in message and name in message and "heartbeat_at" in message


# ----------------------------------------------------------------------------- JSON numbers and depth
@st.composite
def hostile_json(draw):
    """A JSON value text a per-clip answer line could hold that no toolkit file does."""
    kind = draw(st.sampled_from(["digits", "overflow", "deep_list", "deep_object"]))
    if kind == "digits":
        return json.dumps({"clip_id": CLIP, "answer": "Happy"})[:-1] + ', "score": ' + "7" * draw(
            st.integers(41, 6000)) + "}"
    if kind == "overflow":
        exponent = draw(st.integers(309, 100_000))
        mantissa = draw(st.sampled_from(["1", "9.5", "-2", "0.7"]))
        return json.dumps({"clip_id": CLIP, "answer": "Happy"})[:-1] + f', "score": {mantissa}e{exponent}' + "}"
    depth = draw(st.integers(33, 5000))
    if kind == "deep_list":
        inner = "[" * depth + "]" * depth
    else:
        inner = '{"a": ' * depth + "1" + "}" * depth
    return json.dumps({"clip_id": CLIP, "answer": "Happy"})[:-1] + f', "extra": {inner}' + "}"


@FUZZ
@given(line=hostile_json(), before=st.integers(0, 3))
def test_a_hostile_number_or_depth_is_a_one_line_error_naming_file_and_line(tmp_path, line, before):
    from hug_vis_dataset.metrics.emotion import iter_prediction_lines, read_predictions_jsonl

    path = tmp_path / "predictions.jsonl"
    good = json.dumps({"clip_id": "actor_0002_sad_action_01_script_001", "answer": "Sad"})
    path.write_text("\n".join([good] * before + [line, good]) + "\n", encoding="utf-8")
    with pytest.raises(InputFileError) as caught:
        read_predictions_jsonl(path)
    message = str(caught.value)
    assert "\n" not in message and f"predictions.jsonl:{before + 1}:" in message
    # the scorer's reader records the line and goes on with the others
    seen = list(iter_prediction_lines(path))
    assert [record is None for _, record, _ in seen] == [False] * before + [True, False]


@FUZZ
@given(value=st.recursive(st.none() | st.booleans() | st.integers(-10**30, 10**30) |
                          st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
                          lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3),
                                                                                              children, max_size=3),
                          max_leaves=20))
def test_values_within_the_bounds_read_exactly_as_written(value):
    from hug_vis_dataset.readers.json_files import loads_strict

    text = json.dumps(value)
    assert loads_strict(text, "x.json") == json.loads(text)


def test_every_json_door_is_bounded(tmp_path):
    """The bounds hold for every JSON file, not only answers: a study file, a stored summary, a request."""
    from hug_vis_dataset.leaderboard.requests import read_request_file
    from hug_vis_dataset.readers.json_files import read_json
    from hug_vis_dataset.studies.spec import StudyFileError, load_study

    study = tmp_path / "study.json"
    study.write_text('{"name": "s", "seed": ' + "9" * 5000 + "}", encoding="utf-8")
    with pytest.raises(StudyFileError, match="study.json: line 1: a number with 5000 digits"):
        load_study(study, [CLIP])
    summary = tmp_path / "summary.json"
    summary.write_text('{"metrics": {"psnr": 1e400}}', encoding="utf-8")
    with pytest.raises(InputFileError, match="1e400 is too large"):
        read_json(summary)
    path, name = _request_file(tmp_path, "Deep", failure=json.loads("[" * 40 + "]" * 40))
    with pytest.raises(HugvisError, match="nests more than 32 levels deep"):
        read_request_file(path, name)
    near = tmp_path / "near.json"
    near.write_text('{"v": 1.5e300}', encoding="utf-8")
    assert read_json(near)["v"] == 1.5e300 and math.isfinite(read_json(near)["v"])

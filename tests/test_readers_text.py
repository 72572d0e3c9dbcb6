"""The text-file readers (issue 35): JSON, JSON Lines and CSV, each real file kind the toolkit reads
through them, fuzzed, and the named class "JSON that parses but lies" (a duplicated key).

The property (hypothesis, derandomized): a damaged file -- truncated at any byte, garbage appended, a
key given twice, a column extra, missing, renamed or duplicated, a value of the wrong type, a BOM or
CRLF line ends, a line repeated -- given to the real consumer (``Release(root)``,
``read_predictions_jsonl``, ``read_ratings``, ``read_preferences``, ``load_study``,
``read_request_file``, ``read_run``, ``expected_grid``) gives either the project's one-line error (a
:class:`~hug_vis_dataset.errors.HugvisError` whose text has no newline and names the file) or exactly
the clean file's result (truncated at a line boundary: the clean result of the lines that remain);
where the consumer reports bad rows instead of raising (the release's ``row_errors``, the ratings'
``invalid``), a changed result must come with such a report. Never another exception type, never a
silently different value. Every clean file is written by the toolkit's own writers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hug_vis_dataset.errors import HugvisError
from hug_vis_dataset.readers import InputFileError
from hug_vis_dataset.readers.csv_files import read_csv_table
from hug_vis_dataset.readers.json_files import iter_json_lines, loads_strict, read_json, require_fields

FUZZ = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
ERROR = "error"


# ----------------------------------------------------------------------------- the real files
@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Any]:
    """Clean files of every kind, each written by the toolkit's own writer."""
    from hug_vis_dataset.leaderboard.requests import ScoringRequest
    from hug_vis_dataset.predict.emotion import write_answers
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.scoring.runner import evaluate_submission
    from hug_vis_dataset.synth import synthesize
    from hug_vis_dataset.synth.ratings import simulate_study, write_study

    root = tmp_path_factory.mktemp("text_readers")
    release = root / "release"
    synthesize(release, actors=2, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.2, size=(32, 18),
               systems=False, progress=False)
    clip_ids = [r.clip_id for r in Release(release)]
    answers = {(c, s): {"clip_id": c, "input_setting": s, "answer": a}
               for c in clip_ids for s, a in (("video", "I think she is happy"), ("audio", "sad, \"quite\" sad"))}
    from hug_vis_dataset.outputs import claim

    write_answers(claim("hugvis predict", root / "pred", "submission"), answers)
    study = write_study(simulate_study(clip_ids, {"audio_driven": {"talk_good": 0.1, "talk_poor": 0.8},
                                                  "voice_cloning": {"clone_good": 0.2, "clone_poor": 0.7}},
                                      seed=3, n_raters=3, careless=0, clip_fraction=1.0), root / "systems")
    evaluate_submission("emotion", root / "pred", "m", release, root / "results", progress=False)
    request = ScoringRequest("matting", "Mine", "alice/preds", "a" * 40, "alice", "2026-12-01T00:00:00+00:00")
    (root / "request.json").write_text(request.to_json(), encoding="utf-8")
    from hug_vis_dataset.datamodel.layout import DEFAULT_LAYOUT

    (root / "layout.json").write_text(DEFAULT_LAYOUT.to_json(), encoding="utf-8")
    return {"root": root, "release": release, "clip_ids": clip_ids, "study": study, "layout": root / "layout.json"}


@dataclass
class KindOf:
    """One file kind: where its clean file is, how its consumer reads it, what the consumer reports."""

    name: str
    source: Path
    relative: Path
    consume: Callable[[Path], Any]
    lines: bool = False  # a line-based format: truncation at a line end keeps the lines before
    prefix: "Callable[[Any, int], Any] | None" = None  # the clean result of the first n lines
    reports: Callable[[Any], bool] = lambda value: False  # the result names a bad row itself
    named: str = ""  # what a one-line error must name (default: the file's name)


def _release_value(path: Path):
    from hug_vis_dataset.datamodel.release import Release

    root = path.parents[1]
    release = Release(root)
    records = tuple((r.row_number, r.clip_id, r.transcript, r.asr_transcript, str(r.audio_path.relative_to(root)),
                     str(r.video_path.relative_to(root)), str(r.alpha_matte_path.relative_to(root)), r.duration,
                     r.fps, r.sample_rate, r.width, r.height) for r in release)
    return records, tuple(release.row_errors), tuple(release.duplicates)


def _ratings_value(path: Path):
    from hug_vis_dataset.studies.mos import RATING_COLUMNS, read_ratings

    valid, invalid = read_ratings(path)
    columns = ["line", *RATING_COLUMNS]
    return (tuple(map(tuple, valid[columns].astype(str).values.tolist())),
            tuple(map(tuple, invalid[columns].astype(str).values.tolist())))


def _preferences_value(path: Path):
    from hug_vis_dataset.studies.answers import PAIRWISE_CSV_COLUMNS, read_preferences

    return tuple(map(tuple, read_preferences(path)[list(PAIRWISE_CSV_COLUMNS)].astype(str).values.tolist()))


def _predictions_value(path: Path):
    from hug_vis_dataset.metrics.emotion import read_predictions_jsonl

    return tuple(tuple(sorted(r.items())) for r in read_predictions_jsonl(path))


def _log_value(path: Path):
    """The MOS ratings in force (one per rater, clip, model and criterion: the latest) and the skipped lines."""
    from hug_vis_dataset.studies.ratings import FRAME_COLUMNS, latest_ratings, read_log

    frame, problems = read_log(path)
    return tuple(map(tuple, latest_ratings(frame)[list(FRAME_COLUMNS)].astype(str).values.tolist())), tuple(problems)


def _mos_lines(raw: bytes, n: int) -> int:
    """How many of the log's first ``n`` lines are MOS ratings (pairwise answers are the preference store's)."""
    return sum(1 for line in raw.splitlines()[:n] if b'"kind"' not in line)


def _run_value(path: Path):
    from hug_vis_dataset.scoring.runs import DamagedRun, read_run

    run = read_run(path.parent)
    if isinstance(run, DamagedRun):
        raise HugvisError(run.message())
    # provenance is the free-form record of what ran (a command line may repeat an argument): shown, never
    # computed with; everything else is held to the clean value
    summary = {k: v for k, v in run.summary.items() if k != "provenance"}
    return json.dumps(summary, sort_keys=True), run.table.to_json()


def _kinds(made) -> dict[str, KindOf]:
    from hug_vis_dataset.leaderboard.requests import read_request_file
    from hug_vis_dataset.studies.spec import load_study
    from hug_vis_dataset.datamodel.layout import ReleaseLayout
    from hug_vis_dataset.validate.gridspec import expected_grid

    root, release, study = made["root"], made["release"], made["study"]

    def Kind(name, source, *args, **kwargs):  # noqa: N802 - the dataclass, with the path it has in the tree
        return KindOf(name, source, source.relative_to(root), *args, **kwargs)

    return {k.name: k for k in [
        Kind("clips.csv", release / "metadata" / "clips.csv", _release_value, lines=True,
             prefix=lambda clean, n: (tuple(r for r in clean[0] if r[0] <= n), (), ()),
             reports=lambda v: bool(v[1] or v[2])),
        Kind("predictions.jsonl", root / "pred" / "predictions.jsonl", _predictions_value, lines=True,
             prefix=lambda clean, n: clean[:n]),
        Kind("mos_ratings.csv", study["mos"], _ratings_value, lines=True,
             prefix=lambda clean, n: (tuple(r for r in clean[0] if int(r[0]) <= n),
                                      tuple(r for r in clean[1] if int(r[0]) <= n)),
             reports=lambda v: bool(v[1])),
        Kind("pairwise_ratings.csv", study["pairwise"], _preferences_value, lines=True,
             prefix=lambda clean, n: clean[:max(n - 1, 0)]),
        Kind("ratings.jsonl", study["log"], _log_value, lines=True,
             prefix=lambda clean, n: (clean[0][:_mos_lines(study["log"].read_bytes(), n)], ()),
             reports=lambda v: bool(v[1])),
        Kind("mos_study.json", study["mos_study"], lambda p: load_study(p, made["clip_ids"])),
        Kind("request.json", root / "request.json", lambda p: read_request_file(p, "requests/matting/Mine.json"),
             named="request"),
        Kind("summary.json", root / "results" / "emotion" / "m" / "summary.json", _run_value),
        Kind("grid.json", release / "metadata" / "grid.json", lambda p: expected_grid(p.parents[1])),
        Kind("layout.json", made["layout"], ReleaseLayout.from_json),
    ]}


KINDS = ["clips.csv", "predictions.jsonl", "ratings.jsonl", "mos_ratings.csv", "pairwise_ratings.csv", "mos_study.json",
         "request.json", "summary.json", "grid.json", "layout.json"]
CSV_KINDS = [k for k in KINDS if k.endswith(".csv")]
JSON_KINDS = [k for k in KINDS if k.endswith(".json")]


@pytest.fixture(scope="module")
def kinds(made) -> dict[str, KindOf]:
    return _kinds(made)


class Clean(dict):
    def __repr__(self) -> str:  # hypothesis prints the fixtures of a failing example: keep that short
        return f"<clean files of {sorted(self)}>"


@pytest.fixture(scope="module")
def clean(kinds, tmp_path_factory) -> dict[str, tuple[bytes, Any]]:
    """Each kind's clean bytes and the consumer's result on them (the value every damage is held to)."""
    out = Clean()
    for name, kind in kinds.items():
        data = kind.source.read_bytes()
        status, value = outcome(kind, data, tmp_path_factory.mktemp("clean"))
        assert status != ERROR, value
        out[name] = data, value
    return out


def outcome(kind: KindOf, data: bytes, where: Path) -> tuple[str, Any]:
    """The consumer's result on ``data`` placed where ``kind``'s file lives (under ``where``), or
    ``("error", text)`` for the project's one-line error naming the file; anything else raises."""
    path = where / kind.relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind.name == "summary.json":  # the run's other files, as stored
        for other in kind.source.parent.iterdir():
            if other.name != "summary.json":
                (path.parent / other.name).write_bytes(other.read_bytes())
    path.write_bytes(data)
    try:
        return "ok", kind.consume(path)
    except HugvisError as err:
        text = str(err)
        assert "\n" not in text, text
        assert (kind.named or path.name) in text, text
        return ERROR, text


def check(kind: KindOf, got: tuple[str, Any], expected: Any, may_report: bool = True) -> None:
    """The property: the one-line error, or exactly ``expected``, or (where the consumer reports bad
    rows) a result that reports them."""
    status, value = got
    if status == ERROR or value == expected:
        return
    assert may_report and kind.reports(value), f"{kind.name}: silently different result\n{value!r}\nvs\n{expected!r}"


# ----------------------------------------------------------------------------- fuzzed damage
@pytest.mark.parametrize("name", KINDS)
@FUZZ
@given(data=st.data())
def test_truncated_at_any_byte(kinds, clean, tmp_path, name, data):
    kind = kinds[name]
    raw, value = clean[name]
    cut = data.draw(st.integers(0, len(raw) - 1), label="cut")
    got = outcome(kind, raw[:cut], tmp_path)
    if kind.lines and (cut == 0 or raw[cut - 1:cut] == b"\n"):  # at a line end: the lines before stay
        check(kind, got, kind.prefix(value, raw[:cut].count(b"\n")), may_report=False)
    elif kind.lines and raw[cut:cut + 1] == b"\n":  # only the last kept line's line end went
        check(kind, got, kind.prefix(value, raw[:cut].count(b"\n") + 1), may_report=False)
    elif not raw[cut:].strip():
        check(kind, got, value, may_report=False)  # only the final line break or spaces went
    else:  # cut inside a line: the error, or (the ratings log) that line reported
        assert got[0] == ERROR or kind.reports(got[1]), f"{name} cut at byte {cut} of {len(raw)} read as {got[1]!r}"


@pytest.mark.parametrize("name", KINDS)
@FUZZ
@given(garbage=st.one_of(st.binary(min_size=1, max_size=40),
                         st.text(st.sampled_from(',;"\t\r\n {}[]:ab1'), min_size=1, max_size=30).map(str.encode)))
def test_garbage_appended(kinds, clean, tmp_path, name, garbage):
    raw, value = clean[name]
    check(kinds[name], outcome(kinds[name], raw + garbage, tmp_path), value)


@pytest.mark.parametrize("name", KINDS)
@pytest.mark.parametrize("form", ["bom", "crlf", "bom+crlf"])
def test_bom_and_crlf_give_the_clean_result(kinds, clean, tmp_path, name, form):
    raw, value = clean[name]
    damaged = raw.replace(b"\n", b"\r\n") if "crlf" in form else raw
    damaged = b"\xef\xbb\xbf" + damaged if "bom" in form else damaged
    assert outcome(kinds[name], damaged, tmp_path) == ("ok", value)


@pytest.mark.parametrize("name", KINDS)
@FUZZ
@given(data=st.data())
def test_a_line_repeated(kinds, clean, tmp_path, name, data):
    raw, value = clean[name]
    lines = raw.splitlines(keepends=True)
    index = data.draw(st.integers(0, len(lines) - 1), label="line")
    damaged = b"".join(lines[:index + 1] + [lines[index]] + lines[index + 1:])
    got = outcome(kinds[name], damaged, tmp_path)
    if name == "predictions.jsonl":  # the scorer reads the same file: it reports the repeated answer
        from hug_vis_dataset.tasks.emotion import EmotionTask

        index_ = EmotionTask().index_predictions(tmp_path / "pred" / "predictions.jsonl")
        assert index_.duplicate_keys, "a repeated prediction line is not reported"
        return
    check(kinds[name], got, value)


class Obj(list):
    """A JSON object as its (key, value) pairs, duplicates and order kept."""


def _pairs(text: str) -> Any:
    return json.loads(text, object_pairs_hook=Obj)


def _dump(value: Any) -> str:
    if isinstance(value, Obj):
        return "{" + ", ".join(f"{json.dumps(k)}: {_dump(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_dump(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def _objects(value: Any) -> list[Obj]:
    found = [value] if isinstance(value, Obj) and value else []
    for child in ([v for _, v in value] if isinstance(value, Obj) else value if isinstance(value, list) else []):
        found += _objects(child)
    return found


def _failure(kind: KindOf, got: tuple[str, Any]) -> str:
    """The one-line error's text, or the bad lines a reporting consumer (the ratings log) lists."""
    status, value = got
    if status == ERROR:
        return value
    assert kind.reports(value), f"{kind.name}: damage read as {value!r}"
    return " | ".join(value[1])


@pytest.mark.parametrize("name", JSON_KINDS + ["predictions.jsonl", "ratings.jsonl"])
@FUZZ
@given(data=st.data())
def test_a_key_given_twice_is_an_error(kinds, clean, tmp_path, name, data):
    raw, _ = clean[name]
    lines = raw.decode("utf-8").splitlines() if name.endswith(".jsonl") else [raw.decode("utf-8")]
    index = data.draw(st.integers(0, len(lines) - 1), label="line")
    tree = _pairs(lines[index])
    objects = _objects(tree)
    target = objects[data.draw(st.integers(0, len(objects) - 1), label="object")]
    at = data.draw(st.integers(0, len(target) - 1), label="pair")
    key, old = target[at]
    new = data.draw(st.sampled_from([old, "Neutral", 0, None]), label="value")
    target.insert(at + 1, (key, new))
    lines[index] = _dump(tree)
    text = _failure(kinds[name], outcome(kinds[name], ("\n".join(lines) + "\n").encode("utf-8"), tmp_path))
    assert f"duplicate key {key!r}" in text, text
    if name.endswith(".jsonl"):
        assert f"{name}:{index + 1}:" in text, text


REQUIRED_KEYS = {"mos_study.json": ("tasks",),
                 "request.json": ("task", "model", "predictions_repo", "revision", "submitter", "submitted_at"),
                 "summary.json": ("task", "model", "metrics"),
                 "predictions.jsonl": ("clip_id", "answer"),
                 "ratings.jsonl": ("rater", "task", "clip_id", "model", "criterion", "score")}
OTHER_TYPES = [0, 2.5, "x", True, None, [], {}, ["x"]]
_TEXT, _NUMBER = {"str", "NoneType"}, {"number", "NoneType"}
#: Fields declared "of this type or null": such a value there is valid, not damage.
NULLABLE = {"request.json": dict.fromkeys(("worker", "claimed_at", "heartbeat_at", "finished_at", "run_link",
                                           "failure"), _TEXT),
            "predictions.jsonl": dict.fromkeys(("answer", "input_setting"), _TEXT),
            "layout.json": {"expected_sample_rate": _NUMBER},
            "ratings.jsonl": {**dict.fromkeys(("study", "item"), _TEXT),
                              **dict.fromkeys(("time", "elapsed", "duration"), _NUMBER)}}


def _json_kind(value: Any) -> str:
    return "number" if type(value) in (int, float) else type(value).__name__


def _damage_record(name: str, raw: bytes, data, damage: Callable[[dict, Any], str]) -> tuple[bytes, str]:
    lines = raw.decode("utf-8").splitlines() if name.endswith(".jsonl") else [raw.decode("utf-8")]
    mos = [i for i, line in enumerate(lines)  # the ratings log's pairwise lines: the preference store's
           if name != "ratings.jsonl" or '"kind"' not in line]
    index = data.draw(st.sampled_from(mos), label="line")
    record = json.loads(lines[index])
    what = damage(record, data)
    lines[index] = json.dumps(record, ensure_ascii=False)
    return ("\n".join(lines) + "\n").encode("utf-8"), what


@pytest.mark.parametrize("name", sorted(REQUIRED_KEYS))
@FUZZ
@given(data=st.data())
def test_a_required_key_missing(kinds, clean, tmp_path, name, data):
    def drop(record, data):
        key = data.draw(st.sampled_from(REQUIRED_KEYS[name]), label="key")
        del record[key]
        return key

    damaged, key = _damage_record(name, clean[name][0], data, drop)
    assert _failure(kinds[name], outcome(kinds[name], damaged, tmp_path)), f"{name} without {key!r} read as clean"


@pytest.mark.parametrize("name", JSON_KINDS + ["predictions.jsonl", "ratings.jsonl"])
@FUZZ
@given(data=st.data())
def test_a_value_of_another_type(kinds, clean, tmp_path, name, data):
    def retype(record, data):
        key = data.draw(st.sampled_from(sorted(record)), label="key")
        allowed = NULLABLE.get(name, {}).get(key, {_json_kind(record[key])})
        record[key] = data.draw(st.sampled_from([v for v in OTHER_TYPES if _json_kind(v) not in allowed]),
                                label="value")
        return f"{key!r} = {record[key]!r}"

    damaged, what = _damage_record(name, clean[name][0], data, retype)
    assert _failure(kinds[name], outcome(kinds[name], damaged, tmp_path)), f"{name} with {what} read as clean"


def _csv_rows(raw: bytes) -> list[list[str]]:
    import csv
    import io

    return list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))


def _csv_bytes(rows: list[list[str]]) -> bytes:
    import csv
    import io

    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode("utf-8")


@pytest.mark.parametrize("name", CSV_KINDS)
@FUZZ
@given(data=st.data())
def test_csv_columns_extra_missing_renamed_or_duplicated(kinds, clean, tmp_path, name, data):
    raw, value = clean[name]
    rows = _csv_rows(raw)
    header = rows[0]
    how = data.draw(st.sampled_from(["extra", "missing", "renamed", "duplicated"]), label="how")
    column = data.draw(st.integers(0, len(header) - 1), label="column")
    if how == "extra":
        rows = [r[:column] + (["note"] if i == 0 else ["x"]) + r[column:] for i, r in enumerate(rows)]
    elif how == "missing":
        rows = [r[:column] + r[column + 1:] for r in rows]
    elif how == "renamed":
        rows[0] = header[:column] + [header[column] + "_x"] + header[column + 1:]
    else:
        other = data.draw(st.integers(0, len(header) - 1).filter(lambda j: j != column), label="other")
        rows[0] = header[:column] + [header[other]] + header[column + 1:]
    got = outcome(kinds[name], _csv_bytes(rows), tmp_path)
    if how == "duplicated":
        assert got[0] == ERROR and "names a column twice" in got[1], got
    else:  # an extra column is kept aside, an optional one missing changes nothing: the clean result
        check(kinds[name], got, value, may_report=False)


@pytest.mark.parametrize("name", CSV_KINDS)
@FUZZ
@given(data=st.data())
def test_csv_a_value_of_the_wrong_type(kinds, clean, tmp_path, name, data):
    raw, value = clean[name]
    rows = _csv_rows(raw)
    numeric = [j for j, v in enumerate(rows[1]) if v.replace(".", "", 1).isdigit()]
    row = data.draw(st.integers(1, len(rows) - 1), label="row")
    column = data.draw(st.sampled_from(numeric), label="column")
    rows[row][column] = data.draw(st.sampled_from(["abc", "", "1e999", "nan", "4,5"]), label="value")
    got = outcome(kinds[name], _csv_bytes(rows), tmp_path)
    check(kinds[name], got, value)  # a column the consumer does not read may change nothing


# ----------------------------------------------------------------------------- named cases
def test_emotion_predictions_with_a_duplicated_key_name_file_and_line(made, tmp_path):
    """The issue's class: the answer given twice on line 2 was scored with the last value, silently."""
    from hug_vis_dataset.metrics.emotion import iter_prediction_lines, read_predictions_jsonl
    from hug_vis_dataset.tasks.emotion import EmotionTask

    clip = made["clip_ids"][0]
    path = tmp_path / "predictions.jsonl"
    path.write_text(json.dumps({"clip_id": clip, "input_setting": "video", "answer": "happy"}) + "\n"
                    + f'{{"clip_id": "{clip}", "input_setting": "audio", "answer": "happy", "answer": "sad"}}\n',
                    encoding="utf-8")
    with pytest.raises(InputFileError) as caught:
        read_predictions_jsonl(path)
    assert str(caught.value) == "predictions.jsonl:2: duplicate key 'answer'"
    assert [(w, e) for w, r, e in iter_prediction_lines(path) if r is None] == \
        [("predictions.jsonl:2", "duplicate key 'answer'")]
    index = EmotionTask().index_predictions(path)  # the scorer records the line as bad, keeps the good one
    assert index.unmatched == [("predictions.jsonl:2", "duplicate key 'answer'")]
    assert [a for _, a, _ in index.payload[next(iter(index.payload))]] == ["happy"]


def test_scoring_predictions_with_a_duplicated_key_reports_the_line(made, tmp_path):
    from hug_vis_dataset.scoring.runner import evaluate_submission

    clip = made["clip_ids"][0]
    (tmp_path / "pred").mkdir()
    (tmp_path / "pred" / "predictions.jsonl").write_text(
        f'{{"clip_id": "{clip}", "input_setting": "video", "answer": "sad", "answer": "happy"}}\n', encoding="utf-8")
    result = evaluate_submission("emotion", tmp_path / "pred", "dup", made["release"], tmp_path / "out",
                                 progress=False)
    text = json.dumps(result.summary)
    assert "predictions.jsonl:1" in text and "duplicate key 'answer'" in text
    assert result.summary["aggregate"] is None or all(
        v.get("n_ok", 0) == 0 for v in result.summary["aggregate"].values())


@pytest.mark.parametrize("text,where,problem", [
    ('{"a": 1, "a": 2}', "line 1", "duplicate key 'a'"),
    ('{"a": 1}\n{"b": 2}', "line 2", "has data after the JSON value"),
    ('{"a": Infinity}', "line 1", "Infinity is not JSON"),
    ('{"a": [1, 2', "line 1", "is not JSON (Expecting ',' delimiter at column 12)"),
    ("", "line 1", "is empty"),
])
def test_loads_strict_names_line_and_problem(text, where, problem):
    with pytest.raises(InputFileError) as caught:
        loads_strict(text, "f.json")
    assert (caught.value.where, caught.value.problem) == (where, problem)


def test_json_lines_crlf_bom_and_blank_lines(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n\r\n{"a": 2}\r\n')
    assert list(iter_json_lines(path)) == [(1, {"a": 1}), (3, {"a": 2})]
    path.write_bytes(b'{"a": 1}\n[2]\n')
    with pytest.raises(InputFileError, match=r"a.jsonl: line 2: holds a JSON array, not an object"):
        list(iter_json_lines(path))


def test_require_fields_types():
    assert require_fields({"n": 3, "x": 1.5}, {"n": int, "x": float}, "s.json") == {"n": 3, "x": 1.5}
    with pytest.raises(InputFileError, match="field 'n' holds true/false, not an integer"):
        require_fields({"n": True}, {"n": int}, "s.json")
    with pytest.raises(InputFileError, match=r"lacks the field 'n'; add 'n' \(an integer\)"):
        require_fields({}, {"n": int}, "s.json")
    assert require_fields({"o": None}, {}, "s.json", optional={"o": str}) == {"o": None}


CSV_CASES = {
    "duplicated header": (b"a,b,a\n1,2,3\n", "line 1, column 'a'", "names a column twice"),
    "missing column": (b"a\n1\n", "line 1", "lacks columns ['b']"),
    "semicolons": (b"a;b\n1;2\n", "", "is separated by ';'; save it comma-separated"),
    "tabs": (b"a\tb\n1\t2\n", "", "is separated by tabs; save it comma-separated"),
    "too many fields": (b"a,b\n1,2\n3,4,5\n", "line 3", "has 3 fields but the header names 2"),
    "too few fields": (b"a,b\n1,2\n\n3\n", "line 4", "has 1 field but the header names 2"),
    "open quote": (b'a,b\n1,"two\nlines\n', "line 2", "has a quoted value that is never closed"),
    "cut last line": (b"a,b\n1,2\n3,4", "line 3", "has no line end: the file may be cut short"),
    "empty": (b"", "", "is empty"),
    "blank only": (b"\n \n\n", "", "is empty"),
    "not utf-8": ("a,b\n快,乐\n".encode("gbk"), "", "line 2 is not UTF-8 (byte 0xbf at column 1)"),
    "stray quote": (b'a,b\n1,"x"y\n', "line 2", "is not CSV (',' expected after '\"')"),
}


@pytest.mark.parametrize("case", sorted(CSV_CASES))
def test_csv_table_named_cases(tmp_path, case):
    data, where, problem = CSV_CASES[case]
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    with pytest.raises(InputFileError) as caught:
        read_csv_table(path, ("a", "b"))
    assert (caught.value.where, caught.value.problem) == (where, problem)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value) and caught.value.fix


def test_csv_table_lines_quoted_breaks_extra_policies(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b'\xef\xbb\xbf a ,b,c\r\n1,"x\r\ny",9\r\n\r\n2,z,8\r\n')
    table = read_csv_table(path, ("a", "b"), extra="ignore")
    assert (table.header, table.rows, table.lines) == (["a", "b"], [{"a": "1", "b": "x\r\ny"}, {"a": "2", "b": "z"}],
                                                       [2, 5])
    assert read_csv_table(path, ("a", "b")).header == ["a", "b", "c"]
    with pytest.raises(InputFileError, match=r"line 1, column 'c': is not a column of this file"):
        read_csv_table(path, ("a",), optional=("b",), extra="error")


def test_read_json_missing_folder_and_type(tmp_path):
    with pytest.raises(InputFileError, match="does not exist"):
        read_json(tmp_path / "none.json")
    with pytest.raises(InputFileError, match="is a folder"):
        read_json(tmp_path)
    (tmp_path / "a.json").write_text("[1]")
    assert read_json(tmp_path / "a.json", expect=list) == [1]


def test_release_rows_keep_their_true_line(made, tmp_path):
    """A quoted transcript holding a line break: the next rows' line numbers are the file's, not row + 1."""
    from hug_vis_dataset.datamodel.release import Release

    rows = _csv_rows((made["release"] / "metadata" / "clips.csv").read_bytes())
    column = rows[0].index("transcript")
    rows[1][column] = "two\nlines"
    rows[2][0] = "not_a_clip"
    (tmp_path / "metadata").mkdir()
    (tmp_path / "metadata" / "clips.csv").write_bytes(_csv_bytes(rows))
    release = Release(tmp_path)
    assert release.row_lines[:2] == [2, 4] and release.row_errors[0][:2] == (4, "not_a_clip")


def test_duplicated_key_in_the_other_json_files(made, tmp_path):
    from hug_vis_dataset.datamodel.layout import ReleaseLayout
    from hug_vis_dataset.studies.spec import StudyFileError, load_study
    from hug_vis_dataset.validate.gridspec import GridDeclarationError, expected_grid

    (tmp_path / "metadata").mkdir()
    (tmp_path / "metadata" / "grid.json").write_text('{"actors": [1], "actors": [1, 2]}')
    with pytest.raises(GridDeclarationError, match=r"grid.json is not a valid grid declaration \(line 1: duplicate "
                                                   r"key 'actors'\)"):
        expected_grid(tmp_path)
    (tmp_path / "layout.json").write_text('{"audio": "a/{clip_dir}.wav",\n "audio": "b/{clip_dir}.wav"}')
    with pytest.raises(InputFileError, match=r"layout.json: line 2: duplicate key 'audio'"):
        ReleaseLayout.from_json(tmp_path / "layout.json")
    (tmp_path / "layout.json").write_text('{"expected_fps": "30"}')
    with pytest.raises(InputFileError, match="field 'expected_fps' holds a string, not a number"):
        ReleaseLayout.from_json(tmp_path / "layout.json")
    study = json.loads(made["study"]["mos_study"].read_text())
    text = json.dumps(study)[:-1] + ', "name": "other"}'
    (tmp_path / "study.json").write_text(text)
    with pytest.raises(StudyFileError, match="duplicate key 'name'"):
        load_study(tmp_path / "study.json", made["clip_ids"])


def test_metric_space_rows_csv_is_read_strictly(tmp_path):
    """The metric Space's uploaded rows CSV: the clean file types as before, a cut one is one line."""
    from hug_vis_dataset.space.metric_examples import read_rows

    path = tmp_path / "rows.csv"
    path.write_text("clip_id,metric,value,error\nc1,mad,0.5,\nc2,mad,,failed\n", encoding="utf-8")
    rows = read_rows(path)
    assert rows["value"][0] == 0.5 and rows["value"][1] != rows["value"][1] and rows["error"] == [None, "failed"]
    path.write_text("clip_id,metric,value,error\nc1,mad,0.5,\nc2,mad,0.12", encoding="utf-8")  # cut mid-value
    with pytest.raises(InputFileError, match=r"rows.csv: line 3: has 3 fields but the header names 4"):
        read_rows(path)


@pytest.mark.parametrize("text,problem", [('{"plan": "p", "plan": "q", "shards": []}', "duplicate key 'plan'"),
                                          ('{"plan": "p", "shards": [', "is not JSON"),
                                          ('{"plan": "p", "shards": {}}', "field 'shards' holds an object")])
def test_a_damaged_build_state_is_one_line(tmp_path, text, problem):
    """``hugvis build --resume`` over a damaged state file: was json's traceback, or "the last plan"."""
    from hug_vis_dataset.hub.state import load_state, state_path

    path = state_path(tmp_path, "matting")
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputFileError) as caught:
        load_state(tmp_path, "matting", "p")
    assert str(path) in str(caught.value) and problem in str(caught.value) and "\n" not in str(caught.value)


def test_a_json_message_ending_in_at_names_the_column_once():
    # json says "Unterminated string starting at"; the error read "... starting at at column 5"
    with pytest.raises(InputFileError) as err:
        loads_strict('{\n    "ab', "summary.json")
    assert err.value.problem == "is not JSON (Unterminated string starting at column 5)"

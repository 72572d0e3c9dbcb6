"""Human judgments handed in as rows (issue 52): the validated reader of the ratings file stands behind every
door that takes ratings (``studies.mos.ratings_frames``; the evaluate modules' door ``analyses.checked_ratings``).

Classes generated: ratings rows whose cells take every form a program hands over -- a score as an integer, a
float, text, ``None``, NaN, outside the scale; an unknown or empty criterion; an empty model or rater; a bad
clip id -- and rated systems under another spelling of a stored model's name. Rows were taken as they were
(a text score raised a TypeError, a score of 7 counted, an unknown criterion was kept, a system under another
spelling vanished from the joint table). Now rows are read exactly as the same cells in a CSV file (the same
valid ratings, the same reasons), an invalid row is refused in one line naming it, and a system under another
spelling is refused naming both spellings.
"""

from __future__ import annotations

import csv
import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
CLIPS = ["actor_0001_happy_action_01_script_001", "actor_0002_sad_action_01_script_002"]
CRITERIA = ["id_similarity", "emotion_naturalness", "lip_sync", "motion_naturalness"]

scores = st.one_of(st.integers(-2, 8), st.integers(1, 5).map(float), st.integers(1, 5).map(str),
                   st.sampled_from([None, math.nan, "four", "", "2.5", 3.5, "5.0", True]))
cells = st.fixed_dictionaries({
    "rater": st.sampled_from(["r1", "r2", "", None]),
    "clip_id": st.sampled_from(CLIPS + ["clip_7", None]),
    "model": st.sampled_from(["clone_good", "clone_poor", " clone_good ", "", None]),
    "criterion": st.sampled_from(CRITERIA + ["sharpness", "", None]),
    "score": scores,
})


def _text(value) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)


def _expected_reason(row: dict) -> "str | None":
    """An independent statement of the rules (docs/MOS.md): which check a row fails first, or None."""
    score = _text(row["score"]).strip()
    try:
        number = float(score)
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number == int(number) and 1 <= number <= 5):
        return "score"
    if _text(row["criterion"]).strip() not in CRITERIA:
        return "criterion"
    if not _text(row["rater"]).strip():
        return "rater"
    if not _text(row["model"]).strip():
        return "model"
    if row["clip_id"] not in CLIPS:
        return "clip"
    return None


@FUZZ
@given(rows=st.lists(cells, min_size=1, max_size=6, unique_by=lambda r: (r["rater"], r["clip_id"], r["model"],
                                                                        r["criterion"])))
def test_rows_are_read_as_the_same_cells_in_a_file(tmp_path, rows):
    from hug_vis_dataset.studies.mos import RATING_COLUMNS, RatingsFileError, ratings_frames

    path = tmp_path / "ratings.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(RATING_COLUMNS)
        writer.writerows([[_text(r[c]) for c in RATING_COLUMNS] for r in rows])
    # every copy of a rating given twice (same rater, clip, model, criterion) among the otherwise valid ones
    keys = [tuple(_text(r[c]).strip() for c in ("rater", "clip_id", "model", "criterion")) if not _expected_reason(r)
            else None for r in rows]
    expected_bad = [i + 1 for i, r in enumerate(rows) if _expected_reason(r) or
                    (keys[i] is not None and keys.count(keys[i]) > 1)]
    file_valid, file_invalid = ratings_frames(path)
    assert sorted(int(line) - 1 for line in file_invalid["line"]) == expected_bad  # line 1 is the header
    for form in (rows, pd.DataFrame(rows), {c: [r[c] for r in rows] for c in RATING_COLUMNS}):
        if expected_bad:
            with pytest.raises(RatingsFileError) as caught:
                ratings_frames(form)
            message = str(caught.value)
            assert "\n" not in message and f"row {expected_bad[0]}:" in message
            assert f"{len(expected_bad)} of {len(rows)} rows" in message
        else:
            valid, _ = ratings_frames(form)
            columns = ["rater", "clip_id", "model", "criterion", "score"]
            pd.testing.assert_frame_equal(valid[columns].reset_index(drop=True),
                                          file_valid[columns].reset_index(drop=True))
            assert valid["score"].tolist() == [int(float(_text(r["score"]))) for r in rows]


def _stored_rows() -> pd.DataFrame:
    records = []
    for model, base in (("clone_good", 0.9), ("clone_poor", 0.4), ("clone_fair", 0.6)):
        for i, clip in enumerate(CLIPS):
            records.append({"model": model, "task": "voice_cloning", "clip_id": clip, "metric": "speaker_similarity",
                            "value": base + 0.01 * i, "status": "ok"})
    return pd.DataFrame(records)


def _ratings(spelling: str) -> list[dict]:
    out = []
    for model, score in ((spelling, 5), ("clone_poor", 2), ("clone_fair", 3)):
        for rater in ("r1", "r2"):
            for clip in CLIPS:
                out.append({"rater": rater, "clip_id": clip, "model": model, "criterion": "id_similarity",
                            "score": score})
    return out


@pytest.mark.parametrize("door", ["human_metric_agreement", "metric_mos_agreement"])
@pytest.mark.parametrize("spelling", ["Clone_Good", "clone-good", "clone_goood", " CLONE GOOD"])
def test_a_system_rated_under_another_spelling_is_refused_naming_both(door, spelling):
    from hug_vis_dataset import analyses
    from hug_vis_dataset.analyses import ModuleInputError

    with pytest.raises(ModuleInputError) as caught:
        analyses.run(door, _stored_rows().to_dict("list"), ratings=_ratings(spelling), n_boot=10)
    message = str(caught.value)
    assert "\n" not in message and repr(spelling.strip()) in message and "'clone_good'" in message


@pytest.mark.parametrize("door", ["human_metric_agreement", "metric_mos_agreement"])
@pytest.mark.parametrize("bad", [{"score": "four"}, {"score": 7}, {"criterion": "sharpness"}, {"model": None}])
def test_an_invalid_rating_row_is_refused_by_the_module_doors(door, bad):
    from hug_vis_dataset import analyses
    from hug_vis_dataset.analyses import ModuleInputError

    ratings = _ratings("clone_good")
    ratings[3] = {**ratings[3], **bad}
    with pytest.raises(ModuleInputError, match="row 4: "):
        analyses.run(door, _stored_rows().to_dict("list"), ratings=ratings, n_boot=10)


def test_valid_rows_and_the_same_file_give_the_same_joint_numbers(tmp_path):
    from hug_vis_dataset import analyses
    from hug_vis_dataset.studies.mos import RATING_COLUMNS

    ratings = _ratings("clone_good")
    for row in ratings:
        row["score"] = str(row["score"]) if row["rater"] == "r1" else float(row["score"])  # text and floats
    path = tmp_path / "ratings.csv"
    pd.DataFrame(ratings)[list(RATING_COLUMNS)].to_csv(path, index=False)
    options = dict(n_boot=20, n_perm=20, seed=0)
    from_rows = analyses.run("human_metric_agreement", _stored_rows().to_dict("list"), ratings=ratings, **options)
    from_file = analyses.run("human_metric_agreement", _stored_rows().to_dict("list"), ratings=path, **options)
    pd.testing.assert_frame_equal(pd.DataFrame(from_rows["summary"]), pd.DataFrame(from_file["summary"]))

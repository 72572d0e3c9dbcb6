"""Grid model: ids, emotions, aliases, Table 1."""

import itertools

import pytest

from hug_vis_dataset.datamodel.grid import (
    EMOTION_NAMES,
    EMOTIONS,
    TABLE1,
    ClipId,
    ClipIdError,
    Emotion,
    full_grid,
    iter_grid,
    parse_emotion,
)
from hug_vis_dataset.datamodel.layout import DEFAULT_LAYOUT, ReleaseLayout


def test_grid_has_8400_unique_units_in_paper_proportions():
    grid = full_grid()
    assert len(grid) == 30 * 7 * 4 * 10 == 8400
    assert len(set(grid)) == 8400
    per_emotion = {e: sum(1 for c in grid if c.emotion is e) for e in EMOTIONS}
    assert set(per_emotion.values()) == {1200}  # paper 3.5: 1,200 clips per condition
    assert {c.actor_id for c in grid} == set(range(1, 31))


def test_every_unit_round_trips_through_its_id_string():
    seen = set()
    for cid in full_grid():
        text = cid.format()
        assert ClipId.parse(text) == cid
        seen.add(text)
    assert len(seen) == 8400


def test_id_format_matches_release_draft():
    cid = ClipId(1, Emotion.HAPPY, 1, 1)
    assert str(cid) == "actor_0001_happy_action_01_script_001"
    assert ClipId(30, "Afraid", 4, 10).format() == "actor_0030_fearful_action_04_script_010"
    # the paper's spelling parses to the same unit
    assert ClipId.parse("actor_0030_afraid_action_04_script_010") == ClipId(30, Emotion.AFRAID, 4, 10)


@pytest.mark.parametrize(
    "bad",
    [
        "actor_1_happy_action_01_script_001",
        "actor_0001_happy_action_1_script_001",
        "actor_0001_joyous_action_01_script_001",
        "actor_0001_happy_action_01_script_001.mp4",
        "actor_0000_happy_action_01_script_001",
        "ACTOR_0001_HAPPY_ACTION_01_SCRIPT_001",
        "",
    ],
)
def test_bad_ids_raise_a_clear_error(bad):
    with pytest.raises(ClipIdError) as err:
        ClipId.parse(bad)
    assert "clip id" in str(err.value) or "actor_id" in str(err.value)


def test_clip_id_rejects_out_of_range_fields():
    with pytest.raises(ClipIdError):
        ClipId(1, Emotion.SAD, 0, 1)
    with pytest.raises(ValueError):
        ClipId(1, "bored", 1, 1)


@pytest.mark.parametrize(
    "alias, emotion",
    [
        ("Happy", Emotion.HAPPY), ("happy", Emotion.HAPPY), ("HAPPY ", Emotion.HAPPY), ("高兴", Emotion.HAPPY),
        ("angry", Emotion.ANGRY), ("愤怒", Emotion.ANGRY), ("生气", Emotion.ANGRY),
        ("sad", Emotion.SAD), ("悲伤", Emotion.SAD),
        ("Afraid", Emotion.AFRAID), ("fearful", Emotion.AFRAID), ("fear", Emotion.AFRAID), ("害怕", Emotion.AFRAID),
        ("disgusted", Emotion.DISGUSTED), ("disgust", Emotion.DISGUSTED), ("厌恶", Emotion.DISGUSTED),
        ("surprised", Emotion.SURPRISED), ("惊讶", Emotion.SURPRISED),
        ("neutral", Emotion.NEUTRAL), ("中性", Emotion.NEUTRAL),
        (3, Emotion.AFRAID), (Emotion.SAD, Emotion.SAD),
    ],
)
def test_aliases(alias, emotion):
    assert parse_emotion(alias) is emotion


def test_unknown_emotion_names_the_choices():
    with pytest.raises(ValueError, match="Happy, Angry, Sad, Afraid, Disgusted, Surprised, Neutral"):
        parse_emotion("bored")
    with pytest.raises(ValueError):
        parse_emotion(7)
    with pytest.raises(ValueError):
        parse_emotion(True)


def test_emotion_order_and_class_indices_follow_the_paper():
    assert EMOTION_NAMES == ("Happy", "Angry", "Sad", "Afraid", "Disgusted", "Surprised", "Neutral")
    assert [e.index for e in EMOTIONS] == list(range(7))


def test_table1_covers_every_emotion_with_templates():
    assert set(TABLE1) == set(EMOTIONS)
    assert len(TABLE1[Emotion.HAPPY].action_templates) == 4
    assert "expansive" in TABLE1[Emotion.HAPPY].movement_style
    assert all(1 <= len(d.action_templates) <= 4 for d in TABLE1.values())


def test_grid_order_is_not_lexical():
    # Table 1 order: Happy before Angry although "angry" < "happy" lexically.
    ids = list(iter_grid(1, ["Angry", "Happy"], 1, 1))
    assert sorted(ids) == [ClipId(1, "Happy", 1, 1), ClipId(1, "Angry", 1, 1)]
    many = list(iter_grid(2, None, 2, 12))
    assert sorted(many) == many


def test_layout_paths_follow_release_draft():
    cid = ClipId.parse("actor_0001_happy_action_01_script_001")
    assert DEFAULT_LAYOUT.video_path(cid) == "video_processed/actor_0001/happy/action_01/script_001.mp4"
    assert DEFAULT_LAYOUT.audio_path(cid) == "audio/actor_0001/happy/action_01/script_001.wav"
    assert DEFAULT_LAYOUT.transcript_path(cid) == "transcripts/actor_0001/happy/action_01/script_001.txt"
    assert DEFAULT_LAYOUT.alpha_frame_path(cid, 0) == "alpha_matte/actor_0001/happy/action_01/script_001/000000.png"
    afraid = ClipId(2, "Afraid", 3, 7)
    assert DEFAULT_LAYOUT.audio_path(afraid) == "audio/actor_0002/fearful/action_03/script_007.wav"


def test_layout_is_configurable_in_one_place(tmp_path):
    custom = tmp_path / "layout.json"
    custom.write_text('{"emotion_tokens": {"Happy": "happy", "Angry": "angry", "Sad": "sad", "Afraid": "afraid",'
                      ' "Disgusted": "disgusted", "Surprised": "surprised", "Neutral": "neutral"},'
                      ' "video": "video/{clip_dir}/script_{script:03d}.mp4"}')
    layout = ReleaseLayout.from_json(custom)
    cid = ClipId(2, "Afraid", 3, 7)
    assert layout.video_path(cid) == "video/actor_0002/afraid/action_03/script_007.mp4"
    assert layout.clip_id(cid) == "actor_0002_afraid_action_03_script_007"
    bad = tmp_path / "bad.json"
    bad.write_text('{"vidoe": "x"}')
    with pytest.raises(ValueError, match="vidoe"):
        ReleaseLayout.from_json(bad)


def test_alpha_frame_names_are_parsed_not_sorted():
    assert DEFAULT_LAYOUT.alpha_frame_index("000012.png") == 12
    with pytest.raises(ValueError):
        DEFAULT_LAYOUT.alpha_frame_index("frame_12.png")

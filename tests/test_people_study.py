"""The forced-choice emotion study (issue 54, part 1): its study file, the schedule's one-clip-per-rater rule, the
answers in the ratings log, quality control, and the blind items a rater is shown (no browser; the page itself is
tests/test_browser_people.py).

Each property is checked against a hand-worked expectation or a re-derivation: the schedule against counts kept by
the test, the log against the lines written, the QC flags against the rule applied by hand, the blind media against
their bytes and ffprobe's view of their metadata.
"""

from __future__ import annotations

import itertools
import json
import subprocess
from collections import Counter, defaultdict

import pandas as pd
import pytest

from hug_vis_dataset.studies.emotion_answers import (ANSWER_CHOICES, CANNOT_TELL, EmotionAnswersFileError,
                                                     EmotionAnswerStore, read_emotion_answers)
from hug_vis_dataset.studies.judgments import choose_people_source, counted_emotion_answers
from hug_vis_dataset.studies.preferences import PreferenceStore
from hug_vis_dataset.studies.rater_qc import GOLD_CLEAR
from hug_vis_dataset.studies.ratings import RatingError, RatingStore, read_log
from hug_vis_dataset.studies.schedule import plan_session, session_rng
from hug_vis_dataset.studies.spec import StudyFileError, study_from_mapping

EMOTIONS = ("happy", "sad", "angry", "neutral")


def _clips(actors: int, scripts: int = 1) -> list[str]:
    return [f"actor_{a:04d}_{e}_action_01_script_{s:03d}" for a in range(1, actors + 1) for e in EMOTIONS
            for s in range(1, scripts + 1)]


def _spec(settings, clips, k=2, size=4, gold=0.0, seed=0):
    return study_from_mapping({"name": "emo", "protocol": "emotion", "tasks": {"emotion": {"settings": settings}},
                               "clips": clips, "ratings_per_item": k, "items_per_session": size, "gold_rate": gold,
                               "seed": seed})


# ----------------------------------------------------------------------------- the study file
def test_emotion_study_file_names_settings_in_table4_spelling():
    spec = _spec(["video", "audio+video", "TEXT"], _clips(1))
    assert spec.settings() == ("Video", "Video + Audio", "Text")
    items = spec.items()
    assert len(items) == 3 * 4 and {i.systems for i in items} == {("Video",), ("Video + Audio",), ("Text",)}
    assert {i.criteria for i in items} == {("emotion",)}
    assert spec.min_raters() == 2 * 3
    assert spec.gold_items() == [] and spec.n_gold() == 0
    gold = _spec(["Video"], _clips(1), size=10, gold=0.2)
    assert gold.n_gold() == 2 and {g.systems for g in gold.gold_items()} == {(GOLD_CLEAR,)}
    assert len(gold.gold_items()) == 4  # one per clip


@pytest.mark.parametrize("tasks,words", [
    ({"emotion": {"settings": ["Smell"]}}, "not Table 4's"),
    ({"emotion": {"settings": ["Video", "video"]}}, "listed twice"),
    ({"emotion": {"settings": []}}, "non-empty list"),
    ({"emotion": {"settings": ["Video"], "criteria": ["x"]}}, 'one key, "settings"'),
    ({"audio_driven": {"settings": ["Video"]}}, "has no emotion study"),
])
def test_a_bad_emotion_study_file_is_refused_naming_the_field(tasks, words):
    with pytest.raises(StudyFileError, match=words):
        study_from_mapping({"name": "emo", "protocol": "emotion", "tasks": tasks, "clips": _clips(1)})


def test_a_system_named_like_the_gold_item_is_refused():
    with pytest.raises(StudyFileError, match="reserved for gold"):
        study_from_mapping({"tasks": {"voice_cloning": {"systems": [GOLD_CLEAR]}}, "clips": _clips(1)})


# ----------------------------------------------------------------------------- the schedule
def _schedule(spec, n_raters: int, sessions_each: int = 50):
    """Raters taking turns through plan_session (as the Space's log does); the test keeps its own counts."""
    counts, seen, groups, log = Counter(), defaultdict(set), defaultdict(set), []
    for number in range(1, sessions_each + 1):
        for r in range(n_raters):
            rater = f"r{r}"
            planned = plan_session(spec.items(), spec.gold_items(), counts, seen[rater], spec.items_per_session,
                                   spec.n_gold(), spec.ratings_per_item, session_rng(spec.seed, rater, number),
                                   spec.group_rule, groups[rater])
            counts.update(i.key for i in planned if i.kind == "system")
            seen[rater].update(i.key for i in planned)
            groups[rater].update(i.clip_id for i in planned)
            log += [(rater, number, i) for i in planned]
    return counts, log


@pytest.mark.parametrize("settings,k,size,gold", [
    (["Video", "Audio", "Text"], 2, 4, 0.25), (["Video", "Video + Audio + Text"], 3, 3, 0.34),
    (["Text"], 1, 5, 0.0), (["Image frame", "Video", "Audio", "Text"], 2, 7, 0.15)])
def test_every_clip_and_setting_gets_k_raters_and_nobody_sees_a_clip_twice(settings, k, size, gold):
    spec = _spec(settings, _clips(2, 2), k, size, gold)
    counts, log = _schedule(spec, n_raters=spec.min_raters() + 3)
    assert all(counts[i.key] == k for i in spec.items())  # complete: every (clip, setting) has its k raters
    per_rater = defaultdict(list)
    for rater, _, item in log:
        per_rater[rater].append(item.clip_id)
    for rater, clips in per_rater.items():  # one item per clip and rater, gold items included
        assert len(clips) == len(set(clips)), rater
    if gold:
        assert any(i.kind == "gold" for _, _, i in log)
        for (rater, number), group in itertools.groupby(log, key=lambda x: x[:2]):
            assert sum(i.kind == "gold" for _, _, i in group) <= spec.n_gold()


def test_too_few_raters_leave_the_study_incomplete_never_a_clip_twice():
    spec = _spec(["Video", "Audio", "Text"], _clips(1), k=2, size=4)
    counts, log = _schedule(spec, n_raters=spec.min_raters() - 1)
    assert sum(counts.values()) < 2 * len(spec.items())  # 5 raters cannot give 3 settings x 2 raters per clip
    for rater in {r for r, _, _ in log}:
        clips = [i.clip_id for r, _, i in log if r == rater]
        assert len(clips) == len(set(clips))


def test_the_mos_schedule_is_unchanged_by_the_group_rule():
    """A MOS study has no group rule: one rater may rate two systems of one clip, as before."""
    spec = study_from_mapping({"tasks": {"voice_cloning": {"systems": ["a", "b"]}}, "clips": _clips(1)[:1],
                               "ratings_per_item": 1, "items_per_session": 2})
    assert spec.group_rule is None
    planned = plan_session(spec.items(), [], Counter(), set(), 2, 0, 1, session_rng(0, "r", 1), spec.group_rule)
    assert len(planned) == 2 and len({i.clip_id for i in planned}) == 1


# ----------------------------------------------------------------------------- the answers in the log
CLIP = "actor_0001_sad_action_01_script_001"


def test_answers_share_the_ratings_log_and_its_sequence(tmp_path):
    path = tmp_path / "ratings.jsonl"
    ratings, prefs, answers = RatingStore(path), PreferenceStore(path), EmotionAnswerStore(path)
    assert ratings.add("r1", "voice_cloning", CLIP, "m", {"id_similarity": 4, "emotion_naturalness": 3}).seq == 1
    assert answers.add("r1", CLIP, "Video", "happy", extra={"study": "emo", "item": "i0123456789"}).seq == 2
    assert prefs.add("r1", "voice_cloning", CLIP, ("a", "b"), {"id_similarity": "A", "emotion_naturalness": "B"},
                     left="a").seq == 3
    assert answers.add("r1", CLIP, "video", " Cannot TELL ").seq == 4  # the latest answer of (r1, clip, Video)
    assert answers.add("r2", CLIP, "Text", "Sad").seq == 5
    frame = answers.frame()
    assert frame[["rater", "setting", "answer", "seq"]].values.tolist() == [["r1", "Video", CANNOT_TELL, 4],
                                                                            ["r2", "Text", "Sad", 5]]
    assert len(answers.history()) == 3
    # the other stores read their own lines only, and name no emotion line as a problem
    assert read_log(path)[1] == [] and prefs.problems() == [] and answers.problems() == []
    assert len(ratings.frame()) == 2 and len(prefs.frame()) == 2


@pytest.mark.parametrize("rater,clip,setting,answer,words", [
    ("r 1", CLIP, "Video", "Sad", "rater name"),
    ("r1", "nope", "Video", "Sad", "clip"),
    ("r1", CLIP, "Smell", "Sad", "setting 'Smell'"),
    ("r1", CLIP, "Video", "Bored", "answer 'Bored' must be one of"),
    ("r1", CLIP, "Video", None, "answer None"),
])
def test_a_bad_answer_is_refused_and_nothing_is_written(tmp_path, rater, clip, setting, answer, words):
    store = EmotionAnswerStore(tmp_path / "ratings.jsonl")
    with pytest.raises(RatingError, match=words):
        store.add(rater, clip, setting, answer)
    assert not (tmp_path / "ratings.jsonl").exists()


def test_the_allowed_check_refuses_and_skips_lines_it_rejects(tmp_path):
    path = tmp_path / "ratings.jsonl"
    EmotionAnswerStore(path).add("r1", CLIP, "Audio", "Sad")
    only_video = EmotionAnswerStore(path, allowed=lambda task, setting, clip:
                                    None if setting == "Video" else f"setting {setting} is not in the study")
    with pytest.raises(RatingError, match="not in the study"):
        only_video.add("r1", CLIP, "Text", "Sad")
    assert only_video.frame().empty
    assert only_video.problems() == [f"{path}:1: setting Audio is not in the study; skipped: correct or delete this "
                                     "line (the ratings in force and the MOS leave it out)"]


def test_a_damaged_emotion_line_is_named_and_the_others_count(tmp_path):
    path = tmp_path / "ratings.jsonl"
    store = EmotionAnswerStore(path)
    store.add("r1", CLIP, "Text", "Sad")
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"kind": "emotion", "rater": "r2", "task": "emotion", "clip_id": CLIP,
                                 "setting": "Text", "answer": "Bored", "seq": 2}) + "\n")
    assert store.add("r3", CLIP, "Text", "Happy").seq == 3  # the damaged line's seq still counts
    assert store.frame()["rater"].tolist() == ["r1", "r3"]
    assert len(store.problems()) == 1 and store.problems()[0].startswith(f"{path}:2: answer 'Bored'")


def test_the_exported_csv_reads_back_the_answers_in_force(tmp_path):
    store = EmotionAnswerStore(tmp_path / "ratings.jsonl")
    store.add("r1", CLIP, "Text", "Sad", extra={"study": "emo", "item": "i0000000001", "elapsed": 3.0,
                                                "duration": 1.5})
    store.add("r2", CLIP, GOLD_CLEAR, "Happy", extra={"study": "emo"})
    store.add("r1", CLIP, "Text", "Angry", extra={"study": "emo"})  # replaces r1's first answer
    out = tmp_path / "answers.csv"
    assert store.to_csv(out) == 2
    back = read_emotion_answers(out)
    assert back[["rater", "setting", "answer", "study"]].values.tolist() == [["r2", GOLD_CLEAR, "Happy", "emo"],
                                                                             ["r1", "Text", "Angry", "emo"]]


@pytest.mark.parametrize("body,words", [
    ("rater,clip_id,setting\nr1,x,Text\n", "answer"),
    (f"rater,clip_id,setting,answer\nr1,{CLIP},Text,Bored\n", ":2: answer 'Bored'"),
    (f"rater,clip_id,setting,answer\nr1,{CLIP},Text,Sad\nr1,{CLIP},text,Happy\n", ":3: repeats the answer of line 2"),
])
def test_a_bad_answers_csv_is_one_line_naming_the_file(tmp_path, body, words):
    path = tmp_path / "answers.csv"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(EmotionAnswersFileError, match=words) as info:
        read_emotion_answers(path)
    assert "\n" not in str(info.value) and "answers.csv" in str(info.value)


# ----------------------------------------------------------------------------- quality control
def _answers(rows):
    return pd.DataFrame(rows, columns=["rater", "clip_id", "setting", "answer", "elapsed", "duration"])


def test_quality_control_flags_by_gold_and_speed_as_the_rule_says():
    sad, happy = CLIP, "actor_0002_happy_action_01_script_001"
    rows = [
        # careful: gold right, slow
        ("good", sad, GOLD_CLEAR, "Sad", 9.0, 2.0), ("good", happy, "Video", "Happy", 9.0, 2.0),
        # gold wrong twice of two (share 1 > 0.5)
        ("wrong", sad, GOLD_CLEAR, "Happy", 9.0, 2.0), ("wrong", happy, GOLD_CLEAR, CANNOT_TELL, 9.0, 2.0),
        ("wrong", happy, "Text", "Happy", 9.0, 2.0),
        # fast on 2 of 3 answers (> 0.25)
        ("fast", sad, "Video", "Sad", 0.5, 2.0), ("fast", happy, "Audio", "Happy", 0.2, 2.0),
        ("fast", happy, GOLD_CLEAR, "Happy", 9.0, 2.0),
        # one of two gold answers wrong (share 0.5, not above): kept
        ("half", sad, GOLD_CLEAR, "Sad", 9.0, 2.0), ("half", happy, GOLD_CLEAR, "Sad", 9.0, 2.0),
        ("half", sad, "Text", "Sad", 9.0, 2.0),
    ]
    kept, qc = counted_emotion_answers(_answers(rows))
    assert sorted(qc.flagged) == ["fast", "wrong"]
    assert qc.flagged["wrong"] == "2 of 2 gold answers failed (> 0.5)"
    assert qc.flagged["fast"] == "2 of 3 answers faster than the media (> 0.25)"
    assert sorted(set(kept["rater"])) == ["good", "half"] and GOLD_CLEAR not in set(kept["setting"])
    every, qc_all = counted_emotion_answers(_answers(rows), all_raters=True)
    assert sorted(set(every["rater"])) == ["fast", "good", "half", "wrong"] and not qc_all.excluded


def test_the_study_replaces_the_simulated_raters_once_it_covers_every_setting():
    sim = _answers([(f"s{a}", f"actor_{a:04d}_sad_action_01_script_001", s, "Sad", 9.0, 1.0)
                    for a in range(1, 8) for s in ("Video", "Text")])
    live = sim[sim["setting"] == "Video"].assign(rater="p")
    source = choose_people_source(live, sim)
    assert source.whose == "simulated raters" and "cover 1 of the 2 input settings" in source.note
    live = sim[sim["clip_id"].str.contains("|".join(f"actor_000{a}" for a in range(1, 7)))].assign(rater="p")
    assert choose_people_source(live, sim).whose == "the study's ratings"  # 6 actors = MIN_ACTORS
    assert choose_people_source(live.iloc[:-1], sim).whose == "simulated raters"
    assert choose_people_source(None, sim).whose == "simulated raters"
    assert choose_people_source(live, None).whose == "the study's ratings"


def test_the_answer_choices_are_the_seven_emotions_then_cannot_tell():
    from hug_vis_dataset.datamodel.grid import EMOTION_NAMES

    assert ANSWER_CHOICES == tuple(EMOTION_NAMES) + ("Cannot tell",)


# ----------------------------------------------------------------------------- what a rater is shown
@pytest.fixture(scope="module")
def release(tmp_path_factory):
    from hug_vis_dataset.synth import synthesize

    root = tmp_path_factory.mktemp("blind")
    synthesize(root / "rel", actors=1, emotions=["Happy", "Sad"], actions=1, scripts=1, seconds=0.5, size=(64, 36),
               progress=False)
    return root


def _desk(root, settings, tmp_path, k=1, size=2, gold=0.0):
    from hug_vis_dataset.datamodel.release import Release
    from hug_vis_dataset.studies.study_desk import MosStudy

    study = tmp_path / "study.json"
    study.write_text(json.dumps({"name": "s1", "protocol": "emotion", "tasks": {"emotion": {"settings": settings}},
                                 "clips": "all", "ratings_per_item": k, "items_per_session": size,
                                 "gold_rate": gold, "seed": 3}))
    return MosStudy(Release(root / "rel"), root / "rel", tmp_path / "store" / "ratings.jsonl", study_path=study)


def _tags(path) -> str:
    return subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format_tags:stream_tags", "-of", "compact",
                           str(path)], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("setting,media", [
    ("Video", {"video"}), ("Audio", {"speech"}), ("Text", {"text"}), ("Image frame", {"image"}),
    ("Video + Audio", {"video"}), ("Video + Audio + Text", {"video", "text"}), ("Image frame + Text", set())])
def test_an_item_shows_only_its_setting_and_nothing_names_the_clip(release, tmp_path, setting, media):
    if setting == "Image frame + Text":  # not a Table 4 setting: refused by the study file
        with pytest.raises(StudyFileError):
            _desk(release, [setting], tmp_path).spec
        return
    desk = _desk(release, [setting], tmp_path)
    blind = desk.blind
    view, _ = blind.current("rater_a")
    shown = {name for name in ("video", "speech", "image", "text") if getattr(view, name)}
    assert shown == media
    record = desk.release.record(blind.log.lookup()[view.code][1].clip_id)
    names = [record.clip_id, record.cid.emotion.value, record.cid.emotion.value.lower(), record.video_path.name]
    for name in ("video", "speech", "image"):
        path = getattr(view, name)
        if path:
            assert path.endswith(f"/{view.code}{'.mp4' if name == 'video' else '.wav' if name == 'speech' else '.png'}")
            data = open(path, "rb").read().lower()
            assert not any(n.lower().encode() in data for n in names), name  # no clip id or label inside
        if path and name == "video":
            tags = _tags(path)
            assert "title" not in tags and "comment" not in tags and record.clip_id not in tags
            has_sound = "SoundHandler" in tags
            assert has_sound == ("Audio" in setting)  # the silent video is silent
    if view.text:
        assert view.text == record.transcript
    assert "Which emotion" in view.anchors[0] and record.cid.emotion.value not in view.anchors[0]
    assert view.criteria == ("emotion",)


def test_an_answer_is_stored_with_its_times_and_refused_without_one(release, tmp_path):
    from hug_vis_dataset.studies.emotion_study import minimum_seconds

    desk = _desk(release, ["Text", "Video"], tmp_path, k=1, size=2)
    blind = desk.blind
    view, _ = blind.current("rater_b")
    message, stored = blind.submit("rater_b", view.code, None)
    assert not stored and message == ("**Not stored:** please choose an answer (one of the seven emotions, or "
                                      "Cannot tell).")
    from hug_vis_dataset.presentation.escaping import markdown_text

    assert blind.submit("rater_b", view.code, "Bored") == (  # a forged value: refused as the store words it
        f"**Not stored:** {markdown_text(f'answer {chr(39)}Bored{chr(39)} must be one of {list(ANSWER_CHOICES)}')}",
        False)
    assert blind.submit("rater_b", view.code, "Cannot tell")[1]
    line = blind.emotion_answers.frame().iloc[0]
    item = blind.log.lookup()[view.code][1]
    record = desk.release.record(item.clip_id)
    assert (line["clip_id"], line["setting"], line["answer"], line["item"], line["study"]) == (
        item.clip_id, item.systems[0], CANNOT_TELL, view.code, "s1")
    assert line["duration"] == minimum_seconds(item.systems[0], record.duration, record.transcript)
    assert line["elapsed"] >= 0
    # another rater's code is not this rater's to answer
    assert not blind.submit("rater_c", view.code, "Sad")[1]


def test_minimum_seconds_follows_the_setting():
    from hug_vis_dataset.studies.emotion_study import IMAGE_SECONDS, minimum_seconds

    text = "x" * 25
    assert minimum_seconds("Text", 4.0, text) == 2.5
    assert minimum_seconds("Image frame", 4.0, text) == IMAGE_SECONDS
    assert minimum_seconds("Video + Text", 2.0, text) == 2.5 and minimum_seconds("Audio", 4.0) == 4.0
    assert minimum_seconds(GOLD_CLEAR, 2.0, "x" * 50) == 5.0


def test_a_wrong_model_answer_records_what_it_named():
    from hug_vis_dataset.tasks import get_task

    task = get_task("emotion")
    scores = [task._correct(answer, {"emotion": "Sad"}, ["emotion_accuracy"], None, {})
              for answer in ("I think she is happy", "Sad.", "???")]
    assert [s.values["emotion_accuracy"] for s in scores] == [0.0, 1.0, 0.0]
    assert [s.notes.get("note", "") for s in scores] == ["answered Happy", "", "unparsed answer"]

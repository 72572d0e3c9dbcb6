"""Emotion answer parser and seven-class scoring (paper Table 4)."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix, f1_score

from hug_vis_dataset.datamodel.grid import EMOTION_NAMES
from hug_vis_dataset.metrics.emotion import (
    emotion_accuracy,
    find_mentions,
    normalize_input_setting,
    parse_answer,
    read_predictions_jsonl,
)

# (answer, expected class name or None for unparsed). Hand-written, English and Chinese.
ANSWERS = [
    # plain labels and aliases
    ("Happy", "Happy"), ("ANGRY", "Angry"), ("sad.", "Sad"), ("Fearful", "Afraid"), ("afraid", "Afraid"),
    ("Disgust", "Disgusted"), ("surprise!", "Surprised"), ("Neutral", "Neutral"), ("calm", "Neutral"),
    # English sentences with inflections
    ("The speaker sounds furious.", "Angry"),
    ("He is clearly mad about something.", "Angry"),
    ("There is rage in her voice.", "Angry"),
    ("She seems joyful and relaxed.", "Happy"),
    ("A cheerful tone throughout.", "Happy"),
    ("He looks glad to see them.", "Happy"),
    ("The woman appears delighted.", "Happy"),
    ("Her voice is sorrowful.", "Sad"),
    ("He looks unhappy.", "Sad"),
    ("She seems depressed.", "Sad"),
    ("The scene conveys grief.", "Sad"),
    ("The speaker is scared.", "Afraid"),
    ("She looks frightened.", "Afraid"),
    ("He is terrified of something behind him.", "Afraid"),
    ("The actor appears anxious.", "Afraid"),
    ("I sense fear in her face.", "Afraid"),
    ("He is repulsed by the smell.", "Disgusted"),
    ("She looks revolted.", "Disgusted"),
    ("They are grossed out.", "Disgusted"),
    ("He seems astonished.", "Surprised"),
    ("She is amazed by the news.", "Surprised"),
    ("The speaker sounds shocked.", "Surprised"),
    ("There is no emotion in this clip.", "Neutral"),
    ("The delivery is flat and calm.", "Neutral"),
    ("He made a remark about the meeting", None),  # "made" is not "mad"
    # label fields take precedence
    ("Emotion: Surprise", "Surprised"),
    ("Answer: sad", "Sad"),
    ("She frowns, maybe angry. Final answer: Disgusted", "Disgusted"),
    ("Reasoning: she smiles, looks happy...\nLabel: neutral", "Neutral"),
    ("The emotion is afraid.", "Afraid"),
    ("Emotion: not angry, sad", "Sad"),
    # negation
    ("not angry", None),
    ("The speaker isn't happy.", None),
    ("She does not look scared at all.", None),
    ("He is not sad, he is angry.", "Angry"),
    ("I think she is disgusted, not angry", "Disgusted"),
    ("She sounds surprised rather than afraid.", "Surprised"),
    ("Not happy but sad.", "Sad"),
    ("I don't think she is happy; she seems sad.", "Sad"),
    ("She is never calm, always furious", "Angry"),
    ("angry instead of sad", "Angry"),
    # two non-negated emotions: first mention wins
    ("Happy or maybe surprised", "Happy"),
    ("She is sad and a bit afraid.", "Sad"),
    ("Surprised, then happy.", "Surprised"),
    # unparsed
    ("I cannot tell.", None), ("", None), ("???", None), ("The person is talking.", None),
    # Chinese
    ("她看起来很害怕", "Afraid"),
    ("他很生气", "Angry"),
    ("说话人非常愤怒", "Angry"),
    ("他有点恼火", "Angry"),
    ("她很高兴", "Happy"),
    ("看起来很开心", "Happy"),
    ("他感到快乐", "Happy"),
    ("充满喜悦", "Happy"),
    ("她很悲伤", "Sad"),
    ("他看起来很难过", "Sad"),
    ("她很伤心", "Sad"),
    ("他感到恐惧", "Afraid"),
    ("她一脸惊恐", "Afraid"),
    ("他很厌恶这个东西", "Disgusted"),
    ("她觉得恶心", "Disgusted"),
    ("他很反感", "Disgusted"),
    ("她很惊讶", "Surprised"),
    ("他非常吃惊", "Surprised"),
    ("她很震惊", "Surprised"),
    ("中性", "Neutral"),
    ("语气平静", "Neutral"),
    ("无明显情绪", "Neutral"),
    ("答案：恐惧", "Afraid"),
    ("情绪：开心", "Happy"),
    ("情绪为中性", "Neutral"),
    ("不是生气", None),
    ("她没有害怕", None),
    ("他并不开心", None),
    ("不是生气，而是惊讶", "Surprised"),
    ("不是生气而是害怕", "Afraid"),
    ("她生气而非害怕", "Angry"),
    ("她不太高兴，有点难过", "Sad"),
    ("她无比快乐", "Happy"),  # 无比 intensifies, not a negation
    ("我无法判断", None),
    ("分析：她皱眉，像是生气。答案：厌恶", "Disgusted"),
    ("The speaker sounds 伤心", "Sad"),
]


def test_at_least_sixty_answers_in_both_languages():
    assert len(ANSWERS) >= 60
    assert sum(1 for a, _ in ANSWERS if not a.isascii()) >= 25
    assert sum(1 for a, _ in ANSWERS if "not" in a or "n't" in a or "不" in a or "没" in a) >= 10


@pytest.mark.parametrize("answer,expected", ANSWERS)
def test_parse_answer(answer, expected):
    got = parse_answer(answer)
    assert (got.value if got is not None else None) == expected


def test_parse_answer_none_nan_and_emotion_passthrough():
    assert parse_answer(None) is None
    assert parse_answer(float("nan")) is None
    assert parse_answer(parse_answer("sad")) is parse_answer("sad")


def test_find_mentions_reports_negated_terms():
    mentions = find_mentions("I think she is disgusted, not angry")
    assert [(m.emotion.value, m.negated) for m in mentions] == [("Disgusted", False), ("Angry", True)]


def _sklearn_reference(preds, refs):
    """Independent reference: sklearn with unparsed answers as an extra non-label class."""
    y_pred = [p.value if p is not None else "unparsed" for p in (parse_answer(x) for x in preds)]
    y_true = [r for r in refs]
    labels = list(EMOTION_NAMES)
    acc = float(np.mean([a == b for a, b in zip(y_pred, y_true)]))
    f1 = f1_score(y_true, y_pred, labels=labels, average="macro", zero_division=0)
    cm = confusion_matrix(y_true, y_pred, labels=labels)
    return acc, f1, cm


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_accuracy_f1_confusion_match_sklearn(seed):
    rng = random.Random(seed)
    pool = ["happy", "Angry!", "she is sad", "fearful", "disgusted", "surprise", "neutral", "???", "not happy",
            "她很害怕", "Emotion: calm"]
    n = 80 + seed * 17
    refs = [rng.choice(EMOTION_NAMES[: 5 + seed]) for _ in range(n)]  # seed 0: two classes never referenced
    preds = [rng.choice(pool) for _ in range(n)]
    res = emotion_accuracy(preds, refs)
    acc, f1, cm = _sklearn_reference(preds, refs)
    assert res["accuracy"] == pytest.approx(acc)
    assert res["macro_f1"] == pytest.approx(f1)
    assert np.array_equal(np.array(res["confusion_matrix"]), cm)
    n_unparsed = sum(parse_answer(p) is None for p in preds)
    assert res["unparsed"] == n_unparsed and n_unparsed > 0
    for i, name in enumerate(EMOTION_NAMES):
        n_ref = sum(r == name for r in refs)
        expected = cm[i, i] / n_ref if n_ref else math.nan
        got = res["per_emotion_accuracy"][name]
        assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected)


def test_accuracy_by_hand_and_reference_aliases():
    res = emotion_accuracy(["happy", "angry", "xyz", "害怕"], ["joy", "Sad", "afraid", "fearful"])
    assert res["accuracy"] == 0.5 and res["correct"] == 2 and res["unparsed"] == 1 and res["n"] == 4
    assert res["confusion_matrix"][EMOTION_NAMES.index("Sad")][EMOTION_NAMES.index("Angry")] == 1
    assert res["unparsed_per_emotion"]["Afraid"] == 1
    # macro-F1 by hand: Happy 1, Afraid 2/(2+0+1)=2/3, everything else 0 -> (1 + 2/3) / 7
    assert res["macro_f1"] == pytest.approx((1 + 2 / 3) / 7)


def test_input_settings_give_one_result_per_setting():
    preds = ["happy", "sad", "angry", "happy", "sad", "neutral"]
    refs = ["Happy", "Happy", "Angry", "Happy", "Sad", "Sad"]
    settings = ["video", "video", "Video", "text", "text", "video+text"]
    res = emotion_accuracy(preds, refs, input_settings=settings)
    by = res["by_input_setting"]
    assert list(by) == ["Video", "Text", "Video + Text"]
    assert by["Video"]["accuracy"] == pytest.approx(2 / 3)
    assert by["Text"]["accuracy"] == 1.0 and by["Video + Text"]["accuracy"] == 0.0
    assert res["accuracy"] == pytest.approx(4 / 6)


def test_accuracy_row_order_independent():
    rng = random.Random(5)
    preds = [rng.choice(["happy", "sad", "??", "angry"]) for _ in range(50)]
    refs = [rng.choice(["Happy", "Sad", "Angry"]) for _ in range(50)]
    settings = [rng.choice(["video", "audio"]) for _ in range(50)]
    order = list(range(50))
    rng.shuffle(order)
    a = emotion_accuracy(preds, refs, settings)
    b = emotion_accuracy([preds[i] for i in order], [refs[i] for i in order], [settings[i] for i in order])
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"predictions": ["a"], "references": []}, "1 predictions but 0"),
        ({"predictions": [], "references": []}, "no examples"),
        ({"predictions": ["happy"], "references": ["bored"]}, "reference 0"),
        ({"predictions": ["happy"], "references": ["Happy"], "input_settings": []}, "input_settings"),
    ],
)
def test_accuracy_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        emotion_accuracy(**kwargs)


def test_normalize_input_setting():
    assert normalize_input_setting("audio_video_text") == "Video + Audio + Text"
    assert normalize_input_setting("Image frame") == "Image frame"
    assert normalize_input_setting("text + video") == "Video + Text"
    assert normalize_input_setting("thermal") == "thermal"


def _write_jsonl(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")


def test_read_predictions_jsonl_errors(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"clip_id": "actor_0001_happy_action_01_script_001", "answer": "x"}\n{"answer": "y"}\n')
    with pytest.raises(ValueError, match=r"p.jsonl:2: missing field"):
        read_predictions_jsonl(path)
    path.write_text('{"clip_id": "bad", "answer": "x"}\n')
    with pytest.raises(ValueError, match=r"p.jsonl:1: bad clip id"):
        read_predictions_jsonl(path)

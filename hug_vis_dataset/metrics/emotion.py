"""Seven-class emotion recognition scoring (paper Table 4).

Predictions of zero-shot multimodal LLMs are free text in English or Chinese. :func:`parse_answer`
maps an answer to one of the seven :class:`~hug_vis_dataset.datamodel.grid.Emotion` classes or to ``None``
(``unparsed``); :func:`emotion_accuracy` scores answers against reference labels, counting an
unparsed answer as wrong and reporting how many there were.

Parsing rules (applied to the lower-cased answer):

1. **Vocabulary.** Every label word and alias of :data:`ANSWER_VOCABULARY` (English words,
   inflections such as *furious*, *joyful*, *terrified*, phrases such as *no emotion*, and Chinese
   words such as 生气, 开心, 无明显情绪). English terms match whole words only (*unhappy* is Sad, not
   Happy; *made* is not *mad*); Chinese terms match as substrings. Overlapping matches keep the
   longest term (无明显情绪 beats 情绪-free shorter terms; *no emotion* beats nothing).
2. **Negation.** A mention is dropped when a negation cue governs it: in English *not*, *no*,
   *never*, *n't*, *neither*, *nor*, *without*, *rather than*, *instead of*, *hardly*, *isn't* ... at most
   three words before the term within the same clause (a clause ends at punctuation or at
   *but*, *and*, *while*, *though*, *although*, *yet*, *instead*, *whereas*); in Chinese 不, 没
   (so 不是, 并不, 没有), 并非, 毫无, 而非, 绝非 in the (up to four) characters before the term within the same clause (a clause ends at
   punctuation or at 而, 但, 却). So "not angry" and "不是生气" name no emotion, and
   "I think she is disgusted, not angry" names only Disgusted.
3. **Explicit label field first.** If the answer contains a label field, ``Emotion: X``,
   ``Answer: X``, ``Label: X``, ``Final answer: X``, ``The emotion is X``, ``情绪：X``, ``答案：X``,
   ``情感是X`` ..., the text after the *last* such field (up to the end of its line or sentence) is
   parsed first with rules 1-2, because models often reason first and state the label last; the
   first non-negated emotion there is the answer.
4. **Otherwise the first mention.** With no usable label field, the first non-negated mention
   in the whole answer wins ("Happy or maybe surprised" -> Happy). Answers that hedge between
   classes are thus scored by their leading choice, which is what a reader would take as the
   answer; they are not discarded.
5. **Nothing left** (no term, or every term negated) -> ``None`` (unparsed).

Example:
    >>> parse_answer("The speaker sounds furious.").value
    'Angry'
    >>> parse_answer("她看起来很害怕").value
    'Afraid'
    >>> parse_answer("I think she is disgusted, not angry").value
    'Disgusted'
    >>> parse_answer("不是生气，而是惊讶").value
    'Surprised'
    >>> parse_answer("I cannot tell.") is None
    True
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from ..datamodel.grid import EMOTION_ALIASES, EMOTION_NAMES, EMOTIONS, ClipId, Emotion, parse_emotion
from ..readers import InputFileError
from ..readers.json_files import json_type_name, loads_strict
from ..readers.textio import parse_form

UNPARSED = "unparsed"


# Words an answer may use for each class, beyond grid.EMOTION_ALIASES (which are merged in).
_EXTRA_TERMS: dict[Emotion, tuple[str, ...]] = {
    Emotion.HAPPY: (
        "happily", "joyous", "joyfully", "cheerful", "cheerfully", "glad", "delighted", "pleased",
        "elated", "contented", "愉快", "欢喜", "喜悦", "兴高采烈", "高高兴兴", "开开心心",
    ),
    Emotion.ANGRY: (
        "angrily", "furious", "furiously", "fury", "mad", "rage", "raging", "enraged", "irate",
        "irritated", "annoyed", "outraged", "恼火", "发火", "气愤", "愤慨", "怒", "暴怒",
    ),
    Emotion.SAD: (
        "sadly", "sorrow", "sorrowful", "unhappy", "depressed", "grief", "grieving", "melancholy",
        "heartbroken", "mournful", "downcast", "sorrowfully", "哀伤", "忧伤", "沮丧", "失落", "伤感", "悲痛",
    ),
    Emotion.AFRAID: (
        "frightened", "terrified", "anxious", "fright", "fearfully", "scared", "panicked", "panic",
        "nervous", "horrified", "惊恐", "恐慌", "畏惧", "担心", "紧张", "惧怕",
    ),
    Emotion.DISGUSTED: (
        "disgusting", "repulsed", "revolted", "grossed out", "grossed", "repelled", "revulsion",
        "repugnance", "反感", "嫌弃", "厌烦", "作呕", "憎恶",
    ),
    Emotion.SURPRISED: (
        "surprising", "astonished", "astonishment", "amazed", "amazement", "shocked", "shock",
        "startled", "stunned", "震惊", "诧异", "惊奇", "意外", "惊愕",
    ),
    Emotion.NEUTRAL: (
        "neutrality", "calmly", "no emotion", "no particular emotion", "no obvious emotion",
        "no clear emotion", "no strong emotion", "emotionless", "expressionless", "unemotional",
        "flat", "无明显情绪", "没有明显情绪", "无情绪", "中立", "平淡", "冷静", "面无表情",
    ),
}

ANSWER_VOCABULARY: dict[str, Emotion] = {**EMOTION_ALIASES}
for _emotion, _terms in _EXTRA_TERMS.items():
    for _term in _terms:
        ANSWER_VOCABULARY[_term] = _emotion

# Longest first, so that the regex alternation prefers "no emotion" over shorter pieces and
# "无明显情绪" over any substring.
_TERMS_BY_LENGTH = sorted(ANSWER_VOCABULARY, key=lambda t: (-len(t), t))
_TERM_RE = re.compile(
    "|".join(
        (r"(?<![a-z])" + re.escape(t).replace(r"\ ", r"\s+") + r"(?![a-z])") if t.isascii() else re.escape(t)
        for t in _TERMS_BY_LENGTH
    )
)

_EN_NEGATORS = {
    "not", "no", "never", "neither", "nor", "without", "hardly", "barely", "isn't", "aren't", "wasn't",
    "weren't", "doesn't", "don't", "didn't", "cannot", "can't", "won't", "nothing", "lacks", "lack",
}
_EN_CLAUSE_BREAK = re.compile(r"[,.;:!?()\n，。；：！？]|\b(?:but|and|while|though|although|yet|instead|whereas)\b")
_EN_MULTIWORD_NEGATORS = re.compile(r"\b(?:rather\s+than|instead\s+of|other\s+than|as\s+opposed\s+to)\s*$")
# Not bare 非/无: 非常 (very) and 无比 (extremely) intensify, they do not negate.
_ZH_NEGATION = re.compile(r"(?:不|没|并非|毫无|而非|绝非)")
_ZH_CONTRAST_NEGATORS = re.compile(r"(?:而非|并非|绝非|而不是|不是)\s*$")
_ZH_CLAUSE_BREAK = re.compile(r"[,.;:!?\n，。；：！？、]|而|但|却")

# Label fields. The captured text after the field is parsed before the rest of the answer.
_FIELD_RE = re.compile(
    r"(?:\b(?:final\s+answer|answer|emotion(?:al\s+state)?|label|prediction|predicted\s+emotion|classification|category)"
    r"\s*(?:is|:|=|-|：)\s*"
    r"|(?:最终答案|答案|情绪|情感|标签|类别|预测)\s*(?:是|为|：|:)\s*)"
)
_FIELD_END = re.compile(r"[\n.;。；!！?？]")


@dataclass(frozen=True)
class Mention:
    """One vocabulary term found in an answer."""

    start: int
    term: str
    emotion: Emotion
    negated: bool


def _is_negated(text: str, start: int, term: str) -> bool:
    before = text[:start]
    # Contrastive negators ("rather than", "而非") start with a clause-break word, so they are
    # checked on the raw text right before the term, before the clause split.
    if _EN_MULTIWORD_NEGATORS.search(before) or _ZH_CONTRAST_NEGATORS.search(before):
        return True
    if term.isascii():
        clause = _EN_CLAUSE_BREAK.split(before)[-1] if before else ""
        words = re.findall(r"[a-z']+", clause)[-4:]
        # The cue may sit at most three words before the term ("isn't very happy", "not at all sad").
        return any(w in _EN_NEGATORS or w.endswith("n't") for w in words)
    clause = _ZH_CLAUSE_BREAK.split(before)[-1] if before else ""
    # English negation before a Chinese word ("not 开心") is also honoured.
    return bool(_ZH_NEGATION.search(clause[-4:])) or bool(re.search(r"\bnot\s*$", clause))


def find_mentions(text: str) -> list[Mention]:
    """Every emotion term in ``text`` (lower-cased first), in order, with its negation flag.

    Example:
        >>> [(m.term, m.emotion.value, m.negated) for m in find_mentions("Not angry, just sad.")]
        [('angry', 'Angry', True), ('sad', 'Sad', False)]
    """
    lowered = parse_form(text).lower()
    mentions = []
    for match in _TERM_RE.finditer(lowered):
        term = re.sub(r"\s+", " ", match.group(0))
        mentions.append(Mention(match.start(), term, ANSWER_VOCABULARY[term], _is_negated(lowered, match.start(), term)))
    return mentions


def _first_positive(text: str) -> "Emotion | None":
    for mention in find_mentions(text):
        if not mention.negated:
            return mention.emotion
    return None


def parse_answer(text: "str | Emotion | None") -> "Emotion | None":
    """Map a label or a free-text answer (English or Chinese) to an emotion, or ``None`` if unparsed.

    The rules are in the module docstring: label fields first, negated mentions dropped, the
    first remaining mention wins.

    Args:
        text: a model's answer; an :class:`Emotion` is returned unchanged, ``None``/empty gives ``None``.

    Example:
        >>> parse_answer("Emotion: Surprise").value
        'Surprised'
        >>> parse_answer("The speaker is not happy at all.") is None
        True
        >>> parse_answer("Reasoning: she frowns, maybe sad... Final answer: angry").value
        'Angry'
    """
    if isinstance(text, Emotion):
        return text
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    # One form of the text first (textio.parse_form): "isn\u2019t" is "isn't", "\uff28appy" is "happy".
    lowered = parse_form(text).lower().strip()
    if not lowered:
        return None
    fields = list(_FIELD_RE.finditer(lowered))
    for field in reversed(fields):
        rest = lowered[field.end():]
        end = _FIELD_END.search(rest)
        found = _first_positive(rest[: end.start()] if end else rest)
        if found is not None:
            return found
    return _first_positive(lowered)


def _f1_from_confusion(confusion, n_ref) -> list[float]:
    import numpy as np

    tp = np.diag(confusion).astype(float)
    fp = confusion.sum(axis=0) - tp
    fn = n_ref - tp  # unparsed answers of class i are false negatives of i
    denom = 2 * tp + fp + fn
    # zero_division=0, as sklearn.metrics.f1_score(..., zero_division=0): a class absent from
    # both references and predictions scores 0 and still counts in the macro mean.
    return [float(2 * t / d) if d > 0 else 0.0 for t, d in zip(tp, denom)]


def _score(pred_emotions: Sequence["Emotion | None"], ref_emotions: Sequence[Emotion]) -> dict:
    import numpy as np

    k = len(EMOTIONS)
    confusion = np.zeros((k, k), dtype=np.int64)
    n_ref = np.zeros(k, dtype=np.int64)
    unparsed_by_ref = np.zeros(k, dtype=np.int64)
    for pred, ref in zip(pred_emotions, ref_emotions):
        n_ref[ref.index] += 1
        if pred is None:
            unparsed_by_ref[ref.index] += 1
        else:
            confusion[ref.index, pred.index] += 1
    n = int(n_ref.sum())
    correct = int(np.trace(confusion))
    f1 = _f1_from_confusion(confusion, n_ref)
    return {
        "accuracy": correct / n if n else float("nan"),
        "n": n,
        "correct": correct,
        "unparsed": int(unparsed_by_ref.sum()),
        "per_emotion_accuracy": {
            name: (int(confusion[i, i]) / int(n_ref[i]) if n_ref[i] else float("nan"))
            for i, name in enumerate(EMOTION_NAMES)
        },
        "per_emotion_f1": dict(zip(EMOTION_NAMES, f1)),
        "macro_f1": float(np.mean(f1)),
        "labels": list(EMOTION_NAMES),
        "confusion_matrix": confusion.tolist(),
        "unparsed_per_emotion": dict(zip(EMOTION_NAMES, unparsed_by_ref.tolist())),
    }


def emotion_accuracy(
    predictions: Sequence["str | Emotion | None"],
    references: Sequence["str | Emotion | int"],
    input_settings: "Sequence[str] | None" = None,
) -> dict:
    """Seven-class accuracy, per-emotion accuracy, confusion matrix, macro-F1 and unparsed count.

    Args:
        predictions: labels or free-text answers, parsed by :func:`parse_answer`.
        references: labels; anything :func:`hug_vis_dataset.datamodel.grid.parse_emotion` accepts.
        input_settings: optional setting per example (``"Video + Text"`` ...); when given, the
            result also holds ``by_input_setting`` with one full result per setting (names
            normalised by :func:`normalize_input_setting`), in Table 4 order.

    Returns:
        ``accuracy`` (fraction), ``n``, ``correct``, ``unparsed`` (count of answers mapped to no
        class; counted wrong), ``per_emotion_accuracy`` (recall per reference class, NaN for a class
        with no reference), ``per_emotion_f1`` and ``macro_f1`` (unweighted mean over all seven
        classes, equal to ``sklearn.metrics.f1_score(labels=all 7, average="macro",
        zero_division=0)`` with unparsed answers as an extra non-label prediction),
        ``confusion_matrix`` (7x7, rows = reference, columns = prediction, Table 1 order as
        ``labels``; unparsed answers are in no column, see ``unparsed_per_emotion``).

    Raises:
        ValueError: on length mismatch, empty input or an unknown reference label.

    Example:
        >>> r = emotion_accuracy(["happy", "I feel sad", "???"], ["Happy", "Sad", "Angry"])
        >>> round(r["accuracy"], 4), r["unparsed"], r["confusion_matrix"][2][2]
        (0.6667, 1, 1)
    """
    predictions = list(predictions)
    references = list(references)
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references")
    if not references:
        raise ValueError("no examples to score")
    refs = []
    for i, ref in enumerate(references):
        try:
            refs.append(parse_emotion(ref))
        except ValueError as err:
            raise ValueError(f"reference {i}: {err}") from None
    preds = [parse_answer(p) for p in predictions]
    result = _score(preds, refs)
    if input_settings is not None:
        settings = [normalize_input_setting(s) for s in input_settings]
        if len(settings) != len(references):
            raise ValueError(f"{len(settings)} input_settings but {len(references)} references")
        by_setting = {}
        for setting in sorted(set(settings), key=input_setting_sort_key):
            idx = [i for i, s in enumerate(settings) if s == setting]
            by_setting[setting] = _score([preds[i] for i in idx], [refs[i] for i in idx])
        result["by_input_setting"] = by_setting
    return result


# ----------------------------------------------------------------------------- answers under reordered options
#: The most option orders a question can be asked in: one per rotation of the seven options.
MAX_ORDERS = len(EMOTIONS)


def option_shifts(k: int) -> list[int]:
    """The rotations of ``k`` option orders, spread over the seven: ``floor(j x 7 / k)`` for j = 0..k-1 (order 0
    is Table 1's; with k = 7, every rotation, MMBench's circular evaluation).

    Example:
        >>> option_shifts(1), option_shifts(3), option_shifts(7)
        ([0], [0, 2, 4], [0, 1, 2, 3, 4, 5, 6])
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_ORDERS:
        raise ValueError(f"the number of option orders must be an integer in 1..{MAX_ORDERS}, got {k!r}")
    return [j * MAX_ORDERS // k for j in range(k)]


def rotated_options(shift: int) -> tuple[str, ...]:
    """Table 1's seven emotions rotated left by ``shift`` (the order a prompt lists them in).

    Example:
        >>> rotated_options(2)[:3]
        ('Sad', 'Afraid', 'Disgusted')
    """
    return tuple(EMOTION_NAMES[(i + shift) % MAX_ORDERS] for i in range(MAX_ORDERS))


def circular_scores(answers: "Mapping[tuple[int, str], str | None]", truth: "str | Emotion") -> dict[str, float]:
    """Per-clip values of one clip and setting asked under several option orders (and prompt languages).

    Args:
        answers: ``(order, language) -> the model's answer`` (order 0: the options in Table 1's order).
        truth: the clip's instructed emotion.

    Returns:
        ``emotion_accuracy``: the share of the order-0 answers that name ``truth`` (one per language asked; the
        plain accuracy, Table 4's); ``emotion_circular_accuracy``: 1 when every answer names it, else 0;
        ``emotion_flip_rate`` (only when some language was asked under two orders or more): 1 when, in some
        language, the parsed answers differ between orders (an unparsed answer is an answer of its own), else 0.

    Raises:
        ValueError: no answer, or none under order 0.

    Example:
        >>> circular_scores({(0, "en"): "Sad", (2, "en"): "sad.", (4, "en"): "Angry"}, "Sad")
        {'emotion_accuracy': 1.0, 'emotion_circular_accuracy': 0.0, 'emotion_flip_rate': 1.0}
        >>> circular_scores({(0, "en"): "Sad", (0, "zh"): "悲伤"}, "Sad")
        {'emotion_accuracy': 1.0, 'emotion_circular_accuracy': 1.0}
    """
    if not answers:
        raise ValueError("no answer to score")
    truth = parse_emotion(truth)
    parsed = {key: parse_answer(answer) for key, answer in answers.items()}
    plain = [p == truth for (order, _), p in parsed.items() if order == 0]
    if not plain:
        raise ValueError("no answer with the options in Table 1's order (order 0); ask it too")
    out = {"emotion_accuracy": float(sum(plain) / len(plain)),
           "emotion_circular_accuracy": float(all(p == truth for p in parsed.values()))}
    by_language: dict[str, list] = {}
    for (order, language), p in sorted(parsed.items(), key=lambda kv: (str(kv[0][1]), kv[0][0])):
        by_language.setdefault(str(language), []).append(p)
    if any(len(group) > 1 for group in by_language.values()):
        out["emotion_flip_rate"] = float(any(len(set(group)) > 1 for group in by_language.values()))
    return out


# Table 4's groups, in its order. Modalities inside a combined setting are written in this order.
INPUT_SETTING_ORDER: tuple[str, ...] = (
    "Image frame", "Video", "Audio", "Text", "Video + Audio", "Video + Text", "Video + Audio + Text",
)
_MODALITY_ORDER = ("Image frame", "Video", "Audio", "Text")
_MODALITY_ALIASES = {
    "image": "Image frame", "image frame": "Image frame", "image_frame": "Image frame", "frame": "Image frame",
    "imageframe": "Image frame", "img": "Image frame", "video": "Video", "v": "Video", "audio": "Audio",
    "a": "Audio", "speech": "Audio", "text": "Text", "t": "Text", "transcript": "Text",
}


def normalize_input_setting(setting: str) -> str:
    """Canonical display name of an input setting (``"video+text"`` -> ``"Video + Text"``).

    Modalities are split on ``+``, ``&``, ``,``, ``/``, ``_`` or whitespace-padded ``and`` and
    written in the order Image frame, Video, Audio, Text. Unknown names are returned stripped.

    Example:
        >>> normalize_input_setting("text_audio_video"), normalize_input_setting("image_frame")
        ('Video + Audio + Text', 'Image frame')
    """
    raw = str(setting).strip()
    key = raw.lower()
    if key in _MODALITY_ALIASES:
        return _MODALITY_ALIASES[key]
    parts = [p.strip() for p in re.split(r"\s*(?:\+|&|,|/|\band\b)\s*", key) if p.strip()]
    if len(parts) == 1:
        parts = [p for p in re.split(r"[_\s]+", key) if p]
        # "image_frame" splits into two words of one modality
        parts = ["image frame" if p == "image" else p for p in parts if p != "frame"] or parts
    mapped = [_MODALITY_ALIASES.get(p) for p in parts]
    if not parts or any(m is None for m in mapped):
        return raw
    return " + ".join(m for m in _MODALITY_ORDER if m in set(mapped))


def input_setting_sort_key(setting: str) -> tuple:
    """Sort key putting Table 4's settings first, in its order, then any other name alphabetically."""
    name = normalize_input_setting(setting)
    if name in INPUT_SETTING_ORDER:
        return (0, INPUT_SETTING_ORDER.index(name), name)
    return (1, 0, name)


def iter_prediction_lines(path: "str | Path") -> Iterator[tuple[str, "dict | None", str]]:
    """Every non-blank line of a ``predictions.jsonl`` as ``(where, record, error)``.

    ``where`` is ``"<file>:<line>"``; ``record`` is the parsed line with a valid ``clip_id`` and an
    ``answer`` field (``None`` when the line is bad, then ``error`` says why). The one reader of the
    format: :func:`read_predictions_jsonl` raises on the first bad line, the emotion scorer
    (:mod:`hug_vis_dataset.tasks.emotion`) records bad lines in its coverage report.

    Raises:
        ValueError: the file is not UTF-8 text (names the file and line).
    """
    from ..readers.textio import read_text_lines

    name = Path(path).name
    for lineno, line in read_text_lines(path):
        where = f"{name}:{lineno}"
        if not line.strip():
            continue
        try:  # strict: a duplicated key ("answer" twice) is a bad line, not "the last value wins"
            record = loads_strict(line, path, first_line=lineno)
        except InputFileError as err:
            yield where, None, err.problem
            continue
        if not isinstance(record, dict):
            yield where, None, "not a JSON object"
            continue
        missing = [k for k in ("clip_id", "answer") if k not in record]
        if missing:
            yield where, None, f"missing field(s) {missing}"
            continue
        wrong = [k for k, kinds in (("clip_id", (str,)), ("answer", (str, type(None))),
                                    ("input_setting", (str, type(None)))) if k in record and
                 not isinstance(record[k], kinds)]
        if wrong:  # an answer 5 or ["Happy"] is not an answer a model wrote: never scored as str(value)
            yield where, None, f"field {wrong[0]!r} holds {json_type_name(record[wrong[0]])}, not a string"
            continue
        try:
            ClipId.parse(str(record["clip_id"]))
        except ValueError as err:
            yield where, None, str(err)
            continue
        problem = variant_problem(record)
        if problem:
            yield where, None, problem
            continue
        yield where, record, ""


def variant_problem(record: Mapping) -> str:
    """Why a prediction line's option-order fields are not ones ``hugvis predict --circular`` writes ("" when they
    are, or absent): ``order`` a non-negative integer, ``language`` a string, ``options`` the seven emotions once each.

    Example:
        >>> variant_problem({"order": 1, "options": list(rotated_options(1))}), variant_problem({"order": -1})
        ('', "field 'order' must be a non-negative integer (the option order; 0 = Table 1's order)")
    """
    order = record.get("order")
    if order is not None and (isinstance(order, bool) or not isinstance(order, int) or order < 0):
        return "field 'order' must be a non-negative integer (the option order; 0 = Table 1's order)"
    if record.get("language") is not None and not isinstance(record["language"], str):
        return f"field 'language' holds {json_type_name(record['language'])}, not a string"
    options = record.get("options")
    if options is not None:
        named = [parse_answer(o) if isinstance(o, str) else None for o in options] if isinstance(options, list) else []
        if len(named) != len(EMOTIONS) or None in named or len(set(named)) != len(EMOTIONS):
            return "field 'options' must list the seven emotions once each, in the order the prompt gave them"
    return ""


class PredictionsFileError(InputFileError):
    """A bad line of a ``predictions.jsonl``, written ``<file>:<line>: <why>`` (where an editor jumps to)."""

    def __init__(self, path: "str | Path", where: str, problem: str, fix: str = ""):
        super().__init__(path, where, problem, fix)
        self.args = (f"{Path(self.path).name}:{where.removeprefix('line ')}: {problem}",)


def read_predictions_jsonl(path: "str | Path") -> list[dict]:
    """Records of a ``predictions.jsonl`` (``clip_id``, ``answer``, optional ``input_setting``).

    Raises:
        PredictionsFileError: (an :class:`~hug_vis_dataset.readers.InputFileError`, a ValueError)
            naming the file and line of malformed JSON, a duplicated key, a missing field or a bad clip id.
    """
    records = []
    for where, record, error in iter_prediction_lines(path):
        if record is None:
            raise PredictionsFileError(path, f"line {where.rsplit(':', 1)[1]}", error)
        records.append(record)
    return records

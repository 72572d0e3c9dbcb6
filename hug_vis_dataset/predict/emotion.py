"""Emotion recognition predictions: one prompt protocol per input setting, in English and Chinese.

The paper reports zero-shot accuracy per input setting (Table 4) without publishing its prompts;
this module fixes one protocol so that two users of the same model get comparable numbers.

**Settings** are Table 4's seven (:data:`hug_vis_dataset.metrics.emotion.INPUT_SETTING_ORDER`):
Image frame, Video, Audio, Text, Video + Audio, Video + Text, Video + Audio + Text. The setting
decides what the model receives (keys of the ``inputs`` dict an adapter gets):

=================  =======================================================================
modality           inputs
=================  =======================================================================
Image frame        ``frames``: one uint8 RGB (H, W, 3) frame, the middle one (index T // 2
                   of T frames); ``frame_indices``
Video              ``frames``: :data:`DEFAULT_VIDEO_FRAMES` = 8 frames sampled uniformly in
                   time, the centres of 8 equal segments: index ``floor((i + 0.5) * T / 8)``,
                   i = 0..7 (all T frames when T <= 8); ``frame_indices``; ``video_path`` (the
                   clip's video file, for models that read video themselves); ``fps``
Audio              ``audio`` (float32 mono), ``sample_rate``, ``audio_path`` (the clip's WAV)
Text               ``text``: the transcript (the assigned Mandarin prompt the actor speaks;
                   ``text_column="asr_transcript"`` uses the verbatim ASR transcript instead)
=================  =======================================================================

Every ``inputs`` also has ``clip_id``, ``input_setting``, ``language`` and ``prompt``. The image
frame is the middle frame rather than the first: a performance starts from the actor's rest pose,
and the N = 1 case of the sampling rule is the middle frame, so both visual settings follow one
rule.

**Prompts** (:func:`build_prompt`): an introduction naming what is given (:data:`INTRODUCTIONS`),
then one question asking for exactly one of the seven emotion words (:data:`QUESTIONS`). The
language is the transcript's (Chinese when it has Han characters, else English) unless forced.
The Chinese prompt lists the Chinese words :data:`LABEL_WORDS` ``["zh"]``, which
:func:`~hug_vis_dataset.metrics.emotion.parse_answer` maps back to the seven classes.

**Output**: ``predictions.jsonl``, one line per clip and setting with ``clip_id``,
``input_setting`` and ``answer`` (the model's raw text; ``hugvis evaluate`` parses it), plus the
record of how it was obtained: ``parsed`` (the label :func:`parse_answer` reads, or null),
``language``, ``prompt``, ``frame_indices``, ``video_frames`` and ``model``. An adapter that
raises, times out, or returns an empty or non-string answer fails that clip and setting: it gets
no line, and the failure is logged with its error.

**Reordered options** (``circular=K``, ``hugvis predict emotion --circular K``; optionally
``language="both"``): every clip and setting is asked K times, the seven options rotated by
:func:`~hug_vis_dataset.metrics.emotion.option_shifts` (``floor(j x 7 / K)``; order 0 is Table 1's), in each
language asked; every adapter receives the order (``inputs["options"]``: the seven labels as listed,
``inputs["order"]``: the rotation), and each answer's line adds ``order`` and ``options`` (the labels in the order
the prompt gave them), so the scorer knows which order produced which answer (plain accuracy on order 0,
circular accuracy, flip rate). With K = 1 and one language the lines are exactly the plain ones.

Example:
    >>> sample_frame_indices(100, 8)
    [6, 18, 31, 43, 56, 68, 81, 93]
    >>> sample_frame_indices(100, 1), sample_frame_indices(3, 8)
    ([50], [0, 1, 2])
    >>> print(build_prompt("Text", "en", "I won!"))
    You are given the transcript of what a person says: "I won!"
    Which emotion does the person express? Answer with exactly one word from this list: Happy, Angry, Sad, Afraid, Disgusted, Surprised, Neutral.
    >>> keyword_baseline({"text": "太开心了！"}), keyword_baseline({"text": "明天见。"})
    ('Happy', 'Neutral')
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from ..datamodel.grid import EMOTION_NAMES, ClipId
from ..metrics.emotion import INPUT_SETTING_ORDER, normalize_input_setting, option_shifts, parse_answer, rotated_options
from ..tasks.emotion import PREDICTIONS_FILE  # the file the scorer reads
from .runner import PredictionError, PredictLog, PredictSetupError, PredictSummary, run_units

if TYPE_CHECKING:
    from ..outputs import Output

DEFAULT_VIDEO_FRAMES = 8
LANGUAGES = ("en", "zh")
#: ``language`` asking every question in both prompt languages (each its own answer).
BOTH = "both"
TEXT_COLUMNS = ("transcript", "asr_transcript")
#: Answers kept in memory are written to predictions.jsonl every this many units (and at the end).
FLUSH_EVERY = 32

#: The seven emotion words each prompt lists, in Table 1 order (= the ClassLabel ids).
LABEL_WORDS: dict[str, tuple[str, ...]] = {
    "en": EMOTION_NAMES,
    "zh": ("开心", "生气", "悲伤", "害怕", "厌恶", "惊讶", "中性"),
}

QUESTIONS: dict[str, str] = {
    "en": "Which emotion does the person express? Answer with exactly one word from this list: "
          + ", ".join(LABEL_WORDS["en"]) + ".",
    "zh": "这个人表达的是哪种情绪？请只用下列词语中的一个回答：" + "、".join(LABEL_WORDS["zh"]) + "。",
}

#: What each setting gives the model; ``{text}`` is the transcript.
INTRODUCTIONS: dict[str, dict[str, str]] = {
    "en": {
        "Image frame": "You are given one frame of a video of a person.",
        "Video": "You are given frames sampled uniformly in time from a video of a person speaking.",
        "Audio": "You are given the audio recording of a person speaking.",
        "Text": 'You are given the transcript of what a person says: "{text}"',
        "Video + Audio": "You are given frames sampled uniformly in time from a video of a person speaking, "
                         "and the audio recording of the same video.",
        "Video + Text": "You are given frames sampled uniformly in time from a video of a person speaking, "
                        'and the transcript of what the person says: "{text}"',
        "Video + Audio + Text": "You are given frames sampled uniformly in time from a video of a person "
                                "speaking, the audio recording of the same video, and the transcript of what "
                                'the person says: "{text}"',
    },
    "zh": {
        "Image frame": "下面是一段人物视频中的一帧画面。",
        "Video": "下面是从一段人物说话视频中按时间均匀抽取的若干帧。",
        "Audio": "下面是一个人说话的录音。",
        "Text": "下面是一个人所说的话的文字：“{text}”",
        "Video + Audio": "下面是从一段人物说话视频中按时间均匀抽取的若干帧，以及同一段视频的录音。",
        "Video + Text": "下面是从一段人物说话视频中按时间均匀抽取的若干帧，以及这个人所说的话的文字：“{text}”",
        "Video + Audio + Text": "下面是从一段人物说话视频中按时间均匀抽取的若干帧、同一段视频的录音，"
                                "以及这个人所说的话的文字：“{text}”",
    },
}

_HAN = re.compile(r"[\u4e00-\u9fff]")


def setting_modalities(setting: str) -> tuple[str, ...]:
    """The modalities of a Table 4 setting (``"Video + Text"`` -> ``("Video", "Text")``).

    Raises:
        PredictSetupError: a setting outside Table 4's seven.
    """
    name = normalize_input_setting(setting)
    if name not in INPUT_SETTING_ORDER:
        raise PredictSetupError(f"input setting {setting!r} has no prompt protocol; choose one of "
                                f"{', '.join(INPUT_SETTING_ORDER)}")
    return tuple(name.split(" + "))


def language_of(text: str) -> str:
    """``zh`` when the text has Han characters, else ``en`` (the prompts follow the transcripts)."""
    return "zh" if _HAN.search(text or "") else "en"


def question(language: str, options: "Sequence[str] | None" = None) -> str:
    """The question listing the seven emotions in ``options``' order (English labels; default Table 1's, the
    :data:`QUESTIONS` themselves), in the prompt language's words.

    Example:
        >>> question("en", rotated_options(2)).split(": ")[1]
        'Sad, Afraid, Disgusted, Surprised, Neutral, Happy, Angry.'
        >>> question("zh") == QUESTIONS["zh"]
        True
    """
    if options is None or tuple(options) == EMOTION_NAMES:
        return QUESTIONS[language]
    words = [LABEL_WORDS[language][EMOTION_NAMES.index(o)] for o in options]
    listed = ", ".join(words) if language == "en" else "、".join(words)
    listed_now = ", ".join(LABEL_WORDS["en"]) if language == "en" else "、".join(LABEL_WORDS["zh"])
    return QUESTIONS[language].replace(listed_now, listed)


def build_prompt(setting: str, language: str, text: str = "", options: "Sequence[str] | None" = None) -> str:
    """The prompt of a setting: its introduction (with the transcript) and the question (its options in
    ``options``' order, default Table 1's)."""
    if language not in LANGUAGES:
        raise PredictSetupError(f"language {language!r}: choose one of {', '.join(LANGUAGES)}")
    name = normalize_input_setting(setting)
    setting_modalities(name)
    return INTRODUCTIONS[language][name].format(text=text) + "\n" + question(language, options)


def sample_frame_indices(total: int, count: int) -> list[int]:
    """Indices of ``count`` frames sampled uniformly from ``total``: the centres of ``count`` equal
    segments, ``floor((i + 0.5) * total / count)``; every frame when ``total <= count``."""
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    if total <= count:
        return list(range(total))
    return [int((2 * i + 1) * total // (2 * count)) for i in range(count)]


def read_frames(video: "str | Path", indices: Sequence[int], chunk_frames: int = 32) -> list[np.ndarray]:
    """The frames of ``video`` at ``indices`` (sorted), decoding in chunks and keeping only those."""
    from ..readers.media import iter_video_frames

    wanted, frames, start = sorted(set(indices)), {}, 0
    for chunk in iter_video_frames(video, chunk_frames):
        for index in wanted:
            if start <= index < start + len(chunk):
                frames[index] = chunk[index - start].copy()
        start += len(chunk)
        if len(frames) == len(wanted):
            break
    missing = [i for i in wanted if i not in frames]
    if missing:
        raise PredictionError(f"the video has no frames {missing}")
    return [frames[i] for i in indices]


def clip_language(clip, language: str, text_column: str = "transcript") -> str:
    """The prompt language of a clip: ``language``, or the transcript's for ``auto``."""
    if language != "auto":
        return language
    return language_of(clip.text.get(text_column) or clip.text.get("transcript", ""))


@contextlib.contextmanager
def emotion_inputs(clip, setting: str, language: str = "auto", video_frames: int = DEFAULT_VIDEO_FRAMES,
                   text_column: str = "transcript", order: int = 0) -> Iterator[dict]:
    """The ``inputs`` dict of one clip and setting (see the module docstring), its question's options rotated
    by ``order`` (``inputs["options"]``, ``inputs["order"]``; 0: Table 1's order).

    Media paths inside it are valid only within the ``with`` block (a repo's media are written
    to temporary files).
    """
    from ..readers.media import video_info
    from ..references import read_reference_audio, reference_file

    modalities = setting_modalities(setting)
    transcript = clip.text.get(text_column)
    if "Text" in modalities and not transcript:
        raise PredictionError(f"the dataset has no {text_column} for this clip")
    lang = clip_language(clip, language, text_column)
    options = rotated_options(order)
    inputs: dict[str, Any] = {"clip_id": clip.clip_id, "input_setting": normalize_input_setting(setting),
                              "language": lang, "prompt": build_prompt(setting, lang, transcript or "", options),
                              "options": options, "order": order}
    with contextlib.ExitStack() as stack:
        visual = [m for m in modalities if m in ("Image frame", "Video")]
        if visual:
            video = stack.enter_context(reference_file(clip.media["video"], ".mp4"))
            info = video_info(video)
            indices = sample_frame_indices(info.frames, 1 if visual == ["Image frame"] else video_frames)
            inputs.update(frames=read_frames(video, indices), frame_indices=indices, video_frames=info.frames,
                          fps=info.fps)
            if "Video" in visual:
                inputs["video_path"] = video
        if "Audio" in modalities:
            audio_path = stack.enter_context(reference_file(clip.media["audio"], ".wav"))
            audio, rate = read_reference_audio(audio_path)
            inputs.update(audio=audio, sample_rate=rate, audio_path=audio_path)
        if "Text" in modalities:
            inputs["text"] = transcript
        yield inputs


def keyword_baseline(inputs: Mapping[str, Any]) -> str:
    """Text-keyword baseline: the first non-negated emotion word of the transcript, else Neutral.

    The vocabulary and negation rules are those :func:`parse_answer` applies to model answers
    (English and Chinese emotion words, e.g. 开心, 害怕, 恶心), read here from the transcript.
    """
    found = parse_answer(inputs.get("text") or "")
    return (found.value if found is not None else "Neutral")


def check_answer(answer: Any) -> str:
    """A model's answer as a non-empty string; :class:`PredictionError` otherwise."""
    if not isinstance(answer, str):
        raise PredictionError(f"the model returned {type(answer).__name__}, expected a string")
    if not answer.strip():
        raise PredictionError("empty answer")
    return answer


def _unit_key(clip_id: str, setting: str, variant: "tuple[int, str] | None" = None) -> str:
    if variant is None:
        return f"{clip_id} | {setting}"
    return f"{clip_id} | {setting} | order {variant[0]} | {variant[1]}"


def _answer_key(record: Mapping[str, Any]) -> tuple:
    """``(clip id, setting, order, language)`` of a line (order and language None on a plain line)."""
    order = record.get("order")
    return (record["clip_id"], normalize_input_setting(record["input_setting"]), order,
            record.get("language") if order is not None else None)


def read_answers(path: Path) -> dict[tuple, dict]:
    """Valid lines of an existing predictions.jsonl by :func:`_answer_key`; malformed lines dropped."""
    from ..metrics.emotion import variant_problem

    answers: dict[tuple, dict] = {}
    if not path.is_file():
        return answers
    from ..readers.json_files import loads_strict
    from ..readers.textio import read_text_lines

    for lineno, line in read_text_lines(path):  # strict UTF-8: a GBK file is one line naming it
        if not line.strip():
            continue
        try:  # an InputFileError (a duplicated key...) is a ValueError: that line is redone
            record = loads_strict(line, path, first_line=lineno)
            ClipId.parse(record["clip_id"])
            key = _answer_key(record)
            check_answer(record["answer"])
            if variant_problem(record):
                continue
        except (ValueError, KeyError, TypeError, PredictionError):
            continue
        answers[key] = record
    return answers


def write_answers(output: "Output", answers: Mapping[Any, dict]) -> None:
    """Rewrite predictions.jsonl whole (through the submission's guard), in grid order, then Table 4's setting
    order, then option order and language."""
    from ..metrics.emotion import input_setting_sort_key

    def order(record: Mapping[str, Any]) -> tuple:
        shift = record.get("order")
        return (ClipId.parse(record["clip_id"]).sort_key(), input_setting_sort_key(record["input_setting"]),
                -1 if shift is None else int(shift), str(record.get("language") or ""))

    records = sorted(answers.values(), key=order)
    output.write_text(PREDICTIONS_FILE, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def predict_emotion(clips: Sequence, model: Callable[[dict], str], output: "Output", settings: Sequence[str],
                    model_name: str = "", language: str = "auto", video_frames: int = DEFAULT_VIDEO_FRAMES,
                    text_column: str = "transcript", resume: bool = False, progress: bool = True,
                    run: str = "", circular: int = 1) -> PredictSummary:
    """Ask ``model`` every (clip, setting) and write ``out/predictions.jsonl``.

    ``circular`` > 1 or ``language="both"`` asks each clip and setting under every option order
    (:func:`~hug_vis_dataset.metrics.emotion.option_shifts`) and language: one unit and one line each, with
    ``order`` and ``options``. Lines of other clips or settings already in the file are kept. A unit of this run is
    redone unless ``resume`` and its line is already there; a unit that fails loses any old line.
    """
    if language not in LANGUAGES + ("auto", BOTH):
        raise PredictSetupError(f"language {language!r}: choose auto, en, zh or both")
    if text_column not in TEXT_COLUMNS:
        raise PredictSetupError(f"text column {text_column!r}: choose one of {', '.join(TEXT_COLUMNS)}")
    try:
        shifts = option_shifts(circular)
    except ValueError as err:
        raise PredictSetupError(f"--circular: {err}") from None
    names = [normalize_input_setting(s) for s in settings]
    for name in names:
        setting_modalities(name)
    out = Path(output.named)
    path = out / PREDICTIONS_FILE
    # Lines of other clips are kept, so the file is rewritten: it must be one the toolkit wrote (checked
    # before a clip is asked).
    output.check_replaceable([PREDICTIONS_FILE])
    output.ensure()
    answers = read_answers(path)
    languages = LANGUAGES if language == BOTH else (language,)
    plain = len(shifts) == 1 and len(languages) == 1  # the lines as the protocol always wrote them
    variants = [None] if plain else [(shift, lang) for shift in shifts for lang in languages]
    units = [(clip, name, variant) for clip in clips for name in names for variant in variants]
    pending = {"count": 0}

    def key_of(unit) -> tuple:
        clip, setting, variant = unit
        if variant is None:
            return (clip.clip_id, setting, None, None)
        return (clip.clip_id, setting, variant[0], clip_language(clip, variant[1], text_column))

    def is_done(unit) -> bool:
        return resume and key_of(unit) in answers

    def attempt(unit) -> dict:
        clip, setting, variant = unit
        answers.pop(key_of(unit), None)  # a failed redo must not leave the old answer
        shift, lang = variant if variant is not None else (0, language)
        with emotion_inputs(clip, setting, lang, video_frames, text_column, order=shift) as inputs:
            answer = check_answer(model(inputs))
            parsed = parse_answer(answer)
            record = {"clip_id": clip.clip_id, "input_setting": setting, "answer": answer,
                      "parsed": parsed.value if parsed is not None else None, "language": inputs["language"],
                      "prompt": inputs["prompt"], "frame_indices": inputs.get("frame_indices"),
                      "video_frames": inputs.get("video_frames"), "text_column": text_column, "model": model_name}
            if variant is not None:  # which order (and language) produced this answer
                record.update(order=shift, options=list(inputs["options"]))
        answers[key_of(unit)] = record
        pending["count"] += 1
        if pending["count"] % FLUSH_EVERY == 0:
            write_answers(output, answers)
        details = {k: record[k] for k in ("answer", "parsed", "language", "prompt", "frame_indices")}
        return details if variant is None else {**details, "order": shift}

    try:
        return run_units(units, lambda u: _unit_key(u[0].clip_id, u[1], None if u[2] is None else
                                                    (u[2][0], key_of(u)[3])), attempt, is_done,
                         PredictLog(output, run or model_name), progress=progress, total=len(units), task="emotion",
                         out=out)
    finally:
        write_answers(output, answers)

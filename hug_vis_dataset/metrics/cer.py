"""Character error rate (CER) of an ASR transcript against the clip's target text (beyond the paper).

What current Mandarin voice-cloning papers report beside speaker similarity and a MOS predictor
(the Seed-TTS-eval protocol): did the clone *say* the prompt? The transcript of the generated audio
(:mod:`hug_vis_dataset.models.whisper`) and the clip's verified prompt (``target_text`` of the
``voice_cloning`` config) are normalised by the same rules (:func:`normalize_text`), in this order:

1. **full-width to half-width**: U+FF01-U+FF5E become U+0021-U+007E (``ＡＢ１２！`` -> ``AB12!``) and
   the ideographic space U+3000 a space;
2. **traditional to simplified Chinese**: ``zhconv.convert(text, "zh-cn")``, what Seed-TTS-eval
   applies to its Paraformer transcripts (mainland simplified script and wording: ``語音`` -> ``语音``,
   ``軟體`` -> ``软件``); works offline from the dictionary inside the ``zhconv`` wheel;
3. **punctuation removed**: every character of Unicode general category P* (``，。！？、“”《》…—``
   and ASCII ``!,.?``) and the ASCII symbols of Python's ``string.punctuation`` (``$+<=>^`|~``);
4. **spaces removed**: every whitespace character (``str.isspace``), as Seed-TTS-eval's Mandarin
   scoring does (it splits the text into single characters, so spaces never count).

Letter case is kept (Seed-TTS-eval's Mandarin path does not fold it). The per-clip CER is the
Levenshtein distance between the two normalised strings, over Unicode code points (substitutions,
deletions, insertions, each 1), divided by the normalised target's length; it is 0 for a perfect
transcript and can exceed 1 (insertions). The table value is the **corpus-level** CER, total edits
over total target characters (:data:`hug_vis_dataset.catalog.RATIO`), which is why every clip also
stores its two integers (``cer_edits``, ``cer_ref_chars``).

Example:
    >>> normalize_text("語音合成， 測試ＡＢ！")
    '语音合成测试AB'
    >>> cer_parts("今天天气很好。", "今天天汽很好啊")  # one substitution, one insertion
    (2, 6)
"""

from __future__ import annotations

import string
import unicodedata
from typing import Any

import numpy as np

#: The ASCII symbols removed besides Unicode punctuation (``$+<=>^`|~``: categories S*, which
#: Seed-TTS-eval removes through ``string.punctuation``).
ASCII_PUNCTUATION = frozenset(string.punctuation)
#: zhconv's target locale: Seed-TTS-eval's ``zhconv.convert(text, "zh-cn")``.
SIMPLIFIED_LOCALE = "zh-cn"
_FULLWIDTH = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
_FULLWIDTH[0x3000] = 0x20


class TargetTextError(ValueError):
    """A clip's target text has no character left after normalisation: its CER is undefined."""


def to_halfwidth(text: str) -> str:
    """Full-width ASCII variants (U+FF01-U+FF5E) and the ideographic space to their ASCII forms.

    Example:
        >>> to_halfwidth("ＡＩ，１２３　ｘ")
        'AI,123 x'
    """
    return text.translate(_FULLWIDTH)


def to_simplified(text: str) -> str:
    """Traditional to simplified Chinese with ``zhconv`` (locale :data:`SIMPLIFIED_LOCALE`).

    Example:
        >>> to_simplified("語音識別")
        '语音识别'
    """
    import zhconv

    return zhconv.convert(text, SIMPLIFIED_LOCALE)


def is_removed(char: str) -> bool:
    """Punctuation (Unicode P*), an ASCII symbol of ``string.punctuation`` or whitespace.

    Example:
        >>> [c for c in "a，b。c d~e《f》" if not is_removed(c)]
        ['a', 'b', 'c', 'd', 'e', 'f']
    """
    return char.isspace() or char in ASCII_PUNCTUATION or unicodedata.category(char).startswith("P")


def normalize_text(text: str) -> str:
    """The text CER compares: half-width, simplified, without punctuation and spaces (module docstring).

    Example:
        >>> normalize_text("“你好，世界！” 她說。")
        '你好世界她说'
    """
    simplified = to_simplified(to_halfwidth(str(text)))
    return "".join(c for c in simplified if not is_removed(c))


def edit_distance(reference: str, hypothesis: str) -> int:
    """Levenshtein distance over code points (substitution, deletion, insertion: 1 each).

    Two rows of the dynamic programme (memory linear in the hypothesis length); prompts are a sentence.

    Example:
        >>> edit_distance("kitten", "sitting"), edit_distance("", "ab"), edit_distance("语音", "")
        (3, 2, 2)
    """
    previous = list(range(len(hypothesis) + 1))
    for i, char in enumerate(reference, start=1):
        current = [i]
        for j, other in enumerate(hypothesis, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other)))
        previous = current
    return previous[-1]


def cer_parts(target_text: str, transcript: str) -> tuple[int, int]:
    """``(edits, target characters)`` of one clip, both texts normalised by :func:`normalize_text`.

    Raises:
        TargetTextError: the target has no character left after normalisation (CER undefined).

    Example:
        >>> cer_parts("語音，合成", "语音合成")  # equal once normalised
        (0, 4)
    """
    reference = normalize_text(target_text)
    if not reference:
        raise TargetTextError(f"the target text {target_text!r} has no character left after normalisation "
                              "(punctuation and spaces removed): its CER is undefined")
    return edit_distance(reference, normalize_text(transcript)), len(reference)


def cer_values(target_text: str, transcript: str) -> dict[str, float]:
    """The three stored rows of one clip: ``cer`` (edits / characters), ``cer_edits``, ``cer_ref_chars``.

    Example:
        >>> cer_values("你好世界", "你好")
        {'cer': 0.5, 'cer_edits': 2.0, 'cer_ref_chars': 4.0}
    """
    edits, chars = cer_parts(target_text, transcript)
    return {"cer": edits / chars, "cer_edits": float(edits), "cer_ref_chars": float(chars)}


def cer_clip(asr: Any, audio: np.ndarray, target_text: str, batch: int = 1) -> dict[str, float]:
    """CER rows of one clip: the catalog's kernel for ``cer``, ``cer_edits`` and ``cer_ref_chars``.

    Args:
        asr: a loaded recogniser with ``transcribe(audio, batch) -> str``
            (:class:`hug_vis_dataset.models.whisper.WhisperASR`).
        audio: the clip's 16 kHz mono float32 samples (the voice scorer's one decode).
        target_text: what the clip should say (the ``voice_cloning`` config's ``target_text``).
        batch: 30 s windows per forward pass (long clips; the transcript does not depend on it).
    """
    return cer_values(target_text, asr.transcribe(audio, batch=batch))

"""Text a parser reads (issue 52): one form of free text before any parsing (``textio.parse_form``).

"She isn’t happy" (a typographic apostrophe) was parsed as Happy: the negation cue ``isn't`` was split at
the U+2019 into ``isn`` and ``t``. The class generated here is every way a keyboard, a typesetter or a
language model writes the same words -- apostrophe-like characters (’ ‘ ʼ ′ ` ´ ＇), full-width letters,
dashes, zero-width spaces and joiners, soft hyphens, bidi marks -- and the property is that the emotion
answer parser reads each variant as it reads the plain ASCII answer, which is in turn the emotion the
sentence's grammar says (an independent reference: negated mentions never count).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from hug_vis_dataset.datamodel.grid import Emotion

FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None)
WORDS = {Emotion.HAPPY: "happy", Emotion.SAD: "sad", Emotion.ANGRY: "angry", Emotion.AFRAID: "scared",
         Emotion.DISGUSTED: "disgusted", Emotion.SURPRISED: "surprised"}
NEGATORS = ["isn't", "wasn't", "doesn't look", "doesn't seem", "can't be", "won't be", "aren't", "didn't seem",
            "is not", "is never"]
APOSTROPHES = ["'", "\u2019", "\u2018", "\u02bc", "\u2032", "`", "\u00b4", "\uff07", "\u201b"]
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff", "\u200e"]


@st.composite
def answers(draw):
    """(plain ASCII answer, the emotion its grammar names or None)."""
    first = draw(st.sampled_from(sorted(WORDS, key=str)))
    negated = draw(st.booleans())
    subject = draw(st.sampled_from(["She", "The speaker", "He", "They"]))
    cue = draw(st.sampled_from(NEGATORS)) if negated else draw(st.sampled_from(["is", "looks", "seems", "is very"]))
    text = f"{subject} {cue} {WORDS[first]}"
    expected = None if negated else first
    if draw(st.booleans()):
        second = draw(st.sampled_from(sorted(set(WORDS) - {first}, key=str)))
        text += f", but {draw(st.sampled_from(['she is', 'rather', 'clearly']))} {WORDS[second]}"
        expected = expected or second
    return text + draw(st.sampled_from(["", ".", "!"])), expected


@st.composite
def typeset(draw, text: str) -> str:
    """``text`` as another writer types it: apostrophes, full-width letters, dashes, invisible characters."""
    out = []
    for char in text:
        if char == "'":
            char = draw(st.sampled_from(APOSTROPHES))
        elif char.isascii() and char.isalpha() and draw(st.integers(0, 9)) == 0:
            char = chr(ord(char) - 0x21 + 0xFF01)  # its full-width form
        elif char == "," and draw(st.booleans()):
            char = draw(st.sampled_from([",", "\uff0c", " \u2014"]))
        out.append(char)
        if draw(st.integers(0, 7)) == 0:
            out.append(draw(st.sampled_from(INVISIBLE)))
    return "".join(out)


@FUZZ
@given(data=st.data(), answer=answers())
def test_every_typed_form_of_an_answer_parses_as_its_words_say(data, answer):
    from hug_vis_dataset.metrics.emotion import parse_answer

    text, expected = answer
    assert parse_answer(text) == expected, text  # the ASCII answer: the grammar's emotion
    variant = data.draw(typeset(text))
    assert parse_answer(variant) == expected, ascii(variant)


def test_the_listed_case():
    from hug_vis_dataset.metrics.emotion import parse_answer

    assert parse_answer("She isn\u2019t happy") is None
    assert parse_answer("She isn\u2019t happy, she is sad") is Emotion.SAD


@FUZZ
@given(text=st.text(max_size=40))
def test_the_parse_form_is_a_fixed_point_and_never_grows_the_text_unboundedly(text):
    from hug_vis_dataset.readers.textio import parse_form

    once = parse_form(text)
    assert parse_form(once) == once
    assert len(once) <= 18 * max(1, len(text))  # NFKC's longest expansion is 18 characters

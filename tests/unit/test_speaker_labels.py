"""Which words of a sentence are its speaker label ("Jon: ..."): who speaks, in every line, so no topic."""
from __future__ import annotations

import pytest

from athena_core.providers.offline.speaker_labels import label_offsets
from athena_core.text.tokens import tokens


def label(sentence: str) -> list[str]:
    sentence_tokens = tokens(sentence)
    offsets = label_offsets(sentence, sentence_tokens)
    return [tok.text for tok in sentence_tokens if tok.start in offsets]


@pytest.mark.parametrize(("sentence", "words"), [
    ("Jon: Lost my job as a banker yesterday.", ["Jon"]),
    ("Caroline: Hey Mel!", ["Caroline"]),
    ("Dr Smith: Take two a day.", ["Dr", "Smith"]),
    ("  Gina: Wow Jon, same here!", ["Gina"]),
])
def test_a_leading_speaker_label_is_found(sentence: str, words: list[str]) -> None:
    assert label(sentence) == words


@pytest.mark.parametrize("sentence", [
    "We meet at 10:30 tomorrow.",  # a clock time
    "The plan: ship it on Friday.",  # a colon later in the sentence, after a lowercase word
    "jon: lowercase is no label",
    "Jon Smith Baker Adams: four words are a sentence, not a name",
    "Jon:no space after the colon",
])
def test_no_label_where_none_leads(sentence: str) -> None:
    assert label(sentence) == []

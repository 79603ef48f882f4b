"""Which words of a sentence address someone (no topic) and which name someone or something (may be one)."""
from __future__ import annotations

import pytest

from athena_core.providers.offline.addressees import addressee_offsets
from athena_core.text.tokens import tokens


def addressed(sentence: str) -> list[str]:
    sentence_tokens = tokens(sentence)
    offsets = addressee_offsets(sentence, sentence_tokens)
    return [tok.text for tok in sentence_tokens if tok.start in offsets]


@pytest.mark.parametrize(("sentence", "names"), [
    ("Hey Mel!", ["Mel"]),
    ("Thanks, Melanie!", ["Melanie"]),
    ("Thank you, Mel.", ["Mel"]),
    ("That's great, Mel!", ["Mel"]),
    ("Who supports you, Mel?", ["Mel"]),
    ("Wow, Caroline, you're doing an awesome job.", ["Caroline"]),
    ("Hi Caroline, hi Mel!", ["Caroline", "Mel"]),
])
def test_a_name_that_addresses_someone_is_found(sentence: str, names: list[str]) -> None:
    assert addressed(sentence) == names


@pytest.mark.parametrize("sentence", [
    "I met Mel at the lake.",
    "Mel's paintings are at the fair.",
    "I visited Rome, Italy.",
    "Have you been to Paris, France?",
    "We use AWS, GCP, and Azure!",
    "Hey AWS!",
    "Caroline went to the support group.",
])
def test_a_name_that_is_talked_about_is_not(sentence: str) -> None:
    assert addressed(sentence) == []


def test_a_name_after_a_reply_word_behind_a_speaker_label_is_addressed() -> None:
    """"Gina: Great, Jon!" read "Great" as a place before "Jon" ("Paris, France?"), so "jon" was a subtopic."""
    assert addressed("Gina: Great, Jon! Is the dance studio downtown?") == ["Jon"]

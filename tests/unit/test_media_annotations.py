"""Which words of a sentence only frame a shared picture ("[shares a photo: a photo of ...]"): no topic."""
from __future__ import annotations

import pytest

from athena_core.providers.offline.media_annotations import annotation_offsets, is_caption
from athena_core.text.tokens import tokens


def framing(sentence: str) -> list[str]:
    sentence_tokens = tokens(sentence)
    offsets = annotation_offsets(sentence, sentence_tokens)
    return [tok.text for tok in sentence_tokens if tok.start in offsets]


@pytest.mark.parametrize(("sentence", "words"), [
    ("[shares a photo: a photo of a dog walking past a wall]", ["shares", "a", "photo", "a", "photo", "of"]),
    ("Look at this! [shares a photo: a photography of a cake]", ["shares", "a", "photo", "a", "photography", "of"]),
    ("[image: a chart of this year's sales]", ["image"]),  # no captioner's opening: the caption is all content
    ("Here: [sent a picture: An image of the Alps] and [file: notes]",
     ["sent", "a", "picture", "An", "image", "of", "file"]),
])
def test_the_label_and_the_captioners_opening_frame_the_caption(sentence: str, words: list[str]) -> None:
    assert framing(sentence) == words


@pytest.mark.parametrize("sentence", [
    "I took a photo of the lake at sunset.",  # a photo spoken of is content
    "[laughs] a photo of me at the lake",  # brackets without a label
    "Plan: a photo of the team on Friday.",  # a colon outside brackets
])
def test_no_frame_outside_a_labelled_annotation(sentence: str) -> None:
    assert framing(sentence) == []


@pytest.mark.parametrize(("sentence", "caption"), [
    ("[shares a photo: a photo of a dog on a beach]", True),
    (" [image: a chart of this year's sales]. ", True),
    ("Look at this! [shares a photo: a photo of a cake]", False),  # said, then shown: the summary may take it
    ("[laughs]", False),  # brackets without a label
    ("[shares a photo: a dog] and [shares a photo: a cat]", False),
])
def test_a_caption_is_a_sentence_that_is_one_annotation(sentence: str, caption: bool) -> None:
    assert is_caption(sentence) is caption

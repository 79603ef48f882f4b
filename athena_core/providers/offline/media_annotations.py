"""Media annotations ("[shares a photo: a photo of a dog on a beach]", "[image: a chart of sales]"): chat
exports and imports (LoCoMo's among them, and `athena import`) write a shared picture as its caption in
brackets. The label before the colon says that something was shared, and a captioner's opening ("a photo
of", "a photography of") what kind of thing it is; neither says what the chat is about. Left as words, they
made "photo" the topic of 23 % of LoCoMo's segments (364 of 1,602), whatever the pictures showed.
"""
from __future__ import annotations

import re

from athena_core.text.tokens import Token

# "[" + a short label + ":" (the label's end), then optionally a captioner's opening of the caption.
ANNOTATION = re.compile(
    r"\[[^\[\]:]{1,40}:\s*"
    r"((?:a|an)\s+(?:close[- ]up\s+)?(?:photo|photograph|photography|picture|pic|image|screenshot|snapshot)\s+of\b)?",
    re.IGNORECASE,
)
CAPTION = re.compile(r"\[[^\[\]:]{1,40}:[^\[\]]*\][.!?]?")  # a sentence that is one annotation, nothing else


def annotation_offsets(text: str, sentence_tokens: list[Token]) -> set[int]:
    """Start offsets of the tokens of a sentence's media annotations that only frame the caption: the
    label ("shares a photo") and a captioner's opening ("a photo of"). The caption's own words stay, as do
    brackets without a label ("[laughs]") and a photo spoken of outside brackets."""
    spans = [match.span() for match in ANNOTATION.finditer(text)]
    return {tok.start for tok in sentence_tokens for start, end in spans if start <= tok.start and tok.end <= end}


def is_caption(sentence: str) -> bool:
    """Whether a sentence is a shared picture's annotation and nothing else ("[shares a photo: a photo of a
    dog on a beach]"): what was shown, not what was said."""
    return CAPTION.fullmatch(sentence.strip()) is not None

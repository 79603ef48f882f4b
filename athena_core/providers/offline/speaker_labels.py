"""Speaker labels ("Jon: Lost my job as a banker.", "Caroline: Hey Mel!"): transcripts, chat exports and
imports (LoCoMo's among them) put the speaker's name before every line. The label says who speaks, in
every line, whatever is spoken about, so it is neither a topic word nor an entity two messages share.
"""
from __future__ import annotations

import re

from athena_core.text.tokens import Token

# One to three capitalised words and a colon at the very start of a sentence: "Jon: ", "Dr Smith: ".
LABEL = re.compile(r"\s*([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,2}):\s")


def label_offsets(text: str, sentence_tokens: list[Token]) -> set[int]:
    """Start offsets of the tokens of the sentence's leading speaker label; empty when it has none.
    A clock time ("10:30") or a colon later in the sentence is no label."""
    match = LABEL.match(text)
    if match is None:
        return set()
    return {tok.start for tok in sentence_tokens if tok.end <= match.end(1)}

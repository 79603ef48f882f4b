"""Sentences of a text: one splitter with two modes.

- analysis (default): typographic quotes and dashes folded, a break after terminal punctuation (and any
  closing quote or bracket) followed by space, and at every line break; parts without a Latin letter or
  digit dropped. What the offline provider and the extractor read.
- `verbatim=True`: a break only where whitespace directly follows terminal punctuation (a closing quote
  after the dot does not end the sentence), the text otherwise as written (no folding, line breaks kept
  inside a sentence, every non-blank part kept, any script). What excerpts and sentence vectors use:
  they show and embed the user's own words.

Decimals ("3.5") and versions ("1.22") survive both because no whitespace follows their dot.
"""
from __future__ import annotations

import re

_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\s*\n+\s*")
_VERBATIM_BREAK = re.compile(r"(?<=[.!?])\s+")
_HAS_WORD = re.compile(r"[A-Za-z0-9]")


def normalise(text: str) -> str:
    """Fold typographic quotes and dashes so one regex set handles chat text from any keyboard."""
    return (
        text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
        .replace("\u2014", " - ").replace("\u2013", " - ").replace("\u2026", "...")
    )


def split_sentences(text: str, *, verbatim: bool = False) -> list[str]:
    """The sentences of `text` (see the module docstring for the two modes)."""
    if verbatim:
        return [s for s in _VERBATIM_BREAK.split(text.strip()) if s.strip()]
    parts = _SENTENCE_BREAK.split(normalise(text).strip())
    return [p.strip() for p in parts if p and p.strip() and _HAS_WORD.search(p)]

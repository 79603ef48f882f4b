"""Content words: the words of a text that can carry a topic."""
from __future__ import annotations

from athena_core.text.stemming import stem
from athena_core.text.stopwords import STOPWORDS
from athena_core.text.tokens import words


def is_content_word(word: str) -> bool:
    """A word that can carry a topic: not a stopword, has a letter, and is not a lone character."""
    return word not in STOPWORDS and len(word) > 1 and any(c.isalpha() for c in word)


def content_stems(text: str) -> set[str]:
    """The set of stemmed content words of a text: the unit of lexical topic overlap."""
    return {stem(w) for w in words(text) if is_content_word(w)}

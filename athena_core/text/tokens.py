"""Words of a text: lowercase `[a-z0-9]+` words, and word tokens with their offsets as written."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from athena_core.text.sentences import split_sentences

_WORD = re.compile(r"[a-z0-9]+")
_TOKEN = re.compile(r"[A-Za-z0-9@][A-Za-z0-9_'+#.@-]*")
_TRAILING = ".-'"


def word_tokens(text: str) -> list[str]:
    """Lowercase runs of ASCII letters and digits, in order ("Don't stop at 3.5" → don, t, stop, at, 3, 5).

    The unit of lexical matching: query terms, excerpt overlap, the quality gate, graph name search and
    evaluation all count these."""
    return _WORD.findall(text.lower())


@dataclass(frozen=True)
class Token:
    """A word as written (`text`), lowercased (`lower`), and whether it opens its sentence."""

    text: str
    lower: str
    start: int
    end: int
    sentence_initial: bool


def tokens(sentence: str) -> list[Token]:
    """Word tokens of one sentence with offsets; trailing dots/dashes/quotes are not part of a word.

    Words keep inner punctuation ("node.js", "c++", "pgx_pool", "@maria", "don't"); a possessive "'s"
    is dropped ("Maria's" → "Maria")."""
    return list(_tokens(sentence))


# One chain formation reads each sentence five times (summary, keyphrases, entities, importance twice)
# and a merge forms its segments' sentences again: they are tokenized once (tokens are immutable).
@lru_cache(maxsize=2048)
def _tokens(sentence: str) -> tuple[Token, ...]:
    out: list[Token] = []
    for match in _TOKEN.finditer(sentence):
        raw = match.group(0)
        word = raw.rstrip(_TRAILING)
        if not word:
            continue
        if word.lower().endswith("'s") and len(word) > 2:  # possessive: "Maria's" -> "Maria"
            word = word[:-2]
        out.append(Token(word, word.lower(), match.start(), match.start() + len(word), not out))
    return tuple(out)


def words(text: str) -> list[str]:
    """Lowercased word tokens of any text (sentence boundaries ignored)."""
    return [t.lower for s in split_sentences(text) for t in tokens(s)]

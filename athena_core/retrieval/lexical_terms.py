"""The words of a query worth matching lexically: content words and numbers, stop words dropped.

Query policy lives here, in retrieval: the lexical index (`stores/lexical/`) is given these terms and
matches them; it does not decide which words of a query count.
"""
from __future__ import annotations

from athena_core.text.stopwords import STOPWORDS
from athena_core.text.tokens import word_tokens

QUESTION_WORDS = frozenset("what when where which who whom whose why how did does do".split())


def search_terms(query: str, max_terms: int = 32) -> list[str]:
    """Distinct lowercase terms in query order: numbers always, words unless stop words or 1 letter."""
    out: list[str] = []
    for token in word_tokens(query):
        keep = token.isdigit() or (len(token) > 1 and token not in STOPWORDS and token not in QUESTION_WORDS)
        if keep and token not in out:
            out.append(token)
    return out[:max_terms]

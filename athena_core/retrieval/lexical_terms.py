"""The words of a query worth matching lexically: content words and numbers, stop words dropped."""
from __future__ import annotations

import re

from athena_core.providers.offline_text import STOPWORDS

_TOKEN = re.compile(r"[a-z0-9]+")
QUESTION_WORDS = frozenset("what when where which who whom whose why how did does do".split())


def search_terms(query: str, max_terms: int = 32) -> list[str]:
    """Distinct lowercase terms in query order: numbers always, words unless stop words or 1 letter."""
    out: list[str] = []
    for token in _TOKEN.findall(query.lower()):
        keep = token.isdigit() or (len(token) > 1 and token not in STOPWORDS and token not in QUESTION_WORDS)
        if keep and token not in out:
            out.append(token)
    return out[:max_terms]

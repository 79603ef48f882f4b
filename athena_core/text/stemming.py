"""The two stemmers, named for what they do: `stem` (a light Porter-like step, with gazetteer aliases)
for topic overlap, keyphrases and excerpts, and `strip_plural` (a plural "s" only) for the quality gate
and evaluation's answer words, whose scores are calibrated on it."""
from __future__ import annotations

import re
from functools import lru_cache

from athena_core.text.gazetteer import GAZETTEER

_VOWEL = re.compile(r"[aeiouy]")
# (suffix, replacement), longest first; one suffix is removed per word (a light, Porter-like step).
_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("ational", "ate"), ("ations", "ate"), ("ation", "ate"), ("ements", ""), ("ement", ""),
    ("ments", ""), ("ment", ""), ("ness", ""), ("ities", ""), ("ity", ""), ("ings", ""), ("ing", ""),
    ("sses", "ss"), ("ies", "y"), ("ied", "y"), ("ed", ""), ("ly", ""), ("s", ""),
)


@lru_cache(maxsize=1 << 16)  # pure, and called per word of every candidate a search excerpts
def stem(word: str) -> str:
    """Light suffix stripping so "migration", "migrate" and "migrating" meet on one key ("migrat").

    Gazetteer aliases map to their canonical name first, so "postgres" and "postgresql" also meet.
    Deliberately conservative (one suffix, stem keeps a vowel and ≥ 3 letters): a wrong merge costs
    more than a missed one in topic arbitration.
    """
    if word in GAZETTEER:
        return GAZETTEER[word].lower()
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in _SUFFIXES:
        if not word.endswith(suffix):
            continue
        if suffix == "s" and word.endswith(("ss", "us", "is")):
            break
        candidate = word[: len(word) - len(suffix)] + replacement
        if len(candidate) >= 3 and _VOWEL.search(candidate):
            word = candidate
            if suffix in {"ing", "ings", "ed"} and len(word) > 3 and word[-1] == word[-2] \
                    and word[-1] not in "lsz":
                word = word[:-1]  # running -> runn -> run
        break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def strip_plural(token: str) -> str:
    """Strip a plural "s" so "tasks" and "task" match; keeps "ss" endings and short words."""
    if len(token) > 3 and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token

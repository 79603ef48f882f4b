"""Proper names: is this word, as written, part of a name?

Two rules, named for their use, because their callers' behaviour is tuned on them:

- `ENTITY_NAMES` (the offline provider's entity list): plain capitalised words ("Maria", "O'Brien",
  "Jean-Luc") and acronyms of 2-5 capitals with an optional digit ("AWS", "GPT4"); chat abbreviations
  ("LOL", "FYI", "ASAP", "PM") and chat interjections ("Wow", "Congrats", "Haha") are not names.
- `SUBJECT_NAMES` (triple extraction's subjects, clients and tool-like objects): also words with digits
  or inner capitals ("Web3", "OpenShift", "iPhone"-style brands that start capitalised) and acronyms up
  to 6 letters; holidays ("Christmas", "Easter") are not names.

Both exclude weekdays, months, "ok"/"okay" and every `STOPWORDS` word ("The", "Thanks").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from athena_core.text.stopwords import STOPWORDS
from athena_core.text.tokens import Token

_CALENDAR = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april may june
    july august september october november december ok okay
    tue tues thu thur thurs fri sept""".split()  # abbreviations that are no other word ("Mon", "Sat", "Sun" are)
)


@dataclass(frozen=True)
class NameRule:
    """A name word: its shape matches `shape` and, lowercased, it is neither a stop word nor `not_names`."""

    shape: re.Pattern[str]
    not_names: frozenset[str]

    def is_name_word(self, tok: Token) -> bool:
        return bool(self.shape.match(tok.text)) and tok.lower not in STOPWORDS and tok.lower not in self.not_names


# Chat interjections that open turn after turn ("Wow, ...", "Congrats!", "Haha"): LoCoMo's ten conversations
# gave "Wow" 473 entity mentions, more than most of their speakers' names.
INTERJECTIONS = frozenset("wow haha hahaha congrats congratulations glad sorry appreciate omg aww ugh yay yup".split())
ENTITY_NAMES = NameRule(
    re.compile(r"^(?:[A-Z][a-z]+(?:['-][A-Za-z]+)*|[A-Z]{2,5}[0-9]?)$"),
    _CALENDAR | INTERJECTIONS | frozenset("lol fyi asap tbd todo btw imo pm am eta faq".split()),
)
SUBJECT_NAMES = NameRule(
    re.compile(r"^(?:[A-Z][a-z0-9]+(?:['-][A-Za-z]+)*|[A-Z][A-Za-z]*[a-z][A-Z][A-Za-z]*|[A-Z]{2,6}[0-9]?)$"),
    _CALENDAR | frozenset("christmas easter".split()),
)

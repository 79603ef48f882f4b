"""Lenient parsing of free-text model replies, shared by every LLM provider (SPEC S4 break gate).

Models asked for "true or false" answer "True.", "Yes, same topic", "**No** - different", or a one-key
JSON object; all of these mean something, and only a reply that means neither must fall back.
"""
from __future__ import annotations

import re

_TRUE_WORDS = frozenset({"true", "yes", "yeah", "yep"})
_FALSE_WORDS = frozenset({"false", "no", "nope"})
_LABEL = re.compile(r"^(?:answer|reply|result|same_topic|same topic)\s*[:=]\s*")
_JSON_BOOL = re.compile(r'^\{\s*"[^"]*"\s*:\s*(true|false)\s*\}$')
_FIRST_WORD = re.compile(r"^[^a-z0-9]*([a-z]+)\b")


def parse_boolean_reply(text: str) -> bool | None:
    """Read a yes/no reply: True for true/yes, False for false/no, None when it is neither.

    Only the first word decides ("No - different" is False), after dropping markdown/quote characters,
    an "Answer:" label, or a `{"key": true}` wrapper. Anything else is None so the caller can choose
    its own fallback instead of guessing.
    """
    if not isinstance(text, str):
        return None
    cleaned = text.strip().lower()
    json_match = _JSON_BOOL.match(cleaned)
    if json_match:
        return json_match.group(1) == "true"
    cleaned = _LABEL.sub("", cleaned.strip("*_`'\" \t\r\n"))
    match = _FIRST_WORD.match(cleaned)
    if match is None:
        return None
    word = match.group(1)
    if word in _TRUE_WORDS:
        return True
    if word in _FALSE_WORDS:
        return False
    return None

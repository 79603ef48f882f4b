"""Names used to address someone ("Hey Mel!", "Thanks, Melanie!", "Who supports you, Mel?"): in a chat they
recur in nearly every turn and name who is spoken to, not what is spoken about, so they are no topic.

Only the addressing use is recognised: "Mel's paintings" or "I met Mel at the lake" still count.
"""
from __future__ import annotations

from athena_core.text.tokens import Token

# Words after which a capitalised word is the person greeted or thanked: "Hey Mel", "Thanks, Melanie".
OPENERS = frozenset(
    "hey hi hello hiya yo morning evening night bye goodbye thanks thank thx ty congrats congratulations "
    "wow aww omg oh sorry cheers welcome dear".split()
)
CLOSING_MARKS = ("!", "?", ",")  # ", Mel!" / ", Mel?" / ", Caroline, you're ..."


def is_name_like(tok: Token) -> bool:
    """Capitalised and otherwise lowercase letters ("Mel", not "AWS", "iOS" or "3pm")."""
    word = tok.text
    return word.isalpha() and word[0].isupper() and (len(word) == 1 or word[1:].islower())


def addressee_offsets(text: str, sentence_tokens: list[Token]) -> set[int]:
    """Start offsets of the tokens of one sentence that address someone: a name-like word right after an
    opener ("Hey Mel", "Thanks, Melanie", "Thank you, Mel"), or set off by a comma and closed by "!", "?"
    or another comma ("That's great, Mel!"). A place after a comma and a full stop ("Rome, Italy.") is not,
    nor one after another name ("Paris, France?")."""
    found: set[int] = set()
    for i, tok in enumerate(sentence_tokens):
        if i == 0 or not is_name_like(tok):
            continue
        previous = sentence_tokens[i - 1]
        gap_before = text[previous.end: tok.start]
        opener = previous.lower in OPENERS or (
            previous.lower == "you" and i >= 2 and sentence_tokens[i - 2].lower == "thank")
        if opener and gap_before.strip() in ("", ","):
            found.add(tok.start)
            continue
        after_a_name = is_name_like(previous) and not (  # "Paris, France?", but not "Gina: Great, Jon!"
            previous.sentence_initial or text[:previous.start].rstrip().endswith(":"))
        if gap_before.strip() == "," and text[tok.end:].lstrip()[:1] in CLOSING_MARKS and not after_a_name:
            found.add(tok.start)
    return found

"""Entity spotting: gazetteer tools, @handles, code identifiers, dates, quantities and proper names."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from athena_core.providers.offline.speaker_labels import LABEL
from athena_core.providers.offline.transcript import PHRASE_BREAK
from athena_core.text import penn_tags
from athena_core.text.gazetteer import gazetteer_hits
from athena_core.text.names import ENTITY_NAMES
from athena_core.text.tokens import Token, tokens


@dataclass(frozen=True)
class Mention:
    """An entity occurrence; `rank` orders kinds by how much we trust them when the list is capped."""

    name: str
    sentence_index: int
    offset: int
    rank: int


RANK_GAZETTEER, RANK_NAME, RANK_HANDLE, RANK_IDENTIFIER, RANK_DATE, RANK_QUANTITY = range(6)

_HANDLE = re.compile(r"^@[A-Za-z0-9_]{2,}$")
_IDENTIFIER = re.compile(
    r"^(?:[a-z]+(?:[A-Z][a-z0-9]*)+"  # camelCase
    r"|(?:[A-Z][a-z0-9]+){2,}"  # PascalCase
    r"|[a-z][a-z0-9]*(?:_[a-z0-9]+)+"  # snake_case
    r"|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"  # UPPER_SNAKE (env vars)
    r"|[\w-]+\.(?:py|go|rs|js|ts|java|yaml|yml|json|toml|sql|md|sh|tf))$"  # file names
)
MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
          r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_DATE = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b"
    rf"|\b{MONTH}\.? \d{{1,2}}(?:st|nd|rd|th)?(?:,? \d{{4}})?\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)? {MONTH}(?: \d{{4}})?\b"
)
_QUANTITY = re.compile(
    r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|secs?|seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?"
    r"|years?|[kmgt]b|[kmgt]i|gib|mib|%|k|x|cores?|cpus?|replicas?|pods?|nodes?|users?|rps|qps|usd|eur"
    r"|dollars?|euros?)(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_NAME_CONNECTORS = frozenset({"of", "de", "van", "von", "da", "del", "la", "le"})
_CLAUSE_BREAK = re.compile(r"[:\"(\[]|\s-\s")  # after these a capital may be mere style


def _rule_mentions(sentence_tokens: list[Token], index: int, claimed: set[int]) -> list[Mention]:
    """Gazetteer terms, @handles and code identifiers: token-level rules, trusted most."""
    found: list[Mention] = []
    for tok, canonical in gazetteer_hits(sentence_tokens):
        found.append(Mention(canonical, index, tok.start, RANK_GAZETTEER))
        claimed.add(tok.start)
    for tok in sentence_tokens:
        if tok.start in claimed:
            continue
        if _HANDLE.match(tok.text):
            found.append(Mention(tok.text, index, tok.start, RANK_HANDLE))
            claimed.add(tok.start)
        elif _IDENTIFIER.match(tok.text):
            found.append(Mention(tok.text, index, tok.start, RANK_IDENTIFIER))
            claimed.add(tok.start)
    return found


def _pattern_mentions(text: str, sentence_tokens: list[Token], index: int, claimed: set[int]) -> list[Mention]:
    """Dates and numbers with units: regexes over the sentence text; they claim the tokens they cover."""
    found: list[Mention] = []
    for pattern, rank in ((_DATE, RANK_DATE), (_QUANTITY, RANK_QUANTITY)):
        for match in pattern.finditer(text):
            covered = [t.start for t in sentence_tokens if match.start() <= t.start < match.end()]
            if any(start in claimed for start in covered):
                continue
            found.append(Mention(match.group(0), index, match.start(), rank))
            claimed.update(covered)
    return found


def _capitalised_runs(
    text: str, sentence_tokens: list[Token], claimed: set[int],
) -> list[tuple[str, int, bool]]:
    """Runs of capitalised words as (name, offset, opens_clause); punctuation and claimed tokens break."""
    runs: list[list[tuple[Token, bool]]] = []
    run: list[tuple[Token, bool]] = []
    previous: Token | None = None
    for tok in sentence_tokens:
        gap = text[previous.end: tok.start] if previous else ""
        opens_clause = tok.sentence_initial or bool(_CLAUSE_BREAK.search(gap))
        is_name_word = tok.start not in claimed and ENTITY_NAMES.is_name_word(tok)
        connector = bool(run) and tok.lower in _NAME_CONNECTORS and not PHRASE_BREAK.search(gap)
        if run and (not (is_name_word or connector) or PHRASE_BREAK.search(gap)):
            runs.append(run)
            run = []
        if is_name_word or (run and connector):
            run.append((tok, opens_clause))
        previous = tok
    if run:
        runs.append(run)
    out = []
    for run in runs:
        while run and run[-1][0].lower in _NAME_CONNECTORS:
            run = run[:-1]
        if run:
            first, opens_clause = run[0]
            name = text[first.start: run[-1][0].end]
            out.append((name, first.start, opens_clause))
    return out


def entity_mentions(sentences: list[str], *, read_openings: bool = False) -> list[Mention]:
    """All entity mentions in text order.

    A capitalised name that opens a sentence or clause may just be a capitalised ordinary word, so it
    counts only if the same name recurs somewhere in the given sentences and is never written in
    lowercase there ("Wow, ..." and "Sounds great" open many chat turns; "wow" and "sounds" give them away).
    With `read_openings`, a name that only ever opens a clause must also be a proper noun to the tagger
    where it first does (`_proper_at_opening`).
    """
    mentions: list[Mention] = []
    names: list[tuple[str, int, int, bool]] = []
    lowercase: set[str] = set()
    for index, text in enumerate(sentences):
        sentence_tokens = tokens(text)
        lowercase.update(tok.text for tok in sentence_tokens if tok.text.islower())
        claimed: set[int] = set()
        mentions += _rule_mentions(sentence_tokens, index, claimed)
        mentions += _pattern_mentions(text, sentence_tokens, index, claimed)
        names += [(name, index, offset, initial) for name, offset, initial in
                  _capitalised_runs(text, sentence_tokens, claimed)]
    name_count = Counter(name.lower() for name, _, _, _ in names)
    recurring = [
        (name, index, offset, initial) for name, index, offset, initial in names
        if not initial or (name_count[name.lower()] >= 2 and name.lower() not in lowercase)
    ]
    if read_openings:
        recurring = _proper_at_opening(sentences, recurring)
    mentions += [Mention(name, index, offset, RANK_NAME) for name, index, offset, _ in recurring]
    return sorted(mentions, key=lambda m: (m.sentence_index, m.offset, m.rank))


def _proper_at_opening(
    sentences: list[str], names: list[tuple[str, int, int, bool]],
) -> list[tuple[str, int, int, bool]]:
    """`names` without those that only ever open a clause and that the tagger reads, where the first one
    does, as no proper noun: a chat of twenty turns opens two with "Thankfully", "Absolutely" or "Sounds"
    and never writes them in lowercase, so recurrence alone made them entities. A name also said inside a
    clause or as a speaker's label ("Audrey: ...", which the tagger reads as a common noun) stays untagged;
    so does one whose sentence has no token at its offset, or everything without the tagger."""
    inside = {name.lower() for name, index, offset, initial in names
              if not initial or _is_speaker_label(sentences[index], offset)}
    first: dict[str, tuple[int, int]] = {}
    for name, index, offset, _ in names:
        if name.lower() not in inside:
            first.setdefault(name.lower(), (index, offset))
    if not first or not penn_tags.available():
        return names
    keys = list(first)
    tagged = penn_tags.sentence_tags([sentences[first[key][0]] for key in keys])
    not_names = {
        key for key, tags in zip(keys, tagged)
        if any(start == first[key][1] and tag not in penn_tags.PROPER_NOUNS for start, _, tag in tags)
    }
    return [entry for entry in names if entry[0].lower() not in not_names]


def _is_speaker_label(sentence: str, offset: int) -> bool:
    """Whether the name at `offset` is the sentence's speaker label ("Audrey: Hey Andrew!")."""
    label = LABEL.match(sentence)
    return label is not None and label.start(1) == offset


def dedupe_entities(mentions: list[Mention], cap: int) -> list[str]:
    """Case-insensitive dedupe keeping first-seen casing; over the cap, the least trusted kinds go first."""
    firsts: dict[str, Mention] = {}
    for mention in mentions:
        firsts.setdefault(mention.name.lower(), mention)
    unique = list(firsts.values())
    if len(unique) > cap:
        keep = sorted(unique, key=lambda m: (m.rank, m.sentence_index, m.offset))[:cap]
        unique = [m for m in unique if m in keep]
    return [m.name for m in unique]

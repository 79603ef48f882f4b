"""One summary sentence as the offline extractor reads it: tokens, gazetteer hits, who can be a subject
(the speaker, a named party, a project, or someone facts must not be attributed to) and where objects end."""
from __future__ import annotations

import re
from dataclasses import dataclass

from athena_core.ltm.extraction.normalisation import USER_LABEL
from athena_core.ltm.extraction.offline_vocabulary import (
    BOUNDARY_WORDS,
    DETERMINERS,
    FIRST_PERSON_TOKENS,
    HARD_BREAK,
    HEDGES,
    IDENTIFIER,
    ITEM_SEPARATORS,
    LEADING_FILLER,
    MAX_OBJECT_WORDS,
    NEGATORS,
    OBJECT_MARKERS,
    OTHER_PARTY_TOKENS,
    PROJECT_WORDS,
    RELATION_NOUNS,
    SOFT_BREAK,
    WORK,
)
from athena_core.models.ontology import USER_NODE_ID, snake_id
from athena_core.text.gazetteer import gazetteer_hits
from athena_core.text.names import SUBJECT_NAMES
from athena_core.text.stopwords import STOPWORDS
from athena_core.text.tokens import Token, tokens


@dataclass(frozen=True)
class Node:
    id: str
    label: str
    name: str


USER = Node(USER_NODE_ID, USER_LABEL, USER_NODE_ID)
PHRASE_RELATIONS = frozenset({"STRUGGLES_WITH", "EXPRESSED_INTEREST"})  # objects that are topics, not products
HOW_VERBS = frozenset({"work", "works", "worked", "function", "functions", "operate", "operates", "behave", "behaves"})
TAIL_PREPOSITIONS = frozenset({"in", "of", "on", "around"})
TAIL_DETERMINERS = frozenset({"the", "our", "my"})
TAIL_NOT_TOPICS = frozenset("""morning mornings evening evenings afternoon night day days week weekend end moment
    meantime past future beginning process world office house car way time end""".split())


@dataclass(frozen=True)
class SubjectCandidate:
    """Something that can be the subject of a clause: the speaker, a named party, a project, or a skip."""

    start: int
    end: int
    node: Node | None  # None: another party we must not attribute facts to ("you", "my wife", "he")
    first_person: bool = False


class SummarySentence:
    """One summary sentence with its tokens, gazetteer hits and subject candidates."""

    def __init__(self, text: str, entities: dict[str, str]) -> None:
        self.text = text
        self.toks = tokens(text)
        self.gaz: dict[int, str] = {tok.start: name for tok, name in gazetteer_hits(self.toks)}
        self.entities = entities
        hedge_word = bool(HEDGES.search(text))
        self.hedged = text.rstrip().endswith("?") or hedge_word
        # hedged by its question mark alone: a clause stated beside the question is not hedged by it
        self.question_only = self.hedged and not hedge_word
        # typed all in lowercase ("i switched to bun"): capitals say nothing, so a cue's object may be an
        # ambiguous gazetteer term written small
        self.lowercase = not re.search(r"[A-Z]", re.sub(r"\bI\b", "", text))
        self.first_person = any(t.lower in FIRST_PERSON_TOKENS for t in self.toks) or bool(
            re.search(r"\bthe user\b", text, re.IGNORECASE))
        self.claimed: set[int] = set()  # token starts already used as an object
        self.candidates = self._candidates()

    # -- tokens ----------------------------------------------------------------------------------

    def index_at(self, offset: int) -> int:
        """Index of the first token starting at or after `offset` (len(toks) if none)."""
        for i, tok in enumerate(self.toks):
            if tok.start >= offset:
                return i
        return len(self.toks)

    def gap(self, i: int) -> str:
        """Text between token i-1 and token i."""
        return self.text[self.toks[i - 1].end: self.toks[i].start] if i > 0 else ""

    def is_name_word(self, tok: Token) -> bool:
        return SUBJECT_NAMES.is_name_word(tok)

    def name_run(self, i: int) -> list[Token]:
        """The run of capitalised words starting at token i (empty if token i is not one)."""
        run: list[Token] = []
        while i < len(self.toks) and self.is_name_word(self.toks[i]) and self.toks[i].start not in self.gaz:
            if run and self.gap(i).strip():
                break
            run.append(self.toks[i])
            i += 1
        return run

    def span_text(self, toks: list[Token]) -> str:
        return self.text[toks[0].start: toks[-1].end]

    # -- subjects --------------------------------------------------------------------------------

    def _candidates(self) -> list[SubjectCandidate]:
        out: list[SubjectCandidate] = []
        toks = self.toks
        i = 0
        while i < len(toks):
            tok = toks[i]
            nxt = toks[i + 1].lower if i + 1 < len(toks) else ""
            if tok.lower in ("my", "our", "your", "his", "her", "their") and nxt in RELATION_NOUNS:
                out.append(SubjectCandidate(tok.start, toks[i + 1].end, None))
                i += 2
                continue
            if tok.lower == "user" and nxt not in PROJECT_WORDS:
                out.append(SubjectCandidate(tok.start, tok.end, USER, True))
            elif tok.lower in FIRST_PERSON_TOKENS and tok.lower not in ("me", "us", "myself", "ourselves"):
                out.append(SubjectCandidate(tok.start, tok.end, USER, True))
            elif tok.lower in OTHER_PARTY_TOKENS:
                out.append(SubjectCandidate(tok.start, tok.end, None))
            elif self.in_object_position(i) and not self._modified_project_word(i):
                pass  # "rewriting it in Go", "built for Prescott Data": an object, not a subject
            elif tok.lower in PROJECT_WORDS and i > 0:
                j = i
                while j > 0 and i - j < 3 and toks[j - 1].lower not in STOPWORDS and not self.gap(j).strip() \
                        and not WORK.match(toks[j - 1].lower + " ") and toks[j - 1].lower not in PROJECT_WORDS:
                    j -= 1
                if j < i and not self.in_object_position(j):
                    phrase = toks[j: i + 1]
                    out.append(SubjectCandidate(phrase[0].start, tok.end, self.object_node(phrase, "WORKS_ON")))
            elif tok.start in self.gaz:
                name = self.gaz[tok.start]
                out.append(SubjectCandidate(tok.start, tok.end, Node(snake_id(name), "Tools", name)))
            else:
                run = self.name_run(i)
                if run and self.in_object_position(i):
                    i += len(run)
                    continue
                if run:
                    name = self.span_text(run)
                    out.append(SubjectCandidate(run[0].start, run[-1].end,
                                          Node(snake_id(name), "Identities", self.entities.get(name.lower(), name))))
                    i += len(run)
                    continue
            i += 1
        return out

    def _modified_project_word(self, i: int) -> bool:
        """"the billing service": an -ing / -ed word between a determiner and a project word modifies it (it
        is no verb taking the word as its object); whether the whole phrase is an object is decided at its
        first word. Seen on `make run`: "The billing API is written in Kotlin" gave nothing."""
        toks = self.toks
        return (toks[i].lower in PROJECT_WORDS and i >= 2 and toks[i - 1].lower.endswith(("ing", "ed"))
                and toks[i - 2].lower in DETERMINERS and not self.gap(i).strip() and not self.gap(i - 1).strip())

    def in_object_position(self, i: int) -> bool:
        """Token i follows a preposition or a verb (skipping determiners): an object, not a subject."""
        j = i - 1
        while j >= 0 and self.toks[j].lower in DETERMINERS and not HARD_BREAK.search(self.gap(j + 1)):
            j -= 1
        if j < 0 or re.search(r"[,;:]", self.gap(j + 1)):
            return False
        prev = self.toks[j].lower
        return prev in OBJECT_MARKERS or (len(prev) > 4 and prev.endswith(("ing", "ed")))

    def subject_before(self, offset: int) -> tuple[Node | None, bool, int]:
        """The nearest subject candidate starting before `offset`: (node, is_third_party, its end).

        Falls back to the speaker when the sentence is first person but nothing precedes the trigger.
        """
        before = [c for c in self.candidates if c.start < offset]
        if before:
            nearest = max(before, key=lambda c: (c.start, c.first_person))
            return nearest.node, not nearest.first_person, nearest.end
        if self.first_person:
            return USER, False, 0
        return None, False, 0

    def negated(self, subject_end: int, trigger_start: int) -> bool:
        """A negator between the subject and the trigger ("I don't use", "I'm no longer stuck on")."""
        between = [t for t in self.toks if subject_end <= t.start < trigger_start][-4:]
        return any(t.lower in NEGATORS or t.lower.endswith("n't") for t in between)

    # -- objects ---------------------------------------------------------------------------------

    def object_items(self, offset: int, *, split_items: bool = True) -> list[list[Token]]:
        """Object phrases starting at `offset`: cut at a hard break or boundary word, split on and/or/commas,
        leading determiners dropped. Items longer than MAX_OBJECT_WORDS are discarded (a phrase that long
        means we did not find where the object ends)."""
        items: list[list[Token]] = []
        item: list[Token] = []
        start = self.index_at(offset)
        for i in range(start, len(self.toks)):
            tok = self.toks[i]
            gap = self.text[offset: tok.start] if i == start else self.gap(i)
            if HARD_BREAK.search(gap):
                break
            if split_items and (SOFT_BREAK.search(gap) or tok.lower in ITEM_SEPARATORS):
                if item:
                    items.append(item)
                    item = []
                if tok.lower in ITEM_SEPARATORS:
                    continue
            elif tok.lower in ITEM_SEPARATORS and not split_items:
                break
            if not item and tok.lower in LEADING_FILLER and tok.start not in self.gaz:
                continue
            if tok.lower in BOUNDARY_WORDS and tok.start not in self.gaz:
                break
            item.append(tok)
        if item:
            items.append(item)
        return [it for it in items if len(it) <= MAX_OBJECT_WORDS
                and any(t.start in self.gaz or t.lower not in STOPWORDS for t in it)]

    def topic_tail(self, item: list[Token], end: int | None = None) -> list[Token]:
        """A topic with its place kept: "memory leaks in the worker", not "memory leaks". The tail is a
        preposition, a determiner and one word, ending the sentence (or before `end`, a hard break or a
        boundary word); times and generic places are no part of a topic ("in the morning")."""
        if not item:
            return item
        i = self.toks.index(item[-1]) + 1
        tail = self.toks[i: i + 3]
        if len(tail) < 3 or tail[0].lower not in TAIL_PREPOSITIONS or tail[1].lower not in TAIL_DETERMINERS \
                or tail[2].lower in TAIL_NOT_TOPICS or tail[2].lower in BOUNDARY_WORDS or tail[2].start in self.gaz:
            return item
        if any(HARD_BREAK.search(self.gap(j)) or SOFT_BREAK.search(self.gap(j)) for j in range(i, i + 3)):
            return item
        after = self.toks[i + 3] if i + 3 < len(self.toks) else None
        if end is not None:  # the phrase was delimited by its rule: the tail must lie inside it and end it
            ends_phrase = after is None or after.start >= end  # not "in the nightly" of "in the nightly jobs"
            return item + tail if tail[2].end <= end and ends_phrase else item
        if after is not None and not HARD_BREAK.search(self.gap(i + 3)) and after.lower not in BOUNDARY_WORDS:
            return item
        return item + tail

    def _without_how_verb(self, item: list[Token], relation: str) -> list[Token]:
        """"understand how CRDTs work": the topic is CRDTs, not "CRDTs work" (seen on `make run`)."""
        if relation not in PHRASE_RELATIONS or len(item) < 2 or item[-1].lower not in HOW_VERBS:
            return item
        i = self.toks.index(item[0]) - 1
        while i > 0 and self.toks[i].lower in DETERMINERS:
            i -= 1
        return item[:-1] if i >= 0 and self.toks[i].lower == "how" else item

    def _product_line(self, item: list[Token]) -> bool:
        """A known tool's name followed by capitalised words the gazetteer does not know, nothing else:
        "GitHub Actions" is not GitHub (seen on `make run`: "moved from Jenkins to GitHub Actions")."""
        return (len(item) in (2, 3) and item[0].start in self.gaz and
                all(t.start not in self.gaz and t.text[:1].isupper() and t.lower not in PROJECT_WORDS
                    for t in item[1:]))

    def object_node(self, item: list[Token], relation: str) -> Node:
        """Label an object: gazetteer → Tools; "... service/app/repo" → Projects; a client → Identities;
        WORKS_ON → Projects; a named or code-like thing one USES → Tools; otherwise Concepts."""
        item = self._without_how_verb(item, relation)
        hits = [self.gaz[t.start] for t in item if t.start in self.gaz]
        if hits and len(item) > 1 and relation in PHRASE_RELATIONS and item[-1].start not in self.gaz:
            hits = []  # "Kafka consumer rebalancing" is a problem about Kafka, not Kafka itself
        if hits and relation == "USES" and self._product_line(item):
            hits = []  # "GitHub Actions", "React Native", "Docker Compose": a product of its own, named whole
        if hits and not (item[-1].lower in PROJECT_WORDS and len(item) > 1):
            return Node(snake_id(hits[0]), "Tools", hits[0])
        name = self.span_text(item)
        name = self.entities.get(name.lower(), name)
        if item[-1].lower in PROJECT_WORDS and len(item) > 1:
            label = "Projects"
        elif relation == "BUILT_FOR_CLIENT":
            label = "Identities"
        elif relation == "WORKS_ON":
            label = "Projects"
        elif relation == "USES" and all(self.is_name_word(t) or IDENTIFIER.match(t.text) for t in item):
            label = "Tools"  # "Obsidian", "pgx_pool": a product; "spaced repetition" is a method
        else:
            label = "Concepts"
        return Node(snake_id(name), label, name)

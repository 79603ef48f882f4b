"""Struggles, interests and projects the speaker states in wordings no pattern names, read from the parse.

The patterns of `chat_clauses` and `clause_frames` know the idioms they were written for; a development
set written blind to them ("X is eating my weekends", "I keep tripping over X", "been nerding out on X")
was read at 0.27 for struggles. A parse finds what a cue list cannot: which phrase a word of struggle,
interest or work governs, and whether the speaker is the one struggling (its subject, or the one it acts
on: "X keeps biting me", "the bane of my existence"). The word lists here are lemmas (one entry covers
"fight", "fighting", "fought"); the structure comes from the parse, not from the wording.

A reading needs the speaker: a first-person subject, a subjectless chat fragment ("Been fighting X all
morning"), or, where the topic is the subject, the speaker as the one it acts on ("X is killing me").
It is dropped when the clause is negated (except the idioms of not getting something: "I just cannot get
a handle on X"), conditional, in the simple past or "used to" (a struggle that is over), or someone
else's ("Priya's been fighting X"). Questions stay hedged unless the reading is stated in a clause of
its own beside the question ("I keep tripping over X, is there a sane mental model for it?").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from athena_core.ltm.extraction.dependency_reader import (
    AGENT_NOUNS, CONDITIONS, FIRST_PERSON, NEGATIONS, PARTY_PRONOUNS, PEOPLE, _parse,
)

ME = frozenset({"me", "us", "myself"})
MY = frozenset({"my", "our"})
THEIR = frozenset({"your", "his", "her", "their"})

# Verbs whose object (direct, or through a preposition) the speaker struggles with: "fighting X",
# "tripping over X", "banging my head against X", "wrestling with X", "I keep messing up X".
STRUGGLE_VERBS = frozenset("""struggle fight wrestle battle grapple trip stumble flounder drown bang mess screw
    botch fumble suffer""".split())
# Verbs whose subject is the struggle when they act on the speaker: "X is eating my weekends", "X keeps
# biting me", "X continues to defeat me", "X still breaks on me", "X is kicking my butt".
STRUGGLE_AGENTS = frozenset("""eat kill bite defeat beat wreck destroy confuse baffle stump frustrate haunt break
    kick ruin torment plague bug puzzle overwhelm drive trip""".split())
# Said only negated: "I can't wrap my head around X", "I just cannot get a handle on X", "X doesn't click".
NOT_GETTING = frozenset("get wrap figure grasp understand crack click handle".split())
# Nouns of struggle, said of the speaker: "my nemesis this sprint is X", "X has been the bane of my existence",
# "I've hit a wall with X", "having a rough time with X", "I'm out of my depth with X".
STRUGGLE_NOUNS = frozenset("""nemesis bane headache nightmare struggle pain weakness kryptonite enemy wall
    depth""".split())
HARD_TIMES = frozenset("rough hard tough bad difficult terrible awful".split())  # "a rough time with X"
STRUGGLE_ADJECTIVES = frozenset("stuck stumped confused baffled lost".split())  # "stuck on X"

# Verbs of learning: "nerding out on X", "I'm trying to teach myself X", "thinking about picking up X".
INTEREST_VERBS = frozenset("""learn study explore dig dive nerd geek read dabble teach master research pick
    obsess""".split())
INTEREST_AGENTS = frozenset("fascinate interest intrigue excite captivate pull".split())  # "X fascinates me"
INTEREST_ADJECTIVES = frozenset("""curious interested fascinated obsessed keen excited hooked passionate
    intrigued""".split())
INTEREST_NOUNS = frozenset("obsession passion hobby fascination".split())  # "my new obsession is X"
# Verbs of the speaker's work on a project: "I maintain X", "currently building out X", "I'm leading X".
WORK_VERBS = frozenset("""work build maintain own lead develop ship refactor scale run launch write design
    architect contribute rewrite migrate put""".split())  # "put" only as "putting together X" (PARTICLE_VERBS)
WORK_NOUNS = frozenset("job project focus thing baby".split())  # "my day job is X", "my main thing is X"
# What the speaker is on a project: "I'm the main dev on X", "I'm the maintainer of X", "I'm on call for X".
ROLE_NOUNS = frozenset("dev developer maintainer owner lead engineer architect".split())
# Verbs that are a listed verb only with their particle: "picking up X" (learning; "pick a database" is a
# choice), "putting together X" (building).
PARTICLE_VERBS = {"pick": "up", "put": "together"}

# "I find X confusing" / "I find X super interesting": what the speaker finds X.
FIND_STRUGGLE = frozenset("""confusing hard difficult tricky painful frustrating overwhelming impossible baffling
    intimidating daunting""".split())
FIND_INTEREST = frozenset("interesting fascinating intriguing exciting captivating compelling".split())

LISTED_VERBS = STRUGGLE_VERBS | STRUGGLE_AGENTS | NOT_GETTING | INTEREST_VERBS | INTEREST_AGENTS | WORK_VERBS

OBJECT_PREPOSITIONS = frozenset("with against over on to in into around about at through".split())
SELF_OBJECTS = frozenset("head day days hours week weeks weekend weekends morning time sanity mind".split())
TRAILING_GENERIC = frozenset("issues issue problems problem stuff things bugs errors".split())
PAST_ADVERBS = frozenset({"anymore", "finally", "longer", "ago", "behind"})


@dataclass(frozen=True)
class PhraseReading:
    """One relation the parse reads: the object phrase at [start, end) of the sentence. `stated`: said in a
    clause of its own, so a question elsewhere in the sentence does not hedge it."""

    relation: str
    start: int
    end: int
    stated: bool = False


def _lemma(tok: Any) -> str:
    """The token's lemma; a gerund the lemmatiser does not know ("nerding" → "nerde") by its stem, unless the
    lemma is a word of the lists ("struggling" → "struggle", not "struggl")."""
    lemma = tok.lemma_.lower()
    if tok.lower_.endswith("ing") and lemma == tok.lower_[:-3] + "e" and lemma not in LISTED_VERBS:
        return tok.lower_[:-3]
    return lemma


def _owned_by_me(tok: Any) -> bool:
    return any(w.lower_ in MY and w.dep_ == "poss" for w in tok.subtree)


def _owned_by_other(tok: Any) -> bool:
    return any(w.dep_ == "poss" and (w.lower_ in THEIR or w.pos_ == "PROPN") for w in tok.subtree)


def _clause_verb(tok: Any) -> Any:
    """The verb whose subject decides whose statement this is: up through xcomp ("keep tripping",
    "trying to teach", "want to learn"), the auxiliaries, and a gerund after a verb's or an adjective's
    preposition ("I've been tasked with scaling X", "thinking about picking up X")."""
    node = tok
    while node.head.i != node.i:
        if node.dep_ in ("xcomp", "acomp", "prt"):
            node = node.head
        elif node.dep_ == "pcomp" and node.head.dep_ == "prep" and node.head.head.pos_ in ("VERB", "AUX", "ADJ"):
            node = node.head.head
        else:
            break
    return node


def _subject_of(verb: Any) -> Any | None:
    for child in verb.children:
        if child.dep_ in ("nsubj", "nsubjpass"):
            return child
    for aux in (c for c in verb.children if c.dep_ in ("aux", "auxpass")):  # "I'm stuck": the parse may hang
        for child in aux.children:                                             # the subject on the auxiliary
            if child.dep_ in ("nsubj", "nsubjpass"):
                return child
    if verb.dep_ == "conj" and verb.head.i != verb.i:  # "I keep messing up X and I'm …"; "… and losing"
        return _subject_of(verb.head)
    return None


def _is_party(tok: Any) -> bool:
    return tok.lower_ in PARTY_PRONOUNS or tok.lower_ in PEOPLE or tok.lower_ in AGENT_NOUNS or \
        (tok.pos_ == "PROPN" and tok.text[:1].isupper()) or _owned_by_other(tok)


def _fragment(verb: Any) -> bool:
    """A chat fragment with no subject, opening at its verb: "Been fighting X", "Struggling hard with X"."""
    first = next((t for t in verb.sent if not t.is_punct and t.pos_ not in ("INTJ", "X")), None)
    if first is None:
        return False
    return first.i >= verb.i - 3 and all(t.pos_ in ("VERB", "AUX", "ADV", "ADJ", "PART", "INTJ", "PUNCT")
                                         for t in verb.doc[first.i:verb.i])


def _speaker_says(verb: Any) -> bool:
    subject = _subject_of(verb)
    if subject is None:
        return _fragment(verb)
    return subject.lower_ in FIRST_PERSON


def _negated(verb: Any) -> bool:
    node = verb
    for _ in range(4):
        if any(c.dep_ == "neg" or (c.dep_ == "advmod" and c.lower_ in NEGATIONS) for c in node.children):
            return True
        if node.dep_ not in ("xcomp", "acomp") or node.head.i == node.i:
            return False
        node = node.head
    return False


def _blocked(verb: Any, relation: str) -> bool:
    """A condition, a struggle that is over, a thing set aside ("instead of learning X"), or (struggles) a
    modal: no statement of now."""
    if verb.dep_ == "pcomp" and verb.head.lower_ in ("of", "than") and any(
            c.lower_ in ("instead", "rather") for c in verb.head.children):
        return True
    for node in (verb, *list(verb.ancestors)[:3]):
        for child in node.children:
            if child.dep_ == "mark" and child.lower_ in CONDITIONS:
                return True
            if relation == "STRUGGLES_WITH" and child.dep_ == "aux" and child.lower_ in ("would", "could", "might",
                                                                                          "should"):
                return True
        if _lemma(node) in ("suppose", "imagine") or (node.lower_ == "used" and any(
                c.dep_ == "xcomp" for c in node.children)):
            return True
    if relation == "STRUGGLES_WITH":
        if any(t.lower_ in PAST_ADVERBS for t in verb.sent):
            return True
        top = _clause_verb(verb)
        if top.tag_ == "VBD" and not any(c.dep_ in ("aux", "auxpass") for c in top.children):
            return True
    return False


def _phrase(noun: Any) -> tuple[int, int] | None:
    """The character span of a noun's phrase: its compounds and modifiers, no determiner or possessive, no
    trailing "issues" ("time zone handling issues" is time zone handling)."""
    nominal = noun.pos_ in ("NOUN", "PROPN") or (noun.tag_ == "VBG" and noun.dep_ in ("attr", "nsubj", "dobj", "pobj"))
    if not nominal or noun.lower_ in ME | SELF_OBJECTS:
        return None
    words = sorted([noun, *(w for c in noun.children if c.dep_ in ("compound", "amod", "nmod", "npadvmod")
                            and c.i < noun.i for w in c.subtree)], key=lambda t: t.i)
    words = [w for w in words if w.dep_ not in ("det", "poss", "predet") and not w.is_punct]
    if len(words) > 2 and [w.lower_ for w in words[-2:]] == ["rabbit", "hole"]:
        words = words[:-2]  # "fell down a category theory rabbit hole"
    while len(words) > 1 and words[-1].lower_ in TRAILING_GENERIC:
        words = words[:-1]
    if not words:
        return None
    return words[0].idx, words[-1].idx + len(words[-1].text)


def _objects(verb: Any) -> list[Any]:
    """The verb's objects, direct first, then through a preposition (or a particle's preposition); an object
    that is the speaker's own time or head ("banging my head against X") is passed over, and so is a
    preposition before the verb: it frames the clause, it is not what the verb governs ("On a different
    note, I've been nerding out on X")."""
    out = []
    for child in verb.children:
        if child.dep_ in ("dobj", "dative") and child.lower_ not in SELF_OBJECTS and child.lower_ not in ME:
            out.append(child)
    for child in verb.children:
        if child.dep_ in ("prep", "prt") and child.lower_ in OBJECT_PREPOSITIONS and child.i > verb.i:
            out += [g for g in child.children if g.dep_ == "pobj"]
            out += [g for g in child.children if g.dep_ == "prep" for g in g.children if g.dep_ == "pobj"]
    return out


def _acts_on_me(verb: Any) -> bool:
    """The verb acts on the speaker: "biting me", "eating my weekends", "breaks on me", "kicking my butt"."""
    for child in verb.children:
        if child.dep_ in ("dobj", "dative") and (child.lower_ in ME or _owned_by_me(child)):
            return True
        if child.dep_ in ("prep", "prt") and any(g.lower_ in ME for g in child.children):
            return True
    return False


def _topic_subject(verb: Any) -> Any | None:
    node = verb
    for _ in range(3):
        subject = next((c for c in node.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subject is not None:
            return subject
        if node.dep_ not in ("xcomp", "conj") or node.head.i == node.i:
            return None
        node = node.head
    return None


def _stated(verb: Any) -> bool:
    """Said as a statement though the sentence asks something: a declarative clause of the speaker's with
    the question elsewhere ("I keep tripping over X, is there…?", "since I'm stuck on X anyway, what's…?",
    "Struggling hard with X, any tips?"), not a question about the speaker ("am I bad at X?")."""
    top = _clause_verb(verb)
    subject = _subject_of(top)
    if subject is None:
        return top.dep_ in ("advcl", "conj", "parataxis") and _fragment(top)
    opens = next((t for t in top.sent if not t.is_punct and t.pos_ not in ("INTJ", "X", "CCONJ")), None)
    inverted = opens is not None and opens.i < subject.i and (opens.pos_ == "AUX" or opens.tag_ in ("WP", "WRB", "WDT"))
    return subject.lower_ in FIRST_PERSON and subject.i < top.i and not inverted and \
        not any(c.tag_ in ("WP", "WRB", "WDT") for c in top.children)


def _reading(relation: str, noun: Any, verb: Any) -> PhraseReading | None:
    span = _phrase(noun)
    if span is None:
        return None
    return PhraseReading(relation, span[0], span[1], _stated(verb))


def _by_verbs(tok: Any, out: list[PhraseReading]) -> None:
    lemma = _lemma(tok)
    verb = _clause_verb(tok)
    if lemma in PARTICLE_VERBS and not any(c.dep_ == "prt" and c.lower_ == PARTICLE_VERBS[lemma] for c in tok.children):
        return
    if lemma in STRUGGLE_VERBS | INTEREST_VERBS | WORK_VERBS and tok.pos_ == "VERB":
        relation = ("STRUGGLES_WITH" if lemma in STRUGGLE_VERBS else
                    "EXPRESSED_INTEREST" if lemma in INTEREST_VERBS else "WORKS_ON")
        if _negated(tok):
            return
        if _speaker_says(verb) and not _blocked(tok, relation):
            for noun in _objects(tok)[:1]:
                if not _is_party(noun) and (reading := _reading(relation, noun, tok)):
                    out.append(reading)
    elif lemma in NOT_GETTING and _negated(tok) and tok.pos_ == "VERB":
        if lemma == "click":  # "X just doesn't click for me"
            subject = _topic_subject(tok)
            if subject is not None and _acts_on_me(tok) and (reading := _reading("STRUGGLES_WITH", subject, tok)):
                out.append(reading)
            return
        if _speaker_says(verb) and not _blocked(tok, "EXPRESSED_INTEREST"):  # modals are the idiom: "can't"
            for child in tok.children:  # "get a handle on X", "never got the hang of X": the object's own preposition
                if child.dep_ == "dobj" and child.lower_ in ("handle", "head", "grip", "hang"):
                    for noun in [n for n in _objects(child) + _objects(tok) if n.i != child.i]:
                        if (reading := _reading("STRUGGLES_WITH", noun, tok)):
                            out.append(reading)
                            return
                    return  # "I never got the hang of it": nothing the speaker named
            for noun in _objects(tok)[:1]:
                if not _is_party(noun) and (reading := _reading("STRUGGLES_WITH", noun, tok)):
                    out.append(reading)
    elif lemma in STRUGGLE_AGENTS | INTEREST_AGENTS and tok.pos_ == "VERB":
        relation = "STRUGGLES_WITH" if lemma in STRUGGLE_AGENTS else "EXPRESSED_INTEREST"
        subject = _topic_subject(tok)
        if subject is None or _negated(tok) or _blocked(tok, relation) or not _acts_on_me(tok):
            return
        if subject.lower_ not in FIRST_PERSON and not _is_party(subject):
            if (reading := _reading(relation, subject, tok)):
                out.append(reading)


def _by_nouns(tok: Any, out: list[PhraseReading]) -> None:
    """"my nemesis is X", "X is the bane of my existence", "hit a wall with X", "a rough time with X"."""
    lemma = _lemma(tok)
    head = tok.head
    if lemma in STRUGGLE_NOUNS | INTEREST_NOUNS | WORK_NOUNS and _lemma(head) == "be" and tok.dep_ in ("nsubj", "attr"):
        relation = ("STRUGGLES_WITH" if lemma in STRUGGLE_NOUNS else
                    "EXPRESSED_INTEREST" if lemma in INTEREST_NOUNS else "WORKS_ON")
        if not (_owned_by_me(tok) or any(g.lower_ in ME for c in head.children if c.dep_ == "prep"
                                         for g in c.children)):
            return
        if _negated(head) or _blocked(head, relation):
            return
        other = "attr" if tok.dep_ == "nsubj" else "nsubj"
        for noun in (c for c in head.children if c.dep_ == other):
            if not _is_party(noun) and noun.lower_ not in FIRST_PERSON and (reading := _reading(relation, noun, head)):
                out.append(reading)
        return
    if lemma in ("wall", "depth", "time", "trouble", "difficulty") and tok.dep_ in ("dobj", "pobj"):
        if lemma == "time" and not any(c.lower_ in HARD_TIMES for c in tok.children):
            return
        if lemma == "depth" and not _owned_by_me(tok):
            return
        verb = head if head.pos_ in ("VERB", "AUX") else head.head
        if tok.dep_ == "pobj":  # "out of my depth with X": the "with" hangs from the verb above the phrase
            verb = _clause_verb(next((a for a in tok.ancestors if a.pos_ in ("VERB", "AUX")), head.head))
        if not _speaker_says(_clause_verb(verb)) or _negated(verb) or _blocked(verb, "STRUGGLES_WITH"):
            return
        for noun in _objects(tok) + [n for n in _objects(verb) if n.i > tok.i]:
            if not _is_party(noun) and (reading := _reading("STRUGGLES_WITH", noun, verb)):
                out.append(reading)
                return


def _by_roles(tok: Any, out: list[PhraseReading]) -> None:
    """"I'm the main dev on X", "I'm the maintainer of X", "I'm responsible for (keeping) X", "I'm on call
    for X": the speaker's role on a project."""
    if tok.lower_ in ROLE_NOUNS and tok.dep_ == "attr":
        verb, preps = tok.head, ("on", "of", "for")
    elif tok.lower_ == "responsible" and tok.dep_ == "acomp":
        verb, preps = tok.head, ("for",)
    elif tok.lower_ == "call" and tok.dep_ == "pobj" and tok.head.lower_ == "on":
        verb, preps = tok.head.head, ("for",)
    else:
        return
    if _lemma(verb) != "be" or not _speaker_says(verb) or _negated(verb) or _blocked(verb, "WORKS_ON"):
        return
    for prep in (c for c in tok.children if c.dep_ == "prep" and c.lower_ in preps):
        nouns = [g for g in prep.children if g.dep_ == "pobj"]
        nouns += [o for g in prep.children if g.dep_ == "pcomp" for o in g.children if o.dep_ == "dobj"]  # keeping X
        for noun in nouns[:1]:
            if not _is_party(noun) and (reading := _reading("WORKS_ON", noun, verb)):
                out.append(reading)
                return


def _by_adjectives(tok: Any, out: list[PhraseReading]) -> None:
    """"curious about X", "low-key obsessed with X", "since I'm stuck on X anyway, …?"."""
    lemma = _lemma(tok)
    relation = ("EXPRESSED_INTEREST" if lemma in INTEREST_ADJECTIVES else
                "STRUGGLES_WITH" if lemma in STRUGGLE_ADJECTIVES else None)
    if relation is None or tok.pos_ not in ("ADJ", "VERB"):
        return
    verb = tok.head if tok.dep_ in ("acomp", "oprd") else tok
    if not _speaker_says(verb) or _negated(verb) or _blocked(verb, relation):
        return
    for noun in _objects(tok)[:1]:
        if not _is_party(noun) and (reading := _reading(relation, noun, verb)):
            out.append(reading)


def _by_find(tok: Any, out: list[PhraseReading]) -> None:
    """"I find X confusing", "I find X super interesting": the words between "find" and the adjective's
    phrase are X (the parse often splits a compound there: "time zone handling")."""
    if _lemma(tok) != "find" or tok.pos_ != "VERB":
        return
    listed = FIND_STRUGGLE | FIND_INTEREST
    adjective = next((c for c in tok.children if c.dep_ in ("ccomp", "oprd", "xcomp", "acomp") and c.pos_ == "ADJ"
                      and c.lower_ in listed), None)
    if adjective is None:  # "I find coroutines super interesting": parsed as the object's modifier after it
        adjective = next((a for c in tok.children if c.dep_ == "dobj" for a in c.children
                          if a.dep_ == "amod" and a.i > c.i and a.lower_ in listed), None)
    if adjective is None or adjective.i <= tok.i + 1:
        return
    relation = "STRUGGLES_WITH" if adjective.lower_ in FIND_STRUGGLE else "EXPRESSED_INTEREST"
    if not _speaker_says(tok) or _negated(tok) or _blocked(tok, relation):
        return
    end = min([adjective.i, *(c.i for c in adjective.children if c.dep_ in ("advmod", "npadvmod", "det")
                               and c.i < adjective.i)])
    words = [t for t in tok.doc[tok.i + 1:end] if t.dep_ not in ("det", "poss", "predet") and not t.is_punct]
    if not words or any(t.pos_ == "PRON" or _is_party(t) for t in words):
        return  # "I find it confusing": whatever "it" is, this sentence does not say
    out.append(PhraseReading(relation, words[0].idx, words[-1].idx + len(words[-1].text), _stated(tok)))


def read_phrases(text: str) -> list[PhraseReading]:
    """Struggles, interests and projects of the speaker's that the parse reads in one sentence of theirs
    (the object phrases; the caller checks their shape). Empty without the parser."""
    doc = _parse(text)
    if doc is None:
        return []
    out: list[PhraseReading] = []
    for tok in doc:
        _by_verbs(tok, out)
        _by_nouns(tok, out)
        _by_adjectives(tok, out)
        _by_find(tok, out)
        _by_roles(tok, out)
    return out

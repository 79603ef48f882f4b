"""Whether a tool the speaker names is a tool the speaker uses, read from a dependency parse.

The offline extractor's patterns know the wordings they were written for; a tool named in any other
wording ("been living in Kafka lately", "Terraform powers our internal tooling") was only a mention below
the retrieval floor. A parse says what a cue list cannot: which verb governs the tool, who that verb's
subject is, and whether the clause is negated, modal, conditional, past or about leaving the tool. A
clause of the speaker's (first-person or subjectless, as chat fragments are) that is none of those is read
as a use, at a confidence just above the floor (`CONFIDENCE["parsed_use"]`).

The parser is spaCy's small English pipeline (`text/spacy_english.py`). Without it installed (or with
`ATHENA_EXTRACTION_PARSER=none`, which the extractor obeys) the patterns stand alone.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from athena_core.ltm.extraction.offline_vocabulary import RELATION_NOUNS
from athena_core.text.spacy_english import english_pipeline

FIRST_PERSON = frozenset({"i", "we"})  # as subjects: "told me to use X" gives X to whoever told
PEOPLE = RELATION_NOUNS | frozenset("""everyone everybody people folks someone somebody anyone anybody nobody
    guy guys man woman men women person persons devs developers engineers users classmate classmates buddy
    buddies pal pals mate mates flatmate housemate lead cto ceo founder cofounder co-founder intern interns
    mentee uncle aunt nephew niece grandma grandpa spouse fiance fiancee ex bestie acquaintance peer peers
    supervisor advisor professor prof tutor coach landlord doctor dentist nurse""".split())
PARTY_PRONOUNS = frozenset({"you", "he", "she", "they", "him", "her", "them"})  # not "it": "it's all X now"
# Nouns for whoever does a thing, besides people: "the vendor uses X", "our contractor built it on X".
AGENT_NOUNS = frozenset("""vendor vendors contractor contractors agency consultant consultants
    freelancer freelancers company companies firm startup competitor competitors partner partners
    org organisation organization group groups department side folks crowd""".split())
THINGS_WE_DO = frozenset({"everything", "all", "most", "anything", "much", "half", "whatever"})
FIRST_PERSON_OWNERS = frozenset({"my", "our"})
MODALS = frozenset({"would", "could", "might", "should", "may", "must", "can", "ca", "wo", "shall"})
CONDITIONS = frozenset({"if", "whether", "unless", "once", "before", "until", "instead"})
PRESUPPOSING = frozenset({"since", "because", "as", "given", "cause", "cuz"})  # "since I'm on X, how do I…?"
NEGATIONS = frozenset({"never", "not", "n't", "no", "zero", "nobody", "nothing", "neither", "nor"})
LEAVING = frozenset({"from", "off", "instead", "than", "besides", "against", "without"})
HOLDING_VERBS = frozenset({"have", "get", "keep"})  # "I have X set up on both laptops"
# Verbs whose object is not thereby used: choosing, weighing, wishing, hearing, telling, leaving, disliking.
NOT_USE = frozenset("""try consider want wish hope plan think hear read ask tell recommend suggest mention
    avoid hate dislike quit leave drop stop abandon replace ditch miss learn evaluate compare look choose
    pick decide research explore investigate test trial pilot demo study watch see know understand
    explain teach show help propose pitch mean need intend expect imagine wonder doubt fear worry complain
    rant talk speak write say google search sell buy pay cost license uninstall remove delete deprecate
    retire sunset kill phase migrate move switch swap port convert rewrite give forget regret refuse
    reject dismiss skip ignore prefer""".split())


@dataclass(frozen=True)
class UseReading:
    """A use the parse reads. `presupposed`: stated as a given inside a question ("since I'm on X, how…?"),
    so the question's hedge does not apply to it."""

    presupposed: bool = False


def _pipeline() -> Any | None:
    """spaCy's pipeline without its named entities: names come from the gazetteer and the entity list."""
    return english_pipeline(("ner",))


def available() -> bool:
    return _pipeline() is not None


@lru_cache(maxsize=4096)
def _parse(text: str) -> Any:
    nlp = _pipeline()
    return nlp(text) if nlp is not None else None


def _clause_head(tok: Any) -> Any | None:
    """The verb (or copula) whose clause holds `tok`: up the tree past nouns, prepositions and compounds."""
    node = tok
    for _ in range(12):
        if node.pos_ in ("VERB", "AUX") and node.i != tok.i:
            return node
        if node.head.i == node.i:
            return None
        node = node.head
    return None


def _path(tok: Any, top: Any) -> list[Any]:
    """Tokens from `tok` up to `top` (inclusive) along the heads."""
    path = [tok]
    while path[-1].i != top.i and path[-1].head.i != path[-1].i and len(path) < 14:
        path.append(path[-1].head)
    return path


def _party(tok: Any, tools: frozenset[int]) -> bool:
    """Someone other than the speaker: "him", "my team", "Priya" (a name the gazetteer does not know)."""
    if tok.lower_ in PARTY_PRONOUNS or tok.lower_ in PEOPLE:
        return True
    return tok.pos_ == "PROPN" and tok.text[:1].isupper() and tok.idx not in tools


def _party_object(verb: Any, tools: frozenset[int]) -> Any | None:
    """A person the verb acts on: "told Priya to use X", "introduced my team to X", "set him up with X"."""
    return next((c for c in verb.children if c.dep_ in ("dobj", "dative") and _party(c, tools)), None)


def _subject(verb: Any, tools: frozenset[int]) -> Any | None:
    """The verb's subject, or that of the verb it hangs from (xcomp, conj, advcl): "I love working in X".
    Under a verb with a person for object, that person is the subject: "I told Priya to use X"."""
    node = verb
    for _ in range(4):
        for child in node.children:
            if child.dep_ in ("nsubj", "nsubjpass", "expl"):
                return child
        if node.dep_ not in ("xcomp", "conj", "advcl", "ccomp", "pcomp") or node.head.i == node.i:
            return None
        node = node.head
        controller = _party_object(node, tools)
        if controller is not None:
            return controller
    return None


def _speaker_owned(tok: Any) -> bool:
    """A thing of the speaker's: "my workflow", "most of my week", "everything we build"; never a person
    ("my brother", "everyone I know": their tools are theirs)."""
    words = list(tok.subtree)
    if any(w.lower_ in PEOPLE or w.lower_ in AGENT_NOUNS for w in words):
        return False
    if any(c.dep_ in ("appos", "compound") and c.pos_ == "PROPN" for c in tok.children):
        return False  # "my old classmate Sven": a person, named
    if any(w.lower_ in FIRST_PERSON_OWNERS and w.dep_ == "poss" for w in words):
        return True
    return tok.lower_ in THINGS_WE_DO and any(
        c.dep_ == "relcl" and any(g.dep_ == "nsubj" and g.lower_ in FIRST_PERSON for g in c.children)
        for c in tok.children)


def _is_speaker(subject: Any) -> bool:
    return subject.lower_ in FIRST_PERSON or _speaker_owned(subject)


def _blocked(verb: Any, path: list[Any]) -> bool:
    """Negated, modal, conditional or a verb of not using, on the verb or the verbs it hangs from; or a
    negated noun on the way to the tool ("zero experience with X")."""
    if any(c.lower_ in NEGATIONS for t in path for c in t.children if c.dep_ in ("det", "nummod", "neg")):
        return True
    node = verb
    for _ in range(5):
        if node.lemma_.lower() in NOT_USE:
            return True
        for child in node.children:
            word = child.lower_
            if child.dep_ == "neg" or (child.dep_ == "advmod" and word in NEGATIONS):
                return True
            if child.dep_ == "aux" and word in MODALS:
                return True
            if child.dep_ == "mark" and word in CONDITIONS:
                return True
        if node.head.i == node.i:
            return False
        node = node.head
    return False


def _presupposed(verb: Any) -> bool:
    if any(c.dep_ == "mark" and c.lower_ in PRESUPPOSING for c in verb.children):
        return True
    return verb.dep_ == "relcl" and verb.head.lower_ in ("someone", "somebody", "person", "one")


def _tool_as_subject(tool: Any, verb: Any, tools: frozenset[int]) -> bool:
    """"Terraform powers our internal tooling", "X is the backbone of our pipeline": the tool does the
    speaker's work. "I have X set up on both laptops": the tool is held by the speaker."""
    rest = [c for c in verb.children if c.i != tool.i and c.dep_ not in ("punct", "cc")]
    if verb.dep_ in ("ccomp", "xcomp", "oprd", "dep") and verb.head.lemma_.lower() in HOLDING_VERBS:
        subject = _subject(verb.head, tools)
        return subject is not None and _is_speaker(subject)
    objects = [c for c in rest if c.dep_ in ("dobj", "attr", "prep", "dative")]  # not "…, glad I never…"
    return any(w.lower_ in FIRST_PERSON_OWNERS and w.dep_ == "poss" for c in objects for w in c.subtree) and \
        not any(w.lower_ in RELATION_NOUNS for c in objects for w in c.subtree)


def _tool_and_verb(text: str, start: int, end: int) -> tuple[Any, Any, Any] | None:
    """(parsed sentence, the tool's head token, the verb governing it), or None (no parser, no verb)."""
    doc = _parse(text)
    if doc is None:
        return None
    span = [t for t in doc if t.idx < end and t.idx + len(t.text) > start]
    if not span:
        return None
    inside = {t.i for t in span}
    tool = next((t for t in span if t.head.i not in inside or t.head.i == t.i), span[0])
    verb = _clause_head(tool)
    return None if verb is None else (doc, tool, verb)


def read_use(text: str, start: int, end: int, tools: frozenset[int] = frozenset()) -> UseReading | None:
    """The tool at [start, end) of `text` (one sentence of the speaker's) read as the speaker's current use,
    or None: its clause's subject is the speaker (or absent, as in chat fragments), the clause is in the
    present or present perfect, and it is not negated, modal, conditional, about leaving the tool ("off X",
    "from X") or a verb of not using, and it acts on no other person ("told Priya to use X"). `tools`:
    the character offsets of the sentence's gazetteer tools (a capitalised word elsewhere may be a person).
    Always None without the parser."""
    found = _tool_and_verb(text, start, end)
    if found is None:
        return None
    doc, tool, verb = found
    path = _path(tool, verb)
    if any(t.lower_ in LEAVING for t in path) or any(t.pos_ == "ADJ" for t in path[1:-1]):
        return None  # "moved off X" is the old value (the patterns read it); "skeptical of X" is no use
    if verb.dep_ == "pcomp" and (verb.head.lower_ in LEAVING or any(c.lower_ in LEAVING for c in verb.head.children)):
        return None  # "rather than struggling with X, I use Y": X set aside
    if _blocked(verb, path):
        return None
    if verb.tag_ == "VBD" and not any(c.dep_ in ("aux", "auxpass") for c in verb.children):
        return None  # simple past: "I used Jenkins for my thesis" says nothing of now
    if tool.dep_ in ("nsubj", "nsubjpass") and tool.head.i == verb.i:
        return UseReading(_presupposed(verb)) if _tool_as_subject(tool, verb, tools) else None
    if _party_object(verb, tools) is not None:
        return None
    subject = _subject(verb, tools)
    if subject is None:  # a fragment: "been living in Kafka lately"
        first = next((t for t in doc if not t.is_punct and t.pos_ != "INTJ"), None)
        fragment = first is not None and first.i >= verb.i - 2 and first.pos_ in ("VERB", "AUX", "ADV") \
            and not any(t.dep_ in ("csubj", "nsubj") for t in (verb, *verb.ancestors))  # "Struggling with X is common"
        return UseReading() if fragment else None
    return UseReading(_presupposed(verb)) if _is_speaker(subject) else None


def _speaker_included(verb: Any, subject: Any) -> bool:
    """The speaker is among the users: "my team and I use X", "our whole team runs on X, me included"; not
    a relative clause on the subject ("the vendor we're evaluating", "everyone I know") nor another clause
    ("…, but I've never touched it myself")."""
    relative = {t.i for c in subject.children if c.dep_ == "relcl" for t in c.subtree}
    near = [t for t in subject.subtree if t.i not in relative]
    near += [c for c in verb.children if c.dep_ in ("npadvmod", "appos")]
    if any(t.lower_ in FIRST_PERSON | {"me", "myself", "us"} and t.dep_ != "poss" for t in near):
        return True
    return any(t.lower_ in ("included", "including") and any(
        w.lower_ in ("me", "myself", "us") for w in (*t.children, t.nbor(-1) if t.i else t)) for t in verb.doc)


def used_by_other(text: str, start: int, end: int, tools: frozenset[int] = frozenset()) -> bool:
    """Whether the parse gives the tool at [start, end) to someone else: its clause's subject is a person or
    an agent that is not the speaker ("the backend folks swear by X", "everyone at Priya's company uses X",
    "the vendor we're evaluating uses X"). A pattern that took the "we" of a relative clause for the subject
    is overruled by it. False without the parser, or when the subject is the speaker or one of the
    speaker's things ("my workflow runs on X"), or a name the gazetteer knows ("the payments service")."""
    found = _tool_and_verb(text, start, end)
    if found is None:
        return False
    _, tool, verb = found
    if tool.dep_ in ("nsubj", "nsubjpass") and tool.head.i == verb.i:
        return False
    subject = _subject(verb, tools)
    if subject is None or _is_speaker(subject) or subject.idx in tools:
        return False
    if _speaker_included(verb, subject):
        return False  # "my team and I use X", "our whole team runs on X, me included"
    # A capitalised subject is left to the patterns' name rules: the parse takes "Ugh" or a tool the
    # gazetteer missed ("Bun replaced Vim for me") for a name as readily as "Priya".
    owners = [c for c in subject.children if c.dep_ == "poss"]
    return subject.lower_ in PARTY_PRONOUNS | PEOPLE | AGENT_NOUNS \
        or any(o.lower_ in PARTY_PRONOUNS | {"his", "their", "your"} or o.pos_ == "PROPN" for o in owners)

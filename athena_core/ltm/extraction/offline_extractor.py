"""`OfflineTripleExtractor`: deterministic pattern-and-gazetteer extraction over a chain's turns and
summary, with honest confidences (see `offline_vocabulary.CONFIDENCE`). Measured by `athena eval facts`
(docs/facts-eval.md): the named patterns find what they were written for; the clause reader
(`clause_frames`) carries part of that to wordings they were not written for."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from athena_core.ltm.extraction.offline_vocabulary import (
    CLIENT_EXPLICIT,
    CLIENT_FOR,
    CONFIDENCE,
    HABIT,
    HEDGED_CAP,
    INTEREST,
    MAX_NUANCE_CHARS,
    PRONOUN_PENALTY,
    PREFER,
    PROJECT_WORDS,
    STRUGGLE,
    THIRD_PARTY_PENALTY,
    TOOL_PREPOSITIONS,
    TRAIT,
    SET_ASIDE,
    USED_TO,
    USES,
    USES_NEEDS_TOOL,
    WORK,
    WORK_ON,
)
from athena_core.ltm.extraction import dependency_reader, parsed_phrases
from athena_core.ltm.extraction.chat_clauses import ClauseReader
from athena_core.ltm.extraction.clause_frames import SWITCH_OLD_CONFIDENCE, ClauseFrames, object_fits
from athena_core.ltm.extraction.normalisation import PAST_PREFIX
from athena_core.ltm.extraction.port import ExtractionTurn
from athena_core.ltm.fact_timeline import RETRIEVAL_FLOOR
from athena_core.ltm.extraction.summary_sentence import PHRASE_RELATIONS, Node, SummarySentence, USER
from athena_core.models.ontology import ExtractedNode, ExtractedTriple, TripleExtraction, snake_id
from athena_core.text.sentences import split_sentences
from athena_core.text.tokens import Token


def _left_value(triple: ExtractedTriple) -> bool:
    return triple.relation == "USES" and triple.subject.id == USER.id and triple.context_nuance.startswith(PAST_PREFIX)


def _pair_turn_change(found: dict[tuple[str, str, str, int], ExtractedTriple],
                      left: list[tuple[str, str, str, int]], index: int) -> None:
    """A turn that leaves one tool in one sentence and uses another in the next ("I dropped Jenkins. Bun is
    what I use now.") states a change, as one sentence would: the left value, written low alone, is raised
    to a change's old value."""
    now = [t for key, t in found.items() if key[3] == index and t.relation == "USES" and t.subject.id == USER.id
           and not _left_value(t) and t.confidence >= RETRIEVAL_FLOOR]  # a use the turn states firmly
    if not now:
        return
    for key in left:
        if found[key].confidence < SWITCH_OLD_CONFIDENCE:
            found[key] = found[key].model_copy(update={"confidence": SWITCH_OLD_CONFIDENCE})


class _ToolParse:
    """What the dependency parse says of one sentence's gazetteer tools, looked up by tool id as `emit`
    needs it; each tool's reading is computed once (the parse itself is cached in `dependency_reader`)."""

    def __init__(self, s: SummarySentence) -> None:
        self._text, self._tools = s.text, frozenset(s.gaz)
        self._ends = {t.start: t.end for t in s.toks if t.start in s.gaz}
        self._starts: dict[str, list[int]] = {}
        for start, name in s.gaz.items():  # in sentence order
            self._starts.setdefault(snake_id(name), []).append(start)
        self._uses: dict[int, dependency_reader.UseReading | None] = {}

    def use_at(self, start: int) -> dependency_reader.UseReading | None:
        """The parse's reading of the tool at `start` as the speaker's use (None: not one)."""
        if start not in self._uses:
            self._uses[start] = dependency_reader.read_use(self._text, start, self._ends[start], self._tools)
        return self._uses[start]

    def presupposed(self, tool_id: str) -> bool:
        """A use given inside a question ("since I'm on X, how…?"), at any mention of the tool."""
        return any((r := self.use_at(start)) is not None and r.presupposed for start in self._starts.get(tool_id, ()))

    def used_by_other(self, tool_id: str) -> bool:
        """The tool's (last) mention has someone else for its clause's subject."""
        starts = self._starts.get(tool_id)
        return bool(starts) and dependency_reader.used_by_other(
            self._text, starts[-1], self._ends[starts[-1]], self._tools)


# A sentence whose subject is "it": "It's written in Go", "It is for Northwind Traders", "It's been my baby".
IT_SUBJECT = re.compile(r"(\s*)it(?:(?P<has>'s(?=\s+(?:been|got|gotten)\b))|(?P<is>'s))?\b", re.IGNORECASE)


# "I'm digging into the inventory sync service again, it's the project I spend most of my week on": a comma
# splice whose second clause opens with "it" is read as two sentences, so "it" can be the project just named.
COMMA_SPLICE = re.compile(r",\s+(?=it(?:'s|\s+is|\s+was|\s+has)\s)", re.IGNORECASE)


def _clauses_of(sentence: str) -> list[str]:
    return [part for part in COMMA_SPLICE.split(sentence) if part.strip()]


def _project_subject(text: str, project: Node | None) -> str | None:
    """The sentence with its subject "it" spelled as the project this turn named last ("I'm working on the
    checkout service. It's written in Go." → "The checkout service is written in Go."); None when it
    does not open with "it" or the turn named no project. Only projects: after a tool, "it" is as often
    the situation ("I use Redis. It's been a long week") and is read as an object only."""
    match = IT_SUBJECT.match(text) if project is not None else None
    if project is None or match is None:
        return None
    name = project.name if project.name.lower().startswith("the ") else f"the {project.name}"
    verb = " has" if match.group("has") else " is" if match.group("is") else ""
    return match.group(1) + name[0].upper() + name[1:] + verb + text[match.end():]


def _nuance(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_NUANCE_CHARS else text[: MAX_NUANCE_CHARS - 1].rsplit(" ", 1)[0] + "…"


class OfflineTripleExtractor:
    """`TripleExtractor` without a model: sentence patterns plus the tool gazetteer, deterministic.

    Per sentence, in priority order (a token used as an object is not reused by a later rule): the
    ordinary-chat clauses of `chat_clauses` ("building wheels is a struggle", "I switched from A to B",
    "the checkout service is for Northwind Traders", "my sister Ana", "I use it all day"), then
    STRUGGLES_WITH ("struggling with", "stuck on", "problem with", "can't get X to"), EXPRESSED_INTEREST
    ("want to learn", "interested in", "curious about", "would like to learn more about"), EXHIBITS
    ("I am patient", "I prefer X", "I always X"), USES ("I use", "switched to", "built with",
    "written in"), WORKS_ON ("working on", "building", "rewriting the X service"), BUILT_FOR_CLIENT
    ("client, X,", "for X" in a sentence about work), USES of a tool introduced by in/with/on in a
    sentence about work ("rewriting it in Go"), the generalised clause reader (`clause_frames`: a cue of a
    verb class with its object after it or fronted, "Go is what I write everything in"), a speaker's
    mention of a tool with no relation read: a use when the dependency parse reads the speaker's clause
    (`dependency_reader`, spaCy), else RELATES_TO below the retrieval floor (seed 002 records mentions
    liberally and low), and RELATES_TO between tools named together. The parse also overrules a pattern's
    user USES of a tool whose clause has someone else for subject.

    The subject is the nearest subject before the trigger: the speaker for "I/we/my/the user", a named
    person or organisation, a project ("the payments service uses Postgres"); a sentence about "you",
    "the assistant", "he" or "my wife" yields nothing about the user. Negated clauses are skipped; questions
    and hedges are capped below the retrieval floor. `entities` (the chain's entity list) supplies
    canonical spellings of names.
    """

    name = "offline"

    def __init__(self, *, parser: bool = True) -> None:
        """`parser`: also read tool mentions through the dependency parse (`dependency_reader`), when spaCy
        is installed (loaded at the first extraction, not here: the API builds an extractor it never runs);
        False gives the patterns alone."""
        self._parser = parser

    @property
    def parser(self) -> bool:
        return self._parser and dependency_reader.available()

    def extract(
        self, summary: str, *, entities: list[str], tenant_id: str = "", turns: Sequence[ExtractionTurn] = (),
    ) -> TripleExtraction:
        """Per turn first (each triple cites its turn; a fact two turns state is two triples, two
        observations), then the summary for what no turn yielded.

        In a user's turn, first person is the user. In an agent's turn it is the agent, never the user: a
        triple touching the user node is dropped there ("I recommend Redpanda", "I use Python for this"),
        while third parties the agent names stay third parties. A summary sentence that an agent's turn
        holds verbatim is skipped (an extractive summary would otherwise give the agent's "I" to the user).
        """
        known = {e.lower(): e for e in entities if e and e.strip()}
        found: dict[tuple[str, str, str], ExtractedTriple] = {}
        agent_texts: list[str] = []
        for index, turn in enumerate(turns):
            if turn.role not in ("user", "agent"):
                continue
            from_agent = turn.role != "user"
            if from_agent:
                agent_texts.append(" ".join(turn.text.split()).lower())
            antecedent: Node | None = None  # what "it" refers to: the last thing this turn named
            left: list[tuple[str, str, str, int]] = []  # tools this turn says the speaker left, in a firm sentence
            project: Node | None = None  # what a subject "it" refers to: the last project this turn named
            for text in (part for sentence in split_sentences(turn.text or "") for part in _clauses_of(sentence)):
                resolved = _project_subject(text, project)
                sentence = SummarySentence(resolved or text, known)
                triples = self._sentence_triples(sentence, antecedent)
                if resolved is not None:  # the antecedent is a guess: its facts are written lower
                    triples = [t.model_copy(update={"confidence": round(max(t.confidence - PRONOUN_PENALTY, 0.0), 3)})
                               for t in triples]
                antecedent = self._antecedent(sentence, triples) or antecedent
                project = next((Node(n.id, n.label, n.name) for t in reversed(triples) for n in (t.object, t.subject)
                                if n.label == "Projects"), project)
                for triple in triples:
                    if from_agent and USER.id in (triple.subject.id, triple.object.id):
                        continue
                    key = (triple.subject.id, triple.relation, triple.object.id, index)  # one per turn
                    if key not in found or triple.confidence > found[key].confidence:
                        found[key] = triple.model_copy(update={"turn": index})
                    if _left_value(triple) and not sentence.hedged:
                        left.append(key)
            _pair_turn_change(found, left, index)
        in_turns = {key[:3] for key in found}
        from_summary: dict[tuple[str, str, str], ExtractedTriple] = {}
        for text in split_sentences(summary or ""):
            flat = " ".join(text.split()).lower()
            if flat and any(flat in agent for agent in agent_texts):
                continue
            for triple in self._sentence_triples(SummarySentence(text, known)):
                key = (triple.subject.id, triple.relation, triple.object.id)
                if key in in_turns:
                    continue
                if key not in from_summary or triple.confidence > from_summary[key].confidence:
                    from_summary[key] = triple
        return TripleExtraction(triples=[*found.values(), *from_summary.values()])

    # -- per sentence ------------------------------------------------------------------------------

    @staticmethod
    def _antecedent(s: SummarySentence, triples: list[ExtractedTriple]) -> Node | None:
        """The thing a later "it" in the same turn most likely means: the last tool or project this sentence
        made an object, else the last tool it named; None when it named none (then "it" is dropped)."""
        for triple in reversed(triples):
            if triple.object.label in ("Tools", "Projects") and triple.object.id != USER.id:
                return Node(triple.object.id, triple.object.label, triple.object.name)
        hits = [s.gaz[t.start] for t in s.toks if t.start in s.gaz]
        if hits:
            return Node(snake_id(hits[-1]), "Tools", hits[-1])
        bare = ClauseFrames(s, None).bare_phrase(0, len(s.text))  # "Time zone handling. I never get it right."
        if not bare or triples or all(s.is_name_word(t) for t in bare):
            return None  # a lone name is whom the speaker addresses ("Yeah, Dave!"), not a thing "it" can mean
        return s.object_node(bare, "")

    def _sentence_triples(self, s: SummarySentence, antecedent: Node | None = None) -> list[ExtractedTriple]:
        out: list[ExtractedTriple] = []
        nuance = _nuance(s.text)
        work_subjects: list[tuple[Node, bool]] = []
        projects: list[Node] = []

        parse = _ToolParse(s) if self.parser else None
        question_capped: set[int] = set()  # indexes into `out` of triples the sentence's question capped

        def emit(subject: Node, relation: str, obj: Node, base: float, third_party: bool,
                 note: str = nuance, stated: bool = False) -> None:
            if not subject.id or not obj.id or subject.id == obj.id:
                return
            confidence = base - (THIRD_PARTY_PENALTY if third_party else 0.0)
            user_use = parse is not None and (subject.id, relation) == (USER.id, "USES")
            if s.hedged and not (stated and s.question_only):  # stated beside a question: not hedged
                if s.question_only and confidence > HEDGED_CAP:
                    question_capped.add(len(out))
                confidence = min(confidence, HEDGED_CAP)
                if user_use and parse.presupposed(obj.id):  # a given inside a question: "since I'm on X, how…?"
                    confidence = max(confidence, CONFIDENCE["parsed_use"])
            if user_use and confidence >= RETRIEVAL_FLOOR and parse.used_by_other(obj.id):
                confidence = CONFIDENCE["mention"]  # "the vendor we're evaluating uses X": not the speaker's
            out.append(ExtractedTriple(
                subject=ExtractedNode(id=subject.id, label=subject.label, name=subject.name),
                relation=relation,
                object=ExtractedNode(id=obj.id, label=obj.label, name=obj.name),
                confidence=round(confidence, 3), context_nuance=note,
            ))

        def pattern(regex: re.Pattern[str], relation: str, *, split_items: bool = True,
                    needs_tool: re.Pattern[str] | None = None, note_prefix: str = "") -> None:
            for match in regex.finditer(s.text):
                subject, third, subject_end = s.subject_before(match.start())
                if subject is None or s.negated(subject_end, match.start()):
                    continue
                if SET_ASIDE.search(s.text, max(0, match.start() - 16), match.start()):
                    continue  # "instead of learning Rust, I use Go": no interest in Rust
                if relation == "USES" and USED_TO.search(s.text, subject_end, match.start()):
                    continue  # "I used to use Jenkins": a past use, read by the clause reader's change rules
                tool_only = needs_tool is not None and bool(needs_tool.match(match.group(0)))
                for item in s.object_items(match.end(), split_items=split_items):
                    if relation in PHRASE_RELATIONS:
                        item = s.topic_tail(item)
                    if any(t.start in s.claimed for t in item):
                        continue
                    obj = s.object_node(item, relation)
                    is_tool = obj.label == "Tools" and any(t.start in s.gaz for t in item)
                    if tool_only and not is_tool:
                        continue
                    s.claimed.update(t.start for t in item)
                    base = CONFIDENCE["explicit_tool"] if is_tool else CONFIDENCE["pattern"]
                    note = f"{note_prefix}{s.span_text(item)}: {nuance}" if note_prefix else nuance
                    emit(subject, relation, obj, base, third, note)

        for clause in ClauseReader(s, antecedent).clauses():  # ordinary-chat clauses first: they claim objects
            if clause.tokens and any(t in s.claimed for t in clause.tokens):
                continue
            s.claimed.update(clause.tokens)
            base = clause.base if clause.tokens else clause.base - PRONOUN_PENALTY  # "it": written lower
            emit(clause.subject, clause.relation, clause.obj, base, clause.subject is not USER,
                 f"{clause.note}: {nuance}" if clause.note else nuance)
        pattern(STRUGGLE, "STRUGGLES_WITH")
        pattern(INTEREST, "EXPRESSED_INTEREST")
        pattern(PREFER, "EXHIBITS", split_items=False, note_prefix="prefers ")
        for match in TRAIT.finditer(s.text):
            subject, third, subject_end = s.subject_before(match.start())
            if subject is None or s.negated(subject_end, match.start(1)):
                continue
            if subject_end == 0 and match.group(0).split()[0].lower() in ("is", "are", "be", "been"):
                continue  # "these musicians are very ambitious, I think": no subject named, not the speaker's
            trait = match.group(1).lower()
            emit(subject, "EXHIBITS", Node(snake_id(trait), "Concepts", trait), CONFIDENCE["pattern"], third)
        for match in HABIT.finditer(s.text):
            items = s.object_items(match.end(), split_items=False)
            if items:
                habit = f"{match.group(1).lower()} {s.span_text(items[0])}"
                emit(USER, "EXHIBITS", Node(snake_id(habit), "Concepts", habit), CONFIDENCE["unsure_pattern"], False)
        pattern(USES, "USES", needs_tool=USES_NEEDS_TOOL)

        for match in WORK.finditer(s.text):
            subject, third, subject_end = s.subject_before(match.start())
            if subject is None or s.negated(subject_end, match.start()):
                continue
            work_subjects.append((subject, third))
            generic_ok = bool(WORK_ON.match(match.group(0)))
            for item in s.object_items(match.end()):
                if any(t.start in s.claimed or t.start in s.gaz for t in item):
                    continue  # "working on Kubernetes" is use of a tool (handled below), not a project
                obj = s.object_node(item, "WORKS_ON")
                if item[-1].lower in PROJECT_WORDS and len(item) > 1:
                    base = CONFIDENCE["strong_pattern"]
                elif all(s.is_name_word(t) for t in item):
                    base = CONFIDENCE["pattern"]
                elif generic_ok:
                    base = CONFIDENCE["unsure_pattern"]
                else:
                    continue
                s.claimed.update(t.start for t in item)
                projects.append(obj)
                emit(subject, "WORKS_ON", obj, base, third)
        projects += [c.node for c in s.candidates if c.node is not None and c.node.label == "Projects"
                     and c.node not in projects]

        self._clients(s, work_subjects, projects, emit)

        # a tool introduced by in/with/on in a sentence about work: "rewriting the payments service in Go"
        for subject, third in work_subjects[:1]:
            for tok in s.toks:
                if tok.lower not in TOOL_PREPOSITIONS:
                    continue
                for item in s.object_items(tok.end):  # "with Kubernetes and Helm charts": both
                    hits = [t for t in item if t.start in s.gaz and t.start not in s.claimed]
                    if hits:
                        s.claimed.add(hits[0].start)
                        name = s.gaz[hits[0].start]
                        emit(subject, "USES", Node(snake_id(name), "Tools", name), CONFIDENCE["inferred_tool"],
                             third)

        # the generalised clause reader: cues of a verb class, objects after the cue or fronted
        for reading in ClauseFrames(s, antecedent).readings():
            if reading.tokens and any(t in s.claimed for t in reading.tokens) and not reading.note:
                continue
            s.claimed.update(reading.tokens)
            emit(USER, reading.relation, reading.obj, reading.confidence, False,
                 f"{reading.note}: {nuance}" if reading.note else nuance)

        if parse is not None:
            self._parsed_phrases(s, out, emit, question_capped)

        # seed 002: mentions are recorded liberally and low. A tool the speaker names in their own sentence
        # with no relation read above is a RELATES_TO mention below the retrieval floor.
        related = {t.object.id for t in out if t.subject.id == USER.id}
        for tok in s.toks:
            if tok.start not in s.gaz or tok.start in s.claimed or snake_id(s.gaz[tok.start]) in related:
                continue
            if parse is not None and parse.use_at(tok.start) is not None:
                name = s.gaz[tok.start]
                related.add(snake_id(name))
                s.claimed.add(tok.start)
                emit(USER, "USES", Node(snake_id(name), "Tools", name), CONFIDENCE["parsed_use"], False)
                continue
            subject, third, subject_end = s.subject_before(tok.start)
            if subject is USER and not third and not s.negated(subject_end, tok.start):
                name = s.gaz[tok.start]
                related.add(snake_id(name))
                emit(USER, "RELATES_TO", Node(snake_id(name), "Tools", name), CONFIDENCE["mention"], False,
                     f"mentioned: {nuance}")
        tools: list[str] = []
        for tok in s.toks:
            if tok.start in s.gaz and s.gaz[tok.start] not in tools:
                tools.append(s.gaz[tok.start])
        for i, first in enumerate(tools):
            for second in tools[i + 1:]:
                emit(Node(snake_id(first), "Tools", first), "RELATES_TO", Node(snake_id(second), "Tools", second),
                     CONFIDENCE["co_mention"], False, f"mentioned together: {nuance}")
        return out

    @staticmethod
    def _parsed_phrases(s: SummarySentence, out: list[ExtractedTriple], emit: Callable[..., None],
                        question_capped: set[int]) -> None:
        """Struggles, interests and projects the parse reads (`parsed_phrases`) where no pattern did; a
        pattern's reading that the sentence's question capped (`question_capped`, indexes into `out`) is
        lifted when the parse finds it stated in a clause of its own ("I keep tripping over X, is there a
        sane mental model for it?"). A reading low for another reason (an unsure pattern) stays low."""
        for reading in parsed_phrases.read_phrases(s.text):
            item = [t for t in s.toks if reading.start <= t.start and t.end <= reading.end]
            if not item or not object_fits(s, reading.relation, item):
                continue
            obj = s.object_node(item, reading.relation)
            if any(t.start in s.claimed for t in item):
                if not reading.stated:
                    continue
                for i in question_capped:
                    t = out[i]
                    if (t.subject.id, t.relation, t.object.id) == (USER.id, reading.relation, obj.id) \
                            and t.confidence < CONFIDENCE["parsed_phrase"]:
                        out[i] = t.model_copy(update={"confidence": CONFIDENCE["parsed_phrase"]})
                continue
            s.claimed.update(t.start for t in item)
            emit(USER, reading.relation, obj, CONFIDENCE["parsed_phrase"], False, stated=reading.stated)

    @staticmethod
    def _clients(
        s: SummarySentence, work_subjects: list[tuple[Node, bool]], projects: list[Node],
        emit: Callable[..., None],
    ) -> None:
        """BUILT_FOR_CLIENT: "our client, Prescott Data," anywhere; "for Prescott Data" only in a sentence
        about work. The subject is the project the sentence names, else whoever does the work."""
        found: list[tuple[list[Token], float]] = []
        for regex, base, needs_work in ((CLIENT_EXPLICIT, CONFIDENCE["strong_pattern"], False),
                                        (CLIENT_FOR, CONFIDENCE["weak_pattern"], True)):
            if needs_work and not work_subjects:
                continue
            for match in regex.finditer(s.text):
                i = s.index_at(match.end())
                run = s.name_run(i)
                if not run or run[0].start in s.claimed or (run[0].sentence_initial and not needs_work):
                    continue
                s.claimed.update(t.start for t in run)
                found.append((run, base))
        for run, base in found:
            name = s.span_text(run)
            client = Node(snake_id(name), "Identities", s.entities.get(name.lower(), name))
            if projects:
                subject, third = projects[0], False
            elif work_subjects:
                subject, third = work_subjects[0]
            else:
                subject, third, _ = s.subject_before(run[0].start)
                if subject is None or subject.id == client.id:
                    continue
            emit(subject, "BUILT_FOR_CLIENT", client, base, third)

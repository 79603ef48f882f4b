"""Graph retrieval (SPEC S6.4): facts around the entities a query names, and the user's persona.

Start nodes are the entities matched in the query (exact id, then name tokens) plus the user node;
the traversal (1–2 hops, every edge ≥ 0.5 confidence, weight then heat, limit 50) is the adapter's.
Every read that returns facts says, per (subject, relation) with several objects, which value is current
and which came first (`fact_timeline.py`), judged on the subject's whole history (any confidence), not
only on the edges the traversal happened to return.
"""
from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from athena_core.ltm.fact_timeline import Order, TimelineMark, mark_timeline, order_by_cue, timeline_key
from athena_core.ltm.persona import persona_lines
from athena_core.stores.graph.port import GraphStore
from athena_core.models.ontology import USER_NODE_ID, Fact, GraphNode, snake_id
from athena_core.models.scope import UserScope
from athena_core.text.content_words import is_content_word
from athena_core.text.tokens import words
from athena_core.wiring.settings import Settings


class FactView(BaseModel):
    """A fact as the API returns it: a short statement plus the edge's numbers."""

    edge_id: str
    statement: str
    subject: str
    relation: str
    object: str
    weight: int
    confidence: float
    context_nuance: str
    valid_at: datetime  # the newest evidence of the fact
    first_valid_at: datetime  # the oldest evidence of the fact
    is_current: bool = True  # the newest value of its (subject, relation); True when it has one value
    is_initial: bool = True  # the first value of its (subject, relation); True when it has one value
    evidence_event_ids: list[str] = []  # the event-log ids of the turns the fact came from


class GraphView(BaseModel):
    """The Graph route's answer: the user's facts around their own node, each edge marked current/initial."""

    nodes: list[GraphNode]
    edges: list[FactView]


def query_terms(query: str) -> list[str]:
    """Candidate node ids in a query: content words, and adjacent pairs joined snake_case."""
    content = [w for w in words(query) if is_content_word(w)]
    pairs = [snake_id(f"{a} {b}") for a, b in zip(content, content[1:])]
    return list(dict.fromkeys([*pairs, *(snake_id(w) for w in content)]))


_RELATION_WORDS = {"EXPRESSED_INTEREST": "expressed interest in", "BUILT_FOR_CLIENT": "built for client"}


def statement(fact: Fact) -> str:
    """"sam uses go", "sam struggles with pgxpool settings" — readable, relation in plain words."""
    relation = _RELATION_WORDS.get(fact.relation) or fact.relation.lower().replace("_", " ")
    text = f"{fact.subject.name} {relation} {fact.object.name}"
    if fact.relation == "RELATES_TO" and fact.context_nuance:
        text += f" ({fact.context_nuance})"
    return text


def view(fact: Fact, mark: TimelineMark | None = None) -> FactView:
    return FactView(
        edge_id=fact.edge_id, statement=statement(fact), subject=fact.subject.id, relation=fact.relation,
        object=fact.object.id, weight=fact.weight, confidence=round(fact.confidence, 4),
        context_nuance=fact.context_nuance, valid_at=fact.valid_at, first_valid_at=fact.first_valid_at,
        is_current=mark.is_current if mark else True, is_initial=mark.is_initial if mark else True,
        evidence_event_ids=list(fact.evidence_event_ids),
    )


HISTORY_SUBJECTS = 20  # subjects whose whole history is read to mark a result (one indexed read each)


class FactRetriever:
    def __init__(self, graph: GraphStore, settings: Settings) -> None:
        self.graph = graph
        self.settings = settings

    def _around(self, scope: UserScope, start_ids: list[str], depth: int) -> list[Fact]:
        return self.graph.neighbourhood(
            scope, start_ids, depth=depth, min_confidence=self.settings.graph_min_confidence,
            limit=self.settings.graph_limit,
        )

    def history(self, scope: UserScope, facts: list[Fact]) -> list[Fact]:
        """Every value over time of the (subject, relation)s of `facts`: `facts` first, then the other
        values the graph holds (any confidence), for the first `HISTORY_SUBJECTS` subjects."""
        found: dict[str, Fact] = {f.edge_id: f for f in facts}
        wanted = {timeline_key(f) for f in facts}
        for subject in list(dict.fromkeys(f.subject.id for f in facts))[:HISTORY_SUBJECTS]:
            for fact in self.graph.facts_about(scope, subject):
                if timeline_key(fact) in wanted:
                    found.setdefault(fact.edge_id, fact)
        return list(found.values())

    def timeline(self, history: list[Fact]) -> dict[str, TimelineMark]:
        """Current/initial marks of `history`, among the values at the traversal's confidence floor."""
        return mark_timeline(history, self.settings.graph_min_confidence)

    def marks(self, scope: UserScope, facts: list[Fact]) -> dict[str, TimelineMark]:
        return self.timeline(self.history(scope, facts))

    def facts(self, scope: UserScope, query: str = "", order: Order | None = None) -> list[FactView]:
        """The neighbourhood of the query's entities and of the user node, each marked current/initial.
        With a time cue (`order`, from the query's "currently" / "first"), the other values of the
        (subject, relation)s found join the list, and the values the cue asks for come first."""
        matched = self.graph.match_nodes(scope, query_terms(query)) if query.strip() else []
        start = list(dict.fromkeys([*matched, USER_NODE_ID]))
        found = self._around(scope, start, self.settings.graph_depth)
        history = self.history(scope, found)
        marks = self.timeline(history)
        shown = found if order is None else history[: max(self.settings.graph_limit, len(found))]
        return [view(f, marks.get(f.edge_id)) for f in order_by_cue(shown, marks, lambda f: f.edge_id, order)]

    def entity_facts(self, scope: UserScope, query: str, entities: list[str] = ()) -> list[Fact]:
        """The neighbourhood of the entities the query names, plus `entities` (names found elsewhere)."""
        terms = [*query_terms(query), *(snake_id(e) for e in entities)]
        matched = [m for m in self.graph.match_nodes(scope, list(dict.fromkeys(terms))) if m != USER_NODE_ID]
        return self._around(scope, matched, self.settings.graph_depth) if matched else []

    def user_facts(self, scope: UserScope) -> list[Fact]:
        """The user node's 1-hop neighbourhood (S6.4 order)."""
        return self._around(scope, [USER_NODE_ID], 1)

    def persona(self, scope: UserScope) -> list[str]:
        """The user's strongest current facts as sentences ("Uses Go.", `persona.py`)."""
        own = [f for f in self.user_facts(scope) if f.subject.id == USER_NODE_ID]
        return persona_lines(own, self.marks(scope, own), self.settings.persona_lines)

    def graph_view(self, scope: UserScope, depth: int) -> GraphView:
        facts = self._around(scope, [USER_NODE_ID], depth)
        marks = self.marks(scope, facts)
        nodes = {n.key: n for f in facts for n in (f.subject, f.object)}
        return GraphView(nodes=list(nodes.values()), edges=[view(f, marks.get(f.edge_id)) for f in facts])

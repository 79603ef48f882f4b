"""Graph retrieval (SPEC S6.4): facts around the entities a query names, and the user's persona.

Start nodes are the entities matched in the query (exact id, then name tokens) plus the user node;
the traversal (1–2 hops, every edge ≥ 0.5 confidence, weight then heat, limit 50) is the adapter's.
"""
from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from athena_core.stores.graph.port import GraphStore
from athena_core.models.ontology import USER_NODE_ID, Fact, snake_id
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
    valid_at: datetime
    first_valid_at: datetime
    evidence_event_ids: list[str] = []  # the event-log ids of the turns the fact came from


def query_terms(query: str) -> list[str]:
    """Candidate node ids in a query: content words, and adjacent pairs joined snake_case."""
    content = [w for w in words(query) if is_content_word(w)]
    pairs = [snake_id(f"{a} {b}") for a, b in zip(content, content[1:])]
    return list(dict.fromkeys([*pairs, *(snake_id(w) for w in content)]))


def statement(fact: Fact) -> str:
    """"sam uses go", "sam struggles with pgxpool settings" — readable, relation in plain words."""
    relation = fact.relation.lower().replace("_", " ")
    text = f"{fact.subject.name} {relation} {fact.object.name}"
    if fact.relation == "RELATES_TO" and fact.context_nuance:
        text += f" ({fact.context_nuance})"
    return text


def view(fact: Fact) -> FactView:
    return FactView(
        edge_id=fact.edge_id, statement=statement(fact), subject=fact.subject.id, relation=fact.relation,
        object=fact.object.id, weight=fact.weight, confidence=round(fact.confidence, 4),
        context_nuance=fact.context_nuance, valid_at=fact.valid_at, first_valid_at=fact.first_valid_at,
        evidence_event_ids=list(fact.evidence_event_ids),
    )


class FactRetriever:
    def __init__(self, graph: GraphStore, settings: Settings) -> None:
        self.graph = graph
        self.settings = settings

    def _around(self, scope: UserScope, start_ids: list[str], depth: int) -> list[Fact]:
        return self.graph.neighbourhood(
            scope, start_ids, depth=depth, min_confidence=self.settings.graph_min_confidence,
            limit=self.settings.graph_limit,
        )

    def facts(self, scope: UserScope, query: str = "") -> list[FactView]:
        """The neighbourhood of the query's entities and of the user node."""
        matched = self.graph.match_nodes(scope, query_terms(query)) if query.strip() else []
        start = list(dict.fromkeys([*matched, USER_NODE_ID]))
        return [view(f) for f in self._around(scope, start, self.settings.graph_depth)]

    def entity_facts(self, scope: UserScope, query: str, entities: list[str] = ()) -> list[Fact]:
        """The neighbourhood of the entities the query names, plus `entities` (names found elsewhere)."""
        terms = [*query_terms(query), *(snake_id(e) for e in entities)]
        matched = [m for m in self.graph.match_nodes(scope, list(dict.fromkeys(terms))) if m != USER_NODE_ID]
        return self._around(scope, matched, self.settings.graph_depth) if matched else []

    def user_facts(self, scope: UserScope) -> list[Fact]:
        """The user node's 1-hop neighbourhood (S6.4 order)."""
        return self._around(scope, [USER_NODE_ID], 1)

    def persona(self, scope: UserScope) -> list[str]:
        """The user node's strongest direct edges as short statements."""
        direct = [f for f in self.user_facts(scope) if USER_NODE_ID in (f.subject.id, f.object.id)]
        return [statement(f) for f in direct[: self.settings.persona_lines]]

    def graph_view(self, scope: UserScope, depth: int) -> dict:
        facts = self._around(scope, [USER_NODE_ID], depth)
        nodes = {n.key: n for f in facts for n in (f.subject, f.object)}
        return {"nodes": [n.model_dump() for n in nodes.values()], "edges": [view(f).model_dump() for f in facts]}

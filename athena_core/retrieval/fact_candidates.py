"""Graph retrieval for a search (S6.4): facts around the entities the query names or its top chains
mention, and the user's own facts sharing a word with the query, each with its history."""
from __future__ import annotations

from athena_core.ltm.retrieval import FactRetriever, statement
from athena_core.models.ontology import Fact
from athena_core.models.scope import UserScope
from athena_core.retrieval.fusion import rank_bonus
from athena_core.retrieval.lexical_terms import search_terms
from athena_core.retrieval.rendering import fact_timeline, render_fact
from athena_core.retrieval.search_hit import Candidate, SearchHit, TimeSpan
from athena_core.stores.graph.port import GraphStore
from athena_core.text.stemming import stem


def shares_a_term(text: str, terms: list[str]) -> bool:
    """A light lexical check: a query term in the text, compared by stem (plurals and tenses meet)."""
    stems = {stem(w) for w in search_terms(text, max_terms=10_000)}
    return any(stem(t) in stems for t in terms)


def fact_candidates(facts: FactRetriever, graph: GraphStore, scope: UserScope, query: str,
                    chain_entities: list[str], *, weight: float, rrf_k: int) -> list[Candidate]:
    """Facts around the entities the query names or the top chains mention (S6.4 order), then the
    user's own facts that share a word with the query; for each (subject, relation) found, every value
    it had over time, so that the initial and the current value both show. Scored by rank (RRF)."""
    terms = search_terms(query)
    named = facts.entity_facts(scope, query, chain_entities)
    own = [f for f in facts.user_facts(scope) if shares_a_term(statement(f), terms)]
    found = list({f.edge_id: f for f in [*named, *own]}.values())
    history: dict[str, Fact] = {f.edge_id: f for f in found}
    for subject, relation in list(dict.fromkeys((f.subject.id, f.relation) for f in found))[:5]:
        for fact in graph.facts_about(scope, subject, relation):
            history.setdefault(fact.edge_id, fact)
    labels = fact_timeline(list(history.values()))
    out = []
    for rank, fact in enumerate(history.values(), start=1):
        out.append(Candidate(SearchHit.model_construct(
            content=render_fact(fact, labels.get(fact.edge_id)), similarity_score=None,
            score=rank_bonus(rank, weight, rrf_k),
            source_type="fact", source_id=fact.edge_id, timestamp=fact.valid_at,
            time_span=TimeSpan.model_construct(start=fact.first_valid_at, end=fact.valid_at), retrievers=["graph"],
            evidence_event_ids=list(fact.evidence_event_ids))))
    return out
